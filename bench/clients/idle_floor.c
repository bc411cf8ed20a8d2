/*
 * idle_floor: the floor under idle_cost. The same N responder servers, the
 * same handshake and one ping per connection per second on a 100 ms grid
 * (as mcpping's driver sends keepalive), but over bare libuv pipes: one
 * shared timer walks the connections due on each grid point and writes the
 * ping's bytes; a read counts the answer's newline and parses nothing. No
 * timeouts, no liveness, no records: what the kernel and libuv alone cost
 * for this traffic, so idle_cost's figures read as a ratio to it.
 *
 *   idle_floor N WINDOWS WINDOW_S RESPONDER
 *
 * Prints one JSON object with the windows as idle_cost prints them; says
 * "idle_floor: settled" on stderr when the measuring starts.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <uv.h>

#include "idle_windows.h"

#define GRID_MS 100
#define SLOTS 10 /* grid points per second: a connection pings on one of them */

typedef struct floor_conn {
  uv_process_t proc;
  uv_pipe_t in, out;
  int lines; /* answers read; the first is initialize's */
} floor_conn;

static uv_loop_t loop;
static floor_conn *conns;
static size_t n_conns, n_open, n_exited;
static uint64_t pongs, tick;
static char read_buf[65536]; /* one loop, one reader at a time */

static const char ping[] = "{\"jsonrpc\":\"2.0\",\"id\":7,\"method\":\"ping\"}\n";

static void on_alloc(uv_handle_t *h, size_t hint, uv_buf_t *buf) {
  *buf = uv_buf_init(read_buf, sizeof read_buf);
}

static void on_read(uv_stream_t *s, ssize_t n, const uv_buf_t *buf) {
  floor_conn *c = s->data;
  if (n < 0) {
    uv_read_stop(s);
    return;
  }
  for (const char *p = buf->base, *end = buf->base + n; (p = memchr(p, '\n', end - p)); p++)
    if (c->lines++ > 0) pongs++;
}

static void on_server_exit(uv_process_t *p, int64_t status, int sig) { n_exited++; }

/* Every grid point, the connections on its slot ping (a connection's slot
 * is its index mod SLOTS, so they spread over the second as jittered
 * keepalive does). */
static void on_tick(uv_timer_t *t) {
  size_t slot = (size_t)(tick++ % SLOTS);
  uv_buf_t b = uv_buf_init((char *)ping, sizeof ping - 1);
  for (size_t i = slot; i < n_open; i += SLOTS)
    if (conns[i].lines > 0) uv_try_write((uv_stream_t *)&conns[i].in, &b, 1);
}

static int spawn(floor_conn *c, const char *responder) {
  char *args[] = {(char *)responder, NULL};
  uv_stdio_container_t io[3];
  uv_pipe_init(&loop, &c->in, 0);
  uv_pipe_init(&loop, &c->out, 0);
  c->out.data = c;
  io[0].flags = UV_CREATE_PIPE | UV_READABLE_PIPE;
  io[0].data.stream = (uv_stream_t *)&c->in;
  io[1].flags = UV_CREATE_PIPE | UV_WRITABLE_PIPE;
  io[1].data.stream = (uv_stream_t *)&c->out;
  io[2].flags = UV_IGNORE;
  uv_process_options_t o = {.exit_cb = on_server_exit, .file = responder, .args = args,
                            .stdio_count = 3, .stdio = io};
  int rc = uv_spawn(&loop, &c->proc, &o);
  if (rc) return rc;
  uv_read_start((uv_stream_t *)&c->out, on_alloc, on_read);
  static const char hello[] =
      "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"initialize\",\"params\":{"
      "\"protocolVersion\":\"2025-11-25\",\"capabilities\":{},"
      "\"clientInfo\":{\"name\":\"idle-floor\",\"version\":\"0.1.0\"}}}\n"
      "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}\n";
  uv_buf_t b = uv_buf_init((char *)hello, sizeof hello - 1);
  return uv_try_write((uv_stream_t *)&c->in, &b, 1) == (int)b.len ? 0 : UV_EAGAIN;
}

int main(int argc, char **argv) {
  int windows;
  double window_s;
  if (idle_args(argc, argv, "idle_floor", &n_conns, &windows, &window_s)) return 2;

  uv_loop_init(&loop);
  conns = calloc(n_conns, sizeof *conns);
  for (; n_open < n_conns; n_open++) {
    int rc = spawn(&conns[n_open], argv[4]);
    if (rc) {
      fprintf(stderr, "idle_floor: spawn %zu: %s\n", n_open, uv_strerror(rc));
      break;
    }
  }
  uv_timer_t grid;
  uv_timer_init(&loop, &grid);
  uv_timer_start(&grid, on_tick, GRID_MS, GRID_MS);
  idle_run_for(&loop, 2.5); /* settle, as idle_cost does */
  fprintf(stderr, "idle_floor: settled\n");
  idle_measure(&loop, n_conns, n_open, windows, window_s, &pongs);
  uv_close((uv_handle_t *)&grid, NULL);
  /* Closing a server's stdin ends it; wait for every exit. */
  for (size_t i = 0; i < n_open; i++) {
    uv_close((uv_handle_t *)&conns[i].in, NULL);
    uv_close((uv_handle_t *)&conns[i].out, NULL);
  }
  while (n_exited < n_open) uv_run(&loop, UV_RUN_ONCE);
  for (size_t i = 0; i < n_open; i++) uv_close((uv_handle_t *)&conns[i].proc, NULL);
  uv_run(&loop, UV_RUN_DEFAULT);
  int rc = uv_loop_close(&loop);
  free(conns);
  printf("],\"closed\":%zu,\"loop_closed\":%d}\n", n_exited, rc == 0);
  return n_open == n_conns && n_exited == n_open ? 0 : 1;
}
