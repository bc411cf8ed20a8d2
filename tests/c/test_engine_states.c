/* alive -> suspect -> stale -> recovered, driven only by keepalive, and
 * the disposition of in-flight requests when the peer goes stale or the
 * connection closes. */
#include "engine_fixture.h"

static fx *frozen_peer_as(mcpp_role role, mcpp_stale_action on_stale) {
  fx *f = fx_new();
  f->s.role = role;
  f->s.interval_ms = 1000;
  f->s.timeout_ms = 2000;
  f->s.failures = 3;
  f->s.jitter_pct = 0;
  f->s.on_stale = on_stale;
  fx_start(f, T0);
  return f;
}

static fx *frozen_peer(mcpp_stale_action on_stale) {
  return frozen_peer_as(MCPP_ROLE_CLIENT, on_stale);
}

static uint64_t event_time_index(const fx *f, mcpp_event_type t) {
  for (int i = 0; i < f->n_events; i++)
    if (f->events[i].ev.type == t) return (uint64_t)i;
  return UINT64_MAX;
}

TEST(stale_within_interval_plus_timeout_times_failures) {
  fx *f = frozen_peer(MCPP_STALE_CLOSE);
  fx_run_until(f, T0 + 3 * SEC - 1);
  ASSERT_EQ(fx_count_events(f, MCPP_EV_SUSPECT), 0);
  fx_run_until(f, T0 + 3 * SEC); /* 1 s interval + 2 s timeout */
  ASSERT_EQ(fx_count_events(f, MCPP_EV_SUSPECT), 1);
  ASSERT_EQ(fx_count_sent(f, MCPP_FRAME_PING), 2); /* re-probed at once */
  fx_run_until(f, T0 + 7 * SEC - 1);
  ASSERT_EQ(fx_count_events(f, MCPP_EV_STALE), 0);
  fx_run_until(f, T0 + 7 * SEC); /* 1 + 2 x 3 */
  ASSERT_EQ(fx_count_events(f, MCPP_EV_STALE), 1);
  const fx_event *ev = fx_last_event(f, MCPP_EV_STALE);
  ASSERT_EQ(ev->ev.state, MCPP_STATE_STALE);
  ASSERT_EQ(ev->ev.failure_count, 3);
  ASSERT_EQ(ev->ev.disposition, MCPP_DISPOSITION_CANCELLED);
  ASSERT_EQ(fx_count_events(f, MCPP_EV_TIMEOUT), 3);
  ASSERT(event_time_index(f, MCPP_EV_SUSPECT) < event_time_index(f, MCPP_EV_STALE));
  ASSERT_EQ(fx_count_records(f, "suspect"), 1);
  ASSERT_EQ(fx_count_records(f, "stale"), 1);
  ASSERT_EQ(fx_count_records(f, "ping_timeout"), 3);
  /* Closing on stale: no more probes. */
  ASSERT_UINT_EQ(mcpp_engine_next_deadline(f->e), UINT64_MAX);
  fx_done(f);
}

/* The reason a host closes a stale connection with, one sentence for every
 * host (conn.c, the guards, the HTTP clients). */
static const char *stale_reason(const mcpp_engine *e) {
  static char buf[160];
  size_t n = mcpp_engine_stale_reason(e, buf, sizeof buf);
  ASSERT_UINT_EQ(strlen(buf), n);
  return buf;
}

TEST(stale_reason_names_the_peer_and_what_failed) {
  fx *f = frozen_peer(MCPP_STALE_CLOSE);
  ASSERT_STR_EQ("", stale_reason(f->e));
  fx_run_until(f, T0 + 7 * SEC);
  ASSERT_STR_EQ("the server went stale: 3 keepalive pings failed", stale_reason(f->e));
  char small[8];
  ASSERT_UINT_EQ(strlen("the server went stale: 3 keepalive pings failed"),
                 mcpp_engine_stale_reason(f->e, small, sizeof small));
  ASSERT_STR_EQ("the ser", small);
  fx_done(f);

  f = frozen_peer_as(MCPP_ROLE_SERVER, MCPP_STALE_CLOSE);
  fx_run_until(f, T0 + 7 * SEC);
  ASSERT_EQ(fx_count_events(f, MCPP_EV_STALE), 1);
  ASSERT_STR_EQ("the client went stale: 3 keepalive pings failed", stale_reason(f->e));
  fx_done(f);
  ASSERT_STR_EQ("", stale_reason(NULL));
}

TEST(stale_with_report_keeps_probing_at_interval) {
  fx *f = frozen_peer(MCPP_STALE_REPORT);
  fx_run_until(f, T0 + 7 * SEC);
  const fx_event *ev = fx_last_event(f, MCPP_EV_STALE);
  ASSERT(ev != NULL);
  ASSERT_EQ(ev->ev.disposition, MCPP_DISPOSITION_CONTINUED);
  ASSERT_UINT_EQ(mcpp_engine_next_deadline(f->e), T0 + 8 * SEC);
  fx_run_until(f, T0 + 8 * SEC);
  ASSERT_EQ(fx_count_sent(f, MCPP_FRAME_PING), 4);
  fx_run_until(f, T0 + 30 * SEC);
  ASSERT_EQ(fx_count_events(f, MCPP_EV_STALE), 1); /* reported once */
  /* Probes every interval + timeout = 3 s after the first stale. */
  ASSERT_EQ(fx_count_sent(f, MCPP_FRAME_PING), 4 + 7);
  fx_done(f);
}

TEST(recovered_on_any_inbound_message) {
  fx *f = frozen_peer(MCPP_STALE_REPORT);
  fx_run_until(f, T0 + 3 * SEC);
  mcpp_engine_info info;
  mcpp_engine_get_info(f->e, &info);
  ASSERT_EQ(info.state, MCPP_STATE_SUSPECT);
  ASSERT_EQ(mcpp_engine_healthy(f->e, T0 + 3 * SEC), 0);
  ASSERT_EQ(fx_recv(f, "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/message\"}", T0 + 4 * SEC),
            MCPP_RECV_FORWARD);
  const fx_event *ev = fx_last_event(f, MCPP_EV_RECOVERED);
  ASSERT(ev != NULL);
  ASSERT_EQ(ev->ev.state, MCPP_STATE_ALIVE);
  ASSERT_EQ(ev->ev.failure_count, 0);
  ASSERT(strstr(fx_last_record(f), "\"event\":\"recovered\"") != NULL);
  ASSERT_EQ(mcpp_engine_healthy(f->e, T0 + 4 * SEC), 1);
  /* And from stale too. */
  fx_run_until(f, T0 + 30 * SEC);
  mcpp_engine_get_info(f->e, &info);
  ASSERT_EQ(info.state, MCPP_STATE_STALE);
  ASSERT_EQ(fx_recv(f, "garbage", T0 + 31 * SEC), MCPP_RECV_FORWARD);
  ASSERT_EQ(fx_count_events(f, MCPP_EV_RECOVERED), 2);
  fx_done(f);
}

TEST(pong_after_suspect_recovers) {
  fx *f = frozen_peer(MCPP_STALE_CLOSE);
  fx_run_until(f, T0 + 3 * SEC);
  ASSERT_EQ(fx_answer_last_ping(f, "\"result\":{}", T0 + 3 * SEC + 5 * MS), MCPP_RECV_CONSUMED);
  ASSERT_EQ(fx_count_events(f, MCPP_EV_RECOVERED), 1);
  ASSERT_EQ(fx_count_events(f, MCPP_EV_PONG), 1);
  fx_run_until(f, T0 + 60 * SEC); /* keeps failing from here */
  ASSERT_EQ(fx_count_events(f, MCPP_EV_STALE), 1);
  fx_done(f);
}

TEST(traffic_after_ping_sent_is_not_a_failure) {
  fx *f = frozen_peer(MCPP_STALE_CLOSE);
  fx_run_until(f, T0 + SEC);
  fx_recv(f, "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/progress\"}", T0 + 2 * SEC);
  fx_run_until(f, T0 + 3 * SEC);
  ASSERT_EQ(fx_count_events(f, MCPP_EV_TIMEOUT), 1);
  ASSERT_EQ(fx_count_events(f, MCPP_EV_SUSPECT), 0);
  mcpp_engine_info info;
  mcpp_engine_get_info(f->e, &info);
  ASSERT_EQ(info.failure_count, 0);
  /* The next probe is timed from that traffic: due at 2 s + 1 s. */
  ASSERT_EQ(fx_count_sent(f, MCPP_FRAME_PING), 2);
  ASSERT_UINT_EQ(mcpp_engine_next_deadline(f->e), T0 + 5 * SEC);
  fx_done(f);
}

TEST(single_failure_threshold_goes_straight_to_stale) {
  fx *f = fx_new();
  f->s.interval_ms = 1000;
  f->s.timeout_ms = 500;
  f->s.failures = 1;
  f->s.jitter_pct = 0;
  fx_start(f, T0);
  fx_run_until(f, T0 + 1500 * MS);
  ASSERT_EQ(fx_count_events(f, MCPP_EV_STALE), 1);
  ASSERT_EQ(fx_count_events(f, MCPP_EV_SUSPECT), 0);
  fx_done(f);
}

TEST(stale_disposition_in_doubt_with_tools_call_in_flight) {
  fx *f = frozen_peer(MCPP_STALE_CLOSE);
  fx_out(f, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/list\"}", T0);
  fx_out(f, "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"tools/call\",\"params\":{}}", T0);
  fx_run_until(f, T0 + 7 * SEC);
  const fx_event *ev = fx_last_event(f, MCPP_EV_STALE);
  ASSERT(ev != NULL);
  ASSERT_EQ(ev->ev.disposition, MCPP_DISPOSITION_IN_DOUBT);
  ASSERT_EQ(ev->ev.in_flight, 2);
  ASSERT(strstr(fx_last_record(f), "\"in_flight\":{\"count\":2,\"disposition\":\"in_doubt\"}") != NULL);
  fx_done(f);
}

TEST(close_disposition_cancelled_for_side_effect_free_requests) {
  fx *f = fx_new();
  fx_start(f, T0);
  fx_out(f, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/list\"}", T0);
  fx_out(f, "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"resources/read\"}", T0);
  mcpp_engine_close(f->e, 0, "bye", T0 + SEC);
  const fx_event *ev = fx_last_event(f, MCPP_EV_CLOSED);
  ASSERT(ev != NULL);
  ASSERT_EQ(ev->ev.disposition, MCPP_DISPOSITION_CANCELLED);
  ASSERT_EQ(ev->ev.in_flight, 2);
  ASSERT_STR_EQ(ev->message, "bye");
  ASSERT(strstr(fx_last_record(f), "\"event\":\"closed\"") != NULL);
  ASSERT(strstr(fx_last_record(f), "{\"count\":2,\"disposition\":\"cancelled\"}") != NULL);
  fx_done(f);
}

TEST(close_disposition_in_doubt_for_tools_call_and_unknown_methods) {
  const char *methods[] = {"tools/call", "x/custom", "resources/subscribe"};
  for (int i = 0; i < 3; i++) {
    fx *f = fx_new();
    fx_start(f, T0);
    char frame[128];
    snprintf(frame, sizeof frame, "{\"jsonrpc\":\"2.0\",\"id\":\"r\",\"method\":\"%s\"}", methods[i]);
    fx_out(f, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"}", T0);
    fx_out(f, frame, T0);
    mcpp_engine_close(f->e, MCPP_ERR_STALE, NULL, T0 + SEC);
    const fx_event *ev = fx_last_event(f, MCPP_EV_CLOSED);
    ASSERT_EQ(ev->ev.disposition, MCPP_DISPOSITION_IN_DOUBT);
    ASSERT_EQ(ev->ev.error, MCPP_ERR_STALE);
    ASSERT_EQ(ev->has_message, 0);
    fx_done(f);
  }
}

TEST(close_reports_manual_pings_and_is_idempotent) {
  fx *f = fx_new();
  f->s.interval_ms = 1000;
  fx_start(f, T0);
  uint64_t a, b;
  ASSERT_EQ(mcpp_engine_ping(f->e, 0, T0, &a), 0);
  ASSERT_EQ(mcpp_engine_ping(f->e, 0, T0, &b), 0);
  mcpp_engine_close(f->e, 0, NULL, T0 + MS);
  mcpp_engine_close(f->e, 0, NULL, T0 + 2 * MS);
  ASSERT_EQ(fx_count_events(f, MCPP_EV_CLOSED), 1);
  ASSERT_EQ(fx_count_events(f, MCPP_EV_TIMEOUT), 2);
  const fx_event *ev = fx_last_event(f, MCPP_EV_TIMEOUT);
  ASSERT_EQ(ev->ev.error, MCPP_ERR_CLOSED);
  ASSERT_UINT_EQ(ev->ev.ping_seq, b);
  ASSERT_EQ(f->events[f->n_events - 1].ev.type, MCPP_EV_CLOSED);
  ASSERT_EQ(f->events[f->n_events - 1].ev.state, MCPP_STATE_CLOSED);
  ASSERT_UINT_EQ(mcpp_engine_next_deadline(f->e), UINT64_MAX);
  ASSERT_EQ(fx_recv(f, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"}", T0 + SEC),
            MCPP_ERR_CLOSED);
  ASSERT_EQ(mcpp_engine_ping(f->e, 0, T0 + SEC, NULL), MCPP_ERR_CLOSED);
  ASSERT_EQ(mcpp_engine_on_timer(f->e, T0 + 10 * SEC), 0);
  ASSERT_EQ(fx_out(f, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"x\"}", T0), 0);
  mcpp_engine_touch(f->e, T0 + 11 * SEC);
  ASSERT_EQ(f->n_sent, 2);
  ASSERT_EQ(mcpp_engine_healthy(f->e, T0 + 11 * SEC), 0);
  fx_done(f);
}

static void close_on_stale(mcpp_engine *e, const mcpp_event *ev, void *ud) {
  fx_on_event(e, ev, ud);
  if (ev->type == MCPP_EV_STALE) mcpp_engine_close(e, MCPP_ERR_STALE, "stale", 0);
}

TEST(close_from_inside_stale_callback_is_safe) {
  fx *f = frozen_peer(MCPP_STALE_CLOSE);
  mcpp_engine_free(f->e);
  static const mcpp_engine_callbacks cb = {
      .send = fx_send,
      .deliver = fx_deliver,
      .on_event = close_on_stale,
      .on_record = fx_on_record};
  ASSERT_EQ(mcpp_engine_new(&f->e, &f->s, &cb, f, &f->alloc.a, T0), 0);
  mcpp_engine_touch(f->e, T0);
  fx_out(f, "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"tools/call\"}", T0);
  fx_run_until(f, T0 + 60 * SEC);
  ASSERT_EQ(fx_count_events(f, MCPP_EV_CLOSED), 1);
  ASSERT_EQ(fx_last_event(f, MCPP_EV_CLOSED)->ev.disposition, MCPP_DISPOSITION_IN_DOUBT);
  ASSERT_EQ(fx_count_sent(f, MCPP_FRAME_PING), 3);
  fx_done(f);
}
