/*
 * The engine as its drivers see it: when it next ends something, the
 * error a request mcpping ended gets, and its record callback. Apart from
 * internal.h so that internal.h (alloc, strings, settings) stays below
 * engine.h: these are defined by files that include engine.h. Internal.
 */
#ifndef MCPP_DEADLINES_H
#define MCPP_DEADLINES_H

#include <stddef.h>
#include <stdint.h>

#include "mcpping.h"

/* requests.c: the "code,message" of the JSON-RPC error the application
 * gets for a request mcpping ended: timed out after timeout_ms (-32001), or
 * abandoned by the application (-32800, timeout_ms unused). One sentence
 * each, for the engine and for the runtime's held requests alike. Returns
 * buf. */
char *mcpp__request_error(char *buf, size_t cap, int timed_out,
                          uint32_t timeout_ms);

/* keepalive.c: the engine's next deadline that ends something (a ping,
 * probe, request or process check coming due), UINT64_MAX if none: the
 * next deadline without the keepalive send. A driver's wake-up for a send
 * alone need not read ahead, and can wait for a coarser grid. */
uint64_t mcpp__engine_next_expiry(const mcpp_engine *e);

/* keepalive.c: when the next keepalive ping or probe is due to be sent
 * (UINT64_MAX: none); mcpp_engine_next_deadline is the earlier of this and
 * the next expiry. */
uint64_t mcpp__engine_next_send(const mcpp_engine *e);

/* keepalive.c: when the next keepalive would be due if the keepalive ping
 * or probe in flight were answered at now (UINT64_MAX: none in flight). An
 * answer almost always comes long before the expiry, so a driver that arms
 * its timer here instead finds it already set for the next send when the
 * answer comes, with no timer restart per round. */
uint64_t mcpp__engine_send_if_answered(const mcpp_engine *e, uint64_t now);

/* engine.c: replaces the engine's on_record (NULL: it formats no records at all),
 * for a driver whose host takes none (mcpp_runtime_set_records). */
void mcpp__engine_set_record_cb(mcpp_engine *e,
                                void (*fn)(mcpp_engine *e, const char *json,
                                           size_t len, void *user_data));

#endif
