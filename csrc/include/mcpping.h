/*
 * mcpping: the liveness layer for Model Context Protocol connections.
 *
 * This is the one public header. It has three layers:
 *
 *   1. The engine (mcpp_engine_*): sans-I/O. It reads no clock, does no I/O
 *      and allocates through an injectable allocator. Every call takes `now`,
 *      a monotonic timestamp in microseconds chosen by the caller. It tells the
 *      caller what to write (callbacks), what happened (events and governance
 *      records) and when it next wants to be woken (next_deadline/on_timer).
 *   2. The driver (mcpp_conn_*): binds one engine to a stdio MCP server that it
 *      spawns on a uv_loop_t it is given. Single-threaded: call it only from
 *      the loop's thread.
 *   3. The runtime (mcpp_runtime_*): one native I/O thread with its own loop,
 *      serving many connections, driven from any thread. The Python and Node
 *      bindings use this layer.
 *
 * Conventions: functions that can fail return 0 or a negative MCPP_ERR_*
 * code (see mcpp_strerror()). An error return means no callback fires for
 * that call. Strings passed in are copied unless a comment says otherwise;
 * pointers passed to callbacks are valid only during the callback.
 */
#ifndef MCPPING_H
#define MCPPING_H

#include <stddef.h>
#include <stdint.h>

#define MCPP_VERSION "0.1.0"

/* One sub-header per part, in layer order (as uv.h includes uv/unix.h); each
 * compiles alone too (scripts/check_layers.py). */
#include "mcpping/errors.h"
#include "mcpping/alloc.h"
/* The settings and their table: mcpp_settings, mcpp_settings_table. */
#include "mcpping/settings.h"
#include "mcpping/events.h"
#include "mcpping/engine.h"
#include "mcpping/handshake.h"
#include "mcpping/sse.h"
#include "mcpping/http_response.h"
/* Answer kinds: mcpp_item_get_answer_kind, mcpp_engine_delivery_kind. */
#include "mcpping/answer.h"
/* Process-state names: mcpp_process_state_name. */
#include "mcpping/process.h"
#include "mcpping/driver.h"
#include "mcpping/reconnect.h"
#include "mcpping/runtime.h"
#include "mcpping/runtime_rtt.h"
#include "mcpping/wrap.h"
#include "mcpping/replay.h"
#include "mcpping/rules.h"
#include "mcpping/http_session.h"
#include "mcpping/metrics.h"
#include "mcpping/metrics_tally.h"
#include "mcpping/app.h"
#include "mcpping/config.h"
#include "mcpping/config_run.h"
#include "mcpping/watch.h"

#endif /* MCPPING_H */
