/*
 * The engine's state, shared by its files: engine.c (creation, info,
 * health, close, what the session is), keepalive.c (pings, probes,
 * process checks, state changes, timers), requests.c (request deadlines
 * and aborts), frames.c (inbound/outbound frame handling), handshake.c
 * (learning the session from the traffic) and emit.c (events and
 * records). Internal.
 */
#ifndef MCPP_ENGINE_H
#define MCPP_ENGINE_H

#include "internal.h"
#include "ledger.h"
#include "record.h"
#include "scan.h"

/* One of our pings (or our probe) awaiting an answer. */
typedef struct mcpp__ping {
  uint64_t seq;
  uint64_t sent_at;
  uint64_t deadline;
  uint32_t timeout_ms;
} mcpp__ping;

/* Protocol versions from this date on have no ping (SEP-2575). */
#define MCPP__NO_PING_VERSION "2026-07-28"
/* Learned names and versions are truncated to this many bytes. */
#define MCPP__MAX_NAME 256

/* What the pending handshake request is (see handshake.c). */
typedef enum mcpp__hs_kind {
  MCPP__HS_NONE = 0,
  MCPP__HS_INITIALIZE, /* initialize: the result names the version */
  MCPP__HS_DISCOVER,   /* server/discover: the result lists the versions */
  MCPP__HS_ENVELOPE    /* a first request in the 2026 _meta envelope */
} mcpp__hs_kind;

struct mcpp_engine {
  mcpp_settings s;
  mcpp_engine_callbacks cb;
  void *user_data;
  const mcpp_allocator *alloc;
  /* Counts every event emitted (mcpp_engine_set_metrics), or NULL. */
  struct mcpp_metrics_cell *metrics;

  char nonce_hex[17]; /* our ids: "mcpp-<nonce_hex>-<seq>" */
  uint64_t rng;       /* splitmix64 state for jitter */
  uint64_t next_seq;  /* seqs 1..next_seq-1 were issued */

  mcpp_state state;
  /* What failed when the engine last went stale (mcpp_engine_stale_reason):
   * the verdict's proof ("ping...", "probe:<method>...") or the process's
   * words; NULL before. Static or engine-owned text. */
  const char *stale_what;
  int delivering; /* mcpp_answer_kind of the frame deliver is handed now */
  int unsupported;         /* no pings on this session, for good */
  int unsupported_emitted; /* the protocol-version UNSUPPORTED went out */
  int initialized;
  uint32_t failure_count;
  uint32_t reconnect_attempt;

  /* Keepalive. The next ping or probe is due at max(last_rx, ka_base) +
   * interval - ka_jitter_us, or at ka_probe_at right after a failure, or
   * sooner with a request in flight (keepalive.c, inflight_since). */
  uint64_t last_rx; /* proof "traffic" */
  int heard_from_peer; /* keepalive waits for the peer's first byte */
  uint64_t ka_base;
  uint64_t ka_jitter_us;
  int ka_probe_now;
  uint64_t ka_probe_at;
  int ka_active;
  int ka_is_probe;  /* the keepalive request out is our probe, not a ping */
  int ka_checked;   /* its halfway process check ran */
  uint64_t inflight_looked; /* the silence whose in-flight process look ran */
  uint64_t inflight_from; /* when the ledger last went from empty to not */
  const char *ka_proof; /* "ping" or the probe's "probe:<method>" */
  mcpp__ping ka;

  /* The idle probe: settings.probe_method copied (NULL: automatic), and
   * "probe:<method>" for a configured one. */
  char *probe_setting;
  char *probe_proof;

  /* Proof of life other than traffic (see mcpp_engine_info). */
  uint64_t last_ping, last_probe, last_process;
  mcpp_process_state process_state;
  int process_asked;      /* the first keepalive looked at it */
  uint64_t stopped_since; /* when the process was seen stopped; 0: it is not */
  int process_exited;

  /* The detector (detector.c): what a stale verdict needs besides failed
   * pings. The CPU time is fed by the driver from process_state. */
  int ping_deaf;       /* answered a probe but not pings: watched by probe */
  int corroborating;   /* the probe out corroborates failed pings */
  int probe_failed;    /* this suspicion's corroborating probe went unanswered */
  int busy_reported;   /* BUSY went out during this suspicion */
  uint64_t busy_order; /* requests sent before it (ledger order) excuse it */
  int cpu_known;       /* the driver fed the CPU time at least once */
  int cpu_advanced;    /* it grew between the last two looks */
  uint64_t cpu_us;
  /* The last verdict's proof and message when composed from the evidence
   * tried: MCPP__VERDICT_TEXT bytes each, allocated at the first such
   * verdict (an idle connection does not pay for them). */
  char *verdict_text;
  /* Answer times of our pings and probes (RFC 6298's estimator, in µs),
   * for the adaptive keepalive timeout. */
  uint32_t rtt_samples;
  uint64_t srtt_us, rttvar_us;

  /* Manual pings, sorted by seq. */
  mcpp__ping *manual;
  size_t n_manual, cap_manual;

  /* After a detected host pause, or when the driver resumes reading,
   * manual ping and request deadlines are not enforced before this time,
   * so answers already waiting in the pipe are read first. */
  uint64_t grace_until;
  int not_reading; /* the driver stopped reading (backpressure) */

  mcpp__ledger ledger;
  int app_timed_out; /* an app request timed out since the last response */

  /* Lifecycle: the pending handshake request (ours or the peer's). */
  mcpp__hs_kind hs_kind;
  char *hs_id; /* raw id */
  size_t hs_id_len;
  char *hs_version; /* the version a 2026 request proposed */
  int negotiated;   /* the session's version is final */
  char *protocol_version;
  char *peer_name;     /* learned from serverInfo/clientInfo */
  char *peer_setting;  /* settings.peer_name */
  char *session_id;

  /* Counters (see mcpp_engine_info). */
  uint64_t app_timeouts, app_cancels, pings_sent, pongs_received;
  uint64_t ping_timeouts, ping_errors, pings_answered, frames_in, frames_out;
  uint64_t probes_sent, probes_answered, probe_timeouts;
  uint64_t json_parses; /* cJSON parses, for tests of the fast path */
  /* Lines that were not JSON-RPC messages, and the opening of the first
   * (unreadable.c), allocated when it comes, its length in its first
   * byte: an idle engine stays as small as it was. */
  uint64_t unreadable;
  unsigned char *unreadable_first;
};

/* unreadable.c: counts a frame that is not a JSON-RPC message. */
void mcpp__note_unreadable(mcpp_engine *e, const char *frame, size_t len);

/* emit.c: fills the event's state/failure_count/in_flight, calls on_event,
 * then on_record with `record` as the record's event name (NULL: none). */
void mcpp__emit(mcpp_engine *e, mcpp_event *ev, const char *record,
                uint64_t now);
/* Emits a record not tied to an event (reconnect). */
void mcpp__emit_record_only(mcpp_engine *e, const char *record, uint64_t now);
/* Formats and hands over one record. */
void mcpp__send_record(mcpp_engine *e, const mcpp__record *r, uint64_t now);
/* Builds a record from an event. */
void mcpp__record_of(const mcpp_engine *e, const mcpp_event *ev,
                     const char *name, mcpp__record *out);

/* Joins pieces into one frame and hands it to send (kind >= 0) or deliver
 * (kind MCPP__DELIVER(answer kind)). Returns 0, MCPP_ERR_NOMEM or the send
 * callback's error. */
#define MCPP__DELIVER(answer_kind) (-1 - (int)(answer_kind))
typedef struct mcpp__piece {
  const char *p;
  size_t n;
} mcpp__piece;
int mcpp__output(mcpp_engine *e, int kind, const mcpp__piece *pieces,
                 size_t count);

/* pings.c */
/* Writes our id for `seq` as JSON ("mcpp-<nonce>-<seq>" quoted). */
size_t mcpp__format_id(const mcpp_engine *e, uint64_t seq, char buf[64]);
/* Fills a ping event for p; idbuf receives the id. */
void mcpp__ping_event(const mcpp_engine *e, mcpp_event *ev,
                      mcpp_event_type type, const mcpp__ping *p, int manual,
                      char idbuf[64]);
/* Sends a manual or the keepalive ping. Returns 0, MCPP_ERR_NOMEM or the
 * send error (then nothing is registered). */
int mcpp__send_ping(mcpp_engine *e, int manual, uint32_t timeout_ms,
                    uint64_t now, uint64_t *seq_out);
/* 1 if the manual ping `seq` is outstanding. */
int mcpp__is_manual(const mcpp_engine *e, uint64_t seq);
/* Removes the manual ping `seq` into *out; returns 1, or 0 if none. */
int mcpp__take_manual(mcpp_engine *e, uint64_t seq, mcpp__ping *out);
/* The earliest manual ping deadline, grace applied (UINT64_MAX: none). */
uint64_t mcpp__manual_deadline(const mcpp_engine *e);
/* Reports every manual ping due at `now` as timed out. */
void mcpp__expire_manual(mcpp_engine *e, uint64_t now);
/* Reports every manual ping as timed out by the close. */
void mcpp__close_manual(mcpp_engine *e, uint64_t now);

/* keepalive.c */
/* Draws the first keepalive jitter. */
void mcpp__keepalive_init(mcpp_engine *e);
/* Inbound traffic at `now`; `proof` is what it proved ("traffic", "ping",
 * "probe:..."), named in a RECOVERED event if it ends a suspicion. */
void mcpp__on_rx(mcpp_engine *e, uint64_t now, const char *proof);
/* The proof name of keepalive's current probe, NULL if none. */
const char *mcpp__probe_proof(const mcpp_engine *e);
/* Handles the answer to our ping or probe `seq`. kind: 0 ok, 1 invalid,
 * 2 error, 3 unsupported (for a probe, any answer proves life). */
void mcpp__answered_by_peer(mcpp_engine *e, uint64_t seq, int kind,
                            int64_t code, const char *message, uint64_t now);
/* 1 if `seq` is the probe keepalive has out. */
int mcpp__is_probe_seq(const mcpp_engine *e, uint64_t seq);
/* What an answer to our id `seq` proves: "ping", "probe:<method>", or
 * only "traffic" for a late one. */
const char *mcpp__answer_proof(const mcpp_engine *e, uint64_t seq);
/* Pings are off for good (the peer refused them or the version has none). */
void mcpp__turn_off_pings(mcpp_engine *e);
/* A deadline with the pause/resume grace applied. */
uint64_t mcpp__with_grace(const mcpp_engine *e, uint64_t deadline);
/* Forgives silence that was ours (a host pause, stopped reading): the
 * keepalive request out is abandoned and re-sent, deadlines get a grace
 * period. */
void mcpp__forgive_silence(mcpp_engine *e, uint64_t now);

/* keepalive.c, for the detector */
/* The probe this session would use, whether or not pings serve (NULL:
 * none: before the handshake, probing turned off, or no automatic probe
 * for the role). */
const char *mcpp__probe_choice(const mcpp_engine *e);
/* Sends the keepalive probe `proof` ("probe:<method>"). Returns 0 or the
 * send error. */
int mcpp__send_probe(mcpp_engine *e, const char *proof, uint64_t now);
/* State changes with their event and record. */
void mcpp__go_stale(mcpp_engine *e, const char *proof, const char *message,
                    int forced, uint64_t now);
void mcpp__go_suspect(mcpp_engine *e, const char *proof, const char *message,
                      uint64_t now);

/* detector.c: corroboration before a stale verdict. */
#define MCPP__VERDICT_TEXT 160
/* Failures reached settings.failures: decides between the verdict and
 * more evidence. `failed` is the proof that failed ("ping" or the watch's
 * "probe:<method>"). Returns 1 if the verdict waits (a corroborating probe
 * went out, or the server is busy), 0 after convicting. */
int mcpp__detector_decide(mcpp_engine *e, const char *failed, uint64_t now);
/* The corroborating probe was answered: the server is ping-deaf. */
void mcpp__detector_probe_answered(mcpp_engine *e, uint64_t now);
/* An answer to an earlier ping of ours arrived late: pings do work. */
void mcpp__detector_late_pong(mcpp_engine *e);
/* An answer time of one of our pings or probes. */
void mcpp__detector_observe_rtt(mcpp_engine *e, uint64_t rtt_us);
/* The keepalive ping's and probe's timeout: settings.timeout_ms, widened
 * for a server whose answers are routinely slow (never narrower). */
uint32_t mcpp__detector_timeout_ms(const mcpp_engine *e);
/* Inbound traffic ended a suspicion: the next one starts afresh. */
void mcpp__detector_reset(mcpp_engine *e);

/* requests.c */
/* When the next application request expires (UINT64_MAX: none). */
uint64_t mcpp__request_deadline(const mcpp_engine *e);
/* Expires every request due at `now`. Returns 0 or the send error. */
int mcpp__expire_requests(mcpp_engine *e, uint64_t now);
/* When healthy() turns 0 because of a request (UINT64_MAX: never). */
uint64_t mcpp__requests_healthy_until(const mcpp_engine *e);

/* engine.c */
mcpp_disposition mcpp__abandon_disposition(const mcpp_engine *e);
/* Learns the session's protocol version (copied, truncated). negotiated:
 * the version is final, so it may turn pings off. */
void mcpp__learn_version(mcpp_engine *e, const char *v, int negotiated,
                         uint64_t now);
void mcpp__learn_peer(mcpp_engine *e, const char *name);
void mcpp__set_initialized(mcpp_engine *e, uint64_t now);
/* 1 if v is a date-shaped version from 2026-07-28 on. */
int mcpp__version_has_no_ping(const char *v);

/* handshake.c: the handshake in both directions. */
/* A request the application sends (client) or the peer sends (server):
 * notes it if it opens the session. */
void mcpp__handshake_request(mcpp_engine *e, const mcpp__msg *m,
                             uint64_t now);
/* A response passing the other way: learns from it if it answers the
 * pending handshake request. */
void mcpp__handshake_response(mcpp_engine *e, const mcpp__msg *m,
                              uint64_t now);
void mcpp__handshake_free(mcpp_engine *e);

/* frames.c: a cJSON parse, counted (for tests of the fast path), and the
 * string member `key` of an object (NULL if absent or not a string). */
struct cJSON;
struct cJSON *mcpp__parse(mcpp_engine *e, const char *p, size_t n);
const char *mcpp__get_string(const struct cJSON *obj, const char *key);

/* For tests: how many times this engine called the cJSON parser. */
uint64_t mcpp__engine_json_parses(const mcpp_engine *e);

#endif
