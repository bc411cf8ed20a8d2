/*
 * A sans-I/O Streamable HTTP client session (included by mcpping.h): the
 * sequencing both bindings' HTTP clients follow, written once. It owns the
 * session id and protocol version, each exchange (a POST and its answer,
 * a GET that resumes a request's SSE answer, the GET listening stream, the
 * DELETE at close), the frames held while the session is renewed, the
 * resumption of broken answers and the reopening of the listening stream,
 * applying the rules of rules.h (mcpp_http_body_kind, mcpp_http_post_answer,
 * mcpp_http_renewal_*, mcpp_http_answer_after, mcpp_http_listen_after, ...).
 *
 * The host keeps the I/O, as it keeps pipes for stdio: its own HTTP stack
 * (TLS, trust store, proxies), its timers and its engine. It tells the
 * session what happened (mcpp_http_session_post, _response, _body, _end,
 * _failed, _wake, ...) and then takes what to do, in order, from
 * mcpp_http_session_next: start or cut an exchange, hand a message to the
 * engine, wake the session later, run the handshake again. The session
 * reads no clock and does no I/O.
 *
 * Requests are named by tags the host chooses (nonzero; 0: a frame that is
 * no request whose answer the host waits for): a tag's answer is resumed
 * until the host says the request is settled (mcpp_http_session_settled),
 * which cuts what still reads for it.
 */
#ifndef MCPPING_HTTP_SESSION_H
#define MCPPING_HTTP_SESSION_H

#include <stddef.h>
#include <stdint.h>
#include "mcpping/rules.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct mcpp_http_session mcpp_http_session;

/* What the session asks its host to do. */
typedef enum mcpp_http_do_kind {
  MCPP_HTTP_DO_START = 1,       /* send a request (method, url parts,
                                   headers, body) as `exchange`; report
                                   its answer with _response, _body and
                                   _end, or _failed if none came */
  MCPP_HTTP_DO_CUT = 2,         /* stop `exchange` now (close its
                                   connection); nothing more is read of it */
  MCPP_HTTP_DO_RECEIVE = 3,     /* data is an inbound message: to the
                                   engine, then the application */
  MCPP_HTTP_DO_TOUCH = 4,       /* proof of life (an SSE comment) */
  MCPP_HTTP_DO_LOST = 5,        /* the answer to `tag` cannot come any more:
                                   the engine answers it in doubt
                                   (mcpp_engine_fail_request) */
  MCPP_HTTP_DO_SESSION = 6,     /* the session id is now data (NULL: none,
                                   the session is being renewed) */
  MCPP_HTTP_DO_RENEW = 7,       /* the session expired: run the handshake
                                   again (forget the protocol version),
                                   then call mcpp_http_session_renewed */
  MCPP_HTTP_DO_GONE = 8,        /* the session is over without a DELETE
                                   (a POST reached no server: it cannot be
                                   reached; or its renewal failed): close
                                   the engine with the reason in data;
                                   `exchange` is the POST that failed, if
                                   one did */
  MCPP_HTTP_DO_LISTENING = 9,  /* value 1: the GET listening stream
                                   opened; 0: it is not open (refused,
                                   failed, ended, stopped or not tried) */
  MCPP_HTTP_DO_WAIT = 10,       /* call mcpp_http_session_wake(`wait`)
                                   after ms (a wake the session no longer
                                   wants is ignored) */
  MCPP_HTTP_DO_CLOSED = 11      /* mcpp_http_session_close is done: its
                                   DELETE was answered, failed, or none
                                   was needed */
} mcpp_http_do_kind;

/* mcpp_http_do's layout: fields are only ever added at the end, and
 * mcpp_http_session_next writes the version the caller's header had (no
 * byte past it), as mcpp_cli_parse does (docs/design.md). */
#define MCPP_HTTP_DO_V1 1
#define MCPP_HTTP_DO_VERSION MCPP_HTTP_DO_V1

/* One thing to do. Its strings are the session's, valid until the next
 * call into the session. */
typedef struct mcpp_http_do {
  int version;          /* set by mcpp_http_session_next */
  mcpp_http_do_kind kind;
  uint64_t exchange;    /* START, CUT, GONE (0: none) */
  uint64_t tag;         /* START, LOST (0: none) */
  uint64_t wait;        /* WAIT */
  uint32_t ms;          /* WAIT: after how long */
  int value;            /* LISTENING */
  const char *data;     /* START: the body (POST; NULL for none); RECEIVE:
                           the message; SESSION: the id (NULL: none);
                           GONE: the reason */
  size_t len;
  /* START: where and what. */
  int method;           /* mcpp_http_method */
  int https;
  const char *host;     /* to resolve (an IPv6 literal without []) */
  unsigned port;
  const char *target;   /* /path?query */
  const mcpp_http_header *headers;
  size_t n_headers;
  uint32_t connect_timeout_ms; /* how long the connect (TLS included) may take */
  uint32_t headers_timeout_ms; /* 0: no bound; else how long the connect and
                                  the response's headers may take */
} mcpp_http_do;

/* A START's request as HTTP/1.1 sends it (head and body): the request
 * line, Host (the port unless the scheme's, an IPv6 host in brackets), the
 * headers in order, Content-Length for a body. A line of the head goes a
 * byte a character (Latin-1, as node:http and http.client send it); one
 * with a character past Latin-1 goes as its UTF-8. snprintf-style: returns
 * the request's size and writes at most cap bytes of it to out. */
size_t mcpp_http_request_bytes(const mcpp_http_do *d, char *out, size_t cap);

/* A session for url (len bytes), which sends the extra headers (copied;
 * a config's headers: often a secret; the URL's user:password becomes
 * Authorization unless they have one) with every request, reads no body
 * longer than max_body bytes (0: the settings' default max_line_bytes),
 * and opens the GET listening stream once a handshake opened a session if
 * listen is 1. NULL with *problem (a sentence that reads after the URL,
 * or "out of memory") when it cannot. */
mcpp_http_session *mcpp_http_session_new(const char *url, size_t len,
                                         const mcpp_http_header *extra,
                                         size_t n_extra, size_t max_body,
                                         int listen, const char **problem);
void mcpp_http_session_free(mcpp_http_session *session);

/* Takes the next thing to do into *out, a struct of do_version: 1, or 0
 * when there is none; MCPP_ERR_INVALID_ARGUMENT for an unknown version
 * (nothing taken or written). Call it through mcpp_http_session_next. */
int mcpp_http_session_next_versioned(int do_version, mcpp_http_session *session,
                                     mcpp_http_do *out);
#define mcpp_http_session_next(session, out) \
  mcpp_http_session_next_versioned(MCPP_HTTP_DO_VERSION, (session), (out))

/* The inputs. Each returns 0 or MCPP_ERR_NOMEM; what an exchange the
 * session no longer knows reports is ignored. */

/* Sends frame: a POST, unless the session is being renewed and the frame
 * must wait for the new one (direct: the handshake's own, never held). */
int mcpp_http_session_post(mcpp_http_session *session, const char *frame,
                           size_t len, uint64_t tag, int direct);

/* The request `tag` is settled (answered, timed out, cancelled): what
 * still reads or waits for its answer is cut. */
int mcpp_http_session_settled(mcpp_http_session *session, uint64_t tag);

/* The answer of exchange began: its status and headers (each may be
 * NULL: absent). */
int mcpp_http_session_response(mcpp_http_session *session, uint64_t exchange,
                               int status, const char *content_type,
                               const char *session_id, const char *location);

/* The next bytes of exchange's body. */
int mcpp_http_session_body(mcpp_http_session *session, uint64_t exchange,
                           const char *data, size_t len);

/* Exchange's body ended: broken is 1 if it did not end as HTTP ends a
 * body (reset, cut mid-body, an unfinished chunked body). */
int mcpp_http_session_end(mcpp_http_session *session, uint64_t exchange,
                          int broken);

/* Exchange got no answer (not reached, refused, timed out, not HTTP);
 * cause names why as the host names it (ECONNREFUSED, ...). */
int mcpp_http_session_failed(mcpp_http_session *session, uint64_t exchange,
                             const char *cause);

/* The handshake negotiated version (sent as MCP-Protocol-Version from now
 * on; NULL: none). */
int mcpp_http_session_set_version(mcpp_http_session *session,
                                  const char *version);

/* The handshake succeeded: the listening stream opens (a LISTENING comes
 * when it has or could not). */
int mcpp_http_session_opened(mcpp_http_session *session);

/* The handshake a RENEW asked for ended: opened 1, what waited is sent;
 * 0, the session is over (GONE, with why: the handshake's error). */
int mcpp_http_session_renewed(mcpp_http_session *session, int opened,
                              const char *why);

/* A WAIT's time has come. */
int mcpp_http_session_wake(mcpp_http_session *session, uint64_t wait);

/* Ends the session: every exchange is cut, then a DELETE ends the session
 * on the server if it has one; CLOSED follows. */
int mcpp_http_session_close(mcpp_http_session *session);

/* Ends the session without a DELETE (the host's own reason: its engine
 * found the server stale): every exchange is cut. */
int mcpp_http_session_lose(mcpp_http_session *session);

/* The session id the server gave (NULL: none). */
const char *mcpp_http_session_id(const mcpp_http_session *session);

/* 1 while the session opens the listening stream when it can; 0 once
 * listening is off or the server said it offers none (405, 501, ...). */
int mcpp_http_session_listens(const mcpp_http_session *session);

/* "start", "cut", "receive", ... for a kind. */
const char *mcpp_http_do_name(mcpp_http_do_kind kind);

#ifdef __cplusplus
}
#endif

#endif /* MCPPING_HTTP_SESSION_H */
