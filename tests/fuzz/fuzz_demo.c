/*
 * libFuzzer harness for the demo server's answers (app/demo.c): any line
 * gets no answer or one that is strict JSON on one line (no NUL in it), a
 * JSON-RPC 2.0 response; the answer to a request carries its id byte for
 * byte.
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
  /* An exact-size copy, so ASan catches any read past the end. */
  char *buf = malloc(size ? size : 1);
  CHECK(buf);
  memcpy(buf, data, size);
  char *out = mcpp_demo_answer(buf, size);
  if (out != NULL) {
    size_t n = strlen(out);
    CHECK(memchr(out, '\n', n) == NULL);
    mcpp__msg msg;
    CHECK(mcpp__scan_message(out, n, &msg) == 0);
    CHECK(msg.id.p != NULL && (msg.result.p != NULL) != (msg.error.p != NULL));
    mcpp__msg in;
    /* A request's id comes back as it was written (a parse error or an
     * id that is no string or number: null). */
    if (msg.error.p == NULL || !mcpp__span_is(msg.id, "null"))
      CHECK(mcpp__scan_message(buf, size, &in) == 0 && in.id.n == msg.id.n &&
            memcmp(in.id.p, msg.id.p, in.id.n) == 0);
    CHECK(mcpp__json_strict(out, n));
    mcpp_config_free(out);
  }
  free(buf);
  return 0;
}
