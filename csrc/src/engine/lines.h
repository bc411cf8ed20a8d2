/*
 * Line framing for the stdio driver: newline-delimited frames arriving in
 * arbitrary pieces. Internal to the driver (mcpp__ prefix).
 */
#ifndef MCPP_LINES_H
#define MCPP_LINES_H

#include <stddef.h>

#include "mcpping.h"

typedef struct mcpp__lines {
  const mcpp_allocator *alloc;
  size_t max;   /* longest accepted line, newline and \r excluded */
  char *buf;    /* the partial line carried between feeds */
  size_t len;
  size_t cap;
  /* 1: every line as it came, a trailing \r and empty lines included (a
   * proxy passes them on); 0 (the default): one \r stripped, empty lines
   * skipped. */
  int exact;
} mcpp__lines;

/* Called for each complete line (newline and one trailing \r stripped,
 * never empty). Returns 0 to go on, non-zero to stop the feed at once. */
typedef int (*mcpp__line_fn)(void *arg, const char *line, size_t len);

void mcpp__lines_init(mcpp__lines *l, const mcpp_allocator *alloc,
                      size_t max);
void mcpp__lines_free(mcpp__lines *l);

/* Feeds bytes. Returns 0, 1 if fn asked to stop (the rest of data is
 * dropped), MCPP_ERR_FRAME_TOO_LARGE (a line, complete or not, exceeds max;
 * nothing of it was delivered) or MCPP_ERR_NOMEM. */
int mcpp__lines_feed(mcpp__lines *l, const char *data, size_t n,
                     mcpp__line_fn fn, void *arg);

/* Returns 1 if a partial line is waiting for its newline. */
static inline int mcpp__lines_pending(const mcpp__lines *l) {
  return l->len > 0;
}

#endif
