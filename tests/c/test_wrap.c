/*
 * mcpp_wrap_run: the proxy, run on a thread of the test with pipes for
 * the client's side. Byte-exact forwarding both ways (a `cat` server sends
 * every client line back, odd ones included), server pings forwarded and
 * not answered, in-flight requests answered when the server exits, bad
 * options refused, and nothing left open.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include "task.h"
#include "test_conn_support.h"

typedef struct wrap_run {
  mcpp_wrap_options o;
  int to_wrap[2];   /* we write [1]; the wrap reads [0] as its stdin */
  int from_wrap[2]; /* the wrap writes [1] as its stdout; we read [0] */
  pthread_t thread;
  int status;
} wrap_run;

static void *run_thread(void *arg) {
  wrap_run *r = arg;
  r->status = mcpp_wrap_run(&r->o);
  return NULL;
}

/* The pipes and the options for args (restart as given); launch() runs it,
 * after the test set what else it needs. */
static void prepare(wrap_run *r, char **args, int restart) {
  memset(r, 0, sizeof *r);
  ASSERT_EQ(0, pipe2(r->to_wrap, O_CLOEXEC));
  ASSERT_EQ(0, pipe2(r->from_wrap, O_CLOEXEC));
  mcpp_wrap_options_default(&r->o);
  r->o.spawn.file = args[0];
  r->o.spawn.args = args;
  r->o.restart = restart;
  r->o.in_fd = r->to_wrap[0];
  r->o.out_fd = r->from_wrap[1];
}

static void launch(wrap_run *r) {
  ASSERT(mcpp_wrap_options_problem(&r->o) == NULL);
  ASSERT_EQ(0, pthread_create(&r->thread, NULL, run_thread, r));
}

static void start(wrap_run *r, char **args, int restart) {
  prepare(r, args, restart);
  launch(r);
}

/* Closes our end of its stdin and waits for the wrap to return. */
static int finish(wrap_run *r) {
  if (r->to_wrap[1] >= 0) close(r->to_wrap[1]);
  ASSERT_EQ(0, pthread_join(r->thread, NULL));
  close(r->to_wrap[0]);
  close(r->from_wrap[1]);
  return r->status;
}

static void put(wrap_run *r, const char *s) {
  size_t n = strlen(s);
  ASSERT_EQ((ssize_t)n, write(r->to_wrap[1], s, n));
}

/* Reads until `lines` newlines arrived, within a bound; returns the bytes
 * read (NUL-terminated: cap - 1 at most). */
static size_t get_lines(wrap_run *r, char *buf, size_t cap, int lines) {
  size_t have = 0;
  int seen = 0;
  while (seen < lines && have + 1 < cap) {
    struct pollfd p = {r->from_wrap[0], POLLIN, 0};
    ASSERT_EQ(1, poll(&p, 1, (int)margin_ms(10000)));
    ssize_t n = read(r->from_wrap[0], buf + have, cap - 1 - have);
    ASSERT(n > 0);
    for (ssize_t i = 0; i < n; i++) seen += buf[have + (size_t)i] == '\n';
    have += (size_t)n;
  }
  buf[have] = '\0';
  return have;
}

TEST(wrap_forwards_every_byte_both_ways_in_order) {
  int fds = fd_baseline();
  /* cat: whatever the client sends comes back as the server's output,
   * so both directions are checked at once. */
  char *args[] = {"cat", NULL};
  wrap_run r;
  start(&r, args, 0);
  static const char input[] =
      "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"initialize\",\"params\":{}}\n"
      "{ \"jsonrpc\" : \"2.0\" , \"id\" : 12345678901234567890123 , "
      "\"method\" : \"x\" }\n"
      "{\"jsonrpc\":\"2.0\",\"id\":\"p\",\"method\":\"ping\"}\r\n"
      "\n"
      "not json at all \xff\xfe\n"
      "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}\n";
  put(&r, input);
  /* What comes back is every line but the one that is not JSON: toward
   * the client a server's stray output is dropped (issue 24). */
  static const char echoed[] =
      "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"initialize\",\"params\":{}}\n"
      "{ \"jsonrpc\" : \"2.0\" , \"id\" : 12345678901234567890123 , "
      "\"method\" : \"x\" }\n"
      "{\"jsonrpc\":\"2.0\",\"id\":\"p\",\"method\":\"ping\"}\r\n"
      "\n"
      "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}\n";
  char out[sizeof input + 512];
  size_t n = get_lines(&r, out, sizeof out, 5);
  ASSERT_EQ(sizeof echoed - 1, n);
  ASSERT(memcmp(out, echoed, n) == 0);
  /* The echoed ping was the server's to the client: it reached us, and
   * mcpping did not answer it (cat would have echoed an answer too). At
   * our EOF cat exits; the requests it never answered get their errors,
   * ids echoed exactly. */
  close(r.to_wrap[1]);
  r.to_wrap[1] = -1;
  n = get_lines(&r, out, sizeof out, 2);
  ASSERT(strncmp(out, "{\"jsonrpc\":\"2.0\",\"id\":1,\"error\":", 32) == 0);
  ASSERT(strstr(out, "\n{\"jsonrpc\":\"2.0\",\"id\":12345678901234567890123,"
                     "\"error\":") != NULL);
  ASSERT(strstr(out, "\"ping\"") == NULL);
  ASSERT_EQ(0, finish(&r));
  close(r.from_wrap[0]);
  ASSERT_EQ(fds, count_fds());
}

TEST(wrap_answers_in_flight_when_the_server_exits_without_restart) {
  int fds = fd_baseline();
  char *args[] = {"python3", (char *)peer_path("dies.py"), "--after", "1",
                  NULL};
  wrap_run r;
  start(&r, args, 0);
  put(&r, "{\"jsonrpc\":\"2.0\",\"id\":[\"odd\"],\"method\":\"tools/call\"}\n");
  char out[1024];
  size_t n = get_lines(&r, out, sizeof out, 1);
  ASSERT_EQ(1, finish(&r));
  ASSERT(strstr(out, "\"id\":[\"odd\"],\"error\":{\"code\":-32003,"
                     "\"message\":\"server exited\"") != NULL);
  ASSERT(strstr(out, "\"data\":{\"mcpping\":\"in_doubt\",\"reason\":") != NULL);
  ASSERT(out[n - 1] == '\n' && memchr(out, '\n', n) == out + n - 1);
  close(r.from_wrap[0]);
  ASSERT_EQ(fds, count_fds());
}

/* Points fd 2 at a pipe (each test runs in a child of its own); returns
 * the read end. */
static int capture_stderr(void) {
  int p[2];
  ASSERT_EQ(0, pipe2(p, O_CLOEXEC));
  ASSERT_EQ(2, dup2(p[1], 2));
  close(p[1]);
  return p[0];
}

/* Reads what stderr got once its writers are gone. */
static void read_stderr(int fd, char *buf, size_t cap) {
  int devnull = open("/dev/null", O_WRONLY | O_CLOEXEC);
  dup2(devnull, 2); /* our copy of the write end goes: EOF follows */
  close(devnull);
  size_t have = 0;
  ssize_t n;
  while (have + 1 < cap && (n = read(fd, buf + have, cap - 1 - have)) > 0)
    have += (size_t)n;
  buf[have] = '\0';
  close(fd);
}

TEST(wrap_answers_initialize_with_the_os_error_when_the_server_cannot_start) {
  int err = capture_stderr();
  char *args[] = {"/nonexistent/mcp-server", "--flag", NULL};
  wrap_run r;
  start(&r, args, 1);
  put(&r, "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/x\"}\n"
          "{\"jsonrpc\":\"2.0\",\"id\":0,\"method\":\"initialize\",\"params\":{}}\n");
  char out[1024];
  get_lines(&r, out, sizeof out, 1);
  ASSERT_EQ(2, finish(&r));
  ASSERT(strncmp(out, "{\"jsonrpc\":\"2.0\",\"id\":0,\"error\":{\"code\":-32003,"
                      "\"message\":\"server could not start\",\"data\":{\"mcpping\":"
                      "\"cancelled\",\"reason\":\"cannot start /nonexistent/mcp-server: "
                      "no such file or directory (ENOENT)\"}}}\n", 200) == 0);
  close(r.from_wrap[0]);
  char said[2048];
  read_stderr(err, said, sizeof said);
  ASSERT(strstr(said, "mcpping wrap: cannot start /nonexistent/mcp-server: no such "
                      "file or directory (ENOENT)\n") != NULL);
}

TEST(wrap_names_eacces_when_the_server_is_not_executable) {
  int err = capture_stderr();
  char path[] = "/tmp/mcpp-noexec-XXXXXX";
  int fd = mkstemp(path);
  ASSERT(fd >= 0);
  close(fd); /* mode 0600: not executable */
  char *args[] = {path, NULL};
  wrap_run r;
  start(&r, args, 1);
  put(&r, "{\"jsonrpc\":\"2.0\",\"id\":\"a\",\"method\":\"initialize\"}\n");
  char out[1024];
  get_lines(&r, out, sizeof out, 1);
  ASSERT_EQ(2, finish(&r));
  unlink(path);
  ASSERT(strstr(out, "permission denied (EACCES)") != NULL);
  close(r.from_wrap[0]);
  char said[2048];
  read_stderr(err, said, sizeof said);
  ASSERT(strstr(said, "permission denied (EACCES)") != NULL);
  ASSERT(strstr(said, path) != NULL);
}

TEST(wrap_drops_non_json_server_lines_and_warns_once_with_the_count) {
  int err = capture_stderr();
  char *args[] = {"cat", NULL};
  wrap_run r;
  start(&r, args, 0);
  put(&r, "Starting server on stdio...\n"
          "{\"jsonrpc\":\"2.0\",\"method\":\"a\"}\n"
          "INFO: still logging to stdout\n"
          "{\"jsonrpc\":\"2.0\",\"method\":\"b\"}\n");
  char out[1024];
  size_t n = get_lines(&r, out, sizeof out, 2);
  ASSERT_EQ(0, finish(&r));
  ASSERT(strncmp(out, "{\"jsonrpc\":\"2.0\",\"method\":\"a\"}\n"
                      "{\"jsonrpc\":\"2.0\",\"method\":\"b\"}\n", n) == 0);
  close(r.from_wrap[0]);
  char said[4096];
  read_stderr(err, said, sizeof said);
  const char *warn = strstr(said, "dropped, not forwarded");
  ASSERT(warn != NULL);
  ASSERT(strstr(warn + 1, "dropped, not forwarded") == NULL); /* once */
  ASSERT(strstr(said, "the server wrote a line that is not JSON-RPC: \"Starting "
                      "server on stdio...\"; dropped, not forwarded to the client "
                      "(servers log to stderr)\n") != NULL);
  ASSERT(strstr(said, "the server wrote 2 lines that were not JSON-RPC on stdout "
                      "(dropped)\n") != NULL);
}

TEST(wrap_refuses_bad_options_by_name) {
  mcpp_wrap_options o;
  mcpp_wrap_options_default(&o);
  ASSERT(strstr(mcpp_wrap_options_problem(&o), "server command") != NULL);
  char *args[] = {"cat", NULL};
  o.spawn.file = args[0];
  o.spawn.args = args;
  ASSERT(mcpp_wrap_options_problem(&o) == NULL);
  mcpp_settings s;
  mcpp_wrap_settings_default(&s);
  o.settings = &s;
  s.timeout_ms = 0;
  ASSERT(strstr(mcpp_wrap_options_problem(&o), "timeout_ms") != NULL);
  s.timeout_ms = 5000;
  o.restart = 2;
  ASSERT(strstr(mcpp_wrap_options_problem(&o), "restart") != NULL);
  o.restart = 1;
  s.forward_peer_pings = 7; /* forced to 1 by the wrap */
  ASSERT(mcpp_wrap_options_problem(&o) == NULL);
  /* Settings and options of an unknown version are refused by name. */
  s.version = MCPP_SETTINGS_VERSION + 1;
  ASSERT(strstr(mcpp_wrap_options_problem(&o), "settings.version") != NULL);
  s.version = MCPP_SETTINGS_VERSION;
  o.version = 0;
  ASSERT(strstr(mcpp_wrap_options_problem(&o), "options.version") != NULL);
  ASSERT(mcpp_wrap_options_problem(NULL) != NULL);
}

TEST_TIMEOUT(wrap_restarts_replays_the_handshake_and_asks_for_refresh, 60) {
  int fds = fd_baseline();
  char *args[] = {"python3", (char *)peer_path("dies.py"), "--after", "3",
                  "--list-changed", NULL};
  wrap_run r;
  start(&r, args, 1);
  put(&r, "{\"jsonrpc\":\"2.0\",\"id\":\"init\",\"method\":\"initialize\","
          "\"params\":{\"protocolVersion\":\"2025-11-25\",\"capabilities\":{},"
          "\"clientInfo\":{\"name\":\"c\",\"version\":\"1\"}}}\n");
  char out[4096];
  get_lines(&r, out, sizeof out, 1);
  ASSERT(strstr(out, "\"id\":\"init\",\"result\"") != NULL);
  put(&r, "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}\n");
  /* The third message ends the server, unanswered: we answer it. */
  put(&r, "{\"jsonrpc\":\"2.0\",\"id\":5,\"method\":\"tools/call\"}\n");
  get_lines(&r, out, sizeof out, 1);
  ASSERT(strstr(out, "\"id\":5,\"error\":{\"code\":-32003,\"message\":"
                     "\"server exited; restarted\"") != NULL);
  /* Waits for the new server, which gets the handshake first; the client
   * sees no second initialize answer, and the refresh its tools and
   * prompts allow. */
  put(&r, "{\"jsonrpc\":\"2.0\",\"id\":6,\"method\":\"tools/list\"}\n");
  get_lines(&r, out, sizeof out, 3);
  ASSERT(strstr(out, "notifications/tools/list_changed") != NULL);
  ASSERT(strstr(out, "notifications/prompts/list_changed") != NULL);
  ASSERT(strstr(out, "\"id\":6,\"result\":{\"tools\":[]}") != NULL);
  ASSERT(strstr(out, "resources/list_changed") == NULL);
  ASSERT(strstr(out, "serverInfo") == NULL);
  ASSERT_EQ(0, finish(&r));
  close(r.from_wrap[0]);
  ASSERT_EQ(fds, count_fds());
}

/* Reads fd (stderr's pipe) until `needle` was seen `times`, within a
 * bound; returns the bytes read (NUL-terminated). */
static void read_until(int fd, char *buf, size_t cap, const char *needle, int times) {
  size_t have = 0;
  buf[0] = '\0';
  for (;;) {
    int seen = 0;
    for (const char *p = buf; (p = strstr(p, needle)) != NULL; p++) seen++;
    if (seen >= times) return;
    struct pollfd p = {fd, POLLIN, 0};
    ASSERT_EQ(1, poll(&p, 1, (int)margin_ms(10000)));
    ssize_t n = read(fd, buf + have, cap - 1 - have);
    ASSERT(n > 0);
    have += (size_t)n;
    buf[have] = '\0';
  }
}

/* A server that dies as it starts is restarted with reconnect's backoff (1
 * s, then doubling): a spawn that succeeds is no sign it works. The delays
 * are read from what wrap says, not timed. */
TEST_TIMEOUT(wrap_backs_off_from_a_server_that_dies_as_it_starts, 30) {
  int err = capture_stderr();
  char *args[] = {"sh", "-c", "exit 3", NULL};
  wrap_run r;
  start(&r, args, 1);
  put(&r, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"initialize\",\"params\":{}}\n");
  char said[4096];
  read_until(err, said, sizeof said, "restarting in ", 2);
  ASSERT_EQ(0, finish(&r)); /* the client left: wrap is done */
  const char *first = strstr(said, "restarting in ");
  const char *second = strstr(first + 1, "restarting in ");
  long d1 = strtol(first + strlen("restarting in "), NULL, 10);
  long d2 = strtol(second + strlen("restarting in "), NULL, 10);
  ASSERT(d1 >= 800 && d1 <= 1200);
  ASSERT(d2 >= 1600 && d2 <= 2400); /* it stayed at ~1 s, for ever */
  char rest[4096];
  read_stderr(err, rest, sizeof rest);
  close(r.from_wrap[0]);
}

/* A port free on 127.0.0.1 right now. */
static int free_port(void) {
  int s = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  struct sockaddr_in a = {.sin_family = AF_INET,
                          .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
  socklen_t len = sizeof a;
  ASSERT_EQ(0, bind(s, (struct sockaddr *)&a, sizeof a));
  ASSERT_EQ(0, getsockname(s, (struct sockaddr *)&a, &len));
  close(s);
  return ntohs(a.sin_port);
}

TEST(wrap_serves_prometheus_text_on_loopback) {
  int fds = fd_baseline();
  char *args[] = {"cat", NULL};
  char addr[32];
  int port = free_port();
  snprintf(addr, sizeof addr, "127.0.0.1:%d", port);
  wrap_run r;
  prepare(&r, args, 1);
  mcpp_settings named;
  mcpp_wrap_settings_default(&named);
  named.peer_name = "cat \"quoted\"";
  r.o.settings = &named;
  r.o.metrics_addr = addr;
  launch(&r);
  /* A round trip through cat: the wrap is up, and listening. */
  put(&r, "{\"jsonrpc\":\"2.0\",\"method\":\"x\"}\n");
  char out[256];
  get_lines(&r, out, sizeof out, 1);
  int s = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  struct sockaddr_in a = {.sin_family = AF_INET,
                          .sin_port = htons((uint16_t)port),
                          .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
  ASSERT_EQ(0, connect(s, (struct sockaddr *)&a, sizeof a));
  static const char get[] = "GET /metrics HTTP/1.1\r\nHost: x\r\n\r\n";
  ASSERT_EQ((ssize_t)sizeof get - 1, write(s, get, sizeof get - 1));
  static char text[16384];
  size_t n = 0;
  for (;;) {
    struct pollfd p = {s, POLLIN, 0};
    ASSERT_EQ(1, poll(&p, 1, (int)margin_ms(10000)));
    ssize_t got = read(s, text + n, sizeof text - 1 - n);
    ASSERT(got >= 0);
    if (got == 0) break;
    n += (size_t)got;
  }
  text[n] = '\0';
  close(s);
  ASSERT(strncmp(text, "HTTP/1.1 200 OK\r\n", 17) == 0);
  ASSERT(strstr(text, "# TYPE mcpping_ping_rtt_seconds histogram\n") != NULL);
  /* The server label (the config entry's name) defaults to the peer's. */
  ASSERT(strstr(text, "mcpping_peer_state{server=\"cat \\\"quoted\\\"\","
                      "peer=\"cat \\\"quoted\\\"\","
                      "transport=\"stdio\",state=\"alive\"} 1\n") != NULL);
  ASSERT(strstr(text, "mcpping_ping_rtt_seconds_bucket{server=\"cat "
                      "\\\"quoted\\\"\",peer=\"cat \\\"quoted\\\"\","
                      "transport=\"stdio\",le=\"+Inf\"} 0\n") != NULL);
  ASSERT_EQ(0, finish(&r));
  close(r.from_wrap[0]);
  ASSERT_EQ(fds, count_fds());
}

/* A --metrics port in use: wrap refuses to start and names the errno, as
 * watch does ("cannot listen on ...: EADDRINUSE"). */
TEST(wrap_names_the_errno_of_a_metrics_port_in_use) {
  int err = capture_stderr();
  int s = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
  socklen_t len = sizeof a;
  ASSERT_EQ(0, bind(s, (struct sockaddr *)&a, sizeof a));
  ASSERT_EQ(0, listen(s, 1));
  ASSERT_EQ(0, getsockname(s, (struct sockaddr *)&a, &len));
  char addr[32];
  snprintf(addr, sizeof addr, "127.0.0.1:%d", ntohs(a.sin_port));
  char *args[] = {"cat", NULL};
  wrap_run r;
  prepare(&r, args, 1);
  r.o.metrics_addr = addr;
  launch(&r);
  ASSERT(finish(&r) != 0);
  char said[1024], want[128];
  read_stderr(err, said, sizeof said);
  snprintf(want, sizeof want, "--metrics %s: cannot listen: EADDRINUSE", addr);
  ASSERT(strstr(said, want) != NULL);
  close(s);
  close(r.from_wrap[0]);
}
