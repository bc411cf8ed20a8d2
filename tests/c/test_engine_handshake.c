/* Learning a 2026-07-28 session from the traffic the application's own
 * handshake makes (SDK adapters and guard): server/discover, or a client
 * that pins the version and sends its first request in the _meta envelope;
 * and not learning it when the server turns out to be a legacy one. */
#include "engine_fixture.h"

#define ENVELOPE(v)                                                       \
  "\"_meta\":{\"io.modelcontextprotocol/protocolVersion\":\"" v "\","      \
  "\"io.modelcontextprotocol/clientInfo\":{\"name\":\"agent\",\"version\":\"1\"}," \
  "\"io.modelcontextprotocol/clientCapabilities\":{}}"

static const char discover[] =
    "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"server/discover\",\"params\":{" ENVELOPE("2026-07-28") "}}";

static void assert_session(fx *f, const char *version, const char *peer,
                           int unsupported) {
  mcpp_engine_info info;
  mcpp_engine_get_info(f->e, &info);
  if (version)
    ASSERT_STR_EQ(info.protocol_version, version);
  else
    ASSERT(info.protocol_version == NULL);
  ASSERT_STR_EQ(info.peer_name, peer);
  ASSERT_EQ(info.unsupported, unsupported);
}

TEST(discover_listing_no_2026_version_is_a_legacy_server_then_initialize_tells) {
  fx *f = fx_new();
  fx_start(f, T0);
  fx_out(f, discover, T0);
  /* What go-sdk's stateful server answers: discover, but no modern era. */
  fx_recv(f, "{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{\"supportedVersions\":[\"2025-11-25\"],"
             "\"capabilities\":{},\"_meta\":{\"io.modelcontextprotocol/serverInfo\":{\"name\":\"go\"}}}}", T0);
  assert_session(f, NULL, "demo-server", 0);
  ASSERT_EQ(fx_count_events(f, MCPP_EV_INITIALIZED), 0);
  fx_out(f, "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"initialize\",\"params\":{\"protocolVersion\":\"2025-11-25\"}}", T0);
  fx_recv(f, "{\"jsonrpc\":\"2.0\",\"id\":2,\"result\":{\"protocolVersion\":\"2025-11-25\","
             "\"serverInfo\":{\"name\":\"go\"}}}", T0);
  assert_session(f, "2025-11-25", "go", 0);
  ASSERT_EQ(mcpp_engine_ping(f->e, 0, T0, NULL), 0);
  fx_done(f);
}

TEST(discover_refused_by_a_legacy_server_settles_nothing) {
  fx *f = fx_new();
  fx_start(f, T0);
  fx_out(f, discover, T0);
  fx_recv(f, "{\"jsonrpc\":\"2.0\",\"id\":1,\"error\":{\"code\":-32601,\"message\":\"Method not found\"}}", T0);
  assert_session(f, NULL, "demo-server", 0);
  /* The -32022 retry at another version, answered: that one counts. */
  fx_out(f, "{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"server/discover\",\"params\":{" ENVELOPE("2027-01-01") "}}", T0);
  fx_recv(f, "{\"jsonrpc\":\"2.0\",\"id\":3,\"result\":{\"supportedVersions\":[\"2026-07-28\",\"2027-01-01\"]}}", T0);
  assert_session(f, "2027-01-01", "demo-server", 1);
  fx_done(f);
}

TEST(client_pinning_2026_learns_from_its_first_enveloped_request) {
  fx *f = fx_new();
  fx_start(f, T0);
  fx_out(f, "{\"jsonrpc\":\"2.0\",\"id\":\"t1\",\"method\":\"tools/list\",\"params\":{" ENVELOPE("2026-07-28") "}}", T0);
  /* A second one before the answer does not replace it. */
  fx_out(f, "{\"jsonrpc\":\"2.0\",\"id\":\"t2\",\"method\":\"tools/list\",\"params\":{" ENVELOPE("2099-01-01") "}}", T0);
  fx_recv(f, "{\"jsonrpc\":\"2.0\",\"id\":\"t2\",\"result\":{\"tools\":[]}}", T0);
  assert_session(f, NULL, "demo-server", 0);
  /* Every 2026 result carries the server's name in _meta (escaped key). */
  fx_recv(f, "{\"jsonrpc\":\"2.0\",\"id\":\"t1\",\"result\":{\"tools\":[],\"resultType\":\"complete\","
             "\"_meta\":{\"io.modelcontextprotocol\\/serverInfo\":{\"name\":\"time\\u00e9\"}}}}", T0);
  assert_session(f, "2026-07-28", "time\xc3\xa9", 1);
  ASSERT_EQ(fx_count_events(f, MCPP_EV_INITIALIZED), 1);
  ASSERT_EQ(fx_count_events(f, MCPP_EV_UNSUPPORTED), 1);
  fx_done(f);
}

TEST(enveloped_request_answered_with_an_error_settles_nothing) {
  fx *f = fx_new();
  fx_start(f, T0);
  fx_out(f, "{\"jsonrpc\":\"2.0\",\"id\":5,\"method\":\"tools/list\",\"params\":{" ENVELOPE("2026-07-28") "}}", T0);
  fx_recv(f, "{\"jsonrpc\":\"2.0\",\"id\":5,\"error\":{\"code\":-32600,\"message\":\"legacy\"}}", T0);
  assert_session(f, NULL, "demo-server", 0);
  fx_done(f);
}

TEST(server_guard_learns_a_pinned_2026_client_from_the_answer_it_sends) {
  fx *f = fx_new();
  f->s.role = MCPP_ROLE_SERVER;
  f->s.peer_name = NULL;
  fx_start(f, T0);
  ASSERT_EQ(fx_recv(f, "{\"jsonrpc\":\"2.0\",\"id\":9,\"method\":\"tools/call\",\"params\":"
                       "{\"name\":\"x\"," ENVELOPE("2026-07-28") "}}", T0),
            MCPP_RECV_FORWARD);
  mcpp_engine_info info;
  mcpp_engine_get_info(f->e, &info);
  ASSERT_STR_EQ(info.peer_name, "agent");
  ASSERT(info.protocol_version == NULL); /* proposed, not settled */
  fx_out(f, "{\"jsonrpc\":\"2.0\",\"id\":9,\"result\":{\"content\":[]}}", T0);
  assert_session(f, "2026-07-28", "agent", 1);
  ASSERT_EQ(fx_count_events(f, MCPP_EV_INITIALIZED), 1);
  fx_done(f);
}

TEST(legacy_session_once_negotiated_scans_no_envelopes) {
  fx *f = fx_new();
  fx_start(f, T0);
  fx_out(f, "{\"jsonrpc\":\"2.0\",\"id\":0,\"method\":\"initialize\",\"params\":{}}", T0);
  fx_recv(f, "{\"jsonrpc\":\"2.0\",\"id\":0,\"result\":{\"protocolVersion\":\"2025-06-18\"}}", T0);
  uint64_t parses = mcpp__engine_json_parses(f->e);
  for (int i = 1; i < 100; i++) {
    char frame[512];
    snprintf(frame, sizeof frame, "{\"jsonrpc\":\"2.0\",\"id\":%d,\"method\":\"tools/call\",\"params\":{" ENVELOPE("2026-07-28") "}}", i);
    fx_out(f, frame, T0);
    snprintf(frame, sizeof frame, "{\"jsonrpc\":\"2.0\",\"id\":%d,\"result\":{}}", i);
    fx_recv(f, frame, T0);
  }
  ASSERT_UINT_EQ(mcpp__engine_json_parses(f->e), parses);
  assert_session(f, "2025-06-18", "demo-server", 0);
  fx_done(f);
}

TEST(handshake_learning_survives_allocation_failure_without_leaks) {
  for (long k = 1; k < 200; k++) {
    fx *f = fx_new();
    f->alloc.fail_at = k;
    if (fx_try_start(f, T0) != 0) {
      ASSERT_EQ(f->alloc.live, 0);
      free(f);
      continue;
    }
    fx_out(f, discover, T0);
    fx_recv(f, "{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{\"supportedVersions\":[\"2026-07-28\"],"
               "\"_meta\":{\"io.modelcontextprotocol/serverInfo\":{\"name\":\"s\"}}}}", T0);
    int failed = f->alloc.failed;
    fx_done(f);
    if (!failed) break;
  }
}
