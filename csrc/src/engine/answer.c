/* Answer kinds: the engine and the runtime (item.c) say what each answer they make
 * for the application is, beside the frame, so no binding reads its text. */
#include "engine.h"

const char *mcpp_answer_kind_name(mcpp_answer_kind kind) {
  static const char *const names[] = {"peer", "timeout", "abandoned",
                                      "in_doubt", "cancelled"};
  if ((unsigned)kind > MCPP_ANSWER_LAST) return NULL;
  return names[kind];
}

mcpp_answer_kind mcpp_engine_delivery_kind(const mcpp_engine *e) {
  return e ? (mcpp_answer_kind)e->delivering : MCPP_ANSWER_PEER;
}
