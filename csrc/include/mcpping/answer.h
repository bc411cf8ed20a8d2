/* mcpping answer kinds: what an answer the engine (or the runtime) made
 * for the application is, so that no binding recognises it by its text.
 * Included by mcpping.h. */
#ifndef MCPPING_ANSWER_H
#define MCPPING_ANSWER_H

#ifdef __cplusplus
extern "C" {
#endif

typedef struct mcpp_engine mcpp_engine;
typedef struct mcpp_item mcpp_item;

typedef enum mcpp_answer_kind {
  MCPP_ANSWER_PEER = 0,      /* not ours: a frame the peer sent */
  MCPP_ANSWER_TIMEOUT = 1,   /* -32001: no answer within the request's
                                timeout (notifications/cancelled sent, if
                                the request was sent at all) */
  MCPP_ANSWER_ABANDONED = 2, /* -32800: the application gave the request up
                                (mcpp_engine_cancel_request) */
  MCPP_ANSWER_IN_DOUBT = 3,  /* MCPP_CODE_IN_DOUBT: the server failed while
                                the request was in flight; it may have run */
  MCPP_ANSWER_CANCELLED = 4  /* MCPP_CODE_IN_DOUBT: the server failed before
                                answering a request known to be safe; it
                                did not take effect */
} mcpp_answer_kind;
#define MCPP_ANSWER_LAST MCPP_ANSWER_CANCELLED

/* "peer", "timeout", "abandoned", "in_doubt", "cancelled"; NULL for an
 * unknown kind. */
const char *mcpp_answer_kind_name(mcpp_answer_kind kind);

/* Returns 1 if an answer of this kind means the request's own answer can
 * no longer come because the server failed under it (IN_DOUBT, CANCELLED):
 * the bindings raise their in-doubt error for it, never a timeout or the
 * server's error; else 0. */
int mcpp_answer_kind_is_in_doubt(mcpp_answer_kind kind);

/* Inside the engine's deliver callback: what the frame being delivered is
 * (never MCPP_ANSWER_PEER there); MCPP_ANSWER_PEER anywhere else. */
mcpp_answer_kind mcpp_engine_delivery_kind(const mcpp_engine *engine);

/* MESSAGE items: what the frame is (MCPP_ANSWER_PEER for the peer's own);
 * MCPP_ANSWER_PEER for every other item. */
mcpp_answer_kind mcpp_item_get_answer_kind(const mcpp_item *item);

#ifdef __cplusplus
}
#endif

#endif /* MCPPING_ANSWER_H */
