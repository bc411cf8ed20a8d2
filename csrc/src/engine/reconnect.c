/*
 * Reconnect's shared pieces, pure: the backoff schedule, the process-wide
 * retry budget (a token bucket kept as GCRA reservations) and the captured
 * handshake that a new server is given again. The orchestration (killing,
 * respawning, holding the application's frames) is runtime.c's.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "internal.h"
#include "scan.h"

/* ---------------------------------------------------------------- policy */

/* mcpp_reconnect_default and mcpp_reconnect_problem: settings.c (the
 * settings table holds the reconnect rows too). */

/* --------------------------------------------------------------- backoff */

uint64_t mcpp_reconnect_delay_us(const mcpp_reconnect *p, uint32_t attempt,
                                 uint64_t random) {
  if (p == NULL) return 0;
  double cap = (double)p->max_delay_ms * 1000.0;
  double d = (double)p->initial_ms * 1000.0;
  /* Stops growing at the cap, so a large attempt never overflows. */
  for (uint32_t i = 1; i < attempt && d < cap; i++) d *= p->multiplier;
  if (d > cap) d = cap;
  /* random's top 53 bits as a uniform double in [0, 1). */
  double u = (double)(random >> 11) * (1.0 / 9007199254740992.0);
  d *= 1.0 - p->jitter + 2.0 * p->jitter * u;
  if (d > cap) d = cap;
  return d < 0 ? 0 : (uint64_t)d;
}

/* ---------------------------------------------------------------- budget */

int mcpp_retry_budget_init(mcpp_retry_budget *b, uint32_t burst,
                           double per_second) {
  if (b == NULL || burst < 1 || burst > MCPP_MAX_RETRY_BUDGET_BURST ||
      !(per_second >= MCPP_MIN_RETRY_BUDGET_PER_SECOND &&
        per_second <= MCPP_MAX_RETRY_BUDGET_PER_SECOND))
    return MCPP_ERR_INVALID_ARGUMENT;
  b->interval_us = (uint64_t)(1e6 / per_second);
  if (b->interval_us == 0) b->interval_us = 1;
  b->tolerance_us = (uint64_t)(burst - 1) * b->interval_us;
  b->tat_us = 0;
  return 0;
}

uint64_t mcpp_retry_budget_take(mcpp_retry_budget *b, uint64_t at) {
  if (b == NULL) return at;
  if (b->tat_us < at) b->tat_us = at;
  /* Slots run at most tolerance ahead of the theoretical schedule. */
  uint64_t allowed = b->tat_us - at > b->tolerance_us
                         ? b->tat_us - b->tolerance_us
                         : at;
  b->tat_us += b->interval_us;
  return allowed;
}

/* ------------------------------------------------------------- handshake */

struct mcpp_handshake {
  const mcpp_allocator *alloc;
  char *init; /* the captured initialize request */
  size_t init_len;
  size_t id_at, id_len; /* its id's span in init */
  int accepted;         /* the server answered it with a result */
  char *initialized;    /* the captured notifications/initialized */
  size_t initialized_len;
  char *replay; /* the last replay built */
  size_t replay_len;
  char replay_id[48]; /* its raw id, quoted */
  size_t replay_id_len;
};

int mcpp_handshake_new(mcpp_handshake **out, const mcpp_allocator *alloc) {
  if (out == NULL) return MCPP_ERR_INVALID_ARGUMENT;
  if (alloc == NULL) alloc = mcpp_default_allocator();
  mcpp_handshake *h = mcpp__malloc(alloc, sizeof *h);
  if (h == NULL) return MCPP_ERR_NOMEM;
  memset(h, 0, sizeof *h);
  h->alloc = alloc;
  *out = h;
  return 0;
}

void mcpp_handshake_free(mcpp_handshake *h) {
  if (h == NULL) return;
  mcpp__free(h->alloc, h->init);
  mcpp__free(h->alloc, h->initialized);
  mcpp__free(h->alloc, h->replay);
  mcpp__free(h->alloc, h);
}

int mcpp_handshake_observe(mcpp_handshake *h, const char *frame, size_t len) {
  if (h == NULL || frame == NULL) return MCPP_ERR_INVALID_ARGUMENT;
  if (h->init && h->initialized) return 0;
  mcpp__msg m;
  if (mcpp__scan_message(frame, len, &m) != 0 || m.method.p == NULL) return 0;
  if (!h->init && m.id.p && mcpp__span_is(m.method, "\"initialize\"")) {
    h->init = mcpp__strndup(h->alloc, frame, len);
    if (h->init == NULL) return MCPP_ERR_NOMEM;
    h->init_len = len;
    h->id_at = (size_t)(m.id.p - frame);
    h->id_len = m.id.n;
  } else if (h->init && !h->initialized && !m.id.p &&
             mcpp__span_is(m.method, "\"notifications/initialized\"")) {
    h->initialized = mcpp__strndup(h->alloc, frame, len);
    if (h->initialized == NULL) return MCPP_ERR_NOMEM;
    h->initialized_len = len;
  }
  return 0;
}

/* What frame is to the request whose raw id is `id`: not its answer
 * (MCPP_REPLAY_OTHER), a result (MCPP_REPLAY_RESULT) or an error answer
 * (MCPP_REPLAY_ERROR). */
static int answer_to(const char *frame, size_t len, const char *id,
                     size_t id_len) {
  mcpp__msg m;
  if (mcpp__scan_message(frame, len, &m) != 0 || m.method.p != NULL ||
      !mcpp__span_eq(m.id, id, id_len))
    return MCPP_REPLAY_OTHER;
  return m.result.p && *m.result.p == '{' ? MCPP_REPLAY_RESULT
                                          : MCPP_REPLAY_ERROR;
}

int mcpp_handshake_observe_answer(mcpp_handshake *h, const char *frame,
                                  size_t len) {
  if (h == NULL || frame == NULL) return MCPP_ERR_INVALID_ARGUMENT;
  if (h->init == NULL || h->accepted) return 0;
  int a = answer_to(frame, len, h->init + h->id_at, h->id_len);
  if (a == MCPP_REPLAY_OTHER) return 0;
  if (a == MCPP_REPLAY_RESULT) {
    h->accepted = 1;
    return 0;
  }
  mcpp__free(h->alloc, h->init);
  h->init = NULL;
  h->init_len = h->id_at = h->id_len = 0;
  return 0;
}

int mcpp_handshake_captured(const mcpp_handshake *h) {
  return h != NULL && h->init != NULL;
}

const char *mcpp_handshake_replay(mcpp_handshake *h, uint32_t attempt,
                                  size_t *len) {
  if (h == NULL || h->init == NULL) return NULL;
  int n = snprintf(h->replay_id, sizeof h->replay_id, "\"mcpp-reconnect-%u\"",
                   (unsigned)attempt);
  h->replay_id_len = (size_t)n;
  size_t total = h->init_len - h->id_len + h->replay_id_len;
  char *buf = mcpp__realloc(h->alloc, h->replay, total);
  if (buf == NULL) return NULL;
  h->replay = buf;
  /* Everything but the id stays as the application wrote it. */
  memcpy(buf, h->init, h->id_at);
  memcpy(buf + h->id_at, h->replay_id, h->replay_id_len);
  memcpy(buf + h->id_at + h->replay_id_len, h->init + h->id_at + h->id_len,
         h->init_len - h->id_at - h->id_len);
  h->replay_len = total;
  if (len) *len = total;
  return buf;
}

const char *mcpp_handshake_initialized(const mcpp_handshake *h, size_t *len) {
  if (h == NULL || h->initialized == NULL) return NULL;
  if (len) *len = h->initialized_len;
  return h->initialized;
}

int mcpp_handshake_answer(const mcpp_handshake *h, const char *frame,
                          size_t len) {
  if (h == NULL || h->replay_id_len == 0 || frame == NULL) return MCPP_REPLAY_OTHER;
  return answer_to(frame, len, h->replay_id, h->replay_id_len);
}
