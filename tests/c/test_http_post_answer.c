/* What the answer to a POST gives the engine (http_post_answer.c, issue
 * 22): one order of the rules, so both HTTP clients deliver the same. */
#include <string.h>

#include "engine_fixture.h"

static const char call[] = "{\"jsonrpc\":\"2.0\",\"id\":7,\"method\":\"tools/call\"}";
static const char note[] = "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}";

typedef struct {
  mcpp_http_post_step step;
  char msg[512];
} got;

static got answer(mcpp_http_body kind, int status, const char *type, const char *body, int whole,
                  const char *frame, int had_session) {
  got g;
  char out[512];
  const char *msg = NULL;
  size_t n = 0;
  g.step = mcpp_http_post_answer(kind, status, type, body, body ? strlen(body) : 0, whole, 4096,
                                 frame, strlen(frame), had_session, &msg, &n, out, sizeof out);
  g.msg[0] = '\0';
  if (msg) {
    memcpy(g.msg, msg, n);
    g.msg[n] = '\0';
  }
  return g;
}

TEST(http_post_answer_json_is_the_message_without_json_white_space) {
  got g = answer(MCPP_HTTP_BODY_JSON, 200, "application/json",
                 " \r\n{\"jsonrpc\":\"2.0\",\"id\":7,\"result\":{}}\n\t", 1, call, 1);
  ASSERT_EQ(g.step, MCPP_HTTP_POST_MESSAGE);
  ASSERT_STR_EQ(g.msg, "{\"jsonrpc\":\"2.0\",\"id\":7,\"result\":{}}");
  /* Blank: nothing (a 200 with no body to a notification). */
  ASSERT_EQ(answer(MCPP_HTTP_BODY_JSON, 200, NULL, " \n", 1, note, 1).step,
            MCPP_HTTP_POST_NOTHING);
  ASSERT_EQ(answer(MCPP_HTTP_BODY_NONE, 202, NULL, "ignored", 1, call, 1).step,
            MCPP_HTTP_POST_NOTHING);
  ASSERT_STR_EQ(mcpp_http_post_step_name(MCPP_HTTP_POST_EXPIRED), "expired");
}

TEST(http_post_answer_a_byte_order_mark_or_a_page_is_no_json_told_now) {
  /* A byte order mark is no JSON white space (Node's trim() took it). */
  got g = answer(MCPP_HTTP_BODY_JSON, 200, "application/json",
                 "\xef\xbb\xbf{\"jsonrpc\":\"2.0\",\"id\":7,\"result\":{}}", 1, call, 1);
  ASSERT_EQ(g.step, MCPP_HTTP_POST_MESSAGE);
  ASSERT(strstr(g.msg, "\"id\":7") && strstr(g.msg, "not JSON"));
  g = answer(MCPP_HTTP_BODY_JSON, 200, "text/html", "<html>hi</html>", 1, call, 1);
  ASSERT_STR_EQ(g.msg, "{\"jsonrpc\":\"2.0\",\"id\":7,\"error\":{\"code\":-32000,\"message\":"
                       "\"the server answered HTTP 200 with text/html, not JSON\"}}");
}

TEST(http_post_answer_past_the_bound_tells_the_request_or_judges_the_status) {
  got g = answer(MCPP_HTTP_BODY_JSON, 200, "application/json", "{\"jsonrpc\":", 0, call, 1);
  ASSERT_EQ(g.step, MCPP_HTTP_POST_MESSAGE);
  ASSERT(strstr(g.msg, "longer than 4096 bytes (max_line_bytes)"));
  ASSERT_EQ(answer(MCPP_HTTP_BODY_JSON, 200, NULL, "{", 0, note, 1).step, MCPP_HTTP_POST_NOTHING);
  /* An error cut at the bound is judged by its status: a 404 on a session. */
  ASSERT_EQ(answer(MCPP_HTTP_BODY_ERROR, 404, NULL, "{\"error\":{\"code\":-32601", 0, call, 1).step,
            MCPP_HTTP_POST_EXPIRED);
}

TEST(http_post_answer_errors_expire_the_session_or_answer_the_request) {
  ASSERT_EQ(answer(MCPP_HTTP_BODY_ERROR, 404, "text/plain", "Not Found", 1, call, 1).step,
            MCPP_HTTP_POST_EXPIRED);
  /* Without a session a 404 is a failure like any other. */
  got g = answer(MCPP_HTTP_BODY_ERROR, 404, "text/plain", "Not Found", 1, call, 0);
  ASSERT_EQ(g.step, MCPP_HTTP_POST_MESSAGE);
  ASSERT_STR_EQ(g.msg, "{\"jsonrpc\":\"2.0\",\"id\":7,\"error\":{\"code\":-32000,\"message\":"
                       "\"HTTP 404 Not Found\"}}");
  g = answer(MCPP_HTTP_BODY_ERROR, 400, "application/json",
             "{\"jsonrpc\":\"2.0\",\"id\":null,\"error\":{\"code\":-32600,\"message\":\"bad\"}}", 1,
             call, 1);
  ASSERT_STR_EQ(g.msg, "{\"jsonrpc\":\"2.0\",\"id\":7,\"error\":{\"code\":-32600,\"message\":\"bad\"}}");
  /* A notification waits for nothing. */
  ASSERT_EQ(answer(MCPP_HTTP_BODY_ERROR, 500, NULL, NULL, 1, note, 1).step, MCPP_HTTP_POST_NOTHING);
}

TEST(http_post_answer_says_how_long_an_answer_that_did_not_fit_is) {
  char out[8];
  const char *msg = out;
  size_t n = 0;
  ASSERT_EQ(mcpp_http_post_answer(MCPP_HTTP_BODY_ERROR, 503, NULL, NULL, 0, 1, 0, call,
                                  strlen(call), 1, &msg, &n, out, sizeof out),
            MCPP_HTTP_POST_MESSAGE);
  ASSERT(msg == NULL);
  ASSERT_EQ(n, strlen("{\"jsonrpc\":\"2.0\",\"id\":7,\"error\":{\"code\":-32000,\"message\":"
                      "\"HTTP 503 Service Unavailable\"}}"));
  /* Sized by a first call with no room at all. */
  ASSERT_EQ(mcpp_http_post_answer(MCPP_HTTP_BODY_ERROR, 503, NULL, NULL, 0, 1, 0, call,
                                  strlen(call), 1, &msg, &n, NULL, 0),
            MCPP_HTTP_POST_MESSAGE);
  ASSERT(msg == NULL && n > 0);
}
