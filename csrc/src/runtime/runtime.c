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
 *
 * The items and their bound are queue.c's; in host mode the host's own
 * loop runs this loop instead, and the I/O thread only watches
 * (host_mode.c); a failed server is spawned again in respawn.c.
 * internal.h is what the four files share.
 */
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <uv.h>

#include "driver/driver.h"
#include "engine/internal.h"
#include "engine/metrics_tally_internal.h"
#include "engine/test_hooks.h"
#include "internal.h"
#include "item.h"
#include "mcpping.h"

/* Guards every mcpp_rtt_stats a runtime feeds (mcpp_runtime_rtt_lock). */
static pthread_mutex_t rtt_mu = PTHREAD_MUTEX_INITIALIZER;

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

rconn *mcpp__rt_find_conn(mcpp_runtime *rt, uint64_t id) {
  if (rt->conn_index) {
    rconn *r = rt->conn_index[conn_bucket(id, rt->conn_index_cap)];
    while (r && r->id != id) r = r->next_in_bucket;
    return r;
  }
  for (rconn *r = rt->conns; r; r = r->next)
    if (r->id == id) return r;
  return NULL;
}

/* ------------------------------------------------------ driver callbacks */

/* Copies what the engine learned of the session, for mcpp_runtime_session
 * (the info snapshot carries no strings), before the item that follows the
 * learning is queued: the host never sees a handshake answer before info()
 * shows its session. It is learned from handshake answers (messages) and
 * settled by an event (INITIALIZED, or UNSUPPORTED on a session without
 * ping), so messages look only until the version is known. Only this
 * thread writes the copy, so comparing needs no lock. */
const char *mcpp__rt_session_name(const char *session) {
  return session + strlen(session) + 1;
}

void mcpp__rt_note_session(rconn *r, int at_event) {
  if (!at_event && r->session && r->session[0]) return;
  mcpp_engine *e = r->conn ? mcpp_conn_engine(r->conn) : NULL;
  if (!e) return;
  mcpp_engine_info info;
  mcpp_engine_get_info(e, &info);
  const char *version = info.protocol_version ? info.protocol_version : "";
  const char *name = info.peer_name ? info.peer_name : "";
  if (r->session ? strcmp(version, r->session) == 0 &&
                       strcmp(name, mcpp__rt_session_name(r->session)) == 0
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

static void on_message(mcpp_conn *c, const char *frame, size_t len, void *ud) {
  rconn *r = ud;
  if (r->rc) {
    if (mcpp__respawn_answer(r, c, frame, len)) return;
    mcpp_handshake_observe_answer(r->rc->hs, frame, len);
  }
  mcpp__rt_note_session(r, 0);
  mcpp_item *it = mcpp__rt_new_item(r->rt, r, MCPP_ITEM_MESSAGE, len);
  if (it) {
    memcpy(it->data, frame, len);
    it->answer_kind = mcpp_engine_delivery_kind(mcpp_conn_engine(c));
  }
  mcpp__rt_push_counted(r->rt, r, it, 0);
}

static void on_record(mcpp_conn *c, const char *json, size_t len, void *ud) {
  rconn *r = ud;
  if (atomic_load_explicit(&r->records, memory_order_relaxed))
    mcpp__rt_push_data(r, MCPP_ITEM_RECORD, json, len);
}

/* stderr reads run outside the engine, so no progress hook follows them:
 * the cap is checked here, or a server writing only stderr is never
 * paused. */
static void on_stderr(mcpp_conn *c, const char *data, size_t len, void *ud) {
  if (mcpp__rt_push_data(ud, MCPP_ITEM_STDERR, data, len))
    mcpp__conn_set_reading(c, 0);
}

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
  mcpp__rt_push_event(ud, ev);
}

void mcpp__rt_push_event(rconn *r, const mcpp_event *ev) {
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
  mcpp__rt_note_session(r, 1);
  /* data holds "message\0id\0proof\0" so the strings outlive the callback
   * (a configured probe's proof is the engine's, freed with the conn). */
  mcpp_item *it =
      mcpp__rt_new_item(rt, r, MCPP_ITEM_EVENT, mlen + 1 + ilen + 1 + plen);
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
  mcpp__rt_push(rt, r, it);
}

/* The runtime's own handles, at the stop: a wake still due goes out now. */
static void close_loop_handles(mcpp_runtime *rt) {
  uv_close((uv_handle_t *)&rt->async, NULL);
  uv_close((uv_handle_t *)&rt->waker, NULL);
  mcpp__rt_flush_wake(rt);
}

static void free_rconn(uv_handle_t *h) {
  rconn *r = h->data;
  rt_free(r->rt, r->rc);
  rt_free(r->rt, r);
}

/* The connection is gone for good: its CLOSED item, last. */
void mcpp__rt_finish(rconn *r, const mcpp_close_info *info) {
  mcpp_runtime *rt = r->rt;
  size_t len = strlen(info->reason);
  mcpp_item *it = mcpp__rt_new_item(rt, r, MCPP_ITEM_CLOSED, len);
  if (it) {
    memcpy(it->data, info->reason, len);
    it->close = *info;
    it->close.reason = it->data;
    it->charge = 0; /* nothing is left to count it against */
  }
  r->conn = NULL;
  mcpp__hw_forget(rt, r);
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
  int wake = mcpp__rt_append_locked(rt, it);
  pthread_mutex_unlock(&rt->mu);
  if (wake) mcpp__rt_defer_wake(rt);
  rt_free(rt, r->tokens);
  r->tokens = NULL;
  rt_free(rt, r->session);
  r->session = NULL;
  if (r->rc) {
    /* The rconn goes with its timer's close callback. */
    mcpp__respawn_free(rt, r->rc);
    uv_close((uv_handle_t *)&r->rc->timer, free_rconn);
  } else {
    rt_free(rt, r);
  }
  if (rt->stopping && last) close_loop_handles(rt);
}

int mcpp__rt_host_closed(rconn *r) {
  pthread_mutex_lock(&r->rt->mu);
  int closed = r->closing || r->rt->stopping;
  pthread_mutex_unlock(&r->rt->mu);
  return closed;
}

static void on_conn_close(mcpp_conn *c, const mcpp_close_info *info,
                          void *ud) {
  rconn *r = ud;
  if (r->rc && r->rc->phase == WAITING) {
    r->conn = NULL;
    /* The host closed while the old server was being reaped. */
    if (mcpp__rt_host_closed(r))
      mcpp__respawn_finish_idle(r, 0, MCPP_CLOSED_BY_APP_REASON);
    else
      mcpp__respawn_wait(r);
    return;
  }
  mcpp__rt_finish(r, info);
}

const mcpp_conn_callbacks mcpp__rt_conn_callbacks = {
    .on_message = on_message, .on_event = on_event, .on_record = on_record,
    .on_stderr = on_stderr, .on_close = on_conn_close};

/* -------------------------------------------------------------- commands */

static void run_spawn(mcpp_runtime *rt, cmd *k) {
  rconn *r = rt_malloc(rt, sizeof *r);
  int rc = MCPP_ERR_NOMEM;
  if (r) {
    memset(r, 0, sizeof *r);
    r->rt = rt;
    r->user_data = k->conn_user_data;
    r->cap = k->settings && k->settings->max_pending_bytes
                 ? k->settings->max_pending_bytes
                 : MCPP_DEFAULT_MAX_PENDING_BYTES;
    r->writable_at = SIZE_MAX;
    atomic_init(&r->records, 1);
    atomic_init(&r->ping_events, 1);
    pthread_mutex_lock(&rt->mu);
    r->id = ++rt->next_id;
    pthread_mutex_unlock(&rt->mu);
    rc = k->settings && k->settings->reconnect.enabled &&
                 !mcpp_settings_problem(k->settings)
             ? mcpp__respawn_setup(r, k->settings, k->options)
             : 0;
    if (rc == 0)
      rc = mcpp_conn_spawn(&r->conn, rt->loop, k->settings, k->options,
                           &mcpp__rt_conn_callbacks, r, &rt->alloc);
    if (rc == MCPP_ERR_SPAWN) k->os_error = mcpp__conn_spawn_os_error();
    if (rc && k->errbuf && k->errbuf_len)
      snprintf(k->errbuf, k->errbuf_len, "%s",
               /* The driver's own sentence where it has one (a spawn
                * failure, the setting out of range). */
               *mcpp_conn_spawn_error() ? mcpp_conn_spawn_error()
                                        : mcpp_strerror(rc));
  }
  if (rc == 0) {
    mcpp__conn_set_progress(r->conn, mcpp__rt_on_progress);
    mcpp__conn_follow_records(r->conn, &r->records);
    mcpp__hw_adopt(rt, r->conn);
    if (r->rc) mcpp__conn_set_reconnect_hook(r->conn, mcpp__respawn_plan);
    mcpp__rt_push(rt, r, NULL);
  }
  pthread_mutex_lock(&rt->mu);
  if (rc == 0) {
    r->pid = mcpp_conn_pid(r->conn);
    add_conn(rt, r);
    k->conn_id = r->id;
  } else if (r && r->rc) {
    mcpp__respawn_free(rt, r->rc);
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
  rconn *r = mcpp__rt_find_conn(rt, k->conn_id);
  if (!r) return;
  if (!r->conn) {
    /* Between two servers (reconnect): nobody to ping. */
    mcpp__rt_push_ping_failed(r, k->token, MCPP_ERR_CLOSED);
    return;
  }
  uint64_t seq = 0;
  r->pinging = 1;
  r->ping_token = k->token;
  int rc = mcpp_conn_ping(r->conn, k->timeout_ms, &seq);
  r->pinging = 0;
  if (rc < 0) mcpp__rt_push_ping_failed(r, k->token, rc);
}

/* Forgets the manual ping the host knows as k->token: the engine stops
 * timing it and reports nothing more (its late pong is still consumed). */
static void run_cancel_ping(mcpp_runtime *rt, cmd *k) {
  rconn *r = mcpp__rt_find_conn(rt, k->conn_id);
  if (!r || !r->conn) return;
  for (size_t i = 0; i < r->n_tokens; i++) {
    if (r->tokens[i].token != k->token) continue;
    mcpp_engine_cancel_ping(mcpp_conn_engine(r->conn), r->tokens[i].seq);
    r->tokens[i] = r->tokens[--r->n_tokens];
    return;
  }
}

/* Returns 1 if it kept k (held until a new server has the session). */
static int run_send(mcpp_runtime *rt, cmd *k) {
  rconn *r = mcpp__rt_find_conn(rt, k->conn_id);
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
      mcpp__respawn_start_held_timeout(r, k);
      return 1;
    }
  }
  mcpp__rt_send_now(r, k);
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
      mcpp__respawn_finish_idle(r, 0, MCPP_CLOSED_BY_APP_REASON);
  }
}

/* Runs the commands the host queued, oldest first; on the loop's owner. */
void mcpp__rt_run_commands(mcpp_runtime *rt) {
  pthread_mutex_lock(&rt->mu);
  cmd *k = rt->cmd_head;
  rt->cmd_head = rt->cmd_tail = NULL;
  int stop = rt->stop_requested;
  int resume = rt->resume;
  rt->resume = 0;
  pthread_mutex_unlock(&rt->mu);
  if (resume) mcpp__rt_resume_reading(rt);
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
      if (!(r = mcpp__rt_find_conn(rt, k->conn_id))) break;
      /* Still held between two servers: it never went out. */
      if (r->rc && mcpp__respawn_cancel_held(r, k->data, k->len)) break;
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
      if ((r = mcpp__rt_find_conn(rt, k->conn_id)) && r->conn)
        mcpp_conn_close(r->conn);
      else if (r && r->rc)
        mcpp__respawn_finish_idle(r, 0, MCPP_CLOSED_BY_APP_REASON);
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
  mcpp__rt_run_commands(rt);
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

/* After enqueue_locked, the mutex released. */
static void run_queued(mcpp_runtime *rt, int on_host) {
  if (on_host && !mcpp__host_run_inline(rt)) uv_async_send(&rt->async);
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
    mcpp__watchdog_run(rt);
    pthread_mutex_lock(&rt->run_mu);
    mcpp__hw_set_owner(rt, 0); /* thread mode: uv reads every connection */
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
int mcpp__rt_start_locked(mcpp_runtime *rt) {
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

/* ------------------------------------------------------------- public API */

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
  mcpp__host_init(rt);
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
    mcpp__wake_watchdog(rt);
    uv_async_send(&rt->async);
    pthread_mutex_unlock(&rt->mu);
    pthread_join(rt->thread, NULL);
    mcpp__hw_drop_all(rt);
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
    int rc = mcpp__rt_start_locked(rt);
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
  rconn *r = mcpp__rt_find_conn(rt, k->conn_id);
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
  rconn *r = mcpp__rt_find_conn(rt, conn_id);
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
  rconn *r = mcpp__rt_find_conn(rt, conn_id);
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
  rconn *r = mcpp__rt_find_conn(rt, conn_id);
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
  rconn *r = mcpp__rt_find_conn(rt, conn_id);
  if (r) {
    const char *v = r->session ? r->session : "";
    const char *n = r->session ? mcpp__rt_session_name(r->session) : "";
    if (protocol_version && version_cap)
      snprintf(protocol_version, version_cap, "%s", v);
    if (peer_name && name_cap) snprintf(peer_name, name_cap, "%s", n);
  }
  pthread_mutex_unlock(&rt->mu);
  return r ? 0 : MCPP_ERR_NOT_FOUND;
}

int mcpp_runtime_unreadable(mcpp_runtime *rt, uint64_t conn_id,
                            uint64_t *count, char *out, size_t cap) {
  if (!rt) return MCPP_ERR_INVALID_ARGUMENT;
  pthread_mutex_lock(&rt->mu);
  rconn *r = mcpp__rt_find_conn(rt, conn_id);
  if (r) {
    if (count) *count = r->unreadable;
    mcpp_unreadable what = {r->unreadable,
                            r->unreadable_len ? r->unreadable_first : NULL,
                            r->unreadable_len,
                            r->unended,
                            r->tail_len ? r->tail : NULL,
                            r->tail_len};
    mcpp_unreadable_text("the server", &what, out, cap);
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
      for (size_t j = 0; j < n; j++)
        mcpp__rt_release_locked(rt, run[j].id, run[j].bytes);
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
  for (size_t j = 0; j < n; j++)
    mcpp__rt_release_locked(rt, run[j].id, run[j].bytes);
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
  rconn *r = mcpp__rt_find_conn(rt, conn_id);
  /* Commands queued after this call see it: they pass the same mutex. */
  if (r) atomic_store_explicit(&r->records, enabled != 0, memory_order_relaxed);
  pthread_mutex_unlock(&rt->mu);
  return r ? 0 : MCPP_ERR_NOT_FOUND;
}

int mcpp_runtime_set_ping_events(mcpp_runtime *rt, uint64_t conn_id,
                                 int enabled) {
  if (!rt) return MCPP_ERR_INVALID_ARGUMENT;
  pthread_mutex_lock(&rt->mu);
  rconn *r = mcpp__rt_find_conn(rt, conn_id);
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
  rconn *r = mcpp__rt_find_conn(rt, conn_id);
  /* rtt_mu inside mu, as in mcpp__rt_finish(), which unlinks r in the same
   * hold. */
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
  rconn *r = mcpp__rt_find_conn(rt, conn_id);
  /* Under mu, as mcpp__rt_finish() drops it in the same hold that unlinks r. */
  if (r) mcpp__metrics_slot_set(&r->metrics, cell);
  pthread_mutex_unlock(&rt->mu);
  return r ? 0 : MCPP_ERR_NOT_FOUND;
}

void mcpp_runtime_rtt_lock(void) { pthread_mutex_lock(&rtt_mu); }

void mcpp_runtime_rtt_unlock(void) { pthread_mutex_unlock(&rtt_mu); }

int mcpp_runtime_release(mcpp_runtime *rt, uint64_t conn_id, size_t bytes) {
  if (!rt) return MCPP_ERR_INVALID_ARGUMENT;
  pthread_mutex_lock(&rt->mu);
  int found = mcpp__rt_find_conn(rt, conn_id) != NULL;
  mcpp__rt_release_locked(rt, conn_id, bytes);
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
  mcpp__hw_drop_all(rt);
  mcpp__host_init(rt);
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
    if (r->rc) mcpp__respawn_free(rt, r->rc);
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

