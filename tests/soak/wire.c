/* The soak's shared wire format: see wire.h. */
#include "wire.h"

#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void reserve(soak_buf *b, size_t n) {
  if (b->len + n + 1 <= b->cap) return;
  size_t cap = b->cap ? b->cap : 256;
  while (cap < b->len + n + 1) cap *= 2;
  char *p = realloc(b->p, cap);
  if (!p) {
    fputs("soak: out of memory\n", stderr);
    abort();
  }
  b->p = p;
  b->cap = cap;
}

void soak_buf_put(soak_buf *b, const void *data, size_t n) {
  reserve(b, n);
  memcpy(b->p + b->len, data, n);
  b->len += n;
  b->p[b->len] = '\0';
}

void soak_buf_puts(soak_buf *b, const char *s) { soak_buf_put(b, s, strlen(s)); }

void soak_buf_printf(soak_buf *b, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  int n = vsnprintf(NULL, 0, fmt, ap);
  va_end(ap);
  reserve(b, (size_t)n);
  va_start(ap, fmt);
  vsnprintf(b->p + b->len, (size_t)n + 1, fmt, ap);
  va_end(ap);
  b->len += (size_t)n;
}

void soak_buf_json_string(soak_buf *b, const char *s, size_t n) {
  soak_buf_put(b, "\"", 1);
  for (size_t i = 0; i < n; i++) {
    unsigned char c = (unsigned char)s[i];
    if (c == '"' || c == '\\') {
      char e[2] = {'\\', (char)c};
      soak_buf_put(b, e, 2);
    } else if (c < 0x20) {
      soak_buf_printf(b, "\\u%04x", c);
    } else {
      soak_buf_put(b, &s[i], 1);
    }
  }
  soak_buf_put(b, "\"", 1);
}

void soak_buf_free(soak_buf *b) {
  free(b->p);
  b->p = NULL;
  b->len = b->cap = 0;
}

uint64_t soak_fnv(const void *p, size_t n) {
  const unsigned char *s = p;
  uint64_t h = 0xcbf29ce484222325ull;
  for (size_t i = 0; i < n; i++) h = (h ^ s[i]) * 0x100000001b3ull;
  return h;
}

uint64_t soak_mix(uint64_t x) {
  x += 0x9e3779b97f4a7c15ull;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}

/* Pieces the payloads are made of: every one must survive unchanged. */
static const char *const pieces[] = {
    "mcp", " ", "\"", "\\", "/", "\t", "\x01", "\x1f", "é", "€", "𝄞",
    "{\"id\":1}", "\\u0000", "ping", "0123456789", "\r"};

void soak_gen_text(soak_buf *b, uint64_t seed, uint64_t seq, size_t max) {
  uint64_t r = soak_mix(seed ^ soak_mix(seq));
  size_t want = max ? (size_t)(r % (max + 1)) : 0;
  size_t start = b->len;
  while (b->len - start < want) {
    r = soak_mix(r);
    const char *p = pieces[r % (sizeof pieces / sizeof *pieces)];
    soak_buf_puts(b, p);
  }
}

void soak_request_id(soak_buf *b, uint64_t iseq) {
  if (iseq & 1)
    soak_buf_printf(b, "\"r-%" PRIu64 "\"", iseq);
  else
    soak_buf_printf(b, "%" PRIu64, iseq);
}

static void json_text(soak_buf *b, uint64_t seed, uint64_t seq, size_t max) {
  soak_buf text = {0};
  soak_gen_text(&text, seed, seq, max);
  soak_buf_json_string(b, text.p ? text.p : "", text.len);
  soak_buf_free(&text);
}

void soak_line_request(soak_buf *b, uint64_t seed, uint64_t iseq,
                       uint32_t delay_ms) {
  soak_buf_puts(b, "{\"jsonrpc\":\"2.0\",\"id\":");
  soak_request_id(b, iseq);
  soak_buf_printf(b,
                  ",\"method\":\"tools/call\",\"params\":{\"name\":\"echo\","
                  "\"iseq\":%" PRIu64 ",\"arguments\":{\"delay_ms\":%u,"
                  "\"payload\":",
                  iseq, (unsigned)delay_ms);
  json_text(b, seed ^ SOAK_SALT_REQUEST, iseq, 2048);
  soak_buf_puts(b, "}}}");
}

void soak_line_client_note(soak_buf *b, uint64_t seed, uint64_t iseq) {
  soak_buf_printf(b,
                  "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/soak\","
                  "\"params\":{\"iseq\":%" PRIu64 ",\"blob\":",
                  iseq);
  json_text(b, seed ^ SOAK_SALT_CLIENT_NOTE, iseq, 512);
  soak_buf_puts(b, "}}");
}

void soak_line_echo(soak_buf *b, uint64_t seed, uint64_t iseq, uint64_t oseq,
                    uint64_t rawhash) {
  soak_buf_puts(b, "{\"jsonrpc\":\"2.0\",\"id\":");
  soak_request_id(b, iseq);
  soak_buf_puts(b, ",\"result\":{\"content\":[{\"type\":\"text\",\"text\":");
  json_text(b, seed ^ SOAK_SALT_REQUEST, iseq, 2048);
  soak_buf_printf(b,
                  "}],\"oseq\":%" PRIu64 ",\"iseq\":%" PRIu64
                  ",\"rawhash\":\"%016" PRIx64 "\"}}",
                  oseq, iseq, rawhash);
}

void soak_line_note(soak_buf *b, uint64_t seed, uint64_t oseq) {
  soak_buf_printf(b,
                  "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/message\","
                  "\"params\":{\"level\":\"info\",\"logger\":\"soak\","
                  "\"data\":{\"oseq\":%" PRIu64 ",\"blob\":",
                  oseq);
  json_text(b, seed ^ SOAK_SALT_NOTE, oseq, 400);
  soak_buf_puts(b, "}}}");
}

void soak_line_garbage(soak_buf *b, uint64_t seed, uint64_t oseq) {
  static const char *const junk[] = {
      "{\"jsonrpc\":\"2.0\",\"id\":",
      "\xff\xfe",
      "\xc0\x80",
      "}}]",
      "{\"jsonrpc\":\"2.0\",\"id\":7,\"result\":{}}",
      "\x00",
      "\"method\":\"ping\"",
      "\x7f\x1b[0m",
      "   ",
      "INFO server started"};
  soak_buf_printf(b, SOAK_GARBAGE_PREFIX "%" PRIu64 " ", oseq);
  uint64_t r = soak_mix(seed ^ SOAK_SALT_GARBAGE ^ soak_mix(oseq));
  size_t want = (oseq % 16 == 15) ? 150000 + r % 100000 : r % 600;
  size_t start = b->len;
  while (b->len - start < want) {
    r = soak_mix(r);
    size_t k = r % (sizeof junk / sizeof *junk);
    /* "\x00" is one NUL byte, not an empty string. */
    soak_buf_put(b, junk[k], k == 5 ? 1 : strlen(junk[k]));
  }
  /* The line framing strips one trailing \r: end on something else. */
  soak_buf_puts(b, ".");
}
