/* What the answer to a POST gives the engine once its body is read: the
 * one order of C's rules on it (a session's end, the server's error, a
 * body past the bound, a body that is no JSON, the message itself), so
 * both HTTP clients deliver the same thing for the same answer. */
#include <string.h>

#include "internal.h"

static int json_space(char c) {
  return c == ' ' || c == '\t' || c == '\n' || c == '\r';
}

/* The answer made into out (snprintf's return in *msg_len): MESSAGE with
 * *msg = out if it fit, NULL if not (the caller asks again, bigger). */
static mcpp_http_post_step made(size_t n, char *out, size_t cap, const char **msg,
                                size_t *msg_len) {
  if (n == 0) return MCPP_HTTP_POST_NOTHING;
  *msg_len = n;
  *msg = n < cap ? out : NULL;
  return MCPP_HTTP_POST_MESSAGE;
}

mcpp_http_post_step mcpp_http_post_answer(mcpp_http_body kind, int status,
                                          const char *content_type,
                                          const char *body, size_t len,
                                          int whole, size_t limit,
                                          const char *frame, size_t frame_len,
                                          int had_session, const char **msg,
                                          size_t *msg_len, char *out,
                                          size_t cap) {
  *msg = NULL;
  *msg_len = 0;
  if (body == NULL) len = 0;
  switch (kind) {
    case MCPP_HTTP_BODY_ERROR:
      if (!whole) len = 0; /* past the bound: judged by its status alone */
      if (mcpp_http_classify(status, body, len, frame, frame_len, had_session) ==
          MCPP_HTTP_SESSION_EXPIRED)
        return MCPP_HTTP_POST_EXPIRED;
      return made(mcpp_http_error_answer(status, body, len, frame, frame_len, out, cap),
                  out, cap, msg, msg_len);
    case MCPP_HTTP_BODY_JSON: {
      /* An answer without end: cut at the bound, the request told now. */
      if (!whole)
        return made(mcpp_http_oversize_answer(limit, frame, frame_len, out, cap), out,
                    cap, msg, msg_len);
      /* JSON's white space only: a byte order mark is no JSON. */
      while (len && json_space(body[0])) body++, len--;
      while (len && json_space(body[len - 1])) len--;
      if (len == 0) return MCPP_HTTP_POST_NOTHING;
      /* No JSON (a web page): the request is told so now, not at its
       * deadline; the engine refuses what is no message anyway. */
      size_t n = mcpp_http_unreadable_answer(status, content_type, body, len, frame,
                                             frame_len, out, cap);
      if (n) return made(n, out, cap, msg, msg_len);
      *msg = body;
      *msg_len = len;
      return MCPP_HTTP_POST_MESSAGE;
    }
    default: /* SSE is read as a stream; NONE says nothing */
      return MCPP_HTTP_POST_NOTHING;
  }
}

const char *mcpp_http_post_step_name(mcpp_http_post_step step) {
  switch (step) {
    case MCPP_HTTP_POST_MESSAGE: return "message";
    case MCPP_HTTP_POST_EXPIRED: return "expired";
    default: return "nothing";
  }
}
