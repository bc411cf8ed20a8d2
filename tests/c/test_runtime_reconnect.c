/*
 * Reconnect through the runtime, against a real server process (the
 * recorder peer, which logs every message it receives): a request in
 * flight at the crash fails to the host as in doubt and reaches the new
 * server zero times; the handshake is replayed with its answer swallowed;
 * frames sent between servers wait and go out in order, their timeouts
 * running all the while; max_attempts ends it with a reason that says so;
 * nothing is left behind.
 */
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "driver/driver.h"
#include "task.h"
#include "test_conn_support.h"
#include "engine/test_hooks.h"

typedef struct host {
  int fds;
  mcpp_runtime *rt;
  int efd;
  mcpp_item *items[4096]; /* every item drained, in order */
  size_t n_items;
  mcpp_item *batches[4096]; /* the lists they came in, to free */
  size_t n_batches;
  char log[256], marker[256];
} host;

static void host_notify(void *ud) {
  host *h = ud;
  uint64_t one = 1;
  ASSERT_EQ(8, write(h->efd, &one, 8));
}

static void host_init(host *h) {
  memset(h, 0, sizeof *h);
  h->fds = fd_baseline();
  h->efd = eventfd(0, EFD_CLOEXEC);
  ASSERT(h->efd >= 0);
  mcpp_runtime_options o = {.notify = host_notify, .user_data = h};
  ASSERT_EQ(0, mcpp_runtime_new(&h->rt, &o));
  snprintf(h->log, sizeof h->log, "/tmp/mcpp-reconnect-%d.log", (int)getpid());
  snprintf(h->marker, sizeof h->marker, "/tmp/mcpp-reconnect-%d.once",
           (int)getpid());
  unlink(h->log);
  unlink(h->marker);
}

static void host_wait_drain(host *h) {
  struct pollfd p = {h->efd, POLLIN, 0};
  int r;
  while ((r = poll(&p, 1, (int)margin_ms(10000))) < 0 && errno == EINTR) {
  }
  ASSERT_EQ(1, r);
  uint64_t n;
  ASSERT_EQ(8, read(h->efd, &n, 8));
  mcpp_item *batch = mcpp_runtime_drain(h->rt);
  ASSERT_LT(h->n_batches, 4096);
  if (batch) h->batches[h->n_batches++] = batch;
  for (mcpp_item *it = batch; it; it = mcpp_item_next(it)) {
    ASSERT_LT(h->n_items, 4096);
    h->items[h->n_items++] = it;
  }
}

static mcpp_item *find_ev(host *h, mcpp_event_type type, size_t nth) {
  for (size_t i = 0; i < h->n_items; i++)
    if (mcpp_item_get_type(h->items[i]) == MCPP_ITEM_EVENT &&
        mcpp_item_get_event(h->items[i])->type == type && nth-- == 0)
      return h->items[i];
  return NULL;
}

static mcpp_item *wait_ev(host *h, mcpp_event_type type, size_t nth) {
  mcpp_item *it;
  while (!(it = find_ev(h, type, nth))) host_wait_drain(h);
  return it;
}

/* The first message item holding `needle`. */
static mcpp_item *find_message(host *h, const char *needle) {
  for (size_t i = 0; i < h->n_items; i++)
    if (mcpp_item_get_type(h->items[i]) == MCPP_ITEM_MESSAGE &&
        strstr(mcpp_item_get_data(h->items[i]), needle))
      return h->items[i];
  return NULL;
}

static mcpp_item *wait_message(host *h, const char *needle) {
  mcpp_item *it;
  while (!(it = find_message(h, needle))) host_wait_drain(h);
  return it;
}

/* Waits for a record holding both needles. */
static void wait_record(host *h, const char *a, const char *b) {
  for (size_t i = 0;; i++) {
    while (i >= h->n_items) host_wait_drain(h);
    if (mcpp_item_get_type(h->items[i]) == MCPP_ITEM_RECORD &&
        strstr(mcpp_item_get_data(h->items[i]), a) &&
        strstr(mcpp_item_get_data(h->items[i]), b))
      return;
  }
}

static size_t count_messages(host *h, const char *needle) {
  size_t n = 0;
  for (size_t i = 0; i < h->n_items; i++)
    if (mcpp_item_get_type(h->items[i]) == MCPP_ITEM_MESSAGE &&
        strstr(mcpp_item_get_data(h->items[i]), needle))
      n++;
  return n;
}

static void host_finish(host *h) {
  for (size_t i = 0; i < h->n_batches; i++)
    mcpp_runtime_items_free(h->rt, h->batches[i]);
  h->n_batches = 0;
  mcpp_runtime_free(h->rt);
  ASSERT_EQ(0, mcpp__runtime_loop_close_rc);
  close(h->efd);
  reap_orphans();
  ASSERT_EQ(h->fds, count_fds());
  unlink(h->log);
  unlink(h->marker);
}

static uint64_t spawn_recorder_after(host *h, uint32_t max_attempts, int once,
                                     uint32_t initial_ms) {
  char *args[] = {"python3", (char *)peer_path("recorder.py"), "--log", h->log,
                  once ? "--once" : NULL, h->marker, NULL};
  mcpp_spawn_options o = {0};
  o.file = args[0];
  o.args = args;
  o.stderr_mode = MCPP_STDERR_IGNORE;
  o.kill_grace_ms = 500;
  mcpp_settings s;
  test_settings(&s);
  s.reconnect.enabled = 1;
  s.reconnect.initial_ms = initial_ms;
  s.reconnect.max_delay_ms = 2 * initial_ms;
  s.reconnect.jitter = 0;
  s.reconnect.max_attempts = max_attempts;
  uint64_t id = 0;
  char err[256];
  ASSERT_EQ(0, mcpp_runtime_spawn(h->rt, &s, &o, NULL, &id, err, sizeof err));
  return id;
}

static uint64_t spawn_recorder(host *h, uint32_t max_attempts, int once) {
  return spawn_recorder_after(h, max_attempts, once, 20);
}

static void send_str(host *h, uint64_t id, const char *frame) {
  ASSERT_EQ(0, mcpp_runtime_send(h->rt, id, frame, strlen(frame)));
}

static const char INIT[] =
    "{\"jsonrpc\":\"2.0\",\"id\":0,\"method\":\"initialize\",\"params\":{"
    "\"protocolVersion\":\"2025-06-18\",\"capabilities\":{},"
    "\"clientInfo\":{\"name\":\"t\",\"version\":\"1\"}}}";
static const char INITED[] =
    "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}";

/* Lines of the recorder's log from process pid holding needle. */
static int log_count(host *h, int pid, const char *needle) {
  FILE *f = fopen(h->log, "r");
  if (!f) return 0;
  char line[4096], who[32];
  snprintf(who, sizeof who, "{\"pid\": %d,", pid);
  int n = 0;
  while (fgets(line, sizeof line, f))
    if ((pid == 0 || strncmp(line, who, strlen(who)) == 0) && strstr(line, needle))
      n++;
  fclose(f);
  return n;
}

static void handshake(host *h, uint64_t id) {
  send_str(h, id, INIT);
  wait_message(h, "\"serverInfo\"");
  send_str(h, id, INITED);
}

TEST_TIMEOUT(runtime_reconnect_fails_in_flight_and_replays_the_handshake, 60) {
  host h;
  host_init(&h);
  uint64_t id = spawn_recorder(&h, 5, 0);
  handshake(&h, id);
  int old_pid = mcpp_runtime_pid(h.rt, id);
  ASSERT_GT(old_pid, 0);
  send_str(&h, id, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\","
                   "\"params\":{\"name\":\"hang\"}}");
  /* Answered in order after the hanging call: the server has that call. */
  send_str(&h, id, "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"tools/list\"}");
  /* The server's own answer is the peer's, not one of ours. */
  ASSERT_EQ(mcpp_item_get_answer_kind(wait_message(&h, "\"tools\":[]")), MCPP_ANSWER_PEER);
  ASSERT_EQ(0, kill(old_pid, SIGKILL));

  mcpp_item *fail = wait_message(&h, "\"id\":1,\"error\":{\"code\":-32003");
  ASSERT(strstr(mcpp_item_get_data(fail), "\"mcpping\":\"in_doubt\"") != NULL);
  ASSERT_EQ(mcpp_item_get_answer_kind(fail), MCPP_ANSWER_IN_DOUBT);
  mcpp_item *ing = wait_ev(&h, MCPP_EV_RECONNECTING, 0);
  ASSERT_UINT_EQ(mcpp_item_get_event(ing)->reconnect_attempt, 1);
  ASSERT_UINT_EQ(mcpp_item_get_event(ing)->in_flight, 1);
  ASSERT_EQ(mcpp_item_get_event(ing)->disposition, MCPP_DISPOSITION_IN_DOUBT);
  ASSERT(mcpp_item_get_event(ing)->message &&
         strstr(mcpp_item_get_event(ing)->message, "signal 9"));
  mcpp_item *ed = wait_ev(&h, MCPP_EV_RECONNECTED, 0);
  ASSERT_UINT_EQ(mcpp_item_get_event(ed)->reconnect_attempt, 1);
  ASSERT_STR_EQ(mcpp_item_get_event(ed)->message, "recorder");
  int new_pid = mcpp_item_get_event(ed)->pid;
  ASSERT_GT(new_pid, 0);
  ASSERT_NE(new_pid, old_pid);
  ASSERT_EQ(new_pid, mcpp_runtime_pid(h.rt, id));
  ASSERT(find_ev(&h, MCPP_EV_CLOSED, 0) == NULL);

  send_str(&h, id, "{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"tools/call\","
                   "\"params\":{\"name\":\"echo\"}}");
  char want[64];
  snprintf(want, sizeof want, "\"text\":\"%d\"", new_pid);
  mcpp_item *answer = wait_message(&h, "\"id\":3");
  ASSERT(strstr(mcpp_item_get_data(answer), want) != NULL);

  /* The host saw one initialize answer only: the replay's was swallowed. */
  ASSERT_EQ(count_messages(&h, "\"serverInfo\""), 1);
  /* The hanging call reached the first server once, the new one never. */
  ASSERT_EQ(log_count(&h, old_pid, "\"hang\""), 1);
  ASSERT_EQ(log_count(&h, 0, "\"hang\""), 1);
  /* The new server got the replayed initialize, initialized, then id 3. */
  ASSERT_EQ(log_count(&h, new_pid, "\"id\": \"mcpp-reconnect-1\", \"method\": \"initialize\""), 1);
  ASSERT_EQ(log_count(&h, new_pid, "\"clientInfo\": {\"name\": \"t\""), 1);
  ASSERT_EQ(log_count(&h, new_pid, "notifications/initialized"), 1);
  ASSERT_EQ(log_count(&h, new_pid, "\"id\": 3"), 1);

  /* A ping to the new server: its record carries the attempt. */
  ASSERT_EQ(0, mcpp_runtime_ping(h.rt, id, 5000, 77));
  wait_ev(&h, MCPP_EV_PONG, 0);
  /* The record follows its event. */
  wait_record(&h, "\"event\":\"ping_ok\"", "\"reconnect_attempt\":1");
  /* Records: the reconnect with what was in doubt, later ones numbered. */
  int reconnect_records = 0, numbered = 0, ping_ok = 0;
  for (size_t i = 0; i < h.n_items; i++) {
    if (mcpp_item_get_type(h.items[i]) != MCPP_ITEM_RECORD) continue;
    if (strstr(mcpp_item_get_data(h.items[i]), "\"event\":\"reconnect\"") &&
        strstr(mcpp_item_get_data(h.items[i]),
               "\"in_flight\":{\"count\":1,\"disposition\":\"in_doubt\"}"))
      reconnect_records++;
    if (strstr(mcpp_item_get_data(h.items[i]), "\"reconnect_attempt\":1")) numbered++;
    if (strstr(mcpp_item_get_data(h.items[i]), "\"event\":\"ping_ok\"") &&
        strstr(mcpp_item_get_data(h.items[i]), "\"reconnect_attempt\":1"))
      ping_ok++;
  }
  ASSERT_EQ(reconnect_records, 1);
  ASSERT_EQ(ping_ok, 1);
  ASSERT_GE(numbered, 2);
  ASSERT_EQ(0, mcpp_runtime_close(h.rt, id));
  mcpp_item *closed = wait_ev(&h, MCPP_EV_CLOSED, 0);
  ASSERT(closed != NULL);
  host_finish(&h);
}

TEST_TIMEOUT(runtime_reconnect_holds_frames_sent_between_servers, 60) {
  host h;
  host_init(&h);
  /* A backoff long enough that what follows the RECONNECTING event is
   * sent (and abandoned) before the next server is there. */
  uint64_t id = spawn_recorder_after(&h, 5, 0, margin_ms(300));
  handshake(&h, id);
  int old_pid = mcpp_runtime_pid(h.rt, id);
  ASSERT_EQ(0, kill(old_pid, SIGKILL));
  wait_ev(&h, MCPP_EV_RECONNECTING, 0);
  /* Sent while no server has the session: held, then sent in order. */
  for (int i = 10; i < 15; i++) {
    char frame[128];
    snprintf(frame, sizeof frame,
             "{\"jsonrpc\":\"2.0\",\"id\":%d,\"method\":\"tools/list\"}", i);
    send_str(&h, id, frame);
  }
  /* One the host abandons before any server has it: never sent. */
  send_str(&h, id, "{\"jsonrpc\":\"2.0\",\"id\":20,\"method\":\"tools/call\","
                   "\"params\":{\"name\":\"echo\"}}");
  ASSERT_EQ(0, mcpp_runtime_cancel_request(h.rt, id, "20", 2));
  mcpp_item *cancelled = wait_message(&h, "\"id\":20,\"error\":{\"code\":-32800");
  ASSERT(cancelled != NULL);
  mcpp_item *last = wait_message(&h, "\"id\":14");
  ASSERT(strstr(mcpp_item_get_data(last), "\"tools\":[]") != NULL);
  mcpp_item *ed = wait_ev(&h, MCPP_EV_RECONNECTED, 0);
  /* Every one answered, none failed, none sent twice. */
  for (int i = 10; i < 15; i++) {
    char want[32];
    snprintf(want, sizeof want, "\"id\": %d", i);
    ASSERT_EQ(log_count(&h, mcpp_item_get_event(ed)->pid, want), 1);
  }
  ASSERT_EQ(count_messages(&h, "-32003"), 0);
  ASSERT_EQ(log_count(&h, 0, "\"id\": 20"), 0);
  ASSERT(find_ev(&h, MCPP_EV_REQUEST_CANCELLED, 0) != NULL);
  host_finish(&h);
}

static double now_s(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

TEST_TIMEOUT(runtime_reconnect_times_out_a_held_request_during_the_backoff, 60) {
  host h;
  host_init(&h);
  /* An 8 s backoff against a 300 ms timeout: the answer must come first,
   * however slow the machine (an ordering, not a speed). */
  const uint32_t backoff_ms = margin_ms(8000), timeout_ms = 300;
  uint64_t id = spawn_recorder_after(&h, 5, 0, backoff_ms);
  handshake(&h, id);
  ASSERT_EQ(0, kill(mcpp_runtime_pid(h.rt, id), SIGKILL));
  wait_ev(&h, MCPP_EV_RECONNECTING, 0);
  double sent = now_s();
  static const char list[] =
      "{\"jsonrpc\":\"2.0\",\"id\":30,\"method\":\"tools/list\"}";
  ASSERT_EQ(0, mcpp_runtime_send_timed(h.rt, id, list, strlen(list), timeout_ms));
  /* Untimed: it stays held. */
  static const char untimed[] =
      "{\"jsonrpc\":\"2.0\",\"id\":31,\"method\":\"tools/list\"}";
  ASSERT_EQ(0, mcpp_runtime_send_timed(h.rt, id, untimed, strlen(untimed),
                                       MCPP_TIMEOUT_NONE));
  mcpp_item *answer = wait_message(&h, "\"id\":30,");
  double waited = now_s() - sent;
  /* The engine's own answer to a request that timed out, word for word. */
  ASSERT_STR_EQ(mcpp_item_get_data(answer),
                "{\"jsonrpc\":\"2.0\",\"id\":30,\"error\":{\"code\":-32001,"
                "\"message\":\"Request timed out (mcpping: no answer after 300 "
                "ms)\"}}");
  /* A held request's answer (the runtime's) carries its kind too. */
  ASSERT_EQ(mcpp_item_get_answer_kind(answer), MCPP_ANSWER_TIMEOUT);
  /* Not before its deadline, and long before the next server. */
  ASSERT(waited >= timeout_ms / 1000.0);
  ASSERT(waited < backoff_ms / 1000.0);
  ASSERT(find_ev(&h, MCPP_EV_RECONNECTED, 0) == NULL);
  const mcpp_event *ev = mcpp_item_get_event(wait_ev(&h, MCPP_EV_REQUEST_TIMEOUT, 0));
  ASSERT_UINT_EQ(ev->timeout_ms, timeout_ms);
  ASSERT_MEM_EQ(ev->id, ev->id_len, "30");
  ASSERT_STR_EQ(ev->message, "tools/list");
  ASSERT(find_message(&h, "\"id\":31") == NULL);
  ASSERT_EQ(0, mcpp_runtime_close(h.rt, id));
  wait_ev(&h, MCPP_EV_CLOSED, 0);
  ASSERT(find_ev(&h, MCPP_EV_RECONNECTED, 0) == NULL);
  ASSERT(find_ev(&h, MCPP_EV_REQUEST_TIMEOUT, 1) == NULL);
  host_finish(&h);
}

TEST_TIMEOUT(runtime_reconnect_sends_a_held_request_with_what_is_left_of_its_timeout, 60) {
  host h;
  host_init(&h);
  const uint32_t backoff_ms = margin_ms(2000), timeout_ms = backoff_ms + 2000;
  uint64_t id = spawn_recorder_after(&h, 5, 0, backoff_ms);
  handshake(&h, id);
  ASSERT_EQ(0, kill(mcpp_runtime_pid(h.rt, id), SIGKILL));
  wait_ev(&h, MCPP_EV_RECONNECTING, 0);
  /* A call the next server never answers, held for most of the backoff,
   * and one that expires while held. */
  static const char hang[] =
      "{\"jsonrpc\":\"2.0\",\"id\":40,\"method\":\"tools/call\","
      "\"params\":{\"name\":\"hang\"}}";
  ASSERT_EQ(0, mcpp_runtime_send_timed(h.rt, id, hang, strlen(hang), timeout_ms));
  static const char brief[] =
      "{\"jsonrpc\":\"2.0\",\"id\":41,\"method\":\"tools/call\","
      "\"params\":{\"name\":\"echo\"}}";
  ASSERT_EQ(0, mcpp_runtime_send_timed(h.rt, id, brief, strlen(brief), 100));
  wait_message(&h, "\"id\":41,\"error\":{\"code\":-32001");
  mcpp_item *ed = wait_ev(&h, MCPP_EV_RECONNECTED, 0);
  int new_pid = mcpp_item_get_event(ed)->pid;
  mcpp_item *answer = wait_message(&h, "\"id\":40,");
  ASSERT(strstr(mcpp_item_get_data(answer), "\"code\":-32001") != NULL);
  ASSERT_EQ(mcpp_item_get_answer_kind(answer), MCPP_ANSWER_TIMEOUT); /* the engine's */
  /* The engine timed it with what was left after the wait, not afresh. */
  const mcpp_event *ev = mcpp_item_get_event(wait_ev(&h, MCPP_EV_REQUEST_TIMEOUT, 1));
  ASSERT_MEM_EQ(ev->id, ev->id_len, "40");
  ASSERT_GT(ev->timeout_ms, 0);
  ASSERT_LT(ev->timeout_ms, timeout_ms);
  /* The new server got the call once; the expired one reached nobody. */
  ASSERT_EQ(log_count(&h, new_pid, "\"id\": 40"), 1);
  ASSERT_EQ(log_count(&h, 0, "\"id\": 41"), 0);
  ASSERT_EQ(0, mcpp_runtime_close(h.rt, id));
  wait_ev(&h, MCPP_EV_CLOSED, 0);
  host_finish(&h);
}

TEST_TIMEOUT(runtime_reconnect_gives_up_after_max_attempts, 60) {
  host h;
  host_init(&h);
  /* Only the first server serves: every respawn exits at once. */
  uint64_t id = spawn_recorder(&h, 2, 1);
  handshake(&h, id);
  ASSERT_EQ(0, kill(mcpp_runtime_pid(h.rt, id), SIGKILL));
  mcpp_item *closed = wait_ev(&h, MCPP_EV_CLOSED, 0);
  ASSERT(strstr(mcpp_item_get_event(closed)->message, "gave up reconnecting after 2 attempts"));
  ASSERT(find_ev(&h, MCPP_EV_RECONNECTING, 1) != NULL);
  ASSERT(find_ev(&h, MCPP_EV_RECONNECTING, 2) == NULL);
  ASSERT(find_ev(&h, MCPP_EV_RECONNECTED, 0) == NULL);
  mcpp_item *item = NULL;
  while (!item) {
    for (size_t i = 0; i < h.n_items && !item; i++)
      if (mcpp_item_get_type(h.items[i]) == MCPP_ITEM_CLOSED) item = h.items[i];
    if (!item) host_wait_drain(&h);
  }
  ASSERT(strstr(mcpp_item_get_close(item)->reason, "gave up reconnecting after 2 attempts: "
                                    "server exited with status 4"));
  ASSERT_EQ(mcpp_runtime_pid(h.rt, id), MCPP_ERR_NOT_FOUND);
  host_finish(&h);
}

TEST_TIMEOUT(runtime_reconnect_closed_by_host_while_waiting, 60) {
  host h;
  host_init(&h);
  uint64_t id = spawn_recorder(&h, 5, 0);
  handshake(&h, id);
  /* A long delay: the host closes before the respawn. */
  ASSERT_EQ(0, mcpp_runtime_set_retry_budget(h.rt, 1, 0.001));
  ASSERT_EQ(MCPP_ERR_INVALID_ARGUMENT, mcpp_runtime_set_retry_budget(h.rt, 0, 1));
  ASSERT_EQ(0, kill(mcpp_runtime_pid(h.rt, id), SIGKILL));
  wait_ev(&h, MCPP_EV_RECONNECTING, 0);
  ASSERT_EQ(0, mcpp_runtime_close(h.rt, id));
  mcpp_item *closed = wait_ev(&h, MCPP_EV_CLOSED, 0);
  ASSERT_STR_EQ(mcpp_item_get_event(closed)->message, "closed by the application");
  ASSERT(find_ev(&h, MCPP_EV_RECONNECTED, 0) == NULL);
  host_finish(&h);
}

TEST_TIMEOUT(runtime_reconnect_counts_a_server_that_cannot_start, 60) {
  host h;
  host_init(&h);
  /* The server's program, gone before the respawn. */
  char script[256];
  snprintf(script, sizeof script, "/tmp/mcpp-reconnect-%d.sh", (int)getpid());
  FILE *f = fopen(script, "w");
  ASSERT(f != NULL);
  fprintf(f, "#!/bin/sh\nexec python3 '%s' --log '%s'\n", peer_path("recorder.py"), h.log);
  fclose(f);
  ASSERT_EQ(0, chmod(script, 0700));
  char *args[] = {script, NULL};
  mcpp_spawn_options o = {0};
  o.file = script;
  o.args = args;
  o.stderr_mode = MCPP_STDERR_IGNORE;
  mcpp_settings s;
  test_settings(&s);
  s.reconnect.enabled = 1;
  s.reconnect.initial_ms = 10;
  s.reconnect.max_delay_ms = 20;
  s.reconnect.max_attempts = 3;
  uint64_t id = 0;
  ASSERT_EQ(0, mcpp_runtime_spawn(h.rt, &s, &o, NULL, &id, NULL, 0));
  handshake(&h, id);
  ASSERT_EQ(0, unlink(script));
  ASSERT_EQ(0, kill(mcpp_runtime_pid(h.rt, id), SIGKILL));
  mcpp_item *closed = wait_ev(&h, MCPP_EV_CLOSED, 0);
  ASSERT(strstr(mcpp_item_get_event(closed)->message,
                "gave up reconnecting after 3 attempts: cannot start"));
  /* Every respawn failed: attempts 2 and 3 were announced by the runtime
   * itself (no engine ran), with their records. */
  mcpp_item *third = find_ev(&h, MCPP_EV_RECONNECTING, 2);
  ASSERT(third != NULL);
  ASSERT_UINT_EQ(mcpp_item_get_event(third)->reconnect_attempt, 3);
  ASSERT(strstr(mcpp_item_get_event(third)->message, "cannot start"));
  ASSERT(find_ev(&h, MCPP_EV_RECONNECTING, 3) == NULL);
  wait_record(&h, "\"event\":\"reconnect\"", "\"reconnect_attempt\":3");
  for (size_t i = 0; i < h.n_items; i++)
    if (mcpp_item_get_type(h.items[i]) == MCPP_ITEM_RECORD &&
        strstr(mcpp_item_get_data(h.items[i]), "\"reconnect_attempt\":3"))
      ASSERT(strstr(mcpp_item_get_data(h.items[i]), "\"peer\":\"recorder\""));
  host_finish(&h);
}
