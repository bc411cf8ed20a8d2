/* mcpping the shared rules: how a ping ended, RTT statistics, what an HTTP answer means.
 * Included by mcpping.h; compiles alone too. */
#ifndef MCPPING_RULES_H
#define MCPPING_RULES_H

#include <stddef.h>
#include <stdint.h>
#include "mcpping/events.h"
#include "mcpping/engine.h"
#include "mcpping/sse.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ------------------------------------------------------------ shared rules
 *
 * What an event means for the host, decided once here so that every
 * binding reads the same answer: how a manual ping ended, when a stale
 * peer must be closed, the RTT statistics, and what an HTTP answer says. */

/* How a ping ended, from its final event. */
typedef enum mcpp_ping_outcome {
  MCPP_OUTCOME_NONE = 0,    /* not a ping's final event */
  MCPP_OUTCOME_PONG,        /* answered; rtt_us is set */
  MCPP_OUTCOME_TIMEOUT,     /* no answer in time: counted lost */
  MCPP_OUTCOME_ERROR,       /* a JSON-RPC error answer: counted lost */
  MCPP_OUTCOME_INVALID,     /* the result was missing or not an object:
                               counted lost */
  MCPP_OUTCOME_UNSUPPORTED, /* the peer does not support ping: not lost */
  MCPP_OUTCOME_CLOSED       /* abandoned because the connection closed
                               (error MCPP_ERR_CLOSED): not lost, and
                               not a timeout */
} mcpp_ping_outcome;

/* Returns the outcome a PONG, TIMEOUT, PING_ERROR or UNSUPPORTED event
 * reports, MCPP_OUTCOME_NONE for any other event or NULL. */
mcpp_ping_outcome mcpp_event_outcome(const mcpp_event *event);

/* Returns "pong", "timeout", "error", "invalid", "unsupported", "closed",
 * or NULL for NONE. */
const char *mcpp_outcome_name(mcpp_ping_outcome outcome);

/* What a failed ping says when the peer gave no words of its own (a pong
 * whose result is not an object; a peer or protocol without ping): the
 * bindings' ping errors take these. */
#define MCPP_PING_INVALID_MESSAGE "result is not an object"
#define MCPP_PING_UNSUPPORTED_MESSAGE "ping unsupported"
/* A ping abandoned because its connection closed first. */
#define MCPP_PING_CLOSED_MESSAGE "connection closed before the pong"
/* What a failed ping says otherwise, as printf formats that Python's %
 * and Node's util.format take alike: no answer in time (the timeout in
 * ms), and an error answer (its JSON-RPC code and message; a peer that
 * refused ping with a code says it the same way). */
#define MCPP_PING_TIMEOUT_FORMAT "no answer to ping after %d ms"
#define MCPP_PING_ERROR_FORMAT "code=%d %s"

/* The answer a ping the engine made gets when nothing would carry it to
 * the peer (a guard over a transport with no stream open): JSON-RPC -32601
 * "mcpping: no stream to the peer to carry a ping" under the ping's id, so
 * the engine finds the peer ping-unsupported for now and never stale for
 * it. Writes the frame and a NUL into out (at most cap bytes) and returns
 * its length, as snprintf does; 0 if ping is no request. */
size_t mcpp_ping_unreachable_answer(const char *ping, size_t len, char *out,
                                    size_t cap);

/* The answer a request from the peer gets when the application serves no
 * requests (Node's Peer with no 'request' listener, the commands, both
 * Streamable HTTP clients, which hand the application no messages):
 * JSON-RPC -32601 "Method not found" under the request's id, echoed byte
 * for byte, so the peer is not left waiting for an answer that never comes.
 * Writes as mcpp_ping_unreachable_answer does; 0 if frame is no request
 * (a response, a notification, an id of null, not one JSON object). */
size_t mcpp_unserved_request_answer(const char *frame, size_t len, char *out,
                                    size_t cap);

/* Returns 1 if the outcome counts as a lost ping (TIMEOUT, ERROR,
 * INVALID), else 0. */
int mcpp_outcome_is_lost(mcpp_ping_outcome outcome);

/* The stale policy: returns 1 if, after this event from this engine, the
 * host must close the connection (kill the server, end the session), else
 * 0. That is a STALE event with settings.on_stale = MCPP_STALE_CLOSE, or
 * one on a connection whose server process exited, whatever on_stale
 * says: nothing will ever answer it. */
int mcpp_engine_should_close(const mcpp_engine *engine,
                             const mcpp_event *event);

/* Why the connection went stale, as the reason a host closes it with
 * (MCPP_ERR_STALE): "the server went stale: 3 keepalive pings failed",
 * "... 2 idle probes (tools/list) failed", or the process's own words
 * ("the server went stale: the server process exited"); "client" in the
 * server role; "" before the connection went stale. Writes it and a NUL
 * into out (at most cap bytes) and returns its length, as snprintf does. */
size_t mcpp_engine_stale_reason(const mcpp_engine *engine, char *out,
                                size_t cap);

/* The `probe` option's word (both bindings' default) for the engine's
 * own choice of idle probe, settings.probe_method NULL: server/discover
 * on 2026-07-28 sessions, tools/list on servers that refuse ping. */
#define MCPP_PROBE_AUTO "auto"

/* The environment a server the application starts gets, in both
 * libraries and as both official SDKs give it: ours (the default) or, when
 * the application asks, the SDKs' safe subset of it, with the
 * application's env on top. Returns 1 if the subset keeps name=value: one
 * of the SDKs' names (HOME, LOGNAME, PATH, SHELL, TERM, USER; on Windows
 * theirs for it) whose value is no exported shell function ("() {..."). */
int mcpp_env_safe(const char *name, const char *value);

/* The reason of a close the application asked for. */
#define MCPP_CLOSED_BY_APP_REASON "closed by the application"
/* The reason a guard closes with when the transport under it ended. */
#define MCPP_TRANSPORT_CLOSED_REASON "the transport closed"
/* What a call on a connection already closed says (Python's PeerClosed,
 * Node's ClosedError); a call still waiting when it closed says the
 * close's reason instead ("server exited with status 3"). */
#define MCPP_CONNECTION_CLOSED_TEXT "the connection is closed"

/* RTT statistics of one connection's pings in bounded memory: exact
 * running min/avg/max/mdev (Welford) over every pong, p50/p99 by nearest
 * rank over the most recent `window` RTTs. RTTs are doubles in the
 * caller's unit. */
typedef struct mcpp_rtt_stats mcpp_rtt_stats;

/* The deadlines a binding's own calls take when the caller names none:
 * an application request (Python's peer.request / HttpPeer.request,
 * Node's peer.request and its HTTP session) and the client handshake
 * (initialize, connect's init_timeout / initializeTimeoutMs). */
#define MCPP_REQUEST_TIMEOUT_MS 30000u
#define MCPP_INITIALIZE_TIMEOUT_MS 30000u

#define MCPP_RTT_WINDOW 10000u       /* the default window */
#define MCPP_MAX_RTT_WINDOW 16777216u

typedef struct mcpp_rtt_summary {
  uint64_t sent;     /* pings sent */
  uint64_t received; /* pongs */
  uint64_t lost;     /* pings lost (timeouts, errors, invalid answers) */
  double loss_pct;   /* lost of the pings that finished, 0..100 (0 if none) */
  uint64_t count;    /* RTTs recorded; the figures below are NaN if 0 */
  double min, avg, max, mdev, p50, p99;
} mcpp_rtt_summary;

/* Creates statistics over a window of 1..MCPP_MAX_RTT_WINDOW RTTs (0: the
 * default). Returns 0, MCPP_ERR_INVALID_ARGUMENT or MCPP_ERR_NOMEM. alloc
 * may be NULL and must outlive the stats. */
int mcpp_rtt_stats_new(mcpp_rtt_stats **out, uint32_t window,
                       const mcpp_allocator *alloc);
void mcpp_rtt_stats_free(mcpp_rtt_stats *stats);

/* Records a pong's RTT. */
void mcpp_rtt_stats_add(mcpp_rtt_stats *stats, double rtt);

/* Feeds an engine event: PING counts a ping sent, PONG records rtt_us /
 * us_per_unit (1000 for ms, 1e6 for seconds), and a lost outcome
 * (mcpp_outcome_is_lost) counts a lost ping. Other events are ignored. */
void mcpp_rtt_stats_observe(mcpp_rtt_stats *stats, const mcpp_event *event,
                            double us_per_unit);

/* Fills *out. Sorts the window if it changed since the last call. */
void mcpp_rtt_stats_summary(mcpp_rtt_stats *stats, mcpp_rtt_summary *out);

/* Copies the window's RTTs, oldest first, into buf (at most cap of them);
 * returns how many the window holds. */
size_t mcpp_rtt_stats_recent(const mcpp_rtt_stats *stats, double *buf,
                             size_t cap);

/* What an HTTP answer to one POSTed message means (Streamable HTTP). */
typedef enum mcpp_http_verdict {
  MCPP_HTTP_ANSWER = 0,          /* 2xx: the body (JSON, SSE or empty) is
                                    the answer */
  MCPP_HTTP_UNSUPPORTED = 1,     /* 404 whose body is a JSON-RPC error
                                    -32601: the method is not supported */
  MCPP_HTTP_SESSION_EXPIRED = 2, /* any other 404 to a request carrying
                                    an Mcp-Session-Id: the session ended;
                                    initialize again. Also a 400 to a
                                    ping that carried one (a ping is never
                                    a bad request: the server does not
                                    know the session, as servers built on
                                    the TS SDK's examples say of a session
                                    they lost in a restart) */
  MCPP_HTTP_FAILED = 3           /* any other status: the request failed */
} mcpp_http_verdict;

/* Classifies an HTTP status and body (may be NULL if len is 0) that
 * answered frame (the POSTed message; NULL for a GET); had_session is 1
 * if the request carried an Mcp-Session-Id. */
mcpp_http_verdict mcpp_http_classify(int status, const char *body,
                                     size_t len, const char *frame,
                                     size_t frame_len, int had_session);

/* Returns "answer", "unsupported", "session_expired" or "failed". */
const char *mcpp_http_verdict_name(mcpp_http_verdict verdict);

/* The JSON-RPC answer a request gets when the POST that carried it met a
 * failed HTTP answer (mcpp_http_classify said unsupported or failed).
 * frame is the POSTed message; body the HTTP answer's (may be NULL if len
 * is 0). If the body is a JSON-RPC error, the request gets the server's
 * error object as it is (its id, often null, is the request's); else a
 * -32000 error saying "HTTP <status> <reason phrase>". Writes the frame
 * and a NUL into out (at most cap bytes) and returns its length, as
 * snprintf does: cap or more means it did not fit. Returns 0 if frame is
 * not a request (a notification or an answer waits for nothing) or not
 * strict JSON. */
size_t mcpp_http_error_answer(int status, const char *body, size_t len,
                              const char *frame, size_t frame_len, char *out,
                              size_t cap);

/* The JSON-RPC answer a request gets when the 2xx answer to its POST is
 * read as one JSON message (MCPP_HTTP_BODY_JSON) but is not JSON: an HTML
 * page, say, where the URL is no MCP endpoint. A -32000 error "the server
 * answered HTTP 200 with text/html, not JSON" (the media type of
 * content_type, which may be NULL) under the request's id, written as
 * mcpp_http_error_answer writes. Returns 0 when the body is blank or strict
 * JSON (it is the answer), or frame is no request. */
size_t mcpp_http_unreadable_answer(int status, const char *content_type,
                                   const char *body, size_t len,
                                   const char *frame, size_t frame_len,
                                   char *out, size_t cap);

/* The JSON-RPC answer a request gets when the body of the answer to its
 * POST (one JSON message, or an error's) runs past limit bytes, the
 * settings' max_line_bytes: the bound a stdio line and an SSE event have,
 * so a server that answers without end costs no more memory than that.
 * The client stops reading there; the request is told at once: -32000
 * "the server's answer is longer than LIMIT bytes (max_line_bytes)" under
 * its id, written as mcpp_http_error_answer writes. Returns 0 if frame is
 * no request. */
size_t mcpp_http_oversize_answer(size_t limit, const char *frame, size_t frame_len,
                                 char *out, size_t cap);

/* The HTTP requests a Streamable HTTP client makes. */
typedef enum mcpp_http_method {
  MCPP_HTTP_POST = 0,  /* one message; answered by JSON, SSE or 202 */
  MCPP_HTTP_GET = 1,   /* the listening stream */
  MCPP_HTTP_DELETE = 2 /* the end of the session */
} mcpp_http_method;

/* Returns "POST", "GET" or "DELETE". */
const char *mcpp_http_method_name(mcpp_http_method method);

/* One request header: pointers into the caller's strings or static text. */
typedef struct mcpp_http_header {
  const char *name;
  const char *value;
} mcpp_http_header;

/* The headers of a request: the caller's extra headers (a config's
 * headers: Authorization, say) first, in their order, except any whose
 * name, compared case-insensitively, is one of mcpping's; then mcpping's:
 * Content-Type: application/json (POST), Accept (POST: application/json,
 * text/event-stream; GET: text/event-stream), Mcp-Session-Id if session is
 * not NULL or empty, MCP-Protocol-Version if version is not NULL or empty.
 * Writes at most cap headers to out; returns how many there are. */
size_t mcpp_http_request_headers(mcpp_http_method method,
                                 const mcpp_http_header *extra,
                                 size_t n_extra, const char *session,
                                 const char *version, mcpp_http_header *out,
                                 size_t cap);

/* Why a request header cannot be sent, or NULL if it can: the name must
 * be an HTTP token (RFC 9110: letters, digits and !#$%&'*+-.^_`|~), the
 * value free of control characters but horizontal tab (CR and LF would
 * split the request). The sentence reads after the header's name
 * ("is not ...", "has ..."). */
const char *mcpp_http_header_problem(const char *name, size_t name_len,
                                     const char *value, size_t value_len);

/* How the body of an HTTP answer is read. */
typedef enum mcpp_http_body {
  MCPP_HTTP_BODY_SSE = 0,  /* 2xx text/event-stream (GET: 200 only): each
                              event's data is a message, each comment
                              proof of life */
  MCPP_HTTP_BODY_JSON = 1, /* another 2xx to a POST: one message, nothing
                              if blank */
  MCPP_HTTP_BODY_NONE = 2, /* 202 to a POST, any answer to DELETE: read and
                              dropped */
  MCPP_HTTP_BODY_ERROR = 3 /* read whole and given to mcpp_http_classify
                              (a GET that opens no stream is refused) */
} mcpp_http_body;

/* Decides how to read the answer to method from its status and
 * Content-Type (may be NULL; parameters and case are ignored). */
mcpp_http_body mcpp_http_body_kind(mcpp_http_method method, int status,
                                   const char *content_type);

/* Returns "sse", "json", "none" or "error". */
const char *mcpp_http_body_name(mcpp_http_body body);

/* What the answer to a POST gives the engine. */
typedef enum mcpp_http_post_step {
  MCPP_HTTP_POST_NOTHING = 0, /* a 202, a blank body, an error answering no
                                 request (a notification waits for
                                 nothing) */
  MCPP_HTTP_POST_MESSAGE = 1, /* *msg: the message for the engine */
  MCPP_HTTP_POST_EXPIRED = 2  /* the session ended: mcpp_http_renewal_expired
                                 decides what follows */
} mcpp_http_post_step;

/* What the answer to a POST of frame gives the engine once its body
 * (len bytes; may be NULL if len is 0) is read, as kind
 * (mcpp_http_body_kind) says: MCPP_HTTP_BODY_ERROR is classified
 * (mcpp_http_classify; had_session: the POST carried an Mcp-Session-Id)
 * and a request gets mcpp_http_error_answer's answer; a JSON body is the
 * message, without JSON's white space around it, unless it is no JSON
 * (mcpp_http_unreadable_answer); SSE and NONE give nothing here. whole is
 * 0 when the client stopped reading at limit bytes (the settings'
 * max_line_bytes): an error is then judged by its status, a JSON answer
 * is mcpp_http_oversize_answer's. *msg points into body, or into out for
 * an answer C made (written with a NUL, as snprintf writes); *msg is NULL
 * with *msg_len the answer's length when it did not fit in cap bytes:
 * call again with cap above it. */
mcpp_http_post_step mcpp_http_post_answer(mcpp_http_body kind, int status,
                                          const char *content_type,
                                          const char *body, size_t len,
                                          int whole, size_t limit,
                                          const char *frame, size_t frame_len,
                                          int had_session, const char **msg,
                                          size_t *msg_len, char *out,
                                          size_t cap);

/* Returns "nothing", "message" or "expired". */
const char *mcpp_http_post_step_name(mcpp_http_post_step step);

/* 1 if a POSTed frame that met an expired session is sent again once the
 * new session is open: a ping (it has no side effects), nothing else. */
int mcpp_http_resends(const char *frame, size_t len);

/* A Streamable HTTP session's renewal. When a session of ours ends (a 404
 * on it: mcpp_http_classify's MCPP_HTTP_SESSION_EXPIRED), the first end
 * met on the current session starts the handshake again; what the client
 * sends meanwhile (but the handshake's own requests) waits for the new
 * session and goes in order once it is open; a ping that met the end is
 * sent again on it, once; any other frame that met it gets the server's
 * answer (mcpp_http_error_answer: it did not run). The client keeps the
 * frames that wait, with whatever it sends them with; this keeps which
 * pings were sent again. One per client, from its first session on. */
typedef struct mcpp_http_renewal mcpp_http_renewal;

/* NULL when out of memory. */
mcpp_http_renewal *mcpp_http_renewal_new(void);
void mcpp_http_renewal_free(mcpp_http_renewal *renewal);

/* The steps mcpp_http_renewal_expired asks for (a bit set; 0: answer the
 * frame with mcpp_http_error_answer). */
#define MCPP_HTTP_RENEW 1      /* run the handshake again now: forget the
                                  session's id and protocol version, stop
                                  the listening stream */
#define MCPP_HTTP_SEND_AGAIN 2 /* send the frame again: it waits for the
                                  new session */

/* A session's end met frame (NULL, len 0: the listening stream or a
 * resumed answer met it). on_current_session is 1 if the request carried
 * the client's current session id (an older session's end starts
 * nothing) and the client can run its handshake again. */
int mcpp_http_renewal_expired(mcpp_http_renewal *renewal,
                              int on_current_session, const char *frame,
                              size_t len);

/* 1 if frame, about to be sent, must wait for the new session (the client
 * keeps it, in order, and sends it after mcpp_http_renewal_done). frame
 * may be NULL (len 0) to ask only whether frames wait now. */
int mcpp_http_renewal_holds(mcpp_http_renewal *renewal, const char *frame,
                            size_t len);

/* The handshake that mcpp_http_renewal_expired started has ended; opened
 * is 1 if the new session is open (the client then sends what waited),
 * 0 if not (the client is over). */
void mcpp_http_renewal_done(mcpp_http_renewal *renewal, int opened);

/* The parts of an http:// or https:// URL a Streamable HTTP client uses;
 * each points into the parsed text (not NUL-terminated). */
typedef struct mcpp_http_url {
  int https;             /* 1: https (TLS), 0: http */
  int ipv6;              /* 1 if the host is an IPv6 literal ([...]) */
  const char *host;      /* as written, without an IPv6 literal's [] */
  size_t host_len;
  unsigned port;         /* as written, else 80 or 443 */
  const char *target;    /* path and query as written (may be empty: "/"),
                            without the fragment */
  size_t target_len;
  const char *userinfo;  /* user[:password] before '@', percent-encoded;
                            NULL if the URL has none */
  size_t userinfo_len;
} mcpp_http_url;

/* Parses url (len bytes) into *out. Returns NULL, or why mcpping does not
 * open it, a sentence that reads after the URL ("has no host"): another
 * scheme than http/https (in any case), a blank, control or non-ASCII
 * character anywhere, an empty host, a host with other characters than
 * letters, digits and -._~, an IPv6 literal that is not one, a port that is
 * not 1 to 65535 (":" alone is the default port), a broken %XX. */
const char *mcpp_http_url_parse(const char *url, size_t len,
                                mcpp_http_url *out);

/* The text mcpp_http_url_text writes. */
typedef enum mcpp_http_url_part {
  MCPP_HTTP_URL_REQUEST = 0, /* scheme://host:port/target: where a request
                                goes (no credentials, no fragment) */
  MCPP_HTTP_URL_TARGET = 1,  /* /path?query, "/" for none */
  MCPP_HTTP_URL_NAME = 2,    /* host:port ([v6]:port): the server's name
                                until its handshake gives one */
  MCPP_HTTP_URL_HOST = 3,    /* the host to resolve (v6 without []) */
  MCPP_HTTP_URL_SHOWN = 4    /* scheme://host:port/path for a sentence or a
                                record, user:password@ and the query (where
                                secrets go) as ***: ***@host, ?*** */
} mcpp_http_url_part;

/* Writes part of a parsed URL and a NUL into out (at most cap bytes);
 * returns its length, as snprintf does. */
size_t mcpp_http_url_text(const mcpp_http_url *url, mcpp_http_url_part part,
                          char *out, size_t cap);

/* The Authorization header value a URL's user:password becomes ("Basic "
 * and the base64 of the percent-decoded text, RFC 7617), written with a
 * NUL into out (at most cap bytes); returns its length, as snprintf does.
 * Returns 0 (out "") when the URL has none or the caller's extra headers
 * already have an Authorization (the caller's wins). */
size_t mcpp_http_url_credentials(const mcpp_http_url *url,
                                 const mcpp_http_header *extra,
                                 size_t n_extra, char *out, size_t cap);

/* Where a Streamable HTTP client goes when its request is redirected:
 * for a 307 or 308 (they keep the method and the body), the Location (an
 * absolute URL, or a path from '/') when it is on the request's own origin
 * (scheme, host and port: the caller's headers, credentials among them, go
 * to no other), as a request URL written with a NUL into out; returns its
 * length, as snprintf does. 0 for any other status (a 301, 302 or 303
 * would turn a POST into a GET) or a Location elsewhere or unreadable: the
 * answer is then an error (mcpp_http_error_answer). A request follows at
 * most MCPP_HTTP_MAX_REDIRECTS of them; the session then sends everything
 * to the new URL (an MCP endpoint that redirects does so for every
 * request, /mcp/ to /mcp). */
size_t mcpp_http_redirect_url(int status, const char *location,
                              const mcpp_http_url *from, char *out,
                              size_t cap);
#define MCPP_HTTP_MAX_REDIRECTS 5

/* A name resolution failure (getaddrinfo's EAI_* code) as the
 * connect-failure cause both hosts give: "ENOTFOUND" for no such name (as
 * Node names it), "EAI_AGAIN" and the like for the rest; NULL for a code
 * it does not know. */
const char *mcpp_http_resolve_error_name(int code);

/* A TLS failure as the connect-failure cause both hosts give: 0 (no
 * certificate verdict: the handshake failed, say a plain HTTP server)
 * "EPROTO"; an OpenSSL X509_V_ERR_* code its name without the prefix
 * ("DEPTH_ZERO_SELF_SIGNED_CERT", "CERT_HAS_EXPIRED", ...; a host name
 * mismatch "ERR_TLS_CERT_ALTNAME_INVALID"), as Node names them;
 * "CERT_VERIFY_FAILED" for another code. */
const char *mcpp_http_tls_error_name(int verify_code);

/* The connect-failure cause when what came back is not an HTTP/1.1 answer
 * (Python's http.client.HTTPException, Node's HPE_* parse errors). */
#define MCPP_HTTP_NOT_HTTP_CAUSE "the answer is not HTTP/1.1"

/* The reasons a Streamable HTTP client's session ends with when a POST
 * cannot reach the server (printf-style: the URL as MCPP_HTTP_URL_SHOWN
 * writes it, never its credentials or query, then the cause as the host
 * names it: ECONNREFUSED, ...), or when the session expired and the
 * new handshake failed (its error). */
#define MCPP_HTTP_UNREACHABLE_FORMAT "cannot reach %s: %s"
#define MCPP_HTTP_REINIT_FAILED_FORMAT "the session expired and initialize failed: %s"

/* How long a Streamable HTTP client's DELETE at close, and the connect of
 * a GET stream and its response's headers, may take. */
#define MCPP_HTTP_SHORT_TIMEOUT_MS 5000u

/* How long a POST's connect (and, where the host's HTTP stack blocks on
 * it, the sending of its body) may take; its answer has no bound here (a
 * long tool call is no lost server: the engine's deadlines decide). */
#define MCPP_HTTP_POST_CONNECT_TIMEOUT_MS 60000u

/* What a Streamable HTTP client does when its GET listening stream ends
 * (the stream was open), fails (no answer came: not reached, cut, timed
 * out) or is refused (an answer that is no event stream). */
typedef enum mcpp_http_listen_step {
  MCPP_HTTP_LISTEN_AGAIN = 0,   /* open it again after *wait_ms */
  MCPP_HTTP_LISTEN_NEVER = 1,   /* the server offers none (405, 501, any
                                 * refusal that is not a "try later"): it
                                 * is not asked again on this session */
  MCPP_HTTP_LISTEN_EXPIRED = 2  /* the session expired (a 404): initialize
                                 * again, which opens a new stream */
} mcpp_http_listen_step;

/* The rule both clients follow after their GET listening stream (always
 * sent with a session) is over. stream: the parser its events went
 * through (kept across reopenings; NULL for none), whose retry field the
 * server asks to be waited; opened: its event stream had begun; else
 * status is the refusal's HTTP status with its body, or 0 for no answer.
 * *wait_ms is the last wait (0: none since the stream was last open) and
 * becomes the next: a stream that was open is opened again after its
 * retry, else 250 ms; one that failed, or was told to try later (408,
 * 429, 502, 503, 504), after a wait that doubles from 250 ms while it
 * fails, at most 30 s, and never shorter than the retry. Any other
 * refusal is NEVER, so a server that cannot serve GET is not asked again
 * and again. */
mcpp_http_listen_step mcpp_http_listen_after(const mcpp_sse *stream, int opened,
                                             int status, const char *body,
                                             size_t len, uint32_t *wait_ms);

/* The step's name: "again", "never" or "expired". */
const char *mcpp_http_listen_step_name(mcpp_http_listen_step step);

/* SEP-1699: a server that gave an event ID on the SSE answer to a POST may
 * close it before the request's answer, and the client resumes it with a
 * GET carrying Last-Event-ID (the header MCPP_HTTP_LAST_EVENT_ID, the
 * value mcpp_sse_last_event_id), on the same session, until the answer
 * comes (mcpp_http_is_answer), the request is settled, or the GET is
 * refused (then the request meets its deadline). After such a stream or
 * a resuming GET ended without the answer, returns 1 to resume after
 * *wait_ms: the stream's retry if it gave one, else 250 ms doubling from
 * the last wait (*wait_ms, 0 at first) to 30 s; 0 when it cannot be
 * resumed (no event ID came). */
int mcpp_http_resume_after(const mcpp_sse *stream, uint32_t *wait_ms);
#define MCPP_HTTP_LAST_EVENT_ID "Last-Event-ID"

/* What follows when a request's SSE answer (or a GET resuming it) is over
 * without the answer. */
typedef enum mcpp_http_answer_step {
  MCPP_HTTP_ANSWER_RESUME = 0, /* an event ID came: resume it with a GET
                                * after *wait_ms (mcpp_http_resume_after) */
  MCPP_HTTP_ANSWER_WAIT = 1,   /* it ended cleanly and gave no event ID: the
                                * request keeps its deadline (a server may
                                * still send the answer on its listening
                                * stream) */
  MCPP_HTTP_ANSWER_LOST = 2    /* it broke (the connection reset or closed
                                * mid-body) and gave no event ID: the answer
                                * has nowhere left to come, so the request
                                * is answered in doubt now
                                * (mcpp_engine_fail_request); whether it ran
                                * is unknown */
} mcpp_http_answer_step;

/* The rule both clients follow when a request's answer stream is over
 * without the answer: broken is nonzero when it did not end as HTTP ends a
 * body (a reset, an unfinished chunked body, a closed connection mid-event).
 * stream NULL: none (no event ID came). *wait_ms is as for
 * mcpp_http_resume_after. A proxy that cuts a long tool call's stream, or
 * a server that dies mid-call, so fails the call at once instead of at its
 * deadline. */
mcpp_http_answer_step mcpp_http_answer_after(const mcpp_sse *stream, int broken,
                                             uint32_t *wait_ms);

/* The step's name: "resume", "wait" or "lost". */
const char *mcpp_http_answer_step_name(mcpp_http_answer_step step);

/* 1 if msg is the answer (a result or an error) to the request in frame:
 * the same id, byte for byte; else 0. */
int mcpp_http_is_answer(const char *frame, size_t frame_len, const char *msg,
                        size_t msg_len);

#ifdef __cplusplus
}
#endif

#endif /* MCPPING_RULES_H */
