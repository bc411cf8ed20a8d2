/* RTT statistics (rtt_stats.c): exact running figures, nearest-rank
 * percentiles over a bounded window, loss from engine events. */
#include <math.h>

#include "engine_fixture.h"

static mcpp_rtt_stats *stats(uint32_t window) {
  mcpp_rtt_stats *st = NULL;
  ASSERT_EQ(mcpp_rtt_stats_new(&st, window, NULL), 0);
  return st;
}

TEST(rtt_stats_before_any_pong_has_counts_and_no_figures) {
  mcpp_rtt_stats *st = stats(0);
  mcpp_rtt_summary s;
  mcpp_rtt_stats_summary(st, &s);
  ASSERT_UINT_EQ(s.count, 0);
  ASSERT(isnan(s.min) && isnan(s.avg) && isnan(s.p99));
  ASSERT(s.loss_pct == 0.0);
  mcpp_rtt_stats_free(st);
}

TEST(rtt_stats_figures_match_ping8_arithmetic) {
  mcpp_rtt_stats *st = stats(0);
  double v[] = {3, 1, 4, 1, 5};
  for (int i = 0; i < 5; i++) mcpp_rtt_stats_add(st, v[i]);
  mcpp_rtt_summary s;
  mcpp_rtt_stats_summary(st, &s);
  ASSERT_UINT_EQ(s.count, 5);
  ASSERT(s.min == 1 && s.max == 5 && s.avg == 14.0 / 5);
  /* Population standard deviation, as ping(8) prints it. */
  double mean = 2.8, var = 0;
  for (int i = 0; i < 5; i++) var += (v[i] - mean) * (v[i] - mean);
  ASSERT(fabs(s.mdev - sqrt(var / 5)) < 1e-12);
  ASSERT(s.p50 == 3 && s.p99 == 5);
  mcpp_rtt_stats_free(st);
}

TEST(rtt_stats_percentiles_cover_only_the_window) {
  mcpp_rtt_stats *st = stats(4);
  double seen[8];
  for (int i = 0; i < 4; i++) mcpp_rtt_stats_add(st, 1000 + i); /* old, slow */
  for (int i = 0; i < 4; i++) mcpp_rtt_stats_add(st, 1 + i);
  mcpp_rtt_summary s;
  mcpp_rtt_stats_summary(st, &s);
  ASSERT(s.p99 == 4 && s.p50 == 2);
  ASSERT(s.max == 1003); /* still over every pong */
  ASSERT_UINT_EQ(mcpp_rtt_stats_recent(st, seen, 8), 4);
  for (int i = 0; i < 4; i++) ASSERT(seen[i] == 1 + i); /* oldest first */
  /* A new value after a summary re-sorts. */
  mcpp_rtt_stats_add(st, 0.5);
  mcpp_rtt_stats_summary(st, &s);
  ASSERT(s.p50 == 2 && s.p99 == 4);
  ASSERT_UINT_EQ(mcpp_rtt_stats_recent(st, seen, 8), 4);
  ASSERT(seen[0] == 2 && seen[3] == 0.5);
  mcpp_rtt_stats_free(st);
}

TEST(rtt_stats_window_out_of_range_is_refused) {
  mcpp_rtt_stats *st = (mcpp_rtt_stats *)1;
  ASSERT_EQ(mcpp_rtt_stats_new(&st, MCPP_MAX_RTT_WINDOW + 1, NULL), MCPP_ERR_INVALID_ARGUMENT);
  ASSERT(st == NULL);
  ASSERT_EQ(mcpp_rtt_stats_new(NULL, 1, NULL), MCPP_ERR_INVALID_ARGUMENT);
  mcpp_rtt_stats_free(NULL);
}

static mcpp_event ev_of(mcpp_event_type t, int64_t code, int invalid, uint64_t rtt_us) {
  mcpp_event ev;
  memset(&ev, 0, sizeof ev);
  ev.type = t;
  if (t == MCPP_EV_TIMEOUT)
    ev.error = (int)code; /* ours: MCPP_ERR_CLOSED */
  else
    ev.rpc_code = code;   /* the peer's JSON-RPC code */
  ev.invalid = invalid;
  ev.rtt_us = rtt_us;
  return ev;
}

TEST(rtt_stats_observe_counts_loss_but_not_pings_abandoned_at_close) {
  mcpp_rtt_stats *st = stats(0);
  mcpp_event evs[] = {
      ev_of(MCPP_EV_PING, 0, 0, 0),          ev_of(MCPP_EV_PING, 0, 0, 0),
      ev_of(MCPP_EV_PING, 0, 0, 0),          ev_of(MCPP_EV_PING, 0, 0, 0),
      ev_of(MCPP_EV_PING, 0, 0, 0),          ev_of(MCPP_EV_PING, 0, 0, 0),
      ev_of(MCPP_EV_PONG, 0, 0, 1500),       ev_of(MCPP_EV_TIMEOUT, 0, 0, 0),
      ev_of(MCPP_EV_PING_ERROR, -32000, 0, 0), ev_of(MCPP_EV_PING_ERROR, 0, 1, 0),
      ev_of(MCPP_EV_TIMEOUT, MCPP_ERR_CLOSED, 0, 0),
      ev_of(MCPP_EV_UNSUPPORTED, -32601, 0, 0), ev_of(MCPP_EV_STALE, 0, 0, 0)};
  for (size_t i = 0; i < sizeof evs / sizeof evs[0]; i++) mcpp_rtt_stats_observe(st, &evs[i], 1000.0);
  mcpp_rtt_summary s;
  mcpp_rtt_stats_summary(st, &s);
  ASSERT_UINT_EQ(s.sent, 6);
  ASSERT_UINT_EQ(s.received, 1);
  ASSERT_UINT_EQ(s.lost, 3); /* timeout, error, invalid; not closed, not unsupported */
  ASSERT(s.loss_pct == 75.0);
  ASSERT(s.min == 1.5); /* in ms: 1500 us / 1000 */
  mcpp_rtt_stats_free(st);
}

/* Out of memory: creation fails cleanly; the sorted copy's allocation
 * failing leaves only the percentiles unknown. */
TEST(rtt_stats_out_of_memory_fails_cleanly) {
  for (long k = 1; k <= 3; k++) {
    fx *f = fx_new();
    f->alloc.fail_at = k;
    f->alloc.a = (mcpp_allocator){fx_malloc, fx_realloc, fx_free_block, &f->alloc};
    mcpp_rtt_stats *st = NULL;
    int rc = mcpp_rtt_stats_new(&st, 8, &f->alloc.a);
    if (k <= 2) {
      ASSERT_EQ(rc, MCPP_ERR_NOMEM);
      ASSERT(st == NULL);
    } else {
      ASSERT_EQ(rc, 0);
      mcpp_rtt_stats_add(st, 2);
      mcpp_rtt_summary s;
      mcpp_rtt_stats_summary(st, &s);
      ASSERT(s.min == 2 && isnan(s.p50));
      mcpp_rtt_stats_summary(st, &s); /* retries the copy */
      ASSERT(s.p50 == 2);
      mcpp_rtt_stats_free(st);
    }
    ASSERT_EQ(f->alloc.live, 0);
    free(f);
  }
}

TEST(rtt_stats_never_allocates_after_the_first_summary) {
  fx *f = fx_new();
  f->alloc.a = (mcpp_allocator){fx_malloc, fx_realloc, fx_free_block, &f->alloc};
  mcpp_rtt_stats *st = NULL;
  ASSERT_EQ(mcpp_rtt_stats_new(&st, 100, &f->alloc.a), 0);
  mcpp_rtt_summary s;
  mcpp_rtt_stats_add(st, 1);
  mcpp_rtt_stats_summary(st, &s);
  long before = f->alloc.count;
  for (int i = 0; i < 100000; i++) {
    mcpp_rtt_stats_add(st, i % 97);
    if (i % 1000 == 0) mcpp_rtt_stats_summary(st, &s);
  }
  ASSERT_EQ(f->alloc.count, before);
  ASSERT_EQ(f->alloc.live, 3); /* the stats, the window, its sorted copy */
  mcpp_rtt_stats_free(st);
  ASSERT_EQ(f->alloc.live, 0);
  free(f);
}
