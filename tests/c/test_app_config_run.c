/* `mcpping --config`'s check of one server (csrc/src/app/config_run.c)
 * driven with a fake clock: every branch from a skip to the last ping, down
 * to the status and reason of the row it gives. */
#include <string.h>

#include "mcpping.h"
#include "task.h"

static mcpp_config_run *start(const char *transport, int disabled, uint64_t count,
                              uint32_t interval, uint32_t timeout, uint32_t deadline,
                              int64_t now) {
  mcpp_config_plan p = {count, interval, timeout, deadline};
  mcpp_config_run *r = NULL;
  ASSERT_EQ(mcpp_config_run_new(&r, transport, disabled, &p, now), 0);
  return r;
}

static mcpp_config_action next(mcpp_config_run *r, int64_t now) {
  mcpp_config_action a;
  mcpp_config_run_next(r, now, &a);
  return a;
}

/* Opens and shakes hands at `now` with protocol 2025-11-25. */
static void open_ok(mcpp_config_run *r, int64_t now) {
  ASSERT_EQ(next(r, now).what, MCPP_CONFIG_DO_OPEN);
  mcpp_config_run_open_done(r, now, MCPP_CONFIG_OPEN_OK, NULL);
  ASSERT_EQ(next(r, now).what, MCPP_CONFIG_DO_HANDSHAKE);
  mcpp_config_run_handshake_done(r, now, "2025-11-25");
}

/* Closes as asked (want_exit as given) and checks the run is done. */
static void close_with(mcpp_config_run *r, int64_t now, int want_exit,
                       const mcpp_config_end *e) {
  mcpp_config_action a = next(r, now);
  ASSERT_EQ(a.what, MCPP_CONFIG_DO_CLOSE);
  ASSERT_EQ(a.want_exit, want_exit);
  mcpp_config_end none = {0};
  mcpp_config_run_closed(r, now, e ? e : &none);
  ASSERT_EQ(next(r, now).what, MCPP_CONFIG_DO_DONE);
}

static mcpp_config_row row_of(mcpp_config_run *r) {
  mcpp_config_row row = {0};
  mcpp_config_run_row(r, &row);
  return row;
}

static void assert_row(mcpp_config_run *r, const char *status, const char *reason) {
  mcpp_config_row row = row_of(r);
  ASSERT_STR_EQ(row.status, status);
  if (reason) ASSERT_STR_EQ(row.reason, reason);
  else ASSERT(row.reason == NULL);
}

TEST(app_config_run_skips_disabled_and_sse_without_opening) {
  mcpp_config_run *r = start("stdio", 1, 3, 1000, 5000, 15000, 0);
  ASSERT_EQ(next(r, 0).what, MCPP_CONFIG_DO_DONE);
  assert_row(r, "skipped", "disabled");
  mcpp_config_run_free(r);
  r = start("sse", 0, 3, 1000, 5000, 15000, 0);
  ASSERT_EQ(next(r, 0).what, MCPP_CONFIG_DO_DONE);
  assert_row(r, "skipped", "legacy HTTP+SSE transport");
  mcpp_config_run_free(r);
  mcpp_config_run *bad = NULL;
  mcpp_config_plan p = {0};
  ASSERT_EQ(mcpp_config_run_new(&bad, NULL, 0, &p, 0), MCPP_ERR_INVALID_ARGUMENT);
}

TEST(app_config_run_open_failures_end_without_a_close) {
  mcpp_config_run *r = start("stdio", 0, 3, 1000, 5000, 15000, 0);
  ASSERT_EQ(next(r, 0).until_ms, 15000);
  mcpp_config_run_open_done(r, 1, MCPP_CONFIG_OPEN_UNRESOLVED,
                            "env.TOKEN: ${input:token} cannot be filled in");
  ASSERT_EQ(next(r, 1).what, MCPP_CONFIG_DO_DONE);
  assert_row(r, "not started", "env.TOKEN: ${input:token} cannot be filled in");
  mcpp_config_run_free(r);

  r = start("stdio", 0, 3, 1000, 5000, 15000, 0);
  next(r, 0);
  mcpp_config_run_open_done(r, 1, MCPP_CONFIG_OPEN_SPAWN_FAILED,
                            "cannot start nope: no such file or directory (ENOENT)");
  ASSERT_EQ(next(r, 1).what, MCPP_CONFIG_DO_DONE);
  assert_row(r, "spawn failed", "cannot start nope: no such file or directory (ENOENT)");
  mcpp_config_run_free(r);

  /* The binding's own message could quote a secret: never shown. */
  r = start("stdio", 0, 3, 1000, 5000, 15000, 0);
  next(r, 0);
  mcpp_config_run_open_done(r, 1, MCPP_CONFIG_OPEN_INVALID, "argument 'sk-SECRET' holds a NUL");
  ASSERT_EQ(next(r, 1).what, MCPP_CONFIG_DO_DONE);
  assert_row(r, "spawn failed", "invalid command line or environment");
  mcpp_config_run_free(r);
}

TEST(app_config_run_handshake_is_bounded_by_the_deadline_plus_a_second) {
  mcpp_config_run *r = start("stdio", 0, 3, 1000, 5000, 15000, 100);
  next(r, 100);
  mcpp_config_run_open_done(r, 600, MCPP_CONFIG_OPEN_OK, NULL);
  mcpp_config_action a = next(r, 600);
  ASSERT_EQ(a.what, MCPP_CONFIG_DO_HANDSHAKE);
  ASSERT_EQ(a.until_ms, 15100);
  ASSERT_EQ(a.timeout_ms, 14500 + 1000);
  ASSERT_EQ(next(r, 700).what, MCPP_CONFIG_DO_HANDSHAKE); /* asked again: the same */
  mcpp_config_run_handshake_timed_out(r, 15100);
  close_with(r, 15100, 0, NULL);
  assert_row(r, "timeout", "no initialize result");
  ASSERT(row_of(r).protocol_version == NULL);
  mcpp_config_run_free(r);

  /* The open itself used the whole deadline: no handshake is started. */
  r = start("stdio", 0, 3, 1000, 5000, 2000, 0);
  next(r, 0);
  mcpp_config_run_open_done(r, 2000, MCPP_CONFIG_OPEN_OK, NULL);
  close_with(r, 2000, 0, NULL);
  assert_row(r, "timeout", "no initialize result");
  mcpp_config_run_free(r);

  /* What the server wrote instead of its answer is said, and counted. */
  r = start("stdio", 0, 3, 1000, 5000, 15000, 0);
  next(r, 0);
  mcpp_config_run_open_done(r, 0, MCPP_CONFIG_OPEN_OK, NULL);
  next(r, 0);
  mcpp_config_run_handshake_timed_out(r, 15000);
  mcpp_config_run_unreadable(r, 1, "the server wrote a line that is not JSON-RPC: \"Content-Length: 9\"");
  close_with(r, 15000, 0, NULL);
  assert_row(r, "timeout", "no initialize result; the server wrote a line that is not "
                           "JSON-RPC: \"Content-Length: 9\"");
  ASSERT_EQ(row_of(r).non_json_lines, 1);
  mcpp_config_run_free(r);
}

TEST(app_config_run_handshake_failure_reasons) {
  /* An error answer with a code, as Node's HTTP session reports it. */
  mcpp_config_run *r = start("streamable-http", 0, 3, 1000, 5000, 15000, 0);
  next(r, 0);
  mcpp_config_run_open_done(r, 0, MCPP_CONFIG_OPEN_OK, NULL);
  next(r, 0);
  mcpp_config_run_handshake_failed(r, 5, 0, 1, -32601, "Method not found");
  mcpp_config_run_stderr(r, "starting\nboom\n", 14);
  close_with(r, 5, 0, NULL);
  assert_row(r, "handshake failed", "initialize failed: -32601 Method not found");
  /* Kept for a server that would not talk. */
  ASSERT_STR_EQ(row_of(r).last_stderr, "boom");
  mcpp_config_run_free(r);

  /* The handshake's own sentence. */
  r = start("stdio", 0, 3, 1000, 5000, 15000, 0);
  next(r, 0);
  mcpp_config_run_open_done(r, 0, MCPP_CONFIG_OPEN_OK, NULL);
  next(r, 0);
  mcpp_config_run_handshake_failed(r, 5, 0, 0, 0, "unsupported protocol version 1999-01-01");
  close_with(r, 5, 0, NULL);
  assert_row(r, "handshake failed", "unsupported protocol version 1999-01-01");
  mcpp_config_run_free(r);

  /* The server died during it: the reason is how it ended. */
  r = start("stdio", 0, 3, 1000, 5000, 15000, 0);
  next(r, 0);
  mcpp_config_run_open_done(r, 0, MCPP_CONFIG_OPEN_OK, NULL);
  next(r, 0);
  mcpp_config_run_handshake_failed(r, 5, 1, 0, 0, "connection closed");
  mcpp_config_run_stderr(r, "fatal: no ", 10);
  mcpp_config_run_stderr(r, "config\r\n\n  \n", 12);
  /* Lines that are not JSON-RPC are counted; the sentence is only for a
   * handshake that ran out of time. */
  mcpp_config_run_unreadable(r, 2, "the server wrote 2 lines that are not JSON-RPC, the first: \"hello\"");
  mcpp_config_end died = {1, 3, 0, NULL};
  close_with(r, 5, 1, &died);
  assert_row(r, "handshake failed", "server exited with status 3");
  ASSERT_STR_EQ(row_of(r).last_stderr, "fatal: no config");
  ASSERT_EQ(row_of(r).non_json_lines, 2);
  mcpp_config_run_free(r);

  /* An HTTP server that could not be reached: the errno name, never the URL. */
  r = start("streamable-http", 0, 3, 1000, 5000, 15000, 0);
  next(r, 0);
  mcpp_config_run_open_done(r, 0, MCPP_CONFIG_OPEN_OK, NULL);
  next(r, 0);
  mcpp_config_run_handshake_failed(r, 5, 1, 0, 0, "fetch failed");
  mcpp_config_end refused = {0, 0, 0, "ECONNREFUSED"};
  close_with(r, 5, 1, &refused);
  assert_row(r, "handshake failed", "cannot connect: ECONNREFUSED");
  mcpp_config_run_free(r);
}

TEST(app_config_run_never_quotes_the_entrys_secrets) {
  /* A server that prints its token and dies, and one whose error answer
   * quotes the URL's query: what the row quotes shows *** instead. A
   * value under 4 bytes (x=1) is no secret: "status 1" stays as it is. */
  const char *secrets[] = {"s3cr3t", "Bearer abc", "http://u:pw@h/mcp?key=k9k9k9&x=1", NULL};
  mcpp_config_run *r = start("stdio", 0, 3, 1000, 5000, 15000, 0);
  ASSERT_EQ(mcpp_config_run_set_secrets(r, secrets, 4), 0); /* NULLs are skipped */
  next(r, 0);
  mcpp_config_run_open_done(r, 0, MCPP_CONFIG_OPEN_OK, NULL);
  next(r, 0);
  mcpp_config_run_handshake_failed(r, 5, 1, 0, 0, "connection closed");
  mcpp_config_run_stderr(r, "token=s3cr3t\n", 13);
  mcpp_config_end died = {1, 1, 0, NULL};
  close_with(r, 5, 1, &died);
  assert_row(r, "handshake failed", "server exited with status 1");
  ASSERT_STR_EQ(row_of(r).last_stderr, "token=***");
  mcpp_config_run_free(r);

  r = start("streamable-http", 0, 3, 1000, 5000, 15000, 0);
  ASSERT_EQ(mcpp_config_run_set_secrets(r, secrets, 3), 0);
  next(r, 0);
  mcpp_config_run_open_done(r, 0, MCPP_CONFIG_OPEN_OK, NULL);
  next(r, 0);
  mcpp_config_run_handshake_failed(r, 5, 0, 1, -32000, "bad key k9k9k9 for u:pw (auth: Bearer abc)");
  close_with(r, 5, 0, NULL);
  assert_row(r, "handshake failed", "initialize failed: -32000 bad key *** for *** (auth: ***)");
  mcpp_config_run_free(r);
  ASSERT_EQ(mcpp_config_run_set_secrets(NULL, secrets, 1), MCPP_ERR_INVALID_ARGUMENT);
}

TEST(app_config_run_protocol_without_ping_is_unsupported) {
  mcpp_config_run *r = start("stdio", 0, 3, 1000, 5000, 15000, 0);
  next(r, 0);
  mcpp_config_run_open_done(r, 0, MCPP_CONFIG_OPEN_OK, NULL);
  next(r, 0);
  mcpp_config_run_handshake_done(r, 10, "2026-07-28");
  close_with(r, 10, 0, NULL);
  assert_row(r, "unsupported", "protocol 2026-07-28 has no ping");
  ASSERT_STR_EQ(row_of(r).protocol_version, "2026-07-28");
  mcpp_config_run_free(r);
}

TEST(app_config_run_count_zero_checks_the_handshake_only) {
  mcpp_config_run *r = start("stdio", 0, 0, 1000, 5000, 15000, 0);
  open_ok(r, 0);
  mcpp_config_run_stderr(r, "hello\n", 6);
  close_with(r, 1, 0, NULL);
  assert_row(r, "ok", NULL);
  ASSERT(row_of(r).last_stderr == NULL); /* only for a server that would not talk */
  ASSERT_EQ(row_of(r).sent, 0);
  mcpp_config_run_free(r);
}

TEST(app_config_run_pings_keep_to_a_grid_from_the_first) {
  mcpp_config_run *r = start("stdio", 0, 3, 1000, 5000, 15000, 0);
  open_ok(r, 50);
  mcpp_config_action a = next(r, 100);
  ASSERT_EQ(a.what, MCPP_CONFIG_DO_PING);
  ASSERT_EQ(a.timeout_ms, 5000);
  mcpp_config_run_replied(r, 130, MCPP_REPLY_OK, 30.5);
  a = next(r, 130);
  ASSERT_EQ(a.what, MCPP_CONFIG_DO_WAIT);
  ASSERT_EQ(a.until_ms, 1100); /* first + 1 interval, not reply + interval */
  ASSERT_EQ(next(r, 1100).what, MCPP_CONFIG_DO_PING);
  /* A slow reply: the next ping is due at once, still on the grid. */
  mcpp_config_run_replied(r, 2500, MCPP_REPLY_OK, 1400);
  ASSERT_EQ(next(r, 2500).what, MCPP_CONFIG_DO_PING);
  mcpp_config_run_replied(r, 2510, MCPP_REPLY_OK, 10);
  close_with(r, 2510, 0, NULL);
  mcpp_config_row row = row_of(r);
  ASSERT_STR_EQ(row.status, "ok");
  ASSERT(row.reason == NULL);
  ASSERT_EQ(row.sent, 3);
  ASSERT_EQ(row.received, 3);
  ASSERT_EQ(row.n_rtts, 3);
  ASSERT(row.rtts_ms[0] == 30.5 && row.rtts_ms[1] == 1400 && row.rtts_ms[2] == 10);
  mcpp_config_run_free(r);
}

TEST(app_config_run_grid_wait_stops_at_the_deadline) {
  mcpp_config_run *r = start("stdio", 0, 3, 10000, 5000, 3000, 0);
  open_ok(r, 0);
  next(r, 0);
  mcpp_config_run_replied(r, 10, MCPP_REPLY_OK, 10);
  mcpp_config_action a = next(r, 10);
  ASSERT_EQ(a.what, MCPP_CONFIG_DO_WAIT);
  ASSERT_EQ(a.until_ms, 3000); /* the deadline, not the grid's 10000 */
  close_with(r, 3000, 0, NULL);
  assert_row(r, "ok", NULL);
  ASSERT_EQ(row_of(r).sent, 1);
  mcpp_config_run_free(r);
}

TEST(app_config_run_ping_cut_by_the_deadline_is_not_counted) {
  mcpp_config_run *r = start("stdio", 0, 3, 1000, 5000, 4000, 0);
  open_ok(r, 0);
  next(r, 0);
  mcpp_config_run_replied(r, 10, MCPP_REPLY_OK, 10);
  ASSERT_EQ(next(r, 10).what, MCPP_CONFIG_DO_WAIT);
  mcpp_config_action a = next(r, 1000);
  ASSERT_EQ(a.what, MCPP_CONFIG_DO_PING);
  ASSERT_EQ(a.timeout_ms, 3000); /* what is left of the deadline, not 5000 */
  mcpp_config_run_replied(r, 4000, MCPP_REPLY_TIMEOUT, 0);
  close_with(r, 4000, 0, NULL);
  assert_row(r, "ok", NULL); /* 1 of 1: the cut ping is neither sent nor lost */
  ASSERT_EQ(row_of(r).sent, 1);
  mcpp_config_run_free(r);

  /* A ping that had its whole timeout and got no answer is a loss. */
  r = start("stdio", 0, 2, 1000, 500, 15000, 0);
  open_ok(r, 0);
  ASSERT_EQ(next(r, 0).timeout_ms, 500);
  mcpp_config_run_replied(r, 500, MCPP_REPLY_TIMEOUT, 0);
  ASSERT_EQ(next(r, 500).what, MCPP_CONFIG_DO_WAIT);
  next(r, 1000);
  mcpp_config_run_replied(r, 1010, MCPP_REPLY_OK, 10);
  close_with(r, 1010, 0, NULL);
  assert_row(r, "loss", NULL);
  ASSERT_EQ(row_of(r).sent, 2);
  ASSERT_EQ(row_of(r).received, 1);
  mcpp_config_run_free(r);
}

TEST(app_config_run_no_ping_before_the_deadline_is_a_timeout) {
  mcpp_config_run *r = start("stdio", 0, 3, 1000, 5000, 2000, 0);
  open_ok(r, 0);
  ASSERT_EQ(next(r, 0).timeout_ms, 2000);
  mcpp_config_run_replied(r, 2000, MCPP_REPLY_TIMEOUT, 0);
  close_with(r, 2000, 0, NULL);
  assert_row(r, "timeout", "no ping finished before the deadline");
  mcpp_config_run_free(r);

  /* The handshake ended right at the deadline: no ping at all. */
  r = start("stdio", 0, 3, 1000, 5000, 2000, 0);
  next(r, 0);
  mcpp_config_run_open_done(r, 0, MCPP_CONFIG_OPEN_OK, NULL);
  next(r, 0);
  mcpp_config_run_handshake_done(r, 2000, "2025-11-25");
  close_with(r, 2000, 0, NULL);
  assert_row(r, "timeout", "no ping finished before the deadline");
  mcpp_config_run_free(r);
}

TEST(app_config_run_error_and_invalid_pings_count_as_lost) {
  mcpp_config_run *r = start("stdio", 0, 3, 0, 5000, 15000, 0);
  open_ok(r, 0);
  next(r, 0);
  mcpp_config_run_replied(r, 1, MCPP_REPLY_ERROR, 0);
  ASSERT_EQ(next(r, 1).what, MCPP_CONFIG_DO_PING); /* -i 0: no wait */
  mcpp_config_run_replied(r, 2, MCPP_REPLY_INVALID, 0);
  next(r, 2);
  mcpp_config_run_replied(r, 3, MCPP_REPLY_OK, 1);
  close_with(r, 3, 0, NULL);
  assert_row(r, "loss", NULL);
  ASSERT_EQ(row_of(r).sent, 3);
  ASSERT_EQ(row_of(r).received, 1);
  mcpp_config_run_free(r);
}

TEST(app_config_run_ping_refused_is_unsupported) {
  mcpp_config_run *r = start("stdio", 0, 3, 1000, 5000, 15000, 0);
  open_ok(r, 0);
  next(r, 0);
  mcpp_config_run_replied(r, 1, MCPP_REPLY_UNSUPPORTED, 0);
  close_with(r, 1, 0, NULL);
  assert_row(r, "unsupported", NULL);
  ASSERT_STR_EQ(row_of(r).protocol_version, "2025-11-25");
  mcpp_config_run_free(r);
}

TEST(app_config_run_closed_says_how_the_server_ended) {
  mcpp_config_run *r = start("stdio", 0, 3, 1000, 5000, 15000, 0);
  open_ok(r, 0);
  next(r, 0);
  mcpp_config_run_replied(r, 1, MCPP_REPLY_CLOSED, 0);
  mcpp_config_run_stderr(r, "  panic: out of cheese \n", 24);
  mcpp_config_end killed = {1, 0, 9, NULL};
  close_with(r, 1, 1, &killed);
  assert_row(r, "closed", "server killed by signal 9");
  ASSERT_STR_EQ(row_of(r).last_stderr, "panic: out of cheese");
  mcpp_config_run_free(r);

  /* Neither an exit nor a connect error learnt (an HTTP peer, or a process
   * that would not exit in time). */
  r = start("streamable-http", 0, 3, 1000, 5000, 15000, 0);
  open_ok(r, 0);
  next(r, 0);
  mcpp_config_run_replied(r, 1, MCPP_REPLY_CLOSED, 0);
  close_with(r, 1, 1, NULL);
  assert_row(r, "closed", "connection closed");
  mcpp_config_run_free(r);
}

TEST(app_config_run_ctrl_c_stops_the_pings) {
  mcpp_config_run *r = start("stdio", 0, 5, 1000, 5000, 15000, 0);
  open_ok(r, 0);
  next(r, 0);
  mcpp_config_run_replied(r, 1, MCPP_REPLY_OK, 1);
  ASSERT_EQ(next(r, 1).what, MCPP_CONFIG_DO_WAIT);
  mcpp_config_run_interrupt(r, 300);
  close_with(r, 300, 0, NULL);
  assert_row(r, "ok", NULL);
  ASSERT_EQ(row_of(r).sent, 1);
  mcpp_config_run_free(r);

  /* Before the first ping: none sent. */
  r = start("stdio", 0, 5, 1000, 5000, 15000, 0);
  open_ok(r, 0);
  mcpp_config_run_interrupt(r, 1);
  close_with(r, 1, 0, NULL);
  assert_row(r, "timeout", "no ping finished before the deadline");
  mcpp_config_run_free(r);
}

TEST(app_config_run_feeds_out_of_turn_are_ignored) {
  mcpp_config_run *r = start("stdio", 0, 1, 1000, 5000, 15000, 0);
  mcpp_config_run_replied(r, 0, MCPP_REPLY_OK, 1); /* no ping is out */
  mcpp_config_run_handshake_done(r, 0, "2026-07-28");
  mcpp_config_run_closed(r, 0, NULL);
  open_ok(r, 0);
  next(r, 0);
  mcpp_config_run_replied(r, 1, MCPP_REPLY_OK, 1);
  mcpp_config_run_replied(r, 2, MCPP_REPLY_OK, 1); /* twice */
  close_with(r, 2, 0, NULL);
  assert_row(r, "ok", NULL);
  ASSERT_EQ(row_of(r).sent, 1);
  ASSERT_STR_EQ(row_of(r).protocol_version, "2025-11-25");
  mcpp_config_run_free(r);
}

/* The tail keeps the last 4 KiB: a long line is cut at its start, never
 * mid-character, and blank lines after the last words are passed over. */
TEST(app_config_run_stderr_tail_keeps_the_last_line_of_the_last_4_kib) {
  mcpp_config_run *r = start("stdio", 0, 3, 1000, 5000, 15000, 0);
  open_ok(r, 0);
  next(r, 0);
  mcpp_config_run_replied(r, 1, MCPP_REPLY_CLOSED, 0);
  char big[5000];
  memset(big, 'x', sizeof big);
  mcpp_config_run_stderr(r, big, sizeof big); /* an old line, pushed out */
  mcpp_config_run_stderr(r, "\n", 1);
  for (int i = 0; i < 2100; i++) mcpp_config_run_stderr(r, "\xc3\xa9", 2); /* é x2100 */
  mcpp_config_run_stderr(r, "!!\n\t\n", 5);
  mcpp_config_end killed = {1, 0, 9, NULL};
  close_with(r, 1, 1, &killed);
  const char *last = row_of(r).last_stderr;
  ASSERT(last != NULL);
  /* 4096 bytes kept: "!!\n\t\n" and 4091 bytes of the é line, whose
   * first (half an é) goes. */
  ASSERT_EQ(strlen(last), 4090 + 2);
  ASSERT_EQ((unsigned char)last[0], 0xc3);
  ASSERT_EQ(last[strlen(last) - 1], '!');
  mcpp_config_run_free(r);
}
