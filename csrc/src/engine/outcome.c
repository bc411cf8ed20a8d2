/* What an event means for the host: how a ping ended, whether it counts as
 * lost, and whether a stale peer must be closed. Both bindings ask here
 * instead of keeping their own copies of these rules. */
#include "engine.h"

mcpp_ping_outcome mcpp_event_outcome(const mcpp_event *ev) {
  if (!mcpp__event_readable(ev)) return MCPP_OUTCOME_NONE;
  switch (ev->type) {
    case MCPP_EV_PONG:
      return MCPP_OUTCOME_PONG;
    case MCPP_EV_TIMEOUT:
    case MCPP_EV_PING_ERROR:
      /* A ping abandoned because we closed was never the peer's failure. */
      if (ev->error == MCPP_ERR_CLOSED) return MCPP_OUTCOME_CLOSED;
      if (ev->type == MCPP_EV_TIMEOUT) return MCPP_OUTCOME_TIMEOUT;
      return ev->invalid ? MCPP_OUTCOME_INVALID : MCPP_OUTCOME_ERROR;
    case MCPP_EV_UNSUPPORTED:
      return MCPP_OUTCOME_UNSUPPORTED;
    default:
      return MCPP_OUTCOME_NONE;
  }
}

const char *mcpp_outcome_name(mcpp_ping_outcome o) {
  switch (o) {
    case MCPP_OUTCOME_PONG: return "pong";
    case MCPP_OUTCOME_TIMEOUT: return "timeout";
    case MCPP_OUTCOME_ERROR: return "error";
    case MCPP_OUTCOME_INVALID: return "invalid";
    case MCPP_OUTCOME_UNSUPPORTED: return "unsupported";
    case MCPP_OUTCOME_CLOSED: return "closed";
    default: return NULL;
  }
}

int mcpp_outcome_is_lost(mcpp_ping_outcome o) {
  return o == MCPP_OUTCOME_TIMEOUT || o == MCPP_OUTCOME_ERROR ||
         o == MCPP_OUTCOME_INVALID;
}

int mcpp_engine_should_close(const mcpp_engine *e, const mcpp_event *ev) {
  if (e == NULL || !mcpp__event_readable(ev) || ev->type != MCPP_EV_STALE)
    return 0;
  return e->s.on_stale == MCPP_STALE_CLOSE || e->process_exited;
}
