// See http_session_wrap.h. Each input method returns the actions the
// session asks for, as plain objects ({do: 'start', ...}), in order.
#include "http_session_wrap.h"

#include <string>
#include <vector>

#include "mcpping.h"

namespace mcpping_node {

namespace {

Napi::Value StrOrNull(Napi::Env env, const char *s, size_t n) {
  return s ? Napi::Value(Napi::String::New(env, s, n)) : env.Null();
}

// An optional string argument: nullptr for null or undefined.
const char *OptionalString(const Napi::CallbackInfo &info, size_t i, std::string &keep,
                           const char *what) {
  if (info.Length() <= i || info[i].IsNull() || info[i].IsUndefined()) return nullptr;
  if (!info[i].IsString()) throw Napi::TypeError::New(info.Env(), std::string(what) + " must be a string or null");
  keep = info[i].As<Napi::String>().Utf8Value();
  return keep.c_str();
}

// A tag or an exchange id: a non-negative integer (JS numbers hold 2^53).
uint64_t Id(const Napi::CallbackInfo &info, size_t i, const char *what) {
  if (info.Length() <= i || !info[i].IsNumber()) throw Napi::TypeError::New(info.Env(), std::string(what) + " must be a number");
  double v = info[i].As<Napi::Number>().DoubleValue();
  if (!(v >= 0 && v <= 9007199254740991.0) || v != static_cast<double>(static_cast<uint64_t>(v)))
    throw Napi::RangeError::New(info.Env(), std::string(what) + " must be an integer from 0");
  return static_cast<uint64_t>(v);
}

class HttpSessionWrap : public Napi::ObjectWrap<HttpSessionWrap> {
 public:
  static Napi::Function Define(Napi::Env env) {
    return DefineClass(env, "HttpSession",
                       {InstanceMethod("post", &HttpSessionWrap::Post),
                        InstanceMethod("settled", &HttpSessionWrap::Settled),
                        InstanceMethod("response", &HttpSessionWrap::Response),
                        InstanceMethod("body", &HttpSessionWrap::Body),
                        InstanceMethod("end", &HttpSessionWrap::End),
                        InstanceMethod("failed", &HttpSessionWrap::Failed),
                        InstanceMethod("setVersion", &HttpSessionWrap::SetVersion),
                        InstanceMethod("opened", &HttpSessionWrap::Opened),
                        InstanceMethod("renewed", &HttpSessionWrap::Renewed),
                        InstanceMethod("wake", &HttpSessionWrap::Wake),
                        InstanceMethod("close", &HttpSessionWrap::Close),
                        InstanceMethod("lose", &HttpSessionWrap::Lose),
                        InstanceAccessor("sessionId", &HttpSessionWrap::SessionId, nullptr),
                        InstanceAccessor("listens", &HttpSessionWrap::Listens, nullptr)});
  }

  // new HttpSession(url, headers, maxBody, listen): url and headers as
  // http_session.js checked them; throws a TypeError saying why a URL
  // does not open.
  explicit HttpSessionWrap(const Napi::CallbackInfo &info) : Napi::ObjectWrap<HttpSessionWrap>(info) {
    Napi::Env env = info.Env();
    if (!info[0].IsString() || !info[1].IsObject() || !info[2].IsNumber() || !info[3].IsBoolean())
      throw Napi::TypeError::New(env, "HttpSession(url: string, headers: object, maxBody: number, listen: boolean)");
    std::string url = info[0].As<Napi::String>().Utf8Value();
    Napi::Object headers = info[1].As<Napi::Object>();
    Napi::Array names = headers.GetPropertyNames();
    std::vector<std::string> text;
    text.reserve(names.Length() * 2);
    for (uint32_t i = 0; i < names.Length(); i++) {
      Napi::Value value = headers.Get(names.Get(i));
      if (!value.IsString()) throw Napi::TypeError::New(env, "headers must map names to strings");
      text.push_back(names.Get(i).ToString().Utf8Value());
      text.push_back(value.As<Napi::String>().Utf8Value());
    }
    std::vector<mcpp_http_header> extra;
    for (size_t i = 0; i < text.size(); i += 2) extra.push_back({text[i].c_str(), text[i + 1].c_str()});
    const char *problem = nullptr;
    double max = info[2].As<Napi::Number>().DoubleValue();
    session_ = mcpp_http_session_new(url.data(), url.size(), extra.data(), extra.size(),
                                     max > 0 ? static_cast<size_t>(max) : 0,
                                     info[3].As<Napi::Boolean>().Value(), &problem);
    if (session_ == nullptr) throw Napi::TypeError::New(env, problem ? problem : "out of memory");
  }
  ~HttpSessionWrap() override { mcpp_http_session_free(session_); }

 private:
  // post(frame, tag, direct)
  Napi::Value Post(const Napi::CallbackInfo &info) {
    if (!info[0].IsString()) throw Napi::TypeError::New(info.Env(), "post(frame: string, tag: number, direct: boolean)");
    std::string frame = info[0].As<Napi::String>().Utf8Value();
    return Actions(info.Env(), mcpp_http_session_post(session_, frame.data(), frame.size(), Id(info, 1, "tag"),
                                                      info[2].ToBoolean().Value()));
  }
  // settled(tag)
  Napi::Value Settled(const Napi::CallbackInfo &info) {
    return Actions(info.Env(), mcpp_http_session_settled(session_, Id(info, 0, "tag")));
  }
  // response(exchange, status, contentType, sessionId, location)
  Napi::Value Response(const Napi::CallbackInfo &info) {
    if (!info[1].IsNumber()) throw Napi::TypeError::New(info.Env(), "status must be a number");
    std::string ct, sid, loc;
    const char *content_type = OptionalString(info, 2, ct, "contentType");
    const char *session_id = OptionalString(info, 3, sid, "sessionId");
    const char *location = OptionalString(info, 4, loc, "location");
    return Actions(info.Env(), mcpp_http_session_response(session_, Id(info, 0, "exchange"),
                                                          info[1].As<Napi::Number>().Int32Value(),
                                                          content_type, session_id, location));
  }
  // body(exchange, Buffer|Uint8Array)
  Napi::Value Body(const Napi::CallbackInfo &info) {
    if (!info[1].IsTypedArray()) throw Napi::TypeError::New(info.Env(), "body(exchange: number, chunk: Uint8Array)");
    auto chunk = info[1].As<Napi::Uint8Array>();
    return Actions(info.Env(), mcpp_http_session_body(session_, Id(info, 0, "exchange"),
                                                      reinterpret_cast<const char *>(chunk.Data()),
                                                      chunk.ByteLength()));
  }
  // end(exchange, broken)
  Napi::Value End(const Napi::CallbackInfo &info) {
    return Actions(info.Env(), mcpp_http_session_end(session_, Id(info, 0, "exchange"), info[1].ToBoolean().Value()));
  }
  // failed(exchange, cause)
  Napi::Value Failed(const Napi::CallbackInfo &info) {
    std::string keep;
    const char *cause = OptionalString(info, 1, keep, "cause");
    return Actions(info.Env(), mcpp_http_session_failed(session_, Id(info, 0, "exchange"), cause));
  }
  // setVersion(version|null)
  Napi::Value SetVersion(const Napi::CallbackInfo &info) {
    std::string keep;
    return Actions(info.Env(), mcpp_http_session_set_version(session_, OptionalString(info, 0, keep, "version")));
  }
  Napi::Value Opened(const Napi::CallbackInfo &info) {
    return Actions(info.Env(), mcpp_http_session_opened(session_));
  }
  // renewed(ok, why)
  Napi::Value Renewed(const Napi::CallbackInfo &info) {
    std::string keep;
    const char *why = OptionalString(info, 1, keep, "why");
    return Actions(info.Env(), mcpp_http_session_renewed(session_, info[0].ToBoolean().Value(), why));
  }
  // wake(wait)
  Napi::Value Wake(const Napi::CallbackInfo &info) {
    return Actions(info.Env(), mcpp_http_session_wake(session_, Id(info, 0, "wait")));
  }
  Napi::Value Close(const Napi::CallbackInfo &info) {
    return Actions(info.Env(), mcpp_http_session_close(session_));
  }
  Napi::Value Lose(const Napi::CallbackInfo &info) {
    return Actions(info.Env(), mcpp_http_session_lose(session_));
  }
  Napi::Value SessionId(const Napi::CallbackInfo &info) {
    const char *id = mcpp_http_session_id(session_);
    return id ? Napi::Value(Napi::String::New(info.Env(), id)) : info.Env().Null();
  }

  // Whether the listening stream is still wanted (false: off, or the server offers none).
  Napi::Value Listens(const Napi::CallbackInfo &info) {
    return Napi::Boolean::New(info.Env(), mcpp_http_session_listens(session_) != 0);
  }

  // The actions the last input asked for (an out-of-memory input throws
  // after they are taken, so none is left for the next).
  Napi::Value Actions(Napi::Env env, int rc) {
    Napi::Array out = Napi::Array::New(env);
    uint32_t n = 0;
    mcpp_http_do d;
    while (mcpp_http_session_next(session_, &d)) out.Set(n++, Action(env, d));
    if (rc < 0) throw Napi::Error::New(env, mcpp_strerror(rc));
    return out;
  }

  static Napi::Object Action(Napi::Env env, const mcpp_http_do &d) {
    Napi::Object a = Napi::Object::New(env);
    a.Set("do", mcpp_http_do_name(d.kind));
    switch (d.kind) {
      case MCPP_HTTP_DO_START: {
        a.Set("exchange", static_cast<double>(d.exchange));
        a.Set("tag", static_cast<double>(d.tag));
        a.Set("method", mcpp_http_method_name(static_cast<mcpp_http_method>(d.method)));
        a.Set("https", d.https != 0);
        a.Set("host", d.host);
        a.Set("port", d.port);
        a.Set("target", d.target);
        Napi::Object headers = Napi::Object::New(env);
        for (size_t i = 0; i < d.n_headers; i++) headers.Set(d.headers[i].name, d.headers[i].value);
        a.Set("headers", headers);
        a.Set("body", StrOrNull(env, d.data, d.len));
        a.Set("connectTimeoutMs", d.connect_timeout_ms);
        a.Set("headersTimeoutMs", d.headers_timeout_ms);
        break;
      }
      case MCPP_HTTP_DO_CUT:
        a.Set("exchange", static_cast<double>(d.exchange));
        break;
      case MCPP_HTTP_DO_RECEIVE:
        a.Set("data", Napi::String::New(env, d.data, d.len));
        break;
      case MCPP_HTTP_DO_LOST:
        a.Set("tag", static_cast<double>(d.tag));
        break;
      case MCPP_HTTP_DO_SESSION:
        a.Set("id", StrOrNull(env, d.data, d.len));
        break;
      case MCPP_HTTP_DO_GONE:
        a.Set("exchange", static_cast<double>(d.exchange));
        a.Set("reason", Napi::String::New(env, d.data, d.len));
        break;
      case MCPP_HTTP_DO_LISTENING:
        a.Set("value", d.value != 0);
        break;
      case MCPP_HTTP_DO_WAIT:
        a.Set("wait", static_cast<double>(d.wait));
        a.Set("ms", d.ms);
        break;
      default:
        break;
    }
    return a;
  }

  mcpp_http_session *session_ = nullptr;
};

}  // namespace

void InitHttpSession(Napi::Env env, Napi::Object exports) {
  exports.Set("HttpSession", HttpSessionWrap::Define(env));
}

}  // namespace mcpping_node
