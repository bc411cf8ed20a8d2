/* mcpping errors: every MCPP_ERR_* code, its name and its sentence, from one list (MCPP_ERRNO_MAP).
 * Included by mcpping.h; compiles alone too. */
#ifndef MCPPING_ERRORS_H
#define MCPPING_ERRORS_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* ---------------------------------------------------------------- errors */

/* Every error, once: XX(NAME, code, sentence). The enum below, mcpp_strerror
 * and mcpp_errname are made from it (as uv-errno.h does), and the bindings
 * read the names and codes from the library rather than copying them. */
#define MCPP_ERRNO_MAP(XX)                                                    \
  XX(INVALID_ARGUMENT, -1, "An argument was NULL, zero or out of range.")    \
  XX(NOMEM, -2, "Out of memory.")                                             \
  XX(INTERVAL_TOO_SHORT, -3,                                                  \
     "The keepalive interval is below the minimum interval.")                 \
  XX(UNSUPPORTED, -4,                                                         \
     "The peer or the protocol version does not support ping.")              \
  XX(TOO_MANY_PINGS, -5, "Too many manual pings are outstanding.")           \
  XX(CLOSED, -6, "The connection is closing or closed.")                     \
  XX(FRAME_TOO_LARGE, -7, "A line exceeded the maximum line length.")        \
  XX(FRAME_NEWLINE, -8, "An outbound frame contains a newline.")             \
  XX(SPAWN, -9, "The server command could not start.")                       \
  XX(FLOODED, -10, "The peer floods pings and does not read the answers.")   \
  XX(IO, -11, "A read or write on the pipes failed.")                        \
  XX(STALE, -12, "The connection was closed because the peer went stale.")   \
  XX(NOT_FOUND, -13, "No such connection or ping.")                          \
  XX(THREAD, -14, "The I/O thread could not start.")                         \
  XX(WOULD_BLOCK, -15,                                                        \
     "The connection's outbound queue is full; retry once it drains.")       \
  XX(NOT_HTTP, -16, "The server's answer is not HTTP/1.1.")

/* INVALID_ARGUMENT: a NULL, a zero, an out-of-range value. UNSUPPORTED: the
 * peer does not support ping, or the protocol version has no ping. FLOODED:
 * the peer floods pings and never reads our answers (nghttp2's FLOODED).
 * WOULD_BLOCK: the outbound queue is full (max_pending_bytes): retry after
 * a WRITABLE item. NOT_HTTP: bytes no HTTP server sends (http_response.h). */
typedef enum mcpp_errno {
#define MCPP__ERR_ENUM(name, code, text) MCPP_ERR_##name = (code),
  MCPP_ERRNO_MAP(MCPP__ERR_ENUM)
#undef MCPP__ERR_ENUM
/* One past the last code, not an error: counted from the list (its codes
 * run -1, -2, ... without a gap; test_errors.c checks), so adding an error
 * is one line of the map. */
#define MCPP__ERR_ONE(name, code, text) +1
  MCPP_ERR_LAST_ = -(1 MCPP_ERRNO_MAP(MCPP__ERR_ONE))
#undef MCPP__ERR_ONE
} mcpp_errno;

/* Returns a static, human-readable English sentence for an MCPP_ERR_* code. */
const char *mcpp_strerror(int err);

/* Returns the symbolic name ("MCPP_ERR_CLOSED") of an MCPP_ERR_* code. */
const char *mcpp_errname(int err);

#ifdef __cplusplus
}
#endif

#endif /* MCPPING_ERRORS_H */
