/* Frame handling: classify each inbound frame from its top-level spans,
 * answer pings, match the answers to our pings and probes, ledger the
 * application's requests, and pass the handshake to handshake.c. Only the
 * few frames that matter are parsed. */
#include <cjson/cJSON.h>
#include <string.h>

#include "engine.h"

cJSON *mcpp__parse(mcpp_engine *e, const char *p, size_t n) {
  e->json_parses++;
  return cJSON_ParseWithLength(p, n);
}

const char *mcpp__get_string(const cJSON *obj, const char *key) {
  const cJSON *item = cJSON_GetObjectItemCaseSensitive(obj, key);
  return cJSON_IsString(item) ? item->valuestring : NULL;
}

/* Our ids are "mcpp-<nonce hex>-<seq>" with a seq we issued. */
static int is_our_id(const mcpp_engine *e, mcpp__span id, uint64_t *seq) {
  const size_t prefix = 6 + 16 + 1; /* "mcpp- + nonce + - */
  if (id.n < prefix + 2 || memcmp(id.p, "\"mcpp-", 6) != 0 ||
      memcmp(id.p + 6, e->nonce_hex, 16) != 0 || id.p[22] != '-' ||
      id.p[id.n - 1] != '"')
    return 0;
  size_t digits = id.n - prefix - 1;
  /* We never write a leading zero: "-01" is someone else's id. */
  if (id.p[prefix] == '0') return 0;
  if (digits > 20) return 0;
  uint64_t v = 0;
  for (size_t i = 0; i < digits; i++) {
    char c = id.p[prefix + i];
    if (c < '0' || c > '9') return 0;
    uint64_t d = (uint64_t)(c - '0');
    if (v > (UINT64_MAX - d) / 10) return 0;
    v = v * 10 + d;
  }
  if (v == 0 || v >= e->next_seq) return 0;
  *seq = v;
  return 1;
}

/* 1 if buf holds a \u escape. Conservative: "\\u" counts as one. */
static int has_unicode_escape(const char *buf, size_t len) {
  for (const char *p = buf, *end = buf + len;
       (p = memchr(p, '\\', (size_t)(end - p))) != NULL && p + 1 < end; p++)
    if (p[1] == 'u') return 1;
  return 0;
}

static int answer_ping(mcpp_engine *e, const mcpp__msg *m, const char *frame,
                       size_t len, uint64_t now) {
  /* Validate before answering: a frame cJSON rejects is not a ping. Large
   * pings (huge params) are left to the application. */
  if (len > MCPP__SMALL_FRAME) return MCPP_RECV_FORWARD;
  /* cJSON is lax (invalid UTF-8, "01", "1." pass), and the id is echoed
   * byte for byte: only strict JSON is answered, so our pong is always
   * valid JSON and nothing malformed is swallowed. */
  if (!mcpp__json_strict(frame, len)) return MCPP_RECV_FORWARD;
  int ok;
  if (!has_unicode_escape(frame, len)) {
    /* Strict text cJSON accepts (see cjson_accepts): the id's span says
     * what cJSON would, a string or a number. */
    char c = m->id.p[0];
    ok = c == '"' || c == '-' || (c >= '0' && c <= '9');
  } else {
    cJSON *root = mcpp__parse(e, frame, len);
    const cJSON *id = cJSON_GetObjectItemCaseSensitive(root, "id");
    ok = cJSON_IsObject(root) && (cJSON_IsString(id) || cJSON_IsNumber(id));
    cJSON_Delete(root);
  }
  if (!ok) return MCPP_RECV_FORWARD;

  /* The id is echoed byte for byte: big integers and "1" vs 1 survive. */
  static const char head[] = "{\"jsonrpc\":\"2.0\",\"id\":";
  static const char tail[] = ",\"result\":{}}";
  mcpp__piece pieces[] = {
      {head, sizeof head - 1}, {m->id.p, m->id.n}, {tail, sizeof tail - 1}};
  int rc = mcpp__output(e, MCPP_FRAME_PONG, pieces, 3);
  if (rc) return rc;
  e->pings_answered++;
  mcpp_event ev;
  memset(&ev, 0, sizeof ev);
  ev.type = MCPP_EV_PING_ANSWERED;
  ev.id = m->id.p;
  ev.id_len = m->id.n;
  mcpp__emit(e, &ev, "ping_answered", now);
  return MCPP_RECV_CONSUMED;
}

static int64_t code_of(const cJSON *item) {
  if (!cJSON_IsNumber(item)) return 0;
  double d = item->valuedouble;
  if (!(d > -9.2e18 && d < 9.2e18)) return 0;
  return (int64_t)d;
}

/* The answer to our probe: any answer proves the peer's loop ran, and it
 * may be large (a 1 MiB tools/list), so only a small error is parsed. */
static int probe_response(mcpp_engine *e, const mcpp__msg *m, uint64_t seq,
                          uint64_t now) {
  int kind = 0;
  int64_t code = 0;
  const char *message = NULL;
  cJSON *err = NULL;
  if (m->error.p && !m->result.p) {
    kind = 2;
    if (m->error.n <= MCPP__SMALL_FRAME) err = mcpp__parse(e, m->error.p, m->error.n);
    code = code_of(cJSON_GetObjectItemCaseSensitive(err, "code"));
    message = mcpp__get_string(err, "message");
  }
  mcpp__answered_by_peer(e, seq, kind, code, message, now);
  cJSON_Delete(err);
  return MCPP_RECV_CONSUMED;
}

/* 1 if cJSON certainly accepts buf: strict JSON without \u escapes (the
 * only strict text cJSON refuses is an unpaired surrogate escape; the
 * scan fuzzer checks this). */
static int cjson_accepts(const char *buf, size_t len) {
  return !has_unicode_escape(buf, len) && mcpp__json_strict(buf, len);
}

static int our_response(mcpp_engine *e, const mcpp__msg *m, const char *frame,
                        size_t len, uint64_t seq, uint64_t now) {
  if (mcpp__is_probe_seq(e, seq)) return probe_response(e, m, seq, now);
  cJSON *root = NULL, *err_tree = NULL;
  const cJSON *err = NULL;
  /* A pong (or any answer but a lone error) is decided by its spans: the
   * full parse would only tell whether the frame is JSON, which the strict
   * check answers without a tree. An error needs its code and message,
   * and text the check cannot vouch for goes to cJSON as before (a large
   * frame is never parsed whole). */
  int lone_error = m->error.p && !m->result.p;
  int parse_whole = len <= MCPP__SMALL_FRAME;
  if (parse_whole && !lone_error && cjson_accepts(frame, len)) parse_whole = 0;
  if (parse_whole) {
    root = mcpp__parse(e, frame, len);
    /* Not JSON after all: the application decides. */
    if (root == NULL) return MCPP_RECV_FORWARD;
    err = cJSON_GetObjectItemCaseSensitive(root, "error");
  } else if (lone_error && m->error.n <= MCPP__SMALL_FRAME) {
    err = err_tree = mcpp__parse(e, m->error.p, m->error.n);
  }
  int kind;
  int64_t code = 0;
  const char *message = NULL;
  if (m->result.p && !m->error.p) {
    kind = m->result.p[0] == '{' ? 0 : 1;
  } else if (lone_error && cJSON_IsObject(err)) {
    code = code_of(cJSON_GetObjectItemCaseSensitive(err, "code"));
    message = mcpp__get_string(err, "message");
    kind = code == -32601 || code == -32602 ? 3 : 2;
  } else {
    kind = 1;
  }
  mcpp__answered_by_peer(e, seq, kind, code, message, now);
  cJSON_Delete(root);
  cJSON_Delete(err_tree);
  return MCPP_RECV_CONSUMED;
}

/* A request or notification from the peer (other than ping). */
static void inbound_request(mcpp_engine *e, const mcpp__msg *m, uint64_t now) {
  if (e->s.role != MCPP_ROLE_SERVER) return;
  if (m->id.p)
    mcpp__handshake_request(e, m, now);
  else if (mcpp__span_is(m->method, "\"notifications/initialized\""))
    mcpp__set_initialized(e, now);
}

/* A response that is not ours: it answers an application request. */
static void app_response(mcpp_engine *e, const mcpp__msg *m, uint64_t now) {
  mcpp__ledger_remove_id(&e->ledger, m->id.p, m->id.n);
  e->app_timed_out = 0;
  if (e->s.role == MCPP_ROLE_CLIENT) mcpp__handshake_response(e, m, now);
}

int mcpp_engine_recv(mcpp_engine *e, const char *frame, size_t len,
                     uint64_t now) {
  if (e == NULL || (frame == NULL && len)) return MCPP_ERR_INVALID_ARGUMENT;
  if (e->state == MCPP_STATE_CLOSED) return MCPP_ERR_CLOSED;
  e->frames_in++;
  mcpp__msg m;
  /* Duplicate keys are ambiguous: never consume what might not be ours. */
  int scanned = mcpp__scan_message(frame, len, &m) == 0;
  int ours = scanned && !m.dup;
  if (!scanned || !(m.method.p || m.id.p || m.result.p || m.error.p))
    mcpp__note_unreadable(e, frame, len);
  uint64_t seq = 0;
  int answer = ours && !m.method.p && m.id.p && (m.result.p || m.error.p);
  int our_answer = answer && is_our_id(e, m.id, &seq);
  /* Every frame, even garbage, proves the peer writes; an answer to our
   * ping or probe says more. */
  mcpp__on_rx(e, now, our_answer ? mcpp__answer_proof(e, seq) : "traffic");
  if (e->state == MCPP_STATE_CLOSED) return MCPP_ERR_CLOSED;
  if (!ours) return MCPP_RECV_FORWARD;
  if (m.method.p) {
    if (m.id.p && mcpp__span_is(m.method, "\"ping\"") &&
        !e->s.forward_peer_pings)
      return answer_ping(e, &m, frame, len, now);
    inbound_request(e, &m, now);
    return MCPP_RECV_FORWARD;
  }
  if (our_answer) return our_response(e, &m, frame, len, seq, now);
  if (answer) app_response(e, &m, now);
  return MCPP_RECV_FORWARD;
}

int mcpp_engine_awaits(const mcpp_engine *e, const char *frame, size_t len) {
  mcpp__msg m;
  if (e == NULL || frame == NULL || mcpp__scan_message(frame, len, &m) != 0 ||
      m.dup || m.id.p == NULL || m.method.p == NULL)
    return 0;
  uint64_t seq = 0;
  if (is_our_id(e, m.id, &seq))
    return (e->ka_active && e->ka.seq == seq) || mcpp__is_manual(e, seq);
  return mcpp__ledger_find(&e->ledger, m.id.p, m.id.n) != NULL;
}

/* The inner bytes of a JSON string span, or 0 if it is not a string. */
static int string_body(mcpp__span s, const char **p, size_t *n) {
  if (s.p == NULL || s.n < 2 || s.p[0] != '"') return 0;
  *p = s.p + 1;
  *n = s.n - 2;
  return 1;
}

static int outbound_request(mcpp_engine *e, const mcpp__msg *m,
                            uint32_t timeout_ms, uint64_t now) {
  const char *method;
  size_t method_len;
  if (!string_body(m->method, &method, &method_len)) return 0;
  /* The start of a spell with calls in flight (keepalive.c). */
  if (e->ledger.head == NULL) e->inflight_from = now;
  if (mcpp__ledger_add(&e->ledger, m->id.p, m->id.n, method, method_len, now,
                       timeout_ms) != 0)
    return MCPP_ERR_NOMEM;
  if (e->s.role == MCPP_ROLE_CLIENT) mcpp__handshake_request(e, m, now);
  return 0;
}

/* notifications/cancelled: the application gave up on a request. */
static void outbound_cancel(mcpp_engine *e, const mcpp__msg *m) {
  static const char *const names[] = {"requestId"};
  mcpp__span id;
  if (m->params.p == NULL ||
      mcpp__scan_object(m->params.p, m->params.n, names, 1, &id, NULL) != 0 ||
      id.p == NULL)
    return;
  mcpp__ledger_remove_id(&e->ledger, id.p, id.n);
}

int mcpp_engine_observe_outbound(mcpp_engine *e, const char *frame,
                                 size_t len, uint64_t now) {
  return mcpp_engine_observe_outbound_timed(e, frame, len, MCPP_TIMEOUT_DEFAULT,
                                            now);
}

int mcpp_engine_observe_outbound_timed(mcpp_engine *e, const char *frame,
                                       size_t len, uint32_t timeout_ms,
                                       uint64_t now) {
  if (e == NULL || (frame == NULL && len)) return MCPP_ERR_INVALID_ARGUMENT;
  if (timeout_ms == MCPP_TIMEOUT_DEFAULT)
    timeout_ms = e->s.request_timeout_ms;
  else if (timeout_ms == MCPP_TIMEOUT_NONE)
    timeout_ms = 0;
  else if (timeout_ms > MCPP_MAX_MS)
    return MCPP_ERR_INVALID_ARGUMENT;
  if (e->state == MCPP_STATE_CLOSED) return 0;
  e->frames_out++;
  mcpp__msg m;
  if (mcpp__scan_message(frame, len, &m) != 0 || m.dup) return 0;
  if (m.method.p && m.id.p) return outbound_request(e, &m, timeout_ms, now);
  if (m.method.p) {
    if (e->s.role == MCPP_ROLE_CLIENT &&
        mcpp__span_is(m.method, "\"notifications/initialized\""))
      mcpp__set_initialized(e, now);
    else if (mcpp__span_is(m.method, "\"notifications/cancelled\""))
      outbound_cancel(e, &m);
    return 0;
  }
  if (m.id.p && e->s.role == MCPP_ROLE_SERVER)
    mcpp__handshake_response(e, &m, now);
  return 0;
}
