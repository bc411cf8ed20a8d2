/* The client handshake machine: initialize, the server/discover fallback,
 * era detection and its sentences, without any I/O. */
#include <stdlib.h>
#include <string.h>

#include "mcpping.h"
#include "task.h"

static const char *next_request(mcpp_client_hs *hs, const char *want_id) {
  const char *id = NULL;
  size_t len = 0;
  ASSERT_EQ(MCPP_CHS_SEND, mcpp_client_hs_get_state(hs));
  const char *msg = mcpp_client_hs_request(hs, &len, &id);
  ASSERT(msg != NULL);
  ASSERT_EQ(strlen(msg), len);
  ASSERT(strcmp(id, want_id) == 0);
  ASSERT_EQ(MCPP_CHS_WAIT, mcpp_client_hs_get_state(hs));
  return msg;
}

static void answer(mcpp_client_hs *hs, const char *msg) {
  mcpp_client_hs_answer(hs, msg, strlen(msg));
}

static void check_error(const mcpp_client_hs *hs, mcpp_client_hs_error_kind k,
                        const char *sentence) {
  ASSERT_EQ(MCPP_CHS_FAILED, mcpp_client_hs_get_state(hs));
  ASSERT_EQ(k, mcpp_client_hs_error_kind_of(hs));
  if (strcmp(mcpp_client_hs_error(hs), sentence) != 0) {
    fprintf(stderr, "got: %s\n", mcpp_client_hs_error(hs));
    ASSERT(0);
  }
}

TEST(client_hs_initialize_answered_opens_a_classic_session) {
  mcpp_client_hs *hs = mcpp_client_hs_new(2000);
  const char *req = next_request(hs, "mcpping-initialize");
  ASSERT(strstr(req, "\"method\":\"initialize\"") != NULL);
  ASSERT(strstr(req, "\"protocolVersion\":\"2025-11-25\"") != NULL);
  ASSERT(strstr(req, "\"clientInfo\":{\"name\":\"mcpping\"") != NULL);
  answer(hs, "{\"jsonrpc\":\"2.0\",\"id\":\"mcpping-initialize\",\"result\":"
             "{\"protocolVersion\":\"2025-06-18\",\"serverInfo\":{\"name\":"
             "\"srv\",\"version\":\"1\"},\"capabilities\":{}}}");
  ASSERT_EQ(MCPP_CHS_DONE, mcpp_client_hs_get_state(hs));
  ASSERT(strcmp(mcpp_client_hs_version(hs), "2025-06-18") == 0);
  ASSERT(strcmp(mcpp_client_hs_state_name(MCPP_CHS_DONE), "done") == 0);
  ASSERT_EQ(0, mcpp_client_hs_modern(hs));
  ASSERT(strcmp(mcpp_client_hs_server_name(hs), "srv") == 0);
  ASSERT(strstr(mcpp_client_hs_server_info(hs), "\"srv\"") != NULL);
  ASSERT(strstr(mcpp_client_hs_result(hs), "\"protocolVersion\"") != NULL);
  size_t n = 0;
  const char *note = mcpp_client_hs_notification(hs, &n);
  ASSERT(note != NULL && strstr(note, "notifications/initialized") != NULL);
  ASSERT_EQ(strlen(note), n);
  mcpp_client_hs_free(hs);
}

TEST(client_hs_refused_initialize_falls_back_to_discover_on_2026) {
  mcpp_client_hs *hs = mcpp_client_hs_new(2000);
  next_request(hs, "mcpping-initialize");
  answer(hs, "{\"jsonrpc\":\"2.0\",\"id\":\"mcpping-initialize\",\"error\":"
             "{\"code\":-32601,\"message\":\"Method not found\"}}");
  const char *req = next_request(hs, "mcpping-discover");
  ASSERT(strstr(req, "\"method\":\"server/discover\"") != NULL);
  ASSERT(strstr(req, "\"io.modelcontextprotocol/protocolVersion\":"
                     "\"2026-07-28\"") != NULL);
  answer(hs, "{\"jsonrpc\":\"2.0\",\"id\":\"mcpping-discover\",\"result\":{"
             "\"supportedVersions\":[\"2026-07-28\"],\"_meta\":{\"io."
             "modelcontextprotocol/serverInfo\":{\"name\":\"modern\"}}}}");
  ASSERT_EQ(MCPP_CHS_DONE, mcpp_client_hs_get_state(hs));
  ASSERT(strcmp(mcpp_client_hs_version(hs), "2026-07-28") == 0);
  ASSERT_EQ(1, mcpp_client_hs_modern(hs));
  ASSERT(strcmp(mcpp_client_hs_server_name(hs), "modern") == 0);
  ASSERT(mcpp_client_hs_notification(hs, NULL) == NULL);
  mcpp_client_hs_free(hs);
}

TEST(client_hs_discover_without_2026_says_both_refusals_and_the_versions) {
  mcpp_client_hs *hs = mcpp_client_hs_new(2000);
  next_request(hs, "mcpping-initialize");
  answer(hs, "{\"id\":\"mcpping-initialize\",\"error\":{\"code\":-32601,"
             "\"message\":\"Method not found\"}}");
  next_request(hs, "mcpping-discover");
  answer(hs, "{\"id\":\"mcpping-discover\",\"result\":{\"supportedVersions\":"
             "[\"2099-01-01\"]}}");
  check_error(hs, MCPP_CHS_VERSION,
              "initialize failed: -32601 Method not found; server/discover "
              "lists protocol versions [\"2099-01-01\"], and mcpping speaks "
              "2025-11-25 and 2026-07-28");
  mcpp_client_hs_free(hs);
  hs = mcpp_client_hs_new(2000);
  next_request(hs, "mcpping-initialize");
  answer(hs, "{\"id\":\"mcpping-initialize\",\"error\":{\"code\":-32000,"
             "\"message\":\"HTTP 400 Bad Request\"}}");
  next_request(hs, "mcpping-discover");
  answer(hs, "{\"id\":\"mcpping-discover\",\"error\":{\"code\":-32601,"
             "\"message\":\"Method not found\"}}");
  check_error(hs, MCPP_CHS_REFUSED,
              "initialize failed: -32000 HTTP 400 Bad Request; "
              "server/discover failed: -32601 Method not found");
  mcpp_client_hs_free(hs);
}

TEST(client_hs_timeout_and_close_say_one_sentence_each) {
  mcpp_client_hs *hs = mcpp_client_hs_new(2000);
  next_request(hs, "mcpping-initialize");
  mcpp_client_hs_timed_out(hs);
  check_error(hs, MCPP_CHS_TIMED_OUT, "no initialize result after 2 s");
  mcpp_client_hs_free(hs);
  hs = mcpp_client_hs_new(1500);
  next_request(hs, "mcpping-initialize");
  answer(hs, "{\"id\":\"mcpping-initialize\",\"error\":{\"code\":-32601,"
             "\"message\":\"no\"}}");
  next_request(hs, "mcpping-discover");
  mcpp_client_hs_timed_out(hs);
  check_error(hs, MCPP_CHS_TIMED_OUT, "no server/discover result after 1.5 s");
  mcpp_client_hs_free(hs);
  /* What the transport saw is added; an empty one adds nothing. */
  hs = mcpp_client_hs_new(2000);
  next_request(hs, "mcpping-initialize");
  mcpp_client_hs_timed_out_because(hs, "the server wrote a line that is not JSON-RPC: \"x\"");
  check_error(hs, MCPP_CHS_TIMED_OUT,
              "no initialize result after 2 s; the server wrote a line that "
              "is not JSON-RPC: \"x\"");
  mcpp_client_hs_free(hs);
  hs = mcpp_client_hs_new(2000);
  next_request(hs, "mcpping-initialize");
  mcpp_client_hs_timed_out_because(hs, "");
  check_error(hs, MCPP_CHS_TIMED_OUT, "no initialize result after 2 s");
  mcpp_client_hs_free(hs);
  hs = mcpp_client_hs_new(2000);
  next_request(hs, "mcpping-initialize");
  mcpp_client_hs_closed(hs, "stdout closed", 3, 0);
  check_error(hs, MCPP_CHS_CLOSED,
              "the server ended before answering initialize: server exited "
              "with status 3; stdout closed");
  mcpp_client_hs_free(hs);
  hs = mcpp_client_hs_new(2000);
  next_request(hs, "mcpping-initialize");
  mcpp_client_hs_closed(hs, NULL, -1, 0);
  check_error(hs, MCPP_CHS_CLOSED, "the connection closed during initialize");
  mcpp_client_hs_free(hs);
}

TEST(client_hs_malformed_answers_fail_without_crashing) {
  const char *bad[] = {"", "[]", "{", "{\"result\":3}", "{\"result\":null}"};
  for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
    mcpp_client_hs *hs = mcpp_client_hs_new(1000);
    next_request(hs, "mcpping-initialize");
    answer(hs, bad[i]);
    ASSERT_EQ(MCPP_CHS_FAILED, mcpp_client_hs_get_state(hs));
    ASSERT_EQ(MCPP_CHS_MALFORMED, mcpp_client_hs_error_kind_of(hs));
    mcpp_client_hs_free(hs);
  }
}

TEST(client_envelope_adds_the_2026_meta_and_keeps_what_is_there) {
  const char *req = "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/list\"}";
  size_t n = 0;
  char *out = mcpp_client_envelope(req, strlen(req), &n);
  ASSERT(out != NULL);
  ASSERT_EQ(strlen(out), n);
  ASSERT(strstr(out, "\"params\":{\"_meta\":{\"io.modelcontextprotocol/"
                     "protocolVersion\":\"2026-07-28\"") != NULL);
  ASSERT(strstr(out, "clientCapabilities\":{}") != NULL);
  free(out);
  req = "{\"id\":1,\"method\":\"tools/call\",\"params\":{\"name\":\"x\","
        "\"_meta\":{\"progressToken\":7}}}";
  out = mcpp_client_envelope(req, strlen(req), NULL);
  ASSERT(strstr(out, "\"progressToken\":7") != NULL);
  ASSERT(strstr(out, "\"name\":\"x\"") != NULL);
  ASSERT(strstr(out, "2026-07-28") != NULL);
  free(out);
  ASSERT(mcpp_client_envelope("{\"id\":1}", 8, NULL) == NULL);
  ASSERT(mcpp_client_envelope("[", 1, NULL) == NULL);
}

/* The whole envelope as mcpping writes it, and its members one by one. */
#define ENV_VERSION "\"io.modelcontextprotocol/protocolVersion\":\"2026-07-28\""
#define ENV_INFO                                       \
  "\"io.modelcontextprotocol/clientInfo\":{\"name\":" \
  "\"mcpping\",\"version\":\"" MCPP_VERSION "\"}"
#define ENV_CAPS "\"io.modelcontextprotocol/clientCapabilities\":{}"
#define ENV ENV_VERSION "," ENV_INFO "," ENV_CAPS

static void expect_envelope(const char *req, const char *want) {
  size_t n = 0;
  char *out = mcpp_client_envelope(req, strlen(req), &n);
  ASSERT(out != NULL);
  ASSERT_EQ(strlen(want), n);
  ASSERT_STR_EQ(want, out);
  free(out);
}

/* Numbers, escapes, spacing and key order that a parse-and-print would
 * respell; each case below must come out as written plus the envelope. */
#define ODD_ARGS                                                        \
  "{ \"n\" : 12345678901234567890,\"f\":1.0,\"e\":1e2,\"z\":-0,\"s\":" \
  "\"\\u00e9\\/\" }"

TEST(client_envelope_keeps_every_byte_when_adding_params) {
  expect_envelope(
      "{\"method\":\"tools/list\" ,\"id\":12345678901234567890 ,\"x\":1.0}\n",
      "{\"method\":\"tools/list\" ,\"id\":12345678901234567890 ,\"x\":1.0"
      ",\"params\":{\"_meta\":{" ENV "}}}\n");
}

TEST(client_envelope_keeps_every_byte_when_adding_meta_to_params) {
  expect_envelope(
      "{\"id\":1,\"params\":{\"name\":\"x\",\"arguments\":" ODD_ARGS
      "\n},\"method\":\"tools/call\"}",
      "{\"id\":1,\"params\":{\"name\":\"x\",\"arguments\":" ODD_ARGS
      "\n,\"_meta\":{" ENV "}},\"method\":\"tools/call\"}");
  expect_envelope("{\"method\":\"m\",\"params\":{ \t}}",
                  "{\"method\":\"m\",\"params\":{ \t\"_meta\":{" ENV "}}}");
}

TEST(client_envelope_fills_an_empty_or_partial_meta_in_place) {
  expect_envelope("{\"method\":\"m\",\"params\":{\"_meta\":{ }}}",
                  "{\"method\":\"m\",\"params\":{\"_meta\":{ " ENV "}}}");
  expect_envelope(
      "{\"method\":\"m\",\"params\":{\"_meta\":{\"progressToken\":"
      "12345678901234567890,\"s\":\"\\u00e9\"},\"a\":" ODD_ARGS "}}",
      "{\"method\":\"m\",\"params\":{\"_meta\":{\"progressToken\":"
      "12345678901234567890,\"s\":\"\\u00e9\"," ENV "},\"a\":" ODD_ARGS
      "}}");
}

TEST(client_envelope_lets_the_applications_own_envelope_key_win) {
  /* The app's version (spelled with an escape) stays; it is not added
   * again, and the other two members are. */
  expect_envelope(
      "{\"method\":\"m\",\"params\":{\"_meta\":{\"io.modelcontextprotocol/"
      "protocolVersio\\u006e\":\"2025-01-01\"}}}",
      "{\"method\":\"m\",\"params\":{\"_meta\":{\"io.modelcontextprotocol/"
      "protocolVersio\\u006e\":\"2025-01-01\"," ENV_INFO "," ENV_CAPS "}}}");
  const char *all = "{\"method\":\"m\",\"params\":{\"_meta\":{" ENV "}}}";
  expect_envelope(all, all);
}

TEST(client_envelope_leaves_malformed_or_odd_requests_alone) {
  const char *bad[] = {
      "{\"method\":\"m\",\"params\":[1,2]}",
      "{\"method\":\"m\",\"params\":{\"_meta\":[]}}",
      "{\"method\":\"m\",\"params\":{\"_meta\":null}}",
      "{\"method\":\"m\",\"params\":{},\"params\":{}}",
      "{\"method\":\"m\",\"params\":{\"_meta\":{},\"_meta\":{}}}",
      "{\"method\":3}",
      "{\"method\":\"m\",\"params\":{\"a\":01}}",
      "{\"method\":\"m\",\"params\":{\"a\":1,}}",
      "{\"method\":\"m\"",
      "{\"method\":\"m\"} x",
      "[{\"method\":\"m\"}]",
      "",
  };
  for (size_t i = 0; i < sizeof bad / sizeof *bad; i++)
    ASSERT(mcpp_client_envelope(bad[i], strlen(bad[i]), NULL) == NULL);
  /* Only len bytes are read: a valid prefix is edited, the rest ignored. */
  const char *req = "{\"method\":\"m\"}garbage";
  size_t n = 0;
  char *out = mcpp_client_envelope(req, 14, &n);
  ASSERT_STR_EQ("{\"method\":\"m\",\"params\":{\"_meta\":{" ENV "}}}", out);
  free(out);
}
