/* mcpping the runtime (mcpp_runtime_*): one native I/O thread serving many connections, and host mode.
 * Included by mcpping.h; compiles alone too. */
#ifndef MCPPING_RUNTIME_H
#define MCPPING_RUNTIME_H

#include <stddef.h>
#include <stdint.h>
#include "mcpping/driver.h"
#include "mcpping/reconnect.h"

#ifdef __cplusplus
extern "C" {
#endif

/* --------------------------------------------------------------- runtime */

/* One I/O thread with its own uv loop serving many connections, driven from
 * any thread. Results are queued as items and handed over in batches: the
 * runtime calls `notify` (from the I/O thread) once when items are waiting,
 * and not again until the host has called mcpp_runtime_drain from its own
 * thread. It calls it once the I/O thread's callbacks of that turn of its
 * loop have run, so what one engine call queues (an answered ping's event
 * and record) wakes the host once. A PING or PROBE event (we sent one) never wakes the host by
 * itself: it is delivered with the next batch, at the latest with its
 * outcome (or at once if the connection reached max_pending_bytes, so the
 * host can free what holds it back). */
typedef struct mcpp_runtime mcpp_runtime;

typedef enum mcpp_item_type {
  MCPP_ITEM_MESSAGE = 0, /* data: an inbound application frame */
  MCPP_ITEM_EVENT,       /* event: an engine event */
  MCPP_ITEM_RECORD,      /* data: a governance record (JSON, no newline) */
  MCPP_ITEM_STDERR,      /* data: bytes the server wrote to stderr */
  MCPP_ITEM_CLOSED,      /* close: the connection is gone; last item */
  MCPP_ITEM_PING_FAILED, /* ping_token, error: a queued ping could not start */
  MCPP_ITEM_WRITABLE     /* sends refused with MCPP_ERR_WOULD_BLOCK may
                            be retried now */
} mcpp_item_type;

/* One thing the runtime queued for the host; opaque, so it can grow.
 * mcpp_runtime_drain returns a list of them, read with the accessors below
 * (none takes NULL); what they return points into the item and lives until
 * mcpp_runtime_items_free. */
typedef struct mcpp_item mcpp_item;

/* The next item of a drained list, or NULL after the last. */
mcpp_item *mcpp_item_next(const mcpp_item *item);
mcpp_item_type mcpp_item_get_type(const mcpp_item *item);
uint64_t mcpp_item_get_conn_id(const mcpp_item *item);
/* As given to mcpp_runtime_spawn. */
void *mcpp_item_get_conn_user_data(const mcpp_item *item);
/* MESSAGE, RECORD, STDERR: the bytes, NUL-terminated after len (the NUL
 * is not counted). Never NULL. */
const char *mcpp_item_get_data(const mcpp_item *item);
size_t mcpp_item_get_len(const mcpp_item *item);
/* EVENT: the event (its strings point into the item), else NULL. */
const mcpp_event *mcpp_item_get_event(const mcpp_item *item);
/* EVENT (the outcome of a manual ping) and PING_FAILED: the token given to
 * mcpp_runtime_ping; else 0. */
uint64_t mcpp_item_get_ping_token(const mcpp_item *item);
/* PING_FAILED: why the queued ping could not start (MCPP_ERR_*); else 0. */
int mcpp_item_get_error(const mcpp_item *item);
/* CLOSED: how the connection ended (reason points into the item), else
 * NULL. */
const mcpp_close_info *mcpp_item_get_close(const mcpp_item *item);

#define MCPP_RUNTIME_OPTIONS_V1 1
typedef struct mcpp_runtime_options {
  int version; /* 0 or MCPP_RUNTIME_OPTIONS_V1 (see mcpping/alloc.h) */
  /* Called on the I/O thread when the item queue turns non-empty (at the
   * end of that turn of its loop). Must not
   * call back into the runtime; it should only wake the host. */
  void (*notify)(void *user_data);
  void *user_data;
  const mcpp_allocator *alloc; /* NULL: malloc */
} mcpp_runtime_options;

/* Creates a runtime. The thread starts lazily, on the first spawn.
 * Returns 0, MCPP_ERR_NOMEM or MCPP_ERR_INVALID_ARGUMENT. */
int mcpp_runtime_new(mcpp_runtime **out, const mcpp_runtime_options *options);

/* Closes every connection (killing and reaping their servers), stops and
 * joins the thread, frees everything including undrained items. Must not be
 * called from the I/O thread. NULL is a no-op. */
void mcpp_runtime_free(mcpp_runtime *rt);

/* Spawns a server on the I/O thread; waits until the spawn succeeded or
 * failed. Returns 0 and sets *conn_id, MCPP_ERR_SPAWN (with a one-line
 * message in errbuf if given), or the errors of mcpp_conn_spawn. All inputs
 * are copied. on_stderr delivery is MCPP_STDERR_CALLBACK -> STDERR items. */
int mcpp_runtime_spawn(mcpp_runtime *rt, const mcpp_settings *settings,
                       const mcpp_spawn_options *options,
                       void *conn_user_data, uint64_t *conn_id,
                       char *errbuf, size_t errbuf_len);

/* After an mcpp_runtime_spawn that returned MCPP_ERR_SPAWN on this thread:
 * the libuv error code of the OS's refusal (a negative errno on Unix:
 * UV_ENOENT, no such program; UV_EACCES, not executable), so a binding can
 * raise its host's own error for it (FileNotFoundError, Node's 'ENOENT');
 * 0 after any other outcome. */
int mcpp_runtime_spawn_os_error(void);

/* A connection's max_pending_bytes when its settings give 0: what it holds
 * for the host, and what it queues for the server, at most. */
#define MCPP_DEFAULT_MAX_PENDING_BYTES (16u * 1024 * 1024)

/* Queues an application frame (copied). Returns 0, MCPP_ERR_FRAME_NEWLINE,
 * MCPP_ERR_NOT_FOUND (closed or unknown connection), MCPP_ERR_NOMEM, or
 * MCPP_ERR_WOULD_BLOCK: the connection's outbound bytes (queued here and
 * not yet taken by the server) would pass settings.max_pending_bytes;
 * nothing was queued, retry after the connection's next WRITABLE item.
 * A frame is refused only while others are queued, so one larger than
 * the cap still goes out, alone. */
int mcpp_runtime_send(mcpp_runtime *rt, uint64_t conn_id, const char *frame,
                      size_t len);

/* As mcpp_runtime_send, with this request's timeout (see
 * mcpp_engine_observe_outbound_timed: 1..MCPP_MAX_MS, MCPP_TIMEOUT_DEFAULT
 * or MCPP_TIMEOUT_NONE; MCPP_ERR_INVALID_ARGUMENT beyond). On expiry the
 * engine sends notifications/cancelled and the host gets a MESSAGE item
 * with the JSON-RPC error (-32001) and a REQUEST_TIMEOUT event. */
int mcpp_runtime_send_timed(mcpp_runtime *rt, uint64_t conn_id,
                            const char *frame, size_t len,
                            uint32_t timeout_ms);

/* Queues the abandonment of an in-flight application request (raw id JSON,
 * copied): see mcpp_engine_cancel_request. The host gets a MESSAGE item
 * with the JSON-RPC error (-32800) and a REQUEST_CANCELLED event, or
 * nothing if the answer came first. Returns 0, MCPP_ERR_NOT_FOUND (no
 * such connection), MCPP_ERR_INVALID_ARGUMENT (no id) or MCPP_ERR_NOMEM. */
int mcpp_runtime_cancel_request(mcpp_runtime *rt, uint64_t conn_id,
                                const char *id, size_t id_len);

/* Queues a manual ping. Its outcome arrives as an EVENT item whose
 * ping_token is `token`, or as a PING_FAILED item. Returns 0,
 * MCPP_ERR_NOT_FOUND or MCPP_ERR_NOMEM. */
int mcpp_runtime_ping(mcpp_runtime *rt, uint64_t conn_id, uint32_t timeout_ms,
                      uint64_t token);

/* Queues the cancellation of the manual ping queued with `token` (an
 * aborted wait): the engine stops timing it and no outcome item follows,
 * unless the outcome was queued already. Returns 0, MCPP_ERR_NOT_FOUND or
 * MCPP_ERR_NOMEM. */
int mcpp_runtime_cancel_ping(mcpp_runtime *rt, uint64_t conn_id,
                             uint64_t token);

/* Returns the server's process id (also its process group id), or
 * MCPP_ERR_NOT_FOUND once the connection is closed. With reconnect it
 * changes with every new server (and is the last one's while waiting to
 * spawn the next). Thread-safe. */
int mcpp_runtime_pid(mcpp_runtime *rt, uint64_t conn_id);

/* Queues a close; a CLOSED item follows. Returns 0 or MCPP_ERR_NOT_FOUND. */
int mcpp_runtime_close(mcpp_runtime *rt, uint64_t conn_id);

/* Copies the engine's info (strings into the caller's buffers is avoided:
 * protocol_version, peer_name and probe_method are set to NULL here; the
 * first two arrive in the INITIALIZED event). Live: the I/O thread
 * refreshes it after every engine call (reads, sends, timer runs), and
 * *healthy is mcpp_engine_healthy as of the call, computed from the
 * engine's healthy_until, so a request passing its limit reads unhealthy
 * at once. Returns 0 or MCPP_ERR_NOT_FOUND. Thread-safe. */
int mcpp_runtime_info_versioned(mcpp_runtime *rt, uint64_t conn_id,
                                int info_version, mcpp_engine_info *info,
                                int *healthy);
/* *info is a struct of MCPP_ENGINE_INFO_VERSION; an unknown version is
 * MCPP_ERR_INVALID_ARGUMENT. */
#define mcpp_runtime_info(rt, conn_id, info, healthy)                         \
  mcpp_runtime_info_versioned((rt), (conn_id), MCPP_ENGINE_INFO_VERSION,      \
                              (info), (healthy))

/* Copies what the engine learned of the session from the handshake that
 * passed through (the negotiated protocol version, and the peer's name:
 * serverInfo's, else settings.peer_name), each "" while unknown, truncated
 * to fit and NUL-terminated; a NULL buffer or 0 cap skips it. Up to date
 * once the INITIALIZED event (or UNSUPPORTED, on a session without ping)
 * is queued. Returns 0 or MCPP_ERR_NOT_FOUND. Thread-safe. */
int mcpp_runtime_session(mcpp_runtime *rt, uint64_t conn_id,
                         char *protocol_version, size_t version_cap,
                         char *peer_name, size_t name_cap);

/* How many lines the server wrote that are not JSON-RPC (*count, if not
 * NULL), and into out[0..cap) the sentence that says so and shows the
 * first one, and the bytes after its last newline if some wait for one
 * (mcpp_unreadable_text), "" if neither: what a handshake that times out
 * adds to its error. Up to date once the item that follows such a line
 * (its MESSAGE) is queued, and after every read. Returns 0 or
 * MCPP_ERR_NOT_FOUND. Thread-safe. */
int mcpp_runtime_unreadable(mcpp_runtime *rt, uint64_t conn_id,
                            uint64_t *count, char *out, size_t cap);

/* Takes every queued item, oldest first, as a linked list (NULL if none).
 * The caller frees it with mcpp_runtime_items_free. Any thread.
 * Backpressure, per connection: every item (MESSAGE, STDERR, EVENT,
 * RECORD, PING_FAILED, WRITABLE; its whole size, struct and data) counts
 * against its connection's settings.max_pending_bytes from the moment it
 * is queued until the host frees it (or takes its charge, below); a drain
 * alone gives nothing back. Once a connection's count reaches the cap the
 * runtime stops reading its server, stdout and stderr both (the engine is
 * told, so the silence convicts nobody, and keepalive waits); once frees
 * bring it below half the cap, reading resumes. Nothing is dropped: the
 * server blocks on its full pipes meanwhile, and the pings it sent before
 * are still answered. The count can pass the cap by what one read brings
 * (64 KiB of stdout, or of stderr, and the items made from it). Other
 * connections are not affected: each counts only its own items. */
mcpp_item *mcpp_runtime_drain(mcpp_runtime *rt);
/* Frees a drained list and gives back what its items count against their
 * connections. */
void mcpp_runtime_items_free(mcpp_runtime *rt, mcpp_item *items);

/* For a host that copies items out and frees them before it is done with
 * the copies (one drain serving several event loops, each connection's
 * items handed to its own loop): takes the bytes the item counts against
 * its connection off the item and returns them (0 the second time), so
 * that mcpp_runtime_items_free no longer gives them back; the host gives
 * them back with mcpp_runtime_release once the connection's own loop is
 * done with them. */
size_t mcpp_item_take_charge(mcpp_item *item);
/* Gives back `bytes` taken with mcpp_item_take_charge from items of
 * conn_id; reading resumes as after a free. Returns 0, or
 * MCPP_ERR_NOT_FOUND if the connection is gone (then nothing counts any
 * more). Any thread. */
int mcpp_runtime_release(mcpp_runtime *rt, uint64_t conn_id, size_t bytes);

/* Whether the connection queues RECORD items (1, the default) or drops
 * its governance records (0): a host with no sink for them spares their
 * copies, its wake-ups and its own handling. Takes effect for what the
 * commands queued after this call cause, and may be turned on and off at
 * any time (a sink or listener added later). Returns 0 or
 * MCPP_ERR_NOT_FOUND. Any thread. */
int mcpp_runtime_set_records(mcpp_runtime *rt, uint64_t conn_id, int enabled);

/* ------------------------------------------------------- host mode
 *
 * By default the runtime's own thread runs its loop, and every command and
 * every batch of items crosses between that thread and the host's (thread
 * mode). In host mode the host's event loop runs the runtime's loop
 * instead, on the host's thread, so a ping costs no thread hop: the host
 * watches one descriptor (mcpp_runtime_host_attach's *fd) for readability
 * and calls mcpp_runtime_host_run when it is readable or when the time it
 * was given passes; commands issued on the host thread run at once. The
 * runtime's thread becomes a watchdog: every few ms it checks whether work
 * is waiting (the descriptor is readable, a timer is due) that the host
 * has left alone for stall_ms; then it runs the loop itself (answering the
 * server's pings, keepalive, backpressure, items and notify as in thread
 * mode) until the host calls in again. One loop, one owner at a time
 * (a mutex held for a turn, never while waiting; user code and notify
 * never run under it), one item queue: nothing is lost or reordered
 * across a hand-off. With MCPP_HOST_OPTIONS_V2's watch_fd the host also
 * watches each connection's stdout and reads it itself
 * (mcpp_runtime_host_read), so an answer costs it no turn of our loop;
 * while the watchdog has taken over, our loop reads them again. */

#define MCPP_HOST_OPTIONS_V1 1
#define MCPP_HOST_OPTIONS_V2 2
typedef struct mcpp_host_options {
  int version; /* 0, MCPP_HOST_OPTIONS_V1 or _V2 (see mcpping/alloc.h) */
  /* How long work may wait while the host does not turn before the
   * watchdog takes over, in ms; 0: MCPP_HOST_STALL_MS. 1..10000. */
  uint32_t stall_ms;
  /* V2. If set (Linux), the host also owns every connection's stdout:
   * watch_fd(watch_ctx, fd, 1) asks it to watch fd for readability and
   * call mcpp_runtime_host_read(fd) when it is readable, watch_fd(.., 0)
   * to stop (the runtime closes fd right after). Called on the host
   * thread only, from inside the runtime's host calls, never under a
   * lock; fd is the runtime's own duplicate, open until that 0 call, so
   * its number is never reused behind the host's poller. A connection is
   * watched while it is open, not paused by backpressure and not at EOF;
   * a reconnect's new server gets a new fd. */
  void (*watch_fd)(void *watch_ctx, int fd, int on);
  void *watch_ctx;
} mcpp_host_options;

#define MCPP_HOST_STALL_MS 20u

/* Switches to host mode, driven from the calling thread (the host
 * thread), and sets *fd to the descriptor to watch for readability (the
 * runtime's, valid until detach or free). Starts the runtime's thread if
 * needed. The host keeps calling mcpp_runtime_drain after notify, which
 * now comes from the watchdog only; in host mode its handler also calls
 * mcpp_runtime_host_run. options may be NULL. Returns 0,
 * MCPP_ERR_INVALID_ARGUMENT, MCPP_ERR_THREAD, MCPP_ERR_CLOSED (being freed),
 * or MCPP_ERR_UNSUPPORTED when host mode is not safe here or was turned off
 * (the runtime stays in thread mode; mcpp_runtime_mode says why): SIGPIPE
 * has its default action in the calling thread (a write to a server that
 * closed its stdin would kill the process), or MCPPING_HOST_MODE=0 is set
 * in the environment. Attaching again from the host thread is a no-op;
 * from another thread while attached, MCPP_ERR_INVALID_ARGUMENT. */
int mcpp_runtime_host_attach(mcpp_runtime *rt, const mcpp_host_options *options,
                             int *fd);

/* Host thread, host mode: runs one turn of the runtime's loop without
 * blocking (reads, timers, the commands other threads queued), then the
 * host drains. Sets *wake_ms to the time after which the host must call
 * again even if the descriptor stays quiet (0: at once), or -1 if only the
 * descriptor need wake it. If the watchdog is in a turn just now, waits
 * for its end (it never waits for anything while in one). Returns 0, or
 * MCPP_ERR_INVALID_ARGUMENT
 * (not the host thread, not in host mode: nothing ran, *wake_ms -1). */
int mcpp_runtime_host_run(mcpp_runtime *rt, int64_t *wake_ms);

/* Host thread, host mode, with watch_fd (MCPP_HOST_OPTIONS_V2): fd (one
 * watch_fd gave) is readable. Reads it into its connection's line buffer
 * and feeds the engine (answers go out at once, items are queued), runs
 * no loop turn and waits for nothing, then the host drains as after
 * mcpp_runtime_host_run; *wake_ms as there. A fd no longer watched reads
 * nothing (its watch_fd(.., 0) comes from this call). Returns 0 or
 * MCPP_ERR_INVALID_ARGUMENT (not the host thread, not in host mode). */
int mcpp_runtime_host_read(mcpp_runtime *rt, int fd, int64_t *wake_ms);

/* Host thread, host mode, after any other call of this runtime on the host
 * thread (a send, ping, close...): the ms after which the host must call
 * mcpp_runtime_host_run, if that is sooner than every time it was given
 * since its last run (the command set an earlier timer, or queued items);
 * else -1 (what the host has armed stands). Cheap: no lock, no syscall. */
int64_t mcpp_runtime_host_rearm(mcpp_runtime *rt);

/* Back to thread mode (the runtime's thread runs the loop again, once a
 * host turn in progress has ended); any thread. The host stops watching
 * the descriptor. From the host thread, watch_fd(fd, 0) is called for
 * every fd still watched; from another, the host must stop watching them
 * itself before mcpp_runtime_free closes them. Items still waiting are announced with notify. Returns 0
 * or MCPP_ERR_INVALID_ARGUMENT (not in host mode). */
int mcpp_runtime_host_detach(mcpp_runtime *rt);

typedef enum mcpp_mode {
  MCPP_MODE_THREAD = 0, /* the runtime's thread runs the loop */
  MCPP_MODE_HOST = 1    /* the host's loop runs it; the thread watches */
} mcpp_mode;

/* The runtime's mode. If why is given, copies one line saying why
 * (truncated to fit): "the host's event loop runs it", "not attached to
 * the host's event loop", or why host mode was refused. Thread-safe. */
mcpp_mode mcpp_runtime_mode(mcpp_runtime *rt, char *why,
                             size_t why_cap);

/* How often the watchdog took the loop over from a stalled host, and how
 * many host turns it has seen; for tests and benchmarks. Thread-safe. */
typedef struct mcpp_host_stats {
  uint64_t takeovers;  /* the watchdog ran the loop for a stalled host */
  uint64_t host_turns; /* mcpp_runtime_host_run calls and inline commands */
  uint64_t inline_commands; /* commands run on the host thread directly */
} mcpp_host_stats;
/* Not in mcpp_host_stats (its size is fixed): mcpp_runtime_host_read
 * calls that read a connection's fd. Thread-safe. */
uint64_t mcpp_runtime_host_reads(mcpp_runtime *rt);
void mcpp_runtime_host_stats(mcpp_runtime *rt, mcpp_host_stats *stats);

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

/* Call in a forked child (pthread_atfork) before using the runtime there:
 * the thread did not survive the fork, so the child's runtime forgets its
 * connections (without touching the parent's processes) and starts a fresh
 * thread lazily. */
void mcpp_runtime_after_fork_child(mcpp_runtime *rt);

/* Sets the retry budget every reconnecting connection of this runtime
 * shares (see mcpp_retry_budget; the default is MCPP_RETRY_BUDGET_BURST
 * at once, then MCPP_RETRY_BUDGET_PER_SECOND). Slots taken already stay
 * taken. Returns 0 or MCPP_ERR_INVALID_ARGUMENT. Thread-safe. */
int mcpp_runtime_set_retry_budget(mcpp_runtime *rt, uint32_t burst,
                                  double per_second);

#ifdef __cplusplus
}
#endif

#endif /* MCPPING_RUNTIME_H */
