/*
 * What the runtime's files share (runtime.c, queue.c, host_mode.c,
 * respawn.c): the runtime, its connections and commands, and the calls
 * between the files. Private to the runtime layer; nothing here is
 * exported (the mcpp__ prefix keeps these names out of a static linker's
 * way).
 */
#ifndef MCPP_RUNTIME_INTERNAL_H
#define MCPP_RUNTIME_INTERNAL_H

#include <pthread.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <uv.h>

#include "driver/driver.h"
#include "item.h"
#include "mcpping.h"

#include "engine/test_hooks.h"

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
  /* For mcpp_runtime_unreadable: frames from the server that were not
   * JSON-RPC and the opening of the first (mcpp_engine_unreadable), and
   * the bytes after its last newline (mcpp__conn_unended), as of the
   * last snapshot. */
  uint64_t unreadable;
  size_t unreadable_len;
  char unreadable_first[MCPP_UNREADABLE_KEPT];
  size_t unended, tail_len;
  char tail[MCPP_UNREADABLE_KEPT];
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
  int wd_alarm[2]; /* the watchdog's alarm pipe: read end, write end */
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

static inline void *rt_malloc(mcpp_runtime *rt, size_t n) {
  return rt->alloc.malloc(n, rt->alloc.user_data);
}

static inline void rt_free(mcpp_runtime *rt, void *p) {
  if (p) rt->alloc.free(p, rt->alloc.user_data);
}

/* ------------------------------------------------- runtime.c: the core */

rconn *mcpp__rt_find_conn(mcpp_runtime *rt, uint64_t id);
/* The driver's hooks, and what a connection learned of its session. */
extern const mcpp_conn_callbacks mcpp__rt_conn_callbacks;
const char *mcpp__rt_session_name(const char *session);
void mcpp__rt_note_session(rconn *r, int at_event);
void mcpp__rt_push_event(rconn *r, const mcpp_event *ev);
/* The connection is gone for good: its CLOSED item, last. */
void mcpp__rt_finish(rconn *r, const mcpp_close_info *info);
int mcpp__rt_host_closed(rconn *r);
/* The loop's owner runs the commands the host queued; the I/O thread. */
void mcpp__rt_run_commands(mcpp_runtime *rt);
int mcpp__rt_start_locked(mcpp_runtime *rt);

/* ------------------ queue.c: what waits for the host, and its bound */

mcpp_item *mcpp__rt_new_item(mcpp_runtime *rt, rconn *r, mcpp_item_type type,
                             size_t data_len);
/* Queue an item with the connection's fresh snapshot; push_counted and
 * push_data return 1 where the caller must stop the connection's reading. */
void mcpp__rt_push(mcpp_runtime *rt, rconn *r, mcpp_item *it);
int mcpp__rt_push_counted(mcpp_runtime *rt, rconn *r, mcpp_item *it,
                          int may_pause);
int mcpp__rt_push_data(rconn *r, mcpp_item_type type, const char *data,
                       size_t len);
void mcpp__rt_push_ping_failed(rconn *r, uint64_t token, int err);
int mcpp__rt_append_locked(mcpp_runtime *rt, mcpp_item *it);
mcpp_item *mcpp__rt_writable_locked(rconn *r);
/* Waking the host once per turn of the loop. */
void mcpp__rt_flush_wake(mcpp_runtime *rt);
void mcpp__rt_defer_wake(mcpp_runtime *rt);
/* The driver's progress hook: the snapshot, the cap, WRITABLE. */
void mcpp__rt_on_progress(mcpp_conn *c, void *ud);
/* Writes a queued frame (its bytes leave the command queue). */
void mcpp__rt_send_now(rconn *r, cmd *k);
/* The host gave bytes back: reading resumes below half the cap. */
void mcpp__rt_release_locked(mcpp_runtime *rt, uint64_t id, size_t bytes);
void mcpp__rt_resume_reading(mcpp_runtime *rt);

/* ---------------------------- host_mode.c: the host's loop, the watchdog */

void mcpp__host_init(mcpp_runtime *rt);
int mcpp__host_run_inline(mcpp_runtime *rt);
/* The I/O thread while the host runs the loop: watches, takes over. */
void mcpp__watchdog_run(mcpp_runtime *rt);
/* Wakes the watchdog from its wait between looks (mu held: detach, stop). */
void mcpp__wake_watchdog(mcpp_runtime *rt);
/* Host-owned reading: the fds the host watches for the connections. */
void mcpp__hw_adopt(mcpp_runtime *rt, mcpp_conn *c);
void mcpp__hw_forget(mcpp_runtime *rt, rconn *r);
void mcpp__hw_set_owner(mcpp_runtime *rt, int host);
void mcpp__hw_drop_all(mcpp_runtime *rt);

/* ------------------------- respawn.c: a failed server spawned again */

int mcpp__respawn_setup(rconn *r, const mcpp_settings *settings,
                        const mcpp_spawn_options *options);
void mcpp__respawn_free(mcpp_runtime *rt, reconnect *x);
/* The driver's reconnect hook (mcpp__conn_set_reconnect_hook). */
int mcpp__respawn_plan(mcpp_conn *c, int err, const char *reason,
                       uint32_t *attempt, uint32_t *delay_ms, char *why,
                       size_t cap, void *ud);
void mcpp__respawn_wait(rconn *r);
void mcpp__respawn_finish_idle(rconn *r, int err, const char *reason);
/* Frames the application sends while no server has the session. */
void mcpp__respawn_start_held_timeout(rconn *r, cmd *k);
int mcpp__respawn_cancel_held(rconn *r, const char *id, size_t id_len);
/* Swallows the answer to the replayed initialize (returns 1). */
int mcpp__respawn_answer(rconn *r, mcpp_conn *c, const char *frame,
                         size_t len);

#endif
