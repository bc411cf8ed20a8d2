/* The command's application layer (csrc/src/app): the parser's modes and
 * usage sentences, and the check's state machine driven with a fake clock,
 * down to the bytes it prints and the exit status. */
#include "mcpping.h"
#include "task.h"

#define ARGV(...) ((const char *const[]){__VA_ARGS__})
#define NARGS(...) ((int)(sizeof ARGV(__VA_ARGS__) / sizeof(const char *)))
/* The compound literal lives in the caller's block, as argv must. */
#define PARSE(o, ...) parse_ok(o, NARGS(__VA_ARGS__), ARGV(__VA_ARGS__))

static void parse_ok(mcpp_cli_options *o, int argc, const char *const *argv) {
  ASSERT_EQ(mcpp_cli_parse(o, argc, argv), 0);
}

static void bad_usage(const char *want, int argc, const char *const *argv) {
  mcpp_cli_options o;
  ASSERT_EQ(mcpp_cli_parse(&o, argc, argv), 0);
  ASSERT_EQ(o.mode, MCPP_CLI_BAD_USAGE);
  ASSERT_STR_EQ(o.error, want);
  mcpp_cli_options_free(&o);
}
#define BAD(want, ...) bad_usage(want, NARGS(__VA_ARGS__), ARGV(__VA_ARGS__))

TEST(app_cli_parse_defaults_per_target) {
  mcpp_cli_options o;
  PARSE(&o, "-q");
  ASSERT_EQ(o.mode, MCPP_CLI_CHECK);
  ASSERT_EQ(o.target, MCPP_CLI_DEMO);
  ASSERT_EQ(o.count, 5);
  ASSERT_EQ(o.interval_ms, 1000);
  ASSERT_EQ(o.timeout_ms, 5000);
  ASSERT_EQ(o.connect_timeout_ms, 10000);
  ASSERT_EQ(o.deadline_ms, 0);
  ASSERT_EQ(o.method, MCPP_METHOD_AUTO);
  mcpp_cli_options_free(&o);
  PARSE(&o, "-c3", "-i0", "-W0.25", "-w", "2", "--connect-timeout=1.5", "--method",
        "tools/list", "--env", "A=1", "--expect-tool", "echo", "--", "srv", "--x");
  ASSERT_EQ(o.target, MCPP_CLI_STDIO);
  ASSERT_EQ(o.count, 3);
  ASSERT_EQ(o.interval_ms, 0);
  ASSERT_EQ(o.timeout_ms, 250);
  ASSERT_EQ(o.deadline_ms, 2000);
  ASSERT_EQ(o.connect_timeout_ms, 1500);
  ASSERT_EQ(o.method, MCPP_METHOD_TOOLS_LIST);
  ASSERT_EQ(o.ncommand, 2);
  ASSERT_STR_EQ(o.command[1], "--x");
  ASSERT_STR_EQ(o.env[0], "A=1");
  ASSERT_STR_EQ(o.expect_tools[0], "echo");
  mcpp_cli_options_free(&o);
  PARSE(&o, "-H", "Authorization: Bearer x", "https://h/mcp");
  ASSERT_EQ(o.target, MCPP_CLI_HTTP);
  ASSERT_EQ(o.count, 0); /* until Ctrl-C */
  ASSERT_STR_EQ(o.headers[0], "Authorization: Bearer x");
  mcpp_cli_options_free(&o);
  PARSE(&o, "--config", "a.json", "--config=auto", "-q");
  ASSERT_EQ(o.mode, MCPP_CLI_CONFIG);
  ASSERT_EQ(o.nconfigs, 2);
  ASSERT_STR_EQ(o.configs[1], "auto");
  ASSERT_EQ(o.count, 3);
  ASSERT_EQ(o.deadline_ms, 15000);
  mcpp_cli_options_free(&o);
  PARSE(&o, "--config", "a.json", "--wrap", "--write", "--command", "/x/mcpping");
  ASSERT_EQ(o.mode, MCPP_CLI_CONFIG);
  ASSERT(o.wrap && o.write && !o.unwrap);
  ASSERT_STR_EQ(o.command_path, "/x/mcpping");
  mcpp_cli_options_free(&o);
  PARSE(&o, "-c", "1", "-h", "--bogus");
  ASSERT_EQ(o.mode, MCPP_CLI_HELP);
  PARSE(&o, "-V");
  ASSERT_EQ(o.mode, MCPP_CLI_VERSION);
  ASSERT(strstr(mcpp_cli_usage(), "4 alive but refusing the check asked for"));
}

/* mcpping wrap's command line: the table's defaults, its own error prefix,
 * the command after --. */
TEST(app_cli_parse_wrap_defaults_errors_and_command) {
  mcpp_cli_options o;
  const char *plain[] = {"wrap", "--", "srv", "-x"};
  parse_ok(&o, 4, plain);
  ASSERT_EQ(o.mode, MCPP_CLI_WRAP);
  ASSERT_UINT_EQ(o.interval_ms, (uint32_t)mcpp_setting_find("interval_ms")->policy);
  ASSERT_UINT_EQ(o.timeout_ms, (uint32_t)mcpp_setting_find("timeout_ms")->policy);
  ASSERT_EQ(o.restart, 1);
  ASSERT_EQ(o.ncommand, 2);
  ASSERT_STR_EQ(o.command[1], "-x");
  mcpp_cli_options_free(&o);
  const char *set[] = {"wrap", "-i", "2.5", "-W", "0.5", "--failures", "4", "--no-restart",
                       "--name", "db", "--metrics", "127.0.0.1:0", "--", "srv"};
  parse_ok(&o, 14, set);
  ASSERT_UINT_EQ(o.interval_ms, 2500);
  ASSERT_UINT_EQ(o.timeout_ms, 500);
  ASSERT_UINT_EQ(o.failures, 4);
  ASSERT_EQ(o.restart, 0);
  ASSERT_STR_EQ(o.name, "db");
  ASSERT_STR_EQ(o.metrics, "127.0.0.1:0");
  mcpp_cli_options_free(&o);
  const char *help[] = {"wrap", "-W", "1", "--help", "--", "srv"};
  parse_ok(&o, 6, help);
  ASSERT_EQ(o.mode, MCPP_CLI_WRAP_HELP);
  ASSERT(strstr(mcpp_wrap_usage(), "usage: mcpping wrap [options] -- COMMAND [ARG...]\n") ==
         mcpp_wrap_usage());
  mcpp_cli_options_free(&o);
  const char *bad[] = {"wrap", "--timeout", "-1", "--", "srv"};
  parse_ok(&o, 5, bad);
  ASSERT_EQ(o.mode, MCPP_CLI_BAD_USAGE);
  char line[300];
  mcpp_cli_problem_line(&o, line, sizeof line);
  ASSERT_STR_EQ(line, "mcpping wrap: --timeout must be between 0.001 and 2147483.647 seconds, "
                      "not -1\n");
  mcpp_cli_options_free(&o);
  const char *none[] = {"wrap", "-i", "0x10"};
  parse_ok(&o, 3, none);
  mcpp_cli_problem_line(&o, line, sizeof line);
  ASSERT_STR_EQ(line, "mcpping wrap: -i needs a number, got '0x10'\n");
  mcpp_cli_options_free(&o);
  const char *nocmd[] = {"wrap", "--no-restart"};
  parse_ok(&o, 2, nocmd);
  mcpp_cli_problem_line(&o, line, sizeof line);
  ASSERT_STR_EQ(line, "mcpping wrap: a server command is required: mcpping wrap [options] -- "
                      "COMMAND [ARG...]\n");
  mcpp_cli_options_free(&o);
  /* The check's errors keep their prefix. */
  const char *check[] = {"-c", "x"};
  parse_ok(&o, 2, check);
  mcpp_cli_problem_line(&o, line, sizeof line);
  ASSERT(strncmp(line, "mcpping: -c", 11) == 0);
  mcpp_cli_options_free(&o);
}

TEST(app_cli_parse_usage_errors_name_the_value) {
  BAD("-W must be between 0.001 and 2147483.647 seconds, not 4294968.0", "-W", "4294968");
  BAD("-W must be between 0.001 and 2147483.647 seconds, not 0.0001", "-W", "0.0001");
  BAD("-W must be between 0.001 and 2147483.647 seconds, not 1e+20", "-W", "1e20");
  BAD("-i must be between 0 and 2147483.647 seconds, not -1.0", "-i", "-1");
  BAD("-i must be between 0 and 2147483.647 seconds, not inf", "-i", "inf");
  BAD("-w must be between 0.001 and 2147483.647 seconds, not nan", "-w", "nan");
  BAD("-W needs a number, got '0x10'", "-W", "0x10");
  BAD("-c needs an integer, got '1.5'", "-c", "1.5");
  BAD("-c must be a positive integer", "-c0");
  BAD("-c needs a value", "-c");
  BAD("--log needs a value", "--log=");
  BAD("unknown option --bogus", "--bogus");
  BAD("-- needs a COMMAND", "--");
  BAD("unexpected argument 'x' (put a server command after --)", "x");
  BAD("the URL 'ftp://x' is not an http:// or https:// URL", "ftp://x");
  BAD("the URL 'http://[::1' has an IPv6 address without its closing ]", "http://[::1");
  BAD("the URL 'http://h:99999/' has a port that is not a number from 1 to 65535",
      "http://h:99999/");
  BAD("give one target: -- COMMAND, URL, --config, or --demo", "http://a/", "--demo");
  BAD("the URL 'http://' has no host", "http://");
  BAD("the URL 'https:///mcp' has no host", "https:///mcp");
  BAD("--method must be auto, ping, discover or tools/list, not 'pong'", "--method", "pong");
  BAD("--connect-timeout must be between 0.001 and 2147483.647 seconds, not 0.0",
      "--connect-timeout", "0");
  BAD("-H needs NAME:VALUE (a header name, a colon, a value), got 'nocolon'", "-H",
      "nocolon", "http://h/");
  BAD("-H 'Bad Name' is not an HTTP header name (letters, digits and !#$%&'*+-.^_`|~ only)",
      "-H", "Bad Name: x", "http://h/");
  BAD("--header 'X' has a character past Latin-1 in its value (HTTP sends a header value a byte "
      "a character)", "--header", "X: 5 \xe2\x82\xac", "http://h/");
  BAD("-H is for a URL; a stdio server takes --env", "-H", "A: b", "--", "srv");
  BAD("--env needs NAME=VALUE, got '=x'", "--env", "=x", "--", "srv");
  BAD("--env is for a server mcpping starts; a URL takes -H", "--env", "A=1", "http://h/");
  BAD("--config runs each server's handshake: drop --no-init", "--config", "x", "--no-init");
  BAD("--write needs --wrap or --unwrap", "--config", "x", "--write");
  BAD("--wrap and --unwrap edit one --config FILE (usage: mcpping --config FILE "
      "--wrap|--unwrap [--write] [--command PATH])", "--wrap");
  BAD("--wrap and --unwrap edit one --config FILE (usage: mcpping --config FILE "
      "--wrap|--unwrap [--write] [--command PATH])", "--config", "auto", "--wrap");
  BAD("give one of --wrap and --unwrap (usage: mcpping --config FILE --wrap|--unwrap "
      "[--write] [--command PATH])", "--config", "x", "--wrap", "--unwrap");
  BAD("-c does not go with --wrap/--unwrap (usage: mcpping --config FILE "
      "--wrap|--unwrap [--write] [--command PATH])", "--config", "x", "--wrap", "-c", "3");
  BAD("--command PATH goes with --wrap", "--config", "x", "--unwrap", "--command", "/m");
}

TEST(app_cli_options_are_versioned_and_an_unknown_version_is_refused) {
  mcpp_cli_options o;
  memset(&o, 0x5a, sizeof o);
  ASSERT_EQ(mcpp_cli_parse_versioned(MCPP_CLI_OPTIONS_V1 + 1, &o, 1, ARGV("-q")),
            MCPP_ERR_INVALID_ARGUMENT);
  ASSERT_EQ((unsigned char)o.error[0], 0x5a); /* nothing written */
  PARSE(&o, "-q");
  ASSERT_EQ(o.version, MCPP_CLI_OPTIONS_V1);
  /* What reads the options refuses a layout it does not know. */
  o.version = MCPP_CLI_OPTIONS_V1 + 1;
  mcpp_cli_run *r;
  ASSERT_EQ(mcpp_cli_run_new(&r, &o, 0), MCPP_ERR_INVALID_ARGUMENT);
  mcpp_cli_options_free(&o);
  mcpp_cli_options w;
  PARSE(&w, "watch", "--config", "x.json");
  w.version = 0;
  mcpp_watch *watch;
  ASSERT_EQ(mcpp_watch_new(&watch, &w), MCPP_ERR_INVALID_ARGUMENT);
  mcpp_cli_options_free(&w);
}

/* A run driven by hand: each step checks what it is asked to do. */
typedef struct {
  mcpp_cli_options o;
  mcpp_cli_run *r;
  int64_t now;
  mcpp_cli_action a;
  char out[4096], err[1024];
} drive;

static void step(drive *d) {
  mcpp_cli_next(d->r, d->now, &d->a);
  strncat(d->out, d->a.out, d->a.out_len);
  strncat(d->err, d->a.err, d->a.err_len);
}

static void start(drive *d, int argc, const char *const *argv) {
  memset(d, 0, sizeof *d);
  d->now = 1000;
  ASSERT_EQ(mcpp_cli_parse(&d->o, argc, argv), 0);
  ASSERT_EQ(d->o.mode, MCPP_CLI_CHECK);
  ASSERT_EQ(mcpp_cli_run_new(&d->r, &d->o, d->now), 0);
  step(d);
  ASSERT_EQ(d->a.what, MCPP_CLI_DO_OPEN);
}
#define START(d, ...) start(d, NARGS(__VA_ARGS__), ARGV(__VA_ARGS__))

static void opened(drive *d, const char *proto) {
  mcpp_cli_opened op = {MCPP_OPEN_OK, "srv", "stdio", proto, NULL, NULL};
  mcpp_cli_open_done(d->r, d->now, &op);
  step(d);
}

static void finish(drive *d) {
  mcpp_cli_run_free(d->r);
  mcpp_cli_options_free(&d->o);
}

TEST(app_cli_run_all_answered_exits_0_with_ping8_report) {
  drive d;
  START(&d, "-c", "2", "--", "srv");
  ASSERT_EQ(d.a.timeout_ms, 10000); /* --connect-timeout's default */
  opened(&d, "2025-11-25");
  ASSERT_EQ(d.a.what, MCPP_CLI_DO_SEND);
  ASSERT_STR_EQ(d.a.method, "ping");
  ASSERT_EQ(d.a.timeout_ms, 5000);
  d.now += 2;
  mcpp_cli_replied(d.r, d.now, MCPP_REPLY_OK, 1.5, 0, 0, NULL);
  step(&d);
  ASSERT_EQ(d.a.what, MCPP_CLI_DO_WAIT); /* the grid: first + 1 s */
  ASSERT_EQ(d.a.until_ms, 2000);
  d.now = 2000;
  step(&d);
  ASSERT_EQ(d.a.what, MCPP_CLI_DO_SEND);
  d.now += 3;
  mcpp_cli_replied(d.r, d.now, MCPP_REPLY_OK, 2.5, 0, 0, NULL);
  step(&d);
  ASSERT_EQ(d.a.what, MCPP_CLI_DO_EXIT);
  ASSERT_EQ(d.a.status, MCPP_EXIT_ALIVE);
  ASSERT_STR_EQ(d.out,
                "MCPPING srv (stdio, protocol 2025-11-25): method ping, timeout 5.0 s, interval 1.0 s\n"
                "ping reply from srv: seq=1 time=1.500 ms\n"
                "ping reply from srv: seq=2 time=2.500 ms\n"
                "\n--- srv mcpping statistics ---\n"
                "2 sent, 2 received, 0% loss, time 1003 ms\n"
                "rtt min/avg/max/mdev = 1.500/2.000/2.500/0.500 ms\n");
  ASSERT_STR_EQ(d.err, "");
  finish(&d);
}

TEST(app_cli_run_json_events_and_summary_object) {
  drive d;
  START(&d, "--json", "-c", "3", "-i", "0", "--", "srv");
  opened(&d, "2025-11-25");
  mcpp_cli_replied(d.r, d.now, MCPP_REPLY_OK, 0.1234, 0, 0, NULL);
  step(&d);
  mcpp_cli_replied(d.r, d.now, MCPP_REPLY_TIMEOUT, 0, 0, 0, NULL);
  step(&d);
  mcpp_cli_replied(d.r, d.now, MCPP_REPLY_ERROR, 0, 1, -32603, "Internal \"error\"");
  step(&d);
  ASSERT_EQ(d.a.what, MCPP_CLI_DO_EXIT);
  ASSERT_EQ(d.a.status, MCPP_EXIT_MISSING);
  ASSERT_STR_EQ(d.out,
                "{\"event\":\"connected\",\"peer\":\"srv\",\"transport\":\"stdio\",\"protocol_version\":\"2025-11-25\",\"session_id\":null,\"method\":\"ping\"}\n"
                "{\"event\":\"reply\",\"seq\":1,\"method\":\"ping\",\"rtt_ms\":0.123}\n"
                "{\"event\":\"timeout\",\"seq\":2,\"method\":\"ping\",\"timeout_ms\":5000}\n"
                "{\"event\":\"error\",\"seq\":3,\"method\":\"ping\",\"code\":-32603,\"message\":\"Internal \\\"error\\\"\"}\n"
                "{\"event\":\"summary\",\"sent\":3,\"received\":1,\"loss_pct\":66.7,\"rtt_ms\":{\"min\":0.123,\"avg\":0.123,\"max\":0.123,\"mdev\":0.0,\"p50\":0.123,\"p99\":0.123}}\n");
  ASSERT_STR_EQ(d.err, "mcpping: 2 of 3 replies missing\n");
  finish(&d);
}

TEST(app_cli_run_quiet_prints_header_and_summary_only) {
  drive d;
  START(&d, "-q", "-c", "1", "--", "srv");
  opened(&d, NULL);
  mcpp_cli_replied(d.r, d.now, MCPP_REPLY_TIMEOUT, 0, 0, 0, NULL);
  step(&d);
  ASSERT_EQ(d.a.status, MCPP_EXIT_MISSING);
  ASSERT_STR_EQ(d.out,
                "MCPPING srv (stdio, no handshake): method ping, timeout 5.0 s, interval 1.0 s\n"
                "\n--- srv mcpping statistics ---\n"
                "1 sent, 0 received, 100% loss, time 0 ms\n");
  finish(&d);
}

TEST(app_cli_run_auto_uses_discover_on_2026_07_28_and_never_pings) {
  drive d;
  START(&d, "-c", "1", "--", "srv");
  opened(&d, "2026-07-28");
  ASSERT_EQ(d.a.what, MCPP_CLI_DO_SEND);
  ASSERT_STR_EQ(d.a.method, "server/discover");
  mcpp_cli_replied(d.r, d.now, MCPP_REPLY_OK, 1, 0, 0, NULL);
  step(&d);
  ASSERT_EQ(d.a.status, MCPP_EXIT_ALIVE);
  ASSERT(strstr(d.out, "method server/discover,"));
  ASSERT(strstr(d.out, "server/discover reply from srv: seq=1"));
  finish(&d);
  /* --method ping on that era: refused before anything is sent. */
  START(&d, "--method", "ping", "--", "srv");
  opened(&d, "2026-07-28");
  ASSERT_EQ(d.a.what, MCPP_CLI_DO_EXIT);
  ASSERT_EQ(d.a.status, MCPP_EXIT_REFUSED);
  ASSERT_STR_EQ(d.err, "mcpping: ping unsupported: protocol 2026-07-28 has no ping "
                       "(--method auto checks it with server/discover)\n");
  finish(&d);
}

TEST(app_cli_run_auto_falls_back_to_tools_list_when_ping_is_refused) {
  drive d;
  START(&d, "-c", "2", "-i", "0", "--", "srv");
  opened(&d, "2025-11-25");
  ASSERT_STR_EQ(d.a.method, "ping");
  mcpp_cli_replied(d.r, d.now, MCPP_REPLY_ERROR, 0, 1, -32601, "Method not found");
  step(&d);
  ASSERT_EQ(d.a.what, MCPP_CLI_DO_SEND); /* at once, the same seq */
  ASSERT_STR_EQ(d.a.method, "tools/list");
  mcpp_cli_replied(d.r, d.now, MCPP_REPLY_OK, 1, 0, 0, NULL);
  step(&d);
  ASSERT_STR_EQ(d.a.method, "tools/list");
  mcpp_cli_replied(d.r, d.now, MCPP_REPLY_OK, 1, 0, 0, NULL);
  step(&d);
  ASSERT_EQ(d.a.status, MCPP_EXIT_ALIVE);
  ASSERT(strstr(d.out, "ping refused from srv: seq=1 code=-32601 Method not found\n"
                       "tools/list reply from srv: seq=1 "));
  ASSERT(strstr(d.out, "2 sent, 2 received, 0% loss"));
  finish(&d);
  /* Forced: the refusal is exit 4 with one line. */
  START(&d, "--method", "ping", "--", "srv");
  opened(&d, "2025-11-25");
  mcpp_cli_replied(d.r, d.now, MCPP_REPLY_UNSUPPORTED, 0, 1, -32601, "Method not found");
  step(&d);
  ASSERT_EQ(d.a.status, MCPP_EXIT_REFUSED);
  ASSERT_STR_EQ(d.err, "mcpping: ping unsupported: code=-32601 Method not found\n");
  finish(&d);
}

TEST(app_cli_run_open_failures_exit_3_with_one_line) {
  static const struct {
    mcpp_cli_open_result result;
    int status;
    const char *err;
  } cases[] = {
      {MCPP_OPEN_SPAWN_FAILED, 3, "mcpping: No such file or directory\n"},
      {MCPP_OPEN_HANDSHAKE_FAILED, 3, "mcpping: handshake failed: No such file or directory\n"},
      /* A timeout's reason is what the server wrote instead. */
      {MCPP_OPEN_TIMED_OUT, 3, "mcpping: no connection and handshake within 1.5 s (--connect-timeout); No such file or directory\n"},
      {MCPP_OPEN_LOG_FAILED, 2, "mcpping: cannot open log: No such file or directory\n"},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    drive d;
    START(&d, "--connect-timeout", "1.5", "--", "srv");
    ASSERT_EQ(d.a.timeout_ms, 1500);
    mcpp_cli_opened op = {cases[i].result, NULL, NULL, NULL, NULL, "No such file or directory"};
    mcpp_cli_open_done(d.r, d.now, &op);
    step(&d);
    ASSERT_EQ(d.a.what, MCPP_CLI_DO_EXIT);
    ASSERT_EQ(d.a.status, cases[i].status);
    ASSERT_STR_EQ(d.err, cases[i].err);
    ASSERT_STR_EQ(d.out, "");
    finish(&d);
  }
  drive d;
  START(&d, "-H", "A:b", "http://h/mcp");
  mcpp_cli_opened op = {MCPP_OPEN_CONNECT_FAILED, NULL, NULL, NULL, NULL, "connection refused"};
  mcpp_cli_open_done(d.r, d.now, &op);
  step(&d);
  ASSERT_EQ(d.a.status, MCPP_EXIT_CONNECT);
  ASSERT_STR_EQ(d.err, "mcpping: cannot connect to http://h/mcp: connection refused\n");
  finish(&d);
  /* Credentials and a query (where secrets go) are never said back. */
  START(&d, "http://u:pw@h/mcp?token=abc");
  mcpp_cli_open_done(d.r, d.now, &op);
  step(&d);
  ASSERT_STR_EQ(d.err, "mcpping: cannot connect to http://***@h:80/mcp?***: connection refused\n");
  finish(&d);
}

TEST(app_cli_run_connect_timeout_is_bounded_by_the_deadline) {
  drive d;
  START(&d, "-w", "0.5", "--", "srv");
  ASSERT_EQ(d.a.timeout_ms, 500);
  d.now += 500;
  mcpp_cli_opened op = {MCPP_OPEN_TIMED_OUT, NULL, NULL, NULL, NULL, NULL};
  mcpp_cli_open_done(d.r, d.now, &op);
  step(&d);
  ASSERT_EQ(d.a.status, MCPP_EXIT_CONNECT);
  ASSERT_STR_EQ(d.err, "mcpping: no connection and handshake within 0.5 s (--connect-timeout)\n");
  finish(&d);
}

TEST(app_cli_run_deadline_ends_an_endless_run_and_a_cut_check_is_not_a_loss) {
  drive d;
  START(&d, "-w", "3.5", "--", "srv");
  opened(&d, "2025-11-25");
  for (int i = 0; i < 3; i++) {
    ASSERT_EQ(d.a.what, MCPP_CLI_DO_SEND);
    ASSERT_EQ(d.a.until_ms, 4500);
    mcpp_cli_replied(d.r, d.now, MCPP_REPLY_OK, 1, 0, 0, NULL);
    step(&d);
    ASSERT_EQ(d.a.what, MCPP_CLI_DO_WAIT);
    d.now = d.a.until_ms;
    step(&d);
  }
  /* The fourth check is out when the deadline passes. */
  ASSERT_EQ(d.a.what, MCPP_CLI_DO_SEND);
  d.now = 4500;
  mcpp_cli_interrupt(d.r, d.now);
  step(&d);
  ASSERT_EQ(d.a.what, MCPP_CLI_DO_EXIT);
  ASSERT_EQ(d.a.status, MCPP_EXIT_ALIVE);
  ASSERT(strstr(d.out, "3 sent, 3 received, 0% loss, time 3500 ms\n"));
  finish(&d);
  /* Between checks, the deadline itself ends the run. */
  START(&d, "-w", "1.5", "--", "srv");
  opened(&d, "2025-11-25");
  mcpp_cli_replied(d.r, d.now, MCPP_REPLY_OK, 1, 0, 0, NULL);
  step(&d);
  d.now = d.a.until_ms;
  step(&d);
  mcpp_cli_replied(d.r, d.now, MCPP_REPLY_OK, 1, 0, 0, NULL);
  step(&d);
  ASSERT_EQ(d.a.what, MCPP_CLI_DO_WAIT);
  ASSERT_EQ(d.a.until_ms, 2500);
  d.now = 2500;
  step(&d);
  ASSERT_EQ(d.a.what, MCPP_CLI_DO_EXIT);
  ASSERT(strstr(d.out, "2 sent, 2 received, 0% loss, time 1500 ms\n"));
  finish(&d);
}

TEST(app_cli_run_expect_tool_present_0_missing_4) {
  drive d;
  const char *names[] = {"echo", "add"};
  START(&d, "--expect-tool", "add", "-c", "1", "--", "srv");
  opened(&d, "2025-11-25");
  ASSERT_EQ(d.a.what, MCPP_CLI_DO_LIST_TOOLS);
  mcpp_cli_tools(d.r, d.now, MCPP_REPLY_OK, names, 2, 0, 0, NULL);
  step(&d);
  ASSERT_EQ(d.a.what, MCPP_CLI_DO_SEND);
  mcpp_cli_replied(d.r, d.now, MCPP_REPLY_OK, 1, 0, 0, NULL);
  step(&d);
  ASSERT_EQ(d.a.status, MCPP_EXIT_ALIVE);
  finish(&d);
  START(&d, "--expect-tool", "add", "--expect-tool", "nope", "--", "srv");
  opened(&d, "2025-11-25");
  mcpp_cli_tools(d.r, d.now, MCPP_REPLY_OK, names, 2, 0, 0, NULL);
  step(&d);
  ASSERT_EQ(d.a.what, MCPP_CLI_DO_EXIT);
  ASSERT_EQ(d.a.status, MCPP_EXIT_REFUSED);
  ASSERT_STR_EQ(d.err, "mcpping: srv does not list the tool 'nope' (--expect-tool)\n");
  finish(&d);
}

TEST(app_cli_run_closed_before_any_reply_exits_3_after_one_loses_that_check_and_exits_1) {
  drive d;
  START(&d, "-c", "3", "-i", "0", "--", "srv");
  opened(&d, "2025-11-25");
  mcpp_cli_replied(d.r, d.now, MCPP_REPLY_CLOSED, 0, 0, 0, "server exited with status 1");
  step(&d);
  ASSERT_EQ(d.a.status, MCPP_EXIT_CONNECT);
  ASSERT_STR_EQ(d.err, "mcpping: connection closed: server exited with status 1\n");
  finish(&d);
  START(&d, "-c", "3", "-i", "0", "--", "srv");
  opened(&d, "2025-11-25");
  mcpp_cli_replied(d.r, d.now, MCPP_REPLY_OK, 1, 0, 0, NULL);
  step(&d);
  mcpp_cli_replied(d.r, d.now, MCPP_REPLY_CLOSED, 0, 0, 0, "server exited with status 0");
  step(&d);
  /* Gone after answering: that check is lost and the run says why; a
   * server that died mid-run is not "alive" (this exited 0 before). */
  ASSERT_EQ(d.a.status, MCPP_EXIT_MISSING);
  ASSERT(strstr(d.out, "2 sent, 1 received, 50% loss"));
  ASSERT_STR_EQ(d.err, "mcpping: connection closed: server exited with status 0; 1 of 2 replies missing\n");
  finish(&d);
}

TEST(app_cli_run_interrupt_before_any_check_exits_1) {
  drive d;
  START(&d, "-i", "5", "--", "srv");
  opened(&d, "2025-11-25");
  mcpp_cli_interrupt(d.r, d.now);
  step(&d);
  ASSERT_EQ(d.a.status, MCPP_EXIT_MISSING);
  ASSERT_STR_EQ(d.err, "mcpping: no check was sent\n");
  finish(&d);
}

TEST(app_cli_immediate_gives_the_bytes_and_status_of_help_version_and_usage) {
  mcpp_cli_options o;
  const char *out;
  char err[300];
  int status = -1;
  PARSE(&o, "-V");
  ASSERT_EQ(mcpp_cli_immediate(&o, &out, err, sizeof err, &status), 1);
  ASSERT_STR_EQ(out, "mcpping " MCPP_VERSION "\n");
  ASSERT_STR_EQ(err, "");
  ASSERT_EQ(status, 0);
  mcpp_cli_options_free(&o);
  PARSE(&o, "--help");
  ASSERT_EQ(mcpp_cli_immediate(&o, &out, err, sizeof err, &status), 1);
  ASSERT(out == mcpp_cli_usage());
  mcpp_cli_options_free(&o);
  PARSE(&o, "watch", "-h");
  ASSERT_EQ(mcpp_cli_immediate(&o, &out, err, sizeof err, &status), 1);
  ASSERT(out == mcpp_watch_usage());
  mcpp_cli_options_free(&o);
  PARSE(&o, "wrap", "--help");
  ASSERT_EQ(mcpp_cli_immediate(&o, &out, err, sizeof err, &status), 1);
  ASSERT(out == mcpp_wrap_usage());
  mcpp_cli_options_free(&o);
  PARSE(&o, "--bogus");
  ASSERT_EQ(mcpp_cli_immediate(&o, &out, err, sizeof err, &status), 1);
  ASSERT_STR_EQ(out, "");
  ASSERT_STR_EQ(err, "mcpping: unknown option --bogus\n");
  ASSERT_EQ(status, MCPP_EXIT_USAGE);
  mcpp_cli_options_free(&o);
  PARSE(&o, "wrap", "--failures", "0", "--", "x");
  ASSERT_EQ(mcpp_cli_immediate(&o, &out, err, sizeof err, &status), 1);
  ASSERT(strncmp(err, "mcpping wrap: ", 14) == 0);
  ASSERT_EQ(status, MCPP_EXIT_USAGE);
  mcpp_cli_options_free(&o);
  status = -1;
  PARSE(&o, "-c", "1");
  ASSERT_EQ(mcpp_cli_immediate(&o, &out, err, sizeof err, &status), 0);
  ASSERT_EQ(status, -1);
  mcpp_cli_options_free(&o);
  /* A --log that cannot be appended to ends the check and --config first. */
  PARSE(&o, "--log", "/nonexistent-dir/records.jsonl", "-c", "1");
  ASSERT_EQ(mcpp_cli_immediate(&o, &out, err, sizeof err, &status), 1);
  ASSERT_STR_EQ(err, "mcpping: cannot open log: No such file or directory\n");
  ASSERT_EQ(status, MCPP_EXIT_USAGE);
  mcpp_cli_options_free(&o);
  PARSE(&o, "--config", "x.json", "--log", "/nonexistent-dir/records.jsonl");
  ASSERT_EQ(mcpp_cli_immediate(&o, &out, err, sizeof err, &status), 1);
  ASSERT_EQ(status, MCPP_EXIT_USAGE);
  mcpp_cli_options_free(&o);
}

TEST(app_cli_run_an_answer_without_result_object_is_worded_by_c) {
  drive d;
  START(&d, "-c", "1", "--method", "tools/list", "--", "srv");
  opened(&d, "2025-11-25");
  ASSERT_EQ(d.a.what, MCPP_CLI_DO_SEND);
  mcpp_cli_replied(d.r, d.now, MCPP_REPLY_INVALID, 0, 0, 0, NULL);
  step(&d);
  ASSERT(strstr(d.out, "tools/list invalid reply from srv: seq=1 the answer has no result "
                       "object\n") != NULL);
  finish(&d);
  START(&d, "-c", "1", "--expect-tool", "t", "--", "srv");
  opened(&d, "2025-11-25");
  ASSERT_EQ(d.a.what, MCPP_CLI_DO_LIST_TOOLS);
  mcpp_cli_tools(d.r, d.now, MCPP_REPLY_INVALID, NULL, 0, 0, 0, NULL);
  step(&d);
  ASSERT_EQ(d.a.status, MCPP_EXIT_REFUSED);
  ASSERT(strstr(d.err, "--expect-tool: tools/list failed: the answer has no result object\n"));
  finish(&d);
}

/* A refused tools/list: C joins the error's code and message, so both
 * commands print the same line. */
TEST(app_cli_run_expect_tool_joins_the_error_code_and_message) {
  drive d;
  START(&d, "-c", "1", "--expect-tool", "t", "--", "srv");
  opened(&d, "2025-11-25");
  ASSERT_EQ(d.a.what, MCPP_CLI_DO_LIST_TOOLS);
  mcpp_cli_tools(d.r, d.now, MCPP_REPLY_ERROR, NULL, 0, 1, -32601, "Method not found");
  step(&d);
  ASSERT_EQ(d.a.status, MCPP_EXIT_REFUSED);
  ASSERT(strstr(d.err, "--expect-tool: tools/list failed: -32601 Method not found\n"));
  finish(&d);
}

TEST(app_cli_pair_splits_headers_and_env_as_both_commands_send_them) {
  size_t nl, vl;
  const char *v;
  mcpp_cli_pair("Authorization: \tBearer a:b \t", 1, &nl, &v, &vl);
  ASSERT_EQ(nl, 13);
  ASSERT_EQ(vl, 10); /* the blanks around the value are not sent */
  ASSERT(strncmp(v, "Bearer a:b", 10) == 0);
  v = NULL;
  mcpp_cli_pair("X-Empty:", 1, &nl, &v, &vl);
  ASSERT_EQ(nl, 7);
  ASSERT_EQ(vl, 0);
  mcpp_cli_pair("A= x=y ", 0, &nl, &v, &vl); /* env values keep their blanks */
  ASSERT_EQ(nl, 1);
  ASSERT_EQ(vl, 5);
  ASSERT(strncmp(v, " x=y ", 5) == 0);
}
