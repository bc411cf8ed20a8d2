/*
 * mcpping wrap: a stdio proxy between an MCP client we cannot change and
 * the server it launches through us (see mcpp_wrap_run in mcpping.h).
 *
 * Client lines are split here and each goes to the server with
 * mcpp_conn_send, byte for byte (the driver adds back the newline); the
 * server's lines come back through on_message and are written to the
 * client with their newline. The engine sees both directions pass, so it
 * ledgers the client's requests and learns the session (protocol
 * version, ping or not) from the handshake going through, and runs our
 * own keepalive with our own ids.
 *
 * When the server is gone (stale and killed, or exited), every request
 * the ledger still holds is answered with a JSON-RPC error; with restart
 * on, a new server is spawned after a backoff, the client's initialize is
 * replayed (its answer swallowed), then notifications/initialized, then
 * what the client sent meanwhile (the backlog), and the client is told to
 * refresh its lists if the new server says they can change.
 */
#include <cjson/cJSON.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>
#include <sys/uio.h>
#include <unistd.h>

#include "driver/driver.h"
#include "engine/internal.h"
#include "engine/ledger.h"
#include "engine/scan.h"
#include "wrap.h"

enum {
  /* Unwritten bytes toward either side before we stop reading the other
   * (the client not reading our stdout, the server not reading its
   * stdin): memory stays bounded, the slow side sets the pace. */
  MAX_QUEUED = 16 * 1024 * 1024,
  /* After the client closed its input, how long the server may take to
   * exit by itself before it is closed (SIGTERM, then SIGKILL after the
   * kill grace): within 2 s of the client in all. */
  END_INPUT_WAIT_MS = 500,
  DEFAULT_KILL_GRACE_MS = 1000,
  /* How often we look for our parent (the client) having died while
   * someone else still holds our stdin open (so no EOF comes). */
  PARENT_CHECK_MS = 250
};

typedef union client_handle {
  uv_handle_t handle;
  uv_stream_t stream;
  uv_pipe_t pipe;
  uv_tty_t tty;
  uv_tcp_t tcp;
} client_handle;

typedef struct buf {
  char *p;
  size_t len, cap;
} buf;

typedef struct wrap {
  uv_loop_t loop;
  mcpp_wrap_options o;
  mcpp_settings s;
  const mcpp_allocator *a;
  int status;   /* the exit status once finishing */
  int finishing;

  /* The client. */
  client_handle in, out;
  int in_open, out_open, reading, client_gone;
  int out_file; /* stdout is a regular file: plain blocking writes */
  int in_file;  /* stdin is a file (or /dev/null): read through uv_fs */
  uv_fs_t in_req;
  int in_req_busy;
  char in_buf[64 * 1024];
  buf part; /* a client line still waiting for its newline */

  /* The server, NULL while none runs. ready: 0 while the handshake is
   * being replayed to it. */
  mcpp_conn *conn;
  int ready;
  uv_timer_t end_wait; /* after the client's EOF: the server's own exit */
  uv_timer_t parent_watch;
  int ppid; /* our parent when we started: the client */
  int ended_input;

  /* The client's handshake, captured as it passed, and whether the
   * client finished it with a server (then a new one gets it replayed). */
  mcpp_handshake *handshake;
  int handshake_done;
  buf backlog; /* client lines (each with its newline) awaiting a server */

  /* Restarts: reconnect's backoff and retry budget (reconnect.c). */
  mcpp_reconnect policy;
  mcpp_retry_budget budget;
  uv_timer_t restart_timer;
  uint32_t attempt; /* attempts in a row; 0 once a server answered (not
                     * once it spawned: one that dies as it starts backs off) */
  uint64_t rng;
  char cause[512]; /* why the last server went */
  int cause_stale;

  uv_signal_t sig[3];
  uv_check_t check; /* applies read pauses decided inside driver callbacks */
  int pause_server, server_paused;

  int log_fd;
  /* The server could not be started at all: the client's requests are
   * answered with the reason (w->cause), then we exit with status 2. */
  int start_failed;
  uint64_t non_json; /* server stdout lines that were not JSON, dropped */
  mcpp__wrap_figures figures;
  mcpp__wrap_metrics *metrics;
} wrap;

typedef struct wreq {
  uv_write_t req;
  wrap *w;
  char data[];
} wreq;

static void finish(wrap *w, int status);
static int start_server(wrap *w);
static void forward_line(wrap *w, const char *line, size_t len);
static void read_client(wrap *w);

static uint64_t now_us(void) { return uv_hrtime() / 1000; }

/* One line on stderr, where desktop clients log what their servers say. */
static void say(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void say(const char *fmt, ...) {
  char line[1024];
  int n = snprintf(line, sizeof line, "mcpping wrap: ");
  va_list ap;
  va_start(ap, fmt);
  n += vsnprintf(line + n, sizeof line - (size_t)n, fmt, ap);
  va_end(ap);
  if (n >= (int)sizeof line - 1) n = (int)sizeof line - 2;
  line[n++] = '\n';
  ssize_t ignored = write(2, line, (size_t)n);
  (void)ignored;
}

static int buf_put(wrap *w, buf *b, const char *p, size_t n) {
  if (b->len + n > b->cap) {
    size_t cap = b->cap ? b->cap : 256;
    while (cap < b->len + n) cap *= 2;
    char *q = mcpp__realloc(w->a, b->p, cap);
    if (!q) return MCPP_ERR_NOMEM;
    b->p = q;
    b->cap = cap;
  }
  if (n) memcpy(b->p + b->len, p, n);
  b->len += n;
  return 0;
}

static void buf_free(wrap *w, buf *b) {
  mcpp__free(w->a, b->p);
  memset(b, 0, sizeof *b);
}

/* ------------------------------------------------------------ to the client */

static void client_gone(wrap *w) {
  if (w->client_gone) return;
  w->client_gone = 1;
  finish(w, w->status);
}

static void on_check(uv_check_t *h);

static void on_client_write(uv_write_t *req, int status) {
  wreq *r = (wreq *)req;
  wrap *w = r->w;
  mcpp__free(w->a, r);
  if (status < 0 && status != UV_ECANCELED) {
    client_gone(w);
    return;
  }
  /* The client caught up: read the server again. */
  if (w->server_paused && w->out_open &&
      uv_stream_get_write_queue_size(&w->out.stream) < MAX_QUEUED / 2) {
    w->server_paused = 0;
    if (w->conn) mcpp__conn_set_reading(w->conn, 1);
  }
}

/* Writes data (and a newline if nl) after everything written before. */
static void to_file(wrap *w, const char *data, size_t len, int nl) {
  struct iovec iov[2] = {{(void *)data, len}, {"\n", nl ? 1 : 0}};
  int fd = w->o.out_fd, n = 2;
  struct iovec *v = iov;
  while (n) {
    ssize_t r = writev(fd, v, n);
    if (r < 0 && errno == EINTR) continue;
    if (r < 0) {
      client_gone(w);
      return;
    }
    while (n && (size_t)r >= v->iov_len) {
      r -= (ssize_t)v->iov_len;
      v++;
      n--;
    }
    if (n) {
      v->iov_base = (char *)v->iov_base + r;
      v->iov_len -= (size_t)r;
    }
  }
}

static void to_client(wrap *w, const char *data, size_t len, int nl) {
  if (w->out_file && !w->client_gone) {
    to_file(w, data, len, nl);
    return;
  }
  if (!w->out_open || w->client_gone) return;
  uv_buf_t bufs[2] = {uv_buf_init((char *)data, (unsigned)len),
                      uv_buf_init("\n", nl ? 1 : 0)};
  size_t total = len + (nl ? 1 : 0), done = 0;
  if (uv_stream_get_write_queue_size(&w->out.stream) == 0) {
    int r = uv_try_write(&w->out.stream, bufs, 2);
    if (r >= 0) {
      done = (size_t)r;
    } else if (r != UV_EAGAIN && r != UV_ENOSYS) {
      client_gone(w);
      return;
    }
  }
  if (done == total) return;
  wreq *req = mcpp__malloc(w->a, sizeof *req + (total - done));
  if (!req) {
    /* A lost line would desynchronise the client: stop here. */
    say("out of memory writing to the client");
    w->status = 2;
    client_gone(w);
    return;
  }
  req->w = w;
  size_t off = 0;
  if (done < len) {
    memcpy(req->data, data + done, len - done);
    off = len - done;
  }
  if (nl) req->data[off++] = '\n';
  uv_buf_t rest = uv_buf_init(req->data, (unsigned)off);
  if (uv_write(&req->req, &w->out.stream, &rest, 1, on_client_write)) {
    mcpp__free(w->a, req);
    client_gone(w);
    return;
  }
  if (uv_stream_get_write_queue_size(&w->out.stream) >= MAX_QUEUED &&
      !w->server_paused) {
    /* Inside a driver callback: the pause is applied by on_check. */
    w->pause_server = 1;
    uv_check_start(&w->check, on_check);
  }
}

/* {"jsonrpc":"2.0","id":ID,"error":{...}} for a request the server will
 * never answer. The reason is ours (no payload of the client's). */
static void answer_for_server(wrap *w, const char *id, size_t id_len,
                              const char *method) {
  const char *what = w->start_failed  ? "server could not start"
                     : w->cause_stale ? "server stopped responding"
                                      : "server exited";
  int again = w->o.restart && !w->finishing && !w->ended_input &&
              !w->start_failed;
  char msg[64];
  snprintf(msg, sizeof msg, "%s%s", what, again ? "; restarted" : "");
  const char *disposition =
      mcpp__method_is_safe(method) ? "cancelled" : "in_doubt";
  mcpp__sb sb;
  mcpp__sb_init(&sb, NULL, 0);
  for (int pass = 0; pass < 2; pass++) {
    mcpp__sb_puts(&sb, "{\"jsonrpc\":\"2.0\",\"id\":");
    mcpp__sb_put(&sb, id, id_len);
    /* -32003 and data.mcpping as the library's in-doubt answers
     * (mcpp_engine_fail_in_flight), in the words of the wrap. */
    mcpp__sb_puts(&sb, ",\"error\":{\"code\":-32003,\"message\":");
    mcpp__sb_json_string(&sb, msg, strlen(msg));
    mcpp__sb_puts(&sb, ",\"data\":{\"mcpping\":\"");
    mcpp__sb_puts(&sb, disposition);
    mcpp__sb_puts(&sb, "\",\"reason\":");
    mcpp__sb_json_string(&sb, w->cause, strlen(w->cause));
    mcpp__sb_puts(&sb, "}}}");
    if (pass) break;
    size_t need = sb.len + 1;
    char *p = mcpp__malloc(w->a, need);
    if (!p) return;
    mcpp__sb_init(&sb, p, need);
  }
  to_client(w, sb.buf, sb.len, 1);
  mcpp__free(w->a, sb.buf);
}

static void answer_in_flight(const char *id, size_t id_len, const char *method,
                             uint64_t sent_at, void *arg) {
  wrap *w = arg;
  /* Our replay of the client's initialize (our own id, see
   * mcpp_handshake_replay) is not the client's request. */
  static const char replay[] = "\"mcpp-reconnect-";
  if (id_len > sizeof replay - 1 && memcmp(id, replay, sizeof replay - 1) == 0)
    return;
  answer_for_server(w, id, id_len, method);
}

/* Answers the client's line for the server if it is a request; returns 1
 * if it was. */
static int answer_line(wrap *w, const char *line, size_t n) {
  mcpp__msg m;
  if (mcpp__scan_message(line, n, &m) || !m.id.p || !m.method.p ||
      m.method.n < 2 || m.method.p[0] != '"')
    return 0;
  char method[128];
  size_t mn = m.method.n - 2 < sizeof method - 1 ? m.method.n - 2
                                                 : sizeof method - 1;
  memcpy(method, m.method.p + 1, mn);
  method[mn] = '\0';
  answer_for_server(w, m.id.p, m.id.n, method);
  return 1;
}

/* The requests in the backlog never reached a server. */
static void answer_backlog(wrap *w) {
  size_t at = 0;
  while (at < w->backlog.len) {
    const char *line = w->backlog.p + at;
    const char *nl = memchr(line, '\n', w->backlog.len - at);
    size_t n = (size_t)(nl - line);
    answer_line(w, line, n);
    at += n + 1;
  }
  w->backlog.len = 0;
}

/* ---------------------------------------------------------- server callbacks */

static void notify_list_changed(wrap *w, const cJSON *caps) {
  static const char *const kinds[] = {"tools", "resources", "prompts"};
  for (int i = 0; i < 3; i++) {
    const cJSON *cap = cJSON_GetObjectItemCaseSensitive(caps, kinds[i]);
    if (!cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(cap, "listChanged")))
      continue;
    char note[96];
    int n = snprintf(note, sizeof note,
                     "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/%s/"
                     "list_changed\"}",
                     kinds[i]);
    to_client(w, note, (size_t)n, 1);
  }
}

static void send_backlog(wrap *w) {
  buf pending = w->backlog;
  memset(&w->backlog, 0, sizeof w->backlog);
  for (size_t at = 0; at < pending.len;) {
    const char *nl = memchr(pending.p + at, '\n', pending.len - at);
    size_t n = (size_t)(nl - (pending.p + at));
    forward_line(w, pending.p + at, n);
    at += n + 1;
  }
  buf_free(w, &pending);
}

/* The new server answered the replayed initialize (the answer is ours, the
 * client saw its own from the first server): finish the handshake for the
 * client, send what it queued meanwhile, and tell it to refresh what the
 * new server says may change. */
static void replay_answered(wrap *w, const char *frame, size_t len) {
  cJSON *root = cJSON_ParseWithLength(frame, len);
  const cJSON *result = cJSON_GetObjectItemCaseSensitive(root, "result");
  if (!cJSON_IsObject(result)) {
    cJSON_Delete(root);
    snprintf(w->cause, sizeof w->cause,
             "the restarted server refused the replayed initialize");
    mcpp_conn_close(w->conn);
    return;
  }
  w->ready = 1;
  w->attempt = 0;
  size_t n;
  const char *initialized = mcpp_handshake_initialized(w->handshake, &n);
  if (initialized) mcpp_conn_send(w->conn, initialized, n);
  send_backlog(w);
  notify_list_changed(
      w, cJSON_GetObjectItemCaseSensitive(result, "capabilities"));
  cJSON_Delete(root);
}

/* 1 if a server line may go to the client: a JSON object (a message) or
 * array (a batch), or a blank line, which clients skip. */
static int is_message(const char *frame, size_t len) {
  size_t i = 0;
  while (i < len && (frame[i] == ' ' || frame[i] == '\t' || frame[i] == '\r'))
    i++;
  if (i == len || frame[i] == '[') return 1;
  mcpp__msg m;
  return frame[i] == '{' && mcpp__scan_message(frame, len, &m) == 0;
}

/* A server that logs to stdout would break the client's parser: the line
 * is dropped, counted, and the first one shown on stderr, in the words a
 * handshake that times out uses (mcpp_unreadable_text). */
static void non_json(wrap *w, const char *frame, size_t len) {
  if (w->non_json++) return;
  char shown[512];
  mcpp_unreadable what = {1, frame, len, 0, NULL, 0};
  mcpp_unreadable_text("the server", &what, shown, sizeof shown);
  say("%s; dropped, not forwarded to the client (servers log to stderr)", shown);
}

static void on_message(mcpp_conn *c, const char *frame, size_t len,
                       void *ud) {
  wrap *w = ud;
  if (!is_message(frame, len)) {
    non_json(w, frame, len);
    return;
  }
  if (!w->ready && mcpp_handshake_answer(w->handshake, frame, len) !=
                       MCPP_REPLAY_OTHER) {
    replay_answered(w, frame, len);
    return;
  }
  mcpp_handshake_observe_answer(w->handshake, frame, len);
  w->attempt = 0; /* it works: the next failure starts the backoff over */
  to_client(w, frame, len, 1);
}

static void on_event(mcpp_conn *c, const mcpp_event *ev, void *ud) {
  wrap *w = ud;
  mcpp__wrap_figures_observe(&w->figures, ev);
  if (ev->type == MCPP_EV_PONG && w->ready) w->attempt = 0; /* it works */
  if (ev->type == MCPP_EV_INITIALIZED && w->metrics && ev->message)
    mcpp__wrap_metrics_set_peer(w->metrics, ev->message);
}

static void on_record(mcpp_conn *c, const char *json, size_t len, void *ud) {
  wrap *w = ud;
  if (w->log_fd < 0 || len < 2 || json[len - 1] != '}') return;
  /* The record gets "server": the config entry's name (--name), else the
   * peer's, as metrics label it. */
  const char *server = w->o.server_name;
  mcpp_engine_info ei;
  if (!server) {
    mcpp_engine_get_info(mcpp_conn_engine(c), &ei);
    server = ei.peer_name;
  }
  char field[600];
  mcpp__sb sb;
  mcpp__sb_init(&sb, field, sizeof field);
  mcpp__sb_puts(&sb, ",\"server\":");
  if (server)
    mcpp__sb_json_string(&sb, server, strlen(server));
  else
    mcpp__sb_puts(&sb, "null");
  mcpp__sb_puts(&sb, "}\n");
  if (sb.len >= sizeof field) return; /* names are capped well below */
  struct iovec iov[2] = {{(void *)json, len - 1}, {field, sb.len}};
  /* O_APPEND: one record per write, whole, even beside other writers. */
  ssize_t ignored = writev(w->log_fd, iov, 2);
  (void)ignored;
}

static void on_progress(mcpp_conn *c, void *ud) {
  wrap *w = ud;
  /* The server caught up with what the client sent: read the client. */
  if (!w->reading && w->in_open && !w->finishing &&
      mcpp__conn_queued_bytes(c) < MAX_QUEUED / 2 &&
      w->backlog.len < MAX_QUEUED / 2) {
    read_client(w);
  }
}

static void on_restart_timer(uv_timer_t *t);

/* Schedules the next attempt: reconnect's backoff, then the retry budget
 * (one wrap per process: it bounds a crash loop's rate). */
static void schedule_restart(wrap *w) {
  w->attempt++;
  /* splitmix64: jitter without process-wide randomness. */
  uint64_t z = (w->rng += 0x9E3779B97F4A7C15ull);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  z ^= z >> 31;
  uint64_t now = now_us();
  uint64_t at = mcpp_retry_budget_take(
      &w->budget, now + mcpp_reconnect_delay_us(&w->policy, w->attempt, z));
  uint64_t ms = (at - now + 999) / 1000;
  say("%s; restarting in %llu ms", w->cause, (unsigned long long)ms);
  uv_timer_start(&w->restart_timer, on_restart_timer, ms, 0);
}

static int give_up(wrap *w) {
  if (w->attempt < w->policy.max_attempts) return 0;
  say("%s; gave up after %u restart attempts", w->cause,
      (unsigned)w->policy.max_attempts);
  answer_backlog(w);
  finish(w, 1);
  return 1;
}

static void on_restart_timer(uv_timer_t *t) {
  wrap *w = t->data;
  if (w->finishing) return;
  /* A spawn that fails counts as an attempt too. */
  if (start_server(w) == 0 || give_up(w)) return;
  schedule_restart(w);
}

static void on_close(mcpp_conn *c, const mcpp_close_info *info, void *ud) {
  wrap *w = ud;
  w->conn = NULL;
  w->figures.state = MCPP_STATE_CLOSED;
  w->figures.in_flight = 0;
  uv_timer_stop(&w->end_wait);
  if (w->finishing || w->client_gone) {
    finish(w, w->status);
    return;
  }
  snprintf(w->cause, sizeof w->cause, "%s", info->reason);
  w->cause_stale = info->err == MCPP_ERR_STALE;
  mcpp_engine_info ei;
  mcpp_engine_get_info(mcpp_conn_engine(c), &ei);
  if (ei.initialized) w->handshake_done = 1;
  /* The engine is valid until we return; its ledger holds the requests
   * the server never answered. A client that closed its input may still
   * read their answers. */
  mcpp_engine_foreach_in_flight(mcpp_conn_engine(c), answer_in_flight, w);
  if (w->ended_input) {
    finish(w, w->status);
    return;
  }
  if (!w->o.restart) {
    say("%s; not restarting (--no-restart)", w->cause);
    finish(w, 1);
    return;
  }
  if (give_up(w)) return;
  w->ready = 0;
  schedule_restart(w);
}

static int start_server(wrap *w) {
  mcpp_conn_callbacks cb = {.on_message = on_message,
                            .on_event = on_event,
                            .on_record = w->log_fd >= 0 ? on_record : NULL,
                            .on_close = on_close};
  mcpp_conn *c;
  int rc = mcpp_conn_spawn(&c, &w->loop, &w->s, &w->o.spawn, &cb, w, NULL);
  if (rc) {
    const char *why = mcpp_conn_spawn_error();
    snprintf(w->cause, sizeof w->cause, "%s", *why ? why : mcpp_strerror(rc));
    say("%s", w->cause);
    return rc;
  }
  w->conn = c;
  w->figures.state = MCPP_STATE_ALIVE;
  mcpp__conn_set_progress(c, on_progress);
  mcpp__conn_set_exact_lines(c);
  if (w->attempt) {
    mcpp_engine *e = mcpp_conn_engine(c);
    mcpp_engine_set_reconnect_attempt(e, w->attempt);
    mcpp_engine_record_reconnect(e, now_us());
    w->figures.reconnects++;
  }
  /* A restarted server gets the client's handshake first (if the client
   * finished it with the old one), then the backlog. */
  size_t n = 0;
  const char *replay = w->attempt && w->handshake_done
                           ? mcpp_handshake_replay(w->handshake, w->attempt, &n)
                           : NULL;
  w->ready = replay == NULL;
  if (replay) {
    mcpp_conn_send(c, replay, n);
  } else if (w->attempt) {
    send_backlog(w);
  }
  return 0;
}

/* ---------------------------------------------------------- from the client */

static void stop_reading_client(wrap *w) {
  if (!w->reading) return;
  if (!w->in_file) uv_read_stop(&w->in.stream);
  w->reading = 0;
}

/* No server could be started: each request the client sends is answered
 * with why (the client shows it), and after the first we are done. */
static void refuse_line(wrap *w, const char *line, size_t len) {
  if (answer_line(w, line, len)) finish(w, 2);
}

static void forward_line(wrap *w, const char *line, size_t len) {
  if (w->start_failed) {
    refuse_line(w, line, len);
    return;
  }
  if (w->conn && w->ready) {
    int rc = mcpp_conn_send(w->conn, line, len);
    if (rc == 0) {
      if (mcpp__conn_queued_bytes(w->conn) >= MAX_QUEUED) stop_reading_client(w);
      return;
    }
    if (rc != MCPP_ERR_CLOSED) {
      say("cannot forward a line to the server: %s", mcpp_strerror(rc));
      return;
    }
    /* The server is going: the line waits for the next one. */
  }
  if (buf_put(w, &w->backlog, line, len) || buf_put(w, &w->backlog, "\n", 1)) {
    say("out of memory queueing the client's line");
    w->status = 2;
    finish(w, 2);
    return;
  }
  if (w->backlog.len >= MAX_QUEUED) stop_reading_client(w);
}

static void on_line(wrap *w, const char *line, size_t len) {
  /* Cheap once the handshake is captured. Out of memory it is not
   * captured: a restarted server is then not given it. */
  mcpp_handshake_observe(w->handshake, line, len);
  forward_line(w, line, len);
}

static void client_eof(wrap *w);

/* A client killed by SIGKILL closes our stdin, unless a process it left
 * behind holds it open: then we see it go by being reparented. */
static void on_parent_watch(uv_timer_t *t) {
  wrap *w = t->data;
  if (w->ppid == (int)getppid() || w->ended_input || w->finishing) return;
  say("the client (pid %d) is gone", w->ppid);
  uv_timer_stop(t);
  client_eof(w);
}

static void on_end_wait(uv_timer_t *t) {
  wrap *w = t->data;
  if (w->conn) mcpp_conn_close(w->conn);
}

/* EOF from the client: the server gets EOF too and a moment to exit by
 * itself; then it is closed. */
static void client_eof(wrap *w) {
  if (w->part.len) {
    on_line(w, w->part.p, w->part.len);
    w->part.len = 0;
  }
  stop_reading_client(w);
  w->ended_input = 1;
  if (!w->conn) {
    finish(w, w->status);
    return;
  }
  uv_timer_stop(&w->restart_timer);
  mcpp__conn_end_input(w->conn);
  uv_timer_start(&w->end_wait, on_end_wait, END_INPUT_WAIT_MS, 0);
}

static void on_alloc(uv_handle_t *h, size_t suggested, uv_buf_t *b) {
  static _Thread_local char rbuf[64 * 1024];
  *b = uv_buf_init(rbuf, sizeof rbuf);
}

static void client_bytes(wrap *w, const char *p, const char *end) {
  while (p < end && !w->finishing) {
    const char *nl = memchr(p, '\n', (size_t)(end - p));
    if (!nl) {
      if (buf_put(w, &w->part, p, (size_t)(end - p))) {
        say("out of memory buffering the client's line");
        finish(w, 2);
        return;
      }
      if (w->part.len > w->s.max_line_bytes) {
        say("the client sent a line longer than %zu bytes (max_line_bytes)",
            w->s.max_line_bytes);
        finish(w, 2);
      }
      return;
    }
    if (w->part.len) {
      if (buf_put(w, &w->part, p, (size_t)(nl - p))) {
        finish(w, 2);
        return;
      }
      on_line(w, w->part.p, w->part.len);
      w->part.len = 0;
    } else {
      on_line(w, p, (size_t)(nl - p));
    }
    p = nl + 1;
  }
}

static void on_client_read(uv_stream_t *s, ssize_t n, const uv_buf_t *b) {
  wrap *w = s->data;
  if (n == 0 || w->finishing) return;
  if (n < 0)
    client_eof(w);
  else
    client_bytes(w, b->base, b->base + n);
}

static void read_file(wrap *w);

static void on_file_read(uv_fs_t *req) {
  wrap *w = req->data;
  ssize_t n = req->result;
  uv_fs_req_cleanup(req);
  w->in_req_busy = 0;
  if (w->finishing) return;
  if (n <= 0) {
    client_eof(w);
    return;
  }
  client_bytes(w, w->in_buf, w->in_buf + n);
  if (w->reading) read_file(w);
}

static void read_file(wrap *w) {
  if (w->in_req_busy) return;
  uv_buf_t b = uv_buf_init(w->in_buf, sizeof w->in_buf);
  w->in_req.data = w;
  if (uv_fs_read(&w->loop, &w->in_req, w->o.in_fd, &b, 1, -1, on_file_read) == 0)
    w->in_req_busy = 1;
  else
    client_eof(w);
}

static void read_client(wrap *w) {
  if (w->reading || !w->in_open || w->finishing) return;
  if (w->in_file) {
    w->reading = 1;
    read_file(w);
  } else if (uv_read_start(&w->in.stream, on_alloc, on_client_read) == 0) {
    w->reading = 1;
  }
}

static void on_check(uv_check_t *h) {
  wrap *w = h->data;
  uv_check_stop(h);
  if (w->pause_server && w->conn && !w->server_paused) {
    w->server_paused = 1;
    mcpp__conn_set_reading(w->conn, 0);
  }
  w->pause_server = 0;
}

/* ------------------------------------------------------------- lifecycle */

static void on_handle_closed(uv_handle_t *h) {}

static void close_if(uv_handle_t *h) {
  if (h->data && !uv_is_closing(h)) uv_close(h, on_handle_closed);
}

static void finish(wrap *w, int status) {
  if (!w->finishing) {
    w->finishing = 1;
    w->status = status;
  }
  stop_reading_client(w);
  if (w->conn) {
    /* on_close calls finish again once the server is reaped. */
    mcpp_conn_close(w->conn);
    return;
  }
  for (int i = 0; i < 3; i++) close_if((uv_handle_t *)&w->sig[i]);
  close_if((uv_handle_t *)&w->restart_timer);
  close_if((uv_handle_t *)&w->end_wait);
  close_if((uv_handle_t *)&w->parent_watch);
  close_if((uv_handle_t *)&w->check);
  if (w->in_open && !w->in_file) close_if(&w->in.handle);
  if (w->out_open) close_if(&w->out.handle);
  w->in_open = w->out_open = 0;
  if (w->metrics) mcpp__wrap_metrics_stop(w->metrics);
  w->metrics = NULL;
}

static void on_signal(uv_signal_t *h, int signum) {
  wrap *w = h->data;
  if (!w->finishing) w->status = 128 + signum;
  client_gone(w);
}

/* Opens fd as a stream of the kind it is. Our own copy of the fd, so that
 * closing the stream leaves the process's stdin and stdout in place. */
static int open_client(wrap *w, client_handle *h, int fd, int readable,
                       const char *which) {
  uv_handle_type kind = uv_guess_handle(fd);
  int copy = fcntl(fd, F_DUPFD_CLOEXEC, 3);
  if (copy < 0) {
    say("cannot use %s: %s", which, strerror(errno));
    return -1;
  }
  int rc;
  if (kind == UV_TTY) {
    rc = uv_tty_init(&w->loop, &h->tty, copy, readable);
  } else if (kind == UV_NAMED_PIPE) {
    rc = uv_pipe_init(&w->loop, &h->pipe, 0);
    if (rc == 0) rc = uv_pipe_open(&h->pipe, copy);
  } else if (kind == UV_TCP) {
    rc = uv_tcp_init(&w->loop, &h->tcp);
    if (rc == 0) rc = uv_tcp_open(&h->tcp, copy);
  } else {
    say("%s must be a pipe, a socket or a terminal (the MCP client's)",
        which);
    close(copy);
    return -1;
  }
  if (rc) {
    say("cannot use %s: %s", which, uv_strerror(rc));
    close(copy);
    return -1;
  }
  h->handle.data = w;
  return 0;
}

void mcpp_wrap_options_default(mcpp_wrap_options *o) {
  if (!o) return;
  memset(o, 0, sizeof *o);
  o->version = MCPP_WRAP_OPTIONS_VERSION;
  o->spawn.stderr_mode = MCPP_STDERR_INHERIT;
  o->restart = 1;
  o->in_fd = 0;
  o->out_fd = 1;
}

void mcpp_wrap_settings_default(mcpp_settings *s) {
  if (!s) return;
  mcpp_settings_default(s);
  /* The library's keepalive policy (the settings table's), not C's off. */
  s->interval_ms = (uint32_t)mcpp_setting_find("interval_ms")->policy;
}

/* *out = the settings wrap runs with: o->settings read as its version (or
 * wrap's defaults), pings forwarded, a stale server closed. Returns 0, or
 * -1 for settings of an unknown version. */
static int wrap_settings(const mcpp_wrap_options *o, mcpp_settings *out) {
  if (o->settings) {
    if (mcpp__settings_import(out, o->settings)) return -1;
  } else {
    mcpp_wrap_settings_default(out);
  }
  out->forward_peer_pings = 1;
  out->on_stale = MCPP_STALE_CLOSE;
  return 0;
}

const char *mcpp_wrap_options_problem(const mcpp_wrap_options *o) {
  if (!o) return "options must not be NULL";
  if (o->version != MCPP_WRAP_OPTIONS_V1)
    return "options.version must be a known version: initialize options "
           "with mcpp_wrap_options_default";
  if (!o->spawn.file || !o->spawn.args || !o->spawn.args[0])
    return "a server command is required (mcpping wrap -- COMMAND [ARG...])";
  if (o->restart != 0 && o->restart != 1) return "restart must be 0 or 1";
  if (o->spawn.kill_grace_ms > MCPP_MAX_KILL_GRACE_MS &&
      o->spawn.kill_grace_ms != MCPP_KILL_GRACE_NONE)
    return "kill_grace_ms must be between 0 (the default) and 2147483647 ms";
  if (o->in_fd < 0 || o->out_fd < 0) return "in_fd and out_fd must be open fds";
  mcpp_settings s;
  if (wrap_settings(o, &s))
    return mcpp_settings_problem(o->settings); /* names the version */
  return mcpp_settings_problem(&s);
}

static int setup(wrap *w, const mcpp_wrap_options *o) {
  const char *problem = mcpp_wrap_options_problem(o);
  if (problem) {
    say("%s", problem);
    return -1;
  }
  w->o = *o;
  wrap_settings(o, &w->s); /* cannot fail: the problem was NULL */
  if (!w->o.spawn.kill_grace_ms) w->o.spawn.kill_grace_ms = DEFAULT_KILL_GRACE_MS;
  w->rng = uv_hrtime() ^ ((uint64_t)getpid() << 32);
  mcpp_reconnect_default(&w->policy);
  w->policy.enabled = 1;
  mcpp_retry_budget_init(&w->budget, MCPP_RETRY_BUDGET_BURST,
                         MCPP_RETRY_BUDGET_PER_SECOND);
  if (mcpp_handshake_new(&w->handshake, w->a)) {
    say("out of memory");
    return -1;
  }
  w->log_fd = -1;
  if (o->log_path) {
    w->log_fd = open(o->log_path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
    if (w->log_fd < 0) {
      say("cannot open --log %s: %s", o->log_path, strerror(errno));
      return -1;
    }
  }
  if (uv_guess_handle(o->in_fd) == UV_FILE)
    w->in_file = 1; /* `< file`, /dev/null */
  else if (open_client(w, &w->in, o->in_fd, 1, "stdin"))
    return -1;
  w->in_open = 1;
  if (uv_guess_handle(o->out_fd) == UV_FILE)
    w->out_file = 1; /* `> file`: nothing to wait for */
  else if (open_client(w, &w->out, o->out_fd, 0, "stdout"))
    return -1;
  else
    w->out_open = 1;
  uv_timer_init(&w->loop, &w->restart_timer);
  w->restart_timer.data = w;
  uv_timer_init(&w->loop, &w->end_wait);
  w->end_wait.data = w;
  w->ppid = (int)getppid();
  uv_timer_init(&w->loop, &w->parent_watch);
  w->parent_watch.data = w;
  if (w->ppid > 1)
    uv_timer_start(&w->parent_watch, on_parent_watch, PARENT_CHECK_MS,
                   PARENT_CHECK_MS);
  uv_check_init(&w->loop, &w->check);
  w->check.data = w;
  uv_check_start(&w->check, on_check);
  uv_check_stop(&w->check);
  static const int signals[3] = {SIGTERM, SIGINT, SIGHUP};
  for (int i = 0; i < 3; i++) {
    uv_signal_init(&w->loop, &w->sig[i]);
    w->sig[i].data = w;
    uv_signal_start(&w->sig[i], on_signal, signals[i]);
  }
  w->figures.state = MCPP_STATE_CLOSED;
  if (o->metrics_addr) {
    char err[256], url[128];
    const char *peer = w->s.peer_name ? w->s.peer_name : o->spawn.file;
    const char *slash = strrchr(peer, '/');
    if (mcpp__wrap_metrics_start(&w->metrics, &w->loop, o->metrics_addr,
                                 slash ? slash + 1 : peer, &w->figures, url,
                                 sizeof url, err, sizeof err)) {
      say("%s", err);
      return -1;
    }
    if (o->server_name) mcpp__wrap_metrics_set_server(w->metrics, o->server_name);
    say("metrics on %s", url);
  }
  return 0;
}

int mcpp_wrap_run(const mcpp_wrap_options *o) {
  wrap *w = calloc(1, sizeof *w);
  if (!w) {
    say("out of memory");
    return 2;
  }
  w->a = mcpp_default_allocator();
  /* A client that went away must not kill us with SIGPIPE mid-close. */
  sigset_t pipe_set, old;
  sigemptyset(&pipe_set);
  sigaddset(&pipe_set, SIGPIPE);
  pthread_sigmask(SIG_BLOCK, &pipe_set, &old);
  uv_loop_init(&w->loop);
  w->status = 2;
  if (setup(w, o) == 0) {
    /* A server that cannot start (ENOENT, EACCES) is said on stderr by
     * start_server, and the client's initialize gets the reason too:
     * clients show an error answer, not a pipe that closed. */
    if (start_server(w) == 0)
      w->status = 0;
    else
      w->start_failed = 1;
    read_client(w);
    uv_run(&w->loop, UV_RUN_DEFAULT);
  }
  /* Whatever is still open (all of it after a failed start) closes now. */
  finish(w, w->status);
  uv_run(&w->loop, UV_RUN_DEFAULT);
  uv_loop_close(&w->loop);
  if (w->log_fd >= 0) close(w->log_fd);
  buf_free(w, &w->part);
  mcpp_handshake_free(w->handshake);
  buf_free(w, &w->backlog);
  if (w->non_json > 1)
    say("the server wrote %llu lines that were not JSON-RPC on stdout (dropped)",
        (unsigned long long)w->non_json);
  int status = w->status;
  free(w);
  pthread_sigmask(SIG_SETMASK, &old, NULL);
  return status;
}
