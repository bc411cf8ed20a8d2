// See app_wrap.h.
#include "app_wrap.h"

#include <memory>
#include <string>
#include <vector>

#include "mcpping.h"

namespace mcpping_node {

namespace {

// argv's strings and the options and run made from them: the options point
// into argv, so all three live and die together.
struct CliHolder {
  std::vector<std::string> args;
  std::vector<const char *> argv;
  mcpp_cli_options o{};
  mcpp_cli_run *run = nullptr;
  ~CliHolder() {
    mcpp_cli_run_free(run);
    mcpp_cli_options_free(&o);
  }
};

CliHolder *Parse(Napi::Env env, Napi::Value value) {
  if (!value.IsArray()) throw Napi::TypeError::New(env, "argv must be an array of strings");
  Napi::Array a = value.As<Napi::Array>();
  auto *h = new CliHolder();
  for (uint32_t i = 0; i < a.Length(); i++) {
    Napi::Value v = a.Get(i);
    if (!v.IsString()) {
      delete h;
      throw Napi::TypeError::New(env, "argv must be an array of strings");
    }
    h->args.push_back(v.As<Napi::String>());
  }
  for (auto &s : h->args) h->argv.push_back(s.c_str());
  if (mcpp_cli_parse(&h->o, static_cast<int>(h->argv.size()), h->argv.data())) {
    delete h;
    throw Napi::Error::New(env, "out of memory");
  }
  return h;
}

Napi::Value Strings(Napi::Env env, const char *const *v, size_t n) {
  Napi::Array a = Napi::Array::New(env, n);
  for (size_t i = 0; i < n; i++) a.Set(static_cast<uint32_t>(i), Napi::String::New(env, v[i]));
  return a;
}

Napi::Value OptString(Napi::Env env, const char *s) {
  return s ? Napi::Value(Napi::String::New(env, s)) : env.Null();
}

// -H or --env as an object, split by C (mcpp_cli_pair).
Napi::Object Pairs(Napi::Env env, const char *const *v, size_t n, int header) {
  Napi::Object r = Napi::Object::New(env);
  for (size_t i = 0; i < n; i++) {
    size_t nl, vl;
    const char *value;
    mcpp_cli_pair(v[i], header, &nl, &value, &vl);
    r.Set(Napi::String::New(env, v[i], nl), Napi::String::New(env, value, vl));
  }
  return r;
}

const char *const kModes[] = {"check", "config",     "help", "version",  "usage",
                              "watch", "watch_help", "wrap", "wrap_help"};
const char *const kTargets[] = {"demo", "stdio", "http"};

// cliParse(argv): the parsed command line (app.h's fields; times in ms).
Napi::Value CliParse(const Napi::CallbackInfo &info) {
  Napi::Env env = info.Env();
  std::unique_ptr<CliHolder> h(Parse(env, info[0]));
  const mcpp_cli_options &o = h->o;
  char line[300];
  mcpp_cli_problem_line(&o, line, sizeof line);
  Napi::Object r = Napi::Object::New(env);
  r.Set("mode", kModes[o.mode]);
  r.Set("target", kTargets[o.target]);
  r.Set("method", static_cast<int>(o.method));
  r.Set("count", static_cast<double>(o.count));
  r.Set("intervalMs", o.interval_ms);
  r.Set("timeoutMs", o.timeout_ms);
  r.Set("deadlineMs", o.deadline_ms);
  r.Set("connectTimeoutMs", o.connect_timeout_ms);
  r.Set("quiet", Napi::Boolean::New(env, o.quiet));
  r.Set("json", Napi::Boolean::New(env, o.json));
  r.Set("init", Napi::Boolean::New(env, o.init));
  r.Set("wrap", Napi::Boolean::New(env, o.wrap));
  r.Set("unwrap", Napi::Boolean::New(env, o.unwrap));
  r.Set("write", Napi::Boolean::New(env, o.write));
  r.Set("commandPath", OptString(env, o.command_path));
  r.Set("log", OptString(env, o.log));
  r.Set("url", OptString(env, o.url));
  r.Set("command", Strings(env, o.command, o.ncommand));
  r.Set("configs", Strings(env, o.configs, o.nconfigs));
  r.Set("headers", Pairs(env, o.headers, o.nheaders, 1));
  r.Set("env", Pairs(env, o.env, o.nenv, 0));
  r.Set("expectTools", Strings(env, o.expect_tools, o.nexpect_tools));
  r.Set("errorLine", line);
  r.Set("error", o.error);
  r.Set("exitUsage", MCPP_EXIT_USAGE);
  r.Set("listenHost", o.listen_host);
  r.Set("listenPort", o.listen_port);
  r.Set("listenAny", Napi::Boolean::New(env, o.listen_any));
  r.Set("failures", o.failures);
  r.Set("restart", Napi::Boolean::New(env, o.restart));
  r.Set("metrics", OptString(env, o.metrics));
  r.Set("name", OptString(env, o.name));
  r.Set("wrapUsage", mcpp_wrap_usage());
  // With done, the command only prints out and err and exits with status.
  const char *out = "";
  char err[300];
  int status = 0;
  bool done = mcpp_cli_immediate(&o, &out, err, sizeof err, &status) != 0;
  r.Set("done", Napi::Boolean::New(env, done));
  r.Set("out", out);
  r.Set("err", done ? err : "");
  r.Set("status", status);
  return r;
}

CliHolder *Holder(const Napi::CallbackInfo &info) {
  if (!info[0].IsExternal()) throw Napi::TypeError::New(info.Env(), "not a cli run");
  return info[0].As<Napi::External<CliHolder>>().Data();
}

int64_t Now(const Napi::CallbackInfo &info) {
  return info[1].As<Napi::Number>().Int64Value();
}

// cliRun(argv, nowMs): the check's state machine for argv.
Napi::Value CliRun(const Napi::CallbackInfo &info) {
  Napi::Env env = info.Env();
  CliHolder *h = Parse(env, info[0]);
  if (mcpp_cli_run_new(&h->run, &h->o, info[1].As<Napi::Number>().Int64Value())) {
    delete h;
    throw Napi::TypeError::New(env, "argv does not ask for a check");
  }
  return Napi::External<CliHolder>::New(env, h, [](Napi::Env, CliHolder *p) { delete p; });
}

// cliNext(run, nowMs): [what, method, timeoutMs, untilMs, status, out, err]
// (out, err: Buffers to write first, or null).
Napi::Value CliNext(const Napi::CallbackInfo &info) {
  Napi::Env env = info.Env();
  CliHolder *h = Holder(info);
  mcpp_cli_action a;
  mcpp_cli_next(h->run, Now(info), &a);
  Napi::Array r = Napi::Array::New(env, 7);
  r.Set(0u, static_cast<int>(a.what));
  r.Set(1u, OptString(env, a.method));
  r.Set(2u, a.timeout_ms);
  r.Set(3u, static_cast<double>(a.until_ms));
  r.Set(4u, a.status);
  // Most steps print nothing: null then, not an empty Buffer.
  r.Set(5u, a.out_len ? Napi::Value(Napi::Buffer<char>::Copy(env, a.out, a.out_len)) : env.Null());
  r.Set(6u, a.err_len ? Napi::Value(Napi::Buffer<char>::Copy(env, a.err, a.err_len)) : env.Null());
  return r;
}

std::string Str(const Napi::Value &v, bool *has) {
  *has = v.IsString();
  return *has ? v.As<Napi::String>().Utf8Value() : std::string();
}

// cliOpenDone(run, nowMs, result, peer, transport, protocol, session, reason)
Napi::Value CliOpenDone(const Napi::CallbackInfo &info) {
  CliHolder *h = Holder(info);
  bool hp, ht, hv, hs, hr;
  std::string peer = Str(info[3], &hp), tr = Str(info[4], &ht), pv = Str(info[5], &hv),
              sid = Str(info[6], &hs), why = Str(info[7], &hr);
  mcpp_cli_opened op{};
  op.result = static_cast<mcpp_cli_open_result>(info[2].As<Napi::Number>().Int32Value());
  op.peer = hp ? peer.c_str() : nullptr;
  op.transport = ht ? tr.c_str() : nullptr;
  op.protocol_version = hv ? pv.c_str() : nullptr;
  op.session_id = hs ? sid.c_str() : nullptr;
  op.reason = hr ? why.c_str() : nullptr;
  mcpp_cli_open_done(h->run, Now(info), &op);
  return info.Env().Undefined();
}

// cliReplied(run, nowMs, kind, rttMs, code|null, message|null)
Napi::Value CliReplied(const Napi::CallbackInfo &info) {
  CliHolder *h = Holder(info);
  bool hm;
  std::string msg = Str(info[5], &hm);
  bool hc = info[4].IsNumber();
  mcpp_cli_replied(h->run, Now(info), static_cast<mcpp_cli_reply>(info[2].As<Napi::Number>().Int32Value()),
                   info[3].As<Napi::Number>().DoubleValue(), hc,
                   hc ? info[4].As<Napi::Number>().Int64Value() : 0, hm ? msg.c_str() : nullptr);
  return info.Env().Undefined();
}

// cliTools(run, nowMs, kind, names, code|null, message|null)
Napi::Value CliTools(const Napi::CallbackInfo &info) {
  CliHolder *h = Holder(info);
  std::vector<std::string> names;
  if (info[3].IsArray()) {
    Napi::Array a = info[3].As<Napi::Array>();
    for (uint32_t i = 0; i < a.Length(); i++) {
      Napi::Value v = a.Get(i);
      names.push_back(v.IsString() ? v.As<Napi::String>().Utf8Value() : std::string());
    }
  }
  std::vector<const char *> ptrs;
  for (auto &s : names) ptrs.push_back(s.c_str());
  bool hm;
  std::string msg = Str(info[5], &hm);
  bool hc = info[4].IsNumber();
  mcpp_cli_tools(h->run, Now(info), static_cast<mcpp_cli_reply>(info[2].As<Napi::Number>().Int32Value()),
                 ptrs.data(), ptrs.size(), hc, hc ? info[4].As<Napi::Number>().Int64Value() : 0,
                 hm ? msg.c_str() : nullptr);
  return info.Env().Undefined();
}

Napi::Value CliInterrupt(const Napi::CallbackInfo &info) {
  mcpp_cli_interrupt(Holder(info)->run, Now(info));
  return info.Env().Undefined();
}

// demoAnswer(line) -> string | null: the demo server's answer (C's).
Napi::Value DemoAnswer(const Napi::CallbackInfo &info) {
  if (!info[0].IsString()) throw Napi::TypeError::New(info.Env(), "demoAnswer: line must be a string");
  std::string line = info[0].As<Napi::String>().Utf8Value();
  char *answer = mcpp_demo_answer(line.data(), line.size());
  if (!answer) return info.Env().Null();
  Napi::String out = Napi::String::New(info.Env(), answer);
  mcpp_config_free(answer);
  return out;
}

}  // namespace

void InitApp(Napi::Env env, Napi::Object exports) {
  exports.Set("demoAnswer", Napi::Function::New(env, DemoAnswer));
  exports.Set("cliParse", Napi::Function::New(env, CliParse));
  exports.Set("appKillGraceMs", MCPP_APP_KILL_GRACE_MS);
  exports.Set("cliStepSlackMs", MCPP_CLI_STEP_SLACK_MS);
  exports.Set("exitOutputClosed", MCPP_EXIT_OUTPUT_CLOSED);
  exports.Set("minIntervalFloorMs", MCPP_MIN_INTERVAL_FLOOR_MS);
  exports.Set("cliRun", Napi::Function::New(env, CliRun));
  exports.Set("cliNext", Napi::Function::New(env, CliNext));
  exports.Set("cliOpenDone", Napi::Function::New(env, CliOpenDone));
  exports.Set("cliReplied", Napi::Function::New(env, CliReplied));
  exports.Set("cliTools", Napi::Function::New(env, CliTools));
  exports.Set("cliInterrupt", Napi::Function::New(env, CliInterrupt));
}

}  // namespace mcpping_node
