/* Reconnect's pure pieces with a fake clock: the backoff schedule and its
 * jitter, the shared retry budget, the captured handshake, and the engine
 * failing what was in flight when its server failed. */
#include <math.h>

#include "engine_fixture.h"

static mcpp_reconnect policy(uint32_t initial, uint32_t max, double mult,
                             double jitter) {
  mcpp_reconnect p;
  mcpp_reconnect_default(&p);
  p.enabled = 1;
  p.initial_ms = initial;
  p.max_delay_ms = max;
  p.multiplier = mult;
  p.jitter = jitter;
  return p;
}

/* A random value whose uniform draw is u (0 <= u < 1). */
static uint64_t draw(double u) { return (uint64_t)(u * 9007199254740992.0) << 11; }

TEST(reconnect_defaults_are_off_and_valid) {
  mcpp_reconnect p;
  mcpp_reconnect_default(&p);
  ASSERT_EQ(p.enabled, 0);
  ASSERT_UINT_EQ(p.initial_ms, 1000);
  ASSERT_UINT_EQ(p.max_delay_ms, 30000);
  ASSERT(p.multiplier == 2.0);
  ASSERT(p.jitter == 0.2);
  ASSERT_UINT_EQ(p.max_attempts, 10);
  ASSERT(mcpp_reconnect_problem(&p) == NULL);
  p.enabled = 1;
  ASSERT(mcpp_reconnect_problem(&p) == NULL);
  mcpp_settings s;
  mcpp_settings_default(&s);
  ASSERT_EQ(s.reconnect.enabled, 0);
  ASSERT(mcpp_settings_problem(&s) == NULL);
}

TEST(reconnect_problem_names_each_bad_field) {
  mcpp_reconnect p = policy(1000, 30000, 2.0, 0.2);
  p.initial_ms = 0;
  ASSERT_STR_EQ(mcpp_reconnect_problem(&p),
                "reconnect.initial_ms must be between 1 and 2147483647 ms");
  p = policy(1000, 999, 2.0, 0.2);
  ASSERT(strstr(mcpp_reconnect_problem(&p), "reconnect.max_delay_ms") != NULL);
  p = policy(1000, 30000, 0.5, 0.2);
  ASSERT(strstr(mcpp_reconnect_problem(&p), "reconnect.multiplier") != NULL);
  p = policy(1000, 30000, NAN, 0.2);
  ASSERT(strstr(mcpp_reconnect_problem(&p), "reconnect.multiplier") != NULL);
  p = policy(1000, 30000, 2.0, 1.5);
  ASSERT(strstr(mcpp_reconnect_problem(&p), "reconnect.jitter") != NULL);
  p = policy(1000, 30000, 2.0, -0.1);
  ASSERT(strstr(mcpp_reconnect_problem(&p), "reconnect.jitter") != NULL);
  p = policy(1000, 30000, 2.0, 0.2);
  p.max_attempts = 0;
  ASSERT(strstr(mcpp_reconnect_problem(&p), "reconnect.max_attempts") != NULL);
  p.max_attempts = MCPP_MAX_RECONNECT_ATTEMPTS + 1;
  ASSERT(strstr(mcpp_reconnect_problem(&p), "reconnect.max_attempts") != NULL);
  p.enabled = 2;
  ASSERT(strstr(mcpp_reconnect_problem(&p), "reconnect.enabled") != NULL);
  /* Off: the other fields are not looked at. */
  p = policy(0, 0, 0, 9);
  p.enabled = 0;
  ASSERT(mcpp_reconnect_problem(&p) == NULL);
  /* mcpp_settings_problem includes it. */
  mcpp_settings s;
  mcpp_settings_default(&s);
  s.reconnect = policy(1000, 30000, 2.0, 2.0);
  ASSERT(strstr(mcpp_settings_problem(&s), "reconnect.jitter") != NULL);
}

TEST(backoff_grows_by_the_multiplier_up_to_the_cap) {
  mcpp_reconnect p = policy(100, 1000, 2.0, 0.0);
  ASSERT_UINT_EQ(mcpp_reconnect_delay_us(&p, 1, 0), 100 * MS);
  ASSERT_UINT_EQ(mcpp_reconnect_delay_us(&p, 2, 0), 200 * MS);
  ASSERT_UINT_EQ(mcpp_reconnect_delay_us(&p, 3, 0), 400 * MS);
  ASSERT_UINT_EQ(mcpp_reconnect_delay_us(&p, 4, 0), 800 * MS);
  ASSERT_UINT_EQ(mcpp_reconnect_delay_us(&p, 5, 0), 1000 * MS);
  ASSERT_UINT_EQ(mcpp_reconnect_delay_us(&p, 1000000, 0), 1000 * MS);
  p = policy(250, 250, 1.0, 0.0); /* constant */
  ASSERT_UINT_EQ(mcpp_reconnect_delay_us(&p, 7, 0), 250 * MS);
}

TEST(backoff_jitter_spreads_within_its_bounds_and_the_cap) {
  mcpp_reconnect p = policy(1000, 30000, 2.0, 0.2);
  ASSERT_UINT_EQ(mcpp_reconnect_delay_us(&p, 1, draw(0.0)), 800 * MS);
  ASSERT_UINT_EQ(mcpp_reconnect_delay_us(&p, 1, draw(0.5)), 1000 * MS);
  uint64_t top = mcpp_reconnect_delay_us(&p, 1, UINT64_MAX);
  ASSERT(top <= 1200 * MS && top > 1199 * MS);
  /* Never above max_delay_ms, even jittered upwards. */
  ASSERT_UINT_EQ(mcpp_reconnect_delay_us(&p, 10, UINT64_MAX), 30000 * MS);
  ASSERT_UINT_EQ(mcpp_reconnect_delay_us(&p, 10, draw(0.0)), 24000 * MS);
  /* Different draws give different delays: no lockstep. */
  uint64_t seen[8];
  for (int i = 0; i < 8; i++) {
    seen[i] = mcpp_reconnect_delay_us(&p, 2, draw(i / 8.0));
    ASSERT(seen[i] >= 1600 * MS && seen[i] <= 2400 * MS);
    if (i) ASSERT(seen[i] > seen[i - 1]);
  }
}

TEST(budget_allows_a_burst_then_its_rate) {
  mcpp_retry_budget b;
  ASSERT_EQ(mcpp_retry_budget_init(&b, 3, 2.0), 0);
  /* Ten attempts wanted at the same moment. */
  uint64_t at[10];
  for (int i = 0; i < 10; i++) at[i] = mcpp_retry_budget_take(&b, T0);
  for (int i = 0; i < 3; i++) ASSERT_UINT_EQ(at[i], T0);
  for (int i = 3; i < 10; i++)
    ASSERT_UINT_EQ(at[i], T0 + (uint64_t)(i - 2) * 500 * MS);
  /* After a long quiet spell the burst is back, no more. */
  uint64_t later = T0 + 3600 * SEC;
  for (int i = 0; i < 3; i++) ASSERT_UINT_EQ(mcpp_retry_budget_take(&b, later), later);
  ASSERT_UINT_EQ(mcpp_retry_budget_take(&b, later), later + 500 * MS);
}

TEST(budget_bounds_any_window_whatever_the_order) {
  mcpp_retry_budget b;
  ASSERT_EQ(mcpp_retry_budget_init(&b, 4, 10.0), 0);
  uint64_t at[200];
  /* Attempts wanted at scattered, unordered times. */
  uint64_t x = 12345;
  for (int i = 0; i < 200; i++) {
    x = x * 6364136223846793005ull + 1442695040888963407ull;
    uint64_t want = T0 + (x >> 33) % (2 * SEC);
    at[i] = mcpp_retry_budget_take(&b, want);
    ASSERT(at[i] >= want);
  }
  /* In every 1 s window: at most burst + 10. */
  for (int i = 0; i < 200; i++) {
    int in = 0;
    for (int j = 0; j < 200; j++)
      if (at[j] >= at[i] && at[j] < at[i] + SEC) in++;
    ASSERT_LE(in, 4 + 10);
  }
}

TEST(budget_refuses_bad_figures) {
  mcpp_retry_budget b;
  ASSERT_EQ(mcpp_retry_budget_init(&b, 0, 1.0), MCPP_ERR_INVALID_ARGUMENT);
  ASSERT_EQ(mcpp_retry_budget_init(&b, 1, 0.0), MCPP_ERR_INVALID_ARGUMENT);
  ASSERT_EQ(mcpp_retry_budget_init(&b, 1, NAN), MCPP_ERR_INVALID_ARGUMENT);
  ASSERT_EQ(mcpp_retry_budget_init(NULL, 1, 1.0), MCPP_ERR_INVALID_ARGUMENT);
  ASSERT_EQ(mcpp_retry_budget_init(&b, MCPP_MAX_RETRY_BUDGET_BURST + 1, 1.0),
            MCPP_ERR_INVALID_ARGUMENT);
}

static const char INIT[] =
    "{\"jsonrpc\":\"2.0\",\"id\":0,\"method\":\"initialize\",\"params\":{"
    "\"protocolVersion\":\"2025-06-18\",\"capabilities\":{},"
    "\"clientInfo\":{\"name\":\"app\",\"version\":\"1\"},\"n\":123456789012345678901}}";

TEST(handshake_captures_the_first_initialize_and_initialized) {
  mcpp_handshake *h;
  ASSERT_EQ(mcpp_handshake_new(&h, NULL), 0);
  ASSERT_EQ(mcpp_handshake_captured(h), 0);
  size_t n = 0;
  ASSERT(mcpp_handshake_replay(h, 1, &n) == NULL);
  static const char early[] = "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}";
  /* An initialized before any initialize is not the handshake's. */
  ASSERT_EQ(mcpp_handshake_observe(h, early, sizeof early - 1), 0);
  ASSERT(mcpp_handshake_initialized(h, &n) == NULL);
  ASSERT_EQ(mcpp_handshake_observe(h, INIT, sizeof INIT - 1), 0);
  ASSERT_EQ(mcpp_handshake_captured(h), 1);
  static const char other[] = "{\"jsonrpc\":\"2.0\",\"id\":5,\"method\":\"initialize\",\"params\":{}}";
  ASSERT_EQ(mcpp_handshake_observe(h, other, sizeof other - 1), 0);
  static const char call[] = "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\"}";
  ASSERT_EQ(mcpp_handshake_observe(h, call, sizeof call - 1), 0);
  static const char inited[] = "{\"method\":\"notifications/initialized\",\"jsonrpc\":\"2.0\"}";
  ASSERT_EQ(mcpp_handshake_observe(h, inited, sizeof inited - 1), 0);
  const char *i = mcpp_handshake_initialized(h, &n);
  ASSERT(i != NULL);
  ASSERT_EQ(n, sizeof inited - 1);
  ASSERT(memcmp(i, inited, n) == 0);

  /* The replay is the first initialize, byte for byte, with our id. */
  const char *r = mcpp_handshake_replay(h, 3, &n);
  ASSERT(r != NULL);
  char want[sizeof INIT + 32];
  const char *id = strstr(INIT, "\"id\":0");
  snprintf(want, sizeof want, "%.*s\"id\":\"mcpp-reconnect-3\"%s",
           (int)(id - INIT), INIT, id + 6);
  ASSERT_EQ(n, strlen(want));
  ASSERT(memcmp(r, want, n) == 0);
  mcpp_handshake_free(h);
}

TEST(handshake_recognises_only_the_replays_answer) {
  mcpp_handshake *h;
  ASSERT_EQ(mcpp_handshake_new(&h, NULL), 0);
  ASSERT_EQ(mcpp_handshake_observe(h, INIT, sizeof INIT - 1), 0);
  static const char ok[] = "{\"jsonrpc\":\"2.0\",\"id\":\"mcpp-reconnect-2\",\"result\":{\"protocolVersion\":\"2025-06-18\"}}";
  /* Before any replay nothing is its answer. */
  ASSERT_EQ(mcpp_handshake_answer(h, ok, sizeof ok - 1), MCPP_REPLAY_OTHER);
  size_t n;
  ASSERT(mcpp_handshake_replay(h, 2, &n) != NULL);
  ASSERT_EQ(mcpp_handshake_answer(h, ok, sizeof ok - 1), MCPP_REPLAY_RESULT);
  static const char err[] = "{\"jsonrpc\":\"2.0\",\"id\":\"mcpp-reconnect-2\",\"error\":{\"code\":-32600,\"message\":\"no\"}}";
  ASSERT_EQ(mcpp_handshake_answer(h, err, sizeof err - 1), MCPP_REPLAY_ERROR);
  static const char app[] = "{\"jsonrpc\":\"2.0\",\"id\":0,\"result\":{}}";
  ASSERT_EQ(mcpp_handshake_answer(h, app, sizeof app - 1), MCPP_REPLAY_OTHER);
  static const char old[] = "{\"jsonrpc\":\"2.0\",\"id\":\"mcpp-reconnect-1\",\"result\":{}}";
  ASSERT_EQ(mcpp_handshake_answer(h, old, sizeof old - 1), MCPP_REPLAY_OTHER);
  static const char req[] = "{\"jsonrpc\":\"2.0\",\"id\":\"mcpp-reconnect-2\",\"method\":\"ping\"}";
  ASSERT_EQ(mcpp_handshake_answer(h, req, sizeof req - 1), MCPP_REPLAY_OTHER);
  ASSERT_EQ(mcpp_handshake_answer(h, "garbage", 7), MCPP_REPLAY_OTHER);
  mcpp_handshake_free(h);
}

TEST(handshake_drops_an_initialize_the_server_refused) {
  mcpp_handshake *h;
  ASSERT_EQ(mcpp_handshake_new(&h, NULL), 0);
  ASSERT_EQ(mcpp_handshake_observe(h, INIT, sizeof INIT - 1), 0);
  /* Answers to other requests, and the server's own requests, leave it. */
  static const char other[] = "{\"jsonrpc\":\"2.0\",\"id\":\"0\",\"error\":{\"code\":-32601,\"message\":\"x\"}}";
  ASSERT_EQ(mcpp_handshake_observe_answer(h, other, sizeof other - 1), 0);
  static const char req[] = "{\"jsonrpc\":\"2.0\",\"id\":0,\"method\":\"ping\"}";
  ASSERT_EQ(mcpp_handshake_observe_answer(h, req, sizeof req - 1), 0);
  ASSERT_EQ(mcpp_handshake_captured(h), 1);
  /* A 2026-07-28-only server refuses it: nothing to replay. */
  static const char refused[] = "{\"jsonrpc\":\"2.0\",\"id\":0,\"error\":{\"code\":-32601,\"message\":\"Method not found\"}}";
  ASSERT_EQ(mcpp_handshake_observe_answer(h, refused, sizeof refused - 1), 0);
  ASSERT_EQ(mcpp_handshake_captured(h), 0);
  size_t n;
  ASSERT(mcpp_handshake_replay(h, 1, &n) == NULL);
  /* The client's next initialize is the handshake, once accepted kept. */
  static const char again[] = "{\"jsonrpc\":\"2.0\",\"id\":7,\"method\":\"initialize\",\"params\":{}}";
  ASSERT_EQ(mcpp_handshake_observe(h, again, sizeof again - 1), 0);
  static const char ok[] = "{\"jsonrpc\":\"2.0\",\"id\":7,\"result\":{}}";
  ASSERT_EQ(mcpp_handshake_observe_answer(h, ok, sizeof ok - 1), 0);
  static const char late[] = "{\"jsonrpc\":\"2.0\",\"id\":7,\"error\":{\"code\":1,\"message\":\"x\"}}";
  ASSERT_EQ(mcpp_handshake_observe_answer(h, late, sizeof late - 1), 0);
  ASSERT_EQ(mcpp_handshake_captured(h), 1);
  const char *r = mcpp_handshake_replay(h, 2, &n);
  ASSERT(r != NULL && strstr(r, "\"mcpp-reconnect-2\"") != NULL);
  ASSERT_EQ(mcpp_handshake_observe_answer(NULL, ok, 1), MCPP_ERR_INVALID_ARGUMENT);
  ASSERT_EQ(mcpp_handshake_observe_answer(h, NULL, 1), MCPP_ERR_INVALID_ARGUMENT);
  mcpp_handshake_free(h);
}

TEST(handshake_out_of_memory_loses_nothing_else) {
  for (long k = 1; k <= 3; k++) {
    fx_alloc fa = {{fx_malloc, fx_realloc, fx_free_block, NULL}, 0, 0, k, 0};
    fa.a.user_data = &fa;
    mcpp_handshake *h = NULL;
    int rc = mcpp_handshake_new(&h, &fa.a);
    if (rc == 0) {
      rc = mcpp_handshake_observe(h, INIT, sizeof INIT - 1);
      size_t n;
      const char *r = mcpp_handshake_replay(h, 1, &n);
      if (rc == 0 && r == NULL) ASSERT(fa.failed);
      mcpp_handshake_free(h);
    } else {
      ASSERT_EQ(rc, MCPP_ERR_NOMEM);
    }
    ASSERT_EQ(fa.live, 0);
  }
}

TEST(engine_fails_every_request_in_flight_as_in_doubt_or_cancelled) {
  fx *f = fx_new();
  fx_start(f, T0);
  fx_out(f, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\",\"params\":{\"name\":\"x\"}}", T0);
  fx_out(f, "{\"jsonrpc\":\"2.0\",\"id\":\"b\",\"method\":\"tools/list\"}", T0 + 1);
  int sent_before = f->n_sent;
  ASSERT_UINT_EQ(mcpp_engine_fail_in_flight(f->e, T0 + 2), 2);
  /* Nothing goes to the (failed) server: no cancellation. */
  ASSERT_EQ(f->n_sent, sent_before);
  ASSERT_EQ(f->n_delivered, 2);
  ASSERT(strstr(f->delivered[0].text, "\"id\":1,\"error\":{\"code\":-32003") != NULL);
  ASSERT(strstr(f->delivered[0].text, "\"data\":{\"mcpping\":\"in_doubt\"}") != NULL);
  ASSERT(strstr(f->delivered[1].text, "\"id\":\"b\",\"error\":{\"code\":-32003") != NULL);
  ASSERT(strstr(f->delivered[1].text, "\"data\":{\"mcpping\":\"cancelled\"}") != NULL);
  ASSERT_EQ(f->delivered[0].kind, MCPP_ANSWER_IN_DOUBT);
  ASSERT_EQ(f->delivered[1].kind, MCPP_ANSWER_CANCELLED);
  ASSERT_STR_EQ(mcpp_answer_kind_name(MCPP_ANSWER_IN_DOUBT), "in_doubt");
  ASSERT(mcpp_answer_kind_name((mcpp_answer_kind)99) == NULL);
  /* Both kinds a failed server leaves are in doubt; a timeout is not. */
  ASSERT(mcpp_answer_kind_is_in_doubt(f->delivered[0].kind));
  ASSERT(mcpp_answer_kind_is_in_doubt(f->delivered[1].kind));
  ASSERT(!mcpp_answer_kind_is_in_doubt(MCPP_ANSWER_TIMEOUT));
  ASSERT(!mcpp_answer_kind_is_in_doubt(MCPP_ANSWER_ABANDONED));
  ASSERT(!mcpp_answer_kind_is_in_doubt(MCPP_ANSWER_PEER));
  mcpp_engine_info info;
  mcpp_engine_get_info(f->e, &info);
  ASSERT_UINT_EQ(info.in_flight, 0);
  ASSERT_UINT_EQ(mcpp_engine_fail_in_flight(f->e, T0 + 3), 0);
  fx_done(f);
}

TEST(engine_fails_one_request_whose_answer_cannot_come) {
  fx *f = fx_new();
  fx_start(f, T0);
  fx_out(f, "{\"jsonrpc\":\"2.0\",\"id\":\"a\",\"method\":\"tools/call\"}", T0);
  fx_out(f, "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"tools/list\"}", T0 + 1);
  int sent_before = f->n_sent;
  ASSERT_EQ(mcpp_engine_fail_request(f->e, "\"a\"", 3, T0 + 2), 0);
  ASSERT_EQ(f->n_sent, sent_before); /* nothing to the server */
  ASSERT_EQ(f->n_delivered, 1);
  ASSERT(strstr(f->delivered[0].text, "\"id\":\"a\",\"error\":{\"code\":-32003") != NULL);
  ASSERT_EQ(f->delivered[0].kind, MCPP_ANSWER_IN_DOUBT);
  mcpp_engine_info info;
  mcpp_engine_get_info(f->e, &info);
  ASSERT_UINT_EQ(info.in_flight, 1); /* the other one still waits */
  /* A side-effect-free request did not take effect: cancelled. */
  ASSERT_EQ(mcpp_engine_fail_request(f->e, "2", 1, T0 + 3), 0);
  ASSERT_EQ(f->delivered[1].kind, MCPP_ANSWER_CANCELLED);
  ASSERT_EQ(mcpp_engine_fail_request(f->e, "2", 1, T0 + 4), MCPP_ERR_NOT_FOUND);
  ASSERT_EQ(mcpp_engine_fail_request(f->e, NULL, 0, T0 + 4), MCPP_ERR_INVALID_ARGUMENT);
  ASSERT_EQ(mcpp_engine_fail_request(NULL, "2", 1, T0 + 4), MCPP_ERR_INVALID_ARGUMENT);
  ASSERT_EQ(f->n_delivered, 2);
  fx_done(f);
}

TEST(engine_close_reconnecting_reports_instead_of_closed) {
  fx *f = fx_new();
  fx_start(f, T0);
  fx_out(f, "{\"jsonrpc\":\"2.0\",\"id\":9,\"method\":\"tools/call\"}", T0);
  uint64_t seq;
  ASSERT_EQ(mcpp_engine_ping(f->e, 1000, T0, &seq), 0);
  mcpp_engine_close_reconnecting(f->e, "server exited with status 1", 2, 1500, T0 + 5);
  ASSERT_EQ(fx_count_events(f, MCPP_EV_CLOSED), 0);
  const fx_event *ev = fx_last_event(f, MCPP_EV_RECONNECTING);
  ASSERT(ev != NULL);
  ASSERT_UINT_EQ(ev->ev.reconnect_attempt, 2);
  ASSERT_UINT_EQ(ev->ev.delay_ms, 1500);
  ASSERT_UINT_EQ(ev->ev.in_flight, 1);
  ASSERT_EQ(ev->ev.disposition, MCPP_DISPOSITION_IN_DOUBT);
  ASSERT_STR_EQ(ev->message, "server exited with status 1");
  /* The manual ping ends as a close does. */
  const fx_event *t = fx_last_event(f, MCPP_EV_TIMEOUT);
  ASSERT(t != NULL);
  ASSERT_EQ(t->ev.error, MCPP_ERR_CLOSED);
  /* One "reconnect" record carrying the attempt and what was in flight. */
  const char *rec = f->records[f->n_records - 1];
  ASSERT(strstr(rec, "\"event\":\"reconnect\"") != NULL);
  ASSERT(strstr(rec, "\"reconnect_attempt\":2") != NULL);
  ASSERT(strstr(rec, "\"in_flight\":{\"count\":1,\"disposition\":\"in_doubt\"}") != NULL);
  ASSERT(strstr(rec, "exited") == NULL); /* no reason text in records */
  mcpp_engine_info info;
  mcpp_engine_get_info(f->e, &info);
  ASSERT_EQ(info.state, MCPP_STATE_CLOSED);
  ASSERT_EQ(mcpp_engine_ping(f->e, 1000, T0 + 6, &seq), MCPP_ERR_CLOSED);
  /* Closing afterwards adds nothing. */
  mcpp_engine_close(f->e, 0, NULL, T0 + 7);
  ASSERT_EQ(fx_count_events(f, MCPP_EV_CLOSED), 0);
  fx_done(f);
}
