/*
 * mcpping's metrics, defined once: the table of metric families (name,
 * kind, help, labels, buckets) and the Prometheus text exposition of the
 * figures of any number of connections. wrap's /metrics serves it; the
 * Python and Node adapters (prometheus_client, prom-client, OpenTelemetry)
 * read their names, help texts, labels and buckets from this table.
 * Included by mcpping.h.
 */
#ifndef MCPPING_METRICS_H
#define MCPPING_METRICS_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

struct mcpp_event;

typedef enum mcpp_metric_kind {
  MCPP_METRIC_COUNTER = 0,
  MCPP_METRIC_GAUGE = 1,
  MCPP_METRIC_HISTOGRAM = 2
} mcpp_metric_kind;

/* The families, in the order they are exposed; the value is the index
 * for mcpp_metric_family_at. */
typedef enum mcpp_metric_id {
  MCPP_METRIC_PINGS_SENT = 0,
  MCPP_METRIC_PONGS_RECEIVED,
  MCPP_METRIC_PING_FAILURES,
  MCPP_METRIC_PINGS_ANSWERED,
  MCPP_METRIC_STALE,
  MCPP_METRIC_PING_DEAF,
  MCPP_METRIC_RECONNECTS,
  MCPP_METRIC_PING_RTT,
  MCPP_METRIC_PEER_STATE,
  MCPP_METRIC_IN_FLIGHT,
  MCPP_METRIC_COUNT
} mcpp_metric_id;

/* Bucket upper bounds of the RTT histogram (+Inf not counted). */
#define MCPP_METRIC_RTT_BOUNDS 17
/* Values of mcpping_ping_failures_total's "reason" label. */
#define MCPP_METRIC_REASONS 4
/* Values of mcpping_peer_state's "state" label (mcpp_state's names). */
#define MCPP_METRIC_STATES 4

typedef struct mcpp_metric_family {
  const char *name;      /* "mcpping_pings_sent_total" */
  mcpp_metric_kind kind;
  const char *help;
  const char *unit;      /* OpenTelemetry's unit: "1" or "s" */
  const char *field;     /* the figure it shows: an mcpp_metric_series
                            field's name ("pings_sent", "failures", ...) */
  const char *label;     /* its own label beside the connection's
                            ("reason", "state"), or NULL */
  const char *const *values; /* that label's values, NULL-terminated */
} mcpp_metric_family;

/* The family at index id (an mcpp_metric_id), or NULL past the end. */
const mcpp_metric_family *mcpp_metric_family_at(int id);

/* "counter", "gauge" or "histogram"; NULL for an unknown kind. */
const char *mcpp_metric_kind_name(mcpp_metric_kind kind);

/* The connection's labels, NULL-terminated, in the order they are
 * exposed: "server" (the config entry's name; left out of a series whose
 * server is NULL), "peer", "transport". */
const char *const *mcpp_metric_series_labels(void);

/* The RTT histogram's bounds in seconds (MCPP_METRIC_RTT_BOUNDS of them,
 * ascending), and each as the `le` label writes it ("5e-05", "1.0"). */
const double *mcpp_metric_rtt_bounds(void);
const char *mcpp_metric_rtt_bound_text(int i);

/* The index of the bucket an RTT of rtt seconds falls in: the first bound
 * it does not exceed, or MCPP_METRIC_RTT_BOUNDS (+Inf). */
int mcpp_metric_rtt_bucket(double rtt);

/* One label set's figures: one connection, or the sum of several. */
typedef struct mcpp_metric_series {
  const char *server;    /* the config entry's name, or NULL: no label */
  const char *peer;      /* required (NULL is written as "") */
  const char *transport; /* required (NULL is written as "") */
  uint64_t pings_sent, pongs_received, pings_answered, stale, ping_deaf,
      reconnects;
  uint64_t failures[MCPP_METRIC_REASONS];
  /* Per bucket, not cumulative; the last one is +Inf. The histogram's
   * count is their sum. */
  uint64_t rtt_buckets[MCPP_METRIC_RTT_BOUNDS + 1];
  double rtt_sum;
  uint64_t states[MCPP_METRIC_STATES]; /* connections in each state */
  uint64_t in_flight;
} mcpp_metric_series;

/* Which figure an engine event adds one to: an mcpp_metric_id, with the
 * index of its label's value in *value for a family that has one
 * (failures: the reason), or -1 for none. A ping sent, a pong (whose RTT
 * also goes into the histogram), a failure by reason (a ping still out
 * when the connection closes was abandoned, not lost; "unsupported" only
 * for a refused ping), an answered ping, stale, ping-deaf, a reconnect. */
int mcpp_metric_event_figure(const struct mcpp_event *ev, int *value);

/* Counts an engine event into s's counters and histogram as
 * mcpp_metric_event_figure says (not states or in_flight, which the owner
 * sets from the live connection). */
void mcpp_metric_series_observe(mcpp_metric_series *s,
                                const struct mcpp_event *ev);

/* Writes every family for series[0..n) as Prometheus text (format 0.0.4:
 * "# HELP" and "# TYPE", counters and gauges, a histogram's cumulative
 * _bucket{le} lines, +Inf, _sum and _count; label values and help texts
 * escaped) into out, NUL-terminated if cap > 0. Returns the length of the
 * whole text without the NUL, as snprintf: call with cap 0 to size. */
size_t mcpp_metrics_render(const mcpp_metric_series *series, size_t n,
                           char *out, size_t cap);

#ifdef __cplusplus
}
#endif

#endif /* MCPPING_METRICS_H */
