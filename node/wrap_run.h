// `mcpping wrap` for the Node command (wrap_run.cc): runs the C proxy.
#ifndef MCPPING_NODE_WRAP_RUN_H
#define MCPPING_NODE_WRAP_RUN_H

#include <napi.h>

namespace mcpping_node {

// Adds wrap(options) to exports.
void InitWrap(Napi::Env env, Napi::Object exports);

}  // namespace mcpping_node

#endif
