/* mcpping the captured handshake, replayed on a new server (mcpp_handshake_*).
 * Included by mcpping.h; compiles alone too. */
#ifndef MCPPING_REPLAY_H
#define MCPPING_REPLAY_H

#include <stddef.h>
#include <stdint.h>
#include "mcpping/alloc.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The handshake an application ran, captured so it can be replayed on a
 * new server: its first initialize request and its first
 * notifications/initialized. */
typedef struct mcpp_handshake mcpp_handshake;

/* Returns 0, MCPP_ERR_INVALID_ARGUMENT or MCPP_ERR_NOMEM. alloc may be
 * NULL and must outlive the handshake. */
int mcpp_handshake_new(mcpp_handshake **out, const mcpp_allocator *alloc);
void mcpp_handshake_free(mcpp_handshake *handshake);

/* Shows the handshake a frame the application sends to the server (cheap
 * for every frame once both are captured). Returns 0 or MCPP_ERR_NOMEM
 * (not captured). */
int mcpp_handshake_observe(mcpp_handshake *handshake, const char *frame,
                           size_t len);

/* Shows the handshake a frame from the server. An error answer to the
 * captured initialize drops it: the server refused it, so it is no
 * handshake to replay (a client that goes on to server/discover, or to
 * another initialize, has the session that way; the next initialize is
 * captured). Cheap once the captured initialize was answered. Returns 0
 * or MCPP_ERR_INVALID_ARGUMENT. */
int mcpp_handshake_observe_answer(mcpp_handshake *handshake, const char *frame,
                                  size_t len);

/* Returns 1 once an initialize request was captured (and not refused). */
int mcpp_handshake_captured(const mcpp_handshake *handshake);

/* The initialize request to replay: the captured one, byte for byte, but
 * with our own id ("mcpp-reconnect-<attempt>"), so that its answer is
 * recognised and never reaches the application. Returns the frame (owned
 * by the handshake, valid until the next call) and its length in *len, or
 * NULL if none was captured or out of memory. */
const char *mcpp_handshake_replay(mcpp_handshake *handshake, uint32_t attempt,
                                  size_t *len);

/* The captured notifications/initialized (NULL if the application has not
 * sent it), with its length in *len. */
const char *mcpp_handshake_initialized(const mcpp_handshake *handshake,
                                       size_t *len);

/* What an inbound frame is to the last replayed initialize. */
#define MCPP_REPLAY_OTHER 0  /* not its answer: forward it */
#define MCPP_REPLAY_RESULT 1 /* its result: swallow it */
#define MCPP_REPLAY_ERROR 2  /* an error answer: swallow it; the attempt
                                failed */
int mcpp_handshake_answer(const mcpp_handshake *handshake, const char *frame,
                          size_t len);

#ifdef __cplusplus
}
#endif

#endif /* MCPPING_REPLAY_H */
