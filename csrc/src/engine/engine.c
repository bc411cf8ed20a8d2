/* The engine's core: creation, what the session is, info, health and
 * close. Keepalive is in keepalive.c, request deadlines in requests.c,
 * frame handling in frames.c and handshake.c. */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "deadlines.h"
#include "engine.h"
#include "metrics_tally_internal.h"

static char *dup_capped(const mcpp_allocator *a, const char *s) {
  size_t n = strlen(s);
  return mcpp__strndup(a, s, n > MCPP__MAX_NAME ? MCPP__MAX_NAME : n);
}

/* Copies the strings the settings point to; the copies replace them. */
static int copy_setting_strings(mcpp_engine *e) {
  const mcpp_allocator *a = e->alloc;
  if (e->s.peer_name && (e->peer_setting = dup_capped(a, e->s.peer_name)) == NULL)
    return MCPP_ERR_NOMEM;
  e->s.peer_name = e->peer_setting;
  const char *probe = e->s.probe_method;
  if (probe) {
    e->probe_setting = mcpp__strndup(a, probe, strlen(probe));
    if (e->probe_setting == NULL) return MCPP_ERR_NOMEM;
    if (*probe) {
      size_t n = strlen(probe);
      e->probe_proof = mcpp__malloc(a, 6 + n + 1);
      if (e->probe_proof == NULL) return MCPP_ERR_NOMEM;
      memcpy(e->probe_proof, "probe:", 6);
      memcpy(e->probe_proof + 6, probe, n + 1);
    }
  }
  e->s.probe_method = e->probe_setting;
  return 0;
}

int mcpp_engine_new(mcpp_engine **out, const mcpp_settings *settings,
                    const mcpp_engine_callbacks *callbacks, void *user_data,
                    const mcpp_allocator *alloc, uint64_t now) {
  if (out == NULL) return MCPP_ERR_INVALID_ARGUMENT;
  *out = NULL;
  if (settings == NULL || callbacks == NULL || callbacks->send == NULL ||
      !MCPP__KNOWN_VERSION(callbacks, MCPP_ENGINE_CALLBACKS_V1))
    return MCPP_ERR_INVALID_ARGUMENT;
  mcpp_settings s;
  if (mcpp__settings_import(&s, settings)) return MCPP_ERR_INVALID_ARGUMENT;
  int rc = mcpp__settings_check(&s, NULL);
  if (rc) return rc;
  if (alloc == NULL) alloc = mcpp_default_allocator();

  mcpp_engine *e = mcpp__malloc(alloc, sizeof *e);
  if (e == NULL) return MCPP_ERR_NOMEM;
  memset(e, 0, sizeof *e);
  e->alloc = alloc;
  e->s = s;
  if (copy_setting_strings(e) != 0) {
    mcpp_engine_free(e);
    return MCPP_ERR_NOMEM;
  }
  e->cb = *callbacks;
  e->user_data = user_data;
  snprintf(e->nonce_hex, sizeof e->nonce_hex, "%016" PRIx64, s.nonce);
  e->rng = s.nonce;
  e->next_seq = 1;
  e->state = MCPP_STATE_ALIVE;
  e->last_rx = now;
  e->ka_base = now;
  mcpp__ledger_init(&e->ledger, alloc);
  mcpp__keepalive_init(e);
  *out = e;
  return 0;
}

void mcpp_engine_free(mcpp_engine *e) {
  if (e == NULL) return;
  const mcpp_allocator *a = e->alloc;
  if (e->metrics) mcpp__metrics_slot_set(&e->metrics, NULL);
  mcpp__ledger_free(&e->ledger);
  mcpp__handshake_free(e);
  mcpp__free(a, e->manual);
  mcpp__free(a, e->protocol_version);
  mcpp__free(a, e->peer_name);
  mcpp__free(a, e->peer_setting);
  mcpp__free(a, e->probe_setting);
  mcpp__free(a, e->probe_proof);
  mcpp__free(a, e->session_id);
  mcpp__free(a, e->unreadable_first);
  mcpp__free(a, e->verdict_text);
  mcpp__free(a, e);
}

uint64_t mcpp__engine_json_parses(const mcpp_engine *e) {
  return e->json_parses;
}

mcpp_disposition mcpp__abandon_disposition(const mcpp_engine *e) {
  return mcpp__ledger_any_unsafe(&e->ledger) ? MCPP_DISPOSITION_IN_DOUBT
                                              : MCPP_DISPOSITION_CANCELLED;
}

/* --------------------------------------------------------------- close */

void mcpp_engine_close(mcpp_engine *e, int err, const char *reason,
                       uint64_t now) {
  if (e == NULL || e->state == MCPP_STATE_CLOSED) return;
  mcpp_disposition d = mcpp__abandon_disposition(e);
  e->state = MCPP_STATE_CLOSED;
  e->ka_active = 0;
  mcpp__close_manual(e, now);
  mcpp_event ev;
  memset(&ev, 0, sizeof ev);
  ev.type = MCPP_EV_CLOSED;
  ev.error = err;
  ev.message = reason;
  ev.disposition = d;
  if (e->process_exited) ev.proof = "process";
  mcpp__emit(e, &ev, "closed", now);
}

void mcpp_engine_close_reconnecting(mcpp_engine *e, const char *reason,
                                    uint32_t attempt, uint32_t delay_ms,
                                    uint64_t now) {
  if (e == NULL || e->state == MCPP_STATE_CLOSED) return;
  mcpp_disposition d = mcpp__abandon_disposition(e);
  uint32_t failed = mcpp_engine_fail_in_flight(e, now);
  e->state = MCPP_STATE_CLOSED;
  e->ka_active = 0;
  mcpp__close_manual(e, now);
  e->reconnect_attempt = attempt;
  mcpp_event ev;
  memset(&ev, 0, sizeof ev);
  ev.type = MCPP_EV_RECONNECTING;
  ev.message = reason;
  ev.reconnect_attempt = attempt;
  ev.delay_ms = delay_ms;
  if (e->process_exited) ev.proof = "process";
  /* Not mcpp__emit: the event and the record name what was in flight, not
   * the empty ledger left behind. */
  ev.version = MCPP_EVENT_VERSION;
  ev.state = e->state;
  ev.failure_count = e->failure_count;
  ev.in_flight = failed;
  ev.disposition = failed ? d : MCPP_DISPOSITION_CONTINUED;
  if (e->cb.on_event) e->cb.on_event(e, &ev, e->user_data);
  if (e->cb.on_record) {
    mcpp__record r;
    mcpp__record_of(e, &ev, "reconnect", &r);
    mcpp__send_record(e, &r, now);
  }
}

/* ------------------------------------------------------------- session */

int mcpp__version_has_no_ping(const char *v) {
  static const char shape[] = "dddd-dd-dd";
  for (size_t i = 0; i < 10; i++) {
    if (v[i] == '\0') return 0;
    if (shape[i] == 'd' ? (v[i] < '0' || v[i] > '9') : v[i] != '-') return 0;
  }
  return strncmp(v, MCPP__NO_PING_VERSION, 10) >= 0;
}

void mcpp__learn_version(mcpp_engine *e, const char *v, int negotiated,
                         uint64_t now) {
  char *copy = dup_capped(e->alloc, v);
  if (copy) {
    mcpp__free(e->alloc, e->protocol_version);
    e->protocol_version = copy;
  }
  if (!negotiated) return;
  e->negotiated = 1;
  if (!mcpp__version_has_no_ping(v)) return;
  mcpp__turn_off_pings(e);
  if (e->unsupported_emitted) return;
  e->unsupported_emitted = 1;
  mcpp_event ev;
  memset(&ev, 0, sizeof ev);
  ev.type = MCPP_EV_UNSUPPORTED;
  ev.message = "the protocol version has no ping";
  mcpp__emit(e, &ev, "ping_unsupported", now);
}

void mcpp__learn_peer(mcpp_engine *e, const char *name) {
  char *copy = dup_capped(e->alloc, name);
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
  /* Hosts that never see the handshake's answer (an SDK session above a
   * guard or a transport) learn the peer's name from this event. */
  ev.message = e->peer_name;
  mcpp__emit(e, &ev, NULL, now);
}

int mcpp_engine_set_session_id(mcpp_engine *e, const char *session_id) {
  if (e == NULL) return MCPP_ERR_INVALID_ARGUMENT;
  char *copy = NULL;
  if (session_id) {
    copy = dup_capped(e->alloc, session_id);
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

/* The latest proof; a pong or a probe answer is also traffic, and names
 * the more telling kind when it is the latest traffic. */
static mcpp_proof freshest_proof(const mcpp_engine *e) {
  if (!e->heard_from_peer && e->last_process == 0) return MCPP_PROOF_NONE;
  uint64_t traffic = e->heard_from_peer ? e->last_rx : 0;
  if (e->last_process > traffic) return MCPP_PROOF_PROCESS;
  if (e->last_ping && e->last_ping == traffic) return MCPP_PROOF_PING;
  if (e->last_probe && e->last_probe == traffic) return MCPP_PROOF_PROBE;
  return MCPP_PROOF_TRAFFIC;
}

/* The size of an info struct of `version`, 0 for an unknown one (a later
 * version's fields go at the end, as for settings). */
static size_t info_size(int version) {
  return version == MCPP_ENGINE_INFO_V1 ? sizeof(mcpp_engine_info) : 0;
}

static void get_info(const mcpp_engine *e, mcpp_engine_info *info);

void mcpp_engine_get_info_versioned(const mcpp_engine *e, int version,
                                    mcpp_engine_info *info) {
  size_t size = info_size(version);
  if (info == NULL || size == 0) return;
  mcpp_engine_info full;
  get_info(e, &full);
  memcpy(info, &full, size);
}

static void get_info(const mcpp_engine *e, mcpp_engine_info *info) {
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
  info->last_traffic_us = e->heard_from_peer ? e->last_rx : 0;
  info->last_ping_us = e->last_ping;
  info->last_probe_us = e->last_probe;
  info->last_process_us = e->last_process;
  info->freshest_proof = freshest_proof(e);
  const char *probe = mcpp__probe_proof(e);
  info->probe_method = probe ? probe + 6 : NULL; /* past "probe:" */
  info->process_state = e->process_state;
  info->reading = !e->not_reading;
  info->probes_sent = e->probes_sent;
  info->probes_answered = e->probes_answered;
  info->probe_timeouts = e->probe_timeouts;
  info->app_cancels = e->app_cancels;
}

/* When healthy() turns 0 given the state alone: now if it is 0 already. */
static uint64_t healthy_limit(const mcpp_engine *e, uint64_t now) {
  if (e == NULL || e->state != MCPP_STATE_ALIVE) return now;
  /* Pongs prove the loop runs, not that requests finish (liveness
   * laundering): application requests must make progress too. */
  if (e->app_timed_out) return now;
  uint64_t limit = mcpp__requests_healthy_until(e);
  return limit > now ? limit : now;
}

int mcpp_engine_healthy(const mcpp_engine *e, uint64_t now) {
  return healthy_limit(e, now) > now;
}

uint64_t mcpp_engine_healthy_until(const mcpp_engine *e, uint64_t now) {
  return healthy_limit(e, now);
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

void mcpp__engine_set_record_cb(mcpp_engine *e,
                                void (*fn)(mcpp_engine *e, const char *json,
                                           size_t len, void *user_data)) {
  e->cb.on_record = fn;
}
