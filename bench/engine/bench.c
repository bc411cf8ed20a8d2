/*
 * The C benchmark, one run: ping RTT through the driver next to a bare
 * libuv pipe echo of the same bytes to the same responder, the cost of
 * classifying a ping line, of forwarding a 1 MiB frame, and the memory of
 * an idle engine. Prints a table; --json prints one JSON object instead.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <uv.h>

#include "mcpping.h"

enum { RTT_WARMUP = 500, RTT_SAMPLES = 20000, CLASSIFY_ITERS = 2000000,
       FORWARD_ITERS = 300, IDLE_ENGINES = 1000, PONG_BATCH = 1000,
       PONG_BATCHES = 1000 };

static char responder[4096];

static double now_ns(void) { return (double)uv_hrtime(); }

static int cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return x < y ? -1 : x > y;
}

static double pct(double *v, size_t n, double p) {
  size_t i = (size_t)(p / 100.0 * (double)(n - 1) + 0.5);
  return v[i];
}

typedef struct rtt {
  double p50, p90, p99;
} rtt;

static rtt summarize(double *v, size_t n) {
  qsort(v, n, sizeof *v, cmp_double);
  return (rtt){pct(v, n, 50), pct(v, n, 90), pct(v, n, 99)};
}

/* ------------------------------------------------------ RTT via the driver */

typedef struct drv {
  uv_loop_t loop;
  mcpp_conn *conn;
  int got_pong;
  int closed;
  char ping_line[128];
  size_t ping_len;
} drv;

static void drv_message(mcpp_conn *c, const char *f, size_t n, void *ud) {}

static void drv_event(mcpp_conn *c, const mcpp_event *ev, void *ud) {
  drv *d = ud;
  if (ev->type == MCPP_EV_PONG) d->got_pong = 1;
  if (ev->type == MCPP_EV_PING && ev->id_len < 64)
    d->ping_len = (size_t)snprintf(d->ping_line, sizeof d->ping_line,
                                   "{\"jsonrpc\":\"2.0\",\"id\":%.*s,"
                                   "\"method\":\"ping\"}",
                                   (int)ev->id_len, ev->id);
}

static void drv_record(mcpp_conn *c, const char *j, size_t n, void *ud) {}

static void drv_close(mcpp_conn *c, const mcpp_close_info *i, void *ud) {
  ((drv *)ud)->closed = 1;
}

static void bench_driver_rtt(double *samples, char *ping_line, size_t *len,
                             int records) {
  drv d;
  memset(&d, 0, sizeof d);
  uv_loop_init(&d.loop);
  mcpp_settings s;
  mcpp_settings_default(&s);
  char *args[] = {responder, NULL};
  mcpp_spawn_options o = {0};
  o.file = responder;
  o.args = args;
  mcpp_conn_callbacks cb = {.on_message = drv_message, .on_event = drv_event,
                            .on_record = records ? drv_record : NULL,
                            .on_close = drv_close};
  if (mcpp_conn_spawn(&d.conn, &d.loop, &s, &o, &cb, &d, NULL)) {
    fprintf(stderr, "cannot start %s: %s\n", responder,
            mcpp_conn_spawn_error());
    exit(1);
  }
  for (int i = 0; i < RTT_WARMUP + RTT_SAMPLES; i++) {
    d.got_pong = 0;
    double t0 = now_ns();
    if (mcpp_conn_ping(d.conn, 0, NULL)) exit(1);
    while (!d.got_pong) uv_run(&d.loop, UV_RUN_ONCE);
    if (i >= RTT_WARMUP) samples[i - RTT_WARMUP] = (now_ns() - t0) / 1000.0;
  }
  memcpy(ping_line, d.ping_line, d.ping_len);
  *len = d.ping_len;
  mcpp_conn_close(d.conn);
  while (!d.closed) uv_run(&d.loop, UV_RUN_ONCE);
  uv_run(&d.loop, UV_RUN_DEFAULT);
  uv_loop_close(&d.loop);
}

/* ----------------------------------------------- RTT over a bare uv pipe */

typedef struct bare {
  uv_loop_t loop;
  uv_process_t proc;
  uv_pipe_t in, out;
  char buf[65536];
  int got_line;
} bare;

static void bare_alloc(uv_handle_t *h, size_t n, uv_buf_t *b) {
  bare *x = h->data;
  *b = uv_buf_init(x->buf, sizeof x->buf);
}

static void bare_read(uv_stream_t *s, ssize_t n, const uv_buf_t *b) {
  bare *x = s->data;
  if (n > 0 && memchr(b->base, '\n', (size_t)n)) x->got_line = 1;
}

static void bare_exit(uv_process_t *p, int64_t st, int sig) {
  uv_close((uv_handle_t *)p, NULL);
}

static void bench_bare_rtt(double *samples, const char *line, size_t len) {
  bare x;
  memset(&x, 0, sizeof x);
  uv_loop_init(&x.loop);
  uv_pipe_init(&x.loop, &x.in, 0);
  uv_pipe_init(&x.loop, &x.out, 0);
  x.in.data = x.out.data = &x;
  uv_stdio_container_t stdio[3];
  stdio[0].flags = UV_CREATE_PIPE | UV_READABLE_PIPE;
  stdio[0].data.stream = (uv_stream_t *)&x.in;
  stdio[1].flags = UV_CREATE_PIPE | UV_WRITABLE_PIPE;
  stdio[1].data.stream = (uv_stream_t *)&x.out;
  stdio[2].flags = UV_INHERIT_FD;
  stdio[2].data.fd = 2;
  char *args[] = {responder, NULL};
  uv_process_options_t po;
  memset(&po, 0, sizeof po);
  po.file = responder;
  po.args = args;
  po.stdio = stdio;
  po.stdio_count = 3;
  po.exit_cb = bare_exit;
  if (uv_spawn(&x.loop, &x.proc, &po)) exit(1);
  uv_read_start((uv_stream_t *)&x.out, bare_alloc, bare_read);
  uv_buf_t bufs[2] = {uv_buf_init((char *)line, (unsigned)len),
                      uv_buf_init("\n", 1)};
  for (int i = 0; i < RTT_WARMUP + RTT_SAMPLES; i++) {
    x.got_line = 0;
    double t0 = now_ns();
    if (uv_try_write((uv_stream_t *)&x.in, bufs, 2) != (int)len + 1) exit(1);
    while (!x.got_line) uv_run(&x.loop, UV_RUN_ONCE);
    if (i >= RTT_WARMUP) samples[i - RTT_WARMUP] = (now_ns() - t0) / 1000.0;
  }
  uv_close((uv_handle_t *)&x.in, NULL);
  uv_close((uv_handle_t *)&x.out, NULL);
  uv_run(&x.loop, UV_RUN_DEFAULT);
  uv_loop_close(&x.loop);
}

/* ------------------------------------------------------ engine-only costs */

static int null_send(mcpp_engine *e, mcpp_frame_kind k, const char *f,
                     size_t n, void *ud) {
  (*(size_t *)ud)++;
  return 0;
}

static mcpp_engine *new_engine(size_t *sent, const mcpp_allocator *a) {
  mcpp_settings s;
  mcpp_settings_default(&s);
  s.nonce = 7;
  mcpp_engine_callbacks cb = {.send = null_send};
  mcpp_engine *e;
  if (mcpp_engine_new(&e, &s, &cb, sent, a, 1)) exit(1);
  return e;
}

static double bench_classify_ns(void) {
  size_t sent = 0;
  mcpp_engine *e = new_engine(&sent, NULL);
  static const char ping[] = "{\"jsonrpc\":\"2.0\",\"id\":12345,\"method\":\"ping\"}";
  double t0 = now_ns();
  for (uint64_t i = 0; i < CLASSIFY_ITERS; i++)
    if (mcpp_engine_recv(e, ping, sizeof ping - 1, 1000 + i) !=
        MCPP_RECV_CONSUMED)
      exit(1);
  double ns = (now_ns() - t0) / CLASSIFY_ITERS;
  if (sent != CLASSIFY_ITERS) exit(1);
  mcpp_engine_free(e);
  return ns;
}

/* Our pong received and classified: PONG_BATCH manual pings out, then
 * their pongs in, newest first (so that the bookkeeping of the pings
 * left outstanding costs the same for each and the frame is what is
 * measured). Only the recv calls are timed. */
static double bench_pong_ns(void) {
  size_t sent = 0;
  mcpp_engine *e = new_engine(&sent, NULL);
  static char pongs[PONG_BATCH][96];
  static size_t lens[PONG_BATCH];
  double total = 0;
  for (int b = 0; b < PONG_BATCHES; b++) {
    for (int i = 0; i < PONG_BATCH; i++) {
      uint64_t seq;
      if (mcpp_engine_ping(e, 0, 1000, &seq)) exit(1);
      lens[i] = (size_t)snprintf(pongs[i], sizeof pongs[i],
                                 "{\"jsonrpc\":\"2.0\",\"id\":\"mcpp-%016x-%llu\","
                                 "\"result\":{}}",
                                 7u, (unsigned long long)seq);
    }
    double t0 = now_ns();
    for (int i = PONG_BATCH - 1; i >= 0; i--)
      if (mcpp_engine_recv(e, pongs[i], lens[i], 2000) != MCPP_RECV_CONSUMED)
        exit(1);
    total += now_ns() - t0;
  }
  mcpp_engine_info info;
  mcpp_engine_get_info(e, &info);
  if (info.pongs_received != (uint64_t)PONG_BATCH * PONG_BATCHES) exit(1);
  mcpp_engine_free(e);
  return total / ((double)PONG_BATCH * PONG_BATCHES);
}

static double bench_forward_us(double *gbps) {
  size_t sent = 0, data = 1024 * 1024;
  mcpp_engine *e = new_engine(&sent, NULL);
  char *frame = malloc(data + 64);
  int h = sprintf(frame, "{\"jsonrpc\":\"2.0\",\"id\":9,\"result\":{\"d\":\"");
  memset(frame + h, 'a', data - (size_t)h - 3);
  memcpy(frame + data - 3, "\"}}", 3);
  double t0 = now_ns();
  for (uint64_t i = 0; i < FORWARD_ITERS; i++)
    if (mcpp_engine_recv(e, frame, data, 1000 + i) != MCPP_RECV_FORWARD)
      exit(1);
  double us = (now_ns() - t0) / FORWARD_ITERS / 1000.0;
  *gbps = (double)data / (us * 1000.0);
  free(frame);
  mcpp_engine_free(e);
  return us;
}

/* A counting allocator: a size header before each block. */
static size_t live_bytes;

static void *cnt_malloc(size_t n, void *ud) {
  size_t *p = malloc(n + sizeof(size_t) * 2);
  if (!p) return NULL;
  *p = n;
  live_bytes += n;
  return p + 2;
}

static void cnt_free(void *ptr, void *ud) {
  if (!ptr) return;
  size_t *p = (size_t *)ptr - 2;
  live_bytes -= *p;
  free(p);
}

static void *cnt_realloc(void *ptr, size_t n, void *ud) {
  if (!ptr) return cnt_malloc(n, ud);
  size_t *p = (size_t *)ptr - 2;
  size_t old = *p;
  size_t *q = realloc(p, n + sizeof(size_t) * 2);
  if (!q) return NULL;
  *q = n;
  live_bytes = live_bytes - old + n;
  return q + 2;
}

static double bench_idle_bytes(void) {
  mcpp_allocator a = {cnt_malloc, cnt_realloc, cnt_free, NULL};
  static mcpp_engine *engines[IDLE_ENGINES];
  size_t sent = 0;
  size_t before = live_bytes;
  for (int i = 0; i < IDLE_ENGINES; i++) engines[i] = new_engine(&sent, &a);
  double per = (double)(live_bytes - before) / IDLE_ENGINES;
  for (int i = 0; i < IDLE_ENGINES; i++) mcpp_engine_free(engines[i]);
  return per;
}

/* -------------------------------------------------------------------- main */

int main(int argc, char **argv) {
  int json = argc > 1 && strcmp(argv[1], "--json") == 0;
  const char *env = getenv("MCPP_RESPONDER");
  if (env) {
    snprintf(responder, sizeof responder, "%s", env);
  } else {
    const char *slash = strrchr(argv[0], '/');
    int dir = slash ? (int)(slash - argv[0]) : 1;
    snprintf(responder, sizeof responder, "%.*s/responder", dir,
             slash ? argv[0] : ".");
  }
  double *drv_s = malloc(sizeof(double) * RTT_SAMPLES);
  double *bare_s = malloc(sizeof(double) * RTT_SAMPLES);
  double *rec_s = malloc(sizeof(double) * RTT_SAMPLES);
  char line[128];
  size_t len = 0;
  bench_driver_rtt(drv_s, line, &len, 0);
  bench_bare_rtt(bare_s, line, len);
  bench_driver_rtt(rec_s, line, &len, 1);
  rtt d = summarize(drv_s, RTT_SAMPLES), b = summarize(bare_s, RTT_SAMPLES);
  rtt r = summarize(rec_s, RTT_SAMPLES);
  double classify = bench_classify_ns();
  double pong = bench_pong_ns();
  double gbps;
  double forward = bench_forward_us(&gbps);
  double idle = bench_idle_bytes();
  if (json) {
    printf("{\"bench\":\"engine\",\"rtt_us\":{\"driver\":{\"p50\":%.2f,"
           "\"p90\":%.2f,\"p99\":%.2f},\"bare_pipe\":{\"p50\":%.2f,"
           "\"p90\":%.2f,\"p99\":%.2f},\"driver_with_records\":{"
           "\"p50\":%.2f,\"p90\":%.2f,\"p99\":%.2f},\"p50_ratio\":%.3f,"
           "\"p50_ratio_goal\":1.3},\"classify_ping_ns\":%.1f,"
           "\"classify_ping_goal_ns\":500,\"classify_pong_ns\":%.1f,"
           "\"forward_1mib_us\":%.1f,"
           "\"forward_gb_per_s\":%.2f,\"idle_engine_bytes\":%.0f,"
           "\"idle_engine_goal_bytes\":4096,\"samples\":%d}\n",
           d.p50, d.p90, d.p99, b.p50, b.p90, b.p99, r.p50, r.p90, r.p99,
           d.p50 / b.p50, classify, pong,
           forward, gbps, idle, RTT_SAMPLES);
  } else {
    printf("mcpping engine benchmark (%d RTT samples)\n\n", RTT_SAMPLES);
    printf("%-34s %10s %10s %10s\n", "ping RTT (us)", "p50", "p90", "p99");
    printf("%-34s %10.2f %10.2f %10.2f\n", "driver (mcpp_conn_ping)", d.p50,
           d.p90, d.p99);
    printf("%-34s %10.2f %10.2f %10.2f\n", "bare libuv pipe, same bytes", b.p50,
           b.p90, b.p99);
    printf("%-34s %10.2fx %9.2fx %9.2fx   (goal p50 <= 1.30x)\n", "ratio",
           d.p50 / b.p50, d.p90 / b.p90, d.p99 / b.p99);
    printf("%-34s %10.2f %10.2f %10.2f   (%.2fx)\n\n",
           "driver + governance records", r.p50, r.p90, r.p99, r.p50 / b.p50);
    printf("%-34s %10.1f ns          (goal <= 500 ns)\n",
           "classify + answer a ping line", classify);
    printf("%-34s %10.1f ns\n", "classify our pong line", pong);
    printf("%-34s %10.1f us  (%.2f GB/s)\n", "forward a 1 MiB response", forward,
           gbps);
    printf("%-34s %10.0f B           (goal <= 4096 B)\n",
           "memory per idle engine", idle);
  }
  free(drv_s);
  free(bare_s);
  free(rec_s);
  return 0;
}
