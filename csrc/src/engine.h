/*
 * The engine's state, shared by engine.c (scheduling, pings, state
 * changes, close), frames.c (inbound/outbound frame handling) and
 * emit.c (events and records). Internal.
 */
#ifndef MCPP_ENGINE_H
#define MCPP_ENGINE_H

#include "internal.h"
#include "ledger.h"
#include "record.h"
#include "scan.h"

/* One of our pings awaiting an answer. */
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

struct mcpp_engine {
  mcpp_settings s;
  mcpp_engine_callbacks cb;
  void *user_data;
  const mcpp_allocator *alloc;

  char nonce_hex[17]; /* our ping ids: "mcpp-<nonce_hex>-<seq>" */
  uint64_t rng;       /* splitmix64 state for jitter */
  uint64_t next_seq;  /* seqs 1..next_seq-1 were issued */

  mcpp_state state;
  int unsupported;         /* no pings on this session, for good */
  int unsupported_emitted; /* the protocol-version UNSUPPORTED went out */
  int initialized;
  uint32_t failure_count;
  uint32_t reconnect_attempt;

  /* Keepalive. The next ping is due at max(last_rx, ka_base) + interval -
   * ka_jitter_us, or at ka_probe_at right after a failed probe. */
  uint64_t last_rx;
  int heard_from_peer; /* keepalive waits for the peer's first byte */
  uint64_t ka_base;
  uint64_t ka_jitter_us;
  int ka_probe_now;
  uint64_t ka_probe_at;
  int ka_active;
  mcpp__ping ka;

  /* Manual pings, sorted by seq. */
  mcpp__ping *manual;
  size_t n_manual, cap_manual;

  /* After a detected host pause, manual ping and request deadlines are not
   * enforced before this time, so answers already waiting in the pipe are
   * read first. */
  uint64_t grace_until;

  mcpp__ledger ledger;
  int app_timed_out; /* an app request timed out since the last response */

  /* Lifecycle. */
  char *init_id; /* raw id of the initialize request (ours or the peer's) */
  size_t init_id_len;
  char *protocol_version;
  char *peer_name;     /* learned from serverInfo/clientInfo */
  char *peer_setting;  /* settings.peer_name */
  char *session_id;

  /* Counters (see mcpp_engine_info). */
  uint64_t app_timeouts, pings_sent, pongs_received, ping_timeouts;
  uint64_t ping_errors, pings_answered, frames_in, frames_out;
  uint64_t json_parses; /* cJSON parses, for tests of the fast path */
};

/* emit.c: fills the event's state/failure_count/in_flight, calls on_event,
 * then on_record with `record` as the record's event name (NULL: none). */
void mcpp__emit(mcpp_engine *e, mcpp_event *ev, const char *record,
                uint64_t now);
/* Emits a record not tied to an event (reconnect). */
void mcpp__emit_record_only(mcpp_engine *e, const char *record, uint64_t now);
/* Builds a record from an event. */
void mcpp__record_of(const mcpp_engine *e, const mcpp_event *ev,
                     const char *name, mcpp__record *out);

/* Joins pieces into one frame and hands it to send (kind >= 0) or deliver
 * (kind < 0). Returns 0, MCPP_ERR_NOMEM or the send callback's error. */
typedef struct mcpp__piece {
  const char *p;
  size_t n;
} mcpp__piece;
int mcpp__output(mcpp_engine *e, int kind, const mcpp__piece *pieces,
                 size_t count);

/* engine.c */
void mcpp__on_rx(mcpp_engine *e, uint64_t now);
mcpp_disposition mcpp__abandon_disposition(const mcpp_engine *e);
/* Handles the answer to our ping `seq`. kind: 0 ok, 1 invalid, 2 error,
 * 3 unsupported. */
void mcpp__ping_answered_by_peer(mcpp_engine *e, uint64_t seq, int kind,
                                 int64_t code, const char *message,
                                 uint64_t now);
/* Learns the session's protocol version (copied, truncated). negotiated:
 * the version is final, so it may turn pings off. */
void mcpp__learn_version(mcpp_engine *e, const char *v, int negotiated,
                         uint64_t now);
void mcpp__learn_peer(mcpp_engine *e, const char *name);
void mcpp__set_initialized(mcpp_engine *e, uint64_t now);

/* For tests: how many times this engine called the cJSON parser. */
uint64_t mcpp__engine_json_parses(const mcpp_engine *e);

#endif
