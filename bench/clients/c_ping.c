/*
 * c_ping: a block-protocol worker (bench/method.py) that pings
 * tests/peers/responder over stdio, either through a bare libuv pipe (the
 * floor: the same ping bytes written and one line read back, nothing parsed)
 * or through mcpping's C driver (mcpp_conn_spawn + mcpp_conn_ping). RTTs are
 * taken with uv_hrtime() around each ping at this level, so both series
 * measure the same span.
 *
 *   c_ping floor|driver RESPONDER
 *
 * Each command line {"n": N, "depth": D} runs one block of N pings with D in
 * flight (D 1: sequential, every RTT kept; D > 1: only the rate). The
 * connection stays open between blocks; EOF on stdin closes it.
 */
#include <cJSON.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>
#include <uv.h>

#include "mcpping.h"

typedef struct bench {
  uv_loop_t loop;
  /* The block in progress. */
  uint64_t n, depth, sent, recv;
  uint64_t last_send; /* sequential: when the ping in flight left */
  double *samples;    /* µs, sequential only */
  size_t n_samples;
  /* floor */
  uv_process_t proc;
  uv_pipe_t in, out;
  uint64_t ids; /* ping ids over the worker's life */
  int closing;  /* stdin ended: the responder's EOF is expected */
  /* driver */
  mcpp_conn *conn;
  int failed;
} bench;

static bench B;

static void count_pong(void) {
  if (B.depth == 1) B.samples[B.n_samples++] = (double)(uv_hrtime() - B.last_send) / 1e3;
  if (++B.recv == B.n) uv_stop(&B.loop);
}

/* ---------------------------------------------------------------- floor */

typedef struct wreq {
  uv_write_t req;
  char buf[];
} wreq;

static void on_written(uv_write_t *req, int status) { free(req); }

/* Writes k (<= 256) ping lines in one write, as a pipelined client would. */
static void floor_send(uint64_t k) {
  static char lines[96 * 256];
  size_t len = 0;
  for (uint64_t i = 0; i < k; i++) {
    B.sent++;
    len += (size_t)snprintf(lines + len, 96,
                            "{\"jsonrpc\":\"2.0\",\"id\":\"mcpp-0123456789abcdef-%" PRIu64
                            "\",\"method\":\"ping\"}\n",
                            ++B.ids);
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

static void floor_send_up_to(uint64_t k) {
  if (k > B.n - B.sent) k = B.n - B.sent;
  while (k) {
    uint64_t m = k < 256 ? k : 256;
    floor_send(m);
    k -= m;
  }
}

static void on_alloc(uv_handle_t *h, size_t size, uv_buf_t *buf) {
  static char slab[1 << 16];
  *buf = uv_buf_init(slab, sizeof slab);
}

static void on_read(uv_stream_t *s, ssize_t nread, const uv_buf_t *buf) {
  if (nread < 0) {
    uv_read_stop(s);
    if (B.closing) return;
    fprintf(stderr, "c_ping: responder closed its stdout (%s)\n", uv_strerror((int)nread));
    B.failed = 1;
    uv_stop(&B.loop);
    return;
  }
  uint64_t k = 0;
  for (ssize_t i = 0; i < nread; i++)
    if (buf->base[i] == '\n') {
      count_pong();
      k++;
    }
  floor_send_up_to(k);
}

static void on_exit_(uv_process_t *p, int64_t status, int sig) {
  uv_close((uv_handle_t *)p, NULL);
  uv_close((uv_handle_t *)&B.out, NULL);
}

static int floor_open(const char *responder) {
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
  return 0;
}

/* EOF on the responder's stdin: it exits, and on_exit_ closes the rest. */
static void floor_close(void) {
  B.closing = 1;
  uv_close((uv_handle_t *)&B.in, NULL);
}

/* --------------------------------------------------------------- driver */

static void drv_send(void) {
  B.sent++;
  B.last_send = uv_hrtime();
  int rc = mcpp_conn_ping(B.conn, 5000, NULL);
  if (rc) {
    fprintf(stderr, "c_ping: mcpp_conn_ping: %s\n", mcpp_strerror(rc));
    B.failed = 1;
    uv_stop(&B.loop);
  }
}

static void drv_message(mcpp_conn *c, const char *f, size_t n, void *ud) {}

static void drv_event(mcpp_conn *c, const mcpp_event *ev, void *ud) {
  if (ev->type == MCPP_EV_TIMEOUT || ev->type == MCPP_EV_PING_ERROR) {
    fprintf(stderr, "c_ping: ping failed (%s)\n", mcpp_event_name(ev->type));
    B.failed = 1;
    uv_stop(&B.loop);
    return;
  }
  if (ev->type != MCPP_EV_PONG || B.failed) return;
  count_pong();
  if (B.sent < B.n) drv_send();
}

static void drv_close(mcpp_conn *c, const mcpp_close_info *info, void *ud) {}

static int driver_open(const char *responder) {
  mcpp_settings s;
  mcpp_settings_default(&s);
  s.nonce = 0x0123456789abcdefull;
  s.max_outstanding_pings = 256 + 16;
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
  return 0;
}

/* ---------------------------------------------------------------- blocks */

static void usage_now(double *cpu_s, long *csw) {
  struct rusage ru;
  getrusage(RUSAGE_SELF, &ru);
  *cpu_s = (double)ru.ru_utime.tv_sec + (double)ru.ru_utime.tv_usec / 1e6 +
           (double)ru.ru_stime.tv_sec + (double)ru.ru_stime.tv_usec / 1e6;
  *csw = ru.ru_nvcsw + ru.ru_nivcsw;
}

/* Runs one block and prints its result line; returns 0, or 1 on failure. */
static int run_block(int driver, uint64_t n, uint64_t depth, int samples) {
  B.n = n;
  B.depth = depth;
  B.sent = B.recv = 0;
  B.n_samples = 0;
  B.samples = realloc(B.samples, sizeof(double) * (depth == 1 ? n : 1));
  double cpu0, cpu1;
  long csw0, csw1;
  usage_now(&cpu0, &csw0);
  uint64_t t0 = uv_hrtime();
  if (driver)
    for (uint64_t i = 0; i < depth && B.sent < n && !B.failed; i++) drv_send();
  else
    floor_send_up_to(depth);
  if (!B.failed) uv_run(&B.loop, UV_RUN_DEFAULT);
  uint64_t t1 = uv_hrtime();
  usage_now(&cpu1, &csw1);
  if (B.failed || B.recv != n) {
    fprintf(stderr, "c_ping: %" PRIu64 " of %" PRIu64 " pongs\n", B.recv, n);
    return 1;
  }
  printf("{\"ops\":%" PRIu64 ",\"wall_s\":%.9f,\"cpu_s\":%.6f,\"csw\":%ld", n,
         (double)(t1 - t0) / 1e9, cpu1 - cpu0, csw1 - csw0);
  if (samples && B.n_samples) {
    printf(",\"samples_us\":[");
    for (size_t i = 0; i < B.n_samples; i++) printf(i ? ",%.3f" : "%.3f", B.samples[i]);
    printf("]");
  }
  printf("}\n");
  fflush(stdout);
  return 0;
}

/* Reads the integer field name of a command line; returns dflt without it. */
static uint64_t field(const cJSON *cmd, const char *name, uint64_t dflt) {
  const cJSON *v = cJSON_GetObjectItemCaseSensitive(cmd, name);
  return cJSON_IsNumber(v) && v->valuedouble >= 1 ? (uint64_t)v->valuedouble : dflt;
}

int main(int argc, char **argv) {
  if (argc != 3 || (strcmp(argv[1], "floor") != 0 && strcmp(argv[1], "driver") != 0)) {
    fprintf(stderr, "usage: c_ping floor|driver RESPONDER\n");
    return 2;
  }
  int driver = strcmp(argv[1], "driver") == 0;
  uv_loop_init(&B.loop);
  if (driver ? driver_open(argv[2]) : floor_open(argv[2])) return 1;
  printf("{\"ready\":true,\"pid\":%ld}\n", (long)getpid());
  fflush(stdout);
  int rc = 0;
  char line[4096];
  while (!rc && fgets(line, sizeof line, stdin)) {
    cJSON *cmd = cJSON_Parse(line);
    uint64_t n = field(cmd, "n", 0), depth = field(cmd, "depth", 1);
    int samples = !cJSON_IsFalse(cJSON_GetObjectItemCaseSensitive(cmd, "samples"));
    cJSON_Delete(cmd);
    if (n == 0 || depth > 256) {
      fprintf(stderr, "c_ping: bad command: %s", line);
      rc = 2;
      break;
    }
    rc = run_block(driver, n, depth, samples);
  }
  if (driver)
    mcpp_conn_close(B.conn);
  else
    floor_close();
  uv_run(&B.loop, UV_RUN_DEFAULT);
  uv_loop_close(&B.loop);
  free(B.samples);
  return rc;
}
