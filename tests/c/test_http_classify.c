/* HTTP answer classification (http_classify.c), issue 8 item 11: only a
 * 404 carrying JSON-RPC -32601 means "unsupported"; another 404 on a
 * session means the session expired. */
#include "engine_fixture.h"

#define CLASSIFY(status, body, session) \
  mcpp_http_classify((status), (body), sizeof(body) - 1, (session))

TEST(http_2xx_is_the_answer) {
  ASSERT_EQ(CLASSIFY(200, "{}", 1), MCPP_HTTP_ANSWER);
  ASSERT_EQ(mcpp_http_classify(202, NULL, 0, 0), MCPP_HTTP_ANSWER);
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
  ASSERT_EQ(mcpp_http_classify(404, NULL, 0, 1), MCPP_HTTP_SESSION_EXPIRED);
  /* -32601 as a string, or outside an error object, is not the verdict. */
  ASSERT_EQ(CLASSIFY(404, "{\"error\":{\"code\":\"-32601\"}}", 1), MCPP_HTTP_SESSION_EXPIRED);
  ASSERT_EQ(CLASSIFY(404, "{\"code\":-32601}", 1), MCPP_HTTP_SESSION_EXPIRED);
}

TEST(http_404_without_a_session_and_other_statuses_fail) {
  ASSERT_EQ(CLASSIFY(404, "Not Found", 0), MCPP_HTTP_FAILED);
  ASSERT_EQ(CLASSIFY(500, "{\"error\":{\"code\":-32601}}", 1), MCPP_HTTP_FAILED);
  ASSERT_EQ(CLASSIFY(400, "", 1), MCPP_HTTP_FAILED);
  ASSERT_STR_EQ(mcpp_http_verdict_name(MCPP_HTTP_SESSION_EXPIRED), "session_expired");
}

/* The listening stream's backoff: 250 ms, doubling, never past 30 s. */
TEST(http_relisten_delay_doubles_from_250_ms_to_30_s) {
  uint32_t d = 0, seen[10];
  for (int i = 0; i < 10; i++) seen[i] = d = mcpp_http_relisten_delay_ms(d);
  ASSERT_EQ(250, (int)seen[0]);
  ASSERT_EQ(500, (int)seen[1]);
  ASSERT_EQ(16000, (int)seen[6]);
  ASSERT_EQ(30000, (int)seen[7]);
  ASSERT_EQ(30000, (int)seen[9]);
}
