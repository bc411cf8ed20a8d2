/* Internal driver hooks the runtime needs beyond the public API. */
#ifndef MCPP_DRIVER_H
#define MCPP_DRIVER_H

#include "mcpping.h"

/* In a forked child: closes the connection's pipe fds without touching the
 * (parent's) loop or process, so the child holds no server pipe open. */
void mcpp__conn_after_fork(mcpp_conn *conn);

/* uv_loop_close()'s result when the last runtime was freed (tests). */
extern int mcpp__runtime_loop_close_rc;

#endif
