// wrap({spawn, settings, restart, log, metrics, server, inFd, outFd}) -> status:
// runs mcpp_wrap_run on its own uv loop in the calling (main) thread until
// the client or the server is gone. The command (node/wrap.js) validates
// the options and exits with the status right after; nothing else runs in
// that process meanwhile, so blocking the JavaScript thread is the point.
#include "wrap_run.h"

#include "convert.h"
#include "mcpping.h"

namespace mcpping_node {

namespace {

Napi::Value Wrap(const Napi::CallbackInfo &info) {
  Napi::Env env = info.Env();
  if (info.Length() < 1 || !info[0].IsObject())
    throw Napi::TypeError::New(env, "wrap(options): options must be an object");
  Napi::Object o = info[0].As<Napi::Object>();
  mcpp_wrap_options w;
  mcpp_wrap_options_default(&w);
  OwnedSettings settings;
  SettingsFromJs(o.Get("settings").As<Napi::Object>(), &settings);
  w.settings = &settings.s;
  OwnedSpawn spawn;
  SpawnFromJs(o.Get("spawn").As<Napi::Object>(), &spawn);
  w.spawn = spawn.o;
  w.restart = o.Get("restart").ToBoolean() ? 1 : 0;
  std::string log, metrics, server;
  if (o.Get("log").IsString()) {
    log = o.Get("log").As<Napi::String>().Utf8Value();
    w.log_path = log.c_str();
  }
  if (o.Get("metrics").IsString()) {
    metrics = o.Get("metrics").As<Napi::String>().Utf8Value();
    w.metrics_addr = metrics.c_str();
  }
  if (o.Get("server").IsString()) {
    server = o.Get("server").As<Napi::String>().Utf8Value();
    w.server_name = server.c_str();
  }
  if (o.Get("inFd").IsNumber()) w.in_fd = o.Get("inFd").As<Napi::Number>().Int32Value();
  if (o.Get("outFd").IsNumber()) w.out_fd = o.Get("outFd").As<Napi::Number>().Int32Value();
  if (const char *problem = mcpp_wrap_options_problem(&w))
    throw Napi::RangeError::New(env, problem);
  return Napi::Number::New(env, mcpp_wrap_run(&w));
}

}  // namespace

void InitWrap(Napi::Env env, Napi::Object exports) {
  exports.Set("wrap", Napi::Function::New(env, Wrap, "wrap"));
}

}  // namespace mcpping_node
