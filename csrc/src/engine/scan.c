/* The top-level JSON object scanner (see scan.h). */
#include "scan.h"

#include <string.h>

/* Brackets deeper than this make the frame "not ours": real MCP messages
 * nest a few levels, and a bound keeps the bracket stack on the stack. */
#define MAX_DEPTH 512

static const char *skip_ws(const char *p, const char *end) {
  while (p < end && (*p == ' ' || *p == '\t' || *p == '\n' || *p == '\r')) p++;
  return p;
}

/* p points at an opening quote; returns the byte after the closing one. A
 * quote preceded by an odd run of backslashes is escaped. */
static const char *skip_string(const char *p, const char *end) {
  const char *start = ++p;
  for (;;) {
    const char *q = memchr(p, '"', (size_t)(end - p));
    if (q == NULL) return NULL;
    size_t bs = 0;
    while (q - bs > start && q[-1 - (ptrdiff_t)bs] == '\\') bs++;
    if ((bs & 1) == 0) return q + 1;
    p = q + 1;
  }
}

static int is_scalar_char(char c) {
  return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') ||
         (c >= 'A' && c <= 'Z') || c == '-' || c == '+' || c == '.';
}

static const char *skip_scalar(const char *p, const char *end) {
  const char *start = p;
  while (p < end && is_scalar_char(*p)) p++;
  return p == start ? NULL : p;
}

/* Skips a nested array or object, checking that brackets pair up. */
static const char *skip_nested(const char *p, const char *end) {
  char stack[MAX_DEPTH];
  size_t depth = 0;
  while (p < end) {
    char c = *p;
    if (c == '"') {
      p = skip_string(p, end);
      if (p == NULL) return NULL;
      continue;
    }
    if (c == '{' || c == '[') {
      if (depth == MAX_DEPTH) return NULL;
      stack[depth++] = c == '{' ? '}' : ']';
    } else if (c == '}' || c == ']') {
      if (depth == 0 || stack[depth - 1] != c) return NULL;
      if (--depth == 0) return p + 1;
    }
    p++;
  }
  return NULL;
}

/* Compares a raw key with an ASCII name by value: every JSON parser reads
 * "\u0069d" as "id", so a frame that spells a key with escapes must not
 * hide it (or a duplicate of it) from the classifier. */
static int key_is(const char *k, size_t n, const char *name) {
  static const char from[] = "\"\\/bfnrt", to[] = "\"\\/\b\f\n\r\t";
  size_t i = 0;
  for (; *name; name++) {
    if (i >= n) return 0;
    unsigned c = (unsigned char)k[i];
    if (c == '\\') {
      if (i + 1 >= n) return 0;
      char x = k[i + 1];
      if (x == 'u') {
        if (n - i < 6) return 0;
        c = 0;
        for (size_t j = i + 2; j < i + 6; j++) {
          char h = k[j];
          unsigned d = h >= '0' && h <= '9'   ? (unsigned)(h - '0')
                       : h >= 'a' && h <= 'f' ? (unsigned)(h - 'a' + 10)
                       : h >= 'A' && h <= 'F' ? (unsigned)(h - 'A' + 10)
                                              : 16u;
          if (d == 16) return 0;
          c = c << 4 | d;
        }
        i += 6;
      } else {
        const char *s = x ? strchr(from, x) : NULL;
        if (s == NULL) return 0;
        c = (unsigned char)to[s - from];
        i += 2;
      }
    } else {
      i++;
    }
    if (c != (unsigned char)*name) return 0;
  }
  return i == n;
}

static const char *skip_value(const char *p, const char *end) {
  if (p >= end) return NULL;
  if (*p == '"') return skip_string(p, end);
  if (*p == '{' || *p == '[') return skip_nested(p, end);
  return skip_scalar(p, end);
}

int mcpp__scan_object(const char *buf, size_t len, const char *const *names,
                      size_t count, mcpp__span *spans, int *dup) {
  const char *p = buf, *end = buf + len;
  for (size_t i = 0; i < count; i++) spans[i].p = NULL, spans[i].n = 0;
  if (dup) *dup = 0;
  if (buf == NULL) return -1;
  p = skip_ws(p, end);
  if (p == end || *p != '{') return -1;
  p = skip_ws(p + 1, end);
  if (p < end && *p == '}') return skip_ws(p + 1, end) == end ? 0 : -1;
  for (;;) {
    if (p == end || *p != '"') return -1;
    const char *key = p + 1;
    p = skip_string(p, end);
    if (p == NULL) return -1;
    size_t key_len = (size_t)(p - 1 - key);
    p = skip_ws(p, end);
    if (p == end || *p != ':') return -1;
    p = skip_ws(p + 1, end);
    const char *value = p;
    p = skip_value(p, end);
    if (p == NULL) return -1;
    for (size_t i = 0; i < count; i++) {
      if (!key_is(key, key_len, names[i])) continue;
      if (spans[i].p) {
        if (dup) *dup = 1;
      } else {
        spans[i].p = value;
        spans[i].n = (size_t)(p - value);
      }
      break;
    }
    p = skip_ws(p, end);
    if (p == end) return -1;
    if (*p == '}') return skip_ws(p + 1, end) == end ? 0 : -1;
    if (*p != ',') return -1;
    p = skip_ws(p + 1, end);
  }
}

/* ------------------------------------------------ strict validation */

/* Length of the valid UTF-8 sequence at p (RFC 3629: no overlongs, no
 * surrogates, nothing past U+10FFFF), or 0. */
static size_t utf8_len(const unsigned char *p, const unsigned char *end) {
  unsigned c = p[0], lo = 0x80, hi = 0xbf;
  size_t n;
  if (c < 0x80) return 1;
  if (c >= 0xc2 && c <= 0xdf) n = 2;
  else if (c == 0xe0) n = 3, lo = 0xa0;
  else if (c == 0xed) n = 3, hi = 0x9f;
  else if (c >= 0xe1 && c <= 0xef) n = 3;
  else if (c == 0xf0) n = 4, lo = 0x90;
  else if (c >= 0xf1 && c <= 0xf3) n = 4;
  else if (c == 0xf4) n = 4, hi = 0x8f;
  else return 0;
  if ((size_t)(end - p) < n || p[1] < lo || p[1] > hi) return 0;
  for (size_t i = 2; i < n; i++)
    if (p[i] < 0x80 || p[i] > 0xbf) return 0;
  return n;
}

static int is_hex(char c) {
  return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') ||
         (c >= 'A' && c <= 'F');
}

static const char *strict_string(const char *p, const char *end) {
  for (p++; p < end;) {
    unsigned char c = (unsigned char)*p;
    if (c == '"') return p + 1;
    if (c < 0x20) return NULL;
    if (c == '\\') {
      if (end - p < 2) return NULL;
      if (p[1] == 'u') {
        if (end - p < 6 || !is_hex(p[2]) || !is_hex(p[3]) || !is_hex(p[4]) ||
            !is_hex(p[5]))
          return NULL;
        p += 6;
      } else if (p[1] && strchr("\"\\/bfnrt", p[1])) {
        p += 2;
      } else {
        return NULL;
      }
      continue;
    }
    size_t k = utf8_len((const unsigned char *)p, (const unsigned char *)end);
    if (k == 0) return NULL;
    p += k;
  }
  return NULL;
}

static int is_digit_at(const char *p, const char *end) {
  return p < end && *p >= '0' && *p <= '9';
}

static const char *strict_number(const char *p, const char *end) {
  if (p < end && *p == '-') p++;
  if (!is_digit_at(p, end)) return NULL;
  if (*p == '0') p++;
  else while (is_digit_at(p, end)) p++;
  if (p < end && *p == '.') {
    if (!is_digit_at(++p, end)) return NULL;
    while (is_digit_at(p, end)) p++;
  }
  if (p < end && (*p == 'e' || *p == 'E')) {
    p++;
    if (p < end && (*p == '+' || *p == '-')) p++;
    if (!is_digit_at(p, end)) return NULL;
    while (is_digit_at(p, end)) p++;
  }
  return p;
}

static const char *strict_scalar(const char *p, const char *end) {
  static const char *const lits[] = {"true", "false", "null"};
  if (*p == '"') return strict_string(p, end);
  if (*p == '-' || (*p >= '0' && *p <= '9')) return strict_number(p, end);
  for (int i = 0; i < 3; i++) {
    size_t k = strlen(lits[i]);
    if ((size_t)(end - p) >= k && memcmp(p, lits[i], k) == 0) return p + k;
  }
  return NULL;
}

/* A key and its colon; returns the byte after the colon's whitespace. */
static const char *strict_key(const char *p, const char *end) {
  if (p == end || *p != '"') return NULL;
  p = strict_string(p, end);
  if (p == NULL) return NULL;
  p = skip_ws(p, end);
  if (p == end || *p != ':') return NULL;
  return skip_ws(p + 1, end);
}

int mcpp__json_strict(const char *buf, size_t len) {
  const char *p = skip_ws(buf, buf + len), *end = buf + len;
  char stack[MAX_DEPTH];
  size_t depth = 0;
  for (;;) {
    if (p == end) return 0;
    if (*p == '{' || *p == '[') {
      if (depth == MAX_DEPTH) return 0;
      char close = *p == '{' ? '}' : ']';
      stack[depth++] = close;
      p = skip_ws(p + 1, end);
      if (p < end && *p == close) {
        depth--;
        p++;
      } else {
        if (close == '}' && (p = strict_key(p, end)) == NULL) return 0;
        continue;
      }
    } else if ((p = strict_scalar(p, end)) == NULL) {
      return 0;
    }
    /* A value ended: close containers or move to the next member. */
    for (;;) {
      p = skip_ws(p, end);
      if (depth == 0) return p == end;
      if (p == end) return 0;
      if (*p == stack[depth - 1]) {
        depth--;
        p++;
        continue;
      }
      if (*p != ',') return 0;
      p = skip_ws(p + 1, end);
      if (stack[depth - 1] == '}' && (p = strict_key(p, end)) == NULL)
        return 0;
      break;
    }
  }
}

int mcpp__scan_message(const char *buf, size_t len, mcpp__msg *msg) {
  static const char *const names[] = {"id", "method", "result", "error",
                                      "params"};
  mcpp__span spans[5];
  int rc = mcpp__scan_object(buf, len, names, 5, spans, &msg->dup);
  msg->id = spans[0];
  msg->method = spans[1];
  msg->result = spans[2];
  msg->error = spans[3];
  msg->params = spans[4];
  return rc;
}

int mcpp__span_is(mcpp__span s, const char *lit) {
  return s.p && s.n == strlen(lit) && memcmp(s.p, lit, s.n) == 0;
}

int mcpp__span_eq(mcpp__span s, const char *p, size_t n) {
  return s.p && s.n == n && memcmp(s.p, p, n) == 0;
}

int mcpp__is_ping_request(const char *frame, size_t len) {
  mcpp__msg msg;
  return frame != NULL && mcpp__scan_message(frame, len, &msg) == 0 &&
         msg.id.p != NULL && mcpp__span_is(msg.method, "\"ping\"");
}
