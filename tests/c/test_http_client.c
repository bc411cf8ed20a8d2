/* The Streamable HTTP client's requests and answers (http_client.c, issue
 * 22): one set of headers, one way to read each answer, pings alone resent
 * on a new session. */
#include <stdlib.h>
#include <string.h>

#include "engine_fixture.h"

/* Joins headers as "Name: value|Name: value" for one comparison. */
static const char *joined(mcpp_http_method m, const mcpp_http_header *extra, size_t n_extra,
                          const char *session, const char *version) {
  static char buf[512];
  mcpp_http_header h[8];
  size_t n = mcpp_http_request_headers(m, extra, n_extra, session, version, h, 8);
  buf[0] = '\0';
  for (size_t i = 0; i < n && i < 8; i++) {
    if (i) strcat(buf, "|");
    strcat(buf, h[i].name);
    strcat(buf, ": ");
    strcat(buf, h[i].value);
  }
  return buf;
}

TEST(http_post_headers_accept_json_and_sse_and_carry_the_session) {
  ASSERT_STR_EQ("Content-Type: application/json|Accept: application/json, text/event-stream",
                joined(MCPP_HTTP_POST, NULL, 0, NULL, ""));
  ASSERT_STR_EQ("Content-Type: application/json|Accept: application/json, text/event-stream|"
                "Mcp-Session-Id: s1|MCP-Protocol-Version: 2025-11-25",
                joined(MCPP_HTTP_POST, NULL, 0, "s1", "2025-11-25"));
}

TEST(http_get_asks_for_an_event_stream_and_delete_for_nothing) {
  ASSERT_STR_EQ("Accept: text/event-stream|Mcp-Session-Id: s1",
                joined(MCPP_HTTP_GET, NULL, 0, "s1", NULL));
  ASSERT_STR_EQ("Mcp-Session-Id: s1|MCP-Protocol-Version: v",
                joined(MCPP_HTTP_DELETE, NULL, 0, "s1", "v"));
}

TEST(http_callers_headers_come_first_and_never_replace_mcppings) {
  const mcpp_http_header extra[] = {{"Authorization", "Bearer t"},
                                    {"accept", "text/html"},
                                    {"MCP-SESSION-ID", "forged"},
                                    {"X-Trace", "1"},
                                    {"content-type", "text/plain"},
                                    {"Mcp-Protocol-Version", "1999"},
                                    {NULL, "skipped"}};
  ASSERT_STR_EQ("Authorization: Bearer t|X-Trace: 1|Content-Type: application/json|"
                "Accept: application/json, text/event-stream",
                joined(MCPP_HTTP_POST, extra, sizeof extra / sizeof *extra, NULL, NULL));
}

TEST(http_request_headers_count_what_does_not_fit) {
  const mcpp_http_header extra[] = {{"A", "1"}, {"B", "2"}};
  mcpp_http_header h[2];
  ASSERT_UINT_EQ(6, mcpp_http_request_headers(MCPP_HTTP_POST, extra, 2, "s", "v", h, 2));
  ASSERT_STR_EQ("B", h[1].name);
  ASSERT_UINT_EQ(5, mcpp_http_request_headers(MCPP_HTTP_GET, extra, 2, "s", "v", NULL, 0));
}

TEST(http_post_answer_is_read_as_sse_json_or_nothing_by_status_and_type) {
  ASSERT_EQ(MCPP_HTTP_BODY_SSE, mcpp_http_body_kind(MCPP_HTTP_POST, 200, "text/event-stream"));
  ASSERT_EQ(MCPP_HTTP_BODY_SSE,
            mcpp_http_body_kind(MCPP_HTTP_POST, 200, " Text/Event-Stream ; charset=utf-8"));
  ASSERT_EQ(MCPP_HTTP_BODY_JSON, mcpp_http_body_kind(MCPP_HTTP_POST, 200, "application/json"));
  ASSERT_EQ(MCPP_HTTP_BODY_JSON, mcpp_http_body_kind(MCPP_HTTP_POST, 200, NULL));
  ASSERT_EQ(MCPP_HTTP_BODY_JSON,
            mcpp_http_body_kind(MCPP_HTTP_POST, 200, "text/event-streams"));
  ASSERT_EQ(MCPP_HTTP_BODY_NONE, mcpp_http_body_kind(MCPP_HTTP_POST, 202, NULL));
  ASSERT_EQ(MCPP_HTTP_BODY_SSE, mcpp_http_body_kind(MCPP_HTTP_POST, 202, "text/event-stream"));
  ASSERT_EQ(MCPP_HTTP_BODY_ERROR, mcpp_http_body_kind(MCPP_HTTP_POST, 404, "text/event-stream"));
  ASSERT_EQ(MCPP_HTTP_BODY_ERROR, mcpp_http_body_kind(MCPP_HTTP_POST, 301, "application/json"));
  ASSERT_STR_EQ("json", mcpp_http_body_name(MCPP_HTTP_BODY_JSON));
}

TEST(http_listening_stream_opens_only_as_a_200_event_stream) {
  ASSERT_EQ(MCPP_HTTP_BODY_SSE, mcpp_http_body_kind(MCPP_HTTP_GET, 200, "text/event-stream"));
  ASSERT_EQ(MCPP_HTTP_BODY_ERROR, mcpp_http_body_kind(MCPP_HTTP_GET, 200, "application/json"));
  ASSERT_EQ(MCPP_HTTP_BODY_ERROR, mcpp_http_body_kind(MCPP_HTTP_GET, 204, "text/event-stream"));
  ASSERT_EQ(MCPP_HTTP_BODY_ERROR, mcpp_http_body_kind(MCPP_HTTP_GET, 405, NULL));
  ASSERT_EQ(MCPP_HTTP_BODY_NONE, mcpp_http_body_kind(MCPP_HTTP_DELETE, 405, NULL));
  ASSERT_STR_EQ("GET", mcpp_http_method_name(MCPP_HTTP_GET));
}

TEST(http_only_pings_are_resent_on_a_new_session) {
  static const char ping[] = "{\"jsonrpc\":\"2.0\",\"id\":\"k1\",\"method\":\"ping\"}";
  static const char call[] = "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"tools/call\"}";
  static const char note[] = "{\"jsonrpc\":\"2.0\",\"method\":\"ping\"}";
  ASSERT(mcpp_http_resends(ping, sizeof ping - 1));
  ASSERT(!mcpp_http_resends(call, sizeof call - 1));
  ASSERT(!mcpp_http_resends(note, sizeof note - 1));
  ASSERT(!mcpp_http_resends("", 0));
  ASSERT(!mcpp_http_resends(NULL, 0));
}

/* Not HTTP alone: any guard whose transport has no stream open answers the
 * engine's ping this way (guard.py, guard.js). */
TEST(ping_unreachable_answer_is_unsupported_under_the_pings_id) {
  char out[160];
  static const char ping[] = "{\"jsonrpc\":\"2.0\",\"id\":\"mcpping-ka-3\",\"method\":\"ping\"}";
  size_t n = mcpp_ping_unreachable_answer(ping, sizeof ping - 1, out, sizeof out);
  ASSERT_STR_EQ("{\"jsonrpc\":\"2.0\",\"id\":\"mcpping-ka-3\",\"error\":{\"code\":-32601,"
                "\"message\":\"mcpping: no stream to the peer to carry a ping\"}}",
                out);
  ASSERT_UINT_EQ(strlen(out), n);
  char small[8];
  ASSERT_UINT_EQ(n, mcpp_ping_unreachable_answer(ping, sizeof ping - 1, small, sizeof small));
  ASSERT_UINT_EQ(0, mcpp_ping_unreachable_answer("{\"jsonrpc\":\"2.0\",\"method\":\"ping\"}", 33,
                                                 out, sizeof out));
  ASSERT_UINT_EQ(0, mcpp_ping_unreachable_answer("[", 1, out, sizeof out));
}

/* A request nobody serves is refused at once, under its id as the peer
 * wrote it (a long, escaped or numeric id included), so the peer does not
 * wait for an answer; nothing else is answered. */
TEST(unserved_request_answer_refuses_requests_only) {
  char out[256];
  static const char roots[] =
      "{\"jsonrpc\":\"2.0\",\"id\":\"a\\\"b\",\"method\":\"roots/list\",\"params\":{}}";
  size_t n = mcpp_unserved_request_answer(roots, sizeof roots - 1, out, sizeof out);
  ASSERT_STR_EQ("{\"jsonrpc\":\"2.0\",\"id\":\"a\\\"b\",\"error\":{\"code\":-32601,"
                "\"message\":\"Method not found\"}}",
                out);
  ASSERT_UINT_EQ(strlen(out), n);
  static const char big_id[] = "{\"id\":12345678901234567890123,\"method\":\"sampling/createMessage\"}";
  n = mcpp_unserved_request_answer(big_id, sizeof big_id - 1, NULL, 0);
  ASSERT(n > 0);
  char *sized = malloc(n + 1);
  ASSERT(sized != NULL);
  ASSERT_UINT_EQ(n, mcpp_unserved_request_answer(big_id, sizeof big_id - 1, sized, n + 1));
  ASSERT(strstr(sized, "\"id\":12345678901234567890123,") != NULL);
  free(sized);
#define NONE(text) ASSERT_UINT_EQ(0, mcpp_unserved_request_answer((text), strlen(text), out, sizeof out))
  NONE("{\"jsonrpc\":\"2.0\",\"method\":\"notifications/progress\"}");
  NONE("{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{}}");
  NONE("{\"jsonrpc\":\"2.0\",\"id\":null,\"method\":\"roots/list\"}");
  NONE("[{\"id\":1,\"method\":\"roots/list\"}]");
  NONE("{\"id\":1,\"method\":");
#undef NONE
  ASSERT_UINT_EQ(0, mcpp_unserved_request_answer(NULL, 0, out, sizeof out));
}

TEST(http_header_problem_refuses_what_would_break_the_request) {
#define PROBLEM(n, v) mcpp_http_header_problem((n), strlen(n), (v), strlen(v))
  ASSERT(PROBLEM("Authorization", "Bearer a.b-c\tx") == NULL);
  ASSERT(PROBLEM("X-My_Header!#$%&'*+-.^`|~9", "caf\xc3\xa9") == NULL); /* obs-text is fine */
  ASSERT_STR_EQ("is not an HTTP header name (it is empty)", PROBLEM("", "x"));
  ASSERT_STR_EQ("is not an HTTP header name (letters, digits and !#$%&'*+-.^_`|~ only)",
                PROBLEM("Bad Name", "x"));
  ASSERT(PROBLEM("a:b", "x") != NULL);
  ASSERT_STR_EQ("has a control character in its value (CR, LF and the like would split the request)",
                PROBLEM("X", "a\r\nInjected: 1"));
  ASSERT(PROBLEM("X", "a\x7f") != NULL);
  ASSERT(mcpp_http_header_problem("X", 1, "a\0b", 3) != NULL);
  /* A character past Latin-1 (node:http and http.client refuse it at the request). */
  ASSERT_STR_EQ("has a character past Latin-1 in its value (HTTP sends a header value a byte a "
                "character)", PROBLEM("X", "5 \xe2\x82\xac"));
  ASSERT(PROBLEM("X", "\xc3") != NULL);  /* no UTF-8 */
  ASSERT(PROBLEM("X", "\xe9") != NULL);
#undef PROBLEM
}
