/*
 * Line framing. Lines lying whole inside one read are delivered straight
 * from the read buffer; only a line split across reads is copied.
 */
#include "lines.h"

#include <string.h>

enum { SHRINK_ABOVE = 256 * 1024 };

void mcpp__lines_init(mcpp__lines *l, const mcpp_allocator *alloc,
                      size_t max) {
  memset(l, 0, sizeof *l);
  l->alloc = alloc;
  l->max = max;
}

void mcpp__lines_free(mcpp__lines *l) {
  if (l->buf) l->alloc->free(l->buf, l->alloc->user_data);
  l->buf = NULL;
  l->len = l->cap = 0;
}

/* Delivers one line unless it is empty; strips one trailing \r. A line
 * may be max + 1 bytes long only if that last byte is the \r. */
static int emit(mcpp__lines *l, const char *line, size_t len,
                mcpp__line_fn fn, void *arg) {
  if (len && line[len - 1] == '\r' && !l->exact) len--;
  if (len > l->max + (size_t)l->exact) return MCPP_ERR_FRAME_TOO_LARGE;
  if (len == 0 && !l->exact) return 0;
  return fn(arg, line, len) ? 1 : 0;
}

static int append(mcpp__lines *l, const char *data, size_t n) {
  if (l->len + n > l->cap) {
    size_t cap = l->cap ? l->cap : 4096;
    while (cap < l->len + n) cap *= 2;
    char *p = l->alloc->realloc(l->buf, cap, l->alloc->user_data);
    if (!p) return MCPP_ERR_NOMEM;
    l->buf = p;
    l->cap = cap;
  }
  memcpy(l->buf + l->len, data, n);
  l->len += n;
  return 0;
}

int mcpp__lines_feed(mcpp__lines *l, const char *data, size_t n,
                     mcpp__line_fn fn, void *arg) {
  const char *end = data + n;
  int rc;
  if (l->len) {
    const char *nl = memchr(data, '\n', n);
    size_t take = nl ? (size_t)(nl - data) : n;
    /* +1 leaves room for the \r that emit() strips. */
    if (l->len + take > l->max + 1) return MCPP_ERR_FRAME_TOO_LARGE;
    if ((rc = append(l, data, take))) return rc;
    if (!nl) return 0;
    size_t len = l->len;
    l->len = 0;
    rc = emit(l, l->buf, len, fn, arg);
    /* A long line's buffer is not kept: idle connections stay small. */
    if (l->cap > SHRINK_ABOVE) mcpp__lines_free(l);
    if (rc) return rc;
    data = nl + 1;
  }
  while (data < end) {
    const char *nl = memchr(data, '\n', (size_t)(end - data));
    if (!nl) break;
    if ((rc = emit(l, data, (size_t)(nl - data), fn, arg))) return rc;
    data = nl + 1;
  }
  if (data < end) {
    if ((size_t)(end - data) > l->max + 1) return MCPP_ERR_FRAME_TOO_LARGE;
    return append(l, data, (size_t)(end - data));
  }
  return 0;
}
