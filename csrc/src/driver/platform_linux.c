/* The platform layer on Linux (see platform.h): pidfds, /proc, glibc. */
#if defined(__linux__)
#include "platform.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#ifndef P_PIDFD
#define P_PIDFD 3
#endif

int mcpp__pipe_cloexec(int fds[2]) { return pipe2(fds, O_CLOEXEC); }

int mcpp__socketpair_cloexec(int sv[2]) {
  return socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv);
}

int mcpp__spawn_close_others(posix_spawn_file_actions_t *fa, short *flags) {
#if defined(__GLIBC__) && (__GLIBC__ > 2 || __GLIBC_MINOR__ >= 34)
  return posix_spawn_file_actions_addclosefrom_np(fa, 3);
#else
  return 0;
#endif
}

/* ------------------------------------------------- the registered spawn
 *
 * posix_spawn as glibc did it (vfork: the child runs in our memory, below
 * the calling frame, until it execs; the calling thread waits), with one
 * more step in the child: "+ PID" to the keeper, before execve. (Not
 * clone() on a stack of its own as glibc now does: ThreadSanitizer takes
 * every clone() for a fork and breaks on it; it turns vfork into a fork,
 * which the status pipe below also serves.) The keeper's socket is
 * close-on-exec, so the child holds a copy of it until the exec: if the
 * host dies at any moment, the keeper either never sees the server (the
 * host died before the vfork) or sees its line before its EOF, and kills
 * it. A gate process or a stopped start would need a second exec or a
 * signal per spawn; this costs a send().
 *
 * The child may only make raw system calls: it shares the host's memory
 * and its thread's TLS, so no lock, allocation, libc state, or sanitizer
 * interceptor may be touched. All signals are blocked in the calling
 * thread across the vfork, so no host handler runs on the child's stack;
 * the child sets every disposition to the default before it unblocks them.
 * Where the vfork is really a fork (valgrind, ThreadSanitizer), the status
 * pipe still says what happened. */

#ifndef SYS_close_range
#define SYS_close_range 436
#endif

typedef struct spawn_child {
  const mcpp__spawn_req *req;
  int status_fd; /* write end: 's' once registered, then errno on failure */
} spawn_child;

/* The child's code touches no sanitizer state either. */
#if defined(__clang__)
#define NO_SANITIZE __attribute__((no_sanitize("address", "thread", "undefined")))
#elif defined(__GNUC__)
#define NO_SANITIZE                                                         \
  __attribute__((no_sanitize_address, no_sanitize_thread,                   \
                 no_sanitize_undefined))
#else
#define NO_SANITIZE
#endif

NO_SANITIZE static long sys_fail(long rc) { return rc < 0 ? -1 : rc; }

NO_SANITIZE __attribute__((noreturn)) static void child_fail(int status_fd,
                                                             long err) {
  int e = (int)err;
  syscall(SYS_write, status_fd, &e, sizeof e);
  for (;;) syscall(SYS_exit_group, 127);
}

NO_SANITIZE __attribute__((noreturn)) static void
spawn_child_main(const spawn_child *c) {
  const mcpp__spawn_req *r = c->req;
  /* Every disposition to the default (a zeroed kernel sigaction is
   * SIG_DFL, no flags, an empty mask): no handler of the host may run
   * here, and the server starts as a new program should. */
  unsigned long dfl[8];
  for (size_t i = 0; i < sizeof dfl / sizeof *dfl; i++) dfl[i] = 0;
  for (int sig = 1; sig < 65; sig++)
    if (sig != SIGKILL && sig != SIGSTOP)
      syscall(SYS_rt_sigaction, sig, dfl, 0, 8);
  if (syscall(SYS_setsid) < 0) child_fail(c->status_fd, errno);
  if (r->keeper_fd >= 0) {
    /* "+ PID\n", formatted by hand. */
    char line[24], digits[12];
    long pid = syscall(SYS_getpid);
    int n = 0, len = 0;
    do digits[n++] = (char)('0' + pid % 10);
    while ((pid /= 10) > 0);
    line[len++] = '+';
    line[len++] = ' ';
    while (n) line[len++] = digits[--n];
    line[len++] = '\n';
    if (syscall(SYS_sendto, r->keeper_fd, line, len, MSG_NOSIGNAL, 0, 0) ==
        len)
      syscall(SYS_write, c->status_fd, "s", 1);
  }
  for (int i = 0; i < 3; i++) {
    long fd = r->stdio[i];
    if (fd < 0) {
      fd = syscall(SYS_openat, AT_FDCWD, "/dev/null", i ? O_WRONLY : O_RDONLY);
      if (fd < 0) child_fail(c->status_fd, errno);
      if (fd == i) continue;
    }
    /* dup2 (dup3 where there is no dup2) clears close-on-exec. */
    if (sys_fail(syscall(SYS_dup3, fd, i, 0)) < 0)
      child_fail(c->status_fd, errno);
    if (r->stdio[i] < 0) syscall(SYS_close, fd);
  }
  if (r->cwd && syscall(SYS_chdir, r->cwd) < 0)
    child_fail(c->status_fd, errno);
  /* No fd of the host beyond stdio (one without close-on-exec that a
   * reader waits on for EOF must not live on), the status pipe aside. */
  if (c->status_fd > 3)
    syscall(SYS_close_range, 3, c->status_fd - 1, 0);
  syscall(SYS_close_range, c->status_fd + 1, ~0u, 0);
  unsigned long none = 0;
  syscall(SYS_rt_sigprocmask, SIG_SETMASK, &none, 0, 8);
  syscall(SYS_execve, r->path, r->argv, r->envp);
  child_fail(c->status_fd, errno);
  for (;;) syscall(SYS_exit_group, 127);
}

NO_SANITIZE int mcpp__spawn_registered(const mcpp__spawn_req *req, int *pid,
                                       int *registered) {
  int status[2];
  if (pipe2(status, O_CLOEXEC)) return errno;
  /* The child's stdio goes onto 0-2: its end must be above them. */
  if (status[1] <= 2) {
    int moved = fcntl(status[1], F_DUPFD_CLOEXEC, 3);
    int err = errno;
    close(status[1]);
    status[1] = moved;
    if (moved < 0) {
      close(status[0]);
      return err;
    }
  }
  spawn_child c = {req, status[1]};
  sigset_t all, old;
  sigfillset(&all);
  int cancel;
  pthread_setcancelstate(PTHREAD_CANCEL_DISABLE, &cancel);
  pthread_sigmask(SIG_SETMASK, &all, &old);
  /* Returns once the child exec'd or exited. */
  pid_t child = vfork();
  if (child == 0) spawn_child_main(&c);
  int fork_err = errno;
  pthread_sigmask(SIG_SETMASK, &old, NULL);
  pthread_setcancelstate(cancel, NULL);
  close(status[1]);
  if (child < 0) {
    close(status[0]);
    return fork_err;
  }
  /* 's' if registered, then 4 bytes of errno if the exec failed; EOF once
   * the exec closed the pipe (at once here, but also where the vfork was
   * turned into a fork). */
  char got[1 + sizeof(int)];
  size_t have = 0;
  for (;;) {
    ssize_t n = read(status[0], got + have, sizeof got - have);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    have += (size_t)n;
    if (have == sizeof got) break;
  }
  close(status[0]);
  int sent = have > 0 && got[0] == 's';
  size_t at = sent ? 1 : 0;
  if (have >= at + sizeof(int)) {
    int err;
    memcpy(&err, got + at, sizeof err);
    /* It never ran the program: reap it here (the caller tells the keeper
     * to forget it if it was registered). */
    while (waitpid(child, NULL, 0) < 0 && errno == EINTR) {
    }
    *pid = child;
    *registered = sent;
    return err ? err : ENOEXEC;
  }
  *pid = child;
  *registered = sent;
  return 0;
}

int mcpp__exit_fd_open(int pid) {
#ifdef SYS_pidfd_open
  return (int)syscall(SYS_pidfd_open, pid, 0); /* close-on-exec already */
#else
  errno = ENOSYS;
  return -1;
#endif
}

int mcpp__exit_reap(int exit_fd, int pid, siginfo_t *si) {
  int rc = -1;
  if (exit_fd >= 0)
    rc = waitid((idtype_t)P_PIDFD, (id_t)exit_fd, si, WEXITED | WNOHANG);
  /* Linux 5.3 has pidfds but not P_PIDFD. */
  if (exit_fd < 0 || (rc < 0 && errno == EINVAL))
    rc = waitid(P_PID, (id_t)pid, si, WEXITED | WNOHANG);
  return rc;
}

static int have_proc(void) {
  static _Atomic int known; /* 0 unknown, 1 yes, -1 no */
  if (!known) known = access("/proc/self/stat", R_OK) == 0 ? 1 : -1;
  return known > 0;
}

mcpp_process_state mcpp__process_state(int pid) {
  uint64_t cpu;
  return mcpp__process_state_cpu(pid, &cpu);
}

/* utime and stime, fields 14 and 15 of /proc/PID/stat, in clock ticks;
 * `after` points at the state field (3). UINT64_MAX if malformed. */
static uint64_t cpu_of(const char *after) {
  static long hz;
  if (hz <= 0) hz = sysconf(_SC_CLK_TCK);
  if (hz <= 0) return UINT64_MAX;
  const char *p = after;
  for (int field = 3; field < 14; field++) {
    p = strchr(p, ' ');
    if (p == NULL) return UINT64_MAX;
    p++;
  }
  char *end;
  unsigned long long ut = strtoull(p, &end, 10);
  if (end == p || *end != ' ') return UINT64_MAX;
  const char *q = end + 1;
  unsigned long long st = strtoull(q, &end, 10);
  if (end == q) return UINT64_MAX;
  return (uint64_t)(ut + st) * 1000000ULL / (uint64_t)hz;
}

mcpp_process_state mcpp__process_state_cpu(int pid, uint64_t *cpu_us) {
  *cpu_us = UINT64_MAX;
  if (!have_proc()) return MCPP_PROCESS_UNKNOWN;
  char path[32], buf[512];
  snprintf(path, sizeof path, "/proc/%d/stat", pid);
  int fd = open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return errno == ENOENT ? MCPP_PROCESS_EXITED
                                     : MCPP_PROCESS_UNKNOWN;
  ssize_t n = read(fd, buf, sizeof buf - 1);
  close(fd);
  if (n <= 0) return MCPP_PROCESS_UNKNOWN;
  buf[n] = '\0';
  /* "pid (comm) S ...": comm may hold anything, ')' included. */
  const char *end = strrchr(buf, ')');
  if (!end || end[1] != ' ' || !end[2]) return MCPP_PROCESS_UNKNOWN;
  *cpu_us = cpu_of(end + 2);
  switch (end[2]) {
  case 'T':
  case 't':
    return MCPP_PROCESS_STOPPED;
  case 'Z':
  case 'X':
  case 'x':
    return MCPP_PROCESS_EXITED;
  default:
    return MCPP_PROCESS_RUNNING;
  }
}
#endif
