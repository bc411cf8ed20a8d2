/*
 * The driver against real servers over real pipes: pings, forwarding,
 * framing, and the end of every connection (nothing left running).
 */
#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include "driver/driver.h"
#include "task.h"
#include "engine/test_hooks.h"
#include "test_conn_support.h"

static const char init_req[] =
    "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"initialize\",\"params\":{"
    "\"protocolVersion\":\"2025-11-25\",\"capabilities\":{},\"clientInfo\":{"
    "\"name\":\"t\",\"version\":\"1\"}}}";
static const char init_resp[] =
    "{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{\"protocolVersion\":"
    "\"2025-11-25\",\"capabilities\":{},\"serverInfo\":{\"name\":\"echo\","
    "\"version\":\"0.1.0\"}}}";

static void send_str(rec *r, const char *s) {
  ASSERT_EQ(0, mcpp_conn_send(r->conn, s, strlen(s)));
}

/* Keepalive starts once the server has spoken, so tests of keepalive
 * begin, as a real client does, with the initialize exchange. */
static void handshake(conn_fixture *f) {
  send_str(&f->r, init_req);
  run_until_frames(&f->loop, &f->r, 1);
  ASSERT(strstr(f->r.frames[0].data, "\"protocolVersion\"") != NULL);
}

TEST(conn_ping_rtt_against_echo) {
  conn_fixture f;
  cf_init(&f);
  cf_start(&f, "echo.py", NULL);
  ASSERT_GT(f.r.pid, 0);
  uint64_t seq = 0;
  ASSERT_EQ(0, mcpp_conn_ping(f.r.conn, 0, &seq));
  ASSERT_GT(seq, 0);
  size_t i = run_until_event(&f.loop, &f.r, MCPP_EV_PONG);
  ASSERT_UINT_EQ(seq, f.r.event_seq[i]);
  ASSERT_GT(f.r.last_rtt_us, 0);
  ASSERT_LT(f.r.last_rtt_us, margin_ms(5000) * 1000);
  mcpp_engine_info info;
  mcpp_engine_get_info(mcpp_conn_engine(f.r.conn), &info);
  ASSERT_UINT_EQ(1, info.pongs_received);
  ASSERT_EQ(0, f.r.n_frames); /* the pong is consumed, not forwarded */
  ASSERT_GT(f.r.n_records, 0);
  ASSERT_EQ(0, mcpp_conn_close(f.r.conn));
  cf_finish(&f);
  ASSERT_EQ(0, f.r.close.err);
  ASSERT_EQ(SIGTERM, f.r.close.term_signal);
  ASSERT_EQ(-1, f.r.close.exit_status);
  ASSERT_UINT_EQ(1, count_events(&f.r, MCPP_EV_CLOSED));
}

TEST(conn_frames_forwarded_byte_exact_and_in_order) {
  conn_fixture f;
  cf_init(&f);
  cf_start(&f, "echo.py", NULL);
  send_str(&f.r, init_req);
  /* Many frames interleaved with our pings. */
  enum { N = 300 };
  char buf[256];
  for (int i = 0; i < N; i++) {
    snprintf(buf, sizeof buf,
             "{\"jsonrpc\":\"2.0\",\"id\":%d,\"method\":\"echo\",\"params\":"
             "{\"n\":%d,\"s\":\"\\u00e9\\n\\\"x\"}}",
             100 + i, i);
    send_str(&f.r, buf);
    if (i % 10 == 0) ASSERT_EQ(0, mcpp_conn_ping(f.r.conn, 0, NULL));
  }
  /* A multi-MiB frame, both ways. */
  size_t big = 3 * 1024 * 1024;
  char *req = malloc(big + 128), *resp = malloc(big + 128);
  ASSERT(req && resp);
  int h = sprintf(req, "{\"jsonrpc\":\"2.0\",\"id\":\"big\",\"method\":"
                       "\"echo\",\"params\":{\"data\":\"");
  memset(req + h, 'a', big);
  strcpy(req + h + big, "\"}}");
  ASSERT_EQ(0, mcpp_conn_send(f.r.conn, req, strlen(req)));
  run_until_frames(&f.loop, &f.r, N + 2);
  ASSERT(frame_is(&f.r, 0, init_resp));
  for (int i = 0; i < N; i++) {
    snprintf(buf, sizeof buf,
             "{\"jsonrpc\":\"2.0\",\"id\":%d,\"result\":{\"n\":%d,\"s\":"
             "\"\xc3\xa9\\n\\\"x\"}}",
             100 + i, i);
    if (!frame_is(&f.r, (size_t)i + 1, buf))
      MCPP_FAIL("frame %d: %s", i + 1, f.r.frames[i + 1].data);
  }
  h = sprintf(resp, "{\"jsonrpc\":\"2.0\",\"id\":\"big\",\"result\":{"
                    "\"data\":\"");
  memset(resp + h, 'a', big);
  strcpy(resp + h + big, "\"}}");
  ASSERT(frame_is(&f.r, N + 1, resp));
  free(req);
  free(resp);
  run_until_event(&f.loop, &f.r, MCPP_EV_PONG);
  while (count_events(&f.r, MCPP_EV_PONG) < N / 10)
    uv_run(&f.loop, UV_RUN_ONCE);
  ASSERT_EQ(0, mcpp_conn_close(f.r.conn));
  cf_finish(&f);
}

TEST(conn_send_rejects_newline_and_after_close) {
  conn_fixture f;
  cf_init(&f);
  cf_start(&f, "echo.py", NULL);
  ASSERT_EQ(MCPP_ERR_FRAME_NEWLINE, mcpp_conn_send(f.r.conn, "{}\n{}", 5));
  ASSERT_EQ(0, mcpp_conn_close(f.r.conn));
  ASSERT_EQ(MCPP_ERR_CLOSED, mcpp_conn_send(f.r.conn, "{}", 2));
  ASSERT_EQ(MCPP_ERR_CLOSED, mcpp_conn_ping(f.r.conn, 0, NULL));
  cf_finish(&f);
}

TEST(conn_answers_peer_pings) {
  conn_fixture f;
  cf_init(&f);
  cf_start(&f, "echo.py", NULL);
  /* Before the handshake too. */
  send_str(&f.r, "{\"jsonrpc\":\"2.0\",\"id\":7,\"method\":\"test/ping_me\","
               "\"params\":{\"count\":50}}");
  run_until_frames(&f.loop, &f.r, 1);
  send_str(&f.r, "{\"jsonrpc\":\"2.0\",\"id\":8,\"method\":\"test/pongs\"}");
  run_until_frames(&f.loop, &f.r, 2);
  ASSERT(frame_is(&f.r, 0, "{\"jsonrpc\":\"2.0\",\"id\":7,\"result\":{\"sent\":50}}"));
  ASSERT(frame_is(&f.r, 1, "{\"jsonrpc\":\"2.0\",\"id\":8,\"result\":{\"pongs\":50}}"));
  ASSERT_UINT_EQ(50, count_events(&f.r, MCPP_EV_PING_ANSWERED));
  ASSERT_EQ(0, mcpp_conn_close(f.r.conn));
  cf_finish(&f);
}

TEST(conn_garbage_forwarded_intact) {
  conn_fixture f;
  cf_init(&f);
  cf_start(&f, "garbage.py", NULL);
  run_until_frames(&f.loop, &f.r, 8);
  ASSERT(frame_is(&f.r, 0, "not json at all"));
  ASSERT(frame_is(&f.r, 1, "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/"
                         "message\",\"params\":{\"level\":\"info\",\"data\":"
                         "\"split\"}}"));
  ASSERT(frame_is(&f.r, 2, "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/crlf\"}"));
  ASSERT(frame_is(&f.r, 3, "\xff\xfe \xc3\x28"));
  ASSERT(frame_is(&f.r, 4, "{\"a\":1}"));
  ASSERT(frame_is(&f.r, 5, "{\"a\":2}"));
  ASSERT(frame_is(&f.r, 6, "{\"a\":3}"));
  ASSERT(frame_is(&f.r, 7, "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/done\"}"));
  /* It still answers pings after all that. */
  ASSERT_EQ(0, mcpp_conn_ping(f.r.conn, 0, NULL));
  run_until_event(&f.loop, &f.r, MCPP_EV_PONG);
  ASSERT_EQ(0, mcpp_conn_close(f.r.conn));
  cf_finish(&f);
}

TEST(conn_long_line_under_limit_is_delivered_whole) {
  conn_fixture f;
  cf_init(&f);
  f.s.max_line_bytes = 300000;
  cf_start(&f, "garbage.py", "--long", "300000", "--delay-ms", "1", NULL);
  run_until_frames(&f.loop, &f.r, 9);
  ASSERT_UINT_EQ(300000, f.r.frames[7].len);
  ASSERT_EQ('L', f.r.frames[7].data[299999]);
  ASSERT_EQ(0, mcpp_conn_close(f.r.conn));
  cf_finish(&f);
}

TEST(conn_oversized_line_closes_with_frame_too_large) {
  conn_fixture f;
  cf_init(&f);
  f.s.max_line_bytes = 100000;
  cf_start(&f, "garbage.py", "--long", "300000", "--delay-ms", "1", NULL);
  run_until(&f.loop, &f.r.closed);
  ASSERT_EQ(MCPP_ERR_FRAME_TOO_LARGE, f.r.close.err);
  ASSERT(strstr(f.r.close_reason, "max_line_bytes") != NULL);
  ASSERT(strstr(f.r.close_reason, "100000") != NULL);
  /* What came before it was delivered; nothing of it, truncated or not. */
  ASSERT_EQ(7, f.r.n_frames);
  cf_finish(&f);
}

TEST(conn_stderr_callback_and_ignore) {
  conn_fixture f;
  rec q = {0};
  cf_init(&f);
  f.stderr_mode = MCPP_STDERR_CALLBACK;
  cf_start(&f, "echo.py", "--stderr", "hello from the server", NULL);
  ASSERT_EQ(0, spawn_peer(&f.loop, &q, &f.s, MCPP_STDERR_IGNORE, "echo.py",
                          "--stderr", "nobody hears this", NULL));
  while (!strstr(f.r.stderr_buf, "hello from the server\n"))
    uv_run(&f.loop, UV_RUN_ONCE);
  ASSERT_EQ(0, mcpp_conn_close(f.r.conn));
  ASSERT_EQ(0, mcpp_conn_close(q.conn));
  run_until(&f.loop, &q.closed);
  cf_finish(&f);
  ASSERT_EQ(0, q.stderr_len);
  assert_gone(q.pid);
}

/* A frozen server with a grandchild: stale in time, then the whole group
 * is killed and reaped. */
TEST_TIMEOUT(conn_frozen_peer_goes_stale_and_group_is_killed, 60) {
  conn_fixture f;
  cf_init(&f);
  /* Orphans reparent to us, so the grandchild's end can be checked. */
  ASSERT_EQ(0, prctl(PR_SET_CHILD_SUBREAPER, 1));
  f.s.interval_ms = 100;
  f.s.timeout_ms = 100;
  f.s.failures = 3;
  f.s.jitter_pct = 0;
  cf_start(&f, "echo.py", NULL);
  send_str(&f.r, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"test/spawn_child\"}");
  run_until_frames(&f.loop, &f.r, 1);
  const char *p = strstr(f.r.frames[0].data, "\"pid\":");
  ASSERT(p != NULL);
  int grandchild = atoi(p + 6);
  ASSERT_GT(grandchild, 0);
  ASSERT_EQ(getpgid(f.r.pid), getpgid(grandchild));
  ASSERT_EQ(f.r.pid, getpgid(f.r.pid));
  ASSERT_EQ(0, kill(f.r.pid, SIGSTOP));
  uint64_t stopped = uv_hrtime();
  run_until_event(&f.loop, &f.r, MCPP_EV_SUSPECT);
  run_until(&f.loop, &f.r.closed);
  uint64_t took_ms = (uv_hrtime() - stopped) / 1000000;
  /* At most interval + timeout x failures, plus margin. The process
   * status sees the stop before the pings time out: stale one timeout
   * after the stop was seen, not sooner. */
  ASSERT_LE(took_ms, 100 + 100 * 3 + margin_ms(1500));
  ASSERT_GE(took_ms, 100);
  ASSERT(find_event(&f.r, MCPP_EV_STALE) != SIZE_MAX);
  ASSERT_LT(find_event(&f.r, MCPP_EV_SUSPECT), find_event(&f.r, MCPP_EV_STALE));
  ASSERT_EQ(MCPP_ERR_STALE, f.r.close.err);
  ASSERT_NE(0, f.r.close.term_signal);
  int status = 0;
  ASSERT_EQ(grandchild, waitpid(grandchild, &status, 0));
  ASSERT(WIFSIGNALED(status));
  cf_finish(&f);
}

TEST_TIMEOUT(conn_freeze_peer_goes_stale, 60) {
  conn_fixture f;
  cf_init(&f);
  f.s.interval_ms = 50;
  f.s.timeout_ms = 100;
  f.s.failures = 2;
  cf_start(&f, "freeze.py", NULL);
  send_str(&f.r, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"test/freeze\"}");
  run_until(&f.loop, &f.r.closed);
  ASSERT_EQ(MCPP_ERR_STALE, f.r.close.err);
  ASSERT_EQ(SIGTERM, f.r.close.term_signal);
  ASSERT_UINT_EQ(1, count_events(&f.r, MCPP_EV_STALE));
  cf_finish(&f);
}

TEST(conn_dying_peer_reports_exit_status) {
  conn_fixture f;
  cf_init(&f);
  cf_start(&f, "dies.py", "--after", "1", "--code", "7", NULL);
  send_str(&f.r, init_req);
  run_until(&f.loop, &f.r.closed);
  /* Its last answer still arrived. */
  ASSERT_EQ(1, f.r.n_frames);
  ASSERT(strstr(f.r.frames[0].data, "\"serverInfo\":{\"name\":\"dies\"") !=
         NULL);
  ASSERT_EQ(MCPP_ERR_CLOSED, f.r.close.err);
  ASSERT_EQ(7, f.r.close.exit_status);
  ASSERT_EQ(0, f.r.close.term_signal);
  cf_finish(&f);
}

/* A server that dies right after writing: when our loop runs again the
 * process check is overdue and runs before the pipe is read. The exit must
 * not be a stale verdict that drops what is still in the pipe. */
TEST(conn_exit_seen_by_process_check_loses_no_last_lines) {
  conn_fixture f;
  cf_init(&f);
  f.s.interval_ms = 50;
  f.s.jitter_pct = 0;
  f.s.timeout_ms = 100; /* the process check is due 50 ms after the ping */
  char *args[] = {
      "sh", "-c",
      "echo '{\"jsonrpc\":\"2.0\",\"method\":\"hello\"}'; sleep 0.1; i=0; "
      "while [ $i -lt 200 ]; do echo \"{\\\"n\\\":$i}\"; i=$((i+1)); done; "
      "sleep 0.2; exit 3",
      NULL};
  mcpp_spawn_options o = {0};
  o.file = "sh";
  o.args = args;
  ASSERT_EQ(0, mcpp_conn_spawn(&f.r.conn, &f.loop, &f.s, &o,
                               test_rec_callbacks(), &f.r, NULL));
  f.r.pid = mcpp_conn_pid(f.r.conn);
  run_until_frames(&f.loop, &f.r, 1); /* hello: keepalive starts */
  while (count_events(&f.r, MCPP_EV_PING) == 0) uv_run(&f.loop, UV_RUN_ONCE);
  /* The ping is out; the server writes 200 lines and exits while our loop
   * does not run (WNOWAIT: the zombie stays ours to reap). */
  siginfo_t info;
  ASSERT_EQ(0, waitid(P_PID, (id_t)f.r.pid, &info, WEXITED | WNOWAIT));
  run_until(&f.loop, &f.r.closed);
  ASSERT_EQ(201, f.r.n_frames);
  ASSERT(frame_is(&f.r, 200, "{\"n\":199}"));
  ASSERT_EQ(3, f.r.close.exit_status);
  ASSERT_EQ(0, count_events(&f.r, MCPP_EV_STALE));
  cf_finish(&f);
}

TEST(conn_half_open_peer_closed_on_eof_and_killed) {
  conn_fixture f;
  cf_init(&f);
  cf_start(&f, "half_open.py", NULL);
  run_until(&f.loop, &f.r.closed);
  ASSERT_EQ(MCPP_ERR_CLOSED, f.r.close.err);
  ASSERT_STR_EQ("server closed stdout", f.r.close_reason);
  ASSERT_EQ(SIGTERM, f.r.close.term_signal);
  ASSERT_EQ(-1, f.r.close.exit_status);
  cf_finish(&f);
}

TEST(conn_unsupported_peer_stops_pinging_and_stays_open) {
  conn_fixture f;
  cf_init(&f);
  f.s.interval_ms = 20;
  cf_start(&f, "unsupported.py", NULL);
  handshake(&f);
  run_until_event(&f.loop, &f.r, MCPP_EV_UNSUPPORTED);
  ASSERT_EQ(-32601, f.r.last_rpc_code);
  /* Ten keepalive intervals later: still exactly one ping sent. */
  run_for(&f.loop, 200);
  send_str(&f.r, "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"test/pings\"}");
  run_until_frames(&f.loop, &f.r, 2);
  ASSERT(frame_is(&f.r, 1, "{\"jsonrpc\":\"2.0\",\"id\":2,\"result\":{\"pings\":1}}"));
  ASSERT_EQ(MCPP_ERR_UNSUPPORTED, mcpp_conn_ping(f.r.conn, 0, NULL));
  ASSERT(!f.r.closed);
  ASSERT_UINT_EQ(0, count_events(&f.r, MCPP_EV_STALE));
  ASSERT_UINT_EQ(0, count_events(&f.r, MCPP_EV_SUSPECT));
  ASSERT_EQ(0, mcpp_conn_close(f.r.conn));
  cf_finish(&f);
  ASSERT_EQ(0, f.r.close.err);
}

TEST_TIMEOUT(conn_drop_pings_goes_stale, 60) {
  conn_fixture f;
  cf_init(&f);
  f.s.interval_ms = 50;
  f.s.timeout_ms = 100;
  f.s.failures = 2;
  cf_start(&f, "drop_pings.py", NULL);
  handshake(&f);
  run_until(&f.loop, &f.r.closed);
  ASSERT_EQ(MCPP_ERR_STALE, f.r.close.err);
  ASSERT(strstr(f.r.close_reason, "stale") != NULL);
  ASSERT_GE(count_events(&f.r, MCPP_EV_TIMEOUT), 2);
  ASSERT_LT(find_event(&f.r, MCPP_EV_SUSPECT), find_event(&f.r, MCPP_EV_STALE));
  cf_finish(&f);
}

TEST_TIMEOUT(conn_ping_flood_from_non_reader_is_flooded, 60) {
  conn_fixture f;
  cf_init(&f);
  cf_start(&f, "ping_flood.py", "--no-read", "--count", "100000", NULL);
  run_until(&f.loop, &f.r.closed);
  ASSERT_EQ(MCPP_ERR_FLOODED, f.r.close.err);
  ASSERT(strstr(f.r.close_reason, "floods") != NULL);
  cf_finish(&f);
}

TEST_TIMEOUT(conn_ping_flood_from_reader_is_all_answered, 60) {
  conn_fixture f;
  cf_init(&f);
  cf_start(&f, "ping_flood.py", "--count", "20000", NULL);
  run_until_frames(&f.loop, &f.r, 1);
  ASSERT(frame_is(&f.r, 0, "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/"
                         "flood_done\",\"params\":{\"answered\":20000}}"));
  ASSERT(!f.r.closed);
  mcpp_engine_info info;
  mcpp_engine_get_info(mcpp_conn_engine(f.r.conn), &info);
  ASSERT_UINT_EQ(20000, info.pings_answered);
  ASSERT_EQ(0, mcpp_conn_close(f.r.conn));
  cf_finish(&f);
}

static int callbacks_fired;

static void never_message(mcpp_conn *c, const char *f, size_t n, void *u) {
  callbacks_fired++;
}

static void never_close(mcpp_conn *c, const mcpp_close_info *i, void *u) {
  callbacks_fired++;
}

TEST(conn_spawn_failure_leaves_nothing) {
  conn_fixture f;
  cf_init(&f);
  char *args[] = {"/nonexistent/mcp-server", NULL};
  mcpp_spawn_options o = {0};
  o.file = args[0];
  o.args = args;
  o.stderr_mode = MCPP_STDERR_CALLBACK;
  mcpp_conn_callbacks cb = {0};
  cb.on_message = never_message;
  cb.on_close = never_close;
  mcpp_conn *c = (mcpp_conn *)&f.s; /* must be reset to NULL */
  ASSERT_EQ(MCPP_ERR_SPAWN,
            mcpp_conn_spawn(&c, &f.loop, &f.s, &o, &cb, NULL, NULL));
  ASSERT(c == NULL);
  ASSERT(strstr(mcpp_conn_spawn_error(), "/nonexistent/mcp-server") != NULL);
  ASSERT(strstr(mcpp_conn_spawn_error(), "ENOENT") != NULL);
  ASSERT_EQ(0, uv_run(&f.loop, UV_RUN_DEFAULT));
  ASSERT_EQ(0, uv_loop_close(&f.loop));
  ASSERT_EQ(0, callbacks_fired);
  ASSERT_EQ(f.fds, count_fds());
  /* A bad setting fails before anything starts. */
  ASSERT_EQ(0, uv_loop_init(&f.loop));
  f.s.min_interval_ms = 1000;
  f.s.interval_ms = 50;
  ASSERT_EQ(MCPP_ERR_INTERVAL_TOO_SHORT,
            mcpp_conn_spawn(&c, &f.loop, &f.s, &o, &cb, NULL, NULL));
  ASSERT_EQ(0, uv_run(&f.loop, UV_RUN_DEFAULT));
  ASSERT_EQ(0, uv_loop_close(&f.loop));
  ASSERT_EQ(f.fds, count_fds());
}

TEST(conn_close_is_idempotent) {
  conn_fixture f;
  cf_init(&f);
  f.stderr_mode = MCPP_STDERR_CALLBACK;
  cf_start(&f, "echo.py", NULL);
  mcpp_conn *c = f.r.conn;
  ASSERT_EQ(0, mcpp_conn_close(c));
  ASSERT_EQ(MCPP_ERR_CLOSED, mcpp_conn_close(c));
  ASSERT_EQ(MCPP_ERR_CLOSED, mcpp_conn_close(c));
  cf_finish(&f);
  ASSERT_UINT_EQ(1, count_events(&f.r, MCPP_EV_CLOSED));
}

/* Closing from inside on_message must stop delivery at once. */
static void close_on_first(rec *r, const char *frame, size_t len) {
  ASSERT_EQ(0, mcpp_conn_close(r->conn));
  ASSERT_EQ(MCPP_ERR_CLOSED, mcpp_conn_close(r->conn));
}

TEST(conn_close_from_callback_stops_delivery) {
  conn_fixture f;
  cf_init(&f);
  f.r.on_frame = close_on_first;
  cf_start(&f, "garbage.py", "--delay-ms", "0", NULL);
  cf_finish(&f);
  ASSERT_EQ(1, f.r.n_frames);
  ASSERT_EQ(0, f.r.close.err);
}

/* A server ignoring SIGTERM is killed after the grace period. */
TEST(conn_sigkill_after_grace) {
  conn_fixture f;
  cf_init(&f);
  char *args[] = {"sh", "-c", "trap '' TERM; while :; do sleep 1; done", NULL};
  mcpp_spawn_options o = {0};
  o.file = "sh";
  o.args = args;
  o.kill_grace_ms = 100;
  ASSERT_EQ(0, mcpp_conn_spawn(&f.r.conn, &f.loop, &f.s, &o,
                               test_rec_callbacks(), &f.r, NULL));
  f.r.pid = mcpp_conn_pid(f.r.conn);
  run_for(&f.loop, 100); /* let the shell install its trap */
  uint64_t t0 = uv_hrtime();
  ASSERT_EQ(0, mcpp_conn_close(f.r.conn));
  cf_finish(&f);
  ASSERT_EQ(SIGKILL, f.r.close.term_signal);
  ASSERT_GE((uv_hrtime() - t0) / 1000000, 90);
}

/* Keepalive pings go out only while the peer is quiet: traffic counts as
 * proof of life and moves the (lazily re-armed) deadline. */
/* While talking: the engine's last traffic as of the previous frame, its
 * pings by then, and the interval. */
static uint64_t talk_rx_us, talk_pings, talk_interval_us;

static void keep_talking(rec *r, const char *frame, size_t len) {
  if (r->arg) return;
  mcpp_engine_info info;
  mcpp_engine_get_info(mcpp_conn_engine(r->conn), &info);
  /* A keepalive ping between the previous frame and this one went out
   * only after an interval without traffic, so the two arrived at least
   * an interval apart, in the engine's own clock: a busy machine may
   * starve the peer into such a silence, but a ping sooner is a bug. */
  if (talk_rx_us && info.pings_sent > talk_pings)
    ASSERT_GE(info.last_traffic_us - talk_rx_us, talk_interval_us);
  talk_rx_us = info.last_traffic_us;
  talk_pings = info.pings_sent;
  static const char req[] =
      "{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"echo\",\"params\":{}}";
  ASSERT_EQ(0, mcpp_conn_send(r->conn, req, sizeof req - 1));
}

TEST(conn_keepalive_pings_only_a_quiet_peer) {
  conn_fixture f;
  cf_init(&f);
  f.s.interval_ms = margin_ms(100);
  f.s.jitter_pct = 0;
  talk_interval_us = (uint64_t)f.s.interval_ms * 1000;
  cf_start(&f, "echo.py", NULL);
  /* Busy: an echo ping-pong of app frames for three intervals, and ten
   * round trips at least; keep_talking checks every ping meanwhile. */
  f.r.on_frame = keep_talking;
  send_str(&f.r, "{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"echo\",\"params\":{}}");
  run_until_frames(&f.loop, &f.r, 1); /* the server is up */
  size_t started = f.r.n_frames;
  run_for(&f.loop, margin_ms(300));
  while (f.r.n_frames - started <= 10) uv_run(&f.loop, UV_RUN_ONCE);
  f.r.arg = &f.r; /* stop talking */
  /* Quiet: keepalive pings start, and are answered. */
  size_t pongs_before = count_events(&f.r, MCPP_EV_PONG);
  size_t pings_before = count_events(&f.r, MCPP_EV_PING);
  while (count_events(&f.r, MCPP_EV_PONG) < pongs_before + 2)
    uv_run(&f.loop, UV_RUN_ONCE);
  mcpp_engine_info info;
  mcpp_engine_get_info(mcpp_conn_engine(f.r.conn), &info);
  ASSERT_GE(info.pings_sent, pings_before + 2);
  ASSERT_EQ(MCPP_STATE_ALIVE, info.state);
  ASSERT_EQ(0, mcpp_conn_close(f.r.conn));
  cf_finish(&f);
}

/* A timer that only sends keepalive reads nothing ahead: the read-ahead is
 * for expiries. */
TEST(conn_keepalive_send_alone_reads_nothing_ahead) {
  conn_fixture f;
  cf_init(&f);
  f.s.interval_ms = 300;
  f.s.jitter_pct = 0;
  f.s.timeout_ms = 60000; /* nothing expires while the pongs come */
  cf_start(&f, "echo.py", NULL);
  handshake(&f);
  unsigned long reads_before = mcpp__conn_read_aheads;
  while (count_events(&f.r, MCPP_EV_PONG) < 3) uv_run(&f.loop, UV_RUN_ONCE);
  ASSERT_EQ(0, (int)(mcpp__conn_read_aheads - reads_before));
  ASSERT_EQ(0, mcpp_conn_close(f.r.conn));
  cf_finish(&f);
}

/* A wake-up that only sends keepalive waits for the send grid (a tenth of
 * the interval, shared by the loop's connections); one that expires
 * something keeps the finer expiry grid (16 ms). */
TEST(conn_keepalive_send_waits_for_the_send_grid_and_expiries_do_not) {
  conn_fixture f;
  cf_init(&f);
  f.s.interval_ms = 300; /* a send grid of 30 ms */
  f.s.jitter_pct = 0;
  f.s.timeout_ms = 60000; /* nothing expires while the pongs come */
  cf_start(&f, "echo.py", NULL);
  handshake(&f);
  for (size_t pongs = 1; pongs <= 3; pongs++) {
    while (count_events(&f.r, MCPP_EV_PONG) < pongs) uv_run(&f.loop, UV_RUN_ONCE);
    /* After the pong only the next send is due: armed on the send grid. */
    ASSERT_EQ(0, (int)(mcpp__conn_armed_ms % 30));
  }
  /* A manual ping expiring long before the next send: the expiry grid. */
  uint64_t seq;
  ASSERT_EQ(0, mcpp_conn_ping(f.r.conn, 40, &seq));
  ASSERT_EQ(0, (int)(mcpp__conn_armed_ms % 16));
  ASSERT_EQ(0, mcpp_conn_close(f.r.conn));
  cf_finish(&f);
}

/* A ping answered long before the next send: the timer, armed for its
 * expiry, moves to the send slot at once, so an idle connection wakes once
 * per keepalive cycle instead of once more, for nothing, at the expiry. */
TEST(conn_keepalive_answered_ping_moves_the_timer_to_the_send_slot) {
  conn_fixture f;
  cf_init(&f);
  f.s.interval_ms = 500; /* a send grid of 50 ms */
  f.s.jitter_pct = 0;
  f.s.timeout_ms = margin_ms(200); /* expires before the next send */
  cf_start(&f, "echo.py", NULL);
  handshake(&f);
  for (size_t pongs = 1; pongs <= 2; pongs++) {
    while (count_events(&f.r, MCPP_EV_PONG) < pongs) uv_run(&f.loop, UV_RUN_ONCE);
    /* Not the expiry's 16 ms grid: the send's 50 ms one. */
    ASSERT_EQ(0, (int)(mcpp__conn_armed_ms % 50));
  }
  ASSERT_EQ(0, count_events(&f.r, MCPP_EV_TIMEOUT));
  ASSERT_EQ(0, mcpp_conn_close(f.r.conn));
  cf_finish(&f);
}

/* An idle connection arms its timer once per keepalive round: with the
 * ping in flight it is armed for the send slot the answer will leave, so
 * the answer finds it set and restarts nothing (each restart is a timer
 * heap removal, most of an idle round's user time at 1000 connections).
 * An interval of 1050 ms puts the send slots 50 ms from the 100 ms send
 * grid's points: only a round whose wake-up and answer together take
 * longer than that arms once more, and one such round is allowed. */
TEST(conn_keepalive_arms_its_timer_once_per_round) {
  conn_fixture f;
  cf_init(&f);
  f.s.interval_ms = 1050;
  f.s.jitter_pct = 0;
  f.s.timeout_ms = 60000; /* nothing expires while the pongs come */
  cf_start(&f, "echo.py", NULL);
  handshake(&f);
  while (count_events(&f.r, MCPP_EV_PONG) < 1) uv_run(&f.loop, UV_RUN_ONCE);
  unsigned long arms_before = mcpp__conn_arms;
  enum { ROUNDS = 2 };
  while (count_events(&f.r, MCPP_EV_PONG) < 1 + ROUNDS)
    uv_run(&f.loop, UV_RUN_ONCE);
  ASSERT_LE(mcpp__conn_arms - arms_before, (unsigned long)ROUNDS + 1);
  ASSERT_EQ(0, count_events(&f.r, MCPP_EV_TIMEOUT));
  ASSERT_EQ(0, mcpp_conn_close(f.r.conn));
  cf_finish(&f);
}

/* A host that takes no records has the engine make none: no on_record
 * call while off, every one again once on. */
TEST(conn_records_off_makes_none_and_on_again_makes_them) {
  conn_fixture f;
  cf_init(&f);
  cf_start(&f, "echo.py", NULL);
  handshake(&f);
  uint64_t seq;
  _Atomic int on = 0;
  mcpp__conn_follow_records(f.r.conn, &on);
  size_t before = f.r.n_records;
  ASSERT_EQ(0, mcpp_conn_ping(f.r.conn, 0, &seq));
  while (count_events(&f.r, MCPP_EV_PONG) < 1) uv_run(&f.loop, UV_RUN_ONCE);
  ASSERT_UINT_EQ(before, f.r.n_records);
  atomic_store(&on, 1);
  ASSERT_EQ(0, mcpp_conn_ping(f.r.conn, 0, &seq));
  while (count_events(&f.r, MCPP_EV_PONG) < 2) uv_run(&f.loop, UV_RUN_ONCE);
  ASSERT(f.r.n_records > before); /* its pong's */
  ASSERT_EQ(0, mcpp_conn_close(f.r.conn));
  cf_finish(&f);
}

TEST_TIMEOUT(conn_stale_report_only_keeps_the_connection, 60) {
  conn_fixture f;
  cf_init(&f);
  f.s.interval_ms = 50;
  f.s.timeout_ms = 100;
  f.s.failures = 2;
  f.s.on_stale = MCPP_STALE_REPORT;
  cf_start(&f, "drop_pings.py", NULL);
  handshake(&f);
  run_until_event(&f.loop, &f.r, MCPP_EV_STALE);
  send_str(&f.r, "{\"jsonrpc\":\"2.0\",\"id\":4,\"method\":\"echo\",\"params\":{}}");
  run_until_frames(&f.loop, &f.r, 2);
  ASSERT(!f.r.closed);
  ASSERT_EQ(0, mcpp_conn_close(f.r.conn));
  cf_finish(&f);
  ASSERT_EQ(0, f.r.close.err);
}
