/*
 * The runtime's flow control and live reads: info() and healthy follow the
 * engine without any item queued, per-request deadlines and aborts cancel
 * on the wire and answer the host, and a flood the host does not drain
 * stops the reading (nothing convicted, nothing lost) as a full outbound
 * queue refuses sends until WRITABLE.
 */
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <time.h>
#include <unistd.h>

#include "task.h"
#include "test_conn_support.h"

typedef struct flow_host {
  int fds;
  mcpp_runtime *rt;
  int efd;
  uint64_t id;
  mcpp_item *held; /* the batch drain_until found its message in */
} flow_host;

static void flow_notify(void *ud) {
  flow_host *h = ud;
  uint64_t one = 1;
  ASSERT_EQ(8, write(h->efd, &one, 8));
}

/* Starts a runtime and spawns python3 tests/peers/flood.py with s. */
static void flow_start(flow_host *h, const mcpp_settings *s) {
  memset(h, 0, sizeof *h);
  h->fds = fd_baseline();
  h->efd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
  ASSERT(h->efd >= 0);
  mcpp_runtime_options o = {.notify = flow_notify, .user_data = h};
  ASSERT_EQ(0, mcpp_runtime_new(&h->rt, &o));
  char *args[] = {"python3", (char *)peer_path("flood.py"), NULL};
  mcpp_spawn_options so = {0};
  so.file = args[0];
  so.args = args;
  ASSERT_EQ(0, mcpp_runtime_spawn(h->rt, s, &so, NULL, &h->id, NULL, 0));
}

/* Waits up to ms for a notify; returns 1 if one came. */
static int flow_wait(flow_host *h, uint32_t ms) { return wait_notified(h->efd, ms); }

static void flow_finish(flow_host *h) {
  mcpp_runtime_free(h->rt);
  close(h->efd);
  reap_orphans();
  ASSERT_EQ(h->fds, count_fds());
}

static void send_str(flow_host *h, const char *s, uint32_t timeout_ms) {
  ASSERT_EQ(0, mcpp_runtime_send_timed(h->rt, h->id, s, strlen(s), timeout_ms));
}

/* Drains until a MESSAGE containing needle arrives and returns it, noting
 * the event types seen on the way in *seen. The batch holding it is kept
 * in h->held until drop_held. */
static mcpp_item *drain_until(flow_host *h, const char *needle,
                              unsigned *seen) {
  for (;;) {
    mcpp_item *items = mcpp_runtime_drain(h->rt), *found = NULL;
    for (mcpp_item *it = items; it; it = mcpp_item_next(it)) {
      const mcpp_event *ev = mcpp_item_get_event(it);
      if (ev && seen) *seen |= 1u << ev->type;
      if (!found && mcpp_item_get_type(it) == MCPP_ITEM_MESSAGE &&
          strstr(mcpp_item_get_data(it), needle))
        found = it;
    }
    if (found) {
      h->held = items;
      return found;
    }
    mcpp_runtime_items_free(h->rt, items);
    ASSERT(flow_wait(h, margin_ms(10000)));
  }
}

static void drop_held(flow_host *h) {
  mcpp_runtime_items_free(h->rt, h->held);
  h->held = NULL;
}

static void info_of(flow_host *h, mcpp_engine_info *info, int *healthy) {
  ASSERT_EQ(0, mcpp_runtime_info(h->rt, h->id, info, healthy));
}

static const char hang_req[] =
    "{\"jsonrpc\":\"2.0\",\"id\":7,\"method\":\"tools/call\","
    "\"params\":{\"name\":\"hang\"}}";
static const char cancelled_req[] =
    "{\"jsonrpc\":\"2.0\",\"id\":\"c\",\"method\":\"test/cancelled\"}";

/* Issue 8 item 3: a hung call read healthy=1, in_flight=0 for ever. */
TEST(runtime_info_live_hung_request_turns_unhealthy_without_any_item) {
  mcpp_settings s;
  test_settings(&s); /* keepalive off */
  s.timeout_ms = margin_ms(400);
  flow_host h;
  flow_start(&h, &s);
  send_str(&h, hang_req, MCPP_TIMEOUT_DEFAULT);
  mcpp_engine_info info;
  int healthy = -1;
  /* Commands run in order: once the ping's answer is back, the send ran. */
  send_str(&h, "{\"jsonrpc\":\"2.0\",\"id\":8,\"method\":\"ping\"}",
           MCPP_TIMEOUT_DEFAULT);
  drain_until(&h, "\"id\":8", NULL);
  drop_held(&h);
  info_of(&h, &info, &healthy);
  ASSERT_EQ(1, info.in_flight);
  /* Nothing is queued or scheduled now: no item will announce the limit
   * passing, so the test waits it out (and checks nothing woke it). */
  ASSERT(!flow_wait(&h, s.timeout_ms + margin_ms(300)));
  info_of(&h, &info, &healthy);
  ASSERT_EQ(0, healthy);
  ASSERT_EQ(1, info.in_flight);
  ASSERT_EQ(MCPP_STATE_ALIVE, info.state);

  /* The host abandons it: cancelled on the wire, answered, healthy again. */
  unsigned seen = 0;
  ASSERT_EQ(0, mcpp_runtime_cancel_request(h.rt, h.id, "7", 1));
  mcpp_item *err = drain_until(&h, "\"id\":7", &seen);
  ASSERT(strstr(mcpp_item_get_data(err), "-32800") != NULL);
  drop_held(&h);
  send_str(&h, cancelled_req, MCPP_TIMEOUT_DEFAULT);
  mcpp_item *ids = drain_until(&h, "\"ids\"", &seen);
  ASSERT(strstr(mcpp_item_get_data(ids), "\"ids\":[7]") != NULL);
  drop_held(&h);
  ASSERT(seen & (1u << MCPP_EV_REQUEST_CANCELLED));
  info_of(&h, &info, &healthy);
  ASSERT_EQ(0, info.in_flight);
  ASSERT_EQ(1, healthy);
  ASSERT_EQ(MCPP_ERR_INVALID_ARGUMENT,
            mcpp_runtime_cancel_request(h.rt, h.id, NULL, 0));
  flow_finish(&h);
}

TEST(runtime_send_timed_expires_cancels_on_the_wire_and_answers_host) {
  mcpp_settings s;
  test_settings(&s);
  flow_host h;
  flow_start(&h, &s);
  ASSERT_EQ(MCPP_ERR_INVALID_ARGUMENT,
            mcpp_runtime_send_timed(h.rt, h.id, hang_req, strlen(hang_req),
                                    MCPP_MAX_MS + 1u));
  send_str(&h, hang_req, 150);
  unsigned seen = 0;
  mcpp_item *err = drain_until(&h, "\"id\":7", &seen);
  ASSERT(strstr(mcpp_item_get_data(err), "\"code\":-32001") != NULL);
  drop_held(&h);
  mcpp_engine_info info;
  int healthy = -1;
  info_of(&h, &info, &healthy);
  ASSERT_EQ(0, info.in_flight);
  ASSERT_EQ(1, info.app_timeouts);
  ASSERT_EQ(0, healthy); /* a timeout counts until the next answer */
  send_str(&h, cancelled_req, MCPP_TIMEOUT_DEFAULT);
  mcpp_item *ids = drain_until(&h, "\"ids\"", &seen);
  ASSERT(strstr(mcpp_item_get_data(ids), "\"ids\":[7]") != NULL);
  drop_held(&h);
  ASSERT(seen & (1u << MCPP_EV_REQUEST_TIMEOUT));
  info_of(&h, &info, &healthy);
  ASSERT_EQ(1, healthy);
  flow_finish(&h);
}

/* The line flood.py sends for sequence number seq. */
static size_t flood_line(char *buf, size_t cap, unsigned seq, size_t pad) {
  int n = snprintf(buf, cap,
                   "{\"jsonrpc\":\"2.0\",\"method\":\"test/seq\",\"params\":"
                   "{\"seq\":%u,\"pad\":\"", seq);
  ASSERT(n > 0 && (size_t)n + pad + 4 < cap);
  memset(buf + n, 'x', pad);
  memcpy(buf + n + pad, "\"}}", 4);
  return (size_t)n + pad + 3;
}

static int reading_of(flow_host *h) {
  mcpp_engine_info info;
  info_of(h, &info, NULL);
  return info.reading;
}

TEST_TIMEOUT(runtime_undrained_flood_stops_reading_convicts_nobody_loses_nothing,
             60) {
  enum { CAP = 256 * 1024, COUNT = 20000, SIZE = 1000, PAD = SIZE - 53 - 24 };
  mcpp_settings s;
  test_settings(&s);
  s.max_pending_bytes = CAP;
  s.interval_ms = 100; /* keepalive on: it must not convict while paused */
  s.jitter_pct = 0;
  /* Long enough that a peer or I/O thread a busy machine starves is not
   * suspected while the flood flows (200 ms was not); the pause below
   * outlasts a whole conviction, so counting it still shows. */
  s.timeout_ms = margin_ms(1000);
  s.failures = 2;
  flow_host h;
  flow_start(&h, &s);
  char req[128];
  snprintf(req, sizeof req,
           "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"test/flood\","
           "\"params\":{\"count\":%d,\"size\":%d}}", COUNT, SIZE);
  send_str(&h, req, MCPP_TIMEOUT_DEFAULT);
  /* The host is "blocked": nothing drained until the runtime stopped
   * reading and a few keepalive periods passed. */
  ASSERT(flow_wait(&h, margin_ms(10000)));
  struct timespec nap = {0, 5 * 1000 * 1000};
  for (int i = 0; reading_of(&h); i++) {
    ASSERT_LT(i, (int)margin_ms(2000));
    nanosleep(&nap, NULL);
  }
  ASSERT(!flow_wait(&h, 2 * s.interval_ms + s.failures * s.timeout_ms));
  ASSERT_EQ(0, reading_of(&h));

  char want[2048];
  unsigned next = 0, events = 0;
  size_t first_batch = 0;
  int done = 0, batches = 0;
  while (!done) {
    mcpp_item *items = mcpp_runtime_drain(h.rt);
    size_t bytes = 0;
    for (mcpp_item *it = items; it; it = mcpp_item_next(it)) {
      if (mcpp_item_get_type(it) == MCPP_ITEM_EVENT)
        events |= 1u << mcpp_item_get_event(it)->type;
      if (mcpp_item_get_type(it) != MCPP_ITEM_MESSAGE) continue;
      bytes += mcpp_item_get_len(it);
      if (strstr(mcpp_item_get_data(it), "test/flood_done")) {
        char count[32];
        snprintf(count, sizeof count, "\"count\":%d,", COUNT);
        ASSERT(strstr(mcpp_item_get_data(it), count) != NULL);
        done = 1;
      } else if (strstr(mcpp_item_get_data(it), "test/seq")) {
        size_t n = flood_line(want, sizeof want, next, PAD);
        ASSERT_MEM_EQ(mcpp_item_get_data(it), mcpp_item_get_len(it), want);
        ASSERT_EQ(n, mcpp_item_get_len(it));
        next++;
      }
    }
    mcpp_runtime_items_free(h.rt, items);
    /* The cap, and one read and one line beyond at most: the items count
     * until freed, so the queue and the batch in hand share the cap. */
    ASSERT_LE(bytes, CAP + 64 * 1024 + SIZE);
    if (batches++ == 0) {
      first_batch = bytes;
      ASSERT_GE(first_batch, CAP / 2);
    }
    if (!done) ASSERT(flow_wait(&h, margin_ms(10000)));
  }
  ASSERT_EQ(COUNT, next);
  ASSERT_GT(batches, 2);
  ASSERT(!(events & (1u << MCPP_EV_SUSPECT)));
  ASSERT(!(events & (1u << MCPP_EV_STALE)));
  ASSERT(!(events & (1u << MCPP_EV_TIMEOUT)));
  /* The last drain asked the I/O thread to resume; it does so on its own
   * turn, so the flag turns back within a bound, not at once. */
  for (int i = 0; !reading_of(&h); i++) {
    ASSERT_LT(i, (int)margin_ms(2000));
    nanosleep(&nap, NULL);
  }
  flow_finish(&h);
}

/* A ping request with id `id`, padded to about `pad` bytes. */
static void padded_ping(char *frame, size_t cap, int id, int pad) {
  int n = snprintf(frame, cap,
                   "{\"jsonrpc\":\"2.0\",\"id\":%d,\"method\":\"ping\","
                   "\"params\":{\"pad\":\"", id);
  memset(frame + n, 'y', (size_t)pad);
  memcpy(frame + n + pad, "\"}}", 4);
}

TEST_TIMEOUT(runtime_full_outbound_queue_would_block_until_writable, 40) {
  enum { CAP = 64 * 1024, PAD = 4000, MAX = 400 };
  mcpp_settings s;
  test_settings(&s);
  s.max_pending_bytes = CAP;
  flow_host h;
  flow_start(&h, &s);
  int pid = mcpp_runtime_pid(h.rt, h.id);
  ASSERT_GT(pid, 0);
  /* A stopped server reads nothing: the pipe, then the queue, fill up. */
  ASSERT_EQ(0, kill(pid, SIGSTOP));
  static char frame[PAD + 128];
  int sent = 0, rc = 0;
  while (sent < MAX) {
    padded_ping(frame, sizeof frame, sent, PAD);
    rc = mcpp_runtime_send(h.rt, h.id, frame, strlen(frame));
    if (rc == MCPP_ERR_WOULD_BLOCK) break;
    ASSERT_EQ(0, rc);
    sent++;
  }
  ASSERT_EQ(MCPP_ERR_WOULD_BLOCK, rc);
  ASSERT_LT(sent, MAX);
  /* Refused again while full, unless the I/O thread has meanwhile moved
   * queued bytes into the pipe's buffer: then it is taken like any other. */
  rc = mcpp_runtime_send(h.rt, h.id, frame, strlen(frame));
  if (rc == 0)
    sent++;
  else
    ASSERT_EQ(MCPP_ERR_WOULD_BLOCK, rc);
  padded_ping(frame, sizeof frame, sent, PAD); /* a fresh id for the retry */
  ASSERT_EQ(0, kill(pid, SIGCONT));
  /* As a host does: on WOULD_BLOCK, wait for a WRITABLE and send again. A
   * WRITABLE that came before an accepted send promised room for the
   * refused frame, not for one more, so a retry may be refused once more;
   * each refusal is followed by a WRITABLE once the server reads. */
  int answers = 0, writables = 0, refusals = 0;
  while ((rc = mcpp_runtime_send(h.rt, h.id, frame, strlen(frame))) ==
         MCPP_ERR_WOULD_BLOCK) {
    ASSERT_LT(++refusals, 3);
    for (int writable = 0; !writable;) {
      ASSERT(flow_wait(&h, margin_ms(10000)));
      mcpp_item *items = mcpp_runtime_drain(h.rt);
      for (mcpp_item *it = items; it; it = mcpp_item_next(it)) {
        if (mcpp_item_get_type(it) == MCPP_ITEM_WRITABLE) writable++;
        if (mcpp_item_get_type(it) == MCPP_ITEM_MESSAGE) answers++;
      }
      mcpp_runtime_items_free(h.rt, items);
      writables += writable;
    }
  }
  ASSERT_EQ(0, rc);
  sent++;
  /* Every ping the application sent was forwarded... and answered. */
  while (answers < sent) {
    mcpp_item *items = mcpp_runtime_drain(h.rt);
    for (mcpp_item *it = items; it; it = mcpp_item_next(it)) {
      if (mcpp_item_get_type(it) == MCPP_ITEM_WRITABLE) writables++;
      if (mcpp_item_get_type(it) == MCPP_ITEM_MESSAGE) answers++;
    }
    mcpp_runtime_items_free(h.rt, items);
    if (answers < sent) ASSERT(flow_wait(&h, margin_ms(10000)));
  }
  ASSERT_EQ(sent, answers);
  /* The first refusal owed a WRITABLE: it came before the answers to the
   * frames that waited for the room it announced. */
  ASSERT_GE(writables, 1);
  flow_finish(&h);
}
