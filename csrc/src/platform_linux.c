/* The platform layer on Linux (see platform.h): pidfds, /proc, glibc. */
#if defined(__linux__)
#include "platform.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
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
