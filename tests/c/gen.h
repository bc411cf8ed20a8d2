/*
 * A tiny deterministic generator for hostile-input tests: a seeded
 * splitmix64 stream, a growable byte buffer, and generators of JSON text
 * (valid values of every shape, with escapes, unicode and whitespace) and
 * of corruptions of it. Same seed, same bytes, on every platform.
 */
#ifndef MCPP_TEST_GEN_H
#define MCPP_TEST_GEN_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct grng {
  uint64_t s;
} grng;

static inline uint64_t g_next(grng *r) {
  uint64_t z = (r->s += 0x9e3779b97f4a7c15ULL);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

/* Uniform in [0, n); n > 0. */
static inline uint32_t g_below(grng *r, uint32_t n) {
  return (uint32_t)(g_next(r) % n);
}

static inline int g_chance(grng *r, unsigned pct) {
  return g_below(r, 100) < pct;
}

typedef struct gbuf {
  char *p;
  size_t n, cap;
} gbuf;

static inline void g_reserve(gbuf *b, size_t extra) {
  if (b->n + extra + 1 <= b->cap) return;
  size_t cap = b->cap ? b->cap : 256;
  while (cap < b->n + extra + 1) cap *= 2;
  char *p = realloc(b->p, cap);
  if (p == NULL) abort();
  b->p = p;
  b->cap = cap;
}

static inline void g_put(gbuf *b, const char *s, size_t n) {
  g_reserve(b, n);
  memcpy(b->p + b->n, s, n);
  b->n += n;
  b->p[b->n] = '\0';
}

static inline void g_puts(gbuf *b, const char *s) { g_put(b, s, strlen(s)); }

static inline void g_putc(gbuf *b, char c) { g_put(b, &c, 1); }

static inline void g_fill(gbuf *b, char c, size_t n) {
  g_reserve(b, n);
  memset(b->p + b->n, c, n);
  b->n += n;
  b->p[b->n] = '\0';
}

static inline void g_printf_u64(gbuf *b, const char *fmt, uint64_t v) {
  char tmp[64];
  int k = snprintf(tmp, sizeof tmp, fmt, (unsigned long long)v);
  g_put(b, tmp, (size_t)k);
}

static inline void g_clear(gbuf *b) {
  b->n = 0;
  if (b->p) b->p[0] = '\0';
}

static inline void g_free(gbuf *b) {
  free(b->p);
  b->p = NULL;
  b->n = b->cap = 0;
}

/* Optional JSON whitespace (including newlines: JSON allows them and a
 * custom transport may deliver pretty-printed frames). */
static inline void g_ws(gbuf *b, grng *r) {
  if (!g_chance(r, 25)) return;
  static const char ws[] = " \t\r\n";
  for (uint32_t i = 1 + g_below(r, 3); i > 0; i--) g_putc(b, ws[g_below(r, 4)]);
}

/* The body of a JSON string (no quotes): ASCII, every escape, \u escapes
 * (BMP and surrogate pairs) and raw multi-byte UTF-8. */
static inline void g_string_body(gbuf *b, grng *r, uint32_t max_len) {
  uint32_t n = g_below(r, max_len + 1);
  for (uint32_t i = 0; i < n; i++) {
    uint32_t k = g_below(r, 20);
    if (k < 12) {
      g_putc(b, (char)('a' + g_below(r, 26)));
    } else if (k == 12) {
      static const char *esc[] = {"\\\"", "\\\\", "\\/", "\\b",
                                  "\\f",  "\\n",  "\\r", "\\t"};
      g_puts(b, esc[g_below(r, 8)]);
    } else if (k == 13) {
      g_printf_u64(b, "\\u%04llx", g_below(r, 0xd800));
    } else if (k == 14) {
      g_printf_u64(b, "\\u%04llX", 0xd800 + g_below(r, 0x400));
      g_printf_u64(b, "\\u%04llx", 0xdc00 + g_below(r, 0x400));
    } else if (k == 15) {
      static const char *utf8[] = {"\xc3\xa9", "\xe2\x82\xac",
                                   "\xf0\x9f\x98\x80", "\xe4\xb8\xad",
                                   "\xef\xbf\xbd"};
      g_puts(b, utf8[g_below(r, 5)]);
    } else if (k == 16) {
      g_puts(b, g_chance(r, 50) ? "ping" : "method");
    } else {
      g_putc(b, (char)('0' + g_below(r, 10)));
    }
  }
}

static inline void g_string(gbuf *b, grng *r, uint32_t max_len) {
  g_putc(b, '"');
  g_string_body(b, r, max_len);
  g_putc(b, '"');
}

/* A valid JSON number: small, negative, huge, fractional, exponent. */
static inline void g_number(gbuf *b, grng *r) {
  switch (g_below(r, 6)) {
    case 0: g_printf_u64(b, "%llu", g_below(r, 100)); break;
    case 1: g_printf_u64(b, "-%llu", 1 + g_below(r, 100000)); break;
    case 2: /* beyond 64 bits */
      g_putc(b, (char)('1' + g_below(r, 9)));
      for (uint32_t i = 19 + g_below(r, 20); i > 0; i--)
        g_putc(b, (char)('0' + g_below(r, 10)));
      break;
    case 3:
      g_printf_u64(b, "%llu", g_below(r, 1000));
      g_printf_u64(b, ".%llu", g_below(r, 1000));
      break;
    case 4:
      g_printf_u64(b, "%llu", 1 + g_below(r, 9));
      g_puts(b, g_chance(r, 50) ? "e" : "E+");
      g_printf_u64(b, "%llu", g_below(r, 300));
      break;
    default: g_printf_u64(b, "-0.%llue-7", g_below(r, 100)); break;
  }
}

/* A valid JSON value nested up to `depth` more levels; sometimes holds
 * "method":"ping" or "ping" or an "id" key deep inside. */
static inline void g_value(gbuf *b, grng *r, int depth) {
  uint32_t k = g_below(r, depth > 0 ? 9 : 6);
  switch (k) {
    case 0: g_string(b, r, 12); break;
    case 1: g_number(b, r); break;
    case 2: g_puts(b, g_chance(r, 50) ? "true" : "false"); break;
    case 3: g_puts(b, "null"); break;
    case 4: g_puts(b, "\"ping\""); break;
    case 5: g_puts(b, "{\"method\":\"ping\",\"id\":1}"); break;
    case 6:
    case 7: {
      g_putc(b, '{');
      g_ws(b, r);
      uint32_t n = g_below(r, 4);
      for (uint32_t i = 0; i < n; i++) {
        if (i) g_putc(b, ',');
        g_ws(b, r);
        static const char *keys[] = {"\"method\"", "\"id\"", "\"result\"",
                                     "\"x\"", "\"_meta\"", "\"\\u0069d\""};
        if (g_chance(r, 60))
          g_puts(b, keys[g_below(r, 6)]);
        else
          g_string(b, r, 6);
        g_ws(b, r);
        g_putc(b, ':');
        g_ws(b, r);
        g_value(b, r, depth - 1);
        g_ws(b, r);
      }
      g_putc(b, '}');
      break;
    }
    default: {
      g_putc(b, '[');
      uint32_t n = g_below(r, 4);
      for (uint32_t i = 0; i < n; i++) {
        if (i) g_putc(b, ',');
        g_ws(b, r);
        g_value(b, r, depth - 1);
        g_ws(b, r);
      }
      g_putc(b, ']');
      break;
    }
  }
}

/* Corrupts b in place: byte flips, NULs, invalid UTF-8, a cut, a bracket
 * added or dropped. */
static inline void g_corrupt(gbuf *b, grng *r) {
  uint32_t kind = g_below(r, 7);
  if (b->n == 0) {
    g_putc(b, '{');
    return;
  }
  size_t at = g_below(r, (uint32_t)b->n);
  switch (kind) {
    case 0: b->p[at] ^= (char)(1u << g_below(r, 8)); break;
    case 1: b->p[at] = (char)g_below(r, 256); break;
    case 2: b->p[at] = '\0'; break;
    case 3: { /* invalid UTF-8 */
      static const char *bad[] = {"\xff", "\xc0\xaf", "\xed\xa0\x80", "\x80",
                                  "\xe2\x82", "\xf4\x90\x80\x80"};
      const char *s = bad[g_below(r, 6)];
      size_t k = strlen(s);
      g_reserve(b, k);
      memmove(b->p + at + k, b->p + at, b->n - at);
      memcpy(b->p + at, s, k);
      b->n += k;
      b->p[b->n] = '\0';
      break;
    }
    case 4: b->n = at; b->p[at] = '\0'; break; /* truncated */
    case 5: { /* an extra bracket */
      static const char br[] = "{}[]\"";
      g_reserve(b, 1);
      memmove(b->p + at + 1, b->p + at, b->n - at);
      b->p[at] = br[g_below(r, 5)];
      b->n++;
      b->p[b->n] = '\0';
      break;
    }
    default: /* a byte dropped */
      memmove(b->p + at, b->p + at + 1, b->n - at - 1);
      b->n--;
      b->p[b->n] = '\0';
      break;
  }
}

#endif
