/* Answers mcpping makes rather than the peer. Their kinds: the engine and
 * the runtime (item.c) say what each answer they make for the application
 * is, beside the frame, so no binding reads its text. And the answer a
 * guard's ping gets when no stream would carry it, and the one a request
 * from the peer gets when the application serves none (rules.h). */
#include "engine.h"
#include "internal.h"

const char *mcpp_answer_kind_name(mcpp_answer_kind kind) {
  static const char *const names[] = {"peer", "timeout", "abandoned",
                                      "in_doubt", "cancelled"};
  if ((unsigned)kind > MCPP_ANSWER_LAST) return NULL;
  return names[kind];
}

int mcpp_answer_kind_is_in_doubt(mcpp_answer_kind kind) {
  return kind == MCPP_ANSWER_IN_DOUBT || kind == MCPP_ANSWER_CANCELLED;
}

mcpp_answer_kind mcpp_engine_delivery_kind(const mcpp_engine *e) {
  return e ? (mcpp_answer_kind)e->delivering : MCPP_ANSWER_PEER;
}

#define METHOD_NOT_FOUND(message) "{\"code\":-32601,\"message\":\"" message "\"}"

size_t mcpp_ping_unreachable_answer(const char *ping, size_t len, char *out, size_t cap) {
  static const char error[] = METHOD_NOT_FOUND("mcpping: no stream to the peer to carry a ping");
  return mcpp__error_answer(ping, len, error, sizeof error - 1, out, cap);
}

size_t mcpp_unserved_request_answer(const char *frame, size_t len, char *out, size_t cap) {
  static const char error[] = METHOD_NOT_FOUND("Method not found");
  return mcpp__error_answer(frame, len, error, sizeof error - 1, out, cap);
}
