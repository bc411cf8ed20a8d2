/*
 * libFuzzer harness for mcpp_http_error_answer (http_classify.c): what a
 * request gets when its HTTP POST meets an error status. The input is a
 * status byte, then the POSTed frame and the answer's body split at the
 * first NUL. Whatever comes out is strict JSON, is one object whose id is
 * the frame's id byte for byte and whose error is an object, and reports
 * its whole length even when the buffer is too short. The same bytes are
 * read as a Content-Type (mcpp_http_body_kind) and the frame as one met by
 * an expired session (mcpp_http_resends, http_client.c), and the body
 * as a 2xx answer that may not be JSON (mcpp_http_unreadable_answer), and
 * as every kind of answer to the POST (mcpp_http_post_answer): a message
 * is strict JSON, the body's own bytes or an answer C made, sized alike.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "mcpping.h"
#include "engine/scan.h"

#define CHECK(cond) \
  do {              \
    if (!(cond)) abort(); \
  } while (0)

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (size < 1) return 0;
  int status = 400 + data[0];
  const uint8_t *rest = data + 1, *nul = memchr(rest, 0, size - 1);
  size_t frame_len = nul ? (size_t)(nul - rest) : size - 1;
  size_t body_len = nul ? size - 2 - frame_len : 0;
  /* Exact-size copies, so ASan catches any read past the end. */
  char *frame = malloc(frame_len ? frame_len : 1), *body = malloc(body_len ? body_len : 1);
  CHECK(frame && body);
  memcpy(frame, rest, frame_len);
  if (body_len) memcpy(body, nul + 1, body_len);
  char small[16];
  size_t need = mcpp_http_error_answer(status, body, body_len, frame, frame_len, small,
                                       sizeof small);
  if (need) {
    char *out = malloc(need + 1);
    CHECK(out);
    CHECK(mcpp_http_error_answer(status, body, body_len, frame, frame_len, out, need + 1) ==
          need);
    CHECK(strlen(out) == need && mcpp__json_strict(out, need));
    CHECK(need < sizeof small ? strcmp(small, out) == 0 : memcmp(small, out, sizeof small - 1) == 0);
    mcpp__msg got, sent;
    CHECK(mcpp__scan_message(out, need, &got) == 0 && got.error.p && got.error.p[0] == '{');
    CHECK(mcpp__scan_message(frame, frame_len, &sent) == 0);
    CHECK(got.id.n == sent.id.n && memcmp(got.id.p, sent.id.p, sent.id.n) == 0);
    free(out);
  }
  /* The body as a Content-Type: an event stream is only ever a 2xx one
   * that names it; a resent frame is one that scans as a request. */
  char *type = malloc(body_len + 1);
  CHECK(type);
  memcpy(type, body, body_len);
  type[body_len] = '\0';
  mcpp_http_body kind = mcpp_http_body_kind((mcpp_http_method)(data[0] % 3), 200 + data[0] % 8, type);
  CHECK(kind >= MCPP_HTTP_BODY_SSE && kind <= MCPP_HTTP_BODY_ERROR);
  CHECK(kind != MCPP_HTTP_BODY_SSE || strcasestr(type, "text/event-stream") != NULL);
  mcpp__msg scanned;
  CHECK(!mcpp_http_resends(frame, frame_len) ||
        (mcpp__scan_message(frame, frame_len, &scanned) == 0 && scanned.id.p != NULL));
  /* The body as a 2xx answer read as JSON, its Content-Type the body's
   * text: an answer made only for a body that is not JSON, strict JSON
   * itself under the request's id. */
  size_t made = mcpp_http_unreadable_answer(200, type, body, body_len, frame, frame_len, small,
                                            sizeof small);
  if (made) {
    char *out = malloc(made + 1);
    CHECK(out && !mcpp__json_strict(body, body_len));
    CHECK(mcpp_http_unreadable_answer(200, type, body, body_len, frame, frame_len, out,
                                      made + 1) == made);
    CHECK(strlen(out) == made && mcpp__json_strict(out, made));
    mcpp__msg got, sent;
    CHECK(mcpp__scan_message(out, made, &got) == 0 && got.error.p);
    CHECK(mcpp__scan_message(frame, frame_len, &sent) == 0);
    CHECK(got.id.n == sent.id.n && memcmp(got.id.p, sent.id.p, sent.id.n) == 0);
    free(out);
  }
  /* Every kind of answer, whole or cut at the bound. */
  for (int k = MCPP_HTTP_BODY_SSE; k <= MCPP_HTTP_BODY_ERROR; k++) {
    const char *msg;
    size_t n;
    int whole = data[0] & 1;
    mcpp_http_post_step step = mcpp_http_post_answer(
        (mcpp_http_body)k, (k == MCPP_HTTP_BODY_ERROR ? 400 : 200) + data[0] % 8, type, body,
        body_len, whole, 1000, frame, frame_len, data[0] & 2, &msg, &n, small, sizeof small);
    CHECK(step == MCPP_HTTP_POST_NOTHING || step == MCPP_HTTP_POST_MESSAGE ||
          step == MCPP_HTTP_POST_EXPIRED);
    CHECK(step == MCPP_HTTP_POST_MESSAGE ? n > 0 : msg == NULL && n == 0);
    if (step != MCPP_HTTP_POST_MESSAGE) continue;
    char *out = malloc(n + 1);
    CHECK(out);
    if (msg == NULL) {
      CHECK(n >= sizeof small);
      CHECK(mcpp_http_post_answer((mcpp_http_body)k, (k == MCPP_HTTP_BODY_ERROR ? 400 : 200) +
                                  data[0] % 8, type, body, body_len, whole, 1000, frame,
                                  frame_len, data[0] & 2, &msg, &n, out, n + 1) == step);
      CHECK(msg == out && strlen(out) == n);
    }
    /* The body's own bytes (a JSON answer) or an answer C made. */
    CHECK((msg >= body && msg + n <= body + body_len) || mcpp__json_strict(msg, n));
    CHECK(msg < body || msg >= body + body_len || (n && msg[0] != ' ' && msg[n - 1] != '\n'));
    free(out);
  }
  free(type);
  free(frame);
  free(body);
  return 0;
}
