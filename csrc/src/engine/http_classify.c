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
                                     size_t len, const char *frame,
                                     size_t frame_len, int had_session) {
  if (status >= 200 && status <= 299) return MCPP_HTTP_ANSWER;
  if (status == 400 && had_session && mcpp__is_ping_request(frame, frame_len) &&
      !method_not_found(body, len))
    return MCPP_HTTP_SESSION_EXPIRED; /* "No valid session ID provided" */
  if (status != 404) return MCPP_HTTP_FAILED;
  if (method_not_found(body, len)) return MCPP_HTTP_UNSUPPORTED;
  return had_session ? MCPP_HTTP_SESSION_EXPIRED : MCPP_HTTP_FAILED;
}

/* The reason phrases of the statuses a server in front of MCP is likely to
 * fail with. Not read from the wire: HTTP/2 sends none, and each host's
 * HTTP stack reports them differently. */
static const char *reason_phrase(int status) {
  switch (status) {
    case 301: return "Moved Permanently";
    case 302: return "Found";
    case 303: return "See Other";
    case 307: return "Temporary Redirect";
    case 308: return "Permanent Redirect";
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
size_t mcpp_http_error_answer(int status, const char *body, size_t len,
                              const char *frame, size_t frame_len, char *out,
                              size_t cap) {
  mcpp__msg got;
  if (body != NULL && len > 0 && mcpp__json_strict(body, len) &&
      mcpp__scan_message(body, len, &got) == 0 && got.error.p != NULL &&
      got.error.p[0] == '{')
    return mcpp__error_answer(frame, frame_len, got.error.p, got.error.n, out, cap);
  const char *why = reason_phrase(status);
  char made[96];
  int n = snprintf(made, sizeof made, "{\"code\":-32000,\"message\":\"HTTP %d%s%s\"}", status,
                   why ? " " : "", why ? why : "");
  return mcpp__error_answer(frame, frame_len, made, (size_t)n, out, cap);
}

/* The media type of a Content-Type (before ';', blanks trimmed) if it is
 * plain text to quote in JSON (letters, digits and !#$%&'*+-.^_`|~/), else
 * an empty span. */
static size_t media_type(const char *type, const char **start) {
  *start = type;
  if (type == NULL) return 0;
  while (*type == ' ' || *type == '\t') type++;
  size_t n = 0;
  while (type[n] && type[n] != ';' && type[n] != ' ' && type[n] != '\t') {
    char c = type[n];
    if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
          strchr("!#$%&'*+-.^_`|~/", c)))
      return 0;
    n++;
  }
  *start = type;
  return n > 64 ? 0 : n;
}

size_t mcpp_http_unreadable_answer(int status, const char *content_type, const char *body,
                                   size_t len, const char *frame, size_t frame_len, char *out,
                                   size_t cap) {
  size_t blank = 0;
  while (blank < len && (body[blank] == ' ' || body[blank] == '\t' || body[blank] == '\r' ||
                         body[blank] == '\n'))
    blank++;
  if (blank == len || mcpp__json_strict(body, len)) return 0;
  const char *type;
  size_t type_n = media_type(content_type, &type);
  char made[192];
  int n = type_n ? snprintf(made, sizeof made,
                            "{\"code\":-32000,\"message\":\"the server answered HTTP %d "
                            "with %.*s, not JSON\"}",
                            status, (int)type_n, type)
                 : snprintf(made, sizeof made,
                            "{\"code\":-32000,\"message\":\"the server answered HTTP %d "
                            "with a body that is not JSON\"}",
                            status);
  return mcpp__error_answer(frame, frame_len, made, (size_t)n, out, cap);
}

size_t mcpp_http_oversize_answer(size_t limit, const char *frame, size_t frame_len, char *out,
                                 size_t cap) {
  char made[160];
  int n = snprintf(made, sizeof made,
                   "{\"code\":-32000,\"message\":\"the server's answer is longer than %zu "
                   "bytes (max_line_bytes)\"}",
                   limit);
  return mcpp__error_answer(frame, frame_len, made, (size_t)n, out, cap);
}

/* The wait before the listening stream opens again: 250 ms after none
 * (it was open), doubling while it fails, at most 30 s. */
static uint32_t relisten_delay_ms(uint32_t last_ms) {
  enum { FIRST_MS = 250, MAX_MS = 30000 };
  if (last_ms == 0) return FIRST_MS;
  return last_ms >= MAX_MS / 2 ? MAX_MS : last_ms * 2;
}

/* The refusals that say "not now" rather than "not here". */
static int try_later(int status) {
  return status == 408 || status == 429 || status == 502 || status == 503 || status == 504;
}

mcpp_http_listen_step mcpp_http_listen_after(const mcpp_sse *stream, int opened, int status,
                                             const char *body, size_t len, uint32_t *wait_ms) {
  uint32_t retry = stream != NULL ? mcpp_sse_retry_ms(stream) : 0;
  if (opened) {
    /* A server that closes its stream and asked for a retry is polled at
     * that pace (SEP-1699), not faster. */
    *wait_ms = retry ? retry : relisten_delay_ms(0);
    return MCPP_HTTP_LISTEN_AGAIN;
  }
  if (status == 0 || try_later(status)) {
    uint32_t backoff = relisten_delay_ms(*wait_ms);
    *wait_ms = backoff > retry ? backoff : retry;
    return MCPP_HTTP_LISTEN_AGAIN;
  }
  *wait_ms = 0;
  return mcpp_http_classify(status, body, len, NULL, 0, 1) == MCPP_HTTP_SESSION_EXPIRED
             ? MCPP_HTTP_LISTEN_EXPIRED
             : MCPP_HTTP_LISTEN_NEVER;
}

int mcpp_http_resume_after(const mcpp_sse *stream, uint32_t *wait_ms) {
  if (mcpp_sse_last_event_id(stream)[0] == '\0') return 0;
  uint32_t retry = mcpp_sse_retry_ms(stream);
  *wait_ms = retry ? retry : relisten_delay_ms(*wait_ms);
  return 1;
}

mcpp_http_answer_step mcpp_http_answer_after(const mcpp_sse *stream, int broken,
                                             uint32_t *wait_ms) {
  if (stream && mcpp_http_resume_after(stream, wait_ms)) return MCPP_HTTP_ANSWER_RESUME;
  return broken ? MCPP_HTTP_ANSWER_LOST : MCPP_HTTP_ANSWER_WAIT;
}

const char *mcpp_http_answer_step_name(mcpp_http_answer_step step) {
  switch (step) {
    case MCPP_HTTP_ANSWER_RESUME: return "resume";
    case MCPP_HTTP_ANSWER_WAIT: return "wait";
    case MCPP_HTTP_ANSWER_LOST: return "lost";
  }
  return "wait";
}

int mcpp_http_is_answer(const char *frame, size_t frame_len, const char *msg, size_t msg_len) {
  mcpp__msg req, ans;
  return frame != NULL && msg != NULL && mcpp__scan_message(frame, frame_len, &req) == 0 &&
         mcpp__scan_message(msg, msg_len, &ans) == 0 && req.id.p != NULL && req.method.p != NULL &&
         ans.method.p == NULL && (ans.result.p != NULL || ans.error.p != NULL) &&
         mcpp__span_eq(ans.id, req.id.p, req.id.n);
}

const char *mcpp_http_listen_step_name(mcpp_http_listen_step step) {
  switch (step) {
    case MCPP_HTTP_LISTEN_AGAIN: return "again";
    case MCPP_HTTP_LISTEN_NEVER: return "never";
    case MCPP_HTTP_LISTEN_EXPIRED: return "expired";
  }
  return "never";
}

const char *mcpp_http_verdict_name(mcpp_http_verdict v) {
  switch (v) {
    case MCPP_HTTP_ANSWER: return "answer";
    case MCPP_HTTP_UNSUPPORTED: return "unsupported";
    case MCPP_HTTP_SESSION_EXPIRED: return "session_expired";
    default: return "failed";
  }
}
