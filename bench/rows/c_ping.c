/*
 * c_ping: ping RTT and pipelined throughput over stdio to tests/peers/responder,
 * either through a bare libuv pipe (the floor: the same ping bytes written
 * and one line read back, nothing parsed) or through mcpping's C driver
 * (mcpp_conn_spawn + mcpp_conn_ping). RTTs are taken with uv_hrtime() around
 * each ping at this level, so both series measure the same span.
 *
 *   c_ping floor|driver N DEPTH RESPONDER
 *
 * DEPTH 1 is sequential (one ping in flight; every RTT is kept); DEPTH > 1
 * keeps DEPTH pings in flight and reports only the rate. Prints one JSON
 * object. 200 warm-up pings are not counted.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <uv.h>

#include "mcpping.h"

enum { WARMUP = 200 };

typedef struct bench {
  uv_loop_t loop;
  uint64_t n, depth, total; /* total = WARMUP + n */
  uint64_t sent, recv;
  uint64_t last_send; /* sequential mode: when the ping in flight left */
  double *samples;    /* µs, sequential mode */
  size_t n_samples;
  uint64_t t_start, t_end;
  /* floor */
  uv_process_t proc;
  uv_pipe_t in, out;
  /* driver */
  mcpp_conn *conn;
  int failed;
} bench;

static bench B;

static void count_pong(void) {
  uint64_t now = uv_hrtime();
  if (B.depth == 1 && B.recv >= WARMUP)
    B.samples[B.n_samples++] = (double)(now - B.last_send) / 1e3;
  B.recv++;
  if (B.recv == WARMUP) B.t_start = now;
  if (B.recv == B.total) B.t_end = now;
}

/* ---------------------------------------------------------------- floor */

typedef struct wreq {
  uv_write_t req;
  char buf[];
} wreq;

static void on_written(uv_write_t *req, int status) { free(req); }

/* Writes k ping lines in one write, as a pipelined client would. */
static void floor_send(uint64_t k) {
  static char lines[96 * 256];
  size_t len = 0;
  for (uint64_t i = 0; i < k; i++) {
    B.sent++;
    len += (size_t)snprintf(lines + len, 96,
                            "{\"jsonrpc\":\"2.0\",\"id\":\"mcpp-0123456789abcdef-%" PRIu64
                            "\",\"method\":\"ping\"}\n",
                            B.sent);
  }
  B.last_send = uv_hrtime();
  uv_buf_t b = uv_buf_init(lines, (unsigned)len);
  int n = uv_try_write((uv_stream_t *)&B.in, &b, 1);
  if (n == (int)len) return;
  if (n < 0) n = 0;
  wreq *w = malloc(sizeof *w + len - (size_t)n);
  memcpy(w->buf, lines + n, len - (size_t)n);
  b = uv_buf_init(w->buf, (unsigned)(len - (size_t)n));
  uv_write(&w->req, (uv_stream_t *)&B.in, &b, 1, on_written);
}

static void on_alloc(uv_handle_t *h, size_t size, uv_buf_t *buf) {
  static char slab[1 << 16];
  *buf = uv_buf_init(slab, sizeof slab);
}

static void on_read(uv_stream_t *s, ssize_t nread, const uv_buf_t *buf) {
  if (nread < 0) {
    uv_read_stop(s);
    return;
  }
  uint64_t k = 0;
  for (ssize_t i = 0; i < nread; i++) {
    if (buf->base[i] != '\n') continue;
    count_pong();
    if (B.sent + k < B.total) k++;
  }
  while (k) {
    uint64_t m = k < 256 ? k : 256;
    floor_send(m);
    k -= m;
  }
  if (B.recv == B.total) {
    uv_read_stop(s);
    uv_close((uv_handle_t *)&B.in, NULL); /* EOF: the responder exits */
  }
}

static void on_exit_(uv_process_t *p, int64_t status, int sig) {
  uv_close((uv_handle_t *)p, NULL);
  uv_close((uv_handle_t *)&B.out, NULL);
}

static int run_floor(const char *responder) {
  uv_pipe_init(&B.loop, &B.in, 0);
  uv_pipe_init(&B.loop, &B.out, 0);
  uv_stdio_container_t io[3];
  io[0].flags = UV_CREATE_PIPE | UV_READABLE_PIPE;
  io[0].data.stream = (uv_stream_t *)&B.in;
  io[1].flags = UV_CREATE_PIPE | UV_WRITABLE_PIPE;
  io[1].data.stream = (uv_stream_t *)&B.out;
  io[2].flags = UV_INHERIT_FD;
  io[2].data.fd = 2;
  char *args[] = {(char *)responder, NULL};
  uv_process_options_t o = {0};
  o.file = responder;
  o.args = args;
  o.exit_cb = on_exit_;
  o.stdio = io;
  o.stdio_count = 3;
  int rc = uv_spawn(&B.loop, &B.proc, &o);
  if (rc) {
    fprintf(stderr, "c_ping: spawn %s: %s\n", responder, uv_strerror(rc));
    return 1;
  }
  uv_read_start((uv_stream_t *)&B.out, on_alloc, on_read);
  for (uint64_t left = B.depth < B.total ? B.depth : B.total; left;) {
    uint64_t m = left < 256 ? left : 256;
    floor_send(m);
    left -= m;
  }
  uv_run(&B.loop, UV_RUN_DEFAULT);
  return 0;
}

/* --------------------------------------------------------------- driver */

static void drv_send(void) {
  B.sent++;
  B.last_send = uv_hrtime();
  int rc = mcpp_conn_ping(B.conn, 5000, NULL);
  if (rc) {
    fprintf(stderr, "c_ping: mcpp_conn_ping: %s\n", mcpp_strerror(rc));
    B.failed = 1;
    mcpp_conn_close(B.conn);
  }
}

static void drv_message(mcpp_conn *c, const char *f, size_t n, void *ud) {}

static void drv_event(mcpp_conn *c, const mcpp_event *ev, void *ud) {
  if (ev->type == MCPP_EV_TIMEOUT || ev->type == MCPP_EV_PING_ERROR) {
    if (B.failed) return;
    fprintf(stderr, "c_ping: ping failed (%s)\n", mcpp_event_name(ev->type));
    B.failed = 1;
    mcpp_conn_close(c);
    return;
  }
  if (ev->type != MCPP_EV_PONG || B.failed) return;
  count_pong();
  if (B.sent < B.total)
    drv_send();
  else if (B.recv == B.total)
    mcpp_conn_close(c);
}

static void drv_close(mcpp_conn *c, const mcpp_close_info *info, void *ud) {}

static int run_driver(const char *responder) {
  mcpp_settings s;
  mcpp_settings_default(&s);
  s.nonce = 0x0123456789abcdefull;
  s.max_outstanding_pings = (uint32_t)(B.depth + 16);
  char *args[] = {(char *)responder, NULL};
  mcpp_spawn_options o = {0};
  o.file = responder;
  o.args = args;
  o.stderr_mode = MCPP_STDERR_INHERIT;
  mcpp_conn_callbacks cb = {0};
  cb.on_message = drv_message;
  cb.on_event = drv_event;
  cb.on_close = drv_close;
  int rc = mcpp_conn_spawn(&B.conn, &B.loop, &s, &o, &cb, NULL, NULL);
  if (rc) {
    fprintf(stderr, "c_ping: %s\n", mcpp_conn_spawn_error());
    return 1;
  }
  for (uint64_t i = 0; i < B.depth && B.sent < B.total && !B.failed; i++) drv_send();
  uv_run(&B.loop, UV_RUN_DEFAULT);
  return B.failed;
}

int main(int argc, char **argv) {
  if (argc != 5) {
    fprintf(stderr, "usage: c_ping floor|driver N DEPTH RESPONDER\n");
    return 2;
  }
  int driver = strcmp(argv[1], "driver") == 0;
  B.n = strtoull(argv[2], NULL, 10);
  B.depth = strtoull(argv[3], NULL, 10);
  if (B.n == 0 || B.depth == 0) return 2;
  B.total = WARMUP + B.n;
  B.samples = malloc(sizeof(double) * (B.depth == 1 ? B.n : 1));
  uv_loop_init(&B.loop);
  int rc = driver ? run_driver(argv[4]) : run_floor(argv[4]);
  uv_run(&B.loop, UV_RUN_DEFAULT);
  uv_loop_close(&B.loop);
  if (rc || B.recv != B.total) {
    fprintf(stderr, "c_ping: %" PRIu64 " of %" PRIu64 " pongs\n", B.recv, B.total);
    return 1;
  }
  double secs = (double)(B.t_end - B.t_start) / 1e9;
  printf("{\"n\":%" PRIu64 ",\"depth\":%" PRIu64 ",\"elapsed_s\":%.6f,\"rate\":%.1f,"
         "\"samples_us\":[",
         B.n, B.depth, secs, (double)B.n / secs);
  for (size_t i = 0; i < B.n_samples; i++) printf(i ? ",%.3f" : "%.3f", B.samples[i]);
  printf("]}\n");
  free(B.samples);
  return 0;
}
