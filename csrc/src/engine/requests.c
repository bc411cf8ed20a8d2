/* The application's requests: each one's deadline, what happens when it
 * passes or the application abandons the request, and what they mean for
 * health. The ledger itself is ledger.c. */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "deadlines.h"
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

char *mcpp__request_error(char *buf, size_t cap, int timed_out,
                          uint32_t timeout_ms) {
  if (timed_out)
    snprintf(buf, cap,
             "-32001,\"message\":\"Request timed out (mcpping: no answer "
             "after %" PRIu32 " ms)\"",
             timeout_ms);
  else
    snprintf(buf, cap,
             "-32800,\"message\":\"Request cancelled (mcpping: abandoned by "
             "the application)\"");
  return buf;
}

/* Ends an in-flight request: notifications/cancelled to the peer, a
 * JSON-RPC error to the application, the event. Returns 0 or the send
 * error; the request is gone either way. */
static int end_request(mcpp_engine *e, mcpp__entry *r, ending how,
                       uint64_t now) {
  mcpp__ledger_detach(&e->ledger, r);
  /* Our own words only (numbers, no payload), so no escaping is needed. */
  char reason[96], error[160];
  if (how == EXPIRED) {
    e->app_timeouts++;
    e->app_timed_out = 1;
    snprintf(reason, sizeof reason,
             "mcpping: request timed out after %" PRIu32 " ms", r->timeout_ms);
    mcpp__request_error(error, sizeof error, 1, r->timeout_ms);
  } else {
    /* The application's own choice: no mark against the connection. */
    e->app_cancels++;
    snprintf(reason, sizeof reason,
             "mcpping: request abandoned by the application");
    mcpp__request_error(error, sizeof error, 0, 0);
  }
  int rc = 0;
  if (may_cancel(r->method)) {
    static const char c1[] =
        "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/cancelled\","
        "\"params\":{\"requestId\":";
    static const char c2[] = ",\"reason\":\"";
    static const char c3[] = "\"}}";
    mcpp__piece cancel[] = {{c1, sizeof c1 - 1},
                            {r->id, r->id_len},
                            {c2, sizeof c2 - 1},
                            {reason, strlen(reason)},
                            {c3, sizeof c3 - 1}};
    rc = mcpp__output(e, MCPP_FRAME_CANCEL, cancel, 5);
  }
  static const char d1[] = "{\"jsonrpc\":\"2.0\",\"id\":";
  static const char d2[] = ",\"error\":{\"code\":";
  static const char d3[] = "}}";
  mcpp__piece answer[] = {{d1, sizeof d1 - 1},
                          {r->id, r->id_len},
                          {d2, sizeof d2 - 1},
                          {error, strlen(error)},
                          {d3, sizeof d3 - 1}};
  int drc = mcpp__output(
      e, MCPP__DELIVER(how == EXPIRED ? MCPP_ANSWER_TIMEOUT : MCPP_ANSWER_ABANDONED),
      answer, 5);
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

/* A request whose answer cannot come any more: its caller gets an error it
 * can tell apart from a timeout, saying whether the request may have run.
 * Nothing is sent: the peer (or the session) it went to is gone. */
static void fail_entry(mcpp_engine *e, mcpp__entry *r) {
  mcpp__ledger_detach(&e->ledger, r);
  static const char d1[] = "{\"jsonrpc\":\"2.0\",\"id\":";
  static const char in_doubt[] =
      ",\"error\":{\"code\":-32003,\"message\":\"Request in doubt "
      "(mcpping: the server failed while it was in flight; it may have "
      "run, and it is not replayed)\",\"data\":{\"mcpping\":\"in_doubt\"}}}";
  static const char cancelled[] =
      ",\"error\":{\"code\":-32003,\"message\":\"Request cancelled "
      "(mcpping: the server failed before answering; it is not "
      "replayed)\",\"data\":{\"mcpping\":\"cancelled\"}}}";
  int safe = mcpp__method_is_safe(r->method);
  mcpp__piece answer[] = {
      {d1, sizeof d1 - 1},
      {r->id, r->id_len},
      {safe ? cancelled : in_doubt,
       safe ? sizeof cancelled - 1 : sizeof in_doubt - 1}};
  mcpp__output(
      e, MCPP__DELIVER(safe ? MCPP_ANSWER_CANCELLED : MCPP_ANSWER_IN_DOUBT),
      answer, 3);
  mcpp__free(e->alloc, r);
}

uint32_t mcpp_engine_fail_in_flight(mcpp_engine *e, uint64_t now) {
  if (e == NULL) return 0;
  uint32_t n = 0;
  while (e->ledger.head != NULL) {
    fail_entry(e, e->ledger.head);
    n++;
  }
  (void)now;
  return n;
}

int mcpp_engine_fail_request(mcpp_engine *e, const char *id, size_t id_len,
                             uint64_t now) {
  if (e == NULL || id == NULL || id_len == 0) return MCPP_ERR_INVALID_ARGUMENT;
  if (e->state == MCPP_STATE_CLOSED) return MCPP_ERR_CLOSED;
  mcpp__entry *r = mcpp__ledger_find(&e->ledger, id, id_len);
  if (r == NULL) return MCPP_ERR_NOT_FOUND;
  fail_entry(e, r);
  (void)now;
  return 0;
}
