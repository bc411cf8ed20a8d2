/* The command's text helpers (cli_text.h). */
#include "app/cli_text.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void mcpp__cli_put(mcpp__cli_buf *b, const char *s, size_t n) {
  if (b->failed) return;
  if (b->len + n + 1 > b->cap) {
    size_t cap = b->cap ? b->cap : 256;
    while (cap < b->len + n + 1) cap *= 2;
    char *grown = realloc(b->data, cap);
    if (!grown) {
      b->failed = 1;
      return;
    }
    b->data = grown;
    b->cap = cap;
  }
  memcpy(b->data + b->len, s, n);
  b->len += n;
  b->data[b->len] = 0;
}

void mcpp__cli_printf(mcpp__cli_buf *b, const char *fmt, ...) {
  char small[512];
  va_list ap;
  va_start(ap, fmt);
  int n = vsnprintf(small, sizeof small, fmt, ap);
  va_end(ap);
  if (n < 0) return;
  if ((size_t)n < sizeof small) {
    mcpp__cli_put(b, small, (size_t)n);
    return;
  }
  char *big = malloc((size_t)n + 1);
  if (!big) {
    b->failed = 1;
    return;
  }
  va_start(ap, fmt);
  vsnprintf(big, (size_t)n + 1, fmt, ap);
  va_end(ap);
  mcpp__cli_put(b, big, (size_t)n);
  free(big);
}

void mcpp__cli_json_str(mcpp__cli_buf *b, const char *s) {
  if (!s) {
    mcpp__cli_put(b, "null", 4);
    return;
  }
  mcpp__cli_put(b, "\"", 1);
  for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
    char esc[8];
    switch (*p) {
      case '"': mcpp__cli_put(b, "\\\"", 2); break;
      case '\\': mcpp__cli_put(b, "\\\\", 2); break;
      case '\n': mcpp__cli_put(b, "\\n", 2); break;
      case '\r': mcpp__cli_put(b, "\\r", 2); break;
      case '\t': mcpp__cli_put(b, "\\t", 2); break;
      case '\b': mcpp__cli_put(b, "\\b", 2); break;
      case '\f': mcpp__cli_put(b, "\\f", 2); break;
      default:
        if (*p < 0x20) {
          snprintf(esc, sizeof esc, "\\u%04x", *p);
          mcpp__cli_put(b, esc, 6);
        } else {
          mcpp__cli_put(b, (const char *)p, 1);
        }
    }
  }
  mcpp__cli_put(b, "\"", 1);
}

void mcpp__cli_repr(char *out, size_t cap, double x) {
  if (isnan(x)) {
    snprintf(out, cap, "nan");
    return;
  }
  if (isinf(x)) {
    snprintf(out, cap, x > 0 ? "inf" : "-inf");
    return;
  }
  if (x == 0) {
    snprintf(out, cap, signbit(x) ? "-0.0" : "0.0");
    return;
  }
  /* The fewest significant digits that read back as x. */
  char e[40];
  int digits = 1;
  for (; digits <= 17; digits++) {
    snprintf(e, sizeof e, "%.*e", digits - 1, x);
    if (strtod(e, NULL) == x) break;
  }
  int exp = atoi(strchr(e, 'e') + 1);
  if (exp < -4 || exp >= 16) {
    /* Python's exponent form: 1e-05, 1.5e+16. */
    char mant[32];
    snprintf(mant, sizeof mant, "%.*s", (int)(strchr(e, 'e') - e), e);
    snprintf(out, cap, "%se%c%02d", mant, exp < 0 ? '-' : '+', abs(exp));
    return;
  }
  int decimals = digits - 1 - exp;
  if (decimals < 1) decimals = 1;
  snprintf(out, cap, "%.*f", decimals, x);
  /* %.*f may pad with a zero the digits did not need: 0.10 -> 0.1. */
  size_t n = strlen(out);
  while (n > 2 && out[n - 1] == '0' && out[n - 2] != '.') out[--n] = 0;
}

void mcpp__cli_json_float(mcpp__cli_buf *b, double x) {
  if (!isfinite(x)) {
    mcpp__cli_put(b, "null", 4);
    return;
  }
  char t[40];
  mcpp__cli_repr(t, sizeof t, x);
  mcpp__cli_put(b, t, strlen(t));
}

void mcpp__cli_buf_free(mcpp__cli_buf *b) {
  free(b->data);
  memset(b, 0, sizeof *b);
}
