/*
 * mcpping's metrics, once (see mcpping/metrics.h): the families' table and
 * the Prometheus text exposition. wrap serves it; the bindings' exporters
 * read their names, help texts, labels and buckets from the table, so no
 * figure is named in two languages.
 */
#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

static const double rtt_bounds[MCPP_METRIC_RTT_BOUNDS] = {
    0.00005, 0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025,
    0.05,    0.1,    0.25,    0.5,    1.0,   2.5,    5.0,   10.0};
/* As Python's str() writes them, which prometheus_client's `le` is. */
static const char *const rtt_bound_text[MCPP_METRIC_RTT_BOUNDS] = {
    "5e-05", "0.0001", "0.00025", "0.0005", "0.001", "0.0025",
    "0.005", "0.01",   "0.025",   "0.05",   "0.1",   "0.25",
    "0.5",   "1.0",    "2.5",     "5.0",    "10.0"};
static const char *const reasons[MCPP_METRIC_REASONS + 1] = {
    "timeout", "error", "invalid", "unsupported", NULL};
static const char *const states[MCPP_METRIC_STATES + 1] = {
    "alive", "suspect", "stale", "closed", NULL};
static const char *const probe_results[MCPP_METRIC_PROBE_RESULTS + 1] = {
    "ok", "timeout", NULL};
static const char *const series_labels[] = {"server", "peer", "transport",
                                            NULL};

static const mcpp_metric_family families[MCPP_METRIC_COUNT] = {
    {"mcpping_pings_sent_total", MCPP_METRIC_COUNTER,
     "Pings sent to the peer, keepalive and manual.", "1", "pings_sent", NULL,
     NULL},
    {"mcpping_pongs_received_total", MCPP_METRIC_COUNTER,
     "Pongs received from the peer.", "1", "pongs_received", NULL, NULL},
    {"mcpping_ping_failures_total", MCPP_METRIC_COUNTER,
     "Pings that got no pong, by reason: timeout, error (a JSON-RPC error), "
     "invalid (a result that is not an object), unsupported (-32601 or "
     "-32602).",
     "1", "failures", "reason", reasons},
    {"mcpping_pings_answered_total", MCPP_METRIC_COUNTER,
     "Pings from the peer that mcpping answered.", "1", "pings_answered",
     NULL, NULL},
    {"mcpping_stale_total", MCPP_METRIC_COUNTER,
     "Times the peer was declared stale.", "1", "stale", NULL, NULL},
    {"mcpping_ping_deaf_total", MCPP_METRIC_COUNTER,
     "Times the peer was found ping-deaf: pings failed, a probe was "
     "answered.",
     "1", "ping_deaf", NULL, NULL},
    {"mcpping_reconnects_total", MCPP_METRIC_COUNTER,
     "Reconnects to the peer.", "1", "reconnects", NULL, NULL},
    {"mcpping_ping_rtt_seconds", MCPP_METRIC_HISTOGRAM,
     "Round-trip time of answered pings, in seconds.", "s", "rtt_buckets", NULL,
     NULL},
    {"mcpping_peer_state", MCPP_METRIC_GAUGE,
     "Connections to the peer in each state; closed is 1 once none is open.",
     "1", "states", "state", states},
    {"mcpping_in_flight_requests", MCPP_METRIC_GAUGE,
     "Application requests awaiting an answer from the peer.", "1",
     "in_flight", NULL, NULL},
    {"mcpping_probes_total", MCPP_METRIC_COUNTER,
     "Idle probes sent where there is no ping (no ping in the protocol, or "
     "the peer ping-deaf), by result: ok (answered, an error answer "
     "included), timeout.",
     "1", "probes", "result", probe_results},
};

const mcpp_metric_family *mcpp_metric_family_at(int id) {
  return id >= 0 && id < MCPP_METRIC_COUNT ? &families[id] : NULL;
}

const char *mcpp_metric_kind_name(mcpp_metric_kind kind) {
  switch (kind) {
  case MCPP_METRIC_COUNTER: return "counter";
  case MCPP_METRIC_GAUGE: return "gauge";
  case MCPP_METRIC_HISTOGRAM: return "histogram";
  }
  return NULL;
}

const char *const *mcpp_metric_series_labels(void) { return series_labels; }

const double *mcpp_metric_rtt_bounds(void) { return rtt_bounds; }

const char *mcpp_metric_rtt_bound_text(int i) {
  return i >= 0 && i < MCPP_METRIC_RTT_BOUNDS ? rtt_bound_text[i] : NULL;
}

int mcpp_metric_rtt_bucket(double rtt) {
  int i = 0;
  while (i < MCPP_METRIC_RTT_BOUNDS && rtt > rtt_bounds[i]) i++;
  return i;
}

int mcpp_metric_event_figure(const mcpp_event *ev, int *value) {
  *value = 0;
  switch (ev->type) {
  case MCPP_EV_PING: return MCPP_METRIC_PINGS_SENT;
  case MCPP_EV_PONG: return MCPP_METRIC_PONGS_RECEIVED;
  case MCPP_EV_TIMEOUT:
    /* A ping still out when the connection closes was abandoned. */
    if (ev->state == MCPP_STATE_CLOSED) return -1;
    *value = 0;
    return MCPP_METRIC_PING_FAILURES;
  case MCPP_EV_PING_ERROR:
    *value = ev->invalid ? 2 : 1;
    return MCPP_METRIC_PING_FAILURES;
  case MCPP_EV_UNSUPPORTED:
    /* Only a refused ping; a protocol version without ping sent none. */
    if (!ev->ping_seq) return -1;
    *value = 3;
    return MCPP_METRIC_PING_FAILURES;
  case MCPP_EV_PING_ANSWERED: return MCPP_METRIC_PINGS_ANSWERED;
  case MCPP_EV_STALE: return MCPP_METRIC_STALE;
  case MCPP_EV_PING_DEAF: return MCPP_METRIC_PING_DEAF;
  case MCPP_EV_RECONNECTED: return MCPP_METRIC_RECONNECTS;
  case MCPP_EV_PROBE_OK: return MCPP_METRIC_PROBES;
  case MCPP_EV_PROBE_TIMEOUT:
    /* As for a ping: a probe still out at close was abandoned, not lost. */
    if (ev->state == MCPP_STATE_CLOSED) return -1;
    *value = 1;
    return MCPP_METRIC_PROBES;
  default: return -1;
  }
}

/* The size of a series of that version (the array's stride), 0 if the
 * version is unknown. */
static size_t series_size(int version) {
  switch (version) {
  case MCPP_METRIC_SERIES_V1: return offsetof(mcpp_metric_series, probes);
  case MCPP_METRIC_SERIES_V2: return sizeof(mcpp_metric_series);
  default: return 0;
  }
}

/* The families a series of that version has: V1's end before probes. */
static int family_count(int version) {
  return version == MCPP_METRIC_SERIES_V1 ? MCPP_METRIC_PROBES
                                          : MCPP_METRIC_COUNT;
}

void mcpp_metric_series_observe_versioned(int version, mcpp_metric_series *s,
                                          const mcpp_event *ev) {
  int value;
  if (s == NULL || series_size(version) == 0) return;
  int id = mcpp_metric_event_figure(ev, &value);
  if (id >= family_count(version)) return;
  if (id == MCPP_METRIC_PING_FAILURES) s->failures[value]++;
  else if (id == MCPP_METRIC_PROBES) s->probes[value]++;
  else if (id == MCPP_METRIC_PONGS_RECEIVED) {
    double rtt = (double)ev->rtt_us / 1e6;
    s->rtt_buckets[mcpp_metric_rtt_bucket(rtt)]++;
    s->rtt_sum += rtt;
    s->pongs_received++;
  } else if (id >= 0) {
    uint64_t *counter[MCPP_METRIC_COUNT] = {
        [MCPP_METRIC_PINGS_SENT] = &s->pings_sent,
        [MCPP_METRIC_PINGS_ANSWERED] = &s->pings_answered,
        [MCPP_METRIC_STALE] = &s->stale,
        [MCPP_METRIC_PING_DEAF] = &s->ping_deaf,
        [MCPP_METRIC_RECONNECTS] = &s->reconnects};
    if (counter[id]) (*counter[id])++;
  }
}

/* Help text: a backslash and a newline escaped (quotes stay). */
static void put_help_text(mcpp__sb *sb, const char *s) {
  for (; *s; s++) {
    if (*s == '\\') mcpp__sb_puts(sb, "\\\\");
    else if (*s == '\n') mcpp__sb_puts(sb, "\\n");
    else mcpp__sb_putc(sb, *s);
  }
}

/* Label value: a backslash, a double quote and a newline escaped. */
static void put_label_value(mcpp__sb *sb, const char *s) {
  for (; s && *s; s++) {
    if (*s == '\\') mcpp__sb_puts(sb, "\\\\");
    else if (*s == '"') mcpp__sb_puts(sb, "\\\"");
    else if (*s == '\n') mcpp__sb_puts(sb, "\\n");
    else mcpp__sb_putc(sb, *s);
  }
}

static void put_label(mcpp__sb *sb, const char *name, const char *value) {
  mcpp__sb_puts(sb, name);
  mcpp__sb_puts(sb, "=\"");
  put_label_value(sb, value);
  mcpp__sb_putc(sb, '"');
}

/* name[suffix]{server,peer,transport[,key=value]} */
static void put_series(mcpp__sb *sb, const char *name, const char *suffix,
                       const mcpp_metric_series *s, const char *key,
                       const char *value) {
  mcpp__sb_puts(sb, name);
  if (suffix) mcpp__sb_puts(sb, suffix);
  mcpp__sb_putc(sb, '{');
  if (s->server) {
    put_label(sb, "server", s->server);
    mcpp__sb_putc(sb, ',');
  }
  put_label(sb, "peer", s->peer);
  mcpp__sb_putc(sb, ',');
  put_label(sb, "transport", s->transport);
  if (key) {
    mcpp__sb_putc(sb, ',');
    put_label(sb, key, value);
  }
  mcpp__sb_puts(sb, "} ");
}

static void put_u64_line(mcpp__sb *sb, uint64_t v) {
  mcpp__sb_u64(sb, v);
  mcpp__sb_putc(sb, '\n');
}

/* The shortest text that reads back as v (as Python's repr), so a sum
 * loses nothing. */
static void put_double_line(mcpp__sb *sb, double v) {
  char text[40];
  if (isnan(v)) snprintf(text, sizeof text, "NaN");
  else if (isinf(v)) snprintf(text, sizeof text, v > 0 ? "+Inf" : "-Inf");
  else
    for (int prec = 1; prec <= 17; prec++) {
      snprintf(text, sizeof text, "%.*g", prec, v);
      if (strtod(text, NULL) == v) break;
    }
  mcpp__sb_puts(sb, text);
  mcpp__sb_putc(sb, '\n');
}

static uint64_t scalar(const mcpp_metric_series *s, int id) {
  switch (id) {
  case MCPP_METRIC_PINGS_SENT: return s->pings_sent;
  case MCPP_METRIC_PONGS_RECEIVED: return s->pongs_received;
  case MCPP_METRIC_PINGS_ANSWERED: return s->pings_answered;
  case MCPP_METRIC_STALE: return s->stale;
  case MCPP_METRIC_PING_DEAF: return s->ping_deaf;
  case MCPP_METRIC_RECONNECTS: return s->reconnects;
  default: return s->in_flight;
  }
}

/* A labelled family's values, one per label value. */
static const uint64_t *values_of(const mcpp_metric_series *s, int id) {
  switch (id) {
  case MCPP_METRIC_PING_FAILURES: return s->failures;
  case MCPP_METRIC_PROBES: return s->probes;
  default: return s->states;
  }
}

static void put_family(mcpp__sb *sb, int id, const char *series,
                       size_t stride, size_t n) {
  const mcpp_metric_family *f = &families[id];
  mcpp__sb_puts(sb, "# HELP ");
  mcpp__sb_puts(sb, f->name);
  mcpp__sb_putc(sb, ' ');
  put_help_text(sb, f->help);
  mcpp__sb_puts(sb, "\n# TYPE ");
  mcpp__sb_puts(sb, f->name);
  mcpp__sb_putc(sb, ' ');
  mcpp__sb_puts(sb, mcpp_metric_kind_name(f->kind));
  mcpp__sb_putc(sb, '\n');
  for (size_t k = 0; k < n; k++) {
    const mcpp_metric_series *s =
        (const mcpp_metric_series *)(const void *)(series + k * stride);
    if (id == MCPP_METRIC_PING_RTT) {
      uint64_t cumulative = 0;
      for (int i = 0; i <= MCPP_METRIC_RTT_BOUNDS; i++) {
        cumulative += s->rtt_buckets[i];
        put_series(sb, f->name, "_bucket", s, "le",
                   i < MCPP_METRIC_RTT_BOUNDS ? rtt_bound_text[i] : "+Inf");
        put_u64_line(sb, cumulative);
      }
      put_series(sb, f->name, "_count", s, NULL, NULL);
      put_u64_line(sb, cumulative);
      put_series(sb, f->name, "_sum", s, NULL, NULL);
      put_double_line(sb, s->rtt_sum);
    } else if (f->values) {
      const uint64_t *v = values_of(s, id);
      for (int i = 0; f->values[i]; i++) {
        put_series(sb, f->name, NULL, s, f->label, f->values[i]);
        put_u64_line(sb, v[i]);
      }
    } else {
      put_series(sb, f->name, NULL, s, NULL, NULL);
      put_u64_line(sb, scalar(s, id));
    }
  }
}

size_t mcpp_metrics_render_versioned(int version,
                                     const mcpp_metric_series *series,
                                     size_t n, char *out, size_t cap) {
  size_t stride = series_size(version);
  if (stride == 0) {
    if (cap > 0) out[0] = '\0';
    return 0;
  }
  mcpp__sb sb;
  mcpp__sb_init(&sb, out, cap);
  for (int id = 0; id < family_count(version); id++)
    put_family(&sb, id, (const char *)series, stride, n);
  return sb.len;
}

/* The symbols a program built before series versions calls: V1. */
#undef mcpp_metrics_render
#undef mcpp_metric_series_observe

size_t mcpp_metrics_render(const mcpp_metric_series *series, size_t n,
                           char *out, size_t cap) {
  return mcpp_metrics_render_versioned(MCPP_METRIC_SERIES_V1, series, n, out,
                                       cap);
}

void mcpp_metric_series_observe(mcpp_metric_series *s, const mcpp_event *ev) {
  mcpp_metric_series_observe_versioned(MCPP_METRIC_SERIES_V1, s, ev);
}
