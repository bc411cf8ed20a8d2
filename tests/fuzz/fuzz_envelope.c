/*
 * libFuzzer harness for the 2026-07-28 request envelope (client_hs.c):
 * it splices text in and never re-prints. Whatever comes out is the input
 * with one run of bytes inserted, is strict JSON, carries the three
 * envelope keys in params._meta, and is a fixed point (enveloping it again
 * adds nothing). Anything enveloped was strict JSON to begin with.
 */
#include <cjson/cJSON.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "mcpping.h"
#include "engine/scan.h"

#define CHECK(cond) \
  do {              \
    if (!(cond)) abort(); \
  } while (0)

static int has_unicode_escape(const char *buf, size_t len) {
  for (size_t i = 0; i + 1 < len; i++)
    if (buf[i] == '\\' && buf[i + 1] == 'u') return 1;
  return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  /* An exact-size copy, so ASan catches any read past the end. */
  char *buf = malloc(size ? size : 1);
  CHECK(buf);
  memcpy(buf, data, size);
  size_t n = 0;
  char *out = mcpp_client_envelope(buf, size, &n);
  if (out == NULL) {
    free(buf);
    return 0;
  }
  CHECK(mcpp__json_strict(buf, size));
  CHECK(n >= size && strlen(out) == n);
  /* One insertion: the common prefix and suffix cover the whole input. */
  size_t pre = 0, suf = 0;
  while (pre < size && out[pre] == buf[pre]) pre++;
  while (suf < size - pre && out[n - 1 - suf] == buf[size - 1 - suf]) suf++;
  CHECK(pre + suf == size);
  CHECK(mcpp__json_strict(out, n));
  if (!has_unicode_escape(out, n)) {
    cJSON *m = cJSON_ParseWithLength(out, n);
    CHECK(m != NULL);
    cJSON *meta = cJSON_GetObjectItemCaseSensitive(
        cJSON_GetObjectItemCaseSensitive(m, "params"), "_meta");
    CHECK(cJSON_IsObject(meta));
    CHECK(cJSON_HasObjectItem(meta, "io.modelcontextprotocol/protocolVersion"));
    CHECK(cJSON_HasObjectItem(meta, "io.modelcontextprotocol/clientInfo"));
    CHECK(cJSON_HasObjectItem(meta,
                              "io.modelcontextprotocol/clientCapabilities"));
    cJSON_Delete(m);
  }
  size_t n2 = 0;
  char *again = mcpp_client_envelope(out, n, &n2);
  CHECK(again != NULL && n2 == n && memcmp(again, out, n) == 0);
  free(again);
  free(out);
  free(buf);
  return 0;
}
