// See rules_wrap.h.
#include "rules_wrap.h"

#include <cmath>
#include <cstring>
#include <string>
#include <vector>

namespace mcpping_node {

// The text a C writer makes, as its functions write text: called once with
// no buffer for the length, then again to write it (and its NUL). 0: none.
template <typename Write>
static std::string WrittenText(Write write) {
  std::string text(write(nullptr, 0), '\0');
  if (!text.empty()) write(&text[0], text.size() + 1);
  return text;
}

// WrittenText as a JS string, or null when the writer makes none.
template <typename Write>
static Napi::Value WrittenTextOrNull(Napi::Env env, Write write) {
  std::string text = WrittenText(write);
  return text.empty() ? env.Null() : Napi::Value(Napi::String::New(env, text));
}

mcpp_event EventFromJs(Napi::Env env, Napi::Value value) {
  if (!value.IsObject()) throw Napi::TypeError::New(env, "event must be an object");
  Napi::Object o = value.As<Napi::Object>();
  mcpp_event ev;
  std::memset(&ev, 0, sizeof ev);
  Napi::Value type = o.Get("type");
  if (!type.IsString()) throw Napi::TypeError::New(env, "event.type must be a string");
  std::string name = type.As<Napi::String>();
  bool found = false;
  for (int t = MCPP_EV_PING; t <= MCPP_EV_LAST; t++) {
    if (name == mcpp_event_name(static_cast<mcpp_event_type>(t))) {
      ev.type = static_cast<mcpp_event_type>(t);
      found = true;
      break;
    }
  }
  if (!found) throw Napi::TypeError::New(env, "unknown event type '" + name + "'");
  Napi::Value rpc = o.Get("rpcCode");
  Napi::Value err = o.Get("error");
  if (rpc.IsNumber()) ev.rpc_code = rpc.As<Napi::Number>().Int64Value();
  if (err.IsNumber()) ev.error = err.As<Napi::Number>().Int32Value();
  if (!rpc.IsNumber() && !err.IsNumber()) {
    // An event written with only errorCode: which code it is follows from
    // the type, as in the events the addon makes.
    Napi::Value code = o.Get("errorCode");
    if (code.IsNumber()) {
      bool peer = ev.type == MCPP_EV_PING_ERROR || ev.type == MCPP_EV_UNSUPPORTED ||
                  ev.type == MCPP_EV_PROBE_OK;
      if (peer)
        ev.rpc_code = code.As<Napi::Number>().Int64Value();
      else
        ev.error = code.As<Napi::Number>().Int32Value();
    }
  }
  ev.invalid = o.Get("invalid").ToBoolean().Value() ? 1 : 0;
  Napi::Value rtt = o.Get("rttUs");
  if (rtt.IsNumber()) {
    double us = rtt.As<Napi::Number>().DoubleValue();
    ev.rtt_us = std::isfinite(us) && us > 0 ? static_cast<uint64_t>(us) : 0;
  }
  return ev;
}

namespace {

Napi::Value EventOutcome(const Napi::CallbackInfo &info) {
  Napi::Env env = info.Env();
  mcpp_event ev = EventFromJs(env, info[0]);
  const char *name = mcpp_outcome_name(mcpp_event_outcome(&ev));
  return name ? Napi::Value(Napi::String::New(env, name)) : env.Null();
}

Napi::Value OutcomeIsLost(const Napi::CallbackInfo &info) {
  Napi::Env env = info.Env();
  if (!info[0].IsString()) throw Napi::TypeError::New(env, "outcome must be a string");
  std::string name = info[0].As<Napi::String>();
  for (int o = MCPP_OUTCOME_PONG; o <= MCPP_OUTCOME_CLOSED; o++) {
    auto outcome = static_cast<mcpp_ping_outcome>(o);
    if (name == mcpp_outcome_name(outcome))
      return Napi::Boolean::New(env, mcpp_outcome_is_lost(outcome) != 0);
  }
  throw Napi::TypeError::New(env, "unknown ping outcome '" + name + "'");
}

// The caller's headers (an object of strings, or null/undefined) as C's
// array, in the object's order; the texts are owned here.
struct HeaderList {
  std::vector<std::string> texts;
  std::vector<mcpp_http_header> headers;
  HeaderList(Napi::Env env, const Napi::Value &value) {
    if (value.IsUndefined() || value.IsNull()) return;
    if (!value.IsObject()) throw Napi::TypeError::New(env, "headers must be an object of strings");
    Napi::Object extra = value.As<Napi::Object>();
    Napi::Array keys = extra.GetPropertyNames();
    for (uint32_t i = 0; i < keys.Length(); i++) {
      Napi::Value k = keys.Get(i), v = extra.Get(k);
      if (!v.IsString()) throw Napi::TypeError::New(env, "headers must map names to strings");
      texts.push_back(k.ToString().Utf8Value());
      texts.push_back(v.As<Napi::String>().Utf8Value());
    }
    headers.resize(texts.size() / 2);
    for (size_t i = 0; i < headers.size(); i++)
      headers[i] = {texts[2 * i].c_str(), texts[2 * i + 1].c_str()};
  }
};

// One part of a parsed URL (mcpp_http_url_text sizes it).
static std::string UrlPart(const mcpp_http_url &u, mcpp_http_url_part part) {
  return WrittenText([&](char *out, size_t cap) { return mcpp_http_url_text(&u, part, out, cap); });
}

// httpUrl(url, headers) -> what a Streamable HTTP client makes of url
// ({requestUrl, target, name, host, shown, port, https, authorization}), or the
// sentence refusing it (it reads after the URL: "has no host").
Napi::Value HttpUrl(const Napi::CallbackInfo &info) {
  Napi::Env env = info.Env();
  if (!info[0].IsString()) throw Napi::TypeError::New(env, "url must be a string");
  std::string url = info[0].As<Napi::String>().Utf8Value();
  HeaderList extra(env, info[1]);
  mcpp_http_url u;
  if (const char *problem = mcpp_http_url_parse(url.data(), url.size(), &u))
    return Napi::String::New(env, problem);
  std::string auth = WrittenText([&](char *out, size_t cap) {
    return mcpp_http_url_credentials(&u, extra.headers.data(), extra.headers.size(), out, cap);
  });
  Napi::Object out = Napi::Object::New(env);
  out.Set("requestUrl", UrlPart(u, MCPP_HTTP_URL_REQUEST));
  out.Set("target", UrlPart(u, MCPP_HTTP_URL_TARGET));
  out.Set("name", UrlPart(u, MCPP_HTTP_URL_NAME));
  out.Set("host", UrlPart(u, MCPP_HTTP_URL_HOST));
  out.Set("shown", UrlPart(u, MCPP_HTTP_URL_SHOWN));
  out.Set("port", Napi::Number::New(env, u.port));
  out.Set("https", Napi::Boolean::New(env, u.https != 0));
  out.Set("authorization", auth.empty() ? env.Null() : Napi::Value(Napi::String::New(env, auth)));
  return out;
}

// httpHeaderProblem(name, value) -> why the header cannot be sent (the
// sentence reads after its name), or null if it can.
Napi::Value HttpHeaderProblem(const Napi::CallbackInfo &info) {
  Napi::Env env = info.Env();
  if (!info[0].IsString() || !info[1].IsString())
    throw Napi::TypeError::New(env, "name and value must be strings");
  std::string name = info[0].As<Napi::String>().Utf8Value();
  std::string value = info[1].As<Napi::String>().Utf8Value();
  const char *why = mcpp_http_header_problem(name.data(), name.size(), value.data(), value.size());
  return why ? Napi::Value(Napi::String::New(env, why)) : env.Null();
}

// envSafe(name, value) -> boolean: whether the SDKs' safe subset of the
// environment keeps name=value (mcpp_env_safe).
Napi::Value EnvSafe(const Napi::CallbackInfo &info) {
  Napi::Env env = info.Env();
  if (!info[0].IsString() || !info[1].IsString())
    throw Napi::TypeError::New(env, "name and value must be strings");
  std::string name = info[0].As<Napi::String>().Utf8Value();
  std::string value = info[1].As<Napi::String>().Utf8Value();
  return Napi::Boolean::New(env, mcpp_env_safe(name.c_str(), value.c_str()));
}

// The -32601 answer make writes for the request in info[0] (a string), or null.
static Napi::Value MethodNotFound(const Napi::CallbackInfo &info,
                                  size_t (*make)(const char *, size_t, char *, size_t)) {
  Napi::Env env = info.Env();
  if (!info[0].IsString()) throw Napi::TypeError::New(env, "frame must be a string");
  std::string frame = info[0].As<Napi::String>().Utf8Value();
  return WrittenTextOrNull(env, [&](char *out, size_t cap) { return make(frame.data(), frame.size(), out, cap); });
}

// pingUnreachableAnswer(ping) -> the -32601 answer (a string) a ping gets when
// no stream would carry it to the peer; null if ping is no request.
Napi::Value PingUnreachableAnswer(const Napi::CallbackInfo &info) {
  return MethodNotFound(info, mcpp_ping_unreachable_answer);
}

// unservedRequestAnswer(frame) -> the -32601 answer a request from the peer
// gets when the application serves none; null if frame is no request.
Napi::Value UnservedRequestAnswer(const Napi::CallbackInfo &info) {
  return MethodNotFound(info, mcpp_unserved_request_answer);
}

// Marks RttStats objects, so RttStatsFromJs unwraps nothing else.
const napi_type_tag kRttStatsTag = {0x6d637070696e6721ull, 0x727474737461747aull};

class RttStatsWrap : public Napi::ObjectWrap<RttStatsWrap> {
 public:
  static Napi::Function Init(Napi::Env env) {
    return DefineClass(env, "RttStats",
                       {
                           InstanceMethod("add", &RttStatsWrap::Add),
                           InstanceMethod("observe", &RttStatsWrap::Observe),
                           InstanceMethod("summary", &RttStatsWrap::Summary),
                           InstanceMethod("recent", &RttStatsWrap::Recent),
                       });
  }

  // new RttStats(window): 1..MCPP_MAX_RTT_WINDOW
  explicit RttStatsWrap(const Napi::CallbackInfo &info) : Napi::ObjectWrap<RttStatsWrap>(info) {
    Napi::Env env = info.Env();
    double window = info[0].IsUndefined() ? MCPP_RTT_WINDOW : info[0].ToNumber().DoubleValue();
    if (!std::isfinite(window) || window != std::floor(window) || window < 1 ||
        window > MCPP_MAX_RTT_WINDOW)
      throw Napi::RangeError::New(
          env, "window must be an integer between 1 and " + std::to_string(MCPP_MAX_RTT_WINDOW));
    if (mcpp_rtt_stats_new(&stats_, static_cast<uint32_t>(window), nullptr) != 0)
      throw Napi::Error::New(env, "out of memory");
    napi_type_tag_object(env, info.This(), &kRttStatsTag);
  }

  mcpp_rtt_stats *Stats() const { return stats_; }
  ~RttStatsWrap() override { mcpp_rtt_stats_free(stats_); }

 private:
  Napi::Value Add(const Napi::CallbackInfo &info) {
    double rtt = info[0].ToNumber().DoubleValue();
    if (!std::isfinite(rtt) || rtt < 0)
      throw Napi::RangeError::New(info.Env(), "rtt must be a finite number >= 0");
    mcpp_runtime_rtt_lock();
    mcpp_rtt_stats_add(stats_, rtt);
    mcpp_runtime_rtt_unlock();
    return info.Env().Undefined();
  }

  // observe(event, usPerUnit)
  Napi::Value Observe(const Napi::CallbackInfo &info) {
    mcpp_event ev;
    // A ping we sent (one per ping) needs no field but its type.
    Napi::Value type = info[0].IsObject() ? info[0].As<Napi::Object>().Get("type") : info.Env().Undefined();
    if (type.IsString() && type.As<Napi::String>().Utf8Value() == mcpp_event_name(MCPP_EV_PING)) {
      std::memset(&ev, 0, sizeof ev);
      ev.type = MCPP_EV_PING;
    } else {
      ev = EventFromJs(info.Env(), info[0]);
    }
    double per = info[1].ToNumber().DoubleValue();
    if (!std::isfinite(per) || !(per > 0))
      throw Napi::RangeError::New(info.Env(), "usPerUnit must be a finite number > 0");
    mcpp_runtime_rtt_lock();
    mcpp_rtt_stats_observe(stats_, &ev, per);
    mcpp_runtime_rtt_unlock();
    return info.Env().Undefined();
  }

  Napi::Value Summary(const Napi::CallbackInfo &info) {
    Napi::Env env = info.Env();
    mcpp_rtt_summary s;
    // The runtime may be feeding it from its thread (feedRtt).
    mcpp_runtime_rtt_lock();
    mcpp_rtt_stats_summary(stats_, &s);
    mcpp_runtime_rtt_unlock();
    auto fig = [&](double v) -> Napi::Value {
      return std::isnan(v) ? env.Null() : Napi::Value(Napi::Number::New(env, v));
    };
    Napi::Object o = Napi::Object::New(env);
    o.Set("sent", static_cast<double>(s.sent));
    o.Set("received", static_cast<double>(s.received));
    o.Set("lost", static_cast<double>(s.lost));
    o.Set("lossPct", s.loss_pct);
    o.Set("count", static_cast<double>(s.count));
    o.Set("min", fig(s.min));
    o.Set("avg", fig(s.avg));
    o.Set("max", fig(s.max));
    o.Set("mdev", fig(s.mdev));
    o.Set("p50", fig(s.p50));
    o.Set("p99", fig(s.p99));
    return o;
  }

  Napi::Value Recent(const Napi::CallbackInfo &info) {
    Napi::Env env = info.Env();
    mcpp_runtime_rtt_lock();
    size_t n = mcpp_rtt_stats_recent(stats_, nullptr, 0);
    mcpp_runtime_rtt_unlock();
    Napi::Float64Array out = Napi::Float64Array::New(env, n);
    // More may have come meanwhile: the first n of them.
    mcpp_runtime_rtt_lock();
    mcpp_rtt_stats_recent(stats_, out.Data(), n);
    mcpp_runtime_rtt_unlock();
    return out;
  }

  mcpp_rtt_stats *stats_ = nullptr;
};

}  // namespace

mcpp_rtt_stats *RttStatsFromJs(Napi::Env env, Napi::Value value) {
  bool tagged = false;
  if (!value.IsObject() ||
      napi_check_object_type_tag(env, value, &kRttStatsTag, &tagged) != napi_ok || !tagged)
    return nullptr;
  return RttStatsWrap::Unwrap(value.As<Napi::Object>())->Stats();
}

void InitRules(Napi::Env env, Napi::Object exports) {
  exports.Set("eventOutcome", Napi::Function::New(env, EventOutcome, "eventOutcome"));
  exports.Set("outcomeIsLost", Napi::Function::New(env, OutcomeIsLost, "outcomeIsLost"));
  exports.Set("httpUrl", Napi::Function::New(env, HttpUrl, "httpUrl"));
  exports.Set("httpHeaderProblem", Napi::Function::New(env, HttpHeaderProblem, "httpHeaderProblem"));
  exports.Set("envSafe", Napi::Function::New(env, EnvSafe, "envSafe"));
  exports.Set("RttStats", RttStatsWrap::Init(env));
  exports.Set("rttWindow", MCPP_RTT_WINDOW);
  // The answer kinds that stand for a request in doubt (C's rule).
  Napi::Array in_doubt = Napi::Array::New(env);
  for (int k = 0; k <= MCPP_ANSWER_LAST; k++)
    if (mcpp_answer_kind_is_in_doubt((mcpp_answer_kind)k))
      in_doubt.Set(in_doubt.Length(), mcpp_answer_kind_name((mcpp_answer_kind)k));
  exports.Set("inDoubtKinds", in_doubt);
  exports.Set("requestTimeoutMs", MCPP_REQUEST_TIMEOUT_MS);
  exports.Set("httpShortTimeoutMs", MCPP_HTTP_SHORT_TIMEOUT_MS);
  exports.Set("retryBudgetBurst", MCPP_RETRY_BUDGET_BURST);
  exports.Set("retryBudgetPerSecond", MCPP_RETRY_BUDGET_PER_SECOND);
  exports.Set("maxRetryBudgetBurst", MCPP_MAX_RETRY_BUDGET_BURST);
  exports.Set("minRetryBudgetPerSecond", MCPP_MIN_RETRY_BUDGET_PER_SECOND);
  exports.Set("maxRetryBudgetPerSecond", MCPP_MAX_RETRY_BUDGET_PER_SECOND);
  exports.Set("initializeTimeoutMs", MCPP_INITIALIZE_TIMEOUT_MS);
  exports.Set("pingInvalidMessage", MCPP_PING_INVALID_MESSAGE);
  exports.Set("pingUnsupportedMessage", MCPP_PING_UNSUPPORTED_MESSAGE);
  exports.Set("pingClosedMessage", MCPP_PING_CLOSED_MESSAGE);
  exports.Set("pingTimeoutFormat", MCPP_PING_TIMEOUT_FORMAT);
  exports.Set("pingErrorFormat", MCPP_PING_ERROR_FORMAT);
  exports.Set("closedByAppReason", MCPP_CLOSED_BY_APP_REASON);
  exports.Set("transportClosedReason", MCPP_TRANSPORT_CLOSED_REASON);
  exports.Set("connectionClosedText", MCPP_CONNECTION_CLOSED_TEXT);
  exports.Set("probeAuto", MCPP_PROBE_AUTO);
  exports.Set("httpNotHttpCause", MCPP_HTTP_NOT_HTTP_CAUSE);
  exports.Set("pingUnreachableAnswer", Napi::Function::New(env, PingUnreachableAnswer, "pingUnreachableAnswer"));
  exports.Set("unservedRequestAnswer", Napi::Function::New(env, UnservedRequestAnswer, "unservedRequestAnswer"));
}

}  // namespace mcpping_node
