/* The SSE parser: events in pieces, comments, CRLF, multi-line data, the
 * unfinished last event, the bound and a stop. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "mcpping.h"
#include "task.h"

typedef struct got {
  char items[16][128];
  size_t lens[16];
  int kinds[16];
  int count;
  int stop_after;
} got;

static int collect(void *arg, mcpp_sse_kind kind, const char *data,
                   size_t len) {
  got *g = arg;
  ASSERT_LT(g->count, 16);
  ASSERT_LT(len, 128);
  memcpy(g->items[g->count], data, len);
  g->lens[g->count] = len;
  g->kinds[g->count++] = kind;
  return g->stop_after && g->count == g->stop_after;
}

static void check(got *g, int i, int kind, const char *want) {
  ASSERT_EQ(kind, g->kinds[i]);
  ASSERT_MEM_EQ(g->items[i], g->lens[i], want);
}

static int feed(mcpp_sse *s, const char *text, got *g) {
  return mcpp_sse_feed(s, text, strlen(text), collect, g);
}

TEST(sse_events_split_anywhere_come_out_whole) {
  const char *stream =
      "event: message\r\ndata: {\"id\":1}\r\n\r\n: keep-alive\n\n"
      "id: 7\ndata:{\"a\":\ndata: 2}\n\nretry: 10\n\n";
  size_t n = strlen(stream);
  for (size_t cut = 0; cut <= n; cut++) {
    got g = {0};
    mcpp_sse *s = mcpp_sse_new(1024);
    ASSERT_EQ(0, mcpp_sse_feed(s, stream, cut, collect, &g));
    ASSERT_EQ(0, mcpp_sse_feed(s, stream + cut, n - cut, collect, &g));
    ASSERT_EQ(0, mcpp_sse_finish(s, collect, &g));
    ASSERT_EQ(3, g.count);
    check(&g, 0, MCPP_SSE_DATA, "{\"id\":1}");
    check(&g, 1, MCPP_SSE_COMMENT, "keep-alive");
    check(&g, 2, MCPP_SSE_DATA, "{\"a\":\n2}");
    mcpp_sse_free(s);
  }
}

TEST(sse_last_event_without_blank_line_is_delivered_at_the_end) {
  got g = {0};
  mcpp_sse *s = mcpp_sse_new(1024);
  ASSERT_EQ(0, feed(s, "data: {\"x\":1}", &g));
  ASSERT_EQ(0, g.count);
  ASSERT_EQ(0, mcpp_sse_finish(s, collect, &g));
  ASSERT_EQ(1, g.count);
  check(&g, 0, MCPP_SSE_DATA, "{\"x\":1}");
  mcpp_sse_free(s);
}

TEST(sse_oversize_line_or_event_is_an_error_and_nothing_of_it_comes_out) {
  got g = {0};
  mcpp_sse *s = mcpp_sse_new(16);
  ASSERT_EQ(MCPP_ERR_FRAME_TOO_LARGE,
            feed(s, "data: 0123456789abcdefXYZ\n\n", &g));
  ASSERT_EQ(0, g.count);
  /* Sticky: the stream is lost, as a too long line loses a stdio peer. */
  ASSERT_EQ(MCPP_ERR_FRAME_TOO_LARGE, feed(s, "data: 1\n\n", &g));
  mcpp_sse_free(s);
  s = mcpp_sse_new(16);
  ASSERT_EQ(MCPP_ERR_FRAME_TOO_LARGE,
            feed(s, "data: 0123456789\ndata: 0123456789\n\n", &g));
  ASSERT_EQ(0, g.count);
  mcpp_sse_free(s);
  /* Exactly max fits, with or without \r. */
  s = mcpp_sse_new(16);
  ASSERT_EQ(0, feed(s, "data:0123456789\r\n\r\n", &g));
  ASSERT_EQ(1, g.count);
  mcpp_sse_free(s);
}

TEST(sse_a_stop_asked_by_the_callback_stops_the_feed) {
  got g = {.stop_after = 1};
  mcpp_sse *s = mcpp_sse_new(1024);
  ASSERT_EQ(1, feed(s, ": ping\ndata: a\n\n", &g));
  ASSERT_EQ(1, g.count);
  check(&g, 0, MCPP_SSE_COMMENT, "ping");
  mcpp_sse_free(s);
}

/* SEP-1699: the priming event (an id, empty data) is proof of life, not a
 * message; the id and retry are kept for Last-Event-ID and carry over to a
 * resumed stream fed to the same parser after finish. */
TEST(sse_ids_and_retry_are_kept_and_an_empty_event_is_proof_of_life) {
  mcpp_sse *s = mcpp_sse_new(0);
  got g = {0};
  ASSERT_STR_EQ(mcpp_sse_last_event_id(s), "");
  ASSERT_EQ(0, (int)mcpp_sse_retry_ms(s));
  ASSERT_EQ(0, feed(s, "id: 0-1\nretry: 300\ndata: \n\n", &g));
  ASSERT_EQ(1, g.count);
  check(&g, 0, MCPP_SSE_COMMENT, "");
  ASSERT_STR_EQ(mcpp_sse_last_event_id(s), "0-1");
  ASSERT_EQ(300, (int)mcpp_sse_retry_ms(s));
  ASSERT_EQ(0, feed(s, "retry: 3x\nid: with\xc3\xa9\ndata: {}\n\nid\n\n", &g));
  check(&g, 1, MCPP_SSE_DATA, "{}");
  ASSERT_EQ(2, g.count); /* "id" alone: an empty id, no event (no data) */
  ASSERT_STR_EQ(mcpp_sse_last_event_id(s), "");
  ASSERT_EQ(300, (int)mcpp_sse_retry_ms(s)); /* "3x" is no retry */
  ASSERT_EQ(0, feed(s, "id: 0-2\ndata: {\"a\"", &g));
  ASSERT_EQ(0, mcpp_sse_finish(s, collect, &g));
  check(&g, 2, MCPP_SSE_DATA, "{\"a\"");
  /* A resumed stream, same parser: the id carries over until a new one. */
  ASSERT_STR_EQ(mcpp_sse_last_event_id(s), "0-2");
  ASSERT_EQ(0, feed(s, "data: {}\n\n", &g));
  ASSERT_STR_EQ(mcpp_sse_last_event_id(s), "0-2");
  char id[MCPP_SSE_MAX_ID + 8] = "id: ";
  memset(id + 4, 'x', MCPP_SSE_MAX_ID + 1);
  strcpy(id + 4 + MCPP_SSE_MAX_ID + 1, "\n\n");
  ASSERT_EQ(0, feed(s, id, &g)); /* too long: ignored */
  ASSERT_STR_EQ(mcpp_sse_last_event_id(s), "0-2");
  ASSERT_EQ(0, feed(s, "retry: 99999999999\n\n", &g));
  ASSERT_EQ(1, mcpp_sse_retry_ms(s) == UINT32_MAX); /* capped */
  mcpp_sse_free(s);
}
