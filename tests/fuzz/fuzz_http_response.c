/*
 * libFuzzer harness for the HTTP/1.1 response parser (http_response.c).
 * Two properties. Any bytes, fed whole and fed in pieces whose sizes the
 * input chooses, give the same parts (head, body bytes, end), the same
 * error and the same verdicts (status, headers, keep-alive, ended); a body
 * is never longer than what came. And an answer built from the input
 * (length, chunked with extensions and trailers, or until the close)
 * gives its body byte for byte, ends where it ends and keeps its
 * connection exactly when its framing allows.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mcpping.h"

#define CHECK(cond) \
  do {              \
    if (!(cond)) abort(); \
  } while (0)

typedef struct seen {
  char order[64]; /* H, B (runs merged), E; '+' once full */
  size_t n;
  char *body;
  size_t body_len, body_cap;
} seen;

static void on_part(void *arg, mcpp_http_part part, const char *data, size_t len) {
  seen *s = arg;
  char c = part == MCPP_HTTP_PART_HEAD ? 'H' : part == MCPP_HTTP_PART_BODY ? 'B' : 'E';
  CHECK(!(s->n && s->order[s->n - 1] == 'E')); /* nothing after the end */
  if (!(c == 'B' && s->n && s->order[s->n - 1] == 'B') && s->n < sizeof s->order - 1)
    s->order[s->n++] = c;
  if (c != 'B') return;
  CHECK(len > 0);
  if (s->body_len + len > s->body_cap) {
    s->body_cap = 2 * (s->body_len + len);
    s->body = realloc(s->body, s->body_cap);
    CHECK(s->body);
  }
  memcpy(s->body + s->body_len, data, len);
  s->body_len += len;
}

static uint32_t next(uint32_t *rng) {
  *rng = *rng * 1103515245u + 12345u;
  return *rng >> 16;
}

/* Feeds data in pieces (whole if rng is NULL); returns the last result. */
static int run(mcpp_http_response *r, const uint8_t *data, size_t size, uint32_t *rng,
               seen *s) {
  size_t off = 0;
  int rc = 0;
  while (off < size && rc == 0) {
    size_t piece = rng ? 1 + next(rng) % 61 : size;
    if (piece > size - off) piece = size - off;
    char *copy = malloc(piece); /* ASan sees a read past the piece */
    CHECK(copy);
    memcpy(copy, data + off, piece);
    rc = mcpp_http_response_feed(r, copy, piece, on_part, s);
    free(copy);
    off += piece;
  }
  return rc;
}

static void same_bytes(const uint8_t *data, size_t size, uint32_t rng) {
  seen a = {0}, b = {0};
  mcpp_http_response *whole = mcpp_http_response_new(), *split = mcpp_http_response_new();
  CHECK(whole && split);
  int rc = run(whole, data, size, NULL, &a);
  CHECK(run(split, data, size, &rng, &b) == rc);
  CHECK(rc == 0 || rc == MCPP_ERR_NOT_HTTP);
  CHECK(a.body_len <= size);
  if (rc == 0) {
    CHECK(a.n == b.n && memcmp(a.order, b.order, a.n) == 0);
    CHECK(a.body_len == b.body_len && (a.body_len == 0 || memcmp(a.body, b.body, a.body_len) == 0));
    CHECK(mcpp_http_response_keep_alive(whole) == mcpp_http_response_keep_alive(split));
    CHECK(mcpp_http_response_ended(whole) == mcpp_http_response_ended(split));
    CHECK(mcpp_http_response_status(whole) == mcpp_http_response_status(split));
    size_t n = mcpp_http_response_header_count(whole);
    CHECK(n == mcpp_http_response_header_count(split) && n <= MCPP_HTTP_HEADERS_MAX);
    for (size_t i = 0; i < n; i++) {
      const char *an, *av, *bn, *bv;
      mcpp_http_response_header_at(whole, i, &an, &av);
      mcpp_http_response_header_at(split, i, &bn, &bv);
      CHECK(strcmp(an, bn) == 0 && strcmp(av, bv) == 0);
      CHECK(mcpp_http_response_header(whole, an) != NULL);
    }
  } else {
    CHECK(mcpp_http_response_problem(whole)[0] != '\0');
  }
  mcpp_http_response_free(whole);
  mcpp_http_response_free(split);
  free(a.body);
  free(b.body);
}

/* An answer a server may send, carrying body (the input's bytes). */
static void built_answer(const uint8_t *body, size_t size, uint32_t rng) {
  size_t cap = 256 + size * 2 + 64 * (size + 1);
  char *wire = malloc(cap);
  CHECK(wire);
  int framing = (int)(next(&rng) % 3); /* length, chunked, until close */
  size_t n = (size_t)snprintf(wire, cap, "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\n");
  for (uint32_t i = 0, k = next(&rng) % 4; i < k; i++)
    n += (size_t)snprintf(wire + n, cap - n, "X-%u: v%u\r\n", i, next(&rng));
  if (framing == 0) {
    n += (size_t)snprintf(wire + n, cap - n, "Content-Length: %zu\r\n\r\n", size);
    memcpy(wire + n, body, size);
    n += size;
  } else if (framing == 1) {
    n += (size_t)snprintf(wire + n, cap - n, "Transfer-Encoding: chunked\r\n\r\n");
    for (size_t at = 0; at < size;) {
      size_t k = 1 + next(&rng) % 64;
      if (k > size - at) k = size - at;
      n += (size_t)snprintf(wire + n, cap - n, next(&rng) & 1 ? "%zx;name=value\r\n" : "%zX\r\n", k);
      memcpy(wire + n, body + at, k);
      n += k;
      at += k;
      n += (size_t)snprintf(wire + n, cap - n, "\r\n");
    }
    n += (size_t)snprintf(wire + n, cap - n, next(&rng) & 1 ? "0\r\nX-Trailer: t\r\n\r\n" : "0\r\n\r\n");
  } else {
    n += (size_t)snprintf(wire + n, cap - n, "\r\n");
    memcpy(wire + n, body, size);
    n += size;
  }
  CHECK(n < cap);
  seen s = {0};
  mcpp_http_response *r = mcpp_http_response_new();
  CHECK(r);
  CHECK(run(r, (const uint8_t *)wire, n, &rng, &s) == 0);
  if (framing == 2) {
    CHECK(!mcpp_http_response_ended(r) && mcpp_http_response_closed(r));
  }
  CHECK(mcpp_http_response_ended(r));
  CHECK(s.order[0] == 'H' && (framing == 2 || s.order[s.n - 1] == 'E'));
  CHECK(s.body_len == size && (size == 0 || memcmp(s.body, body, size) == 0));
  CHECK(mcpp_http_response_keep_alive(r) == (framing != 2));
  mcpp_http_response_free(r);
  free(s.body);
  free(wire);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (size < 2) return 0;
  uint32_t rng = data[1] * 2654435761u + 1;
  if (data[0] & 1)
    built_answer(data + 2, size - 2, rng);
  else
    same_bytes(data + 2, size - 2, rng);
  return 0;
}
