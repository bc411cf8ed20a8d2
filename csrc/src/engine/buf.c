/* A bounded string builder: frames and records are built with it so the
 * same code measures (cap 0) and writes. */
#include <string.h>

#include "internal.h"

void mcpp__sb_init(mcpp__sb *sb, char *buf, size_t cap) {
  sb->buf = buf;
  sb->cap = cap;
  sb->len = 0;
  if (cap) buf[0] = '\0';
}

void mcpp__sb_put(mcpp__sb *sb, const char *s, size_t n) {
  if (sb->cap && sb->len < sb->cap - 1) {
    size_t room = sb->cap - 1 - sb->len;
    size_t k = n < room ? n : room;
    memcpy(sb->buf + sb->len, s, k);
    sb->buf[sb->len + k] = '\0';
  }
  sb->len += n;
}

void mcpp__sb_puts(mcpp__sb *sb, const char *s) {
  mcpp__sb_put(sb, s, strlen(s));
}

void mcpp__sb_putc(mcpp__sb *sb, char c) { mcpp__sb_put(sb, &c, 1); }

void mcpp__sb_u64(mcpp__sb *sb, uint64_t v) {
  char tmp[24];
  size_t i = sizeof tmp;
  do {
    tmp[--i] = (char)('0' + v % 10);
    v /= 10;
  } while (v);
  mcpp__sb_put(sb, tmp + i, sizeof tmp - i);
}

/* Returns the length of the valid UTF-8 sequence at s (1..4), or 0. */
static size_t utf8_len(const unsigned char *s, size_t n) {
  unsigned char c = s[0];
  size_t len;
  uint32_t min;
  uint32_t cp;
  if (c < 0x80) return 1;
  if ((c & 0xe0) == 0xc0) {
    len = 2, min = 0x80, cp = c & 0x1f;
  } else if ((c & 0xf0) == 0xe0) {
    len = 3, min = 0x800, cp = c & 0x0f;
  } else if ((c & 0xf8) == 0xf0) {
    len = 4, min = 0x10000, cp = c & 0x07;
  } else {
    return 0;
  }
  if (n < len) return 0;
  for (size_t i = 1; i < len; i++) {
    if ((s[i] & 0xc0) != 0x80) return 0;
    cp = (cp << 6) | (s[i] & 0x3f);
  }
  if (cp < min || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff)) return 0;
  return len;
}

void mcpp__sb_json_string(mcpp__sb *sb, const char *s, size_t n) {
  static const char hex[] = "0123456789abcdef";
  const unsigned char *u = (const unsigned char *)s;
  size_t i = 0, run = 0;
  mcpp__sb_putc(sb, '"');
  while (i < n) {
    unsigned char c = u[i];
    const char *esc = NULL;
    char ubuf[7];
    size_t k = 1;
    if (c == '"') {
      esc = "\\\"";
    } else if (c == '\\') {
      esc = "\\\\";
    } else if (c == '\n') {
      esc = "\\n";
    } else if (c == '\r') {
      esc = "\\r";
    } else if (c == '\t') {
      esc = "\\t";
    } else if (c == '\b') {
      esc = "\\b";
    } else if (c == '\f') {
      esc = "\\f";
    } else if (c < 0x20 || c == 0x7f) {
      memcpy(ubuf, "\\u00", 4);
      ubuf[4] = hex[c >> 4];
      ubuf[5] = hex[c & 15];
      ubuf[6] = '\0';
      esc = ubuf;
    } else if (c >= 0x80) {
      k = utf8_len(u + i, n - i);
      if (k == 0) {
        esc = "\\ufffd";
        k = 1;
      }
    }
    if (esc) {
      mcpp__sb_put(sb, s + i - run, run);
      run = 0;
      mcpp__sb_puts(sb, esc);
    } else {
      run += k;
    }
    i += k;
  }
  mcpp__sb_put(sb, s + i - run, run);
  mcpp__sb_putc(sb, '"');
}
