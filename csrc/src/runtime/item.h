/* The runtime's queued item. Opaque to users (mcpping.h has accessors, in
 * item.c), so fields can be added without breaking the ABI. */
#ifndef MCPPING_ITEM_H
#define MCPPING_ITEM_H

#include "mcpping.h"

struct mcpp_item {
  struct mcpp_item *next;
  mcpp_item_type type;
  uint64_t conn_id;
  void *conn_user_data;  /* as given to mcpp_runtime_spawn */
  char *data;            /* owned by the item */
  size_t len;
  mcpp_event event;      /* EVENT (strings point into data) */
  uint64_t ping_token;   /* EVENT (ping outcome of a manual ping) and
                            PING_FAILED: the token given to mcpp_runtime_ping */
  int error;             /* PING_FAILED */
  mcpp_close_info close; /* CLOSED; reason points into data */
  int answer_kind;       /* MESSAGE: mcpp_answer_kind */
  size_t charge;         /* bytes counted against the connection's
                            max_pending_bytes until freed or taken */
};

#endif
