/*
 * responder: the fastest peer we can write, for benchmarks. Reads lines
 * from stdin; answers a line holding "method":"ping" with
 * {"jsonrpc":"2.0","id":ID,"result":{}} and writes every other line back
 * unchanged. No JSON parser: the id is copied as the raw text after "id":.
 * Built by the Makefile as build/responder.
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static char out[1 << 16];
static size_t out_len;

static void flush_out(void) {
  size_t off = 0;
  while (off < out_len) {
    ssize_t n = write(1, out + off, out_len - off);
    if (n <= 0) exit(0);
    off += (size_t)n;
  }
  out_len = 0;
}

static void put(const char *p, size_t n) {
  if (out_len + n > sizeof out) flush_out();
  if (n > sizeof out) {
    while (n) {
      ssize_t w = write(1, p, n);
      if (w <= 0) exit(0);
      p += w;
      n -= (size_t)w;
    }
    return;
  }
  memcpy(out + out_len, p, n);
  out_len += n;
}

/* Returns the raw id text's end, given its start; strings keep quotes. */
static const char *id_end(const char *p, const char *end) {
  if (p < end && *p == '"') {
    for (p++; p < end && *p != '"'; p++)
      if (*p == '\\') p++;
    return p < end ? p + 1 : end;
  }
  while (p < end && *p != ',' && *p != '}' && *p != ' ') p++;
  return p;
}

static void handle(const char *line, size_t len) {
  const char *end = line + len;
  if (memmem(line, len, "\"method\":\"ping\"", 15)) {
    const char *id = memmem(line, len, "\"id\":", 5);
    if (id) {
      id += 5;
      while (id < end && *id == ' ') id++;
      put("{\"jsonrpc\":\"2.0\",\"id\":", 22);
      put(id, (size_t)(id_end(id, end) - id));
      put(",\"result\":{}}\n", 14);
      return;
    }
  }
  put(line, len);
  put("\n", 1);
}

int main(void) {
  size_t cap = 1 << 16, len = 0;
  char *buf = malloc(cap);
  if (!buf) return 1;
  for (;;) {
    if (len == cap) {
      cap *= 2;
      buf = realloc(buf, cap);
      if (!buf) return 1;
    }
    ssize_t n = read(0, buf + len, cap - len);
    if (n <= 0) break;
    len += (size_t)n;
    size_t start = 0;
    char *nl;
    while ((nl = memchr(buf + start, '\n', len - start))) {
      handle(buf + start, (size_t)(nl - (buf + start)));
      start = (size_t)(nl - buf) + 1;
    }
    memmove(buf, buf + start, len - start);
    len -= start;
    flush_out();
  }
  flush_out();
  free(buf);
  return 0;
}
