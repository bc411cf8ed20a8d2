/*
 * The runtime: one I/O thread with its own uv loop serving every
 * connection of the process. Host threads queue commands under the mutex
 * and wake the loop with a uv_async_t; the I/O thread turns driver
 * callbacks into items, queued under the same mutex, and calls notify once
 * the turn of its loop that made the queue non-empty is over, so the host
 * drains a whole batch at once (one engine call wakes it at most once).
 *
 * What the host reads (info, healthy) is a snapshot the I/O thread
 * refreshes after every engine call, timer runs included; healthy is
 * computed at read time from the snapshot's healthy_until, so a request
 * passing its limit shows at once. Memory is bounded per connection by
 * max_pending_bytes: the items a connection holds for the host (queued,
 * or drained and not yet freed or released) stop its reading at the cap
 * and resume it below half; outbound bytes not yet written refuse sends
 * (WOULD_BLOCK) until a WRITABLE item.
 */
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <uv.h>
#ifdef __linux__
#include <fcntl.h>
#include <sys/epoll.h>
#endif

#include "driver/driver.h"
#include "engine/deadlines.h"
#include "engine/internal.h"
#include "engine/metrics_tally_internal.h"
#include "item.h"
#include "mcpping.h"
#include "engine/record.h"
#include "engine/scan.h"
#include "engine/test_hooks.h"

enum { DEFAULT_MAX_PENDING_BYTES = 16 * 1024 * 1024 };

typedef enum cmd_type {
  CMD_SPAWN,
  CMD_SEND,
  CMD_CANCEL_REQUEST,
  CMD_PING,
  CMD_CANCEL_PING,
  CMD_CLOSE
} cmd_type;

typedef struct cmd {
  struct cmd *next;
  cmd_type type;
  uint64_t conn_id;
  /* CMD_SPAWN: lives on the waiting caller's stack. */
  const mcpp_settings *settings;
  const mcpp_spawn_options *options;
  void *conn_user_data;
  char *errbuf;
  size_t errbuf_len;
  int os_error; /* CMD_SPAWN: mcpp__conn_spawn_os_error, read where it ran */
  int result;
  int done;
  /* CMD_PING, CMD_CANCEL_PING; CMD_SEND: the request's timeout */
  uint32_t timeout_ms;
  uint64_t token;
  /* CMD_SEND held between two servers: when its request expires (µs,
   * uv_hrtime's clock); 0: never. */
  uint64_t deadline;
  /* CMD_SEND: the frame; CMD_CANCEL_REQUEST: the raw id */
  size_t len;
  char data[];
} cmd;

typedef struct token_pair {
  uint64_t seq, token;
} token_pair;

/* Guards every mcpp_rtt_stats a runtime feeds (mcpp_runtime_rtt_lock). */
static pthread_mutex_t rtt_mu = PTHREAD_MUTEX_INITIALIZER;

typedef struct rconn {
  struct rconn *next;
  struct rconn *next_in_bucket; /* conn_index */
  struct mcpp_runtime *rt;
  uint64_t id;
  void *user_data;
  size_t cap; /* max_pending_bytes */
  /* Guarded by the mutex. */
  int closing;
  int pid;
  mcpp_engine_info info;
  uint64_t healthy_until; /* see mcpp_engine_healthy_until */
  size_t held;            /* bytes of this connection's items the host
                             has not freed or released (mcpp_item.charge) */
  int paused;             /* reading stopped for the host */
  size_t out_cmd_bytes;   /* sends queued to the I/O thread, not yet run */
  size_t out_wq_bytes;    /* the driver's write queue, as last seen */
  size_t writable_at;     /* WRITABLE once outbound bytes are this low;
                             SIZE_MAX: no send is waiting */
  /* What the engine learned of the session, for mcpp_runtime_session
   * (the info snapshot carries no strings): "version\0name\0" in one
   * block of its size; NULL while nothing is known. */
  char *session;
  /* I/O thread only. */
  mcpp_conn *conn;
  struct reconnect *rc; /* NULL unless settings.reconnect.enabled */
  /* Whether RECORD items are queued (mcpp_runtime_set_records): a host
   * with no sink for them gets none, and is not woken for them. Written
   * by the host, read here. */
  _Atomic int records;
  /* Whether PING events and keepalive PONG events are queued
   * (mcpp_runtime_set_ping_events); written by the host, read here. */
  _Atomic int ping_events;
  /* Fed every ping event (mcpp_runtime_feed_rtt_stats); under rtt_mu. */
  mcpp_rtt_stats *rtt;
  double rtt_unit;
  /* Counts every event (mcpp_runtime_set_metrics); under the tally's lock. */
  mcpp_metrics_cell *metrics;
  int pinging; /* inside mcpp_conn_ping for ping_token */
  /* On rt->corked: frames wait in its cork, to be written at the end of
   * this host or watchdog turn (flush_corks). */
  int corked;
  struct rconn *next_corked;
  uint64_t ping_token;
  token_pair *tokens;
  size_t n_tokens, cap_tokens;
  /* Host-owned reading (run_mu): the fd the host watches for this
   * connection, and whether that may have to change (on rt->hw_dirty). */
  struct hwatch *hw;
  int hw_dirty;
  struct rconn *next_dirty;
} rconn;

/* One descriptor the host watches (watch_fd): our duplicate of a
 * connection's stdout, so its number stays ours until the host has
 * stopped watching it, whatever happened to the connection meanwhile. */
typedef struct hwatch {
  int fd;          /* the duplicate the host and the watchdog poll */
  int src;         /* the connection's own fd it duplicates */
  mcpp_conn *conn; /* NULL once retired (run_mu) */
  rconn *r;
  int on;          /* watch_fd(fd, 1) was called (host thread) */
  struct hwatch *next_dead; /* on rt->hw_dead (run_mu) */
  struct hwatch *next;      /* on the host's op lists (host thread) */
} hwatch;

/* Where a reconnecting connection is (see reconnect_*). */
typedef enum phase {
  LIVE = 0,  /* a server runs and has the session */
  WAITING,   /* the server failed; the next one is spawned at retry_at */
  REPLAYING  /* the new server has the replayed initialize, not answered */
} phase;

/* What a connection needs to spawn its server again, and the frames the
 * application sent while there was none, in order. */
typedef struct reconnect {
  mcpp_reconnect policy;
  phase phase;
  uint32_t streak; /* attempts in a row; 0 once one succeeded */
  uint64_t retry_at;
  uv_timer_t timer; /* the respawn at retry_at, or a held request's expiry */
  int retry_armed;  /* the timer is set for the respawn */
  uint64_t held_due; /* at most the earliest held deadline; UINT64_MAX */
  mcpp_handshake *hs;
  struct cmd *held, *held_tail;
  mcpp_settings settings; /* strings below are copies */
  mcpp_spawn_options options;
  char *strings; /* one block: file, args, env, cwd, peer_name, probe */
  char **vectors; /* one block: args then env pointers */
} reconnect;

struct mcpp_runtime {
  mcpp_allocator alloc;
  mcpp_retry_budget budget; /* guarded by the mutex */
  uint64_t rng;             /* jitter draws, I/O thread only */
  void (*notify)(void *);
  void *notify_data;
  pthread_mutex_t mu;
  pthread_cond_t cv;
  int started;
  int stop_requested; /* guarded by the mutex */
  int stopping;       /* I/O thread: closing everything before exiting */
  pthread_t thread;
  uv_loop_t *loop;
  uv_async_t async;
  cmd *cmd_head, *cmd_tail;
  mcpp_item *item_head, *item_tail;
  int notified; /* notify was called for the items queued now */
  /* Items that wake the host were queued since the last drain and notify
   * is not called yet: the waker calls it once the I/O thread is done with
   * this turn of its loop, so one engine call (an answered ping: its event
   * and its record) wakes the host once, not once per item. */
  int wake_due;
  uv_idle_t waker; /* I/O thread: active while wake_due may be set */
  int paused;   /* connections not reading for the host */
  int resume;   /* a free or release asked the I/O thread to resume reading */
  rconn *conns;
  /* conns by id (mu): every command, release and drain looks one up, and
   * a scan of the list cost O(connections) each at 1000 of them. NULL
   * (none allocated yet, or no memory to grow): the list is scanned. */
  rconn **conn_index;
  size_t conn_index_cap, n_conns;
  uint64_t next_id;
  /* Host mode (mcpp_runtime_host_attach). Whoever holds run_mu runs the
   * loop: the I/O thread for good in thread mode; in host mode the host
   * for a turn, or the watchdog while the host is stalled. Lock order:
   * run_mu, then mu. */
  pthread_mutex_t run_mu;
  pthread_cond_t watch_cv;  /* wakes the watchdog: detach, stop */
  _Atomic int mode;         /* MCPP_MODE_*; written under mu (and run_mu
                               when leaving host mode) */
  int runner;               /* RUN_*: who is in the loop now (run_mu) */
  int io_parked;            /* the I/O thread left the loop (mu) */
  pthread_t host_thread;    /* mu */
  uint32_t stall_ms;        /* mu */
  char why[128];            /* mcpp_runtime_mode's line (mu) */
  _Atomic uint64_t host_turns, takeovers, inline_commands;
  rconn *corked; /* connections to flush after this turn (run_mu) */
  /* Host thread only: the earliest time (loop clock, ms) the host was
   * told to run again (UINT64_MAX: none), and what host_rearm returns. */
  uint64_t told_due;
  int64_t rearm_ms;
  /* Host thread only: commands run inline leave their frames corked until
   * mcpp_runtime_host_cork(rt, 0) (see there). */
  int host_cork;
  /* Host-owned reading (MCPP_HOST_OPTIONS_V2 watch_fd). hfd: on for this
   * attach; host_owns: the host reads the connections now, uv does not
   * (run_mu; the watchdog clears it when it takes over, the host's next
   * call sets it again). wd_ep: an epoll set of the watched fds, so the
   * watchdog sees data the host left waiting. The rest under run_mu but
   * the op lists, which are the host thread's. */
  void (*watch_fd)(void *ctx, int fd, int on);
  void *watch_ctx;
  _Atomic int hfd;
  int host_owns, wd_ep;
  rconn *hw_dirty;
  hwatch **hw_by_fd;
  int hw_cap;
  hwatch *hw_dead;
  hwatch *hw_on, *hw_off;
  _Atomic uint64_t host_reads;
  /* While the watchdog sleeps idle: when it means to look again (ms, the
   * loop's clock; 0: not idle). Set under run_mu, so a host call that then
   * moves a timer earlier sees it and wakes it (wake_idle_watchdog). */
  _Atomic uint64_t wd_idle_until;
};

/* Who is running the loop: defer_wake differs. */
enum { RUN_NONE = 0, RUN_THREAD, RUN_HOST, RUN_WATCHDOG };

static void *rt_malloc(mcpp_runtime *rt, size_t n) {
  return rt->alloc.malloc(n, rt->alloc.user_data);
}

static void rt_free(mcpp_runtime *rt, void *p) {
  if (p) rt->alloc.free(p, rt->alloc.user_data);
}

static size_t conn_bucket(uint64_t id, size_t cap) {
  return (size_t)(id * 0x9E3779B97F4A7C15ull >> 32) & (cap - 1);
}

/* Links r into conns and the index (mu held). A failed growth keeps the
 * old index: longer chains, same answers. */
static void add_conn(mcpp_runtime *rt, rconn *r) {
  r->next = rt->conns;
  rt->conns = r;
  rt->n_conns++;
  if (rt->n_conns > rt->conn_index_cap) {
    size_t cap = rt->conn_index_cap ? rt->conn_index_cap * 2 : 64;
    rconn **b = rt_malloc(rt, cap * sizeof *b);
    if (b) {
      memset(b, 0, cap * sizeof *b);
      for (rconn *c = rt->conns->next; c; c = c->next) {
        size_t i = conn_bucket(c->id, cap);
        c->next_in_bucket = b[i];
        b[i] = c;
      }
      rt_free(rt, rt->conn_index);
      rt->conn_index = b;
      rt->conn_index_cap = cap;
    }
  }
  if (rt->conn_index) {
    size_t i = conn_bucket(r->id, rt->conn_index_cap);
    r->next_in_bucket = rt->conn_index[i];
    rt->conn_index[i] = r;
  }
}

/* Unlinks r from the index (mu held; the caller unlinks it from conns). */
static void drop_conn_index(mcpp_runtime *rt, rconn *r) {
  rt->n_conns--;
  if (!rt->conn_index) return;
  rconn **p = &rt->conn_index[conn_bucket(r->id, rt->conn_index_cap)];
  for (; *p; p = &(*p)->next_in_bucket) {
    if (*p == r) {
      *p = r->next_in_bucket;
      break;
    }
  }
}

static rconn *find_conn(mcpp_runtime *rt, uint64_t id) {
  if (rt->conn_index) {
    rconn *r = rt->conn_index[conn_bucket(id, rt->conn_index_cap)];
    while (r && r->id != id) r = r->next_in_bucket;
    return r;
  }
  for (rconn *r = rt->conns; r; r = r->next)
    if (r->id == id) return r;
  return NULL;
}

/* ------------------------------------------------------------------ items */

static mcpp_item *new_item(mcpp_runtime *rt, rconn *r, mcpp_item_type type,
                           size_t data_len) {
  mcpp_item *it = rt_malloc(rt, sizeof *it + data_len + 1);
  if (!it) return NULL;
  memset(it, 0, sizeof *it);
  it->type = type;
  it->conn_id = r->id;
  it->conn_user_data = r->user_data;
  it->data = (char *)(it + 1);
  it->data[data_len] = '\0';
  it->len = data_len;
  /* What the host holds while it has the item: all of it. */
  it->charge = sizeof *it + data_len + 1;
  return it;
}

/* A ping we just sent is news to nobody waiting: its event rides along
 * with the next batch (the pong, at the latest the timeout) instead of
 * waking the host, which would cost a second wake-up per ping. */
static int wakes_host(const mcpp_item *it) {
  return !(it->type == MCPP_ITEM_EVENT && (it->event.type == MCPP_EV_PING ||
                                           it->event.type == MCPP_EV_PROBE));
}

/* Appends an item (NULL: none); returns 1 if the caller must arm the
 * waker (defer_wake): the item wakes and no notify is outstanding or due
 * since the last drain. */
static int append_locked(mcpp_runtime *rt, mcpp_item *it) {
  if (!it) return 0;
  if (rt->item_tail)
    rt->item_tail->next = it;
  else
    rt->item_head = it;
  rt->item_tail = it;
  if (rt->notified || rt->wake_due || !wakes_host(it)) return 0;
  rt->wake_due = 1;
  return 1;
}

/* Calls notify if a wake is due (a drain since cancels it: the host has
 * the items). */
static void flush_wake(mcpp_runtime *rt) {
  pthread_mutex_lock(&rt->mu);
  int go = rt->wake_due;
  rt->wake_due = 0;
  if (go) rt->notified = 1;
  pthread_mutex_unlock(&rt->mu);
  if (go && rt->notify) rt->notify(rt->notify_data);
}

static void on_waker(uv_idle_t *h) {
  uv_idle_stop(h);
  flush_wake(h->data);
}

/* Notifies once the callbacks of this turn of the loop have run: an idle
 * handle runs on the next turn and, while active, keeps the loop from
 * blocking in poll, so a wake armed anywhere (a read, a timer, a write, a
 * close, the prepare phase) is never left waiting for more I/O. */
static void defer_wake(mcpp_runtime *rt) {
  /* The host drains after its own turn; the watchdog flushes after each
   * of its turns (host_settle, run_inline, take_over). */
  if (rt->runner == RUN_HOST || rt->runner == RUN_WATCHDOG) return;
  if (uv_is_closing((uv_handle_t *)&rt->waker))
    flush_wake(rt); /* stopping: nothing turns the loop for it any more */
  else
    uv_idle_start(&rt->waker, on_waker);
}

/* What another thread may read of the engine, taken on the I/O thread. */
typedef struct snapshot {
  int valid;
  mcpp_engine_info info;
  uint64_t healthy_until;
  size_t queued;
} snapshot;

static void take_snapshot(rconn *r, snapshot *sn) {
  mcpp_engine *e = r->conn ? mcpp_conn_engine(r->conn) : NULL;
  sn->valid = e != NULL;
  if (!e) return;
  mcpp_engine_get_info(e, &sn->info);
  sn->info.protocol_version = NULL;
  sn->info.peer_name = NULL;
  sn->info.probe_method = NULL;
  sn->healthy_until = mcpp_engine_healthy_until(e, uv_hrtime() / 1000);
  sn->queued = mcpp__conn_queued_bytes(r->conn);
  /* Between a failed server and the answer to the replayed initialize the
   * session is not there: not alive, and never healthy. */
  if (r->rc && r->rc->phase != LIVE) {
    sn->info.state = MCPP_STATE_STALE;
    sn->healthy_until = 0;
  }
}

/* Queues a WRITABLE item if a refused send now fits. */
static mcpp_item *writable_locked(rconn *r) {
  if (r->writable_at == SIZE_MAX ||
      r->out_cmd_bytes + r->out_wq_bytes > r->writable_at)
    return NULL;
  mcpp_item *it = new_item(r->rt, r, MCPP_ITEM_WRITABLE, 0);
  /* Out of memory: the next progress tries again. */
  if (it) {
    r->writable_at = SIZE_MAX;
    r->held += it->charge;
  }
  return it;
}

static void store_snapshot_locked(rconn *r, const snapshot *sn) {
  if (!sn->valid) return;
  r->info = sn->info;
  r->healthy_until = sn->healthy_until;
  r->out_wq_bytes = sn->queued;
}

/* Returns 1 if the connection's count just reached its cap: then it is
 * marked paused and the caller stops its reading (outside the engine), and
 * the host is woken if nothing has woken it yet, or nothing would free the
 * bytes (an item that wakes nobody, a PING event, may be the last). */
static int pause_at_cap_locked(rconn *r, int *wake) {
  mcpp_runtime *rt = r->rt;
  if (r->held < r->cap || r->paused || r->closing) return 0;
  r->paused = 1;
  rt->paused++;
  if (!rt->notified && !rt->wake_due && rt->item_head) {
    rt->wake_due = 1;
    *wake = 1;
  }
  return 1;
}

/* Queues an item (NULL: none, out of memory) and refreshes the
 * connection's snapshot under the same lock, so the host never drains
 * an item older than what info() shows. Returns 1 if the caller must
 * stop the connection's reading (see pause_at_cap_locked); callers inside the
 * engine leave that to on_progress, which runs when the engine returns. */
static int push_counted(mcpp_runtime *rt, rconn *r, mcpp_item *it,
                        int may_pause) {
  snapshot sn;
  take_snapshot(r, &sn);
  pthread_mutex_lock(&rt->mu);
  store_snapshot_locked(r, &sn);
  int wake = append_locked(rt, it);
  int pause = 0;
  if (it) r->held += it->charge;
  if (may_pause) pause = pause_at_cap_locked(r, &wake);
  pthread_mutex_unlock(&rt->mu);
  if (wake) defer_wake(rt);
  return pause;
}

static void push(mcpp_runtime *rt, rconn *r, mcpp_item *it) {
  push_counted(rt, r, it, 0);
}

static int push_data(rconn *r, mcpp_item_type type, const char *data,
                     size_t len) {
  mcpp_item *it = new_item(r->rt, r, type, len);
  if (it) memcpy(it->data, data, len);
  return push_counted(r->rt, r, it, type == MCPP_ITEM_STDERR);
}

/* The driver's progress hook: after every engine call and write. Refreshes
 * the snapshot, stops reading at the cap, and tells the host when a
 * refused send fits again. */
static void on_progress(mcpp_conn *c, void *ud) {
  rconn *r = ud;
  mcpp_runtime *rt = r->rt;
  snapshot sn;
  take_snapshot(r, &sn);
  pthread_mutex_lock(&rt->mu);
  store_snapshot_locked(r, &sn);
  int wake = append_locked(rt, writable_locked(r));
  int pause = pause_at_cap_locked(r, &wake);
  pthread_mutex_unlock(&rt->mu);
  if (wake) defer_wake(rt);
  if (pause) mcpp__conn_set_reading(c, 0);
  /* A non-blocking turn may be past its prepare phase: note the cork. */
  if (rt->runner != RUN_THREAD && !r->corked && mcpp__conn_corked(c)) {
    r->corked = 1;
    r->next_corked = rt->corked;
    rt->corked = r;
  }
}

/* After a free or release: connections stopped for the host that are
 * back below half their cap read again (the half keeps a host that frees
 * item by item from flapping the reading). */
static int may_resume(const rconn *r) {
  return r->paused && r->held < r->cap / 2;
}

static void resume_reading(mcpp_runtime *rt) {
  for (rconn *r = rt->conns; r; r = r->next) {
    pthread_mutex_lock(&rt->mu);
    int go = may_resume(r);
    if (go) {
      r->paused = 0;
      rt->paused--;
    }
    pthread_mutex_unlock(&rt->mu);
    if (go && r->conn) mcpp__conn_set_reading(r->conn, 1);
  }
}

/* Gives back bytes the host held for connection id; asks the I/O thread
 * to resume its reading if that brings it below half the cap. */
static void release_locked(mcpp_runtime *rt, uint64_t id, size_t bytes) {
  rconn *r = find_conn(rt, id);
  if (!r || !bytes) return;
  r->held -= bytes < r->held ? bytes : r->held;
  if (may_resume(r) && !rt->resume) {
    rt->resume = 1;
    uv_async_send(&rt->async);
  }
}

static void push_ping_failed(rconn *r, uint64_t token, int err) {
  mcpp_item *it = new_item(r->rt, r, MCPP_ITEM_PING_FAILED, 0);
  if (it) {
    it->ping_token = token;
    it->error = err;
  }
  push(r->rt, r, it);
}

/* ------------------------------------------------------ driver callbacks */

/* Copies what the engine learned of the session, for mcpp_runtime_session
 * (the info snapshot carries no strings), before the item that follows the
 * learning is queued: the host never sees a handshake answer before info()
 * shows its session. It is learned from handshake answers (messages) and
 * settled by an event (INITIALIZED, or UNSUPPORTED on a session without
 * ping), so messages look only until the version is known. Only this
 * thread writes the copy, so comparing needs no lock. */
static const char *session_name(const char *session) {
  return session + strlen(session) + 1;
}

static void note_session(rconn *r, int at_event) {
  if (!at_event && r->session && r->session[0]) return;
  mcpp_engine *e = r->conn ? mcpp_conn_engine(r->conn) : NULL;
  if (!e) return;
  mcpp_engine_info info;
  mcpp_engine_get_info(e, &info);
  const char *version = info.protocol_version ? info.protocol_version : "";
  const char *name = info.peer_name ? info.peer_name : "";
  if (r->session ? strcmp(version, r->session) == 0 &&
                       strcmp(name, session_name(r->session)) == 0
                 : !*version && !*name)
    return;
  size_t nv = strlen(version) + 1, nn = strlen(name) + 1;
  char *copy = rt_malloc(r->rt, nv + nn);
  /* Out of memory: the old copy stays, and the next message tries again. */
  if (!copy) return;
  memcpy(copy, version, nv);
  memcpy(copy + nv, name, nn);
  pthread_mutex_lock(&r->rt->mu);
  char *old = r->session;
  r->session = copy;
  pthread_mutex_unlock(&r->rt->mu);
  rt_free(r->rt, old);
}

static int reconnect_answer(rconn *r, mcpp_conn *c, const char *frame,
                            size_t len);

static void on_message(mcpp_conn *c, const char *frame, size_t len, void *ud) {
  rconn *r = ud;
  if (r->rc) {
    if (reconnect_answer(r, c, frame, len)) return;
    mcpp_handshake_observe_answer(r->rc->hs, frame, len);
  }
  note_session(r, 0);
  mcpp_item *it = new_item(r->rt, r, MCPP_ITEM_MESSAGE, len);
  if (it) {
    memcpy(it->data, frame, len);
    it->answer_kind = mcpp_engine_delivery_kind(mcpp_conn_engine(c));
  }
  push_counted(r->rt, r, it, 0);
}

static void on_record(mcpp_conn *c, const char *json, size_t len, void *ud) {
  rconn *r = ud;
  if (atomic_load_explicit(&r->records, memory_order_relaxed))
    push_data(r, MCPP_ITEM_RECORD, json, len);
}

/* stderr reads run outside the engine, so no progress hook follows them:
 * the cap is checked here, or a server writing only stderr is never
 * paused. */
static void on_stderr(mcpp_conn *c, const char *data, size_t len, void *ud) {
  if (push_data(ud, MCPP_ITEM_STDERR, data, len)) mcpp__conn_set_reading(c, 0);
}

static void push_event(rconn *r, const mcpp_event *ev);

static int is_outcome(mcpp_event_type t) {
  return t == MCPP_EV_PONG || t == MCPP_EV_TIMEOUT || t == MCPP_EV_PING_ERROR ||
         t == MCPP_EV_UNSUPPORTED;
}

/* Maps a manual ping's engine seq to the host's token: learned from the
 * PING event (fired inside mcpp_conn_ping), dropped with the outcome. */
static uint64_t token_for(rconn *r, const mcpp_event *ev) {
  if (!ev->manual || !ev->ping_seq) return 0;
  if (ev->type == MCPP_EV_PING && r->pinging) {
    if (r->n_tokens == r->cap_tokens) {
      size_t cap = r->cap_tokens ? r->cap_tokens * 2 : 8;
      token_pair *p = r->rt->alloc.realloc(r->tokens, cap * sizeof *p,
                                           r->rt->alloc.user_data);
      if (!p) return r->ping_token;
      r->tokens = p;
      r->cap_tokens = cap;
    }
    r->tokens[r->n_tokens++] = (token_pair){ev->ping_seq, r->ping_token};
    return r->ping_token;
  }
  for (size_t i = 0; i < r->n_tokens; i++) {
    if (r->tokens[i].seq != ev->ping_seq) continue;
    uint64_t token = r->tokens[i].token;
    if (is_outcome(ev->type)) r->tokens[i] = r->tokens[--r->n_tokens];
    return token;
  }
  return 0;
}

static void on_event(mcpp_conn *c, const mcpp_event *ev, void *ud) {
  push_event(ud, ev);
}

static void push_event(rconn *r, const mcpp_event *ev) {
  mcpp_runtime *rt = r->rt;
  size_t mlen = ev->message ? strlen(ev->message) : 0;
  size_t ilen = ev->id ? ev->id_len : 0;
  size_t plen = ev->proof ? strlen(ev->proof) : 0;
  if (ev->type == MCPP_EV_CLOSED) {
    pthread_mutex_lock(&rt->mu);
    r->closing = 1;
    pthread_mutex_unlock(&rt->mu);
  }
  uint64_t token = token_for(r, ev);
  /* Counted here, queued or not, so metrics need no event to cross. */
  mcpp__metrics_slot_observe(&r->metrics, ev);
  if (ev->type == MCPP_EV_PING || is_outcome(ev->type)) {
    pthread_mutex_lock(&rtt_mu);
    if (r->rtt) mcpp_rtt_stats_observe(r->rtt, ev, r->rtt_unit);
    pthread_mutex_unlock(&rtt_mu);
    /* Counted above; nobody listens: no item, no wake (issue 21). A
     * manual ping's outcome still goes, to settle its waiter. */
    if ((ev->type == MCPP_EV_PING || (ev->type == MCPP_EV_PONG && !token)) &&
        !atomic_load_explicit(&r->ping_events, memory_order_relaxed))
      return;
  }
  note_session(r, 1);
  /* data holds "message\0id\0proof\0" so the strings outlive the callback
   * (a configured probe's proof is the engine's, freed with the conn). */
  mcpp_item *it = new_item(rt, r, MCPP_ITEM_EVENT, mlen + 1 + ilen + 1 + plen);
  if (it) {
    it->event = *ev;
    it->event.version = MCPP_EVENT_VERSION; /* the runtime's own too */
    it->ping_token = token;
    if (ev->message) memcpy(it->data, ev->message, mlen);
    it->data[mlen] = '\0';
    it->event.message = ev->message ? it->data : NULL;
    if (ev->id) memcpy(it->data + mlen + 1, ev->id, ilen);
    it->event.id = ev->id ? it->data + mlen + 1 : NULL;
    char *proof = it->data + mlen + 1 + ilen + 1;
    if (ev->proof) memcpy(proof, ev->proof, plen);
    proof[plen] = '\0';
    it->event.proof = ev->proof ? proof : NULL;
    it->len = mlen;
  }
  push(rt, r, it);
}

static void free_reconnect(mcpp_runtime *rt, reconnect *x);
static void hw_adopt(mcpp_runtime *rt, mcpp_conn *c);
static void hw_forget(mcpp_runtime *rt, rconn *r);
static void hw_set_owner(mcpp_runtime *rt, int host);

/* The runtime's own handles, at the stop: a wake still due goes out now. */
static void close_loop_handles(mcpp_runtime *rt) {
  uv_close((uv_handle_t *)&rt->async, NULL);
  uv_close((uv_handle_t *)&rt->waker, NULL);
  flush_wake(rt);
}

static void free_rconn(uv_handle_t *h) {
  rconn *r = h->data;
  rt_free(r->rt, r->rc);
  rt_free(r->rt, r);
}

/* The connection is gone for good: its CLOSED item, last. */
static void finish(rconn *r, const mcpp_close_info *info) {
  mcpp_runtime *rt = r->rt;
  size_t len = strlen(info->reason);
  mcpp_item *it = new_item(rt, r, MCPP_ITEM_CLOSED, len);
  if (it) {
    memcpy(it->data, info->reason, len);
    it->close = *info;
    it->close.reason = it->data;
    it->charge = 0; /* nothing is left to count it against */
  }
  r->conn = NULL;
  hw_forget(rt, r);
  if (r->corked) {
    for (rconn **p = &rt->corked; *p; p = &(*p)->next_corked) {
      if (*p == r) {
        *p = r->next_corked;
        break;
      }
    }
    r->corked = 0;
  }
  /* Unlinked under the same lock that queues CLOSED: once the host sees
   * it, the connection id is unknown. */
  pthread_mutex_lock(&rt->mu);
  for (rconn **p = &rt->conns; *p; p = &(*p)->next) {
    if (*p == r) {
      *p = r->next;
      drop_conn_index(rt, r);
      break;
    }
  }
  /* Once CLOSED is queued the host may free what it gave us to feed. */
  pthread_mutex_lock(&rtt_mu);
  r->rtt = NULL;
  pthread_mutex_unlock(&rtt_mu);
  mcpp__metrics_slot_set(&r->metrics, NULL);
  int last = rt->conns == NULL;
  if (r->paused) rt->paused--;
  int wake = append_locked(rt, it);
  pthread_mutex_unlock(&rt->mu);
  if (wake) defer_wake(rt);
  rt_free(rt, r->tokens);
  r->tokens = NULL;
  rt_free(rt, r->session);
  r->session = NULL;
  if (r->rc) {
    /* The rconn goes with its timer's close callback. */
    free_reconnect(rt, r->rc);
    uv_close((uv_handle_t *)&r->rc->timer, free_rconn);
  } else {
    rt_free(rt, r);
  }
  if (rt->stopping && last) close_loop_handles(rt);
}

static void reconnect_wait(rconn *r);

static int host_closed(rconn *r) {
  pthread_mutex_lock(&r->rt->mu);
  int closed = r->closing || r->rt->stopping;
  pthread_mutex_unlock(&r->rt->mu);
  return closed;
}

static void finish_idle(rconn *r, int err, const char *reason);

static void on_conn_close(mcpp_conn *c, const mcpp_close_info *info,
                          void *ud) {
  rconn *r = ud;
  if (r->rc && r->rc->phase == WAITING) {
    r->conn = NULL;
    /* The host closed while the old server was being reaped. */
    if (host_closed(r))
      finish_idle(r, 0, MCPP_CLOSED_BY_APP_REASON);
    else
      reconnect_wait(r);
    return;
  }
  finish(r, info);
}

static const mcpp_conn_callbacks conn_callbacks = {
    .on_message = on_message, .on_event = on_event, .on_record = on_record,
    .on_stderr = on_stderr, .on_close = on_conn_close};

/* -------------------------------------------------------------- commands */

static int reconnect_setup(rconn *r, const mcpp_settings *settings,
                           const mcpp_spawn_options *options);
static void free_reconnect(mcpp_runtime *rt, reconnect *x);
static int reconnect_cancel_held(rconn *r, const char *id, size_t id_len);
static int plan_reconnect(mcpp_conn *c, int err, const char *reason,
                          uint32_t *attempt, uint32_t *delay_ms, char *why,
                          size_t cap, void *ud);
static void start_held_timeout(rconn *r, cmd *k);

static void run_spawn(mcpp_runtime *rt, cmd *k) {
  rconn *r = rt_malloc(rt, sizeof *r);
  int rc = MCPP_ERR_NOMEM;
  if (r) {
    memset(r, 0, sizeof *r);
    r->rt = rt;
    r->user_data = k->conn_user_data;
    r->cap = k->settings && k->settings->max_pending_bytes
                 ? k->settings->max_pending_bytes
                 : DEFAULT_MAX_PENDING_BYTES;
    r->writable_at = SIZE_MAX;
    atomic_init(&r->records, 1);
    atomic_init(&r->ping_events, 1);
    pthread_mutex_lock(&rt->mu);
    r->id = ++rt->next_id;
    pthread_mutex_unlock(&rt->mu);
    rc = k->settings && k->settings->reconnect.enabled &&
                 !mcpp_settings_problem(k->settings)
             ? reconnect_setup(r, k->settings, k->options)
             : 0;
    if (rc == 0)
      rc = mcpp_conn_spawn(&r->conn, rt->loop, k->settings, k->options,
                           &conn_callbacks, r, &rt->alloc);
    if (rc == MCPP_ERR_SPAWN) k->os_error = mcpp__conn_spawn_os_error();
    if (rc && k->errbuf && k->errbuf_len)
      snprintf(k->errbuf, k->errbuf_len, "%s",
               /* The driver's own sentence where it has one (a spawn
                * failure, the setting out of range). */
               *mcpp_conn_spawn_error() ? mcpp_conn_spawn_error()
                                        : mcpp_strerror(rc));
  }
  if (rc == 0) {
    mcpp__conn_set_progress(r->conn, on_progress);
    mcpp__conn_follow_records(r->conn, &r->records);
    hw_adopt(rt, r->conn);
    if (r->rc) mcpp__conn_set_reconnect_hook(r->conn, plan_reconnect);
    push(rt, r, NULL);
  }
  pthread_mutex_lock(&rt->mu);
  if (rc == 0) {
    r->pid = mcpp_conn_pid(r->conn);
    add_conn(rt, r);
    k->conn_id = r->id;
  } else if (r && r->rc) {
    free_reconnect(rt, r->rc);
    uv_close((uv_handle_t *)&r->rc->timer, free_rconn);
  } else {
    rt_free(rt, r);
  }
  k->result = rc;
  k->done = 1;
  pthread_cond_broadcast(&rt->cv);
  pthread_mutex_unlock(&rt->mu);
}

static void run_ping(mcpp_runtime *rt, cmd *k) {
  rconn *r = find_conn(rt, k->conn_id);
  if (!r) return;
  if (!r->conn) {
    /* Between two servers (reconnect): nobody to ping. */
    push_ping_failed(r, k->token, MCPP_ERR_CLOSED);
    return;
  }
  uint64_t seq = 0;
  r->pinging = 1;
  r->ping_token = k->token;
  int rc = mcpp_conn_ping(r->conn, k->timeout_ms, &seq);
  r->pinging = 0;
  if (rc < 0) push_ping_failed(r, k->token, rc);
}

/* Forgets the manual ping the host knows as k->token: the engine stops
 * timing it and reports nothing more (its late pong is still consumed). */
static void run_cancel_ping(mcpp_runtime *rt, cmd *k) {
  rconn *r = find_conn(rt, k->conn_id);
  if (!r || !r->conn) return;
  for (size_t i = 0; i < r->n_tokens; i++) {
    if (r->tokens[i].token != k->token) continue;
    mcpp_engine_cancel_ping(mcpp_conn_engine(r->conn), r->tokens[i].seq);
    r->tokens[i] = r->tokens[--r->n_tokens];
    return;
  }
}

/* Writes a queued frame; its bytes move from the command queue to the
 * driver's write queue (the progress hook counts those). */
static void send_now(rconn *r, cmd *k) {
  mcpp_runtime *rt = r->rt;
  /* CLOSED: the connection is going; its CLOSED item tells the host. */
  if (r->conn) mcpp_conn_send_timed(r->conn, k->data, k->len, k->timeout_ms);
  snapshot sn;
  take_snapshot(r, &sn);
  pthread_mutex_lock(&rt->mu);
  r->out_cmd_bytes -= k->len + 1;
  store_snapshot_locked(r, &sn);
  int wake = append_locked(rt, writable_locked(r));
  pthread_mutex_unlock(&rt->mu);
  if (wake) defer_wake(rt);
}

/* Returns 1 if it kept k (held until a new server has the session). */
static int run_send(mcpp_runtime *rt, cmd *k) {
  rconn *r = find_conn(rt, k->conn_id);
  if (!r) return 0;
  reconnect *x = r->rc;
  if (x) {
    /* Out of memory: nothing to replay, the frame still goes out. */
    mcpp_handshake_observe(x->hs, k->data, k->len);
    if (x->phase != LIVE) {
      /* Still counted in out_cmd_bytes: the cap bounds what waits here. */
      k->next = NULL;
      if (x->held_tail)
        x->held_tail->next = k;
      else
        x->held = k;
      x->held_tail = k;
      start_held_timeout(r, k);
      return 1;
    }
  }
  send_now(r, k);
  return 0;
}

/* ---------------------------------------------------------------- reconnect
 *
 * A failed server (stale, exited, pipes closed) is replaced: the driver
 * asks plan_reconnect at the close, the engine fails what was in flight and
 * reports RECONNECTING, and once the old group is reaped the timer spawns a
 * new server at retry_at, replays the captured initialize, swallows its
 * answer, sends notifications/initialized and the frames held meanwhile. */

enum { REPLAY_TIMEOUT_MS = 30000 };

static uint64_t next_random(mcpp_runtime *rt) {
  if (!rt->rng) rt->rng = uv_hrtime() ^ ((uint64_t)getpid() << 32) ^ 1;
  /* splitmix64 */
  uint64_t z = (rt->rng += 0x9E3779B97F4A7C15ull);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

static size_t vec_len(char **v) {
  size_t n = 0;
  while (v && v[n]) n++;
  return n;
}

/* Copies the spawn inputs into two blocks (strings, pointer vectors). */
static int copy_spawn(mcpp_runtime *rt, reconnect *x,
                      const mcpp_settings *settings,
                      const mcpp_spawn_options *o) {
  size_t nargs = vec_len(o->args), nenv = vec_len(o->env), bytes = 0;
  const char *one[4] = {o->file, o->cwd, settings ? settings->peer_name : NULL,
                        settings ? settings->probe_method : NULL};
  for (int i = 0; i < 4; i++)
    if (one[i]) bytes += strlen(one[i]) + 1;
  for (size_t i = 0; i < nargs; i++) bytes += strlen(o->args[i]) + 1;
  for (size_t i = 0; i < nenv; i++) bytes += strlen(o->env[i]) + 1;
  x->strings = rt_malloc(rt, bytes ? bytes : 1);
  x->vectors = rt_malloc(rt, (nargs + 1 + nenv + 1) * sizeof(char *));
  if (!x->strings || !x->vectors) return MCPP_ERR_NOMEM;
  char *p = x->strings;
  char *dup[4];
  for (int i = 0; i < 4; i++) {
    dup[i] = NULL;
    if (!one[i]) continue;
    dup[i] = strcpy(p, one[i]);
    p += strlen(one[i]) + 1;
  }
  char **args = x->vectors, **env = x->vectors + nargs + 1;
  for (size_t i = 0; i < nargs; i++) {
    args[i] = strcpy(p, o->args[i]);
    p += strlen(p) + 1;
  }
  args[nargs] = NULL;
  for (size_t i = 0; i < nenv; i++) {
    env[i] = strcpy(p, o->env[i]);
    p += strlen(p) + 1;
  }
  env[nenv] = NULL;
  /* mcpp_runtime_spawn checked the version. */
  if (!settings || mcpp__settings_import(&x->settings, settings))
    mcpp_settings_default(&x->settings);
  x->settings.peer_name = dup[2];
  x->settings.probe_method = dup[3];
  x->options = *o;
  x->options.file = dup[0];
  x->options.cwd = dup[1];
  x->options.args = args;
  x->options.env = o->env ? env : NULL;
  return 0;
}

static void free_reconnect(mcpp_runtime *rt, reconnect *x) {
  for (cmd *k = x->held, *next; k; k = next) {
    next = k->next;
    rt_free(rt, k);
  }
  x->held = x->held_tail = NULL;
  mcpp_handshake_free(x->hs);
  x->hs = NULL;
  rt_free(rt, x->strings);
  rt_free(rt, x->vectors);
  x->strings = NULL;
  x->vectors = NULL;
}

/* The next attempt: its number and, budget applied, when it runs. Returns
 * 0, or 1 if max_attempts are spent (why says so). */
static int next_attempt(rconn *r, const char *reason, uint32_t *attempt,
                        uint32_t *delay_ms, char *why, size_t cap) {
  reconnect *x = r->rc;
  mcpp_runtime *rt = r->rt;
  if (x->streak >= x->policy.max_attempts) {
    snprintf(why, cap, "gave up reconnecting after %u attempts: %s",
             (unsigned)x->streak, reason);
    return 1;
  }
  x->streak++;
  uint64_t now = uv_hrtime() / 1000;
  uint64_t want = now + mcpp_reconnect_delay_us(&x->policy, x->streak,
                                                next_random(rt));
  pthread_mutex_lock(&rt->mu);
  x->retry_at = mcpp_retry_budget_take(&rt->budget, want);
  pthread_mutex_unlock(&rt->mu);
  x->phase = WAITING;
  *attempt = x->streak;
  uint64_t ms = (x->retry_at - now + 999) / 1000;
  *delay_ms = ms > MCPP_MAX_MS ? MCPP_MAX_MS : (uint32_t)ms;
  return 0;
}

/* The driver's hook (see mcpp__reconnect_hook). */
static int plan_reconnect(mcpp_conn *c, int err, const char *reason,
                          uint32_t *attempt, uint32_t *delay_ms, char *why,
                          size_t cap, void *ud) {
  rconn *r = ud;
  if (!r->rc || host_closed(r)) return 0;
  return next_attempt(r, reason, attempt, delay_ms, why, cap) == 0;
}

static void push_event(rconn *r, const mcpp_event *ev);

/* No engine runs between servers: the runtime says what happens itself. */
static void push_own_event(rconn *r, mcpp_event_type type, const char *message,
                           uint32_t attempt, uint32_t delay_ms, int err) {
  mcpp_event ev;
  memset(&ev, 0, sizeof ev);
  ev.type = type;
  ev.state = type == MCPP_EV_CLOSED ? MCPP_STATE_CLOSED
             : type == MCPP_EV_RECONNECTED ? MCPP_STATE_ALIVE
                                           : MCPP_STATE_STALE;
  ev.message = message;
  ev.error = err;
  ev.reconnect_attempt = attempt;
  ev.delay_ms = delay_ms;
  ev.pid = r->pid;
  push_event(r, &ev);
}

/* The "reconnect" record of an attempt no engine saw (its server could not
 * start), as the engine words its own: no reason, no payload. Only this
 * thread writes r->session, so it is read here without the lock. */
static void push_own_record(rconn *r, uint32_t attempt) {
  reconnect *x = r->rc;
  mcpp__record rec;
  memset(&rec, 0, sizeof rec);
  rec.event = "reconnect";
  rec.direction = MCPP__DIR_NONE;
  rec.role = x->settings.role;
  rec.peer = r->session && *session_name(r->session) ? session_name(r->session)
                                                     : x->settings.peer_name;
  rec.protocol_version = r->session && *r->session ? r->session : NULL;
  rec.transport = x->settings.transport;
  rec.reconnect_attempt = attempt;
  rec.disposition = MCPP_DISPOSITION_CONTINUED;
  int64_t offset = x->settings.clock_offset_us;
  if (!offset) {
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    offset = (int64_t)ts.tv_sec * 1000000 + ts.tv_nsec / 1000 -
             (int64_t)(uv_hrtime() / 1000);
  }
  char buf[1024];
  size_t n = mcpp__record_format(&rec, (int64_t)(uv_hrtime() / 1000) + offset,
                                 buf, sizeof buf);
  /* Bounded by the name caps: it always fits. */
  if (n < sizeof buf) push_data(r, MCPP_ITEM_RECORD, buf, n);
}

/* Ends a connection that has no server running (host close, give-up). */
static void finish_idle(rconn *r, int err, const char *reason) {
  uv_timer_stop(&r->rc->timer);
  push_own_event(r, MCPP_EV_CLOSED, reason, r->rc->streak, 0, err);
  mcpp_close_info info = {err, reason, -1, 0};
  finish(r, &info);
}

static void on_retry(uv_timer_t *t);

/* A held frame's request timeout in ms as the engine would take it, or 0:
 * untimed, or no request the engine would time (m: the frame, scanned). */
static uint32_t held_timeout_ms(const reconnect *x, const cmd *k,
                                mcpp__msg *m) {
  uint32_t ms = k->timeout_ms == MCPP_TIMEOUT_DEFAULT
                    ? x->settings.request_timeout_ms
                : k->timeout_ms == MCPP_TIMEOUT_NONE ? 0
                                                     : k->timeout_ms;
  if (!ms || mcpp__scan_message(k->data, k->len, m) != 0 || m->dup ||
      !m->id.p || !m->method.p || m->method.n < 2 || m->method.p[0] != '"')
    return 0;
  return ms;
}

/* Sets the timer for what comes first: the respawn (waiting, the old
 * server reaped) or the earliest held request's expiry. */
static void reconnect_arm(rconn *r) {
  reconnect *x = r->rc;
  if (uv_is_closing((uv_handle_t *)&x->timer)) return;
  uint64_t due = x->held_due;
  x->retry_armed = x->phase == WAITING && !r->conn && x->retry_at <= due;
  if (x->retry_armed) due = x->retry_at;
  if (due == UINT64_MAX) {
    uv_timer_stop(&x->timer);
    return;
  }
  uint64_t now = uv_hrtime() / 1000;
  uv_timer_start(&x->timer, on_retry, due > now ? (due - now + 999) / 1000 : 0,
                 0);
}

/* A request held now has its timeout run from now, as it would had a
 * server been there: the application's wait does not stop for a
 * reconnect. */
static void start_held_timeout(rconn *r, cmd *k) {
  reconnect *x = r->rc;
  mcpp__msg m;
  uint32_t ms = held_timeout_ms(x, k, &m);
  k->deadline = ms ? uv_hrtime() / 1000 + (uint64_t)ms * 1000 : 0;
  if (!k->deadline || k->deadline >= x->held_due) return;
  x->held_due = k->deadline;
  reconnect_arm(r);
}

/* Answers a held request that is given up on (k unlinked by the caller,
 * id inside k or not) with the JSON-RPC error the engine gives one it
 * sent (error: "code,message"), and the event; then drops the frame: no
 * server saw it, so no notifications/cancelled goes anywhere. */
static void answer_held(rconn *r, cmd *k, const char *id, size_t id_len,
                        const char *error, mcpp_event *ev) {
  static const char d1[] = "{\"jsonrpc\":\"2.0\",\"id\":";
  static const char d2[] = ",\"error\":{\"code\":";
  static const char d3[] = "}}";
  size_t ne = strlen(error);
  mcpp_item *it = new_item(r->rt, r, MCPP_ITEM_MESSAGE,
                           sizeof d1 - 1 + id_len + sizeof d2 - 1 + ne +
                               sizeof d3 - 1);
  if (it) {
    char *p = it->data;
    memcpy(p, d1, sizeof d1 - 1);
    p += sizeof d1 - 1;
    memcpy(p, id, id_len);
    p += id_len;
    memcpy(p, d2, sizeof d2 - 1);
    p += sizeof d2 - 1;
    memcpy(p, error, ne);
    memcpy(p + ne, d3, sizeof d3 - 1);
    it->answer_kind = ev->type == MCPP_EV_REQUEST_TIMEOUT ? MCPP_ANSWER_TIMEOUT
                                                          : MCPP_ANSWER_ABANDONED;
  }
  push(r->rt, r, it);
  ev->state = MCPP_STATE_STALE;
  ev->id = id;
  ev->id_len = id_len;
  push_event(r, ev);
  /* Its bytes leave the outbound count, as a sent frame's do. */
  pthread_mutex_lock(&r->rt->mu);
  r->out_cmd_bytes -= k->len + 1;
  int wake = append_locked(r->rt, writable_locked(r));
  pthread_mutex_unlock(&r->rt->mu);
  if (wake) defer_wake(r->rt);
  rt_free(r->rt, k);
}

/* Answers each held request whose deadline has passed as the engine
 * answers one of its own that timed out (-32001, REQUEST_TIMEOUT), and
 * learns the earliest deadline left. */
static void expire_held(rconn *r, uint64_t now) {
  reconnect *x = r->rc;
  cmd *prev = NULL, *k = x->held;
  x->held_due = UINT64_MAX;
  while (k) {
    cmd *next = k->next;
    if (!k->deadline || k->deadline > now) {
      if (k->deadline && k->deadline < x->held_due) x->held_due = k->deadline;
      prev = k;
      k = next;
      continue;
    }
    if (prev)
      prev->next = next;
    else
      x->held = next;
    if (x->held_tail == k) x->held_tail = prev;
    mcpp__msg m;
    uint32_t ms = held_timeout_ms(x, k, &m);
    char error[128];
    mcpp__request_error(error, sizeof error, 1, ms);
    /* The frame goes: its method string is ended in place for the event. */
    char *method = k->data + (m.method.p - k->data) + 1;
    method[m.method.n - 2] = '\0';
    mcpp_event ev;
    memset(&ev, 0, sizeof ev);
    ev.type = MCPP_EV_REQUEST_TIMEOUT;
    ev.timeout_ms = ms;
    ev.message = method;
    answer_held(r, k, m.id.p, m.id.n, error, &ev);
    k = next;
  }
}

/* The old server is reaped: wait for retry_at. */
static void reconnect_wait(rconn *r) {
  mcpp_runtime *rt = r->rt;
  pthread_mutex_lock(&rt->mu);
  r->info.state = MCPP_STATE_STALE;
  r->healthy_until = 0;
  pthread_mutex_unlock(&rt->mu);
  reconnect_arm(r);
}

static void on_retry(uv_timer_t *t) {
  rconn *r = t->data;
  reconnect *x = r->rc;
  mcpp_runtime *rt = r->rt;
  int retry = x->retry_armed;
  expire_held(r, uv_hrtime() / 1000);
  if (!retry) {
    reconnect_arm(r);
    return;
  }
  mcpp_conn *c = NULL;
  int rc = mcpp_conn_spawn(&c, rt->loop, &x->settings, &x->options,
                           &conn_callbacks, r, &rt->alloc);
  if (rc) {
    /* A server that cannot start is a failed attempt too. */
    char reason[320], why[512];
    snprintf(reason, sizeof reason, "%s",
             *mcpp_conn_spawn_error() ? mcpp_conn_spawn_error()
                                      : mcpp_strerror(rc));
    uint32_t attempt, delay_ms;
    if (next_attempt(r, reason, &attempt, &delay_ms, why, sizeof why)) {
      finish_idle(r, MCPP_ERR_SPAWN, why);
      return;
    }
    push_own_event(r, MCPP_EV_RECONNECTING, reason, attempt, delay_ms, rc);
    push_own_record(r, attempt);
    reconnect_wait(r);
    return;
  }
  r->conn = c;
  mcpp__conn_set_progress(c, on_progress);
  mcpp__conn_follow_records(c, &r->records);
  hw_adopt(rt, c);
  mcpp__conn_set_reconnect_hook(c, plan_reconnect);
  mcpp_engine_set_reconnect_attempt(mcpp_conn_engine(c), x->streak);
  pthread_mutex_lock(&rt->mu);
  r->pid = mcpp_conn_pid(c);
  /* The new server is read from the start: a pause was the old one's. */
  if (r->paused) {
    r->paused = 0;
    rt->paused--;
  }
  pthread_mutex_unlock(&rt->mu);
  x->phase = REPLAYING;
  size_t n;
  const char *init = mcpp_handshake_replay(x->hs, x->streak, &n);
  if (init) {
    mcpp_conn_send_timed(c, init, n, REPLAY_TIMEOUT_MS);
  } else if (mcpp_handshake_captured(x->hs)) {
    mcpp__conn_fail(c, MCPP_ERR_NOMEM, "out of memory replaying initialize");
  } else {
    /* The application never initialized: nothing to replay. */
    reconnect_answer(r, c, NULL, 0);
  }
  /* Held requests still expire while the replay is answered. */
  reconnect_arm(r);
}

/* The new server has the session: the application's initialized, then
 * whatever it sent meanwhile, in order. */
static void reconnected(rconn *r, mcpp_conn *c) {
  reconnect *x = r->rc;
  uint32_t attempt = x->streak;
  x->phase = LIVE;
  x->streak = 0;
  size_t n;
  const char *inited = mcpp_handshake_initialized(x->hs, &n);
  if (inited) mcpp_conn_send(c, inited, n);
  note_session(r, 1);
  mcpp_engine_info info;
  mcpp_engine_get_info(mcpp_conn_engine(c), &info);
  push_own_event(r, MCPP_EV_RECONNECTED, info.peer_name, attempt, 0, 0);
  uint64_t now = uv_hrtime() / 1000;
  expire_held(r, now);
  cmd *k = x->held;
  x->held = x->held_tail = NULL;
  x->held_due = UINT64_MAX;
  while (k) {
    cmd *next = k->next;
    /* Its timeout ran while it was held: only what is left goes with it. */
    if (k->deadline) k->timeout_ms = (uint32_t)((k->deadline - now + 999) / 1000);
    send_now(r, k);
    rt_free(r->rt, k);
    k = next;
  }
  reconnect_arm(r);
}

/* Swallows the answer to the replayed initialize (and the in-doubt error
 * the engine gives it if that server fails too). Returns 1 if the frame
 * was it. frame NULL: there was nothing to replay. */
static int reconnect_answer(rconn *r, mcpp_conn *c, const char *frame,
                            size_t len) {
  reconnect *x = r->rc;
  int a = frame ? mcpp_handshake_answer(x->hs, frame, len) : MCPP_REPLAY_RESULT;
  if (a == MCPP_REPLAY_OTHER) return 0;
  if (x->phase != REPLAYING) return 1;
  if (a == MCPP_REPLAY_RESULT)
    reconnected(r, c);
  else
    mcpp__conn_fail(c, MCPP_ERR_IO,
                    "the new server did not accept the replayed initialize");
  return 1;
}

/* The application abandons a request held between two servers: it is
 * taken out (nothing goes to any server) and answered as the engine
 * answers an abandoned request. Returns 1 if it was held. Ids compare by
 * their raw text, as the application wrote both. */
static int reconnect_cancel_held(rconn *r, const char *id, size_t id_len) {
  reconnect *x = r->rc;
  cmd *prev = NULL;
  for (cmd *k = x->held; k; prev = k, k = k->next) {
    mcpp__msg m;
    if (mcpp__scan_message(k->data, k->len, &m) != 0 || !m.method.p ||
        !mcpp__span_eq(m.id, id, id_len))
      continue;
    if (prev)
      prev->next = k->next;
    else
      x->held = k->next;
    if (x->held_tail == k) x->held_tail = prev;
    mcpp_event ev;
    memset(&ev, 0, sizeof ev);
    ev.type = MCPP_EV_REQUEST_CANCELLED;
    char error[128];
    answer_held(r, k, id, id_len, mcpp__request_error(error, sizeof error, 0, 0),
                &ev);
    return 1;
  }
  return 0;
}

/* Sets up reconnect for a connection just spawned. */
static int reconnect_setup(rconn *r, const mcpp_settings *settings,
                           const mcpp_spawn_options *options) {
  mcpp_runtime *rt = r->rt;
  reconnect *x = rt_malloc(rt, sizeof *x);
  if (!x) return MCPP_ERR_NOMEM;
  memset(x, 0, sizeof *x);
  x->policy = settings->reconnect;
  x->held_due = UINT64_MAX;
  int rc = mcpp_handshake_new(&x->hs, &rt->alloc);
  if (rc == 0) rc = copy_spawn(rt, x, settings, options);
  if (rc) {
    free_reconnect(rt, x);
    rt_free(rt, x);
    return rc;
  }
  uv_timer_init(rt->loop, &x->timer);
  x->timer.data = r;
  r->rc = x;
  return 0;
}

static void stop_all(mcpp_runtime *rt) {
  rt->stopping = 1;
  if (!rt->conns) {
    close_loop_handles(rt);
    return;
  }
  for (rconn *r = rt->conns, *next; r; r = next) {
    next = r->next;
    if (r->conn)
      mcpp_conn_close(r->conn);
    else if (r->rc)
      finish_idle(r, 0, MCPP_CLOSED_BY_APP_REASON);
  }
}

/* Runs the commands the host queued, oldest first; on the loop's owner. */
static void run_commands(mcpp_runtime *rt) {
  pthread_mutex_lock(&rt->mu);
  cmd *k = rt->cmd_head;
  rt->cmd_head = rt->cmd_tail = NULL;
  int stop = rt->stop_requested;
  int resume = rt->resume;
  rt->resume = 0;
  pthread_mutex_unlock(&rt->mu);
  if (resume) resume_reading(rt);
  while (k) {
    cmd *next = k->next;
    rconn *r;
    switch (k->type) {
    case CMD_SPAWN:
      run_spawn(rt, k); /* k belongs to the waiting caller */
      k = next;
      continue;
    case CMD_SEND:
      if (run_send(rt, k)) {
        k = next; /* held: it belongs to the connection now */
        continue;
      }
      break;
    case CMD_CANCEL_REQUEST:
      if (!(r = find_conn(rt, k->conn_id))) break;
      /* Still held between two servers: it never went out. */
      if (r->rc && reconnect_cancel_held(r, k->data, k->len)) break;
      /* NOT_FOUND: answered or expired meanwhile, nothing to abandon. */
      if (r->conn) mcpp_conn_cancel_request(r->conn, k->data, k->len);
      break;
    case CMD_PING:
      run_ping(rt, k);
      break;
    case CMD_CANCEL_PING:
      run_cancel_ping(rt, k);
      break;
    case CMD_CLOSE:
      if ((r = find_conn(rt, k->conn_id)) && r->conn)
        mcpp_conn_close(r->conn);
      else if (r && r->rc)
        finish_idle(r, 0, MCPP_CLOSED_BY_APP_REASON);
      break;
    }
    rt_free(rt, k);
    k = next;
  }
  /* After the commands queued before it, as the host issued them. */
  if (stop && !rt->stopping) stop_all(rt);
}

static void on_async(uv_async_t *a) {
  mcpp_runtime *rt = a->data;
  run_commands(rt);
  /* The host asked for the loop (mcpp_runtime_host_attach): the I/O
   * thread leaves it after this turn and becomes the watchdog. */
  if (rt->runner == RUN_THREAD && atomic_load(&rt->mode) == MCPP_MODE_HOST)
    uv_stop(rt->loop);
}

static int on_host_thread_locked(mcpp_runtime *rt) {
  return atomic_load(&rt->mode) == MCPP_MODE_HOST &&
         pthread_equal(rt->host_thread, pthread_self());
}

/* Queues a command (mutex held). Returns 1 if the caller is the host
 * thread in host mode: once it has let go of the mutex it runs the queue
 * itself (run_queued), no thread is woken; else the loop is woken. */
static int enqueue_locked(mcpp_runtime *rt, cmd *k) {
  k->next = NULL;
  if (rt->cmd_tail)
    rt->cmd_tail->next = k;
  else
    rt->cmd_head = k;
  rt->cmd_tail = k;
  if (on_host_thread_locked(rt)) return 1;
  uv_async_send(&rt->async);
  return 0;
}

static int run_inline(mcpp_runtime *rt);

/* After enqueue_locked, the mutex released. */
static void run_queued(mcpp_runtime *rt, int on_host) {
  if (on_host && !run_inline(rt)) uv_async_send(&rt->async);
}

static cmd *new_cmd(mcpp_runtime *rt, cmd_type type, uint64_t id, size_t len) {
  cmd *k = rt_malloc(rt, sizeof *k + len);
  if (!k) return NULL;
  memset(k, 0, sizeof *k);
  k->type = type;
  k->conn_id = id;
  k->len = len;
  return k;
}

/* -------------------------------------------------------------- the thread */

static void watch(mcpp_runtime *rt);

/* The I/O thread: runs the loop in thread mode, watches it in host mode,
 * until everything is closed. */
static void *io_main(void *arg) {
  mcpp_runtime *rt = arg;
  pthread_mutex_lock(&rt->run_mu);
  for (;;) {
    rt->runner = RUN_THREAD;
    int alive = uv_run(rt->loop, UV_RUN_DEFAULT);
    rt->runner = RUN_NONE;
    if (!alive) break; /* stopped: every handle is closed */
    pthread_mutex_lock(&rt->mu);
    rt->io_parked = 1;
    pthread_cond_broadcast(&rt->cv);
    pthread_mutex_unlock(&rt->mu);
    pthread_mutex_unlock(&rt->run_mu);
    watch(rt);
    pthread_mutex_lock(&rt->run_mu);
    hw_set_owner(rt, 0); /* thread mode: uv reads every connection */
    pthread_mutex_lock(&rt->mu);
    rt->io_parked = 0;
    pthread_mutex_unlock(&rt->mu);
  }
  pthread_mutex_unlock(&rt->run_mu);
  return NULL;
}

/* Starts the I/O thread with every asynchronous signal blocked, so the
 * host's handlers (Python's SIGINT, Node's) keep running on its threads.
 * Called with the mutex held. */
static int start_locked(mcpp_runtime *rt) {
  rt->loop = rt_malloc(rt, sizeof *rt->loop);
  if (!rt->loop) return MCPP_ERR_NOMEM;
  if (uv_loop_init(rt->loop)) {
    rt_free(rt, rt->loop);
    rt->loop = NULL;
    return MCPP_ERR_THREAD;
  }
  uv_async_init(rt->loop, &rt->async, on_async);
  rt->async.data = rt;
  uv_idle_init(rt->loop, &rt->waker);
  rt->waker.data = rt;
  sigset_t all, old;
  sigfillset(&all);
  static const int sync_signals[] = {SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT,
                                     SIGTRAP};
  for (size_t i = 0; i < sizeof sync_signals / sizeof *sync_signals; i++)
    sigdelset(&all, sync_signals[i]);
  pthread_sigmask(SIG_SETMASK, &all, &old);
  int rc = pthread_create(&rt->thread, NULL, io_main, rt);
  pthread_sigmask(SIG_SETMASK, &old, NULL);
  if (rc) {
    uv_close((uv_handle_t *)&rt->async, NULL);
    uv_close((uv_handle_t *)&rt->waker, NULL);
    uv_run(rt->loop, UV_RUN_DEFAULT);
    uv_loop_close(rt->loop);
    rt_free(rt, rt->loop);
    rt->loop = NULL;
    return MCPP_ERR_THREAD;
  }
  rt->started = 1;
  return 0;
}

/* ---------------------------------------------------------- host mode
 *
 * The host's event loop runs our loop one non-blocking turn at a time
 * (mcpp_runtime_host_run) and runs its own commands inline; the I/O thread
 * parks outside the loop and watches (watch). Every turn, whoever takes
 * it, holds run_mu, so the loop has one owner at a time and its state
 * (line buffers, write queues, timers, the item queue) simply carries over
 * from one owner to the next: nothing to hand off, nothing to reorder. */

static void init_watch_cv(pthread_cond_t *cv) {
#ifdef __APPLE__
  pthread_cond_init(cv, NULL); /* waits are relative there */
#else
  pthread_condattr_t at;
  pthread_condattr_init(&at);
  pthread_condattr_setclock(&at, CLOCK_MONOTONIC); /* no clock jumps */
  pthread_cond_init(cv, &at);
  pthread_condattr_destroy(&at);
#endif
}

/* Waits on the watchdog's condition (mu held) for up to ms. */
static void watch_wait(mcpp_runtime *rt, uint32_t ms) {
  struct timespec ts;
#ifdef __APPLE__
  ts.tv_sec = ms / 1000;
  ts.tv_nsec = (long)(ms % 1000) * 1000000L;
  pthread_cond_timedwait_relative_np(&rt->watch_cv, &rt->mu, &ts);
#else
  clock_gettime(CLOCK_MONOTONIC, &ts);
  ts.tv_sec += ms / 1000;
  ts.tv_nsec += (long)(ms % 1000) * 1000000L;
  if (ts.tv_nsec >= 1000000000L) {
    ts.tv_sec++;
    ts.tv_nsec -= 1000000000L;
  }
  pthread_cond_timedwait(&rt->watch_cv, &rt->mu, &ts);
#endif
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
static void hw_adopt(mcpp_runtime *rt, mcpp_conn *c) {
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
static void hw_forget(mcpp_runtime *rt, rconn *r) {
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
static void hw_set_owner(mcpp_runtime *rt, int host) {
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
static void hw_drop_all(mcpp_runtime *rt) {
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
  hw_set_owner(rt, 0);
  uint64_t turns = atomic_load(&rt->host_turns);
  for (;;) {
    rt->runner = RUN_WATCHDOG;
    uv_run(rt->loop, UV_RUN_NOWAIT);
    flush_corks(rt);
    rt->runner = RUN_NONE;
    int t = loop_timeout(rt->loop);
    struct pollfd p = {uv_backend_fd(rt->loop), POLLIN, 0};
    pthread_mutex_unlock(&rt->run_mu);
    flush_wake(rt); /* notify never runs under run_mu: the host may wait */
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
static void watch(mcpp_runtime *rt) {
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
static int run_inline(mcpp_runtime *rt) {
  pthread_mutex_lock(&rt->run_mu);
  if (atomic_load(&rt->mode) != MCPP_MODE_HOST) {
    pthread_mutex_unlock(&rt->run_mu);
    return 0;
  }
  rt->runner = RUN_HOST;
  uv_update_time(rt->loop);
  hw_set_owner(rt, 1);
  run_commands(rt);
  if (!rt->host_cork) flush_corks(rt);
  rt->runner = RUN_NONE;
  note_rearm(rt);
  hw_reconcile(rt);
  pthread_mutex_unlock(&rt->run_mu);
  hw_apply(rt);
  flush_wake(rt);
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
  flush_wake(rt); /* a write that failed may have closed a connection */
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
  } else if (!rt->started && (rc = start_locked(rt)) != 0) {
    /* rc says why */
  } else {
    rt->host_thread = pthread_self();
    rt->stall_ms = stall;
    rt->told_due = UINT64_MAX;
    rt->rearm_ms = -1;
    /* Made before the watchdog starts: it polls this set unlocked. */
    if (watch_fd && rt->wd_ep < 0) rt->wd_ep = hw_open_set();
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
    hw_set_owner(rt, 0);
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
  hw_set_owner(rt, 1);
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
  hw_set_owner(rt, 0);
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
    pthread_cond_broadcast(&rt->watch_cv);
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

/* ------------------------------------------------------------- public API */

static void init_host_state(mcpp_runtime *rt) {
  pthread_mutex_init(&rt->run_mu, NULL);
  init_watch_cv(&rt->watch_cv);
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
  snprintf(rt->why, sizeof rt->why, "%s",
           "not attached to the host's event loop");
}

int mcpp_runtime_new(mcpp_runtime **out, const mcpp_runtime_options *options) {
  if (!out) return MCPP_ERR_INVALID_ARGUMENT;
  if (!MCPP__KNOWN_VERSION(options, MCPP_RUNTIME_OPTIONS_V1)) {
    *out = NULL;
    return MCPP_ERR_INVALID_ARGUMENT;
  }
  *out = NULL;
  const mcpp_allocator *a =
      options && options->alloc ? options->alloc : mcpp_default_allocator();
  mcpp_runtime *rt = a->malloc(sizeof *rt, a->user_data);
  if (!rt) return MCPP_ERR_NOMEM;
  memset(rt, 0, sizeof *rt);
  rt->alloc = *a;
  if (options) {
    rt->notify = options->notify;
    rt->notify_data = options->user_data;
  }
  pthread_mutex_init(&rt->mu, NULL);
  pthread_cond_init(&rt->cv, NULL);
  init_host_state(rt);
  mcpp_retry_budget_init(&rt->budget, MCPP_RETRY_BUDGET_BURST,
                         MCPP_RETRY_BUDGET_PER_SECOND);
  *out = rt;
  return 0;
}

int mcpp_runtime_set_retry_budget(mcpp_runtime *rt, uint32_t burst,
                                  double per_second) {
  if (!rt) return MCPP_ERR_INVALID_ARGUMENT;
  mcpp_retry_budget b;
  int rc = mcpp_retry_budget_init(&b, burst, per_second);
  if (rc) return rc;
  pthread_mutex_lock(&rt->mu);
  b.tat_us = rt->budget.tat_us; /* slots taken stay taken */
  rt->budget = b;
  pthread_mutex_unlock(&rt->mu);
  return 0;
}

void mcpp_runtime_free(mcpp_runtime *rt) {
  if (!rt) return;
  if (rt->started) {
    pthread_mutex_lock(&rt->mu);
    rt->stop_requested = 1;
    /* The watchdog goes back into the loop to close everything. */
    atomic_store(&rt->mode, MCPP_MODE_THREAD);
    pthread_cond_broadcast(&rt->watch_cv);
    uv_async_send(&rt->async);
    pthread_mutex_unlock(&rt->mu);
    pthread_join(rt->thread, NULL);
    hw_drop_all(rt);
    MCPP__HOOK_LOOP_CLOSED(uv_loop_close(rt->loop));
    rt_free(rt, rt->loop);
  }
  for (cmd *k = rt->cmd_head, *next; k; k = next) {
    next = k->next;
    if (k->type != CMD_SPAWN) rt_free(rt, k);
  }
  mcpp_runtime_items_free(rt, rt->item_head);
  rt_free(rt, rt->conn_index);
  pthread_mutex_destroy(&rt->mu);
  pthread_cond_destroy(&rt->cv);
  pthread_mutex_destroy(&rt->run_mu);
  pthread_cond_destroy(&rt->watch_cv);
  rt->alloc.free(rt, rt->alloc.user_data);
}

/* The calling thread's last spawn's OS error: the command may have run on
 * the runtime's thread, whose own thread-local the driver set. */
static _Thread_local int last_spawn_os_error;

int mcpp_runtime_spawn_os_error(void) { return last_spawn_os_error; }

int mcpp_runtime_spawn(mcpp_runtime *rt, const mcpp_settings *settings,
                       const mcpp_spawn_options *options,
                       void *conn_user_data, uint64_t *conn_id,
                       char *errbuf, size_t errbuf_len) {
  last_spawn_os_error = 0;
  if (!rt || !options || !options->file || !options->args ||
      !MCPP__KNOWN_VERSION(options, MCPP_SPAWN_OPTIONS_V1) ||
      (settings && !mcpp__settings_size(settings->version)))
    return MCPP_ERR_INVALID_ARGUMENT;
  if (errbuf && errbuf_len) errbuf[0] = '\0';
  cmd k;
  memset(&k, 0, sizeof k);
  k.type = CMD_SPAWN;
  k.settings = settings;
  k.options = options;
  k.conn_user_data = conn_user_data;
  k.errbuf = errbuf;
  k.errbuf_len = errbuf_len;
  pthread_mutex_lock(&rt->mu);
  if (!rt->started) {
    int rc = start_locked(rt);
    if (rc) {
      pthread_mutex_unlock(&rt->mu);
      if (errbuf && errbuf_len)
        snprintf(errbuf, errbuf_len, "%s", mcpp_strerror(rc));
      return rc;
    }
  }
  if (enqueue_locked(rt, &k)) {
    pthread_mutex_unlock(&rt->mu);
    run_queued(rt, 1);
    pthread_mutex_lock(&rt->mu);
  }
  while (!k.done) pthread_cond_wait(&rt->cv, &rt->mu);
  pthread_mutex_unlock(&rt->mu);
  if (k.result == 0 && conn_id) *conn_id = k.conn_id;
  last_spawn_os_error = k.os_error;
  return k.result;
}

/* Queues a command for an open connection; returns NOT_FOUND otherwise.
 * close marks the connection so later commands are refused. */
static int submit(mcpp_runtime *rt, cmd *k, int closing) {
  pthread_mutex_lock(&rt->mu);
  rconn *r = find_conn(rt, k->conn_id);
  if (!r || r->closing) {
    pthread_mutex_unlock(&rt->mu);
    rt_free(rt, k);
    return MCPP_ERR_NOT_FOUND;
  }
  if (closing) r->closing = 1;
  int on_host = enqueue_locked(rt, k);
  pthread_mutex_unlock(&rt->mu);
  run_queued(rt, on_host);
  return 0;
}

int mcpp_runtime_send(mcpp_runtime *rt, uint64_t conn_id, const char *frame,
                      size_t len) {
  return mcpp_runtime_send_timed(rt, conn_id, frame, len,
                                 MCPP_TIMEOUT_DEFAULT);
}

int mcpp_runtime_send_timed(mcpp_runtime *rt, uint64_t conn_id,
                            const char *frame, size_t len,
                            uint32_t timeout_ms) {
  if (!rt || (!frame && len)) return MCPP_ERR_INVALID_ARGUMENT;
  if (timeout_ms > MCPP_MAX_MS && timeout_ms != MCPP_TIMEOUT_NONE)
    return MCPP_ERR_INVALID_ARGUMENT;
  if (len && memchr(frame, '\n', len)) return MCPP_ERR_FRAME_NEWLINE;
  cmd *k = new_cmd(rt, CMD_SEND, conn_id, len);
  if (!k) return MCPP_ERR_NOMEM;
  if (len) memcpy(k->data, frame, len);
  k->timeout_ms = timeout_ms;
  pthread_mutex_lock(&rt->mu);
  rconn *r = find_conn(rt, conn_id);
  if (!r || r->closing) {
    pthread_mutex_unlock(&rt->mu);
    rt_free(rt, k);
    return MCPP_ERR_NOT_FOUND;
  }
  /* A frame larger than the cap still goes out alone: refusing it for
   * ever would lose it. */
  size_t queued = r->out_cmd_bytes + r->out_wq_bytes, need = len + 1;
  if (queued && queued + need > r->cap) {
    size_t at = need < r->cap ? r->cap - need : 0;
    if (at < r->writable_at) r->writable_at = at;
    pthread_mutex_unlock(&rt->mu);
    rt_free(rt, k);
    return MCPP_ERR_WOULD_BLOCK;
  }
  r->out_cmd_bytes += need;
  int on_host = enqueue_locked(rt, k);
  pthread_mutex_unlock(&rt->mu);
  run_queued(rt, on_host);
  return 0;
}

int mcpp_runtime_cancel_request(mcpp_runtime *rt, uint64_t conn_id,
                                const char *id, size_t id_len) {
  if (!rt || !id || !id_len) return MCPP_ERR_INVALID_ARGUMENT;
  cmd *k = new_cmd(rt, CMD_CANCEL_REQUEST, conn_id, id_len);
  if (!k) return MCPP_ERR_NOMEM;
  memcpy(k->data, id, id_len);
  return submit(rt, k, 0);
}

int mcpp_runtime_ping(mcpp_runtime *rt, uint64_t conn_id, uint32_t timeout_ms,
                      uint64_t token) {
  if (!rt) return MCPP_ERR_INVALID_ARGUMENT;
  cmd *k = new_cmd(rt, CMD_PING, conn_id, 0);
  if (!k) return MCPP_ERR_NOMEM;
  k->timeout_ms = timeout_ms;
  k->token = token;
  return submit(rt, k, 0);
}

int mcpp_runtime_cancel_ping(mcpp_runtime *rt, uint64_t conn_id,
                             uint64_t token) {
  if (!rt) return MCPP_ERR_INVALID_ARGUMENT;
  cmd *k = new_cmd(rt, CMD_CANCEL_PING, conn_id, 0);
  if (!k) return MCPP_ERR_NOMEM;
  k->token = token;
  return submit(rt, k, 0);
}

int mcpp_runtime_pid(mcpp_runtime *rt, uint64_t conn_id) {
  if (!rt) return MCPP_ERR_INVALID_ARGUMENT;
  pthread_mutex_lock(&rt->mu);
  rconn *r = find_conn(rt, conn_id);
  int pid = r ? r->pid : MCPP_ERR_NOT_FOUND;
  pthread_mutex_unlock(&rt->mu);
  return pid;
}

int mcpp_runtime_close(mcpp_runtime *rt, uint64_t conn_id) {
  if (!rt) return MCPP_ERR_INVALID_ARGUMENT;
  cmd *k = new_cmd(rt, CMD_CLOSE, conn_id, 0);
  if (!k) return MCPP_ERR_NOMEM;
  return submit(rt, k, 1);
}

int mcpp_runtime_info_versioned(mcpp_runtime *rt, uint64_t conn_id,
                                int version, mcpp_engine_info *info,
                                int *healthy) {
  /* V1 is the only layout so far; a later one copies its prefix. */
  if (!rt || version != MCPP_ENGINE_INFO_V1) return MCPP_ERR_INVALID_ARGUMENT;
  pthread_mutex_lock(&rt->mu);
  rconn *r = find_conn(rt, conn_id);
  if (r) {
    if (info) *info = r->info;
    /* Live: the engine's verdict as of now, not as of the snapshot. */
    if (healthy) *healthy = uv_hrtime() / 1000 < r->healthy_until;
  }
  pthread_mutex_unlock(&rt->mu);
  return r ? 0 : MCPP_ERR_NOT_FOUND;
}

int mcpp_runtime_session(mcpp_runtime *rt, uint64_t conn_id,
                         char *protocol_version, size_t version_cap,
                         char *peer_name, size_t name_cap) {
  if (!rt) return MCPP_ERR_INVALID_ARGUMENT;
  pthread_mutex_lock(&rt->mu);
  rconn *r = find_conn(rt, conn_id);
  if (r) {
    const char *v = r->session ? r->session : "";
    const char *n = r->session ? session_name(r->session) : "";
    if (protocol_version && version_cap)
      snprintf(protocol_version, version_cap, "%s", v);
    if (peer_name && name_cap) snprintf(peer_name, name_cap, "%s", n);
  }
  pthread_mutex_unlock(&rt->mu);
  return r ? 0 : MCPP_ERR_NOT_FOUND;
}

mcpp_item *mcpp_runtime_drain(mcpp_runtime *rt) {
  if (!rt) return NULL;
  pthread_mutex_lock(&rt->mu);
  mcpp_item *items = rt->item_head;
  rt->item_head = rt->item_tail = NULL;
  rt->notified = 0;
  rt->wake_due = 0; /* the host has them */
  /* The items still count against their connections until freed. */
  pthread_mutex_unlock(&rt->mu);
  return items;
}

/* Gives back what the items still count against their connections, one
 * lock for the whole list: a batch is mostly runs of a few connections. */
static void release_items(mcpp_runtime *rt, const mcpp_item *items) {
  enum { RUNS = 16 };
  struct {
    uint64_t id;
    size_t bytes;
  } run[RUNS];
  size_t n = 0;
  for (const mcpp_item *it = items; it; it = it->next) {
    if (!it->charge) continue;
    size_t i = 0;
    while (i < n && run[i].id != it->conn_id) i++;
    if (i == n && n == RUNS) {
      /* Many connections in one batch: give back what is summed so far. */
      pthread_mutex_lock(&rt->mu);
      for (size_t j = 0; j < n; j++) release_locked(rt, run[j].id, run[j].bytes);
      pthread_mutex_unlock(&rt->mu);
      n = i = 0;
    }
    if (i == n) {
      run[n].id = it->conn_id;
      run[n++].bytes = 0;
    }
    run[i].bytes += it->charge;
  }
  if (!n) return;
  pthread_mutex_lock(&rt->mu);
  for (size_t j = 0; j < n; j++) release_locked(rt, run[j].id, run[j].bytes);
  pthread_mutex_unlock(&rt->mu);
}

void mcpp_runtime_items_free(mcpp_runtime *rt, mcpp_item *items) {
  if (!rt) return;
  release_items(rt, items);
  while (items) {
    mcpp_item *next = items->next;
    rt_free(rt, items);
    items = next;
  }
}

size_t mcpp_item_take_charge(mcpp_item *item) {
  if (!item) return 0;
  size_t n = item->charge;
  item->charge = 0;
  return n;
}

int mcpp_runtime_set_records(mcpp_runtime *rt, uint64_t conn_id,
                             int enabled) {
  if (!rt) return MCPP_ERR_INVALID_ARGUMENT;
  pthread_mutex_lock(&rt->mu);
  rconn *r = find_conn(rt, conn_id);
  /* Commands queued after this call see it: they pass the same mutex. */
  if (r) atomic_store_explicit(&r->records, enabled != 0, memory_order_relaxed);
  pthread_mutex_unlock(&rt->mu);
  return r ? 0 : MCPP_ERR_NOT_FOUND;
}

int mcpp_runtime_set_ping_events(mcpp_runtime *rt, uint64_t conn_id,
                                 int enabled) {
  if (!rt) return MCPP_ERR_INVALID_ARGUMENT;
  pthread_mutex_lock(&rt->mu);
  rconn *r = find_conn(rt, conn_id);
  /* Commands queued after this call see it: they pass the same mutex. */
  if (r)
    atomic_store_explicit(&r->ping_events, enabled != 0, memory_order_relaxed);
  pthread_mutex_unlock(&rt->mu);
  return r ? 0 : MCPP_ERR_NOT_FOUND;
}

int mcpp_runtime_feed_rtt_stats(mcpp_runtime *rt, uint64_t conn_id,
                                mcpp_rtt_stats *stats, double us_per_unit) {
  if (!rt || (stats && !(us_per_unit > 0))) return MCPP_ERR_INVALID_ARGUMENT;
  pthread_mutex_lock(&rt->mu);
  rconn *r = find_conn(rt, conn_id);
  /* rtt_mu inside mu, as in finish(), which unlinks r in the same hold. */
  if (r) {
    pthread_mutex_lock(&rtt_mu);
    r->rtt = stats;
    r->rtt_unit = us_per_unit;
    pthread_mutex_unlock(&rtt_mu);
  }
  pthread_mutex_unlock(&rt->mu);
  return r ? 0 : MCPP_ERR_NOT_FOUND;
}

int mcpp_runtime_set_metrics(mcpp_runtime *rt, uint64_t conn_id,
                             mcpp_metrics_cell *cell) {
  if (!rt) return MCPP_ERR_INVALID_ARGUMENT;
  pthread_mutex_lock(&rt->mu);
  rconn *r = find_conn(rt, conn_id);
  /* Under mu, as finish() drops it in the same hold that unlinks r. */
  if (r) mcpp__metrics_slot_set(&r->metrics, cell);
  pthread_mutex_unlock(&rt->mu);
  return r ? 0 : MCPP_ERR_NOT_FOUND;
}

void mcpp_runtime_rtt_lock(void) { pthread_mutex_lock(&rtt_mu); }

void mcpp_runtime_rtt_unlock(void) { pthread_mutex_unlock(&rtt_mu); }

int mcpp_runtime_release(mcpp_runtime *rt, uint64_t conn_id, size_t bytes) {
  if (!rt) return MCPP_ERR_INVALID_ARGUMENT;
  pthread_mutex_lock(&rt->mu);
  int found = find_conn(rt, conn_id) != NULL;
  release_locked(rt, conn_id, bytes);
  pthread_mutex_unlock(&rt->mu);
  return found ? 0 : MCPP_ERR_NOT_FOUND;
}

/* The parent's loop, which a forked child cannot close (uv_loop_close
 * needs its handles closed, on the thread that is gone): kept, reachable,
 * so it is never mistaken for a leak. One per fork, never per connection. */
typedef struct forked_loop {
  struct forked_loop *next;
  uv_loop_t *loop;
} forked_loop;
static forked_loop *forked_loops;

static void keep_forked_loop(uv_loop_t *loop) {
  forked_loop *k = malloc(sizeof *k);
  if (k == NULL) return; /* then it is simply lost */
  k->loop = loop;
  k->next = forked_loops;
  forked_loops = k;
}

void mcpp_runtime_after_fork_child(mcpp_runtime *rt) {
  if (!rt) return;
  /* Another thread may have held these at fork time. */
  pthread_mutex_init(&rt->mu, NULL);
  pthread_cond_init(&rt->cv, NULL);
  pthread_mutex_init(&rtt_mu, NULL); /* the I/O thread may have fed stats */
  /* The host loop and the watchdog are the parent's: thread mode. */
  hw_drop_all(rt);
  init_host_state(rt);
  snprintf(rt->why, sizeof rt->why, "%s",
           "a forked child starts in thread mode");
  if (!rt->started) return;
  /* The parent's servers stay the parent's: close our copies of their
   * pipes, never signal them. The old loop cannot be closed without its
   * thread, so its memory is left behind and its epoll fd closed. */
  for (rconn *r = rt->conns, *next; r; r = next) {
    next = r->next;
    if (r->conn) mcpp__conn_after_fork(r->conn);
    rt_free(rt, r->tokens);
    if (r->rc) free_reconnect(rt, r->rc);
    rt_free(rt, r->rc);
    rt_free(rt, r->session);
    rt_free(rt, r);
  }
  rt->conns = NULL;
  rt_free(rt, rt->conn_index);
  rt->conn_index = NULL;
  rt->conn_index_cap = rt->n_conns = 0;
  for (cmd *k = rt->cmd_head, *next; k; k = next) {
    next = k->next;
    if (k->type != CMD_SPAWN) rt_free(rt, k);
  }
  rt->cmd_head = rt->cmd_tail = NULL;
  mcpp_runtime_items_free(rt, rt->item_head);
  rt->item_head = rt->item_tail = NULL;
  rt->notified = 0;
  rt->wake_due = 0;
  int fd = uv_backend_fd(rt->loop);
  if (fd >= 0) close(fd);
  keep_forked_loop(rt->loop);
  rt->loop = NULL;
  rt->started = 0;
  rt->stopping = 0;
  rt->stop_requested = 0;
  rt->paused = 0;
  rt->resume = 0;
}
