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

void mcpp__text_py_float(mcpp__text *t, double d) {
  if (!isfinite(d)) {
    mcpp__text_puts(t, "null");
    return;
  }
  if (d == floor(d) && fabs(d) < 1e16) {
    mcpp__text_printf(t, "%.1f", d);
    return;
  }
  char num[32];
  for (int prec = 1; prec <= 17; prec++) {
    snprintf(num, sizeof num, "%.*g", prec, d);
    if (strtod(num, NULL) == d) break;
  }
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
