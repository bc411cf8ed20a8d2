/*
 * proc_state_cost: what the stdio process check costs. Spawns N idle
 * servers (sleep) through the driver's process code, then times ROUNDS
 * rounds of reading every server's state (mcpp__proc_state: a poll of the
 * pidfd, then open/read/close of /proc/<pid>/stat), as the engine asks for
 * once per keepalive interval per connection (twice while a ping waits).
 *
 *   proc_state_cost N ROUNDS
 *
 * Prints one JSON object: µs per check, and CPU ms per second at N
 * connections with a 1 s keepalive interval.
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <uv.h>

#include "driver/proc.h"

static void on_exit_cb(mcpp__proc *p) {}

static double cpu_s(void) {
  struct rusage ru;
  getrusage(RUSAGE_SELF, &ru);
  return (double)ru.ru_utime.tv_sec + ru.ru_utime.tv_usec / 1e6 +
         (double)ru.ru_stime.tv_sec + ru.ru_stime.tv_usec / 1e6;
}

int main(int argc, char **argv) {
  if (argc != 3) {
    fprintf(stderr, "usage: proc_state_cost N ROUNDS\n");
    return 2;
  }
  int n = atoi(argv[1]), rounds = atoi(argv[2]);
  uv_loop_t loop;
  uv_loop_init(&loop);
  mcpp__proc *procs = calloc((size_t)n, sizeof *procs);
  char *args[] = {"sleep", "600", NULL};
  mcpp_spawn_options o = {0};
  o.file = "sleep";
  o.args = args;
  int fds[3] = {MCPP__PROC_DEVNULL, MCPP__PROC_DEVNULL, MCPP__PROC_DEVNULL};
  for (int i = 0; i < n; i++) {
    mcpp__proc_init(&procs[i], 0);
    if (mcpp__proc_spawn(&procs[i], &loop, &o, fds, on_exit_cb)) return 1;
  }
  int running = 0;
  uint64_t t0 = uv_hrtime();
  double c0 = cpu_s();
  for (int r = 0; r < rounds; r++)
    for (int i = 0; i < n; i++)
      running += mcpp__proc_state(&procs[i]) == MCPP_PROCESS_RUNNING;
  double wall_us = (double)(uv_hrtime() - t0) / 1e3;
  double cpu_us = (cpu_s() - c0) * 1e6;
  double checks = (double)n * rounds;
  printf("{\"conns\":%d,\"rounds\":%d,\"running\":%d,\"wall_us_per_check\":%.2f,"
         "\"cpu_us_per_check\":%.2f,\"cpu_ms_per_s_at_1s_interval\":%.2f}\n",
         n, rounds, running, wall_us / checks, cpu_us / checks,
         cpu_us / checks * n / 1e3);
  for (int i = 0; i < n; i++) {
    mcpp__proc_kill(&procs[i]);
    mcpp__proc_close(&procs[i], NULL);
  }
  uv_run(&loop, UV_RUN_DEFAULT);
  uv_loop_close(&loop);
  free(procs);
  return 0;
}
