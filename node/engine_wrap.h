// The sans-I/O engine as a JavaScript class, for transports the driver does
// not own (Streamable HTTP, any SDK Transport). Driven on the JavaScript
// thread: each call takes `now` (monotonic µs) and a `sink(kind, a, b)`
// function that receives, synchronously and in order, what the engine wants
// done: kind 0 send(frameKind, frame), 1 deliver(frame), 2 event(object),
// 3 record(json). Passing the sink per call keeps no persistent reference
// to JavaScript objects, so an engine is collected with its owner.
#ifndef MCPPING_NODE_ENGINE_WRAP_H
#define MCPPING_NODE_ENGINE_WRAP_H

#include <napi.h>

#include "mcpping.h"

namespace mcpping_node {

class EngineWrap : public Napi::ObjectWrap<EngineWrap> {
 public:
  static Napi::Function Init(Napi::Env env);
  explicit EngineWrap(const Napi::CallbackInfo &info);
  ~EngineWrap() override;

 private:
  // Makes `sink` the target of the engine's callbacks for one call and
  // rethrows, after the C call returned, what the sink threw.
  class SinkScope;

  static int OnSend(mcpp_engine *, mcpp_frame_kind kind, const char *frame,
                    size_t len, void *user_data);
  static void OnDeliver(mcpp_engine *, const char *frame, size_t len,
                        void *user_data);
  static void OnEvent(mcpp_engine *, const mcpp_event *ev, void *user_data);
  static void OnRecord(mcpp_engine *, const char *json, size_t len,
                       void *user_data);
  // Calls the current sink, remembering the first exception it throws.
  bool CallSink(std::initializer_list<napi_value> args);

  mcpp_engine *Get(Napi::Env env);

  Napi::Value Recv(const Napi::CallbackInfo &info);
  Napi::Value Touch(const Napi::CallbackInfo &info);
  Napi::Value SetMetrics(const Napi::CallbackInfo &info);
  Napi::Value SetReading(const Napi::CallbackInfo &info);
  Napi::Value ObserveOutbound(const Napi::CallbackInfo &info);
  Napi::Value FailRequest(const Napi::CallbackInfo &info);
  Napi::Value Awaits(const Napi::CallbackInfo &info);
  Napi::Value Unreadable(const Napi::CallbackInfo &info);
  Napi::Value Ping(const Napi::CallbackInfo &info);
  Napi::Value CancelPing(const Napi::CallbackInfo &info);
  Napi::Value NextDeadline(const Napi::CallbackInfo &info);
  Napi::Value OnTimer(const Napi::CallbackInfo &info);
  Napi::Value Close(const Napi::CallbackInfo &info);
  Napi::Value SetSessionId(const Napi::CallbackInfo &info);
  Napi::Value SetReconnectAttempt(const Napi::CallbackInfo &info);
  Napi::Value RecordReconnect(const Napi::CallbackInfo &info);
  Napi::Value Info(const Napi::CallbackInfo &info);
  Napi::Value Healthy(const Napi::CallbackInfo &info);
  Napi::Value InFlight(const Napi::CallbackInfo &info);
  Napi::Value ShouldClose(const Napi::CallbackInfo &info);
  Napi::Value StaleReason(const Napi::CallbackInfo &info);
  Napi::Value Free(const Napi::CallbackInfo &info);

  mcpp_engine *engine_ = nullptr;
  napi_env env_ = nullptr;
  napi_value sink_ = nullptr;  // valid only during one call
  bool sink_threw_ = false;
  Napi::Reference<Napi::Value> sink_error_;
};

}  // namespace mcpping_node

#endif
