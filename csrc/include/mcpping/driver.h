/* mcpping the driver (mcpp_conn_*): one engine bound to a stdio server it spawns on a uv_loop_t it is given.
 * Included by mcpping.h; compiles alone too. */
#ifndef MCPPING_DRIVER_H
#define MCPPING_DRIVER_H

#include <stddef.h>
#include <stdint.h>
#include "mcpping/engine.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ------------------------------------------------------------------ driver */

/* Forward declarations so this header does not require uv.h unless the
 * driver is used. */
typedef struct uv_loop_s uv_loop_t;
typedef struct mcpp_conn mcpp_conn;

typedef enum mcpp_stderr_mode {
  MCPP_STDERR_INHERIT = 0,  /* the server writes to our stderr */
  MCPP_STDERR_CALLBACK = 1, /* delivered to on_stderr */
  MCPP_STDERR_IGNORE = 2    /* /dev/null */
} mcpp_stderr_mode;

#define MCPP_SPAWN_OPTIONS_V1 1
typedef struct mcpp_spawn_options {
  int version;        /* 0 or MCPP_SPAWN_OPTIONS_V1 (see mcpping/alloc.h) */
  const char *file;   /* program, looked up in PATH */
  char **args;        /* argv, NULL-terminated; args[0] is the program */
  char **env;         /* NULL: inherit */
  const char *cwd;    /* NULL: inherit */
  mcpp_stderr_mode stderr_mode;
  /* SIGTERM-to-SIGKILL grace on close. 0 means the default,
   * MCPP_DEFAULT_KILL_GRACE_MS (so a zeroed struct is the default); MCPP_KILL_GRACE_NONE: no grace, SIGKILL
   * at once; else 1..MCPP_MAX_KILL_GRACE_MS (MCPP_ERR_INVALID_ARGUMENT
   * beyond). */
  uint32_t kill_grace_ms;
} mcpp_spawn_options;

/* The SIGTERM-to-SIGKILL grace a zeroed kill_grace_ms means. */
#define MCPP_DEFAULT_KILL_GRACE_MS 2000u
/* The longest mcpp_spawn_options.kill_grace_ms (as every *_ms setting). */
#define MCPP_MAX_KILL_GRACE_MS MCPP_MAX_MS
/* mcpp_spawn_options.kill_grace_ms for no grace: the close sends SIGKILL to
 * the group at once, no SIGTERM. Far outside the milliseconds, so that 0
 * keeps meaning the default (a zeroed struct), and not UINT32_MAX, so that
 * a binding's -1 wrapped to unsigned is still refused. */
#define MCPP_KILL_GRACE_NONE (UINT32_MAX - 1u)

typedef struct mcpp_close_info {
  int err;              /* 0 for a requested close, else MCPP_ERR_* */
  const char *reason;   /* human-readable; never NULL */
  int64_t exit_status;  /* the server's exit code, -1 if killed by a signal
                           or unknown */
  int term_signal;      /* the signal that ended it, 0 if none */
} mcpp_close_info;

#define MCPP_CONN_CALLBACKS_V1 1
typedef struct mcpp_conn_callbacks {
  int version; /* 0 or MCPP_CONN_CALLBACKS_V1 (see mcpping/alloc.h) */
  /* An inbound application frame, unchanged, no newline. Required. */
  void (*on_message)(mcpp_conn *conn, const char *frame, size_t len,
                     void *user_data);
  void (*on_event)(mcpp_conn *conn, const mcpp_event *event, void *user_data);
  void (*on_record)(mcpp_conn *conn, const char *json, size_t len,
                    void *user_data);
  void (*on_stderr)(mcpp_conn *conn, const char *data, size_t len,
                    void *user_data);
  /* The last callback: the process is reaped, pipes and timer closed. The
   * conn is freed right after it returns. */
  void (*on_close)(mcpp_conn *conn, const mcpp_close_info *info,
                   void *user_data);
} mcpp_conn_callbacks;

/* Spawns the server in its own process group and starts the engine on it.
 * Returns 0 and sets *out, or MCPP_ERR_SPAWN (message via
 * mcpp_conn_spawn_error), MCPP_ERR_INVALID_ARGUMENT, MCPP_ERR_INTERVAL_TOO_SHORT,
 * MCPP_ERR_NOMEM. On error nothing is left running and no callback fires. */
int mcpp_conn_spawn(mcpp_conn **out, uv_loop_t *loop,
                    const mcpp_settings *settings,
                    const mcpp_spawn_options *options,
                    const mcpp_conn_callbacks *callbacks, void *user_data,
                    const mcpp_allocator *alloc);

/* Returns a one-line reason for the calling thread's last MCPP_ERR_SPAWN
 * from mcpp_conn_spawn ("cannot start foo: no such file or directory
 * (ENOENT)"), or for its MCPP_ERR_INVALID_ARGUMENT when a setting or
 * kill_grace_ms is out of range (the sentence names it and its range), or
 * "" if none. Valid until the thread's next spawn. */
const char *mcpp_conn_spawn_error(void);

/* Sends one application frame (copied; a trailing newline is added). Frames
 * go out in call order. Returns 0, MCPP_ERR_FRAME_NEWLINE (the frame holds
 * a \n), MCPP_ERR_CLOSED or MCPP_ERR_NOMEM. */
int mcpp_conn_send(mcpp_conn *conn, const char *frame, size_t len);

/* As mcpp_conn_send, with this request's timeout (see
 * mcpp_engine_observe_outbound_timed); MCPP_ERR_INVALID_ARGUMENT if
 * timeout_ms is out of range (nothing is sent). */
int mcpp_conn_send_timed(mcpp_conn *conn, const char *frame, size_t len,
                         uint32_t timeout_ms);

/* As mcpp_engine_cancel_request, on this connection. */
int mcpp_conn_cancel_request(mcpp_conn *conn, const char *id, size_t id_len);

/* As mcpp_engine_ping, on this connection. */
int mcpp_conn_ping(mcpp_conn *conn, uint32_t timeout_ms, uint64_t *seq);

/* Closes: SIGTERM to the process group, SIGKILL after the grace period,
 * reap, close pipes and timer, then on_close. Idempotent; returns 0 or
 * MCPP_ERR_CLOSED if already closing. */
int mcpp_conn_close(mcpp_conn *conn);

/* The engine inside (for get_info/healthy). Valid until on_close returns. */
mcpp_engine *mcpp_conn_engine(mcpp_conn *conn);

/* The server's process id (the process group id too). */
int mcpp_conn_pid(const mcpp_conn *conn);

#ifdef __cplusplus
}
#endif

#endif /* MCPPING_DRIVER_H */
