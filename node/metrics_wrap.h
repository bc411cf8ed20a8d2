// mcpping's metrics for JavaScript (metrics_wrap.cc): metrics.c's table of
// families, labels and RTT buckets, and its Prometheus renderer. The JS
// adapters (prom-client, OpenTelemetry) name nothing themselves.
#ifndef MCPPING_NODE_METRICS_WRAP_H
#define MCPPING_NODE_METRICS_WRAP_H

#include <napi.h>

namespace mcpping_node {

// Adds metricFamilies, metricSeriesLabels, metricRttBuckets,
// metricEventFigures and metricsRender to exports.
void InitMetrics(Napi::Env env, Napi::Object exports);

}  // namespace mcpping_node

#endif
