/* The platform layer on macOS (see platform.h): kqueue's EVFILT_PROC,
 * sysctl(KERN_PROC_PID), POSIX_SPAWN_CLOEXEC_DEFAULT. Cross-compiled and
 * checked by `make portability`; not run here. */
#if defined(__APPLE__)
#include "platform.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/event.h>
#include <sys/socket.h>
#include <sys/sysctl.h>
#include <sys/wait.h>
#include <unistd.h>

/* macOS has no pipe2 or SOCK_CLOEXEC: the flag is set right after. Our own
 * spawns cannot inherit the fds in between (they all pass
 * POSIX_SPAWN_CLOEXEC_DEFAULT); a host thread's fork+exec in that window
 * can, as with every macOS library that makes pipes (libuv included). */
static int cloexec_pair(int fds[2]) {
  for (int i = 0; i < 2; i++) {
    if (fcntl(fds[i], F_SETFD, FD_CLOEXEC) < 0) {
      int err = errno;
      close(fds[0]);
      close(fds[1]);
      errno = err;
      return -1;
    }
  }
  return 0;
}

int mcpp__pipe_cloexec(int fds[2]) {
  return pipe(fds) ? -1 : cloexec_pair(fds);
}

int mcpp__socketpair_cloexec(int sv[2]) {
  return socketpair(AF_UNIX, SOCK_STREAM, 0, sv) ? -1 : cloexec_pair(sv);
}

int mcpp__spawn_close_others(posix_spawn_file_actions_t *fa, short *flags) {
  /* Only the fds the file actions name survive into the child. */
  *flags |= POSIX_SPAWN_CLOEXEC_DEFAULT;
  return 0;
}

int mcpp__spawn_registered(const mcpp__spawn_req *req, int *pid,
                           int *registered) {
  return ENOSYS; /* posix_spawn, then the keeper is told */
}

int mcpp__exit_fd_open(int pid) {
  int kq = kqueue();
  if (kq < 0) return -1;
  struct kevent ev;
  EV_SET(&ev, (uintptr_t)pid, EVFILT_PROC, EV_ADD | EV_CLEAR, NOTE_EXIT, 0,
         NULL);
  /* ESRCH: it is already gone, and the caller's waitid says so. */
  if (fcntl(kq, F_SETFD, FD_CLOEXEC) < 0 ||
      kevent(kq, &ev, 1, NULL, 0, NULL) < 0) {
    int err = errno;
    close(kq);
    errno = err;
    return -1;
  }
  return kq; /* readable once NOTE_EXIT is pending */
}

int mcpp__exit_reap(int exit_fd, int pid, siginfo_t *si) {
  return waitid(P_PID, (id_t)pid, si, WEXITED | WNOHANG);
}

mcpp_process_state mcpp__process_state_cpu(int pid, uint64_t *cpu_us) {
  /* Not read here yet (proc_pidinfo could): the busy check stays off. */
  *cpu_us = UINT64_MAX;
  return mcpp__process_state(pid);
}

mcpp_process_state mcpp__process_state(int pid) {
  int mib[4] = {CTL_KERN, KERN_PROC, KERN_PROC_PID, pid};
  struct kinfo_proc info;
  size_t len = sizeof info;
  memset(&info, 0, sizeof info);
  if (sysctl(mib, 4, &info, &len, NULL, 0) < 0) return MCPP_PROCESS_UNKNOWN;
  if (len == 0) return MCPP_PROCESS_EXITED; /* no such process */
  switch (info.kp_proc.p_stat) {
  case SSTOP:
    return MCPP_PROCESS_STOPPED;
  case SZOMB:
    return MCPP_PROCESS_EXITED;
  default:
    return MCPP_PROCESS_RUNNING;
  }
}
#endif
