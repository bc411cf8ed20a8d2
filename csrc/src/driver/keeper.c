/*
 * The keeper (see keeper.h). It is /bin/sh running the script below, not
 * a fork of the host: a forked copy of a large Python or Node host would
 * pin all of its memory copy-on-write for the host's whole life. The
 * shell forks the keeper proper into the background and exits, so the
 * keeper is nobody's child (no host child watcher or waitpid(-1) loop
 * ever sees it), and runs in its own session, away from the terminal's
 * signals.
 *
 * It reads "+ PGID" and "- PGID" lines. At EOF it sends SIGTERM (and
 * SIGCONT) to every group it still knows, waits up to half a second for
 * them to go, then sends SIGKILL: everything is gone within a second of
 * the host, including servers that ignore SIGTERM and stdin EOF, and
 * their children in the group.
 */
#include "keeper.h"
#include "platform.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

extern char **environ;

static const char script[] =
    "exec 3<&0 </dev/null\n"
    "(\n"
    "list=' '\n"
    "while read -r op pg <&3; do\n"
    "  case $op in\n"
    "  +) list=\"$list$pg \" ;;\n"
    "  -) case $list in *\" $pg \"*)\n"
    "       list=\"${list%% $pg *} ${list#* $pg }\" ;; esac ;;\n"
    "  esac\n"
    "done\n"
    "[ \"$list\" = ' ' ] && exit 0\n"
    "for pg in $list; do kill -TERM -$pg; kill -CONT -$pg; done\n"
    "n=0\n"
    "while [ $n -lt 5 ]; do\n"
    "  alive=\n"
    "  for pg in $list; do kill -0 -$pg && alive=1; done\n"
    "  [ -z \"$alive\" ] && exit 0\n"
    "  sleep 0.1 || break\n"
    "  n=$((n + 1))\n"
    "done\n"
    "for pg in $list; do kill -KILL -$pg; done\n"
    ") >/dev/null 2>&1 &\n";

static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static int keeper_fd = -1; /* our end; -1: none */
static int start_failed;   /* do not retry on every spawn */
static pid_t owner;        /* the process that started it */
static pthread_once_t atfork_once = PTHREAD_ONCE_INIT;

/* A forked child is a new host: it must not keep its parent's keeper
 * alive, and starts its own when it spawns. */
static void drop_parents_keeper(void) {
  if (keeper_fd >= 0) close(keeper_fd);
  keeper_fd = -1;
  start_failed = 0;
}

static void after_fork_child(void) {
  drop_parents_keeper();
  pthread_mutex_init(&mu, NULL); /* another thread may have held it */
}

static void register_atfork(void) {
  pthread_atfork(NULL, NULL, after_fork_child);
}

/* Moves fd above the stdio fds (a host may have closed its stdin), so that
 * dup2 onto 0 really happens and clears close-on-exec. */
static int above_stdio(int fd) {
  if (fd > 2) return fd;
  int moved = fcntl(fd, F_DUPFD_CLOEXEC, 3);
  close(fd);
  return moved;
}

static int start_locked(void) {
  int sv[2];
  if (mcpp__socketpair_cloexec(sv)) return -1;
  sv[0] = above_stdio(sv[0]);
  if (sv[0] < 0) {
    close(sv[1]);
    return -1;
  }
  posix_spawn_file_actions_t fa;
  posix_spawnattr_t at;
  posix_spawn_file_actions_init(&fa);
  posix_spawnattr_init(&at);
  posix_spawn_file_actions_adddup2(&fa, sv[0], 0);
  posix_spawn_file_actions_addopen(&fa, 1, "/dev/null", O_WRONLY, 0);
  posix_spawn_file_actions_addopen(&fa, 2, "/dev/null", O_WRONLY, 0);
  /* No fd of the host (a pipe someone waits on for EOF) lives on in it. */
  short flags = POSIX_SPAWN_SETSID | POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF;
  mcpp__spawn_close_others(&fa, &flags);
  sigset_t none, all;
  sigemptyset(&none);
  sigfillset(&all);
  posix_spawnattr_setsigmask(&at, &none);
  posix_spawnattr_setsigdefault(&at, &all);
  posix_spawnattr_setflags(&at, flags);
  char *argv[] = {"sh", "-c", (char *)script, MCPP__KEEPER_NAME, NULL};
  pid_t pid;
  int rc = posix_spawn(&pid, "/bin/sh", &fa, &at, argv, environ);
  posix_spawn_file_actions_destroy(&fa);
  posix_spawnattr_destroy(&at);
  close(sv[0]);
  if (rc) {
    close(sv[1]);
    return -1;
  }
  /* The shell only forks the keeper and exits: a bounded wait. ECHILD
   * (SIGCHLD ignored, a host's reaper was first) is as good. */
  while (waitpid(pid, NULL, 0) < 0 && errno == EINTR) {
  }
  /* Never block a spawn on the keeper: a message it cannot take now is
   * dropped (best effort). */
  fcntl(sv[1], F_SETFL, fcntl(sv[1], F_GETFL) | O_NONBLOCK);
  keeper_fd = sv[1];
  owner = getpid();
  pthread_once(&atfork_once, register_atfork);
  return 0;
}

static void tell(char op, int pgid) {
  char line[24];
  int n = snprintf(line, sizeof line, "%c %d\n", op, pgid);
  pthread_mutex_lock(&mu);
  if (keeper_fd >= 0 && owner != getpid()) drop_parents_keeper();
  if (keeper_fd < 0 && op == '+' && !start_failed && start_locked() < 0)
    start_failed = 1;
  /* MSG_NOSIGNAL: a keeper that was killed costs no SIGPIPE. */
  if (keeper_fd >= 0 && send(keeper_fd, line, (size_t)n, MSG_NOSIGNAL) < 0 &&
      errno == EPIPE) {
    close(keeper_fd);
    keeper_fd = -1;
  }
  pthread_mutex_unlock(&mu);
}

int mcpp__keeper_hold(void) {
  pthread_mutex_lock(&mu);
  if (keeper_fd >= 0 && owner != getpid()) drop_parents_keeper();
  if (keeper_fd < 0 && !start_failed && start_locked() < 0) start_failed = 1;
  return keeper_fd;
}

void mcpp__keeper_release(void) { pthread_mutex_unlock(&mu); }

int mcpp__keeper_ensure(void) {
  pthread_mutex_lock(&mu);
  if (keeper_fd >= 0 && owner != getpid()) drop_parents_keeper();
  int rc = keeper_fd >= 0 ? 0 : start_locked();
  pthread_mutex_unlock(&mu);
  return rc;
}

void mcpp__keeper_watch(int pgid) {
  if (pgid > 0) tell('+', pgid);
}

void mcpp__keeper_forget(int pgid) {
  if (pgid > 0) tell('-', pgid);
}
