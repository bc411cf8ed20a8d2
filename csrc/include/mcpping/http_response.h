/*
 * A sans-I/O HTTP/1.1 response parser for the hosts' Streamable HTTP
 * clients (included by mcpping.h), as the SSE parser is for the bodies:
 * fed a connection's bytes in any pieces, it gives the answer's head, each
 * run of its body and its end. Bodies are framed by Content-Length,
 * chunked (extensions and trailers read and dropped) or by the server's
 * close; interim 1xx answers (but 101) are skipped; folded header lines
 * and repeated headers are joined. It says whether the connection may
 * carry the next request once the answer ends (keep-alive). What no HTTP
 * server sends (a status line that is not HTTP/1.x, a bad length or chunk
 * size, a chunk longer than its size, a line that ends in LF without CR, a
 * head past MCPP_HTTP_HEAD_MAX bytes or MCPP_HTTP_HEADERS_MAX headers) is
 * MCPP_ERR_NOT_HTTP, as Node's parser (llhttp) refuses it.
 */
#ifndef MCPPING_HTTP_RESPONSE_H
#define MCPPING_HTTP_RESPONSE_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct mcpp_http_response mcpp_http_response;

typedef enum mcpp_http_part {
  MCPP_HTTP_PART_HEAD = 1, /* the head was read: ask for status and headers */
  MCPP_HTTP_PART_BODY = 2, /* data/len: the next bytes of the body */
  MCPP_HTTP_PART_END = 3   /* the body ended as its framing says */
} mcpp_http_part;

/* http.client's bounds: a head (or a chunk-size or trailer line) longer
 * than this, or with more headers, is no HTTP server's. */
#define MCPP_HTTP_HEAD_MAX (64 * 1024)
#define MCPP_HTTP_HEADERS_MAX 100

/* Called for each part, in order; data points into what was fed. */
typedef void (*mcpp_http_part_fn)(void *arg, mcpp_http_part part,
                                  const char *data, size_t len);

/* A parser for one response; NULL when out of memory. */
mcpp_http_response *mcpp_http_response_new(void);
void mcpp_http_response_free(mcpp_http_response *r);

/* Feeds the connection's next bytes. Returns 0, MCPP_ERR_NOT_HTTP (see
 * mcpp_http_response_problem) or MCPP_ERR_NOMEM; an error is final (the
 * parts before it in data were given). Bytes after the answer's end are
 * ignored, and the connection is no longer kept alive: no next answer
 * could be told from them. */
int mcpp_http_response_feed(mcpp_http_response *r, const char *data, size_t n,
                            mcpp_http_part_fn fn, void *arg);

/* The server closed the connection: 1 if that ended the answer whole (a
 * body framed by the close, or one already ended), else 0 (broken). */
int mcpp_http_response_closed(mcpp_http_response *r);

/* Why the bytes are not HTTP (a sentence with an excerpt), "" if they are. */
const char *mcpp_http_response_problem(const mcpp_http_response *r);

/* Once the head was read: the status, and the headers (names in lower
 * case, NUL-terminated, in the order they first came). */
int mcpp_http_response_status(const mcpp_http_response *r);
size_t mcpp_http_response_header_count(const mcpp_http_response *r);
void mcpp_http_response_header_at(const mcpp_http_response *r, size_t i,
                                  const char **name, const char **value);
/* The value of the header named lower_name, or NULL. */
const char *mcpp_http_response_header(const mcpp_http_response *r,
                                      const char *lower_name);

/* 1 once the head was read (the body is under way or over). */
int mcpp_http_response_started(const mcpp_http_response *r);
/* 1 once the answer ended. */
int mcpp_http_response_ended(const mcpp_http_response *r);
/* 1 if the connection may carry the next request once the answer ends. */
int mcpp_http_response_keep_alive(const mcpp_http_response *r);
/* 1 if the body ends only when the server closes. */
int mcpp_http_response_until_close(const mcpp_http_response *r);

#ifdef __cplusplus
}
#endif

#endif /* MCPPING_HTTP_RESPONSE_H */
