/* The one writer of an answer mcpping makes under a request's id: a ping
 * no stream carries, a request nobody serves (answer.c), an HTTP error or
 * an unreadable answer (http_classify.c). The id is echoed byte for byte:
 * ids can exceed a double's precision. */
#include <string.h>

#include "internal.h"
#include "scan.h"

static void put(char *out, size_t cap, size_t *at, const char *p, size_t n) {
  if (*at < cap) memcpy(out + *at, p, n < cap - *at ? n : cap - *at);
  *at += n;
}

size_t mcpp__error_answer(const char *frame, size_t frame_len, const char *error,
                          size_t error_len, char *out, size_t cap) {
  mcpp__msg sent;
  if (frame == NULL || mcpp__scan_message(frame, frame_len, &sent) != 0 || sent.id.p == NULL ||
      sent.method.p == NULL || mcpp__span_is(sent.id, "null") || !mcpp__json_strict(frame, frame_len))
    return 0;
  static const char head[] = "{\"jsonrpc\":\"2.0\",\"id\":";
  static const char mid[] = ",\"error\":";
  size_t at = 0;
  put(out, cap, &at, head, sizeof head - 1);
  put(out, cap, &at, sent.id.p, sent.id.n);
  put(out, cap, &at, mid, sizeof mid - 1);
  put(out, cap, &at, error, error_len);
  put(out, cap, &at, "}", 1);
  if (cap) out[at < cap ? at : cap - 1] = '\0';
  return at;
}
