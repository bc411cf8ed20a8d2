/*
 * Servers that outlive their connection (see orphans.h).
 */
#include "orphans.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "keeper.h"
#include "platform.h"

/* A server that was sent SIGKILL and still was not reaped when its
 * connection had to close (a process stuck in the kernel, D state, for
 * longer than the kill wait). Close returns all the same, so the watch
 * goes on here, apart from any loop: a loop is closed by its owner (the
 * host's, the runtime's, the wrap's) when its connections are, and must
 * close clean. One detached thread per process, alive only while there is
 * an orphan, waits on their exit fds (and, for a bound where there is no
 * exit fd or poll() cannot watch it, at least once a second), reaps each
 * exactly once, tells the keeper to forget it, and then exits. It never
 * delays the host's exit: process exit ends it. */
typedef struct orphan {
  struct orphan *next;
  int pid;
  int exit_fd; /* -1: waitid by pid on every turn */
} orphan;

enum { ORPHAN_POLL_MAX = 64, ORPHAN_TURN_MS = 1000 };

static pthread_mutex_t orphans_mu = PTHREAD_MUTEX_INITIALIZER;
static orphan *orphans;
static int reaper_running;
static int reaper_wake[2] = {-1, -1}; /* new orphans wake the thread */
static pthread_once_t orphans_atfork_once = PTHREAD_ONCE_INIT;

/* The parent's orphans are not a forked child's children. */
static void orphans_after_fork_child(void) {
  pthread_mutex_init(&orphans_mu, NULL); /* another thread may have held it */
  for (orphan *o = orphans, *next; o; o = next) {
    next = o->next;
    if (o->exit_fd >= 0) close(o->exit_fd);
    free(o);
  }
  orphans = NULL;
  reaper_running = 0;
  for (int i = 0; i < 2; i++) {
    if (reaper_wake[i] >= 0) close(reaper_wake[i]);
    reaper_wake[i] = -1;
  }
}

static void orphans_register_atfork(void) {
  pthread_atfork(NULL, NULL, orphans_after_fork_child);
}

/* Reaps what exited; returns the pids reaped into gone (at most cap).
 * Called with orphans_mu held. */
static int reap_orphans_locked(int *gone, int cap) {
  int n = 0;
  for (orphan **pp = &orphans; *pp && n < cap;) {
    orphan *o = *pp;
    siginfo_t si;
    memset(&si, 0, sizeof si);
    int rc = mcpp__exit_reap(o->exit_fd, o->pid, &si);
    if ((rc == 0 && si.si_pid == 0) || (rc < 0 && errno == EINTR)) {
      pp = &o->next;
      continue;
    }
    /* Reaped, or ECHILD: someone else reaped it. Gone either way. */
    *pp = o->next;
    if (o->exit_fd >= 0) close(o->exit_fd);
    gone[n++] = o->pid;
    free(o);
  }
  return n;
}

static void *reaper_main(void *arg) {
  struct pollfd fds[ORPHAN_POLL_MAX + 1];
  int gone[ORPHAN_POLL_MAX];
  pthread_mutex_lock(&orphans_mu);
  for (;;) {
    int n_gone = reap_orphans_locked(gone, ORPHAN_POLL_MAX);
    if (n_gone) {
      pthread_mutex_unlock(&orphans_mu);
      for (int i = 0; i < n_gone; i++) mcpp__keeper_forget(gone[i]);
      pthread_mutex_lock(&orphans_mu);
      continue; /* there may be more than one turn's worth */
    }
    if (!orphans) break;
    int n = 0;
    fds[n++] = (struct pollfd){reaper_wake[0], POLLIN, 0};
    for (orphan *o = orphans; o && n <= ORPHAN_POLL_MAX; o = o->next)
      if (o->exit_fd >= 0) fds[n++] = (struct pollfd){o->exit_fd, POLLIN, 0};
    pthread_mutex_unlock(&orphans_mu);
    /* Exit fds close only on this thread, so the set stays valid. */
    if (poll(fds, (nfds_t)n, ORPHAN_TURN_MS) > 0 && (fds[0].revents & POLLIN)) {
      char drain[64];
      while (read(reaper_wake[0], drain, sizeof drain) > 0) {
      }
    }
    pthread_mutex_lock(&orphans_mu);
  }
  /* Nothing left to watch: the thread and its wake pipe go. */
  for (int i = 0; i < 2; i++) {
    close(reaper_wake[i]);
    reaper_wake[i] = -1;
  }
  reaper_running = 0;
  pthread_mutex_unlock(&orphans_mu);
  return NULL;
}

/* Starts the reaper thread with every asynchronous signal blocked (the
 * host's handlers keep running on its own threads). Called with
 * orphans_mu held. Returns 0 or -1. */
static int start_reaper_locked(void) {
  if (mcpp__pipe_cloexec(reaper_wake)) return -1;
  fcntl(reaper_wake[0], F_SETFL, fcntl(reaper_wake[0], F_GETFL) | O_NONBLOCK);
  fcntl(reaper_wake[1], F_SETFL, fcntl(reaper_wake[1], F_GETFL) | O_NONBLOCK);
  pthread_attr_t attr;
  pthread_attr_init(&attr);
  pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
  sigset_t all, old;
  sigfillset(&all);
  pthread_sigmask(SIG_SETMASK, &all, &old);
  pthread_t t;
  int rc = pthread_create(&t, &attr, reaper_main, NULL);
  pthread_sigmask(SIG_SETMASK, &old, NULL);
  pthread_attr_destroy(&attr);
  if (rc) {
    for (int i = 0; i < 2; i++) {
      close(reaper_wake[i]);
      reaper_wake[i] = -1;
    }
    return -1;
  }
  reaper_running = 1;
  return 0;
}

int mcpp__orphan_adopt(int pid, int exit_fd) {
  pthread_once(&orphans_atfork_once, orphans_register_atfork);
  orphan *o = malloc(sizeof *o);
  if (!o) return -1;
  o->pid = pid;
  o->exit_fd = exit_fd;
  pthread_mutex_lock(&orphans_mu);
  if (!reaper_running && start_reaper_locked() < 0) {
    pthread_mutex_unlock(&orphans_mu);
    free(o);
    return -1;
  }
  o->next = orphans;
  orphans = o;
  ssize_t w = write(reaper_wake[1], "", 1); /* full: a wake-up is pending */
  (void)w;
  pthread_mutex_unlock(&orphans_mu);
  return 0;
}

int mcpp__orphans(void) {
  pthread_mutex_lock(&orphans_mu);
  int n = reaper_running;
  for (orphan *o = orphans; o; o = o->next) n++;
  pthread_mutex_unlock(&orphans_mu);
  return n;
}
