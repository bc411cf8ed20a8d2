/* mcpping the engine (mcpp_engine_*): sans-I/O; every call takes `now`; and the governance records.
 * Included by mcpping.h; compiles alone too. */
#ifndef MCPPING_ENGINE_H
#define MCPPING_ENGINE_H

#include <stddef.h>
#include <stdint.h>
#include "mcpping/alloc.h"
#include "mcpping/settings.h"
#include "mcpping/events.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ------------------------------------------------------------------ engine */

typedef struct mcpp_engine mcpp_engine;

/* What a frame the engine asks to write is, for drivers that account
 * differently for our own pings, pongs and cancellations. */
typedef enum mcpp_frame_kind {
  MCPP_FRAME_PING = 0,    /* our ping request */
  MCPP_FRAME_PONG = 1,    /* our answer to the peer's ping */
  MCPP_FRAME_CANCEL = 2,  /* notifications/cancelled for a timed-out or
                             abandoned request */
  MCPP_FRAME_PROBE = 3    /* our idle probe (a request with our own id) */
} mcpp_frame_kind;

/* What the driver can observe of a stdio server's process. */
typedef enum mcpp_process_state {
  MCPP_PROCESS_UNKNOWN = 0, /* not observable (no process, no /proc) */
  MCPP_PROCESS_RUNNING = 1, /* running or sleeping: its loop may run */
  MCPP_PROCESS_STOPPED = 2, /* stopped (SIGSTOP, SIGTSTP) or traced */
  MCPP_PROCESS_EXITED = 3   /* exited or a zombie */
} mcpp_process_state;

#define MCPP_ENGINE_CALLBACKS_V1 1
typedef struct mcpp_engine_callbacks {
  int version; /* 0 or MCPP_ENGINE_CALLBACKS_V1 (see mcpping/alloc.h) */
  /* Required. Write one frame (no newline included) to the peer. A non-zero
   * return is an error the engine passes back out of the calling function. */
  int (*send)(mcpp_engine *engine, mcpp_frame_kind kind, const char *frame,
              size_t len, void *user_data);
  /* Optional. Hand a synthetic frame to the application (the JSON-RPC error
   * for an application request that timed out). No newline. */
  void (*deliver)(mcpp_engine *engine, const char *frame, size_t len,
                  void *user_data);
  /* Optional. Something happened. */
  void (*on_event)(mcpp_engine *engine, const mcpp_event *event,
                   void *user_data);
  /* Optional. One governance record: a JSON object, no newline. */
  void (*on_record)(mcpp_engine *engine, const char *json, size_t len,
                    void *user_data);
  /* Optional. Returns the peer process's mcpp_process_state. The engine
   * calls it only when a deadline needs it (never on a fixed fast timer):
   * once at the first keepalive, then halfway through a keepalive ping's
   * or probe's timeout while it is unanswered, when keepalive is due on a
   * session with nothing to send (no ping, no probe), and a timeout after
   * it saw the process stopped. NULL means the
   * process is not observable (HTTP, custom transports). STOPPED makes the
   * peer suspect at once and stale if it is still stopped a timeout later;
   * EXITED makes it stale for good (the driver also sees the exit itself). */
  int (*process_state)(mcpp_engine *engine, void *user_data);
} mcpp_engine_callbacks;

/* Creates an engine. `now` starts the keepalive clock. Returns 0 and sets
 * *out, or MCPP_ERR_INVALID_ARGUMENT (a setting out of range:
 * mcpp_settings_problem names it), MCPP_ERR_INTERVAL_TOO_SHORT,
 * MCPP_ERR_NOMEM. settings and callbacks are copied; alloc may be NULL and
 * must outlive the engine. */
int mcpp_engine_new(mcpp_engine **out, const mcpp_settings *settings,
                    const mcpp_engine_callbacks *callbacks, void *user_data,
                    const mcpp_allocator *alloc, uint64_t now);

/* Frees the engine. Emits nothing; call mcpp_engine_close first for the
 * closed event and record. NULL is a no-op. */
void mcpp_engine_free(mcpp_engine *engine);

/* Result of mcpp_engine_recv. */
#define MCPP_RECV_FORWARD 0  /* hand the frame to the application unchanged */
#define MCPP_RECV_CONSUMED 1 /* the engine handled it (a ping, or our pong) */

/* Feeds one inbound frame (newline stripped; a trailing \r is the caller's
 * to strip). Answers pings (via send), matches our pongs, learns the
 * session, and counts as proof of life. Returns MCPP_RECV_FORWARD,
 * MCPP_RECV_CONSUMED, or a negative error: the send callback's,
 * MCPP_ERR_CLOSED after mcpp_engine_close, MCPP_ERR_NOMEM (answering a ping
 * with a very long id), MCPP_ERR_INVALID_ARGUMENT. Frames that are not JSON
 * are forwarded: the application decides what to do. */
int mcpp_engine_recv(mcpp_engine *engine, const char *frame, size_t len,
                     uint64_t now);

/* Tells the engine that bytes arrived before a full frame did (a long line
 * still streaming in): liveness only, no parse. */
void mcpp_engine_touch(mcpp_engine *engine, uint64_t now);

/* Tells the engine the application is sending this frame to the peer (the
 * caller writes it, unchanged). The engine ledgers requests (with the
 * default timeout, settings.request_timeout_ms), learns the session from
 * the handshake (initialize, server/discover, or a first request carrying
 * the 2026-07-28 _meta envelope), and clears requests the application
 * cancels. Returns 0, or MCPP_ERR_NOMEM (the frame must still be sent). */
int mcpp_engine_observe_outbound(mcpp_engine *engine, const char *frame,
                                 size_t len, uint64_t now);

/* Request timeouts for mcpp_engine_observe_outbound_timed and friends. */
#define MCPP_TIMEOUT_DEFAULT 0u         /* settings.request_timeout_ms */
#define MCPP_TIMEOUT_NONE UINT32_MAX    /* this request never times out */

/* As mcpp_engine_observe_outbound, with this request's own timeout in ms
 * (1..MCPP_MAX_MS, MCPP_TIMEOUT_DEFAULT or MCPP_TIMEOUT_NONE; a frame that
 * is not a request ignores it). Requests expire in deadline order. On
 * expiry the engine sends notifications/cancelled (never for initialize or
 * server/discover), delivers a JSON-RPC error for the request to the
 * application (code -32001, "Request timed out (mcpping: no answer after N
 * ms)"), clears its ledger entry and emits REQUEST_TIMEOUT. Returns 0,
 * MCPP_ERR_INVALID_ARGUMENT (timeout_ms out of range: nothing was
 * observed, do not send) or MCPP_ERR_NOMEM (the frame must still be
 * sent). */
int mcpp_engine_observe_outbound_timed(mcpp_engine *engine, const char *frame,
                                       size_t len, uint32_t timeout_ms,
                                       uint64_t now);

/* Abandons the in-flight application request with this raw id (an abort;
 * ids match by value, as answers do): as an expiry, but now and with its
 * own words: notifications/cancelled (never for initialize or
 * server/discover) with reason "mcpping: request abandoned by the
 * application", a JSON-RPC error delivered to the application (code
 * -32800, "Request cancelled (mcpping: abandoned by the application)"),
 * the entry cleared, a REQUEST_CANCELLED event. An abort is the
 * application's choice, so it does not make the connection unhealthy.
 * Returns 0, MCPP_ERR_NOT_FOUND (no such request in flight),
 * MCPP_ERR_CLOSED, MCPP_ERR_INVALID_ARGUMENT or the send callback's error
 * (the request is abandoned all the same). */
int mcpp_engine_cancel_request(mcpp_engine *engine, const char *id,
                               size_t id_len, uint64_t now);

/* Tells the engine whether the driver is reading the peer (0 while it has
 * stopped for backpressure). While not reading, silence is ours, not the
 * peer's: no keepalive ping or probe goes out, no ping, probe or request
 * times out, and no process check runs. When reading resumes, pending
 * deadlines get the same grace period as after a host pause
 * (pause_threshold_ms), a keepalive ping still out is abandoned and
 * re-sent, and the keepalive interval starts over. */
void mcpp_engine_set_reading(mcpp_engine *engine, int reading, uint64_t now);

/* Sends a manual ping now (always allowed, also before the handshake and
 * beside a keepalive ping). timeout_ms 0 uses settings.timeout_ms, else
 * 1..MCPP_MAX_MS (MCPP_ERR_INVALID_ARGUMENT beyond). Sets
 * *seq (may be NULL); the outcome arrives as a PONG, TIMEOUT, PING_ERROR or
 * UNSUPPORTED event with that ping_seq. Returns 0, MCPP_ERR_UNSUPPORTED,
 * MCPP_ERR_TOO_MANY_PINGS, MCPP_ERR_CLOSED, MCPP_ERR_NOMEM or the send
 * callback's error. */
int mcpp_engine_ping(mcpp_engine *engine, uint32_t timeout_ms, uint64_t now,
                     uint64_t *seq);

/* Forgets a manual ping: its outcome will not be reported. Returns 0 or
 * MCPP_ERR_NOT_FOUND. A late pong for it is still consumed. */
int mcpp_engine_cancel_ping(mcpp_engine *engine, uint64_t seq);

/* Returns the monotonic time (µs) at which mcpp_engine_on_timer must be
 * called, or UINT64_MAX if nothing is scheduled. Cheap; call after every
 * engine call and re-arm lazily (only if earlier than the armed timer). */
uint64_t mcpp_engine_next_deadline(const mcpp_engine *engine);

/* Runs what is due at `now`: ping and probe timeouts, process checks,
 * keepalive pings or probes, request timeouts. Returns 0 or the send
 * callback's error. */
int mcpp_engine_on_timer(mcpp_engine *engine, uint64_t now);

/* Marks the connection closed: emits the CLOSED event and record with the
 * in-flight disposition, reports outstanding manual pings as TIMEOUT events
 * with error MCPP_ERR_CLOSED. reason may be NULL; err is 0 or an
 * MCPP_ERR_* code. Idempotent. */
void mcpp_engine_close(mcpp_engine *engine, int err, const char *reason,
                       uint64_t now);

/* Feeds the server process's CPU time so far (user + system, in µs), for
 * the detector's busy check: a driver that can read it calls this from its
 * process_state callback, so it costs nothing between verdicts. When pings
 * fail while an application request is in flight, CPU time that grew
 * between two looks marks the server busy rather than stale, until the
 * request ends or passes its own deadline. Returns 0, or
 * MCPP_ERR_INVALID_ARGUMENT for a NULL engine. */
int mcpp_engine_set_process_cpu(mcpp_engine *engine, uint64_t cpu_us);

/* Sets the session id (Mcp-Session-Id) printed in records. Copied. */
int mcpp_engine_set_session_id(mcpp_engine *engine, const char *session_id);

/* Sets the reconnect attempt printed in records (0 = none: null). */
void mcpp_engine_set_reconnect_attempt(mcpp_engine *engine, uint32_t attempt);

/* Emits a "reconnect" record (for hosts that reconnect). */
void mcpp_engine_record_reconnect(mcpp_engine *engine, uint64_t now);

/* The JSON-RPC error code of the answer mcpping gives the application for
 * a request whose server failed while it was in flight. The error's data
 * is {"mcpping":"in_doubt"} for a request that may have run on the server
 * (tools/call, anything not known to be side-effect free) and
 * {"mcpping":"cancelled"} for one known to have no side effects. */
#define MCPP_CODE_IN_DOUBT (-32003)

/* Fails every in-flight application request: the application gets a
 * JSON-RPC error (MCPP_CODE_IN_DOUBT) for each, in send order, and the
 * ledger is cleared. Nothing goes to the peer (it is gone) and nothing is
 * ever replayed. Returns how many requests were failed. */
uint32_t mcpp_engine_fail_in_flight(mcpp_engine *engine, uint64_t now);

/* Fails one in-flight application request whose answer cannot come any
 * more (raw id, matched by value): a Streamable HTTP stream that ended
 * before the answer and cannot be resumed, its session gone. As
 * mcpp_engine_fail_in_flight for that request alone: a JSON-RPC error
 * (MCPP_CODE_IN_DOUBT) delivered, the entry cleared, nothing sent.
 * Returns 0, MCPP_ERR_NOT_FOUND (not in flight: answered, timed out),
 * MCPP_ERR_CLOSED or MCPP_ERR_INVALID_ARGUMENT. */
int mcpp_engine_fail_request(mcpp_engine *engine, const char *id,
                             size_t id_len, uint64_t now);

/* 1 if frame (a request this engine sent or saw go out: a ping, a probe,
 * an application request) still waits for its answer; 0 once it has one,
 * timed out, was cancelled or failed, and for anything that is no
 * request. A Streamable HTTP client cuts the POST (or GET) of a request
 * the engine no longer waits for: a server that never answers would
 * otherwise hold a connection per request for good. */
int mcpp_engine_awaits(const mcpp_engine *engine, const char *frame,
                       size_t len);

/* The opening bytes of a line mcpp_unreadable_text shows: 64, and one
 * more so that it knows to add "...". What to keep of a line for it. */
#define MCPP_UNREADABLE_KEPT 65

/* How many frames from the peer were not JSON-RPC messages (not a JSON
 * object, or an object with none of method, id, result and error: a log
 * line, a byte order mark, another framing, a batch array). *first and
 * *len (each may be NULL) get the opening bytes of the first one (up to
 * MCPP_UNREADABLE_KEPT), kept by the engine for its life. Such frames are forwarded as
 * always; this only lets a handshake that times out say why
 * (mcpp_unreadable_text). */
uint64_t mcpp_engine_unreadable(const mcpp_engine *engine, const char **first,
                                size_t *len);

/* What a peer wrote that its reader could not take: frames that are not
 * JSON-RPC messages (mcpp_engine_unreadable), and bytes after its last
 * newline that wait for one (a peer that forgot the newline). */
typedef struct mcpp_unreadable {
  uint64_t lines;        /* frames that are not JSON-RPC messages */
  const char *first;     /* the first one's opening; NULL: not kept */
  size_t first_len;
  size_t unended;        /* bytes that no newline has ended (yet) */
  const char *tail;      /* their opening; NULL: not kept */
  size_t tail_len;
} mcpp_unreadable;

/* Writes, NUL-terminated into out[0..cap), the sentence that says what
 * `who` ("the server") wrote that could not be read, showing each kind's
 * opening, at most 64 bytes, in quotes, escaped as a JSON string is and
 * what cannot be seen too (the byte order mark as \ufeff, a byte that is
 * not UTF-8 as \xff; the sentence is valid UTF-8), e.g.
 *   the server wrote a line that is not JSON-RPC (it starts with a byte
 *   order mark): "\ufeff{\"jsonrpc\":\"2.0\",..."
 *   the server wrote 146 bytes that no newline ends: "{\"jsonrpc\":..."
 *   the server wrote 2 lines that are not JSON-RPC, the first: "x", then
 *   9 bytes that no newline ends: "{\"id\":1}"
 * Returns the sentence's length (as snprintf: more than cap - 1 means it
 * was cut); 0, with out "", if it wrote nothing of either kind. */
size_t mcpp_unreadable_text(const char *who, const mcpp_unreadable *what,
                            char *out, size_t cap);

/* mcpp_unreadable_text for the engine's own count and first frame, in its
 * words: the peer is "the server" (role client) or "the client"; on stdio
 * it "wrote a line", on another transport it "sent a message" (an SSE
 * event, a JSON body). No bytes without a newline: the engine sees frames
 * only (the runtime adds them, mcpp_runtime_unreadable). */
size_t mcpp_engine_unreadable_text(const mcpp_engine *engine, char *out,
                                   size_t cap);

/* Ends the engine of a server that is being replaced (reconnect): fails
 * the in-flight requests as mcpp_engine_fail_in_flight, reports manual
 * pings closed (as mcpp_engine_close does), sets reconnect_attempt, and
 * emits RECONNECTING (message: reason; attempt; delay_ms; in_flight and
 * disposition: the failed requests) with a "reconnect" record, instead of
 * CLOSED. The engine is closed afterwards. reason may be NULL. */
void mcpp_engine_close_reconnecting(mcpp_engine *engine, const char *reason,
                                    uint32_t attempt, uint32_t delay_ms,
                                    uint64_t now);

typedef struct mcpp_engine_info {
  mcpp_state state;
  int unsupported;            /* ping is not available on this session */
  int initialized;            /* handshake complete */
  const char *protocol_version; /* NULL until known */
  const char *peer_name;      /* serverInfo/clientInfo name, else settings */
  uint32_t failure_count;
  uint32_t in_flight;         /* application requests awaiting answers */
  uint64_t oldest_in_flight_us; /* send time of the oldest, 0 if none */
  uint64_t app_timeouts;      /* application requests that timed out */
  uint64_t last_rx;           /* time of the last inbound byte */
  /* Counters. */
  uint64_t pings_sent, pongs_received, ping_timeouts, ping_errors;
  uint64_t pings_answered, frames_in, frames_out;
  /* Proof of life: when the engine last had each kind (0: never). Traffic
   * includes pongs and probe answers; process is the last time the process
   * was observed running. */
  uint64_t last_traffic_us, last_ping_us, last_probe_us, last_process_us;
  mcpp_proof freshest_proof; /* the latest of them (a pong over the traffic
                                it also is); NONE before any */
  const char *probe_method;  /* the idle probe keepalive sends now, NULL if
                                it pings or has no probe */
  mcpp_process_state process_state; /* as last observed; UNKNOWN if never */
  int reading;               /* 0 while the driver has stopped reading */
  uint64_t probes_sent, probes_answered, probe_timeouts;
  uint64_t app_cancels;      /* requests abandoned by the application */
} mcpp_engine_info;

/* Fills *info, a struct of info_version (no byte past that version's
 * fields is written; an unknown version writes nothing). Strings point
 * into the engine and live until it changes them or is freed. Call it
 * through mcpp_engine_get_info. */
void mcpp_engine_get_info_versioned(const mcpp_engine *engine,
                                    int info_version, mcpp_engine_info *info);
#define mcpp_engine_get_info(engine, info)                                    \
  mcpp_engine_get_info_versioned((engine), MCPP_ENGINE_INFO_VERSION, (info))

/* Returns 1 only if the peer is alive AND no application request has timed
 * out since the last answer AND none has waited past its limit: its own
 * deadline if it has one, else the ping timeout (settings.timeout_ms).
 * Pongs alone never make a connection healthy (liveness laundering). A
 * pure function of the engine's state and `now`. */
int mcpp_engine_healthy(const mcpp_engine *engine, uint64_t now);

/* Returns the time (µs) at which mcpp_engine_healthy turns 0 if nothing
 * else happens (the first request passing its limit), UINT64_MAX if
 * never, or `now` if it is 0 already: healthy(e, t) == 1 exactly for
 * now <= t < healthy_until(e, now) until the next engine call. Lets
 * another thread read healthy live from a snapshot. */
uint64_t mcpp_engine_healthy_until(const mcpp_engine *engine, uint64_t now);

/* Calls fn for every in-flight application request (raw id JSON, method)
 * with its send time, in send order. */
void mcpp_engine_foreach_in_flight(
    const mcpp_engine *engine,
    void (*fn)(const char *id, size_t id_len, const char *method,
               uint64_t sent_at, void *arg),
    void *arg);

/* ------------------------------------------------------------------ records */

/* Writes the governance record of `event` as one JSON object (no newline)
 * into buf. Returns the length written (excluding the NUL it always adds)
 * or, if cap is too small, the length needed (snprintf-style). The engine's
 * on_record callback already gets these; this is for hosts that record
 * events they synthesize. */
size_t mcpp_engine_format_record(const mcpp_engine *engine,
                                 const mcpp_event *event, uint64_t now,
                                 char *buf, size_t cap);

#ifdef __cplusplus
}
#endif

#endif /* MCPPING_ENGINE_H */
