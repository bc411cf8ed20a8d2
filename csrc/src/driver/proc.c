/*
 * The server's process lifetime (see proc.h): posix_spawn into its own
 * session, exit watched through the platform's exit fd (a pidfd, a kqueue;
 * or a waitpid backoff timer), the SIGTERM/SIGCONT/SIGKILL escalation, the
 * exit status, and the process state when the engine asks.
 */
#include "proc.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "keeper.h"
#include "orphans.h"
#include "platform.h"
#include "engine/test_hooks.h"

extern char **environ;

enum {
  /* Without an exit fd, waitpid(pid, WNOHANG) runs at 1 ms, 2 ms, 4 ms, ...
   * up to this (the server's stdout EOF usually says sooner). */
  MAX_BACKOFF_MS = 1000
};


void mcpp__proc_init(mcpp__proc *p, uint32_t kill_grace_ms) {
  memset(p, 0, sizeof *p);
  p->exit_fd = -1;
  p->exit_status = -1;
  p->kill_grace_ms = kill_grace_ms == MCPP_KILL_GRACE_NONE ? 0
                    : kill_grace_ms                       ? kill_grace_ms
                                                          : MCPP_DEFAULT_KILL_GRACE_MS;
}

/* ------------------------------------------------------------- reaping */

/* Reaps exactly our child, never waiting. Returns 1 once it is gone
 * (status recorded, or unknown if another reaper or the kernel took it),
 * 0 if it still runs. */
static int try_reap(mcpp__proc *p) {
  siginfo_t si;
  memset(&si, 0, sizeof si);
  int rc = mcpp__exit_reap(p->exit_fd, p->pid, &si);
  if (rc < 0) {
    if (errno == EINTR) return 0;
    /* ECHILD: SIGCHLD is ignored (the kernel reaped it) or the host's own
     * waitpid(-1) got there first. Either way it has exited. */
    p->status_unknown = 1;
  } else if (si.si_pid == 0) {
    return 0;
  } else if (si.si_code == CLD_EXITED) {
    p->exit_status = si.si_status;
  } else {
    p->term_signal = si.si_status;
  }
  p->exited = 1;
  return 1;
}

static void on_exit_fd(uv_poll_t *h, int status, int events) {
  mcpp__proc *p = (mcpp__proc *)h;
  if (!try_reap(p)) return;
  uv_poll_stop(h);
  p->on_exit(p);
}

static void on_backoff(uv_timer_t *t) {
  mcpp__proc *p = (mcpp__proc *)t;
  if (try_reap(p)) {
    p->on_exit(p);
    return;
  }
  p->backoff_ms = p->backoff_ms * 2 > MAX_BACKOFF_MS ? MAX_BACKOFF_MS
                                                     : p->backoff_ms * 2;
  uv_timer_start(t, on_backoff, p->backoff_ms, 0);
}

/* The exit fd polled on the loop where the kernel has one (Linux 5.3+,
 * macOS), else the backoff timer. A child already reaped by the kernel
 * (SIGCHLD ignored) has no exit fd either: the timer's first waitpid says
 * so. */
static void watch(mcpp__proc *p, uv_loop_t *loop) {
  p->exit_fd = MCPP__HOOK_FORCE_BACKOFF() ? -1 : mcpp__exit_fd_open(p->pid);
  /* A host that closed its stdin or stderr would get the exit fd there:
   * it must not become the next spawn's stdio, and libuv refuses to close
   * fds 0-2. */
  if (p->exit_fd >= 0 && p->exit_fd <= 2) {
    int moved = fcntl(p->exit_fd, F_DUPFD_CLOEXEC, 3);
    close(p->exit_fd);
    p->exit_fd = moved;
  }
  if (p->exit_fd >= 0) {
    if (uv_poll_init(loop, &p->watch.poll, p->exit_fd) == 0) {
      uv_poll_start(&p->watch.poll, UV_READABLE, on_exit_fd);
      return;
    }
    close(p->exit_fd);
    p->exit_fd = -1;
  }
  uv_timer_init(loop, &p->watch.timer);
  p->backoff_ms = 1;
  uv_timer_start(&p->watch.timer, on_backoff, 1, 0);
}

/* ------------------------------------------------------------ spawning */

/* The child's stdio. An inherited fd is passed through a fresh copy above
 * stdio and dup2'd back onto itself: a dup2 clears close-on-exec, and
 * hosts mark their own 0-2 close-on-exec (Node does), so without it the
 * server would start with that fd closed and die on its first log line.
 * (A dup2 action of an fd onto itself need not clear the flag before POSIX
 * 2024, so the copy is a different fd.) Where
 * the host's fd is closed, the child gets /dev/null rather than a hole that
 * its next open() would fill. tmp[i] is the copy, closed by the caller
 * after the spawn, or -1. */
static int child_stdio(posix_spawn_file_actions_t *fa, const int fds[3],
                       int tmp[3]) {
  for (int i = 0; i < 3; i++) {
    int rc = 0, fd = fds[i];
    if (fd == MCPP__PROC_INHERIT) {
      tmp[i] = fcntl(i, F_DUPFD_CLOEXEC, 3);
      if (tmp[i] < 0 && errno != EBADF) return errno;
      fd = tmp[i] >= 0 ? tmp[i] : MCPP__PROC_DEVNULL;
    }
    if (fd >= 0)
      rc = posix_spawn_file_actions_adddup2(fa, fd, i);
    else if (fd == MCPP__PROC_DEVNULL)
      rc = posix_spawn_file_actions_addopen(fa, i, "/dev/null",
                                            i ? O_WRONLY : O_RDONLY, 0);
    if (rc) return rc;
  }
  return 0;
}

/* The server starts as libuv would start it: its own session, every
 * signal at its default disposition (the host may ignore SIGPIPE or
 * SIGCHLD), an empty signal mask (our I/O thread blocks everything), and
 * no fd beyond its stdio. */
static int prepare(posix_spawn_file_actions_t *fa, posix_spawnattr_t *at,
                   const mcpp_spawn_options *o, const int fds[3],
                   int tmp[3]) {
  int rc = child_stdio(fa, fds, tmp);
  if (!rc && o->cwd) rc = posix_spawn_file_actions_addchdir_np(fa, o->cwd);
  short flags = POSIX_SPAWN_SETSID | POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF;
  if (!rc) rc = mcpp__spawn_close_others(fa, &flags);
  sigset_t none, all;
  sigemptyset(&none);
  sigfillset(&all);
  if (!rc) rc = posix_spawnattr_setsigmask(at, &none);
  if (!rc) rc = posix_spawnattr_setsigdefault(at, &all);
  if (!rc) rc = posix_spawnattr_setflags(at, flags);
  return rc;
}

/* 0 if `candidate` (relative ones from the server's `cwd`, where exec runs)
 * is an executable file; else the errno exec would fail with. */
static int executable(const char *cwd, const char *candidate, int *err) {
  char buf[4096];
  if (cwd && candidate[0] != '/') {
    int len = snprintf(buf, sizeof buf, "%s/%s", cwd, candidate);
    if (len < 0 || (size_t)len >= sizeof buf) return *err = ENAMETOOLONG;
    candidate = buf;
  }
  struct stat st;
  if (stat(candidate, &st) != 0) return errno;
  if (!S_ISREG(st.st_mode) || access(candidate, X_OK) != 0) return *err = EACCES;
  return 0;
}

/* 0 if `file` names an executable as execvp would find it on the host's
 * PATH (its path, relative to cwd as exec will see it, copied to found),
 * else the errno exec would fail with. Checked before spawning so a
 * missing program is a spawn error everywhere, also where posix_spawn
 * cannot report exec's failure (valgrind, libcs without vfork). */
static int find_program(const char *file, const char *cwd, char *found,
                        size_t cap) {
  int err = ENOENT;
  if (strchr(file, '/')) {
    if (strlen(file) >= cap) return ENAMETOOLONG;
    strcpy(found, file);
    return executable(cwd, file, &err);
  }
  const char *path = getenv("PATH");
  if (path == NULL || *path == '\0') path = "/usr/local/bin:/usr/bin:/bin";
  char buf[4096];
  for (const char *dir = path;; dir++) {
    const char *end = strchr(dir, ':');
    size_t n = end ? (size_t)(end - dir) : strlen(dir);
    /* An empty entry is the current directory, as for execvp. */
    int len = snprintf(buf, sizeof buf, "%.*s/%s", (int)(n ? n : 1),
                       n ? dir : ".", file);
    if (len > 0 && (size_t)len < sizeof buf && (size_t)len < cap &&
        executable(cwd, buf, &err) == 0) {
      strcpy(found, buf);
      return 0;
    }
    if (end == NULL) return err;
    dir = end;
  }
}

/* The spawn whose child tells the keeper itself, before it execs
 * (platform.h): a host killed at any moment leaves no server the keeper
 * does not know. Returns 0, a positive errno, or ENOSYS where there is no
 * such spawn. */
static int spawn_registered(const mcpp_spawn_options *o, const int fds[3],
                            int tmp[3], const char *path, pid_t *pid,
                            int *registered) {
  mcpp__spawn_req req = {path, o->args, o->env ? o->env : environ, o->cwd,
                         {-1, -1, -1}, -1};
  for (int i = 0; i < 3; i++) {
    if (fds[i] >= 0) {
      req.stdio[i] = fds[i];
    } else if (fds[i] == MCPP__PROC_INHERIT) {
      /* As child_stdio does: a copy, or /dev/null for a closed fd. */
      tmp[i] = fcntl(i, F_DUPFD_CLOEXEC, 3);
      if (tmp[i] < 0 && errno != EBADF) return errno;
      req.stdio[i] = tmp[i];
    }
  }
  /* A copy of the keeper's socket: where the vfork is a fork
   * (ThreadSanitizer), the fork's handlers close the socket itself in the
   * child. */
  int keeper = mcpp__keeper_hold();
  req.keeper_fd = keeper >= 0 ? fcntl(keeper, F_DUPFD_CLOEXEC, 3) : -1;
  int child = 0;
  int rc = mcpp__spawn_registered(&req, &child, registered);
  if (req.keeper_fd >= 0) close(req.keeper_fd);
  mcpp__keeper_release();
  if (rc && rc != ENOSYS && *registered) mcpp__keeper_forget(child);
  if (!rc) *pid = child;
  return rc;
}

/* Where there is no registered spawn: posix_spawn, the keeper started
 * before it, so that a host killed at once leaves its server behind only
 * within the one send() of the '+' line after it. */
static int spawn_then_register(const mcpp_spawn_options *o, const int fds[3],
                               int tmp[3], pid_t *pid) {
  posix_spawn_file_actions_t fa;
  posix_spawnattr_t at;
  if (posix_spawn_file_actions_init(&fa)) return ENOMEM;
  if (posix_spawnattr_init(&at)) {
    posix_spawn_file_actions_destroy(&fa);
    return ENOMEM;
  }
  int rc = prepare(&fa, &at, o, fds, tmp);
  if (!rc) mcpp__keeper_ensure();
  /* glibc reports exec's own failure (ENOENT, EACCES) here. */
  if (!rc)
    rc = posix_spawnp(pid, o->file, &fa, &at, o->args,
                      o->env ? o->env : environ);
  posix_spawn_file_actions_destroy(&fa);
  posix_spawnattr_destroy(&at);
  return rc;
}

int mcpp__proc_spawn(mcpp__proc *p, uv_loop_t *loop,
                     const mcpp_spawn_options *o, const int child_fds[3],
                     mcpp__proc_exit_fn cb) {
  pid_t pid = 0;
  int tmp[3] = {-1, -1, -1};
  int registered = 0;
  char path[4096];
  int rc = find_program(o->file, o->cwd, path, sizeof path);
  if (!rc) rc = spawn_registered(o, child_fds, tmp, path, &pid, &registered);
  if (rc == ENOSYS) {
    for (int i = 0; i < 3; i++)
      if (tmp[i] >= 0) close(tmp[i]);
    tmp[0] = tmp[1] = tmp[2] = -1;
    rc = spawn_then_register(o, child_fds, tmp, &pid);
  }
  for (int i = 0; i < 3; i++)
    if (tmp[i] >= 0) close(tmp[i]);
  if (rc) return -rc;
  MCPP__HOOK_AFTER_SPAWN(pid);
  p->pid = pid;
  p->on_exit = cb;
  if (!registered) mcpp__keeper_watch(pid);
  watch(p, loop);
  return 0;
}

/* ---------------------------------------------------------- signals */

void mcpp__proc_terminate(mcpp__proc *p) {
  /* SIGCONT so that a stopped server gets the SIGTERM now. */
  kill(-p->pid, SIGTERM);
  kill(-p->pid, SIGCONT);
  /* The leader is gone: nothing to wait for, take any straggler at once. */
  if (p->exited) kill(-p->pid, SIGKILL);
  mcpp__proc_check_soon(p);
}

void mcpp__proc_kill(mcpp__proc *p) {
  kill(-p->pid, MCPP__HOOK_SIGKILL());
  mcpp__proc_check_soon(p);
}

void mcpp__proc_check_soon(mcpp__proc *p) {
  if (p->exit_fd >= 0 || p->exited || !p->on_exit) return;
  p->backoff_ms = 1;
  uv_timer_start(&p->watch.timer, on_backoff, 1, 0);
}

/* ------------------------------------------------------- process state */

mcpp_process_state mcpp__proc_state(const mcpp__proc *p) {
  uint64_t cpu;
  return mcpp__proc_state_cpu(p, &cpu);
}

mcpp_process_state mcpp__proc_state_cpu(const mcpp__proc *p, uint64_t *cpu_us) {
  *cpu_us = UINT64_MAX;
  if (p->exited) return MCPP_PROCESS_EXITED;
  if (p->pid <= 0) return MCPP_PROCESS_UNKNOWN;
  /* A readable exit fd means it exited, whatever now owns the pid. */
  if (p->exit_fd >= 0) {
    struct pollfd pfd = {p->exit_fd, POLLIN, 0};
    if (poll(&pfd, 1, 0) == 1) return MCPP_PROCESS_EXITED;
  }
  return mcpp__process_state_cpu(p->pid, cpu_us);
}

/* ------------------------------------------------------------ the end */

void mcpp__proc_close(mcpp__proc *p, uv_close_cb close_cb) {
  if (p->on_exit == NULL) return; /* closed, or never spawned */
  p->on_exit = NULL;
  /* uv_close stops the poll before the fd goes: no stale epoll entry. */
  uv_close((uv_handle_t *)&p->watch, close_cb);
  /* Not reaped yet: it is watched on until it is, and the keeper keeps it
   * (its pid, and so its group's id, cannot be reused before the reap). */
  if (!p->exited && p->pid > 0 && mcpp__orphan_adopt(p->pid, p->exit_fd) == 0) {
    p->exit_fd = -1;
    return;
  }
  if (p->exit_fd >= 0) close(p->exit_fd);
  p->exit_fd = -1;
  mcpp__keeper_forget(p->pid);
}

int mcpp__proc_closing(const mcpp__proc *p) { return p->on_exit == NULL; }

void mcpp__proc_exit_reason(const mcpp__proc *p, char *buf, size_t cap,
                            const char *suffix) {
  if (p->status_unknown)
    snprintf(buf, cap, "server exited (status unknown: reaped elsewhere)%s",
             suffix);
  else if (p->term_signal)
    snprintf(buf, cap, "server killed by signal %d%s", p->term_signal, suffix);
  else
    snprintf(buf, cap, "server exited with status %lld%s",
             (long long)p->exit_status, suffix);
}
