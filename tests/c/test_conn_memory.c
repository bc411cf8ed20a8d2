/*
 * What an idle connection holds: mcpping's own allocations, counted by an
 * injected allocator, stay within budget after the handshake and a
 * keepalive round trip (the stderr tail and the close reason come only
 * when there is something to keep), and all of it is freed at the end.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "task.h"
#include "test_conn_support.h"

/* The 4 KiB per connection goal is RSS; mcpping's own share of it. */
enum { IDLE_BUDGET = 3072 };

typedef union hdr {
  size_t size;
  max_align_t align;
} hdr;

static size_t live;

static void *c_malloc(size_t size, void *ud) {
  hdr *h = malloc(sizeof(hdr) + size);
  if (!h) return NULL;
  h->size = size;
  live += size;
  return h + 1;
}

static void c_free(void *ptr, void *ud) {
  if (!ptr) return;
  hdr *h = (hdr *)ptr - 1;
  live -= h->size;
  free(h);
}

static void *c_realloc(void *ptr, size_t size, void *ud) {
  if (!ptr) return c_malloc(size, ud);
  hdr *h = (hdr *)ptr - 1;
  size_t old = h->size;
  hdr *n = realloc(h, sizeof(hdr) + size);
  if (!n) return NULL;
  n->size = size;
  live = live - old + size;
  return n + 1;
}

static const mcpp_allocator counting = {c_malloc, c_realloc, c_free, NULL};

static const char init_req[] =
    "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"initialize\",\"params\":{"
    "\"protocolVersion\":\"2025-11-25\",\"capabilities\":{},\"clientInfo\":{"
    "\"name\":\"t\",\"version\":\"1\"}}}";

TEST(conn_idle_connection_allocates_little_and_frees_everything) {
  conn_fixture f;
  cf_init(&f);
  live = 0;
  char *args[] = {"python3", (char *)peer_path("echo.py"), NULL};
  mcpp_spawn_options o = {0};
  o.file = "python3";
  o.args = args;
  o.stderr_mode = MCPP_STDERR_CALLBACK; /* a stderr pipe, silent so far */
  ASSERT_EQ(0, mcpp_conn_spawn(&f.r.conn, &f.loop, &f.s, &o,
                               test_rec_callbacks(), &f.r, &counting));
  f.r.pid = mcpp_conn_pid(f.r.conn);
  ASSERT_EQ(0, mcpp_conn_send(f.r.conn, init_req, strlen(init_req)));
  run_until_frames(&f.loop, &f.r, 1);
  uint64_t seq = 0;
  ASSERT_EQ(0, mcpp_conn_ping(f.r.conn, 0, &seq));
  run_until_event(&f.loop, &f.r, MCPP_EV_PONG);
  size_t idle = live;
  ASSERT_GT(idle, 0);
  ASSERT_LE(idle, IDLE_BUDGET);

  /* Stderr says something: now the tail is kept (for the close reason). */
  static const char say[] =
      "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"test/stderr\",\"params\":"
      "{\"text\":\"boom\"}}";
  ASSERT_EQ(0, mcpp_conn_send(f.r.conn, say, strlen(say)));
  run_until_frames(&f.loop, &f.r, 2);
  while (f.r.stderr_len == 0) uv_run(&f.loop, UV_RUN_ONCE);
  ASSERT_GE(live, idle + 1024);

  ASSERT_EQ(0, mcpp_conn_close(f.r.conn));
  cf_finish(&f);
  ASSERT_UINT_EQ(live, 0);
}
