/* mcpping watch's sans-I/O core (csrc/src/app/watch.c): the command line,
 * the re-open backoff, state from events, the listener's routing, the
 * /status and /metrics bytes, and that no secret reaches any of them. */
#include <stdlib.h>
#include <string.h>

#include "mcpping.h"
#include "task.h"

#define ARGV(...) ((const char *const[]){__VA_ARGS__})
#define NARGS(...) ((int)(sizeof ARGV(__VA_ARGS__) / sizeof(const char *)))
#define PARSE(o, ...) ASSERT_EQ(mcpp_cli_parse(o, NARGS(__VA_ARGS__), ARGV(__VA_ARGS__)), 0)

TEST(app_watch_parse_defaults_and_listen) {
  mcpp_cli_options o;
  PARSE(&o, "watch", "--config", "a.json");
  ASSERT_EQ(o.mode, MCPP_CLI_WATCH);
  ASSERT_STR_EQ(o.listen_host, "127.0.0.1");
  ASSERT_EQ(o.listen_port, 9464);
  ASSERT_EQ(o.interval_ms, 15000);
  ASSERT_EQ(o.timeout_ms, 5000);
  ASSERT_EQ(o.failures, 3);
  ASSERT_EQ(o.nconfigs, 1);
  mcpp_cli_options_free(&o);
  PARSE(&o, "watch", "--config=auto", "--listen", "[::1]:0", "-i0.2", "-W", "0.5",
        "--failures", "2");
  ASSERT_EQ(o.mode, MCPP_CLI_WATCH);
  ASSERT_STR_EQ(o.listen_host, "::1");
  ASSERT_EQ(o.listen_port, 0);
  ASSERT_EQ(o.interval_ms, 200);
  ASSERT_EQ(o.timeout_ms, 500);
  ASSERT_EQ(o.failures, 2);
  mcpp_cli_options_free(&o);
  PARSE(&o, "watch", "--config", "a", "--listen", ":9000");
  ASSERT_STR_EQ(o.listen_host, "127.0.0.1");
  ASSERT_EQ(o.listen_port, 9000);
  mcpp_cli_options_free(&o);
  PARSE(&o, "watch", "--help");
  ASSERT_EQ(o.mode, MCPP_CLI_WATCH_HELP);
  mcpp_cli_options_free(&o);
}

TEST(app_watch_refuses_a_non_loopback_listen_without_listen_any) {
  mcpp_cli_options o;
  PARSE(&o, "watch", "--config", "a", "--listen", "0.0.0.0:9464");
  ASSERT_EQ(o.mode, MCPP_CLI_BAD_USAGE);
  ASSERT_STR_EQ(o.error, "--listen 0.0.0.0 is not a loopback address: /metrics and /status "
                         "would be open to the network (add --listen-any to mean it)");
  mcpp_cli_options_free(&o);
  PARSE(&o, "watch", "--config", "a", "--listen", "0.0.0.0:9464", "--listen-any");
  ASSERT_EQ(o.mode, MCPP_CLI_WATCH);
  mcpp_cli_options_free(&o);
  PARSE(&o, "watch", "--listen", "127.0.0.1:1");
  ASSERT_EQ(o.mode, MCPP_CLI_BAD_USAGE);
  ASSERT_STR_EQ(o.error, "watch needs --config FILE or auto (usage: mcpping watch --config "
                         "FILE|auto [--listen HOST:PORT] [options])");
  mcpp_cli_options_free(&o);
  PARSE(&o, "watch", "--config", "a", "--listen", "127.0.0.1:70000");
  ASSERT_STR_EQ(o.error, "--listen: the port must be between 0 and 65535, not 70000");
  mcpp_cli_options_free(&o);
  PARSE(&o, "watch", "--config", "a", "-c", "3");
  ASSERT_EQ(o.mode, MCPP_CLI_BAD_USAGE);
  mcpp_cli_options_free(&o);
}

static mcpp_watch *new_watch(mcpp_cli_options *o) {
  PARSE(o, "watch", "--config", "a.json", "--listen", "127.0.0.1:0");
  mcpp_watch *w;
  ASSERT_EQ(mcpp_watch_new(&w, o), 0);
  return w;
}

static char *respond(mcpp_watch *w, const char *head) {
  char *out;
  size_t n;
  ASSERT_EQ(mcpp_watch_respond(w, 0, head, strlen(head), &out, &n), 0);
  ASSERT_EQ(strlen(out), n);
  return out;
}

static const char *output(mcpp_watch *w) {
  size_t n;
  return mcpp_watch_output(w, &n);
}

TEST(app_watch_backoff_reopens_a_failed_server_later_each_time) {
  mcpp_cli_options o;
  mcpp_watch *w = new_watch(&o);
  ASSERT_EQ(mcpp_watch_add(w, "a", "stdio", NULL, 0, NULL), 0);
  ASSERT_EQ(mcpp_watch_add(w, "b", "stdio", NULL, 0, "disabled"), 1);
  mcpp_watch_listening(w, "127.0.0.1", 4242);
  ASSERT_STR_EQ(output(w), "mcpping watch: watching 1 server; metrics on "
                           "http://127.0.0.1:4242/metrics, status on "
                           "http://127.0.0.1:4242/status\n"
                           "mcpping watch: b: not watched (disabled)\n");
  int64_t next;
  ASSERT_EQ(mcpp_watch_due(w, 0, &next), 0);
  ASSERT_EQ(next, -1);
  ASSERT_EQ(mcpp_watch_due(w, 0, &next), -1); /* given out once */
  mcpp_watch_open_failed(w, 0, 100, MCPP_WATCH_WHY_TEXT, "cannot start x: no such file or directory (ENOENT)");
  ASSERT_STR_EQ(output(w), "mcpping watch: a: cannot open: cannot start x: no such file or "
                           "directory (ENOENT); retrying in 1 s\n");
  ASSERT_EQ(mcpp_watch_due(w, 1099, &next), -1);
  ASSERT_EQ(next, 1100);
  ASSERT_EQ(mcpp_watch_due(w, 1100, &next), 0);
  mcpp_watch_open_failed(w, 0, 1100, MCPP_WATCH_WHY_TEXT, "again");
  ASSERT_EQ(mcpp_watch_due(w, 1100, &next), -1);
  ASSERT_EQ(next, 3100); /* doubled */
  for (int k = 0; k < 10; k++) {
    ASSERT_EQ(mcpp_watch_due(w, next, &next), 0);
    mcpp_watch_open_failed(w, 0, 0, MCPP_WATCH_WHY_TEXT, "again");
    mcpp_watch_due(w, 0, &next);
  }
  ASSERT_EQ(next, 30000); /* the reconnect maximum */
  output(w);
  /* C words what the binding only names. */
  ASSERT_EQ(mcpp_watch_due(w, next, &next), 0);
  mcpp_watch_open_failed(w, 0, 0, MCPP_WATCH_WHY_NO_INITIALIZE, NULL);
  ASSERT(strstr(output(w), "a: cannot open: no initialize result; retrying in 30 s\n"));
  mcpp_watch_due(w, 0, &next);
  ASSERT_EQ(mcpp_watch_due(w, next, &next), 0);
  /* What the server wrote instead of its answer follows. */
  mcpp_watch_open_failed(w, 0, 0, MCPP_WATCH_WHY_NO_INITIALIZE,
                         "the server wrote a line that is not JSON-RPC: \"x\"");
  ASSERT(strstr(output(w), "a: cannot open: no initialize result; the server wrote a line "
                           "that is not JSON-RPC: \"x\"; retrying in 30 s\n"));
  mcpp_watch_due(w, 0, &next);
  ASSERT_EQ(mcpp_watch_due(w, next, &next), 0);
  mcpp_watch_open_failed(w, 0, 0, MCPP_WATCH_WHY_UNREACHABLE, "ECONNREFUSED");
  ASSERT(strstr(output(w), "a: cannot open: cannot connect: ECONNREFUSED; retrying"));
  mcpp_watch_due(w, 0, &next);
  ASSERT_EQ(mcpp_watch_due(w, next, &next), 0);
  mcpp_watch_open_failed(w, 0, 0, MCPP_WATCH_WHY_INVALID, "TOKEN=\x01");
  ASSERT(strstr(output(w), "a: cannot open: invalid command line or environment; retrying"));
  output(w);
  mcpp_watch_free(w);
  mcpp_cli_options_free(&o);
}

TEST(app_watch_state_restarts_and_routes) {
  mcpp_cli_options o;
  mcpp_watch *w = new_watch(&o);
  ASSERT_EQ(mcpp_watch_add(w, "time", "stdio", NULL, 0, NULL), 0);
  int64_t next;
  ASSERT_EQ(mcpp_watch_due(w, 0, &next), 0);
  mcpp_watch_opened(w, 0, 10, "mcp-time", "2025-06-18", 77);
  ASSERT_STR_EQ(output(w), "mcpping watch: time: up (mcp-time, stdio, protocol 2025-06-18, "
                           "pid 77)\n");
  mcpp_watch_event ev = {.name = "ping", .state = "alive"};
  mcpp_watch_feed(w, 0, 20, &ev);
  /* 0.001215 s * 1000 is 1.2149999999999999 in doubles; the RTT is whole µs. */
  ev = (mcpp_watch_event){.name = "pong", .state = "alive", .rtt_s = 0.001215};
  mcpp_watch_feed(w, 0, 20, &ev);
  ev = (mcpp_watch_event){.name = "stale", .state = "stale", .proof = "ping"};
  mcpp_watch_feed(w, 0, 30, &ev);
  ev = (mcpp_watch_event){.name = "reconnecting", .state = "stale", .attempt = 1};
  mcpp_watch_feed(w, 0, 30, &ev);
  char *m = respond(w, "GET /metrics HTTP/1.1\r\nHost: x\r\n\r\n");
  ASSERT(strstr(m, "HTTP/1.1 200 OK\r\n") == m);
  ASSERT(strstr(m, "mcpping_peer_state{server=\"time\",peer=\"mcp-time\",transport=\"stdio\","
                   "state=\"stale\"} 1\n"));
  ASSERT(strstr(m, "mcpping_stale_total{server=\"time\",peer=\"mcp-time\",transport=\"stdio\"} 1\n"));
  mcpp_watch_text_free(m);
  ev = (mcpp_watch_event){.name = "reconnected", .state = "alive", .pid = 78};
  mcpp_watch_feed(w, 0, 40, &ev);
  ASSERT_STR_EQ(output(w), "mcpping watch: time: stale (proof: ping)\n"
                           "mcpping watch: time: restarting (attempt 1)\n"
                           "mcpping watch: time: restarted (pid 78)\n");
  char *s = respond(w, "GET /status?x=1 HTTP/1.0\r\n\r\n");
  const char *body = strstr(s, "\r\n\r\n") + 4;
  ASSERT_STR_EQ(body, "{\"listen\":\"127.0.0.1:0\",\"servers\":[{\"name\":\"time\","
                      "\"transport\":\"stdio\",\"state\":\"alive\",\"peer\":\"mcp-time\","
                      "\"protocol_version\":\"2025-06-18\",\"pid\":78,\"restarts\":1,"
                      "\"stale\":1,\"pings_sent\":1,\"pongs_received\":1,\"last_rtt_ms\":1.215,"
                      "\"reason\":null,\"last_stderr\":null}]}\n");
  ASSERT(strstr(s, "Content-Type: application/json\r\n"));
  mcpp_watch_text_free(s);
  m = respond(w, "HEAD /metrics HTTP/1.1\r\n\r\n");
  ASSERT(strstr(m, "Content-Length: ") && !strstr(m, "# HELP"));
  mcpp_watch_text_free(m);
  m = respond(w, "POST /metrics HTTP/1.1\r\n\r\n");
  ASSERT(strstr(m, "HTTP/1.1 405 Method Not Allowed\r\n") == m && strstr(m, "Allow: GET, HEAD\r\n"));
  mcpp_watch_text_free(m);
  m = respond(w, "GET /other HTTP/1.1\r\n\r\n");
  ASSERT(strstr(m, "HTTP/1.1 404 Not Found\r\n") == m);
  mcpp_watch_text_free(m);
  m = respond(w, "garbage\r\n\r\n");
  ASSERT(strstr(m, "HTTP/1.1 400 Bad Request\r\n") == m);
  mcpp_watch_text_free(m);
  /* A connection that ends for good is re-opened after the backoff, which
   * counts as a restart. */
  mcpp_watch_closed(w, 0, 1000, MCPP_WATCH_WHY_TEXT, "server exited with status 1");
  ASSERT_STR_EQ(output(w), "mcpping watch: time: closed: server exited with status 1; "
                           "retrying in 1 s\n");
  ASSERT_EQ(mcpp_watch_due(w, 2000, &next), 0);
  mcpp_watch_opened(w, 0, 2100, "mcp-time", NULL, 79);
  m = respond(w, "GET /metrics HTTP/1.1\r\n\r\n");
  ASSERT(strstr(m, "mcpping_reconnects_total{server=\"time\",peer=\"mcp-time\",transport=\"stdio\"} 2\n"));
  mcpp_watch_text_free(m);
  mcpp_watch_stopping(w);
  mcpp_watch_stopped(w);
  ASSERT_STR_EQ(output(w), "mcpping watch: time: up (mcp-time, stdio, pid 79)\n"
                           "mcpping watch: stopping every server\n"
                           "mcpping watch: stopped\n");
  mcpp_watch_free(w);
  mcpp_cli_options_free(&o);
}

TEST(app_watch_never_prints_a_secret) {
  mcpp_cli_options o;
  mcpp_watch *w = new_watch(&o);
  const char *secrets[] = {"s3cr3t-token", "https://user:pa55word@h.example/mcp?key=k3y-value"};
  ASSERT_EQ(mcpp_watch_add(w, "api", "streamable-http", secrets, 2, NULL), 0);
  int64_t next;
  ASSERT_EQ(mcpp_watch_due(w, 0, &next), 0);
  mcpp_watch_open_failed(w, 0, 0, MCPP_WATCH_WHY_TEXT,
                         "HTTP 401 from https://user:pa55word@h.example/mcp?key=k3y-value "
                         "(token s3cr3t-token); k3y-value; pa55word");
  const char *log = output(w);
  ASSERT(!strstr(log, "s3cr3t") && !strstr(log, "pa55word") && !strstr(log, "k3y-value"));
  ASSERT(strstr(log, "HTTP 401 from ***"));
  mcpp_watch_opened(w, 0, 0, "s3cr3t-token", NULL, 0);
  output(w);
  char *s = respond(w, "GET /status HTTP/1.1\r\n\r\n");
  char *m = respond(w, "GET /metrics HTTP/1.1\r\n\r\n");
  ASSERT(!strstr(s, "s3cr3t") && !strstr(m, "s3cr3t"));
  mcpp_watch_text_free(s);
  mcpp_watch_text_free(m);
  mcpp_watch_free(w);
  mcpp_cli_options_free(&o);
}

/* A server's last words end the line of its close or failed open, redacted,
 * and stay in /status until it opens again with a new tail. */
TEST(app_watch_says_the_last_stderr_line_of_a_server_that_went_away) {
  mcpp_cli_options o;
  mcpp_watch *w = new_watch(&o);
  /* "1" (DEBUG=1, say) is too short to be a secret: masking it would say
   * "status ***" below. */
  const char *secrets[] = {"tok-42", "1"};
  ASSERT_EQ(mcpp_watch_add(w, "db", "stdio", secrets, 2, NULL), 0);
  int64_t next;
  ASSERT_EQ(mcpp_watch_due(w, 0, &next), 0);
  mcpp_watch_stderr(w, 0, "starting\nError: key tok-42 ", 27);
  mcpp_watch_stderr(w, 0, "refused\n\n", 9);
  mcpp_watch_open_failed(w, 0, 0, MCPP_WATCH_WHY_TEXT, "the server ended before answering initialize: server exited "
                                  "with status 1");
  ASSERT_STR_EQ(output(w), "mcpping watch: db: cannot open: the server ended before answering "
                           "initialize: server exited with status 1 (last stderr: Error: key "
                           "*** refused); retrying in 1 s\n");
  char *st = respond(w, "GET /status HTTP/1.1\r\n\r\n");
  ASSERT(strstr(st, "\"last_stderr\":\"Error: key *** refused\""));
  mcpp_watch_text_free(st);
  /* Opened: a new process, a new tail; a close with nothing said says nothing. */
  ASSERT_EQ(mcpp_watch_due(w, next > 0 ? next : 1000, &next), 0);
  mcpp_watch_opened(w, 0, 1000, "db", NULL, 9);
  output(w);
  st = respond(w, "GET /status HTTP/1.1\r\n\r\n");
  ASSERT(strstr(st, "\"last_stderr\":null"));
  mcpp_watch_text_free(st);
  mcpp_watch_closed(w, 0, 2000, MCPP_WATCH_WHY_TEXT, "server exited with status 0");
  ASSERT_STR_EQ(output(w), "mcpping watch: db: closed: server exited with status 0; retrying "
                           "in 1 s\n");
  mcpp_watch_free(w);
  mcpp_cli_options_free(&o);
}

/* The library's reconnect restarts a server that dies during its first
 * handshake: that is a failed open, worded by how it died, not a restart. */
TEST(app_watch_a_server_dying_during_its_open_fails_the_open_with_how_it_died) {
  mcpp_cli_options o;
  mcpp_watch *w = new_watch(&o);
  ASSERT_EQ(mcpp_watch_add(w, "db", "stdio", NULL, 0, NULL), 0);
  int64_t next;
  ASSERT_EQ(mcpp_watch_due(w, 0, &next), 0);
  mcpp_watch_event ev = {.name = "reconnecting", .state = "closed", .attempt = 1,
                         .message = "server exited with status 1"};
  mcpp_watch_event future = ev;
  future.version = 7; /* a version this library does not know: ignored */
  future.message = "from the future";
  mcpp_watch_feed(w, 0, 5, &future);
  mcpp_watch_feed(w, 0, 5, &ev);
  ASSERT_STR_EQ(output(w), "");
  mcpp_watch_open_failed(w, 0, 10, MCPP_WATCH_WHY_TEXT, "initialize: Request cancelled");
  ASSERT_STR_EQ(output(w), "mcpping watch: db: cannot open: the server ended before answering "
                           "initialize: server exited with status 1; retrying in 1 s\n");
  /* The same on the next attempt, made while the server is down. */
  ASSERT_EQ(mcpp_watch_due(w, 1010, &next), 0);
  mcpp_watch_stderr(w, 0, "oops\n", 5);
  ev.message = "server exited with status 2: oops";
  mcpp_watch_feed(w, 0, 1015, &ev);
  mcpp_watch_open_failed(w, 0, 1020, MCPP_WATCH_WHY_TEXT, "initialize: Request cancelled");
  ASSERT_STR_EQ(output(w), "mcpping watch: db: cannot open: the server ended before answering "
                           "initialize: server exited with status 2: oops; retrying in 2 s\n");
  /* Once up, a reconnect is a restart again. */
  ASSERT_EQ(mcpp_watch_due(w, 5000, &next), 0);
  mcpp_watch_opened(w, 0, 5000, "db", NULL, 5);
  output(w);
  mcpp_watch_feed(w, 0, 2000, &ev);
  ASSERT_STR_EQ(output(w), "mcpping watch: db: restarting (attempt 1): server exited with "
                           "status 2: oops\n");
  /* /status says why while it restarts, and nothing once it is back. */
  char *s = respond(w, "GET /status HTTP/1.1\r\n\r\n");
  ASSERT(strstr(s, "\"state\":\"restarting\"") != NULL);
  ASSERT(strstr(s, "\"reason\":\"server exited with status 2: oops\"") != NULL);
  mcpp_watch_text_free(s);
  ev = (mcpp_watch_event){.name = "reconnected", .state = "alive", .pid = 6};
  mcpp_watch_feed(w, 0, 2100, &ev);
  s = respond(w, "GET /status HTTP/1.1\r\n\r\n");
  ASSERT(strstr(s, "\"reason\":null") != NULL);
  mcpp_watch_text_free(s);
  mcpp_watch_free(w);
  mcpp_cli_options_free(&o);
}

/* A server restarting (or failing) while the binding closes everything
 * says nothing: "stopped" stays the last line (it once came out after a
 * restart the shutdown raced with). */
TEST(app_watch_says_nothing_of_servers_after_stopping) {
  mcpp_cli_options o;
  mcpp_watch *w = new_watch(&o);
  ASSERT_EQ(mcpp_watch_add(w, "time", "stdio", NULL, 0, NULL), 0);
  int64_t next;
  ASSERT_EQ(mcpp_watch_due(w, 0, &next), 0);
  mcpp_watch_opened(w, 0, 10, "mcp-time", "2025-06-18", 77);
  output(w);
  mcpp_watch_stopping(w);
  ASSERT_STR_EQ(output(w), "mcpping watch: stopping every server\n");
  mcpp_watch_event ev = {.name = "reconnected", .state = "alive", .pid = 78};
  mcpp_watch_feed(w, 0, 20, &ev);
  mcpp_watch_closed(w, 0, 30, MCPP_WATCH_WHY_TEXT, "connection closed");
  mcpp_watch_open_failed(w, 0, 30, MCPP_WATCH_WHY_TEXT, "cannot start");
  mcpp_watch_stopped(w);
  ASSERT_STR_EQ(output(w), "mcpping watch: stopped\n");
  mcpp_watch_free(w);
  mcpp_cli_options_free(&o);
}
