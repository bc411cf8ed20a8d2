/* See text.h. */
#include "app/text.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void mcpp__text_put(mcpp__text *t, const char *s, size_t n) {
  if (t->oom) return;
  if (t->len + n + 1 > t->cap) {
    size_t cap = t->cap ? t->cap : 256;
    while (cap < t->len + n + 1) cap *= 2;
    char *p = realloc(t->p, cap);
    if (!p) {
      t->oom = 1;
      return;
    }
    t->p = p;
    t->cap = cap;
  }
  memcpy(t->p + t->len, s, n);
  t->len += n;
  t->p[t->len] = '\0';
}

void mcpp__text_puts(mcpp__text *t, const char *s) { mcpp__text_put(t, s, strlen(s)); }

void mcpp__text_printf(mcpp__text *t, const char *fmt, ...) {
  char small[256];
  va_list ap;
  va_start(ap, fmt);
  int n = vsnprintf(small, sizeof small, fmt, ap);
  va_end(ap);
  if (n < 0) return;
  if ((size_t)n < sizeof small) {
    mcpp__text_put(t, small, (size_t)n);
    return;
  }
  char *big = malloc((size_t)n + 1);
  if (!big) {
    t->oom = 1;
    return;
  }
  va_start(ap, fmt);
  vsnprintf(big, (size_t)n + 1, fmt, ap);
  va_end(ap);
  mcpp__text_put(t, big, (size_t)n);
  free(big);
}

void mcpp__text_json_string(mcpp__text *t, const char *s) {
  if (!s) {
    mcpp__text_puts(t, "null");
    return;
  }
  mcpp__text_put(t, "\"", 1);
  for (; *s; s++) {
    unsigned char c = (unsigned char)*s;
    switch (c) {
    case '"': mcpp__text_puts(t, "\\\""); break;
    case '\\': mcpp__text_puts(t, "\\\\"); break;
    case '\b': mcpp__text_puts(t, "\\b"); break;
    case '\f': mcpp__text_puts(t, "\\f"); break;
    case '\n': mcpp__text_puts(t, "\\n"); break;
    case '\r': mcpp__text_puts(t, "\\r"); break;
    case '\t': mcpp__text_puts(t, "\\t"); break;
    default:
      if (c < 0x20) mcpp__text_printf(t, "\\u%04x", c);
      else mcpp__text_put(t, s, 1);
    }
  }
  mcpp__text_put(t, "\"", 1);
}

void mcpp__text_repr(char *out, size_t cap, double x) {
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

void mcpp__text_py_float(mcpp__text *t, double d) {
  if (!isfinite(d)) {
    mcpp__text_puts(t, "null");
    return;
  }
  char num[40];
  mcpp__text_repr(num, sizeof num, d);
  mcpp__text_puts(t, num);
}

char *mcpp__text_take(mcpp__text *t) {
  if (t->oom) {
    free(t->p);
    return NULL;
  }
  if (!t->p) mcpp__text_put(t, "", 0);
  if (t->oom) return NULL;
  return t->p;
}

void mcpp__text_free(mcpp__text *t) {
  free(t->p);
  memset(t, 0, sizeof *t);
}
