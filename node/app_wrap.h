// The mcpping command's application layer (csrc/src/app, mcpping/app.h)
// for JavaScript: the parsed command line and the check's state machine.
// node/cli.js only plumbs; every rule and output byte comes from C.
#ifndef MCPPING_NODE_APP_WRAP_H
#define MCPPING_NODE_APP_WRAP_H

#include <napi.h>

namespace mcpping_node {

// Adds cliParse, cliRun, cliNext, cliOpenDone, cliReplied, cliTools and
// cliInterrupt to exports.
void InitApp(Napi::Env env, Napi::Object exports);

}  // namespace mcpping_node

#endif
