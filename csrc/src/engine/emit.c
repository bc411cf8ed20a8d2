/* Events, governance records and outgoing frames: everything the engine
 * hands to its callbacks goes through here. */
#include <string.h>

#include "engine.h"
#include "metrics_tally_internal.h"

/* The record's direction: our pings and their outcomes (including the state
 * changes they cause) are outbound; answering and recovering are caused by
 * the peer's traffic. */
static int direction_of(const mcpp_event *ev) {
  switch (ev->type) {
    case MCPP_EV_PING:
    case MCPP_EV_PONG:
    case MCPP_EV_TIMEOUT:
    case MCPP_EV_PING_ERROR:
    case MCPP_EV_UNSUPPORTED:
    case MCPP_EV_PROBE:
    case MCPP_EV_PROBE_OK:
    case MCPP_EV_PROBE_TIMEOUT:
    case MCPP_EV_SUSPECT:
    case MCPP_EV_STALE:
    case MCPP_EV_PING_DEAF:
    case MCPP_EV_BUSY:
      return MCPP__DIR_OUTBOUND;
    case MCPP_EV_PING_ANSWERED:
    case MCPP_EV_RECOVERED:
      return MCPP__DIR_INBOUND;
    default:
      return MCPP__DIR_NONE;
  }
}

/* Our pings and probes, sent or with an outcome: records name their id and
 * timeout. */
static int is_ping_outcome(mcpp_event_type t) {
  return t == MCPP_EV_PING || t == MCPP_EV_PONG || t == MCPP_EV_TIMEOUT ||
         t == MCPP_EV_PING_ERROR || t == MCPP_EV_UNSUPPORTED ||
         t == MCPP_EV_PROBE || t == MCPP_EV_PROBE_OK ||
         t == MCPP_EV_PROBE_TIMEOUT;
}

/* The record name for an event the host formats itself. */
static const char *record_name(const mcpp_event *ev) {
  switch (ev->type) {
    case MCPP_EV_PONG: return "ping_ok";
    case MCPP_EV_TIMEOUT: return "ping_timeout";
    case MCPP_EV_PING_ERROR: return ev->invalid ? "ping_invalid" : "ping_error";
    case MCPP_EV_UNSUPPORTED: return "ping_unsupported";
    case MCPP_EV_PROBE_OK: return ev->rpc_code ? "probe_error" : "probe_ok";
    default: return mcpp_event_name(ev->type);
  }
}

void mcpp__record_of(const mcpp_engine *e, const mcpp_event *ev,
                     const char *name, mcpp__record *r) {
  memset(r, 0, sizeof *r);
  r->event = name;
  r->direction = ev ? direction_of(ev) : MCPP__DIR_NONE;
  r->role = e->s.role;
  r->peer = e->peer_name ? e->peer_name : e->peer_setting;
  r->session_id = e->session_id;
  r->protocol_version = e->protocol_version;
  r->transport = e->s.transport;
  r->failure_count = e->failure_count;
  r->reconnect_attempt = e->reconnect_attempt;
  r->in_flight = (uint32_t)e->ledger.count;
  r->disposition = MCPP_DISPOSITION_CONTINUED;
  if (ev == NULL) return;
  r->failure_count = ev->failure_count;
  r->in_flight = ev->in_flight;
  r->disposition = ev->disposition;
  r->proof = ev->proof;
  if (ev->id && (is_ping_outcome(ev->type) ||
                 ev->type == MCPP_EV_PING_ANSWERED)) {
    r->ping_id = ev->id;
    r->ping_id_len = ev->id_len;
  }
  if (is_ping_outcome(ev->type) && ev->id) {
    r->has_timeout = 1;
    r->timeout_ms = ev->timeout_ms;
  }
  /* Any answer to our ping has a latency; a timeout or a protocol-level
   * "unsupported" has none. */
  if (ev->id && (ev->type == MCPP_EV_PONG || ev->type == MCPP_EV_PING_ERROR ||
                 ev->type == MCPP_EV_UNSUPPORTED ||
                 ev->type == MCPP_EV_PROBE_OK)) {
    r->has_latency = 1;
    r->latency_us = ev->rtt_us;
  }
}

void mcpp__send_record(mcpp_engine *e, const mcpp__record *r, uint64_t now) {
  char stack[1024];
  int64_t unix_us = (int64_t)now + e->s.clock_offset_us;
  size_t n = mcpp__record_format(r, unix_us, stack, sizeof stack);
  if (n < sizeof stack) {
    e->cb.on_record(e, stack, n, e->user_data);
    return;
  }
  /* Records are bounded by the name caps except for a peer's long ping id;
   * if that cannot be allocated the record is dropped, not truncated. */
  char *big = mcpp__malloc(e->alloc, n + 1);
  if (big == NULL) return;
  mcpp__record_format(r, unix_us, big, n + 1);
  e->cb.on_record(e, big, n, e->user_data);
  mcpp__free(e->alloc, big);
}

void mcpp__emit(mcpp_engine *e, mcpp_event *ev, const char *record,
                uint64_t now) {
  ev->version = MCPP_EVENT_VERSION;
  ev->state = e->state;
  ev->failure_count = e->failure_count;
  ev->in_flight = (uint32_t)e->ledger.count;
  if (e->metrics) mcpp__metrics_slot_observe(&e->metrics, ev);
  if (e->cb.on_event) e->cb.on_event(e, ev, e->user_data);
  if (record && e->cb.on_record) {
    mcpp__record r;
    mcpp__record_of(e, ev, record, &r);
    mcpp__send_record(e, &r, now);
  }
}

void mcpp__emit_record_only(mcpp_engine *e, const char *record, uint64_t now) {
  if (e->cb.on_record == NULL) return;
  mcpp__record r;
  mcpp__record_of(e, NULL, record, &r);
  mcpp__send_record(e, &r, now);
}

size_t mcpp_engine_format_record(const mcpp_engine *engine,
                                 const mcpp_event *event, uint64_t now,
                                 char *buf, size_t cap) {
  if (engine == NULL || !mcpp__event_readable(event)) {
    if (cap) buf[0] = '\0';
    return 0;
  }
  mcpp__record r;
  mcpp__record_of(engine, event, record_name(event), &r);
  return mcpp__record_format(
      &r, (int64_t)now + engine->s.clock_offset_us, buf, cap);
}

int mcpp__output(mcpp_engine *e, int kind, const mcpp__piece *pieces,
                 size_t count) {
  char stack[512];
  size_t total = 0;
  for (size_t i = 0; i < count; i++) total += pieces[i].n;
  char *buf = stack;
  if (total > sizeof stack) {
    buf = mcpp__malloc(e->alloc, total);
    if (buf == NULL) return MCPP_ERR_NOMEM;
  }
  size_t off = 0;
  for (size_t i = 0; i < count; i++) {
    memcpy(buf + off, pieces[i].p, pieces[i].n);
    off += pieces[i].n;
  }
  int rc = 0;
  if (kind >= 0) {
    rc = e->cb.send(e, (mcpp_frame_kind)kind, buf, total, e->user_data);
  } else if (e->cb.deliver) {
    e->delivering = -1 - kind; /* mcpp_engine_delivery_kind, during the call */
    e->cb.deliver(e, buf, total, e->user_data);
    e->delivering = MCPP_ANSWER_PEER;
  }
  if (buf != stack) mcpp__free(e->alloc, buf);
  return rc;
}
