/* The last bytes of a stream and its last non-blank line (tail.h). */
#include "tail.h"

#include <string.h>

void mcpp__tail_feed(mcpp__tail *t, const char *data, size_t n) {
  if (n >= MCPP__TAIL_BYTES) {
    memcpy(t->buf, data + n - MCPP__TAIL_BYTES, MCPP__TAIL_BYTES);
    t->len = MCPP__TAIL_BYTES;
    t->cut = 1;
    return;
  }
  if (t->len + n > MCPP__TAIL_BYTES) {
    size_t drop = t->len + n - MCPP__TAIL_BYTES;
    memmove(t->buf, t->buf + drop, t->len - drop);
    t->len -= drop;
    t->cut = 1;
  }
  memcpy(t->buf + t->len, data, n);
  t->len += n;
}

static int blank(char c) {
  return c == ' ' || c == '\t' || c == '\r' || c == '\v' || c == '\f';
}

size_t mcpp__tail_last_line(const mcpp__tail *t, char *out, size_t cap) {
  size_t end = t->len;
  if (cap) out[0] = '\0';
  while (end > 0) {
    size_t start = end;
    while (start > 0 && t->buf[start - 1] != '\n') start--;
    size_t a = start, b = end;
    /* A line the cut began mid-character starts at its next character. */
    if (a == 0 && t->cut)
      while (a < b && ((unsigned char)t->buf[a] & 0xC0) == 0x80) a++;
    while (a < b && blank(t->buf[a])) a++;
    while (b > a && blank(t->buf[b - 1])) b--;
    if (b > a) {
      size_t n = b - a < cap ? b - a : (cap ? cap - 1 : 0);
      memcpy(out, t->buf + a, n);
      if (cap) out[n] = '\0';
      return n;
    }
    end = start ? start - 1 : 0;
  }
  return 0;
}
