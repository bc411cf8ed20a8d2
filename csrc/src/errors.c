/* Names and messages for error codes, states, events, dispositions and
 * proofs. */
#include <string.h>

#include "mcpping.h"

typedef struct error_entry {
  int code;
  const char *name;
  const char *message;
} error_entry;

static const error_entry errors[] = {
    {0, "MCPP_OK", "Success."},
    {MCPP_ERR_INVALID_ARGUMENT, "MCPP_ERR_INVALID_ARGUMENT",
     "An argument was NULL, zero or out of range."},
    {MCPP_ERR_NOMEM, "MCPP_ERR_NOMEM", "Out of memory."},
    {MCPP_ERR_INTERVAL_TOO_SHORT, "MCPP_ERR_INTERVAL_TOO_SHORT",
     "The keepalive interval is below the minimum interval."},
    {MCPP_ERR_UNSUPPORTED, "MCPP_ERR_UNSUPPORTED",
     "The peer or the protocol version does not support ping."},
    {MCPP_ERR_TOO_MANY_PINGS, "MCPP_ERR_TOO_MANY_PINGS",
     "Too many manual pings are outstanding."},
    {MCPP_ERR_CLOSED, "MCPP_ERR_CLOSED",
     "The connection is closing or closed."},
    {MCPP_ERR_FRAME_TOO_LARGE, "MCPP_ERR_FRAME_TOO_LARGE",
     "A line exceeded the maximum line length."},
    {MCPP_ERR_FRAME_NEWLINE, "MCPP_ERR_FRAME_NEWLINE",
     "An outbound frame contains a newline."},
    {MCPP_ERR_SPAWN, "MCPP_ERR_SPAWN", "The server command could not start."},
    {MCPP_ERR_FLOODED, "MCPP_ERR_FLOODED",
     "The peer floods pings and does not read the answers."},
    {MCPP_ERR_IO, "MCPP_ERR_IO", "A read or write on the pipes failed."},
    {MCPP_ERR_STALE, "MCPP_ERR_STALE",
     "The connection was closed because the peer went stale."},
    {MCPP_ERR_NOT_FOUND, "MCPP_ERR_NOT_FOUND",
     "No such connection or ping."},
    {MCPP_ERR_THREAD, "MCPP_ERR_THREAD", "The I/O thread could not start."},
    {MCPP_ERR_WOULD_BLOCK, "MCPP_ERR_WOULD_BLOCK",
     "The connection's outbound queue is full; retry once it drains."},
};

static const error_entry *find_error(int err) {
  for (size_t i = 0; i < sizeof errors / sizeof errors[0]; i++)
    if (errors[i].code == err) return &errors[i];
  return NULL;
}

const char *mcpp_strerror(int err) {
  const error_entry *e = find_error(err);
  return e ? e->message : "Unknown error.";
}

const char *mcpp_errname(int err) {
  const error_entry *e = find_error(err);
  return e ? e->name : "MCPP_ERR_UNKNOWN";
}

const char *mcpp_state_name(mcpp_state state) {
  switch (state) {
    case MCPP_STATE_ALIVE: return "alive";
    case MCPP_STATE_SUSPECT: return "suspect";
    case MCPP_STATE_STALE: return "stale";
    case MCPP_STATE_CLOSED: return "closed";
  }
  return "unknown";
}

const char *mcpp_event_name(mcpp_event_type type) {
  switch (type) {
    case MCPP_EV_PING: return "ping";
    case MCPP_EV_PONG: return "pong";
    case MCPP_EV_TIMEOUT: return "timeout";
    case MCPP_EV_PING_ERROR: return "ping_error";
    case MCPP_EV_UNSUPPORTED: return "unsupported";
    case MCPP_EV_PING_ANSWERED: return "ping_answered";
    case MCPP_EV_SUSPECT: return "suspect";
    case MCPP_EV_STALE: return "stale";
    case MCPP_EV_RECOVERED: return "recovered";
    case MCPP_EV_CLOSED: return "closed";
    case MCPP_EV_REQUEST_TIMEOUT: return "request_timeout";
    case MCPP_EV_INITIALIZED: return "initialized";
    case MCPP_EV_PROBE: return "probe";
    case MCPP_EV_PROBE_OK: return "probe_ok";
    case MCPP_EV_PROBE_TIMEOUT: return "probe_timeout";
    case MCPP_EV_REQUEST_CANCELLED: return "request_cancelled";
    case MCPP_EV_RECONNECTING: return "reconnecting";
    case MCPP_EV_RECONNECTED: return "reconnected";
    case MCPP_EV_PING_DEAF: return "ping_deaf";
    case MCPP_EV_BUSY: return "busy";
    case MCPP_EV_PAUSED: return "paused";
  }
  return "unknown";
}

const char *mcpp_disposition_name(mcpp_disposition d) {
  switch (d) {
    case MCPP_DISPOSITION_CONTINUED: return "continued";
    case MCPP_DISPOSITION_CANCELLED: return "cancelled";
    case MCPP_DISPOSITION_IN_DOUBT: return "in_doubt";
  }
  return "unknown";
}

const char *mcpp_proof_name(mcpp_proof proof) {
  switch (proof) {
    case MCPP_PROOF_TRAFFIC: return "traffic";
    case MCPP_PROOF_PING: return "ping";
    case MCPP_PROOF_PROBE: return "probe";
    case MCPP_PROOF_PROCESS: return "process";
    case MCPP_PROOF_NONE: break;
  }
  return NULL;
}
