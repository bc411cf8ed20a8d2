/* Governance records as the engine emits them: one per ping outcome,
 * ping answered and state change, with every field and no payloads. */
#include "engine_fixture.h"

/* 2026-12-02T12:00:00Z as monotonic T0 plus this offset. */
#define OFFSET ((int64_t)(1796212800LL * 1000000) - (int64_t)T0)

static fx *recorded(void) {
  fx *f = fx_new();
  f->s.clock_offset_us = OFFSET;
  return f;
}

TEST(record_for_pong_has_every_field) {
  fx *f = recorded();
  f->s.transport = MCPP_TRANSPORT_STDIO;
  fx_start(f, T0);
  ASSERT_EQ(mcpp_engine_set_session_id(f->e, "sess-\"1\""), 0);
  mcpp_engine_set_reconnect_attempt(f->e, 2);
  fx_out(f, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\",\"params\":{\"secret\":\"hunter2\"}}", T0);
  ASSERT_EQ(mcpp_engine_ping(f->e, 1500, T0, NULL), 0);
  ASSERT_EQ(fx_answer_last_ping(f, "\"result\":{\"echo\":\"payload\"}", T0 + 123), MCPP_RECV_CONSUMED);
  ASSERT_EQ(f->n_records, 1);
  ASSERT_STR_EQ(fx_last_record(f),
                "{\"ts\":\"2026-12-02T12:00:00.000123Z\",\"event\":\"ping_ok\","
                "\"direction\":\"outbound\",\"sender\":\"client\",\"receiver\":\"server\","
                "\"peer\":\"demo-server\",\"session_id\":\"sess-\\\"1\\\"\",\"protocol_version\":null,"
                "\"transport\":\"stdio\",\"ping_id\":\"mcpp-0123456789abcdef-1\",\"timeout_ms\":1500,"
                "\"latency_ms\":0.123,\"failure_count\":0,\"reconnect_attempt\":2,"
                "\"in_flight\":{\"count\":1,\"disposition\":\"continued\"},\"proof\":\"ping\"}");
  ASSERT(strstr(fx_last_record(f), "hunter2") == NULL);
  ASSERT(strstr(fx_last_record(f), "payload") == NULL);
  fx_done(f);
}

TEST(record_for_every_ping_outcome) {
  fx *f = recorded();
  fx_start(f, T0);
  mcpp_engine_ping(f->e, 100, T0, NULL);
  fx_answer_last_ping(f, "\"result\":{}", T0);
  mcpp_engine_ping(f->e, 100, T0, NULL);
  fx_answer_last_ping(f, "\"result\":1", T0);
  mcpp_engine_ping(f->e, 100, T0, NULL);
  fx_answer_last_ping(f, "\"error\":{\"code\":-32000,\"message\":\"m\"}", T0);
  mcpp_engine_ping(f->e, 100, T0, NULL);
  fx_run_until(f, T0 + SEC);
  mcpp_engine_ping(f->e, 100, T0 + SEC, NULL);
  fx_answer_last_ping(f, "\"error\":{\"code\":-32601,\"message\":\"m\"}", T0 + SEC);
  fx_recv(f, "{\"jsonrpc\":\"2.0\",\"id\":\"their\",\"method\":\"ping\"}", T0 + SEC);
  const char *names[] = {"ping_ok", "ping_invalid", "ping_error", "ping_timeout",
                         "ping_unsupported", "ping_answered"};
  ASSERT_EQ(f->n_records, 6);
  for (int i = 0; i < 6; i++) {
    char needle[64];
    snprintf(needle, sizeof needle, "\"event\":\"%s\"", names[i]);
    ASSERT(strstr(f->records[i], needle) != NULL);
  }
  ASSERT(strstr(f->records[3], "\"latency_ms\":null") != NULL);
  ASSERT(strstr(f->records[5], "\"ping_id\":\"their\",\"timeout_ms\":null,\"latency_ms\":null") != NULL);
  fx_done(f);
}

TEST(record_for_reconnect_and_close) {
  fx *f = recorded();
  fx_start(f, T0);
  mcpp_engine_set_reconnect_attempt(f->e, 1);
  mcpp_engine_record_reconnect(f->e, T0 + SEC);
  ASSERT(strstr(fx_last_record(f), "\"event\":\"reconnect\"") != NULL);
  ASSERT(strstr(fx_last_record(f), "\"reconnect_attempt\":1,") != NULL);
  ASSERT(strstr(fx_last_record(f), "\"ts\":\"2026-12-02T12:00:01.000000Z\"") != NULL);
  mcpp_engine_close(f->e, 0, NULL, T0 + 2 * SEC);
  ASSERT(strstr(fx_last_record(f), "\"event\":\"closed\",\"direction\":null") != NULL);
  ASSERT(strstr(fx_last_record(f), "\"in_flight\":{\"count\":0,\"disposition\":\"cancelled\"}") != NULL);
  fx_done(f);
}

TEST(format_record_for_host_events) {
  fx *f = recorded();
  f->s.transport = MCPP_TRANSPORT_STREAMABLE_HTTP;
  fx_start(f, T0);
  mcpp_event ev;
  memset(&ev, 0, sizeof ev);
  ev.type = MCPP_EV_PING_ERROR;
  ev.invalid = 1;
  ev.id = "\"x\"";
  ev.id_len = 3;
  ev.timeout_ms = 10;
  ev.rtt_us = 2500;
  char buf[1024];
  size_t n = mcpp_engine_format_record(f->e, &ev, T0, buf, sizeof buf);
  ASSERT_EQ(n, strlen(buf));
  ASSERT(strstr(buf, "\"event\":\"ping_invalid\"") != NULL);
  ASSERT(strstr(buf, "\"transport\":\"streamable-http\",\"ping_id\":\"x\",\"timeout_ms\":10,"
                     "\"latency_ms\":2.500") != NULL);
  char tiny[8];
  ASSERT_EQ(mcpp_engine_format_record(f->e, &ev, T0, tiny, sizeof tiny), n);
  ASSERT_EQ(strlen(tiny), 7);
  ASSERT_EQ(mcpp_engine_format_record(f->e, &ev, T0, NULL, 0), n);
  ev.type = MCPP_EV_TIMEOUT;
  mcpp_engine_format_record(f->e, &ev, T0, buf, sizeof buf);
  ASSERT(strstr(buf, "\"event\":\"ping_timeout\"") != NULL);
  fx_done(f);
}

TEST(record_with_long_peer_ping_id_is_complete) {
  fx *f = recorded();
  fx_start(f, T0);
  char frame[4096], id[3000];
  memset(id, 'q', sizeof id - 1);
  id[sizeof id - 1] = '\0';
  snprintf(frame, sizeof frame, "{\"jsonrpc\":\"2.0\",\"id\":\"%s\",\"method\":\"ping\"}", id);
  ASSERT_EQ(fx_recv(f, frame, T0), MCPP_RECV_CONSUMED);
  ASSERT(strstr(fx_last_record(f), id) != NULL);
  ASSERT(strstr(fx_last_record(f), "\"in_flight\":{") != NULL);
  fx_done(f);
}

TEST(names_of_errors_states_events_dispositions) {
  for (int err = 0; err >= -14; err--) {
    ASSERT(strcmp(mcpp_errname(err), "MCPP_ERR_UNKNOWN") != 0);
    ASSERT(strcmp(mcpp_strerror(err), "Unknown error.") != 0);
  }
  ASSERT_STR_EQ(mcpp_errname(MCPP_ERR_CLOSED), "MCPP_ERR_CLOSED");
  ASSERT_STR_EQ(mcpp_errname(-99), "MCPP_ERR_UNKNOWN");
  ASSERT_STR_EQ(mcpp_state_name(MCPP_STATE_SUSPECT), "suspect");
  const char *events[] = {"ping", "pong", "timeout", "ping_error", "unsupported",
                          "ping_answered", "suspect", "stale", "recovered",
                          "closed", "request_timeout", "initialized"};
  for (int i = 0; i <= MCPP_EV_INITIALIZED; i++)
    ASSERT_STR_EQ(mcpp_event_name((mcpp_event_type)i), events[i]);
  ASSERT_STR_EQ(mcpp_disposition_name(MCPP_DISPOSITION_IN_DOUBT), "in_doubt");
  mcpp_settings s;
  mcpp_settings_default(&s);
  ASSERT_EQ(s.jitter_pct, 10);
  ASSERT_EQ(s.timeout_ms, 5000);
  ASSERT_EQ(s.failures, 3);
  ASSERT_EQ(s.min_interval_ms, 1000);
  ASSERT_EQ(s.pause_threshold_ms, 1000);
  ASSERT_EQ(s.max_outstanding_pings, 1024);
  ASSERT_UINT_EQ(s.max_line_bytes, 64u * 1024 * 1024);
  ASSERT_EQ(s.on_stale, MCPP_STALE_CLOSE);
}
