/*
 * Host mode: the host's event loop runs our loop one non-blocking turn at
 * a time (mcpp_runtime_host_run) and runs its own commands inline; the
 * I/O thread parks outside the loop and watches (mcpp__watchdog_run),
 * taking a turn itself only while the host is stalled. Every turn,
 * whoever takes it, holds run_mu, so the loop has one owner at a time and
 * its state (line buffers, write queues, timers, the item queue) simply
 * carries over from one owner to the next: nothing to hand off, nothing
 * to reorder. docs/design.md has the whole protocol.
 */
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <uv.h>
#include <fcntl.h>
#ifdef __linux__
#include <sys/epoll.h>
#endif

#include "engine/internal.h"
#include "engine/test_hooks.h"
#include "internal.h"

/* The watchdog's alarm: a pipe it polls between looks, written to wake it
 * at once (detach, stop). A look is then one syscall: a condition
 * variable's timed wait cost two, as glibc re-locks the mutex after it as
 * contended (issue 21: the look is what Python pays past four syscalls a
 * ping). Opened before the watchdog first runs; without it (no fds left)
 * a look still sleeps its time, and a wake waits for the next look. */
static void open_alarm(int fds[2]) {
#ifdef __linux__
  if (pipe2(fds, O_CLOEXEC | O_NONBLOCK) == 0) return;
#else
  if (pipe(fds) == 0) {
    for (int i = 0; i < 2; i++) {
      fcntl(fds[i], F_SETFD, FD_CLOEXEC);
      fcntl(fds[i], F_SETFL, O_NONBLOCK);
    }
    return;
  }
#endif
  fds[0] = fds[1] = -1;
}

void mcpp__wake_watchdog(mcpp_runtime *rt) {
  if (rt->wd_alarm[1] >= 0) {
    ssize_t n = write(rt->wd_alarm[1], "", 1);
    (void)n; /* full: a wake is pending already */
  }
}

/* Waits up to ms for the alarm (mu held, released meanwhile). */
static void watch_wait(mcpp_runtime *rt, uint32_t ms) {
  struct pollfd p = {rt->wd_alarm[0], POLLIN, 0};
  pthread_mutex_unlock(&rt->mu);
  if (poll(&p, p.fd >= 0 ? 1 : 0, (int)ms) > 0) {
    char drain[64];
    while (read(p.fd, drain, sizeof drain) > 0) {
    }
  }
  pthread_mutex_lock(&rt->mu);
}

/* Whether the loop has descriptor interest not yet given to the kernel:
 * libuv registers what a callback or command starts (a new pipe, a write
 * waiting for POLLOUT) at its next poll, so until a turn polls, the
 * backend descriptor cannot turn readable for it. The queue is in the
 * public uv_loop_t of every Unix libuv: empty when its first link points
 * at itself. */
static int watchers_pending(const uv_loop_t *loop) {
  void *const *q = (void *const *)&loop->watcher_queue;
  return q[0] != (const void *)q;
}

/* uv_backend_timeout, and 0 while interest waits for a turn to register
 * it. */
static int loop_timeout(uv_loop_t *loop) {
  return watchers_pending(loop) ? 0 : uv_backend_timeout(loop);
}

/* run_mu held, after a non-blocking turn or inline commands: what the
 * connections corked goes out now (the prepare phase that would write it
 * is over, or would wait for the next turn). */
static void flush_corks(mcpp_runtime *rt) {
  while (rt->corked) {
    rconn *r = rt->corked;
    rt->corked = r->next_corked;
    r->corked = 0;
    if (r->conn) mcpp__conn_flush(r->conn);
  }
}

/* ------------------------------------------- host mode: host-owned fds
 *
 * With watch_fd (MCPP_HOST_OPTIONS_V2) a ping costs the host no turn of
 * our loop: the host polls each connection's stdout itself and reads it
 * (mcpp_runtime_host_read), so our loop's descriptor stays quiet and no
 * nested epoll_wait runs. Who reads a connection is decided in one place
 * (the driver's sync_out): uv while the runtime's thread owns the reads,
 * the host while rt->host_owns; switching is done under run_mu by the
 * loop's owner, and both read into the connection's one line buffer, so
 * a partial line split across a host read and a watchdog read arrives
 * whole and in order. The watchdog sees data the host left waiting
 * through wd_ep, an epoll set of the same fds. What the host watches is
 * reconciled at the end of each of its calls: connections whose reading
 * may have changed are on rt->hw_dirty; watch_fd runs after run_mu is
 * released. */

static void hw_read_changed(mcpp_conn *c, void *ud) {
  (void)c;
  rconn *r = ud;
  mcpp_runtime *rt = r->rt;
  if (!rt->hfd || r->hw_dirty) return;
  r->hw_dirty = 1;
  r->next_dirty = rt->hw_dirty;
  rt->hw_dirty = r;
}

/* run_mu held: a new server's connection, read by whoever owns reads. */
void mcpp__hw_adopt(mcpp_runtime *rt, mcpp_conn *c) {
  mcpp__conn_set_read_hook(c, hw_read_changed);
  if (rt->host_owns) mcpp__conn_set_host_reads(c, 1);
}

/* run_mu held: the entry stops being watched; the host's next call
 * tells the host and closes its fd. */
static void hw_retire(mcpp_runtime *rt, hwatch *e) {
  if (e->r && e->r->hw == e) e->r->hw = NULL;
  e->r = NULL;
  e->conn = NULL;
  e->next_dead = rt->hw_dead;
  rt->hw_dead = e;
}

/* run_mu held: r is being freed. */
void mcpp__hw_forget(mcpp_runtime *rt, rconn *r) {
  if (r->hw) hw_retire(rt, r->hw);
  if (!r->hw_dirty) return;
  for (rconn **p = &rt->hw_dirty; *p; p = &(*p)->next_dirty) {
    if (*p == r) {
      *p = r->next_dirty;
      break;
    }
  }
  r->hw_dirty = 0;
}

/* run_mu held: who reads every connection now. */
void mcpp__hw_set_owner(mcpp_runtime *rt, int host) {
  if (!rt->hfd || rt->host_owns == host) return;
  rt->host_owns = host;
  for (rconn *r = rt->conns; r; r = r->next)
    if (r->conn) mcpp__conn_set_host_reads(r->conn, host);
}

#ifdef __linux__
static int hw_open_set(void) { return epoll_create1(EPOLL_CLOEXEC); }

static void hw_set_add(mcpp_runtime *rt, int fd) {
  struct epoll_event ev = {.events = EPOLLIN, .data = {.fd = fd}};
  epoll_ctl(rt->wd_ep, EPOLL_CTL_ADD, fd, &ev);
}

static void hw_set_del(mcpp_runtime *rt, int fd) {
  struct epoll_event ev = {0};
  epoll_ctl(rt->wd_ep, EPOLL_CTL_DEL, fd, &ev);
}

static int hw_dup(int fd) { return fcntl(fd, F_DUPFD_CLOEXEC, 0); }
#else
/* Elsewhere the host watches our loop's descriptor only (V1). */
static int hw_open_set(void) { return -1; }
static void hw_set_add(mcpp_runtime *rt, int fd) { (void)rt, (void)fd; }
static void hw_set_del(mcpp_runtime *rt, int fd) { (void)rt, (void)fd; }
static int hw_dup(int fd) { (void)fd; return -1; }
#endif

/* run_mu held: the entry leaves the tables for the host's off list. */
static void hw_unlist(mcpp_runtime *rt, hwatch *e) {
  if (e->fd < rt->hw_cap && rt->hw_by_fd[e->fd] == e) rt->hw_by_fd[e->fd] = NULL;
  hw_set_del(rt, e->fd);
  e->next = rt->hw_off;
  rt->hw_off = e;
}

/* run_mu held, host thread: a new entry for r watching src. */
static void hw_watch(mcpp_runtime *rt, rconn *r, int src) {
  hwatch *e = rt_malloc(rt, sizeof *e);
  int fd = e ? hw_dup(src) : -1;
  if (fd >= rt->hw_cap) {
    int cap = rt->hw_cap ? rt->hw_cap : 64;
    while (cap <= fd) cap *= 2;
    hwatch **t = rt_malloc(rt, sizeof *t * (size_t)cap);
    if (t) {
      memset(t, 0, sizeof *t * (size_t)cap);
      if (rt->hw_cap) memcpy(t, rt->hw_by_fd, sizeof *t * (size_t)rt->hw_cap);
      rt_free(rt, rt->hw_by_fd);
      rt->hw_by_fd = t;
      rt->hw_cap = cap;
    }
  }
  if (fd < 0 || fd >= rt->hw_cap) {
    /* No fd or memory: uv reads this one, as in a takeover. */
    if (fd >= 0) close(fd);
    rt_free(rt, e);
    mcpp__conn_set_host_reads(r->conn, 0);
    return;
  }
  e->fd = fd;
  e->src = src;
  e->conn = r->conn;
  e->r = r;
  e->on = 0;
  rt->hw_by_fd[fd] = e;
  hw_set_add(rt, fd);
  r->hw = e;
  e->next = rt->hw_on;
  rt->hw_on = e;
}

/* run_mu held, host thread, at the end of each of its calls: what the
 * host must watch now. */
static void hw_reconcile(mcpp_runtime *rt) {
  while (rt->hw_dead) {
    hwatch *e = rt->hw_dead;
    rt->hw_dead = e->next_dead;
    hw_unlist(rt, e);
  }
  while (rt->hw_dirty) {
    rconn *r = rt->hw_dirty;
    rt->hw_dirty = r->next_dirty;
    r->hw_dirty = 0;
    int want = r->conn && rt->host_owns ? mcpp__conn_host_fd(r->conn) : -1;
    hwatch *e = r->hw;
    if (e && (want < 0 || e->conn != r->conn || e->src != want)) {
      r->hw = NULL;
      e->r = NULL;
      e->conn = NULL;
      hw_unlist(rt, e);
      e = NULL;
    }
    if (want >= 0 && !e) hw_watch(rt, r, want);
  }
}

/* Host thread, run_mu released: tells the host. Off first: a new fd may
 * reuse no number the host still watches (ours stay open until then). */
static void hw_apply(mcpp_runtime *rt) {
  while (rt->hw_off) {
    hwatch *e = rt->hw_off;
    rt->hw_off = e->next;
    if (e->on) rt->watch_fd(rt->watch_ctx, e->fd, 0);
    close(e->fd);
    rt_free(rt, e);
  }
  while (rt->hw_on) {
    hwatch *e = rt->hw_on;
    rt->hw_on = e->next;
    e->next = NULL;
    e->on = 1;
    rt->watch_fd(rt->watch_ctx, e->fd, 1);
  }
}

/* At the free or in a forked child: every entry goes, with no call to
 * the host (it stopped watching, or is the parent's). */
void mcpp__hw_drop_all(mcpp_runtime *rt) {
  rt->host_owns = 0;
  hw_reconcile(rt); /* the dead ones join the off list, nothing new */
  for (int fd = 0; fd < rt->hw_cap; fd++) {
    hwatch *e = rt->hw_by_fd[fd];
    if (!e) continue;
    if (e->r && e->r->hw == e) e->r->hw = NULL;
    close(e->fd);
    rt_free(rt, e);
  }
  while (rt->hw_off) {
    hwatch *e = rt->hw_off;
    rt->hw_off = e->next;
    close(e->fd);
    rt_free(rt, e);
  }
  rt_free(rt, rt->hw_by_fd);
  rt->hw_by_fd = NULL;
  rt->hw_cap = 0;
  rt->hw_on = NULL; /* every one was in the table */
  if (rt->wd_ep >= 0) close(rt->wd_ep);
  rt->wd_ep = -1;
  for (int i = 0; i < 2; i++) {
    if (rt->wd_alarm[i] >= 0) close(rt->wd_alarm[i]);
    rt->wd_alarm[i] = -1;
  }
  rt->hfd = 0;
}

static int watching(mcpp_runtime *rt) {
  return atomic_load(&rt->mode) == MCPP_MODE_HOST && !rt->stop_requested;
}

/* run_mu held: is there work for the loop right now (a descriptor ready,
 * a command queued, a timer due, a callback pending)? */
static int work_waiting(mcpp_runtime *rt) {
  /* Frames a corked host left unwritten (mcpp_runtime_host_cork). */
  if (rt->corked) return 1;
  /* And data waiting on a host-owned connection's stdout (wd_ep). */
  struct pollfd p[2] = {{uv_backend_fd(rt->loop), POLLIN, 0},
                        {rt->wd_ep, POLLIN, 0}};
  if (poll(p, atomic_load(&rt->hfd) ? 2 : 1, 0) > 0) return 1;
  int t = loop_timeout(rt->loop);
  /* uv_now is the loop's clock as of its last turn. */
  return t >= 0 && uv_now(rt->loop) + (uint64_t)t <= uv_hrtime() / 1000000;
}

/* run_mu held: the host left work waiting for stall_ms. Runs the loop
 * here, a non-blocking turn at a time, handing the host its items through
 * notify as in thread mode, until the host calls in again (any
 * mcpp_runtime_host_run or inline command) or host mode ends. Returns with
 * run_mu held. */
static void take_over(mcpp_runtime *rt, uint32_t tick_ms) {
  atomic_fetch_add(&rt->takeovers, 1);
  /* uv reads every connection until the host's next call takes them back. */
  mcpp__hw_set_owner(rt, 0);
  uint64_t turns = atomic_load(&rt->host_turns);
  for (;;) {
    rt->runner = RUN_WATCHDOG;
    uv_run(rt->loop, UV_RUN_NOWAIT);
    flush_corks(rt);
    rt->runner = RUN_NONE;
    int t = loop_timeout(rt->loop);
    struct pollfd p = {uv_backend_fd(rt->loop), POLLIN, 0};
    pthread_mutex_unlock(&rt->run_mu);
    /* notify never runs under run_mu: the host may wait */
    mcpp__rt_flush_wake(rt);
    pthread_mutex_lock(&rt->mu);
    int go_on = watching(rt);
    pthread_mutex_unlock(&rt->mu);
    if (!go_on || atomic_load(&rt->host_turns) != turns) break;
    poll(&p, 1, t < 0 || (uint32_t)t > tick_ms ? (int)tick_ms : t);
    pthread_mutex_lock(&rt->run_mu);
  }
  /* The host is back: one wake, so it runs a turn and re-arms its timer
   * for what the loop needs now. */
  if (rt->notify) rt->notify(rt->notify_data);
  pthread_mutex_lock(&rt->run_mu);
}

/* How long an idle watchdog sleeps at most between looks, when the loop
 * has no timer: a bound on anything that changes without touching the
 * loop's descriptor. */
#define IDLE_POLL_MAX_MS 1000

/* The I/O thread in host mode: every half stall it looks whether the host
 * called in; if not, and work has waited a whole stall, it takes over.
 * While nothing happens at all (no host turn and no work for a whole
 * tick) it stops ticking and sleeps in poll() on the loop's descriptor
 * until something arrives or the next timer is due, so an idle process
 * (keepalive rounds 100 ms apart) wakes it a few times a round, not every
 * tick; a host that turns keeps it ticking without any poll. */
void mcpp__watchdog_run(mcpp_runtime *rt) {
  uint64_t seen = atomic_load(&rt->host_turns), waiting_since = 0;
  int idle_ms = -1; /* >= 0: sleep in poll for that long, then tick again */
  pthread_mutex_lock(&rt->mu);
  while (watching(rt)) {
    uint32_t stall = rt->stall_ms, tick = stall / 2 ? stall / 2 : 1;
    if (idle_ms >= 0) {
      struct pollfd p[2] = {{uv_backend_fd(rt->loop), POLLIN, 0},
                            {rt->wd_ep, POLLIN, 0}};
      int n = atomic_load(&rt->hfd) ? 2 : 1;
      pthread_mutex_unlock(&rt->mu);
      poll(p, (nfds_t)n, idle_ms);
      MCPP__HOOK_WATCHDOG_IDLE(0);
      atomic_store(&rt->wd_idle_until, 0);
      pthread_mutex_lock(&rt->mu);
      idle_ms = -1;
    } else {
      watch_wait(rt, tick);
    }
    MCPP__HOOK_WATCHDOG_WAKE();
    if (!watching(rt)) break;
    pthread_mutex_unlock(&rt->mu);
    uint64_t turns = atomic_load(&rt->host_turns);
    if (turns != seen) {
      seen = turns;
      waiting_since = 0;
    } else if (pthread_mutex_trylock(&rt->run_mu) == 0) {
      uint64_t now = uv_hrtime();
      if (!work_waiting(rt)) {
        /* A whole tick without a turn or work: idle until the descriptor
         * turns readable or the next timer is due (uv_now is as of the
         * loop's last turn). */
        int t = loop_timeout(rt->loop);
        int64_t left = t < 0 ? IDLE_POLL_MAX_MS
                             : (int64_t)(uv_now(rt->loop) + (uint64_t)t) - (int64_t)(now / 1000000);
        idle_ms = left < 0 ? 0 : left > IDLE_POLL_MAX_MS ? IDLE_POLL_MAX_MS : (int)left;
        atomic_store(&rt->wd_idle_until, now / 1000000 + (uint64_t)idle_ms);
        MCPP__HOOK_WATCHDOG_IDLE(1);
        waiting_since = 0;
      } else if (!waiting_since) {
        waiting_since = now;
      } else if (now - waiting_since >= (uint64_t)stall * 1000000) {
        take_over(rt, tick);
        seen = atomic_load(&rt->host_turns);
        waiting_since = 0;
      }
      pthread_mutex_unlock(&rt->run_mu);
    }
    pthread_mutex_lock(&rt->mu);
  }
  pthread_mutex_unlock(&rt->mu);
}

/* run_mu held, on the host thread, after its own turn: what was queued is
 * the host's to drain now (it drains after mcpp_runtime_host_run), so
 * nothing notifies. Returns the ms until the loop needs a turn (-1: only
 * when the descriptor is readable). */
static int64_t host_settle(mcpp_runtime *rt) {
  pthread_mutex_lock(&rt->mu);
  if (rt->wake_due) {
    rt->wake_due = 0;
    rt->notified = 1; /* the host drains next */
  }
  pthread_mutex_unlock(&rt->mu);
  return loop_timeout(rt->loop);
}

/* run_mu held, on the host thread, after inline work: if the loop now
 * needs a turn sooner than the host was told, mcpp_runtime_host_rearm says
 * when. */
/* run_mu held, host thread, t the loop's timeout now: a timer the host
 * moved earlier than the idle watchdog's next look (a keepalive armed by
 * the handshake's answer, read by the host) would otherwise go unseen for
 * up to IDLE_POLL_MAX_MS if the host then blocks. The async makes the
 * loop's descriptor readable: the watchdog looks again (rare: keepalive
 * re-arms lazily, later, never earlier per message). */
static void wake_idle_watchdog(mcpp_runtime *rt, int64_t t) {
  uint64_t until = atomic_load(&rt->wd_idle_until);
  if (!until || t < 0 || uv_now(rt->loop) + (uint64_t)t >= until) return;
  atomic_store(&rt->wd_idle_until, 0);
  MCPP__HOOK_IDLE_WATCHDOG_WOKEN();
  uv_async_send(&rt->async);
}

static void note_rearm(mcpp_runtime *rt) {
  int t = loop_timeout(rt->loop);
  wake_idle_watchdog(rt, t);
  if (t >= 0) {
    uint64_t due = uv_now(rt->loop) + (uint64_t)t;
    if (due < rt->told_due) {
      rt->told_due = due;
      rt->rearm_ms = t;
    }
  }
}

/* Host thread: runs the queued commands now, after the watchdog's turn if
 * it is in one (microseconds: it never waits for anything under run_mu).
 * Items they queue (a ping that could not start, a close) wake the host
 * through notify, as the watchdog's do: a command returns to the
 * application, which drains only when told. Returns 0 if host mode ended
 * meanwhile (the async wakes the thread). */
int mcpp__host_run_inline(mcpp_runtime *rt) {
  pthread_mutex_lock(&rt->run_mu);
  if (atomic_load(&rt->mode) != MCPP_MODE_HOST) {
    pthread_mutex_unlock(&rt->run_mu);
    return 0;
  }
  rt->runner = RUN_HOST;
  uv_update_time(rt->loop);
  mcpp__hw_set_owner(rt, 1);
  mcpp__rt_run_commands(rt);
  if (!rt->host_cork) flush_corks(rt);
  rt->runner = RUN_NONE;
  note_rearm(rt);
  hw_reconcile(rt);
  pthread_mutex_unlock(&rt->run_mu);
  hw_apply(rt);
  mcpp__rt_flush_wake(rt);
  atomic_fetch_add(&rt->host_turns, 1);
  atomic_fetch_add(&rt->inline_commands, 1);
  return 1;
}

int mcpp_runtime_host_cork(mcpp_runtime *rt, int on) {
  if (!rt || !pthread_equal(rt->host_thread, pthread_self()))
    return MCPP_ERR_INVALID_ARGUMENT;
  rt->host_cork = on != 0;
  if (on) return 0;
  pthread_mutex_lock(&rt->run_mu);
  /* In thread mode the I/O thread's prepare phase writes what is left. */
  if (atomic_load(&rt->mode) == MCPP_MODE_HOST && rt->corked) {
    rt->runner = RUN_HOST;
    uv_update_time(rt->loop);
    flush_corks(rt);
    rt->runner = RUN_NONE;
    note_rearm(rt);
    hw_reconcile(rt);
  }
  pthread_mutex_unlock(&rt->run_mu);
  hw_apply(rt);
  /* a write that failed may have closed a connection */
  mcpp__rt_flush_wake(rt);
  return 0;
}

/* Why host mode is refused here, or NULL. */
static const char *host_mode_refused(void) {
  const char *env = getenv("MCPPING_HOST_MODE");
  if (env && strcmp(env, "0") == 0)
    return "thread mode: MCPPING_HOST_MODE=0 is set";
  struct sigaction sa;
  sigset_t mask;
  if (sigaction(SIGPIPE, NULL, &sa) == 0 && sa.sa_handler == SIG_DFL &&
      pthread_sigmask(SIG_SETMASK, NULL, &mask) == 0 &&
      !sigismember(&mask, SIGPIPE))
    return "thread mode: SIGPIPE has its default action on the host thread "
           "(a write to a server that closed its stdin would kill the "
           "process)";
  return NULL;
}

int mcpp_runtime_host_attach(mcpp_runtime *rt, const mcpp_host_options *options,
                             int *fd) {
  if (!rt || !fd ||
      (!MCPP__KNOWN_VERSION(options, MCPP_HOST_OPTIONS_V1) &&
       options->version != MCPP_HOST_OPTIONS_V2))
    return MCPP_ERR_INVALID_ARGUMENT;
  void (*watch_fd)(void *, int, int) =
      options && options->version == MCPP_HOST_OPTIONS_V2 ? options->watch_fd
                                                         : NULL;
  uint32_t stall = options && options->stall_ms ? options->stall_ms
                                                : MCPP_HOST_STALL_MS;
  if (stall > 10000) return MCPP_ERR_INVALID_ARGUMENT;
  const char *refused = host_mode_refused();
  pthread_mutex_lock(&rt->mu);
  int rc = 0, became_host = 0;
  if (rt->stop_requested) {
    rc = MCPP_ERR_CLOSED;
  } else if (atomic_load(&rt->mode) == MCPP_MODE_HOST) {
    if (!pthread_equal(rt->host_thread, pthread_self()))
      rc = MCPP_ERR_INVALID_ARGUMENT;
  } else if (refused) {
    snprintf(rt->why, sizeof rt->why, "%s", refused);
    rc = MCPP_ERR_UNSUPPORTED;
  } else if (!rt->started && (rc = mcpp__rt_start_locked(rt)) != 0) {
    /* rc says why */
  } else {
    rt->host_thread = pthread_self();
    rt->stall_ms = stall;
    rt->told_due = UINT64_MAX;
    rt->rearm_ms = -1;
    /* Made before the watchdog starts: it polls these unlocked. */
    if (watch_fd && rt->wd_ep < 0) rt->wd_ep = hw_open_set();
    if (rt->wd_alarm[0] < 0) open_alarm(rt->wd_alarm);
    atomic_store(&rt->mode, MCPP_MODE_HOST);
    became_host = 1;
    snprintf(rt->why, sizeof rt->why, "%s",
             "host mode: the host's event loop runs it");
    uv_async_send(&rt->async); /* the I/O thread leaves the loop */
    while (!rt->io_parked) pthread_cond_wait(&rt->cv, &rt->mu);
  }
  if (rc == 0) *fd = uv_backend_fd(rt->loop);
  pthread_mutex_unlock(&rt->mu);
  if (became_host && (watch_fd || atomic_load(&rt->hfd))) {
    /* The I/O thread has left the loop: only the watchdog may hold run_mu,
     * and the host owns the reads from its first call on. What an earlier
     * host (detached from another thread) watched is dropped: the new one
     * is told of every fd afresh, the old ones' 0 calls come to it too
     * (for fds it never saw). */
    pthread_mutex_lock(&rt->run_mu);
    mcpp__hw_set_owner(rt, 0);
    for (int i = 0; i < rt->hw_cap; i++)
      if (rt->hw_by_fd[i] && rt->hw_by_fd[i]->r) hw_retire(rt, rt->hw_by_fd[i]);
    while (rt->hw_dirty) {
      rconn *r = rt->hw_dirty;
      rt->hw_dirty = r->next_dirty;
      r->hw_dirty = 0;
    }
    int on = watch_fd && rt->wd_ep >= 0;
    if (on) {
      rt->watch_fd = watch_fd;
      rt->watch_ctx = options->watch_ctx;
    }
    atomic_store(&rt->hfd, on);
    pthread_mutex_unlock(&rt->run_mu);
  }
  return rc;
}

/* The host's own call (a turn or a read) begins: counted first, so a
 * watchdog in a takeover sees it and hands back, then run_mu, and the host
 * owns the reads again. Returns 0 with run_mu held, or
 * MCPP_ERR_INVALID_ARGUMENT (not the host thread, not in host mode). */
static int host_begin(mcpp_runtime *rt, int64_t *wake_ms) {
  if (wake_ms) *wake_ms = -1;
  if (!rt || !wake_ms || atomic_load(&rt->mode) != MCPP_MODE_HOST ||
      !pthread_equal(rt->host_thread, pthread_self()))
    return MCPP_ERR_INVALID_ARGUMENT;
  atomic_fetch_add(&rt->host_turns, 1);
  pthread_mutex_lock(&rt->run_mu);
  if (atomic_load(&rt->mode) != MCPP_MODE_HOST) {
    pthread_mutex_unlock(&rt->run_mu);
    return MCPP_ERR_INVALID_ARGUMENT;
  }
  rt->runner = RUN_HOST;
  mcpp__hw_set_owner(rt, 1);
  return 0;
}

/* run_mu held, on the host thread, at the end of its own turn or read:
 * writes what was corked, releases run_mu, then tells the host what to
 * watch. Returns *wake_ms. */
static int64_t host_end(mcpp_runtime *rt) {
  flush_corks(rt);
  rt->runner = RUN_NONE;
  int64_t t = host_settle(rt);
  rt->told_due = t < 0 ? UINT64_MAX : uv_now(rt->loop) + (uint64_t)t;
  rt->rearm_ms = -1;
  wake_idle_watchdog(rt, t);
  hw_reconcile(rt);
  pthread_mutex_unlock(&rt->run_mu);
  hw_apply(rt);
  return t;
}

int mcpp_runtime_host_run(mcpp_runtime *rt, int64_t *wake_ms) {
  int rc = host_begin(rt, wake_ms);
  if (rc) return rc;
  uv_run(rt->loop, UV_RUN_NOWAIT);
  *wake_ms = host_end(rt);
  return 0;
}

int mcpp_runtime_host_read(mcpp_runtime *rt, int fd, int64_t *wake_ms) {
  int rc = host_begin(rt, wake_ms);
  if (rc) return rc;
  uv_update_time(rt->loop);
  hwatch *e = fd >= 0 && fd < rt->hw_cap ? rt->hw_by_fd[fd] : NULL;
  /* Read only what is still ours to read: a connection paused, at EOF or
   * replaced meanwhile is dropped by host_end's reconcile instead. */
  if (e && e->r && e->conn && e->r->conn == e->conn &&
      mcpp__conn_host_fd(e->conn) == e->src &&
      mcpp__conn_host_read(e->conn))
    atomic_fetch_add(&rt->host_reads, 1);
  *wake_ms = host_end(rt);
  return 0;
}

uint64_t mcpp_runtime_host_reads(mcpp_runtime *rt) {
  return rt ? atomic_load(&rt->host_reads) : 0;
}

int64_t mcpp_runtime_host_rearm(mcpp_runtime *rt) {
  if (!rt || atomic_load(&rt->mode) != MCPP_MODE_HOST ||
      !pthread_equal(rt->host_thread, pthread_self()))
    return -1;
  int64_t ms = rt->rearm_ms;
  rt->rearm_ms = -1;
  return ms;
}

/* Host thread, host mode, run_mu free: the host stops watching every fd
 * (watch_fd(fd, 0)) and uv reads every connection again. */
static void hw_detach(mcpp_runtime *rt) {
  pthread_mutex_lock(&rt->run_mu);
  mcpp__hw_set_owner(rt, 0);
  atomic_store(&rt->hfd, 0);
  while (rt->hw_dirty) {
    rconn *r = rt->hw_dirty;
    rt->hw_dirty = r->next_dirty;
    r->hw_dirty = 0;
  }
  for (int fd = 0; fd < rt->hw_cap; fd++) {
    hwatch *e = rt->hw_by_fd[fd];
    if (e && e->r) hw_retire(rt, e);
  }
  hw_reconcile(rt);
  pthread_mutex_unlock(&rt->run_mu);
  hw_apply(rt);
}

int mcpp_runtime_host_detach(mcpp_runtime *rt) {
  if (!rt) return MCPP_ERR_INVALID_ARGUMENT;
  if (atomic_load(&rt->hfd) && atomic_load(&rt->mode) == MCPP_MODE_HOST &&
      pthread_equal(rt->host_thread, pthread_self()))
    hw_detach(rt);
  /* Not under run_mu: in thread mode the I/O thread holds it for good. A
   * host turn in progress ends normally; the I/O thread takes the loop
   * after it, and later host turns run nothing. */
  pthread_mutex_lock(&rt->mu);
  int rc = MCPP_ERR_INVALID_ARGUMENT, wake = 0;
  if (atomic_load(&rt->mode) == MCPP_MODE_HOST) {
    atomic_store(&rt->mode, MCPP_MODE_THREAD);
    snprintf(rt->why, sizeof rt->why, "%s",
             "thread mode: detached from the host's event loop");
    mcpp__wake_watchdog(rt);
    uv_async_send(&rt->async); /* and out of an idle watchdog's poll */
    /* A drain the last host turn promised may never come now: items
     * waiting are announced as thread mode announces them. */
    wake = rt->item_head != NULL;
    rt->notified = wake;
    rt->wake_due = 0;
    rc = 0;
  }
  pthread_mutex_unlock(&rt->mu);
  if (wake && rt->notify) rt->notify(rt->notify_data);
  return rc;
}

mcpp_mode mcpp_runtime_mode(mcpp_runtime *rt, char *why, size_t why_cap) {
  if (!rt) return MCPP_MODE_THREAD;
  pthread_mutex_lock(&rt->mu);
  mcpp_mode mode = (mcpp_mode)atomic_load(&rt->mode);
  if (why && why_cap) snprintf(why, why_cap, "%s", rt->why);
  pthread_mutex_unlock(&rt->mu);
  return mode;
}

void mcpp_runtime_host_stats(mcpp_runtime *rt, mcpp_host_stats *stats) {
  if (!stats) return;
  memset(stats, 0, sizeof *stats);
  if (!rt) return;
  stats->takeovers = atomic_load(&rt->takeovers);
  stats->host_turns = atomic_load(&rt->host_turns);
  stats->inline_commands = atomic_load(&rt->inline_commands);
}

void mcpp__host_init(mcpp_runtime *rt) {
  pthread_mutex_init(&rt->run_mu, NULL);
  atomic_store(&rt->mode, MCPP_MODE_THREAD);
  rt->runner = RUN_NONE;
  rt->io_parked = 0;
  rt->corked = NULL;
  rt->told_due = UINT64_MAX;
  rt->rearm_ms = -1;
  rt->host_cork = 0;
  atomic_store(&rt->hfd, 0);
  rt->host_owns = 0;
  rt->wd_ep = -1;
  rt->wd_alarm[0] = rt->wd_alarm[1] = -1;
  snprintf(rt->why, sizeof rt->why, "%s",
           "not attached to the host's event loop");
}
