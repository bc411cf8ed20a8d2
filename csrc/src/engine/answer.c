/* Answer kinds: the engine and the runtime say what each answer they make
 * for the application is, beside the frame, so no binding reads its text. */
#include "engine.h"
#include "runtime/item.h"

const char *mcpp_answer_kind_name(mcpp_answer_kind kind) {
  static const char *const names[] = {"peer", "timeout", "abandoned",
                                      "in_doubt", "cancelled"};
  if ((unsigned)kind > MCPP_ANSWER_LAST) return NULL;
  return names[kind];
}

mcpp_answer_kind mcpp_engine_delivery_kind(const mcpp_engine *e) {
  return e ? (mcpp_answer_kind)e->delivering : MCPP_ANSWER_PEER;
}

mcpp_answer_kind mcpp_item_get_answer_kind(const mcpp_item *item) {
  return item->type == MCPP_ITEM_MESSAGE ? (mcpp_answer_kind)item->answer_kind
                                         : MCPP_ANSWER_PEER;
}
