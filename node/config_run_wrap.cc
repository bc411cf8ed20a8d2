// See config_run_wrap.h.
#include "config_run_wrap.h"

#include <string>

#include "convert.h"
#include "mcpping.h"

namespace mcpping_node {

namespace {

mcpp_config_run *Run(const Napi::CallbackInfo &info) {
  if (!info[0].IsExternal()) throw Napi::TypeError::New(info.Env(), "not a config run");
  return info[0].As<Napi::External<mcpp_config_run>>().Data();
}

int64_t Now(const Napi::CallbackInfo &info) {
  return info[1].As<Napi::Number>().Int64Value();
}

// A string argument, or null/undefined (then *has is false).
std::string Str(const Napi::Value &v, bool *has) {
  *has = v.IsString();
  return *has ? v.As<Napi::String>().Utf8Value() : std::string();
}

Napi::Value OptString(Napi::Env env, const char *s) {
  return s ? Napi::Value(Napi::String::New(env, s)) : env.Null();
}

// configRun(transport, disabled, count, intervalMs, timeoutMs, deadlineMs, nowMs)
Napi::Value ConfigRun(const Napi::CallbackInfo &info) {
  Napi::Env env = info.Env();
  std::string transport = info[0].ToString();
  mcpp_config_plan plan{};
  plan.count = static_cast<uint64_t>(info[2].As<Napi::Number>().Int64Value());
  plan.interval_ms = info[3].As<Napi::Number>().Uint32Value();
  plan.timeout_ms = info[4].As<Napi::Number>().Uint32Value();
  plan.deadline_ms = info[5].As<Napi::Number>().Uint32Value();
  mcpp_config_run *r = nullptr;
  if (mcpp_config_run_new(&r, transport.c_str(), info[1].ToBoolean() ? 1 : 0, &plan,
                          info[6].As<Napi::Number>().Int64Value()))
    throw Napi::Error::New(env, "out of memory");
  return Napi::External<mcpp_config_run>::New(env, r, [](Napi::Env, mcpp_config_run *p) {
    mcpp_config_run_free(p);
  });
}

// configRunNext(run, nowMs): [what, timeoutMs, untilMs, wantExit]
Napi::Value ConfigRunNext(const Napi::CallbackInfo &info) {
  Napi::Env env = info.Env();
  mcpp_config_action a;
  mcpp_config_run_next(Run(info), Now(info), &a);
  Napi::Array r = Napi::Array::New(env, 4);
  r.Set(0u, static_cast<int>(a.what));
  r.Set(1u, a.timeout_ms);
  r.Set(2u, static_cast<double>(a.until_ms));
  r.Set(3u, Napi::Boolean::New(env, a.want_exit));
  return r;
}

// configRunOpenDone(run, nowMs, result, reason|null)
Napi::Value ConfigRunOpenDone(const Napi::CallbackInfo &info) {
  bool has;
  std::string why = Str(info[3], &has);
  mcpp_config_run_open_done(Run(info), Now(info),
                            static_cast<mcpp_config_open_result>(info[2].As<Napi::Number>().Int32Value()),
                            has ? why.c_str() : nullptr);
  return info.Env().Undefined();
}

// configRunHandshakeDone(run, nowMs, protocolVersion|null)
Napi::Value ConfigRunHandshakeDone(const Napi::CallbackInfo &info) {
  bool has;
  std::string pv = Str(info[2], &has);
  mcpp_config_run_handshake_done(Run(info), Now(info), has ? pv.c_str() : nullptr);
  return info.Env().Undefined();
}

// configRunHandshakeFailed(run, nowMs, gone, code|null, message|null)
Napi::Value ConfigRunHandshakeFailed(const Napi::CallbackInfo &info) {
  bool has;
  std::string msg = Str(info[4], &has);
  bool hc = info[3].IsNumber();
  mcpp_config_run_handshake_failed(Run(info), Now(info), info[2].ToBoolean() ? 1 : 0, hc,
                                   hc ? info[3].As<Napi::Number>().Int64Value() : 0,
                                   has ? msg.c_str() : nullptr);
  return info.Env().Undefined();
}

Napi::Value ConfigRunHandshakeTimedOut(const Napi::CallbackInfo &info) {
  mcpp_config_run_handshake_timed_out(Run(info), Now(info));
  return info.Env().Undefined();
}

// configRunReplied(run, nowMs, kind, rttMs)
Napi::Value ConfigRunReplied(const Napi::CallbackInfo &info) {
  mcpp_config_run_replied(Run(info), Now(info),
                          static_cast<mcpp_cli_reply>(info[2].As<Napi::Number>().Int32Value()),
                          info[3].As<Napi::Number>().DoubleValue());
  return info.Env().Undefined();
}

Napi::Value ConfigRunInterrupt(const Napi::CallbackInfo &info) {
  mcpp_config_run_interrupt(Run(info), Now(info));
  return info.Env().Undefined();
}

// configRunClosed(run, nowMs, exited, exitStatus, termSignal, connectError|null)
Napi::Value ConfigRunClosed(const Napi::CallbackInfo &info) {
  bool hc;
  std::string unreachable = Str(info[5], &hc);
  mcpp_config_end e{};
  e.exited = info[2].ToBoolean() ? 1 : 0;
  e.exit_status = info[3].ToNumber().Int32Value();
  e.term_signal = info[4].ToNumber().Int32Value();
  e.connect_error = hc ? unreachable.c_str() : nullptr;
  mcpp_config_run_closed(Run(info), Now(info), &e);
  return info.Env().Undefined();
}

// configSkipReason(transport, disabled): why the entry is not checked, or null.
Napi::Value ConfigSkipReason(const Napi::CallbackInfo &info) {
  std::string transport = info[0].ToString().Utf8Value();
  const char *why = mcpp_config_skip_reason(transport.c_str(), info[1].ToBoolean() ? 1 : 0);
  return why ? Napi::String::New(info.Env(), why) : info.Env().Null();
}

// configRunSecrets(run, [value, ...]): what no reason may quote (watchAdd's).
Napi::Value ConfigRunSecrets(const Napi::CallbackInfo &info) {
  std::vector<std::string> values;
  ListFrom(info[1], values);
  std::vector<char *> ptrs = Pointers(values);
  if (mcpp_config_run_set_secrets(Run(info), ptrs.data(), values.size()) != 0)
    throw Napi::Error::New(info.Env(), "out of memory");
  return info.Env().Undefined();
}

// configRunStderr(run, buffer): the server's stderr as it comes.
Napi::Value ConfigRunStderr(const Napi::CallbackInfo &info) {
  if (info[1].IsBuffer()) {
    auto b = info[1].As<Napi::Buffer<char>>();
    mcpp_config_run_stderr(Run(info), b.Data(), b.Length());
  }
  return info.Env().Undefined();
}

// configRunUnreadable(run, count, sentence): what the server wrote on
// stdout that is not JSON-RPC (NativeConn.unreadable()).
Napi::Value ConfigRunUnreadable(const Napi::CallbackInfo &info) {
  std::string sentence = info[2].As<Napi::String>().Utf8Value();
  mcpp_config_run_unreadable(Run(info), static_cast<uint64_t>(info[1].As<Napi::Number>().DoubleValue()),
                             sentence.c_str());
  return info.Env().Undefined();
}

// configRunRow(run): the outcome's fields of a row (the server's name,
// transport, file and jsonPath are the caller's).
Napi::Value ConfigRunRow(const Napi::CallbackInfo &info) {
  Napi::Env env = info.Env();
  mcpp_config_row row{};
  mcpp_config_run_row(Run(info), &row);
  Napi::Array rtts = Napi::Array::New(env, row.n_rtts);
  for (size_t i = 0; i < row.n_rtts; i++) rtts.Set(static_cast<uint32_t>(i), row.rtts_ms[i]);
  Napi::Object r = Napi::Object::New(env);
  r.Set("status", row.status);
  r.Set("reason", OptString(env, row.reason));
  r.Set("protocolVersion", OptString(env, row.protocol_version));
  r.Set("sent", row.sent);
  r.Set("received", row.received);
  r.Set("rttsMs", rtts);
  r.Set("lastStderr", OptString(env, row.last_stderr));
  r.Set("nonJsonLines", static_cast<double>(row.non_json_lines));
  return r;
}

}  // namespace

void InitConfigRun(Napi::Env env, Napi::Object exports) {
  exports.Set("configRun", Napi::Function::New(env, ConfigRun));
  exports.Set("configRunNext", Napi::Function::New(env, ConfigRunNext));
  exports.Set("configRunOpenDone", Napi::Function::New(env, ConfigRunOpenDone));
  exports.Set("configRunHandshakeDone", Napi::Function::New(env, ConfigRunHandshakeDone));
  exports.Set("configRunHandshakeFailed", Napi::Function::New(env, ConfigRunHandshakeFailed));
  exports.Set("configRunHandshakeTimedOut", Napi::Function::New(env, ConfigRunHandshakeTimedOut));
  exports.Set("configRunReplied", Napi::Function::New(env, ConfigRunReplied));
  exports.Set("configRunInterrupt", Napi::Function::New(env, ConfigRunInterrupt));
  exports.Set("configRunClosed", Napi::Function::New(env, ConfigRunClosed));
  exports.Set("configRunSecrets", Napi::Function::New(env, ConfigRunSecrets));
  exports.Set("configRunStderr", Napi::Function::New(env, ConfigRunStderr));
  exports.Set("configSkipReason", Napi::Function::New(env, ConfigSkipReason));
  exports.Set("configRunUnreadable", Napi::Function::New(env, ConfigRunUnreadable));
  exports.Set("configRunRow", Napi::Function::New(env, ConfigRunRow));
}

}  // namespace mcpping_node
