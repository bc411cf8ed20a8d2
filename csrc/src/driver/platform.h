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

/* A spawn for mcpp__spawn_registered: the resolved program (as execvp would
 * find it), its argv and environment, the directory to start in (NULL: the
 * host's), the fds that become its stdin, stdout and stderr (-1: /dev/null;
 * all above 2, close-on-exec in the host), and the keeper's socket (-1:
 * none). */
typedef struct mcpp__spawn_req {
  const char *path;
  char *const *argv;
  char *const *envp;
  const char *cwd;
  int stdio[3];
  int keeper_fd;
} mcpp__spawn_req;

/* Starts req's program as proc.c's posix_spawn does (its own session,
 * every signal at its default disposition, an empty mask, no fd beyond its
 * stdio), but the child itself sends "+ PID" to the keeper before it
 * execs, so that no moment exists in which the server runs unknown to the
 * keeper (see proc.c). Returns 0 with *pid and *registered (1 if the line
 * was sent), a positive errno (exec's own failure included; nothing
 * runs, and *pid and *registered say what the keeper must forget), or
 * ENOSYS where there is no such spawn (the caller then uses posix_spawn). */
int mcpp__spawn_registered(const mcpp__spawn_req *req, int *pid,
                           int *registered);

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

/* The same, and the process's CPU time so far (user + system, µs) in
 * *cpu_us, from the same read; UINT64_MAX where the platform cannot tell. */
mcpp_process_state mcpp__process_state_cpu(int pid, uint64_t *cpu_us);

#endif
