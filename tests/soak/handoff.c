/*
 * The host-mode hand-off soak (issue 21). One connection to build/responder
 * run by a host loop of our own in host mode: MESSAGES tools/call requests
 * pipelined 64 deep (every 997th answer is 1 MiB), a manual ping every
 * 101st request, the server pinging us after every 50th call, while the
 * host stalls at random (0-200 ms after every STALL_EVERY requests), so the
 * watchdog takes the loop over and hands it back hundreds of times.
 *
 * As the bindings do, the host owns the connection's stdout
 * (MCPP_HOST_OPTIONS_V2 watch_fd: a poll handle on the fd, read through
 * mcpp_runtime_host_read), so ownership of the reads moves between the
 * host and the watchdog at every takeover; "v1" as the fourth argument
 * watches the runtime's descriptor only.
 *
 * Checks: every answer exactly once, in the order sent, with its size;
 * every manual ping settled exactly once, by a pong; every server ping
 * answered; nothing left behind. Exit status 0 or 1 (with the reason).
 *
 *   handoff RESPONDER [MESSAGES [STALL_EVERY [v1]]]
 */
#include <fcntl.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <uv.h>

#include "mcpping.h"

enum { WINDOW = 64, BIG_EVERY = 997, PING_EVERY = 101, SERVER_PING_EVERY = 50 };
enum { BIG = 1 << 20, SMALL = 32 };

typedef struct soak {
  mcpp_runtime *rt;
  uint64_t conn;
  uv_loop_t loop;
  uv_poll_t rt_poll, notify_poll;
  uv_timer_t timer;
  int pipe[2]; /* notify -> the host loop */
  uint64_t total, stall_every;
  uint64_t sent, answered, next_answer;
  uint64_t pings_sent, pings_done, *ping_settled;
  uint64_t server_pings_answered;
  uint64_t stalls, stall_ms_total;
  int blocked; /* a send was refused: wait for WRITABLE */
  int closed;
  uint64_t rng;
  /* V2: the fds the runtime asked us to watch, and our reads of them. */
  uv_poll_t *fd_polls[1024];
  uint64_t watches, fd_reads;
} soak;

static void fail(const char *what, uint64_t a, uint64_t b) {
  fprintf(stderr, "handoff: FAILED: %s (%" PRIu64 ", %" PRIu64 ")\n", what, a, b);
  exit(1);
}

static void on_notify(void *ud) {
  soak *s = ud;
  char one = 1;
  if (write(s->pipe[1], &one, 1) < 0) { /* full: a wake is pending anyway */
  }
}

static uint64_t next_rand(soak *s) {
  s->rng ^= s->rng << 13;
  s->rng ^= s->rng >> 7;
  s->rng ^= s->rng << 17;
  return s->rng;
}

static void arm(soak *s, int64_t ms, int fresh) {
  if (ms < 0) return;
  if (!fresh && uv_is_active((uv_handle_t *)&s->timer) &&
      uv_timer_get_due_in(&s->timer) <= (uint64_t)ms)
    return;
  uv_timer_start(&s->timer, s->timer.timer_cb, (uint64_t)ms, 0);
}

static void after_command(soak *s) { arm(s, mcpp_runtime_host_rearm(s->rt), 0); }

/* The size of the text in a blob answer. */
static size_t text_len(const char *frame, size_t len) {
  const char *p = memmem(frame, len, "\"text\":\"", 8);
  if (!p) return SIZE_MAX;
  p += 8;
  const char *q = memchr(p, '"', len - (size_t)(p - frame));
  return q ? (size_t)(q - p) : SIZE_MAX;
}

static void check_answer(soak *s, const char *frame, size_t len) {
  const char *p = memmem(frame, len, "\"id\":", 5);
  if (!p) fail("an answer without an id", len, 0);
  uint64_t id = strtoull(p + 5, NULL, 10);
  if (id != s->next_answer) fail("answer out of order or twice", id, s->next_answer);
  size_t want = id % BIG_EVERY == 0 ? BIG : SMALL;
  if (text_len(frame, len) != want) fail("answer of the wrong size", id, text_len(frame, len));
  s->next_answer++;
  s->answered++;
}

static void send_more(soak *s);

static void handle(soak *s, mcpp_item *items) {
  for (mcpp_item *it = items; it; it = mcpp_item_next(it)) {
    switch (mcpp_item_get_type(it)) {
    case MCPP_ITEM_MESSAGE:
      check_answer(s, mcpp_item_get_data(it), mcpp_item_get_len(it));
      break;
    case MCPP_ITEM_EVENT: {
      const mcpp_event *ev = mcpp_item_get_event(it);
      uint64_t token = mcpp_item_get_ping_token(it);
      if (ev->type == MCPP_EV_PING_ANSWERED) s->server_pings_answered++;
      if (!token || ev->type == MCPP_EV_PING) break;
      if (ev->type != MCPP_EV_PONG) fail("a manual ping ended without a pong", token, ev->type);
      if (token > s->pings_sent || s->ping_settled[token]++)
        fail("a manual ping settled twice", token, 0);
      s->pings_done++;
      break;
    }
    case MCPP_ITEM_PING_FAILED:
      fail("a manual ping failed", mcpp_item_get_ping_token(it), 0);
      break;
    case MCPP_ITEM_WRITABLE:
      s->blocked = 0;
      break;
    case MCPP_ITEM_CLOSED:
      s->closed = 1;
      break;
    default:
      break;
    }
  }
  mcpp_runtime_items_free(s->rt, items);
}

static void maybe_stall(soak *s) {
  if (s->sent % s->stall_every != 0) return;
  uint64_t ms = next_rand(s) % 201;
  struct timespec ts = {(time_t)(ms / 1000), (long)(ms % 1000) * 1000000L};
  nanosleep(&ts, NULL); /* the fault: a host that does not turn */
  s->stalls++;
  s->stall_ms_total += ms;
}

static void send_more(soak *s) {
  char frame[160];
  while (!s->blocked && s->sent < s->total && s->sent - s->answered < WINDOW) {
    uint64_t id = s->sent + 1;
    int n = snprintf(frame, sizeof frame,
                     "{\"jsonrpc\":\"2.0\",\"id\":%" PRIu64
                     ",\"method\":\"tools/call\",\"params\":{\"name\":\"blob\","
                     "\"arguments\":{\"bytes\":%d}}}",
                     id, id % BIG_EVERY == 0 ? BIG : SMALL);
    int rc = mcpp_runtime_send(s->rt, s->conn, frame, (size_t)n);
    if (rc == MCPP_ERR_WOULD_BLOCK) {
      s->blocked = 1;
      break;
    }
    if (rc) fail("send", (uint64_t)-rc, id);
    s->sent++;
    if (s->sent % PING_EVERY == 0) {
      rc = mcpp_runtime_ping(s->rt, s->conn, 0, ++s->pings_sent);
      if (rc) fail("ping", (uint64_t)-rc, s->pings_sent);
    }
    after_command(s);
    maybe_stall(s);
  }
}

static void turn(soak *s) {
  int64_t wake = -1;
  if (mcpp_runtime_host_run(s->rt, &wake)) fail("host_run", 0, 0);
  handle(s, mcpp_runtime_drain(s->rt));
  arm(s, wake, 1);
  send_more(s);
}

static void on_readable(uv_poll_t *p, int status, int events) {
  (void)status;
  (void)events;
  turn(p->data);
}

static void on_notified(uv_poll_t *p, int status, int events) {
  (void)status;
  (void)events;
  soak *s = p->data;
  char buf[64];
  while (read(s->pipe[0], buf, sizeof buf) > 0) {
  }
  turn(s);
}

static void on_timer(uv_timer_t *t) { turn(t->data); }

static soak *the_soak;

static void on_fd(uv_poll_t *p, int status, int events) {
  (void)status;
  (void)events;
  soak *s = the_soak;
  int64_t wake = -1;
  if (mcpp_runtime_host_read(s->rt, (int)(intptr_t)p->data, &wake)) fail("host_read", 0, 0);
  s->fd_reads++;
  handle(s, mcpp_runtime_drain(s->rt));
  arm(s, wake, 0);
  send_more(s);
}

static void free_poll(uv_handle_t *h) { free(h); }

static void watch_fd(void *ctx, int fd, int on) {
  soak *s = ctx;
  if (fd < 0 || fd >= 1024) fail("a watched fd out of range", (uint64_t)fd, 0);
  if (!on) {
    if (!s->fd_polls[fd]) fail("unwatched an fd not watched", (uint64_t)fd, 0);
    uv_close((uv_handle_t *)s->fd_polls[fd], free_poll);
    s->fd_polls[fd] = NULL;
    return;
  }
  if (s->fd_polls[fd]) fail("watched an fd twice", (uint64_t)fd, 0);
  uv_poll_t *p = malloc(sizeof *p);
  if (!p || uv_poll_init(&s->loop, p, fd)) fail("uv_poll_init", (uint64_t)fd, 0);
  p->data = (void *)(intptr_t)fd;
  uv_poll_start(p, UV_READABLE, on_fd);
  s->fd_polls[fd] = p;
  s->watches++;
}

int main(int argc, char **argv) {
  if (argc < 2) {
    fprintf(stderr, "usage: handoff RESPONDER [MESSAGES [STALL_EVERY]]\n");
    return 2;
  }
  static soak s;
  s.total = argc > 2 ? strtoull(argv[2], NULL, 10) : 1000000;
  s.stall_every = argc > 3 ? strtoull(argv[3], NULL, 10) : 5000;
  s.rng = 0x2545f4914f6cdd1dull;
  signal(SIGPIPE, SIG_IGN); /* host mode requires it, as Node and Python do */
  s.ping_settled = calloc(s.total / PING_EVERY + 2, sizeof *s.ping_settled);
  if (!s.ping_settled || pipe2(s.pipe, O_NONBLOCK | O_CLOEXEC)) return 1;
  uv_loop_init(&s.loop);
  mcpp_runtime_options o = {.notify = on_notify, .user_data = &s};
  if (mcpp_runtime_new(&s.rt, &o)) return 1;
  int fd = -1;
  the_soak = &s;
  int v1 = argc > 4 && strcmp(argv[4], "v1") == 0;
  mcpp_host_options ho = {.version = MCPP_HOST_OPTIONS_V2, .watch_fd = watch_fd,
                          .watch_ctx = &s};
  int rc = mcpp_runtime_host_attach(s.rt, v1 ? NULL : &ho, &fd);
  if (rc) fail("host mode refused", (uint64_t)-rc, 0);
  char every[16];
  snprintf(every, sizeof every, "%d", SERVER_PING_EVERY);
  char *args[] = {argv[1], "--ping-client", every, NULL};
  mcpp_spawn_options so = {0};
  so.file = argv[1];
  so.args = args;
  so.stderr_mode = MCPP_STDERR_INHERIT;
  mcpp_settings st;
  mcpp_settings_default(&st);
  st.interval_ms = 1000; /* keepalive runs through the stalls too */
  st.timeout_ms = 5000;
  char err[256];
  if (mcpp_runtime_spawn(s.rt, &st, &so, NULL, &s.conn, err, sizeof err))
    fail(err, 0, 0);
  uv_timer_init(&s.loop, &s.timer);
  s.timer.data = &s;
  s.timer.timer_cb = on_timer;
  uv_poll_init(&s.loop, &s.rt_poll, fd);
  s.rt_poll.data = &s;
  uv_poll_start(&s.rt_poll, UV_READABLE, on_readable);
  uv_poll_init(&s.loop, &s.notify_poll, s.pipe[0]);
  s.notify_poll.data = &s;
  uv_poll_start(&s.notify_poll, UV_READABLE, on_notified);
  s.next_answer = 1;
  uint64_t t0 = uv_hrtime();
  after_command(&s);
  send_more(&s);
  uint64_t expect_server_pings = s.total / SERVER_PING_EVERY;
  while (s.answered < s.total ||
         s.server_pings_answered < expect_server_pings ||
         s.pings_done < s.pings_sent)
    uv_run(&s.loop, UV_RUN_ONCE);
  double secs = (double)(uv_hrtime() - t0) / 1e9;
  for (uint64_t t = 1; t <= s.pings_sent; t++)
    if (s.ping_settled[t] != 1) fail("a manual ping not settled once", t, s.ping_settled[t]);
  mcpp_host_stats hs;
  mcpp_runtime_host_stats(s.rt, &hs);
  if (mcpp_runtime_close(s.rt, s.conn)) fail("close", 0, 0);
  after_command(&s);
  while (!s.closed) uv_run(&s.loop, UV_RUN_ONCE);
  for (int i = 0; i < 1024; i++)
    if (s.fd_polls[i]) fail("an fd still watched after the close", (uint64_t)i, 0);
  if (!v1 && !s.fd_reads) fail("the host never read the connection's fd", 0, 0);
  uv_close((uv_handle_t *)&s.rt_poll, NULL);
  uv_close((uv_handle_t *)&s.notify_poll, NULL);
  uv_close((uv_handle_t *)&s.timer, NULL);
  uv_run(&s.loop, UV_RUN_DEFAULT);
  uv_loop_close(&s.loop);
  mcpp_runtime_free(s.rt);
  if (s.stalls && !hs.takeovers) fail("the host stalled and no takeover happened", s.stalls, 0);
  printf("handoff: %" PRIu64 " requests answered in order (%" PRIu64
         " of 1 MiB), %" PRIu64 " manual pings settled once, %" PRIu64
         " server pings answered, %" PRIu64 " host stalls (%.1f s), %" PRIu64
         " takeovers, %" PRIu64 " host turns, %" PRIu64 " inline commands, %" PRIu64
         " host reads of the fd (%" PRIu64 " watches), %.1f s\n",
         s.answered, s.answered / BIG_EVERY, s.pings_sent, s.server_pings_answered,
         s.stalls, (double)s.stall_ms_total / 1000, hs.takeovers, hs.host_turns,
         hs.inline_commands, s.fd_reads, s.watches, secs);
  free(s.ping_settled);
  close(s.pipe[0]);
  close(s.pipe[1]);
  return 0;
}
