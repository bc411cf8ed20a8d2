/*
 * What waits for the host, and its bound. The loop's owner turns driver
 * callbacks into items, queued under the runtime's mutex with the
 * connection's snapshot (what info() shows), and wakes the host once per
 * turn of the loop. Per connection, the bytes of the items the host holds
 * stop its reading at max_pending_bytes and resume it below half; the
 * outbound bytes not yet written refuse sends until a WRITABLE item.
 */
#include <pthread.h>
#include <stdint.h>
#include <string.h>
#include <uv.h>

#include "driver/driver.h"
#include "internal.h"

mcpp_item *mcpp__rt_new_item(mcpp_runtime *rt, rconn *r, mcpp_item_type type,
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
 * waker (mcpp__rt_defer_wake): the item wakes and no notify is outstanding or
 * due since the last drain. */
int mcpp__rt_append_locked(mcpp_runtime *rt, mcpp_item *it) {
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
void mcpp__rt_flush_wake(mcpp_runtime *rt) {
  pthread_mutex_lock(&rt->mu);
  int go = rt->wake_due;
  rt->wake_due = 0;
  if (go) rt->notified = 1;
  pthread_mutex_unlock(&rt->mu);
  if (go && rt->notify) rt->notify(rt->notify_data);
}

static void on_waker(uv_idle_t *h) {
  uv_idle_stop(h);
  mcpp__rt_flush_wake(h->data);
}

/* Notifies once the callbacks of this turn of the loop have run: an idle
 * handle runs on the next turn and, while active, keeps the loop from
 * blocking in poll, so a wake armed anywhere (a read, a timer, a write, a
 * close, the prepare phase) is never left waiting for more I/O. */
void mcpp__rt_defer_wake(mcpp_runtime *rt) {
  /* The host drains after its own turn; the watchdog flushes after each
   * of its turns (host_settle, mcpp__host_run_inline, take_over). */
  if (rt->runner == RUN_HOST || rt->runner == RUN_WATCHDOG) return;
  if (uv_is_closing((uv_handle_t *)&rt->waker))
    /* stopping: nothing turns the loop for it any more */
    mcpp__rt_flush_wake(rt);
  else
    uv_idle_start(&rt->waker, on_waker);
}

/* What another thread may read of the engine, taken on the I/O thread. */
typedef struct snapshot {
  int valid;
  mcpp_engine_info info;
  uint64_t healthy_until;
  size_t queued;
  uint64_t unreadable; /* the engine's count, and its first such frame */
  const char *first;
  size_t first_len;
  size_t unended; /* bytes waiting for a newline, and where they are */
  const char *tail;
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
  sn->unreadable = mcpp_engine_unreadable(e, &sn->first, &sn->first_len);
  sn->unended = mcpp__conn_unended(r->conn, &sn->tail);
  /* Between a failed server and the answer to the replayed initialize the
   * session is not there: not alive, and never healthy. */
  if (r->rc && r->rc->phase != LIVE) {
    sn->info.state = MCPP_STATE_STALE;
    sn->healthy_until = 0;
  }
}

/* Queues a WRITABLE item if a refused send now fits. */
mcpp_item *mcpp__rt_writable_locked(rconn *r) {
  if (r->writable_at == SIZE_MAX ||
      r->out_cmd_bytes + r->out_wq_bytes > r->writable_at)
    return NULL;
  mcpp_item *it = mcpp__rt_new_item(r->rt, r, MCPP_ITEM_WRITABLE, 0);
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
  /* The first frame is kept once (a respawned server's engine counts
   * afresh); the engine's copy is there while this thread runs it. */
  if (sn->unreadable != r->unreadable) {
    if (sn->unreadable < r->unreadable || r->unreadable == 0) {
      r->unreadable_len = sn->first ? sn->first_len : 0;
      if (sn->first) memcpy(r->unreadable_first, sn->first, r->unreadable_len);
    }
    r->unreadable = sn->unreadable;
  }
  r->unended = sn->unended;
  r->tail_len = sn->unended < sizeof r->tail ? sn->unended : sizeof r->tail;
  if (r->tail_len) memcpy(r->tail, sn->tail, r->tail_len);
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
 * engine leave that to mcpp__rt_on_progress, which runs when the engine
 * returns. */
int mcpp__rt_push_counted(mcpp_runtime *rt, rconn *r, mcpp_item *it,
                          int may_pause) {
  snapshot sn;
  take_snapshot(r, &sn);
  pthread_mutex_lock(&rt->mu);
  store_snapshot_locked(r, &sn);
  int wake = mcpp__rt_append_locked(rt, it);
  int pause = 0;
  if (it) r->held += it->charge;
  if (may_pause) pause = pause_at_cap_locked(r, &wake);
  pthread_mutex_unlock(&rt->mu);
  if (wake) mcpp__rt_defer_wake(rt);
  return pause;
}

void mcpp__rt_push(mcpp_runtime *rt, rconn *r, mcpp_item *it) {
  mcpp__rt_push_counted(rt, r, it, 0);
}

int mcpp__rt_push_data(rconn *r, mcpp_item_type type, const char *data,
                       size_t len) {
  mcpp_item *it = mcpp__rt_new_item(r->rt, r, type, len);
  if (it) memcpy(it->data, data, len);
  return mcpp__rt_push_counted(r->rt, r, it, type == MCPP_ITEM_STDERR);
}

/* The driver's progress hook: after every engine call and write. Refreshes
 * the snapshot, stops reading at the cap, and tells the host when a
 * refused send fits again. */
void mcpp__rt_on_progress(mcpp_conn *c, void *ud) {
  rconn *r = ud;
  mcpp_runtime *rt = r->rt;
  snapshot sn;
  take_snapshot(r, &sn);
  pthread_mutex_lock(&rt->mu);
  store_snapshot_locked(r, &sn);
  int wake = mcpp__rt_append_locked(rt, mcpp__rt_writable_locked(r));
  int pause = pause_at_cap_locked(r, &wake);
  pthread_mutex_unlock(&rt->mu);
  if (wake) mcpp__rt_defer_wake(rt);
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

void mcpp__rt_resume_reading(mcpp_runtime *rt) {
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
void mcpp__rt_release_locked(mcpp_runtime *rt, uint64_t id, size_t bytes) {
  rconn *r = mcpp__rt_find_conn(rt, id);
  if (!r || !bytes) return;
  r->held -= bytes < r->held ? bytes : r->held;
  if (may_resume(r) && !rt->resume) {
    rt->resume = 1;
    uv_async_send(&rt->async);
  }
}

void mcpp__rt_push_ping_failed(rconn *r, uint64_t token, int err) {
  mcpp_item *it = mcpp__rt_new_item(r->rt, r, MCPP_ITEM_PING_FAILED, 0);
  if (it) {
    it->ping_token = token;
    it->error = err;
  }
  mcpp__rt_push(r->rt, r, it);
}

/* Writes a queued frame; its bytes move from the command queue to the
 * driver's write queue (the progress hook counts those). */
void mcpp__rt_send_now(rconn *r, cmd *k) {
  mcpp_runtime *rt = r->rt;
  /* CLOSED: the connection is going; its CLOSED item tells the host. */
  if (r->conn) mcpp_conn_send_timed(r->conn, k->data, k->len, k->timeout_ms);
  snapshot sn;
  take_snapshot(r, &sn);
  pthread_mutex_lock(&rt->mu);
  r->out_cmd_bytes -= k->len + 1;
  store_snapshot_locked(r, &sn);
  int wake = mcpp__rt_append_locked(rt, mcpp__rt_writable_locked(r));
  pthread_mutex_unlock(&rt->mu);
  if (wake) mcpp__rt_defer_wake(rt);
}
