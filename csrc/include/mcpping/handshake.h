/*
 * The client side of the MCP handshake, sans I/O (included by mcpping.h).
 *
 * The machine writes the requests and reads their answers; the binding only
 * carries bytes and time. It asks `initialize` first (every server with
 * ping accepts it); a server that refuses it with any error is asked
 * `server/discover` (protocol 2026-07-28: no initialize, no session, no
 * ping), and one that lists 2026-07-28 gives a 2026 session. Send each
 * request through the engine (observe_outbound or the runtime's send): the
 * engine learns the session from them as from any handshake the
 * application runs.
 *
 *   hs = mcpp_client_hs_new(timeout_ms);
 *   while (mcpp_client_hs_state(hs) == MCPP_CHS_SEND) {
 *     msg = mcpp_client_hs_request(hs, &len, &id);   -- send msg, await id
 *     answer -> mcpp_client_hs_answer(hs, bytes, n)
 *     past the deadline -> mcpp_client_hs_timed_out(hs)
 *     connection lost -> mcpp_client_hs_closed(hs, reason, status, signal)
 *   }
 *   DONE: send mcpp_client_hs_notification() if not NULL; read version,
 *   server info, result. FAILED: mcpp_client_hs_error() is one sentence.
 */
#ifndef MCPPING_HANDSHAKE_H
#define MCPPING_HANDSHAKE_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The version asked for in initialize, and the one proposed in
 * server/discover when initialize is refused. */
#define MCPP_PROTOCOL_VERSION "2025-11-25"
#define MCPP_MODERN_PROTOCOL_VERSION "2026-07-28"

typedef struct mcpp_client_hs mcpp_client_hs;

typedef enum mcpp_client_hs_state {
  MCPP_CHS_SEND = 1,   /* a request is ready: mcpp_client_hs_request */
  MCPP_CHS_WAIT = 2,   /* its answer is awaited */
  MCPP_CHS_DONE = 3,   /* the session is open */
  MCPP_CHS_FAILED = 4  /* mcpp_client_hs_error says why */
} mcpp_client_hs_state;

/* Why a handshake failed. */
typedef enum mcpp_client_hs_error_kind {
  MCPP_CHS_OK = 0,
  MCPP_CHS_TIMED_OUT = 1, /* no answer within the timeout */
  MCPP_CHS_REFUSED = 2,   /* initialize and server/discover both refused */
  MCPP_CHS_VERSION = 3,   /* the server speaks no version mcpping speaks */
  MCPP_CHS_CLOSED = 4,    /* the connection ended first */
  MCPP_CHS_MALFORMED = 5  /* an answer that is no JSON-RPC answer */
} mcpp_client_hs_error_kind;

/* A new handshake whose whole budget is timeout_ms (named in the timeout
 * sentence). NULL when out of memory. */
mcpp_client_hs *mcpp_client_hs_new(uint64_t timeout_ms);
void mcpp_client_hs_free(mcpp_client_hs *hs);

mcpp_client_hs_state mcpp_client_hs_get_state(const mcpp_client_hs *hs);
/* "send", "wait", "done" or "failed" (the bindings' names). */
const char *mcpp_client_hs_state_name(mcpp_client_hs_state state);

/* In MCPP_CHS_SEND: the request message (NUL-terminated, *len its length)
 * and its id as a plain string (*id, may be NULL); the state becomes
 * MCPP_CHS_WAIT. NULL in any other state. */
const char *mcpp_client_hs_request(mcpp_client_hs *hs, size_t *len,
                                   const char **id);

/* The answer to the awaited request (a JSON-RPC response). Returns the new
 * state. */
mcpp_client_hs_state mcpp_client_hs_answer(mcpp_client_hs *hs,
                                           const char *msg, size_t len);

/* The awaited request passed the deadline: FAILED, MCPP_CHS_TIMED_OUT. */
void mcpp_client_hs_timed_out(mcpp_client_hs *hs);
/* The same, with what the transport saw that may say why (NULL or "":
 * nothing), added to the sentence after "; ": the stdio transport gives
 * mcpp_runtime_unreadable's words, so a server that wrote its answer in a
 * form the client cannot read says so. */
void mcpp_client_hs_timed_out_because(mcpp_client_hs *hs, const char *why);

/* The connection ended while waiting. reason: how (NULL: not known yet);
 * exit_status >= 0 or term_signal > 0 name a server process's end when the
 * reason does not. FAILED, MCPP_CHS_CLOSED. */
void mcpp_client_hs_closed(mcpp_client_hs *hs, const char *reason,
                           int exit_status, int term_signal);

/* After DONE: the notification to send next (notifications/initialized),
 * or NULL (2026 sessions have none). */
const char *mcpp_client_hs_notification(const mcpp_client_hs *hs,
                                        size_t *len);

/* After DONE: the negotiated version; 1 on a 2026-07-28 session (no
 * ping; each request carries the _meta envelope); the server's name ("" if
 * none); serverInfo as JSON (NULL if none); the result object as JSON. */
const char *mcpp_client_hs_version(const mcpp_client_hs *hs);
int mcpp_client_hs_modern(const mcpp_client_hs *hs);
const char *mcpp_client_hs_server_name(const mcpp_client_hs *hs);
const char *mcpp_client_hs_server_info(const mcpp_client_hs *hs);
const char *mcpp_client_hs_result(const mcpp_client_hs *hs);

/* After FAILED: one sentence, and its kind. */
const char *mcpp_client_hs_error(const mcpp_client_hs *hs);
mcpp_client_hs_error_kind mcpp_client_hs_error_kind_of(
    const mcpp_client_hs *hs);
const char *mcpp_client_hs_error_kind_name(mcpp_client_hs_error_kind kind);

/* The 2026-07-28 per-request envelope: request msg with params._meta
 * carrying the protocol version, client info and capabilities. The members
 * are spliced in as text: every other byte of msg is kept as written, and
 * an envelope key the application set itself wins (it is not added again).
 * Returns a malloc'd NUL-terminated message (free with free()), or NULL if
 * msg is to be sent unchanged: not strict JSON, no object with a string
 * method, params or _meta not an object or given twice, or out of memory. */
char *mcpp_client_envelope(const char *msg, size_t len, size_t *out_len);

#ifdef __cplusplus
}
#endif

#endif
