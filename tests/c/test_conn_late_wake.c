/*
 * A loop that wakes late: libuv runs timers before it polls for I/O, so
 * when the driver's thread was held past a deadline (descheduled, a busy
 * machine), the timer runs first while the answer already waits in the
 * pipe. The answer must win: the request completes and the ping is a
 * pong, not a timeout.
 */
#include <dirent.h>
#include <poll.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include "task.h"
#include "test_conn_support.h"

static const char init_req[] =
    "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"initialize\",\"params\":{"
    "\"protocolVersion\":\"2025-11-25\",\"capabilities\":{},\"clientInfo\":{"
    "\"name\":\"t\",\"version\":\"1\"}}}";

/* Our end of the server's stdout: the fd of ours on the same pipe as the
 * server's fd 1 (our copy of its write end was closed at spawn). */
static int our_end_of_stdout(int pid) {
  char path[300], want[64], got[64];
  snprintf(path, sizeof path, "/proc/%d/fd/1", pid);
  ssize_t n = readlink(path, want, sizeof want - 1);
  ASSERT_GT(n, 0);
  want[n] = '\0';
  DIR *d = opendir("/proc/self/fd");
  ASSERT(d != NULL);
  int found = -1;
  struct dirent *de;
  while (found < 0 && (de = readdir(d)) != NULL) {
    if (de->d_name[0] == '.') continue;
    snprintf(path, sizeof path, "/proc/self/fd/%s", de->d_name);
    n = readlink(path, got, sizeof got - 1);
    if (n <= 0) continue;
    got[n] = '\0';
    if (strcmp(got, want) == 0) found = atoi(de->d_name);
  }
  closedir(d);
  ASSERT_GE(found, 0);
  return found;
}

static uint64_t now_ms(void) { return uv_hrtime() / 1000000; }

/* Holds this thread (the driver's loop) until `until_ms` has passed and
 * `bytes` wait unread in fd: what a descheduled I/O thread goes through. */
static void hold_the_loop(int fd, size_t bytes, uint64_t until_ms) {
  struct pollfd p = {fd, POLLIN, 0};
  ASSERT_EQ(poll(&p, 1, (int)margin_ms(10000)), 1); /* the answer came */
  for (int i = 0; i < 10000; i++) {
    int waiting = 0;
    ASSERT_EQ(ioctl(fd, FIONREAD, &waiting), 0);
    if ((size_t)waiting >= bytes && now_ms() >= until_ms) return;
    usleep(1000);
  }
  MCPP_FAIL("the server's answers never arrived");
}

TEST(conn_timer_woken_late_reads_the_answers_waiting_before_expiring) {
  conn_fixture f;
  cf_init(&f);
  /* A late wake-up well under the pause threshold: no host-pause grace
   * forgives it, only reading first does. */
  f.s.pause_threshold_ms = margin_ms(5000);
  /* Answers come a moment after each request, so the turn that writes
   * the request (slow under valgrind) does not read them already. */
  char delay[32];
  snprintf(delay, sizeof delay, "%.3f", margin_ms(40) / 1000.0);
  cf_start(&f, "echo.py", "--delay", delay, NULL);
  ASSERT_EQ(0, mcpp_conn_send(f.r.conn, init_req, strlen(init_req)));
  run_until_frames(&f.loop, &f.r, 1);
  int fd = our_end_of_stdout(f.r.pid);

  const uint32_t timeout = margin_ms(300);
  static const char req[] =
      "{\"jsonrpc\":\"2.0\",\"id\":7,\"method\":\"echo\",\"params\":{\"x\":1}}";
  static const char resp[] = "{\"jsonrpc\":\"2.0\",\"id\":7,\"result\":{\"x\":1}}";
  uint64_t sent = 0, seq = 0;
  /* One turn writes both out (the prepare phase flushes) and polls once
   * with a zero timeout; should the server answer within that turn (a
   * slow valgrind turn), the stage was not set: let it finish, retry. */
  for (int attempt = 0;; attempt++) {
    ASSERT_LT(attempt, 20);
    size_t frames = f.r.n_frames, pongs = count_events(&f.r, MCPP_EV_PONG);
    sent = now_ms();
    ASSERT_EQ(0, mcpp_conn_send_timed(f.r.conn, req, strlen(req), timeout));
    ASSERT_EQ(0, mcpp_conn_ping(f.r.conn, timeout, &seq));
    uv_run(&f.loop, UV_RUN_NOWAIT);
    if (f.r.n_frames == frames && count_events(&f.r, MCPP_EV_PONG) == pongs) break;
    run_until_frames(&f.loop, &f.r, frames + 1);
    while (count_events(&f.r, MCPP_EV_PONG) == pongs) uv_run(&f.loop, UV_RUN_ONCE);
  }
  size_t frames = f.r.n_frames, pongs = count_events(&f.r, MCPP_EV_PONG);
  char pong[128];
  int pong_len = snprintf(pong, sizeof pong,
                          "{\"jsonrpc\":\"2.0\",\"id\":\"mcpp-%016llx-%llu\","
                          "\"result\":{}}\n",
                          (unsigned long long)f.s.nonce, (unsigned long long)seq);

  /* Both answers wait in the pipe while the loop is held past both
   * deadlines (plus the timer grid's 16 ms). */
  hold_the_loop(fd, sizeof resp + (size_t)pong_len, sent + timeout + 100);
  /* One turn of the loop: its timer runs first, then its poll. */
  uv_run(&f.loop, UV_RUN_NOWAIT);
  ASSERT_UINT_EQ(count_events(&f.r, MCPP_EV_PONG), pongs + 1);
  size_t last = f.r.n_events;
  while (f.r.events[--last] != MCPP_EV_PONG) continue;
  ASSERT_UINT_EQ(f.r.event_seq[last], seq); /* our ping's, not a timeout */
  ASSERT_UINT_EQ(count_events(&f.r, MCPP_EV_TIMEOUT), 0);
  ASSERT_UINT_EQ(f.r.n_frames, frames + 1);
  ASSERT(frame_is(&f.r, frames, resp)); /* the server's answer, not our -32001 */
  ASSERT_UINT_EQ(count_events(&f.r, MCPP_EV_REQUEST_TIMEOUT), 0);
  mcpp_engine_info info;
  mcpp_engine_get_info(mcpp_conn_engine(f.r.conn), &info);
  ASSERT_UINT_EQ(info.app_timeouts, 0);
  ASSERT_UINT_EQ(info.ping_timeouts, 0);
  ASSERT_UINT_EQ(info.in_flight, 0);
  /* Nothing else reached the application (a late answer after our
   * timeout error would be a second frame for id 7). */
  run_for(&f.loop, 50);
  ASSERT_UINT_EQ(f.r.n_frames, frames + 1);
  ASSERT_EQ(0, mcpp_conn_close(f.r.conn));
  cf_finish(&f);
}
