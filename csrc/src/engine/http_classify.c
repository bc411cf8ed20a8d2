/* What an HTTP answer means on Streamable HTTP (see mcpping.h). A 404 is
 * two different things there: the server's "no such method" (a JSON-RPC
 * -32601 error in the body) or "no such session" (the session expired and
 * must be initialized again). Telling them apart matters: the first stops
 * pinging for good, the second must not. */
#include <cjson/cJSON.h>

#include "internal.h"

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
