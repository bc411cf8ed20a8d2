// The mcpping addon: runtime bindings and module registration.
#include "addon.h"

#include <string>

#include "config_wrap.h"
#include "config_run_wrap.h"
#include "convert.h"
#include "engine_wrap.h"
#include "metrics_wrap.h"
#include "rules_wrap.h"
#include "settings_wrap.h"
#include "app_wrap.h"
#include "client_wrap.h"
#include "http_session_wrap.h"
#include "wrap_run.h"
#include "watch_wrap.h"

namespace mcpping_node {

namespace {

uint64_t ConnIdArg(const Napi::CallbackInfo &info, size_t i) {
  return static_cast<uint64_t>(info[i].As<Napi::Number>().Int64Value());
}

// An item crosses as dispatch(conn, kind, payload): no wrapper object, so
// a message costs one string and one call. payload: the frame, record or
// stderr bytes, the event, or an object with the item's other fields.
// A MESSAGE the engine or the runtime made (mcpp_item_get_answer_kind) is
// an 'answer': {frame, kind}, so no JavaScript reads its text to know it.
const char *ItemKind(const mcpp_item *it) {
  switch (mcpp_item_get_type(it)) {
    case MCPP_ITEM_MESSAGE:
      return mcpp_item_get_answer_kind(it) == MCPP_ANSWER_PEER ? "message" : "answer";
    case MCPP_ITEM_EVENT: return "event";
    case MCPP_ITEM_RECORD: return "record";
    case MCPP_ITEM_STDERR: return "stderr";
    case MCPP_ITEM_CLOSED: return "closed";
    case MCPP_ITEM_PING_FAILED: return "ping_failed";
    case MCPP_ITEM_WRITABLE: return "writable";
    default: return "unknown";
  }
}

Napi::Value ItemPayload(Napi::Env env, const mcpp_item *it) {
  const char *data = mcpp_item_get_data(it);
  size_t len = mcpp_item_get_len(it);
  switch (mcpp_item_get_type(it)) {
    case MCPP_ITEM_MESSAGE:
      if (mcpp_item_get_answer_kind(it) != MCPP_ANSWER_PEER) {
        Napi::Object o = Napi::Object::New(env);
        o.Set("frame", Napi::String::New(env, data, len));
        o.Set("kind", mcpp_answer_kind_name(mcpp_item_get_answer_kind(it)));
        return o;
      }
      return Napi::String::New(env, data, len);
    case MCPP_ITEM_RECORD:
      return Napi::String::New(env, data, len);
    case MCPP_ITEM_EVENT:
      return EventToJs(env, *mcpp_item_get_event(it), mcpp_item_get_ping_token(it));
    case MCPP_ITEM_STDERR:
      return Napi::Buffer<char>::Copy(env, data, len);
    case MCPP_ITEM_CLOSED: {
      const mcpp_close_info *c = mcpp_item_get_close(it);
      Napi::Object o = Napi::Object::New(env);
      o.Set("error", c->err);
      o.Set("errorName", c->err ? mcpp_errname(c->err) : "");
      o.Set("reason", c->reason ? c->reason : "");
      o.Set("exitStatus", static_cast<double>(c->exit_status));
      o.Set("termSignal", c->term_signal);
      return o;
    }
    case MCPP_ITEM_PING_FAILED: {
      Napi::Object o = Napi::Object::New(env);
      o.Set("token", static_cast<double>(mcpp_item_get_ping_token(it)));
      o.Set("error", mcpp_item_get_error(it));
      return o;
    }
    default:
      return env.Undefined();
  }
}

}  // namespace

void DrainOnJsThread(Napi::Env env, Napi::Function, McppAddon *addon, void *) {
  if (env == nullptr || addon == nullptr) return;  // being torn down
  addon->OnNotify(env);
}

namespace {

// The handles' uv callbacks: a host turn, unless teardown has begun.
void OnHostPoll(uv_poll_t *handle, int, int) {
  HostHandles *h = static_cast<HostHandles *>(handle->data);
  if (h->addon) h->addon->HostTurn();
}

void OnHostTimer(uv_timer_t *handle) {
  HostHandles *h = static_cast<HostHandles *>(handle->data);
  if (h->addon) h->addon->HostTurn();
}

// Frees the handles once both are closed and the environment's teardown
// has reached the cleanup hook, which then may end (a worker's loop is
// closed only after that, with no handle of ours left open on it).
void FinishHost(HostHandles *h) {
  if (h->open > 0 || !h->hook_ran) return;
  if (h->hook) napi_remove_async_cleanup_hook(h->hook);
  delete h;
}

void OnHostClosed(uv_handle_t *handle) {
  HostHandles *h = static_cast<HostHandles *>(handle->data);
  h->open--;
  FinishHost(h);
}

// A watched connection's stdout is readable: the host reads it itself
// (mcpp_runtime_host_read), no turn of the runtime's loop.
void OnFdPoll(uv_poll_t *handle, int, int) {
  FdPoll *p = static_cast<FdPoll *>(handle->data);
  if (p->host->addon) p->host->addon->HostTurn(p->fd);
}

void OnFdClosed(uv_handle_t *handle) {
  FdPoll *p = static_cast<FdPoll *>(handle->data);
  HostHandles *h = p->host;
  delete p;
  h->open--;
  FinishHost(h);
}

void CloseFdPoll(FdPoll *p) {
  uv_close(reinterpret_cast<uv_handle_t *>(&p->poll), OnFdClosed);
}

// mcpp_host_options.watch_fd: on the JavaScript thread, from inside a
// runtime call. Unreferenced, as the runtime's descriptor is.
void WatchFd(void *ctx, int fd, int on) {
  HostHandles *h = static_cast<HostHandles *>(ctx);
  auto it = h->fds.find(fd);
  if (!on) {
    if (it == h->fds.end()) return;  // closed with the handles already
    FdPoll *p = it->second;
    h->fds.erase(it);
    CloseFdPoll(p);
    return;
  }
  if (it != h->fds.end() || h->addon == nullptr) return;
  FdPoll *p = new FdPoll();
  p->host = h;
  p->fd = fd;
  if (uv_poll_init(h->loop, &p->poll, fd) != 0) {
    delete p;  // then the fd is only ever read in a watchdog takeover
    return;
  }
  p->poll.data = p;
  h->open++;
  h->fds[fd] = p;
  uv_unref(reinterpret_cast<uv_handle_t *>(&p->poll));
  uv_poll_start(&p->poll, UV_READABLE, OnFdPoll);
}

}  // namespace

McppAddon::McppAddon(Napi::Env env, Napi::Object exports) {
  DefineAddon(exports,
              {
                  InstanceMethod("setDispatch", &McppAddon::SetDispatch),
                  InstanceMethod("spawn", &McppAddon::Spawn),
                  InstanceMethod("send", &McppAddon::Send),
                  InstanceMethod("cancelRequest", &McppAddon::CancelRequest),
                  InstanceMethod("ping", &McppAddon::Ping),
                  InstanceMethod("cancelPing", &McppAddon::CancelPing),
                  InstanceMethod("pid", &McppAddon::Pid),
                  InstanceMethod("close", &McppAddon::Close),
                  InstanceMethod("setRetryBudget", &McppAddon::SetRetryBudget),
                  InstanceMethod("setRecords", &McppAddon::SetRecords),
                  InstanceMethod("setPingEvents", &McppAddon::SetPingEvents),
                  InstanceMethod("feedRtt", &McppAddon::FeedRtt),
                  InstanceMethod("setMetrics", &McppAddon::SetMetrics),
                  InstanceMethod("eventNames", &McppAddon::EventNames),
                  InstanceMethod("info", &McppAddon::Info),
                  InstanceMethod("unreadable", &McppAddon::Unreadable),
                  InstanceMethod("ref", &McppAddon::Ref),
                  InstanceMethod("unref", &McppAddon::Unref),
                  InstanceMethod("strerror", &McppAddon::StrError),
                  InstanceMethod("errname", &McppAddon::ErrName),
                  InstanceMethod("defaultSettings", &McppAddon::DefaultSettings),
                  InstanceMethod("now", &McppAddon::Now),
                  InstanceMethod("shutdown", &McppAddon::Shutdown),
                  InstanceMethod("runtimeMode", &McppAddon::RuntimeMode),
                  InstanceMethod("hostStats", &McppAddon::HostStats),
                  InstanceValue("version", Napi::String::New(env, MCPP_VERSION)),
                  InstanceValue("CODE_IN_DOUBT", Napi::Number::New(env, MCPP_CODE_IN_DOUBT)),
              });
  exports.Set("Engine", EngineWrap::Init(env));
  InitRules(env, exports);
  InitSettings(env, exports);
  InitApp(env, exports);
  InitWatch(env, exports);
  InitClient(env, exports);
  InitHttpSession(env, exports);
  InitWrap(env, exports);
  InitMetrics(env, exports);
  InitConfig(env, exports);
  InitConfigRun(env, exports);
}

mcpp_runtime *McppAddon::Runtime(Napi::Env env) {
  if (rt_) return rt_;
  if (torn_down_) ThrowMcppError(env, MCPP_ERR_CLOSED);
  mcpp_runtime_options opts{};
  opts.notify = &McppAddon::Notify;
  opts.user_data = this;
  int rc = mcpp_runtime_new(&rt_, &opts);
  if (rc < 0) ThrowMcppError(env, rc);
  if (budget_burst_) mcpp_runtime_set_retry_budget(rt_, budget_burst_, budget_per_second_);
  // Unreferenced: an idle mcpping never keeps the process alive; the
  // JavaScript layer refs it while something is awaited (see ref/unref).
  wake_ = WakeFn::New(env, "mcpping", 0, 1, this);
  wake_.Unref(env);
  wake_created_ = true;
  // Registered after the wake-up function, so it runs first at teardown.
  // Asynchronous: a worker's teardown waits for the host handles' close
  // callbacks before it closes its loop (else "open handles": abort).
  host_ = new HostHandles();
  host_->addon = this;
  if (napi_add_async_cleanup_hook(env, &McppAddon::AsyncCleanup, host_, &host_->hook) != napi_ok) {
    host_->hook = nullptr;
    host_->hook_ran = true;  // nothing to wait for: freed once closed
    env.AddCleanupHook(&McppAddon::Cleanup, this);
  }
  AttachHost(env);
  return rt_;
}

// Host mode on this environment's loop: it watches the runtime's
// descriptor and runs its loop a turn at a time (HostTurn), and commands
// from this thread run inside the call, so a ping costs no thread hop. Both
// handles are unreferenced: as in thread mode, only the wake-up function's
// reference (a Hold in runtime.js) keeps the process alive. If host mode
// is refused (MCPPING_HOST_MODE=0, ...) the runtime's thread runs the loop
// and mcpp_runtime_mode says why.
void McppAddon::AttachHost(Napi::Env env) {
  int fd = -1;
  uv_loop_t *loop = nullptr;
  if (napi_get_uv_event_loop(env, &loop) != napi_ok || loop == nullptr) return;
  host_->loop = loop;
  // V2: the host also owns every connection's stdout (WatchFd).
  mcpp_host_options o{};
  o.version = MCPP_HOST_OPTIONS_V2;
  o.watch_fd = WatchFd;
  o.watch_ctx = host_;
  if (mcpp_runtime_host_attach(rt_, &o, &fd) != 0) return;
  if (uv_poll_init(loop, &host_->poll, fd) != 0) {
    mcpp_runtime_host_detach(rt_);
    return;
  }
  uv_timer_init(loop, &host_->timer);
  host_->poll.data = host_;
  host_->timer.data = host_;
  host_->open = 2;
  uv_unref(reinterpret_cast<uv_handle_t *>(&host_->poll));
  uv_unref(reinterpret_cast<uv_handle_t *>(&host_->timer));
  uv_poll_start(&host_->poll, UV_READABLE, OnHostPoll);
  napi_value name;
  napi_create_string_utf8(env, "mcpping", NAPI_AUTO_LENGTH, &name);
  resource_ = Napi::Persistent(Napi::Object::New(env));
  napi_async_init(env, resource_.Value(), name, &async_);
  env_ = env;
  hosted_ = true;
}

// Stops watching the descriptor and the timer; the close callbacks free
// them (FinishHost). Before mcpp_runtime_free: the descriptor is the
// runtime's, and closing the poll handle takes it out of this loop's
// epoll while its number still means it.
void McppAddon::CloseHostHandles() {
  HostHandles *h = host_;
  if (!h) return;
  host_ = nullptr;
  hosted_ = false;
  h->addon = nullptr;
  // Before the runtime's free closes the fds these watch.
  for (auto &kv : h->fds) CloseFdPoll(kv.second);
  h->fds.clear();
  if (h->open > 0) {
    uv_close(reinterpret_cast<uv_handle_t *>(&h->poll), OnHostClosed);
    uv_close(reinterpret_cast<uv_handle_t *>(&h->timer), OnHostClosed);
  } else {
    FinishHost(h);
  }
}

void McppAddon::Cleanup(McppAddon *self) {
  if (self->torn_down_) return;
  self->torn_down_ = true;
  self->FreeBatch();
  self->CloseHostHandles();
  // Joins the I/O thread, so Notify cannot run after this line.
  mcpp_runtime_free(self->rt_);
  self->rt_ = nullptr;
  // A turn in progress (a handler shut down) still has its callback scope
  // open on it: HostTurn destroys it then.
  if (self->async_ && !self->in_turn_) {
    napi_async_destroy(self->env_, self->async_);
    self->async_ = nullptr;
  }
  if (self->wake_created_) {
    self->wake_.Release();
    self->wake_created_ = false;
  }
}

void McppAddon::AsyncCleanup(napi_async_cleanup_hook_handle, void *arg) {
  HostHandles *h = static_cast<HostHandles *>(arg);
  h->hook_ran = true;
  if (h->addon)
    Cleanup(h->addon);  // closes the handles: the last close finishes
  else
    FinishHost(h);  // shut down earlier (process 'exit')
}

void McppAddon::ArmTimer(int64_t ms) {
  if (ms < 0 || !hosted_) return;
  uv_timer_t *t = &host_->timer;
  uint64_t due = uv_now(t->loop) + static_cast<uint64_t>(ms);
  // Lazy: one timer, moved only to an earlier time; firing early costs a
  // turn that finds nothing to do and re-arms.
  if (uv_is_active(reinterpret_cast<uv_handle_t *>(t)) && timer_due_ <= due) return;
  timer_due_ = due;
  uv_timer_start(t, OnHostTimer, static_cast<uint64_t>(ms), 0);
}

void McppAddon::HostRun() {
  if (!hosted_) return;
  int64_t wake_ms = -1;
  if (mcpp_runtime_host_run(rt_, &wake_ms) == 0) ArmTimer(wake_ms);
}

void McppAddon::HostTurn(int fd) {
  if (!hosted_ || in_turn_) return;
  if (fd >= 0) {
    // A connection's fd: read it first. Most reads queue nothing for
    // JavaScript (a keepalive pong nobody listens to, a server's ping
    // answered in C): then no callback scope, cork or drain is needed.
    int64_t wake_ms = -1;
    if (mcpp_runtime_host_read(rt_, fd, &wake_ms) == 0) ArmTimer(wake_ms);
    prefetched_ = mcpp_runtime_drain(rt_);
    if (prefetched_ == nullptr) {
      AfterCall();
      return;
    }
  }
  Napi::Env env(env_);
  Napi::HandleScope handles(env);
  in_turn_ = true;
  // One scope around the whole batch: nextTicks and promise reactions
  // (a ping's await) run when it closes, after every item is delivered.
  napi_callback_scope scope = nullptr;
  napi_open_callback_scope(env_, resource_.Value(), async_, &scope);
  // Corked until the scope has closed: what the batch's handlers and
  // promise reactions send (a pipelined caller's next pings) goes out in
  // one write per connection, not one each.
  mcpp_runtime_host_cork(rt_, 1);
  try {
    if (fd < 0) HostRun();  // else read and drained above
    Napi::Error first = Drain(env);
    AfterCall();
    // As an uncaught exception, once the whole batch is delivered.
    if (!first.IsEmpty()) napi_fatal_exception(env_, first.Value());
  } catch (const Napi::Error &e) {
    napi_fatal_exception(env_, e.Value());
  }
  if (scope) napi_close_callback_scope(env_, scope);
  in_turn_ = false;
  // A handler may have shut the runtime down (Cleanup freed it).
  if (rt_) {
    mcpp_runtime_host_cork(rt_, 0);
    AfterCall();
  }
  if (torn_down_ && async_) {
    napi_async_destroy(env_, async_);
    async_ = nullptr;
  }
}

// The watchdog ran the loop for a stalled host (or thread mode's thread
// queued items): in host mode the host takes its turn back here.
void McppAddon::OnNotify(Napi::Env env) {
  HostRun();
  Napi::Error first = Drain(env);
  AfterCall();
  if (!first.IsEmpty()) first.ThrowAsJavaScriptException();
}

void McppAddon::Notify(void *user_data) {
  McppAddon *self = static_cast<McppAddon *>(user_data);
  // Called on the I/O thread; only wakes the JavaScript thread. napi_closing
  // during teardown is fine: Cleanup drops what is left.
  self->wake_.NonBlockingCall();
}

// Frees the drained batch however Drain is left, unless a handler shut the
// runtime down meanwhile (Cleanup freed it then).
struct BatchGuard {
  McppAddon *addon;
  ~BatchGuard() { addon->FreeBatch(); }
};

void McppAddon::FreeBatch() {
  if (rt_) mcpp_runtime_items_free(rt_, batch_);
  if (rt_) mcpp_runtime_items_free(rt_, prefetched_);
  batch_ = prefetched_ = nullptr;
}

// A drained batch crosses into JavaScript one item per call, each string
// made just before its handler runs. Converted whole, up to half the cap of
// strings stayed reachable from one array for the whole dispatch: every
// scavenge found them alive, so V8 promoted them and grew its young
// generation to the maximum (1 GiB flood, 16 MiB cap: 152 MiB of RSS
// growth). Even 16-item chunks survive often enough to grow it; one item is
// garbage before the next scavenge, and costs about 4% more CPU.
Napi::Error McppAddon::Drain(Napi::Env env) {
  Napi::Error first;
  if (!rt_) return first;
  batch_ = prefetched_ ? prefetched_ : mcpp_runtime_drain(rt_);
  prefetched_ = nullptr;
  BatchGuard done{this};
  if (dispatch_.IsEmpty()) return first;
  for (mcpp_item *it = batch_; it; it = mcpp_item_next(it)) {
    Napi::HandleScope scope(env);
    Napi::Value conn = Napi::Number::New(env, static_cast<double>(mcpp_item_get_conn_id(it)));
    Napi::Value kind = Napi::String::New(env, ItemKind(it));
    Napi::Value payload = ItemPayload(env, it);
    napi_value argv[3] = {conn, kind, payload};
    napi_value result;
    if (napi_call_function(env, env.Undefined(), dispatch_.Value(), 3, argv, &result) != napi_ok) {
      napi_value err = nullptr;
      napi_valuetype type = napi_undefined;
      if (napi_get_and_clear_last_exception(env, &err) == napi_ok && err != nullptr)
        napi_typeof(env, err, &type);
      // No exception object (V8's termination shows as null or nothing):
      // JavaScript can no longer run here (process.exit() in a worker's
      // listener), nothing more can be delivered, and wrapping it in an
      // Error would be a fatal error. dispatch (runtime.js) throws nothing
      // itself, so a real exception is an object.
      if (type == napi_undefined || type == napi_null) break;
      // The rest is still delivered; the caller reports the first error
      // as an uncaught exception once the batch is done.
      if (first.IsEmpty()) first = Napi::Error(env, err);
    }
    if (!rt_) break;  // a handler shut the runtime down: Cleanup freed the batch
  }
  return first;
}

Napi::Value McppAddon::SetDispatch(const Napi::CallbackInfo &info) {
  dispatch_ = Napi::Persistent(info[0].As<Napi::Function>());
  if (info.Length() > 1 && info[1].IsFunction())
    make_event_ = Napi::Persistent(info[1].As<Napi::Function>());
  return info.Env().Undefined();
}

Napi::Value McppAddon::Spawn(const Napi::CallbackInfo &info) {
  Napi::Env env = info.Env();
  OwnedSettings settings;
  SettingsFromJs(info[0].As<Napi::Object>(), &settings);
  OwnedSpawn spawn;
  SpawnFromJs(info[1].As<Napi::Object>(), &spawn);
  mcpp_runtime *rt = Runtime(env);
  uint64_t conn_id = 0;
  char errbuf[512] = {0};
  int rc = mcpp_runtime_spawn(rt, &settings.s, &spawn.o, nullptr, &conn_id,
                              errbuf, sizeof errbuf);
  AfterCall();
  if (rc < 0) {
    Napi::Error e = McppErrorOf(env, rc, errbuf[0] ? std::string(errbuf) : std::string());
    // The OS's refusal (libuv's code, as Node's own errno): the transport
    // raises child_process's error for it, as the SDK's transport does.
    if (int os_error = rc == MCPP_ERR_SPAWN ? mcpp_runtime_spawn_os_error() : 0)
      e.Set("osErrno", Napi::Number::New(env, os_error));
    throw e;
  }
  return Napi::Number::New(env, static_cast<double>(conn_id));
}

Napi::Value McppAddon::Send(const Napi::CallbackInfo &info) {
  Napi::Env env = info.Env();
  if (!rt_) return Napi::Number::New(env, MCPP_ERR_NOT_FOUND);
  std::string frame = info[1].As<Napi::String>().Utf8Value();
  // The JS side validated it: 0 (default), 1..MCPP_MAX_MS or MCPP_TIMEOUT_NONE.
  uint32_t timeout = info.Length() > 2 && info[2].IsNumber()
                         ? info[2].As<Napi::Number>().Uint32Value()
                         : MCPP_TIMEOUT_DEFAULT;
  int rc = mcpp_runtime_send_timed(rt_, ConnIdArg(info, 0), frame.data(),
                                   frame.size(), timeout);
  AfterCall();
  return Napi::Number::New(env, rc);
}

// cancelRequest(conn, idJson): abandons an in-flight request (raw JSON id).
Napi::Value McppAddon::CancelRequest(const Napi::CallbackInfo &info) {
  Napi::Env env = info.Env();
  if (!rt_) return Napi::Number::New(env, MCPP_ERR_NOT_FOUND);
  std::string id = info[1].As<Napi::String>().Utf8Value();
  int rc = mcpp_runtime_cancel_request(rt_, ConnIdArg(info, 0), id.data(), id.size());
  AfterCall();
  return Napi::Number::New(env, rc);
}

Napi::Value McppAddon::Ping(const Napi::CallbackInfo &info) {
  Napi::Env env = info.Env();
  if (!rt_) return Napi::Number::New(env, MCPP_ERR_NOT_FOUND);
  uint32_t timeout = info[1].As<Napi::Number>().Uint32Value();
  uint64_t token = static_cast<uint64_t>(info[2].As<Napi::Number>().Int64Value());
  int rc = mcpp_runtime_ping(rt_, ConnIdArg(info, 0), timeout, token);
  AfterCall();
  return Napi::Number::New(env, rc);
}

Napi::Value McppAddon::CancelPing(const Napi::CallbackInfo &info) {
  Napi::Env env = info.Env();
  if (!rt_) return Napi::Number::New(env, MCPP_ERR_NOT_FOUND);
  uint64_t token = static_cast<uint64_t>(info[1].As<Napi::Number>().Int64Value());
  int rc = mcpp_runtime_cancel_ping(rt_, ConnIdArg(info, 0), token);
  AfterCall();
  return Napi::Number::New(env, rc);
}

Napi::Value McppAddon::Pid(const Napi::CallbackInfo &info) {
  Napi::Env env = info.Env();
  int pid = rt_ ? mcpp_runtime_pid(rt_, ConnIdArg(info, 0)) : MCPP_ERR_NOT_FOUND;
  if (pid < 0) return env.Null();
  return Napi::Number::New(env, pid);
}

// setRecords(conn, on): whether the connection's records are made and
// queued (on by default); a closed connection is ignored.
Napi::Value McppAddon::SetRecords(const Napi::CallbackInfo &info) {
  Napi::Env env = info.Env();
  if (rt_) mcpp_runtime_set_records(rt_, ConnIdArg(info, 0), info[1].ToBoolean().Value());
  return env.Undefined();
}

// setPingEvents(conn, on): whether ping and keepalive pong events cross
// (on by default); off, they stay in C and wake nobody.
Napi::Value McppAddon::SetPingEvents(const Napi::CallbackInfo &info) {
  Napi::Env env = info.Env();
  if (rt_) mcpp_runtime_set_ping_events(rt_, ConnIdArg(info, 0), info[1].ToBoolean().Value());
  return env.Undefined();
}

// feedRtt(conn, rttStats): the runtime feeds the RttStats (RTTs in ms) every
// ping outcome until the closed item; the caller keeps it alive until then.
Napi::Value McppAddon::FeedRtt(const Napi::CallbackInfo &info) {
  Napi::Env env = info.Env();
  mcpp_rtt_stats *stats = mcpping_node::RttStatsFromJs(env, info[1]);
  if (!stats) throw Napi::TypeError::New(env, "feedRtt: not an RttStats");
  if (rt_) mcpp_runtime_feed_rtt_stats(rt_, ConnIdArg(info, 0), stats, 1000);
  return env.Undefined();
}

// setMetrics(conn, cell): the runtime counts the connection's events into a
// metricsCell() as they happen, so none crosses to be counted (null: no longer).
Napi::Value McppAddon::SetMetrics(const Napi::CallbackInfo &info) {
  Napi::Env env = info.Env();
  mcpp_metrics_cell *cell =
      info[1].IsNull() || info[1].IsUndefined() ? nullptr : mcpping_node::CellFromJs(env, info[1]);
  if (rt_) mcpp_runtime_set_metrics(rt_, ConnIdArg(info, 0), cell);
  return env.Undefined();
}

// eventNames() -> {type, state, disposition, outcome}: the C core's name of
// each code, index = code (outcome 0, none, is null). An event crosses with
// codes (EventToJs) and runtime.js names them from these, so no string is
// made per event.
Napi::Value McppAddon::EventNames(const Napi::CallbackInfo &info) {
  Napi::Env env = info.Env();
  auto table = [&](int last, const char *(*name)(int)) {
    Napi::Array a = Napi::Array::New(env);
    for (int i = 0; i <= last; i++) {
      const char *n = name(i);
      a.Set(static_cast<uint32_t>(i), n ? Napi::Value(Napi::String::New(env, n)) : env.Null());
    }
    return a;
  };
  Napi::Object o = Napi::Object::New(env);
  o.Set("type", table(MCPP_EV_LAST, [](int i) { return mcpp_event_name(static_cast<mcpp_event_type>(i)); }));
  o.Set("state", table(MCPP_STATE_CLOSED, [](int i) { return mcpp_state_name(static_cast<mcpp_state>(i)); }));
  o.Set("disposition", table(MCPP_DISPOSITION_IN_DOUBT, [](int i) {
          return mcpp_disposition_name(static_cast<mcpp_disposition>(i));
        }));
  o.Set("outcome", table(MCPP_OUTCOME_CLOSED, [](int i) {
          return mcpp_outcome_name(static_cast<mcpp_ping_outcome>(i));
        }));
  return o;
}

// setRetryBudget(burst, perSecond): the reconnect budget every connection
// of this environment shares (checked in JS), kept for a runtime created
// later.
Napi::Value McppAddon::SetRetryBudget(const Napi::CallbackInfo &info) {
  Napi::Env env = info.Env();
  uint32_t burst = info[0].As<Napi::Number>().Uint32Value();
  double per_second = info[1].As<Napi::Number>().DoubleValue();
  mcpp_retry_budget check;
  int rc = mcpp_retry_budget_init(&check, burst, per_second);
  if (rc < 0) ThrowMcppError(env, rc);
  budget_burst_ = burst;
  budget_per_second_ = per_second;
  if (rt_) mcpp_runtime_set_retry_budget(rt_, burst, per_second);
  return env.Undefined();
}

Napi::Value McppAddon::Close(const Napi::CallbackInfo &info) {
  Napi::Env env = info.Env();
  if (!rt_) return Napi::Number::New(env, MCPP_ERR_NOT_FOUND);
  int rc = mcpp_runtime_close(rt_, ConnIdArg(info, 0));
  AfterCall();
  return Napi::Number::New(env, rc);
}

Napi::Value McppAddon::Info(const Napi::CallbackInfo &info) {
  Napi::Env env = info.Env();
  if (!rt_) return env.Null();
  mcpp_engine_info ei{};
  int healthy = 0;
  uint64_t id = ConnIdArg(info, 0);
  // The snapshot carries no strings: the session comes separately.
  char version[64], name[257];
  if (mcpp_runtime_info(rt_, id, &ei, &healthy) < 0 ||
      mcpp_runtime_session(rt_, id, version, sizeof version, name, sizeof name) < 0)
    return env.Null();
  ei.protocol_version = version[0] ? version : nullptr;
  ei.peer_name = name[0] ? name : nullptr;
  Napi::Object o = InfoToJs(env, ei);
  o.Set("healthy", healthy != 0);
  return o;
}

// [count, sentence]: how many lines the server wrote are not JSON-RPC,
// and the sentence that says so ("" if none); null if the connection is
// gone.
Napi::Value McppAddon::Unreadable(const Napi::CallbackInfo &info) {
  Napi::Env env = info.Env();
  char text[512];
  uint64_t count = 0;
  if (!rt_ || mcpp_runtime_unreadable(rt_, ConnIdArg(info, 0), &count, text, sizeof text) < 0)
    return env.Null();
  Napi::Array out = Napi::Array::New(env, 2);
  out.Set(0u, Napi::Number::New(env, static_cast<double>(count)));
  out.Set(1u, Napi::String::New(env, text));
  return out;
}

Napi::Value McppAddon::Ref(const Napi::CallbackInfo &info) {
  Napi::Env env = info.Env();
  Runtime(env);
  if (!wake_refed_) wake_.Ref(env);
  wake_refed_ = true;
  return env.Undefined();
}

Napi::Value McppAddon::Unref(const Napi::CallbackInfo &info) {
  Napi::Env env = info.Env();
  if (wake_created_ && wake_refed_) wake_.Unref(env);
  wake_refed_ = false;
  return env.Undefined();
}

Napi::Value McppAddon::StrError(const Napi::CallbackInfo &info) {
  return Napi::String::New(info.Env(), mcpp_strerror(info[0].As<Napi::Number>().Int32Value()));
}

Napi::Value McppAddon::ErrName(const Napi::CallbackInfo &info) {
  return Napi::String::New(info.Env(), mcpp_errname(info[0].As<Napi::Number>().Int32Value()));
}

Napi::Value McppAddon::DefaultSettings(const Napi::CallbackInfo &info) {
  Napi::Env env = info.Env();
  mcpp_settings s;
  mcpp_settings_default(&s);
  Napi::Object o = Napi::Object::New(env);
  o.Set("intervalMs", s.interval_ms);
  o.Set("jitterPct", s.jitter_pct);
  o.Set("timeoutMs", s.timeout_ms);
  o.Set("failures", s.failures);
  o.Set("minIntervalMs", s.min_interval_ms);
  o.Set("pauseThresholdMs", s.pause_threshold_ms);
  o.Set("requestTimeoutMs", s.request_timeout_ms);
  o.Set("maxOutstandingPings", s.max_outstanding_pings);
  o.Set("maxLineBytes", static_cast<double>(s.max_line_bytes));
  return o;
}

// process.exit() does not run environment cleanup hooks on the main
// thread, so the JavaScript layer calls this from process.on('exit').
Napi::Value McppAddon::Shutdown(const Napi::CallbackInfo &info) {
  if (rt_) Cleanup(this);
  torn_down_ = true;
  return info.Env().Undefined();
}

// runtimeMode() -> {mode: 'host'|'thread', why}; creates the runtime, so
// it says how this environment's connections run.
Napi::Value McppAddon::RuntimeMode(const Napi::CallbackInfo &info) {
  Napi::Env env = info.Env();
  Napi::Object o = Napi::Object::New(env);
  if (!rt_ && torn_down_) {
    o.Set("mode", "thread");
    o.Set("why", "the runtime was shut down");
    return o;
  }
  char why[160] = {0};
  mcpp_mode mode = mcpp_runtime_mode(Runtime(env), why, sizeof why);
  o.Set("mode", mode == MCPP_MODE_HOST ? "host" : "thread");
  o.Set("why", why);
  return o;
}

// hostStats() -> {takeovers, hostTurns, inlineCommands, hostReads}: for tests and
// benchmarks (all 0 before the runtime exists or in thread mode).
Napi::Value McppAddon::HostStats(const Napi::CallbackInfo &info) {
  Napi::Env env = info.Env();
  mcpp_host_stats st{};
  mcpp_runtime_host_stats(rt_, &st);
  Napi::Object o = Napi::Object::New(env);
  o.Set("takeovers", static_cast<double>(st.takeovers));
  o.Set("hostTurns", static_cast<double>(st.host_turns));
  o.Set("inlineCommands", static_cast<double>(st.inline_commands));
  o.Set("hostReads", static_cast<double>(mcpp_runtime_host_reads(rt_)));
  return o;
}

Napi::Value McppAddon::Now(const Napi::CallbackInfo &info) {
  return Napi::Number::New(info.Env(), static_cast<double>(MonotonicUs()));
}

}  // namespace mcpping_node

using mcpping_node::McppAddon;
NODE_API_ADDON(McppAddon)
