/* Accessors of the opaque mcpp_item (item.h). */
#include "item.h"

mcpp_item *mcpp_item_next(const mcpp_item *item) { return item->next; }

mcpp_item_type mcpp_item_get_type(const mcpp_item *item) { return item->type; }

uint64_t mcpp_item_get_conn_id(const mcpp_item *item) { return item->conn_id; }

void *mcpp_item_get_conn_user_data(const mcpp_item *item) {
  return item->conn_user_data;
}

const char *mcpp_item_get_data(const mcpp_item *item) { return item->data; }

size_t mcpp_item_get_len(const mcpp_item *item) { return item->len; }

const mcpp_event *mcpp_item_get_event(const mcpp_item *item) {
  return item->type == MCPP_ITEM_EVENT ? &item->event : NULL;
}

uint64_t mcpp_item_get_ping_token(const mcpp_item *item) {
  return item->ping_token;
}

int mcpp_item_get_error(const mcpp_item *item) { return item->error; }

const mcpp_close_info *mcpp_item_get_close(const mcpp_item *item) {
  return item->type == MCPP_ITEM_CLOSED ? &item->close : NULL;
}

mcpp_answer_kind mcpp_item_get_answer_kind(const mcpp_item *item) {
  return item->type == MCPP_ITEM_MESSAGE ? (mcpp_answer_kind)item->answer_kind
                                         : MCPP_ANSWER_PEER;
}
