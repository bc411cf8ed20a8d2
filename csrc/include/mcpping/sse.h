/*
 * A sans-I/O Server-Sent Events parser for Streamable HTTP clients
 * (included by mcpping.h): fed bytes in any pieces, it yields each event's
 * data and reports each comment line (": keep-alive"), which proves the
 * server alive though it carries no message, as does an event whose data
 * is empty (SEP-1699's priming event). Lines end in LF or CRLF. The id
 * and retry fields are kept for resuming the stream (Last-Event-ID); any
 * other field (event) is read and ignored. A parser may be fed a resumed
 * stream after mcpp_sse_finish: its last event ID and retry carry over.
 */
#ifndef MCPPING_SSE_H
#define MCPPING_SSE_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct mcpp_sse mcpp_sse;

typedef enum mcpp_sse_kind {
  MCPP_SSE_DATA = 1,   /* an event's data (its lines joined by \n) */
  MCPP_SSE_COMMENT = 2 /* a comment line or an event with empty data:
                        * proof of life, no message */
} mcpp_sse_kind;

/* The longest event ID kept (a longer one is ignored). */
#define MCPP_SSE_MAX_ID 256

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

/* The stream's last event ID (its last "id" field; "" before any, or
 * after an empty one): what a client sends as Last-Event-ID to resume it. */
const char *mcpp_sse_last_event_id(const mcpp_sse *sse);

/* The reconnection time the stream last asked for (its "retry" field), in
 * ms; 0 if it gave none. */
uint32_t mcpp_sse_retry_ms(const mcpp_sse *sse);

#ifdef __cplusplus
}
#endif

#endif
