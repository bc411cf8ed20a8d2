/*
 * The soak: SOAK_CONNS soak-servers at once for SOAK_SECONDS, each slot
 * running one server after another, through the public runtime API (one
 * I/O thread, items drained on this thread's own uv loop, as the bindings
 * do). Traffic both ways, random faults in a fraction of the servers, host
 * stalls now and then; at the end one line of counts, non-zero exit if any
 * failure count is non-zero.
 *
 *   soak [--conns N] [--seconds S] [--seed X] [--fault-pct P] [--server PATH]
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>
#include <uv.h>

#include "soak.h"

const char *const fault_names[F_COUNT] = {
    "none", "stop", "spin", "crash", "halfopen", "pingflood", "slow"};

enum {
  TICK_MS = 10,
  SPAWNS_PER_TICK = 10, /* each waits for the I/O thread */
  MAX_SPINNERS = 2, /* busy loops burn a core each until convicted */
  STUCK_MS = 30000  /* a handshake, finish or close that never ends */
};

static soak K;
static uv_loop_t loop;
static uv_async_t wake;
static uv_timer_t tick;
static uint64_t rng; /* --seed, else the clock: printed, to rerun a run */
static int fault_pct = 25;
static const char *server_path = "build/soak-server";
static long rss_base = -1, rss_end = -1;

uint64_t soak_now_ms(void) { return uv_hrtime() / 1000000; }

int soak_starved_between(const soak *k, uint64_t from, uint64_t to) {
  for (size_t i = 0; i < k->n_starved; i++)
    if (k->starved[i][1] >= from && k->starved[i][0] <= to) return 1;
  return 0;
}

static uint64_t rnd(void) { return soak_mix(rng++); }

/* A uniform draw from [lo, hi]. */
static uint64_t between(uint64_t lo, uint64_t hi) {
  return hi > lo ? lo + rnd() % (hi - lo + 1) : lo;
}

static int chance(unsigned pct) { return rnd() % 100 < pct; }

uint64_t fault_bound_ms(fault f) {
  /* A ping flood is cut off as FLOODED once 20000 pings are written, or
   * goes stale as a server that stopped reading: the freeze bound. */
  if (f == F_SPIN) return SPIN_BOUND_MS;
  return f == F_STOP || f == F_PINGFLOOD ? FREEZE_BOUND_MS : EXIT_BOUND_MS;
}

int fault_is_detected(fault f) {
  return f != F_NONE && f != F_SLOW;
}

/* ------------------------------------------------------------ sending */

req *slot_add_req(slot *s, uint64_t iseq, uint64_t rawhash,
                  uint32_t delay_ms, int expect_timeout) {
  if (s->n_reqs == s->cap_reqs) {
    s->cap_reqs = s->cap_reqs ? s->cap_reqs * 2 : 16;
    s->reqs = realloc(s->reqs, s->cap_reqs * sizeof *s->reqs);
    if (!s->reqs) abort();
  }
  req *r = &s->reqs[s->n_reqs++];
  memset(r, 0, sizeof *r);
  r->iseq = iseq;
  r->rawhash = rawhash;
  r->sent_ms = soak_now_ms();
  r->sent_us = soak_unix_us();
  r->delay_ms = delay_ms;
  r->expect_timeout = expect_timeout;
  return r;
}

/* timeout_ms: MCPP_TIMEOUT_DEFAULT, or the request's own. */
static void send_line(soak *k, slot *s, const soak_buf *line,
                      uint32_t timeout_ms) {
  int rc = mcpp_runtime_send_timed(k->rt, s->conn_id, line->p, line->len,
                                   timeout_ms);
  if (rc == 0) {
    s->sent_app++;
    k->c.app_messages++;
  } else if (rc != MCPP_ERR_NOT_FOUND) {
    /* No retry queue here: a refused line would be a gap the server sees. */
    fprintf(stderr, "soak: conn %d: send failed: %s\n", s->idx,
            mcpp_strerror(rc));
    k->c.lost++;
  }
}

void slot_send(soak *k, slot *s, const soak_buf *line) {
  send_line(k, s, line, MCPP_TIMEOUT_DEFAULT);
}

static void send_request(soak *k, slot *s, uint32_t delay, int expect_timeout) {
  soak_buf line = {0};
  uint64_t iseq = s->next_iseq++;
  uint64_t now = soak_now_ms();
  soak_line_request(&line, s->seed, iseq, delay);
  req *r = slot_add_req(s, iseq, soak_fnv(line.p, line.len), delay,
                        expect_timeout);
  uint32_t timeout = MCPP_TIMEOUT_DEFAULT;
  r->timeout_ms = REQUEST_TIMEOUT_MS;
  if (delay >= LONGER_CALL_MIN_MS && !expect_timeout) {
    timeout = r->timeout_ms = LONGER_TIMEOUT_MS;
    k->c.longer_calls++;
    if (chance(20)) r->abort_at = now + between(100, ABORT_MAX_MS);
  }
  send_line(k, s, &line, timeout);
  soak_buf_free(&line);
}

/* Abandons the requests whose abort time came. */
static void run_aborts(soak *k, slot *s, uint64_t now) {
  for (size_t i = 0; i < s->n_reqs; i++) {
    req *r = &s->reqs[i];
    if (!r->abort_at || r->aborted || r->timed_out || now < r->abort_at)
      continue;
    soak_buf id = {0};
    soak_request_id(&id, r->iseq);
    r->aborted = 1;
    /* Not the tick's `now`: spawns earlier in a tick may take long. */
    r->aborted_us = soak_unix_us();
    int rc = mcpp_runtime_cancel_request(k->rt, s->conn_id, id.p, id.len);
    if (rc && rc != MCPP_ERR_NOT_FOUND) {
      fprintf(stderr, "soak: conn %d: cancel_request failed: %s\n", s->idx,
              mcpp_strerror(rc));
      k->c.missed_aborts++;
    }
    soak_buf_free(&id);
  }
}

static void send_note(soak *k, slot *s) {
  soak_buf line = {0};
  soak_line_client_note(&line, s->seed, s->next_iseq++);
  slot_send(k, s, &line);
  soak_buf_free(&line);
}

static void send_simple(soak *k, slot *s, const char *method,
                        const char *params) {
  soak_buf line = {0};
  uint64_t iseq = s->next_iseq++;
  soak_buf_puts(&line, "{\"jsonrpc\":\"2.0\",\"id\":");
  soak_request_id(&line, iseq);
  soak_buf_printf(&line,
                  ",\"method\":\"%s\",\"params\":{\"iseq\":%" PRIu64 "%s}}",
                  method, iseq, params);
  if (strcmp(method, "soak/finish") == 0) s->finish_iseq = iseq;
  slot_send(k, s, &line);
  soak_buf_free(&line);
}

/* One request's delay, by the server's plan. */
static uint32_t plan_delay(slot *s, uint64_t now, int *expect_timeout) {
  *expect_timeout = 0;
  if (s->fault == F_SLOW && now >= s->fault_ms) {
    *expect_timeout = 1;
    return OVER_MS;
  }
  /* A flood holds the server's answers behind thousands of lines: their
   * time is the flood's, not a planned delay. */
  if (s->flags & FL_FLOOD) return (uint32_t)between(0, 20);
  if ((s->flags & FL_LONG) && chance(10))
    return (uint32_t)between(LONGER_CALL_MIN_MS, LONGER_CALL_MAX_MS);
  if ((s->flags & FL_LONG) && chance(25))
    return (uint32_t)between(LONG_CALL_MIN_MS, LONG_CALL_MAX_MS);
  if ((s->flags & FL_UNDER) && chance(25)) return UNDER_MS;
  return (uint32_t)between(0, 20);
}

/* ------------------------------------------------------------ lifecycle */

static int spinners(void) {
  int n = 0;
  for (int i = 0; i < K.n_slots; i++)
    n += K.slots[i].phase != P_FREE && K.slots[i].fault == F_SPIN;
  return n;
}

static void plan(slot *s, uint64_t now, uint64_t seconds) {
  uint64_t life_min = seconds / 8 < 6 ? 6 : seconds / 8 > 20 ? 20 : seconds / 8;
  uint64_t life_max = seconds / 3 < 10 ? 10 : seconds / 3 > 90 ? 90 : seconds / 3;
  uint64_t life = between(life_min * 1000, life_max * 1000);
  s->seed = rnd();
  s->flags = 0;
  static const unsigned pct[] = {20, 20, 10, 10, 3, 15, 20, 30};
  for (unsigned b = 0; b < 8; b++)
    if (chance(pct[b])) s->flags |= 1u << b;
  s->fault = F_NONE;
  if (chance((unsigned)fault_pct)) {
    unsigned r = (unsigned)(rnd() % 100);
    s->fault = r < 30   ? F_STOP
               : r < 55 ? F_CRASH
               : r < 70 ? F_HALFOPEN
               : r < 80 ? F_PINGFLOOD
               : r < 85 ? F_SPIN
                        : F_SLOW;
    if (s->fault == F_SPIN && spinners() >= MAX_SPINNERS) s->fault = F_STOP;
  }
  s->born_ms = now;
  s->fault_ms = now + between(2000, life > 4000 ? life - 2000 : 2000);
  /* A server that will be convicted lives until it is. */
  s->end_ms = fault_is_detected(s->fault) ? UINT64_MAX : now + life;
  s->req_every_ms =
      s->flags & FL_QUIET ? between(2000, 6000) : between(200, 1500);
  s->next_req_ms = now + between(0, s->req_every_ms);
  s->next_burst_ms = now + between(5000, 10000);
}

static int spawn_slot(slot *s, uint64_t now) {
  plan(s, now, (K.end_ms - K.start_ms) / 1000);
  char args[8][64];
  char *argv[10];
  int n = 0;
  argv[n] = (char *)server_path;
  n++;
#define ARG(...)                                         \
  do {                                                   \
    snprintf(args[n - 1], sizeof args[0], __VA_ARGS__); \
    argv[n] = args[n - 1];                               \
    n++;                                                 \
  } while (0)
  ARG("seed=%" PRIu64, s->seed);
  if (!(s->flags & FL_QUIET)) ARG("notify=%" PRIu64, between(500, 3000));
  if (s->flags & FL_FLOOD)
    ARG("burst=%" PRIu64 ":%" PRIu64, between(8000, 15000),
        between(2000, 6000));
  else if (s->flags & FL_BURST)
    ARG("burst=%" PRIu64 ":300", between(5000, 10000));
  if (s->flags & FL_GARBAGE) ARG("garbage=%" PRIu64, between(1000, 3000));
  if (s->flags & FL_SERVPING) ARG("servping=%" PRIu64, between(1000, 3000));
  if (s->flags & FL_SLOWPONG) ARG("pongdelay=%d", SLOW_PONG_MS);
  if (fault_is_detected(s->fault))
    ARG("fault=%s@%" PRIu64, fault_names[s->fault], s->fault_ms - now);
#undef ARG
  argv[n] = NULL;

  mcpp_settings st;
  mcpp_settings_default(&st);
  st.interval_ms = KA_INTERVAL_MS;
  st.timeout_ms = PING_TIMEOUT_MS;
  st.failures = FAILURES;
  st.request_timeout_ms = REQUEST_TIMEOUT_MS;
  st.nonce = rnd() | 1;
  mcpp_spawn_options o;
  memset(&o, 0, sizeof o);
  o.file = server_path;
  o.args = argv;
  o.stderr_mode = MCPP_STDERR_CALLBACK;
  o.kill_grace_ms = KILL_GRACE_MS;
  char err[256];
  int rc = mcpp_runtime_spawn(K.rt, &st, &o, s, &s->conn_id, err, sizeof err);
  if (rc) {
    fprintf(stderr, "soak: spawn failed: %s\n", err);
    return rc;
  }
  K.c.conns++;
  s->pid = mcpp_runtime_pid(K.rt, s->conn_id);
  s->next_iseq = s->next_oseq = 0;
  s->sent_app = s->timeouts = s->aborts = 0;
  s->n_reqs = 0;
  s->announced_ms = 0;
  s->detected = s->close_requested = s->stale_counted = 0;
  s->exited_unread = 0;
  s->phase = P_INIT;
  s->phase_ms = now;
  send_simple(&K, s, "initialize",
              ",\"protocolVersion\":\"2025-11-25\",\"capabilities\":{},"
              "\"clientInfo\":{\"name\":\"soak\",\"version\":\"1\"}");
  return 0;
}

void slot_close(soak *k, slot *s) {
  if (s->close_requested) return;
  s->close_requested = 1;
  s->phase = P_CLOSING;
  s->phase_ms = soak_now_ms();
  if (mcpp_runtime_close(k->rt, s->conn_id) != 0) {
    /* Closing by itself already: its CLOSED item is on the way. */
  }
}

void slot_after_close(soak *k, slot *s) {
  s->phase = P_FREE;
  s->respawn_at = soak_now_ms() + between(0, 500);
}

/* ------------------------------------------------------------ the loop */

static void drain(void) {
  mcpp_item *items = mcpp_runtime_drain(K.rt);
  for (mcpp_item *it = items; it; it = mcpp_item_next(it)) check_item(&K, it);
  mcpp_runtime_items_free(K.rt, items);
}

static void on_wake(uv_async_t *a) { drain(); }

static void notify(void *arg) { uv_async_send(&wake); }

/* Blocks this thread, as a busy host loop does: the I/O thread keeps
 * answering and timing pings, and must not blame the servers. */
static void maybe_stall(uint64_t now) {
  static uint64_t next;
  if (!next) next = now + between(10000, 20000);
  if (now < next) return;
  uint64_t ms = between(200, 1200);
  usleep((useconds_t)(ms * 1000));
  uint64_t after = soak_now_ms();
  if (K.n_stalls == K.cap_stalls) {
    K.cap_stalls = K.cap_stalls ? K.cap_stalls * 2 : 64;
    K.stalls = realloc(K.stalls, K.cap_stalls * sizeof *K.stalls);
    if (!K.stalls) abort();
  }
  K.stalls[K.n_stalls][0] = now;
  K.stalls[K.n_stalls][1] = after;
  K.n_stalls++;
  K.c.stalls++;
  K.c.stall_ms += after - now;
  next = after + between(10000, 20000);
}

static void run_slot(slot *s, uint64_t now) {
  if (s->phase == P_RUN || s->phase == P_FINISH) run_aborts(&K, s, now);
  switch (s->phase) {
  case P_FREE:
    return;
  case P_INIT:
  case P_FINWAIT:
  case P_CLOSING:
    if (now - s->phase_ms > STUCK_MS && !s->announced_ms) {
      fprintf(stderr, "soak: conn %d: stuck in phase %d\n", s->idx, s->phase);
      K.c.stuck++;
      s->phase_ms = now;
      if (s->phase != P_CLOSING) slot_close(&K, s);
    }
    break;
  case P_RUN:
    if (now >= s->end_ms || (K.winding && !s->announced_ms)) {
      s->phase = P_FINISH;
      s->phase_ms = now;
      break;
    }
    if ((s->flags & FL_BURST) && now >= s->next_burst_ms) {
      for (int i = 0; i < 100; i++) send_request(&K, s, 0, 0);
      s->next_burst_ms = now + between(5000, 10000);
    }
    if (now >= s->next_req_ms) {
      if (chance(10)) {
        send_note(&K, s);
      } else {
        int expect_timeout;
        uint32_t delay = plan_delay(s, now, &expect_timeout);
        if (expect_timeout) K.c.faults[F_SLOW].injected++;
        send_request(&K, s, delay, expect_timeout);
      }
      s->next_req_ms = now + between(s->req_every_ms / 2, s->req_every_ms);
    }
    break;
  case P_FINISH:
    if (s->announced_ms) break; /* the verdict decides */
    if (slot_outstanding(s) == 0) {
      send_simple(&K, s, "soak/finish", "");
      s->phase = P_FINWAIT;
      s->phase_ms = now;
    } else if (now - s->phase_ms > STUCK_MS) {
      fprintf(stderr, "soak: conn %d: %zu requests never answered\n", s->idx,
              slot_outstanding(s));
      K.c.lost += slot_outstanding(s);
      K.c.stuck++;
      slot_close(&K, s);
    }
    break;
  }
  /* A fault announced and not convicted in time. */
  if (s->announced_ms && !s->detected && fault_is_detected(s->fault) &&
      now > s->announced_ms + fault_bound_ms(s->fault) + 5000) {
    fprintf(stderr, "soak: conn %d: %s fault never detected\n", s->idx,
            fault_names[s->fault]);
    K.c.undetected++;
    s->detected = -1;
    slot_close(&K, s);
  }
}

/* RSS is sampled once a second in two windows, 20-30% and 90-100% into
 * the run, with every slot busy in both; the least of each window is the
 * floor under the bursts (a flood in flight, items not drained yet), and
 * a leak raises the floor. */
static void sample_rss(uint64_t now) {
  static uint64_t next;
  if (now < next || K.winding) return;
  next = now + 1000;
  uint64_t span = K.end_ms - K.start_ms, at = now - K.start_ms;
  long *floor = at >= span / 5 && at < span * 3 / 10 ? &rss_base
                : at >= span * 9 / 10                ? &rss_end
                                                     : NULL;
  long kib = audit_rss_kib();
  if (floor && kib >= 0 && (*floor < 0 || kib < *floor)) *floor = kib;
}

static void on_tick(uv_timer_t *t) {
  static uint64_t last;
  uint64_t started = soak_now_ms();
  if (last && started - last > K.c.max_tick_gap_ms)
    K.c.max_tick_gap_ms = started - last;
  if (last && started - last > PAUSE_THRESHOLD_MS) {
    if (K.n_starved == K.cap_starved) {
      K.cap_starved = K.cap_starved ? K.cap_starved * 2 : 64;
      K.starved = realloc(K.starved, K.cap_starved * sizeof *K.starved);
      if (!K.starved) abort();
    }
    K.starved[K.n_starved][0] = last;
    K.starved[K.n_starved][1] = started;
    K.n_starved++;
  }
  drain();
  uint64_t now = soak_now_ms();
  if (!K.winding && now >= K.end_ms) K.winding = 1;
  sample_rss(now);
  int spawned = 0, open = 0;
  for (int i = 0; i < K.n_slots; i++) {
    slot *s = &K.slots[i];
    if (s->phase == P_FREE && !K.winding && now >= s->respawn_at &&
        spawned < SPAWNS_PER_TICK) {
      spawned++;
      if (spawn_slot(s, now)) s->respawn_at = now + 1000;
    }
    run_slot(s, now);
    open += s->phase != P_FREE;
  }
  if (K.winding && open == 0) {
    uv_timer_stop(t);
    uv_close((uv_handle_t *)&wake, NULL);
    uv_close((uv_handle_t *)&tick, NULL);
    return;
  }
  if (K.winding && now > K.end_ms + 120000) {
    fprintf(stderr, "soak: %d connections never closed\n", open);
    K.c.stuck += (uint64_t)open;
    uv_timer_stop(t);
    uv_close((uv_handle_t *)&wake, NULL);
    uv_close((uv_handle_t *)&tick, NULL);
    return;
  }
  if (!K.winding) maybe_stall(now);
  last = soak_now_ms();
}

/* ------------------------------------------------------------ report */

static int report(void) {
  counters *c = &K.c;
  printf("soak: %-9s %8s %8s %6s %6s %8s %8s  verdicts\n", "fault",
         "injected", "detected", "late", "paused", "avg ms", "max ms");
  uint64_t missed = 0;
  for (int f = F_STOP; f < F_COUNT; f++) {
    fault_stats *fs = &c->faults[f];
    printf("soak: %-9s %8" PRIu64 " %8" PRIu64 " %6" PRIu64 " %6" PRIu64
           " %8" PRIu64 " %8" PRIu64 "  %s\n",
           fault_names[f], fs->injected, fs->detected, fs->late,
           fs->late_paused,
           fs->detected && f != F_SLOW ? fs->sum_ms / fs->detected : 0,
           fs->max_ms, f == F_SLOW ? "request timeouts" : fs->verdicts);
    missed += fs->late;
  }
  printf("soak: %" PRIu64 " calls longer than the default request timeout "
         "(their own timeout), %" PRIu64 " of them aborted, %" PRIu64
         " aborts too late (we were behind: the answer came first)\n",
         c->longer_calls, c->aborts, c->late_aborts);
  printf("soak: the host loop fell at most %" PRIu64 " ms behind (%zu times "
         "over 1 s); %" PRIu64 " requests to healthy servers timed out because "
         "the server wrote its answer after the deadline, %" PRIu64
         " answered past their deadline after a pause of ours (a starved "
         "machine)\n",
         c->max_tick_gap_ms, K.n_starved, c->server_late, c->paused_timeouts);
  printf("soak: %" PRIu64 " host stalls (%" PRIu64 " ms), %" PRIu64
         " suspect verdicts on healthy servers (recovered), %" PRIu64
         " late answers after a timeout, %" PRIu64
         " requests abandoned by faulty servers, %" PRIu64
         " garbage lines, %" PRIu64 " server pings answered (%" PRIu64
         " after 5 s)\n",
         c->stalls, c->stall_ms, c->suspect_healthy, c->late_answers,
         c->abandoned, c->garbage, c->pings_answered_by_us, c->late_pongs);
  printf("soak: faults undetected %" PRIu64 ", detected late %" PRIu64
         ", unexpected closes %" PRIu64 ", false timeouts %" PRIu64
         ", missed timeouts %" PRIu64 ", missed aborts %" PRIu64
         ", altered %" PRIu64 ", stuck %" PRIu64 "\n",
         c->undetected, missed, c->unexpected_closes, c->false_timeouts,
         c->missed_timeouts, c->missed_aborts, c->altered, c->stuck);
  long growth = rss_base >= 0 && rss_end >= 0 ? rss_end - rss_base : 0;
  printf("soak: %" PRIu64 " conns, %" PRIu64 " app messages, lost %" PRIu64
         ", reordered %" PRIu64 ", zombies %" PRIu64 ", leaked fds %" PRIu64
         ", false stale %" PRIu64 ", rss growth %ld KiB\n",
         c->conns, c->app_messages, c->lost, c->reordered, c->zombies,
         c->leaked_fds, c->false_stale, growth);
  return c->lost || c->reordered || c->zombies || c->leaked_fds ||
         c->false_stale || c->undetected || missed || c->unexpected_closes ||
         c->false_timeouts || c->missed_timeouts || c->missed_aborts ||
         c->altered || c->stuck;
}

/* ------------------------------------------------------------ main */

/* One connection on a runtime of its own, opened and closed before the fd
 * baseline, so that what mcpping keeps once per process (a helper it
 * starts on first use) is in the baseline and a leak per connection is
 * not. */
static void warm_up(void) {
  mcpp_runtime *rt;
  if (mcpp_runtime_new(&rt, NULL)) return;
  char *argv[] = {(char *)server_path, "seed=1", NULL};
  mcpp_spawn_options o;
  memset(&o, 0, sizeof o);
  o.file = server_path;
  o.args = argv;
  o.stderr_mode = MCPP_STDERR_IGNORE;
  uint64_t id;
  if (mcpp_runtime_spawn(rt, NULL, &o, NULL, &id, NULL, 0) == 0 &&
      mcpp_runtime_close(rt, id) == 0) {
    int closed = 0;
    for (int i = 0; i < 1000 && !closed; i++) {
      mcpp_item *items = mcpp_runtime_drain(rt);
      for (mcpp_item *it = items; it; it = mcpp_item_next(it))
        closed |= mcpp_item_get_type(it) == MCPP_ITEM_CLOSED;
      mcpp_runtime_items_free(rt, items);
      if (!closed) usleep(10000);
    }
  }
  mcpp_runtime_free(rt);
}

static long number(const char *opt, const char *s, long lo, long hi) {
  char *end;
  errno = 0;
  long v = strtol(s, &end, 10);
  if (errno || *end || v < lo || v > hi) {
    fprintf(stderr, "soak: %s must be an integer between %ld and %ld\n", opt,
            lo, hi);
    exit(2);
  }
  return v;
}

int main(int argc, char **argv) {
  long conns = 1000, seconds = 600;
  static const struct option opts[] = {{"conns", 1, NULL, 'c'},
                                       {"seconds", 1, NULL, 's'},
                                       {"seed", 1, NULL, 'r'},
                                       {"fault-pct", 1, NULL, 'f'},
                                       {"server", 1, NULL, 'p'},
                                       {NULL, 0, NULL, 0}};
  for (int o; (o = getopt_long(argc, argv, "", opts, NULL)) != -1;) {
    switch (o) {
    case 'c': conns = number("--conns", optarg, 1, 5000); break;
    case 's': seconds = number("--seconds", optarg, 5, 86400); break;
    case 'r': rng = (uint64_t)number("--seed", optarg, 1, 1L << 62); break;
    case 'f': fault_pct = (int)number("--fault-pct", optarg, 0, 100); break;
    case 'p': server_path = optarg; break;
    default: return 2;
    }
  }
  if (!rng) rng = uv_hrtime() % 1000000007u;
  if (access(server_path, X_OK) != 0) {
    fprintf(stderr, "soak: cannot run %s (build it: make build/soak-server)\n",
            server_path);
    return 2;
  }
  /* Three pipes per server. */
  struct rlimit rl;
  if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < rl.rlim_max) {
    rl.rlim_cur = rl.rlim_max;
    setrlimit(RLIMIT_NOFILE, &rl);
  }
  printf("soak: %ld conns at once for %ld s, %d%% faulty, seed %" PRIu64
         "; keepalive %d ms, ping timeout %d ms, %d failures; request "
         "timeout %d ms\n",
         conns, seconds, fault_pct, rng, KA_INTERVAL_MS, PING_TIMEOUT_MS,
         FAILURES, REQUEST_TIMEOUT_MS);
  fflush(stdout);

  /* The host's own loop comes first (libuv's process-wide signal pipe
   * with it), then one connection: what is open after the soak's runtime
   * is gone must be what was open before it was created. */
  warm_up();
  uv_loop_init(&loop);
  uv_async_init(&loop, &wake, on_wake);
  uv_timer_init(&loop, &tick);
  int fds_before = audit_count_fds();
  mcpp_runtime_options ro = {.notify = notify, .user_data = NULL};
  if (mcpp_runtime_new(&K.rt, &ro)) return 2;
  K.n_slots = (int)conns;
  K.slots = calloc((size_t)conns, sizeof *K.slots);
  K.start_ms = soak_now_ms();
  K.end_ms = K.start_ms + (uint64_t)seconds * 1000;
  for (int i = 0; i < K.n_slots; i++) {
    K.slots[i].idx = i;
    K.slots[i].respawn_at = K.start_ms + between(0, 3000);
  }
  uv_timer_start(&tick, on_tick, TICK_MS, TICK_MS);
  uv_run(&loop, UV_RUN_DEFAULT);
  mcpp_runtime_free(K.rt);
  int fds_after = audit_count_fds();
  if (fds_after > fds_before) {
    K.c.leaked_fds = (uint64_t)(fds_after - fds_before);
    fprintf(stderr, "soak: %d fds open before, %d after:\n", fds_before,
            fds_after);
    audit_list_fds(stderr);
  }
  uv_loop_close(&loop);
  int children = audit_count_children();
  if (children > 0) K.c.zombies += (uint64_t)children;
  for (int i = 0; i < K.n_slots; i++) free(K.slots[i].reqs);
  free(K.slots);
  free(K.stalls);
  free(K.starved);
  return report();
}
