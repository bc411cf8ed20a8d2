/*
 * The server's process for the stdio driver: spawned (posix_spawn) as the
 * leader of its own session and process group, watched through its own
 * handle (the platform's exit fd polled on the loop: a pidfd on Linux, a
 * kqueue on macOS; a bounded waitpid(pid, WNOHANG) backoff timer where
 * there is none), reaped by pid alone, ended by
 * SIGTERM then SIGKILL to the whole group. It installs no signal handler
 * and changes no process-wide signal state, so the host may run uvloop, its
 * own SIGCHLD handler or reaper, or ignore SIGCHLD. Internal to the driver.
 */
#ifndef MCPP_PROC_H
#define MCPP_PROC_H

#include <stddef.h>
#include <stdint.h>
#include <uv.h>

#include "mcpping.h"

typedef struct mcpp__proc mcpp__proc;

/* Called once the server exited and was reaped (or was found reaped
 * elsewhere); p->exited, p->exit_status, p->term_signal and
 * p->status_unknown say how. */
typedef void (*mcpp__proc_exit_fn)(mcpp__proc *p);

struct mcpp__proc {
  /* First, so that the watch's callback finds p; the handle's data is the
   * owner's. A poll on exit_fd, or the backoff timer without one. */
  union {
    uv_poll_t poll;
    uv_timer_t timer;
  } watch;
  mcpp__proc_exit_fn on_exit;
  int pid;   /* also the process group's id; 0 until spawned */
  int exit_fd; /* platform.h's; -1 without one (then the timer watches) */
  uint32_t backoff_ms;
  int exited;
  int64_t exit_status; /* -1 if killed by a signal or unknown */
  int term_signal;
  /* Someone else reaped it first (SIGCHLD set to SIG_IGN, a host's
   * waitpid(-1) loop): it is gone, its status is not known. */
  int status_unknown;
  uint32_t kill_grace_ms; /* SIGTERM-to-SIGKILL grace; 0: SIGKILL at once */
};

/* The child's stdio in mcpp__proc_spawn: an fd to dup2 onto it, or one of
 * these. */
enum { MCPP__PROC_INHERIT = -1, MCPP__PROC_DEVNULL = -2 };

/* Starts p afresh; kill_grace_ms as mcpp_spawn_options has it (0 the
 * default, MCPP_KILL_GRACE_NONE none). */
void mcpp__proc_init(mcpp__proc *p, uint32_t kill_grace_ms);

/* Starts options' program with child_fds as its stdin, stdout, stderr,
 * every other fd closed, default signal dispositions and an empty mask.
 * Returns 0 (p->watch is then an initialized handle that the caller closes
 * with mcpp__proc_close) or a negative errno (nothing started, no handle). */
int mcpp__proc_spawn(mcpp__proc *p, uv_loop_t *loop,
                     const mcpp_spawn_options *options, const int child_fds[3],
                     mcpp__proc_exit_fn cb);

/* Asks the group to end: SIGTERM (and SIGCONT), and SIGKILL for whatever is
 * left if the leader was already reaped. If it was not, the caller calls
 * mcpp__proc_kill once kill_grace_ms passed or the leader exited, whichever
 * comes first. */
void mcpp__proc_terminate(mcpp__proc *p);

/* Without an exit fd: looks for the exit again at once and backs off anew
 * (the server closed stdout or was just signalled). */
void mcpp__proc_check_soon(mcpp__proc *p);

/* SIGKILL to the whole group. */
void mcpp__proc_kill(mcpp__proc *p);

/* The process as /proc/<pid>/stat shows it now (read only when asked):
 * R/S/D and kin RUNNING, T/t STOPPED, Z/X or gone EXITED; UNKNOWN where
 * there is no /proc. */
mcpp_process_state mcpp__proc_state(const mcpp__proc *p);
/* The same, with the CPU time so far in *cpu_us (µs; UINT64_MAX: not
 * known), read in the same look. */
mcpp_process_state mcpp__proc_state_cpu(const mcpp__proc *p, uint64_t *cpu_us);

/* Closes the watch handle (close_cb gets it) and the exit fd, and tells the
 * keeper to forget the group. A server not reaped yet (SIGKILL sent, stuck
 * in the kernel) is watched on apart from the loop until it is reaped; only
 * then is it forgotten. Once only, after a successful spawn. */
void mcpp__proc_close(mcpp__proc *p, uv_close_cb close_cb);

/* 1 once mcpp__proc_close ran. */
int mcpp__proc_closing(const mcpp__proc *p);

/* "server exited with status N", "server killed by signal N" or "server
 * exited (status unknown: reaped elsewhere)", then suffix. */
void mcpp__proc_exit_reason(const mcpp__proc *p, char *buf, size_t cap,
                            const char *suffix);

#endif
