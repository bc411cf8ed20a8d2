/* The application's requests: each one's deadline, what happens when it
 * passes or the application abandons the request, and what they mean for
 * health. The ledger itself is ledger.c. */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "engine.h"

uint64_t mcpp__request_deadline(const mcpp_engine *e) {
  const mcpp__entry *r = mcpp__ledger_earliest(&e->ledger);
  return r ? mcpp__with_grace(e, r->deadline) : UINT64_MAX;
}

uint64_t mcpp__requests_healthy_until(const mcpp_engine *e) {
  /* Healthy up to and including the limit: a request's own deadline, or,
   * for one without, the ping timeout. */
  uint64_t t = UINT64_MAX;
  const mcpp__entry *r = mcpp__ledger_earliest(&e->ledger);
  if (r) t = mcpp__with_grace(e, r->deadline) + 1;
  r = mcpp__ledger_oldest_untimed(&e->ledger);
  if (r) {
    uint64_t u = mcpp__with_grace(
        e, r->sent_at + (uint64_t)e->s.timeout_ms * 1000) + 1;
    if (u < t) t = u;
  }
  return t;
}

/* The protocol forbids cancelling the requests that open a session. */
static int may_cancel(const char *method) {
  return strcmp(method, "initialize") != 0 &&
         strcmp(method, "server/discover") != 0;
}

typedef enum ending { EXPIRED, ABANDONED } ending;

/* A piece holding a string literal. */
#define LIT(s) ((mcpp__piece){s, sizeof s - 1})

/* Ends an in-flight request: notifications/cancelled to the peer, a
 * JSON-RPC error to the application, the event. Returns 0 or the send
 * error; the request is gone either way. */
static int end_request(mcpp_engine *e, mcpp__entry *r, ending how,
                       uint64_t now) {
  mcpp__ledger_detach(&e->ledger, r);
  char num[16];
  size_t num_len =
      (size_t)snprintf(num, sizeof num, "%" PRIu32, r->timeout_ms);
  mcpp__piece reason[2];
  mcpp__piece message[3];
  const char *code;
  if (how == EXPIRED) {
    e->app_timeouts++;
    e->app_timed_out = 1;
    reason[0] = LIT("mcpping: request timed out after ");
    reason[1] = (mcpp__piece){num, num_len};
    code = "-32001";
    message[0] = LIT("Request timed out (mcpping: no answer after ");
    message[1] = (mcpp__piece){num, num_len};
    message[2] = LIT(" ms)");
  } else {
    /* The application's own choice: no mark against the connection. */
    e->app_cancels++;
    reason[0] = LIT("mcpping: request abandoned by the application");
    reason[1] = LIT("");
    code = "-32800";
    message[0] = LIT("Request cancelled (mcpping: abandoned by the application)");
    message[1] = message[2] = LIT("");
  }
  int rc = 0;
  if (may_cancel(r->method)) {
    static const char c1[] =
        "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/cancelled\","
        "\"params\":{\"requestId\":";
    static const char c2[] = ",\"reason\":\"";
    static const char c3[] = "\"}}";
    static const char ms[] = " ms";
    mcpp__piece cancel[] = {{c1, sizeof c1 - 1}, {r->id, r->id_len},
                            {c2, sizeof c2 - 1}, reason[0],
                            reason[1],           {ms, how == EXPIRED ? 3 : 0},
                            {c3, sizeof c3 - 1}};
    rc = mcpp__output(e, MCPP_FRAME_CANCEL, cancel, 7);
  }
  static const char d1[] = "{\"jsonrpc\":\"2.0\",\"id\":";
  static const char d2[] = ",\"error\":{\"code\":";
  static const char d3[] = ",\"message\":\"";
  static const char d4[] = "\"}}";
  mcpp__piece error[] = {{d1, sizeof d1 - 1}, {r->id, r->id_len},
                         {d2, sizeof d2 - 1}, {code, strlen(code)},
                         {d3, sizeof d3 - 1}, message[0],
                         message[1],          message[2],
                         {d4, sizeof d4 - 1}};
  int drc = mcpp__output(e, -1, error, 9);
  mcpp_event ev;
  memset(&ev, 0, sizeof ev);
  ev.type = how == EXPIRED ? MCPP_EV_REQUEST_TIMEOUT : MCPP_EV_REQUEST_CANCELLED;
  ev.timeout_ms = r->timeout_ms;
  ev.id = r->id;
  ev.id_len = r->id_len;
  ev.message = r->method;
  mcpp__emit(e, &ev, NULL, now);
  mcpp__free(e->alloc, r);
  return rc ? rc : drc;
}

int mcpp__expire_requests(mcpp_engine *e, uint64_t now) {
  while (mcpp__request_deadline(e) <= now) {
    int rc = end_request(e, mcpp__ledger_earliest(&e->ledger), EXPIRED, now);
    if (rc) return rc;
    if (e->state == MCPP_STATE_CLOSED) return 0;
  }
  return 0;
}

int mcpp_engine_cancel_request(mcpp_engine *e, const char *id, size_t id_len,
                               uint64_t now) {
  if (e == NULL || id == NULL || id_len == 0) return MCPP_ERR_INVALID_ARGUMENT;
  if (e->state == MCPP_STATE_CLOSED) return MCPP_ERR_CLOSED;
  mcpp__entry *r = mcpp__ledger_find(&e->ledger, id, id_len);
  if (r == NULL) return MCPP_ERR_NOT_FOUND;
  return end_request(e, r, ABANDONED, now);
}
