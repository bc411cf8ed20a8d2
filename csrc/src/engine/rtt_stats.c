/* RTT statistics (see mcpping.h): the one implementation behind both
 * bindings' stats and both command lines' summaries. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

struct mcpp_rtt_stats {
  const mcpp_allocator *alloc;
  uint64_t sent, received, lost;
  uint64_t n;
  double min, max, sum, mean, m2;
  double *ring;   /* the most recent RTTs */
  double *sorted; /* the ring sorted, valid while !dirty; lazily allocated */
  uint32_t window, next;
  int dirty;
};

int mcpp_rtt_stats_new(mcpp_rtt_stats **out, uint32_t window,
                       const mcpp_allocator *alloc) {
  if (out == NULL) return MCPP_ERR_INVALID_ARGUMENT;
  *out = NULL;
  if (window == 0) window = MCPP_RTT_WINDOW;
  if (window > MCPP_MAX_RTT_WINDOW) return MCPP_ERR_INVALID_ARGUMENT;
  if (alloc == NULL) alloc = mcpp_default_allocator();
  mcpp_rtt_stats *st = mcpp__malloc(alloc, sizeof *st);
  if (st == NULL) return MCPP_ERR_NOMEM;
  memset(st, 0, sizeof *st);
  st->alloc = alloc;
  st->window = window;
  st->min = INFINITY;
  st->max = -INFINITY;
  st->ring = mcpp__malloc(alloc, (size_t)window * sizeof *st->ring);
  if (st->ring == NULL) {
    mcpp__free(alloc, st);
    return MCPP_ERR_NOMEM;
  }
  *out = st;
  return 0;
}

void mcpp_rtt_stats_free(mcpp_rtt_stats *st) {
  if (st == NULL) return;
  mcpp__free(st->alloc, st->ring);
  mcpp__free(st->alloc, st->sorted);
  mcpp__free(st->alloc, st);
}

void mcpp_rtt_stats_add(mcpp_rtt_stats *st, double rtt) {
  if (st == NULL) return;
  st->received++;
  st->n++;
  if (rtt < st->min) st->min = rtt;
  if (rtt > st->max) st->max = rtt;
  st->sum += rtt;
  /* Welford: the running mean and sum of squared deviations. */
  double delta = rtt - st->mean;
  st->mean += delta / (double)st->n;
  st->m2 += delta * (rtt - st->mean);
  st->ring[st->next] = rtt;
  st->next = (st->next + 1) % st->window;
  st->dirty = 1;
}

void mcpp_rtt_stats_observe(mcpp_rtt_stats *st, const mcpp_event *ev,
                            double us_per_unit) {
  if (st == NULL || !mcpp__event_readable(ev)) return;
  if (ev->type == MCPP_EV_PING) {
    st->sent++;
    return;
  }
  mcpp_ping_outcome o = mcpp_event_outcome(ev);
  if (o == MCPP_OUTCOME_PONG)
    mcpp_rtt_stats_add(st, (double)ev->rtt_us / us_per_unit);
  else if (mcpp_outcome_is_lost(o))
    st->lost++;
}

static int by_value(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

/* The nearest-rank percentile of n ascending values (n > 0). */
static double nearest_rank(const double *v, size_t n, double pct) {
  double k = ceil(pct / 100.0 * (double)n);
  size_t rank = k < 1 ? 1 : (size_t)k;
  return v[rank - 1];
}

static size_t filled(const mcpp_rtt_stats *st) {
  return st->n < st->window ? (size_t)st->n : st->window;
}

void mcpp_rtt_stats_summary(mcpp_rtt_stats *st, mcpp_rtt_summary *out) {
  memset(out, 0, sizeof *out);
  out->min = out->avg = out->max = out->mdev = out->p50 = out->p99 = NAN;
  if (st == NULL) return;
  out->sent = st->sent;
  out->received = st->received;
  out->lost = st->lost;
  uint64_t done = st->received + st->lost;
  out->loss_pct = done ? (double)st->lost / (double)done * 100.0 : 0.0;
  out->count = st->n;
  if (st->n == 0) return;
  out->min = st->min;
  out->max = st->max;
  out->avg = st->sum / (double)st->n;
  double var = st->m2 / (double)st->n;
  out->mdev = sqrt(var > 0 ? var : 0);
  size_t k = filled(st);
  if (st->sorted == NULL) {
    st->sorted = mcpp__malloc(st->alloc, (size_t)st->window * sizeof *st->sorted);
    st->dirty = 1;
  }
  if (st->sorted == NULL) {
    /* Out of memory: the percentiles stay NaN, the rest is exact. */
    return;
  }
  if (st->dirty) {
    memcpy(st->sorted, st->ring, k * sizeof *st->sorted);
    qsort(st->sorted, k, sizeof *st->sorted, by_value);
    st->dirty = 0;
  }
  out->p50 = nearest_rank(st->sorted, k, 50);
  out->p99 = nearest_rank(st->sorted, k, 99);
}

size_t mcpp_rtt_stats_recent(const mcpp_rtt_stats *st, double *buf,
                             size_t cap) {
  if (st == NULL) return 0;
  size_t k = filled(st);
  /* Oldest first: before the window fills it starts at 0, after at next. */
  size_t start = st->n < st->window ? 0 : st->next;
  for (size_t i = 0; i < k && i < cap; i++)
    buf[i] = st->ring[(start + i) % st->window];
  return k;
}
