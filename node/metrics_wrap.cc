// See metrics_wrap.h.
#include "metrics_wrap.h"

#include <cstring>
#include <string>
#include <vector>

#include "mcpping.h"

namespace mcpping_node {

namespace {
struct CellBox;
CellBox *BoxFromJs(Napi::Env env, Napi::Value v);
}  // namespace

namespace {

Napi::Value Strings(Napi::Env env, const char *const *v) {
  if (v == nullptr) return env.Null();
  Napi::Array a = Napi::Array::New(env);
  for (uint32_t i = 0; v[i]; i++) a.Set(i, v[i]);
  return a;
}

// [{name, kind, help, unit, field, label, values}, ...] in the table's order.
Napi::Value MetricFamilies(const Napi::CallbackInfo &info) {
  Napi::Env env = info.Env();
  Napi::Array a = Napi::Array::New(env);
  for (int i = 0; i < MCPP_METRIC_COUNT; i++) {
    const mcpp_metric_family *f = mcpp_metric_family_at(i);
    Napi::Object o = Napi::Object::New(env);
    o.Set("name", f->name);
    o.Set("kind", mcpp_metric_kind_name(f->kind));
    o.Set("help", f->help);
    o.Set("unit", f->unit);
    o.Set("field", f->field);
    o.Set("label", f->label ? Napi::Value(Napi::String::New(env, f->label)) : env.Null());
    o.Set("values", Strings(env, f->values));
    a.Set(static_cast<uint32_t>(i), o);
  }
  return a;
}

Napi::Value MetricSeriesLabels(const Napi::CallbackInfo &info) {
  return Strings(info.Env(), mcpp_metric_series_labels());
}

// [[seconds, le text], ...]
Napi::Value MetricRttBuckets(const Napi::CallbackInfo &info) {
  Napi::Env env = info.Env();
  Napi::Array a = Napi::Array::New(env);
  const double *b = mcpp_metric_rtt_bounds();
  for (int i = 0; i < MCPP_METRIC_RTT_BOUNDS; i++) {
    Napi::Array pair = Napi::Array::New(env, 2);
    pair.Set(0u, b[i]);
    pair.Set(1u, mcpp_metric_rtt_bound_text(i));
    a.Set(static_cast<uint32_t>(i), pair);
  }
  return a;
}

uint64_t U64(Napi::Object o, const char *key) {
  Napi::Value v = o.Get(key);
  if (!v.IsNumber()) return 0;
  double d = v.As<Napi::Number>().DoubleValue();
  return d > 0 ? static_cast<uint64_t>(d) : 0;
}

void U64s(Napi::Env env, Napi::Object o, const char *key, uint64_t *out, uint32_t n) {
  Napi::Value v = o.Get(key);
  if (v.IsUndefined() || v.IsNull()) return;
  if (!v.IsArray() || v.As<Napi::Array>().Length() != n)
    throw Napi::TypeError::New(env, std::string("series.") + key + " must be an array of " +
                                        std::to_string(n) + " numbers");
  Napi::Array a = v.As<Napi::Array>();
  for (uint32_t i = 0; i < n; i++) {
    Napi::Value x = a.Get(i);
    double d = x.IsNumber() ? x.As<Napi::Number>().DoubleValue() : 0;
    out[i] = d > 0 ? static_cast<uint64_t>(d) : 0;
  }
}

// metricsRender([{server?, peer, transport, pingsSent, ..., failures,
// rttBuckets, rttSum, states, inFlight, probes}, ...]) -> the Prometheus text.
Napi::Value MetricsRender(const Napi::CallbackInfo &info) {
  Napi::Env env = info.Env();
  if (!info[0].IsArray()) throw Napi::TypeError::New(env, "series must be an array");
  Napi::Array in = info[0].As<Napi::Array>();
  uint32_t n = in.Length();
  std::vector<mcpp_metric_series> series(n);
  std::vector<std::string> text(3 * static_cast<size_t>(n));
  for (uint32_t i = 0; i < n; i++) {
    Napi::Value item = in.Get(i);
    if (!item.IsObject()) throw Napi::TypeError::New(env, "each series must be an object");
    Napi::Object o = item.As<Napi::Object>();
    mcpp_metric_series &s = series[i];
    std::memset(&s, 0, sizeof s);
    static const char *const keys[3] = {"server", "peer", "transport"};
    const char **fields[3] = {&s.server, &s.peer, &s.transport};
    for (int k = 0; k < 3; k++) {
      Napi::Value v = o.Get(keys[k]);
      if (v.IsString()) {
        text[3 * i + k] = v.As<Napi::String>().Utf8Value();
        *fields[k] = text[3 * i + k].c_str();
      }
    }
    s.pings_sent = U64(o, "pingsSent");
    s.pongs_received = U64(o, "pongsReceived");
    s.pings_answered = U64(o, "pingsAnswered");
    s.stale = U64(o, "stale");
    s.ping_deaf = U64(o, "pingDeaf");
    s.reconnects = U64(o, "reconnects");
    s.in_flight = U64(o, "inFlight");
    U64s(env, o, "failures", s.failures, MCPP_METRIC_REASONS);
    U64s(env, o, "rttBuckets", s.rtt_buckets, MCPP_METRIC_RTT_BOUNDS + 1);
    U64s(env, o, "states", s.states, MCPP_METRIC_STATES);
    U64s(env, o, "probes", s.probes, MCPP_METRIC_PROBE_RESULTS);
    Napi::Value sum = o.Get("rttSum");
    s.rtt_sum = sum.IsNumber() ? sum.As<Napi::Number>().DoubleValue() : 0;
  }
  size_t need = mcpp_metrics_render(series.data(), n, nullptr, 0);
  std::string out(need + 1, '\0');
  mcpp_metrics_render(series.data(), n, &out[0], need + 1);
  out.resize(need);
  return Napi::String::New(env, out);
}

// A connection's figures counted in C (metrics_tally.c), held by JS as an
// External; retired once, explicitly or when collected.
struct CellBox {
  uint32_t magic;
  mcpp_metrics_cell *cell;
  bool retired;
};
constexpr uint32_t kCellMagic = 0x6d63656cu;

CellBox *BoxFromJs(Napi::Env env, Napi::Value v) {
  CellBox *b = v.IsExternal() ? v.As<Napi::External<CellBox>>().Data() : nullptr;
  if (b == nullptr || b->magic != kCellMagic) throw Napi::TypeError::New(env, "not a metrics cell");
  return b;
}

// metricsCell(peer, transport) -> a cell, counting nothing until attached.
Napi::Value MetricsCell(const Napi::CallbackInfo &info) {
  Napi::Env env = info.Env();
  std::string peer = info[0].ToString().Utf8Value();
  std::string transport = info[1].ToString().Utf8Value();
  mcpp_metrics_cell *c = mcpp_metrics_cell_new(peer.c_str(), transport.c_str());
  if (c == nullptr) throw Napi::Error::New(env, "out of memory");
  CellBox *b = new CellBox{kCellMagic, c, false};
  return Napi::External<CellBox>::New(env, b, [](Napi::Env, CellBox *box) {
    if (!box->retired) mcpp_metrics_cell_retire(box->cell);
    delete box;
  });
}

// metricsRetire(cell): folds it into its labels' total (once).
Napi::Value MetricsRetire(const Napi::CallbackInfo &info) {
  CellBox *b = BoxFromJs(info.Env(), info[0]);
  if (!b->retired) {
    b->retired = true;
    mcpp_metrics_cell_retire(b->cell);
  }
  return info.Env().Undefined();
}

// metricsSetInFlight(cell, n): the in-flight gauge, from the live connection.
Napi::Value MetricsSetInFlight(const Napi::CallbackInfo &info) {
  mcpp_metrics_cell *c = CellFromJs(info.Env(), info[0]);
  double n = info[1].IsNumber() ? info[1].As<Napi::Number>().DoubleValue() : 0;
  mcpp_metrics_cell_set_in_flight(c, n > 0 ? static_cast<uint64_t>(n) : 0);
  return info.Env().Undefined();
}

Napi::Array Numbers(Napi::Env env, const uint64_t *v, uint32_t n) {
  Napi::Array a = Napi::Array::New(env, n);
  for (uint32_t i = 0; i < n; i++) a.Set(i, static_cast<double>(v[i]));
  return a;
}

// metricRttGrowth(now, before, sum) -> [rtt, ...]: values reproducing an RTT
// histogram's growth (mcpp_metric_rtt_growth), for OpenTelemetry.
Napi::Value MetricRttGrowth(const Napi::CallbackInfo &info) {
  Napi::Env env = info.Env();
  Napi::Object o = Napi::Object::New(env);
  o.Set("now", info[0]);
  o.Set("before", info[1]);
  uint64_t now[MCPP_METRIC_RTT_BOUNDS + 1] = {0}, before[MCPP_METRIC_RTT_BOUNDS + 1] = {0};
  U64s(env, o, "now", now, MCPP_METRIC_RTT_BOUNDS + 1);
  U64s(env, o, "before", before, MCPP_METRIC_RTT_BOUNDS + 1);
  double sum = info[2].IsNumber() ? info[2].As<Napi::Number>().DoubleValue() : 0;
  std::vector<double> v(mcpp_metric_rtt_growth(now, before, sum, nullptr, 0));
  mcpp_metric_rtt_growth(now, before, sum, v.data(), v.size());
  Napi::Array a = Napi::Array::New(env, v.size());
  for (size_t i = 0; i < v.size(); i++) a.Set(static_cast<uint32_t>(i), v[i]);
  return a;
}

// metricsRows() -> [{peer, transport, pingsSent, ..., failures, rttBuckets,
// rttSum, states, inFlight, probes}, ...]: every label set's figures now,
// in metricsRender's shape.
Napi::Value MetricsRows(const Napi::CallbackInfo &info) {
  Napi::Env env = info.Env();
  mcpp_metric_series *rows = nullptr;
  long n = mcpp_metrics_tally_rows(&rows);
  if (n < 0) throw Napi::Error::New(env, "out of memory");
  Napi::Array a = Napi::Array::New(env, static_cast<size_t>(n));
  for (long i = 0; i < n; i++) {
    const mcpp_metric_series &r = rows[i];
    Napi::Object o = Napi::Object::New(env);
    o.Set("peer", r.peer);
    o.Set("transport", r.transport);
    o.Set("pingsSent", static_cast<double>(r.pings_sent));
    o.Set("pongsReceived", static_cast<double>(r.pongs_received));
    o.Set("pingsAnswered", static_cast<double>(r.pings_answered));
    o.Set("stale", static_cast<double>(r.stale));
    o.Set("pingDeaf", static_cast<double>(r.ping_deaf));
    o.Set("reconnects", static_cast<double>(r.reconnects));
    o.Set("inFlight", static_cast<double>(r.in_flight));
    o.Set("failures", Numbers(env, r.failures, MCPP_METRIC_REASONS));
    o.Set("rttBuckets", Numbers(env, r.rtt_buckets, MCPP_METRIC_RTT_BOUNDS + 1));
    o.Set("rttSum", r.rtt_sum);
    o.Set("states", Numbers(env, r.states, MCPP_METRIC_STATES));
    o.Set("probes", Numbers(env, r.probes, MCPP_METRIC_PROBE_RESULTS));
    a.Set(static_cast<uint32_t>(i), o);
  }
  mcpp_metrics_rows_free(rows, static_cast<size_t>(n));
  return a;
}

}  // namespace

void InitMetrics(Napi::Env env, Napi::Object exports) {
  exports.Set("metricFamilies", Napi::Function::New(env, MetricFamilies, "metricFamilies"));
  exports.Set("metricSeriesLabels", Napi::Function::New(env, MetricSeriesLabels, "metricSeriesLabels"));
  exports.Set("metricRttBuckets", Napi::Function::New(env, MetricRttBuckets, "metricRttBuckets"));
  exports.Set("metricsRender", Napi::Function::New(env, MetricsRender, "metricsRender"));
  exports.Set("metricsCell", Napi::Function::New(env, MetricsCell, "metricsCell"));
  exports.Set("metricsRetire", Napi::Function::New(env, MetricsRetire, "metricsRetire"));
  exports.Set("metricsSetInFlight", Napi::Function::New(env, MetricsSetInFlight, "metricsSetInFlight"));
  exports.Set("metricsRows", Napi::Function::New(env, MetricsRows, "metricsRows"));
  exports.Set("metricRttGrowth", Napi::Function::New(env, MetricRttGrowth, "metricRttGrowth"));
}


mcpp_metrics_cell *CellFromJs(Napi::Env env, Napi::Value v) {
  return BoxFromJs(env, v)->cell;
}

}  // namespace mcpping_node
