/*
 * idle_cost: what watching N idle stdio connections costs the monitoring
 * process. Spawns N responder servers through mcpping's C driver on one
 * uv loop (as the runtime's I/O thread does), keepalive every 1 s, lets them
 * settle, then measures WINDOWS windows of WINDOW_S seconds each: CPU
 * seconds of this process (getrusage: user + system), its context switches
 * and the keepalive pongs of each window; at the end its RSS growth over the
 * baseline taken before the first spawn, and the bytes live in the
 * engine/driver allocator. Each connection runs the MCP handshake first, as a
 * client would (keepalive starts once the server has said something).
 *
 *   idle_cost N WINDOWS WINDOW_S RESPONDER
 *
 * Prints one JSON object; says "idle_cost: settled" on stderr when the
 * measuring starts.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>
#include <uv.h>

#include "idle_windows.h"
#include "mcpping.h"

static uv_loop_t loop;
static size_t n_conns, n_open, n_closed;
static uint64_t pongs, pings, timeouts, stales;
static size_t live_bytes, peak_bytes;

/* A counting allocator: a size header in front of every block. */
typedef union hdr {
  size_t size;
  max_align_t align;
} hdr;

static void *c_malloc(size_t size, void *ud) {
  hdr *h = malloc(sizeof(hdr) + size);
  if (!h) return NULL;
  h->size = size;
  live_bytes += size;
  if (live_bytes > peak_bytes) peak_bytes = live_bytes;
  return h + 1;
}

static void c_free(void *ptr, void *ud) {
  if (!ptr) return;
  hdr *h = (hdr *)ptr - 1;
  live_bytes -= h->size;
  free(h);
}

static void *c_realloc(void *ptr, size_t size, void *ud) {
  if (!ptr) return c_malloc(size, ud);
  hdr *h = (hdr *)ptr - 1;
  size_t old = h->size;
  hdr *n = realloc(h, sizeof(hdr) + size);
  if (!n) return NULL;
  n->size = size;
  live_bytes = live_bytes - old + size;
  if (live_bytes > peak_bytes) peak_bytes = live_bytes;
  return n + 1;
}

static const mcpp_allocator counting = {c_malloc, c_realloc, c_free, NULL};

static long rss_kib(void) {
  FILE *f = fopen("/proc/self/status", "r");
  char line[256];
  long kib = -1;
  while (f && fgets(line, sizeof line, f))
    if (strncmp(line, "VmRSS:", 6) == 0) kib = strtol(line + 6, NULL, 10);
  if (f) fclose(f);
  return kib;
}

static void on_message(mcpp_conn *c, const char *f, size_t n, void *ud) {}

static void on_event(mcpp_conn *c, const mcpp_event *ev, void *ud) {
  switch (ev->type) {
  case MCPP_EV_PING: pings++; break;
  case MCPP_EV_PONG: pongs++; break;
  case MCPP_EV_TIMEOUT: timeouts++; break;
  case MCPP_EV_STALE: stales++; break;
  default: break;
  }
}

static void on_close(mcpp_conn *c, const mcpp_close_info *info, void *ud) {
  n_closed++;
}

int main(int argc, char **argv) {
  int windows;
  double window_s;
  if (idle_args(argc, argv, "idle_cost", &n_conns, &windows, &window_s)) return 2;
  const char *responder = argv[4];

  uv_loop_init(&loop);
  mcpp_conn **conns = calloc(n_conns, sizeof *conns);
  long rss_base = rss_kib();

  mcpp_settings s;
  mcpp_settings_default(&s);
  s.interval_ms = 1000;
  s.timeout_ms = 1000;
  s.failures = 3;
  char *args[] = {(char *)responder, NULL};
  mcpp_spawn_options o = {0};
  o.file = responder;
  o.args = args;
  o.stderr_mode = MCPP_STDERR_IGNORE;
  mcpp_conn_callbacks cb = {0};
  cb.on_message = on_message;
  cb.on_event = on_event;
  cb.on_close = on_close;
  for (size_t i = 0; i < n_conns; i++) {
    s.nonce = 0x9e3779b97f4a7c15ull * (i + 1);
    int rc = mcpp_conn_spawn(&conns[i], &loop, &s, &o, &cb, NULL, &counting);
    if (rc) {
      fprintf(stderr, "idle_cost: spawn %zu: %s %s\n", i, mcpp_strerror(rc),
              mcpp_conn_spawn_error());
      break;
    }
    n_open++;
    static const char init[] =
        "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"initialize\",\"params\":{"
        "\"protocolVersion\":\"2025-11-25\",\"capabilities\":{},"
        "\"clientInfo\":{\"name\":\"idle-cost\",\"version\":\"0.1.0\"}}}";
    static const char inited[] =
        "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}";
    mcpp_conn_send(conns[i], init, sizeof init - 1);
    mcpp_conn_send(conns[i], inited, sizeof inited - 1);
  }
  /* Settle: every connection has pinged at least once. */
  idle_run_for(&loop, 2.5);
  /* For a profiler to attach to the steady state (bench/rows/idle.py). */
  fprintf(stderr, "idle_cost: settled\n");
  idle_measure(&loop, n_conns, n_open, windows, window_s, &pongs);
  long rss_end = rss_kib();
  size_t bytes_end = live_bytes;

  for (size_t i = 0; i < n_open; i++) mcpp_conn_close(conns[i]);
  uv_run(&loop, UV_RUN_DEFAULT);
  int rc = uv_loop_close(&loop);
  free(conns);

  double n = (double)(n_open ? n_open : 1);
  printf("],\"closed\":%zu,\"rss_base_kib\":%ld,\"rss_end_kib\":%ld,"
         "\"rss_per_conn_bytes\":%.0f,\"alloc_bytes\":%zu,\"alloc_per_conn_bytes\":%.0f,"
         "\"alloc_peak_bytes\":%zu,\"timeouts\":%" PRIu64 ",\"stale\":%" PRIu64
         ",\"loop_closed\":%d}\n",
         n_closed, rss_base, rss_end, (double)(rss_end - rss_base) * 1024.0 / n, bytes_end,
         (double)bytes_end / n, peak_bytes, timeouts, stales, rc == 0);
  return n_open == n_conns && n_closed == n_open ? 0 : 1;
}
