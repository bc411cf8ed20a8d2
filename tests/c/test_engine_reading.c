/* Read backpressure: while the driver is not reading, silence is ours.
 * Nothing is convicted or expires for it, and on resume the deadlines get
 * the same grace period as after a host pause. */
#include "engine_fixture.h"

static fx *watched(void) {
  fx *f = fx_new();
  f->s.interval_ms = 1000;
  f->s.timeout_ms = 500;
  f->s.failures = 3;
  f->s.jitter_pct = 0;
  f->s.request_timeout_ms = 2000;
  f->s.pause_threshold_ms = 1000;
  f->observe_process = 1;
  fx_start(f, T0);
  return f;
}

TEST(not_reading_for_ten_timeouts_convicts_nothing) {
  fx *f = watched();
  fx_out(f, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\"}", T0);
  uint64_t ms[3];
  ASSERT_EQ(mcpp_engine_ping(f->e, 400, T0, &ms[0]), 0);
  mcpp_engine_set_reading(f->e, 0, T0 + 100 * MS);
  mcpp_engine_info info;
  mcpp_engine_get_info(f->e, &info);
  ASSERT_EQ(info.reading, 0);
  /* Ten ping timeouts, and many keepalive intervals, of our own silence. */
  ASSERT_UINT_EQ(mcpp_engine_next_deadline(f->e), UINT64_MAX);
  for (uint64_t t = T0 + 100 * MS; t <= T0 + 100 * MS + 10 * 500 * MS; t += 50 * MS) {
    f->clock = t;
    ASSERT_EQ(mcpp_engine_on_timer(f->e, t), 0);
  }
  ASSERT_EQ(fx_count_sent(f, MCPP_FRAME_PING), 1); /* only the manual one */
  ASSERT_EQ(fx_count_events(f, MCPP_EV_TIMEOUT), 0);
  ASSERT_EQ(fx_count_events(f, MCPP_EV_SUSPECT), 0);
  ASSERT_EQ(fx_count_events(f, MCPP_EV_REQUEST_TIMEOUT), 0);
  ASSERT_EQ(f->process_calls, 0);
  ASSERT_EQ(mcpp_engine_healthy(f->e, T0 + 5 * SEC), 0); /* it does wait long */
  fx_done(f);
}

TEST(on_resume_answers_waiting_in_the_pipe_are_read_first) {
  fx *f = watched();
  fx_out(f, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\"}", T0);
  uint64_t seq;
  ASSERT_EQ(mcpp_engine_ping(f->e, 400, T0, &seq), 0);
  mcpp_engine_set_reading(f->e, 0, T0 + 100 * MS);
  uint64_t resume = T0 + 10 * SEC;
  f->clock = resume;
  mcpp_engine_set_reading(f->e, 1, resume);
  /* Everything overdue waits out the grace period (pause_threshold_ms). */
  ASSERT_UINT_EQ(mcpp_engine_next_deadline(f->e), resume + SEC);
  /* The answers were in the pipe all along. */
  ASSERT_EQ(fx_answer_last_ping(f, "\"result\":{}", resume + 10 * MS), MCPP_RECV_CONSUMED);
  ASSERT_EQ(fx_recv(f, "{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{}}", resume + 20 * MS),
            MCPP_RECV_FORWARD);
  fx_run_until(f, resume + SEC);
  ASSERT_EQ(fx_count_events(f, MCPP_EV_PONG), 1);
  ASSERT_EQ(fx_count_events(f, MCPP_EV_TIMEOUT), 0);
  ASSERT_EQ(fx_count_events(f, MCPP_EV_REQUEST_TIMEOUT), 0);
  ASSERT_EQ(mcpp_engine_healthy(f->e, resume + SEC), 1);
  /* The keepalive interval started over at the resume. */
  ASSERT_UINT_EQ(mcpp_engine_next_deadline(f->e), resume + 20 * MS + SEC);
  fx_done(f);
}

TEST(on_resume_what_really_went_unanswered_still_expires_after_the_grace) {
  fx *f = watched();
  fx_out(f, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\"}", T0);
  mcpp_engine_set_reading(f->e, 0, T0 + 100 * MS);
  uint64_t resume = T0 + 10 * SEC;
  mcpp_engine_set_reading(f->e, 1, resume);
  fx_run_until(f, resume + SEC);
  const fx_event *ev = fx_last_event(f, MCPP_EV_REQUEST_TIMEOUT);
  ASSERT(ev != NULL);
  ASSERT_UINT_EQ(ev->at, resume + SEC);
  fx_done(f);
}

TEST(on_resume_a_keepalive_ping_out_is_abandoned_and_sent_again) {
  fx *f = watched();
  f->s.request_timeout_ms = 0;
  fx_run_until(f, T0 + SEC); /* keepalive ping 1 */
  ASSERT_EQ(fx_count_sent(f, MCPP_FRAME_PING), 1);
  mcpp_engine_set_reading(f->e, 0, T0 + SEC + 100 * MS);
  uint64_t resume = T0 + 20 * SEC;
  mcpp_engine_set_reading(f->e, 1, resume);
  ASSERT_UINT_EQ(mcpp_engine_next_deadline(f->e), resume);
  fx_run_until(f, resume);
  ASSERT_EQ(fx_count_sent(f, MCPP_FRAME_PING), 2);
  ASSERT_EQ(fx_count_events(f, MCPP_EV_TIMEOUT), 0);
  /* The re-sent ping is timed normally. */
  fx_run_until(f, resume + 500 * MS);
  ASSERT_EQ(fx_count_events(f, MCPP_EV_TIMEOUT), 1);
  ASSERT_EQ(fx_count_events(f, MCPP_EV_SUSPECT), 1);
  fx_done(f);
}

TEST(set_reading_is_idempotent_and_ignored_after_close) {
  fx *f = watched();
  mcpp_engine_set_reading(f->e, 1, T0); /* already reading: no grace */
  ASSERT_UINT_EQ(mcpp_engine_next_deadline(f->e), T0 + SEC);
  mcpp_engine_set_reading(f->e, 0, T0);
  mcpp_engine_set_reading(f->e, 0, T0 + SEC);
  mcpp_engine_close(f->e, 0, "done", T0 + SEC);
  mcpp_engine_set_reading(f->e, 1, T0 + 2 * SEC);
  ASSERT_UINT_EQ(mcpp_engine_next_deadline(f->e), UINT64_MAX);
  mcpp_engine_set_reading(NULL, 1, T0);
  fx_done(f);
}
