// Per-environment state of the mcpping addon (one per main thread or
// worker): the runtime (its loop run by this environment's libuv loop in
// host mode, by its own native thread in thread mode) and the thread-safe
// function that brings its results to JavaScript from that thread.
#ifndef MCPPING_NODE_ADDON_H
#define MCPPING_NODE_ADDON_H

#include <napi.h>
#include <unordered_map>
#include <uv.h>

#include "mcpping.h"

namespace mcpping_node {

class McppAddon;

// Host mode's handles on this environment's loop: the runtime's descriptor
// and one timer. On the heap, not in the addon: their close callbacks may
// run after the addon is gone, and they finish the async cleanup hook.
struct HostHandles;

// A connection's stdout the runtime gave the host to watch (watch_fd).
struct FdPoll {
  uv_poll_t poll;
  HostHandles *host;
  int fd;
};

struct HostHandles {
  uv_poll_t poll;
  uv_timer_t timer;
  uv_loop_t *loop = nullptr;
  std::unordered_map<int, FdPoll *> fds;  // counted in open too
  McppAddon *addon = nullptr;  // null once closing
  int open = 0;                // handles initialised and not yet closed
  bool hook_ran = false;       // the environment is being torn down
  napi_async_cleanup_hook_handle hook = nullptr;
};

// Runs on the JavaScript thread when the runtime has queued items.
void DrainOnJsThread(Napi::Env env, Napi::Function unused, McppAddon *addon,
                     void *data);

using WakeFn = Napi::TypedThreadSafeFunction<McppAddon, void, DrainOnJsThread>;

class McppAddon : public Napi::Addon<McppAddon> {
 public:
  McppAddon(Napi::Env env, Napi::Object exports);

  // Hands every queued item to the JavaScript dispatcher, one per call;
  // returns the first error a handler threw (empty if none).
  Napi::Error Drain(Napi::Env env);
  // The thread-safe function's call: a host turn in host mode (the
  // watchdog ran the loop for a stalled host), a drain in thread mode.
  void OnNotify(Napi::Env env);
  // Host mode: a turn from a uv callback (the descriptor is readable or
  // the timer fired): the runtime's loop, then the drain, in one callback
  // scope so promise reactions run after the whole batch.
  void HostTurn(int fd = -1);
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
  static void AsyncCleanup(napi_async_cleanup_hook_handle handle, void *arg);
  static void Notify(void *user_data);
  // Switches the new runtime to host mode on env's loop, if it may.
  void AttachHost(Napi::Env env);
  // One non-blocking turn of the runtime's loop; arms the timer for the next.
  void HostRun();
  // After a call of the runtime on this thread: a turn within the time
  // mcpp_runtime_host_rearm says, if that is sooner than the armed timer.
  void AfterCall() {
    if (hosted_) ArmTimer(mcpp_runtime_host_rearm(rt_));
  }
  void ArmTimer(int64_t ms);
  void CloseHostHandles();

  Napi::Value SetDispatch(const Napi::CallbackInfo &info);
  Napi::Value Spawn(const Napi::CallbackInfo &info);
  Napi::Value Send(const Napi::CallbackInfo &info);
  Napi::Value CancelRequest(const Napi::CallbackInfo &info);
  Napi::Value Ping(const Napi::CallbackInfo &info);
  Napi::Value CancelPing(const Napi::CallbackInfo &info);
  Napi::Value Pid(const Napi::CallbackInfo &info);
  Napi::Value SetRetryBudget(const Napi::CallbackInfo &info);
  Napi::Value SetRecords(const Napi::CallbackInfo &info);
  Napi::Value SetPingEvents(const Napi::CallbackInfo &info);
  Napi::Value FeedRtt(const Napi::CallbackInfo &info);
  Napi::Value SetMetrics(const Napi::CallbackInfo &info);
  Napi::Value EventNames(const Napi::CallbackInfo &info);
  Napi::Value Close(const Napi::CallbackInfo &info);
  Napi::Value Info(const Napi::CallbackInfo &info);
  Napi::Value Unreadable(const Napi::CallbackInfo &info);
  Napi::Value Ref(const Napi::CallbackInfo &info);
  Napi::Value Unref(const Napi::CallbackInfo &info);
  Napi::Value StrError(const Napi::CallbackInfo &info);
  Napi::Value ErrName(const Napi::CallbackInfo &info);
  Napi::Value DefaultSettings(const Napi::CallbackInfo &info);
  Napi::Value Now(const Napi::CallbackInfo &info);
  Napi::Value Shutdown(const Napi::CallbackInfo &info);
  Napi::Value RuntimeMode(const Napi::CallbackInfo &info);
  Napi::Value HostStats(const Napi::CallbackInfo &info);

  mcpp_runtime *rt_ = nullptr;
  WakeFn wake_;
  bool wake_created_ = false;
  bool wake_refed_ = false;
  bool torn_down_ = false;
  // Host mode (see AttachHost): the handles, the loop time (ms) the timer
  // is armed for, and the async context a turn's callback scope uses.
  napi_env env_ = nullptr;
  HostHandles *host_ = nullptr;
  bool hosted_ = false;
  bool in_turn_ = false;
  uint64_t timer_due_ = 0;
  napi_async_context async_ = nullptr;
  Napi::ObjectReference resource_;
  // setRetryBudget's figures (burst 0: the default).
  uint32_t budget_burst_ = 0;
  double budget_per_second_ = 0;
  Napi::FunctionReference dispatch_;
  Napi::FunctionReference make_event_;
  // The batch being handed to JavaScript, one item at a time (see Drain);
  // Cleanup frees it if a handler shuts the runtime down meanwhile.
  mcpp_item *batch_ = nullptr;
  // Drained already by a fd read (HostTurn) and handed to the next Drain.
  mcpp_item *prefetched_ = nullptr;
};

}  // namespace mcpping_node

#endif
