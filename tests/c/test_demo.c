/* The demo server's answers (mcpp_demo_answer): what `python -m
 * mcpping.demo` and node/demo-server.js both write, line for line. */
#include <stdlib.h>
#include <string.h>

#include "mcpping.h"
#include "task.h"

/* Asserts the answer to line is want (NULL: none). */
static void answers(const char *line, const char *want) {
  char *got = mcpp_demo_answer(line, strlen(line));
  if (want == NULL) {
    ASSERT(got == NULL);
    return;
  }
  ASSERT(got != NULL);
  ASSERT_STR_EQ(got, want);
  mcpp_config_free(got);
}

TEST(demo_answers_the_handshake_in_the_clients_version_or_its_newest) {
  answers("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"initialize\",\"params\":{\"protocolVersion\":\"2025-06-18\"}}\n",
          "{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{\"protocolVersion\":\"2025-06-18\",\"capabilities\":{\"tools\":{}},"
          "\"serverInfo\":{\"name\":\"mcpping-demo\",\"version\":\"" MCPP_VERSION "\"}}}");
  answers("{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"initialize\",\"params\":{\"protocolVersion\":\"2099-01-01\"}}",
          "{\"jsonrpc\":\"2.0\",\"id\":2,\"result\":{\"protocolVersion\":\"" MCPP_PROTOCOL_VERSION "\","
          "\"capabilities\":{\"tools\":{}},\"serverInfo\":{\"name\":\"mcpping-demo\",\"version\":\"" MCPP_VERSION "\"}}}");
}

TEST(demo_echoes_the_id_byte_for_byte_and_answers_nothing_else) {
  answers("{\"jsonrpc\":\"2.0\",\"id\":12345678901234567890,\"method\":\"ping\"}",
          "{\"jsonrpc\":\"2.0\",\"id\":12345678901234567890,\"result\":{}}");
  answers(" {\"jsonrpc\":\"2.0\",\"id\":\"a\\u00e9\",\"method\":\"ping\"} ",
          "{\"jsonrpc\":\"2.0\",\"id\":\"a\\u00e9\",\"result\":{}}");
  answers("{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}", NULL);
  answers("{\"jsonrpc\":\"2.0\",\"id\":3,\"result\":{}}", NULL);
  answers("[1,2]", NULL);
  answers(" \r\n", NULL);
  {
    char nul[] = {'\0', '\n'}; /* not blank: not JSON */
    char *got = mcpp_demo_answer(nul, sizeof nul);
    ASSERT(got != NULL);
    ASSERT_STR_EQ(got, "{\"jsonrpc\":\"2.0\",\"id\":null,\"error\":{\"code\":-32700,\"message\":\"Parse error\"}}");
    mcpp_config_free(got);
  }
  answers("", NULL);
  answers("not json", "{\"jsonrpc\":\"2.0\",\"id\":null,\"error\":{\"code\":-32700,\"message\":\"Parse error\"}}");
  answers("{\"jsonrpc\":\"2.0\",\"id\":{\n\"a\":1},\"method\":\"ping\"}",
          "{\"jsonrpc\":\"2.0\",\"id\":null,\"error\":{\"code\":-32600,\"message\":\"Invalid Request\"}}");
  answers("{\"jsonrpc\":\"2.0\",\"id\":\"\\u0000\",\"method\":\"ping\"}",
          "{\"jsonrpc\":\"2.0\",\"id\":\"\\u0000\",\"result\":{}}");
  answers("{\"jsonrpc\":\"2.0\",\"id\":\"\x01\",\"method\":\"ping\"}",
          "{\"jsonrpc\":\"2.0\",\"id\":null,\"error\":{\"code\":-32700,\"message\":\"Parse error\"}}");
  answers("{\"jsonrpc\":\"2.0\",\"id\":4,\"method\":\"resources/list\"}",
          "{\"jsonrpc\":\"2.0\",\"id\":4,\"error\":{\"code\":-32601,\"message\":\"Method not found\"}}");
}

TEST(demo_tools_answer_their_text_or_an_error_result) {
#define CALL(args) "{\"jsonrpc\":\"2.0\",\"id\":5,\"method\":\"tools/call\",\"params\":" args "}"
#define RESULT(text, err) \
  "{\"jsonrpc\":\"2.0\",\"id\":5,\"result\":{\"content\":[{\"type\":\"text\",\"text\":" text "}],\"isError\":" err "}}"
  answers(CALL("{\"name\":\"add\",\"arguments\":{\"a\":2,\"b\":40}}"), RESULT("\"42\"", "false"));
  answers(CALL("{\"name\":\"add\",\"arguments\":{\"a\":0.1,\"b\":0.2}}"), RESULT("\"0.30000000000000004\"", "false"));
  answers(CALL("{\"name\":\"add\",\"arguments\":{\"a\":\"1\",\"b\":2}}"),
          RESULT("\"bad arguments: add takes numbers 'a' and 'b'\"", "true"));
  answers(CALL("{\"name\":\"echo\",\"arguments\":{\"text\":\"h\\u00e9 \\\"q\\\"\\n\"}}"),
          RESULT("\"h\xc3\xa9 \\\"q\\\"\\n\"", "false"));
  answers(CALL("{\"name\":\"echo\"}"), RESULT("\"bad arguments: echo takes a string 'text'\"", "true"));
  answers(CALL("{\"name\":\"no\\\"pe\",\"arguments\":{}}"), RESULT("\"unknown tool: no\\\"pe\"", "true"));
  answers(CALL("{}"), RESULT("\"unknown tool: \"", "true"));
#undef CALL
#undef RESULT
}

TEST(demo_lists_its_two_tools) {
  char line[] = "{\"jsonrpc\":\"2.0\",\"id\":6,\"method\":\"tools/list\"}";
  char *got = mcpp_demo_answer(line, strlen(line));
  ASSERT(got != NULL);
  ASSERT(strstr(got, "{\"jsonrpc\":\"2.0\",\"id\":6,\"result\":{\"tools\":[{\"name\":\"echo\"") == got);
  ASSERT(strstr(got, "{\"name\":\"add\",\"description\":\"Adds two numbers.\"") != NULL);
  mcpp_config_free(got);
}
