/*
 * The measuring both idle programs share (idle_cost.c through mcpping,
 * idle_floor.c over bare pipes), so their windows are measured alike: the
 * process's CPU (getrusage, user + system), its context switches and the
 * pongs counted meanwhile, per window of the loop's run.
 */
#ifndef IDLE_WINDOWS_H
#define IDLE_WINDOWS_H

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <uv.h>

/* Reads `NAME N WINDOWS WINDOW_S RESPONDER` and raises the fd limit to
 * its hard limit (two pipes per server). Returns 0, or 2 after a usage
 * line. */
static int idle_args(int argc, char **argv, const char *name, size_t *n, int *windows,
                     double *window_s) {
  if (argc != 5) {
    fprintf(stderr, "usage: %s N WINDOWS WINDOW_S RESPONDER\n", name);
    return 2;
  }
  *n = strtoul(argv[1], NULL, 10);
  *windows = atoi(argv[2]);
  *window_s = strtod(argv[3], NULL);
  if (*n == 0 || *windows < 1 || *window_s <= 0) return 2;
  struct rlimit rl;
  getrlimit(RLIMIT_NOFILE, &rl);
  rl.rlim_cur = rl.rlim_max;
  setrlimit(RLIMIT_NOFILE, &rl);
  return 0;
}

static double idle_cpu_s(long *csw) {
  struct rusage ru;
  getrusage(RUSAGE_SELF, &ru);
  *csw = ru.ru_nvcsw + ru.ru_nivcsw;
  return (double)ru.ru_utime.tv_sec + (double)ru.ru_utime.tv_usec / 1e6 +
         (double)ru.ru_stime.tv_sec + (double)ru.ru_stime.tv_usec / 1e6;
}

static void idle_stop_loop(uv_timer_t *t) { uv_stop(t->loop); }

/* Runs loop for secs. */
static void idle_run_for(uv_loop_t *loop, double secs) {
  uv_timer_t t;
  uv_timer_init(loop, &t);
  uv_timer_start(&t, idle_stop_loop, (uint64_t)(secs * 1000), 0);
  uv_run(loop, UV_RUN_DEFAULT);
  uv_close((uv_handle_t *)&t, NULL);
  uv_run(loop, UV_RUN_NOWAIT);
}

/* Prints `{"n":N,"opened":OPENED,"windows":[...` with one object per window
 * of window_s; *pongs is counted by the program's callbacks meanwhile. The
 * caller closes the array and the object. */
static void idle_measure(uv_loop_t *loop, size_t n, size_t opened, int windows,
                         double window_s, const uint64_t *pongs) {
  printf("{\"n\":%zu,\"opened\":%zu,\"windows\":[", n, opened);
  for (int w = 0; w < windows; w++) {
    long csw0, csw1;
    uint64_t pongs0 = *pongs;
    double cpu0 = idle_cpu_s(&csw0);
    uint64_t t0 = uv_hrtime();
    idle_run_for(loop, window_s);
    double cpu1 = idle_cpu_s(&csw1);
    printf("%s{\"wall_s\":%.6f,\"cpu_s\":%.6f,\"csw\":%ld,\"pongs\":%" PRIu64 "}",
           w ? "," : "", (double)(uv_hrtime() - t0) / 1e9, cpu1 - cpu0, csw1 - csw0,
           *pongs - pongs0);
  }
}

#endif
