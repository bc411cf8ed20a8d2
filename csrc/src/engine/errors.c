/* Names and messages for error codes, states, events, dispositions and
 * proofs. */
#include <string.h>

#include "mcpping.h"

/* Both from MCPP_ERRNO_MAP (mcpping.h), the one list of errors. */
const char *mcpp_strerror(int err) {
  switch (err) {
    case 0: return "Success.";
#define XX(name, code, text) \
  case MCPP_ERR_##name:      \
    return text;
    MCPP_ERRNO_MAP(XX)
#undef XX
  }
  return "Unknown error.";
}

const char *mcpp_errname(int err) {
  switch (err) {
    case 0: return "MCPP_OK";
#define XX(name, code, text) \
  case MCPP_ERR_##name:      \
    return "MCPP_ERR_" #name;
    MCPP_ERRNO_MAP(XX)
#undef XX
  }
  return "MCPP_ERR_UNKNOWN";
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

const char *mcpp_process_state_name(mcpp_process_state state) {
  switch (state) {
    case MCPP_PROCESS_RUNNING: return "running";
    case MCPP_PROCESS_STOPPED: return "stopped";
    case MCPP_PROCESS_EXITED: return "exited";
    case MCPP_PROCESS_UNKNOWN: break;
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
