/* The detector: what a stale verdict needs besides failed pings. A stale
 * verdict kills a process and fails calls, so when keepalive failures
 * reach settings.failures the engine looks for a second, different proof
 * before convicting:
 * - pings that failed are corroborated by one side-effect-free probe
 *   (tools/list, or server/discover on 2026-07-28) with its own timeout:
 *   a server that answers it but not pings is ping-deaf, reported once and
 *   watched by probe from then on;
 * - a server whose CPU time advanced between the last two looks while an
 *   application request is in flight is busy (a single-threaded server on
 *   a long synchronous call is deaf to everything but working): no verdict
 *   while that lasts, bounded by the deadlines of the requests in flight
 *   when the wait began;
 * - a stopped process, or silence on both with no CPU progress, is stale,
 *   at most one probe timeout later than pings alone would say.
 * The verdict's proof names the evidence tried and its result. The
 * keepalive timeout itself adapts to the server's answer times (the end
 * of this file). */
#include <string.h>

#include "engine.h"
#include "test_hooks.h"

void mcpp__detector_reset(mcpp_engine *e) {
  e->probe_failed = 0;
  e->busy_reported = 0;
}

void mcpp__detector_late_pong(mcpp_engine *e) {
  /* A ping answered late is slow, not deaf: the probe out is no longer a
   * test of deafness. */
  e->corroborating = 0;
}

void mcpp__detector_probe_answered(mcpp_engine *e, uint64_t now) {
  e->corroborating = 0;
  if (e->ping_deaf) return;
  e->ping_deaf = 1;
  mcpp_event ev;
  memset(&ev, 0, sizeof ev);
  ev.type = MCPP_EV_PING_DEAF;
  ev.proof = e->ka_proof; /* the probe that was answered */
  ev.message = "the server answers probes but not ping: watched by probe "
               "from now on";
  mcpp__emit(e, &ev, "ping_deaf", now);
}

static void busy(mcpp_engine *e, uint64_t now) {
  if (e->busy_reported) return;
  e->busy_reported = 1;
  mcpp_event ev;
  memset(&ev, 0, sizeof ev);
  ev.type = MCPP_EV_BUSY;
  ev.proof = "cpu";
  ev.message = "the server process is using CPU while a request is in "
               "flight: busy, not stale";
  mcpp__emit(e, &ev, "busy", now);
}

/* Appends s to the verdict proof (it always fits: method names are
 * capped well below the buffer, and the clauses are few). */
static void put(char *buf, size_t cap, const char *s) {
  size_t n = strlen(buf), k = strlen(s);
  if (n + k >= cap) k = cap - n - 1;
  memcpy(buf + n, s, k);
  buf[n + k] = '\0';
}

/* The proof names what failed first, then each corroboration tried and
 * its result: "ping; probe:tools/list timed out; cpu idle". With nothing
 * to corroborate it is the one token it always was ("ping"). */
static const char *compose_proof(mcpp_engine *e, const char *failed,
                                 const char **message) {
  *message = NULL;
  /* With nothing to corroborate, the one token it always was. */
  if (!e->probe_failed && !e->cpu_known) return failed;
  if (e->verdict_text == NULL)
    e->verdict_text = mcpp__malloc(e->alloc, 2 * MCPP__VERDICT_TEXT);
  if (e->verdict_text == NULL) return failed; /* the token still says it */
  char *p = e->verdict_text, *m = p + MCPP__VERDICT_TEXT;
  size_t cap = MCPP__VERDICT_TEXT;
  p[0] = m[0] = '\0';
  put(p, cap, failed);
  if (e->probe_failed) {
    const char *probe = mcpp__probe_choice(e);
    put(p, cap, "; ");
    put(p, cap, probe ? probe : "probe");
    put(p, cap, " timed out");
  }
  if (e->cpu_known)
    put(p, cap, e->cpu_advanced ? "; cpu busy, no request excuses it"
                                : "; cpu idle");
  put(m, cap, e->probe_failed ? "the server answered neither pings nor a probe"
              : strcmp(failed, "ping") == 0
                  ? "keepalive pings went unanswered"
                  : "idle probes went unanswered");
  if (e->cpu_known)
    put(m, cap, e->cpu_advanced
                    ? ", and its process used CPU with no request to excuse it"
                    : ", and its process used no CPU");
  *message = m;
  return p;
}

int mcpp__detector_decide(mcpp_engine *e, const char *failed, uint64_t now) {
  if (MCPP__HOOK_DETECTOR_FIXED()) {
    mcpp__go_stale(e, failed, NULL, 0, now);
    return 0;
  }
  /* A stopped process needs no corroboration: it cannot answer. */
  if (e->stopped_since) {
    mcpp__go_stale(e, "process", "the server process is stopped", 0, now);
    return 0;
  }
  /* Pings failed: ask once with a different, side-effect-free request.
   * It comes first because it tells deaf from busy from dead at once. */
  if (strcmp(failed, "ping") == 0 && !e->probe_failed &&
      mcpp__probe_choice(e) != NULL) {
    if (e->state == MCPP_STATE_ALIVE) mcpp__go_suspect(e, failed, NULL, now);
    if (e->state == MCPP_STATE_CLOSED) return 1;
    e->corroborating = 1;
    if (mcpp__send_probe(e, mcpp__probe_choice(e), now) == 0) return 1;
    /* It could not be sent: the pings' failure stands alone. */
    e->corroborating = 0;
    if (e->state == MCPP_STATE_CLOSED) return 1;
  }
  /* Working on a request (CPU time grew between the last two looks):
   * each further timeout asks again, and only the requests already in
   * flight when the wait began excuse it, so their own deadlines bound it
   * (a spinning server fed new requests is not busy forever). */
  if (!e->busy_reported) e->busy_order = e->ledger.next_order;
  if (e->cpu_advanced && e->ledger.head &&
      e->ledger.head->order < e->busy_order) {
    if (e->state == MCPP_STATE_ALIVE) mcpp__go_suspect(e, failed, NULL, now);
    if (e->state != MCPP_STATE_CLOSED) busy(e, now);
    return 1;
  }
  const char *message = NULL;
  const char *proof = compose_proof(e, failed, &message);
  mcpp__go_stale(e, proof, message, 0, now);
  return 0;
}

/* ------------------------------------------------------ adaptive timing */

/* Answers seen before the estimate is trusted, and how far it may widen
 * the configured timeout (the bound on detection time grows with it). */
#define MIN_SAMPLES 8
#define MAX_WIDEN 4

void mcpp__detector_observe_rtt(mcpp_engine *e, uint64_t rtt_us) {
  /* Jacobson/Karels (RFC 6298): the mean and mean deviation, smoothed. */
  if (e->rtt_samples == 0) {
    e->srtt_us = rtt_us;
    e->rttvar_us = rtt_us / 2;
  } else {
    uint64_t dev = rtt_us > e->srtt_us ? rtt_us - e->srtt_us : e->srtt_us - rtt_us;
    e->rttvar_us = (3 * e->rttvar_us + dev) / 4;
    e->srtt_us = (7 * e->srtt_us + rtt_us) / 8;
  }
  if (e->rtt_samples < UINT32_MAX) e->rtt_samples++;
}

uint32_t mcpp__detector_timeout_ms(const mcpp_engine *e) {
  uint32_t base = e->s.timeout_ms;
  if (e->rtt_samples < MIN_SAMPLES || MCPP__HOOK_DETECTOR_FIXED()) return base;
  /* Like phi-accrual, suspicion starts where answers become improbable
   * for this server: well past its usual time, and a server that is
   * usually fast keeps the configured timeout. */
  uint64_t want_ms = (e->srtt_us + 4 * e->rttvar_us) / 1000;
  uint64_t cap = (uint64_t)base * MAX_WIDEN;
  if (cap > MCPP_MAX_MS) cap = MCPP_MAX_MS;
  if (want_ms > cap) want_ms = cap;
  return want_ms > base ? (uint32_t)want_ms : base;
}

int mcpp_engine_set_process_cpu(mcpp_engine *e, uint64_t cpu_us) {
  if (e == NULL) return MCPP_ERR_INVALID_ARGUMENT;
  e->cpu_us = cpu_us;
  e->cpu_known = 1;
  return 0;
}
