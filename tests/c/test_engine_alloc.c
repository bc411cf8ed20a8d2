/* Out-of-memory: fail the Nth allocation for every N a scenario makes;
 * each call must fail cleanly with MCPP_ERR_NOMEM (or carry on without the
 * optional thing it could not allocate), leak nothing and not crash. */
#include "engine_fixture.h"
#include "engine/lines.h"

#define OK_OR_NOMEM(expr, ok)                              \
  do {                                                     \
    int rc_ = (expr);                                      \
    if (rc_ != (ok) && rc_ != MCPP_ERR_NOMEM)              \
      MCPP_FAIL("%s returned %d (%s)", #expr, rc_, mcpp_errname(rc_)); \
  } while (0)

/* Runs the scenario with the Nth allocation failing; returns 1 if some
 * allocation actually failed. */
static int scenario(long fail_at) {
  fx *f = fx_new();
  f->alloc.fail_at = fail_at;
  f->s.interval_ms = 1000;
  f->s.request_timeout_ms = 2000;
  f->s.jitter_pct = 0;
  int rc = fx_try_start(f, T0);
  if (rc != 0) {
    ASSERT_EQ(rc, MCPP_ERR_NOMEM);
    ASSERT(f->e == NULL);
    ASSERT_EQ(f->alloc.live, 0);
    free(f);
    return 1;
  }
  OK_OR_NOMEM(mcpp_engine_set_session_id(f->e, "session"), 0);
  OK_OR_NOMEM(fx_out(f, "{\"jsonrpc\":\"2.0\",\"id\":0,\"method\":\"initialize\"}", T0), 0);
  ASSERT_EQ(fx_recv(f, "{\"jsonrpc\":\"2.0\",\"id\":0,\"result\":{\"protocolVersion\":\"2025-11-25\","
                       "\"serverInfo\":{\"name\":\"srv\"}}}", T0), MCPP_RECV_FORWARD);
  OK_OR_NOMEM(fx_out(f, "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}", T0), 0);
  char frame[2048], id[1200];
  memset(id, 'i', sizeof id - 1);
  id[sizeof id - 1] = '\0';
  for (int i = 0; i < 40; i++) {
    snprintf(frame, sizeof frame, "{\"jsonrpc\":\"2.0\",\"id\":\"%s-%d\",\"method\":\"tools/call\"}",
             i % 8 ? "r" : id, i);
    OK_OR_NOMEM(fx_out(f, frame, T0 + (uint64_t)i), 0);
  }
  for (int i = 0; i < 12; i++) OK_OR_NOMEM(mcpp_engine_ping(f->e, 500, T0, NULL), 0);
  snprintf(frame, sizeof frame, "{\"jsonrpc\":\"2.0\",\"id\":\"%s\",\"method\":\"ping\"}", id);
  OK_OR_NOMEM(fx_recv(f, frame, T0 + MS), MCPP_RECV_CONSUMED);
  ASSERT_EQ(fx_recv(f, "{\"jsonrpc\":\"2.0\",\"id\":\"r-1\",\"result\":{}}", T0 + MS), MCPP_RECV_FORWARD);
  for (uint64_t t = T0; t <= T0 + 10 * SEC; t += 250 * MS)
    OK_OR_NOMEM(mcpp_engine_on_timer(f->e, t), 0);
  mcpp_engine_close(f->e, 0, "done", T0 + 11 * SEC);
  int failed = f->alloc.failed;
  fx_done(f); /* asserts nothing is left allocated */
  return failed;
}

TEST(out_of_memory_at_every_allocation_fails_cleanly) {
  long n = 1;
  while (scenario(n)) n++;
  ASSERT_GT(n, 20); /* the scenario really allocates */
}

/* The same on a 2026 session: a configured probe, the discover handshake,
 * per-request deadlines, aborts, probes and process checks. */
static int scenario_2026(long fail_at) {
  fx *f = fx_new();
  f->alloc.fail_at = fail_at;
  f->s.interval_ms = 1000;
  f->s.timeout_ms = 300;
  f->s.jitter_pct = 0;
  f->s.probe_method = "server/discover";
  f->observe_process = 1;
  int rc = fx_try_start(f, T0);
  if (rc != 0) {
    ASSERT_EQ(rc, MCPP_ERR_NOMEM);
    ASSERT(f->e == NULL);
    ASSERT_EQ(f->alloc.live, 0);
    free(f);
    return 1;
  }
  mcpp_engine_touch(f->e, T0);
  OK_OR_NOMEM(fx_out(f, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"server/discover\",\"params\":"
                        "{\"_meta\":{\"io.modelcontextprotocol/protocolVersion\":\"2026-07-28\"}}}", T0), 0);
  ASSERT_EQ(fx_recv(f, "{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{\"supportedVersions\":[\"2026-07-28\"],"
                       "\"_meta\":{\"io.modelcontextprotocol/serverInfo\":{\"name\":\"s\"}}}}", T0),
            MCPP_RECV_FORWARD);
  char frame[128];
  for (int i = 0; i < 30; i++) {
    snprintf(frame, sizeof frame, "{\"jsonrpc\":\"2.0\",\"id\":%d,\"method\":\"tools/call\"}", i);
    OK_OR_NOMEM(fx_out_timed(f, frame, i % 3 ? 200u * (uint32_t)i : MCPP_TIMEOUT_NONE, T0), 0);
  }
  for (int i = 0; i < 30; i += 4) {
    snprintf(frame, sizeof frame, "%d", i);
    rc = mcpp_engine_cancel_request(f->e, frame, strlen(frame), T0);
    if (rc != 0 && rc != MCPP_ERR_NOT_FOUND) MCPP_FAIL("cancel_request: %s", mcpp_errname(rc));
  }
  for (uint64_t t = T0; t <= T0 + 10 * SEC; t += 100 * MS) {
    if (t == T0 + 5 * SEC) f->process = MCPP_PROCESS_STOPPED;
    if (t == T0 + 2 * SEC) mcpp_engine_set_reading(f->e, 0, t);
    if (t == T0 + 3 * SEC) mcpp_engine_set_reading(f->e, 1, t);
    OK_OR_NOMEM(mcpp_engine_on_timer(f->e, t), 0);
  }
  mcpp_engine_close(f->e, 0, "done", T0 + 11 * SEC);
  int failed = f->alloc.failed;
  fx_done(f);
  return failed;
}

TEST(out_of_memory_at_every_allocation_on_a_2026_session_fails_cleanly) {
  long n = 1;
  while (scenario_2026(n)) n++;
  ASSERT_GT(n, 10);
}

TEST(null_allocator_uses_malloc) {
  mcpp_settings s;
  mcpp_settings_default(&s);
  s.peer_name = "p";
  static const mcpp_engine_callbacks cb = {.send = fx_send};
  fx *f = fx_new();
  mcpp_engine *e = NULL;
  ASSERT_EQ(mcpp_engine_new(&e, &s, &cb, f, NULL, T0), 0);
  ASSERT_EQ(mcpp_engine_recv(e, "{\"id\":1,\"method\":\"ping\"}", 24, T0), MCPP_RECV_CONSUMED);
  mcpp_engine_close(e, 0, NULL, T0);
  mcpp_engine_free(e);
  mcpp_engine_free(NULL);
  free(f);
}

TEST(answering_a_ping_allocates_nothing) {
  fx *f = fx_new();
  fx_start(f, T0);
  long before = f->alloc.count;
  for (int i = 0; i < 100; i++)
    ASSERT_EQ(fx_recv(f, "{\"jsonrpc\":\"2.0\",\"id\":\"abc\",\"method\":\"ping\"}", T0), MCPP_RECV_CONSUMED);
  ASSERT_EQ(mcpp_engine_ping(f->e, 0, T0, NULL), 0);
  ASSERT_EQ(fx_answer_last_ping(f, "\"result\":{}", T0 + 1), MCPP_RECV_CONSUMED);
  long first = f->alloc.count - before; /* the manual ping array, once */
  for (int i = 0; i < 100; i++) {
    ASSERT_EQ(mcpp_engine_ping(f->e, 0, T0, NULL), 0);
    ASSERT_EQ(fx_answer_last_ping(f, "\"result\":{}", T0 + 1), MCPP_RECV_CONSUMED);
  }
  ASSERT_EQ(f->alloc.count - before, first);
  ASSERT_LE(first, 1);
  fx_done(f);
}

TEST(invalid_arguments_refused) {
  fx *f = fx_new();
  mcpp_engine *e = NULL;
  static const mcpp_engine_callbacks no_send = {.send = NULL};
  ASSERT_EQ(mcpp_engine_new(&e, &f->s, &no_send, f, NULL, T0), MCPP_ERR_INVALID_ARGUMENT);
  ASSERT_EQ(mcpp_engine_new(NULL, &f->s, &no_send, f, NULL, T0), MCPP_ERR_INVALID_ARGUMENT);
  ASSERT_EQ(mcpp_engine_recv(NULL, "x", 1, T0), MCPP_ERR_INVALID_ARGUMENT);
  ASSERT_EQ(mcpp_engine_ping(NULL, 0, T0, NULL), MCPP_ERR_INVALID_ARGUMENT);
  ASSERT_UINT_EQ(mcpp_engine_next_deadline(NULL), UINT64_MAX);
  ASSERT_EQ(mcpp_engine_healthy(NULL, T0), 0);
  fx_start(f, T0);
  ASSERT_EQ(mcpp_engine_recv(f->e, NULL, 3, T0), MCPP_ERR_INVALID_ARGUMENT);
  ASSERT_EQ(mcpp_engine_recv(f->e, NULL, 0, T0), MCPP_RECV_FORWARD);
  fx_done(f);
}

/* The same in the server role: the session learned from the client's
 * initialize, its pings answered, our keepalive pings timing out into
 * suspect and stale (with their records), a client request timing out. */
static int scenario_server(long fail_at) {
  fx *f = fx_new();
  f->alloc.fail_at = fail_at;
  f->s.role = MCPP_ROLE_SERVER;
  f->s.interval_ms = 1000;
  f->s.timeout_ms = 200;
  f->s.failures = 2;
  f->s.jitter_pct = 0;
  f->s.on_stale = MCPP_STALE_REPORT;
  f->s.request_timeout_ms = 500;
  int rc = fx_try_start(f, T0);
  if (rc != 0) {
    ASSERT_EQ(rc, MCPP_ERR_NOMEM);
    ASSERT_EQ(f->alloc.live, 0);
    free(f);
    return 1;
  }
  OK_OR_NOMEM(fx_recv(f, "{\"jsonrpc\":\"2.0\",\"id\":0,\"method\":\"initialize\",\"params\":"
                         "{\"protocolVersion\":\"2025-11-25\",\"clientInfo\":{\"name\":\"cli\"}}}", T0),
              MCPP_RECV_FORWARD);
  OK_OR_NOMEM(fx_out(f, "{\"jsonrpc\":\"2.0\",\"id\":0,\"result\":{\"protocolVersion\":\"2025-11-25\"}}", T0), 0);
  OK_OR_NOMEM(fx_recv(f, "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}", T0),
              MCPP_RECV_FORWARD);
  OK_OR_NOMEM(fx_recv(f, "{\"jsonrpc\":\"2.0\",\"id\":\"c1\",\"method\":\"ping\"}", T0), MCPP_RECV_CONSUMED);
  OK_OR_NOMEM(fx_out(f, "{\"jsonrpc\":\"2.0\",\"id\":9,\"method\":\"sampling/createMessage\"}", T0), 0);
  for (uint64_t t = T0; t <= T0 + 6 * SEC; t += 50 * MS) OK_OR_NOMEM(mcpp_engine_on_timer(f->e, t), 0);
  OK_OR_NOMEM(fx_recv(f, "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/progress\"}", T0 + 6 * SEC),
              MCPP_RECV_FORWARD);
  mcpp_engine_close(f->e, MCPP_ERR_STALE, "gone", T0 + 7 * SEC);
  int failed = f->alloc.failed;
  fx_done(f);
  return failed;
}

TEST(out_of_memory_at_every_allocation_in_the_server_role_fails_cleanly) {
  long n = 1;
  while (scenario_server(n)) n++;
  ASSERT_GT(n, 5);
}

/* The line splitter: a line split across reads needs its buffer; without
 * it the feed fails with MCPP_ERR_NOMEM and nothing is delivered twice. */
static int count_lines(void *arg, const char *line, size_t len) {
  (*(int *)arg)++;
  return 0;
}

TEST(out_of_memory_in_the_line_splitter_fails_cleanly) {
  for (long k = 1; k <= 4; k++) {
    fx *f = fx_new();
    f->alloc.a = (mcpp_allocator){fx_malloc, fx_realloc, fx_free_block, &f->alloc};
    f->alloc.fail_at = k;
    mcpp__lines l;
    mcpp__lines_init(&l, &f->alloc.a, 1 << 20);
    int lines = 0, rc = 0;
    char big[5000];
    memset(big, 'x', sizeof big);
    const char *pieces[] = {"{\"a\":1}\n{\"b\"", ":2}\n{\"c\":3", "}\n"};
    for (int i = 0; i < 3 && rc == 0; i++)
      rc = mcpp__lines_feed(&l, pieces[i], strlen(pieces[i]), count_lines, &lines);
    if (rc == 0) rc = mcpp__lines_feed(&l, big, sizeof big, count_lines, &lines);
    if (rc == 0) rc = mcpp__lines_feed(&l, big, sizeof big, count_lines, &lines);
    if (rc == 0) rc = mcpp__lines_feed(&l, "\n", 1, count_lines, &lines);
    ASSERT(rc == 0 || rc == MCPP_ERR_NOMEM);
    if (rc == 0) ASSERT_EQ(lines, 4);
    ASSERT_LE(lines, 4);
    mcpp__lines_free(&l);
    ASSERT_EQ(f->alloc.live, 0);
    free(f);
  }
}
