/*
 * The server's life inside hosts that own the process-wide state: SIGCHLD
 * ignored, a foreign SIGCHLD handler, a foreign waitpid(-1) reaper, no
 * pidfd, SIGPIPE left as the host set it; servers that ignore SIGTERM and
 * have children; the host dying by SIGKILL; exit reasons that quote the
 * server's stderr; the server's fds.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include "driver/orphans.h"
#include "driver/proc.h"
#include "task.h"
#include "test_conn_support.h"
#include "engine/test_hooks.h"

static void start_args(conn_fixture *f, mcpp_stderr_mode mode,
                       uint32_t grace_ms, char **args) {
  mcpp_spawn_options o = {0};
  o.file = args[0];
  o.args = args;
  o.stderr_mode = mode;
  o.kill_grace_ms = grace_ms;
  ASSERT_EQ(0, mcpp_conn_spawn(&f->r.conn, &f->loop, &f->s, &o,
                               test_rec_callbacks(), &f->r, NULL));
  f->r.pid = mcpp_conn_pid(f->r.conn);
}

static void sh(conn_fixture *f, mcpp_stderr_mode mode, uint32_t grace_ms,
               const char *script) {
  char *args[] = {"sh", "-c", (char *)script, NULL};
  start_args(f, mode, grace_ms, args);
}

/* With SIGCHLD ignored the kernel reaps the server itself: the exit is
 * still seen (its status is not), and close returns. */
TEST(conn_sigchld_ignored_exit_seen_close_returns) {
  conn_fixture f;
  cf_init(&f);
  ASSERT(signal(SIGCHLD, SIG_IGN) != SIG_ERR);
  sh(&f, MCPP_STDERR_INHERIT, 0, "exit 3");
  cf_finish(&f);
  ASSERT_EQ(MCPP_ERR_CLOSED, f.r.close.err);
  ASSERT_EQ(-1, f.r.close.exit_status);
  ASSERT_EQ(0, f.r.close.term_signal);
  ASSERT(strstr(f.r.close_reason, "status unknown") != NULL);
  /* And a close of a running server. */
  conn_fixture g;
  cf_init(&g);
  cf_start(&g, "echo.py", NULL);
  ASSERT_EQ(0, mcpp_conn_close(g.r.conn));
  cf_finish(&g);
  ASSERT_EQ(0, g.r.close.err);
  struct sigaction now;
  ASSERT_EQ(0, sigaction(SIGCHLD, NULL, &now));
  ASSERT(now.sa_handler == SIG_IGN);
}

static atomic_int sigchld_seen;

static void count_sigchld(int sig) { sigchld_seen++; }

/* A host's own SIGCHLD handler keeps working, stays installed, and we
 * still get the exact status. */
TEST(conn_foreign_sigchld_handler_keeps_exact_status) {
  conn_fixture f;
  cf_init(&f);
  struct sigaction sa, now;
  memset(&sa, 0, sizeof sa);
  sa.sa_handler = count_sigchld;
  sa.sa_flags = SA_RESTART;
  ASSERT_EQ(0, sigaction(SIGCHLD, &sa, NULL));
  cf_start(&f, "dies.py", "--after", "0", "--code", "7", NULL);
  cf_finish(&f);
  ASSERT_EQ(7, f.r.close.exit_status);
  ASSERT_STR_EQ("server exited with status 7", f.r.close_reason);
  ASSERT_GT(sigchld_seen, 0);
  ASSERT_EQ(0, sigaction(SIGCHLD, NULL, &now));
  ASSERT(now.sa_handler == count_sigchld);
}

static atomic_int reaper_stop;
static atomic_int reaped_by_reaper;

static void *foreign_reaper(void *arg) {
  while (!reaper_stop) {
    if (waitpid(-1, NULL, WNOHANG) > 0)
      reaped_by_reaper++;
    else
      usleep(200);
  }
  return NULL;
}

/* A host thread reaping every child with waitpid(-1) races our reap: the
 * exit is seen whoever wins, and close returns. */
TEST(conn_foreign_waitpid_reaper_races_us) {
  pthread_t t;
  ASSERT_EQ(0, pthread_create(&t, NULL, foreign_reaper, NULL));
  for (int i = 0; i < 10; i++) {
    conn_fixture f;
    cf_init(&f);
    sh(&f, MCPP_STDERR_INHERIT, 0, "exit 5");
    run_until(&f.loop, &f.r.closed);
    ASSERT(f.r.close.exit_status == 5 ||
           strstr(f.r.close_reason, "status unknown") != NULL);
    conn_fixture g;
    cf_init(&g);
    sh(&g, MCPP_STDERR_INHERIT, 100, "trap '' TERM; exec sleep 30");
    ASSERT_EQ(0, mcpp_conn_close(g.r.conn));
    run_until(&g.loop, &g.r.closed);
    ASSERT_EQ(0, g.r.close.err);
    for (conn_fixture *x = &f; x; x = x == &f ? &g : NULL) {
      ASSERT_EQ(0, uv_run(&x->loop, UV_RUN_DEFAULT));
      ASSERT_EQ(0, uv_loop_close(&x->loop));
      assert_gone(x->r.pid);
      for (size_t k = 0; k < x->r.n_frames; k++) free(x->r.frames[k].data);
      free(x->r.frames);
    }
  }
  reaper_stop = 1;
  ASSERT_EQ(0, pthread_join(t, NULL));
}

/* Without a pidfd (old kernels) the waitpid backoff timer sees the exit,
 * with its status, and a close still works. */
TEST(conn_exit_seen_without_pidfd) {
  mcpp__proc_force_backoff = 1;
  conn_fixture f;
  cf_init(&f);
  cf_start(&f, "dies.py", "--after", "0", "--code", "9", NULL);
  cf_finish(&f);
  ASSERT_EQ(9, f.r.close.exit_status);
  conn_fixture g;
  cf_init(&g);
  cf_start(&g, "echo.py", NULL);
  ASSERT_EQ(0, mcpp_conn_close(g.r.conn));
  cf_finish(&g);
  ASSERT_EQ(SIGTERM, g.r.close.term_signal);
}

/* The server gets its stdio and nothing else: no fd of the host (even
 * one without close-on-exec), no pipe of another connection. */
TEST(conn_server_gets_only_its_stdio) {
  conn_fixture f;
  cf_init(&f);
  int leaky = open("/dev/null", O_RDONLY); /* no O_CLOEXEC */
  ASSERT_GE(leaky, 3);
  rec other = {0};
  ASSERT_EQ(0, spawn_peer(&f.loop, &other, &f.s, MCPP_STDERR_CALLBACK,
                          "echo.py", NULL));
  char *args[] = {
      "python3", "-c",
      "import os\n"
      "def is_open(n):\n"
      "    try:\n"
      "        os.fstat(n)\n"
      "        return True\n"
      "    except OSError:\n"
      "        return False\n"
      "print('fds', [n for n in range(1024) if is_open(n)], flush=True)\n"
      "import sys; sys.stdin.read()\n",
      NULL};
  start_args(&f, MCPP_STDERR_INHERIT, 0, args);
  run_until_frames(&f.loop, &f.r, 1);
  ASSERT_STR_EQ("fds [0, 1, 2]", f.r.frames[0].data);
  ASSERT_EQ(0, mcpp_conn_close(f.r.conn));
  ASSERT_EQ(0, mcpp_conn_close(other.conn));
  run_until(&f.loop, &other.closed);
  close(leaky);
  cf_finish(&f);
  assert_gone(other.pid);
}

/* The host's SIGPIPE disposition is its own: after writes to a server
 * that closed its stdin and a close, SIGPIPE is still SIG_DFL. (A host
 * on its own loop blocks SIGPIPE in that thread, as docs/c.md says.) */
TEST(conn_sigpipe_disposition_unchanged) {
  conn_fixture f;
  cf_init(&f);
  ASSERT(signal(SIGPIPE, SIG_DFL) != SIG_ERR);
  sigset_t pipe_only;
  sigemptyset(&pipe_only);
  sigaddset(&pipe_only, SIGPIPE);
  ASSERT_EQ(0, pthread_sigmask(SIG_BLOCK, &pipe_only, NULL));
  sh(&f, MCPP_STDERR_INHERIT, 0, "exec 0<&-; echo closed; exec sleep 30");
  run_until_frames(&f.loop, &f.r, 1);
  for (int i = 0; i < 20; i++)
    ASSERT_EQ(0, mcpp_conn_send(f.r.conn, "{}", 2));
  run_for(&f.loop, 50);
  ASSERT_EQ(0, mcpp_conn_close(f.r.conn));
  cf_finish(&f);
  struct sigaction now;
  ASSERT_EQ(0, sigaction(SIGPIPE, NULL, &now));
  ASSERT(now.sa_handler == SIG_DFL);
}

/* A server that ignores SIGTERM and has children that do too: close
 * SIGKILLs the whole group after the grace, every one of them is gone. */
TEST(conn_close_kills_term_ignoring_group) {
  conn_fixture f;
  cf_init(&f);
  sh(&f, MCPP_STDERR_INHERIT, 100,
     "trap '' TERM; sleep 30 & echo $!; sleep 30 & echo $!; wait");
  run_until_frames(&f.loop, &f.r, 2);
  int kids[2] = {atoi(f.r.frames[0].data), atoi(f.r.frames[1].data)};
  ASSERT_GT(kids[0], 0);
  ASSERT_GT(kids[1], 0);
  ASSERT_EQ(0, mcpp_conn_close(f.r.conn));
  cf_finish(&f);
  ASSERT_EQ(SIGKILL, f.r.close.term_signal);
  for (int i = 0; i < 2; i++) {
    errno = 0;
    ASSERT_EQ(-1, kill(kids[i], 0));
    ASSERT_EQ(ESRCH, errno);
  }
}

/* A failed start says how the server ended, quoting its stderr. */
TEST(conn_exit_reason_quotes_stderr_tail) {
  conn_fixture f;
  cf_init(&f);
  sh(&f, MCPP_STDERR_CALLBACK, 0,
     "echo 'starting' >&2; printf 'error: bad config\\n\\t/etc/x\\n' >&2; "
     "exit 1");
  cf_finish(&f);
  ASSERT_EQ(MCPP_ERR_CLOSED, f.r.close.err);
  ASSERT_EQ(1, f.r.close.exit_status);
  ASSERT_STR_EQ("server exited with status 1: starting error: bad config "
                "/etc/x",
                f.r.close_reason);
  conn_fixture g;
  cf_init(&g);
  char *args[] = {"true", NULL};
  start_args(&g, MCPP_STDERR_CALLBACK, 0, args);
  cf_finish(&g);
  ASSERT_STR_EQ("server exited with status 0", g.r.close_reason);
}

/* kill_grace_ms beyond its range is refused with a sentence naming it,
 * never wrapped (-1 from a binding is 4294967295 here). */
TEST(conn_kill_grace_validated) {
  conn_fixture f;
  cf_init(&f);
  char *args[] = {"true", NULL};
  mcpp_spawn_options o = {0};
  o.file = "true";
  o.args = args;
  uint32_t bad[] = {MCPP_MAX_KILL_GRACE_MS + 1, UINT32_MAX, 4294966296u};
  for (size_t i = 0; i < 3; i++) {
    o.kill_grace_ms = bad[i];
    mcpp_conn *c = NULL;
    ASSERT_EQ(MCPP_ERR_INVALID_ARGUMENT,
              mcpp_conn_spawn(&c, &f.loop, &f.s, &o, test_rec_callbacks(),
                              &f.r, NULL));
    ASSERT(c == NULL);
    ASSERT_STR_EQ("kill_grace_ms must be between 0 (the default, 2000) and "
                  "2147483647 ms",
                  mcpp_conn_spawn_error());
  }
  o.kill_grace_ms = MCPP_MAX_KILL_GRACE_MS;
  ASSERT_EQ(0, mcpp_conn_spawn(&f.r.conn, &f.loop, &f.s, &o,
                               test_rec_callbacks(), &f.r, NULL));
  f.r.pid = mcpp_conn_pid(f.r.conn);
  cf_finish(&f);
}

/* A stopped server is suspect from its process state before the
 * keepalive ping times out. */
TEST_TIMEOUT(conn_stopped_server_suspect_before_ping_timeout, 30) {
  conn_fixture f;
  cf_init(&f);
  f.s.interval_ms = 50;
  f.s.jitter_pct = 0;
  f.s.timeout_ms = margin_ms(3000);
  cf_start(&f, "echo.py", NULL);
  ASSERT_EQ(0, mcpp_conn_ping(f.r.conn, 0, NULL)); /* the server spoke */
  run_until_event(&f.loop, &f.r, MCPP_EV_PONG);
  ASSERT_EQ(0, kill(f.r.pid, SIGSTOP));
  uint64_t t0 = uv_hrtime();
  run_until_event(&f.loop, &f.r, MCPP_EV_SUSPECT);
  uint64_t took_ms = (uv_hrtime() - t0) / 1000000;
  ASSERT_LT(took_ms, f.s.timeout_ms);
  ASSERT_UINT_EQ(0, count_events(&f.r, MCPP_EV_TIMEOUT));
  mcpp_engine_info info;
  mcpp_engine_get_info(mcpp_conn_engine(f.r.conn), &info);
  ASSERT_EQ(MCPP_PROCESS_STOPPED, info.process_state);
  ASSERT_STR_EQ(mcpp_process_state_name(info.process_state), "stopped");
  ASSERT_STR_EQ(mcpp_process_state_name((mcpp_process_state)42), "unknown");
  ASSERT_EQ(0, mcpp_conn_close(f.r.conn));
  cf_finish(&f);
}

/* 1 once pid is gone: reaped by us (a subreaper) or no longer there. */
static int gone(int pid) {
  if (waitpid(pid, NULL, WNOHANG) == pid) return 1;
  return kill(pid, 0) < 0 && errno == ESRCH;
}

/* The host dies by SIGKILL: every server it spawned, including one that
 * ignores SIGTERM and stdin EOF, and their children, is gone within 2 s,
 * and so is the keeper. */
TEST_TIMEOUT(conn_host_sigkill_kills_every_server_group, 30) {
  ASSERT_EQ(0, prctl(PR_SET_CHILD_SUBREAPER, 1));
  int report[2];
  ASSERT_EQ(0, pipe(report));
  pid_t host = fork();
  ASSERT_GE(host, 0);
  if (host == 0) {
    close(report[0]);
    uv_loop_t loop;
    uv_loop_init(&loop);
    mcpp_settings s;
    test_settings(&s);
    rec r[2];
    memset(r, 0, sizeof r);
    char *stubborn[] = {"sh", "-c",
                        "trap '' TERM HUP; sleep 30 & echo $!; "
                        "while :; do read x || sleep 1; done",
                        NULL};
    mcpp_spawn_options o = {0};
    o.file = "sh";
    o.args = stubborn;
    if (mcpp_conn_spawn(&r[0].conn, &loop, &s, &o, test_rec_callbacks(),
                        &r[0], NULL))
      _exit(2);
    if (spawn_peer(&loop, &r[1], &s, MCPP_STDERR_INHERIT, "echo.py", NULL))
      _exit(2);
    while (r[0].n_frames < 1) uv_run(&loop, UV_RUN_ONCE);
    int pids[3] = {mcpp_conn_pid(r[0].conn), atoi(r[0].frames[0].data),
                   mcpp_conn_pid(r[1].conn)};
    if (write(report[1], pids, sizeof pids) != sizeof pids) _exit(2);
    for (;;) pause();
  }
  close(report[1]);
  int pids[3];
  ASSERT_EQ(sizeof pids, read(report[0], pids, sizeof pids));
  close(report[0]);
  for (int i = 0; i < 3; i++) ASSERT_EQ(0, kill(pids[i], 0));
  ASSERT_EQ(0, kill(host, SIGKILL));
  ASSERT_EQ(host, waitpid(host, NULL, 0));
  uint64_t t0 = uv_hrtime();
  for (int left = 3; left;) {
    left = 0;
    for (int i = 0; i < 3; i++)
      if (pids[i] && gone(pids[i]))
        pids[i] = 0;
      else if (pids[i])
        left++;
    if ((uv_hrtime() - t0) / 1000000 >= margin_ms(2000))
      MCPP_FAIL("still there after 2 s: %d %d %d", pids[0], pids[1],
                pids[2]);
    if (left) usleep(10000);
  }
  /* The keeper (reparented to us) exits too: no child is left. */
  for (;;) {
    pid_t p = waitpid(-1, NULL, WNOHANG);
    if (p < 0 && errno == ECHILD) break;
    ASSERT_LT((uv_hrtime() - t0) / 1000000, margin_ms(3000));
    if (p == 0) usleep(10000);
  }
}

/* A host whose stderr is close-on-exec (Node marks its fds 0-2 so) still
 * gives an inheriting server its stderr: the server logs to it, keeps
 * working, and the host's stderr gets the line. */
TEST(conn_inherited_stderr_survives_host_cloexec) {
  conn_fixture f;
  cf_init(&f);
  char path[] = "/tmp/mcpp-stderr-XXXXXX";
  int file = mkstemp(path);
  ASSERT_GE(file, 0);
  unlink(path);
  int saved = fcntl(2, F_DUPFD_CLOEXEC, 3);
  ASSERT_GE(saved, 0);
  ASSERT_EQ(2, dup2(file, 2));
  ASSERT_EQ(0, fcntl(2, F_SETFD, FD_CLOEXEC));
  close(file);
  char *args[] = {"python3", "-c",
                  "import os, sys\n"
                  "os.write(2, b'server log line\\n')\n"
                  "print('logged', flush=True)\n"
                  "sys.stdin.read()\n",
                  NULL};
  start_args(&f, MCPP_STDERR_INHERIT, 0, args);
  run_until_frames(&f.loop, &f.r, 1);
  ASSERT_STR_EQ("logged", f.r.frames[0].data);
  ASSERT_EQ(0, mcpp_conn_close(f.r.conn));
  run_until(&f.loop, &f.r.closed);
  /* The host's own fd 2 is unchanged: still close-on-exec. */
  ASSERT_EQ(FD_CLOEXEC, fcntl(2, F_GETFD) & FD_CLOEXEC);
  char got[64] = {0};
  ASSERT_EQ(16, pread(2, got, sizeof got - 1, 0));
  ASSERT_STR_EQ("server log line\n", got);
  ASSERT_EQ(2, dup2(saved, 2));
  close(saved);
  cf_finish(&f);
}

/* A host with its stderr closed gives an inheriting server /dev/null
 * there, not a hole its first open() would fill. */
TEST(conn_inherited_stderr_closed_in_host_is_dev_null) {
  conn_fixture f;
  cf_init(&f);
  char *args[] = {"python3", "-c",
                  "import os, sys\n"
                  "print(os.readlink('/proc/self/fd/2'), flush=True)\n"
                  "sys.stdin.read()\n",
                  NULL};
  /* libuv opens its spare fd (for EMFILE) with the loop's first stream:
   * before fd 2 is closed, or it would be that fd. */
  uv_pipe_t first;
  ASSERT_EQ(0, uv_pipe_init(&f.loop, &first, 0));
  uv_close((uv_handle_t *)&first, NULL);
  int saved = fcntl(2, F_DUPFD_CLOEXEC, 3);
  ASSERT_GE(saved, 0);
  close(2);
  mcpp_spawn_options o = {0};
  o.file = args[0];
  o.args = args;
  int rc = mcpp_conn_spawn(&f.r.conn, &f.loop, &f.s, &o, test_rec_callbacks(),
                           &f.r, NULL);
  ASSERT_EQ(2, dup2(saved, 2));
  close(saved);
  ASSERT_EQ(0, rc);
  f.r.pid = mcpp_conn_pid(f.r.conn);
  run_until_frames(&f.loop, &f.r, 1);
  ASSERT_STR_EQ("/dev/null", f.r.frames[0].data);
  ASSERT_EQ(0, mcpp_conn_close(f.r.conn));
  cf_finish(&f);
}

/* kill_grace_ms MCPP_KILL_GRACE_NONE: the close SIGKILLs the group at
 * once. The server would note a SIGTERM in a file (it traps it); with no
 * grace it never gets one, and it ends by SIGKILL. */
TEST(conn_kill_grace_none_sigkills_at_once) {
  conn_fixture f;
  cf_init(&f);
  char dir[] = "/tmp/mcpp-grace-XXXXXX";
  ASSERT(mkdtemp(dir) != NULL);
  char script[256], noted[64];
  snprintf(noted, sizeof noted, "%s/term", dir);
  snprintf(script, sizeof script,
           "trap 'echo term > %s' TERM; echo ready; "
           "while :; do sleep 0.01; done",
           noted);
  sh(&f, MCPP_STDERR_INHERIT, MCPP_KILL_GRACE_NONE, script);
  run_until_frames(&f.loop, &f.r, 1);
  ASSERT_EQ(0, mcpp_conn_close(f.r.conn));
  cf_finish(&f);
  ASSERT_EQ(SIGKILL, f.r.close.term_signal);
  ASSERT_EQ(-1, access(noted, F_OK));
  /* The same server with a grace gets its SIGTERM first (the trap runs,
   * then the grace ends it): the file is how the test above can fail. */
  conn_fixture g;
  cf_init(&g);
  sh(&g, MCPP_STDERR_INHERIT, 300, script);
  run_until_frames(&g.loop, &g.r, 1);
  ASSERT_EQ(0, mcpp_conn_close(g.r.conn));
  cf_finish(&g);
  ASSERT_EQ(SIGKILL, g.r.close.term_signal);
  ASSERT_EQ(0, access(noted, F_OK));
  unlink(noted);
  rmdir(dir);
}

/* The state letter of /proc/<pid>/stat, or 0 once there is no such
 * process. */
static char proc_state(int pid) {
  char path[64], buf[512];
  snprintf(path, sizeof path, "/proc/%d/stat", pid);
  int fd = open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return 0;
  ssize_t n = read(fd, buf, sizeof buf - 1);
  close(fd);
  if (n <= 0) return 0;
  buf[n] = '\0';
  const char *end = strrchr(buf, ')');
  return end && end[1] == ' ' ? end[2] : '?';
}

/* A killed server that outlives the kill wait (stuck in the kernel: here
 * our SIGKILLs are made not to take) no longer holds up the close, and is
 * still watched: once it finally dies it is reaped (no zombie stays), the
 * keeper forgets it, the watch and its thread go, and the loop closed
 * clean before all that. */
TEST_TIMEOUT(conn_server_outliving_the_kill_wait_is_reaped_when_it_dies, 40) {
  for (int round = 0; round < 2; round++) {
    mcpp__proc_force_backoff = round; /* with a pidfd, then without */
    mcpp__proc_sigkill_lost = 1;
    conn_fixture f;
    cf_init(&f);
    sh(&f, MCPP_STDERR_INHERIT, 50, "trap '' TERM; echo ready; exec sleep 1000");
    run_until_frames(&f.loop, &f.r, 1);
    ASSERT_EQ(0, mcpp_conn_close(f.r.conn));
    run_until(&f.loop, &f.r.closed);
    ASSERT_EQ(0, uv_run(&f.loop, UV_RUN_DEFAULT));
    ASSERT_EQ(0, uv_loop_close(&f.loop));
    /* Closed without the reap: it still runs, and is watched. */
    char st = proc_state(f.r.pid);
    ASSERT(st == 'S' || st == 'R');
    ASSERT_EQ(2, mcpp__orphans()); /* it, and the reaper thread */
    mcpp__proc_sigkill_lost = 0;
    ASSERT_EQ(0, kill(f.r.pid, SIGKILL));
    /* Gone from /proc means reaped: a zombie would stay 'Z' for good. */
    uint64_t t0 = uv_hrtime();
    while (proc_state(f.r.pid) != 0) {
      if ((uv_hrtime() - t0) / 1000000 > margin_ms(5000))
        MCPP_FAIL("server %d still in state %c", f.r.pid, proc_state(f.r.pid));
      usleep(5000);
    }
    while (mcpp__orphans() != 0) {
      ASSERT_LT((uv_hrtime() - t0) / 1000000, margin_ms(5000));
      usleep(5000);
    }
    assert_gone(f.r.pid);
    ASSERT_EQ(f.fds, count_fds());
    for (size_t i = 0; i < f.r.n_frames; i++) free(f.r.frames[i].data);
    free(f.r.frames);
  }
}

static int died_report_fd = -1;

/* The hook of the test below: the host reports the pid and dies there. */
static void die_right_after_spawn(int pid) {
  if (write(died_report_fd, &pid, sizeof pid) != sizeof pid) _exit(2);
  raise(SIGKILL);
}

/* A host killed right after the spawn returned, before it did anything
 * else, leaves no server behind: the server (ignoring SIGTERM, stdin EOF
 * and SIGHUP) was known to the keeper before it could run, and is gone
 * within the keeper's bound. */
TEST_TIMEOUT(conn_host_killed_right_after_spawn_leaves_no_server, 30) {
  ASSERT_EQ(0, prctl(PR_SET_CHILD_SUBREAPER, 1));
  int report[2];
  ASSERT_EQ(0, pipe(report));
  pid_t host = fork();
  ASSERT_GE(host, 0);
  if (host == 0) {
    close(report[0]);
    died_report_fd = report[1];
    uv_loop_t loop;
    uv_loop_init(&loop);
    mcpp_settings s;
    test_settings(&s);
    rec r;
    memset(&r, 0, sizeof r);
    char *stubborn[] = {"sh", "-c",
                        "trap '' TERM HUP; while :; do read x || sleep 1; done",
                        NULL};
    mcpp_spawn_options o = {0};
    o.file = "sh";
    o.args = stubborn;
    mcpp__proc_after_spawn = die_right_after_spawn;
    mcpp_conn_spawn(&r.conn, &loop, &s, &o, test_rec_callbacks(), &r, NULL);
    _exit(3); /* not reached */
  }
  close(report[1]);
  int pid = 0;
  ASSERT_EQ(sizeof pid, read(report[0], &pid, sizeof pid));
  close(report[0]);
  int status;
  ASSERT_EQ(host, waitpid(host, &status, 0));
  ASSERT(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL);
  uint64_t t0 = uv_hrtime();
  while (!gone(pid)) {
    if ((uv_hrtime() - t0) / 1000000 >= margin_ms(3000)) {
      kill(-pid, SIGKILL); /* not left behind by the test either */
      MCPP_FAIL("server %d still there 3 s after its host died", pid);
    }
    usleep(10000);
  }
  for (;;) {
    pid_t p = waitpid(-1, NULL, WNOHANG);
    if (p < 0 && errno == ECHILD) break;
    ASSERT_LT((uv_hrtime() - t0) / 1000000, margin_ms(4000));
    if (p == 0) usleep(10000);
  }
}
