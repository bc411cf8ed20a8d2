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
  MCPP_METRIC_PROBES, /* series version 2 on (see below) */
  MCPP_METRIC_COUNT
} mcpp_metric_id;

/* Bucket upper bounds of the RTT histogram (+Inf not counted). */
#define MCPP_METRIC_RTT_BOUNDS 17
/* Values of mcpping_ping_failures_total's "reason" label. */
#define MCPP_METRIC_REASONS 4
/* Values of mcpping_peer_state's "state" label (mcpp_state's names). */
#define MCPP_METRIC_STATES 4
/* Values of mcpping_probes_total's "result" label: ok, timeout. */
#define MCPP_METRIC_PROBE_RESULTS 2

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

/* Series versions, as for engine info (mcpping/settings.h): the struct
 * only grows at its end, and the functions that take series are called
 * through the macros below, which pass the version of the caller's header.
 * The library then reads and writes only that version's fields, and steps
 * through an array by that version's size. V1 is the layout before
 * `probes` (whose family is left out of a V1 render); mcpp_metrics_render
 * and mcpp_metric_series_observe called by symbol, as a program built
 * before versions does, are V1. The version is the call's, not a field:
 * series come zeroed in arrays, where a field would say V1 by accident. */
#define MCPP_METRIC_SERIES_V1 1
#define MCPP_METRIC_SERIES_V2 2
#define MCPP_METRIC_SERIES_VERSION MCPP_METRIC_SERIES_V2

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
  /* V2: idle probes by result (ok, timeout). */
  uint64_t probes[MCPP_METRIC_PROBE_RESULTS];
} mcpp_metric_series;

/* Which figure an engine event adds one to: an mcpp_metric_id, with the
 * index of its label's value in *value for a family that has one
 * (failures: the reason; probes: the result), or -1 for none. A ping sent,
 * a pong (whose RTT also goes into the histogram), a failure by reason (a
 * ping still out when the connection closes was abandoned, not lost;
 * "unsupported" only for a refused ping), an answered ping, stale,
 * ping-deaf, a reconnect, a probe answered (ok, an error answer included)
 * or timed out. A probe still out at close is not a timeout: the engine
 * drops it without an event, and a PROBE_TIMEOUT in state closed would be
 * left out as a ping's TIMEOUT is. */
int mcpp_metric_event_figure(const struct mcpp_event *ev, int *value);

/* Counts an engine event into s's counters and histogram as
 * mcpp_metric_event_figure says (not states or in_flight, which the owner
 * sets from the live connection). s is of series_version; an unknown
 * version is left untouched. Call it through mcpp_metric_series_observe. */
void mcpp_metric_series_observe_versioned(int series_version,
                                          mcpp_metric_series *s,
                                          const struct mcpp_event *ev);
/* The V1 entry point, for programs built before series had a version
 * (declared before the macro, which sends new code to the versioned one). */
void mcpp_metric_series_observe(mcpp_metric_series *s, const struct mcpp_event *ev);
#define mcpp_metric_series_observe(s, ev)                                     \
  mcpp_metric_series_observe_versioned(MCPP_METRIC_SERIES_VERSION, (s), (ev))

/* Writes every family for series[0..n) as Prometheus text (format 0.0.4:
 * "# HELP" and "# TYPE", counters and gauges, a histogram's cumulative
 * _bucket{le} lines, +Inf, _sum and _count; label values and help texts
 * escaped) into out, NUL-terminated if cap > 0. Returns the length of the
 * whole text without the NUL, as snprintf: call with cap 0 to size. The
 * series are of series_version; an unknown version writes nothing and
 * returns 0. Call it through mcpp_metrics_render. */
size_t mcpp_metrics_render_versioned(int series_version,
                                     const mcpp_metric_series *series,
                                     size_t n, char *out, size_t cap);
/* The V1 entry point, as mcpp_metric_series_observe's. */
size_t mcpp_metrics_render(const mcpp_metric_series *series, size_t n, char *out,
                           size_t cap);
#define mcpp_metrics_render(series, n, out, cap)                              \
  mcpp_metrics_render_versioned(MCPP_METRIC_SERIES_VERSION, (series), (n),    \
                                (out), (cap))

#ifdef __cplusplus
}
#endif

#endif /* MCPPING_METRICS_H */
