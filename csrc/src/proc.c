/*
 * The server's process lifetime (see proc.h): spawn into its own process
 * group, the SIGTERM/SIGCONT/SIGKILL escalation, and the exit status.
 */
#include "proc.h"

#include <signal.h>
#include <stdio.h>
#include <string.h>

enum { DEFAULT_KILL_GRACE_MS = 2000 };

void mcpp__proc_init(mcpp__proc *p, uint32_t kill_grace_ms) {
  memset(p, 0, sizeof *p);
  p->exit_status = -1;
  p->kill_grace_ms = kill_grace_ms ? kill_grace_ms : DEFAULT_KILL_GRACE_MS;
}

static void on_reaped(uv_process_t *h, int64_t status, int sig) {
  mcpp__proc *p = (mcpp__proc *)h;
  p->exited = 1;
  p->exit_status = sig ? -1 : status;
  p->term_signal = sig;
  p->on_exit(p);
}

int mcpp__proc_spawn(mcpp__proc *p, uv_loop_t *loop,
                     const mcpp_spawn_options *options,
                     uv_stdio_container_t stdio[3], mcpp__proc_exit_fn cb) {
  uv_process_options_t po;
  memset(&po, 0, sizeof po);
  po.exit_cb = on_reaped;
  po.file = options->file;
  po.args = options->args;
  po.env = options->env;
  po.cwd = options->cwd;
  po.stdio = stdio;
  po.stdio_count = 3;
  /* Detached: setsid(), so the server leads its own process group and
   * kill(-pid) reaches everything it starts. */
  po.flags = UV_PROCESS_DETACHED;
  p->on_exit = cb;
  int rc = uv_spawn(loop, &p->handle, &po);
  if (rc == 0) p->pid = p->handle.pid;
  return rc;
}

void mcpp__proc_terminate(mcpp__proc *p) {
  /* SIGCONT so that a stopped server gets the SIGTERM now. */
  kill(-p->pid, SIGTERM);
  kill(-p->pid, SIGCONT);
  /* The leader is gone: nothing to wait for, take any straggler at once. */
  if (p->exited) kill(-p->pid, SIGKILL);
}

void mcpp__proc_kill(mcpp__proc *p) { kill(-p->pid, SIGKILL); }

void mcpp__proc_exit_reason(const mcpp__proc *p, char *buf, size_t cap,
                            const char *suffix) {
  if (p->term_signal)
    snprintf(buf, cap, "server killed by signal %d%s", p->term_signal, suffix);
  else
    snprintf(buf, cap, "server exited with status %lld%s",
             (long long)p->exit_status, suffix);
}
