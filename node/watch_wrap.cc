// See watch_wrap.h.
#include "watch_wrap.h"

#include <string>
#include <vector>

#include "convert.h"
#include "mcpping.h"

namespace mcpping_node {

namespace {

struct WatchHolder {
  mcpp_watch *w = nullptr;
  ~WatchHolder() { mcpp_watch_free(w); }
};

mcpp_watch *Watch(const Napi::CallbackInfo &info) {
  if (!info[0].IsExternal()) throw Napi::TypeError::New(info.Env(), "not a watch");
  return info[0].As<Napi::External<WatchHolder>>().Data()->w;
}

int64_t Int(const Napi::Value &v) { return v.IsNumber() ? v.As<Napi::Number>().Int64Value() : 0; }

std::string Str(const Napi::Value &v, bool *has) {
  *has = v.IsString();
  return *has ? v.As<Napi::String>().Utf8Value() : std::string();
}

// watchNew(argv): the watch for argv (which starts with "watch").
Napi::Value WatchNew(const Napi::CallbackInfo &info) {
  Napi::Env env = info.Env();
  if (!info[0].IsArray()) throw Napi::TypeError::New(env, "argv must be an array of strings");
  Napi::Array a = info[0].As<Napi::Array>();
  std::vector<std::string> args;
  for (uint32_t i = 0; i < a.Length(); i++) {
    Napi::Value v = a.Get(i);
    if (!v.IsString()) throw Napi::TypeError::New(env, "argv must be an array of strings");
    args.push_back(v.As<Napi::String>());
  }
  std::vector<const char *> argv;
  for (auto &s : args) argv.push_back(s.c_str());
  mcpp_cli_options o;
  auto *h = new WatchHolder();
  int rc = mcpp_cli_parse(&o, static_cast<int>(argv.size()), argv.data());
  if (!rc) rc = mcpp_watch_new(&h->w, &o);
  mcpp_cli_options_free(&o);
  if (rc) {
    delete h;
    throw Napi::TypeError::New(env, "argv does not ask for mcpping watch");
  }
  return Napi::External<WatchHolder>::New(env, h, [](Napi::Env, WatchHolder *p) { delete p; });
}

Napi::Value WatchUsage(const Napi::CallbackInfo &info) {
  return Napi::String::New(info.Env(), mcpp_watch_usage());
}

// watchAdd(w, name, transport, secrets, skipReason|null) -> index
Napi::Value WatchAdd(const Napi::CallbackInfo &info) {
  mcpp_watch *w = Watch(info);
  bool hn, ht, hs;
  std::string name = Str(info[1], &hn), tr = Str(info[2], &ht), skip = Str(info[4], &hs);
  std::vector<std::string> secrets;
  ListFrom(info[3], secrets);
  std::vector<char *> ptrs = Pointers(secrets);
  int rc = mcpp_watch_add(w, name.c_str(), tr.c_str(), ptrs.data(), secrets.size(),
                          hs ? skip.c_str() : nullptr);
  if (rc < 0) throw Napi::Error::New(info.Env(), "out of memory");
  return Napi::Number::New(info.Env(), rc);
}

Napi::Value WatchListening(const Napi::CallbackInfo &info) {
  bool hh;
  std::string host = Str(info[1], &hh);
  mcpp_watch_listening(Watch(info), host.c_str(), static_cast<int>(Int(info[2])));
  return info.Env().Undefined();
}

Napi::Value WatchListenFailed(const Napi::CallbackInfo &info) {
  bool hw;
  std::string why = Str(info[1], &hw);
  mcpp_watch_listen_failed(Watch(info), why.c_str());
  return info.Env().Undefined();
}

// watchDue(w, nowMs) -> [index or -1, nextMs or -1]
Napi::Value WatchDue(const Napi::CallbackInfo &info) {
  int64_t next;
  int i = mcpp_watch_due(Watch(info), Int(info[1]), &next);
  Napi::Array r = Napi::Array::New(info.Env(), 2);
  r.Set(0u, i);
  r.Set(1u, static_cast<double>(next));
  return r;
}

// watchOpened(w, i, nowMs, peer, protocolVersion|null, pid)
Napi::Value WatchOpened(const Napi::CallbackInfo &info) {
  bool hp, hv;
  std::string peer = Str(info[3], &hp), pv = Str(info[4], &hv);
  mcpp_watch_opened(Watch(info), static_cast<int>(Int(info[1])), Int(info[2]),
                    hp ? peer.c_str() : nullptr, hv ? pv.c_str() : nullptr, Int(info[5]));
  return info.Env().Undefined();
}

// watchOpenFailed / watchClosed(w, i, nowMs, why, detail|null): why is a
// mcpp_watch_why.
Napi::Value Reasoned(const Napi::CallbackInfo &info,
                     void (*fn)(mcpp_watch *, int, int64_t, mcpp_watch_why, const char *)) {
  bool hd;
  std::string detail = Str(info[4], &hd);
  fn(Watch(info), static_cast<int>(Int(info[1])), Int(info[2]),
     static_cast<mcpp_watch_why>(Int(info[3])), hd ? detail.c_str() : nullptr);
  return info.Env().Undefined();
}

Napi::Value WatchOpenFailed(const Napi::CallbackInfo &info) {
  return Reasoned(info, mcpp_watch_open_failed);
}

Napi::Value WatchClosed(const Napi::CallbackInfo &info) {
  return Reasoned(info, mcpp_watch_closed);
}

// watchStderr(w, i, chunk): server i's stderr as it comes (a Buffer).
Napi::Value WatchStderr(const Napi::CallbackInfo &info) {
  if (info[2].IsBuffer()) {
    auto b = info[2].As<Napi::Buffer<char>>();
    mcpp_watch_stderr(Watch(info), static_cast<int>(Int(info[1])), b.Data(), b.Length());
  }
  return info.Env().Undefined();
}

// watchFeed(w, i, nowMs, name, state, rttS, invalid, pingSeq, proof, attempt, pid, message)
Napi::Value WatchFeed(const Napi::CallbackInfo &info) {
  bool hn, hs, hp, hm;
  std::string name = Str(info[3], &hn), state = Str(info[4], &hs), proof = Str(info[8], &hp),
              message = Str(info[11], &hm);
  mcpp_watch_event ev{};
  ev.version = MCPP_WATCH_EVENT_V1;
  ev.message = hm ? message.c_str() : nullptr;
  ev.name = hn ? name.c_str() : nullptr;
  ev.state = hs ? state.c_str() : nullptr;
  ev.rtt_s = info[5].IsNumber() ? info[5].As<Napi::Number>().DoubleValue() : 0;
  ev.invalid = info[6].ToBoolean().Value();
  ev.ping_seq = static_cast<uint64_t>(Int(info[7]));
  ev.proof = hp ? proof.c_str() : nullptr;
  ev.attempt = Int(info[9]);
  ev.pid = Int(info[10]);
  mcpp_watch_feed(Watch(info), static_cast<int>(Int(info[1])), Int(info[2]), &ev);
  return info.Env().Undefined();
}

// watchRespond(w, nowMs, head Buffer) -> the whole response, a Buffer
Napi::Value WatchRespond(const Napi::CallbackInfo &info) {
  Napi::Env env = info.Env();
  if (!info[2].IsBuffer()) throw Napi::TypeError::New(env, "head must be a Buffer");
  auto head = info[2].As<Napi::Buffer<char>>();
  char *out;
  size_t n;
  if (mcpp_watch_respond(Watch(info), Int(info[1]), head.Data(), head.Length(), &out, &n))
    throw Napi::Error::New(env, "out of memory");
  Napi::Value b = Napi::Buffer<char>::Copy(env, out, n);
  mcpp_watch_text_free(out);
  return b;
}

Napi::Value WatchStopping(const Napi::CallbackInfo &info) {
  mcpp_watch_stopping(Watch(info));
  return info.Env().Undefined();
}

Napi::Value WatchStopped(const Napi::CallbackInfo &info) {
  mcpp_watch_stopped(Watch(info));
  return info.Env().Undefined();
}

// watchOutput(w) -> the log bytes since the last call (a Buffer), or null
Napi::Value WatchOutput(const Napi::CallbackInfo &info) {
  size_t n;
  const char *p = mcpp_watch_output(Watch(info), &n);
  return n ? Napi::Value(Napi::Buffer<char>::Copy(info.Env(), p, n)) : info.Env().Null();
}

// watchEvents(): every engine event name (mcpp_event_name), to listen to.
Napi::Value WatchEvents(const Napi::CallbackInfo &info) {
  Napi::Array a = Napi::Array::New(info.Env());
  uint32_t n = 0;
  for (int t = 0; t <= MCPP_EV_LAST; t++) {
    const char *name = mcpp_event_name(static_cast<mcpp_event_type>(t));
    if (name) a.Set(n++, name);
  }
  return a;
}

}  // namespace

void InitWatch(Napi::Env env, Napi::Object exports) {
  exports.Set("watchNew", Napi::Function::New(env, WatchNew));
  exports.Set("watchMaxHead", MCPP_WATCH_MAX_HEAD);
  exports.Set("watchHeadTimeoutMs", MCPP_WATCH_HEAD_TIMEOUT_MS);
  exports.Set("watchUsage", Napi::Function::New(env, WatchUsage));
  exports.Set("watchAdd", Napi::Function::New(env, WatchAdd));
  exports.Set("watchListening", Napi::Function::New(env, WatchListening));
  exports.Set("watchListenFailed", Napi::Function::New(env, WatchListenFailed));
  exports.Set("watchDue", Napi::Function::New(env, WatchDue));
  exports.Set("watchOpened", Napi::Function::New(env, WatchOpened));
  exports.Set("watchOpenFailed", Napi::Function::New(env, WatchOpenFailed));
  exports.Set("watchClosed", Napi::Function::New(env, WatchClosed));
  exports.Set("watchStderr", Napi::Function::New(env, WatchStderr));
  exports.Set("watchFeed", Napi::Function::New(env, WatchFeed));
  exports.Set("watchRespond", Napi::Function::New(env, WatchRespond));
  exports.Set("watchStopping", Napi::Function::New(env, WatchStopping));
  exports.Set("watchStopped", Napi::Function::New(env, WatchStopped));
  exports.Set("watchOutput", Napi::Function::New(env, WatchOutput));
  exports.Set("watchEvents", Napi::Function::New(env, WatchEvents));
}

}  // namespace mcpping_node
