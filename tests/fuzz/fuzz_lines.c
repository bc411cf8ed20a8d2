/*
 * libFuzzer harness for the line splitter (lines.c). The input is a byte
 * stream fed in pieces whose sizes the input also chooses; a reference
 * splitter over the whole stream says which lines must come out, in order
 * and byte-exact, and where MCPP_ERR_FRAME_TOO_LARGE must stop the feed.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "engine/lines.h"

#define CHECK(cond) \
  do {              \
    if (!(cond)) abort(); \
  } while (0)

typedef struct line_list {
  const uint8_t *stream; /* the reference lines point into it */
  size_t n, cap;
  size_t *start, *len;
} line_list;

static void push(line_list *l, size_t start, size_t len) {
  if (l->n == l->cap) {
    l->cap = l->cap ? 2 * l->cap : 16;
    l->start = realloc(l->start, l->cap * sizeof *l->start);
    l->len = realloc(l->len, l->cap * sizeof *l->len);
    CHECK(l->start && l->len);
  }
  l->start[l->n] = start;
  l->len[l->n++] = len;
}

/* What the splitter must deliver: every non-empty line, one trailing \r
 * stripped, until the first line longer than max (*too_large set). A
 * trailing partial line is too large only beyond max + 1 (its \r may be
 * still to come). */
static void reference(const uint8_t *s, size_t n, size_t max, line_list *out,
                      int *too_large) {
  size_t start = 0;
  *too_large = 0;
  for (size_t i = 0; i < n; i++) {
    if (s[i] != '\n') continue;
    size_t len = i - start;
    if (len && s[start + len - 1] == '\r') len--;
    if (len > max) {
      *too_large = 1;
      return;
    }
    if (len) push(out, start, len);
    start = i + 1;
  }
  if (n - start > max + 1) *too_large = 1;
}

typedef struct sink {
  line_list *want;
  size_t got;
  size_t stop_after; /* 0: never ask to stop */
} sink;

static int on_line(void *arg, const char *line, size_t len) {
  sink *k = arg;
  CHECK(len > 0);
  CHECK(memchr(line, '\n', len) == NULL);
  CHECK(k->got < k->want->n);
  CHECK(len == k->want->len[k->got]);
  CHECK(memcmp(line, k->want->stream + k->want->start[k->got], len) == 0);
  k->got++;
  return k->stop_after && k->got == k->stop_after;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (size < 3) return 0;
  /* Header: the line limit, a seed for the piece sizes, when to stop. */
  static const size_t maxes[] = {1, 2, 3, 7, 16, 64, 4096, 1u << 20};
  size_t max = maxes[data[0] & 7];
  uint32_t rng = data[1] * 2654435761u + 1;
  size_t stop_after = data[2] & 0x80 ? (size_t)(data[2] & 0x7f) : 0;
  data += 3;
  size -= 3;

  line_list want = {data, 0, 0, NULL, NULL};
  int too_large;
  reference(data, size, max, &want, &too_large);

  mcpp__lines l;
  mcpp__lines_init(&l, mcpp_default_allocator(), max);
  sink k = {&want, 0, stop_after};
  size_t off = 0;
  int rc = 0;
  while (off < size) {
    rng = rng * 1103515245u + 12345u;
    size_t piece = 1 + (rng >> 16) % 97;
    if (piece > size - off) piece = size - off;
    /* Each piece is its own allocation so ASan sees reads past it. */
    char *copy = malloc(piece);
    CHECK(copy);
    memcpy(copy, data + off, piece);
    rc = mcpp__lines_feed(&l, copy, piece, on_line, &k);
    free(copy);
    off += piece;
    if (rc) break;
  }
  if (rc == 1) {
    CHECK(stop_after && k.got == stop_after);
  } else if (rc == MCPP_ERR_FRAME_TOO_LARGE) {
    CHECK(too_large);
    CHECK(k.got == want.n);
  } else {
    CHECK(rc == 0);
    CHECK(!too_large);
    CHECK(k.got == want.n);
    /* Whatever follows the last newline waits for its own. */
    CHECK(mcpp__lines_pending(&l) == (size > 0 && data[size - 1] != '\n'));
  }
  mcpp__lines_free(&l);
  free(want.start);
  free(want.len);
  return 0;
}
