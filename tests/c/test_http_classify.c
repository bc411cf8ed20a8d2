/* HTTP answer classification (http_classify.c), issue 8 item 11: only a
 * 404 carrying JSON-RPC -32601 means "unsupported"; another 404 on a
 * session means the session expired. */
#include "engine_fixture.h"

#define CLASSIFY(status, body, session) \
  mcpp_http_classify((status), (body), sizeof(body) - 1, NULL, 0, (session))

TEST(http_2xx_is_the_answer) {
  ASSERT_EQ(CLASSIFY(200, "{}", 1), MCPP_HTTP_ANSWER);
  ASSERT_EQ(mcpp_http_classify(202, NULL, 0, NULL, 0, 0), MCPP_HTTP_ANSWER);
}

TEST(http_404_with_method_not_found_is_unsupported) {
  const char body[] = "{\"jsonrpc\":\"2.0\",\"id\":\"x\",\"error\":{\"code\":-32601,\"message\":\"Method not found\"}}";
  ASSERT_EQ(CLASSIFY(404, body, 1), MCPP_HTTP_UNSUPPORTED);
  ASSERT_EQ(CLASSIFY(404, body, 0), MCPP_HTTP_UNSUPPORTED);
}

TEST(http_other_404_on_a_session_means_it_expired) {
  ASSERT_EQ(CLASSIFY(404, "{\"jsonrpc\":\"2.0\",\"id\":null,\"error\":{\"code\":-32001,\"message\":\"Session not found\"}}", 1),
            MCPP_HTTP_SESSION_EXPIRED);
  ASSERT_EQ(CLASSIFY(404, "Not Found", 1), MCPP_HTTP_SESSION_EXPIRED);
  ASSERT_EQ(mcpp_http_classify(404, NULL, 0, NULL, 0, 1), MCPP_HTTP_SESSION_EXPIRED);
  /* -32601 as a string, or outside an error object, is not the verdict. */
  ASSERT_EQ(CLASSIFY(404, "{\"error\":{\"code\":\"-32601\"}}", 1), MCPP_HTTP_SESSION_EXPIRED);
  ASSERT_EQ(CLASSIFY(404, "{\"code\":-32601}", 1), MCPP_HTTP_SESSION_EXPIRED);
}

TEST(http_400_to_a_ping_on_a_session_means_the_server_lost_it) {
  /* The TS SDK's example servers (server-everything among them) answer a
   * session they do not know 400, not 404. A ping is never a bad request. */
  const char ping[] = "{\"jsonrpc\":\"2.0\",\"id\":\"mcpp-1\",\"method\":\"ping\"}";
  const char call[] = "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"tools/call\"}";
  const char lost[] = "{\"jsonrpc\":\"2.0\",\"error\":{\"code\":-32000,\"message\":\"Bad Request: No valid session ID provided\"},\"id\":null}";
  const char unknown[] = "{\"jsonrpc\":\"2.0\",\"id\":\"mcpp-1\",\"error\":{\"code\":-32601,\"message\":\"Method not found\"}}";
  ASSERT_EQ(mcpp_http_classify(400, lost, sizeof lost - 1, ping, sizeof ping - 1, 1), MCPP_HTTP_SESSION_EXPIRED);
  ASSERT_EQ(mcpp_http_classify(400, NULL, 0, ping, sizeof ping - 1, 1), MCPP_HTTP_SESSION_EXPIRED);
  /* Not without a session, not for another request (its params may be
   * bad), not a -32601 (a server that refuses ping so), not for a GET. */
  ASSERT_EQ(mcpp_http_classify(400, lost, sizeof lost - 1, ping, sizeof ping - 1, 0), MCPP_HTTP_FAILED);
  ASSERT_EQ(mcpp_http_classify(400, lost, sizeof lost - 1, call, sizeof call - 1, 1), MCPP_HTTP_FAILED);
  ASSERT_EQ(mcpp_http_classify(400, unknown, sizeof unknown - 1, ping, sizeof ping - 1, 1), MCPP_HTTP_FAILED);
  ASSERT_EQ(mcpp_http_classify(400, lost, sizeof lost - 1, NULL, 0, 1), MCPP_HTTP_FAILED);
  ASSERT_EQ(mcpp_http_classify(503, NULL, 0, ping, sizeof ping - 1, 1), MCPP_HTTP_FAILED);
}

TEST(http_404_without_a_session_and_other_statuses_fail) {
  ASSERT_EQ(CLASSIFY(404, "Not Found", 0), MCPP_HTTP_FAILED);
  ASSERT_EQ(CLASSIFY(500, "{\"error\":{\"code\":-32601}}", 1), MCPP_HTTP_FAILED);
  ASSERT_EQ(CLASSIFY(400, "", 1), MCPP_HTTP_FAILED);
  ASSERT_STR_EQ(mcpp_http_verdict_name(MCPP_HTTP_SESSION_EXPIRED), "session_expired");
}

/* The listening stream's backoff: 250 ms, doubling while it fails, never
 * past 30 s; back to 250 ms once a stream was open. */
TEST(http_listen_after_a_failure_waits_from_250_ms_doubling_to_30_s) {
  uint32_t d = 0, seen[10];
  for (int i = 0; i < 10; i++) {
    ASSERT_EQ(mcpp_http_listen_after(NULL, 0, 0, NULL, 0, &d), MCPP_HTTP_LISTEN_AGAIN);
    seen[i] = d;
  }
  ASSERT_EQ(250, (int)seen[0]);
  ASSERT_EQ(500, (int)seen[1]);
  ASSERT_EQ(16000, (int)seen[6]);
  ASSERT_EQ(30000, (int)seen[7]);
  ASSERT_EQ(30000, (int)seen[9]);
  ASSERT_EQ(mcpp_http_listen_after(NULL, 1, 200, NULL, 0, &d), MCPP_HTTP_LISTEN_AGAIN);
  ASSERT_EQ(250, (int)d);
}

/* "Try later" refusals back off like a failure; 405 and other refusals
 * end listening; a 404 is the session's end, unless its body says the
 * method is not there. */
TEST(http_listen_after_a_refusal_retries_only_what_says_try_later) {
  static const int later[] = {408, 429, 502, 503, 504};
  for (size_t i = 0; i < sizeof later / sizeof later[0]; i++) {
    uint32_t d = 500;
    ASSERT_EQ(mcpp_http_listen_after(NULL, 0, later[i], "", 0, &d), MCPP_HTTP_LISTEN_AGAIN);
    ASSERT_EQ(1000, (int)d);
  }
  static const int never[] = {400, 401, 403, 405, 406, 500, 501, 200};
  for (size_t i = 0; i < sizeof never / sizeof never[0]; i++) {
    uint32_t d = 500;
    ASSERT_EQ(mcpp_http_listen_after(NULL, 0, never[i], "", 0, &d), MCPP_HTTP_LISTEN_NEVER);
    ASSERT_EQ(0, (int)d);
  }
  uint32_t d = 0;
  ASSERT_EQ(mcpp_http_listen_after(NULL, 0, 404, "Not Found", 9, &d), MCPP_HTTP_LISTEN_EXPIRED);
  static const char gone[] = "{\"jsonrpc\":\"2.0\",\"id\":null,\"error\":{\"code\":-32601}}";
  ASSERT_EQ(mcpp_http_listen_after(NULL, 0, 404, gone, sizeof gone - 1, &d), MCPP_HTTP_LISTEN_NEVER);
  ASSERT_STR_EQ(mcpp_http_listen_step_name(MCPP_HTTP_LISTEN_EXPIRED), "expired");
  ASSERT_STR_EQ(mcpp_http_listen_step_name(MCPP_HTTP_LISTEN_AGAIN), "again");
  ASSERT_STR_EQ(mcpp_http_listen_step_name(MCPP_HTTP_LISTEN_NEVER), "never");
}

static const char REQ[] = "{\"jsonrpc\":\"2.0\",\"id\":\"mcpping-7\",\"method\":\"tools/list\"}";

static const char *answer(int status, const char *body, const char *frame) {
  static char out[512];
  size_t n = mcpp_http_error_answer(status, body, body ? strlen(body) : 0, frame,
                                    strlen(frame), out, sizeof out);
  ASSERT(n < sizeof out);
  return n ? out : NULL;
}

TEST(http_error_answer_keeps_the_servers_jsonrpc_error_for_our_id) {
  /* The TS SDK's refusal: id null, the request's id put in. */
  ASSERT_STR_EQ("{\"jsonrpc\":\"2.0\",\"id\":\"mcpping-7\",\"error\":{\"code\":-32000,"
                "\"message\":\"Bad Request: No valid session ID provided\"}}",
                answer(400, "{\"jsonrpc\":\"2.0\",\"error\":{\"code\":-32000,\"message\":"
                            "\"Bad Request: No valid session ID provided\"},\"id\":null}", REQ));
  /* Unsupported: the -32601 as the server wrote it, byte for byte. */
  ASSERT_STR_EQ("{\"jsonrpc\":\"2.0\",\"id\":\"mcpping-7\",\"error\":{\"code\": -32601, "
                "\"message\":\"Method not found\", \"data\":1e400}}",
                answer(404, " {\"jsonrpc\":\"2.0\",\"id\":5,\"error\":{\"code\": -32601, "
                            "\"message\":\"Method not found\", \"data\":1e400}} ", REQ));
}

TEST(http_error_answer_says_the_status_when_the_body_is_no_jsonrpc_error) {
  static const char *const bodies[] = {NULL, "", "<html>Unauthorized</html>",
                                       "{\"error\":\"invalid_token\"}",
                                       "{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{}}",
                                       "{\"jsonrpc\":\"2.0\",\"error\":{\"code\":1,\"message\":\"\xff\"}}"};
  for (size_t i = 0; i < sizeof bodies / sizeof *bodies; i++)
    ASSERT_STR_EQ("{\"jsonrpc\":\"2.0\",\"id\":\"mcpping-7\",\"error\":{\"code\":-32000,"
                  "\"message\":\"HTTP 401 Unauthorized\"}}",
                  answer(401, bodies[i], REQ));
  ASSERT_STR_EQ("{\"jsonrpc\":\"2.0\",\"id\":3,\"error\":{\"code\":-32000,"
                "\"message\":\"HTTP 599\"}}",
                answer(599, NULL, "{\"jsonrpc\":\"2.0\",\"method\":\"ping\",\"id\":3}"));
}

TEST(http_error_answer_is_nothing_for_a_notification_or_an_answer) {
  ASSERT(answer(500, NULL, "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}") == NULL);
  ASSERT(answer(500, NULL, "{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{}}") == NULL);
  ASSERT(answer(500, NULL, "not json") == NULL);
}

TEST(http_error_answer_reports_the_length_it_needs_when_out_is_short) {
  char out[8];
  size_t need = mcpp_http_error_answer(500, NULL, 0, REQ, sizeof REQ - 1, out, sizeof out);
  ASSERT_UINT_EQ(strlen("{\"jsonrpc\":\"2.0\",\"id\":\"mcpping-7\",\"error\":{\"code\":-32000,"
                        "\"message\":\"HTTP 500 Internal Server Error\"}}"),
                 need);
  ASSERT_STR_EQ("{\"jsonr", out);
}

static const char *unreadable(int status, const char *type, const char *body, const char *frame) {
  static char out[512];
  size_t n = mcpp_http_unreadable_answer(status, type, body, body ? strlen(body) : 0, frame,
                                         strlen(frame), out, sizeof out);
  return n ? out : NULL;
}

TEST(http_unreadable_answer_tells_the_request_when_a_2xx_body_is_not_json) {
  /* A URL that is a web page: the handshake learns why at once, not after
   * its timeout (both hosts waited 10 s, then said "no initialize result"). */
  ASSERT_STR_EQ("{\"jsonrpc\":\"2.0\",\"id\":\"mcpping-7\",\"error\":{\"code\":-32000,"
                "\"message\":\"the server answered HTTP 200 with text/html, not JSON\"}}",
                unreadable(200, " text/html; charset=utf-8", "<html></html>", REQ));
  ASSERT_STR_EQ("{\"jsonrpc\":\"2.0\",\"id\":\"mcpping-7\",\"error\":{\"code\":-32000,"
                "\"message\":\"the server answered HTTP 201 with a body that is not JSON\"}}",
                unreadable(201, NULL, "{oops", REQ));
  /* A type that would need escaping is left out, never quoted raw. */
  ASSERT(strstr(unreadable(200, "text/\"x", "<p>", REQ), "a body that is not JSON") != NULL);
  /* JSON or a blank body is the answer; a notification waits for nothing. */
  ASSERT(unreadable(200, "application/json", "{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{}}", REQ) == NULL);
  ASSERT(unreadable(200, "application/json", "[]", REQ) == NULL);
  ASSERT(unreadable(200, "text/html", " \r\n", REQ) == NULL);
  ASSERT(unreadable(200, "text/html", NULL, REQ) == NULL);
  ASSERT(unreadable(200, "text/html", "<html>",
                    "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}") == NULL);
}

/* A server that answers without end costs no more than the line bound: the
 * client stops there and the request is told why at once. */
TEST(http_oversize_answer_tells_the_request_the_bound_it_passed) {
  char out[256];
  size_t n = mcpp_http_oversize_answer(67108864, REQ, strlen(REQ), out, sizeof out);
  ASSERT_STR_EQ("{\"jsonrpc\":\"2.0\",\"id\":\"mcpping-7\",\"error\":{\"code\":-32000,"
                "\"message\":\"the server's answer is longer than 67108864 bytes "
                "(max_line_bytes)\"}}",
                out);
  ASSERT_UINT_EQ(strlen(out), n);
  ASSERT_UINT_EQ(n, mcpp_http_oversize_answer(67108864, REQ, strlen(REQ), NULL, 0));
  static const char note[] = "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}";
  ASSERT_UINT_EQ(0, mcpp_http_oversize_answer(10, note, sizeof note - 1, out, sizeof out));
}

static int ignore_event(void *arg, mcpp_sse_kind kind, const char *data, size_t len) {
  return 0;
}

/* SEP-1699: a POST's stream that gave an event ID is resumed after its
 * retry, or after the listening stream's backoff when it gave none; one
 * that gave no ID cannot be. */
TEST(http_resume_after_needs_an_event_id_and_waits_its_retry_or_backs_off) {
  mcpp_sse *s = mcpp_sse_new(0);
  uint32_t wait = 0;
  ASSERT_EQ(0, mcpp_sse_feed(s, "data: {}\n\n", 10, ignore_event, NULL));
  ASSERT_EQ(0, mcpp_http_resume_after(s, &wait));
  ASSERT_EQ(0, mcpp_sse_feed(s, "id: 1\ndata: \n\n", 14, ignore_event, NULL));
  ASSERT_EQ(1, mcpp_http_resume_after(s, &wait));
  ASSERT_EQ(250, (int)wait);
  ASSERT_EQ(1, mcpp_http_resume_after(s, &wait));
  ASSERT_EQ(500, (int)wait);
  ASSERT_EQ(0, mcpp_sse_feed(s, "retry: 1500\n\n", 13, ignore_event, NULL));
  ASSERT_EQ(1, mcpp_http_resume_after(s, &wait));
  ASSERT_EQ(1500, (int)wait);
  ASSERT_STR_EQ(MCPP_HTTP_LAST_EVENT_ID, "Last-Event-ID");
  mcpp_sse_free(s);
}

/* A request's answer stream over without the answer: resumed when an event
 * ID came (whether it broke or ended); else a clean end leaves the request
 * its deadline and a broken stream answers it in doubt now. */
TEST(http_answer_after_resumes_waits_or_says_the_answer_is_lost) {
  mcpp_sse *s = mcpp_sse_new(0);
  uint32_t wait = 0;
  ASSERT_EQ(0, mcpp_sse_feed(s, ": working\n\n", 11, ignore_event, NULL));
  ASSERT_EQ(MCPP_HTTP_ANSWER_WAIT, mcpp_http_answer_after(s, 0, &wait));
  ASSERT_EQ(MCPP_HTTP_ANSWER_LOST, mcpp_http_answer_after(s, 1, &wait));
  ASSERT_EQ(0, (int)wait);
  ASSERT_EQ(MCPP_HTTP_ANSWER_LOST, mcpp_http_answer_after(NULL, 1, &wait));
  ASSERT_EQ(0, mcpp_sse_feed(s, "id: 1\ndata: \n\n", 14, ignore_event, NULL));
  ASSERT_EQ(MCPP_HTTP_ANSWER_RESUME, mcpp_http_answer_after(s, 1, &wait));
  ASSERT_EQ(250, (int)wait);
  ASSERT_EQ(MCPP_HTTP_ANSWER_RESUME, mcpp_http_answer_after(s, 0, &wait));
  ASSERT_EQ(500, (int)wait);
  ASSERT_STR_EQ("resume", mcpp_http_answer_step_name(MCPP_HTTP_ANSWER_RESUME));
  ASSERT_STR_EQ("wait", mcpp_http_answer_step_name(MCPP_HTTP_ANSWER_WAIT));
  ASSERT_STR_EQ("lost", mcpp_http_answer_step_name(MCPP_HTTP_ANSWER_LOST));
  mcpp_sse_free(s);
}

#define IS_ANSWER(frame, msg) mcpp_http_is_answer(frame, strlen(frame), msg, strlen(msg))

TEST(http_is_answer_matches_a_result_or_error_under_the_request_id_byte_for_byte) {
  ASSERT_EQ(1, IS_ANSWER(REQ, "{\"jsonrpc\":\"2.0\",\"id\":\"mcpping-7\",\"result\":{}}"));
  ASSERT_EQ(1, IS_ANSWER(REQ, "{\"id\":\"mcpping-7\",\"error\":{\"code\":1,\"message\":\"x\"}}"));
  ASSERT_EQ(0, IS_ANSWER(REQ, "{\"id\":\"mcpping-70\",\"result\":{}}"));
  ASSERT_EQ(0, IS_ANSWER(REQ, "{\"id\":\"mcpping-7\",\"method\":\"ping\"}")); /* a request */
  ASSERT_EQ(0, IS_ANSWER(REQ, "{\"method\":\"notifications/progress\"}"));
  ASSERT_EQ(0, IS_ANSWER(REQ, "not json"));
  ASSERT_EQ(0, IS_ANSWER("{\"method\":\"notifications/initialized\"}", "{\"id\":null,\"result\":{}}"));
  ASSERT_EQ(1, IS_ANSWER("{\"id\":7,\"method\":\"x\"}", "{\"result\":{},\"id\":7}"));
}

/* A listening stream whose server asked for a retry is opened again at that
 * pace after it ends, and never sooner after a failure. */
TEST(http_listen_after_keeps_to_the_stream_retry) {
  mcpp_sse *s = mcpp_sse_new(0);
  uint32_t d = 0;
  ASSERT_EQ(0, mcpp_sse_feed(s, "retry: 5000\nid: 1\ndata: \n\n", 26, ignore_event, NULL));
  ASSERT_EQ(mcpp_http_listen_after(s, 1, 200, NULL, 0, &d), MCPP_HTTP_LISTEN_AGAIN);
  ASSERT_EQ(5000, (int)d);
  d = 250;
  ASSERT_EQ(mcpp_http_listen_after(s, 0, 0, NULL, 0, &d), MCPP_HTTP_LISTEN_AGAIN);
  ASSERT_EQ(5000, (int)d);
  d = 16000;
  ASSERT_EQ(mcpp_http_listen_after(s, 0, 503, "", 0, &d), MCPP_HTTP_LISTEN_AGAIN);
  ASSERT_EQ(30000, (int)d);
  ASSERT_EQ(mcpp_http_listen_after(s, 0, 405, "", 0, &d), MCPP_HTTP_LISTEN_NEVER);
  mcpp_sse_free(s);
}
