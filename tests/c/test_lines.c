/* Line framing: pieces, many lines per feed, CRLF, blank lines, limits. */
#include <stdlib.h>
#include <string.h>

#include "engine/lines.h"
#include "task.h"

typedef struct collected {
  char lines[32][128];
  size_t lens[32];
  int count;
  int stop_after;
} collected;

static int collect(void *arg, const char *line, size_t len) {
  collected *c = arg;
  ASSERT_LT(c->count, 32);
  ASSERT_LT(len, 128);
  memcpy(c->lines[c->count], line, len);
  c->lens[c->count++] = len;
  return c->stop_after && c->count == c->stop_after;
}

static void check_line(collected *c, int i, const char *want) {
  ASSERT_MEM_EQ(c->lines[i], c->lens[i], want);
}

TEST(lines_many_per_feed_and_split_across_feeds) {
  mcpp__lines l;
  collected c = {0};
  mcpp__lines_init(&l, mcpp_default_allocator(), 1024);
  ASSERT_EQ(0, mcpp__lines_feed(&l, "a\nbb\ncc", 7, collect, &c));
  ASSERT_EQ(2, c.count);
  ASSERT(mcpp__lines_pending(&l));
  ASSERT_EQ(0, mcpp__lines_feed(&l, "c", 1, collect, &c));
  ASSERT_EQ(0, mcpp__lines_feed(&l, "c\nd\n", 4, collect, &c));
  ASSERT_EQ(4, c.count);
  check_line(&c, 0, "a");
  check_line(&c, 1, "bb");
  check_line(&c, 2, "cccc");
  check_line(&c, 3, "d");
  ASSERT(!mcpp__lines_pending(&l));
  mcpp__lines_free(&l);
}

TEST(lines_strip_one_cr_and_skip_blank_lines) {
  mcpp__lines l;
  collected c = {0};
  mcpp__lines_init(&l, mcpp_default_allocator(), 1024);
  ASSERT_EQ(0, mcpp__lines_feed(&l, "\n\r\nx\r\r\ny\r", 9, collect, &c));
  ASSERT_EQ(0, mcpp__lines_feed(&l, "\n\n", 2, collect, &c));
  ASSERT_EQ(2, c.count);
  check_line(&c, 0, "x\r");
  check_line(&c, 1, "y");
  mcpp__lines_free(&l);
}

TEST(lines_byte_at_a_time) {
  mcpp__lines l;
  collected c = {0};
  const char *in = "{\"a\":1}\r\n\xff\xfe\n{}\n";
  mcpp__lines_init(&l, mcpp_default_allocator(), 1024);
  for (size_t i = 0; i < strlen(in); i++)
    ASSERT_EQ(0, mcpp__lines_feed(&l, in + i, 1, collect, &c));
  ASSERT_EQ(3, c.count);
  check_line(&c, 0, "{\"a\":1}");
  check_line(&c, 1, "\xff\xfe");
  check_line(&c, 2, "{}");
  mcpp__lines_free(&l);
}

TEST(lines_limit_is_exact_and_never_truncates) {
  mcpp__lines l;
  collected c = {0};
  mcpp__lines_init(&l, mcpp_default_allocator(), 4);
  ASSERT_EQ(0, mcpp__lines_feed(&l, "abcd\nabcd\r\n", 11, collect, &c));
  ASSERT_EQ(2, c.count);
  ASSERT_EQ(MCPP_ERR_FRAME_TOO_LARGE,
            mcpp__lines_feed(&l, "abcde\n", 6, collect, &c));
  ASSERT_EQ(2, c.count);
  mcpp__lines_free(&l);

  /* Too large before its newline arrives: found while it streams in. */
  mcpp__lines_init(&l, mcpp_default_allocator(), 4);
  ASSERT_EQ(0, mcpp__lines_feed(&l, "ab", 2, collect, &c));
  ASSERT_EQ(0, mcpp__lines_feed(&l, "cd", 2, collect, &c));
  ASSERT_EQ(MCPP_ERR_FRAME_TOO_LARGE,
            mcpp__lines_feed(&l, "ef", 2, collect, &c));
  mcpp__lines_free(&l);
  mcpp__lines_init(&l, mcpp_default_allocator(), 4);
  ASSERT_EQ(MCPP_ERR_FRAME_TOO_LARGE,
            mcpp__lines_feed(&l, "x\nabcdef", 8, collect, &c));
  ASSERT_EQ(3, c.count);
  mcpp__lines_free(&l);
}

TEST(lines_stop_drops_the_rest) {
  mcpp__lines l;
  collected c = {0};
  c.stop_after = 1;
  mcpp__lines_init(&l, mcpp_default_allocator(), 64);
  ASSERT_EQ(1, mcpp__lines_feed(&l, "a\nb\n", 4, collect, &c));
  ASSERT_EQ(1, c.count);
  mcpp__lines_free(&l);
}

static int count_only(void *arg, const char *line, size_t len) {
  size_t *total = arg;
  *total += len;
  return 0;
}

TEST(lines_long_line_buffer_is_released) {
  mcpp__lines l;
  size_t total = 0, n = 1 << 20;
  char *big = malloc(n);
  ASSERT(big != NULL);
  memset(big, 'x', n);
  mcpp__lines_init(&l, mcpp_default_allocator(), 2 * n);
  ASSERT_EQ(0, mcpp__lines_feed(&l, "a", 1, count_only, &total));
  ASSERT_EQ(0, mcpp__lines_feed(&l, big, n, count_only, &total));
  ASSERT(l.cap > n);
  ASSERT_EQ(0, mcpp__lines_feed(&l, "\n", 1, count_only, &total));
  ASSERT_UINT_EQ(n + 1, total);
  ASSERT(l.buf == NULL);
  mcpp__lines_free(&l);
  free(big);
}
