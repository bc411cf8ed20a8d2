/*
 * The server's process for the stdio driver: spawned as the leader of its
 * own process group, ended by SIGTERM then SIGKILL to the whole group, and
 * its exit status. Internal to the driver (mcpp__ prefix).
 */
#ifndef MCPP_PROC_H
#define MCPP_PROC_H

#include <stddef.h>
#include <stdint.h>
#include <uv.h>

#include "mcpping.h"

typedef struct mcpp__proc mcpp__proc;

/* Called once the server exited and was reaped; p->exited, p->exit_status
 * and p->term_signal say how. */
typedef void (*mcpp__proc_exit_fn)(mcpp__proc *p);

struct mcpp__proc {
  /* First, so that the exit callback finds p; handle.data is the owner's. */
  uv_process_t handle;
  mcpp__proc_exit_fn on_exit;
  int pid; /* also the process group's id; 0 until spawned */
  int exited;
  int64_t exit_status; /* -1 if killed by a signal or not exited */
  int term_signal;
  uint32_t kill_grace_ms; /* SIGTERM-to-SIGKILL grace */
};

/* Starts p afresh; kill_grace_ms 0 means the default. */
void mcpp__proc_init(mcpp__proc *p, uint32_t kill_grace_ms);

/* Starts options' program with the given three stdio containers. Returns 0
 * or libuv's error; the handle must be closed either way. */
int mcpp__proc_spawn(mcpp__proc *p, uv_loop_t *loop,
                     const mcpp_spawn_options *options,
                     uv_stdio_container_t stdio[3], mcpp__proc_exit_fn cb);

/* Asks the group to end: SIGTERM (and SIGCONT), and SIGKILL for whatever is
 * left if the leader was already reaped. If it was not, the caller calls
 * mcpp__proc_kill once kill_grace_ms passed or the leader exited, whichever
 * comes first. */
void mcpp__proc_terminate(mcpp__proc *p);

/* SIGKILL to the whole group. */
void mcpp__proc_kill(mcpp__proc *p);

/* "server exited with status N" or "server killed by signal N", then
 * suffix. */
void mcpp__proc_exit_reason(const mcpp__proc *p, char *buf, size_t cap,
                            const char *suffix);

#endif
