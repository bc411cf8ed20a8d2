/*
 * The detector against real servers (issue 25): a server that answers
 * everything but ping is ping-deaf and watched by probe, never convicted;
 * a single-threaded server burning CPU on a long synchronous call is busy,
 * and the call succeeds; the same server SIGSTOPped mid-call is still
 * convicted fast, by its process.
 */
#include <signal.h>
#include <string.h>

#include "task.h"
#include "test_conn_support.h"

static const char init_req[] =
    "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"initialize\",\"params\":{"
    "\"protocolVersion\":\"2025-11-25\",\"capabilities\":{},\"clientInfo\":{"
    "\"name\":\"t\",\"version\":\"1\"}}}";
static const char initialized[] =
    "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}";

static void send_str(rec *r, const char *s) {
  ASSERT_EQ(0, mcpp_conn_send(r->conn, s, strlen(s)));
}

/* The whole handshake: keepalive and the detector's probe need it. */
static void handshake(conn_fixture *f) {
  send_str(&f->r, init_req);
  run_until_frames(&f->loop, &f->r, 1);
  ASSERT(strstr(f->r.frames[0].data, "\"protocolVersion\"") != NULL);
  send_str(&f->r, initialized);
}

static size_t last_event(const rec *r, mcpp_event_type t) {
  for (size_t i = r->n_events; i-- > 0;)
    if (r->events[i] == t) return i;
  return SIZE_MAX;
}

TEST_TIMEOUT(conn_ping_deaf_server_is_watched_by_probe_and_never_convicted, 60) {
  conn_fixture f;
  cf_init(&f);
  f.s.interval_ms = 200;
  f.s.jitter_pct = 0;
  f.s.timeout_ms = margin_ms(500);
  f.s.failures = 2;
  cf_start(&f, "drop_pings.py", NULL);
  handshake(&f);
  run_until_event(&f.loop, &f.r, MCPP_EV_PING_DEAF);
  size_t deaf = find_event(&f.r, MCPP_EV_PING_DEAF);
  ASSERT_UINT_EQ(2, count_events(&f.r, MCPP_EV_TIMEOUT));
  /* Watched by probe from then on: a few more rounds, all answered. */
  size_t probes = count_events(&f.r, MCPP_EV_PROBE_OK);
  while (count_events(&f.r, MCPP_EV_PROBE_OK) < probes + 3)
    run_until_event(&f.loop, &f.r, MCPP_EV_PROBE_OK), run_for(&f.loop, 50);
  ASSERT(!f.r.closed);
  ASSERT_UINT_EQ(0, count_events(&f.r, MCPP_EV_STALE));
  ASSERT_UINT_EQ(1, count_events(&f.r, MCPP_EV_PING_DEAF));
  ASSERT(last_event(&f.r, MCPP_EV_PING) < deaf); /* no ping since */
  mcpp_engine_info info;
  mcpp_engine_get_info(mcpp_conn_engine(f.r.conn), &info);
  ASSERT_EQ(MCPP_STATE_ALIVE, info.state);
  ASSERT_EQ(0, strcmp(info.probe_method, "tools/list"));
  ASSERT_EQ(0, mcpp_conn_close(f.r.conn));
  cf_finish(&f);
  ASSERT_EQ(0, f.r.close.err);
}

static void burn_call(rec *r, const char *seconds) {
  char call[256];
  snprintf(call, sizeof call,
           "{\"jsonrpc\":\"2.0\",\"id\":7,\"method\":\"tools/call\",\"params\":"
           "{\"name\":\"burn\",\"arguments\":{\"seconds\":%s}}}", seconds);
  send_str(r, call);
}

/* The 6 s call at 1 s / 1 s / 2, scaled down: a 3 s call at
 * 250 ms / 500 ms / 2, six times past the old verdict (1.25 s). */
TEST_TIMEOUT(conn_cpu_busy_server_is_not_convicted_and_its_long_call_succeeds, 60) {
  conn_fixture f;
  cf_init(&f);
  f.s.interval_ms = 250;
  f.s.jitter_pct = 0;
  f.s.timeout_ms = margin_ms(500);
  f.s.failures = 2;
  cf_start(&f, "burn.py", NULL);
  handshake(&f);
  /* Under valgrind the timeout is 10x (margin_ms) and the call must
   * outlast that verdict too: 20 s there. */
  const char *secs = under_valgrind() ? "20" : "3";
  burn_call(&f.r, secs);
  run_until_frames(&f.loop, &f.r, 2);
  char burned[32];
  snprintf(burned, sizeof burned, "\"burned\":%s", secs);
  ASSERT(strstr(f.r.frames[1].data, burned) != NULL);
  ASSERT(!f.r.closed);
  ASSERT_UINT_EQ(0, count_events(&f.r, MCPP_EV_STALE));
  ASSERT_UINT_EQ(1, count_events(&f.r, MCPP_EV_BUSY));
  ASSERT(find_event(&f.r, MCPP_EV_BUSY) < find_event(&f.r, MCPP_EV_RECOVERED));
  ASSERT_EQ(0, mcpp_conn_close(f.r.conn));
  cf_finish(&f);
  ASSERT_EQ(0, f.r.close.err);
}

TEST_TIMEOUT(conn_sigstopped_busy_server_is_still_convicted_fast, 60) {
  conn_fixture f;
  cf_init(&f);
  f.s.interval_ms = 250;
  f.s.jitter_pct = 0;
  f.s.timeout_ms = margin_ms(500);
  f.s.failures = 2;
  cf_start(&f, "burn.py", NULL);
  handshake(&f);
  burn_call(&f.r, "30");
  run_for(&f.loop, 100);
  ASSERT_EQ(0, kill(f.r.pid, SIGSTOP));
  uint64_t t0 = uv_hrtime();
  run_until(&f.loop, &f.r.closed);
  uint64_t took_ms = (uv_hrtime() - t0) / 1000000;
  /* Within interval + timeout x failures + one probe timeout. */
  ASSERT_LT(took_ms, f.s.interval_ms + 3 * f.s.timeout_ms);
  ASSERT_EQ(MCPP_ERR_STALE, f.r.close.err);
  ASSERT_UINT_EQ(0, count_events(&f.r, MCPP_EV_BUSY));
  ASSERT_EQ(0, strcmp(f.r.stale_proof, "process"));
  cf_finish(&f);
}
