/* The engine's core: creation, keepalive scheduling, ping bookkeeping,
 * state changes, timers and close. Frame handling is in frames.c. */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "engine.h"

#define US_PER_MS 1000ULL

/* splitmix64: the engine reads no randomness, so jitter comes from the
 * caller's nonce. */
static uint64_t next_random(uint64_t *state) {
  uint64_t z = (*state += 0x9e3779b97f4a7c15ULL);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

static void draw_jitter(mcpp_engine *e) {
  uint64_t span = (uint64_t)e->s.interval_ms * US_PER_MS * e->s.jitter_pct / 100;
  e->ka_jitter_us = span ? next_random(&e->rng) % (span + 1) : 0;
}

static int validate(mcpp_settings *s) {
  if (s->role != MCPP_ROLE_CLIENT && s->role != MCPP_ROLE_SERVER)
    return MCPP_ERR_INVALID_ARGUMENT;
  if (s->transport != MCPP_TRANSPORT_STDIO &&
      s->transport != MCPP_TRANSPORT_STREAMABLE_HTTP &&
      s->transport != MCPP_TRANSPORT_CUSTOM)
    return MCPP_ERR_INVALID_ARGUMENT;
  if (s->on_stale != MCPP_STALE_CLOSE && s->on_stale != MCPP_STALE_REPORT)
    return MCPP_ERR_INVALID_ARGUMENT;
  if (s->timeout_ms == 0 || s->failures == 0 || s->jitter_pct > 100 ||
      s->max_outstanding_pings == 0)
    return MCPP_ERR_INVALID_ARGUMENT;
  if (s->min_interval_ms < MCPP_MIN_INTERVAL_FLOOR_MS)
    s->min_interval_ms = MCPP_MIN_INTERVAL_FLOOR_MS;
  if (s->interval_ms > 0 && s->interval_ms < s->min_interval_ms) {
    if (!s->clamp_interval) return MCPP_ERR_INTERVAL_TOO_SHORT;
    s->interval_ms = s->min_interval_ms;
  }
  return 0;
}

int mcpp_engine_new(mcpp_engine **out, const mcpp_settings *settings,
                    const mcpp_engine_callbacks *callbacks, void *user_data,
                    const mcpp_allocator *alloc, uint64_t now) {
  if (out == NULL) return MCPP_ERR_INVALID_ARGUMENT;
  *out = NULL;
  if (settings == NULL || callbacks == NULL || callbacks->send == NULL)
    return MCPP_ERR_INVALID_ARGUMENT;
  mcpp_settings s = *settings;
  int rc = validate(&s);
  if (rc) return rc;
  if (alloc == NULL) alloc = mcpp_default_allocator();

  mcpp_engine *e = mcpp__malloc(alloc, sizeof *e);
  if (e == NULL) return MCPP_ERR_NOMEM;
  memset(e, 0, sizeof *e);
  e->alloc = alloc;
  if (s.peer_name) {
    size_t n = strlen(s.peer_name);
    e->peer_setting =
        mcpp__strndup(alloc, s.peer_name, n > MCPP__MAX_NAME ? MCPP__MAX_NAME : n);
    if (e->peer_setting == NULL) {
      mcpp__free(alloc, e);
      return MCPP_ERR_NOMEM;
    }
  }
  s.peer_name = e->peer_setting;
  e->s = s;
  e->cb = *callbacks;
  e->user_data = user_data;
  snprintf(e->nonce_hex, sizeof e->nonce_hex, "%016" PRIx64, s.nonce);
  e->rng = s.nonce;
  e->next_seq = 1;
  e->state = MCPP_STATE_ALIVE;
  e->last_rx = now;
  e->ka_base = now;
  mcpp__ledger_init(&e->ledger, alloc);
  draw_jitter(e);
  *out = e;
  return 0;
}

void mcpp_engine_free(mcpp_engine *e) {
  if (e == NULL) return;
  const mcpp_allocator *a = e->alloc;
  mcpp__ledger_free(&e->ledger);
  mcpp__free(a, e->manual);
  mcpp__free(a, e->init_id);
  mcpp__free(a, e->protocol_version);
  mcpp__free(a, e->peer_name);
  mcpp__free(a, e->peer_setting);
  mcpp__free(a, e->session_id);
  mcpp__free(a, e);
}

uint64_t mcpp__engine_json_parses(const mcpp_engine *e) {
  return e->json_parses;
}

/* ------------------------------------------------------------ scheduling */

static int ka_enabled(const mcpp_engine *e) {
  /* A ping written before the peer has said anything sits in its stdin
   * while it starts up (an SDK server can take seconds): timing it out
   * would convict a slow starter. Startup is the handshake's business. */
  if (e->s.interval_ms == 0 || e->unsupported || !e->heard_from_peer)
    return 0;
  if (e->state == MCPP_STATE_CLOSED) return 0;
  if (e->state == MCPP_STATE_STALE && e->s.on_stale == MCPP_STALE_CLOSE)
    return 0;
  return 1;
}

/* When the next keepalive ping is due (UINT64_MAX: none). Computed from
 * state, so traffic never needs a timer restart. */
static uint64_t ka_due(const mcpp_engine *e) {
  if (!ka_enabled(e) || e->ka_active) return UINT64_MAX;
  if (e->ka_probe_now) return e->ka_probe_at;
  uint64_t base = e->last_rx > e->ka_base ? e->last_rx : e->ka_base;
  return base + (uint64_t)e->s.interval_ms * US_PER_MS - e->ka_jitter_us;
}

static uint64_t with_grace(const mcpp_engine *e, uint64_t deadline) {
  return deadline < e->grace_until ? e->grace_until : deadline;
}

static uint64_t request_deadline(const mcpp_engine *e) {
  if (e->s.request_timeout_ms == 0 || e->ledger.head == NULL)
    return UINT64_MAX;
  /* Requests share one timeout, so the oldest expires first. */
  return with_grace(e, e->ledger.head->sent_at +
                           (uint64_t)e->s.request_timeout_ms * US_PER_MS);
}

uint64_t mcpp_engine_next_deadline(const mcpp_engine *e) {
  if (e == NULL || e->state == MCPP_STATE_CLOSED) return UINT64_MAX;
  uint64_t t = e->ka_active && ka_enabled(e) ? e->ka.deadline : ka_due(e);
  for (size_t i = 0; i < e->n_manual; i++) {
    uint64_t d = with_grace(e, e->manual[i].deadline);
    if (d < t) t = d;
  }
  uint64_t r = request_deadline(e);
  return r < t ? r : t;
}

/* ------------------------------------------------------------------ pings */

static size_t format_id(const mcpp_engine *e, uint64_t seq, char buf[64]) {
  return (size_t)snprintf(buf, 64, "\"mcpp-%s-%" PRIu64 "\"", e->nonce_hex,
                          seq);
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

static void ping_event(const mcpp_engine *e, mcpp_event *ev,
                       mcpp_event_type type, const mcpp__ping *p, int manual,
                       char idbuf[64]) {
  memset(ev, 0, sizeof *ev);
  ev->type = type;
  ev->ping_seq = p->seq;
  ev->manual = manual;
  ev->timeout_ms = p->timeout_ms;
  ev->id = idbuf;
  ev->id_len = format_id(e, p->seq, idbuf);
}

/* Sends one of our pings. The ping is registered before the send so a pong
 * fed back from inside the send callback still matches. */
static int send_ping(mcpp_engine *e, int manual, uint32_t timeout_ms,
                     uint64_t now, uint64_t *seq_out) {
  if (manual && reserve_manual(e) != 0) return MCPP_ERR_NOMEM;
  mcpp__ping p = {e->next_seq++, now,
                  now + (uint64_t)timeout_ms * US_PER_MS, timeout_ms};
  char id[64];
  size_t id_len = format_id(e, p.seq, id);
  if (manual) {
    e->manual[e->n_manual++] = p;
  } else {
    e->ka = p;
    e->ka_active = 1;
    e->ka_probe_now = 0;
  }
  static const char head[] = "{\"jsonrpc\":\"2.0\",\"id\":";
  static const char tail[] = ",\"method\":\"ping\"}";
  mcpp__piece pieces[] = {
      {head, sizeof head - 1}, {id, id_len}, {tail, sizeof tail - 1}};
  int rc = mcpp__output(e, MCPP_FRAME_PING, pieces, 3);
  if (rc) {
    if (manual) {
      size_t i = find_manual(e, p.seq);
      if (i != SIZE_MAX) remove_manual(e, i);
    } else if (e->ka_active && e->ka.seq == p.seq) {
      e->ka_active = 0;
    }
    return rc;
  }
  e->pings_sent++;
  if (!manual) draw_jitter(e);
  if (seq_out) *seq_out = p.seq;
  mcpp_event ev;
  char idbuf[64];
  ping_event(e, &ev, MCPP_EV_PING, &p, manual, idbuf);
  mcpp__emit(e, &ev, NULL, now);
  return 0;
}

int mcpp_engine_ping(mcpp_engine *e, uint32_t timeout_ms, uint64_t now,
                     uint64_t *seq) {
  if (e == NULL) return MCPP_ERR_INVALID_ARGUMENT;
  if (e->state == MCPP_STATE_CLOSED) return MCPP_ERR_CLOSED;
  if (e->unsupported) return MCPP_ERR_UNSUPPORTED;
  if (e->n_manual >= e->s.max_outstanding_pings) return MCPP_ERR_TOO_MANY_PINGS;
  return send_ping(e, 1, timeout_ms ? timeout_ms : e->s.timeout_ms, now, seq);
}

int mcpp_engine_cancel_ping(mcpp_engine *e, uint64_t seq) {
  if (e == NULL) return MCPP_ERR_INVALID_ARGUMENT;
  size_t i = find_manual(e, seq);
  if (i == SIZE_MAX) return MCPP_ERR_NOT_FOUND;
  remove_manual(e, i);
  return 0;
}

static void turn_off_pings(mcpp_engine *e) {
  e->unsupported = 1;
  e->ka_active = 0;
  e->ka_probe_now = 0;
}

void mcpp__ping_answered_by_peer(mcpp_engine *e, uint64_t seq, int kind,
                                 int64_t code, const char *message,
                                 uint64_t now) {
  mcpp__ping p;
  int manual;
  size_t i;
  if (e->ka_active && e->ka.seq == seq) {
    p = e->ka;
    manual = 0;
    e->ka_active = 0;
    e->ka_base = now;
  } else if ((i = find_manual(e, seq)) != SIZE_MAX) {
    p = e->manual[i];
    manual = 1;
    remove_manual(e, i);
  } else {
    /* A late or cancelled ping: already counted as life; its outcome is no
     * longer reported, but "unsupported" is still worth knowing. */
    if (kind == 3) turn_off_pings(e);
    return;
  }
  mcpp_event ev;
  char idbuf[64];
  ping_event(e, &ev, MCPP_EV_PONG, &p, manual, idbuf);
  ev.rtt_us = now > p.sent_at ? now - p.sent_at : 0;
  const char *record = "ping_ok";
  switch (kind) {
    case 0:
      e->pongs_received++;
      break;
    case 1:
      e->ping_errors++;
      ev.type = MCPP_EV_PING_ERROR;
      ev.invalid = 1;
      record = "ping_invalid";
      break;
    case 2:
      e->ping_errors++;
      ev.type = MCPP_EV_PING_ERROR;
      ev.error_code = code;
      ev.message = message;
      record = "ping_error";
      break;
    default:
      turn_off_pings(e);
      ev.type = MCPP_EV_UNSUPPORTED;
      ev.error_code = code;
      ev.message = message;
      record = "ping_unsupported";
      break;
  }
  mcpp__emit(e, &ev, record, now);
}

/* ------------------------------------------------------------ life, state */

void mcpp__on_rx(mcpp_engine *e, uint64_t now) {
  if (now > e->last_rx) e->last_rx = now;
  e->heard_from_peer = 1;
  e->ka_probe_now = 0;
  if (e->state != MCPP_STATE_SUSPECT && e->state != MCPP_STATE_STALE) {
    e->failure_count = 0;
    return;
  }
  e->state = MCPP_STATE_ALIVE;
  e->failure_count = 0;
  mcpp_event ev;
  memset(&ev, 0, sizeof ev);
  ev.type = MCPP_EV_RECOVERED;
  mcpp__emit(e, &ev, "recovered", now);
}

void mcpp_engine_touch(mcpp_engine *e, uint64_t now) {
  if (e == NULL || e->state == MCPP_STATE_CLOSED) return;
  mcpp__on_rx(e, now);
}

mcpp_disposition mcpp__abandon_disposition(const mcpp_engine *e) {
  return mcpp__ledger_any_unsafe(&e->ledger) ? MCPP_DISPOSITION_IN_DOUBT
                                              : MCPP_DISPOSITION_CANCELLED;
}

/* A keepalive ping went unanswered. */
static void keepalive_timed_out(mcpp_engine *e, uint64_t now) {
  mcpp__ping p = e->ka;
  e->ka_active = 0;
  e->ping_timeouts++;
  /* Traffic that arrived after the ping was sent proves the peer's loop
   * runs (as gRPC's keepalive does), so only silence is a failure. */
  int failed = e->last_rx <= p.sent_at;
  /* Saturates at settings.failures: a stale peer that is still probed
   * (on_stale = report) stays "failures" failures deep, the documented
   * bound, instead of counting up forever. */
  if (failed && e->failure_count < e->s.failures) e->failure_count++;
  mcpp_event ev;
  char idbuf[64];
  ping_event(e, &ev, MCPP_EV_TIMEOUT, &p, 0, idbuf);
  mcpp__emit(e, &ev, "ping_timeout", now);
  if (!failed || e->state == MCPP_STATE_CLOSED) return;

  if (e->failure_count >= e->s.failures && e->state != MCPP_STATE_STALE) {
    e->state = MCPP_STATE_STALE;
    memset(&ev, 0, sizeof ev);
    ev.type = MCPP_EV_STALE;
    ev.disposition = e->s.on_stale == MCPP_STALE_REPORT
                         ? MCPP_DISPOSITION_CONTINUED
                         : mcpp__abandon_disposition(e);
    mcpp__emit(e, &ev, "stale", now);
  } else if (e->state == MCPP_STATE_ALIVE) {
    e->state = MCPP_STATE_SUSPECT;
    memset(&ev, 0, sizeof ev);
    ev.type = MCPP_EV_SUSPECT;
    mcpp__emit(e, &ev, "suspect", now);
  }
  if (e->state == MCPP_STATE_CLOSED) return;
  if (e->state == MCPP_STATE_STALE) {
    /* Stale and still reporting: keep probing at the interval. */
    e->ka_base = now;
  } else {
    /* Probe again at once, so a frozen peer is stale within
     * interval + timeout x failures. */
    e->ka_probe_now = 1;
    e->ka_probe_at = now;
  }
}

static int expire_request(mcpp_engine *e, uint64_t now) {
  mcpp__entry *r = e->ledger.head;
  mcpp__ledger_detach(&e->ledger, r);
  e->app_timeouts++;
  e->app_timed_out = 1;
  char num[16];
  size_t num_len =
      (size_t)snprintf(num, sizeof num, "%" PRIu32, e->s.request_timeout_ms);
  int rc = 0;
  if (strcmp(r->method, "initialize") != 0) {
    static const char c1[] =
        "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/cancelled\","
        "\"params\":{\"requestId\":";
    static const char c2[] = ",\"reason\":\"mcpping: request timed out after ";
    static const char c3[] = " ms\"}}";
    mcpp__piece cancel[] = {{c1, sizeof c1 - 1}, {r->id, r->id_len},
                            {c2, sizeof c2 - 1}, {num, num_len},
                            {c3, sizeof c3 - 1}};
    rc = mcpp__output(e, MCPP_FRAME_CANCEL, cancel, 5);
  }
  static const char d1[] = "{\"jsonrpc\":\"2.0\",\"id\":";
  static const char d2[] =
      ",\"error\":{\"code\":-32001,\"message\":\"Request timed out "
      "(mcpping: no answer after ";
  static const char d3[] = " ms)\"}}";
  mcpp__piece error[] = {{d1, sizeof d1 - 1}, {r->id, r->id_len},
                         {d2, sizeof d2 - 1}, {num, num_len},
                         {d3, sizeof d3 - 1}};
  int drc = mcpp__output(e, -1, error, 5);
  mcpp_event ev;
  memset(&ev, 0, sizeof ev);
  ev.type = MCPP_EV_REQUEST_TIMEOUT;
  ev.timeout_ms = e->s.request_timeout_ms;
  ev.id = r->id;
  ev.id_len = r->id_len;
  ev.message = r->method;
  mcpp__emit(e, &ev, NULL, now);
  mcpp__free(e->alloc, r);
  return rc ? rc : drc;
}

int mcpp_engine_on_timer(mcpp_engine *e, uint64_t now) {
  if (e == NULL) return MCPP_ERR_INVALID_ARGUMENT;
  if (e->state == MCPP_STATE_CLOSED) return 0;
  uint64_t pause_us = (uint64_t)e->s.pause_threshold_ms * US_PER_MS;
  uint64_t due = mcpp_engine_next_deadline(e);
  if (due != UINT64_MAX && now > due && now - due > pause_us) {
    /* Woken far too late: the host was paused, and answers may be waiting
     * unread in the pipe. Nothing that expired meanwhile is the peer's
     * fault: re-probe, and give pending deadlines a grace period. */
    if (e->ka_active) {
      e->ka_active = 0;
      e->ka_probe_now = 1;
      e->ka_probe_at = now;
    }
    e->grace_until = now + pause_us;
  }

  for (;;) {
    size_t i;
    for (i = 0; i < e->n_manual; i++)
      if (with_grace(e, e->manual[i].deadline) <= now) break;
    if (i == e->n_manual) break;
    mcpp__ping p = e->manual[i];
    remove_manual(e, i);
    e->ping_timeouts++;
    mcpp_event ev;
    char idbuf[64];
    ping_event(e, &ev, MCPP_EV_TIMEOUT, &p, 1, idbuf);
    mcpp__emit(e, &ev, "ping_timeout", now);
    if (e->state == MCPP_STATE_CLOSED) return 0;
  }

  if (e->ka_active && e->ka.deadline <= now) {
    keepalive_timed_out(e, now);
    if (e->state == MCPP_STATE_CLOSED) return 0;
  }

  while (request_deadline(e) <= now) {
    int rc = expire_request(e, now);
    if (rc) return rc;
    if (e->state == MCPP_STATE_CLOSED) return 0;
  }

  if (ka_due(e) <= now) return send_ping(e, 0, e->s.timeout_ms, now, NULL);
  return 0;
}

/* --------------------------------------------------------------- close */

void mcpp_engine_close(mcpp_engine *e, int err, const char *reason,
                       uint64_t now) {
  if (e == NULL || e->state == MCPP_STATE_CLOSED) return;
  mcpp_disposition d = mcpp__abandon_disposition(e);
  e->state = MCPP_STATE_CLOSED;
  e->ka_active = 0;
  mcpp_event ev;
  while (e->n_manual) {
    mcpp__ping p = e->manual[0];
    remove_manual(e, 0);
    char idbuf[64];
    ping_event(e, &ev, MCPP_EV_TIMEOUT, &p, 1, idbuf);
    ev.error_code = MCPP_ERR_CLOSED;
    mcpp__emit(e, &ev, "ping_timeout", now);
  }
  memset(&ev, 0, sizeof ev);
  ev.type = MCPP_EV_CLOSED;
  ev.error_code = err;
  ev.message = reason;
  ev.disposition = d;
  mcpp__emit(e, &ev, "closed", now);
}

/* ------------------------------------------------------------- session */

static char *dup_capped(const mcpp_engine *e, const char *s) {
  size_t n = strlen(s);
  return mcpp__strndup(e->alloc, s, n > MCPP__MAX_NAME ? MCPP__MAX_NAME : n);
}

static int is_date(const char *v) {
  static const char shape[] = "dddd-dd-dd";
  for (size_t i = 0; i < 10; i++) {
    if (v[i] == '\0') return 0;
    if (shape[i] == 'd' ? (v[i] < '0' || v[i] > '9') : v[i] != '-') return 0;
  }
  return 1;
}

void mcpp__learn_version(mcpp_engine *e, const char *v, int negotiated,
                         uint64_t now) {
  char *copy = dup_capped(e, v);
  if (copy) {
    mcpp__free(e->alloc, e->protocol_version);
    e->protocol_version = copy;
  }
  if (!negotiated || !is_date(v) || strncmp(v, MCPP__NO_PING_VERSION, 10) < 0)
    return;
  turn_off_pings(e);
  if (e->unsupported_emitted) return;
  e->unsupported_emitted = 1;
  mcpp_event ev;
  memset(&ev, 0, sizeof ev);
  ev.type = MCPP_EV_UNSUPPORTED;
  ev.message = "the protocol version has no ping";
  mcpp__emit(e, &ev, "ping_unsupported", now);
}

void mcpp__learn_peer(mcpp_engine *e, const char *name) {
  char *copy = dup_capped(e, name);
  if (copy == NULL) return;
  mcpp__free(e->alloc, e->peer_name);
  e->peer_name = copy;
}

void mcpp__set_initialized(mcpp_engine *e, uint64_t now) {
  if (e->initialized) return;
  e->initialized = 1;
  mcpp_event ev;
  memset(&ev, 0, sizeof ev);
  ev.type = MCPP_EV_INITIALIZED;
  mcpp__emit(e, &ev, NULL, now);
}

int mcpp_engine_set_session_id(mcpp_engine *e, const char *session_id) {
  if (e == NULL) return MCPP_ERR_INVALID_ARGUMENT;
  char *copy = NULL;
  if (session_id) {
    copy = dup_capped(e, session_id);
    if (copy == NULL) return MCPP_ERR_NOMEM;
  }
  mcpp__free(e->alloc, e->session_id);
  e->session_id = copy;
  return 0;
}

void mcpp_engine_set_reconnect_attempt(mcpp_engine *e, uint32_t attempt) {
  if (e) e->reconnect_attempt = attempt;
}

void mcpp_engine_record_reconnect(mcpp_engine *e, uint64_t now) {
  if (e) mcpp__emit_record_only(e, "reconnect", now);
}

/* ---------------------------------------------------------------- info */

void mcpp_engine_get_info(const mcpp_engine *e, mcpp_engine_info *info) {
  if (info == NULL) return;
  memset(info, 0, sizeof *info);
  if (e == NULL) return;
  info->state = e->state;
  info->unsupported = e->unsupported;
  info->initialized = e->initialized;
  info->protocol_version = e->protocol_version;
  info->peer_name = e->peer_name ? e->peer_name : e->peer_setting;
  info->failure_count = e->failure_count;
  info->in_flight = (uint32_t)e->ledger.count;
  info->oldest_in_flight_us = e->ledger.head ? e->ledger.head->sent_at : 0;
  info->app_timeouts = e->app_timeouts;
  info->last_rx = e->last_rx;
  info->pings_sent = e->pings_sent;
  info->pongs_received = e->pongs_received;
  info->ping_timeouts = e->ping_timeouts;
  info->ping_errors = e->ping_errors;
  info->pings_answered = e->pings_answered;
  info->frames_in = e->frames_in;
  info->frames_out = e->frames_out;
}

int mcpp_engine_healthy(const mcpp_engine *e, uint64_t now) {
  if (e == NULL || e->state != MCPP_STATE_ALIVE) return 0;
  /* Pongs prove the loop runs, not that requests finish (liveness
   * laundering): application requests must make progress too. */
  if (e->app_timed_out) return 0;
  if (e->ledger.head) {
    uint32_t limit_ms = e->s.timeout_ms > e->s.request_timeout_ms
                            ? e->s.timeout_ms
                            : e->s.request_timeout_ms;
    uint64_t sent = e->ledger.head->sent_at;
    if (now > sent && now - sent > (uint64_t)limit_ms * US_PER_MS) return 0;
  }
  return 1;
}

void mcpp_engine_foreach_in_flight(
    const mcpp_engine *e,
    void (*fn)(const char *id, size_t id_len, const char *method,
               uint64_t sent_at, void *arg),
    void *arg) {
  if (e == NULL || fn == NULL) return;
  for (const mcpp__entry *r = e->ledger.head; r; r = r->next)
    fn(r->id, r->id_len, r->method, r->sent_at, arg);
}

/* ------------------------------------------------- contract (to be filled)
 * Per-request deadlines, aborts, read backpressure and live health: the
 * API is fixed in mcpping.h; these first versions keep today's behaviour. */

int mcpp_engine_observe_outbound_timed(mcpp_engine *e, const char *frame,
                                       size_t len, uint32_t timeout_ms,
                                       uint64_t now) {
  (void)timeout_ms;
  return mcpp_engine_observe_outbound(e, frame, len, now);
}

int mcpp_engine_cancel_request(mcpp_engine *e, const char *id, size_t id_len,
                               uint64_t now) {
  (void)id;
  (void)id_len;
  (void)now;
  return e ? MCPP_ERR_NOT_FOUND : MCPP_ERR_INVALID_ARGUMENT;
}

void mcpp_engine_set_reading(mcpp_engine *e, int reading, uint64_t now) {
  (void)e;
  (void)reading;
  (void)now;
}

uint64_t mcpp_engine_healthy_until(const mcpp_engine *e, uint64_t now) {
  return mcpp_engine_healthy(e, now) ? UINT64_MAX : now;
}
