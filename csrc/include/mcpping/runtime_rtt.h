/* mcpping the runtime's ping figures kept in C (mcpp_runtime_set_ping_events,
 * mcpp_runtime_feed_rtt_stats): a keepalive pong nobody listens to is
 * counted where it happens and never wakes the host. Included by
 * mcpping.h; compiles alone too. */
#ifndef MCPPING_RUNTIME_RTT_H
#define MCPPING_RUNTIME_RTT_H

#include <stdint.h>
#include "mcpping/rules.h"
#include "mcpping/runtime.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Whether the connection queues the EVENT items of its pings (1, the
 * default) or keeps them in C (0): then no PING event is queued (keepalive
 * or manual) and no PONG event of a keepalive ping, so an idle connection
 * whose host has no listener for them wakes nobody. The outcome of a
 * manual ping (its token's PONG, TIMEOUT...) and every other event are
 * queued as before, in order. A host turning this off feeds its RTT
 * statistics with mcpp_runtime_feed_rtt_stats. Takes effect for what the
 * commands queued after this call cause; may be turned on and off at any
 * time (a listener added later). Returns 0 or MCPP_ERR_NOT_FOUND. Any
 * thread. */
int mcpp_runtime_set_ping_events(mcpp_runtime *rt, uint64_t conn_id,
                                 int enabled);

/* The runtime feeds `stats` every ping event of the connection as it
 * happens, queued or not (mcpp_rtt_stats_observe with us_per_unit), on the
 * thread running its loop, until the connection's CLOSED item is queued
 * (or this is called again; NULL stops it). The host keeps stats alive
 * until then and touches it only between mcpp_runtime_rtt_lock and
 * mcpp_runtime_rtt_unlock, and must not observe the events it drains into
 * it again. Returns 0, MCPP_ERR_NOT_FOUND or MCPP_ERR_INVALID_ARGUMENT.
 * Any thread. */
int mcpp_runtime_feed_rtt_stats(mcpp_runtime *rt, uint64_t conn_id,
                                mcpp_rtt_stats *stats, double us_per_unit);

/* The one lock (process-wide, never held while calling out) around every
 * use of a mcpp_rtt_stats a runtime feeds. */
void mcpp_runtime_rtt_lock(void);
void mcpp_runtime_rtt_unlock(void);

#ifdef __cplusplus
}
#endif

#endif /* MCPPING_RUNTIME_RTT_H */
