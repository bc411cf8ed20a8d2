/* mcpping host mode: corking the host's inline commands. Included by
 * mcpping.h (after the host-mode section). */
#ifndef MCPPING_HOST_CORK_H
#define MCPPING_HOST_CORK_H

#ifdef __cplusplus
extern "C" {
#endif

/* Host thread, host mode. With on = 1, commands the host issues from now
 * on (a send, a ping) still run at once, but their frames wait in each
 * connection's cork instead of one write each; on = 0 writes everything
 * corked (one write per connection) and ends the cork. A host corks
 * around a turn in which its code may issue many commands (the handlers
 * and promise reactions of one drained batch), so 64 pipelined pings
 * answered in one read go out again in one write. If the host then stalls
 * before uncorking, the watchdog counts the corked frames as work waiting
 * and writes them after stall_ms. Call mcpp_runtime_host_rearm after
 * uncorking. Returns 0 or MCPP_ERR_INVALID_ARGUMENT (not the host
 * thread). */
int mcpp_runtime_host_cork(mcpp_runtime *rt, int on);

#ifdef __cplusplus
}
#endif

#endif /* MCPPING_HOST_CORK_H */
