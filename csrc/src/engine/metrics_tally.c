/*
 * The metrics figures counted where the events happen (see
 * mcpping/metrics_tally.h): per-connection cells, the retired totals per
 * label set, and the rows the exporters read. One mutex guards all of it:
 * an event takes it once, uncontended but for a scrape.
 */
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "engine.h"
#include "mcpping/metrics_tally.h"
#include "metrics_tally_internal.h"

struct mcpp_metrics_cell {
  mcpp_metric_series s; /* counts only; peer/transport are the fields below */
  char *peer, *transport;
  mcpp_state state;
  uint64_t in_flight;
  int refs;    /* the binding's, plus one per engine or runtime attached */
  int retired; /* folded into a total; counts nothing more */
  struct mcpp_metrics_cell *prev, *next; /* the open cells, oldest first */
};

/* A label set's retired counts. */
typedef struct total {
  mcpp_metric_series s;
  char *peer, *transport;
  struct total *next; /* oldest first, so rows keep their order */
} total;

static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static mcpp_metrics_cell *open_head, *open_tail;
static total *totals_head, *totals_tail;
/* Slots holding a cell: while none does (metrics never turned on), an
 * event costs one relaxed load, not the lock. */
static _Atomic long attached;

static char *dup_text(const char *s) {
  if (s == NULL) s = "";
  size_t n = strlen(s) + 1;
  char *d = malloc(n);
  if (d) memcpy(d, s, n);
  return d;
}

static void add_counts(mcpp_metric_series *to, const mcpp_metric_series *from) {
  to->pings_sent += from->pings_sent;
  to->pongs_received += from->pongs_received;
  to->pings_answered += from->pings_answered;
  to->stale += from->stale;
  to->ping_deaf += from->ping_deaf;
  to->reconnects += from->reconnects;
  for (int i = 0; i < MCPP_METRIC_REASONS; i++) to->failures[i] += from->failures[i];
  for (int i = 0; i <= MCPP_METRIC_RTT_BOUNDS; i++)
    to->rtt_buckets[i] += from->rtt_buckets[i];
  to->rtt_sum += from->rtt_sum;
  for (int i = 0; i < MCPP_METRIC_PROBE_RESULTS; i++) to->probes[i] += from->probes[i];
}

/* Under mu. */
static void unref_locked(mcpp_metrics_cell *c) {
  if (--c->refs > 0) return;
  free(c->peer);
  free(c->transport);
  free(c);
}

mcpp_metrics_cell *mcpp_metrics_cell_new(const char *peer,
                                         const char *transport) {
  mcpp_metrics_cell *c = calloc(1, sizeof *c);
  if (c == NULL) return NULL;
  c->peer = dup_text(peer);
  c->transport = dup_text(transport);
  if (c->peer == NULL || c->transport == NULL) {
    free(c->peer);
    free(c->transport);
    free(c);
    return NULL;
  }
  c->state = MCPP_STATE_ALIVE;
  c->refs = 1;
  pthread_mutex_lock(&mu);
  c->prev = open_tail;
  if (open_tail) open_tail->next = c;
  else open_head = c;
  open_tail = c;
  pthread_mutex_unlock(&mu);
  return c;
}

static void observe_locked(mcpp_metrics_cell *c, const mcpp_event *ev) {
  if (c->retired) return;
  mcpp_metric_series_observe_versioned(MCPP_METRIC_SERIES_VERSION, &c->s, ev);
  c->state = ev->state;
  c->in_flight = ev->in_flight;
  if (ev->type == MCPP_EV_INITIALIZED && ev->message && *ev->message) {
    char *name = dup_text(ev->message);
    if (name) {
      free(c->peer);
      c->peer = name;
    }
  }
}

void mcpp_metrics_cell_observe(mcpp_metrics_cell *cell, const mcpp_event *ev) {
  if (cell == NULL || ev == NULL) return;
  pthread_mutex_lock(&mu);
  observe_locked(cell, ev);
  pthread_mutex_unlock(&mu);
}

void mcpp_metrics_cell_set_in_flight(mcpp_metrics_cell *cell, uint64_t n) {
  if (cell == NULL) return;
  pthread_mutex_lock(&mu);
  cell->in_flight = n;
  pthread_mutex_unlock(&mu);
}

static total *total_for_locked(const char *peer, const char *transport) {
  for (total *t = totals_head; t; t = t->next)
    if (strcmp(t->peer, peer) == 0 && strcmp(t->transport, transport) == 0)
      return t;
  total *t = calloc(1, sizeof *t);
  if (t == NULL) return NULL;
  t->peer = dup_text(peer);
  t->transport = dup_text(transport);
  if (t->peer == NULL || t->transport == NULL) {
    free(t->peer);
    free(t->transport);
    free(t);
    return NULL;
  }
  if (totals_tail) totals_tail->next = t;
  else totals_head = t;
  totals_tail = t;
  return t;
}

void mcpp_metrics_cell_retire(mcpp_metrics_cell *cell) {
  if (cell == NULL) return;
  pthread_mutex_lock(&mu);
  if (!cell->retired) {
    cell->retired = 1;
    total *t = total_for_locked(cell->peer, cell->transport);
    /* Out of memory, the closed counts are lost rather than the process. */
    if (t) add_counts(&t->s, &cell->s);
    if (cell->prev) cell->prev->next = cell->next;
    else open_head = cell->next;
    if (cell->next) cell->next->prev = cell->prev;
    else open_tail = cell->prev;
    cell->prev = cell->next = NULL;
  }
  unref_locked(cell);
  pthread_mutex_unlock(&mu);
}

void mcpp__metrics_slot_set(mcpp_metrics_cell **slot, mcpp_metrics_cell *cell) {
  pthread_mutex_lock(&mu);
  if (cell) {
    cell->refs++;
    atomic_fetch_add_explicit(&attached, 1, memory_order_relaxed);
  }
  if (*slot) {
    unref_locked(*slot);
    atomic_fetch_sub_explicit(&attached, 1, memory_order_relaxed);
  }
  *slot = cell;
  pthread_mutex_unlock(&mu);
}

void mcpp__metrics_slot_observe(mcpp_metrics_cell **slot, const mcpp_event *ev) {
  /* A slot attached a moment ago may be missed once: it counts from its
   * next event (a detach at CLOSED then comes from the owner's free). */
  if (atomic_load_explicit(&attached, memory_order_relaxed) == 0) return;
  pthread_mutex_lock(&mu);
  mcpp_metrics_cell *c = *slot;
  if (c) {
    observe_locked(c, ev);
    /* The last event: whoever attached the cell may now retire it. */
    if (ev->type == MCPP_EV_CLOSED) {
      *slot = NULL;
      unref_locked(c);
      atomic_fetch_sub_explicit(&attached, 1, memory_order_relaxed);
    }
  }
  pthread_mutex_unlock(&mu);
}

void mcpp_engine_set_metrics(mcpp_engine *e, mcpp_metrics_cell *cell) {
  if (e) mcpp__metrics_slot_set(&e->metrics, cell);
}

/* A row per label set, found by its labels (a handful of label sets: a
 * linear search). */
static mcpp_metric_series *row_for(mcpp_metric_series *rows, size_t *n,
                                   const char *peer, const char *transport) {
  for (size_t i = 0; i < *n; i++)
    if (strcmp(rows[i].peer, peer) == 0 &&
        strcmp(rows[i].transport, transport) == 0)
      return &rows[i];
  mcpp_metric_series *r = &rows[(*n)++];
  memset(r, 0, sizeof *r);
  r->peer = peer;
  r->transport = transport;
  return r;
}

long mcpp_metrics_tally_rows(mcpp_metric_series **out) {
  *out = NULL;
  pthread_mutex_lock(&mu);
  size_t cap = 0, n = 0;
  for (total *t = totals_head; t; t = t->next) cap++;
  for (mcpp_metrics_cell *c = open_head; c; c = c->next) cap++;
  mcpp_metric_series *rows = cap ? calloc(cap, sizeof *rows) : NULL;
  if (cap && rows == NULL) {
    pthread_mutex_unlock(&mu);
    return MCPP_ERR_NOMEM;
  }
  /* Labels point into the tally until copied below, still under mu. */
  for (total *t = totals_head; t; t = t->next)
    add_counts(row_for(rows, &n, t->peer, t->transport), &t->s);
  for (mcpp_metrics_cell *c = open_head; c; c = c->next) {
    mcpp_metric_series *r = row_for(rows, &n, c->peer, c->transport);
    add_counts(r, &c->s);
    if ((int)c->state >= 0 && c->state < MCPP_METRIC_STATES) r->states[c->state]++;
    r->in_flight += c->in_flight;
  }
  int failed = 0;
  for (size_t i = 0; i < n; i++) {
    mcpp_metric_series *r = &rows[i];
    r->peer = dup_text(r->peer);
    r->transport = dup_text(r->transport);
    if (r->peer == NULL || r->transport == NULL) failed = 1;
    int open = 0;
    for (int k = 0; k < MCPP_METRIC_STATES; k++) open |= r->states[k] != 0;
    if (!open) r->states[MCPP_STATE_CLOSED] = 1;
  }
  pthread_mutex_unlock(&mu);
  if (failed) {
    mcpp_metrics_rows_free(rows, n);
    return MCPP_ERR_NOMEM;
  }
  *out = rows;
  return (long)n;
}

void mcpp_metrics_rows_free(mcpp_metric_series *rows, size_t n) {
  if (rows == NULL) return;
  for (size_t i = 0; i < n; i++) {
    free((char *)rows[i].peer);
    free((char *)rows[i].transport);
  }
  free(rows);
}

size_t mcpp_metric_rtt_growth(const uint64_t *now, const uint64_t *before,
                              double sum, double *out, size_t cap) {
  const double *hi = mcpp_metric_rtt_bounds();
  const int n = MCPP_METRIC_RTT_BOUNDS;
  uint64_t over = 0;
  double low = 0, high = 0;
  size_t count = 0;
  for (int i = 0; i <= n; i++) {
    uint64_t k = now[i] > before[i] ? now[i] - before[i] : 0;
    count += k;
    if (i == n) {
      over = k;
    } else {
      low += (double)k * (i ? hi[i - 1] : 0);
      high += (double)k * hi[i];
    }
  }
  /* With values past the last bound, the finite ones sit at their bounds
   * and those take the rest; else one fraction t of each bucket's width. */
  double t = 1, rest = 0;
  if (over) {
    rest = (sum - high) / (double)over;
  } else if (high > low) {
    t = (sum - low) / (high - low);
    if (t > 1) t = 1;
    if (t < 1e-9) t = 1e-9;
  }
  size_t w = 0;
  for (int i = 0; i <= n; i++) {
    uint64_t k = now[i] > before[i] ? now[i] - before[i] : 0;
    double lo = i ? hi[i - 1] : 0;
    double v = i == n ? rest : lo + t * (hi[i] - lo);
    for (uint64_t j = 0; j < k; j++, w++)
      if (w < cap) out[w] = v;
  }
  return count;
}

void mcpp__metrics_tally_reset(void) {
  pthread_mutex_lock(&mu);
  while (open_head) {
    mcpp_metrics_cell *c = open_head;
    open_head = c->next;
    c->prev = c->next = NULL;
    c->retired = 1; /* its owner still holds and retires it */
  }
  open_tail = NULL;
  while (totals_head) {
    total *t = totals_head;
    totals_head = t->next;
    free(t->peer);
    free(t->transport);
    free(t);
  }
  totals_tail = NULL;
  pthread_mutex_unlock(&mu);
}
