// Per-environment state of the mcpping addon (one per main thread or
// worker): the runtime (one native I/O thread serving every connection this
// environment opens) and the thread-safe function that brings its results
// to JavaScript in batches.
#ifndef MCPPING_NODE_ADDON_H
#define MCPPING_NODE_ADDON_H

#include <napi.h>

#include "mcpping.h"

namespace mcpping_node {

class McppAddon;

// Runs on the JavaScript thread when the runtime has queued items.
void DrainOnJsThread(Napi::Env env, Napi::Function unused, McppAddon *addon,
                     void *data);

using WakeFn = Napi::TypedThreadSafeFunction<McppAddon, void, DrainOnJsThread>;

class McppAddon : public Napi::Addon<McppAddon> {
 public:
  McppAddon(Napi::Env env, Napi::Object exports);

  // Hands every queued item to the JavaScript dispatcher, one per call.
  void Drain(Napi::Env env);
  // Frees the batch being handed over (if the runtime is still there).
  void FreeBatch();
  // JavaScript's event constructor (see EventToJs), empty until set.
  Napi::FunctionReference &EventFactory() { return make_event_; }

 private:
  // Creates the runtime and the wake-up function on first use.
  mcpp_runtime *Runtime(Napi::Env env);
  // Frees the runtime (killing and reaping servers) before the wake-up
  // function goes: registered after it, so it runs first at teardown.
  static void Cleanup(McppAddon *self);
  static void Notify(void *user_data);

  Napi::Value SetDispatch(const Napi::CallbackInfo &info);
  Napi::Value Spawn(const Napi::CallbackInfo &info);
  Napi::Value Send(const Napi::CallbackInfo &info);
  Napi::Value CancelRequest(const Napi::CallbackInfo &info);
  Napi::Value Ping(const Napi::CallbackInfo &info);
  Napi::Value CancelPing(const Napi::CallbackInfo &info);
  Napi::Value Pid(const Napi::CallbackInfo &info);
  Napi::Value SetRetryBudget(const Napi::CallbackInfo &info);
  Napi::Value Close(const Napi::CallbackInfo &info);
  Napi::Value Info(const Napi::CallbackInfo &info);
  Napi::Value Ref(const Napi::CallbackInfo &info);
  Napi::Value Unref(const Napi::CallbackInfo &info);
  Napi::Value StrError(const Napi::CallbackInfo &info);
  Napi::Value ErrName(const Napi::CallbackInfo &info);
  Napi::Value DefaultSettings(const Napi::CallbackInfo &info);
  Napi::Value Now(const Napi::CallbackInfo &info);
  Napi::Value Shutdown(const Napi::CallbackInfo &info);

  mcpp_runtime *rt_ = nullptr;
  WakeFn wake_;
  bool wake_created_ = false;
  bool wake_refed_ = false;
  bool torn_down_ = false;
  // setRetryBudget's figures (burst 0: the default).
  uint32_t budget_burst_ = 0;
  double budget_per_second_ = 0;
  Napi::FunctionReference dispatch_;
  Napi::FunctionReference make_event_;
  // The batch being handed to JavaScript, one item at a time (see Drain);
  // Cleanup frees it if a handler shuts the runtime down meanwhile.
  mcpp_item *batch_ = nullptr;
};

}  // namespace mcpping_node

#endif
