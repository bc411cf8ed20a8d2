/* The top-level JSON scanner: spans of wanted keys, values skipped
 * structurally, malformed text rejected. */
#include <string.h>

#include "engine/scan.h"
#include "task.h"

static int scan(const char *text, mcpp__msg *m) {
  return mcpp__scan_message(text, strlen(text), m);
}

#define ASSERT_SPAN(span, str) ASSERT_MEM_EQ((span).p, (span).n, str)

TEST(scan_records_spans_of_wanted_keys) {
  mcpp__msg m;
  ASSERT_EQ(scan("{\"jsonrpc\":\"2.0\",\"id\":12345678901234567890123,"
                 "\"method\":\"tools/call\",\"params\":{\"a\":[1,{\"b\":\"}\"}]}}", &m), 0);
  ASSERT_SPAN(m.id, "12345678901234567890123");
  ASSERT_SPAN(m.method, "\"tools/call\"");
  ASSERT_SPAN(m.params, "{\"a\":[1,{\"b\":\"}\"}]}");
  ASSERT(m.result.p == NULL);
  ASSERT(m.error.p == NULL);
  ASSERT_EQ(m.dup, 0);
}

TEST(scan_strings_with_escaped_quotes_and_backslashes) {
  mcpp__msg m;
  ASSERT_EQ(scan("{\"x\":\"a\\\"},\\\\\",\"id\":\"q\\\\\",\"result\":\"\\\\\\\"\"}", &m), 0);
  ASSERT_SPAN(m.id, "\"q\\\\\"");
  ASSERT_SPAN(m.result, "\"\\\\\\\"\"");
}

TEST(scan_whitespace_everywhere) {
  mcpp__msg m;
  ASSERT_EQ(scan(" \t\r\n{ \"id\" :\n 1 , \"result\" : { } }\r\n ", &m), 0);
  ASSERT_SPAN(m.id, "1");
  ASSERT_SPAN(m.result, "{ }");
}

TEST(scan_empty_object_and_literals) {
  mcpp__msg m;
  ASSERT_EQ(scan("{}", &m), 0);
  ASSERT(m.id.p == NULL);
  ASSERT_EQ(scan("{\"id\":null,\"result\":true,\"error\":false}", &m), 0);
  ASSERT_SPAN(m.id, "null");
  ASSERT_SPAN(m.result, "true");
}

/* Keys match by value, as every JSON parser reads them: an escaped
 * spelling can neither hide a member nor smuggle in a duplicate. */
TEST(scan_escaped_key_matches_by_value) {
  mcpp__msg m;
  ASSERT_EQ(scan("{\"\\u0069d\":1,\"method\":\"ping\"}", &m), 0);
  ASSERT_SPAN(m.id, "1");
  ASSERT_EQ(scan("{\"id\":1,\"\\u0069\\u0064\":2}", &m), 0);
  ASSERT_EQ(m.dup, 1);
  ASSERT_EQ(scan("{\"i\\u0000d\":1,\"\\u0069\":2,\"id\\u0020\":3}", &m), 0);
  ASSERT(m.id.p == NULL);
}

TEST(scan_flags_duplicate_wanted_keys) {
  mcpp__msg m;
  ASSERT_EQ(scan("{\"id\":1,\"x\":1,\"x\":2}", &m), 0);
  ASSERT_EQ(m.dup, 0);
  ASSERT_EQ(scan("{\"id\":1,\"id\":2}", &m), 0);
  ASSERT_EQ(m.dup, 1);
  ASSERT_SPAN(m.id, "1");
}

TEST(scan_rejects_malformed_text) {
  const char *bad[] = {"", " ", "[]", "\"s\"", "1", "{", "}", "{\"id\"}",
                       "{\"id\":}", "{\"id\":1,}", "{\"id\":1 \"x\":2}",
                       "{\"id\":1}{}", "{\"id\":1} x", "{\"id\":\"abc}",
                       "{\"id\":[1,2}", "{\"id\":{\"a\":[}]}", "{id:1}",
                       "{\"id\":1", "{\"a\":\"\\\"}"};
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
    mcpp__msg m;
    if (scan(bad[i], &m) != -1) MCPP_FAIL("accepted: %s", bad[i]);
  }
}

TEST(scan_does_not_read_past_length) {
  /* The buffer continues after len; the scanner must stop at len. */
  const char text[] = "{\"id\":1}garbage";
  mcpp__msg m;
  ASSERT_EQ(mcpp__scan_message(text, 8, &m), 0);
  ASSERT_EQ(mcpp__scan_message(text, 7, &m), -1);
  char *exact = malloc(8);
  memcpy(exact, "{\"id\":\"1", 8); /* unterminated, no NUL after it */
  ASSERT_EQ(mcpp__scan_message(exact, 8, &m), -1);
  free(exact);
}

TEST(scan_depth_bound) {
  char deep[2100];
  size_t n = 0;
  n += (size_t)sprintf(deep, "{\"id\":1,\"p\":");
  for (int i = 0; i < 1000; i++) deep[n++] = '[';
  for (int i = 0; i < 1000; i++) deep[n++] = ']';
  deep[n++] = '}';
  mcpp__msg m;
  ASSERT_EQ(mcpp__scan_message(deep, n, &m), -1);
}

TEST(scan_object_generic_keys) {
  static const char *const names[] = {"requestId", "reason"};
  mcpp__span spans[2];
  const char *params = "{\"reason\":\"x\",\"requestId\":\"r-1\"}";
  ASSERT_EQ(mcpp__scan_object(params, strlen(params), names, 2, spans, NULL), 0);
  ASSERT_SPAN(spans[0], "\"r-1\"");
  ASSERT_SPAN(spans[1], "\"x\"");
  ASSERT(mcpp__span_is(spans[0], "\"r-1\""));
  ASSERT(!mcpp__span_is(spans[0], "\"r-2\""));
}
