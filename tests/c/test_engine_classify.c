/* Classifying inbound frames: pings answered with the id echoed byte for
 * byte, our pongs consumed, everything else forwarded untouched. */
#include "engine_fixture.h"

static void expect_echo(const char *id) {
  fx *f = fx_new();
  fx_start(f, T0);
  char req[256], want[256];
  snprintf(req, sizeof req, "{\"jsonrpc\":\"2.0\",\"id\":%s,\"method\":\"ping\"}", id);
  snprintf(want, sizeof want, "{\"jsonrpc\":\"2.0\",\"id\":%s,\"result\":{}}", id);
  ASSERT_EQ(fx_recv(f, req, T0 + MS), MCPP_RECV_CONSUMED);
  ASSERT_EQ(f->n_sent, 1);
  ASSERT_EQ(f->sent[0].kind, MCPP_FRAME_PONG);
  ASSERT_STR_EQ(f->sent[0].text, want);
  const fx_event *ev = fx_last_event(f, MCPP_EV_PING_ANSWERED);
  ASSERT(ev != NULL);
  ASSERT_STR_EQ(ev->id, id);
  ASSERT(strstr(fx_last_record(f), "\"event\":\"ping_answered\"") != NULL);
  ASSERT(strstr(fx_last_record(f), "\"direction\":\"inbound\"") != NULL);
  fx_done(f);
}

TEST(ping_id_string_with_escapes_echoed_byte_for_byte) {
  expect_echo("\"a\\\"b\\\\c\\u00e9\\n/\\/\"");
}

TEST(ping_id_big_integer_echoed_byte_for_byte) {
  expect_echo("12345678901234567890123");
}

TEST(ping_id_string_one_and_number_one_stay_distinct) {
  expect_echo("\"1\"");
  expect_echo("1");
  expect_echo("-0.5e3");
}

TEST(ping_with_params_and_whitespace_answered) {
  fx *f = fx_new();
  fx_start(f, T0);
  ASSERT_EQ(fx_recv(f, " { \"method\" : \"ping\" , \"params\":{\"_meta\":{}},"
                       "\"jsonrpc\":\"2.0\", \"id\" : 7 } ", T0),
            MCPP_RECV_CONSUMED);
  ASSERT_STR_EQ(f->sent[0].text, "{\"jsonrpc\":\"2.0\",\"id\":7,\"result\":{}}");
  fx_done(f);
}

TEST(ping_before_handshake_answered_in_both_roles) {
  for (int role = 0; role < 2; role++) {
    fx *f = fx_new();
    f->s.role = role ? MCPP_ROLE_SERVER : MCPP_ROLE_CLIENT;
    fx_start(f, T0);
    ASSERT_EQ(fx_recv(f, "{\"jsonrpc\":\"2.0\",\"id\":\"p\",\"method\":\"ping\"}", T0),
              MCPP_RECV_CONSUMED);
    mcpp_engine_info info;
    mcpp_engine_get_info(f->e, &info);
    ASSERT_EQ(info.initialized, 0);
    ASSERT_EQ(info.pings_answered, 1);
    fx_done(f);
  }
}

TEST(ping_notification_forwarded) {
  fx *f = fx_new();
  fx_start(f, T0);
  ASSERT_EQ(fx_recv(f, "{\"jsonrpc\":\"2.0\",\"method\":\"ping\"}", T0),
            MCPP_RECV_FORWARD);
  ASSERT_EQ(f->n_sent, 0);
  fx_done(f);
}

TEST(ping_with_null_or_object_id_forwarded) {
  fx *f = fx_new();
  fx_start(f, T0);
  ASSERT_EQ(fx_recv(f, "{\"jsonrpc\":\"2.0\",\"id\":null,\"method\":\"ping\"}", T0),
            MCPP_RECV_FORWARD);
  ASSERT_EQ(fx_recv(f, "{\"jsonrpc\":\"2.0\",\"id\":{},\"method\":\"ping\"}", T0),
            MCPP_RECV_FORWARD);
  ASSERT_EQ(fx_recv(f, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"Ping\"}", T0),
            MCPP_RECV_FORWARD);
  ASSERT_EQ(f->n_sent, 0);
  fx_done(f);
}

TEST(duplicate_keys_forwarded_not_consumed) {
  fx *f = fx_new();
  fx_start(f, T0);
  ASSERT_EQ(fx_recv(f, "{\"id\":1,\"method\":\"ping\",\"id\":2}", T0),
            MCPP_RECV_FORWARD);
  ASSERT_EQ(f->n_sent, 0);
  fx_done(f);
}

TEST(our_pong_consumed_with_rtt) {
  fx *f = fx_new();
  fx_start(f, T0);
  uint64_t seq = 0;
  ASSERT_EQ(mcpp_engine_ping(f->e, 0, T0, &seq), 0);
  ASSERT_EQ(seq, 1);
  ASSERT_EQ(fx_answer_last_ping(f, "\"result\":{}", T0 + 1234), MCPP_RECV_CONSUMED);
  const fx_event *ev = fx_last_event(f, MCPP_EV_PONG);
  ASSERT(ev != NULL);
  ASSERT_UINT_EQ(ev->ev.rtt_us, 1234);
  ASSERT_UINT_EQ(ev->ev.ping_seq, 1);
  ASSERT_EQ(ev->ev.manual, 1);
  ASSERT(strstr(fx_last_record(f), "\"event\":\"ping_ok\"") != NULL);
  ASSERT(strstr(fx_last_record(f), "\"latency_ms\":1.234") != NULL);
  fx_done(f);
}

size_t mcpp__format_id(const mcpp_engine *e, uint64_t seq, char buf[64]);

TEST(our_ids_are_formatted_as_printf_would) {
  fx *f = fx_new();
  fx_start(f, T0);
  const uint64_t seqs[] = {1, 9, 10, 99, 100, 1234567890123ULL, UINT64_MAX};
  for (size_t i = 0; i < sizeof seqs / sizeof seqs[0]; i++) {
    char got[64], want[64];
    size_t n = mcpp__format_id(f->e, seqs[i], got);
    snprintf(want, sizeof want, "\"mcpp-0123456789abcdef-%llu\"",
             (unsigned long long)seqs[i]);
    ASSERT_STR_EQ(got, want);
    ASSERT_EQ(n, strlen(want));
  }
  fx_done(f);
}

TEST(foreign_responses_with_similar_ids_forwarded) {
  fx *f = fx_new();
  fx_start(f, T0);
  ASSERT_EQ(mcpp_engine_ping(f->e, 0, T0, NULL), 0);
  const char *ids[] = {
      "\"mcpp-0123456789abcdee-1\"", /* another nonce */
      "\"mcpp-0123456789abcdef-2\"", /* a seq we never issued */
      "\"mcpp-0123456789abcdef-0\"", "\"mcpp-0123456789abcdef-\"",
      "\"mcpp-0123456789abcdef-1x\"", "\"mcpp-0123456789ABCDEF-1\"",
      "\"mcpp-1\"", "\"mcpp-0123456789abcdef-99999999999999999999999\"",
      "1", "\"1\""};
  for (size_t i = 0; i < sizeof ids / sizeof ids[0]; i++) {
    char frame[256];
    snprintf(frame, sizeof frame, "{\"jsonrpc\":\"2.0\",\"id\":%s,\"result\":{}}", ids[i]);
    ASSERT_EQ(fx_recv(f, frame, T0 + MS), MCPP_RECV_FORWARD);
  }
  ASSERT_EQ(fx_count_events(f, MCPP_EV_PONG), 0);
  ASSERT_EQ(fx_answer_last_ping(f, "\"result\":{}", T0 + 2 * MS), MCPP_RECV_CONSUMED);
  ASSERT_EQ(fx_count_events(f, MCPP_EV_PONG), 1);
  fx_done(f);
}

TEST(invalid_pong_result_missing_or_not_object) {
  const char *tails[] = {"\"result\":[]", "\"result\":null", "\"result\":\"ok\"",
                         "\"result\":{},\"error\":{\"code\":1}"};
  for (size_t i = 0; i < 4; i++) {
    fx *f = fx_new();
    fx_start(f, T0);
    ASSERT_EQ(mcpp_engine_ping(f->e, 0, T0, NULL), 0);
    ASSERT_EQ(fx_answer_last_ping(f, tails[i], T0 + MS), MCPP_RECV_CONSUMED);
    const fx_event *ev = fx_last_event(f, MCPP_EV_PING_ERROR);
    ASSERT(ev != NULL);
    ASSERT_EQ(ev->ev.invalid, 1);
    ASSERT(strstr(fx_last_record(f), "\"event\":\"ping_invalid\"") != NULL);
    fx_done(f);
  }
}

/* Answers our last ping with `tail` and checks the outcome and how many
 * cJSON parses it took. */
static void expect_answer(const char *tail, mcpp_event_type type, int invalid,
                          uint64_t parses) {
  fx *f = fx_new();
  fx_start(f, T0);
  ASSERT_EQ(mcpp_engine_ping(f->e, 0, T0, NULL), 0);
  ASSERT_EQ(fx_answer_last_ping(f, tail, T0 + MS), MCPP_RECV_CONSUMED);
  const fx_event *ev = fx_last_event(f, type);
  ASSERT(ev != NULL);
  ASSERT_EQ(ev->ev.invalid, invalid);
  ASSERT_UINT_EQ(mcpp__engine_json_parses(f->e), parses);
  fx_done(f);
}

TEST(pong_decided_from_the_scanner_spans_without_cjson) {
  const char *ok[] = {"\"result\":{}", "\"result\": { \n\t }",
                      "\"result\":{\"a\":{\"b\":[{}]},\"c\":\"d\"}",
                      /* a duplicate below the top level is the result's own */
                      "\"result\":{\"x\":1,\"x\":2}",
                      "\"result\":{\"s\":\"a\\\"b\\\\\"}"};
  for (size_t i = 0; i < sizeof ok / sizeof ok[0]; i++)
    expect_answer(ok[i], MCPP_EV_PONG, 0, 0);
  const char *invalid[] = {"\"result\":[]", "\"result\":null", "\"result\":1",
                           "\"result\":\"{}\"", "\"result\":[{}]",
                           "\"result\":{},\"error\":{\"code\":1}",
                           "\"error\":{\"code\":1},\"result\":{}"};
  for (size_t i = 0; i < sizeof invalid / sizeof invalid[0]; i++)
    expect_answer(invalid[i], MCPP_EV_PING_ERROR, 1, 0);
  /* A lone error still has its code and message read by cJSON. */
  expect_answer("\"error\":{\"code\":-32603,\"message\":\"x\"}", MCPP_EV_PING_ERROR,
                0, 1);
}

TEST(pong_the_strict_check_cannot_vouch_for_goes_to_cjson) {
  /* Laxer than strict JSON but read by cJSON (a leading zero, a \u escape,
   * invalid UTF-8): consumed after a full parse, as before. */
  const char *lax[] = {"\"result\":{\"n\":01}", "\"result\":{\"s\":\"\\u00e9\"}",
                       "\"result\":{\"s\":\"\xff\"}"};
  for (size_t i = 0; i < sizeof lax / sizeof lax[0]; i++)
    expect_answer(lax[i], MCPP_EV_PONG, 0, 1);
  /* Not JSON at all: forwarded, no outcome. */
  const char *bad[] = {"\"result\":{},\"x\":tru", "\"result\":{\"a\" 1}",
                       "\"result\":{\"s\":\"\\udc00\"}"};
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
    fx *f = fx_new();
    fx_start(f, T0);
    ASSERT_EQ(mcpp_engine_ping(f->e, 0, T0, NULL), 0);
    ASSERT_EQ(fx_answer_last_ping(f, bad[i], T0 + MS), MCPP_RECV_FORWARD);
    ASSERT_EQ(fx_count_events(f, MCPP_EV_PONG) + fx_count_events(f, MCPP_EV_PING_ERROR), 0);
    fx_done(f);
  }
}

TEST(pong_with_a_duplicate_top_level_key_is_not_ours) {
  const char *dups[] = {"\"result\":{},\"result\":{}", "\"result\":{},\"id\":1"};
  for (size_t i = 0; i < 2; i++) {
    fx *f = fx_new();
    fx_start(f, T0);
    ASSERT_EQ(mcpp_engine_ping(f->e, 0, T0, NULL), 0);
    ASSERT_EQ(fx_answer_last_ping(f, dups[i], T0 + MS), MCPP_RECV_FORWARD);
    ASSERT_EQ(fx_count_events(f, MCPP_EV_PONG), 0);
    ASSERT_UINT_EQ(mcpp__engine_json_parses(f->e), 0);
    fx_done(f);
  }
}

TEST(unsupported_on_method_not_found_and_invalid_params) {
  int64_t codes[] = {-32601, -32602};
  for (int i = 0; i < 2; i++) {
    fx *f = fx_new();
    fx_start(f, T0);
    ASSERT_EQ(mcpp_engine_ping(f->e, 0, T0, NULL), 0);
    char tail[128];
    snprintf(tail, sizeof tail,
             "\"error\":{\"code\":%lld,\"message\":\"Method not found\"}",
             (long long)codes[i]);
    ASSERT_EQ(fx_answer_last_ping(f, tail, T0 + MS), MCPP_RECV_CONSUMED);
    const fx_event *ev = fx_last_event(f, MCPP_EV_UNSUPPORTED);
    ASSERT(ev != NULL);
    ASSERT_EQ(ev->ev.rpc_code, codes[i]);
    ASSERT_EQ(ev->ev.state, MCPP_STATE_ALIVE);
    ASSERT(strstr(fx_last_record(f), "\"event\":\"ping_unsupported\"") != NULL);
    ASSERT_EQ(mcpp_engine_ping(f->e, 0, T0 + 2 * MS, NULL), MCPP_ERR_UNSUPPORTED);
    mcpp_engine_info info;
    mcpp_engine_get_info(f->e, &info);
    ASSERT_EQ(info.unsupported, 1);
    fx_done(f);
  }
}

TEST(other_error_is_ping_error_and_counts_as_life) {
  fx *f = fx_new();
  fx_start(f, T0);
  ASSERT_EQ(mcpp_engine_ping(f->e, 0, T0, NULL), 0);
  ASSERT_EQ(fx_answer_last_ping(
                f, "\"error\":{\"code\":-32603,\"message\":\"busy \\\"now\\\"\"}",
                T0 + MS),
            MCPP_RECV_CONSUMED);
  const fx_event *ev = fx_last_event(f, MCPP_EV_PING_ERROR);
  ASSERT(ev != NULL);
  ASSERT_EQ(ev->ev.rpc_code, -32603);
  ASSERT_EQ(ev->ev.invalid, 0);
  ASSERT_STR_EQ(ev->message, "busy \"now\"");
  ASSERT_EQ(ev->ev.state, MCPP_STATE_ALIVE);
  ASSERT_EQ(ev->ev.failure_count, 0);
  ASSERT(strstr(fx_last_record(f), "\"event\":\"ping_error\"") != NULL);
  ASSERT_EQ(mcpp_engine_ping(f->e, 0, T0 + 2 * MS, NULL), 0);
  fx_done(f);
}

TEST(garbage_and_truncated_json_forwarded_and_count_as_traffic) {
  const char *frames[] = {"", "not json", "{", "{\"id\":1,\"method\":\"ping\"",
                          "[1,2]", "{\"id\":1,\"method\":\"ping\"}x",
                          "{\"id\":1 \"method\":\"ping\"}",
                          "{\"id\":\"unterminated,\"method\":\"ping\"}",
                          "{\"id\":1,\"method\":\"ping\",\"params\":{]}",
                          "\xff\xfe", "{\"id\":tru,\"method\":\"ping\"}"};
  fx *f = fx_new();
  fx_start(f, T0);
  for (size_t i = 0; i < sizeof frames / sizeof frames[0]; i++) {
    ASSERT_EQ(fx_recv(f, frames[i], T0 + i * MS), MCPP_RECV_FORWARD);
    mcpp_engine_info info;
    mcpp_engine_get_info(f->e, &info);
    ASSERT_UINT_EQ(info.last_rx, T0 + i * MS);
  }
  ASSERT_EQ(f->n_sent, 0);
  fx_done(f);
}

static char *big_frame(const char *head, size_t pad, const char *tail,
                       size_t *len) {
  size_t h = strlen(head), t = strlen(tail);
  char *p = malloc(h + pad + t);
  memcpy(p, head, h);
  memset(p + h, 'x', pad);
  memcpy(p + h + pad, tail, t);
  *len = h + pad + t;
  return p; /* not NUL-terminated, on purpose */
}

TEST(large_frame_forwarded_without_cjson) {
  fx *f = fx_new();
  fx_start(f, T0);
  size_t len;
  /* A 1 MiB response whose id comes after the payload. */
  char *frame = big_frame("{\"jsonrpc\":\"2.0\",\"result\":{\"content\":\"",
                          1 << 20, "\\\"\"},\"id\":42}", &len);
  ASSERT_EQ(fx_out(f, "{\"jsonrpc\":\"2.0\",\"id\":42,\"method\":\"tools/call\"}", T0), 0);
  ASSERT_EQ(mcpp_engine_recv(f->e, frame, len, T0 + MS), MCPP_RECV_FORWARD);
  free(frame);
  ASSERT_EQ(mcpp__engine_json_parses(f->e), 0);
  mcpp_engine_info info;
  mcpp_engine_get_info(f->e, &info);
  ASSERT_EQ(info.in_flight, 0); /* the id was found past the payload */
  /* A large ping is left to the application, still unparsed. */
  frame = big_frame("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\",\"params\":\"",
                    100000, "\"}", &len);
  ASSERT_EQ(mcpp_engine_recv(f->e, frame, len, T0 + 2 * MS), MCPP_RECV_FORWARD);
  free(frame);
  ASSERT_EQ(mcpp__engine_json_parses(f->e), 0);
  fx_done(f);
}

TEST(large_pong_of_ours_consumed_without_full_parse) {
  fx *f = fx_new();
  fx_start(f, T0);
  ASSERT_EQ(mcpp_engine_ping(f->e, 0, T0, NULL), 0);
  char id[128], head[256];
  fx_ping_id(fx_last_sent(f, MCPP_FRAME_PING), id, sizeof id);
  snprintf(head, sizeof head, "{\"jsonrpc\":\"2.0\",\"id\":%s,\"result\":{\"x\":\"", id);
  size_t len;
  char *frame = big_frame(head, 200000, "\"}}", &len);
  ASSERT_EQ(mcpp_engine_recv(f->e, frame, len, T0 + MS), MCPP_RECV_CONSUMED);
  free(frame);
  ASSERT_EQ(fx_count_events(f, MCPP_EV_PONG), 1);
  ASSERT_EQ(mcpp__engine_json_parses(f->e), 0);
  fx_done(f);
}

TEST(small_ping_answered_without_a_parse_unless_it_holds_a_u_escape) {
  fx *f = fx_new();
  fx_start(f, T0);
  ASSERT_EQ(fx_recv(f, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"}", T0), MCPP_RECV_CONSUMED);
  ASSERT_EQ(mcpp__engine_json_parses(f->e), 0);
  /* cJSON refuses an unpaired surrogate escape: such text is parsed. */
  ASSERT_EQ(fx_recv(f, "{\"jsonrpc\":\"2.0\",\"id\":\"\\u00e9\",\"method\":\"ping\"}", T0),
            MCPP_RECV_CONSUMED);
  ASSERT_EQ(mcpp__engine_json_parses(f->e), 1);
  ASSERT_EQ(fx_recv(f, "{\"jsonrpc\":\"2.0\",\"id\":\"\\udc00\",\"method\":\"ping\"}", T0),
            MCPP_RECV_FORWARD);
  ASSERT_EQ(mcpp__engine_json_parses(f->e), 2);
  ASSERT_EQ(f->n_sent, 2);
  ASSERT_EQ(fx_recv(f, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/list\"}", T0), MCPP_RECV_FORWARD);
  ASSERT_EQ(fx_recv(f, "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/progress\",\"params\":{}}", T0), MCPP_RECV_FORWARD);
  ASSERT_EQ(mcpp__engine_json_parses(f->e), 2);
  fx_done(f);
}

TEST(send_error_returned_from_recv) {
  fx *f = fx_new();
  fx_start(f, T0);
  f->send_rc = MCPP_ERR_IO;
  ASSERT_EQ(fx_recv(f, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"}", T0), MCPP_ERR_IO);
  ASSERT_EQ(fx_count_events(f, MCPP_EV_PING_ANSWERED), 0);
  fx_done(f);
}
