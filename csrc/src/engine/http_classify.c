/* What an HTTP answer means on Streamable HTTP (see mcpping.h). A 404 is
 * two different things there: the server's "no such method" (a JSON-RPC
 * -32601 error in the body) or "no such session" (the session expired and
 * must be initialized again). Telling them apart matters: the first stops
 * pinging for good, the second must not. */
#include <cjson/cJSON.h>
#include <stdio.h>
#include <string.h>

#include "internal.h"
#include "scan.h"

/* 1 if body is a JSON-RPC error object with code -32601. */
static int method_not_found(const char *body, size_t len) {
  if (body == NULL || len == 0 || len > MCPP__SMALL_FRAME) return 0;
  cJSON *root = cJSON_ParseWithLength(body, len);
  const cJSON *err = cJSON_GetObjectItemCaseSensitive(root, "error");
  const cJSON *code = cJSON_GetObjectItemCaseSensitive(err, "code");
  int yes = cJSON_IsObject(root) && cJSON_IsObject(err) &&
            cJSON_IsNumber(code) && code->valuedouble == -32601.0;
  cJSON_Delete(root);
  return yes;
}

mcpp_http_verdict mcpp_http_classify(int status, const char *body,
                                     size_t len, int had_session) {
  if (status >= 200 && status <= 299) return MCPP_HTTP_ANSWER;
  if (status != 404) return MCPP_HTTP_FAILED;
  if (method_not_found(body, len)) return MCPP_HTTP_UNSUPPORTED;
  return had_session ? MCPP_HTTP_SESSION_EXPIRED : MCPP_HTTP_FAILED;
}

/* The reason phrases of the statuses a server in front of MCP is likely to
 * fail with. Not read from the wire: HTTP/2 sends none, and each host's
 * HTTP stack reports them differently. */
static const char *reason_phrase(int status) {
  switch (status) {
    case 400: return "Bad Request";
    case 401: return "Unauthorized";
    case 403: return "Forbidden";
    case 404: return "Not Found";
    case 405: return "Method Not Allowed";
    case 406: return "Not Acceptable";
    case 408: return "Request Timeout";
    case 409: return "Conflict";
    case 413: return "Content Too Large";
    case 415: return "Unsupported Media Type";
    case 422: return "Unprocessable Content";
    case 429: return "Too Many Requests";
    case 500: return "Internal Server Error";
    case 501: return "Not Implemented";
    case 502: return "Bad Gateway";
    case 503: return "Service Unavailable";
    case 504: return "Gateway Timeout";
    default: return NULL;
  }
}

/* Appends p[0..n) to out at *at, as far as cap allows; *at counts on. */
static void put(char *out, size_t cap, size_t *at, const char *p, size_t n) {
  if (*at < cap) memcpy(out + *at, p, n < cap - *at ? n : cap - *at);
  *at += n;
}

size_t mcpp_http_error_answer(int status, const char *body, size_t len,
                              const char *frame, size_t frame_len, char *out,
                              size_t cap) {
  mcpp__msg sent, got;
  if (frame == NULL || mcpp__scan_message(frame, frame_len, &sent) != 0 ||
      sent.id.p == NULL || sent.method.p == NULL ||
      !mcpp__json_strict(frame, frame_len))
    return 0;
  const char *err;
  size_t err_n;
  char made[96];
  if (body != NULL && len > 0 && mcpp__json_strict(body, len) &&
      mcpp__scan_message(body, len, &got) == 0 && got.error.p != NULL &&
      got.error.p[0] == '{') {
    err = got.error.p;
    err_n = got.error.n;
  } else {
    const char *why = reason_phrase(status);
    int n = snprintf(made, sizeof made,
                     "{\"code\":-32000,\"message\":\"HTTP %d%s%s\"}", status,
                     why ? " " : "", why ? why : "");
    err = made;
    err_n = (size_t)n;
  }
  static const char head[] = "{\"jsonrpc\":\"2.0\",\"id\":";
  static const char mid[] = ",\"error\":";
  size_t at = 0;
  put(out, cap, &at, head, sizeof head - 1);
  put(out, cap, &at, sent.id.p, sent.id.n);
  put(out, cap, &at, mid, sizeof mid - 1);
  put(out, cap, &at, err, err_n);
  put(out, cap, &at, "}", 1);
  if (cap) out[at < cap ? at : cap - 1] = '\0';
  return at;
}

uint32_t mcpp_http_relisten_delay_ms(uint32_t last_ms) {
  enum { FIRST_MS = 250, MAX_MS = 30000 };
  if (last_ms == 0) return FIRST_MS;
  return last_ms >= MAX_MS / 2 ? MAX_MS : last_ms * 2;
}

const char *mcpp_http_verdict_name(mcpp_http_verdict v) {
  switch (v) {
    case MCPP_HTTP_ANSWER: return "answer";
    case MCPP_HTTP_UNSUPPORTED: return "unsupported";
    case MCPP_HTTP_SESSION_EXPIRED: return "session_expired";
    default: return "failed";
  }
}
