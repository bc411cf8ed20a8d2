/*
 * mcpping's metrics figures counted in C, where the events happen: one
 * cell per connection (counted by the engine or the runtime as each event
 * is emitted, so no event crosses to a host to be counted), and a
 * process-wide tally that folds retired cells into a per-label total and
 * returns the rows the bindings' exporters show. Included by mcpping.h.
 */
#ifndef MCPPING_METRICS_TALLY_H
#define MCPPING_METRICS_TALLY_H

#include <stddef.h>
#include <stdint.h>

#include "mcpping/metrics.h"

#ifdef __cplusplus
extern "C" {
#endif

struct mcpp_engine;
struct mcpp_runtime;

/* One connection's figures. Every function below takes the tally's one
 * lock (process-wide, never held while calling out), so any thread may
 * call them. */
typedef struct mcpp_metrics_cell mcpp_metrics_cell;

/* A cell labelled peer and transport (copied; NULL is ""), in state
 * alive, added to the tally's open cells. NULL if out of memory. */
mcpp_metrics_cell *mcpp_metrics_cell_new(const char *peer,
                                         const char *transport);

/* Counts an event into the cell (mcpp_metric_series_observe's rule), keeps
 * its state and in-flight count, and takes an INITIALIZED event's message
 * (the server's name) as the peer label. A retired cell ignores it. */
void mcpp_metrics_cell_observe(mcpp_metrics_cell *cell,
                               const struct mcpp_event *ev);

/* Sets the in-flight gauge from the live connection (a request sent emits
 * no event). */
void mcpp_metrics_cell_set_in_flight(mcpp_metrics_cell *cell, uint64_t n);

/* Folds the cell's counts into the tally's total for its labels, takes it
 * out of the open cells and drops the caller's reference; whoever still
 * counts into it (an engine or runtime it is attached to) holds its own
 * until it detaches. NULL is ignored. */
void mcpp_metrics_cell_retire(mcpp_metrics_cell *cell);

/* Counts the engine's events into cell from now on (NULL stops it). The
 * engine holds a reference until its CLOSED event, its free, or the next
 * call. Call on the engine's thread. */
void mcpp_engine_set_metrics(struct mcpp_engine *e, mcpp_metrics_cell *cell);

/* Counts the runtime connection's events into cell as the runtime's thread
 * emits them, queued or not (so ping and pong events need not cross), until
 * its CLOSED item is queued (NULL stops it). Returns 0, MCPP_ERR_NOT_FOUND
 * or MCPP_ERR_INVALID_ARGUMENT. Any thread. */
int mcpp_runtime_set_metrics(struct mcpp_runtime *rt, uint64_t conn_id,
                             mcpp_metrics_cell *cell);

/* The rows to expose, one per (peer, transport): the retired totals plus
 * the open cells' counts, the open cells counted per state and their
 * in-flight sum; a label set with no open cell shows closed = 1. Series of
 * MCPP_METRIC_SERIES_VERSION with server NULL and peer/transport owned by
 * the array. *out is NULL when there are none; free with
 * mcpp_metrics_rows_free. Returns the count, or MCPP_ERR_NOMEM. */
long mcpp_metrics_tally_rows(mcpp_metric_series **out);
void mcpp_metrics_rows_free(mcpp_metric_series *rows, size_t n);

/* RTTs in seconds that reproduce an RTT histogram's growth from `before` to
 * `now` (per-bucket counts, MCPP_METRIC_RTT_BOUNDS + 1 each, the last +Inf)
 * whose sum grew by `sum`, for an exporter that records single values
 * (OpenTelemetry): each value lies in its bucket, as far into each as makes
 * the values sum to `sum`. Writes up to cap of them into out, bucket by
 * bucket; returns how many there are (call with cap 0 to size). */
size_t mcpp_metric_rtt_growth(const uint64_t *now, const uint64_t *before,
                              double sum, double *out, size_t cap);

#ifdef __cplusplus
}
#endif

#endif /* MCPPING_METRICS_TALLY_H */
