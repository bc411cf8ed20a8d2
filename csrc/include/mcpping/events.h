/* mcpping the engine's states, events and proofs of life.
 * Included by mcpping.h; compiles alone too. */
#ifndef MCPPING_EVENTS_H
#define MCPPING_EVENTS_H

#include <stddef.h>
#include <stdint.h>
#include "mcpping/settings.h"

#ifdef __cplusplus
extern "C" {
#endif

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

#ifdef __cplusplus
}
#endif

#endif /* MCPPING_EVENTS_H */
