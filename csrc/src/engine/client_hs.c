/* The client's handshake, sans I/O: initialize, then the server/discover
 * fallback (protocol 2026-07-28), era detection and every sentence a
 * failed handshake says. The bindings carry the bytes and keep the clock;
 * this file is the only place the rules and words live. */
#include <cjson/cJSON.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mcpping.h"
#include "scan.h"

#define META_VERSION "io.modelcontextprotocol/protocolVersion"
#define META_CLIENT_INFO "io.modelcontextprotocol/clientInfo"
#define META_CLIENT_CAPS "io.modelcontextprotocol/clientCapabilities"
#define META_SERVER_INFO "io.modelcontextprotocol/serverInfo"
#define CLIENT_INFO "{\"name\":\"mcpping\",\"version\":\"" MCPP_VERSION "\"}"

typedef enum step { STEP_INITIALIZE, STEP_DISCOVER } step;

struct mcpp_client_hs {
  mcpp_client_hs_state state;
  step step;
  uint64_t timeout_ms;
  mcpp_client_hs_error_kind kind;
  char *error;
  char *refused; /* initialize's refusal, said again if discover fails */
  char *version;
  char *server_name;
  char *server_info;
  char *result;
  int modern;
};

static const char INITIALIZE[] =
    "{\"jsonrpc\":\"2.0\",\"id\":\"mcpping-initialize\",\"method\":"
    "\"initialize\",\"params\":{\"protocolVersion\":\"" MCPP_PROTOCOL_VERSION
    "\",\"capabilities\":{},\"clientInfo\":" CLIENT_INFO "}}";
static const char DISCOVER[] =
    "{\"jsonrpc\":\"2.0\",\"id\":\"mcpping-discover\",\"method\":"
    "\"server/discover\",\"params\":{\"_meta\":{\"" META_VERSION
    "\":\"" MCPP_MODERN_PROTOCOL_VERSION "\",\"" META_CLIENT_INFO
    "\":" CLIENT_INFO ",\"" META_CLIENT_CAPS "\":{}}}}";
static const char INITIALIZED[] =
    "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}";

static char *dup_str(const char *s) {
  size_t n = strlen(s) + 1;
  char *p = malloc(n);
  if (p) memcpy(p, s, n);
  return p;
}

/* Ends the handshake with a sentence; out of memory keeps a fixed one. */
static void fail(mcpp_client_hs *hs, mcpp_client_hs_error_kind kind,
                 const char *fmt, ...) {
  char buf[1024];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(buf, sizeof buf, fmt, ap);
  va_end(ap);
  free(hs->error);
  hs->error = dup_str(buf);
  hs->kind = kind;
  hs->state = MCPP_CHS_FAILED;
}

static const char *method_name(const mcpp_client_hs *hs) {
  return hs->step == STEP_INITIALIZE ? "initialize" : "server/discover";
}

mcpp_client_hs *mcpp_client_hs_new(uint64_t timeout_ms) {
  mcpp_client_hs *hs = calloc(1, sizeof *hs);
  if (hs == NULL) return NULL;
  hs->state = MCPP_CHS_SEND;
  hs->step = STEP_INITIALIZE;
  hs->timeout_ms = timeout_ms;
  return hs;
}

void mcpp_client_hs_free(mcpp_client_hs *hs) {
  if (hs == NULL) return;
  free(hs->error);
  free(hs->refused);
  free(hs->version);
  free(hs->server_name);
  free(hs->server_info);
  free(hs->result);
  free(hs);
}

mcpp_client_hs_state mcpp_client_hs_get_state(const mcpp_client_hs *hs) {
  return hs->state;
}

const char *mcpp_client_hs_state_name(mcpp_client_hs_state state) {
  switch (state) {
    case MCPP_CHS_SEND: return "send";
    case MCPP_CHS_WAIT: return "wait";
    case MCPP_CHS_DONE: return "done";
    case MCPP_CHS_FAILED: return "failed";
  }
  return "unknown";
}

const char *mcpp_client_hs_request(mcpp_client_hs *hs, size_t *len,
                                   const char **id) {
  if (hs->state != MCPP_CHS_SEND) return NULL;
  hs->state = MCPP_CHS_WAIT;
  const char *msg = hs->step == STEP_INITIALIZE ? INITIALIZE : DISCOVER;
  if (len) *len = strlen(msg);
  if (id)
    *id = hs->step == STEP_INITIALIZE ? "mcpping-initialize"
                                       : "mcpping-discover";
  return msg;
}

/* "initialize failed: -32601 Method not found", from an error member. */
static void refusal(const mcpp_client_hs *hs, const cJSON *err, char *out,
                    size_t n) {
  const cJSON *code = cJSON_GetObjectItemCaseSensitive(err, "code");
  const cJSON *message = cJSON_GetObjectItemCaseSensitive(err, "message");
  char codebuf[32] = "None";
  if (cJSON_IsNumber(code)) snprintf(codebuf, sizeof codebuf, "%.17g", code->valuedouble);
  snprintf(out, n, "%s failed: %s %s", method_name(hs), codebuf,
           cJSON_IsString(message) ? message->valuestring : "None");
}

static char *print(const cJSON *v) {
  return v ? cJSON_PrintUnformatted(v) : NULL;
}

/* Takes serverInfo (an Implementation object) if it is one. */
static void learn_server(mcpp_client_hs *hs, const cJSON *info) {
  if (!cJSON_IsObject(info)) return;
  hs->server_info = print(info);
  const cJSON *name = cJSON_GetObjectItemCaseSensitive(info, "name");
  if (cJSON_IsString(name) && name->valuestring[0])
    hs->server_name = dup_str(name->valuestring);
}

static void done(mcpp_client_hs *hs, const cJSON *result, const char *version,
                 const cJSON *server_info) {
  hs->version = dup_str(version);
  hs->result = print(result);
  learn_server(hs, server_info);
  if (hs->version == NULL || hs->result == NULL) {
    fail(hs, MCPP_CHS_MALFORMED, "out of memory during the handshake");
    return;
  }
  hs->state = MCPP_CHS_DONE;
}

static void initialize_answered(mcpp_client_hs *hs, const cJSON *msg) {
  const cJSON *err = cJSON_GetObjectItemCaseSensitive(msg, "error");
  const cJSON *result = cJSON_GetObjectItemCaseSensitive(msg, "result");
  if (err != NULL) {
    /* Any refusal may be a 2026-07-28 server: ask it server/discover. */
    char why[512];
    refusal(hs, err, why, sizeof why);
    hs->refused = dup_str(why);
    hs->step = STEP_DISCOVER;
    hs->state = MCPP_CHS_SEND;
    return;
  }
  if (!cJSON_IsObject(result)) {
    fail(hs, MCPP_CHS_MALFORMED,
         "initialize failed: the answer has no result object");
    return;
  }
  const cJSON *v = cJSON_GetObjectItemCaseSensitive(result, "protocolVersion");
  done(hs, result, cJSON_IsString(v) ? v->valuestring : "",
       cJSON_GetObjectItemCaseSensitive(result, "serverInfo"));
}

static void discover_answered(mcpp_client_hs *hs, const cJSON *msg) {
  const char *refused = hs->refused ? hs->refused : "initialize failed";
  const cJSON *err = cJSON_GetObjectItemCaseSensitive(msg, "error");
  const cJSON *result = cJSON_GetObjectItemCaseSensitive(msg, "result");
  if (err != NULL) {
    char why[512];
    refusal(hs, err, why, sizeof why);
    fail(hs, MCPP_CHS_REFUSED, "%s; %s", refused, why);
    return;
  }
  if (!cJSON_IsObject(result)) {
    fail(hs, MCPP_CHS_MALFORMED,
         "%s; server/discover failed: the answer has no result object",
         refused);
    return;
  }
  const cJSON *versions =
      cJSON_GetObjectItemCaseSensitive(result, "supportedVersions");
  int listed = 0;
  const cJSON *v;
  if (cJSON_IsArray(versions))
    cJSON_ArrayForEach(v, versions) {
      if (cJSON_IsString(v) &&
          strcmp(v->valuestring, MCPP_MODERN_PROTOCOL_VERSION) == 0)
        listed = 1;
    }
  if (!listed) {
    char *text = versions ? print(versions) : NULL;
    fail(hs, MCPP_CHS_VERSION,
         "%s; server/discover lists protocol versions %s, and mcpping "
         "speaks " MCPP_PROTOCOL_VERSION " and " MCPP_MODERN_PROTOCOL_VERSION,
         refused, text ? text : "null");
    free(text);
    return;
  }
  hs->modern = 1;
  const cJSON *meta = cJSON_GetObjectItemCaseSensitive(result, "_meta");
  const cJSON *info = cJSON_GetObjectItemCaseSensitive(meta, META_SERVER_INFO);
  if (info == NULL) info = cJSON_GetObjectItemCaseSensitive(result, "serverInfo");
  done(hs, result, MCPP_MODERN_PROTOCOL_VERSION, info);
}

mcpp_client_hs_state mcpp_client_hs_answer(mcpp_client_hs *hs,
                                           const char *msg, size_t len) {
  if (hs->state != MCPP_CHS_WAIT) return hs->state;
  cJSON *m = cJSON_ParseWithLength(msg, len);
  if (!cJSON_IsObject(m)) {
    fail(hs, MCPP_CHS_MALFORMED, "%s failed: the answer is not a JSON object",
         method_name(hs));
  } else if (hs->step == STEP_INITIALIZE) {
    initialize_answered(hs, m);
  } else {
    discover_answered(hs, m);
  }
  cJSON_Delete(m);
  return hs->state;
}

void mcpp_client_hs_timed_out(mcpp_client_hs *hs) {
  mcpp_client_hs_timed_out_because(hs, NULL);
}

void mcpp_client_hs_timed_out_because(mcpp_client_hs *hs, const char *why) {
  if (hs->state == MCPP_CHS_DONE || hs->state == MCPP_CHS_FAILED) return;
  /* The whole budget is named, in seconds, as %g writes it. */
  int with = why != NULL && why[0] != '\0';
  fail(hs, MCPP_CHS_TIMED_OUT, "no %s result after %g s%s%s", method_name(hs),
       (double)hs->timeout_ms / 1000.0, with ? "; " : "", with ? why : "");
}

void mcpp_client_hs_closed(mcpp_client_hs *hs, const char *reason,
                           int exit_status, int term_signal) {
  if (hs->state == MCPP_CHS_DONE || hs->state == MCPP_CHS_FAILED) return;
  if (reason == NULL) {
    fail(hs, MCPP_CHS_CLOSED, "the connection closed during initialize");
    return;
  }
  if (strncmp(reason, "server exited", 13) == 0 ||
      strncmp(reason, "server killed", 13) == 0) {
    fail(hs, MCPP_CHS_CLOSED,
         "the server ended before answering initialize: %s", reason);
  } else if (term_signal > 0) {
    fail(hs, MCPP_CHS_CLOSED,
         "the server ended before answering initialize: server killed by "
         "signal %d; %s",
         term_signal, reason);
  } else if (exit_status >= 0) {
    fail(hs, MCPP_CHS_CLOSED,
         "the server ended before answering initialize: server exited with "
         "status %d; %s",
         exit_status, reason);
  } else {
    fail(hs, MCPP_CHS_CLOSED,
         "the server ended before answering initialize: server closed the "
         "connection; %s",
         reason);
  }
}

const char *mcpp_client_hs_notification(const mcpp_client_hs *hs,
                                        size_t *len) {
  if (hs->state != MCPP_CHS_DONE || hs->modern) return NULL;
  if (len) *len = sizeof INITIALIZED - 1;
  return INITIALIZED;
}

const char *mcpp_client_hs_version(const mcpp_client_hs *hs) {
  return hs->version;
}
int mcpp_client_hs_modern(const mcpp_client_hs *hs) { return hs->modern; }
const char *mcpp_client_hs_server_name(const mcpp_client_hs *hs) {
  return hs->server_name ? hs->server_name : "";
}
const char *mcpp_client_hs_server_info(const mcpp_client_hs *hs) {
  return hs->server_info;
}
const char *mcpp_client_hs_result(const mcpp_client_hs *hs) {
  return hs->result;
}
const char *mcpp_client_hs_error(const mcpp_client_hs *hs) {
  return hs->error ? hs->error
                   : (hs->state == MCPP_CHS_FAILED ? "out of memory" : NULL);
}
mcpp_client_hs_error_kind mcpp_client_hs_error_kind_of(
    const mcpp_client_hs *hs) {
  return hs->kind;
}

const char *mcpp_client_hs_error_kind_name(mcpp_client_hs_error_kind kind) {
  switch (kind) {
    case MCPP_CHS_OK: return "ok";
    case MCPP_CHS_TIMED_OUT: return "timed_out";
    case MCPP_CHS_REFUSED: return "refused";
    case MCPP_CHS_VERSION: return "version_mismatch";
    case MCPP_CHS_CLOSED: return "closed";
    case MCPP_CHS_MALFORMED: return "malformed";
  }
  return "unknown";
}

/* The bytes just inside obj's closing brace, and whether obj has members:
 * the splice point for one more member. obj is a scanned object span. */
static const char *before_close(mcpp__span obj, int *empty) {
  const char *q = obj.p + 1, *close = obj.p + obj.n - 1;
  while (q < close && (*q == ' ' || *q == '\t' || *q == '\n' || *q == '\r'))
    q++;
  *empty = q == close;
  return close;
}

/* The envelope is spliced in as text, never re-printed: every byte the
 * application wrote (big integers, 1.0, escapes, spacing, key order) goes
 * out as written, and only the missing envelope members are added. */
char *mcpp_client_envelope(const char *msg, size_t len, size_t *out_len) {
  static const char *const top_names[] = {"method", "params"};
  static const char *const params_names[] = {"_meta"};
  static const char *const meta_names[] = {META_VERSION, META_CLIENT_INFO,
                                           META_CLIENT_CAPS};
  static const char *const members[] = {
      "\"" META_VERSION "\":\"" MCPP_MODERN_PROTOCOL_VERSION "\"",
      "\"" META_CLIENT_INFO "\":" CLIENT_INFO,
      "\"" META_CLIENT_CAPS "\":{}"};
  mcpp__span top[2], params[1], meta[3];
  int dup = 0;
  /* Strict first: a message a JSON parser would reject is not ours to
   * edit. A duplicate params or _meta is ambiguous (parsers disagree on
   * which wins), so that message is left alone too. */
  if (msg == NULL || !mcpp__json_strict(msg, len) ||
      mcpp__scan_object(msg, len, top_names, 2, top, &dup) != 0 || dup ||
      top[0].p == NULL || *top[0].p != '"')
    return NULL;
  const char *at;  /* the splice point: text goes in just before it */
  int comma;
  const char *open = "", *close = "";
  for (size_t i = 0; i < 3; i++) meta[i].p = NULL;
  if (top[1].p == NULL) {
    int empty;
    mcpp__span whole = {msg, len};
    while (whole.n && (whole.p[whole.n - 1] == ' ' ||
                       whole.p[whole.n - 1] == '\t' ||
                       whole.p[whole.n - 1] == '\n' ||
                       whole.p[whole.n - 1] == '\r'))
      whole.n--;
    while (*whole.p != '{') whole.p++, whole.n--;
    at = before_close(whole, &empty);
    comma = !empty;
    open = "\"params\":{\"_meta\":{", close = "}}";
  } else {
    if (*top[1].p != '{' ||
        mcpp__scan_object(top[1].p, top[1].n, params_names, 1, params,
                          &dup) != 0 || dup)
      return NULL;
    int empty;
    if (params[0].p == NULL) {
      at = before_close(top[1], &empty);
      open = "\"_meta\":{", close = "}";
    } else {
      if (*params[0].p != '{' ||
          mcpp__scan_object(params[0].p, params[0].n, meta_names, 3, meta,
                            NULL) != 0)
        return NULL;
      at = before_close(params[0], &empty);
    }
    comma = !empty;
  }
  /* The application's own envelope keys win: only the missing ones go in. */
  size_t add = strlen(open) + strlen(close) + 1;
  for (size_t i = 0; i < 3; i++)
    if (meta[i].p == NULL) add += strlen(members[i]) + 1;
  char *out = malloc(len + add + 1);
  if (out == NULL) return NULL;
  size_t head = (size_t)(at - msg), n = head;
  memcpy(out, msg, head);
  int first = 1;
  if (comma) out[n++] = ',';
  n += (size_t)sprintf(out + n, "%s", open);
  for (size_t i = 0; i < 3; i++) {
    if (meta[i].p != NULL) continue;
    if (!first) out[n++] = ',';
    n += (size_t)sprintf(out + n, "%s", members[i]);
    first = 0;
  }
  if (first && *open == '\0') {
    /* Every envelope key is already there: nothing is added. */
    n = head;
  }
  n += (size_t)sprintf(out + n, "%s", close);
  memcpy(out + n, at, len - head);
  n += len - head;
  out[n] = '\0';
  if (out_len) *out_len = n;
  return out;
}
