// `--config` for JavaScript (config_wrap.cc): the rewrite of
// csrc/src/app/config_rewrite.c. JS reads the file and writes the answer.
#ifndef MCPPING_NODE_CONFIG_WRAP_H
#define MCPPING_NODE_CONFIG_WRAP_H

#include <napi.h>

namespace mcpping_node {

// Adds configRewrite(text, unwrap, launcher) -> {text, changed, hadComments},
// configFormatFiles, configFormatStart and configFormatResults (the output of
// mcpping --config, csrc/src/app/config_table.c).
void InitConfig(Napi::Env env, Napi::Object exports);

}  // namespace mcpping_node

#endif
