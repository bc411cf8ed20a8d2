/* The server process as proof: the engine asks process_state only when a
 * deadline needs it (once at the first keepalive, then halfway through an
 * unanswered keepalive ping or probe, or at keepalive with nothing to
 * send, never before another ping goes out); a stopped server is suspect
 * when seen and stale a timeout later, an exited one stale for good; on legacy sessions this
 * complements ping. A busy server that still talks is never convicted. */
#include "engine_fixture.h"

static fx *legacy_keepalive(uint32_t interval_ms, uint32_t timeout_ms) {
  fx *f = fx_new();
  f->s.interval_ms = interval_ms;
  f->s.timeout_ms = timeout_ms;
  f->s.failures = 3;
  f->s.jitter_pct = 0;
  f->observe_process = 1;
  fx_start(f, T0);
  return f;
}

TEST(legacy_stopped_server_is_suspect_before_the_ping_times_out) {
  fx *f = legacy_keepalive(1000, 5000);
  fx_run_until(f, T0 + SEC);
  ASSERT_EQ(fx_count_sent(f, MCPP_FRAME_PING), 1);
  ASSERT_EQ(fx_count_events(f, MCPP_EV_SUSPECT), 0);
  /* Stopped right after the ping went out (SIGSTOP). */
  f->process = MCPP_PROCESS_STOPPED;
  fx_run_until(f, T0 + SEC + 5000 * MS - 1);
  const fx_event *ev = fx_first_event(f, MCPP_EV_SUSPECT);
  ASSERT(ev != NULL);
  ASSERT_LT(ev->at, T0 + SEC + 5000 * MS); /* before the ping's timeout */
  ASSERT_UINT_EQ(ev->at, T0 + SEC + 2500 * MS); /* halfway through it */
  ASSERT_STR_EQ(ev->proof, "process");
  ASSERT(strstr(fx_last_record(f), "\"event\":\"suspect\"") != NULL);
  ASSERT(strstr(fx_last_record(f), "\"proof\":\"process\"") != NULL);
  ASSERT_EQ(fx_count_events(f, MCPP_EV_TIMEOUT), 0);
  /* Still stopped a timeout later: stale. */
  fx_run_until(f, T0 + SEC + 7500 * MS);
  ev = fx_first_event(f, MCPP_EV_STALE);
  ASSERT(ev != NULL);
  ASSERT_UINT_EQ(ev->at, T0 + SEC + 7500 * MS);
  ASSERT_STR_EQ(ev->proof, "process");
  ASSERT_STR_EQ(ev->message, "the server process stayed stopped");
  fx_done(f);
}

TEST(legacy_stopped_before_keepalive_is_suspect_when_it_is_due) {
  fx *f = legacy_keepalive(1000, 5000);
  f->process = MCPP_PROCESS_STOPPED;
  fx_run_until(f, T0 + SEC);
  const fx_event *ev = fx_first_event(f, MCPP_EV_SUSPECT);
  ASSERT(ev != NULL);
  ASSERT_UINT_EQ(ev->at, T0 + SEC);
  /* The ping still goes out: a SIGCONT lets it be answered. */
  ASSERT_EQ(fx_count_sent(f, MCPP_FRAME_PING), 1);
  f->process = MCPP_PROCESS_RUNNING;
  ASSERT_EQ(fx_answer_last_ping(f, "\"result\":{}", T0 + 3 * SEC), MCPP_RECV_CONSUMED);
  ev = fx_last_event(f, MCPP_EV_RECOVERED);
  ASSERT(ev != NULL);
  ASSERT_STR_EQ(ev->proof, "ping");
  ASSERT(strstr(f->records[f->n_records - 2], "\"event\":\"recovered\"") != NULL);
  ASSERT(strstr(f->records[f->n_records - 2], "\"proof\":\"ping\"") != NULL);
  /* Running again: no stale verdict from the old stop, which would have
   * come a timeout after it was seen (T0 + 6 s); the next ping (at 4 s)
   * can only fail at 9 s. */
  fx_run_until(f, T0 + 8 * SEC);
  ASSERT_EQ(fx_count_events(f, MCPP_EV_STALE), 0);
  ASSERT_EQ(fx_count_events(f, MCPP_EV_SUSPECT), 1);
  fx_done(f);
}


TEST(legacy_stopped_after_the_first_round_is_suspect_halfway_through_the_ping) {
  fx *f = legacy_keepalive(1000, 5000);
  fx_run_until(f, T0 + SEC);
  ASSERT_EQ(f->process_calls, 1); /* the first round's one look */
  ASSERT_EQ(fx_answer_last_ping(f, "\"result\":{}", T0 + SEC), MCPP_RECV_CONSUMED);
  f->process = MCPP_PROCESS_STOPPED;
  fx_run_until(f, T0 + 2 * SEC);
  /* The next ping goes out without a look at the process (a SIGCONT lets
   * it be answered); the look comes halfway through its timeout. */
  ASSERT_EQ(fx_count_sent(f, MCPP_FRAME_PING), 2);
  ASSERT_EQ(f->process_calls, 1);
  ASSERT_EQ(fx_count_events(f, MCPP_EV_SUSPECT), 0);
  fx_run_until(f, T0 + 2 * SEC + 2500 * MS);
  const fx_event *ev = fx_first_event(f, MCPP_EV_SUSPECT);
  ASSERT(ev != NULL);
  ASSERT_UINT_EQ(ev->at, T0 + 2 * SEC + 2500 * MS);
  ASSERT_EQ(f->process_calls, 2);
  ASSERT_STR_EQ(ev->proof, "process");
  f->process = MCPP_PROCESS_RUNNING;
  ASSERT_EQ(fx_answer_last_ping(f, "\"result\":{}", T0 + 5 * SEC), MCPP_RECV_CONSUMED);
  ev = fx_last_event(f, MCPP_EV_RECOVERED);
  ASSERT(ev != NULL);
  ASSERT_STR_EQ(ev->proof, "ping");
  /* Running again: no stale verdict from the old stop, which would have
   * come a timeout after it was seen (T0 + 9.5 s); the next ping (at 6 s)
   * can only fail at 11 s. */
  fx_run_until(f, T0 + 10 * SEC);
  ASSERT_EQ(fx_count_events(f, MCPP_EV_STALE), 0);
  ASSERT_EQ(fx_count_events(f, MCPP_EV_SUSPECT), 1);
  fx_done(f);
}

TEST(exited_process_is_stale_for_good_whatever_on_stale_says) {
  fx *f = fx_new();
  f->s.interval_ms = 1000;
  f->s.jitter_pct = 0;
  f->s.on_stale = MCPP_STALE_REPORT;
  f->observe_process = 1;
  fx_start(f, T0);
  fx_out(f, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\"}", T0);
  f->process = MCPP_PROCESS_EXITED;
  fx_run_until(f, T0 + SEC);
  const fx_event *ev = fx_last_event(f, MCPP_EV_STALE);
  ASSERT(ev != NULL);
  ASSERT_STR_EQ(ev->proof, "process");
  ASSERT_STR_EQ(ev->message, "the server process exited");
  ASSERT_EQ(ev->ev.disposition, MCPP_DISPOSITION_IN_DOUBT); /* not "continued" */
  ASSERT_EQ(fx_count_sent(f, MCPP_FRAME_PING), 0);
  /* Nothing more to do; what it left in the pipe does not revive it. */
  ASSERT_UINT_EQ(mcpp_engine_next_deadline(f->e), UINT64_MAX);
  fx_recv(f, "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/message\"}", T0 + 2 * SEC);
  ASSERT_EQ(fx_count_events(f, MCPP_EV_RECOVERED), 0);
  mcpp_engine_close(f->e, MCPP_ERR_CLOSED, "server exited with status 0", T0 + 2 * SEC);
  ASSERT_STR_EQ(fx_last_event(f, MCPP_EV_CLOSED)->proof, "process");
  fx_done(f);
}

TEST(process_is_asked_only_when_a_deadline_needs_it) {
  fx *f = legacy_keepalive(1000, 2000);
  /* Idle and answering: one look at the first keepalive, then only
   * halfway through a ping's timeout while it is still unanswered, never
   * when a ping goes out. */
  for (uint64_t t = T0; t < T0 + 60 * SEC; t += 100 * MS) {
    fx_run_until(f, t);
    mcpp_engine_info info;
    mcpp_engine_get_info(f->e, &info);
    if (info.pongs_received < info.pings_sent)
      fx_answer_last_ping(f, "\"result\":{}", t);
  }
  long pings = fx_count_sent(f, MCPP_FRAME_PING);
  ASSERT_GT(pings, 40);
  ASSERT_EQ(f->process_calls, 1); /* answered within 100 ms: no halfway look */
  /* One ping left unanswered: exactly one look, at its halfway point. */
  uint64_t t = T0 + 61 * SEC + 500 * MS; /* past the next ping's halfway, before its timeout */
  fx_run_until(f, t);
  mcpp_engine_info info;
  mcpp_engine_get_info(f->e, &info);
  ASSERT_EQ(info.pings_sent, info.pongs_received + 1);
  ASSERT_EQ(info.ping_timeouts, 0);
  ASSERT_EQ(f->process_calls, 2);
  ASSERT_UINT_EQ(f->process_asked_at[1], fx_last_event(f, MCPP_EV_PING)->at + 1000 * MS);
  fx_answer_last_ping(f, "\"result\":{}", t);
  /* Busy with traffic: once the ping already due is over, never asked. */
  long calls = 0;
  for (; t < T0 + 120 * SEC; t += 300 * MS) {
    fx_run_until(f, t);
    fx_recv(f, "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/progress\"}", t);
    if (t < T0 + 66 * SEC) calls = f->process_calls;
  }
  ASSERT_EQ(f->process_calls, calls);
  fx_done(f);
}

TEST(busy_server_on_one_long_call_sending_progress_is_never_convicted) {
  fx *f = legacy_keepalive(1000, 500);
  f->s.request_timeout_ms = 0;
  fx_out(f, "{\"jsonrpc\":\"2.0\",\"id\":7,\"method\":\"tools/call\",\"params\":"
            "{\"name\":\"slow\",\"_meta\":{\"progressToken\":7}}}", T0);
  /* Three seconds of work, a progress notification every 400 ms. */
  for (uint64_t t = T0 + 400 * MS; t <= T0 + 3 * SEC; t += 400 * MS) {
    fx_run_until(f, t);
    ASSERT_EQ(fx_recv(f, "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/progress\","
                         "\"params\":{\"progressToken\":7,\"progress\":1}}", t),
              MCPP_RECV_FORWARD);
  }
  fx_run_until(f, T0 + 3 * SEC + 100 * MS);
  ASSERT_EQ(fx_recv(f, "{\"jsonrpc\":\"2.0\",\"id\":7,\"result\":{\"content\":[]}}",
                    T0 + 3 * SEC + 100 * MS), MCPP_RECV_FORWARD);
  ASSERT_EQ(fx_count_events(f, MCPP_EV_SUSPECT), 0);
  ASSERT_EQ(fx_count_events(f, MCPP_EV_STALE), 0);
  ASSERT_EQ(fx_count_sent(f, MCPP_FRAME_PING), 0); /* the traffic was proof */
  mcpp_engine_info info;
  mcpp_engine_get_info(f->e, &info);
  ASSERT_EQ(info.freshest_proof, MCPP_PROOF_TRAFFIC);
  ASSERT_UINT_EQ(info.last_traffic_us, T0 + 3 * SEC + 100 * MS);
  fx_done(f);
}

TEST(process_status_alone_watches_a_session_with_nothing_to_send) {
  /* A 2026 server guard (no probe of its own) over stdio still learns of
   * a stopped peer process. */
  fx *f = fx_new();
  f->s.role = MCPP_ROLE_SERVER;
  f->s.interval_ms = 1000;
  f->s.timeout_ms = 500;
  f->s.jitter_pct = 0;
  f->observe_process = 1;
  fx_start(f, T0);
  fx_recv(f, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"server/discover\",\"params\":{\"_meta\":"
             "{\"io.modelcontextprotocol/protocolVersion\":\"2026-07-28\"}}}", T0);
  fx_out(f, "{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{\"supportedVersions\":[\"2026-07-28\"]}}", T0);
  fx_run_until(f, T0 + 5 * SEC);
  ASSERT_EQ(f->n_sent, 0);
  ASSERT_EQ(f->process_calls, 5); /* once an interval */
  ASSERT_EQ(fx_count_events(f, MCPP_EV_SUSPECT), 0);
  f->process = MCPP_PROCESS_STOPPED;
  fx_run_until(f, T0 + 6 * SEC + 500 * MS);
  ASSERT_UINT_EQ(fx_first_event(f, MCPP_EV_SUSPECT)->at, T0 + 6 * SEC);
  ASSERT_UINT_EQ(fx_first_event(f, MCPP_EV_STALE)->at, T0 + 6 * SEC + 500 * MS);
  fx_done(f);
}

TEST(unknown_process_state_changes_nothing) {
  fx *f = legacy_keepalive(1000, 500);
  f->process = MCPP_PROCESS_UNKNOWN;
  fx_run_until(f, T0 + SEC);
  f->process = 42; /* out of range: unknown */
  for (uint64_t t = T0 + SEC; t < T0 + 10 * SEC; t += 100 * MS) {
    fx_run_until(f, t);
    mcpp_engine_info info;
    mcpp_engine_get_info(f->e, &info);
    if (info.pongs_received < info.pings_sent) fx_answer_last_ping(f, "\"result\":{}", t);
  }
  ASSERT_EQ(fx_count_events(f, MCPP_EV_SUSPECT), 0);
  mcpp_engine_info info;
  mcpp_engine_get_info(f->e, &info);
  ASSERT_EQ(info.process_state, MCPP_PROCESS_UNKNOWN);
  ASSERT_UINT_EQ(info.last_process_us, 0);
  fx_done(f);
}
