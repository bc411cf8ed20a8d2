/*
 * The last bytes of a stream, for its last line: what a command says of a
 * server's stderr when the server would not talk (`--config`'s last-stderr
 * column, `watch`'s log line). Fixed size, no allocation.
 */
#ifndef MCPP_APP_TAIL_H
#define MCPP_APP_TAIL_H

#include <stddef.h>

#define MCPP__TAIL_BYTES 4096

typedef struct mcpp__tail {
  char buf[MCPP__TAIL_BYTES];
  size_t len;
  int cut; /* bytes before buf[0] were dropped */
} mcpp__tail;

/* Keeps the last MCPP__TAIL_BYTES of everything fed. */
void mcpp__tail_feed(mcpp__tail *t, const char *data, size_t n);

/* The last line that is not blank, without surrounding white space, as a
 * NUL-terminated copy in out (cap > MCPP__TAIL_BYTES holds any); returns its
 * length, 0 when every line is blank. */
size_t mcpp__tail_last_line(const mcpp__tail *t, char *out, size_t cap);

#endif
