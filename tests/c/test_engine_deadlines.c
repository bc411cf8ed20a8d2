/* Per-request deadlines: each application request with its own timeout,
 * expiring in deadline order; aborts; and healthy()/healthy_until(), which
 * agree with each other and count each request's own limit. */
#include "engine_fixture.h"

static fx *started(uint32_t request_timeout_ms) {
  fx *f = fx_new();
  f->s.timeout_ms = 1000;
  f->s.request_timeout_ms = request_timeout_ms;
  fx_start(f, T0);
  return f;
}

static void call(fx *f, int id, uint32_t timeout_ms, uint64_t now) {
  char frame[128];
  snprintf(frame, sizeof frame,
           "{\"jsonrpc\":\"2.0\",\"id\":%d,\"method\":\"tools/call\"}", id);
  ASSERT_EQ(fx_out_timed(f, frame, timeout_ms, now), 0);
}

static uint32_t in_flight(fx *f) {
  mcpp_engine_info info;
  mcpp_engine_get_info(f->e, &info);
  return info.in_flight;
}

TEST(requests_expire_in_deadline_order_with_mixed_timeouts) {
  fx *f = started(0);
  call(f, 1, 5000, T0);                  /* due T0 + 5 s */
  call(f, 2, 1000, T0 + 100 * MS);       /* due T0 + 1.1 s */
  call(f, 3, MCPP_TIMEOUT_NONE, T0);     /* never */
  call(f, 4, 3000, T0 + 200 * MS);       /* due T0 + 3.2 s */
  call(f, 5, MCPP_TIMEOUT_DEFAULT, T0);  /* settings: none */
  call(f, 6, 1000, T0 + 100 * MS);       /* due with 2: send order */
  ASSERT_UINT_EQ(mcpp_engine_next_deadline(f->e), T0 + 1100 * MS);
  fx_run_until(f, T0 + 60 * SEC);
  ASSERT_EQ(fx_count_events(f, MCPP_EV_REQUEST_TIMEOUT), 4);
  static const char *order[] = {"2", "6", "4", "1"};
  static const uint32_t timeouts[] = {1000, 1000, 3000, 5000};
  static const uint64_t at[] = {1100, 1100, 3200, 5000};
  int k = 0;
  for (int i = 0; i < f->n_events; i++) {
    if (f->events[i].ev.type != MCPP_EV_REQUEST_TIMEOUT) continue;
    ASSERT_STR_EQ(f->events[i].id, order[k]);
    ASSERT_EQ(f->events[i].ev.timeout_ms, timeouts[k]);
    ASSERT_UINT_EQ(f->events[i].at, T0 + at[k] * MS);
    k++;
  }
  /* Each with its own numbers in the cancel and the error. */
  ASSERT_STR_EQ(f->sent[2].text,
                "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/cancelled\",\"params\":"
                "{\"requestId\":4,\"reason\":\"mcpping: request timed out after 3000 ms\"}}");
  ASSERT_STR_EQ(f->delivered[3].text,
                "{\"jsonrpc\":\"2.0\",\"id\":1,\"error\":{\"code\":-32001,"
                "\"message\":\"Request timed out (mcpping: no answer after 5000 ms)\"}}");
  ASSERT_EQ(in_flight(f), 2); /* 3 and 5 wait forever */
  ASSERT_UINT_EQ(mcpp_engine_next_deadline(f->e), UINT64_MAX);
  fx_done(f);
}

TEST(default_timeout_comes_from_settings_and_none_overrides_it) {
  fx *f = started(2000);
  call(f, 1, MCPP_TIMEOUT_DEFAULT, T0);
  call(f, 2, MCPP_TIMEOUT_NONE, T0);
  fx_out(f, "{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"tools/list\"}", T0);
  fx_run_until(f, T0 + 60 * SEC);
  ASSERT_EQ(fx_count_events(f, MCPP_EV_REQUEST_TIMEOUT), 2);
  ASSERT_EQ(in_flight(f), 1);
  fx_done(f);
}

TEST(out_of_range_request_timeout_is_refused_and_nothing_observed) {
  fx *f = started(0);
  const char frame[] = "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\"}";
  ASSERT_EQ(fx_out_timed(f, frame, MCPP_MAX_MS + 1, T0), MCPP_ERR_INVALID_ARGUMENT);
  ASSERT_EQ(fx_out_timed(f, frame, UINT32_MAX - 1, T0), MCPP_ERR_INVALID_ARGUMENT);
  ASSERT_EQ(in_flight(f), 0);
  ASSERT_EQ(fx_out_timed(f, frame, MCPP_MAX_MS, T0), 0);
  ASSERT_UINT_EQ(mcpp_engine_next_deadline(f->e), T0 + (uint64_t)MCPP_MAX_MS * MS);
  ASSERT_EQ(mcpp_engine_ping(f->e, MCPP_MAX_MS + 1, T0, NULL), MCPP_ERR_INVALID_ARGUMENT);
  fx_done(f);
}

TEST(thousands_of_requests_with_random_timeouts_expire_in_order) {
  fx *f = started(0);
  enum { N = 5000 };
  uint64_t rng = 7, last = 0;
  for (int i = 0; i < N; i++) {
    rng = rng * 6364136223846793005ULL + 1442695040888963407ULL;
    call(f, i, 1 + (uint32_t)((rng >> 33) % 60000), T0 + (uint64_t)i);
  }
  /* Answer every third one. */
  char frame[96];
  for (int i = 0; i < N; i += 3) {
    snprintf(frame, sizeof frame, "{\"jsonrpc\":\"2.0\",\"id\":%d,\"result\":{}}", i);
    fx_recv(f, frame, T0 + SEC);
  }
  long expired = 0;
  for (;;) {
    uint64_t d = mcpp_engine_next_deadline(f->e);
    if (d == UINT64_MAX) break;
    ASSERT_GE(d, last); /* never earlier than the last one that expired */
    last = d;
    f->n_events = f->n_sent = f->n_delivered = 0;
    ASSERT_EQ(mcpp_engine_on_timer(f->e, d), 0);
    expired += fx_count_events(f, MCPP_EV_REQUEST_TIMEOUT);
    for (int i = 0; i < f->n_records; i++) free(f->records[i]);
    f->n_records = 0;
  }
  ASSERT_EQ(expired, N - (N + 2) / 3);
  ASSERT_EQ(in_flight(f), 0);
  fx_done(f);
}

TEST(cancel_request_abandons_it_now_with_its_own_words) {
  fx *f = started(0);
  fx_out(f, "{\"jsonrpc\":\"2.0\",\"id\":\"a/b\",\"method\":\"tools/call\"}", T0);
  call(f, 2, 5000, T0);
  /* Ids match by value, as answers do. */
  ASSERT_EQ(mcpp_engine_cancel_request(f->e, "\"a\\/b\"", 6, T0 + MS), 0);
  ASSERT_EQ(f->n_sent, 1);
  ASSERT_EQ(f->sent[0].kind, MCPP_FRAME_CANCEL);
  ASSERT_STR_EQ(f->sent[0].text,
                "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/cancelled\",\"params\":"
                "{\"requestId\":\"a/b\",\"reason\":\"mcpping: request abandoned by the application\"}}");
  ASSERT_EQ(f->n_delivered, 1);
  ASSERT_STR_EQ(f->delivered[0].text,
                "{\"jsonrpc\":\"2.0\",\"id\":\"a/b\",\"error\":{\"code\":-32800,"
                "\"message\":\"Request cancelled (mcpping: abandoned by the application)\"}}");
  ASSERT_EQ(f->delivered[0].kind, MCPP_ANSWER_ABANDONED);
  const fx_event *ev = fx_last_event(f, MCPP_EV_REQUEST_CANCELLED);
  ASSERT(ev != NULL);
  ASSERT_STR_EQ(ev->id, "\"a/b\"");
  ASSERT_STR_EQ(ev->message, "tools/call");
  ASSERT_EQ(fx_count_events(f, MCPP_EV_REQUEST_TIMEOUT), 0);
  /* A timed one is taken out of the deadline heap too. */
  ASSERT_EQ(mcpp_engine_cancel_request(f->e, "2", 1, T0 + 2 * MS), 0);
  ASSERT_EQ(fx_last_event(f, MCPP_EV_REQUEST_CANCELLED)->ev.timeout_ms, 5000);
  ASSERT_UINT_EQ(mcpp_engine_next_deadline(f->e), UINT64_MAX);
  ASSERT_EQ(in_flight(f), 0);
  mcpp_engine_info info;
  mcpp_engine_get_info(f->e, &info);
  ASSERT_UINT_EQ(info.app_cancels, 2);
  ASSERT_UINT_EQ(info.app_timeouts, 0);
  /* The application's choice: the connection stays healthy. */
  ASSERT_EQ(mcpp_engine_healthy(f->e, T0 + 3 * MS), 1);
  fx_done(f);
}

TEST(cancel_request_of_unknown_ids_and_after_close) {
  fx *f = started(0);
  ASSERT_EQ(mcpp_engine_cancel_request(f->e, "1", 1, T0), MCPP_ERR_NOT_FOUND);
  call(f, 1, 0, T0);
  ASSERT_EQ(mcpp_engine_cancel_request(f->e, "\"1\"", 3, T0), MCPP_ERR_NOT_FOUND);
  ASSERT_EQ(mcpp_engine_cancel_request(f->e, NULL, 0, T0), MCPP_ERR_INVALID_ARGUMENT);
  ASSERT_EQ(mcpp_engine_cancel_request(NULL, "1", 1, T0), MCPP_ERR_INVALID_ARGUMENT);
  fx_recv(f, "{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{}}", T0);
  ASSERT_EQ(mcpp_engine_cancel_request(f->e, "1", 1, T0), MCPP_ERR_NOT_FOUND);
  call(f, 2, 0, T0);
  mcpp_engine_close(f->e, 0, "done", T0);
  ASSERT_EQ(mcpp_engine_cancel_request(f->e, "2", 1, T0), MCPP_ERR_CLOSED);
  ASSERT_EQ(f->n_sent, 0);
  ASSERT_EQ(f->n_delivered, 0);
  fx_done(f);
}

TEST(handshake_requests_are_never_cancelled) {
  fx *f = started(1000);
  fx_out(f, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"server/discover\",\"params\":{}}", T0);
  fx_out(f, "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"initialize\",\"params\":{}}", T0);
  ASSERT_EQ(mcpp_engine_cancel_request(f->e, "2", 1, T0), 0);
  fx_run_until(f, T0 + 2 * SEC);
  ASSERT_EQ(fx_count_sent(f, MCPP_FRAME_CANCEL), 0);
  ASSERT_EQ(f->n_delivered, 2); /* both callers still hear of it */
  fx_done(f);
}

TEST(cancel_request_send_error_is_returned_and_the_request_is_gone) {
  fx *f = started(0);
  call(f, 1, 0, T0);
  f->send_rc = MCPP_ERR_IO;
  ASSERT_EQ(mcpp_engine_cancel_request(f->e, "1", 1, T0), MCPP_ERR_IO);
  ASSERT_EQ(f->n_delivered, 1);
  ASSERT_EQ(in_flight(f), 0);
  fx_done(f);
}

/* healthy(t) must be 1 exactly for now <= t < healthy_until(now). */
static void assert_consistent(fx *f, uint64_t now) {
  uint64_t until = mcpp_engine_healthy_until(f->e, now);
  ASSERT(until >= now);
  ASSERT_EQ(mcpp_engine_healthy(f->e, now), until > now);
  if (until > now && until != UINT64_MAX) {
    ASSERT_EQ(mcpp_engine_healthy(f->e, until - 1), 1);
    ASSERT_EQ(mcpp_engine_healthy(f->e, until), 0);
  }
}

TEST(healthy_until_agrees_with_healthy_and_counts_each_requests_limit) {
  fx *f = started(0); /* ping timeout 1 s */
  ASSERT_UINT_EQ(mcpp_engine_healthy_until(f->e, T0), UINT64_MAX);
  assert_consistent(f, T0);
  /* A request with its own 10 s deadline is healthy until it passes. */
  call(f, 1, 10000, T0);
  ASSERT_UINT_EQ(mcpp_engine_healthy_until(f->e, T0), T0 + 10 * SEC + 1);
  assert_consistent(f, T0 + 5 * SEC);
  /* One without a deadline: the ping timeout bounds it. */
  call(f, 2, MCPP_TIMEOUT_NONE, T0 + 2 * SEC);
  ASSERT_UINT_EQ(mcpp_engine_healthy_until(f->e, T0 + 2 * SEC), T0 + 3 * SEC + 1);
  assert_consistent(f, T0 + 2 * SEC);
  assert_consistent(f, T0 + 3 * SEC + 1);
  ASSERT_UINT_EQ(mcpp_engine_healthy_until(f->e, T0 + 4 * SEC), T0 + 4 * SEC);
  fx_recv(f, "{\"jsonrpc\":\"2.0\",\"id\":2,\"result\":{}}", T0 + 4 * SEC);
  ASSERT_UINT_EQ(mcpp_engine_healthy_until(f->e, T0 + 4 * SEC), T0 + 10 * SEC + 1);
  /* Past its own deadline it is unhealthy even before the timer ran. */
  assert_consistent(f, T0 + 10 * SEC);
  ASSERT_EQ(mcpp_engine_healthy(f->e, T0 + 10 * SEC + 1), 0);
  fx_run_until(f, T0 + 10 * SEC);
  ASSERT_EQ(fx_count_events(f, MCPP_EV_REQUEST_TIMEOUT), 1);
  /* A timeout stays against it until an answer arrives. */
  ASSERT_UINT_EQ(mcpp_engine_healthy_until(f->e, T0 + 11 * SEC), T0 + 11 * SEC);
  call(f, 3, 0, T0 + 11 * SEC);
  fx_recv(f, "{\"jsonrpc\":\"2.0\",\"id\":3,\"result\":{}}", T0 + 11 * SEC);
  ASSERT_UINT_EQ(mcpp_engine_healthy_until(f->e, T0 + 11 * SEC), UINT64_MAX);
  fx_done(f);
}

TEST(healthy_until_is_now_when_the_peer_is_not_alive) {
  fx *f = fx_new();
  f->s.interval_ms = 1000;
  f->s.timeout_ms = 500;
  f->s.jitter_pct = 0;
  fx_start(f, T0);
  fx_run_until(f, T0 + 1500 * MS);
  mcpp_engine_info info;
  mcpp_engine_get_info(f->e, &info);
  ASSERT_EQ(info.state, MCPP_STATE_SUSPECT);
  ASSERT_UINT_EQ(mcpp_engine_healthy_until(f->e, T0 + 1500 * MS), T0 + 1500 * MS);
  assert_consistent(f, T0 + 1500 * MS);
  fx_done(f);
}
