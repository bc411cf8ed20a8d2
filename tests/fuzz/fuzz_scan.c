/*
 * libFuzzer harness for the frame classifier's scanner (scan.c), checked
 * against cJSON: every strict JSON object scans, and the scanner finds
 * exactly the members cJSON finds, with the same values (frames.c relies
 * on it: strict text without \u escapes is a pong cJSON would accept, so
 * it decides one without a parse). Inputs that go
 * where cJSON itself differs from JSON (unpaired surrogate escapes, which
 * it refuses; \u0000 in keys, which it truncates) are only run, not
 * compared. The -32601 answer a request nobody serves gets
 * (mcpp_unserved_request_answer) is strict JSON whenever its request was,
 * and carries the request's id byte for byte. The sentence that shows a
 * line which is not JSON-RPC (mcpp_unreadable_text) is, for any line,
 * strict UTF-8 with no control character, and whole or cut as snprintf
 * would cut it.
 */
#include <cjson/cJSON.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "engine/scan.h"
#include "mcpping.h"

#define CHECK(cond) \
  do {              \
    if (!(cond)) abort(); \
  } while (0)

static int inside(mcpp__span s, const char *buf, size_t len) {
  return s.p == NULL || (s.p >= buf && s.n > 0 && s.p + s.n <= buf + len);
}

static int has_unicode_escape(const char *buf, size_t len) {
  for (size_t i = 0; i + 1 < len; i++)
    if (buf[i] == '\\' && buf[i + 1] == 'u') return 1;
  return 0;
}

static int starts_object(const char *buf, size_t len) {
  size_t i = 0;
  while (i < len && strchr(" \t\r\n", buf[i]) && buf[i]) i++;
  return i < len && buf[i] == '{';
}

/* The span's value, parsed alone, equals what cJSON found in the tree.
 * Compared as printed, since cJSON_Compare never finds an overflowing
 * number (1e999, inf) equal to itself. */
static void same_value(mcpp__span s, const cJSON *item) {
  cJSON *alone = cJSON_ParseWithLength(s.p, s.n);
  CHECK(alone != NULL);
  char *a = cJSON_PrintUnformatted(alone), *b = cJSON_PrintUnformatted(item);
  CHECK(a && b && strcmp(a, b) == 0);
  cJSON_free(a);
  cJSON_free(b);
  cJSON_Delete(alone);
}

static void check_unreadable_text(const char *line, size_t size) {
  char text[1024];
  /* The line as both kinds: a line that is not JSON-RPC, and a tail. */
  mcpp_unreadable what = {1, line, size, size, line, size};
  size_t n = mcpp_unreadable_text("the server", &what, text, sizeof text);
  CHECK(n > 0 && n < sizeof text && strlen(text) == n);
  for (size_t i = 0; i < n; i++) CHECK((unsigned char)text[i] >= 0x20 && text[i] != 0x7f);
  /* Strict UTF-8: the text, quoted as a JSON string, is strict JSON. */
  char as_json[2100]; /* every byte of text doubled at most, and quotes */
  size_t k = 0;
  as_json[k++] = '"';
  for (size_t i = 0; i < n; i++) {
    if (text[i] == '"' || text[i] == '\\') as_json[k++] = '\\';
    as_json[k++] = text[i];
  }
  as_json[k++] = '"';
  CHECK(mcpp__json_strict(as_json, k));
  char small[24];
  CHECK(mcpp_unreadable_text("the server", &what, small, sizeof small) == n);
  CHECK(strlen(small) == sizeof small - 1 && memcmp(small, text, sizeof small - 1) == 0);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  /* An exact-size copy, so ASan catches any read past the end. */
  char *buf = malloc(size ? size : 1);
  CHECK(buf);
  memcpy(buf, data, size);

  mcpp__msg m;
  int rc = mcpp__scan_message(buf, size, &m);
  CHECK(rc == 0 || rc == -1);
  mcpp__span spans[5] = {m.id, m.method, m.result, m.error, m.params};
  static const char *const names[5] = {"id", "method", "result", "error",
                                       "params"};
  if (rc == 0)
    for (int i = 0; i < 5; i++) CHECK(inside(spans[i], buf, size));

  int strict = mcpp__json_strict(buf, size);
  if (strict) CHECK(rc == (starts_object(buf, size) ? 0 : -1));

  if (strict && !has_unicode_escape(buf, size)) {
    cJSON *root = cJSON_ParseWithLength(buf, size);
    CHECK(root != NULL);
    if (rc == 0) {
      CHECK(cJSON_IsObject(root));
      for (int i = 0; i < 5; i++) {
        const cJSON *item = cJSON_GetObjectItemCaseSensitive(root, names[i]);
        CHECK((item != NULL) == (spans[i].p != NULL));
        if (item) same_value(spans[i], item);
      }
    }
    cJSON_Delete(root);
  }

  size_t n = mcpp_unserved_request_answer(buf, size, NULL, 0);
  CHECK(n == 0 || (rc == 0 && m.id.p != NULL && m.method.p != NULL));
  if (n > 0) {
    char *answer = malloc(n + 1);
    CHECK(answer);
    CHECK(mcpp_unserved_request_answer(buf, size, answer, n + 1) == n);
    CHECK(strlen(answer) == n && memmem(answer, n, m.id.p, m.id.n) != NULL);
    if (strict) CHECK(mcpp__json_strict(answer, n));
    free(answer);
  }
  check_unreadable_text(buf, size);
  free(buf);
  return 0;
}
