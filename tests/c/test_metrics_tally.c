/* metrics_tally.c: each connection's figures counted in C as the engine
 * emits its events (fake clock), retired cells folded into their label
 * set's total, and the rows the bindings' exporters read. */
#include <math.h>

#include "engine_fixture.h"

/* The row labelled peer/transport, or fails. */
static const mcpp_metric_series *row_of(const mcpp_metric_series *rows,
                                        long n, const char *peer,
                                        const char *transport) {
  for (long i = 0; i < n; i++)
    if (!strcmp(rows[i].peer, peer) && !strcmp(rows[i].transport, transport))
      return &rows[i];
  ASSERT(!"no such row");
  return NULL;
}

static uint64_t histogram_count(const mcpp_metric_series *r) {
  uint64_t n = 0;
  for (int i = 0; i <= MCPP_METRIC_RTT_BOUNDS; i++) n += r->rtt_buckets[i];
  return n;
}

TEST(metrics_tally_counts_engine_pings_pongs_and_timeouts_where_emitted) {
  fx *f = fx_new();
  f->s.interval_ms = 1000;
  f->s.timeout_ms = 2000;
  f->s.jitter_pct = 0;
  fx_start(f, T0);
  mcpp_metrics_cell *cell = mcpp_metrics_cell_new("srv", "stdio");
  ASSERT(cell != NULL);
  mcpp_engine_set_metrics(f->e, cell);
  /* A ping answered after 10 ms, then one that times out. */
  fx_run_until(f, T0 + SEC);
  ASSERT_EQ(fx_answer_last_ping(f, "\"result\":{}", T0 + SEC + 10 * MS),
            MCPP_RECV_CONSUMED);
  fx_run_until(f, T0 + 2 * SEC + 10 * MS);
  ASSERT_EQ(fx_count_sent(f, MCPP_FRAME_PING), 2);
  fx_run_until(f, T0 + 5 * SEC);
  ASSERT_EQ(fx_count_events(f, MCPP_EV_TIMEOUT), 1);

  mcpp_metric_series *rows;
  long n = mcpp_metrics_tally_rows(&rows);
  ASSERT_EQ(n, 1);
  const mcpp_metric_series *r = row_of(rows, n, "srv", "stdio");
  ASSERT(r->server == NULL);
  ASSERT_UINT_EQ(r->pings_sent, (uint64_t)fx_count_events(f, MCPP_EV_PING));
  ASSERT_UINT_EQ(r->pongs_received, 1);
  ASSERT_UINT_EQ(r->failures[0], 1); /* timeout */
  ASSERT_UINT_EQ(histogram_count(r), 1);
  ASSERT_UINT_EQ(r->rtt_buckets[mcpp_metric_rtt_bucket(0.010)], 1);
  ASSERT(fabs(r->rtt_sum - 0.010) < 1e-9);
  /* One connection open, in the state of its last event. */
  int open = 0;
  for (int i = 0; i < MCPP_METRIC_STATES; i++) open += (int)r->states[i];
  ASSERT_EQ(open, 1);
  ASSERT_UINT_EQ(r->states[f->events[f->n_events - 1].ev.state], 1);
  mcpp_metrics_rows_free(rows, (size_t)n);

  /* Detached: the engine counts nothing more. */
  mcpp_engine_set_metrics(f->e, NULL);
  fx_run_until(f, T0 + 9 * SEC);
  n = mcpp_metrics_tally_rows(&rows);
  ASSERT_UINT_EQ(row_of(rows, n, "srv", "stdio")->pongs_received, 1);
  ASSERT_UINT_EQ(row_of(rows, n, "srv", "stdio")->failures[0], 1);
  mcpp_metrics_rows_free(rows, (size_t)n);
  mcpp_metrics_cell_retire(cell);
  fx_done(f);
}

TEST(metrics_tally_closed_event_detaches_and_engine_free_drops_its_reference) {
  fx *f = fx_new();
  fx_start(f, T0);
  mcpp_metrics_cell *cell = mcpp_metrics_cell_new("srv", "http");
  mcpp_engine_set_metrics(f->e, cell);
  /* Retired while attached: the engine's reference keeps it (ASan). */
  mcpp_metrics_cell_retire(cell);
  mcpp_engine_close(f->e, 0, "bye", T0);
  fx_done(f);

  fx *g = fx_new();
  fx_start(g, T0);
  cell = mcpp_metrics_cell_new("srv", "http");
  mcpp_engine_set_metrics(g->e, cell);
  fx_done(g); /* freed without a CLOSED event */
  mcpp_metrics_cell_retire(cell);
}

/* A cell whose connection closed is folded into its labels' total: counts
 * are kept, it leaves the state gauge, and a label set with no open
 * connection shows closed = 1. */
TEST(metrics_tally_retired_cells_fold_into_their_label_total) {
  mcpp_event pong = {.type = MCPP_EV_PONG, .state = MCPP_STATE_ALIVE,
                     .ping_seq = 1, .rtt_us = 300};
  pong.id = "x";
  pong.id_len = 1;
  mcpp_event sent = {.type = MCPP_EV_PING, .state = MCPP_STATE_ALIVE, .ping_seq = 1};
  mcpp_metrics_cell *a = mcpp_metrics_cell_new("srv", "stdio");
  mcpp_metrics_cell *b = mcpp_metrics_cell_new("srv", "stdio");
  mcpp_metrics_cell *c = mcpp_metrics_cell_new("other", "stdio");
  mcpp_metrics_cell_observe(a, &sent);
  mcpp_metrics_cell_observe(a, &pong);
  mcpp_metrics_cell_observe(b, &sent);
  mcpp_metrics_cell_observe(b, &pong);
  mcpp_metrics_cell_set_in_flight(b, 3);
  mcpp_metrics_cell_retire(a);
  mcpp_metric_series *rows;
  long n = mcpp_metrics_tally_rows(&rows);
  ASSERT_EQ(n, 2);
  /* The retired total's label set comes first, as it was retired first. */
  ASSERT_STR_EQ(rows[0].peer, "srv");
  const mcpp_metric_series *r = row_of(rows, n, "srv", "stdio");
  ASSERT_UINT_EQ(r->pings_sent, 2);
  ASSERT_UINT_EQ(r->pongs_received, 2);
  ASSERT_UINT_EQ(r->rtt_buckets[mcpp_metric_rtt_bucket(0.0003)], 2);
  ASSERT_UINT_EQ(r->states[MCPP_STATE_ALIVE], 1);
  ASSERT_UINT_EQ(r->states[MCPP_STATE_CLOSED], 0);
  ASSERT_UINT_EQ(r->in_flight, 3);
  ASSERT_UINT_EQ(row_of(rows, n, "other", "stdio")->states[MCPP_STATE_ALIVE], 1);
  mcpp_metrics_rows_free(rows, (size_t)n);

  mcpp_metrics_cell_retire(b);
  mcpp_metrics_cell_retire(c);
  n = mcpp_metrics_tally_rows(&rows);
  ASSERT_EQ(n, 2);
  r = row_of(rows, n, "srv", "stdio");
  ASSERT_UINT_EQ(r->pongs_received, 2);
  ASSERT_UINT_EQ(r->in_flight, 0);
  ASSERT_UINT_EQ(r->states[MCPP_STATE_ALIVE], 0);
  ASSERT_UINT_EQ(r->states[MCPP_STATE_CLOSED], 1);
  /* The rows render as the Prometheus text wrap serves. */
  size_t len = mcpp_metrics_render(rows, (size_t)n, NULL, 0);
  char *text = malloc(len + 1);
  mcpp_metrics_render(rows, (size_t)n, text, len + 1);
  ASSERT(strstr(text, "mcpping_pongs_received_total{peer=\"srv\",transport=\"stdio\"} 2\n"));
  ASSERT(strstr(text, "mcpping_peer_state{peer=\"other\",transport=\"stdio\",state=\"closed\"} 1\n"));
  free(text);
  mcpp_metrics_rows_free(rows, (size_t)n);
}

TEST(metrics_tally_initialized_names_the_peer_and_no_cells_no_rows) {
  mcpp_metric_series *rows;
  ASSERT_EQ(0, mcpp_metrics_tally_rows(&rows));
  ASSERT(rows == NULL);
  mcpp_metrics_cell *a = mcpp_metrics_cell_new("./server.py", NULL);
  mcpp_event init = {.type = MCPP_EV_INITIALIZED, .state = MCPP_STATE_ALIVE,
                     .message = "everything"};
  mcpp_metrics_cell_observe(a, &init);
  long n = mcpp_metrics_tally_rows(&rows);
  ASSERT_EQ(n, 1);
  ASSERT_STR_EQ(rows[0].peer, "everything");
  ASSERT_STR_EQ(rows[0].transport, "");
  mcpp_metrics_rows_free(rows, (size_t)n);
  mcpp_metrics_cell_retire(a);
}

/* The values an OpenTelemetry histogram is given lie in the buckets that
 * grew and sum to what the sum grew by. */
TEST(metric_rtt_growth_values_lie_in_their_buckets_and_sum_to_the_growth) {
  uint64_t before[MCPP_METRIC_RTT_BOUNDS + 1] = {0}, now[MCPP_METRIC_RTT_BOUNDS + 1] = {0};
  int a = mcpp_metric_rtt_bucket(0.0003), b = mcpp_metric_rtt_bucket(0.02);
  before[a] = 1;
  now[a] = 3;
  now[b] = 1;
  double v[8];
  double sum = 0.0003 + 0.0004 + 0.02;
  ASSERT_UINT_EQ(3, mcpp_metric_rtt_growth(now, before, sum, NULL, 0));
  ASSERT_UINT_EQ(3, mcpp_metric_rtt_growth(now, before, sum, v, 8));
  ASSERT_EQ(a, mcpp_metric_rtt_bucket(v[0]));
  ASSERT_EQ(a, mcpp_metric_rtt_bucket(v[1]));
  ASSERT_EQ(b, mcpp_metric_rtt_bucket(v[2]));
  ASSERT(fabs(v[0] + v[1] + v[2] - sum) < 1e-12);
  /* Past the last bound: the rest of the sum, above it. */
  memset(now, 0, sizeof now);
  memset(before, 0, sizeof before);
  now[MCPP_METRIC_RTT_BOUNDS] = 2;
  now[0] = 1;
  ASSERT_UINT_EQ(3, mcpp_metric_rtt_growth(now, before, 30.00005, v, 8));
  ASSERT_EQ(0, mcpp_metric_rtt_bucket(v[0]));
  ASSERT(v[1] > 10.0 && v[2] > 10.0);
  ASSERT(fabs(v[0] + v[1] + v[2] - 30.00005) < 1e-9);
  /* Nothing grew: nothing to give. */
  ASSERT_UINT_EQ(0, mcpp_metric_rtt_growth(before, before, 0, v, 8));
}
