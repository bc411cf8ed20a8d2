/* Answers mcpping makes rather than the peer. Their kinds: the engine and
 * the runtime (item.c) say what each answer they make for the application
 * is, beside the frame, so no binding reads its text. And the answer a
 * guard's ping gets when no stream would carry it, and the one a request
 * from the peer gets when the application serves none (rules.h). */
#include <stdio.h>

#include "engine.h"
#include "scan.h"

const char *mcpp_answer_kind_name(mcpp_answer_kind kind) {
  static const char *const names[] = {"peer", "timeout", "abandoned",
                                      "in_doubt", "cancelled"};
  if ((unsigned)kind > MCPP_ANSWER_LAST) return NULL;
  return names[kind];
}

mcpp_answer_kind mcpp_engine_delivery_kind(const mcpp_engine *e) {
  return e ? (mcpp_answer_kind)e->delivering : MCPP_ANSWER_PEER;
}

/* A -32601 error answering the request in frame, under its id; 0 if frame
 * is no request (not an object, no method, no id or an id of null). */
static size_t method_not_found(const char *frame, size_t len, const char *message, char *out,
                               size_t cap) {
  mcpp__msg msg;
  if (frame == NULL || mcpp__scan_message(frame, len, &msg) != 0 || msg.id.p == NULL ||
      msg.method.p == NULL || mcpp__span_is(msg.id, "null"))
    return 0;
  int n = snprintf(out, cap,
                   "{\"jsonrpc\":\"2.0\",\"id\":%.*s,\"error\":{\"code\":-32601,"
                   "\"message\":\"%s\"}}",
                   (int)msg.id.n, msg.id.p, message);
  return n < 0 ? 0 : (size_t)n;
}

size_t mcpp_ping_unreachable_answer(const char *ping, size_t len, char *out, size_t cap) {
  return method_not_found(ping, len, "mcpping: no stream to the peer to carry a ping", out, cap);
}

size_t mcpp_unserved_request_answer(const char *frame, size_t len, char *out, size_t cap) {
  return method_not_found(frame, len, "Method not found", out, cap);
}
