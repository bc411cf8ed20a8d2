/* Learning the session from the handshake the application runs, in both
 * roles (the client's requests go out through observe_outbound, the
 * server's answers too; the peer's come in through recv) and both eras:
 *   - initialize: its result names the negotiated version and the server
 *     (its params name the client);
 *   - server/discover (2026-07-28): the request proposes a version in its
 *     _meta envelope, and a result whose supportedVersions lists it settles
 *     the session; the server's name is in the result's _meta;
 *   - a client that pins 2026-07-28 without discovering: its first request
 *     in the _meta envelope, once answered with a result.
 * A 2026 session has no ping, so learning one switches keepalive to the
 * ping-less proofs at once. Only the spans that matter are parsed. */
#include <cjson/cJSON.h>
#include <stdio.h>
#include <string.h>

#include "engine.h"

#define META_VERSION "io.modelcontextprotocol/protocolVersion"
#define META_CLIENT_INFO "io.modelcontextprotocol/clientInfo"
#define META_SERVER_INFO "io.modelcontextprotocol/serverInfo"

/* The raw value of `name` in the object `obj` (a NULL span if obj is no
 * object or has no such member). */
static mcpp__span member(mcpp__span obj, const char *name) {
  mcpp__span out = {NULL, 0};
  const char *const names[] = {name};
  if (obj.p == NULL || obj.p[0] != '{' ||
      mcpp__scan_object(obj.p, obj.n, names, 1, &out, NULL) != 0)
    out.p = NULL, out.n = 0;
  return out;
}

/* Decodes the JSON string v into out (truncated to MCPP__MAX_NAME bytes).
 * Returns 1, or 0 if v is not a string. */
static int string_value(mcpp_engine *e, mcpp__span v,
                        char out[MCPP__MAX_NAME + 1]) {
  if (v.p == NULL || v.p[0] != '"' || v.n > MCPP__SMALL_FRAME) return 0;
  cJSON *s = mcpp__parse(e, v.p, v.n);
  int ok = cJSON_IsString(s);
  if (ok) snprintf(out, MCPP__MAX_NAME + 1, "%s", s->valuestring);
  cJSON_Delete(s);
  return ok;
}

/* Learns the name in an Implementation object ({"name": ...}). */
static void learn_peer_from(mcpp_engine *e, mcpp__span implementation) {
  char name[MCPP__MAX_NAME + 1];
  if (string_value(e, member(implementation, "name"), name))
    mcpp__learn_peer(e, name);
}

void mcpp__handshake_free(mcpp_engine *e) {
  mcpp__free(e->alloc, e->hs_id);
  mcpp__free(e->alloc, e->hs_version);
  e->hs_id = e->hs_version = NULL;
  e->hs_id_len = 0;
  e->hs_kind = MCPP__HS_NONE;
}

/* Remembers the handshake request; out of memory only forgoes learning. */
static void set_pending(mcpp_engine *e, mcpp__hs_kind kind, mcpp__span id,
                        const char *version) {
  char *id_copy = mcpp__strndup(e->alloc, id.p, id.n);
  char *v = version ? mcpp__strndup(e->alloc, version, strlen(version)) : NULL;
  if (id_copy == NULL || (version && v == NULL)) {
    mcpp__free(e->alloc, id_copy);
    mcpp__free(e->alloc, v);
    return;
  }
  mcpp__handshake_free(e);
  e->hs_kind = kind;
  e->hs_id = id_copy;
  e->hs_id_len = id.n;
  e->hs_version = v;
}

/* The client's initialize params, seen by a server: its name, and the
 * version it asks for (not yet the session's). */
static void learn_from_initialize_params(mcpp_engine *e, mcpp__span params,
                                         uint64_t now) {
  if (params.p == NULL) return;
  cJSON *p = mcpp__parse(e, params.p, params.n);
  if (p == NULL) return;
  const char *name = mcpp__get_string(
      cJSON_GetObjectItemCaseSensitive(p, "clientInfo"), "name");
  if (name) mcpp__learn_peer(e, name);
  const char *version = mcpp__get_string(p, "protocolVersion");
  if (version) mcpp__learn_version(e, version, 0, now);
  cJSON_Delete(p);
}

void mcpp__handshake_request(mcpp_engine *e, const mcpp__msg *m,
                             uint64_t now) {
  if (m->id.p == NULL) return;
  if (mcpp__span_is(m->method, "\"initialize\"")) {
    set_pending(e, MCPP__HS_INITIALIZE, m->id, NULL);
    if (e->s.role == MCPP_ROLE_SERVER)
      learn_from_initialize_params(e, m->params, now);
    return;
  }
  if (e->negotiated) return;
  int discover = mcpp__span_is(m->method, "\"server/discover\"");
  /* Only the first enveloped request opens a session that skipped
   * discovery; later ones wait for its answer. */
  if (!discover && e->hs_kind != MCPP__HS_NONE) return;
  mcpp__span meta = member(m->params, "_meta");
  char version[MCPP__MAX_NAME + 1];
  if (!string_value(e, member(meta, META_VERSION), version)) return;
  set_pending(e, discover ? MCPP__HS_DISCOVER : MCPP__HS_ENVELOPE, m->id,
              version);
  if (e->s.role == MCPP_ROLE_SERVER)
    learn_peer_from(e, member(meta, META_CLIENT_INFO));
}

/* The initialize result: its protocolVersion is the session's. Only the
 * result span is parsed, once. */
static void learn_from_initialize_result(mcpp_engine *e, mcpp__span result,
                                         uint64_t now) {
  cJSON *r = mcpp__parse(e, result.p, result.n);
  if (r == NULL) return;
  if (e->s.role == MCPP_ROLE_CLIENT) {
    const char *name = mcpp__get_string(
        cJSON_GetObjectItemCaseSensitive(r, "serverInfo"), "name");
    if (name) mcpp__learn_peer(e, name);
  }
  const char *version = mcpp__get_string(r, "protocolVersion");
  if (version) mcpp__learn_version(e, version, 1, now);
  cJSON_Delete(r);
}

/* 1 if the JSON array `list` holds the string `version`. */
static int lists_version(mcpp_engine *e, mcpp__span list, const char *version) {
  if (list.p == NULL || list.p[0] != '[' || list.n > MCPP__SMALL_FRAME)
    return 0;
  cJSON *a = mcpp__parse(e, list.p, list.n);
  int found = 0;
  const cJSON *v;
  cJSON_ArrayForEach(v, a) {
    if (cJSON_IsString(v) && strcmp(v->valuestring, version) == 0) found = 1;
  }
  cJSON_Delete(a);
  return found;
}

void mcpp__handshake_response(mcpp_engine *e, const mcpp__msg *m,
                              uint64_t now) {
  if (e->hs_kind == MCPP__HS_NONE ||
      !mcpp__span_eq(m->id, e->hs_id, e->hs_id_len))
    return;
  mcpp__hs_kind kind = e->hs_kind;
  char *version = e->hs_version;
  e->hs_version = NULL;
  mcpp__handshake_free(e);
  /* An error settles nothing: the client falls back or retries. */
  if (m->result.p == NULL) {
    mcpp__free(e->alloc, version);
    return;
  }
  if (kind == MCPP__HS_INITIALIZE) {
    learn_from_initialize_result(e, m->result, now);
  } else if (kind == MCPP__HS_ENVELOPE ||
             lists_version(e, member(m->result, "supportedVersions"), version)) {
    /* A discover result without the proposed version advertises an older
     * era: the client goes on to initialize, and that will tell. */
    if (e->s.role == MCPP_ROLE_CLIENT)
      learn_peer_from(e, member(member(m->result, "_meta"), META_SERVER_INFO));
    mcpp__learn_version(e, version, 1, now);
    /* 2026 sessions have no notifications/initialized: this was it. */
    if (e->state != MCPP_STATE_CLOSED) mcpp__set_initialized(e, now);
  }
  mcpp__free(e->alloc, version);
}
