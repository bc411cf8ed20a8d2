/*
 * A sans-I/O Server-Sent Events parser for Streamable HTTP clients
 * (included by mcpping.h): fed bytes in any pieces, it yields each event's
 * data and reports each comment line (": keep-alive"), which proves the
 * server alive though it carries no message. Lines end in LF or CRLF.
 * Fields other than data (event, id, retry) are read and ignored.
 */
#ifndef MCPPING_SSE_H
#define MCPPING_SSE_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct mcpp_sse mcpp_sse;

typedef enum mcpp_sse_kind {
  MCPP_SSE_DATA = 1,   /* an event's data (its lines joined by \n) */
  MCPP_SSE_COMMENT = 2 /* a comment line: proof of life, no message */
} mcpp_sse_kind;

/* Called for each event and comment (data/len: the event's data, or the
 * comment's text after the colon). Returns 0 to go on, non-zero to stop
 * the feed at once. */
typedef int (*mcpp_sse_fn)(void *arg, mcpp_sse_kind kind, const char *data,
                           size_t len);

/* A parser whose lines and events are at most max bytes (0: the
 * settings' default max_line_bytes, the line reader's bound). NULL when
 * out of memory. */
mcpp_sse *mcpp_sse_new(size_t max);
void mcpp_sse_free(mcpp_sse *sse);

/* Feeds bytes. Returns 0, 1 if fn asked to stop, MCPP_ERR_FRAME_TOO_LARGE
 * (a line or an event's data exceeds max; nothing of that event was
 * delivered, and the parser must not be fed again) or MCPP_ERR_NOMEM. */
int mcpp_sse_feed(mcpp_sse *sse, const char *data, size_t n, mcpp_sse_fn fn,
                  void *arg);

/* The stream ended: an event whose blank line never came is delivered
 * (servers that close right after their last data line are common).
 * Returns as mcpp_sse_feed does. */
int mcpp_sse_finish(mcpp_sse *sse, mcpp_sse_fn fn, void *arg);

#ifdef __cplusplus
}
#endif

#endif
