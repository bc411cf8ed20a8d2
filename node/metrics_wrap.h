// mcpping's metrics for JavaScript (metrics_wrap.cc): metrics.c's table of
// families, labels and RTT buckets, and its Prometheus renderer. The JS
// adapters (prom-client, OpenTelemetry) name nothing themselves.
#ifndef MCPPING_NODE_METRICS_WRAP_H
#define MCPPING_NODE_METRICS_WRAP_H

#include <napi.h>

#include "mcpping.h"

namespace mcpping_node {

// Adds metricFamilies, metricSeriesLabels, metricRttBuckets,
// metricsRender and the tally's metricsCell,
// metricsRetire, metricsSetInFlight, metricsRows and metricRttGrowth to
// exports.
void InitMetrics(Napi::Env env, Napi::Object exports);

// The C cell of a metricsCell() value (counting goes on until it is
// retired); throws a TypeError for anything else.
mcpp_metrics_cell *CellFromJs(Napi::Env env, Napi::Value v);

}  // namespace mcpping_node

#endif
