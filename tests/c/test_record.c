/* The governance record serializer on its own: field order, nulls,
 * timestamps, numbers and string escaping. */
#include <stdio.h>
#include <string.h>

#include "engine/record.h"
#include "task.h"

static mcpp__record blank(void) {
  mcpp__record r;
  memset(&r, 0, sizeof r);
  r.event = "closed";
  r.direction = MCPP__DIR_NONE;
  r.transport = MCPP_TRANSPORT_CUSTOM;
  r.disposition = MCPP_DISPOSITION_CANCELLED;
  return r;
}

TEST(record_unknowns_are_null_and_fields_in_order) {
  mcpp__record r = blank();
  char buf[1024];
  size_t n = mcpp__record_format(&r, 0, buf, sizeof buf);
  ASSERT_EQ(n, strlen(buf));
  ASSERT_STR_EQ(buf,
                "{\"ts\":\"1970-01-01T00:00:00.000000Z\",\"event\":\"closed\","
                "\"direction\":null,\"sender\":null,\"receiver\":null,\"peer\":null,"
                "\"session_id\":null,\"protocol_version\":null,\"transport\":\"custom\","
                "\"ping_id\":null,\"timeout_ms\":null,\"latency_ms\":null,"
                "\"failure_count\":0,\"reconnect_attempt\":null,"
                "\"in_flight\":{\"count\":0,\"disposition\":\"cancelled\"},\"proof\":null}");
}

TEST(record_all_fields_set) {
  mcpp__record r = blank();
  r.event = "ping_ok";
  r.direction = MCPP__DIR_OUTBOUND;
  r.role = MCPP_ROLE_CLIENT;
  r.peer = "weather";
  r.session_id = "s-1";
  r.protocol_version = "2025-11-25";
  r.transport = MCPP_TRANSPORT_STREAMABLE_HTTP;
  r.ping_id = "\"mcpp-00-1\"";
  r.ping_id_len = strlen(r.ping_id);
  r.has_timeout = 1;
  r.timeout_ms = 5000;
  r.has_latency = 1;
  r.latency_us = 12005;
  r.failure_count = 2;
  r.reconnect_attempt = 3;
  r.in_flight = 4;
  r.disposition = MCPP_DISPOSITION_IN_DOUBT;
  r.proof = "probe:tools/list";
  char buf[1024];
  mcpp__record_format(&r, 1796212800LL * 1000000 + 123, buf, sizeof buf);
  ASSERT_STR_EQ(buf,
                "{\"ts\":\"2026-12-02T12:00:00.000123Z\",\"event\":\"ping_ok\","
                "\"direction\":\"outbound\",\"sender\":\"client\",\"receiver\":\"server\","
                "\"peer\":\"weather\",\"session_id\":\"s-1\",\"protocol_version\":\"2025-11-25\","
                "\"transport\":\"streamable-http\",\"ping_id\":\"mcpp-00-1\",\"timeout_ms\":5000,"
                "\"latency_ms\":12.005,\"failure_count\":2,\"reconnect_attempt\":3,"
                "\"in_flight\":{\"count\":4,\"disposition\":\"in_doubt\"},"
                "\"proof\":\"probe:tools/list\"}");
}

TEST(record_inbound_from_server_role) {
  mcpp__record r = blank();
  r.direction = MCPP__DIR_INBOUND;
  r.role = MCPP_ROLE_SERVER;
  r.transport = MCPP_TRANSPORT_STDIO;
  char buf[1024];
  mcpp__record_format(&r, 0, buf, sizeof buf);
  ASSERT(strstr(buf, "\"direction\":\"inbound\",\"sender\":\"client\",\"receiver\":\"server\"") != NULL);
  ASSERT(strstr(buf, "\"transport\":\"stdio\"") != NULL);
}

TEST(record_timestamps) {
  char ts[32];
  mcpp__format_ts(1709251199LL * 1000000 + 999999, ts);
  ASSERT_STR_EQ(ts, "2024-02-29T23:59:59.999999Z");
  mcpp__format_ts(946684800LL * 1000000, ts);
  ASSERT_STR_EQ(ts, "2000-01-01T00:00:00.000000Z");
  mcpp__format_ts(-5, ts);
  ASSERT_STR_EQ(ts, "1970-01-01T00:00:00.000000Z");
  mcpp__format_ts(INT64_MAX, ts);
  ASSERT_STR_EQ(ts, "9999-12-31T23:59:59.999999Z");
}

TEST(record_latency_three_decimals) {
  uint64_t cases[] = {0, 1, 999, 1000, 1234567};
  const char *want[] = {"0.000", "0.001", "0.999", "1.000", "1234.567"};
  for (int i = 0; i < 5; i++) {
    mcpp__record r = blank();
    r.has_latency = 1;
    r.latency_us = cases[i];
    char buf[1024], needle[64];
    mcpp__record_format(&r, 0, buf, sizeof buf);
    snprintf(needle, sizeof needle, "\"latency_ms\":%s,", want[i]);
    ASSERT(strstr(buf, needle) != NULL);
  }
}

TEST(record_escapes_strings) {
  mcpp__record r = blank();
  r.peer = "a\"b\\c\nd\te\x01 \xc3\xa9 \xff end";
  char buf[1024];
  mcpp__record_format(&r, 0, buf, sizeof buf);
  ASSERT(strstr(buf, "\"peer\":\"a\\\"b\\\\c\\nd\\te\\u0001 \xc3\xa9 \\ufffd end\"") != NULL);
}

TEST(record_snprintf_semantics) {
  mcpp__record r = blank();
  char full[1024];
  size_t n = mcpp__record_format(&r, 0, full, sizeof full);
  char small[16];
  ASSERT_EQ(mcpp__record_format(&r, 0, small, sizeof small), n);
  ASSERT_EQ(strlen(small), sizeof small - 1);
  ASSERT(memcmp(small, full, sizeof small - 1) == 0);
  ASSERT_EQ(mcpp__record_format(&r, 0, NULL, 0), n);
  char exact[1024];
  ASSERT_EQ(mcpp__record_format(&r, 0, exact, n + 1), n);
  ASSERT_STR_EQ(exact, full);
}
