/* Learning the session from the handshake, in both roles, and turning
 * pings off for protocol versions that have none. */
#include "engine_fixture.h"

static const char *info_peer(fx *f) {
  mcpp_engine_info info;
  mcpp_engine_get_info(f->e, &info);
  return info.peer_name;
}

TEST(client_learns_server_info_and_protocol_version) {
  fx *f = fx_new();
  fx_start(f, T0);
  ASSERT_STR_EQ(info_peer(f), "demo-server");
  ASSERT_EQ(fx_out(f, "{\"jsonrpc\":\"2.0\",\"id\":\"init-1\",\"method\":\"initialize\","
                      "\"params\":{\"protocolVersion\":\"2025-11-25\",\"capabilities\":{}}}", T0), 0);
  ASSERT_EQ(fx_recv(f, "{\"jsonrpc\":\"2.0\",\"id\":\"init-1\",\"result\":{"
                       "\"protocolVersion\":\"2025-06-18\",\"capabilities\":{},"
                       "\"serverInfo\":{\"name\":\"weather\",\"version\":\"1.0\"}}}", T0 + MS),
            MCPP_RECV_FORWARD);
  mcpp_engine_info info;
  mcpp_engine_get_info(f->e, &info);
  ASSERT_STR_EQ(info.protocol_version, "2025-06-18");
  ASSERT_STR_EQ(info.peer_name, "weather");
  ASSERT_EQ(info.initialized, 0);
  ASSERT_EQ(info.in_flight, 0);
  ASSERT_EQ(fx_out(f, "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}", T0 + 2 * MS), 0);
  ASSERT_EQ(fx_count_events(f, MCPP_EV_INITIALIZED), 1);
  /* The event names the server, for hosts that never parse the result. */
  ASSERT(fx_last_event(f, MCPP_EV_INITIALIZED)->has_message);
  ASSERT_STR_EQ(fx_last_event(f, MCPP_EV_INITIALIZED)->message, "weather");
  mcpp_engine_get_info(f->e, &info);
  ASSERT_EQ(info.initialized, 1);
  ASSERT_EQ(fx_out(f, "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}", T0 + 3 * MS), 0);
  ASSERT_EQ(fx_count_events(f, MCPP_EV_INITIALIZED), 1);
  /* Records now name the peer and the version. */
  fx_recv(f, "{\"jsonrpc\":\"2.0\",\"id\":5,\"method\":\"ping\"}", T0 + 4 * MS);
  ASSERT(strstr(fx_last_record(f), "\"peer\":\"weather\"") != NULL);
  ASSERT(strstr(fx_last_record(f), "\"protocol_version\":\"2025-06-18\"") != NULL);
  fx_done(f);
}

TEST(client_ignores_result_of_other_requests) {
  fx *f = fx_new();
  fx_start(f, T0);
  fx_out(f, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"initialize\"}", T0);
  fx_out(f, "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"tools/list\"}", T0);
  fx_recv(f, "{\"jsonrpc\":\"2.0\",\"id\":2,\"result\":{\"protocolVersion\":\"2030-01-01\","
             "\"serverInfo\":{\"name\":\"evil\"}}}", T0);
  mcpp_engine_info info;
  mcpp_engine_get_info(f->e, &info);
  ASSERT(info.protocol_version == NULL);
  ASSERT_STR_EQ(info.peer_name, "demo-server");
  ASSERT_EQ(info.unsupported, 0);
  fx_done(f);
}

TEST(server_role_learns_client_info_and_negotiated_version) {
  fx *f = fx_new();
  f->s.role = MCPP_ROLE_SERVER;
  f->s.peer_name = NULL;
  fx_start(f, T0);
  ASSERT(info_peer(f) == NULL);
  ASSERT_EQ(fx_recv(f, "{\"jsonrpc\":\"2.0\",\"id\":0,\"method\":\"initialize\",\"params\":{"
                       "\"protocolVersion\":\"2026-07-28\",\"capabilities\":{},"
                       "\"clientInfo\":{\"name\":\"claude-code\",\"version\":\"2\"}}}", T0),
            MCPP_RECV_FORWARD);
  mcpp_engine_info info;
  mcpp_engine_get_info(f->e, &info);
  ASSERT_STR_EQ(info.peer_name, "claude-code");
  ASSERT_STR_EQ(info.protocol_version, "2026-07-28");
  ASSERT_EQ(info.unsupported, 0); /* requested, not yet negotiated */
  ASSERT_EQ(fx_out(f, "{\"jsonrpc\":\"2.0\",\"id\":0,\"result\":{\"protocolVersion\":\"2025-11-25\","
                      "\"serverInfo\":{\"name\":\"me\"}}}", T0 + MS), 0);
  mcpp_engine_get_info(f->e, &info);
  ASSERT_STR_EQ(info.protocol_version, "2025-11-25");
  ASSERT_STR_EQ(info.peer_name, "claude-code");
  ASSERT_EQ(info.unsupported, 0);
  ASSERT_EQ(fx_recv(f, "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}", T0 + 2 * MS),
            MCPP_RECV_FORWARD);
  ASSERT_EQ(fx_count_events(f, MCPP_EV_INITIALIZED), 1);
  ASSERT_STR_EQ(fx_last_event(f, MCPP_EV_INITIALIZED)->message, "claude-code");
  ASSERT_EQ(mcpp_engine_ping(f->e, 0, T0 + 3 * MS, NULL), 0);
  /* Records from the server's side. */
  ASSERT_EQ(fx_answer_last_ping(f, "\"result\":{}", T0 + 4 * MS), MCPP_RECV_CONSUMED);
  ASSERT(strstr(fx_last_record(f), "\"sender\":\"server\",\"receiver\":\"client\"") != NULL);
  fx_done(f);
}

static void expect_no_ping_session(int role, const char *version) {
  fx *f = fx_new();
  f->s.role = role;
  f->s.interval_ms = 1000;
  f->s.jitter_pct = 0;
  fx_start(f, T0);
  char frame[256];
  snprintf(frame, sizeof frame,
           "{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{\"protocolVersion\":\"%s\"}}", version);
  if (role == MCPP_ROLE_CLIENT) {
    fx_out(f, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"initialize\"}", T0);
    ASSERT_EQ(fx_recv(f, frame, T0 + MS), MCPP_RECV_FORWARD);
  } else {
    fx_recv(f, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"initialize\",\"params\":{}}", T0);
    ASSERT_EQ(fx_out(f, frame, T0 + MS), 0);
  }
  ASSERT_EQ(fx_count_events(f, MCPP_EV_UNSUPPORTED), 1);
  ASSERT(strstr(fx_last_record(f), "\"event\":\"ping_unsupported\"") != NULL);
  ASSERT(strstr(fx_last_record(f), "\"ping_id\":null") != NULL);
  ASSERT_UINT_EQ(mcpp_engine_next_deadline(f->e), UINT64_MAX);
  fx_run_until(f, T0 + 100 * SEC);
  ASSERT_EQ(mcpp_engine_on_timer(f->e, T0 + 100 * SEC), 0);
  ASSERT_EQ(fx_count_sent(f, MCPP_FRAME_PING), 0);
  ASSERT_EQ(mcpp_engine_ping(f->e, 0, T0 + 100 * SEC, NULL), MCPP_ERR_UNSUPPORTED);
  /* Pings from the peer are still answered. */
  ASSERT_EQ(fx_recv(f, "{\"jsonrpc\":\"2.0\",\"id\":9,\"method\":\"ping\"}", T0 + 101 * SEC),
            MCPP_RECV_CONSUMED);
  mcpp_engine_info info;
  mcpp_engine_get_info(f->e, &info);
  ASSERT_EQ(info.state, MCPP_STATE_ALIVE);
  ASSERT_EQ(fx_count_events(f, MCPP_EV_UNSUPPORTED), 1);
  fx_done(f);
}

TEST(protocol_2026_07_28_and_later_has_no_pings) {
  expect_no_ping_session(MCPP_ROLE_CLIENT, "2026-07-28");
  expect_no_ping_session(MCPP_ROLE_CLIENT, "2027-01-15");
  expect_no_ping_session(MCPP_ROLE_SERVER, "2026-07-28");
}

TEST(protocol_before_2026_07_28_keeps_pings) {
  const char *versions[] = {"2025-11-25", "2026-07-27", "draft", "2026-7-28"};
  for (int i = 0; i < 4; i++) {
    fx *f = fx_new();
    f->s.interval_ms = 1000;
    fx_start(f, T0);
    fx_out(f, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"initialize\"}", T0);
    char frame[256];
    snprintf(frame, sizeof frame,
             "{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{\"protocolVersion\":\"%s\"}}", versions[i]);
    fx_recv(f, frame, T0);
    ASSERT_EQ(fx_count_events(f, MCPP_EV_UNSUPPORTED), 0);
    ASSERT_EQ(mcpp_engine_ping(f->e, 0, T0, NULL), 0);
    fx_done(f);
  }
}

TEST(large_initialize_result_parsed_once) {
  fx *f = fx_new();
  fx_start(f, T0);
  fx_out(f, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"initialize\"}", T0);
  const char *head = "{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{\"instructions\":\"";
  const char *tail = "\",\"protocolVersion\":\"2025-11-25\",\"serverInfo\":{\"name\":\"big\"}}}";
  size_t pad = 300000, h = strlen(head), t = strlen(tail);
  char *frame = malloc(h + pad + t);
  memcpy(frame, head, h);
  memset(frame + h, 'y', pad);
  memcpy(frame + h + pad, tail, t);
  ASSERT_EQ(mcpp_engine_recv(f->e, frame, h + pad + t, T0), MCPP_RECV_FORWARD);
  free(frame);
  ASSERT_EQ(mcpp__engine_json_parses(f->e), 1);
  ASSERT_STR_EQ(info_peer(f), "big");
  fx_done(f);
}

TEST(learned_names_are_capped_and_escaped_in_records) {
  fx *f = fx_new();
  fx_start(f, T0);
  fx_out(f, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"initialize\"}", T0);
  /* The JSON name "\\"nnn..." decodes to \"nnn... (1000 bytes). */
  char name[1003];
  memcpy(name, "\\\\\\\"", 4);
  memset(name + 4, 'n', 998);
  name[1002] = '\0';
  char frame[2048];
  snprintf(frame, sizeof frame,
           "{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{\"serverInfo\":{\"name\":\"%s\"}}}", name);
  fx_recv(f, frame, T0);
  ASSERT_EQ(strlen(info_peer(f)), 256);
  ASSERT(memcmp(info_peer(f), "\\\"nnn", 5) == 0);
  fx_recv(f, "{\"jsonrpc\":\"2.0\",\"id\":5,\"method\":\"ping\"}", T0);
  ASSERT(strstr(fx_last_record(f), "\"peer\":\"\\\\\\\"nnn") != NULL);
  fx_done(f);
}
