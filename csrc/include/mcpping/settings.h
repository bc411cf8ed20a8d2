/* mcpping settings table: every setting of mcpp_settings (and its
 * mcpp_reconnect) once, with its default, range, unit and meaning, so that
 * the engine's own check, the bindings' option checks and every sentence
 * that refuses a value come from one place. Included by mcpping.h. */
#ifndef MCPPING_SETTINGS_H
#define MCPPING_SETTINGS_H

#include <stddef.h>
#include <stdint.h>

#include "mcpping/alloc.h"

#ifdef __cplusplus
extern "C" {
#endif

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
 * mcpp_engine_get_info, mcpp_runtime_info; metric series likewise, see
 * mcpping/metrics.h). The library then reads and
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

typedef enum mcpp_setting_unit {
  MCPP_UNIT_MS = 0,      /* a time: whole milliseconds in C */
  MCPP_UNIT_COUNT = 1,   /* a whole number */
  MCPP_UNIT_PERCENT = 2, /* a whole number of percent */
  MCPP_UNIT_BYTES = 3,   /* a whole number of bytes */
  MCPP_UNIT_RATIO = 4,   /* a real number */
  MCPP_UNIT_FLAG = 5,    /* 0 or 1 */
  MCPP_UNIT_CHOICE = 6,  /* one of `choices` (its index is the C value) */
  MCPP_UNIT_TEXT = 7     /* a string of at most max bytes */
} mcpp_setting_unit;

typedef struct mcpp_setting_info {
  /* The field: "timeout_ms", "reconnect.initial_ms". Bindings derive their
   * own spelling from it (Python drops "_ms" and counts seconds, Node
   * writes it in camelCase). */
  const char *name;
  mcpp_setting_unit unit;
  /* What mcpp_settings_default (or mcpp_reconnect_default) writes. */
  double def;
  /* The library's policy: the default the bindings, `mcpping wrap` and
   * the command use. It differs from def only where C's zero-initialised
   * settings must keep a feature off (interval_ms: keepalive). */
  double policy;
  /* The allowed range, in `unit`. */
  double min, max;
  /* Non-NULL: 0 is allowed too, outside [min, max], and means this. */
  const char *zero;
  /* Non-NULL: another setting whose value raises min (interval_ms is at
   * least min_interval_ms, reconnect.max_delay_ms at least initial_ms). */
  const char *floor;
  /* MCPP_UNIT_CHOICE: the names, "|"-separated, in C value order. */
  const char *choices;
  /* One sentence for documentation and --help. */
  const char *meaning;
} mcpp_setting_info;

/* Every setting, in the order mcpp_settings declares them; *n gets the
 * count. The table is static and never changes. */
const mcpp_setting_info *mcpp_settings_table(size_t *n);

/* The setting of that name ("timeout_ms", "reconnect.jitter"), else NULL. */
const mcpp_setting_info *mcpp_setting_find(const char *name);

/* The bindings' call arguments that are no setting, as rows like the
 * settings' (mcpp_setting_check and mcpp_setting_range take them):
 * "kill_grace_ms" (0: SIGKILL at once), "retry_budget.burst",
 * "retry_budget.per_second", "rtt_window". *n gets the count. */
const mcpp_setting_info *mcpp_arguments_table(size_t *n);

/* The argument of that name, else NULL. */
const mcpp_setting_info *mcpp_argument_find(const char *name);

/* The longest a frozen peer goes before it is stale, in ms: interval_ms +
 * timeout_ms x failures (keepalive's promise), at most MCPP_MAX_MS, the
 * longest a timer waits. timeout_ms or failures 0: the setting's default.
 * A server-side reaper gives a new client this long to open its listening
 * stream. */
uint32_t mcpp_stale_bound_ms(uint32_t interval_ms, uint32_t timeout_ms,
                             uint32_t failures);

/* Bindings write time settings in their own unit: Node in ms, Python in
 * seconds. The sentences below then show every number in that unit. */
#define MCPP_IN_MS 0
#define MCPP_IN_SECONDS 1

/* Writes into buf (NUL-terminated, truncated to size) the values the
 * setting allows, in the caller's unit: "between 0.001 and 2147483.647
 * seconds", "0 (off) or between 10 and 2147483647 ms", "an integer between
 * 1 and 1000". low, if not NaN, is a raised lower bound in the caller's
 * unit, named low_name (the floor setting's name as the caller writes it).
 * Returns buf. Bindings use it for their own "wrong type" sentences. */
const char *mcpp_setting_range(const mcpp_setting_info *info, int in_unit,
                               double low, const char *low_name, char *buf,
                               size_t size);

/* Checks one value of a numeric setting, given in the caller's unit (see
 * mcpp_setting_range for in_unit, low and low_name). Returns 0 and sets
 * *out to the value in C's unit (whole ms for times, rounded to nearest),
 * or MCPP_ERR_INVALID_ARGUMENT and writes the sentence that refuses it,
 * "<shown> must be <range>, not <value>", into buf. NaN and infinities are
 * refused; a whole-number setting refuses fractions; a time rounds. */
int mcpp_setting_check(const mcpp_setting_info *info, const char *shown,
                       double value, int in_unit, double low,
                       const char *low_name, double *out, char *buf,
                       size_t size);

/* Checks one value of a text setting (probe_method: a method name), len
 * bytes: 0, or MCPP_ERR_INVALID_ARGUMENT with "<shown> must be a method
 * name of at most 128 bytes without control characters" in buf. The
 * bindings keep their own spellings of "automatic" and "none". */
int mcpp_setting_check_text(const mcpp_setting_info *info, const char *shown,
                            const char *value, size_t len, char *buf,
                            size_t size);

#ifdef __cplusplus
}
#endif

#endif /* MCPPING_SETTINGS_H */
