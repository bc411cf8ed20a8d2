// See client_wrap.h.
#include "client_wrap.h"

#include <cstdlib>
#include <string>

#include "mcpping.h"

namespace mcpping_node {

namespace {

Napi::Value StrOrNull(Napi::Env env, const char *s) {
  return s ? Napi::String::New(env, s) : env.Null();
}

class HandshakeWrap : public Napi::ObjectWrap<HandshakeWrap> {
 public:
  static Napi::Function Define(Napi::Env env) {
    return DefineClass(env, "ClientHandshake",
                       {InstanceMethod("request", &HandshakeWrap::Request),
                        InstanceMethod("answer", &HandshakeWrap::Answer),
                        InstanceMethod("timedOut", &HandshakeWrap::TimedOut),
                        InstanceMethod("closed", &HandshakeWrap::Closed),
                        InstanceMethod("notification", &HandshakeWrap::Notification),
                        InstanceMethod("outcome", &HandshakeWrap::Outcome)});
  }

  explicit HandshakeWrap(const Napi::CallbackInfo &info) : Napi::ObjectWrap<HandshakeWrap>(info) {
    double ms = info.Length() > 0 && info[0].IsNumber() ? info[0].As<Napi::Number>().DoubleValue() : 0;
    hs_ = mcpp_client_hs_new(ms > 0 ? static_cast<uint64_t>(ms) : 0);
    if (hs_ == nullptr) throw Napi::Error::New(info.Env(), "out of memory");
  }
  ~HandshakeWrap() override { mcpp_client_hs_free(hs_); }

 private:
  // request() -> [id, message] to send next, or null.
  Napi::Value Request(const Napi::CallbackInfo &info) {
    size_t len = 0;
    const char *id = nullptr;
    const char *msg = mcpp_client_hs_request(hs_, &len, &id);
    if (msg == nullptr) return info.Env().Null();
    Napi::Array out = Napi::Array::New(info.Env(), 2);
    out.Set(0u, Napi::String::New(info.Env(), id));
    out.Set(1u, Napi::String::New(info.Env(), msg, len));
    return out;
  }
  Napi::Value Answer(const Napi::CallbackInfo &info) {
    std::string msg = info[0].ToString();
    return Napi::String::New(info.Env(), mcpp_client_hs_state_name(mcpp_client_hs_answer(hs_, msg.data(), msg.size())));
  }
  // timedOut(why?): why is what the transport saw that may say why.
  Napi::Value TimedOut(const Napi::CallbackInfo &info) {
    std::string why;
    if (info.Length() > 0 && info[0].IsString()) why = info[0].As<Napi::String>();
    mcpp_client_hs_timed_out_because(hs_, why.c_str());
    return info.Env().Undefined();
  }
  // closed(reason|null, exitStatus = -1, termSignal = 0)
  Napi::Value Closed(const Napi::CallbackInfo &info) {
    std::string reason;
    bool known = info.Length() > 0 && info[0].IsString();
    if (known) reason = info[0].As<Napi::String>();
    int status = info.Length() > 1 && info[1].IsNumber() ? info[1].As<Napi::Number>().Int32Value() : -1;
    int sig = info.Length() > 2 && info[2].IsNumber() ? info[2].As<Napi::Number>().Int32Value() : 0;
    mcpp_client_hs_closed(hs_, known ? reason.c_str() : nullptr, status, sig);
    return info.Env().Undefined();
  }
  Napi::Value Notification(const Napi::CallbackInfo &info) {
    size_t len = 0;
    const char *msg = mcpp_client_hs_notification(hs_, &len);
    return msg ? Napi::String::New(info.Env(), msg, len) : info.Env().Null();
  }
  Napi::Value Outcome(const Napi::CallbackInfo &info) {
    Napi::Env env = info.Env();
    mcpp_client_hs_state s = mcpp_client_hs_get_state(hs_);
    Napi::Object o = Napi::Object::New(env);
    o.Set("state", mcpp_client_hs_state_name(s));
    o.Set("version", StrOrNull(env, mcpp_client_hs_version(hs_)));
    o.Set("modern", Napi::Boolean::New(env, mcpp_client_hs_modern(hs_) != 0));
    o.Set("serverName", StrOrNull(env, s == MCPP_CHS_DONE ? mcpp_client_hs_server_name(hs_) : nullptr));
    o.Set("serverInfo", StrOrNull(env, mcpp_client_hs_server_info(hs_)));
    o.Set("result", StrOrNull(env, mcpp_client_hs_result(hs_)));
    o.Set("error", StrOrNull(env, mcpp_client_hs_error(hs_)));
    o.Set("kind", mcpp_client_hs_error_kind_name(mcpp_client_hs_error_kind_of(hs_)));
    return o;
  }

  mcpp_client_hs *hs_ = nullptr;
};

struct Collect {
  Napi::Env env;
  Napi::Array out;
  uint32_t n;
};

int CollectItem(void *arg, mcpp_sse_kind kind, const char *data, size_t len) {
  auto *c = static_cast<Collect *>(arg);
  c->out.Set(c->n++, kind == MCPP_SSE_DATA ? Napi::Value(Napi::String::New(c->env, data, len))
                                            : Napi::Value(c->env.Null()));
  return 0;
}

class SseWrap : public Napi::ObjectWrap<SseWrap> {
 public:
  static Napi::Function Define(Napi::Env env) {
    return DefineClass(env, "SseParser",
                       {InstanceMethod("feed", &SseWrap::Feed), InstanceMethod("finish", &SseWrap::Finish),
                        InstanceMethod("answerAfter", &SseWrap::AnswerAfter),
                        InstanceMethod("listenAfter", &SseWrap::ListenAfter),
                        InstanceAccessor("lastEventId", &SseWrap::LastEventId, nullptr)});
  }
  explicit SseWrap(const Napi::CallbackInfo &info) : Napi::ObjectWrap<SseWrap>(info) {
    double max = info.Length() > 0 && info[0].IsNumber() ? info[0].As<Napi::Number>().DoubleValue() : 0;
    sse_ = mcpp_sse_new(max > 0 ? static_cast<size_t>(max) : 0);
    if (sse_ == nullptr) throw Napi::Error::New(info.Env(), "out of memory");
  }
  ~SseWrap() override { mcpp_sse_free(sse_); }

 private:
  // feed(Buffer) -> each event's data (string) and null per comment.
  Napi::Value Feed(const Napi::CallbackInfo &info) {
    if (!info[0].IsBuffer()) throw Napi::TypeError::New(info.Env(), "feed takes a Buffer");
    auto buf = info[0].As<Napi::Buffer<char>>();
    Collect c{info.Env(), Napi::Array::New(info.Env()), 0};
    return Done(info.Env(), c, mcpp_sse_feed(sse_, buf.Data(), buf.Length(), CollectItem, &c));
  }
  Napi::Value Finish(const Napi::CallbackInfo &info) {
    Collect c{info.Env(), Napi::Array::New(info.Env()), 0};
    return Done(info.Env(), c, mcpp_sse_finish(sse_, CollectItem, &c));
  }
  // The stream's last event ID ('' before any): its Last-Event-ID.
  Napi::Value LastEventId(const Napi::CallbackInfo &info) {
    return Napi::String::New(info.Env(), mcpp_sse_last_event_id(sse_));
  }
  // answerAfter(broken, waitMs) -> {step, waitMs}: after a request's
  // answer stream ended (broken: not as HTTP ends a body) without the
  // answer, 'resume' (after waitMs), 'wait' or 'lost' (C's rule,
  // mcpp_http_answer_after).
  Napi::Value AnswerAfter(const Napi::CallbackInfo &info) {
    Napi::Env env = info.Env();
    if (!info[0].IsBoolean() || !info[1].IsNumber())
      throw Napi::TypeError::New(env, "answerAfter(broken: boolean, waitMs: number)");
    uint32_t wait = info[1].As<Napi::Number>().Uint32Value();
    mcpp_http_answer_step step = mcpp_http_answer_after(sse_, info[0].As<Napi::Boolean>().Value(), &wait);
    Napi::Object out = Napi::Object::New(env);
    out.Set("step", mcpp_http_answer_step_name(step));
    out.Set("waitMs", wait);
    return out;
  }
  // listenAfter(opened, status, body, waitMs) -> {step, waitMs}: after this
  // GET listening stream is over, 'again' (after waitMs), 'never' or
  // 'expired' (C's rule, mcpp_http_listen_after).
  Napi::Value ListenAfter(const Napi::CallbackInfo &info) {
    Napi::Env env = info.Env();
    if (!info[0].IsBoolean() || !info[1].IsNumber() || !info[2].IsString() || !info[3].IsNumber())
      throw Napi::TypeError::New(env, "listenAfter(opened: boolean, status: number, body: string, waitMs: number)");
    std::string body = info[2].As<Napi::String>().Utf8Value();
    uint32_t wait = info[3].As<Napi::Number>().Uint32Value();
    mcpp_http_listen_step step = mcpp_http_listen_after(sse_, info[0].As<Napi::Boolean>().Value(),
                                                        info[1].As<Napi::Number>().Int32Value(),
                                                        body.data(), body.size(), &wait);
    Napi::Object out = Napi::Object::New(env);
    out.Set("step", mcpp_http_listen_step_name(step));
    out.Set("waitMs", wait);
    return out;
  }
  Napi::Value Done(Napi::Env env, Collect &c, int rc) {
    if (rc < 0) throw Napi::Error::New(env, mcpp_strerror(rc));
    return c.out;
  }

  mcpp_sse *sse_ = nullptr;
};

// HttpRenewal: a Streamable HTTP session's renewal (mcpp_http_renewal):
// which session end runs the handshake again, what waits for the new
// session, which ping goes again on it (once).
class RenewalWrap : public Napi::ObjectWrap<RenewalWrap> {
 public:
  static Napi::Function Define(Napi::Env env) {
    return DefineClass(env, "HttpRenewal",
                       {InstanceMethod("expired", &RenewalWrap::Expired),
                        InstanceMethod("holds", &RenewalWrap::Holds),
                        InstanceMethod("done", &RenewalWrap::Done)});
  }
  explicit RenewalWrap(const Napi::CallbackInfo &info) : Napi::ObjectWrap<RenewalWrap>(info) {
    renewal_ = mcpp_http_renewal_new();
    if (renewal_ == nullptr) throw Napi::Error::New(info.Env(), "out of memory");
  }
  ~RenewalWrap() override { mcpp_http_renewal_free(renewal_); }

 private:
  // expired(onCurrentSession, frame) -> {renew, sendAgain}: a session's end
  // met frame ('': the listening stream or a resumed answer).
  Napi::Value Expired(const Napi::CallbackInfo &info) {
    Napi::Env env = info.Env();
    if (!info[0].IsBoolean() || !info[1].IsString())
      throw Napi::TypeError::New(env, "expired(onCurrentSession: boolean, frame: string)");
    std::string frame = info[1].As<Napi::String>().Utf8Value();
    int step = mcpp_http_renewal_expired(renewal_, info[0].As<Napi::Boolean>().Value(),
                                         frame.empty() ? nullptr : frame.data(), frame.size());
    Napi::Object out = Napi::Object::New(env);
    out.Set("renew", (step & MCPP_HTTP_RENEW) != 0);
    out.Set("sendAgain", (step & MCPP_HTTP_SEND_AGAIN) != 0);
    return out;
  }
  // holds(frame) -> whether the frame waits for the new session.
  Napi::Value Holds(const Napi::CallbackInfo &info) {
    if (!info[0].IsString()) throw Napi::TypeError::New(info.Env(), "holds(frame: string)");
    // No copy of every frame sent (a large one too) while none waits.
    if (!mcpp_http_renewal_holds(renewal_, nullptr, 0)) return Napi::Boolean::New(info.Env(), false);
    std::string frame = info[0].As<Napi::String>().Utf8Value();
    return Napi::Boolean::New(info.Env(), mcpp_http_renewal_holds(renewal_, frame.data(), frame.size()) != 0);
  }
  // done(opened): the handshake ran again.
  Napi::Value Done(const Napi::CallbackInfo &info) {
    mcpp_http_renewal_done(renewal_, info[0].ToBoolean().Value());
    return info.Env().Undefined();
  }

  mcpp_http_renewal *renewal_ = nullptr;
};

// envelope(message) -> the request with the 2026-07-28 _meta (as given if
// it is no request).
Napi::Value Envelope(const Napi::CallbackInfo &info) {
  std::string msg = info[0].ToString();
  size_t n = 0;
  char *out = mcpp_client_envelope(msg.data(), msg.size(), &n);
  if (out == nullptr) return info[0];
  Napi::String s = Napi::String::New(info.Env(), out, n);
  std::free(out);
  return s;
}

}  // namespace

void InitClient(Napi::Env env, Napi::Object exports) {
  exports.Set("ClientHandshake", HandshakeWrap::Define(env));
  exports.Set("SseParser", SseWrap::Define(env));
  exports.Set("HttpRenewal", RenewalWrap::Define(env));
  exports.Set("envelope", Napi::Function::New(env, Envelope, "envelope"));
  exports.Set("PROTOCOL_VERSION", MCPP_PROTOCOL_VERSION);
  exports.Set("MODERN_PROTOCOL_VERSION", MCPP_MODERN_PROTOCOL_VERSION);
}

}  // namespace mcpping_node
