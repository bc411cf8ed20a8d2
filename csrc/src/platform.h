/*
 * The platform layer: the few calls the driver needs that POSIX leaves out
 * or that each kernel does its own way. platform_linux.c implements them
 * with pidfds, /proc and the glibc extras; platform_darwin.c with kqueue's
 * EVFILT_PROC, sysctl and posix_spawn's macOS flags. Each file compiles to
 * nothing on the other system, so every build lists both (sources.txt).
 */
#ifndef MCPP_PLATFORM_H
#define MCPP_PLATFORM_H

#include <signal.h>
#include <spawn.h>

#include "mcpping.h"

/* pipe(2) with both ends close-on-exec. Returns 0 or -1 with errno. */
int mcpp__pipe_cloexec(int fds[2]);

/* socketpair(AF_UNIX, SOCK_STREAM) with both ends close-on-exec. */
int mcpp__socketpair_cloexec(int sv[2]);

/* Makes a spawn close every fd of the parent above stdio that no file
 * action names (a pipe someone waits on for EOF must not live on in the
 * child): a closefrom action (glibc 2.34+) or a spawn flag (macOS) added to
 * *flags. Where neither exists close-on-exec is all there is. Returns 0 or
 * a positive errno, as posix_spawn's calls do. */
int mcpp__spawn_close_others(posix_spawn_file_actions_t *fa, short *flags);

/* A pollable fd that turns readable when child `pid` exits: a pidfd on
 * Linux 5.3+, a kqueue watching EVFILT_PROC/NOTE_EXIT on macOS. Returns
 * the close-on-exec fd, or -1 with errno (the caller then polls waitid). */
int mcpp__exit_fd_open(int pid);

/* waitid(WEXITED | WNOHANG) for exactly our child `pid`, through exit_fd
 * where the kernel takes one (it then names the child even if the pid was
 * reused). Same returns as waitid. */
int mcpp__exit_reap(int exit_fd, int pid, siginfo_t *si);

/* The state of live child `pid` as the kernel reports it: RUNNING,
 * STOPPED, EXITED (a zombie, or gone) or UNKNOWN where it cannot tell. */
mcpp_process_state mcpp__process_state(int pid);

#endif
