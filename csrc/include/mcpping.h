/*
 * mcpping: the liveness layer for Model Context Protocol connections.
 *
 * This is the one public header. It has three layers:
 *
 *   1. The engine (mcpp_engine_*): sans-I/O. It reads no clock, does no I/O
 *      and allocates through an injectable allocator. Every call takes `now`,
 *      a monotonic timestamp in microseconds chosen by the caller. It tells the
 *      caller what to write (callbacks), what happened (events and governance
 *      records) and when it next wants to be woken (next_deadline/on_timer).
 *   2. The driver (mcpp_conn_*): binds one engine to a stdio MCP server that it
 *      spawns on a uv_loop_t it is given. Single-threaded: call it only from
 *      the loop's thread.
 *   3. The runtime (mcpp_runtime_*): one native I/O thread with its own loop,
 *      serving many connections, driven from any thread. The Python and Node
 *      bindings use this layer.
 *
 * Conventions: functions that can fail return 0 or a negative MCPP_ERR_*
 * code (see mcpp_strerror()). An error return means no callback fires for
 * that call. Strings passed in are copied unless a comment says otherwise;
 * pointers passed to callbacks are valid only during the callback.
 */
#ifndef MCPPING_H
#define MCPPING_H

#include <stddef.h>
#include <stdint.h>
#include "mcpping/handshake.h"
#include "mcpping/sse.h"

#ifdef __cplusplus
extern "C" {
#endif

#define MCPP_VERSION "0.1.0"

/* ---------------------------------------------------------------- errors */

/* Every error, once: XX(NAME, code, sentence). The enum below, mcpp_strerror
 * and mcpp_errname are made from it (as uv-errno.h does), and the bindings
 * read the names and codes from the library rather than copying them. */
#define MCPP_ERRNO_MAP(XX)                                                    \
  XX(INVALID_ARGUMENT, -1, "An argument was NULL, zero or out of range.")    \
  XX(NOMEM, -2, "Out of memory.")                                             \
  XX(INTERVAL_TOO_SHORT, -3,                                                  \
     "The keepalive interval is below the minimum interval.")                 \
  XX(UNSUPPORTED, -4,                                                         \
     "The peer or the protocol version does not support ping.")              \
  XX(TOO_MANY_PINGS, -5, "Too many manual pings are outstanding.")           \
  XX(CLOSED, -6, "The connection is closing or closed.")                     \
  XX(FRAME_TOO_LARGE, -7, "A line exceeded the maximum line length.")        \
  XX(FRAME_NEWLINE, -8, "An outbound frame contains a newline.")             \
  XX(SPAWN, -9, "The server command could not start.")                       \
  XX(FLOODED, -10, "The peer floods pings and does not read the answers.")   \
  XX(IO, -11, "A read or write on the pipes failed.")                        \
  XX(STALE, -12, "The connection was closed because the peer went stale.")   \
  XX(NOT_FOUND, -13, "No such connection or ping.")                          \
  XX(THREAD, -14, "The I/O thread could not start.")                         \
  XX(WOULD_BLOCK, -15,                                                        \
     "The connection's outbound queue is full; retry once it drains.")

/* INVALID_ARGUMENT: a NULL, a zero, an out-of-range value. UNSUPPORTED: the
 * peer does not support ping, or the protocol version has no ping. FLOODED:
 * the peer floods pings and never reads our answers (nghttp2's FLOODED).
 * WOULD_BLOCK: the outbound queue is full (max_pending_bytes): retry after
 * a WRITABLE item. */
typedef enum mcpp_errno {
#define MCPP__ERR_ENUM(name, code, text) MCPP_ERR_##name = (code),
  MCPP_ERRNO_MAP(MCPP__ERR_ENUM)
#undef MCPP__ERR_ENUM
  MCPP_ERR_LAST_ = -16 /* one past the last code; not an error */
} mcpp_errno;

/* Returns a static, human-readable English sentence for an MCPP_ERR_* code. */
const char *mcpp_strerror(int err);

/* Returns the symbolic name ("MCPP_ERR_CLOSED") of an MCPP_ERR_* code. */
const char *mcpp_errname(int err);

/* ------------------------------------------------------------- allocator */

/* All engine/driver/runtime memory goes through this allocator. Pass NULL
 * where an allocator is taken to use malloc/realloc/free. */
typedef struct mcpp_allocator {
  void *(*malloc)(size_t size, void *user_data);
  void *(*realloc)(void *ptr, size_t size, void *user_data);
  void (*free)(void *ptr, void *user_data);
  void *user_data;
} mcpp_allocator;

/* Returns the default allocator (malloc/realloc/free). */
const mcpp_allocator *mcpp_default_allocator(void);

/* --------------------------------------------------------------- settings */

typedef enum mcpp_role {
  MCPP_ROLE_CLIENT = 0, /* we are the MCP client; the peer is a server */
  MCPP_ROLE_SERVER = 1  /* we are the MCP server; the peer is a client */
} mcpp_role;

typedef enum mcpp_transport {
  MCPP_TRANSPORT_STDIO = 0,
  MCPP_TRANSPORT_STREAMABLE_HTTP = 1,
  MCPP_TRANSPORT_CUSTOM = 2
} mcpp_transport;

/* When the peer goes stale: only report it, or also close the connection
 * (the driver then kills and reaps the server's process group). */
typedef enum mcpp_stale_action {
  MCPP_STALE_CLOSE = 0,
  MCPP_STALE_REPORT = 1
} mcpp_stale_action;

/* Keepalive pings are never scheduled closer together than this. */
#define MCPP_MIN_INTERVAL_FLOOR_MS 10

/* The largest value of any *_ms setting or per-request timeout (about 24.8
 * days): it fits a signed 32-bit integer in every binding, and no deadline
 * computed from it can wrap. */
#define MCPP_MAX_MS 2147483647u
/* The largest settings.failures and settings.max_outstanding_pings. */
#define MCPP_MAX_FAILURES 1000u
#define MCPP_MAX_OUTSTANDING_PINGS 1048576u
/* The longest settings.probe_method, in bytes. */
#define MCPP_MAX_PROBE_METHOD 128u

/* Reconnect (stdio, through the runtime): when the server goes stale,
 * exits or closes its pipes, every in-flight application request is failed
 * to the application (never replayed: see MCPP_CODE_IN_DOUBT), the old
 * process group is killed and reaped, and the server is spawned again
 * after an exponential, jittered delay that the process-wide retry budget
 * (mcpp_retry_budget) may lengthen. The application's first initialize
 * request is replayed (its answer swallowed) and then its
 * notifications/initialized, so the session above keeps working. Frames
 * the application sends meanwhile wait and go out, in order, once the new
 * server answered the replayed initialize. A waiting request's timeout
 * runs from when it was sent: it expires as a sent one does (the -32001
 * answer, REQUEST_TIMEOUT), but is never sent, and one sent later has only
 * what is left of its timeout. */
#define MCPP_MAX_RECONNECT_ATTEMPTS 1000000u
#define MCPP_MAX_RECONNECT_MULTIPLIER 1000.0

typedef struct mcpp_reconnect {
  /* 0 (default): a failed server closes the connection. 1: reconnect. The
   * fields below are checked only when enabled. */
  int enabled;
  /* The first delay. 1..MCPP_MAX_MS. Default 1000. */
  uint32_t initial_ms;
  /* The longest delay. initial_ms..MCPP_MAX_MS. Default 30000. */
  uint32_t max_delay_ms;
  /* Each attempt's delay is the previous one's times this.
   * 1..MCPP_MAX_RECONNECT_MULTIPLIER. Default 2.0. */
  double multiplier;
  /* Each delay is spread uniformly over delay * [1 - jitter, 1 + jitter]
   * (at most max_delay_ms), so that servers that failed together do not
   * come back together. 0..1. Default 0.2. */
  double jitter;
  /* Attempts in a row (an attempt succeeds once the new server answered
   * the replayed initialize) before the connection closes for good, with
   * a reason that says so. 1..MCPP_MAX_RECONNECT_ATTEMPTS. Default 10. */
  uint32_t max_attempts;
} mcpp_reconnect;

/* Struct versions, as in ngtcp2: the structs that grow (settings, engine
 * info) are only ever extended at their end, and a caller passes the
 * version its header had, through the macros below (mcpp_settings_default,
 * mcpp_engine_get_info, mcpp_runtime_info). The library then reads and
 * writes only the fields that version has, so a program built against an
 * older header keeps working with a newer library. */
#define MCPP_SETTINGS_V1 1
#define MCPP_SETTINGS_VERSION MCPP_SETTINGS_V1
#define MCPP_ENGINE_INFO_V1 1
#define MCPP_ENGINE_INFO_VERSION MCPP_ENGINE_INFO_V1

typedef struct mcpp_settings {
  /* The layout this struct has: set by mcpp_settings_default, checked by
   * every function that takes settings (mcpp_settings_problem names it). */
  int version;
  mcpp_role role;
  mcpp_transport transport;

  /* Keepalive: a ping (or, where there is no ping, the idle probe) after
   * interval_ms without any inbound byte; 0 turns keepalive off (manual
   * pings still work). Keepalive starts once the peer has sent its first
   * byte: until then a slow-starting server is the handshake's concern,
   * not a failure. 0 or min_interval_ms..MCPP_MAX_MS. Default 0. */
  uint32_t interval_ms;
  /* Each keepalive ping may fire up to jitter_pct percent early, so that
   * many connections do not ping in lockstep. 0..100. Default 10. (The uv
   * driver then sends it on a grid of interval/10, at most 100 ms, shared
   * by the loop's connections: see docs/c.md, Layer 2.) */
  uint32_t jitter_pct;
  /* Per-ping timeout for keepalive pings and probes and the default for
   * manual pings. 1..MCPP_MAX_MS. Default 5000. */
  uint32_t timeout_ms;
  /* Consecutive failed keepalive pings (or probes) that make the peer
   * stale; the first failure makes it suspect. 1..MCPP_MAX_FAILURES.
   * Default 3. */
  uint32_t failures;
  /* The floor on interval_ms: a smaller non-zero interval is refused with
   * MCPP_ERR_INTERVAL_TOO_SHORT (clamp_interval = 0, the default) or raised
   * to the floor (clamp_interval = 1, 0 or 1). Default 1000, at most
   * MCPP_MAX_MS; a smaller value than MCPP_MIN_INTERVAL_FLOOR_MS means the
   * floor. */
  uint32_t min_interval_ms;
  int clamp_interval;
  /* A wake-up later than its deadline by more than this means the host was
   * paused (stalled, laptop slept): the engine re-probes instead of counting
   * a failure, and gives pending deadlines this long a grace period (as
   * after the driver resumes reading). 1..MCPP_MAX_MS. Default 1000. */
  uint32_t pause_threshold_ms;
  /* The default timeout for the application's own requests (each request
   * may carry its own: mcpp_engine_observe_outbound_timed); 0 (default)
   * leaves them to the application, else 1..MCPP_MAX_MS. On expiry the
   * engine sends notifications/cancelled (never for initialize or
   * server/discover) and delivers a JSON-RPC error to the application. */
  uint32_t request_timeout_ms;
  /* What to do when the peer goes stale. Default MCPP_STALE_CLOSE. */
  mcpp_stale_action on_stale;
  /* Manual pings outstanding at once. 1..MCPP_MAX_OUTSTANDING_PINGS.
   * Default 1024. */
  uint32_t max_outstanding_pings;
  /* Longest accepted line, newline excluded (driver). Default 64 MiB. */
  size_t max_line_bytes;
  /* Backpressure (runtime), per connection. Inbound: every item the
   * runtime holds for the host (messages, stderr, events, records: each
   * item's whole size) counts from when it is queued until the host frees
   * it; at this many bytes the runtime stops reading the server's stdout
   * and stderr, below half of it reading resumes (see
   * mcpp_runtime_drain). The count can pass it by one read's worth: 64 KiB
   * of stdout or stderr and the items made from it. Outbound: sends that
   * would queue more than this many bytes not yet taken by the server
   * (the driver's queued writes, pongs included) are refused with
   * MCPP_ERR_WOULD_BLOCK. 0: the default, 16 MiB. */
  size_t max_pending_bytes;
  /* The idle probe for sessions without ping: a side-effect-free request
   * sent with our own id whose answer the application never sees. NULL
   * (default): automatic, "server/discover" on 2026-07-28 and later,
   * "tools/list" on legacy peers that refuse ping (role client only: a
   * server has no side-effect-free request to send its client). "": no
   * probe. Any other method name (at most MCPP_MAX_PROBE_METHOD bytes, no
   * control characters) is used in both roles. Copied. */
  const char *probe_method;

  /* Entropy for ping ids and jitter, provided by the caller since the engine
   * reads no randomness. 0 is allowed but makes ids predictable. */
  uint64_t nonce;
  /* Unix time minus monotonic time, in microseconds: records print
   * now + clock_offset_us as their RFC 3339 timestamp. */
  int64_t clock_offset_us;
  /* The peer's name for records until serverInfo/clientInfo is learned
   * (the driver passes the program's basename). Copied; may be NULL. */
  const char *peer_name;
  /* 0 (default): the engine answers the peer's pings itself. 1: they are
   * forwarded to the application like any other request, and the
   * application answers them (a proxy such as mcpping wrap, whose client
   * must see the truth). Our own keepalive is unchanged. 0 or 1. */
  int forward_peer_pings;
  /* Reconnect policy; default off. See mcpp_reconnect. */
  mcpp_reconnect reconnect;
} mcpp_settings;

/* Fills *settings with the defaults above, as a struct of settings_version
 * (no byte past that version's fields is written); an unknown version
 * writes nothing. Call it through mcpp_settings_default. */
void mcpp_settings_default_versioned(int settings_version,
                                     mcpp_settings *settings);
#define mcpp_settings_default(settings)                                       \
  mcpp_settings_default_versioned(MCPP_SETTINGS_VERSION, (settings))

/* Returns NULL if every field of *settings is in range, else a static
 * English sentence that names the first bad field and its allowed range
 * ("timeout_ms must be between 1 and 2147483647 ms"), for errors that name
 * the parameter. mcpp_engine_new refuses exactly these settings. */
const char *mcpp_settings_problem(const mcpp_settings *settings);

/* The settings table: mcpp_settings_table, mcpp_setting_check. */
#include "mcpping/settings.h"

/* ----------------------------------------------------------------- events */

typedef enum mcpp_state {
  MCPP_STATE_ALIVE = 0,
  MCPP_STATE_SUSPECT = 1,
  MCPP_STATE_STALE = 2,
  MCPP_STATE_CLOSED = 3
} mcpp_state;

/* Returns "alive", "suspect", "stale" or "closed". */
const char *mcpp_state_name(mcpp_state state);

typedef enum mcpp_event_type {
  MCPP_EV_PING = 0,          /* we sent a ping (keepalive or manual) */
  MCPP_EV_PONG,              /* our ping was answered; rtt_us is set */
  MCPP_EV_TIMEOUT,           /* our ping got no answer in time */
  MCPP_EV_PING_ERROR,        /* our ping got a JSON-RPC error (rpc_code set), or
                                an invalid result (invalid = 1) */
  MCPP_EV_UNSUPPORTED,       /* the peer answered -32601/-32602, or the
                                protocol version has no ping */
  MCPP_EV_PING_ANSWERED,     /* we answered the peer's ping */
  MCPP_EV_SUSPECT,           /* state alive -> suspect */
  MCPP_EV_STALE,             /* state -> stale */
  MCPP_EV_RECOVERED,         /* state suspect/stale -> alive */
  MCPP_EV_CLOSED,            /* the connection closed (last event) */
  MCPP_EV_REQUEST_TIMEOUT,   /* an application request passed its deadline
                                (timeout_ms: its timeout) */
  MCPP_EV_INITIALIZED,       /* the handshake finished; protocol_version and
                                peer name are known */
  MCPP_EV_PROBE,             /* we sent an idle probe (proof names it) */
  MCPP_EV_PROBE_OK,          /* our probe was answered (rtt_us); an answer
                                that is a JSON-RPC error (rpc_code,
                                message) still proves the peer's loop ran */
  MCPP_EV_PROBE_TIMEOUT,     /* our probe got no answer in time */
  MCPP_EV_REQUEST_CANCELLED, /* the application abandoned a request
                                (mcpp_engine_cancel_request) */
  MCPP_EV_RECONNECTING,      /* the server failed (message: why); a new one
                                is spawned after delay_ms (attempt
                                reconnect_attempt); in_flight requests were
                                failed with `disposition` */
  MCPP_EV_RECONNECTED,       /* the new server (pid) answered the replayed
                                initialize; message: its name */
  MCPP_EV_PING_DEAF,         /* pings went unanswered but the corroborating
                                probe (proof: "probe:<method>") was
                                answered: the server is alive and deaf to
                                ping, and is watched by probe from now on
                                (reported once per connection) */
  MCPP_EV_BUSY,              /* pings went unanswered but the server's CPU
                                time advances while an application request
                                is in flight (proof "cpu"): no stale verdict
                                while that lasts (once per suspicion) */
  MCPP_EV_PAUSED             /* the engine was woken far past a deadline
                                (our host stalled, the machine slept, the
                                clock jumped; timeout_ms: how late): the
                                silence meanwhile is not held against the
                                peer (proof "local") */
} mcpp_event_type;

/* The last event type, for tables that walk them all. */
#define MCPP_EV_LAST MCPP_EV_PAUSED

/* Returns the public event name: "ping", "pong", "timeout", "ping_error",
 * "unsupported", "ping_answered", "suspect", "stale", "recovered", "closed",
 * "request_timeout", "initialized", "probe", "probe_ok", "probe_timeout",
 * "request_cancelled", "reconnecting", "reconnected", "ping_deaf", "busy",
 * "paused". */
const char *mcpp_event_name(mcpp_event_type type);

typedef enum mcpp_disposition {
  MCPP_DISPOSITION_CONTINUED = 0, /* in-flight requests keep waiting */
  MCPP_DISPOSITION_CANCELLED = 1, /* abandoned; none could have side effects */
  MCPP_DISPOSITION_IN_DOUBT = 2   /* abandoned; some (tools/call, ...) may have
                                     run on the peer: never replay them */
} mcpp_disposition;

/* Returns "continued", "cancelled" or "in_doubt". */
const char *mcpp_disposition_name(mcpp_disposition d);

#define MCPP_EVENT_V1 1
#define MCPP_EVENT_VERSION MCPP_EVENT_V1

typedef struct mcpp_event {
  /* The layout this struct has; it only ever grows at its end. Events the
   * library delivers carry MCPP_EVENT_VERSION. One you build for
   * mcpp_event_outcome, mcpp_engine_should_close, mcpp_rtt_stats_observe
   * or mcpp_engine_format_record sets it, or leaves it 0, read as V1 (so
   * a zeroed event keeps working); any other version is read as no event
   * and nothing past V1's fields is touched. */
  int version;
  mcpp_event_type type;
  mcpp_state state;      /* the state after this event */
  /* Ping events: our ping's sequence number (as returned by
   * mcpp_engine_ping; keepalive pings have their own), 0 otherwise. */
  uint64_t ping_seq;
  int manual;            /* 1 for a manual ping, 0 for keepalive */
  uint64_t rtt_us;       /* PONG */
  uint32_t timeout_ms;   /* ping events: the timeout in force */
  /* The peer's JSON-RPC error code (PING_ERROR, UNSUPPORTED, PROBE_OK
   * answered with an error), 0 otherwise. Never an MCPP_ERR_* code. */
  int64_t rpc_code;
  /* Our own MCPP_ERR_* code, 0 otherwise: CLOSED (why we closed, 0 for a
   * requested close), TIMEOUT (MCPP_ERR_CLOSED: the close abandoned the
   * ping). Never a JSON-RPC code. */
  int error;
  int invalid;           /* PING_ERROR: the result was missing or not an object */
  const char *message;   /* PING_ERROR: the peer's message; CLOSED: why;
                            INITIALIZED: the peer's name (as in
                            mcpp_engine_info.peer_name); may be NULL */
  /* Raw JSON text of the ping id (ours, or the peer's for PING_ANSWERED;
   * the application request's id for REQUEST_TIMEOUT). Not NUL-terminated. */
  const char *id;
  size_t id_len;
  uint32_t failure_count;   /* consecutive failed keepalive pings */
  uint32_t in_flight;       /* application requests awaiting an answer */
  mcpp_disposition disposition;
  /* The proof of life, or the missing one, that decided a state change
   * (SUSPECT, STALE, RECOVERED): "traffic" (any inbound message or byte),
   * "ping" (a pong, or a ping that went unanswered), "probe:<method>" (an
   * answer to our probe, or its absence), "process" (the server process
   * observed stopped or exited). Ping and probe outcomes carry theirs too;
   * NULL where none applies. Static, or owned by the engine until it is
   * freed. */
  const char *proof;
  /* RECONNECTING, RECONNECTED: the attempt (1 for the first after a
   * failure); RECONNECTING: the delay before it, in ms; RECONNECTED: the
   * new server's pid. */
  uint32_t reconnect_attempt;
  uint32_t delay_ms;
  int pid;
} mcpp_event;

/* The kinds of proof of life, for mcpp_engine_info. */
typedef enum mcpp_proof {
  MCPP_PROOF_NONE = 0,
  MCPP_PROOF_TRAFFIC = 1, /* any inbound message or byte */
  MCPP_PROOF_PING = 2,    /* a pong to our ping */
  MCPP_PROOF_PROBE = 3,   /* an answer to our idle probe */
  MCPP_PROOF_PROCESS = 4  /* the server process observed running */
} mcpp_proof;

/* Returns "traffic", "ping", "probe", "process", or NULL for NONE. */
const char *mcpp_proof_name(mcpp_proof proof);

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

typedef struct mcpp_engine_callbacks {
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

/* ------------------------------------------------------------------ driver */

/* Forward declarations so this header does not require uv.h unless the
 * driver is used. */
typedef struct uv_loop_s uv_loop_t;
typedef struct mcpp_conn mcpp_conn;

typedef enum mcpp_stderr_mode {
  MCPP_STDERR_INHERIT = 0,  /* the server writes to our stderr */
  MCPP_STDERR_CALLBACK = 1, /* delivered to on_stderr */
  MCPP_STDERR_IGNORE = 2    /* /dev/null */
} mcpp_stderr_mode;

typedef struct mcpp_spawn_options {
  const char *file;   /* program, looked up in PATH */
  char **args;        /* argv, NULL-terminated; args[0] is the program */
  char **env;         /* NULL: inherit */
  const char *cwd;    /* NULL: inherit */
  mcpp_stderr_mode stderr_mode;
  /* SIGTERM-to-SIGKILL grace on close. 0 means the default, 2000 (so a
   * zeroed struct is the default); MCPP_KILL_GRACE_NONE: no grace, SIGKILL
   * at once; else 1..MCPP_MAX_KILL_GRACE_MS (MCPP_ERR_INVALID_ARGUMENT
   * beyond). */
  uint32_t kill_grace_ms;
} mcpp_spawn_options;

/* The longest mcpp_spawn_options.kill_grace_ms (as every *_ms setting). */
#define MCPP_MAX_KILL_GRACE_MS MCPP_MAX_MS
/* mcpp_spawn_options.kill_grace_ms for no grace: the close sends SIGKILL to
 * the group at once, no SIGTERM. Far outside the milliseconds, so that 0
 * keeps meaning the default (a zeroed struct), and not UINT32_MAX, so that
 * a binding's -1 wrapped to unsigned is still refused. */
#define MCPP_KILL_GRACE_NONE (UINT32_MAX - 1u)

typedef struct mcpp_close_info {
  int err;              /* 0 for a requested close, else MCPP_ERR_* */
  const char *reason;   /* human-readable; never NULL */
  int64_t exit_status;  /* the server's exit code, -1 if killed by a signal
                           or unknown */
  int term_signal;      /* the signal that ended it, 0 if none */
} mcpp_close_info;

typedef struct mcpp_conn_callbacks {
  /* An inbound application frame, unchanged, no newline. Required. */
  void (*on_message)(mcpp_conn *conn, const char *frame, size_t len,
                     void *user_data);
  void (*on_event)(mcpp_conn *conn, const mcpp_event *event, void *user_data);
  void (*on_record)(mcpp_conn *conn, const char *json, size_t len,
                    void *user_data);
  void (*on_stderr)(mcpp_conn *conn, const char *data, size_t len,
                    void *user_data);
  /* The last callback: the process is reaped, pipes and timer closed. The
   * conn is freed right after it returns. */
  void (*on_close)(mcpp_conn *conn, const mcpp_close_info *info,
                   void *user_data);
} mcpp_conn_callbacks;

/* Spawns the server in its own process group and starts the engine on it.
 * Returns 0 and sets *out, or MCPP_ERR_SPAWN (message via
 * mcpp_conn_spawn_error), MCPP_ERR_INVALID_ARGUMENT, MCPP_ERR_INTERVAL_TOO_SHORT,
 * MCPP_ERR_NOMEM. On error nothing is left running and no callback fires. */
int mcpp_conn_spawn(mcpp_conn **out, uv_loop_t *loop,
                    const mcpp_settings *settings,
                    const mcpp_spawn_options *options,
                    const mcpp_conn_callbacks *callbacks, void *user_data,
                    const mcpp_allocator *alloc);

/* Returns a one-line reason for the calling thread's last MCPP_ERR_SPAWN
 * from mcpp_conn_spawn ("cannot start foo: no such file or directory
 * (ENOENT)"), or for its MCPP_ERR_INVALID_ARGUMENT when a setting or
 * kill_grace_ms is out of range (the sentence names it and its range), or
 * "" if none. Valid until the thread's next spawn. */
const char *mcpp_conn_spawn_error(void);

/* Sends one application frame (copied; a trailing newline is added). Frames
 * go out in call order. Returns 0, MCPP_ERR_FRAME_NEWLINE (the frame holds
 * a \n), MCPP_ERR_CLOSED or MCPP_ERR_NOMEM. */
int mcpp_conn_send(mcpp_conn *conn, const char *frame, size_t len);

/* As mcpp_conn_send, with this request's timeout (see
 * mcpp_engine_observe_outbound_timed); MCPP_ERR_INVALID_ARGUMENT if
 * timeout_ms is out of range (nothing is sent). */
int mcpp_conn_send_timed(mcpp_conn *conn, const char *frame, size_t len,
                         uint32_t timeout_ms);

/* As mcpp_engine_cancel_request, on this connection. */
int mcpp_conn_cancel_request(mcpp_conn *conn, const char *id, size_t id_len);

/* As mcpp_engine_ping, on this connection. */
int mcpp_conn_ping(mcpp_conn *conn, uint32_t timeout_ms, uint64_t *seq);

/* Closes: SIGTERM to the process group, SIGKILL after the grace period,
 * reap, close pipes and timer, then on_close. Idempotent; returns 0 or
 * MCPP_ERR_CLOSED if already closing. */
int mcpp_conn_close(mcpp_conn *conn);

/* The engine inside (for get_info/healthy). Valid until on_close returns. */
mcpp_engine *mcpp_conn_engine(mcpp_conn *conn);

/* The server's process id (the process group id too). */
int mcpp_conn_pid(const mcpp_conn *conn);

/* --------------------------------------------------------------- runtime */

/* One I/O thread with its own uv loop serving many connections, driven from
 * any thread. Results are queued as items and handed over in batches: the
 * runtime calls `notify` (from the I/O thread) once when items are waiting,
 * and not again until the host has called mcpp_runtime_drain from its own
 * thread. It calls it once the I/O thread's callbacks of that turn of its
 * loop have run, so what one engine call queues (an answered ping's event
 * and record) wakes the host once. A PING or PROBE event (we sent one) never wakes the host by
 * itself: it is delivered with the next batch, at the latest with its
 * outcome (or at once if the connection reached max_pending_bytes, so the
 * host can free what holds it back). */
typedef struct mcpp_runtime mcpp_runtime;

typedef enum mcpp_item_type {
  MCPP_ITEM_MESSAGE = 0, /* data: an inbound application frame */
  MCPP_ITEM_EVENT,       /* event: an engine event */
  MCPP_ITEM_RECORD,      /* data: a governance record (JSON, no newline) */
  MCPP_ITEM_STDERR,      /* data: bytes the server wrote to stderr */
  MCPP_ITEM_CLOSED,      /* close: the connection is gone; last item */
  MCPP_ITEM_PING_FAILED, /* ping_token, error: a queued ping could not start */
  MCPP_ITEM_WRITABLE     /* sends refused with MCPP_ERR_WOULD_BLOCK may
                            be retried now */
} mcpp_item_type;

/* One thing the runtime queued for the host; opaque, so it can grow.
 * mcpp_runtime_drain returns a list of them, read with the accessors below
 * (none takes NULL); what they return points into the item and lives until
 * mcpp_runtime_items_free. */
typedef struct mcpp_item mcpp_item;

/* The next item of a drained list, or NULL after the last. */
mcpp_item *mcpp_item_next(const mcpp_item *item);
mcpp_item_type mcpp_item_get_type(const mcpp_item *item);
uint64_t mcpp_item_get_conn_id(const mcpp_item *item);
/* As given to mcpp_runtime_spawn. */
void *mcpp_item_get_conn_user_data(const mcpp_item *item);
/* MESSAGE, RECORD, STDERR: the bytes, NUL-terminated after len (the NUL
 * is not counted). Never NULL. */
const char *mcpp_item_get_data(const mcpp_item *item);
size_t mcpp_item_get_len(const mcpp_item *item);
/* EVENT: the event (its strings point into the item), else NULL. */
const mcpp_event *mcpp_item_get_event(const mcpp_item *item);
/* EVENT (the outcome of a manual ping) and PING_FAILED: the token given to
 * mcpp_runtime_ping; else 0. */
uint64_t mcpp_item_get_ping_token(const mcpp_item *item);
/* PING_FAILED: why the queued ping could not start (MCPP_ERR_*); else 0. */
int mcpp_item_get_error(const mcpp_item *item);
/* CLOSED: how the connection ended (reason points into the item), else
 * NULL. */
const mcpp_close_info *mcpp_item_get_close(const mcpp_item *item);

typedef struct mcpp_runtime_options {
  /* Called on the I/O thread when the item queue turns non-empty (at the
   * end of that turn of its loop). Must not
   * call back into the runtime; it should only wake the host. */
  void (*notify)(void *user_data);
  void *user_data;
  const mcpp_allocator *alloc; /* NULL: malloc */
} mcpp_runtime_options;

/* Creates a runtime. The thread starts lazily, on the first spawn.
 * Returns 0, MCPP_ERR_NOMEM or MCPP_ERR_INVALID_ARGUMENT. */
int mcpp_runtime_new(mcpp_runtime **out, const mcpp_runtime_options *options);

/* Closes every connection (killing and reaping their servers), stops and
 * joins the thread, frees everything including undrained items. Must not be
 * called from the I/O thread. NULL is a no-op. */
void mcpp_runtime_free(mcpp_runtime *rt);

/* Spawns a server on the I/O thread; waits until the spawn succeeded or
 * failed. Returns 0 and sets *conn_id, MCPP_ERR_SPAWN (with a one-line
 * message in errbuf if given), or the errors of mcpp_conn_spawn. All inputs
 * are copied. on_stderr delivery is MCPP_STDERR_CALLBACK -> STDERR items. */
int mcpp_runtime_spawn(mcpp_runtime *rt, const mcpp_settings *settings,
                       const mcpp_spawn_options *options,
                       void *conn_user_data, uint64_t *conn_id,
                       char *errbuf, size_t errbuf_len);

/* Queues an application frame (copied). Returns 0, MCPP_ERR_FRAME_NEWLINE,
 * MCPP_ERR_NOT_FOUND (closed or unknown connection), MCPP_ERR_NOMEM, or
 * MCPP_ERR_WOULD_BLOCK: the connection's outbound bytes (queued here and
 * not yet taken by the server) would pass settings.max_pending_bytes;
 * nothing was queued, retry after the connection's next WRITABLE item.
 * A frame is refused only while others are queued, so one larger than
 * the cap still goes out, alone. */
int mcpp_runtime_send(mcpp_runtime *rt, uint64_t conn_id, const char *frame,
                      size_t len);

/* As mcpp_runtime_send, with this request's timeout (see
 * mcpp_engine_observe_outbound_timed: 1..MCPP_MAX_MS, MCPP_TIMEOUT_DEFAULT
 * or MCPP_TIMEOUT_NONE; MCPP_ERR_INVALID_ARGUMENT beyond). On expiry the
 * engine sends notifications/cancelled and the host gets a MESSAGE item
 * with the JSON-RPC error (-32001) and a REQUEST_TIMEOUT event. */
int mcpp_runtime_send_timed(mcpp_runtime *rt, uint64_t conn_id,
                            const char *frame, size_t len,
                            uint32_t timeout_ms);

/* Queues the abandonment of an in-flight application request (raw id JSON,
 * copied): see mcpp_engine_cancel_request. The host gets a MESSAGE item
 * with the JSON-RPC error (-32800) and a REQUEST_CANCELLED event, or
 * nothing if the answer came first. Returns 0, MCPP_ERR_NOT_FOUND (no
 * such connection), MCPP_ERR_INVALID_ARGUMENT (no id) or MCPP_ERR_NOMEM. */
int mcpp_runtime_cancel_request(mcpp_runtime *rt, uint64_t conn_id,
                                const char *id, size_t id_len);

/* Queues a manual ping. Its outcome arrives as an EVENT item whose
 * ping_token is `token`, or as a PING_FAILED item. Returns 0,
 * MCPP_ERR_NOT_FOUND or MCPP_ERR_NOMEM. */
int mcpp_runtime_ping(mcpp_runtime *rt, uint64_t conn_id, uint32_t timeout_ms,
                      uint64_t token);

/* Queues the cancellation of the manual ping queued with `token` (an
 * aborted wait): the engine stops timing it and no outcome item follows,
 * unless the outcome was queued already. Returns 0, MCPP_ERR_NOT_FOUND or
 * MCPP_ERR_NOMEM. */
int mcpp_runtime_cancel_ping(mcpp_runtime *rt, uint64_t conn_id,
                             uint64_t token);

/* Returns the server's process id (also its process group id), or
 * MCPP_ERR_NOT_FOUND once the connection is closed. With reconnect it
 * changes with every new server (and is the last one's while waiting to
 * spawn the next). Thread-safe. */
int mcpp_runtime_pid(mcpp_runtime *rt, uint64_t conn_id);

/* Queues a close; a CLOSED item follows. Returns 0 or MCPP_ERR_NOT_FOUND. */
int mcpp_runtime_close(mcpp_runtime *rt, uint64_t conn_id);

/* Copies the engine's info (strings into the caller's buffers is avoided:
 * protocol_version, peer_name and probe_method are set to NULL here; the
 * first two arrive in the INITIALIZED event). Live: the I/O thread
 * refreshes it after every engine call (reads, sends, timer runs), and
 * *healthy is mcpp_engine_healthy as of the call, computed from the
 * engine's healthy_until, so a request passing its limit reads unhealthy
 * at once. Returns 0 or MCPP_ERR_NOT_FOUND. Thread-safe. */
int mcpp_runtime_info_versioned(mcpp_runtime *rt, uint64_t conn_id,
                                int info_version, mcpp_engine_info *info,
                                int *healthy);
/* *info is a struct of MCPP_ENGINE_INFO_VERSION; an unknown version is
 * MCPP_ERR_INVALID_ARGUMENT. */
#define mcpp_runtime_info(rt, conn_id, info, healthy)                         \
  mcpp_runtime_info_versioned((rt), (conn_id), MCPP_ENGINE_INFO_VERSION,      \
                              (info), (healthy))

/* Copies what the engine learned of the session from the handshake that
 * passed through (the negotiated protocol version, and the peer's name:
 * serverInfo's, else settings.peer_name), each "" while unknown, truncated
 * to fit and NUL-terminated; a NULL buffer or 0 cap skips it. Up to date
 * once the INITIALIZED event (or UNSUPPORTED, on a session without ping)
 * is queued. Returns 0 or MCPP_ERR_NOT_FOUND. Thread-safe. */
int mcpp_runtime_session(mcpp_runtime *rt, uint64_t conn_id,
                         char *protocol_version, size_t version_cap,
                         char *peer_name, size_t name_cap);

/* Takes every queued item, oldest first, as a linked list (NULL if none).
 * The caller frees it with mcpp_runtime_items_free. Any thread.
 * Backpressure, per connection: every item (MESSAGE, STDERR, EVENT,
 * RECORD, PING_FAILED, WRITABLE; its whole size, struct and data) counts
 * against its connection's settings.max_pending_bytes from the moment it
 * is queued until the host frees it (or takes its charge, below); a drain
 * alone gives nothing back. Once a connection's count reaches the cap the
 * runtime stops reading its server, stdout and stderr both (the engine is
 * told, so the silence convicts nobody, and keepalive waits); once frees
 * bring it below half the cap, reading resumes. Nothing is dropped: the
 * server blocks on its full pipes meanwhile, and the pings it sent before
 * are still answered. The count can pass the cap by what one read brings
 * (64 KiB of stdout, or of stderr, and the items made from it). Other
 * connections are not affected: each counts only its own items. */
mcpp_item *mcpp_runtime_drain(mcpp_runtime *rt);
/* Frees a drained list and gives back what its items count against their
 * connections. */
void mcpp_runtime_items_free(mcpp_runtime *rt, mcpp_item *items);

/* For a host that copies items out and frees them before it is done with
 * the copies (one drain serving several event loops, each connection's
 * items handed to its own loop): takes the bytes the item counts against
 * its connection off the item and returns them (0 the second time), so
 * that mcpp_runtime_items_free no longer gives them back; the host gives
 * them back with mcpp_runtime_release once the connection's own loop is
 * done with them. */
size_t mcpp_item_take_charge(mcpp_item *item);
/* Gives back `bytes` taken with mcpp_item_take_charge from items of
 * conn_id; reading resumes as after a free. Returns 0, or
 * MCPP_ERR_NOT_FOUND if the connection is gone (then nothing counts any
 * more). Any thread. */
int mcpp_runtime_release(mcpp_runtime *rt, uint64_t conn_id, size_t bytes);

/* Whether the connection queues RECORD items (1, the default) or drops
 * its governance records (0): a host with no sink for them spares their
 * copies, its wake-ups and its own handling. Takes effect for what the
 * commands queued after this call cause, and may be turned on and off at
 * any time (a sink or listener added later). Returns 0 or
 * MCPP_ERR_NOT_FOUND. Any thread. */
int mcpp_runtime_set_records(mcpp_runtime *rt, uint64_t conn_id, int enabled);

/* ------------------------------------------------------- host mode
 *
 * By default the runtime's own thread runs its loop, and every command and
 * every batch of items crosses between that thread and the host's (thread
 * mode). In host mode the host's event loop runs the runtime's loop
 * instead, on the host's thread, so a ping costs no thread hop: the host
 * watches one descriptor (mcpp_runtime_host_attach's *fd) for readability
 * and calls mcpp_runtime_host_run when it is readable or when the time it
 * was given passes; commands issued on the host thread run at once. The
 * runtime's thread becomes a watchdog: every few ms it checks whether work
 * is waiting (the descriptor is readable, a timer is due) that the host
 * has left alone for stall_ms; then it runs the loop itself (answering the
 * server's pings, keepalive, backpressure, items and notify as in thread
 * mode) until the host calls in again. One loop, one owner at a time
 * (a mutex held for a turn, never while waiting; user code and notify
 * never run under it), one item queue: nothing is lost or reordered
 * across a hand-off. */

typedef struct mcpp_host_options {
  /* How long work may wait while the host does not turn before the
   * watchdog takes over, in ms; 0: MCPP_HOST_STALL_MS. 1..10000. */
  uint32_t stall_ms;
} mcpp_host_options;

#define MCPP_HOST_STALL_MS 20u

/* Switches to host mode, driven from the calling thread (the host
 * thread), and sets *fd to the descriptor to watch for readability (the
 * runtime's, valid until detach or free). Starts the runtime's thread if
 * needed. The host keeps calling mcpp_runtime_drain after notify, which
 * now comes from the watchdog only; in host mode its handler also calls
 * mcpp_runtime_host_run. options may be NULL. Returns 0,
 * MCPP_ERR_INVALID_ARGUMENT, MCPP_ERR_THREAD, MCPP_ERR_CLOSED (being freed),
 * or MCPP_ERR_UNSUPPORTED when host mode is not safe here or was turned off
 * (the runtime stays in thread mode; mcpp_runtime_mode says why): SIGPIPE
 * has its default action in the calling thread (a write to a server that
 * closed its stdin would kill the process), or MCPPING_HOST_MODE=0 is set
 * in the environment. Attaching again from the host thread is a no-op;
 * from another thread while attached, MCPP_ERR_INVALID_ARGUMENT. */
int mcpp_runtime_host_attach(mcpp_runtime *rt, const mcpp_host_options *options,
                             int *fd);

/* Host thread, host mode: runs one turn of the runtime's loop without
 * blocking (reads, timers, the commands other threads queued), then the
 * host drains. Sets *wake_ms to the time after which the host must call
 * again even if the descriptor stays quiet (0: at once), or -1 if only the
 * descriptor need wake it. If the watchdog is in a turn just now, waits
 * for its end (it never waits for anything while in one). Returns 0, or
 * MCPP_ERR_INVALID_ARGUMENT
 * (not the host thread, not in host mode: nothing ran, *wake_ms -1). */
int mcpp_runtime_host_run(mcpp_runtime *rt, int64_t *wake_ms);

/* Host thread, host mode, after any other call of this runtime on the host
 * thread (a send, ping, close...): the ms after which the host must call
 * mcpp_runtime_host_run, if that is sooner than every time it was given
 * since its last run (the command set an earlier timer, or queued items);
 * else -1 (what the host has armed stands). Cheap: no lock, no syscall. */
int64_t mcpp_runtime_host_rearm(mcpp_runtime *rt);

/* Back to thread mode (the runtime's thread runs the loop again, once a
 * host turn in progress has ended); any thread. The host stops watching
 * the descriptor. Items still waiting are announced with notify. Returns 0
 * or MCPP_ERR_INVALID_ARGUMENT (not in host mode). */
int mcpp_runtime_host_detach(mcpp_runtime *rt);

typedef enum mcpp_mode {
  MCPP_MODE_THREAD = 0, /* the runtime's thread runs the loop */
  MCPP_MODE_HOST = 1    /* the host's loop runs it; the thread watches */
} mcpp_mode;

/* The runtime's mode. If why is given, copies one line saying why
 * (truncated to fit): "the host's event loop runs it", "not attached to
 * the host's event loop", or why host mode was refused. Thread-safe. */
mcpp_mode mcpp_runtime_mode(mcpp_runtime *rt, char *why,
                             size_t why_cap);

/* How often the watchdog took the loop over from a stalled host, and how
 * many host turns it has seen; for tests and benchmarks. Thread-safe. */
typedef struct mcpp_host_stats {
  uint64_t takeovers;  /* the watchdog ran the loop for a stalled host */
  uint64_t host_turns; /* mcpp_runtime_host_run calls and inline commands */
  uint64_t inline_commands; /* commands run on the host thread directly */
} mcpp_host_stats;
void mcpp_runtime_host_stats(mcpp_runtime *rt, mcpp_host_stats *stats);
/* Corking the host's inline commands: mcpp_runtime_host_cork. */
#include "mcpping/host_cork.h"

/* Call in a forked child (pthread_atfork) before using the runtime there:
 * the thread did not survive the fork, so the child's runtime forgets its
 * connections (without touching the parent's processes) and starts a fresh
 * thread lazily. */
void mcpp_runtime_after_fork_child(mcpp_runtime *rt);

/* ------------------------------------------------------------------ wrap
 *
 * mcpping wrap: a stdio proxy for MCP clients that cannot be changed. The
 * client talks to us on in_fd/out_fd (normally our own stdin and stdout);
 * the server runs as our child, as mcpp_conn spawns it. Every line passes
 * through unchanged and in order, both ways; pings pass too (the client's
 * go to the server, the server's to the client), and our own keepalive
 * toward the server uses our own ids. When the server goes stale or
 * exits, every request the client has in flight gets a JSON-RPC error
 * (never a replay); with restart on, a new server is spawned and the
 * client's handshake replayed on its behalf. When the client goes (EOF,
 * a broken stdout, SIGTERM, SIGINT, SIGHUP), the server is closed and
 * reaped before we return. */

typedef struct mcpp_wrap_options {
  /* Keepalive toward the server (interval_ms, timeout_ms, failures, ...)
   * and the name for records (peer_name). forward_peer_pings is always 1
   * here, and on_stale always MCPP_STALE_CLOSE. */
  mcpp_settings settings;
  /* The server. stderr_mode MCPP_STDERR_INHERIT passes its stderr
   * through; kill_grace_ms 0 means 1000 here, so that a server ignoring
   * SIGTERM is gone within 2 s of the client. */
  mcpp_spawn_options spawn;
  /* 1 (default): respawn a server that went stale or exited, with the
   * defaults of mcpp_reconnect (1 s doubling up to 30 s, 20% jitter, at
   * most 10 attempts in a row) and a mcpp_retry_budget; 0 or 1. 0: exit
   * with a message on stderr. */
  int restart;
  /* Governance records (JSON lines) are appended to this file; NULL:
   * none. */
  const char *log_path;
  /* Prometheus text exposition on this loopback "HOST:PORT" (127.0.0.1,
   * [::1] or localhost; port 0 picks a free one), NULL: none. Once it
   * listens, stderr says where: "mcpping wrap: metrics on
   * http://127.0.0.1:PORT/metrics". */
  const char *metrics_addr;
  int in_fd, out_fd; /* the client; default 0 and 1 */
  /* The server's name in the client's config (wrap --name): the `server`
   * field of records and the server label of metrics. NULL: the peer's
   * name (serverInfo.name, or the program's basename). */
  const char *server_name;
} mcpp_wrap_options;

/* Fills *options with the defaults above (settings as
 * mcpp_settings_default, with interval_ms the settings table's policy,
 * 15000: keepalive on, as in the bindings and the command). */
void mcpp_wrap_options_default(mcpp_wrap_options *options);

/* Returns NULL if *options can run, else a static sentence naming the
 * first bad field (settings included, as mcpp_settings_problem). */
const char *mcpp_wrap_options_problem(const mcpp_wrap_options *options);

/* Runs the proxy on a loop of its own in the calling thread until the
 * client goes away, or the server is gone for good. Blocks SIGPIPE in the
 * calling thread while it runs. Returns the process exit status: 0 the
 * client went away (128 + the signal's number after SIGTERM, SIGINT or
 * SIGHUP), 1 the server went stale or exited and is not restarted (a
 * line on stderr says why), 2 it could not start (bad options, the
 * server could not be spawned, the log or metrics address could not be
 * opened; a line on stderr says why). */
int mcpp_wrap_run(const mcpp_wrap_options *options);
/* Sets the retry budget every reconnecting connection of this runtime
 * shares (see mcpp_retry_budget; the default is MCPP_RETRY_BUDGET_BURST
 * at once, then MCPP_RETRY_BUDGET_PER_SECOND). Slots taken already stay
 * taken. Returns 0 or MCPP_ERR_INVALID_ARGUMENT. Thread-safe. */
int mcpp_runtime_set_retry_budget(mcpp_runtime *rt, uint32_t burst,
                                  double per_second);

/* -------------------------------------------------------------- reconnect
 *
 * The pieces of reconnecting that every host shares (the runtime uses them
 * for settings.reconnect; `mcpping wrap --restart` too). Pure: the caller
 * gives the time and the randomness. */

/* Fills *policy with the defaults of mcpp_reconnect (enabled = 0). */
void mcpp_reconnect_default(mcpp_reconnect *policy);

/* Returns NULL if *policy is disabled or every field is in range, else a
 * static sentence naming the first bad field ("reconnect.jitter must be
 * between 0 and 1"). mcpp_settings_problem includes it. */
const char *mcpp_reconnect_problem(const mcpp_reconnect *policy);

/* The delay before attempt `attempt` (1 for the first), in µs:
 * initial_ms * multiplier^(attempt - 1), at most max_delay_ms, spread by
 * jitter with `random` (any 64-bit value, uniformly drawn by the caller),
 * and at most max_delay_ms again. */
uint64_t mcpp_reconnect_delay_us(const mcpp_reconnect *policy,
                                 uint32_t attempt, uint64_t random);

/* A token bucket shared by every connection of a process, so that a fleet
 * whose servers fail at once reconnects at a bounded rate: at most `burst`
 * attempts at once, then `per_second`. Reservations, as GCRA does them:
 * each attempt takes a slot; in any window of w seconds at most
 * burst + w * per_second attempts run. */
typedef struct mcpp_retry_budget {
  uint64_t interval_us;  /* 1 / per_second */
  uint64_t tolerance_us; /* (burst - 1) * interval_us */
  uint64_t tat_us;       /* the theoretical arrival time of the next slot */
} mcpp_retry_budget;

#define MCPP_RETRY_BUDGET_BURST 10u      /* the runtime's default */
#define MCPP_RETRY_BUDGET_PER_SECOND 2.0 /* the runtime's default */
#define MCPP_MAX_RETRY_BUDGET_BURST 1000000u

/* Sets up a budget of `burst` (1..MCPP_MAX_RETRY_BUDGET_BURST) attempts at
 * once and `per_second` (0.001..1e6) after that. Returns 0 or
 * MCPP_ERR_INVALID_ARGUMENT (the budget unchanged). */
int mcpp_retry_budget_init(mcpp_retry_budget *budget, uint32_t burst,
                           double per_second);

/* Takes a slot for an attempt wanted at `at` (µs, the caller's monotonic
 * clock); returns when it may run: `at`, or later if the budget is spent. */
uint64_t mcpp_retry_budget_take(mcpp_retry_budget *budget, uint64_t at);

/* The handshake an application ran, captured so it can be replayed on a
 * new server: its first initialize request and its first
 * notifications/initialized. */
typedef struct mcpp_handshake mcpp_handshake;

/* Returns 0, MCPP_ERR_INVALID_ARGUMENT or MCPP_ERR_NOMEM. alloc may be
 * NULL and must outlive the handshake. */
int mcpp_handshake_new(mcpp_handshake **out, const mcpp_allocator *alloc);
void mcpp_handshake_free(mcpp_handshake *handshake);

/* Shows the handshake a frame the application sends to the server (cheap
 * for every frame once both are captured). Returns 0 or MCPP_ERR_NOMEM
 * (not captured). */
int mcpp_handshake_observe(mcpp_handshake *handshake, const char *frame,
                           size_t len);

/* Shows the handshake a frame from the server. An error answer to the
 * captured initialize drops it: the server refused it, so it is no
 * handshake to replay (a client that goes on to server/discover, or to
 * another initialize, has the session that way; the next initialize is
 * captured). Cheap once the captured initialize was answered. Returns 0
 * or MCPP_ERR_INVALID_ARGUMENT. */
int mcpp_handshake_observe_answer(mcpp_handshake *handshake, const char *frame,
                                  size_t len);

/* Returns 1 once an initialize request was captured (and not refused). */
int mcpp_handshake_captured(const mcpp_handshake *handshake);

/* The initialize request to replay: the captured one, byte for byte, but
 * with our own id ("mcpp-reconnect-<attempt>"), so that its answer is
 * recognised and never reaches the application. Returns the frame (owned
 * by the handshake, valid until the next call) and its length in *len, or
 * NULL if none was captured or out of memory. */
const char *mcpp_handshake_replay(mcpp_handshake *handshake, uint32_t attempt,
                                  size_t *len);

/* The captured notifications/initialized (NULL if the application has not
 * sent it), with its length in *len. */
const char *mcpp_handshake_initialized(const mcpp_handshake *handshake,
                                       size_t *len);

/* What an inbound frame is to the last replayed initialize. */
#define MCPP_REPLAY_OTHER 0  /* not its answer: forward it */
#define MCPP_REPLAY_RESULT 1 /* its result: swallow it */
#define MCPP_REPLAY_ERROR 2  /* an error answer: swallow it; the attempt
                                failed */
int mcpp_handshake_answer(const mcpp_handshake *handshake, const char *frame,
                          size_t len);

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

/* RTT statistics of one connection's pings in bounded memory: exact
 * running min/avg/max/mdev (Welford) over every pong, p50/p99 by nearest
 * rank over the most recent `window` RTTs. RTTs are doubles in the
 * caller's unit. */
typedef struct mcpp_rtt_stats mcpp_rtt_stats;

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
                                    initialize again */
  MCPP_HTTP_FAILED = 3           /* any other status: the request failed */
} mcpp_http_verdict;

/* Classifies an HTTP status and body (may be NULL if len is 0);
 * had_session is 1 if the request carried an Mcp-Session-Id. */
mcpp_http_verdict mcpp_http_classify(int status, const char *body,
                                     size_t len, int had_session);

/* Returns "answer", "unsupported", "session_expired" or "failed". */
const char *mcpp_http_verdict_name(mcpp_http_verdict verdict);

/* Answer kinds: mcpp_item_get_answer_kind, mcpp_engine_delivery_kind. */
#include "mcpping/answer.h"
/* Process-state names: mcpp_process_state_name. */
#include "mcpping/process.h"

#ifdef __cplusplus
}
#endif

#include "mcpping/metrics.h"
#include "mcpping/app.h"
#include "mcpping/config.h"
#include "mcpping/watch.h"

#endif /* MCPPING_H */
