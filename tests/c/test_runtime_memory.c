/*
 * Memory bounded per connection (issue 23): everything the runtime holds
 * for a host that does not drain counts against max_pending_bytes, stderr
 * and the events and records of answered pings included; the source is
 * paused at the cap without convicting the server, nothing is lost, and
 * one connection's drains never give back another's bytes.
 */
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <string.h>
#include <sys/eventfd.h>
#include <time.h>
#include <unistd.h>

#include "task.h"
#include "test_conn_support.h"

enum { READ_MAX = 64 * 1024 }; /* the driver's read buffer */

typedef struct mem_host {
  int fds;
  mcpp_runtime *rt;
  int efd;
} mem_host;

static void mh_notify(void *ud) {
  mem_host *h = ud;
  uint64_t one = 1;
  ASSERT_EQ(8, write(h->efd, &one, 8));
}

static void mh_start(mem_host *h) {
  memset(h, 0, sizeof *h);
  h->fds = fd_baseline();
  h->efd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
  ASSERT(h->efd >= 0);
  mcpp_runtime_options o = {.notify = mh_notify, .user_data = h};
  ASSERT_EQ(0, mcpp_runtime_new(&h->rt, &o));
}

/* Spawns python3 tests/peers/<peer> [a1 [a2]] with stderr as items. */
static uint64_t mh_spawn(mem_host *h, const mcpp_settings *s, const char *peer,
                         const char *a1, const char *a2) {
  char *args[] = {"python3", (char *)peer_path(peer), (char *)a1, (char *)a2,
                  NULL};
  mcpp_spawn_options so = {0};
  so.file = args[0];
  so.args = args;
  so.stderr_mode = MCPP_STDERR_CALLBACK;
  uint64_t id = 0;
  ASSERT_EQ(0, mcpp_runtime_spawn(h->rt, s, &so, NULL, &id, NULL, 0));
  return id;
}

/* Waits up to ms for a notify; returns 1 if one came. */
static int mh_wait(mem_host *h, uint32_t ms) { return wait_notified(h->efd, ms); }

static void mh_finish(mem_host *h) {
  mcpp_runtime_free(h->rt);
  close(h->efd);
  reap_orphans();
  ASSERT_EQ(h->fds, count_fds());
}

static int reading_of(mem_host *h, uint64_t id) {
  mcpp_engine_info info;
  ASSERT_EQ(0, mcpp_runtime_info(h->rt, id, &info, NULL));
  return info.reading;
}

/* The I/O thread applies a pause or resume on its own turn: poll the
 * flag within a bound. */
static void await_reading(mem_host *h, uint64_t id, int want) {
  struct timespec nap = {0, 5 * 1000 * 1000};
  for (int i = 0; reading_of(h, id) != want; i++) {
    ASSERT_LT(i, (int)margin_ms(4000));
    nanosleep(&nap, NULL);
  }
}

/* A blocked host: it neither drains nor frees for ms. */
static void blocked_for(uint32_t ms) {
  struct timespec nap = {ms / 1000, (long)(ms % 1000) * 1000000L};
  while (nanosleep(&nap, &nap) < 0 && errno == EINTR) {
  }
}

static void send_str(mem_host *h, uint64_t id, const char *s) {
  ASSERT_EQ(0, mcpp_runtime_send(h->rt, id, s, strlen(s)));
}

/* Keepalive on, so that a pause counted against the server would convict
 * it: every pause below lasts PAUSE_MS or more, longer than the interval
 * and the failures' timeouts together. The timeout leaves a busy machine
 * room to run a flooding Python peer. */
enum { PAUSE_MS = 3000 };
static void keepalive_settings(mcpp_settings *s, size_t cap) {
  test_settings(s);
  s->max_pending_bytes = cap;
  s->interval_ms = 100;
  s->jitter_pct = 0;
  s->timeout_ms = 1000;
  s->failures = 2;
}

/* A verdict against the server: stale. (One keepalive ping may go
 * unanswered for a second on a machine too busy to run the peer, a
 * suspicion; two in a row without a byte convict.) */
static unsigned bad_events(const mcpp_item *it) {
  const mcpp_event *ev = mcpp_item_get_event(it);
  if (!ev || ev->type != MCPP_EV_STALE) return 0;
  fprintf(stderr, "  conn %" PRIu64 ": %s (%s)\n", mcpp_item_get_conn_id(it),
          mcpp_event_name(ev->type), ev->message ? ev->message : "");
  return 1;
}

/* Byte `at` of flood.py's stderr stream of `size`-byte lines. */
static char stderr_byte(size_t at, size_t size) {
  size_t line = at / size, col = at % size;
  if (col == size - 1) return '\n';
  if (col >= 10) return 'e';
  char head[32];
  snprintf(head, sizeof head, "E%08zu ", line);
  return head[col];
}

/* Issue 23: a server writing 256 MiB to stderr grew the host by 257 MiB;
 * stderr reads never reached the pause. */
TEST_TIMEOUT(runtime_undrained_stderr_flood_pauses_at_the_cap_and_loses_nothing,
             90) {
  enum { CAP = 256 * 1024, COUNT = 8000, SIZE = 1000 };
  mcpp_settings s;
  keepalive_settings(&s, CAP);
  mem_host h;
  mh_start(&h);
  uint64_t id = mh_spawn(&h, &s, "flood.py", NULL, NULL);
  char req[128];
  snprintf(req, sizeof req,
           "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"test/stderr_flood\","
           "\"params\":{\"count\":%d,\"size\":%d}}", COUNT, SIZE);
  send_str(&h, id, req);
  /* Blocked host: the runtime must stop reading on its own. */
  await_reading(&h, id, 0);
  blocked_for(PAUSE_MS);
  ASSERT_EQ(0, reading_of(&h, id));

  size_t got = 0, total = (size_t)COUNT * SIZE;
  unsigned bad = 0;
  int done = 0, batches = 0;
  while (!done || got < total) {
    mcpp_item *items = mcpp_runtime_drain(h.rt);
    size_t bytes = 0;
    for (mcpp_item *it = items; it; it = mcpp_item_next(it)) {
      bad |= bad_events(it);
      mcpp_item_type t = mcpp_item_get_type(it);
      if (t == MCPP_ITEM_MESSAGE &&
          strstr(mcpp_item_get_data(it), "test/stderr_done"))
        done = 1;
      if (t != MCPP_ITEM_STDERR) continue;
      const char *d = mcpp_item_get_data(it);
      size_t n = mcpp_item_get_len(it);
      ASSERT_LE(got + n, total);
      /* In order, every byte once. */
      for (size_t i = 0; i < n; i++)
        if (d[i] != stderr_byte(got + i, SIZE))
          MCPP_FAIL("stderr byte %zu is %d, not %d", got + i, d[i],
                    stderr_byte(got + i, SIZE));
      got += n;
      bytes += n;
    }
    mcpp_runtime_items_free(h.rt, items);
    /* The cap, and one read beyond at most. */
    ASSERT_LE(bytes, CAP + READ_MAX);
    batches++;
    if (!done || got < total) ASSERT(mh_wait(&h, margin_ms(10000)));
  }
  ASSERT_EQ(total, got);
  ASSERT_GT(batches, 2);
  ASSERT_EQ(0, bad);
  await_reading(&h, id, 1);
  mh_finish(&h);
}

/* Issue 23: a server pinging as fast as it could grew the host by 168 MiB:
 * each answered ping queued an event and a record nobody counted. */
TEST_TIMEOUT(runtime_undrained_ping_flood_pauses_at_the_cap_and_answers_all,
             90) {
  enum { CAP = 1024 * 1024, COUNT = 20000 };
  /* The shortest ping line ping_flood.py writes, newline included. */
  static const char shortest[] = "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"}\n";
  mcpp_settings s;
  keepalive_settings(&s, CAP);
  mem_host h;
  mh_start(&h);
  char count[32];
  snprintf(count, sizeof count, "%d", COUNT);
  uint64_t id = mh_spawn(&h, &s, "ping_flood.py", "--count", count);
  await_reading(&h, id, 0);
  blocked_for(PAUSE_MS);
  ASSERT_EQ(0, reading_of(&h, id));

  size_t answered = 0, per_ping = 0, event_bytes = 0;
  unsigned bad = 0;
  int done = 0, batches = 0;
  while (!done) {
    mcpp_item *items = mcpp_runtime_drain(h.rt);
    size_t held = 0;
    for (mcpp_item *it = items; it; it = mcpp_item_next(it)) {
      bad |= bad_events(it);
      size_t charge = mcpp_item_take_charge(it);
      held += charge;
      const mcpp_event *ev = mcpp_item_get_event(it);
      if (ev && ev->type == MCPP_EV_PING_ANSWERED) {
        answered++;
        event_bytes = charge;
      } else if (mcpp_item_get_type(it) == MCPP_ITEM_RECORD &&
                 strstr(mcpp_item_get_data(it), "ping_answered") &&
                 event_bytes + charge > per_ping) {
        per_ping = event_bytes + charge;
      } else if (mcpp_item_get_type(it) == MCPP_ITEM_MESSAGE &&
                 strstr(mcpp_item_get_data(it), "notifications/flood_done")) {
        /* The server got every pong. */
        char want[48];
        snprintf(want, sizeof want, "\"answered\":%d", COUNT);
        ASSERT(strstr(mcpp_item_get_data(it), want) != NULL);
        done = 1;
      }
    }
    ASSERT_GT(per_ping, 0);
    /* The cap, and the items of one read full of the shortest pings. */
    size_t bound = CAP + (READ_MAX / (sizeof shortest - 1) + 1) * per_ping;
    if (held > bound) MCPP_FAIL("a batch held %zu bytes (bound %zu)", held, bound);
    ASSERT_EQ(0, mcpp_runtime_release(h.rt, id, held));
    mcpp_runtime_items_free(h.rt, items);
    batches++;
    if (!done) ASSERT(mh_wait(&h, margin_ms(10000)));
  }
  ASSERT_EQ(COUNT, answered);
  ASSERT_GT(batches, 2);
  ASSERT_EQ(0, bad);
  await_reading(&h, id, 1);
  mh_finish(&h);
}

/* One flood.py connection as a host loop sees it. */
typedef struct flood_view {
  uint64_t id;
  unsigned next; /* the next test/seq expected */
  int done;
} flood_view;

static void see_message(flood_view *v, const mcpp_item *it, unsigned count) {
  const char *d = mcpp_item_get_data(it);
  const char *seq = strstr(d, "\"seq\":");
  if (strstr(d, "test/flood_done")) {
    ASSERT_EQ(count, v->next);
    v->done = 1;
  } else if (seq) {
    ASSERT_EQ(v->next, (unsigned)strtoul(seq + 6, NULL, 10));
    v->next++;
  }
}

/* Issue 23: with two asyncio loops in one process, a drain on one reset
 * the other's count. Here one host thread drains for two "loops": A's
 * items it works through and frees; B's it hands on to B's loop, which is
 * blocked (their charge taken, not given back). A's flood runs through
 * many pauses and resumes; B stays paused at its own cap throughout, and
 * runs to the end once its loop gives its bytes back. */
TEST_TIMEOUT(runtime_one_connection_drained_never_resumes_another, 90) {
  enum { CAP = 256 * 1024, COUNT = 3000, SIZE = 1000 };
  mcpp_settings s;
  keepalive_settings(&s, CAP);
  mem_host h;
  mh_start(&h);
  flood_view a = {mh_spawn(&h, &s, "flood.py", NULL, NULL), 0, 0};
  flood_view b = {mh_spawn(&h, &s, "flood.py", NULL, NULL), 0, 0};
  char req[128];
  snprintf(req, sizeof req,
           "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"test/flood\","
           "\"params\":{\"count\":%d,\"size\":%d}}", COUNT, SIZE);
  send_str(&h, b.id, req);
  await_reading(&h, b.id, 0);
  send_str(&h, a.id, req);

  size_t b_held = 0;
  unsigned bad = 0;
  while (!a.done || !b.done) {
    ASSERT(mh_wait(&h, margin_ms(10000)));
    mcpp_item *items = mcpp_runtime_drain(h.rt);
    for (mcpp_item *it = items; it; it = mcpp_item_next(it)) {
      bad |= bad_events(it);
      flood_view *v = mcpp_item_get_conn_id(it) == a.id ? &a : &b;
      if (mcpp_item_get_type(it) == MCPP_ITEM_MESSAGE)
        see_message(v, it, COUNT);
      if (v == &b && !a.done) b_held += mcpp_item_take_charge(it);
    }
    mcpp_runtime_items_free(h.rt, items);
    if (a.done && b_held) {
      /* A is through: B's own bytes, and only those, held it back. */
      ASSERT_EQ(0, reading_of(&h, b.id));
      ASSERT_LT(b.next, COUNT);
      ASSERT_LE(b_held, CAP + READ_MAX + READ_MAX / 2);
      blocked_for(PAUSE_MS); /* B's loop stays blocked a while longer */
      ASSERT_EQ(0, reading_of(&h, b.id));
      ASSERT_EQ(0, mcpp_runtime_release(h.rt, b.id, b_held));
      b_held = 0;
    }
  }
  ASSERT_EQ(COUNT, a.next);
  ASSERT_EQ(COUNT, b.next);
  ASSERT_EQ(0, bad);
  mh_finish(&h);
}
