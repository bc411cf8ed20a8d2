/* A Streamable HTTP session's renewal (http_renewal.c, issue 22): the
 * first end met on the current session starts one handshake, what is sent
 * meanwhile waits, and a ping goes again on the new session once. */
#include <string.h>

#include "engine_fixture.h"

static const char ping1[] = "{\"jsonrpc\":\"2.0\",\"id\":\"mcpping-ka-1\",\"method\":\"ping\"}";
static const char ping2[] = "{\"jsonrpc\":\"2.0\",\"id\":\"mcpping-ka-2\",\"method\":\"ping\"}";
static const char call[] = "{\"jsonrpc\":\"2.0\",\"id\":7,\"method\":\"tools/call\"}";

#define EXPIRED(r, current, frame) \
  mcpp_http_renewal_expired((r), (current), (frame), sizeof(frame) - 1)
#define HOLDS(r, frame) mcpp_http_renewal_holds((r), (frame), sizeof(frame) - 1)

TEST(http_renewal_first_end_on_the_current_session_starts_one_handshake) {
  mcpp_http_renewal *r = mcpp_http_renewal_new();
  ASSERT(r != NULL);
  ASSERT_EQ(0, HOLDS(r, call));  /* no renewal yet: sent at once */
  ASSERT_EQ(MCPP_HTTP_RENEW | MCPP_HTTP_SEND_AGAIN, EXPIRED(r, 1, ping1));
  /* A second end met while the handshake runs starts no second one. */
  ASSERT_EQ(MCPP_HTTP_SEND_AGAIN, EXPIRED(r, 1, ping2));
  ASSERT_EQ(0, EXPIRED(r, 1, call)); /* a request did not run: answered */
  ASSERT_EQ(1, HOLDS(r, ping1));
  ASSERT_EQ(1, HOLDS(r, call));
  mcpp_http_renewal_done(r, 1);
  ASSERT_EQ(0, HOLDS(r, call)); /* the new session is open */
  mcpp_http_renewal_free(r);
}

TEST(http_renewal_an_older_sessions_end_starts_nothing) {
  mcpp_http_renewal *r = mcpp_http_renewal_new();
  ASSERT_EQ(MCPP_HTTP_SEND_AGAIN, EXPIRED(r, 0, ping1));
  ASSERT_EQ(0, EXPIRED(r, 0, call));
  ASSERT_EQ(0, HOLDS(r, ping1));
  /* The listening stream's end names no frame. */
  ASSERT_EQ(MCPP_HTTP_RENEW, mcpp_http_renewal_expired(r, 1, NULL, 0));
  mcpp_http_renewal_free(r);
}

TEST(http_renewal_a_ping_sent_again_is_answered_when_it_meets_an_end_again) {
  mcpp_http_renewal *r = mcpp_http_renewal_new();
  ASSERT_EQ(MCPP_HTTP_RENEW | MCPP_HTTP_SEND_AGAIN, EXPIRED(r, 1, ping1));
  ASSERT_EQ(1, HOLDS(r, ping1)); /* sent again: waits */
  ASSERT_EQ(1, HOLDS(r, ping2)); /* first sent during the handshake */
  mcpp_http_renewal_done(r, 1);
  /* The new session refuses them too: a second handshake, no third send. */
  ASSERT_EQ(MCPP_HTTP_RENEW, EXPIRED(r, 1, ping1));
  ASSERT_EQ(0, EXPIRED(r, 1, ping2));
  /* A ping that never waited goes again. */
  static const char ping3[] = "{\"jsonrpc\":\"2.0\",\"id\":\"mcpping-ka-3\",\"method\":\"ping\"}";
  ASSERT_EQ(MCPP_HTTP_SEND_AGAIN, EXPIRED(r, 1, ping3));
  ASSERT_EQ(1, HOLDS(r, ping3));
  mcpp_http_renewal_done(r, 1);
  /* Only the last renewal's pings are remembered. */
  ASSERT_EQ(MCPP_HTTP_RENEW | MCPP_HTTP_SEND_AGAIN, EXPIRED(r, 1, ping1));
  ASSERT_EQ(0, EXPIRED(r, 1, ping3));
  mcpp_http_renewal_free(r);
}

TEST(http_renewal_that_failed_remembers_nothing) {
  mcpp_http_renewal *r = mcpp_http_renewal_new();
  ASSERT_EQ(MCPP_HTTP_RENEW | MCPP_HTTP_SEND_AGAIN, EXPIRED(r, 1, ping1));
  ASSERT_EQ(1, HOLDS(r, ping1));
  mcpp_http_renewal_done(r, 0);
  ASSERT_EQ(0, HOLDS(r, ping1));
  ASSERT_EQ(MCPP_HTTP_RENEW | MCPP_HTTP_SEND_AGAIN, EXPIRED(r, 1, ping1));
  mcpp_http_renewal_free(r);
}

TEST(http_renewal_keeps_many_pings_whole) {
  mcpp_http_renewal *r = mcpp_http_renewal_new();
  char frame[96];
  ASSERT_EQ(MCPP_HTTP_RENEW, mcpp_http_renewal_expired(r, 1, NULL, 0));
  for (int i = 0; i < 1000; i++) {
    int n = snprintf(frame, sizeof frame, "{\"jsonrpc\":\"2.0\",\"id\":\"p-%d\",\"method\":\"ping\"}", i);
    ASSERT_EQ(1, mcpp_http_renewal_holds(r, frame, (size_t)n));
  }
  mcpp_http_renewal_done(r, 1);
  for (int i = 0; i < 1000; i += 111) {
    int n = snprintf(frame, sizeof frame, "{\"jsonrpc\":\"2.0\",\"id\":\"p-%d\",\"method\":\"ping\"}", i);
    ASSERT_EQ(0, mcpp_http_renewal_expired(r, 0, frame, (size_t)n));
  }
  int n = snprintf(frame, sizeof frame, "{\"jsonrpc\":\"2.0\",\"id\":\"p-%d\",\"method\":\"ping\"}", 1000);
  ASSERT_EQ(MCPP_HTTP_SEND_AGAIN, mcpp_http_renewal_expired(r, 0, frame, (size_t)n));
  mcpp_http_renewal_free(r);
  mcpp_http_renewal_free(NULL);
}
