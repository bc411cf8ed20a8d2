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
      if (strlen(names[i]) != key_len || memcmp(names[i], key, key_len) != 0)
        continue;
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
