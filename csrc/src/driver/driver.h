/* Internal driver hooks the runtime needs beyond the public API. */
#ifndef MCPP_DRIVER_H
#define MCPP_DRIVER_H

#include <stdatomic.h>
#include <stddef.h>

#include "mcpping.h"

/* In a forked child: closes the connection's pipe fds without touching the
 * (parent's) loop or process, so the child holds no server pipe open. */
void mcpp__conn_after_fork(mcpp_conn *conn); /* closes its fds, frees it */

/* The libuv error code (a negative errno on Unix: UV_ENOENT, UV_EACCES) of
 * the calling thread's last MCPP_ERR_SPAWN when the OS refused to start the
 * program, else 0. Valid until the thread's next spawn. */
int mcpp__conn_spawn_os_error(void);

/* Sets a function called after every outermost engine call on the
 * connection returns (a read, a timer run, a send, a ping) and whenever
 * its write queue shrinks, so the runtime can refresh what other threads
 * read. Never called from inside the engine; NULL removes it. */
void mcpp__conn_set_progress(mcpp_conn *conn,
                             void (*fn)(mcpp_conn *conn, void *user_data));

/* Bytes written by the application or the engine that the server has not
 * taken yet (corked or queued in libuv). */
size_t mcpp__conn_queued_bytes(const mcpp_conn *conn);

/* Bytes the server wrote after its last newline, waiting for one; *first
 * (if not NULL) points at them, valid until the next read. */
size_t mcpp__conn_unended(const mcpp_conn *conn, const char **first);

/* Stops (0) or resumes (1) reading the server's stdout and stderr, and
 * tells the engine, so that the silence while stopped is not the peer's
 * fault. A server's exit while stopped waits for reading to resume, so
 * nothing it wrote is lost. Not from inside an engine callback. */
void mcpp__conn_set_reading(mcpp_conn *conn, int reading);
/* Host-owned reading (runtime host mode). While on, libuv does not read
 * the server's stdout: the runtime's host watches mcpp__conn_host_fd and
 * calls mcpp__conn_host_read when it is readable, into the same line
 * buffer, so a hand-off back (off: uv reads again) loses nothing. */
void mcpp__conn_set_host_reads(mcpp_conn *conn, int on);
/* Called (on the loop's owner) whenever mcpp__conn_host_fd may have
 * changed: reading paused or resumed, EOF, close, host reads on or off. */
void mcpp__conn_set_read_hook(mcpp_conn *conn,
                              void (*fn)(mcpp_conn *conn, void *user_data));
/* The stdout descriptor the host must watch now (host reads on, open, not
 * paused, not at EOF), else -1. */
int mcpp__conn_host_fd(const mcpp_conn *conn);
/* Reads what stdout holds now and feeds it, as a uv read would (EOF and
 * errors take the same path). Returns 1 if it read, 0 if nothing was due. */
int mcpp__conn_host_read(mcpp_conn *conn);
/* Writes the frames corked in this turn of the loop now rather than at its
 * next prepare phase: for a loop run a non-blocking turn at a time
 * (runtime host mode), whose prepare phase may be over or never come. */
void mcpp__conn_flush(mcpp_conn *conn);
/* Whether frames wait in the cork for the next prepare phase. */
int mcpp__conn_corked(const mcpp_conn *conn);

/* Delivers the server's lines exactly as they came (see mcpp__lines):
 * a proxy forwards a trailing \r and empty lines too. */
void mcpp__conn_set_exact_lines(mcpp_conn *conn);

/* Closes the server's stdin once every byte queued for it is written
 * (the proxy's client closed its input). Sends after it are dropped, as
 * writes to a server that closed its stdin are. */
void mcpp__conn_end_input(mcpp_conn *conn);
/* Reconnect: called at the start of every close the application did not
 * ask for (err != 0), before the engine ends. Returns 1 to have the server
 * replaced: it sets *attempt and *delay_ms, and the engine then fails its
 * in-flight requests and ends with RECONNECTING instead of CLOSED (the
 * close itself goes on: kill, reap, on_close). Returns 0 for a plain
 * close, with a reason of its own in why (cap bytes) if it wrote one (a
 * give-up); the in-flight requests are failed as in doubt all the same. */
typedef int (*mcpp__reconnect_hook)(mcpp_conn *conn, int err,
                                    const char *reason, uint32_t *attempt,
                                    uint32_t *delay_ms, char *why, size_t cap,
                                    void *user_data);
void mcpp__conn_set_reconnect_hook(mcpp_conn *conn, mcpp__reconnect_hook fn);

/* Closes the connection with err (not 0) and reason, from anywhere,
 * engine callbacks included (the close then starts when the outermost
 * engine call returns). */
void mcpp__conn_fail(mcpp_conn *conn, int err, const char *reason);

/* The engine makes records for on_record only while *on is non-zero (read
 * before every engine call; made always until this is called): a host
 * that would drop them has none formatted. */
void mcpp__conn_follow_records(mcpp_conn *conn, const _Atomic int *on);

#endif
