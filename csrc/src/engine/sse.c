/*
 * Server-Sent Events on top of the line reader: the lines come bounded
 * from lines.c (exact mode, so the blank line that ends an event is seen),
 * and an event's data is gathered here under the same bound.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"
#include "lines.h"

struct mcpp_sse {
  mcpp__lines lines;
  size_t max;
  char *data; /* the event's data so far, lines joined by \n */
  size_t len;
  size_t cap;
  int has_data; /* a data line came (an empty one counts) */
  char last_id[MCPP_SSE_MAX_ID + 1]; /* the last "id" field, for Last-Event-ID */
  uint32_t retry_ms;                 /* the last "retry" field; 0: none */
  int error;    /* the first error (negative), sticky */
  mcpp_sse_fn fn;
  void *arg;
};

mcpp_sse *mcpp_sse_new(size_t max) {
  const mcpp_allocator *a = mcpp_default_allocator();
  mcpp_sse *s = mcpp__malloc(a, sizeof *s);
  if (s == NULL) return NULL;
  memset(s, 0, sizeof *s);
  if (max == 0) {
    /* The stdio driver's bound, so both transports take the same lines. */
    mcpp_settings st;
    mcpp_settings_default(&st);
    max = st.max_line_bytes;
  }
  mcpp__lines_init(&s->lines, a, max);
  s->lines.exact = 1;
  s->max = max;
  return s;
}

void mcpp_sse_free(mcpp_sse *s) {
  if (s == NULL) return;
  const mcpp_allocator *a = s->lines.alloc;
  mcpp__lines_free(&s->lines);
  mcpp__free(a, s->data);
  mcpp__free(a, s);
}

static int add_data(mcpp_sse *s, const char *p, size_t n) {
  size_t need = s->len + (s->has_data ? 1 : 0) + n;
  if (need > s->max) return MCPP_ERR_FRAME_TOO_LARGE;
  if (need > s->cap) {
    size_t cap = s->cap ? s->cap : 256;
    while (cap < need) cap *= 2;
    char *q = mcpp__realloc(s->lines.alloc, s->data, cap);
    if (q == NULL) return MCPP_ERR_NOMEM;
    s->data = q;
    s->cap = cap;
  }
  if (s->has_data) s->data[s->len++] = '\n';
  if (n) memcpy(s->data + s->len, p, n);
  s->len += n;
  s->has_data = 1;
  return 0;
}

static int dispatch(mcpp_sse *s) {
  if (!s->has_data) return 0;
  size_t len = s->len;
  s->len = 0;
  s->has_data = 0;
  /* An event with empty data (SEP-1699's priming event: an id and no
   * message) carries no message, but the server sent it: proof of life. */
  mcpp_sse_kind kind = len ? MCPP_SSE_DATA : MCPP_SSE_COMMENT;
  return s->fn(s->arg, kind, s->data ? s->data : "", len) ? 1 : 0;
}

/* The "id" field: kept for Last-Event-ID. One with a NUL is ignored (as
 * WHATWG says), and so is one longer than MCPP_SSE_MAX_ID (no server's is). */
static void set_id(mcpp_sse *s, const char *v, size_t n) {
  if (n > MCPP_SSE_MAX_ID || memchr(v, '\0', n) != NULL) return;
  memcpy(s->last_id, v, n);
  s->last_id[n] = '\0';
}

/* The "retry" field: ASCII digits only, else ignored (as WHATWG says). */
static void set_retry(mcpp_sse *s, const char *v, size_t n) {
  uint64_t ms = 0;
  if (n == 0) return;
  for (size_t i = 0; i < n; i++) {
    if (v[i] < '0' || v[i] > '9') return;
    if (ms < UINT32_MAX) ms = ms * 10 + (uint64_t)(v[i] - '0');
  }
  s->retry_ms = ms > UINT32_MAX ? UINT32_MAX : (uint32_t)ms;
}

static int on_line(void *arg, const char *line, size_t len) {
  mcpp_sse *s = arg;
  int rc;
  if (len && line[len - 1] == '\r') len--;
  if (len > s->max) return (s->error = MCPP_ERR_FRAME_TOO_LARGE), 1;
  if (len == 0) return dispatch(s);
  if (line[0] == ':') {
    const char *text = line + 1;
    size_t n = len - 1;
    if (n && text[0] == ' ') text++, n--;
    return s->fn(s->arg, MCPP_SSE_COMMENT, text, n) ? 1 : 0;
  }
  const char *colon = memchr(line, ':', len);
  size_t name_len = colon ? (size_t)(colon - line) : len;
  const char *v = colon ? colon + 1 : line + len;
  size_t n = (size_t)(line + len - v);
  if (n && v[0] == ' ') v++, n--;
  if (name_len == 4 && memcmp(line, "data", 4) == 0) {
    if ((rc = add_data(s, v, n)) != 0) return (s->error = rc), 1;
  } else if (name_len == 2 && memcmp(line, "id", 2) == 0) {
    set_id(s, v, n);
  } else if (name_len == 5 && memcmp(line, "retry", 5) == 0) {
    set_retry(s, v, n);
  }
  return 0;
}

/* A stop asked by fn (1) or an error (negative, sticky). */
static int settle(mcpp_sse *s, int rc) {
  if (rc < 0) s->error = rc;
  return s->error < 0 ? s->error : rc;
}

int mcpp_sse_feed(mcpp_sse *s, const char *data, size_t n, mcpp_sse_fn fn,
                  void *arg) {
  if (s->error < 0) return s->error;
  s->fn = fn;
  s->arg = arg;
  return settle(s, mcpp__lines_feed(&s->lines, data, n, on_line, s));
}

int mcpp_sse_finish(mcpp_sse *s, mcpp_sse_fn fn, void *arg) {
  if (s->error < 0) return s->error;
  s->fn = fn;
  s->arg = arg;
  if (mcpp__lines_pending(&s->lines)) {
    /* The last line had no newline: it still counts. */
    int rc = settle(s, mcpp__lines_feed(&s->lines, "\n", 1, on_line, s));
    if (rc) return rc;
  }
  return dispatch(s);
}

const char *mcpp_sse_last_event_id(const mcpp_sse *s) { return s->last_id; }

uint32_t mcpp_sse_retry_ms(const mcpp_sse *s) { return s->retry_ms; }
