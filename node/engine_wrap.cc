// The sans-I/O engine as a JavaScript class (see engine_wrap.h).
#include "engine_wrap.h"
#include "metrics_wrap.h"

#include <string>

#include "convert.h"
#include "rules_wrap.h"

namespace mcpping_node {

namespace {

uint64_t NowArg(const Napi::CallbackInfo &info, size_t i) {
  if (info.Length() <= i || !info[i].IsNumber()) return MonotonicUs();
  double d = info[i].As<Napi::Number>().DoubleValue();
  return d > 0 ? static_cast<uint64_t>(d) : 0;
}

}  // namespace

// Calls nest: a synchronous transport feeds the engine from inside one of
// its callbacks (an in-memory pair answers a ping inside engine.ping). The
// inner call has its own sink; the outer call's comes back when it returns,
// so what the outer C call emits after that still reaches the outer sink.
// The outer call's handle scope is still open, so its sink value is valid.
class EngineWrap::SinkScope {
 public:
  SinkScope(EngineWrap *self, const Napi::CallbackInfo &info, size_t i)
      : self_(self), outer_sink_(self->sink_), outer_threw_(self->sink_threw_) {
    self_->env_ = info.Env();
    self_->sink_ = (info.Length() > i && info[i].IsFunction()) ? napi_value(info[i]) : nullptr;
    self_->sink_threw_ = false;
  }
  ~SinkScope() {
    self_->sink_ = outer_sink_;
    self_->sink_threw_ = outer_threw_;
  }
  // Rethrows what the sink threw during the C call, if anything.
  void Rethrow() {
    if (!self_->sink_threw_) return;
    self_->sink_threw_ = false;
    Napi::Value err = self_->sink_error_.Value();
    self_->sink_error_.Reset();
    throw Napi::Error(self_->env_, err);
  }

 private:
  EngineWrap *self_;
  napi_value outer_sink_;
  bool outer_threw_;
};

Napi::Function EngineWrap::Init(Napi::Env env) {
  return DefineClass(
      env, "Engine",
      {
          InstanceMethod("recv", &EngineWrap::Recv),
          InstanceMethod("touch", &EngineWrap::Touch),
          InstanceMethod("setMetrics", &EngineWrap::SetMetrics),
          InstanceMethod("setReading", &EngineWrap::SetReading),
          InstanceMethod("observeOutbound", &EngineWrap::ObserveOutbound),
          InstanceMethod("ping", &EngineWrap::Ping),
          InstanceMethod("cancelPing", &EngineWrap::CancelPing),
          InstanceMethod("nextDeadline", &EngineWrap::NextDeadline),
          InstanceMethod("onTimer", &EngineWrap::OnTimer),
          InstanceMethod("close", &EngineWrap::Close),
          InstanceMethod("failRequest", &EngineWrap::FailRequest),
          InstanceMethod("awaits", &EngineWrap::Awaits),
          InstanceMethod("unreadable", &EngineWrap::Unreadable),
          InstanceMethod("setSessionId", &EngineWrap::SetSessionId),
          InstanceMethod("setReconnectAttempt", &EngineWrap::SetReconnectAttempt),
          InstanceMethod("recordReconnect", &EngineWrap::RecordReconnect),
          InstanceMethod("info", &EngineWrap::Info),
          InstanceMethod("healthy", &EngineWrap::Healthy),
          InstanceMethod("inFlight", &EngineWrap::InFlight),
          InstanceMethod("shouldClose", &EngineWrap::ShouldClose),
          InstanceMethod("staleReason", &EngineWrap::StaleReason),
          InstanceMethod("free", &EngineWrap::Free),
      });
}

// new Engine(settings, now, sink): the sink gets what creation emits.
EngineWrap::EngineWrap(const Napi::CallbackInfo &info)
    : Napi::ObjectWrap<EngineWrap>(info) {
  Napi::Env env = info.Env();
  OwnedSettings settings;
  SettingsFromJs(info[0].IsObject() ? info[0].As<Napi::Object>()
                                    : Napi::Object::New(env),
                 &settings);
  mcpp_engine_callbacks cbs{};
  cbs.send = &EngineWrap::OnSend;
  cbs.deliver = &EngineWrap::OnDeliver;
  cbs.on_event = &EngineWrap::OnEvent;
  cbs.on_record = &EngineWrap::OnRecord;
  SinkScope scope(this, info, 2);
  int rc = mcpp_engine_new(&engine_, &settings.s, &cbs, this, nullptr, NowArg(info, 1));
  if (rc < 0) ThrowMcppError(env, rc);
  scope.Rethrow();
}

EngineWrap::~EngineWrap() { mcpp_engine_free(engine_); }

bool EngineWrap::CallSink(std::initializer_list<napi_value> args) {
  if (!sink_ || sink_threw_) return !sink_threw_;
  napi_value global, result;
  napi_get_global(env_, &global);
  napi_status st = napi_call_function(env_, global, sink_, args.size(), args.begin(), &result);
  if (st == napi_ok) return true;
  // Keep the exception for SinkScope::Rethrow; never unwind through C.
  napi_value exc;
  if (napi_get_and_clear_last_exception(env_, &exc) == napi_ok) {
    sink_error_ = Napi::Persistent(Napi::Value(env_, exc));
    sink_threw_ = true;
  }
  return false;
}

int EngineWrap::OnSend(mcpp_engine *, mcpp_frame_kind kind, const char *frame,
                       size_t len, void *user_data) {
  EngineWrap *self = static_cast<EngineWrap *>(user_data);
  Napi::Env env(self->env_);
  Napi::HandleScope scope(env);
  bool ok = self->CallSink({Napi::Number::New(env, 0), Napi::Number::New(env, kind),
                            Napi::String::New(env, frame, len)});
  return ok ? 0 : MCPP_ERR_IO;
}

void EngineWrap::OnDeliver(mcpp_engine *engine, const char *frame, size_t len,
                           void *user_data) {
  EngineWrap *self = static_cast<EngineWrap *>(user_data);
  Napi::Env env(self->env_);
  Napi::HandleScope scope(env);
  // The answer's kind (timeout, abandoned, ...) travels beside the frame.
  self->CallSink({Napi::Number::New(env, 1), Napi::String::New(env, frame, len),
                  Napi::String::New(env, mcpp_answer_kind_name(
                                         mcpp_engine_delivery_kind(engine)))});
}

void EngineWrap::OnEvent(mcpp_engine *, const mcpp_event *ev, void *user_data) {
  EngineWrap *self = static_cast<EngineWrap *>(user_data);
  Napi::Env env(self->env_);
  Napi::HandleScope scope(env);
  self->CallSink({Napi::Number::New(env, 2), EventToJs(env, *ev, 0), env.Undefined()});
}

void EngineWrap::OnRecord(mcpp_engine *, const char *json, size_t len,
                          void *user_data) {
  EngineWrap *self = static_cast<EngineWrap *>(user_data);
  Napi::Env env(self->env_);
  Napi::HandleScope scope(env);
  self->CallSink({Napi::Number::New(env, 3), Napi::String::New(env, json, len),
                  env.Undefined()});
}

mcpp_engine *EngineWrap::Get(Napi::Env env) {
  if (!engine_) ThrowMcppError(env, MCPP_ERR_CLOSED, "engine was freed");
  return engine_;
}

// recv(frame, now, sink) -> true to forward the frame, false if consumed.
Napi::Value EngineWrap::Recv(const Napi::CallbackInfo &info) {
  Napi::Env env = info.Env();
  mcpp_engine *e = Get(env);
  std::string frame = info[0].As<Napi::String>().Utf8Value();
  SinkScope scope(this, info, 2);
  int rc = mcpp_engine_recv(e, frame.data(), frame.size(), NowArg(info, 1));
  scope.Rethrow();
  if (rc < 0) ThrowMcppError(env, rc);
  return Napi::Boolean::New(env, rc == MCPP_RECV_FORWARD);
}

// touch(now, sink): bytes that are no message (an SSE comment); the sink
// gets a "recovered" that this proof of life may cause.
// setMetrics(cell): the engine counts its events into a metricsCell().
Napi::Value EngineWrap::SetMetrics(const Napi::CallbackInfo &info) {
  mcpp_metrics_cell *cell = CellFromJs(info.Env(), info[0]);
  if (engine_) mcpp_engine_set_metrics(engine_, cell);
  return info.Env().Undefined();
}

Napi::Value EngineWrap::Touch(const Napi::CallbackInfo &info) {
  mcpp_engine *e = Get(info.Env());
  SinkScope scope(this, info, 1);
  mcpp_engine_touch(e, NowArg(info, 0));
  scope.Rethrow();
  return info.Env().Undefined();
}

/* setReading(reading, now, sink): false while the peer cannot be heard or
 * reached through no fault of its own (no keepalive ping, nothing times
 * out). */
Napi::Value EngineWrap::SetReading(const Napi::CallbackInfo &info) {
  mcpp_engine *e = Get(info.Env());
  SinkScope scope(this, info, 2);
  mcpp_engine_set_reading(e, info[0].ToBoolean().Value() ? 1 : 0,
                          NowArg(info, 1));
  scope.Rethrow();
  return info.Env().Undefined();
}

// observeOutbound(frame, now, sink[, timeoutMs]) -> 0 or MCPP_ERR_NOMEM (the
// frame is still sent); a request's timeoutMs: 0 the settings' request
// timeout (mcpp_engine_observe_outbound_timed).
Napi::Value EngineWrap::ObserveOutbound(const Napi::CallbackInfo &info) {
  Napi::Env env = info.Env();
  mcpp_engine *e = Get(env);
  std::string frame = info[0].As<Napi::String>().Utf8Value();
  uint32_t timeout = info[3].IsNumber() ? info[3].As<Napi::Number>().Uint32Value() : MCPP_TIMEOUT_DEFAULT;
  SinkScope scope(this, info, 2);
  int rc = mcpp_engine_observe_outbound_timed(e, frame.data(), frame.size(), timeout, NowArg(info, 1));
  scope.Rethrow();
  if (rc == MCPP_ERR_INVALID_ARGUMENT) ThrowMcppError(env, rc);
  return Napi::Number::New(env, rc);
}

// failRequest(idJson, now, sink) -> true if it was in flight: its answer
// cannot come any more, so the engine delivers its in-doubt one.
Napi::Value EngineWrap::FailRequest(const Napi::CallbackInfo &info) {
  Napi::Env env = info.Env();
  mcpp_engine *e = Get(env);
  std::string id = info[0].As<Napi::String>().Utf8Value();
  SinkScope scope(this, info, 2);
  int rc = mcpp_engine_fail_request(e, id.data(), id.size(), NowArg(info, 1));
  scope.Rethrow();
  return Napi::Boolean::New(env, rc == 0);
}

// awaits(frame) -> true while frame, a request that went out (our ping or
// probe, an application request), still waits for its answer. A pure read.
Napi::Value EngineWrap::Awaits(const Napi::CallbackInfo &info) {
  Napi::Env env = info.Env();
  mcpp_engine *e = Get(env);
  std::string frame = info[0].As<Napi::String>().Utf8Value();
  return Napi::Boolean::New(env, mcpp_engine_awaits(e, frame.data(), frame.size()) == 1);
}

// unreadable() -> the sentence that says which frames from the server were
// not JSON-RPC messages (mcpp_engine_unreadable_text), "" if none.
Napi::Value EngineWrap::Unreadable(const Napi::CallbackInfo &info) {
  Napi::Env env = info.Env();
  char text[512];
  mcpp_engine_unreadable_text(Get(env), text, sizeof text);
  return Napi::String::New(env, text);
}

// ping(timeoutMs, now, sink) -> the ping's seq; throws on MCPP_ERR_*.
Napi::Value EngineWrap::Ping(const Napi::CallbackInfo &info) {
  Napi::Env env = info.Env();
  mcpp_engine *e = Get(env);
  uint32_t timeout = info[0].IsNumber() ? info[0].As<Napi::Number>().Uint32Value() : 0;
  uint64_t seq = 0;
  SinkScope scope(this, info, 2);
  int rc = mcpp_engine_ping(e, timeout, NowArg(info, 1), &seq);
  scope.Rethrow();
  if (rc < 0) ThrowMcppError(env, rc);
  return Napi::Number::New(env, static_cast<double>(seq));
}

Napi::Value EngineWrap::CancelPing(const Napi::CallbackInfo &info) {
  Napi::Env env = info.Env();
  uint64_t seq = static_cast<uint64_t>(info[0].As<Napi::Number>().Int64Value());
  return Napi::Boolean::New(env, mcpp_engine_cancel_ping(Get(env), seq) == 0);
}

// nextDeadline() -> monotonic µs, or -1 when nothing is scheduled.
Napi::Value EngineWrap::NextDeadline(const Napi::CallbackInfo &info) {
  Napi::Env env = info.Env();
  uint64_t d = mcpp_engine_next_deadline(Get(env));
  return Napi::Number::New(env, d == UINT64_MAX ? -1.0 : static_cast<double>(d));
}

Napi::Value EngineWrap::OnTimer(const Napi::CallbackInfo &info) {
  Napi::Env env = info.Env();
  mcpp_engine *e = Get(env);
  SinkScope scope(this, info, 1);
  int rc = mcpp_engine_on_timer(e, NowArg(info, 0));
  scope.Rethrow();
  return Napi::Number::New(env, rc);
}

// close(err, reason, now, sink)
Napi::Value EngineWrap::Close(const Napi::CallbackInfo &info) {
  Napi::Env env = info.Env();
  mcpp_engine *e = Get(env);
  int err = info[0].IsNumber() ? info[0].As<Napi::Number>().Int32Value() : 0;
  std::string reason;
  bool has_reason = info.Length() > 1 && info[1].IsString();
  if (has_reason) reason = info[1].As<Napi::String>().Utf8Value();
  SinkScope scope(this, info, 3);
  mcpp_engine_close(e, err, has_reason ? reason.c_str() : nullptr, NowArg(info, 2));
  scope.Rethrow();
  return env.Undefined();
}

Napi::Value EngineWrap::SetSessionId(const Napi::CallbackInfo &info) {
  Napi::Env env = info.Env();
  std::string sid = info[0].ToString().Utf8Value();
  int rc = mcpp_engine_set_session_id(Get(env), sid.c_str());
  if (rc < 0) ThrowMcppError(env, rc);
  return env.Undefined();
}

Napi::Value EngineWrap::SetReconnectAttempt(const Napi::CallbackInfo &info) {
  mcpp_engine_set_reconnect_attempt(Get(info.Env()), info[0].As<Napi::Number>().Uint32Value());
  return info.Env().Undefined();
}

Napi::Value EngineWrap::RecordReconnect(const Napi::CallbackInfo &info) {
  mcpp_engine *e = Get(info.Env());
  SinkScope scope(this, info, 1);
  mcpp_engine_record_reconnect(e, NowArg(info, 0));
  scope.Rethrow();
  return info.Env().Undefined();
}

Napi::Value EngineWrap::Info(const Napi::CallbackInfo &info) {
  mcpp_engine_info ei{};
  mcpp_engine_get_info(Get(info.Env()), &ei);
  return InfoToJs(info.Env(), ei);
}

Napi::Value EngineWrap::Healthy(const Napi::CallbackInfo &info) {
  return Napi::Boolean::New(info.Env(), mcpp_engine_healthy(Get(info.Env()), NowArg(info, 0)) != 0);
}

// inFlight() -> [{id, method, sentAtUs}] in send order.
Napi::Value EngineWrap::InFlight(const Napi::CallbackInfo &info) {
  Napi::Env env = info.Env();
  struct Ctx {
    Napi::Env env;
    Napi::Array arr;
    uint32_t n;
  } ctx{env, Napi::Array::New(env), 0};
  mcpp_engine_foreach_in_flight(
      Get(env),
      [](const char *id, size_t id_len, const char *method, uint64_t sent_at, void *arg) {
        Ctx *c = static_cast<Ctx *>(arg);
        Napi::Object o = Napi::Object::New(c->env);
        o.Set("id", Napi::String::New(c->env, id, id_len));
        o.Set("method", method ? Napi::Value(Napi::String::New(c->env, method)) : c->env.Null());
        o.Set("sentAtUs", static_cast<double>(sent_at));
        c->arr.Set(c->n++, o);
      },
      &ctx);
  return ctx.arr;
}

Napi::Value EngineWrap::Free(const Napi::CallbackInfo &info) {
  mcpp_engine_free(engine_);
  engine_ = nullptr;
  return info.Env().Undefined();
}

// shouldClose(event): the stale policy (mcpp_engine_should_close).
Napi::Value EngineWrap::ShouldClose(const Napi::CallbackInfo &info) {
  mcpp_event ev = EventFromJs(info.Env(), info[0]);
  return Napi::Boolean::New(info.Env(), mcpp_engine_should_close(engine_, &ev) != 0);
}

// staleReason(): why the connection went stale, the reason to close it
// with; '' before it did (mcpp_engine_stale_reason).
Napi::Value EngineWrap::StaleReason(const Napi::CallbackInfo &info) {
  char why[256];
  mcpp_engine_stale_reason(engine_, why, sizeof why);
  return Napi::String::New(info.Env(), why);
}

}  // namespace mcpping_node
