/* Our pings: ids, the ping frame, manual pings and their timeouts. The
 * keepalive ping is sent from here too; keepalive.c decides when. */
#include <string.h>

#include "engine.h"

/* By hand rather than snprintf: every ping sent and every answer to one
 * formats the id (snprintf was most of a pong's cost). */
size_t mcpp__format_id(const mcpp_engine *e, uint64_t seq, char buf[64]) {
  char digits[20], *p = buf;
  size_t n = 0;
  do digits[n++] = (char)('0' + seq % 10);
  while ((seq /= 10) != 0);
  memcpy(p, "\"mcpp-", 6);
  memcpy(p + 6, e->nonce_hex, 16); /* always 16 hex digits */
  p += 22;
  *p++ = '-';
  while (n) *p++ = digits[--n];
  *p++ = '"';
  *p = '\0';
  return (size_t)(p - buf);
}

void mcpp__ping_event(const mcpp_engine *e, mcpp_event *ev,
                      mcpp_event_type type, const mcpp__ping *p, int manual,
                      char idbuf[64]) {
  memset(ev, 0, sizeof *ev);
  ev->type = type;
  ev->ping_seq = p->seq;
  ev->manual = manual;
  ev->timeout_ms = p->timeout_ms;
  ev->id = idbuf;
  ev->id_len = mcpp__format_id(e, p->seq, idbuf);
  ev->proof = "ping";
}

static size_t find_manual(const mcpp_engine *e, uint64_t seq) {
  size_t lo = 0, hi = e->n_manual;
  while (lo < hi) {
    size_t mid = lo + (hi - lo) / 2;
    if (e->manual[mid].seq < seq)
      lo = mid + 1;
    else
      hi = mid;
  }
  return lo < e->n_manual && e->manual[lo].seq == seq ? lo : SIZE_MAX;
}

static void remove_manual(mcpp_engine *e, size_t i) {
  memmove(&e->manual[i], &e->manual[i + 1],
          (e->n_manual - i - 1) * sizeof e->manual[0]);
  e->n_manual--;
}

static int reserve_manual(mcpp_engine *e) {
  if (e->n_manual < e->cap_manual) return 0;
  size_t cap = e->cap_manual ? e->cap_manual * 2 : 4;
  mcpp__ping *p = mcpp__realloc(e->alloc, e->manual, cap * sizeof *p);
  if (p == NULL) return MCPP_ERR_NOMEM;
  e->manual = p;
  e->cap_manual = cap;
  return 0;
}

int mcpp__is_manual(const mcpp_engine *e, uint64_t seq) {
  return find_manual(e, seq) != SIZE_MAX;
}

int mcpp__take_manual(mcpp_engine *e, uint64_t seq, mcpp__ping *out) {
  size_t i = find_manual(e, seq);
  if (i == SIZE_MAX) return 0;
  *out = e->manual[i];
  remove_manual(e, i);
  return 1;
}

int mcpp__send_ping(mcpp_engine *e, int manual, uint32_t timeout_ms,
                    uint64_t now, uint64_t *seq_out) {
  if (manual && reserve_manual(e) != 0) return MCPP_ERR_NOMEM;
  mcpp__ping p = {e->next_seq++, now,
                  now + (uint64_t)timeout_ms * 1000, timeout_ms};
  char id[64];
  size_t id_len = mcpp__format_id(e, p.seq, id);
  /* Registered before the send, so a pong fed back from inside the send
   * callback still matches. */
  if (manual) {
    e->manual[e->n_manual++] = p;
  } else {
    e->ka = p;
    e->ka_active = 1;
    e->ka_is_probe = 0;
    e->ka_checked = 0;
    e->ka_proof = "ping";
    e->ka_probe_now = 0;
  }
  static const char head[] = "{\"jsonrpc\":\"2.0\",\"id\":";
  static const char tail[] = ",\"method\":\"ping\"}";
  mcpp__piece pieces[] = {
      {head, sizeof head - 1}, {id, id_len}, {tail, sizeof tail - 1}};
  int rc = mcpp__output(e, MCPP_FRAME_PING, pieces, 3);
  if (rc) {
    mcpp__ping gone;
    if (manual)
      mcpp__take_manual(e, p.seq, &gone);
    else if (e->ka_active && e->ka.seq == p.seq)
      e->ka_active = 0;
    return rc;
  }
  e->pings_sent++;
  if (seq_out) *seq_out = p.seq;
  mcpp_event ev;
  char idbuf[64];
  mcpp__ping_event(e, &ev, MCPP_EV_PING, &p, manual, idbuf);
  mcpp__emit(e, &ev, NULL, now);
  return 0;
}

int mcpp_engine_ping(mcpp_engine *e, uint32_t timeout_ms, uint64_t now,
                     uint64_t *seq) {
  if (e == NULL) return MCPP_ERR_INVALID_ARGUMENT;
  if (e->state == MCPP_STATE_CLOSED) return MCPP_ERR_CLOSED;
  if (e->unsupported) return MCPP_ERR_UNSUPPORTED;
  if (timeout_ms > MCPP_MAX_MS) return MCPP_ERR_INVALID_ARGUMENT;
  if (e->n_manual >= e->s.max_outstanding_pings) return MCPP_ERR_TOO_MANY_PINGS;
  return mcpp__send_ping(e, 1, timeout_ms ? timeout_ms : e->s.timeout_ms, now,
                         seq);
}

int mcpp_engine_cancel_ping(mcpp_engine *e, uint64_t seq) {
  if (e == NULL) return MCPP_ERR_INVALID_ARGUMENT;
  mcpp__ping gone;
  return mcpp__take_manual(e, seq, &gone) ? 0 : MCPP_ERR_NOT_FOUND;
}

uint64_t mcpp__manual_deadline(const mcpp_engine *e) {
  uint64_t t = UINT64_MAX;
  for (size_t i = 0; i < e->n_manual; i++) {
    uint64_t d = mcpp__with_grace(e, e->manual[i].deadline);
    if (d < t) t = d;
  }
  return t;
}

void mcpp__expire_manual(mcpp_engine *e, uint64_t now) {
  for (;;) {
    size_t i;
    for (i = 0; i < e->n_manual; i++)
      if (mcpp__with_grace(e, e->manual[i].deadline) <= now) break;
    if (i == e->n_manual) return;
    mcpp__ping p = e->manual[i];
    remove_manual(e, i);
    e->ping_timeouts++;
    mcpp_event ev;
    char idbuf[64];
    mcpp__ping_event(e, &ev, MCPP_EV_TIMEOUT, &p, 1, idbuf);
    mcpp__emit(e, &ev, "ping_timeout", now);
    if (e->state == MCPP_STATE_CLOSED) return;
  }
}

void mcpp__close_manual(mcpp_engine *e, uint64_t now) {
  while (e->n_manual) {
    mcpp__ping p = e->manual[0];
    remove_manual(e, 0);
    mcpp_event ev;
    char idbuf[64];
    mcpp__ping_event(e, &ev, MCPP_EV_TIMEOUT, &p, 1, idbuf);
    ev.error = MCPP_ERR_CLOSED;
    mcpp__emit(e, &ev, "ping_timeout", now);
  }
}
