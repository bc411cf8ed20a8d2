/* The ledger of in-flight application requests, request timeouts, and
 * healthy(): pongs alone never make a connection healthy. */
#include "engine_fixture.h"
#include "engine/ledger.h"

typedef struct listing {
  char ids[16][64];
  char methods[16][64];
  uint64_t sent[16];
  int n;
} listing;

static void collect(const char *id, size_t id_len, const char *method,
                    uint64_t sent_at, void *arg) {
  listing *l = arg;
  snprintf(l->ids[l->n], 64, "%.*s", (int)id_len, id);
  snprintf(l->methods[l->n], 64, "%s", method);
  l->sent[l->n++] = sent_at;
}

static uint32_t in_flight(fx *f) {
  mcpp_engine_info info;
  mcpp_engine_get_info(f->e, &info);
  return info.in_flight;
}

TEST(ledger_adds_requests_in_send_order) {
  fx *f = fx_new();
  fx_start(f, T0);
  fx_out(f, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/list\"}", T0);
  fx_out(f, "{\"jsonrpc\":\"2.0\",\"id\":\"1\",\"method\":\"tools/call\",\"params\":{\"name\":\"x\"}}", T0 + 1);
  fx_out(f, "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/progress\"}", T0 + 2);
  fx_out(f, "{\"jsonrpc\":\"2.0\",\"id\":7,\"result\":{}}", T0 + 3); /* our answer */
  fx_out(f, "not json", T0 + 4);
  listing l = {0};
  mcpp_engine_foreach_in_flight(f->e, collect, &l);
  ASSERT_EQ(l.n, 2);
  ASSERT_STR_EQ(l.ids[0], "1");
  ASSERT_STR_EQ(l.methods[0], "tools/list");
  ASSERT_STR_EQ(l.ids[1], "\"1\"");
  ASSERT_STR_EQ(l.methods[1], "tools/call");
  ASSERT_UINT_EQ(l.sent[1], T0 + 1);
  mcpp_engine_info info;
  mcpp_engine_get_info(f->e, &info);
  ASSERT_UINT_EQ(info.oldest_in_flight_us, T0);
  ASSERT_UINT_EQ(info.frames_out, 5);
  fx_done(f);
}

TEST(ledger_removes_on_matching_response_by_raw_id) {
  fx *f = fx_new();
  fx_start(f, T0);
  fx_out(f, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/list\"}", T0);
  fx_out(f, "{\"jsonrpc\":\"2.0\",\"id\":\"1\",\"method\":\"tools/call\"}", T0);
  ASSERT_EQ(fx_recv(f, "{\"jsonrpc\":\"2.0\",\"id\":\"1\",\"result\":{\"content\":[]}}", T0), MCPP_RECV_FORWARD);
  listing l = {0};
  mcpp_engine_foreach_in_flight(f->e, collect, &l);
  ASSERT_EQ(l.n, 1);
  ASSERT_STR_EQ(l.ids[0], "1");
  ASSERT_EQ(fx_recv(f, "{\"jsonrpc\":\"2.0\",\"id\":1,\"error\":{\"code\":-1,\"message\":\"x\"}}", T0), MCPP_RECV_FORWARD);
  ASSERT_EQ(in_flight(f), 0);
  fx_done(f);
}

TEST(ledger_removes_on_outbound_cancel) {
  fx *f = fx_new();
  fx_start(f, T0);
  fx_out(f, "{\"jsonrpc\":\"2.0\",\"id\":\"abc\",\"method\":\"tools/call\"}", T0);
  fx_out(f, "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"tools/call\"}", T0);
  fx_out(f, "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/cancelled\",\"params\":"
            "{\"reason\":\"user\",\"requestId\":\"abc\"}}", T0);
  ASSERT_EQ(in_flight(f), 1);
  fx_out(f, "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/cancelled\",\"params\":{\"requestId\":3}}", T0);
  ASSERT_EQ(in_flight(f), 1);
  fx_out(f, "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/cancelled\",\"params\":{\"requestId\":2}}", T0);
  ASSERT_EQ(in_flight(f), 0);
  fx_done(f);
}

TEST(ledger_stays_cheap_with_thousands_in_flight) {
  fx *f = fx_new();
  fx_start(f, T0);
  char frame[128];
  for (int i = 0; i < 20000; i++) {
    snprintf(frame, sizeof frame, "{\"jsonrpc\":\"2.0\",\"id\":%d,\"method\":\"tools/call\"}", i);
    ASSERT_EQ(fx_out(f, frame, T0 + (uint64_t)i), 0);
  }
  ASSERT_EQ(in_flight(f), 20000);
  /* Answer in a scrambled order. */
  for (int k = 0; k < 20000; k++) {
    int i = (int)(((uint64_t)k * 7919) % 20000);
    snprintf(frame, sizeof frame, "{\"jsonrpc\":\"2.0\",\"id\":%d,\"result\":{}}", i);
    fx_recv(f, frame, T0 + SEC);
    ASSERT_EQ(in_flight(f), 20000 - k - 1);
  }
  fx_done(f);
}

static fx *with_request_timeout(uint32_t ms) {
  fx *f = fx_new();
  f->s.request_timeout_ms = ms;
  f->s.timeout_ms = 1000;
  fx_start(f, T0);
  return f;
}

TEST(request_timeout_sends_cancel_and_delivers_error) {
  fx *f = with_request_timeout(3000);
  fx_out(f, "{\"jsonrpc\":\"2.0\",\"id\":\"call-\\\"9\\\"\",\"method\":\"tools/call\"}", T0);
  fx_out(f, "{\"jsonrpc\":\"2.0\",\"id\":12345678901234567890123,\"method\":\"tools/call\"}", T0 + SEC);
  ASSERT_UINT_EQ(mcpp_engine_next_deadline(f->e), T0 + 3 * SEC);
  fx_run_until(f, T0 + 3 * SEC);
  ASSERT_EQ(f->n_sent, 1);
  ASSERT_EQ(f->sent[0].kind, MCPP_FRAME_CANCEL);
  ASSERT_STR_EQ(f->sent[0].text,
                "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/cancelled\",\"params\":"
                "{\"requestId\":\"call-\\\"9\\\"\",\"reason\":\"mcpping: request timed out after 3000 ms\"}}");
  ASSERT_EQ(f->n_delivered, 1);
  ASSERT_STR_EQ(f->delivered[0].text,
                "{\"jsonrpc\":\"2.0\",\"id\":\"call-\\\"9\\\"\",\"error\":{\"code\":-32001,"
                "\"message\":\"Request timed out (mcpping: no answer after 3000 ms)\"}}");
  /* Its kind says so beside the frame: nobody needs to read the text. */
  ASSERT_EQ(f->delivered[0].kind, MCPP_ANSWER_TIMEOUT);
  ASSERT_EQ(mcpp_engine_delivery_kind(f->e), MCPP_ANSWER_PEER); /* only during the call */
  const fx_event *ev = fx_last_event(f, MCPP_EV_REQUEST_TIMEOUT);
  ASSERT(ev != NULL);
  ASSERT_STR_EQ(ev->id, "\"call-\\\"9\\\"\"");
  ASSERT_EQ(ev->ev.timeout_ms, 3000);
  fx_run_until(f, T0 + 4 * SEC);
  ASSERT_EQ(f->n_delivered, 2);
  ASSERT(strstr(f->delivered[1].text, "\"id\":12345678901234567890123,") != NULL);
  mcpp_engine_info info;
  mcpp_engine_get_info(f->e, &info);
  ASSERT_UINT_EQ(info.app_timeouts, 2);
  ASSERT_EQ(info.in_flight, 0);
  ASSERT_UINT_EQ(mcpp_engine_next_deadline(f->e), UINT64_MAX);
  fx_done(f);
}

TEST(request_timeout_never_cancels_initialize) {
  fx *f = with_request_timeout(1000);
  fx_out(f, "{\"jsonrpc\":\"2.0\",\"id\":0,\"method\":\"initialize\",\"params\":{}}", T0);
  fx_run_until(f, T0 + 2 * SEC);
  ASSERT_EQ(fx_count_sent(f, MCPP_FRAME_CANCEL), 0);
  ASSERT_EQ(f->n_delivered, 1);
  ASSERT(strstr(f->delivered[0].text, "\"id\":0,\"error\":{\"code\":-32001") != NULL);
  ASSERT_EQ(fx_count_events(f, MCPP_EV_REQUEST_TIMEOUT), 1);
  fx_done(f);
}

TEST(answered_requests_do_not_time_out) {
  fx *f = with_request_timeout(1000);
  fx_out(f, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\"}", T0);
  fx_recv(f, "{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{}}", T0 + 999 * MS);
  fx_run_until(f, T0 + 5 * SEC);
  ASSERT_EQ(f->n_sent, 0);
  ASSERT_EQ(f->n_delivered, 0);
  fx_done(f);
}

TEST(healthy_false_while_app_requests_time_out_despite_pongs) {
  fx *f = with_request_timeout(2000);
  f->s.interval_ms = 1000;
  mcpp_engine_free(f->e);
  fx_start(f, T0);
  ASSERT_EQ(mcpp_engine_healthy(f->e, T0), 1);
  fx_out(f, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\"}", T0);
  /* The peer answers every ping but never the tool call. */
  for (uint64_t t = T0; t < T0 + 10 * SEC; t += 100 * MS) {
    fx_run_until(f, t);
    const fx_frame *ping = fx_last_sent(f, MCPP_FRAME_PING);
    mcpp_engine_info info;
    mcpp_engine_get_info(f->e, &info);
    if (ping && info.pongs_received + info.ping_timeouts < info.pings_sent)
      ASSERT_EQ(fx_answer_last_ping(f, "\"result\":{}", t), MCPP_RECV_CONSUMED);
    if (t > T0 + 2 * SEC) ASSERT_EQ(mcpp_engine_healthy(f->e, t), 0);
    if (t > T0 + 3 * SEC)
      fx_out(f, "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"tools/call\"}", t);
  }
  mcpp_engine_info info;
  mcpp_engine_get_info(f->e, &info);
  ASSERT_GT(info.pongs_received, 5);
  ASSERT_EQ(info.state, MCPP_STATE_ALIVE);
  ASSERT_GT(info.app_timeouts, 1);
  ASSERT_EQ(mcpp_engine_healthy(f->e, T0 + 10 * SEC), 0);
  /* An application response restores health. */
  fx_run_until(f, T0 + 20 * SEC);
  fx_recv(f, "{\"jsonrpc\":\"2.0\",\"id\":2,\"result\":{}}", T0 + 20 * SEC);
  ASSERT_EQ(mcpp_engine_healthy(f->e, T0 + 20 * SEC), 1);
  fx_done(f);
}

TEST(healthy_false_when_a_request_waits_longer_than_ping_timeout) {
  fx *f = fx_new();
  f->s.timeout_ms = 1000; /* no request timeout: the ping timeout bounds it */
  fx_start(f, T0);
  fx_out(f, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\"}", T0);
  ASSERT_EQ(mcpp_engine_healthy(f->e, T0 + 1000 * MS), 1);
  ASSERT_EQ(mcpp_engine_healthy(f->e, T0 + 1001 * MS), 0);
  fx_recv(f, "{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{}}", T0 + 2 * SEC);
  ASSERT_EQ(mcpp_engine_healthy(f->e, T0 + 2 * SEC), 1);
  fx_done(f);
}

TEST(request_timeout_send_error_is_returned) {
  fx *f = with_request_timeout(1000);
  fx_out(f, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\"}", T0);
  f->send_rc = MCPP_ERR_IO;
  ASSERT_EQ(mcpp_engine_on_timer(f->e, T0 + SEC), MCPP_ERR_IO);
  ASSERT_EQ(f->n_delivered, 1); /* the application still hears of it */
  ASSERT_EQ(in_flight(f), 0);
  fx_done(f);
}

/* The hash table against a plain model: random adds and removals over a
 * few ids, so probe chains wrap and deletions shift entries back. */
TEST(ledger_table_matches_model_under_churn) {
  fx_alloc a = {{fx_malloc, fx_realloc, fx_free_block, NULL}, 0, 0, 0, 0};
  a.a.user_data = &a;
  mcpp__ledger l;
  mcpp__ledger_init(&l, &a.a);
  int model[64] = {0};
  size_t total = 0;
  uint64_t rng = 42;
  for (int step = 0; step < 200000; step++) {
    rng = rng * 6364136223846793005ULL + 1442695040888963407ULL;
    int id = (int)((rng >> 33) % 64);
    int add = (rng >> 20) % 3 != 0 || total < 8;
    char text[16];
    int n = snprintf(text, sizeof text, "%d", id);
    if (add && total < 40) {
      ASSERT_EQ(mcpp__ledger_add(&l, text, (size_t)n, "m", 1, (uint64_t)step, 0), 0);
      model[id]++;
      total++;
    } else {
      int removed = mcpp__ledger_remove_id(&l, text, (size_t)n);
      ASSERT_EQ(removed, model[id] > 0);
      if (removed) model[id]--, total--;
    }
    ASSERT_UINT_EQ(l.count, total);
  }
  for (int id = 0; id < 64; id++) {
    char text[16];
    int n = snprintf(text, sizeof text, "%d", id);
    while (model[id]--) ASSERT_EQ(mcpp__ledger_remove_id(&l, text, (size_t)n), 1);
    ASSERT(mcpp__ledger_find(&l, text, (size_t)n) == NULL);
  }
  ASSERT(l.head == NULL && l.tail == NULL);
  mcpp__ledger_free(&l);
  ASSERT_EQ(a.live, 0);
}

TEST(ledger_matches_ids_by_value_not_spelling) {
  fx *f = fx_new();
  fx_start(f, T0);
  fx_out(f, "{\"jsonrpc\":\"2.0\",\"id\":\"a/b\",\"method\":\"tools/call\"}", T0);
  fx_out(f, "{\"jsonrpc\":\"2.0\",\"id\":\"\xc3\xa9\xf0\x9f\x98\x80\",\"method\":\"tools/call\"}", T0);
  fx_out(f, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\"}", T0);
  fx_out(f, "{\"jsonrpc\":\"2.0\",\"id\":\"q\\\"\",\"method\":\"tools/call\"}", T0);
  ASSERT_EQ(in_flight(f), 4);
  fx_recv(f, "{\"jsonrpc\":\"2.0\",\"id\":\"1\",\"result\":{}}", T0); /* not 1 */
  ASSERT_EQ(in_flight(f), 4);
  fx_recv(f, "{\"jsonrpc\":\"2.0\",\"id\":\"a\\/b\",\"result\":{}}", T0);
  ASSERT_EQ(in_flight(f), 3);
  fx_recv(f, "{\"jsonrpc\":\"2.0\",\"id\":\"\\u00E9\\ud83d\\ude00\",\"result\":{}}", T0);
  ASSERT_EQ(in_flight(f), 2);
  fx_recv(f, "{\"jsonrpc\":\"2.0\",\"id\":\"\\ud83d\",\"result\":{}}", T0); /* lone surrogate */
  ASSERT_EQ(in_flight(f), 2);
  fx_out(f, "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/cancelled\",\"params\":{\"requestId\":\"q\\u0022\"}}", T0);
  ASSERT_EQ(in_flight(f), 1);
  fx_recv(f, "{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{}}", T0);
  ASSERT_EQ(in_flight(f), 0);
  fx_done(f);
}

/* The deadline heap against a plain model: random adds (timed and not)
 * and removals; the earliest entry is always the model's minimum by
 * (deadline, send order), and the oldest untimed one its first. */
TEST(ledger_deadline_heap_matches_model_under_churn) {
  fx_alloc a = {{fx_malloc, fx_realloc, fx_free_block, NULL}, 0, 0, 0, 0};
  a.a.user_data = &a;
  mcpp__ledger l;
  mcpp__ledger_init(&l, &a.a);
  enum { IDS = 200 };
  int live[IDS] = {0};
  uint64_t deadline[IDS], order[IDS], next_order = 0;
  uint64_t rng = 9;
  for (int step = 0; step < 100000; step++) {
    rng = rng * 6364136223846793005ULL + 1442695040888963407ULL;
    int id = (int)((rng >> 33) % IDS);
    char text[16];
    int n = snprintf(text, sizeof text, "%d", id);
    if (!live[id]) {
      uint32_t timeout = (rng >> 20) % 4 == 0 ? 0 : (uint32_t)((rng >> 40) % 50);
      ASSERT_EQ(mcpp__ledger_add(&l, text, (size_t)n, "m", 1, (uint64_t)step, timeout), 0);
      live[id] = 1;
      deadline[id] = timeout ? (uint64_t)step + timeout * 1000ULL : UINT64_MAX;
      order[id] = next_order++;
    } else {
      ASSERT_EQ(mcpp__ledger_remove_id(&l, text, (size_t)n), 1);
      live[id] = 0;
    }
    int best = -1, first_untimed = -1;
    for (int i = 0; i < IDS; i++) {
      if (!live[i]) continue;
      if (deadline[i] == UINT64_MAX) {
        if (first_untimed < 0 || order[i] < order[first_untimed]) first_untimed = i;
      } else if (best < 0 || deadline[i] < deadline[best] ||
                 (deadline[i] == deadline[best] && order[i] < order[best])) {
        best = i;
      }
    }
    const mcpp__entry *e = mcpp__ledger_earliest(&l);
    if (best < 0) {
      ASSERT(e == NULL);
    } else {
      char want[16];
      snprintf(want, sizeof want, "%d", best);
      ASSERT(e != NULL);
      ASSERT_STR_EQ(e->id, want);
    }
    e = mcpp__ledger_oldest_untimed(&l);
    if (first_untimed < 0) {
      ASSERT(e == NULL);
    } else {
      char want[16];
      snprintf(want, sizeof want, "%d", first_untimed);
      ASSERT(e != NULL);
      ASSERT_STR_EQ(e->id, want);
    }
  }
  mcpp__ledger_free(&l);
  ASSERT_EQ(a.live, 0);
}
