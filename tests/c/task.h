/*
 * A small test harness in the manner of libuv's test/task.h: typed asserts
 * that print both sides, tests registered with TEST(name), each run by
 * runner.c in its own forked process with a timeout.
 */
#ifndef MCPP_TEST_TASK_H
#define MCPP_TEST_TASK_H

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef void (*mcpp_test_fn)(void);

void mcpp_test_register(const char *name, mcpp_test_fn fn, const char *file,
                        unsigned timeout_s);

/* TEST(name) registers a test with the default 20 s timeout;
 * TEST_TIMEOUT(name, seconds) sets its own. Both are for a plain build:
 * the runner scales them for sanitizers and valgrind (see runner.c). */
#define TEST_TIMEOUT(name, seconds)                                          \
  static void test_##name(void);                                             \
  __attribute__((constructor)) static void register_##name(void) {           \
    mcpp_test_register(#name, test_##name, __FILE__, (seconds));             \
  }                                                                          \
  static void test_##name(void)
#define TEST(name) TEST_TIMEOUT(name, 20)

#define MCPP_FAIL(...)                                                       \
  do {                                                                       \
    fprintf(stderr, "  assertion failed at %s:%d: ", __FILE__, __LINE__);    \
    fprintf(stderr, __VA_ARGS__);                                            \
    fprintf(stderr, "\n");                                                   \
    abort();                                                                 \
  } while (0)

#define ASSERT(expr)                                                         \
  do {                                                                       \
    if (!(expr)) MCPP_FAIL("%s", #expr);                                     \
  } while (0)

#define MCPP_ASSERT_CMP(type, fmt, a, op, b)                                 \
  do {                                                                       \
    type mcpp_a_ = (type)(a);                                                \
    type mcpp_b_ = (type)(b);                                                \
    if (!(mcpp_a_ op mcpp_b_))                                               \
      MCPP_FAIL("%s %s %s (%" fmt " vs %" fmt ")", #a, #op, #b, mcpp_a_,     \
                mcpp_b_);                                                    \
  } while (0)

#define ASSERT_EQ(a, b) MCPP_ASSERT_CMP(int64_t, PRId64, a, ==, b)
#define ASSERT_NE(a, b) MCPP_ASSERT_CMP(int64_t, PRId64, a, !=, b)
#define ASSERT_LT(a, b) MCPP_ASSERT_CMP(int64_t, PRId64, a, <, b)
#define ASSERT_LE(a, b) MCPP_ASSERT_CMP(int64_t, PRId64, a, <=, b)
#define ASSERT_GT(a, b) MCPP_ASSERT_CMP(int64_t, PRId64, a, >, b)
#define ASSERT_GE(a, b) MCPP_ASSERT_CMP(int64_t, PRId64, a, >=, b)
#define ASSERT_UINT_EQ(a, b) MCPP_ASSERT_CMP(uint64_t, PRIu64, a, ==, b)

#define ASSERT_STR_EQ(a, b)                                                  \
  do {                                                                       \
    const char *mcpp_a_ = (a);                                               \
    const char *mcpp_b_ = (b);                                               \
    if (mcpp_a_ == NULL || mcpp_b_ == NULL || strcmp(mcpp_a_, mcpp_b_) != 0) \
      MCPP_FAIL("%s == %s (\"%s\" vs \"%s\")", #a, #b,                       \
                mcpp_a_ ? mcpp_a_ : "(null)", mcpp_b_ ? mcpp_b_ : "(null)"); \
  } while (0)

/* Compares a (pointer, length) buffer with a C string. */
#define ASSERT_MEM_EQ(ptr, len, str)                                         \
  do {                                                                       \
    const char *mcpp_p_ = (const char *)(ptr);                               \
    size_t mcpp_n_ = (len);                                                  \
    const char *mcpp_s_ = (str);                                             \
    if (mcpp_n_ != strlen(mcpp_s_) || memcmp(mcpp_p_, mcpp_s_, mcpp_n_) != 0) \
      MCPP_FAIL("%s == %s (\"%.*s\" vs \"%s\")", #ptr, #str, (int)mcpp_n_,   \
                mcpp_p_ ? mcpp_p_ : "", mcpp_s_);                            \
  } while (0)

/* The directory holding tests/ (set by the runner from its argv[0] or the
 * MCPP_SOURCE_DIR environment variable), for finding tests/peers. */
const char *mcpp_test_source_dir(void);

#endif
