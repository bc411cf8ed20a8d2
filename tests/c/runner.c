/*
 * Runs every registered test in its own forked process with a timeout, as
 * libuv's runner does, and prints "N passed, N failed". Arguments filter
 * tests by substring. MCPP_TEST_NOFORK=1 runs them in-process (for gdb).
 *
 * A test's timeout catches hangs; it is not a speed limit. It is set for
 * a plain build on an idle machine, so it grows with what slows every test
 * down: ASan 3x, TSan 5x, valgrind 10x (as margin_ms does), and
 * MCPP_TEST_TIMEOUT_SCALE on top (a machine busy with other work).
 */
#include <dirent.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "task.h"

typedef struct test_entry {
  const char *name;
  const char *file;
  mcpp_test_fn fn;
  unsigned timeout_s;
} test_entry;

enum { MAX_TESTS = 1024 };
static test_entry tests[MAX_TESTS];
static int test_count;
static char source_dir[4096] = ".";
static double timeout_scale = 1;

/* GCC says which sanitizer is on with __SANITIZE_*__, clang with
 * __has_feature. */
#if defined(__SANITIZE_THREAD__)
#define MCPP_TEST_TSAN 1
#elif defined(__SANITIZE_ADDRESS__)
#define MCPP_TEST_ASAN 1
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define MCPP_TEST_TSAN 1
#elif __has_feature(address_sanitizer)
#define MCPP_TEST_ASAN 1
#endif
#endif

/* How much longer than on a plain build a test may take here. */
static double build_scale(void) {
  double scale = 1;
#if defined(MCPP_TEST_TSAN)
  scale = 5;
#elif defined(MCPP_TEST_ASAN)
  scale = 3;
#endif
  if (getenv("MCPP_UNDER_VALGRIND")) scale = 10;
  const char *extra = getenv("MCPP_TEST_TIMEOUT_SCALE");
  if (extra) {
    double x = strtod(extra, NULL);
    if (x >= 1 && x <= 100) scale *= x;
  }
  return scale;
}

void mcpp_test_register(const char *name, mcpp_test_fn fn, const char *file,
                        unsigned timeout_s) {
  if (test_count == MAX_TESTS) {
    fprintf(stderr, "too many tests\n");
    exit(2);
  }
  tests[test_count++] = (test_entry){name, file, fn, timeout_s};
}

const char *mcpp_test_source_dir(void) { return source_dir; }

static int compare_entries(const void *a, const void *b) {
  const test_entry *x = a, *y = b;
  int c = strcmp(x->file, y->file);
  return c ? c : strcmp(x->name, y->name);
}

static int selected(const char *name, int argc, char **argv) {
  if (argc < 2) return 1;
  for (int i = 1; i < argc; i++)
    if (strstr(name, argv[i])) return 1;
  return 0;
}

static double seconds_since(const struct timespec *start) {
  struct timespec now;
  clock_gettime(CLOCK_MONOTONIC, &now);
  return (double)(now.tv_sec - start->tv_sec) +
         (double)(now.tv_nsec - start->tv_nsec) / 1e9;
}

/* The first line of /proc/PID/task/TID/NAME (first_word: its first word)
 * into buf ("?" if unreadable). */
static void task_line(pid_t pid, const char *tid, const char *name,
                      int first_word, char *buf, size_t cap) {
  char path[96];
  snprintf(path, sizeof path, "/proc/%d/task/%s/%s", (int)pid, tid, name);
  FILE *f = fopen(path, "r");
  snprintf(buf, cap, "?");
  /* A thread's name may hold spaces; the syscall line is "NR args...". */
  if (f && fgets(buf, (int)cap, f))
    buf[strcspn(buf, first_word ? " \n" : "\n")] = '\0';
  if (f) fclose(f);
}

/* A test that hung: where each of its threads waits (the kernel function,
 * the syscall's number), said before the kill, so the log tells which
 * wait never ended. Linux only; elsewhere nothing. */
static void say_where_it_waits(pid_t pid) {
  char path[64];
  snprintf(path, sizeof path, "/proc/%d/task", (int)pid);
  DIR *d = opendir(path);
  if (!d) return;
  for (struct dirent *e; (e = readdir(d)) != NULL;) {
    if (e->d_name[0] == '.') continue;
    char comm[64], wchan[64], sys[64];
    task_line(pid, e->d_name, "comm", 0, comm, sizeof comm);
    task_line(pid, e->d_name, "wchan", 0, wchan, sizeof wchan);
    task_line(pid, e->d_name, "syscall", 1, sys, sizeof sys);
    fprintf(stderr, "  thread %s (%s) waits in %s, syscall %s\n", e->d_name,
            comm, wchan, sys);
  }
  closedir(d);
}

/* Runs one test in a child; returns 1 if it passed. The child is its own
 * process group so a timeout kills whatever it spawned too. */
static int run_forked(const test_entry *t) {
  fflush(NULL);
  pid_t pid = fork();
  if (pid < 0) {
    perror("fork");
    return 0;
  }
  if (pid == 0) {
    setpgid(0, 0);
    t->fn();
    fflush(NULL);
    exit(0);
  }
  setpgid(pid, pid);
  struct timespec start;
  clock_gettime(CLOCK_MONOTONIC, &start);
  int status = 0;
  double limit = t->timeout_s * timeout_scale;
  for (;;) {
    pid_t r = waitpid(pid, &status, WNOHANG);
    if (r == pid) break;
    if (seconds_since(&start) > limit) {
      say_where_it_waits(pid);
      kill(-pid, SIGKILL);
      waitpid(pid, &status, 0);
      fprintf(stderr, "  timed out after %.0f s\n", limit);
      return 0;
    }
    usleep(2000);
  }
  if (WIFEXITED(status) && WEXITSTATUS(status) == 0) return 1;
  if (WIFSIGNALED(status))
    fprintf(stderr, "  died of signal %d\n", WTERMSIG(status));
  else
    fprintf(stderr, "  exited with status %d\n", WEXITSTATUS(status));
  return 0;
}

int main(int argc, char **argv) {
  const char *dir = getenv("MCPP_SOURCE_DIR");
  if (dir) snprintf(source_dir, sizeof source_dir, "%s", dir);
  signal(SIGPIPE, SIG_IGN);
  timeout_scale = build_scale();
  if (timeout_scale != 1)
    printf("per-test timeouts x%g for this build\n", timeout_scale);
  qsort(tests, (size_t)test_count, sizeof tests[0], compare_entries);
  int nofork = getenv("MCPP_TEST_NOFORK") != NULL;
  int passed = 0, failed = 0;
  for (int i = 0; i < test_count; i++) {
    const test_entry *t = &tests[i];
    if (!selected(t->name, argc, argv)) continue;
    struct timespec start;
    clock_gettime(CLOCK_MONOTONIC, &start);
    int ok;
    if (nofork) {
      t->fn();
      ok = 1;
    } else {
      ok = run_forked(t);
    }
    printf("%s %s (%.2fs)\n", ok ? "ok  " : "FAIL", t->name,
           seconds_since(&start));
    fflush(stdout);
    if (ok)
      passed++;
    else
      failed++;
  }
  printf("%d passed, %d failed\n", passed, failed);
  return failed ? 1 : 0;
}
