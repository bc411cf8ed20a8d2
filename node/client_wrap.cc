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
  exports.Set("envelope", Napi::Function::New(env, Envelope, "envelope"));
  exports.Set("PROTOCOL_VERSION", MCPP_PROTOCOL_VERSION);
  exports.Set("MODERN_PROTOCOL_VERSION", MCPP_MODERN_PROTOCOL_VERSION);
}

}  // namespace mcpping_node
