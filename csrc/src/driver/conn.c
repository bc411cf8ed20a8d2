/*
 * The stdio driver: one engine bound to a spawned MCP server on a uv loop.
 *
 * Engine calls are bracketed by enter()/leave(). Anything that must not run
 * inside the engine (closing, which calls back into it) is recorded as
 * "pending" and done by leave() once the outermost call returned; leave()
 * also re-arms the connection's one timer, lazily. The server's process
 * (spawn, exit watch, signals, exit status, state) is proc.c's.
 *
 * The driver takes no process-wide signal state. A write to a server that
 * closed its stdin raises SIGPIPE in the writing thread: the runtime's I/O
 * thread blocks it; a host running mcpp_conn on its own loop must block or
 * ignore SIGPIPE in that thread itself (docs/c.md).
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <uv.h>

#include "driver.h"
#include "engine/deadlines.h"
#include "engine/internal.h"
#include "engine/lines.h"
#include "mcpping.h"
#include "platform.h"
#include "proc.h"
#include "engine/test_hooks.h"

enum {
  READ_BUF_SIZE = 64 * 1024,
  /* The most a timer reads before it expires anything: Linux's largest
   * pipe by default (/proc/sys/fs/pipe-max-size). */
  READ_AHEAD_MAX = 1024 * 1024,
  /* Timers fire on a shared grid of this many ms, so that the keepalive
   * pings of many connections go out, and their pongs come back, in one
   * loop wake-up instead of one each (Linux's round_jiffies, in spirit). */
  TIMER_GRID_MS = 16,
  /* A wake-up that only sends keepalive (nothing expires) goes on a
   * coarser grid: a tenth of the interval, at most this many ms (and half
   * the pause threshold), so that 1000 connections at a 1 s interval share
   * ten wake-ups a second. Expiries keep TIMER_GRID_MS. */
  SEND_GRID_MS = 100,
  /* How long to wait for stdout's EOF after the server exited, so that
   * what it wrote last is still delivered, and for the exit after EOF, so
   * that the close says how it ended. */
  EXIT_EOF_WAIT_MS = 250,
  /* After SIGKILL, how long to wait for the reap before giving up on it
   * (a process stuck in the kernel): close always returns. */
  KILL_WAIT_MS = 2000,
  /* The end of the server's stderr kept for the close reason
   * (MCPP_STDERR_CALLBACK), and how much of it the reason quotes. */
  STDERR_TAIL = 1024,
  STDERR_QUOTE = 300,
  /* A close reason is cut at this length. */
  MAX_REASON = 512,
  /* Answers to the peer's pings that the kernel would not take yet. */
  MAX_PENDING_PONGS = 1024,
  MAX_PENDING_PONG_BYTES = 16 * 1024 * 1024,
  /* Frames this large skip the cork; cork buffers this large are freed. */
  CORK_KEEP = 64 * 1024
};

#define DEFAULT_MAX_LINE_BYTES ((size_t)64 * 1024 * 1024)

typedef struct wreq {
  uv_write_t req;
  mcpp_conn *conn;
  size_t pongs;      /* our pongs (partly) in data, for the flood guard */
  size_t pong_bytes;
  char data[];
} wreq;

struct mcpp_conn {
  uv_loop_t *loop;
  const mcpp_allocator *alloc;
  mcpp_engine *engine;
  mcpp_conn_callbacks cb;
  void *user_data;
  mcpp_stale_action on_stale;

  mcpp__proc proc;
  uv_pipe_t in;  /* the server's stdin: we write */
  uv_pipe_t out; /* the server's stdout: we read */
  uv_pipe_t err; /* the server's stderr, in MCPP_STDERR_CALLBACK mode */
  uv_timer_t timer;
  uv_prepare_t flusher; /* writes the cork out before the loop blocks */
  int has_err_pipe;
  int handles; /* initialized handles whose close callback has not run */
  int failed;  /* spawn failed: free silently once the handles closed */

  mcpp__lines lines;
  char *rbuf;
  uint64_t now; /* the time of the read being processed */

  uint64_t armed;     /* loop time (ms) the timer fires at, or UINT64_MAX */
  uint32_t send_grid_ms; /* see SEND_GRID_MS */
  uint64_t exit_wait; /* give up waiting for EOF after exit at this time */

  int in_engine;
  int has_pending;
  int pending_err;
  char *pending_reason; /* see make_reason */

  int closing, eof, write_broken;
  int killed; /* SIGKILL sent while closing; the timer now bounds the reap */
  int reading_stopped; /* backpressure: the host is behind */
  /* The runtime's host reads stdout itself (mcpp__conn_set_host_reads):
   * uv does not, so the runtime loop's descriptor stays quiet. */
  int host_reads;
  void (*read_hook)(mcpp_conn *c, void *user_data);
  int no_records; /* the engine makes no records (records_src says 0) */
  const _Atomic int *records_src; /* mcpp__conn_follow_records */
  int close_err;
  char *reason; /* from the close on (see make_reason) */

  /* Idle connections stay small: the tail exists once stderr said
   * something, the reasons once there is something to close for. */
  char *err_tail;   /* a ring of STDERR_TAIL: the last bytes of stderr */
  size_t err_total; /* bytes of stderr seen */

  size_t pending_pongs;
  size_t pending_pong_bytes;

  char *cork; /* frames waiting for the engine call to return */
  size_t cork_len, cork_cap;
  size_t *cork_pongs; /* [start, end) pairs of pongs in cork */
  size_t n_cork_pongs, cork_pongs_cap;

  void (*progress)(mcpp_conn *c, void *user_data);
  mcpp__reconnect_hook reconnect;
};

static _Thread_local char spawn_error[256];
static _Thread_local int spawn_os_error; /* libuv's code for it, when the OS refused */

const char *mcpp_conn_spawn_error(void) { return spawn_error; }

int mcpp__conn_spawn_os_error(void) { return spawn_os_error; }

static uint64_t now_us(void) { return uv_hrtime() / 1000; }

static void start_close(mcpp_conn *c, int err, const char *reason);
static void rearm(mcpp_conn *c);

/* What a reason is when there is no memory to say it: the error code
 * still does (never freed). */
static char no_memory_reason[] = "(no memory to format the reason)";

/* A close reason (cut at MAX_REASON) in a block of its own size, or
 * no_memory_reason. */
static char *make_reason(mcpp_conn *c, const char *fmt, const char *arg) {
  int n = snprintf(NULL, 0, fmt, arg);
  if (n < 0) return no_memory_reason;
  size_t size = (size_t)n < MAX_REASON ? (size_t)n + 1 : MAX_REASON;
  char *r = c->alloc->malloc(size, c->alloc->user_data);
  if (!r) return no_memory_reason;
  snprintf(r, size, fmt, arg);
  return r;
}

static void free_reason(mcpp_conn *c, char *r) {
  if (r && r != no_memory_reason) c->alloc->free(r, c->alloc->user_data);
}

static void set_pending(mcpp_conn *c, int err, const char *fmt,
                        const char *arg) {
  if (c->has_pending || c->closing) return;
  c->has_pending = 1;
  c->pending_err = err;
  c->pending_reason = make_reason(c, fmt, arg);
}

static void sync_records(mcpp_conn *c);

static void enter(mcpp_conn *c) {
  if (c->in_engine++ == 0) sync_records(c);
}

static void flush_cork(mcpp_conn *c);

static void on_flush(uv_prepare_t *p);

static void leave(mcpp_conn *c) {
  if (--c->in_engine) return;
  if (c->cork_len && !c->closing) uv_prepare_start(&c->flusher, on_flush);
  if (c->has_pending && !c->closing) {
    c->has_pending = 0;
    start_close(c, c->pending_err, c->pending_reason);
  } else {
    rearm(c);
  }
  if (c->progress) c->progress(c, c->user_data);
}

/* ---------------------------------------------------------------- handles */

static void free_conn(mcpp_conn *c) {
  const mcpp_allocator *a = c->alloc;
  mcpp_engine_free(c->engine);
  mcpp__lines_free(&c->lines);
  if (c->rbuf) a->free(c->rbuf, a->user_data);
  if (c->cork) a->free(c->cork, a->user_data);
  if (c->cork_pongs) a->free(c->cork_pongs, a->user_data);
  if (c->err_tail) a->free(c->err_tail, a->user_data);
  free_reason(c, c->pending_reason);
  free_reason(c, c->reason);
  a->free(c, a->user_data);
}

static void on_handle_closed(uv_handle_t *h) {
  mcpp_conn *c = h->data;
  if (--c->handles) return;
  if (!c->failed && c->cb.on_close) {
    mcpp_close_info info = {c->close_err, c->reason ? c->reason : "",
                            c->proc.exit_status,
                            c->proc.term_signal};
    c->cb.on_close(c, &info, c->user_data);
  }
  free_conn(c);
}

static void close_handle(mcpp_conn *c, uv_handle_t *h) {
  if (h->data == c && !uv_is_closing(h)) uv_close(h, on_handle_closed);
}

static void init_handle(mcpp_conn *c, uv_handle_t *h) {
  h->data = c;
  c->handles++;
}

/* Once closing and the server is reaped, nothing else needs the timer or
 * its stderr. */
static void close_remaining(mcpp_conn *c) {
  mcpp__proc_close(&c->proc, on_handle_closed);
  close_handle(c, (uv_handle_t *)&c->in);
  close_handle(c, (uv_handle_t *)&c->out);
  close_handle(c, (uv_handle_t *)&c->timer);
  close_handle(c, (uv_handle_t *)&c->flusher);
  if (c->has_err_pipe) close_handle(c, (uv_handle_t *)&c->err);
}

/* ----------------------------------------------------------------- writes */

/* Frames produced during one loop iteration (the pongs for a read full of
 * pings, the 64 pings a caller pipelines, a burst of application sends)
 * are corked into one buffer and written with one syscall just before the
 * loop next blocks, in the prepare phase: fewer syscalls, and a pipe holds
 * far more of them. Nothing waits longer than that iteration. */

static void on_write(uv_write_t *req, int status) {
  wreq *w = (wreq *)req;
  mcpp_conn *c = w->conn;
  c->pending_pongs -= w->pongs;
  c->pending_pong_bytes -= w->pong_bytes;
  c->alloc->free(w, c->alloc->user_data);
  if (c->progress) c->progress(c, c->user_data);
  if (status == 0 || status == UV_ECANCELED) return;
  if (status == UV_EPIPE) {
    /* The server closed its stdin; EOF or its exit will say why. */
    c->write_broken = 1;
    return;
  }
  if (!c->closing) {
    char reason[160];
    snprintf(reason, sizeof reason, "write to server failed: %s",
             uv_strerror(status));
    start_close(c, MCPP_ERR_IO, reason);
  }
}

/* Writes bytes after everything written before: the kernel takes what it
 * can now; the rest is copied and queued. `pongs` lists the [start, end)
 * byte ranges of our pongs in data, for the flood guard. Failures become
 * a pending close. */
static void write_bytes(mcpp_conn *c, const char *data, size_t len,
                        const size_t *pongs, size_t n_pongs) {
  if (c->write_broken || c->closing || len == 0) return;
  uv_buf_t buf = uv_buf_init((char *)data, (unsigned)len);
  size_t done = 0;
  int r = uv_try_write((uv_stream_t *)&c->in, &buf, 1);
  if (r > 0) {
    done = (size_t)r;
  } else if (r == UV_EPIPE) {
    c->write_broken = 1;
    return;
  } else if (r != UV_EAGAIN && r != UV_ENOSYS) {
    set_pending(c, MCPP_ERR_IO, "write to server failed: %s", uv_strerror(r));
    return;
  }
  if (done == len) return;
  size_t left = len - done;
  wreq *w = c->alloc->malloc(sizeof *w + left, c->alloc->user_data);
  if (!w) {
    /* A lost frame would desynchronise the stream: give up on it. */
    set_pending(c, MCPP_ERR_NOMEM, "%s", "out of memory queueing a write");
    return;
  }
  w->conn = c;
  w->pongs = 0;
  w->pong_bytes = 0;
  for (size_t i = 0; i < n_pongs; i++) {
    size_t from = pongs[2 * i], to = pongs[2 * i + 1];
    if (to <= done) continue;
    w->pongs++;
    w->pong_bytes += to - (from > done ? from : done);
  }
  memcpy(w->data, data + done, left);
  buf = uv_buf_init(w->data, (unsigned)left);
  r = uv_write(&w->req, (uv_stream_t *)&c->in, &buf, 1, on_write);
  if (r) {
    c->alloc->free(w, c->alloc->user_data);
    set_pending(c, MCPP_ERR_IO, "write to server failed: %s", uv_strerror(r));
    return;
  }
  c->pending_pongs += w->pongs;
  c->pending_pong_bytes += w->pong_bytes;
  if (c->pending_pongs > MAX_PENDING_PONGS ||
      c->pending_pong_bytes > MAX_PENDING_PONG_BYTES)
    set_pending(c, MCPP_ERR_FLOODED, "%s",
                "the server floods pings and does not read the answers");
}

static void flush_cork(mcpp_conn *c) {
  if (c->cork_len)
    write_bytes(c, c->cork, c->cork_len, c->cork_pongs, c->n_cork_pongs);
  c->cork_len = 0;
  c->n_cork_pongs = 0;
  /* A burst's buffers are not kept: idle connections stay small. */
  if (c->cork_cap > CORK_KEEP) {
    c->alloc->free(c->cork, c->alloc->user_data);
    c->cork = NULL;
    c->cork_cap = 0;
  }
  if (c->cork_pongs_cap > CORK_KEEP / 64) {
    c->alloc->free(c->cork_pongs, c->alloc->user_data);
    c->cork_pongs = NULL;
    c->cork_pongs_cap = 0;
  }
}

static void on_flush(uv_prepare_t *p) {
  mcpp_conn *c = p->data;
  uv_prepare_stop(p);
  enter(c);
  flush_cork(c);
  leave(c);
}

int mcpp__conn_corked(const mcpp_conn *c) {
  return uv_is_active((const uv_handle_t *)&c->flusher);
}

void mcpp__conn_flush(mcpp_conn *c) {
  if (uv_is_active((uv_handle_t *)&c->flusher)) on_flush(&c->flusher);
}

static int grow(mcpp_conn *c, void **p, size_t *cap, size_t need,
                size_t unit) {
  if (need <= *cap) return 0;
  size_t n = *cap ? *cap : 64;
  while (n < need) n *= 2;
  void *q = c->alloc->realloc(*p, n * unit, c->alloc->user_data);
  if (!q) return MCPP_ERR_NOMEM;
  *p = q;
  *cap = n;
  return 0;
}

/* Queues frame + "\n" behind everything before it. Runs inside
 * enter()/leave(), which arms the flush. Large frames skip the cork. */
static int write_frame(mcpp_conn *c, const char *frame, size_t len, int pong) {
  if (c->write_broken || c->closing) return 0;
  if (len >= CORK_KEEP) {
    flush_cork(c);
    write_bytes(c, frame, len, NULL, 0);
    write_bytes(c, "\n", 1, NULL, 0);
    return 0;
  }
  size_t end = c->cork_len + len + 1;
  if (grow(c, (void **)&c->cork, &c->cork_cap, end, 1) ||
      (pong && grow(c, (void **)&c->cork_pongs, &c->cork_pongs_cap,
                    2 * (c->n_cork_pongs + 1), sizeof(size_t)))) {
    set_pending(c, MCPP_ERR_NOMEM, "%s", "out of memory queueing a write");
    return MCPP_ERR_NOMEM;
  }
  if (pong) {
    c->cork_pongs[2 * c->n_cork_pongs] = c->cork_len;
    c->cork_pongs[2 * c->n_cork_pongs + 1] = end;
    c->n_cork_pongs++;
  }
  memcpy(c->cork + c->cork_len, frame, len);
  c->cork[end - 1] = '\n';
  c->cork_len = end;
  return 0;
}

/* --------------------------------------------------------- engine callbacks */

static int engine_send(mcpp_engine *e, mcpp_frame_kind kind, const char *frame,
                       size_t len, void *ud) {
  return write_frame(ud, frame, len, kind == MCPP_FRAME_PONG);
}

static void engine_deliver(mcpp_engine *e, const char *frame, size_t len,
                           void *ud) {
  mcpp_conn *c = ud;
  c->cb.on_message(c, frame, len, c->user_data);
}

static void engine_event(mcpp_engine *e, const mcpp_event *ev, void *ud) {
  mcpp_conn *c = ud;
  if (c->cb.on_event) c->cb.on_event(c, ev, c->user_data);
  if (ev->type == MCPP_EV_STALE && c->on_stale == MCPP_STALE_CLOSE) {
    char why[160];
    mcpp_engine_stale_reason(e, why, sizeof why);
    set_pending(c, MCPP_ERR_STALE, "%s", why);
  }
}

static void engine_record(mcpp_engine *e, const char *json, size_t len,
                          void *ud) {
  mcpp_conn *c = ud;
  c->cb.on_record(c, json, len, c->user_data);
}

/* ------------------------------------------------------------------ timer */

static void on_timer(uv_timer_t *t);

/* The loop time (ms) at which to wake for engine time d (µs): the first
 * point of the grid at or after it. */
static uint64_t fire_at(uint64_t d, uint64_t now, uint64_t loop_now,
                        uint64_t grid) {
  if (d == UINT64_MAX) return UINT64_MAX;
  uint64_t ms = d > now ? (d - now + 999) / 1000 : 0;
  return (loop_now + ms + grid - 1) / grid * grid;
}

/* Arms the timer only if the engine now wants to wake earlier than the
 * timer is set for; a timer that fires early just re-arms (lazy). A
 * keepalive send that is due before anything expires waits for the
 * coarser send grid. */
static void rearm(mcpp_conn *c) {
  if (c->closing) return;
  uint64_t d = mcpp__engine_next_send(c->engine);
  uint64_t x = mcpp__engine_next_expiry(c->engine);
  if (c->exit_wait && !c->reading_stopped && c->exit_wait < x)
    x = c->exit_wait;
  if (d == UINT64_MAX && x == UINT64_MAX) return;
  uint64_t now = now_us(), loop_now = uv_now(c->timer.loop);
  /* With a keepalive ping in flight, wake at the send slot its answer
   * would leave (it fires early and re-arms if the answer is late): the
   * answer then finds the timer already set, one timer start per round
   * instead of two. */
  uint64_t next = mcpp__engine_send_if_answered(c->engine, now);
  if (d < next) next = d;
  uint64_t fire = fire_at(x, now, loop_now, TIMER_GRID_MS);
  if (next < x) {
    uint64_t send = fire_at(next, now, loop_now, c->send_grid_ms);
    if (send < fire) fire = send;
  }
  /* Later than armed only when nothing expires any more (the ping or
   * request the timer was set for was answered): moved to the send slot
   * now, or each idle connection would wake once a cycle for nothing. */
  if (fire == c->armed || (fire > c->armed && x != UINT64_MAX)) return;
  uv_timer_start(&c->timer, on_timer, fire - loop_now, 0);
  c->armed = fire;
  MCPP__HOOK_ARMED(fire);
}

static void exit_reason(mcpp_conn *c, char *buf, size_t cap,
                        const char *suffix);
static int read_what_waits(mcpp_conn *c, int host);

static void on_timer(uv_timer_t *t) {
  mcpp_conn *c = t->data;
  c->armed = UINT64_MAX;
  if (c->closing) {
    if (!c->killed) {
      /* The grace period after SIGTERM is over. */
      c->killed = 1;
      mcpp__proc_kill(&c->proc);
      uv_timer_start(&c->timer, on_timer, KILL_WAIT_MS, 0);
      return;
    }
    /* Not reaped even after SIGKILL (stuck in the kernel): give up on it
     * rather than never return. */
    close_remaining(c);
    return;
  }
  uint64_t now = now_us();
  /* While reading is stopped, what the server wrote before exiting still
   * waits in the pipe: the EOF wait starts over when reading resumes. */
  if (c->exit_wait && now >= c->exit_wait && !c->reading_stopped) {
    char reason[MAX_REASON];
    if (c->proc.exited)
      exit_reason(c, reason, sizeof reason, " (its stdout stayed open)");
    else
      snprintf(reason, sizeof reason, "server closed stdout");
    start_close(c, MCPP_ERR_CLOSED, reason);
    return;
  }
  if (now >= mcpp__engine_next_expiry(c->engine)) {
    /* libuv runs timers before it polls: a loop that woke late would time
     * out a request or ping whose answer already waits in the pipe. A
     * wake-up that only sends keepalive reads nothing ahead (a ping sent
     * although traffic waits costs less than a read on every send). */
    read_what_waits(c, 0);
    if (c->closing) return;
    now = now_us();
  }
  enter(c);
  if (now >= mcpp_engine_next_deadline(c->engine)) {
    int rc = mcpp_engine_on_timer(c->engine, now);
    if (rc < 0)
      set_pending(c, rc, "keepalive failed: %s", mcpp_strerror(rc));
  }
  leave(c);
}

/* ------------------------------------------------------------------ reads */

/* One read buffer per thread that runs a loop (a loop runs on one thread
 * at a time), lent to one read at a time: 1000 idle connections read
 * their pongs with no malloc and free of 64 KiB each. A read that finds
 * it lent (a read inside another's callbacks) gets its own, as below.
 * Freed when the thread exits. */
typedef struct thread_rbuf {
  int lent;
  char buf[READ_BUF_SIZE];
} thread_rbuf;
static pthread_key_t rbuf_key;
static pthread_once_t rbuf_once = PTHREAD_ONCE_INIT;
static int rbuf_key_ok;

static void rbuf_key_init(void) {
  rbuf_key_ok = pthread_key_create(&rbuf_key, free) == 0;
}

static char *borrow_thread_rbuf(void) {
  pthread_once(&rbuf_once, rbuf_key_init);
  if (!rbuf_key_ok) return NULL;
  thread_rbuf *t = pthread_getspecific(rbuf_key);
  if (!t) {
    if (!(t = malloc(sizeof *t))) return NULL;
    t->lent = 0;
    if (pthread_setspecific(rbuf_key, t)) {
      free(t);
      return NULL;
    }
  }
  if (t->lent) return NULL;
  t->lent = 1;
  return t->buf;
}

static void on_alloc(uv_handle_t *h, size_t suggested, uv_buf_t *buf) {
  mcpp_conn *c = h->data;
  char *b = c->rbuf ? NULL : borrow_thread_rbuf();
  if (!b) {
    if (!c->rbuf) c->rbuf = c->alloc->malloc(READ_BUF_SIZE, c->alloc->user_data);
    b = c->rbuf;
  }
  *buf = uv_buf_init(b, b ? READ_BUF_SIZE : 0);
}

/* After every read: the thread's buffer goes back. A connection's own
 * buffer is freed after every read that did not fill it (lines_feed has
 * copied any partial line), and kept only while a large frame is
 * streaming in. */
static void release_rbuf(mcpp_conn *c, ssize_t n, const uv_buf_t *buf) {
  if (buf && buf->base && buf->base != c->rbuf) {
    thread_rbuf *t = pthread_getspecific(rbuf_key);
    if (t && buf->base == t->buf) t->lent = 0;
    return;
  }
  if (!c->rbuf || n == READ_BUF_SIZE) return;
  c->alloc->free(c->rbuf, c->alloc->user_data);
  c->rbuf = NULL;
}

static int on_line(void *arg, const char *line, size_t len) {
  mcpp_conn *c = arg;
  if (c->closing || c->has_pending) return 1;
  int rc = mcpp_engine_recv(c->engine, line, len, c->now);
  if (rc == MCPP_RECV_FORWARD)
    c->cb.on_message(c, line, len, c->user_data);
  else if (rc < 0)
    set_pending(c, rc, "answering the server failed: %s", mcpp_strerror(rc));
  return c->closing || c->has_pending;
}

static void handle_read(mcpp_conn *c, ssize_t n, const uv_buf_t *buf);
static void on_read(uv_stream_t *s, ssize_t n, const uv_buf_t *buf);

static void on_uv_read(uv_stream_t *s, ssize_t n, const uv_buf_t *buf) {
  if (n > 0) MCPP__HOOK_UV_READ();
  on_read(s, n, buf);
}

/* Whether the server's stdout is to be read now: open, not paused for
 * the host, not at EOF. */
static int wants_read(const mcpp_conn *c) {
  return !c->closing && !c->eof && !c->reading_stopped;
}

/* The one place that decides who reads stdout: uv while wanted and not
 * host-owned; the host (which learns through read_hook) while wanted and
 * host-owned; nobody otherwise. */
static void sync_out(mcpp_conn *c) {
  if (wants_read(c) && !c->host_reads)
    uv_read_start((uv_stream_t *)&c->out, on_alloc, on_uv_read);
  else if (!uv_is_closing((uv_handle_t *)&c->out))
    uv_read_stop((uv_stream_t *)&c->out);
  if (c->read_hook) c->read_hook(c, c->user_data);
}

static void on_read(uv_stream_t *s, ssize_t n, const uv_buf_t *buf) {
  mcpp_conn *c = s->data;
  handle_read(c, n, buf);
  release_rbuf(c, n, buf);
}

/* Reads what the server's stdout holds now, as the poll phase would, for
 * a timer about to expire something. At most a full pipe's worth (the
 * most that can have waited), so a server writing without pause cannot
 * hold the timer; libuv's own read finds the rest. The pipe is
 * non-blocking and epoll level-triggered, so reading behind libuv's back
 * loses no wake-up. */
static int read_what_waits(mcpp_conn *c, int host) {
  uv_os_fd_t fd;
  size_t got = 0;
  if (c->eof || c->reading_stopped || c->closing || c->has_pending ||
      uv_fileno((uv_handle_t *)&c->out, &fd))
    return 0;
  while (got < READ_AHEAD_MAX) {
    uv_buf_t buf;
    on_alloc((uv_handle_t *)&c->out, READ_BUF_SIZE, &buf);
    ssize_t n = UV_ENOBUFS;
    if (buf.len) {
      if (!host) MCPP__HOOK_READ_AHEAD();
      do n = read(fd, buf.base, buf.len);
      while (n < 0 && errno == EINTR);
      if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
        release_rbuf(c, 0, &buf);
        return (int)(got > 0);
      }
      n = n == 0 ? UV_EOF : n < 0 ? uv_translate_sys_error(errno) : n;
    }
    on_read((uv_stream_t *)&c->out, n, &buf);
    if (n <= 0 || c->eof || c->reading_stopped || c->closing || c->has_pending)
      return 1;
    got += (size_t)n;
    /* The host's epoll is level-triggered: a short read took all there
     * was, and another read would only cost a syscall to see EAGAIN. */
    if (host && (size_t)n < buf.len) return 1;
  }
  return 1;
}

static void handle_read(mcpp_conn *c, ssize_t n, const uv_buf_t *buf) {
  if (n == 0 || c->closing) return;
  if (n == UV_ENOBUFS) {
    start_close(c, MCPP_ERR_NOMEM, "out of memory reading from the server");
    return;
  }
  if (n == UV_EOF) {
    c->eof = 1;
    if (c->proc.exited) {
      char reason[MAX_REASON];
      exit_reason(c, reason, sizeof reason, "");
      start_close(c, MCPP_ERR_CLOSED, reason);
      return;
    }
    /* Most often the exit is a moment behind: wait for it briefly, so
     * that the close can say how the server ended. */
    sync_out(c);
    mcpp__proc_check_soon(&c->proc);
    c->exit_wait = now_us() + (uint64_t)EXIT_EOF_WAIT_MS * 1000;
    rearm(c);
    return;
  }
  if (n < 0) {
    char reason[160];
    snprintf(reason, sizeof reason, "read from server failed: %s",
             uv_strerror((int)n));
    start_close(c, MCPP_ERR_IO, reason);
    return;
  }
  c->now = now_us();
  enter(c);
  int rc = mcpp__lines_feed(&c->lines, buf->base, (size_t)n, on_line, c);
  if (rc == 0 && mcpp__lines_pending(&c->lines))
    mcpp_engine_touch(c->engine, c->now);
  if (rc == MCPP_ERR_FRAME_TOO_LARGE) {
    char limit[32];
    snprintf(limit, sizeof limit, "%zu", c->lines.max);
    set_pending(c, rc,
                "the server sent a line longer than max_line_bytes (%s bytes)",
                limit);
  } else if (rc == MCPP_ERR_NOMEM) {
    set_pending(c, rc, "%s", "out of memory buffering a line");
  }
  leave(c);
}

/* ----------------------------------------------------------------- stderr */

static void keep_stderr_tail(mcpp_conn *c, const char *data, size_t len) {
  if (!c->err_tail) {
    c->err_tail = c->alloc->malloc(STDERR_TAIL, c->alloc->user_data);
    /* Out of memory: the reason goes without the quote; nothing else. */
    if (!c->err_tail) return;
  }
  if (len > STDERR_TAIL) {
    data += len - STDERR_TAIL;
    c->err_total += len - STDERR_TAIL;
    len = STDERR_TAIL;
  }
  for (size_t i = 0; i < len; i++)
    c->err_tail[(c->err_total + i) % STDERR_TAIL] = data[i];
  c->err_total += len;
}

static void got_stderr(mcpp_conn *c, const char *data, size_t len) {
  keep_stderr_tail(c, data, len);
  if (c->cb.on_stderr) c->cb.on_stderr(c, data, len, c->user_data);
}

static void on_stderr_read(uv_stream_t *s, ssize_t n, const uv_buf_t *buf) {
  mcpp_conn *c = s->data;
  if (n > 0)
    got_stderr(c, buf->base, (size_t)n);
  else if (n < 0)
    close_handle(c, (uv_handle_t *)&c->err);
  release_rbuf(c, n, buf);
}

/* What the server wrote just before it exited may still sit in the pipe
 * when its exit is seen: read it now, so the reason quotes it. */
static void drain_stderr(mcpp_conn *c) {
  uv_os_fd_t fd;
  if (!c->has_err_pipe || uv_is_closing((uv_handle_t *)&c->err) ||
      uv_fileno((uv_handle_t *)&c->err, &fd))
    return;
  char buf[4096];
  for (int i = 0; i < 16; i++) {
    ssize_t n = read(fd, buf, sizeof buf);
    if (n <= 0) return;
    got_stderr(c, buf, (size_t)n);
  }
}

/* The stderr tail's last non-empty lines, on one line: control bytes
 * become spaces, at most STDERR_QUOTE bytes from its end. */
static size_t stderr_quote(const mcpp_conn *c, char *out, size_t cap) {
  size_t have = c->err_total < STDERR_TAIL ? c->err_total : STDERR_TAIL;
  if (!c->err_tail) have = 0;
  size_t start = c->err_total - have, n = 0;
  char tail[STDERR_TAIL];
  for (size_t i = 0; i < have; i++)
    tail[i] = c->err_tail[(start + i) % STDERR_TAIL];
  while (have && (unsigned char)tail[have - 1] <= ' ') have--;
  size_t from = have > STDERR_QUOTE ? have - STDERR_QUOTE : 0;
  for (size_t i = from; i < have && n + 1 < cap; i++) {
    unsigned char ch = (unsigned char)tail[i];
    int space = ch < ' ' || ch == 0x7f;
    if (space && (n == 0 || out[n - 1] == ' ')) continue;
    out[n++] = space ? ' ' : (char)ch;
  }
  out[n] = '\0';
  return n;
}

/* "server exited with status 1: <the end of its stderr>" (see proc.h). */
static void exit_reason(mcpp_conn *c, char *buf, size_t cap,
                        const char *suffix) {
  drain_stderr(c);
  char quote[STDERR_QUOTE + 1];
  if (stderr_quote(c, quote, sizeof quote) == 0) {
    mcpp__proc_exit_reason(&c->proc, buf, cap, suffix);
    return;
  }
  char with[sizeof quote + 64];
  snprintf(with, sizeof with, "%s: %s", suffix, quote);
  mcpp__proc_exit_reason(&c->proc, buf, cap, with);
}

/* ------------------------------------------------------ exit and closing */

static void on_proc_exit(mcpp__proc *p) {
  mcpp_conn *c = p->watch.poll.data; /* either member: same handle head */
  if (c->closing) {
    /* The leader is gone; take any straggler in its group with it. */
    mcpp__proc_kill(&c->proc);
    close_remaining(c);
    return;
  }
  if (c->eof) {
    char reason[MAX_REASON];
    exit_reason(c, reason, sizeof reason, "");
    start_close(c, MCPP_ERR_CLOSED, reason);
    return;
  }
  c->exit_wait = now_us() + (uint64_t)EXIT_EOF_WAIT_MS * 1000;
  rearm(c);
}

static void start_close(mcpp_conn *c, int err, const char *reason) {
  if (c->closing) return;
  /* What the application sent before closing still goes out. */
  flush_cork(c);
  c->closing = 1;
  c->close_err = err;
  uint32_t attempt = 0, delay_ms = 0;
  int again = 0;
  char why[MAX_REASON];
  why[0] = '\0';
  if (c->reconnect && err != 0)
    again = c->reconnect(c, err, reason, &attempt, &delay_ms, why, sizeof why,
                         c->user_data);
  c->reason = make_reason(c, "%s", why[0] ? why : reason);
  if (c->in_engine++ == 0) sync_records(c);
  if (again) {
    mcpp_engine_close_reconnecting(c->engine, c->reason, attempt, delay_ms,
                                   now_us());
  } else {
    /* With reconnect on, a failed server's requests end in doubt whether
     * or not another server follows. */
    if (c->reconnect && err != 0) mcpp_engine_fail_in_flight(c->engine, now_us());
    mcpp_engine_close(c->engine, err, c->reason, now_us());
  }
  c->in_engine--;
  sync_out(c);
  close_handle(c, (uv_handle_t *)&c->out);
  close_handle(c, (uv_handle_t *)&c->in);
  uv_timer_stop(&c->timer);
  c->armed = UINT64_MAX;
  if (c->proc.kill_grace_ms == 0 && !c->proc.exited) {
    /* No grace: SIGKILL now, and the timer bounds the reap. */
    c->killed = 1;
    mcpp__proc_kill(&c->proc);
  } else {
    mcpp__proc_terminate(&c->proc);
  }
  if (c->proc.exited)
    close_remaining(c);
  else
    uv_timer_start(&c->timer, on_timer,
                   c->killed ? KILL_WAIT_MS : c->proc.kill_grace_ms, 0);
}

/* --------------------------------------------------------------- spawning */

static void prepare_settings(mcpp_settings *s, const mcpp_settings *given,
                             const char *file) {
  /* mcpp_conn_spawn checked the version. */
  if (!given || mcpp__settings_import(s, given)) mcpp_settings_default(s);
  if (!s->max_line_bytes) s->max_line_bytes = DEFAULT_MAX_LINE_BYTES;
  if (!s->nonce) {
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    s->nonce = uv_hrtime() ^ ((uint64_t)getpid() << 32) ^
               (uint64_t)ts.tv_nsec * 0x9E3779B97F4A7C15ull;
    if (!s->nonce) s->nonce = 1;
  }
  if (!s->clock_offset_us) {
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    s->clock_offset_us = (int64_t)ts.tv_sec * 1000000 + ts.tv_nsec / 1000 -
                         (int64_t)now_us();
  }
  if (!s->peer_name) {
    const char *slash = strrchr(file, '/');
    s->peer_name = slash ? slash + 1 : file;
  }
}

static void fail_spawn(mcpp_conn *c) {
  c->failed = 1;
  mcpp_engine_free(c->engine);
  c->engine = NULL;
  close_remaining(c);
}

/* ------------------------------------------------------------------ pipes */

/* The server's three pipes: [i][0] the server's end, [i][1] ours (-1 where
 * stderr is not a pipe). Every fd is close-on-exec and above the stdio
 * fds (a host may have closed its stdin), so that the server gets exactly
 * its own three. */
typedef struct server_pipes {
  int fd[3][2];
} server_pipes;

static int above_stdio(int fd) {
  if (fd > 2) return fd;
  int moved = fcntl(fd, F_DUPFD_CLOEXEC, 3);
  close(fd);
  return moved;
}

static void close_pipes(server_pipes *p) {
  for (int i = 0; i < 3; i++)
    for (int j = 0; j < 2; j++)
      if (p->fd[i][j] >= 0) close(p->fd[i][j]);
}

/* Returns 0 or a negative errno (nothing left open). */
static int open_pipes(server_pipes *p, int with_stderr) {
  for (int i = 0; i < 3; i++) p->fd[i][0] = p->fd[i][1] = -1;
  for (int i = 0; i < (with_stderr ? 3 : 2); i++) {
    int fds[2];
    if (mcpp__pipe_cloexec(fds)) {
      int err = -errno;
      close_pipes(p);
      return err;
    }
    /* stdin: the server reads [0]; stdout, stderr: it writes [1]. */
    int server = i == 0 ? fds[0] : fds[1], ours = i == 0 ? fds[1] : fds[0];
    p->fd[i][0] = above_stdio(server);
    p->fd[i][1] = above_stdio(ours);
    if (p->fd[i][0] < 0 || p->fd[i][1] < 0) {
      close_pipes(p);
      return -EMFILE;
    }
  }
  return 0;
}

/* Hands our ends to the uv pipes (after a successful spawn). */
static void open_our_ends(mcpp_conn *c, server_pipes *p) {
  uv_pipe_t *ours[3] = {&c->in, &c->out, c->has_err_pipe ? &c->err : NULL};
  for (int i = 0; i < 3; i++) {
    if (p->fd[i][0] >= 0) close(p->fd[i][0]);
    if (!ours[i]) continue;
    uv_pipe_open(ours[i], p->fd[i][1]); /* sets O_NONBLOCK on our end */
  }
}

/* ---------------------------------------------------------- engine hooks */

static int engine_process_state(mcpp_engine *e, void *ud) {
  mcpp_conn *c = ud;
  uint64_t cpu_us;
  mcpp_process_state st = mcpp__proc_state_cpu(&c->proc, &cpu_us);
  /* Same read: the detector tells busy from stale by CPU progress. */
  if (cpu_us != UINT64_MAX) mcpp_engine_set_process_cpu(e, cpu_us);
  /* An exited server's last lines may still wait in the pipe: the exit
   * path (reap, then read stdout to EOF, bounded by exit_wait) closes the
   * connection with nothing lost. A stale verdict now would drop them. */
  if (st == MCPP_PROCESS_EXITED && !c->eof) return MCPP_PROCESS_UNKNOWN;
  return (int)st;
}

/* --------------------------------------------------------------- spawning */

static int refuse(const char *fmt, unsigned long long v) {
  snprintf(spawn_error, sizeof spawn_error, fmt, v);
  return MCPP_ERR_INVALID_ARGUMENT;
}

int mcpp_conn_spawn(mcpp_conn **out, uv_loop_t *loop,
                    const mcpp_settings *settings,
                    const mcpp_spawn_options *options,
                    const mcpp_conn_callbacks *callbacks, void *user_data,
                    const mcpp_allocator *alloc) {
  spawn_error[0] = '\0';
  spawn_os_error = 0;
  if (!out || !loop || !options || !options->file || !options->args ||
      !callbacks || !callbacks->on_message ||
      !MCPP__KNOWN_VERSION(options, MCPP_SPAWN_OPTIONS_V1) ||
      !MCPP__KNOWN_VERSION(callbacks, MCPP_CONN_CALLBACKS_V1) ||
      (unsigned)options->stderr_mode > MCPP_STDERR_IGNORE ||
      (settings && !mcpp__settings_size(settings->version)))
    return MCPP_ERR_INVALID_ARGUMENT;
  *out = NULL;
  if (options->kill_grace_ms > MCPP_MAX_KILL_GRACE_MS &&
      options->kill_grace_ms != MCPP_KILL_GRACE_NONE)
    return refuse("kill_grace_ms must be between 0 (the default, 2000) and "
                  "%llu ms",
                  MCPP_MAX_KILL_GRACE_MS);
  if (!alloc) alloc = mcpp_default_allocator();

  mcpp_conn *c = alloc->malloc(sizeof *c, alloc->user_data);
  if (!c) return MCPP_ERR_NOMEM;
  memset(c, 0, sizeof *c);
  c->loop = loop;
  c->alloc = alloc;
  c->cb = *callbacks;
  c->user_data = user_data;
  c->armed = UINT64_MAX;
  mcpp__proc_init(&c->proc, options->kill_grace_ms);

  mcpp_settings s;
  prepare_settings(&s, settings, options->file);
  c->on_stale = s.on_stale;
  c->send_grid_ms = s.interval_ms / 10;
  if (c->send_grid_ms > SEND_GRID_MS) c->send_grid_ms = SEND_GRID_MS;
  /* A send that late must not look like a host pause to the engine. */
  if (c->send_grid_ms > s.pause_threshold_ms / 2)
    c->send_grid_ms = s.pause_threshold_ms / 2;
  if (c->send_grid_ms < TIMER_GRID_MS) c->send_grid_ms = TIMER_GRID_MS;
  mcpp__lines_init(&c->lines, alloc, s.max_line_bytes);
  /* Without on_record the engine skips formatting records altogether. */
  mcpp_engine_callbacks ecb = {
      .send = engine_send,
      .deliver = engine_deliver,
      .on_event = engine_event,
      .on_record = callbacks->on_record ? engine_record : NULL,
      .process_state = engine_process_state};
  int rc = mcpp_engine_new(&c->engine, &s, &ecb, c, alloc, now_us());
  if (rc) {
    if (rc == MCPP_ERR_INVALID_ARGUMENT && mcpp_settings_problem(&s))
      snprintf(spawn_error, sizeof spawn_error, "%s",
               mcpp_settings_problem(&s));
    alloc->free(c, alloc->user_data);
    return rc;
  }

  uv_pipe_init(loop, &c->in, 0);
  init_handle(c, (uv_handle_t *)&c->in);
  uv_pipe_init(loop, &c->out, 0);
  init_handle(c, (uv_handle_t *)&c->out);
  uv_timer_init(loop, &c->timer);
  init_handle(c, (uv_handle_t *)&c->timer);
  uv_prepare_init(loop, &c->flusher);
  init_handle(c, (uv_handle_t *)&c->flusher);
  if (options->stderr_mode == MCPP_STDERR_CALLBACK) {
    uv_pipe_init(loop, &c->err, 0);
    init_handle(c, (uv_handle_t *)&c->err);
    c->has_err_pipe = 1;
  }

  server_pipes pipes;
  rc = open_pipes(&pipes, c->has_err_pipe);
  if (rc == 0) {
    int child[3] = {pipes.fd[0][0], pipes.fd[1][0],
                    c->has_err_pipe ? pipes.fd[2][0]
                    : options->stderr_mode == MCPP_STDERR_IGNORE
                        ? MCPP__PROC_DEVNULL
                        : MCPP__PROC_INHERIT};
    rc = mcpp__proc_spawn(&c->proc, loop, options, child, on_proc_exit);
    if (rc) close_pipes(&pipes);
  }
  if (rc) {
    snprintf(spawn_error, sizeof spawn_error, "cannot start %s: %s (%s)",
             options->file, uv_strerror(rc), uv_err_name(rc));
    spawn_os_error = rc;
    fail_spawn(c);
    return MCPP_ERR_SPAWN;
  }
  init_handle(c, (uv_handle_t *)&c->proc.watch);
  open_our_ends(c, &pipes);
  sync_out(c);
  if (c->has_err_pipe)
    uv_read_start((uv_stream_t *)&c->err, on_alloc, on_stderr_read);
  rearm(c);
  *out = c;
  return 0;
}

/* ------------------------------------------------------------- public API */

int mcpp_conn_send(mcpp_conn *c, const char *frame, size_t len) {
  return mcpp_conn_send_timed(c, frame, len, MCPP_TIMEOUT_DEFAULT);
}

int mcpp_conn_send_timed(mcpp_conn *c, const char *frame, size_t len,
                         uint32_t timeout_ms) {
  if (!c || (!frame && len)) return MCPP_ERR_INVALID_ARGUMENT;
  if (timeout_ms > MCPP_MAX_MS && timeout_ms != MCPP_TIMEOUT_NONE)
    return MCPP_ERR_INVALID_ARGUMENT;
  if (c->closing || c->has_pending || c->write_broken) return MCPP_ERR_CLOSED;
  if (len && memchr(frame, '\n', len)) return MCPP_ERR_FRAME_NEWLINE;
  enter(c);
  /* NOMEM here only loses ledger bookkeeping; the frame still goes out. */
  mcpp_engine_observe_outbound_timed(c->engine, frame, len, timeout_ms,
                                     now_us());
  int rc = write_frame(c, frame, len, 0);
  leave(c);
  return rc;
}

int mcpp_conn_cancel_request(mcpp_conn *c, const char *id, size_t id_len) {
  if (!c || !id || !id_len) return MCPP_ERR_INVALID_ARGUMENT;
  if (c->closing || c->has_pending) return MCPP_ERR_CLOSED;
  enter(c);
  int rc = mcpp_engine_cancel_request(c->engine, id, id_len, now_us());
  leave(c);
  return rc;
}

int mcpp_conn_ping(mcpp_conn *c, uint32_t timeout_ms, uint64_t *seq) {
  if (!c) return MCPP_ERR_INVALID_ARGUMENT;
  if (c->closing || c->has_pending) return MCPP_ERR_CLOSED;
  enter(c);
  int rc = mcpp_engine_ping(c->engine, timeout_ms, now_us(), seq);
  leave(c);
  return rc;
}

int mcpp_conn_close(mcpp_conn *c) {
  if (!c) return MCPP_ERR_INVALID_ARGUMENT;
  if (c->closing || c->has_pending) return MCPP_ERR_CLOSED;
  if (c->in_engine) {
    set_pending(c, 0, "%s", MCPP_CLOSED_BY_APP_REASON);
    return 0;
  }
  start_close(c, 0, MCPP_CLOSED_BY_APP_REASON);
  return 0;
}

mcpp_engine *mcpp_conn_engine(mcpp_conn *c) { return c ? c->engine : NULL; }

void mcpp__conn_set_progress(mcpp_conn *c,
                             void (*fn)(mcpp_conn *c, void *user_data)) {
  c->progress = fn;
}

void mcpp__conn_set_reconnect_hook(mcpp_conn *c, mcpp__reconnect_hook fn) {
  c->reconnect = fn;
}

/* Before every outermost engine call: a record the host asked for is
 * never missed, one it no longer wants is not formatted. */
static void sync_records(mcpp_conn *c) {
  if (!c->records_src || !c->cb.on_record) return;
  int off = !atomic_load_explicit(c->records_src, memory_order_relaxed);
  if (off == c->no_records) return;
  c->no_records = off;
  mcpp__engine_set_record_cb(c->engine, off ? NULL : engine_record);
}

void mcpp__conn_follow_records(mcpp_conn *c, const _Atomic int *on) {
  c->records_src = on;
}

void mcpp__conn_fail(mcpp_conn *c, int err, const char *reason) {
  if (c->closing) return;
  if (c->in_engine)
    set_pending(c, err, "%s", reason);
  else
    start_close(c, err, reason);
}

size_t mcpp__conn_queued_bytes(const mcpp_conn *c) {
  return c->cork_len + uv_stream_get_write_queue_size((uv_stream_t *)&c->in);
}

size_t mcpp__conn_unended(const mcpp_conn *c, const char **first) {
  if (first) *first = c->lines.buf;
  return c->lines.len;
}

void mcpp__conn_set_reading(mcpp_conn *c, int reading) {
  reading = reading != 0;
  if (c->closing || c->reading_stopped == !reading) return;
  c->reading_stopped = !reading;
  sync_out(c);
  if (reading) {
    if (c->has_err_pipe && !uv_is_closing((uv_handle_t *)&c->err))
      uv_read_start((uv_stream_t *)&c->err, on_alloc, on_stderr_read);
    if (c->exit_wait) c->exit_wait = now_us() + (uint64_t)EXIT_EOF_WAIT_MS * 1000;
  } else {
    if (c->has_err_pipe && !uv_is_closing((uv_handle_t *)&c->err))
      uv_read_stop((uv_stream_t *)&c->err);
  }
  enter(c);
  mcpp_engine_set_reading(c->engine, reading, now_us());
  leave(c);
}

void mcpp__conn_set_host_reads(mcpp_conn *c, int on) {
  on = on != 0;
  if (c->host_reads == on) return;
  c->host_reads = on;
  if (!c->closing) sync_out(c);
}

void mcpp__conn_set_read_hook(mcpp_conn *c,
                              void (*fn)(mcpp_conn *c, void *user_data)) {
  c->read_hook = fn;
}

int mcpp__conn_host_fd(const mcpp_conn *c) {
  uv_os_fd_t fd;
  if (!c->host_reads || !wants_read(c) ||
      uv_fileno((const uv_handle_t *)&c->out, &fd))
    return -1;
  return fd;
}

int mcpp__conn_host_read(mcpp_conn *c) {
  if (mcpp__conn_host_fd(c) < 0 || c->has_pending) return 0;
  MCPP__HOOK_HOST_READ();
  return read_what_waits(c, 1);
}

int mcpp_conn_pid(const mcpp_conn *c) { return c ? c->proc.pid : 0; }

static void close_fd_of(uv_pipe_t *p) {
  uv_os_fd_t fd;
  if (((uv_handle_t *)p)->data && uv_fileno((uv_handle_t *)p, &fd) == 0)
    close(fd);
}

void mcpp__conn_after_fork(mcpp_conn *c) {
  close_fd_of(&c->in);
  close_fd_of(&c->out);
  if (c->has_err_pipe) close_fd_of(&c->err);
  if (c->proc.exit_fd >= 0) close(c->proc.exit_fd);
  /* The old loop never runs again, so nothing reaches the handles inside
   * c: its memory can go (a long-lived forked child must not keep it). */
  free_conn(c);
}

/* The client side of a proxy closed its input: the server gets EOF on its
 * stdin once what is queued for it has been written, as it would without
 * the proxy, and may exit by itself. */
static void end_input_now(mcpp_conn *c) {
  c->write_broken = 1;
  close_handle(c, (uv_handle_t *)&c->in);
}

static void on_input_drained(uv_write_t *req, int status) {
  mcpp_conn *c = req->data;
  c->alloc->free(req, c->alloc->user_data);
  if (!c->closing) end_input_now(c);
}

void mcpp__conn_set_exact_lines(mcpp_conn *c) { c->lines.exact = 1; }

void mcpp__conn_end_input(mcpp_conn *c) {
  if (c->closing || c->write_broken) return;
  flush_cork(c);
  if (c->write_broken) return;
  if (uv_stream_get_write_queue_size((uv_stream_t *)&c->in) == 0) {
    end_input_now(c);
    return;
  }
  /* An empty write completes after every write queued before it. */
  uv_write_t *req = c->alloc->malloc(sizeof *req, c->alloc->user_data);
  uv_buf_t none = uv_buf_init(NULL, 0);
  if (req) req->data = c;
  if (!req || uv_write(req, (uv_stream_t *)&c->in, &none, 1, on_input_drained)) {
    if (req) c->alloc->free(req, c->alloc->user_data);
    end_input_now(c);
  }
}
