// Conversions between JavaScript values and the mcpping C structs.
#include "convert.h"

#include <time.h>

#include <random>

#include "addon.h"

namespace mcpping_node {

namespace {

uint32_t GetU32(const Napi::Object &obj, const char *key, uint32_t dflt) {
  Napi::Value v = obj.Get(key);
  if (v.IsUndefined() || v.IsNull()) return dflt;
  if (!v.IsNumber())
    throw Napi::TypeError::New(obj.Env(), std::string(key) + " must be a number");
  double d = v.As<Napi::Number>().DoubleValue();
  if (!(d >= 0) || d > 4294967295.0)
    throw Napi::RangeError::New(obj.Env(), std::string(key) + " is out of range");
  return static_cast<uint32_t>(d);
}

std::string GetString(const Napi::Object &obj, const char *key) {
  Napi::Value v = obj.Get(key);
  if (v.IsUndefined() || v.IsNull()) return std::string();
  return v.ToString().Utf8Value();
}

Napi::Value StringOrNull(Napi::Env env, const char *s) {
  return s ? Napi::Value(Napi::String::New(env, s)) : env.Null();
}

}  // namespace

uint64_t MonotonicUs() {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<uint64_t>(ts.tv_sec) * 1000000u +
         static_cast<uint64_t>(ts.tv_nsec) / 1000u;
}

int64_t ClockOffsetUs() {
  struct timespec rt;
  clock_gettime(CLOCK_REALTIME, &rt);
  int64_t wall = static_cast<int64_t>(rt.tv_sec) * 1000000 + rt.tv_nsec / 1000;
  return wall - static_cast<int64_t>(MonotonicUs());
}

uint64_t RandomNonce() {
  std::random_device rd;
  return (static_cast<uint64_t>(rd()) << 32) ^ rd();
}

void SettingsFromJs(const Napi::Object &obj, OwnedSettings *out) {
  Napi::Env env = obj.Env();
  mcpp_settings *s = &out->s;
  mcpp_settings_default(s);

  std::string role = GetString(obj, "role");
  if (role.empty() || role == "client")
    s->role = MCPP_ROLE_CLIENT;
  else if (role == "server")
    s->role = MCPP_ROLE_SERVER;
  else
    throw Napi::TypeError::New(env, "role must be 'client' or 'server'");

  std::string transport = GetString(obj, "transport");
  if (transport.empty() || transport == "stdio")
    s->transport = MCPP_TRANSPORT_STDIO;
  else if (transport == "streamable-http")
    s->transport = MCPP_TRANSPORT_STREAMABLE_HTTP;
  else if (transport == "custom")
    s->transport = MCPP_TRANSPORT_CUSTOM;
  else
    throw Napi::TypeError::New(
        env, "transport must be 'stdio', 'streamable-http' or 'custom'");

  std::string on_stale = GetString(obj, "onStale");
  if (on_stale.empty() || on_stale == "close")
    s->on_stale = MCPP_STALE_CLOSE;
  else if (on_stale == "report")
    s->on_stale = MCPP_STALE_REPORT;
  else
    throw Napi::TypeError::New(env, "onStale must be 'close' or 'report'");

  s->interval_ms = GetU32(obj, "intervalMs", s->interval_ms);
  s->jitter_pct = GetU32(obj, "jitterPct", s->jitter_pct);
  s->timeout_ms = GetU32(obj, "timeoutMs", s->timeout_ms);
  s->failures = GetU32(obj, "failures", s->failures);
  s->min_interval_ms = GetU32(obj, "minIntervalMs", s->min_interval_ms);
  s->pause_threshold_ms = GetU32(obj, "pauseThresholdMs", s->pause_threshold_ms);
  s->request_timeout_ms = GetU32(obj, "requestTimeoutMs", s->request_timeout_ms);
  s->max_outstanding_pings =
      GetU32(obj, "maxOutstandingPings", s->max_outstanding_pings);
  Napi::Value mlb = obj.Get("maxLineBytes");
  if (mlb.IsNumber())
    s->max_line_bytes = static_cast<size_t>(mlb.As<Napi::Number>().Int64Value());
  Napi::Value mpb = obj.Get("maxPendingBytes");
  if (mpb.IsNumber())
    s->max_pending_bytes = static_cast<size_t>(mpb.As<Napi::Number>().Int64Value());
  Napi::Value clamp = obj.Get("clampInterval");
  if (!clamp.IsUndefined() && !clamp.IsNull()) s->clamp_interval = clamp.ToBoolean() ? 1 : 0;

  out->peer_name = GetString(obj, "peerName");
  s->peer_name = out->peer_name.empty() ? nullptr : out->peer_name.c_str();
  // Absent: the automatic probe; "": none; else the method (checked in JS).
  Napi::Value probe = obj.Get("probeMethod");
  if (probe.IsString()) {
    out->probe_method = probe.As<Napi::String>().Utf8Value();
    s->probe_method = out->probe_method.c_str();
  }
  // Present: reconnect on, with the fields checked in JS (validate.js) and
  // again below.
  Napi::Value rc = obj.Get("reconnect");
  if (rc.IsObject()) {
    Napi::Object r = rc.As<Napi::Object>();
    s->reconnect.enabled = 1;
    s->reconnect.initial_ms = GetU32(r, "initialMs", s->reconnect.initial_ms);
    s->reconnect.max_delay_ms = GetU32(r, "maxDelayMs", s->reconnect.max_delay_ms);
    s->reconnect.max_attempts = GetU32(r, "maxAttempts", s->reconnect.max_attempts);
    Napi::Value m = r.Get("multiplier"), j = r.Get("jitter");
    if (m.IsNumber()) s->reconnect.multiplier = m.As<Napi::Number>().DoubleValue();
    if (j.IsNumber()) s->reconnect.jitter = j.As<Napi::Number>().DoubleValue();
  }
  s->nonce = RandomNonce();
  s->clock_offset_us = ClockOffsetUs();
  // The engine's own check (the settings table's), so a value validate.js
  // let through is refused here in C's words, never wrapped or clamped.
  const char *problem = mcpp_settings_problem(s);
  if (problem) {
    Napi::Error e = Napi::RangeError::New(env, std::string("settings: ") + problem);
    e.Set("code", "ERR_MCPPING_INVALID_ARG");
    throw e;
  }
}

void SpawnFromJs(const Napi::Object &obj, OwnedSpawn *out) {
  Napi::Env env = obj.Env();
  mcpp_spawn_options *o = &out->o;
  *o = mcpp_spawn_options{};
  out->file = GetString(obj, "file");
  if (out->file.empty()) throw Napi::TypeError::New(env, "command is required");
  o->file = out->file.c_str();

  Napi::Value args = obj.Get("args");
  if (args.IsArray()) {
    Napi::Array a = args.As<Napi::Array>();
    for (uint32_t i = 0; i < a.Length(); i++)
      out->args_s.push_back(a.Get(i).ToString().Utf8Value());
  }
  if (out->args_s.empty()) out->args_s.push_back(out->file);
  for (auto &s : out->args_s) out->args.push_back(&s[0]);
  out->args.push_back(nullptr);
  o->args = out->args.data();

  Napi::Value envv = obj.Get("env");
  if (envv.IsArray()) {
    Napi::Array a = envv.As<Napi::Array>();
    for (uint32_t i = 0; i < a.Length(); i++)
      out->env_s.push_back(a.Get(i).ToString().Utf8Value());
    for (auto &s : out->env_s) out->env.push_back(&s[0]);
    out->env.push_back(nullptr);
    o->env = out->env.data();
  }

  out->cwd = GetString(obj, "cwd");
  o->cwd = out->cwd.empty() ? nullptr : out->cwd.c_str();

  std::string mode = GetString(obj, "stderr");
  if (mode.empty() || mode == "inherit")
    o->stderr_mode = MCPP_STDERR_INHERIT;
  else if (mode == "pipe")
    o->stderr_mode = MCPP_STDERR_CALLBACK;
  else if (mode == "ignore")
    o->stderr_mode = MCPP_STDERR_IGNORE;
  else
    throw Napi::TypeError::New(env, "stderr must be 'inherit', 'pipe' or 'ignore'");
  // killGraceMs 0 is no grace (SIGKILL at once), as docs/node.md says; C's 0 is the
  // default, which an absent killGraceMs leaves (validate.js refused the rest).
  uint32_t grace = GetU32(obj, "killGraceMs", UINT32_MAX);
  o->kill_grace_ms = grace == UINT32_MAX ? 0 : grace ? grace : MCPP_KILL_GRACE_NONE;
}

// The fields go to JavaScript's event constructor (runtime.js makeEvent,
// registered with setDispatch before any connection exists) in one call: an
// object literal there costs a fraction of setting twenty named properties
// from C++, each of which V8 serves on its slow path (the key internalized,
// the object's shape changed, every time). makeEvent names the fields, and
// the type, state, disposition and outcome, which cross as codes (names
// from the tables of eventNames(), made once).
Napi::Object EventToJs(Napi::Env env, const mcpp_event &ev, uint64_t token) {
  McppAddon *addon = env.GetInstanceData<McppAddon>();
  if (addon == nullptr || addon->EventFactory().IsEmpty())
    throw Napi::Error::New(env, "mcpping: runtime.js has not registered makeEvent");
  mcpp_ping_outcome outcome = mcpp_event_outcome(&ev);
  Napi::Value id = ev.id && ev.id_len
                       ? Napi::Value(Napi::String::New(env, ev.id, ev.id_len))
                       : env.Null();
  // The one code that applies to this event type (kept from before the
  // split): the peer's JSON-RPC code, else our MCPP_ERR_* code.
  double error_code = static_cast<double>(ev.rpc_code ? ev.rpc_code : ev.error);
  const napi_value fields[] = {
      Napi::Number::New(env, ev.type),
      Napi::Number::New(env, ev.state),
      Napi::Number::New(env, static_cast<double>(ev.ping_seq)),
      Napi::Boolean::New(env, ev.manual != 0),
      Napi::Number::New(env, static_cast<double>(token)),
      Napi::Number::New(env, static_cast<double>(ev.rtt_us)),
      Napi::Number::New(env, static_cast<double>(ev.timeout_ms)),
      Napi::Number::New(env, static_cast<double>(ev.rpc_code)),
      Napi::Number::New(env, ev.error),
      Napi::Number::New(env, error_code),
      Napi::Boolean::New(env, ev.invalid != 0),
      StringOrNull(env, ev.message),
      id,
      Napi::Number::New(env, static_cast<double>(ev.failure_count)),
      Napi::Number::New(env, static_cast<double>(ev.in_flight)),
      Napi::Number::New(env, ev.disposition),
      Napi::Number::New(env, outcome),
      StringOrNull(env, ev.proof)};
  Napi::Object o = addon->EventFactory()
                       .Call(env.Undefined(), sizeof fields / sizeof fields[0], fields)
                       .As<Napi::Object>();
  if (ev.type == MCPP_EV_RECONNECTING || ev.type == MCPP_EV_RECONNECTED)
    o.Set("attempt", static_cast<double>(ev.reconnect_attempt));
  if (ev.type == MCPP_EV_RECONNECTING)
    o.Set("delayMs", static_cast<double>(ev.delay_ms));
  if (ev.type == MCPP_EV_RECONNECTED) o.Set("pid", static_cast<double>(ev.pid));
  return o;
}

namespace {

void SetStringOrNull(Napi::Env env, Napi::Object o, const char *key,
                     const char *value) {
  if (value)
    o.Set(key, value);
  else
    o.Set(key, env.Null());
}

}  // namespace

Napi::Object InfoToJs(Napi::Env env, const mcpp_engine_info &info) {
  Napi::Object o = Napi::Object::New(env);
  o.Set("state", mcpp_state_name(info.state));
  o.Set("unsupported", info.unsupported != 0);
  o.Set("initialized", info.initialized != 0);
  if (info.protocol_version)
    o.Set("protocolVersion", info.protocol_version);
  else
    o.Set("protocolVersion", env.Null());
  if (info.peer_name)
    o.Set("peerName", info.peer_name);
  else
    o.Set("peerName", env.Null());
  o.Set("failureCount", static_cast<double>(info.failure_count));
  o.Set("inFlight", static_cast<double>(info.in_flight));
  o.Set("oldestInFlightUs", static_cast<double>(info.oldest_in_flight_us));
  o.Set("appTimeouts", static_cast<double>(info.app_timeouts));
  o.Set("lastRxUs", static_cast<double>(info.last_rx));
  o.Set("pingsSent", static_cast<double>(info.pings_sent));
  o.Set("pongsReceived", static_cast<double>(info.pongs_received));
  o.Set("pingTimeouts", static_cast<double>(info.ping_timeouts));
  o.Set("pingErrors", static_cast<double>(info.ping_errors));
  o.Set("pingsAnswered", static_cast<double>(info.pings_answered));
  o.Set("framesIn", static_cast<double>(info.frames_in));
  o.Set("framesOut", static_cast<double>(info.frames_out));
  o.Set("lastTrafficUs", static_cast<double>(info.last_traffic_us));
  o.Set("lastPingUs", static_cast<double>(info.last_ping_us));
  o.Set("lastProbeUs", static_cast<double>(info.last_probe_us));
  o.Set("lastProcessUs", static_cast<double>(info.last_process_us));
  SetStringOrNull(env, o, "freshestProof", mcpp_proof_name(info.freshest_proof));
  SetStringOrNull(env, o, "probeMethod", info.probe_method);
  o.Set("processState", mcpp_process_state_name(info.process_state));
  o.Set("reading", info.reading != 0);
  o.Set("probesSent", static_cast<double>(info.probes_sent));
  o.Set("probesAnswered", static_cast<double>(info.probes_answered));
  o.Set("probeTimeouts", static_cast<double>(info.probe_timeouts));
  o.Set("appCancels", static_cast<double>(info.app_cancels));
  return o;
}

Napi::Error McppErrorOf(Napi::Env env, int err, const std::string &detail) {
  Napi::Error e = Napi::Error::New(
      env, detail.empty() ? std::string(mcpp_strerror(err)) : detail);
  e.Set("code", mcpp_errname(err));
  e.Set("errno", Napi::Number::New(env, err));
  return e;
}

void ThrowMcppError(Napi::Env env, int err, const std::string &detail) {
  throw McppErrorOf(env, err, detail);
}

void ListFrom(Napi::Value v, std::vector<std::string> &store) {
  if (!v.IsArray()) return;
  Napi::Array a = v.As<Napi::Array>();
  for (uint32_t i = 0; i < a.Length(); i++) store.push_back(a.Get(i).ToString());
}

std::vector<char *> Pointers(std::vector<std::string> &store) {
  std::vector<char *> p;
  for (std::string &s : store) p.push_back(&s[0]);
  p.push_back(nullptr);
  return p;
}

}  // namespace mcpping_node
