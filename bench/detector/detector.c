/*
 * The detector benchmark (issue 25): generated server traces replayed
 * through the sans-I/O engine with explicit time, for the fixed-threshold
 * detector (pings alone at the configured timeout, as before issue 25,
 * behind a test hook) and the detector (corroboration, CPU, adaptive
 * timeout), at the same settings (interval 1 s, timeout 1 s,
 * failures 2 unless told). Reports false stale verdicts per server-day on
 * servers that are alive, and detection time (p50, p99) on servers that
 * fail. Runs in seconds: nothing sleeps.
 *
 *   ./build/bench-detector [--days N] [--trials N] [--seed S]
 *
 * The simulated server is single-threaded: it serves requests in arrival
 * order, one at a time, and writes each answer when its service ends.
 * Trace kinds:
 *   heavy_tail  alive: service times lognormal (median 2 ms) with a rare
 *               Pareto tail of slow spells (I/O waits, CPU idle)
 *   gc_pause    alive: a 0.5-4 s stop-the-world pause (CPU busy) every
 *               ~10 min; everything waits behind it
 *   busy_tool   alive: a CPU-bound synchronous tools/call of 1-20 s every
 *               ~2 min (request timeout 60 s); pings wait behind it
 *   slow        alive: routinely slow answers, lognormal median 500 ms
 *               (about 1 in 100 past the 1 s timeout)
 *   ping_deaf   alive: never answers ping, answers everything else
 *   freeze      fails: at a random time it stops answering (CPU idle)
 *   slow_freeze fails: the slow server, frozen
 *   sigstop     fails: the process is stopped (state T)
 *   crash       fails: the process exits (seen by the process look)
 * A false verdict restarts the server (as `mcpping wrap` would).
 */
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mcpping.h"

extern int mcpp__detector_fixed; /* csrc/src/engine/test_hooks.h */

#define MS 1000ULL
#define SEC 1000000ULL
#define DAY (86400ULL * SEC)
#define MAXQ 4096

typedef enum kind {
  HEAVY_TAIL, SLOW, GC_PAUSE, BUSY_TOOL, PING_DEAF, FREEZE, SLOW_FREEZE,
  SIGSTOP, CRASH, KINDS
} kind;
static const char *kind_name[KINDS] = {
    "heavy_tail", "slow", "gc_pause", "busy_tool", "ping_deaf",
    "freeze", "slow_freeze", "sigstop", "crash"};
static int kind_fails(kind k) { return k >= FREEZE; }

/* ---------------------------------------------------------------- random */

static uint64_t rng_state;
static uint64_t rnd(void) {
  uint64_t z = (rng_state += 0x9e3779b97f4a7c15ULL);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}
static double unif(void) { return (double)(rnd() >> 11) / 9007199254740992.0; }
static double expo(double mean) { return -mean * log(1.0 - unif()); }
static double normal(void) {
  double u = unif(), v = unif();
  return sqrt(-2.0 * log(u > 0 ? u : 1e-300)) * cos(2 * M_PI * v);
}
static double lognormal(double median, double sigma) {
  return median * exp(sigma * normal());
}

/* ---------------------------------------------------------------- server */

typedef struct req {
  char id[64]; /* raw JSON id */
  int is_ping, is_app;
  uint64_t arrive;
  double service_s; /* for app calls */
} req;

typedef struct sim {
  kind k;
  int corroborate; /* the new detector */
  mcpp_engine *e;
  uint64_t now;
  /* The server. */
  req q[MAXQ];
  int qh, qn;
  uint64_t free_at;    /* when the request in service ends */
  int in_service;
  req cur;
  uint64_t cpu_us;     /* CPU time so far */
  uint64_t cpu_from;   /* the current CPU-busy span started here (0: idle) */
  uint64_t pause_at;   /* next GC pause */
  uint64_t fail_at;    /* failure traces: when it fails */
  uint64_t next_call;  /* next application tools/call */
  int app_seq;
  /* Results. */
  int stale;
  uint64_t stale_at;
} sim;

static void cpu_busy(sim *s, uint64_t from) {
  if (!s->cpu_from) s->cpu_from = from ? from : 1;
}
static void cpu_idle(sim *s, uint64_t at) {
  if (s->cpu_from && at > s->cpu_from) s->cpu_us += at - s->cpu_from;
  s->cpu_from = 0;
}

static int dead(const sim *s) { return kind_fails(s->k) && s->now >= s->fail_at; }

static int proc_state(mcpp_engine *e, void *ud) {
  sim *s = ud;
  uint64_t cpu = s->cpu_us;
  if (s->cpu_from && s->now > s->cpu_from) cpu += s->now - s->cpu_from;
  mcpp_engine_set_process_cpu(e, cpu);
  if (dead(s) && s->k == SIGSTOP) return MCPP_PROCESS_STOPPED;
  if (dead(s) && s->k == CRASH) return MCPP_PROCESS_EXITED;
  return MCPP_PROCESS_RUNNING;
}

static void push(sim *s, const req *r) {
  if (s->qn == MAXQ) return; /* a flooded server loses requests */
  s->q[(s->qh + s->qn++) % MAXQ] = *r;
}

static int send_cb(mcpp_engine *e, mcpp_frame_kind fk, const char *frame,
                   size_t len, void *ud) {
  sim *s = ud;
  if (fk != MCPP_FRAME_PING && fk != MCPP_FRAME_PROBE) return 0;
  req r;
  memset(&r, 0, sizeof r);
  const char *p = strstr(frame, "\"id\":");
  if (p == NULL) return 0;
  p += 5;
  const char *q = strchr(p + 1, '"');
  snprintf(r.id, sizeof r.id, "%.*s", (int)(q - p + 1), p);
  r.is_ping = fk == MCPP_FRAME_PING;
  r.arrive = s->now;
  push(s, &r);
  (void)len;
  return 0;
}

static void event_cb(mcpp_engine *e, const mcpp_event *ev, void *ud) {
  sim *s = ud;
  if (ev->type == MCPP_EV_STALE && !s->stale) {
    s->stale = 1;
    s->stale_at = s->now;
  }
}

/* How long the server takes to serve r, in µs. */
static uint64_t service(sim *s, const req *r) {
  if (r->is_app) return (uint64_t)(r->service_s * SEC);
  double t = s->k == SLOW || s->k == SLOW_FREEZE ? lognormal(0.5, 0.3)
                                                 : lognormal(0.002, 1.0);
  if (s->k == HEAVY_TAIL && unif() < 0.002) {
    /* A slow spell: Pareto, alpha 1.5, from 200 ms, capped at 60 s. */
    t = 0.2 / pow(1.0 - unif(), 1.0 / 1.5);
    if (t > 60) t = 60;
  }
  return (uint64_t)(t * SEC);
}

static void start_engine(sim *s) {
  mcpp_settings st;
  mcpp_settings_default(&st);
  st.interval_ms = 1000;
  st.timeout_ms = 1000;
  st.failures = 2;
  st.nonce = rnd();
  st.request_timeout_ms = 60000;
  mcpp_engine_callbacks cb = {.send = send_cb, .on_event = event_cb,
                              .process_state = proc_state};
  if (mcpp_engine_new(&s->e, &st, &cb, s, NULL, s->now) != 0) abort();
  static const char init[] =
      "{\"jsonrpc\":\"2.0\",\"id\":\"init\",\"method\":\"initialize\","
      "\"params\":{\"protocolVersion\":\"2025-11-25\"}}";
  static const char init_ok[] =
      "{\"jsonrpc\":\"2.0\",\"id\":\"init\",\"result\":{\"protocolVersion\":"
      "\"2025-11-25\",\"serverInfo\":{\"name\":\"sim\"}}}";
  static const char inited[] =
      "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}";
  mcpp_engine_observe_outbound(s->e, init, strlen(init), s->now);
  mcpp_engine_recv(s->e, init_ok, strlen(init_ok), s->now);
  mcpp_engine_observe_outbound(s->e, inited, strlen(inited), s->now);
}

static void restart(sim *s) {
  mcpp_engine_free(s->e);
  s->qn = 0;
  s->in_service = 0;
  cpu_idle(s, s->now);
  s->stale = 0;
  start_engine(s);
}

static void app_call(sim *s) {
  req r;
  memset(&r, 0, sizeof r);
  snprintf(r.id, sizeof r.id, "%d", ++s->app_seq);
  r.is_app = 1;
  r.arrive = s->now;
  r.service_s = s->k == BUSY_TOOL ? 1 + 19 * unif() : lognormal(0.05, 1.0);
  char frame[160];
  int n = snprintf(frame, sizeof frame,
                   "{\"jsonrpc\":\"2.0\",\"id\":%s,\"method\":\"tools/call\","
                   "\"params\":{\"name\":\"t\"}}", r.id);
  mcpp_engine_observe_outbound(s->e, frame, (size_t)n, s->now);
  push(s, &r);
}

/* The server's next moment: a service ending or starting. */
static uint64_t server_next(const sim *s) {
  if (dead(s)) return UINT64_MAX;
  if (s->in_service) return s->free_at;
  if (s->qn) return s->now; /* starts at once */
  return UINT64_MAX;
}

static void server_step(sim *s) {
  if (dead(s)) return;
  if (s->in_service && s->free_at <= s->now) {
    s->in_service = 0;
    cpu_idle(s, s->now);
    char frame[160];
    int n = snprintf(frame, sizeof frame,
                     "{\"jsonrpc\":\"2.0\",\"id\":%s,\"result\":{}}", s->cur.id);
    mcpp_engine_recv(s->e, frame, (size_t)n, s->now);
  }
  while (!s->in_service && s->qn) {
    req r = s->q[s->qh];
    s->qh = (s->qh + 1) % MAXQ;
    s->qn--;
    if (r.is_ping && s->k == PING_DEAF) continue; /* dropped */
    uint64_t start = s->now;
    /* A GC pause in the way: everything waits (CPU busy). */
    while (s->k == GC_PAUSE && start >= s->pause_at) {
      uint64_t len = (uint64_t)((0.5 + 3.5 * unif()) * SEC);
      if (s->pause_at + len <= start) {
        s->cpu_us += len; /* over before anyone asked */
      } else {
        cpu_busy(s, s->pause_at);
        start = s->pause_at + len;
      }
      s->pause_at += len + (uint64_t)(expo(600) * SEC);
    }
    s->cur = r;
    s->in_service = 1;
    s->free_at = start + service(s, &r);
    if (r.is_app && s->k == BUSY_TOOL) cpu_busy(s, start);
  }
}

/* Runs one server until `end` (alive traces) or until a verdict after the
 * failure (failure traces). Returns false verdicts (alive), or sets
 * *detect_us (failure). */
static int run(sim *s, uint64_t end, uint64_t *detect_us) {
  int false_verdicts = 0;
  start_engine(s);
  s->next_call = s->now + (uint64_t)(expo(s->k == BUSY_TOOL ? 120 : 30) * SEC);
  s->pause_at = s->now + (uint64_t)(expo(600) * SEC);
  for (;;) {
    uint64_t t = mcpp_engine_next_deadline(s->e);
    uint64_t u = server_next(s);
    if (u < t) t = u;
    if (s->next_call < t) t = s->next_call;
    if (kind_fails(s->k) && s->now < s->fail_at && s->fail_at < t) t = s->fail_at;
    if (t > end) break;
    if (t > s->now) s->now = t;
    if (kind_fails(s->k) && s->now == s->fail_at) cpu_idle(s, s->now);
    if (s->next_call <= s->now) {
      if (!dead(s)) app_call(s);
      s->next_call = s->now + (uint64_t)(expo(s->k == BUSY_TOOL ? 120 : 30) * SEC);
    }
    server_step(s);
    mcpp_engine_on_timer(s->e, s->now);
    if (s->stale) {
      if (kind_fails(s->k) && s->stale_at >= s->fail_at) {
        *detect_us = s->stale_at - s->fail_at;
        mcpp_engine_free(s->e);
        return false_verdicts;
      }
      false_verdicts++;
      restart(s);
    }
  }
  if (detect_us) *detect_us = UINT64_MAX;
  mcpp_engine_free(s->e);
  return false_verdicts;
}

static int cmp_u64(const void *a, const void *b) {
  uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
  return x < y ? -1 : x > y;
}

static double pct(uint64_t *v, int n, double p) {
  if (n == 0) return NAN;
  qsort(v, (size_t)n, sizeof *v, cmp_u64);
  int i = (int)ceil(p * n) - 1;
  if (i < 0) i = 0;
  return v[i] / 1e6;
}

int main(int argc, char **argv) {
  int days = 20, trials = 500;
  uint64_t seed = 25;
  for (int i = 1; i + 1 < argc; i += 2) {
    if (!strcmp(argv[i], "--days")) days = atoi(argv[i + 1]);
    else if (!strcmp(argv[i], "--trials")) trials = atoi(argv[i + 1]);
    else if (!strcmp(argv[i], "--seed")) seed = strtoull(argv[i + 1], NULL, 10);
  }
  printf("detector benchmark: interval 1 s, timeout 1 s, failures 2; "
         "%d server-days per alive trace, %d trials per failure trace, seed %" PRIu64 "\n\n",
         days, trials, seed);
  printf("%-11s %-10s %14s %14s %10s %10s %8s\n", "trace", "detector",
         "false/srv-day", "false verdicts", "detect p50", "detect p99", "missed");
  double fixed_false = 0, new_false = 0;
  for (int k = 0; k < KINDS; k++) {
    for (int corroborate = 0; corroborate <= 1; corroborate++) {
      rng_state = seed * 1000 + (uint64_t)k; /* the same trace for both */
      mcpp__detector_fixed = !corroborate;
      const char *name = corroborate ? "detector" : "fixed";
      if (!kind_fails((kind)k)) {
        int total = 0;
        for (int d = 0; d < days; d++) {
          sim *s = calloc(1, sizeof *s);
          s->k = (kind)k;
          s->corroborate = corroborate;
          s->now = 1000 * SEC;
          total += run(s, s->now + DAY, NULL);
          free(s);
        }
        (corroborate ? &new_false : &fixed_false)[0] += total;
        printf("%-11s %-10s %14.2f %14d %10s %10s %8s\n", kind_name[k], name,
               (double)total / days, total, "-", "-", "-");
      } else {
        uint64_t *v = calloc((size_t)trials, sizeof *v);
        int n = 0, missed = 0;
        for (int i = 0; i < trials; i++) {
          sim *s = calloc(1, sizeof *s);
          s->k = (kind)k;
          s->corroborate = corroborate;
          s->now = 1000 * SEC;
          s->fail_at = s->now + (uint64_t)((30 + 60 * unif()) * SEC);
          uint64_t det;
          run(s, s->fail_at + 120 * SEC, &det);
          if (det == UINT64_MAX) missed++;
          else v[n++] = det;
          free(s);
        }
        printf("%-11s %-10s %14s %14s %9.2fs %9.2fs %8d\n", kind_name[k], name,
               "-", "-", pct(v, n, 0.5), pct(v, n, 0.99), missed);
        free(v);
      }
    }
  }
  printf("\nfalse verdicts on alive traces, all kinds: fixed %.0f, "
         "detector %.0f (%.1fx fewer)\n", fixed_false, new_false,
         new_false > 0 ? fixed_false / new_false : INFINITY);
  return 0;
}
