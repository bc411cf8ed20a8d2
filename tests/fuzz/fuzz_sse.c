/*
 * libFuzzer harness for the SSE parser (sse.c). The input is a byte stream
 * fed in pieces whose sizes the input also chooses; a reference parser
 * over the whole stream says which events and comments must come out, in
 * order and byte-exact (an event with empty data is proof of life, as a
 * comment is), where MCPP_ERR_FRAME_TOO_LARGE must stop it, and the last
 * event ID the parser keeps for Last-Event-ID.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "mcpping.h"

#define CHECK(cond) \
  do {              \
    if (!(cond)) abort(); \
  } while (0)

typedef struct item {
  int kind;
  char *p;
  size_t n;
} item;

typedef struct list {
  item *v;
  size_t n, cap;
} list;

static void push(list *l, int kind, const char *p, size_t n) {
  if (l->n == l->cap) {
    l->cap = l->cap ? 2 * l->cap : 16;
    l->v = realloc(l->v, l->cap * sizeof *l->v);
    CHECK(l->v);
  }
  char *copy = malloc(n + 1);
  CHECK(copy);
  memcpy(copy, p, n);
  l->v[l->n++] = (item){kind, copy, n};
}

/* An event: its data, or proof of life when the data is empty. */
static void push_event(list *l, const char *data, size_t len) {
  push(l, len ? MCPP_SSE_DATA : MCPP_SSE_COMMENT, data, len);
}

/* The whole stream at once: LF-ended lines, one \r stripped; a last line
 * without its LF still counts, and an unfinished event is delivered. The
 * last id field (no NUL, at most MCPP_SSE_MAX_ID bytes) goes to last_id. */
static void reference(const uint8_t *s, size_t n, size_t max, list *out,
                      int *too_large, char *last_id) {
  char *data = malloc(max + 1);
  size_t len = 0;
  int has = 0;
  size_t start = 0;
  *too_large = 0;
  CHECK(data);
  while (start < n) {
    const uint8_t *nl = memchr(s + start, '\n', n - start);
    size_t end = nl ? (size_t)(nl - s) : n;
    const char *line = (const char *)s + start;
    size_t ll = end - start;
    start = end + 1;
    if (ll && line[ll - 1] == '\r') ll--;
    if (ll > max) {
      *too_large = 1;
      goto out;
    }
    if (ll == 0) {
      if (has) push_event(out, data, len);
      has = 0;
      len = 0;
    } else if (line[0] == ':') {
      const char *t = line + 1;
      size_t tn = ll - 1;
      if (tn && t[0] == ' ') t++, tn--;
      push(out, MCPP_SSE_COMMENT, t, tn);
    } else {
      const char *colon = memchr(line, ':', ll);
      size_t name = colon ? (size_t)(colon - line) : ll;
      const char *v = colon ? colon + 1 : line + ll;
      size_t vn = (size_t)(line + ll - v);
      if (vn && v[0] == ' ') v++, vn--;
      if (name == 2 && memcmp(line, "id", 2) == 0 && vn <= MCPP_SSE_MAX_ID &&
          memchr(v, '\0', vn) == NULL) {
        memcpy(last_id, v, vn);
        last_id[vn] = '\0';
      }
      if (name == 4 && memcmp(line, "data", 4) == 0) {
        if (len + (has ? 1 : 0) + vn > max) {
          *too_large = 1;
          goto out;
        }
        if (has) data[len++] = '\n';
        memcpy(data + len, v, vn);
        len += vn;
        has = 1;
      }
    }
  }
  if (has) push_event(out, data, len);
out:
  free(data);
}

typedef struct sink {
  list *want;
  size_t got;
  size_t stop_after;
} sink;

static int on_item(void *arg, mcpp_sse_kind kind, const char *p, size_t n) {
  sink *k = arg;
  CHECK(k->got < k->want->n);
  item *w = &k->want->v[k->got];
  CHECK((int)kind == w->kind);
  CHECK(n == w->n);
  CHECK(n == 0 || memcmp(p, w->p, n) == 0);
  k->got++;
  return k->stop_after && k->got == k->stop_after;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (size < 3) return 0;
  static const size_t maxes[] = {1, 2, 3, 7, 16, 64, 4096, 1u << 20};
  size_t max = maxes[data[0] & 7];
  uint32_t rng = data[1] * 2654435761u + 1;
  size_t stop_after = data[2] & 0x80 ? (size_t)(data[2] & 0x7f) : 0;
  data += 3;
  size -= 3;

  list want = {0};
  int too_large;
  char last_id[MCPP_SSE_MAX_ID + 1] = "";
  reference(data, size, max, &want, &too_large, last_id);

  mcpp_sse *s = mcpp_sse_new(max);
  CHECK(s);
  sink k = {&want, 0, stop_after};
  size_t off = 0;
  int rc = 0;
  while (off < size) {
    rng = rng * 1103515245u + 12345u;
    size_t piece = 1 + (rng >> 16) % 97;
    if (piece > size - off) piece = size - off;
    char *copy = malloc(piece);
    CHECK(copy);
    memcpy(copy, data + off, piece);
    rc = mcpp_sse_feed(s, copy, piece, on_item, &k);
    free(copy);
    off += piece;
    if (rc) break;
  }
  if (rc == 0) rc = mcpp_sse_finish(s, on_item, &k);
  if (rc == 1) {
    CHECK(stop_after && k.got == stop_after);
  } else if (rc == MCPP_ERR_FRAME_TOO_LARGE) {
    CHECK(too_large);
    CHECK(k.got == want.n);
  } else {
    CHECK(rc == 0);
    CHECK(!too_large);
    CHECK(k.got == want.n);
    CHECK(strcmp(mcpp_sse_last_event_id(s), last_id) == 0);
  }
  mcpp_sse_free(s);
  for (size_t i = 0; i < want.n; i++) free(want.v[i].p);
  free(want.v);
  return 0;
}
