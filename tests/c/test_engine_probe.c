/* Liveness after ping: on 2026-07-28 sessions and with peers that refuse
 * ping, keepalive sends an idle probe with our own id and consumes its
 * answer; the frames below are what the official Python SDK (mcp 2.3)
 * writes and answers. */
#include "engine_fixture.h"

#define META                                                              \
  "\"_meta\":{\"io.modelcontextprotocol/protocolVersion\":\"2026-07-28\"," \
  "\"io.modelcontextprotocol/clientInfo\":{\"name\":\"mcp\",\"version\":\"2.3.0\"}," \
  "\"io.modelcontextprotocol/clientCapabilities\":{}}"

static const char discover_request[] =
    "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"server/discover\",\"params\":{" META "}}";
static const char discover_result[] =
    "{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{\"cacheScope\":\"private\",\"capabilities\":"
    "{\"tools\":{\"listChanged\":true}},\"resultType\":\"complete\",\"supportedVersions\":"
    "[\"2026-07-28\"],\"ttlMs\":0,\"_meta\":{\"io.modelcontextprotocol/serverInfo\":"
    "{\"name\":\"mcp-server-time\",\"version\":\"2026.10.19\"}}}}";

static const char probe_2026[] =
    "{\"jsonrpc\":\"2.0\",\"id\":\"mcpp-0123456789abcdef-1\",\"method\":\"server/discover\","
    "\"params\":{\"_meta\":{\"io.modelcontextprotocol/protocolVersion\":\"2026-07-28\","
    "\"io.modelcontextprotocol/clientInfo\":{\"name\":\"mcpping\",\"version\":\"" MCPP_VERSION "\"},"
    "\"io.modelcontextprotocol/clientCapabilities\":{}}}}";

static fx *keepalive_fx(int observe_process) {
  fx *f = fx_new();
  f->s.interval_ms = 1000;
  f->s.timeout_ms = 500;
  f->s.failures = 3;
  f->s.jitter_pct = 0;
  f->observe_process = observe_process;
  return f;
}

/* A client session that ran server/discover at T0. */
static fx *session_2026(int observe_process) {
  fx *f = keepalive_fx(observe_process);
  fx_start(f, T0);
  ASSERT_EQ(fx_out(f, discover_request, T0), 0);
  ASSERT_EQ(fx_recv(f, discover_result, T0), MCPP_RECV_FORWARD);
  return f;
}

/* A legacy session (initialize, 2025-11-25) at T0. */
static fx *session_legacy(int observe_process) {
  fx *f = keepalive_fx(observe_process);
  fx_start(f, T0);
  fx_out(f, "{\"jsonrpc\":\"2.0\",\"id\":0,\"method\":\"initialize\",\"params\":"
            "{\"protocolVersion\":\"2025-11-25\"}}", T0);
  ASSERT_EQ(fx_recv(f, "{\"jsonrpc\":\"2.0\",\"id\":0,\"result\":{\"protocolVersion\":"
                       "\"2025-11-25\",\"serverInfo\":{\"name\":\"legacy\"}}}", T0),
            MCPP_RECV_FORWARD);
  fx_out(f, "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}", T0);
  return f;
}

static int answer_last(fx *f, int kind, const char *tail, uint64_t now) {
  char id[128], frame[512];
  const fx_frame *req = fx_last_sent(f, kind);
  ASSERT(req != NULL);
  snprintf(frame, sizeof frame, "{\"jsonrpc\":\"2.0\",\"id\":%s,%s}",
           fx_ping_id(req, id, sizeof id), tail);
  return fx_recv(f, frame, now);
}

TEST(session_2026_sends_no_ping_and_probes_server_discover) {
  fx *f = session_2026(0);
  mcpp_engine_info info;
  mcpp_engine_get_info(f->e, &info);
  ASSERT_STR_EQ(info.protocol_version, "2026-07-28");
  ASSERT_STR_EQ(info.peer_name, "mcp-server-time");
  ASSERT_EQ(info.unsupported, 1);
  ASSERT_EQ(info.initialized, 1);
  ASSERT_STR_EQ(info.probe_method, "server/discover");
  ASSERT_EQ(fx_count_events(f, MCPP_EV_INITIALIZED), 1);
  /* An interval of silence: a probe, never a ping. */
  fx_run_until(f, T0 + SEC);
  ASSERT_EQ(fx_count_sent(f, MCPP_FRAME_PING), 0);
  ASSERT_EQ(fx_count_sent(f, MCPP_FRAME_PROBE), 1);
  ASSERT_STR_EQ(fx_last_sent(f, MCPP_FRAME_PROBE)->text, probe_2026);
  const fx_event *ev = fx_last_event(f, MCPP_EV_PROBE);
  ASSERT(ev != NULL);
  ASSERT_STR_EQ(ev->proof, "probe:server/discover");
  ASSERT_EQ(ev->ev.timeout_ms, 500);
  /* Its answer is consumed: the application never sees it. */
  char answer[1024];
  snprintf(answer, sizeof answer,
           "{\"jsonrpc\":\"2.0\",\"id\":\"mcpp-0123456789abcdef-1\",%s",
           strstr(discover_result, "\"result\""));
  ASSERT_EQ(fx_recv(f, answer, T0 + SEC + 3 * MS), MCPP_RECV_CONSUMED);
  ev = fx_last_event(f, MCPP_EV_PROBE_OK);
  ASSERT(ev != NULL);
  ASSERT_UINT_EQ(ev->ev.rtt_us, 3 * MS);
  ASSERT_EQ(ev->ev.rpc_code, 0);
  ASSERT(strstr(fx_last_record(f), "\"event\":\"probe_ok\"") != NULL);
  ASSERT(strstr(fx_last_record(f), "\"ping_id\":\"mcpp-0123456789abcdef-1\"") != NULL);
  ASSERT(strstr(fx_last_record(f), "\"latency_ms\":3.000") != NULL);
  ASSERT(strstr(fx_last_record(f), "\"proof\":\"probe:server/discover\"") != NULL);
  mcpp_engine_get_info(f->e, &info);
  ASSERT_UINT_EQ(info.probes_sent, 1);
  ASSERT_UINT_EQ(info.probes_answered, 1);
  ASSERT_UINT_EQ(info.last_probe_us, T0 + SEC + 3 * MS);
  ASSERT_EQ(info.freshest_proof, MCPP_PROOF_PROBE);
  ASSERT_UINT_EQ(info.pings_sent, 0);
  /* The next probe is an interval after that answer. */
  ASSERT_UINT_EQ(mcpp_engine_next_deadline(f->e), T0 + 2 * SEC + 3 * MS);
  fx_done(f);
}

TEST(session_2026_learned_from_discover_turns_ping_off_at_once) {
  fx *f = keepalive_fx(0);
  fx_start(f, T0);
  fx_out(f, discover_request, T0);
  /* Before the answer, the version is only proposed: nothing changes. */
  mcpp_engine_info info;
  mcpp_engine_get_info(f->e, &info);
  ASSERT(info.protocol_version == NULL);
  ASSERT_EQ(info.unsupported, 0);
  fx_recv(f, discover_result, T0 + 10 * MS);
  ASSERT_EQ(fx_count_events(f, MCPP_EV_UNSUPPORTED), 1);
  /* Manual pings are refused without a ping that fails first. */
  ASSERT_EQ(mcpp_engine_ping(f->e, 0, T0 + 20 * MS, NULL), MCPP_ERR_UNSUPPORTED);
  fx_run_until(f, T0 + 30 * SEC);
  ASSERT_EQ(fx_count_sent(f, MCPP_FRAME_PING), 0);
  fx_done(f);
}

TEST(probe_answer_that_is_an_error_still_proves_life) {
  fx *f = session_2026(0);
  fx_run_until(f, T0 + SEC);
  ASSERT_EQ(answer_last(f, MCPP_FRAME_PROBE,
                        "\"error\":{\"code\":-32603,\"message\":\"busy\"}", T0 + SEC + MS),
            MCPP_RECV_CONSUMED);
  const fx_event *ev = fx_last_event(f, MCPP_EV_PROBE_OK);
  ASSERT(ev != NULL);
  ASSERT_EQ(ev->ev.rpc_code, -32603);
  ASSERT_STR_EQ(ev->message, "busy");
  ASSERT(strstr(fx_last_record(f), "\"event\":\"probe_error\"") != NULL);
  /* Even -32601 (no such method) is an answer: the loop ran. */
  fx_run_until(f, T0 + 2 * SEC + MS);
  ASSERT_EQ(answer_last(f, MCPP_FRAME_PROBE,
                        "\"error\":{\"code\":-32601,\"message\":\"nope\"}", T0 + 2 * SEC + 2 * MS),
            MCPP_RECV_CONSUMED);
  ASSERT_EQ(fx_count_events(f, MCPP_EV_PROBE_OK), 2);
  fx_run_until(f, T0 + 3 * SEC + 2 * MS);
  ASSERT_EQ(fx_count_sent(f, MCPP_FRAME_PROBE), 3); /* probing goes on */
  ASSERT_EQ(fx_count_events(f, MCPP_EV_SUSPECT), 0);
  fx_done(f);
}

TEST(probe_answer_of_one_mib_is_consumed_without_a_parse) {
  fx *f = session_legacy(0);
  fx_run_until(f, T0 + SEC);
  ASSERT_EQ(fx_answer_last_ping(f, "\"error\":{\"code\":-32601,\"message\":\"Method not found\"}",
                                T0 + SEC + MS),
            MCPP_RECV_CONSUMED);
  fx_run_until(f, T0 + 2 * SEC + MS);
  const fx_frame *probe = fx_last_sent(f, MCPP_FRAME_PROBE);
  ASSERT(probe != NULL);
  char id[128];
  fx_ping_id(probe, id, sizeof id);
  size_t big = (size_t)1 << 20;
  char *frame = malloc(big + 256);
  int head = snprintf(frame, 256, "{\"jsonrpc\":\"2.0\",\"result\":{\"tools\":[{\"name\":\"");
  memset(frame + head, 't', big);
  size_t n = (size_t)head + big;
  n += (size_t)sprintf(frame + n, "\"}]},\"id\":%s}", id);
  uint64_t parses = mcpp__engine_json_parses(f->e);
  ASSERT_EQ(mcpp_engine_recv(f->e, frame, n, T0 + 2 * SEC + 5 * MS), MCPP_RECV_CONSUMED);
  ASSERT_UINT_EQ(mcpp__engine_json_parses(f->e), parses);
  ASSERT_EQ(fx_count_events(f, MCPP_EV_PROBE_OK), 1);
  free(frame);
  fx_done(f);
}

TEST(legacy_peer_answering_ping_with_minus_32601_switches_to_tools_list) {
  fx *f = session_legacy(0);
  fx_run_until(f, T0 + SEC);
  ASSERT_EQ(fx_count_sent(f, MCPP_FRAME_PING), 1);
  ASSERT_EQ(fx_answer_last_ping(f, "\"error\":{\"code\":-32601,\"message\":\"Method not found\"}",
                                T0 + SEC + MS),
            MCPP_RECV_CONSUMED);
  ASSERT_EQ(fx_count_events(f, MCPP_EV_UNSUPPORTED), 1);
  mcpp_engine_info info;
  mcpp_engine_get_info(f->e, &info);
  ASSERT_STR_EQ(info.probe_method, "tools/list");
  fx_run_until(f, T0 + 2 * SEC + MS);
  ASSERT_EQ(fx_count_sent(f, MCPP_FRAME_PING), 1);
  ASSERT_EQ(fx_count_sent(f, MCPP_FRAME_PROBE), 1);
  /* A legacy request: no 2026 envelope. */
  ASSERT_STR_EQ(fx_last_sent(f, MCPP_FRAME_PROBE)->text,
                "{\"jsonrpc\":\"2.0\",\"id\":\"mcpp-0123456789abcdef-2\",\"method\":\"tools/list\"}");
  ASSERT_EQ(answer_last(f, MCPP_FRAME_PROBE, "\"result\":{\"tools\":[]}", T0 + 2 * SEC + 2 * MS),
            MCPP_RECV_CONSUMED);
  ASSERT(strstr(fx_last_record(f), "\"proof\":\"probe:tools/list\"") != NULL);
  fx_done(f);
}

TEST(frozen_2026_peer_goes_suspect_then_stale_through_probes) {
  /* No process status: the probes alone convict it. */
  fx *f = session_2026(0);
  fx_run_until(f, T0 + 1 * SEC + 500 * MS - 1);
  ASSERT_EQ(fx_count_events(f, MCPP_EV_SUSPECT), 0);
  fx_run_until(f, T0 + 1 * SEC + 500 * MS);
  const fx_event *ev = fx_last_event(f, MCPP_EV_SUSPECT);
  ASSERT(ev != NULL);
  ASSERT_STR_EQ(ev->proof, "probe:server/discover");
  ASSERT(strstr(fx_last_record(f), "\"proof\":\"probe:server/discover\"") != NULL);
  fx_run_until(f, T0 + 1 * SEC + 3 * 500 * MS);
  ev = fx_last_event(f, MCPP_EV_STALE);
  ASSERT(ev != NULL);
  ASSERT_UINT_EQ(ev->at, T0 + 1 * SEC + 3 * 500 * MS); /* interval + timeout x failures */
  ASSERT_STR_EQ(ev->proof, "probe:server/discover");
  ASSERT_EQ(ev->ev.failure_count, 3);
  ASSERT_EQ(fx_count_events(f, MCPP_EV_PROBE_TIMEOUT), 3);
  ASSERT_EQ(fx_count_records(f, "probe_timeout"), 3);
  fx_done(f);
}

TEST(frozen_2026_peer_with_stopped_process_is_suspect_at_once_then_stale) {
  fx *f = session_2026(1);
  f->process = MCPP_PROCESS_STOPPED;
  fx_run_until(f, T0 + SEC);
  /* Keepalive was due: the process was looked at, and it is stopped. */
  const fx_event *ev = fx_first_event(f, MCPP_EV_SUSPECT);
  ASSERT(ev != NULL);
  ASSERT_UINT_EQ(ev->at, T0 + SEC);
  ASSERT_STR_EQ(ev->proof, "process");
  ASSERT_STR_EQ(ev->message, "the server process is stopped");
  fx_run_until(f, T0 + SEC + 500 * MS);
  ev = fx_first_event(f, MCPP_EV_STALE);
  ASSERT(ev != NULL);
  ASSERT_UINT_EQ(ev->at, T0 + SEC + 500 * MS); /* a timeout after it was seen stopped */
  ASSERT_STR_EQ(ev->proof, "process");
  ASSERT_EQ(ev->ev.disposition, MCPP_DISPOSITION_CANCELLED);
  ASSERT(strstr(fx_last_record(f), "\"event\":\"stale\"") != NULL);
  ASSERT(strstr(fx_last_record(f), "\"proof\":\"process\"") != NULL);
  /* Within interval + timeout x failures, and no more asking after. */
  long calls = f->process_calls;
  fx_run_until(f, T0 + 60 * SEC);
  ASSERT_EQ(f->process_calls, calls);
  fx_done(f);
}


TEST(frozen_2026_peer_stopped_after_the_first_round_is_suspect_halfway_through_the_probe) {
  fx *f = session_2026(1);
  fx_run_until(f, T0 + SEC);
  ASSERT_EQ(f->process_calls, 1); /* the first round's one look */
  ASSERT_EQ(answer_last(f, MCPP_FRAME_PROBE, "\"result\":{}", T0 + SEC), MCPP_RECV_CONSUMED);
  f->process = MCPP_PROCESS_STOPPED;
  fx_run_until(f, T0 + 2 * SEC);
  /* The next probe goes out unasked: a process check before it would be
   * wasted on every answered probe. */
  ASSERT_EQ(fx_count_sent(f, MCPP_FRAME_PROBE), 2);
  ASSERT_EQ(f->process_calls, 1);
  ASSERT_EQ(fx_count_events(f, MCPP_EV_SUSPECT), 0);
  /* Halfway through its timeout the process is looked at: stopped. */
  fx_run_until(f, T0 + 2 * SEC + 250 * MS);
  const fx_event *ev = fx_first_event(f, MCPP_EV_SUSPECT);
  ASSERT(ev != NULL);
  ASSERT_UINT_EQ(ev->at, T0 + 2 * SEC + 250 * MS);
  ASSERT_UINT_EQ(f->process_asked_at[1], T0 + 2 * SEC + 250 * MS);
  ASSERT_STR_EQ(ev->proof, "process");
  ASSERT_STR_EQ(ev->message, "the server process is stopped");
  ASSERT_EQ(fx_count_events(f, MCPP_EV_PROBE_TIMEOUT), 0);
  fx_run_until(f, T0 + 2 * SEC + 750 * MS);
  ev = fx_first_event(f, MCPP_EV_STALE);
  ASSERT(ev != NULL);
  ASSERT_UINT_EQ(ev->at, T0 + 2 * SEC + 750 * MS); /* a timeout after it was seen stopped */
  ASSERT_STR_EQ(ev->proof, "process");
  ASSERT_EQ(ev->ev.disposition, MCPP_DISPOSITION_CANCELLED);
  ASSERT(strstr(fx_last_record(f), "\"event\":\"stale\"") != NULL);
  ASSERT(strstr(fx_last_record(f), "\"proof\":\"process\"") != NULL);
  /* Within interval + timeout x failures, and no more asking after. */
  long calls = f->process_calls;
  fx_run_until(f, T0 + 60 * SEC);
  ASSERT_EQ(f->process_calls, calls);
  fx_done(f);
}

TEST(running_process_that_never_answers_goes_the_usual_way_through_probes) {
  fx *f = session_2026(1);
  fx_out(f, "{\"jsonrpc\":\"2.0\",\"id\":9,\"method\":\"tools/call\",\"params\":{" META "}}", T0);
  fx_run_until(f, T0 + 1 * SEC + 3 * 500 * MS);
  const fx_event *ev = fx_last_event(f, MCPP_EV_STALE);
  ASSERT(ev != NULL);
  ASSERT_STR_EQ(ev->proof, "probe:server/discover");
  ASSERT_EQ(ev->ev.disposition, MCPP_DISPOSITION_IN_DOUBT);
  mcpp_engine_info info;
  mcpp_engine_get_info(f->e, &info);
  ASSERT_EQ(info.process_state, MCPP_PROCESS_RUNNING);
  ASSERT_GT(info.last_process_us, T0);
  fx_done(f);
}

TEST(probes_never_go_out_while_traffic_proves_liveness) {
  fx *f = session_2026(0);
  for (uint64_t t = T0 + 400 * MS; t < T0 + 20 * SEC; t += 400 * MS) {
    fx_run_until(f, t);
    fx_recv(f, "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/message\",\"params\":{}}", t);
  }
  ASSERT_EQ(fx_count_sent(f, MCPP_FRAME_PROBE), 0);
  fx_done(f);
}

TEST(one_probe_in_flight_and_no_probe_before_the_handshake) {
  fx *f = keepalive_fx(0);
  f->s.timeout_ms = 5000;
  fx_start(f, T0);
  /* A peer that refuses ping before any handshake: no probe, since a
   * request of ours could open the session in the wrong era. */
  fx_run_until(f, T0 + SEC);
  fx_answer_last_ping(f, "\"error\":{\"code\":-32601,\"message\":\"x\"}", T0 + SEC);
  fx_run_until(f, T0 + 30 * SEC);
  ASSERT_EQ(fx_count_sent(f, MCPP_FRAME_PROBE), 0);
  ASSERT_UINT_EQ(mcpp_engine_next_deadline(f->e), UINT64_MAX);
  /* After the handshake, one probe at a time for all its 5 s timeout. */
  fx_out(f, "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}", T0 + 30 * SEC);
  ASSERT_UINT_EQ(mcpp_engine_next_deadline(f->e), T0 + 2 * SEC); /* overdue */
  ASSERT_EQ(mcpp_engine_on_timer(f->e, T0 + 30 * SEC), 0);
  ASSERT_EQ(fx_count_sent(f, MCPP_FRAME_PROBE), 1);
  ASSERT_UINT_EQ(mcpp_engine_next_deadline(f->e), T0 + 35 * SEC);
  fx_run_until(f, T0 + 35 * SEC - 1);
  ASSERT_EQ(fx_count_sent(f, MCPP_FRAME_PROBE), 1);
  fx_done(f);
}

TEST(probe_method_setting_overrides_or_turns_probing_off) {
  fx *f = keepalive_fx(0);
  f->s.probe_method = "resources/list";
  fx_start(f, T0);
  fx_out(f, discover_request, T0);
  fx_recv(f, discover_result, T0);
  fx_run_until(f, T0 + SEC);
  const fx_frame *probe = fx_last_sent(f, MCPP_FRAME_PROBE);
  ASSERT(probe != NULL);
  ASSERT(strstr(probe->text, "\"method\":\"resources/list\",\"params\":{\"_meta\":") != NULL);
  ASSERT_STR_EQ(fx_last_event(f, MCPP_EV_PROBE)->proof, "probe:resources/list");
  fx_done(f);

  f = keepalive_fx(0);
  f->s.probe_method = "";
  fx_start(f, T0);
  fx_out(f, discover_request, T0);
  fx_recv(f, discover_result, T0);
  mcpp_engine_info info;
  mcpp_engine_get_info(f->e, &info);
  ASSERT(info.probe_method == NULL);
  /* Nothing to send and no process to watch: keepalive sleeps. */
  ASSERT_UINT_EQ(mcpp_engine_next_deadline(f->e), UINT64_MAX);
  fx_run_until(f, T0 + 30 * SEC);
  ASSERT_EQ(f->n_sent, 0);
  fx_done(f);
}

TEST(server_role_sends_no_automatic_probe) {
  fx *f = keepalive_fx(0);
  f->s.role = MCPP_ROLE_SERVER;
  fx_start(f, T0);
  ASSERT_EQ(fx_recv(f, discover_request, T0), MCPP_RECV_FORWARD);
  fx_out(f, discover_result, T0);
  mcpp_engine_info info;
  mcpp_engine_get_info(f->e, &info);
  ASSERT_STR_EQ(info.protocol_version, "2026-07-28");
  ASSERT_STR_EQ(info.peer_name, "mcp"); /* the client's name, from the envelope */
  ASSERT_EQ(info.unsupported, 1);
  /* 2026 forbids requests from server to client. */
  fx_run_until(f, T0 + 30 * SEC);
  ASSERT_EQ(f->n_sent, 0);
  fx_done(f);
}

TEST(info_names_the_freshest_proof) {
  fx *f = keepalive_fx(1);
  ASSERT_EQ(fx_try_start(f, T0), 0);
  mcpp_engine_info info;
  mcpp_engine_get_info(f->e, &info);
  ASSERT_EQ(info.freshest_proof, MCPP_PROOF_NONE);
  ASSERT(mcpp_proof_name(info.freshest_proof) == NULL);
  ASSERT_EQ(info.reading, 1);
  fx_recv(f, "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/message\"}", T0);
  mcpp_engine_get_info(f->e, &info);
  ASSERT_EQ(info.freshest_proof, MCPP_PROOF_TRAFFIC);
  ASSERT_UINT_EQ(info.last_traffic_us, T0);
  fx_run_until(f, T0 + SEC); /* keepalive: the process looked at, a ping */
  mcpp_engine_get_info(f->e, &info);
  ASSERT_EQ(info.freshest_proof, MCPP_PROOF_PROCESS);
  ASSERT_STR_EQ(mcpp_proof_name(info.freshest_proof), "process");
  ASSERT_UINT_EQ(info.last_process_us, T0 + SEC);
  ASSERT(info.probe_method == NULL); /* pings serve */
  fx_answer_last_ping(f, "\"result\":{}", T0 + SEC + 2 * MS);
  mcpp_engine_get_info(f->e, &info);
  ASSERT_EQ(info.freshest_proof, MCPP_PROOF_PING);
  ASSERT_UINT_EQ(info.last_ping_us, T0 + SEC + 2 * MS);
  ASSERT_UINT_EQ(info.last_traffic_us, T0 + SEC + 2 * MS); /* a pong is traffic */
  fx_recv(f, "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/message\"}", T0 + SEC + 3 * MS);
  mcpp_engine_get_info(f->e, &info);
  ASSERT_EQ(info.freshest_proof, MCPP_PROOF_TRAFFIC);
  fx_done(f);
}
