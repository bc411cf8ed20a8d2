// The settings table for JavaScript (settings_wrap.cc): its rows and the one
// check of a value in the caller's unit. The sentences are C's.
#ifndef MCPPING_NODE_SETTINGS_WRAP_H
#define MCPPING_NODE_SETTINGS_WRAP_H

#include <napi.h>

namespace mcpping_node {

// Adds settingsTable, settingRange, settingCheck and errorCodes to exports.
void InitSettings(Napi::Env env, Napi::Object exports);

}  // namespace mcpping_node

#endif
