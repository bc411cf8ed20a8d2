/* The shared rules of outcome.c: how a ping ended, what counts as lost,
 * when a stale peer must be closed. */
#include "engine_fixture.h"

static mcpp_ping_outcome outcome(mcpp_event_type t, int64_t rpc_code, int invalid) {
  mcpp_event ev;
  memset(&ev, 0, sizeof ev);
  ev.type = t;
  ev.rpc_code = rpc_code;
  ev.invalid = invalid;
  return mcpp_event_outcome(&ev);
}

TEST(ping_outcome_of_each_final_event) {
  ASSERT_EQ(outcome(MCPP_EV_PONG, 0, 0), MCPP_OUTCOME_PONG);
  ASSERT_EQ(outcome(MCPP_EV_TIMEOUT, 0, 0), MCPP_OUTCOME_TIMEOUT);
  ASSERT_EQ(outcome(MCPP_EV_PING_ERROR, -32000, 0), MCPP_OUTCOME_ERROR);
  ASSERT_EQ(outcome(MCPP_EV_PING_ERROR, 0, 1), MCPP_OUTCOME_INVALID);
  ASSERT_EQ(outcome(MCPP_EV_UNSUPPORTED, -32601, 0), MCPP_OUTCOME_UNSUPPORTED);
  ASSERT_EQ(outcome(MCPP_EV_PING, 0, 0), MCPP_OUTCOME_NONE);
  ASSERT_EQ(outcome(MCPP_EV_STALE, 0, 0), MCPP_OUTCOME_NONE);
  ASSERT_EQ(mcpp_event_outcome(NULL), MCPP_OUTCOME_NONE);
  ASSERT_STR_EQ(mcpp_outcome_name(MCPP_OUTCOME_CLOSED), "closed");
  ASSERT(mcpp_outcome_name(MCPP_OUTCOME_NONE) == NULL);
}

/* The peer's JSON-RPC code and our MCPP_ERR_* code live in separate fields:
 * a peer answering with the number MCPP_ERR_CLOSED happens to be is still
 * its error (lost), and only our own close makes a ping "closed". */
TEST(an_event_of_an_unknown_version_is_read_as_none) {
  mcpp_event ev;
  memset(&ev, 0, sizeof ev);
  ev.type = MCPP_EV_TIMEOUT;
  ASSERT_EQ(mcpp_event_outcome(&ev), MCPP_OUTCOME_TIMEOUT); /* 0: V1 */
  ev.version = MCPP_EVENT_V1;
  ASSERT_EQ(mcpp_event_outcome(&ev), MCPP_OUTCOME_TIMEOUT);
  ev.version = MCPP_EVENT_VERSION + 1;
  ASSERT_EQ(mcpp_event_outcome(&ev), MCPP_OUTCOME_NONE);
  mcpp_rtt_stats *st = NULL;
  ASSERT_EQ(mcpp_rtt_stats_new(&st, 0, NULL), 0);
  ev.type = MCPP_EV_PING;
  mcpp_rtt_stats_observe(st, &ev, 1000.0);
  ev.version = 0;
  mcpp_rtt_stats_observe(st, &ev, 1000.0);
  mcpp_rtt_summary sum;
  mcpp_rtt_stats_summary(st, &sum);
  ASSERT_UINT_EQ(sum.sent, 1); /* only the readable one */
  mcpp_rtt_stats_free(st);
  fx *f = fx_new();
  fx_start(f, T0);
  char buf[256] = "x";
  ev.version = MCPP_EVENT_VERSION + 1;
  ASSERT_UINT_EQ(mcpp_engine_format_record(f->e, &ev, T0, buf, sizeof buf), 0);
  ASSERT_STR_EQ(buf, "");
  ev.version = 0;
  ASSERT(mcpp_engine_format_record(f->e, &ev, T0, buf, sizeof buf) > 0);
  fx_done(f);
}

TEST(peer_code_equal_to_an_mcpp_err_is_still_the_peers_error) {
  ASSERT_EQ(outcome(MCPP_EV_PING_ERROR, MCPP_ERR_CLOSED, 0), MCPP_OUTCOME_ERROR);
  ASSERT_EQ(outcome(MCPP_EV_TIMEOUT, MCPP_ERR_CLOSED, 0), MCPP_OUTCOME_TIMEOUT);
  mcpp_event ev;
  memset(&ev, 0, sizeof ev);
  ev.type = MCPP_EV_TIMEOUT;
  ev.error = MCPP_ERR_CLOSED;
  ASSERT_EQ(mcpp_event_outcome(&ev), MCPP_OUTCOME_CLOSED);
}

/* Issue 8 item 8: abandoned at close is "closed", never a timeout, and
 * never counted lost. */
TEST(ping_abandoned_at_close_is_closed_not_timeout_and_not_lost) {
  fx *f = fx_new();
  fx_start(f, T0);
  uint64_t seq = 0;
  ASSERT_EQ(mcpp_engine_ping(f->e, 1000, T0, &seq), 0);
  mcpp_engine_close(f->e, 0, "bye", T0 + MS);
  const fx_event *ev = fx_last_event(f, MCPP_EV_TIMEOUT);
  ASSERT(ev != NULL);
  ASSERT_UINT_EQ(ev->ev.ping_seq, seq);
  ASSERT_EQ(mcpp_event_outcome(&ev->ev), MCPP_OUTCOME_CLOSED);
  ASSERT_EQ(mcpp_outcome_is_lost(MCPP_OUTCOME_CLOSED), 0);
  ASSERT_EQ(mcpp_outcome_is_lost(MCPP_OUTCOME_TIMEOUT), 1);
  ASSERT_EQ(mcpp_outcome_is_lost(MCPP_OUTCOME_UNSUPPORTED), 0);
  fx_done(f);
}

static int should_close_on_stale(mcpp_stale_action action, int exited) {
  fx *f = fx_new();
  f->s.interval_ms = 1000;
  f->s.jitter_pct = 0;
  f->s.failures = 1;
  f->s.on_stale = action;
  f->observe_process = 1;
  fx_start(f, T0);
  mcpp_engine_touch(f->e, T0);
  if (exited) f->process = MCPP_PROCESS_EXITED;
  fx_run_until(f, T0 + 20 * SEC);
  const fx_event *ev = fx_last_event(f, MCPP_EV_STALE);
  ASSERT(ev != NULL);
  int yes = mcpp_engine_should_close(f->e, &ev->ev);
  /* Only a stale verdict ever closes. */
  mcpp_event other = ev->ev;
  other.type = MCPP_EV_SUSPECT;
  ASSERT_EQ(mcpp_engine_should_close(f->e, &other), 0);
  /* The engine's events carry their layout's version; a zeroed one (an
   * older caller's) is read as V1, an unknown one as no event. */
  ASSERT_EQ(ev->ev.version, MCPP_EVENT_VERSION);
  mcpp_event mine = ev->ev;
  mine.version = 0;
  ASSERT_EQ(mcpp_engine_should_close(f->e, &mine), yes);
  mine.version = MCPP_EVENT_VERSION + 1;
  ASSERT_EQ(mcpp_engine_should_close(f->e, &mine), 0);
  fx_done(f);
  return yes;
}

TEST(stale_policy_closes_on_close_and_on_a_dead_process_only) {
  ASSERT_EQ(should_close_on_stale(MCPP_STALE_CLOSE, 0), 1);
  ASSERT_EQ(should_close_on_stale(MCPP_STALE_REPORT, 0), 0);
  ASSERT_EQ(should_close_on_stale(MCPP_STALE_REPORT, 1), 1);
  ASSERT_EQ(mcpp_engine_should_close(NULL, NULL), 0);
}

TEST(env_safe_keeps_the_sdks_names_and_no_shell_function) {
  ASSERT(mcpp_env_safe("PATH", "/usr/bin:/bin"));
  ASSERT(mcpp_env_safe("HOME", ""));
  ASSERT(mcpp_env_safe("USER", "u"));
  ASSERT(!mcpp_env_safe("TOKEN", "secret"));
  ASSERT(!mcpp_env_safe("path", "/bin")); /* names are case-sensitive here */
  ASSERT(!mcpp_env_safe("SHELL", "() { :; }"));
  ASSERT(!mcpp_env_safe(NULL, "x"));
  ASSERT(!mcpp_env_safe("PATH", NULL));
}
