// `mcpping --config`'s check of one server (csrc/src/app/config_run.c,
// mcpping/config_run.h) for JavaScript: the state machine behind an External.
// node/config_check.js only plumbs; every status and reason comes from C.
#ifndef MCPPING_NODE_CONFIG_RUN_WRAP_H
#define MCPPING_NODE_CONFIG_RUN_WRAP_H

#include <napi.h>

namespace mcpping_node {

// Adds configRun and its configRun* feeds to exports.
void InitConfigRun(Napi::Env env, Napi::Object exports);

}  // namespace mcpping_node

#endif
