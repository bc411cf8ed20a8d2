/* Answers mcpping makes rather than the peer. Their kinds: the engine and
 * the runtime (item.c) say what each answer they make for the application
 * is, beside the frame, so no binding reads its text. And the answer a
 * guard's ping gets when no stream would carry it (rules.h). */
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

size_t mcpp_ping_unreachable_answer(const char *ping, size_t len, char *out, size_t cap) {
  mcpp__msg msg;
  if (ping == NULL || mcpp__scan_message(ping, len, &msg) != 0 || msg.id.p == NULL ||
      msg.method.p == NULL)
    return 0;
  int n = snprintf(out, cap,
                   "{\"jsonrpc\":\"2.0\",\"id\":%.*s,\"error\":{\"code\":-32601,"
                   "\"message\":\"mcpping: no stream to the peer to carry a ping\"}}",
                   (int)msg.id.n, msg.id.p);
  return n < 0 ? 0 : (size_t)n;
}
