/* --config --wrap/--unwrap in C: JSONC, each client format, the wrapped
 * entry's exact form, the round trip, and the output bytes. */
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "mcpping.h"
#include "task.h"

static const char *const LAUNCHER[] = {"/opt/venv/bin/mcpping"};

static char *rewrite(const char *in, int unwrap, int *changed, int *comments) {
  char *out = NULL;
  size_t len = 0;
  ASSERT_EQ(mcpp_config_rewrite(in, strlen(in), unwrap, LAUNCHER, 1, &out, &len, changed,
                                comments),
            0);
  ASSERT_EQ(len, strlen(out));
  return out;
}

TEST(app_config_jsonc_blanks_comments_and_trailing_commas_in_place) {
  char t[] = "{\"a\": \"//x\", // c\n /* b\n */ \"b\": [1,],}";
  size_t n = strlen(t);
  ASSERT_EQ(mcpp_config_strip_jsonc(t, n), 1);
  ASSERT_EQ(strlen(t), n);
  ASSERT_STR_EQ(t, "{\"a\": \"//x\",     \n     \n    \"b\": [1 ] }");
  char plain[] = "{\"a\": [1, 2]}";
  ASSERT_EQ(mcpp_config_strip_jsonc(plain, strlen(plain)), 0);
}

TEST(app_config_wrap_writes_absolute_launcher_name_and_original_command) {
  int changed = 0, comments = 0;
  char *out = rewrite("{\"mcpServers\": {\"fs\": {\"command\": \"npx\", \"args\": [\"-y\", "
                      "\"srv\"], \"env\": {\"K\": \"v\"}}, \"web\": {\"url\": \"http://h/\"}}}",
                      0, &changed, &comments);
  ASSERT_EQ(changed, 1);
  ASSERT_EQ(comments, 0);
  ASSERT_STR_EQ(out, "{\n"
                     "  \"mcpServers\": {\n"
                     "    \"fs\": {\n"
                     "      \"command\": \"/opt/venv/bin/mcpping\",\n"
                     "      \"args\": [\n"
                     "        \"wrap\",\n"
                     "        \"--name\",\n"
                     "        \"fs\",\n"
                     "        \"--\",\n"
                     "        \"npx\",\n"
                     "        \"-y\",\n"
                     "        \"srv\"\n"
                     "      ],\n"
                     "      \"env\": {\n"
                     "        \"K\": \"v\"\n"
                     "      }\n"
                     "    },\n"
                     "    \"web\": {\n"
                     "      \"url\": \"http://h/\"\n"
                     "    }\n"
                     "  }\n"
                     "}\n");
  mcpp_config_free(out);
}

TEST(app_config_wrap_then_unwrap_gives_back_the_same_bytes) {
  const char *formats[] = {
      /* Claude Desktop / Cursor, without and with args. */
      "{\n  \"mcpServers\": {\n    \"a\": {\n      \"command\": \"uvx\"\n    },\n"
      "    \"b\": {\n      \"command\": \"node\",\n      \"args\": [\n        \"s.js\"\n"
      "      ],\n      \"disabled\": false,\n      \"n\": 3\n    }\n  }\n}\n",
      /* VS Code mcp.json. */
      "{\n  \"servers\": {\n    \"v\": {\n      \"type\": \"stdio\",\n      \"command\": "
      "\"x\"\n    },\n    \"h\": {\n      \"type\": \"http\",\n      \"url\": \"u\"\n    }\n"
      "  }\n}\n",
      /* VS Code settings.json. */
      ("{\n  \"mcp\": {\n    \"servers\": {\n      \"s\": {\n        \"command\": "
       "\"\\u00e9\\\"q\\n\"\n      }\n    }\n  },\n  \"editor.x\": []\n}\n"),
  };
  for (size_t i = 0; i < sizeof formats / sizeof *formats; i++) {
    int changed = 0;
    char *wrapped = rewrite(formats[i], 0, &changed, NULL);
    ASSERT_GE(changed, 1);
    int again = 0;
    char *twice = rewrite(wrapped, 0, &again, NULL);
    ASSERT_EQ(again, 0); /* never wrapped twice */
    ASSERT_STR_EQ(twice, wrapped);
    char *back = rewrite(wrapped, 1, &again, NULL);
    ASSERT_EQ(again, changed);
    /* \u00e9 comes back as the character itself, as json.dumps prints it. */
    if (i == 2) ASSERT(strstr(back, "\"\xC3\xA9\\\"q\\n\"") != NULL);
    else ASSERT_STR_EQ(back, formats[i]);
    mcpp_config_free(wrapped);
    mcpp_config_free(twice);
    mcpp_config_free(back);
  }
}

TEST(app_config_jsonc_and_bom_are_read_and_reported) {
  int changed = 0, comments = 0;
  char *out = rewrite("\xEF\xBB\xBF{\"servers\": {\"a\": {\"command\": \"x\",}, // hi\n},}", 0,
                      &changed, &comments);
  ASSERT_EQ(changed, 1);
  ASSERT_EQ(comments, 1);
  ASSERT(out[0] == '{');
  mcpp_config_free(out);
}

TEST(app_config_unwrap_knows_interpreter_launchers_and_drops_wrap_options) {
  int changed = 0;
  char *out = rewrite("{\"mcpServers\": {\"p\": {\"command\": \"/usr/bin/python3\", \"args\": "
                      "[\"-m\", \"mcpping\", \"wrap\", \"--name\", \"p\", \"--\", \"srv\", "
                      "\"--flag\"]}, \"n\": {\"command\": \"/usr/bin/node\", \"args\": "
                      "[\"/x/node/cli.js\", \"wrap\", \"--\", \"s\"]}, \"o\": {\"command\": "
                      "\"other\", \"args\": [\"wrap\", \"--\", \"s\"]}}}",
                      1, &changed, NULL);
  ASSERT_EQ(changed, 2);
  ASSERT(strstr(out, "\"p\": {\n      \"command\": \"srv\",\n      \"args\": [\n"
                     "        \"--flag\"\n      ]\n    }") != NULL);
  ASSERT(strstr(out, "\"n\": {\n      \"command\": \"s\"\n    }") != NULL);
  ASSERT(strstr(out, "\"command\": \"other\"") != NULL);
  mcpp_config_free(out);
}

TEST(app_config_rewrite_refuses_what_is_not_an_object) {
  char *out = NULL;
  int changed = 0;
  ASSERT_EQ(mcpp_config_rewrite("[1]", 3, 1, NULL, 0, &out, NULL, &changed, NULL),
            MCPP_ERR_INVALID_ARGUMENT);
  ASSERT_EQ(mcpp_config_rewrite("{", 1, 1, NULL, 0, &out, NULL, &changed, NULL),
            MCPP_ERR_INVALID_ARGUMENT);
  ASSERT_EQ(mcpp_config_rewrite("{}", 2, 0, NULL, 0, &out, NULL, &changed, NULL),
            MCPP_ERR_INVALID_ARGUMENT); /* wrapping needs a launcher */
  ASSERT(out == NULL);
}

/* ----------------------------------------------------------- the table */

static mcpp_config_row row(const char *name, const char *status, const char *reason) {
  mcpp_config_row r = {0};
  r.name = name;
  r.transport = "stdio";
  r.status = status;
  r.reason = reason;
  r.file = "c.json";
  r.json_path = "$.mcpServers.x";
  return r;
}

TEST(app_config_table_has_a_reason_column_warnings_and_a_summary) {
  const double rtts[] = {1.0, 2.0, 3.5};
  mcpp_config_row rows[5];
  rows[0] = row("ok-one", "ok", NULL);
  rows[0].protocol_version = "2025-06-18";
  rows[0].rtts_ms = rtts;
  rows[0].n_rtts = 3;
  rows[0].sent = rows[0].received = 3;
  rows[0].non_json_lines = 2;
  rows[1] = row("gone", "spawn failed", "cannot start x: no such file or directory (ENOENT)");
  rows[2] = row("froze", "timeout", "no initialize result");
  rows[3] = row("died\n", "handshake failed", "server exited with status 3");
  rows[3].last_stderr = "Traceback: boom";
  rows[4] = row("lossy", "loss", NULL);
  rows[4].protocol_version = "2025-06-18";
  rows[4].sent = 3;
  rows[4].received = 2;
  int status = -1;
  char *out = mcpp_config_format_results(rows, 5, 1234.4, 0, 0, &status);
  ASSERT_STR_EQ(out,
                "\n"
                "NAME    TRANSPORT  PROTOCOL    RTT MIN/AVG/MAX       STATUS            REASON\n"
                "ok-one  stdio      2025-06-18  1.000/2.167/3.500 ms  ok                -\n"
                "gone    stdio      -           -                     spawn failed      "
                "cannot start x: no such file or directory (ENOENT)\n"
                "froze   stdio      -           -                     timeout           "
                "no initialize result\n"
                "died?   stdio      -           -                     handshake failed  "
                "server exited with status 3; stderr: Traceback: boom\n"
                "lossy   stdio      2025-06-18  -                     loss 33.3%        -\n"
                "\n"
                "warning: ok-one printed 2 lines on stdout that are not JSON-RPC (a client may fail "
                "on them)\n"
                "--- mcpping config statistics ---\n"
                "5 servers, 1 ok, 0 unsupported, 0 skipped, 4 failed, time 1234 ms\n");
  ASSERT_EQ(status, 3);
  mcpp_config_free(out);
  out = mcpp_config_format_results(rows, 1, 10, 1, 0, &status);
  ASSERT_STR_EQ(out, "{\"event\":\"server\",\"name\":\"ok-one\",\"transport\":\"stdio\","
                     "\"protocol_version\":\"2025-06-18\",\"status\":\"ok\",\"reason\":null,"
                     "\"sent\":3,\"received\":3,\"loss_pct\":0.0,\"rtt_ms\":{\"min\":1.0,"
                     "\"avg\":2.167,\"max\":3.5},\"non_json_lines\":2,\"file\":\"c.json\","
                     "\"json_path\":\"$.mcpServers.x\"}\n"
                     "{\"event\":\"summary\",\"servers\":1,\"ok\":1,\"unsupported\":0,"
                     "\"skipped\":0,\"failed\":0,\"time_ms\":10}\n");
  ASSERT_EQ(status, 0);
  mcpp_config_free(out);
}

TEST(app_config_exit_status_is_1_for_missing_replies_and_3_for_a_server_not_up) {
  mcpp_config_row r[2] = {row("a", "ok", NULL), row("b", "loss", NULL)};
  r[1].sent = 2;
  r[1].protocol_version = "2025-06-18";
  int status = -1;
  char *out = mcpp_config_format_results(r, 2, 0, 0, 1, &status);
  ASSERT_EQ(status, 1);
  ASSERT(strncmp(out, "\n--- mcpping", 12) == 0); /* -q: no table */
  mcpp_config_free(out);
  /* A timeout before the handshake finished is a server not up. */
  r[1] = row("b", "timeout", "no initialize result");
  out = mcpp_config_format_results(r, 2, 0, 0, 0, &status);
  ASSERT_EQ(status, 3);
  mcpp_config_free(out);
  r[1].protocol_version = "2025-06-18";
  r[1].reason = "no ping finished before the deadline";
  out = mcpp_config_format_results(r, 2, 0, 0, 0, &status);
  ASSERT_EQ(status, 1);
  mcpp_config_free(out);
  r[1] = row("b", "skipped", "disabled");
  out = mcpp_config_format_results(r, 2, 0, 0, 0, &status);
  ASSERT_EQ(status, 0);
  mcpp_config_free(out);
}

TEST(app_config_head_lines_and_json_noise) {
  const char *files[] = {"a.json", "b \"q\".json"};
  const size_t n[] = {1, 2};
  char *out = mcpp_config_format_files(files, n, 2, 0);
  ASSERT_STR_EQ(out, "config a.json: 1 server\nconfig b \"q\".json: 2 servers\n");
  mcpp_config_free(out);
  out = mcpp_config_format_files(files, n, 1, 1);
  ASSERT_STR_EQ(out, "{\"event\":\"config\",\"file\":\"a.json\",\"servers\":1}\n");
  mcpp_config_free(out);
  out = mcpp_config_format_start(3, 1, 1, 0.5, 15, 0);
  ASSERT_STR_EQ(out, "MCPPING 3 servers: 1 ping each, interval 1.0 s, timeout 0.5 s, "
                     "deadline 15.0 s\n");
  mcpp_config_free(out);
  out = mcpp_config_format_start(3, 1, 1, 0.5, 15, 1);
  ASSERT_STR_EQ(out, "");
  mcpp_config_free(out);
}

TEST(app_config_refusal_is_one_line_naming_the_entry_and_why) {
  mcpp_config_row r = row("fs\n", "handshake failed", "server exited with status 2");
  r.last_stderr = "mcpping wrap: cannot start npx: no such file or directory (ENOENT)";
  char *out = mcpp_config_format_refusal("c.json", &r);
  ASSERT_STR_EQ(out, "mcpping: c.json: not written: server 'fs?' would not start wrapped "
                     "(handshake failed: server exited with status 2; stderr: mcpping wrap: "
                     "cannot start npx: no such file or directory (ENOENT))\n");
  mcpp_config_free(out);
  r = row("slow", "timeout", "no initialize result");
  out = mcpp_config_format_refusal("c.json", &r);
  ASSERT_STR_EQ(out, "mcpping: c.json: not written: server 'slow' would not start wrapped "
                     "(timeout: no initialize result)\n");
  mcpp_config_free(out);
}

TEST(app_config_refusal_is_empty_for_a_server_that_started_or_was_not_started) {
  const char *fine[] = {"ok", "unsupported", "not started"};
  for (size_t i = 0; i < 3; i++) {
    mcpp_config_row r = row("fs", fine[i], NULL);
    char *out = mcpp_config_format_refusal("c.json", &r);
    ASSERT_STR_EQ(out, "");
    mcpp_config_free(out);
  }
}

static char *slurp(const char *path) {
  FILE *f = fopen(path, "rb");
  if (!f) return NULL;
  static char buf[256];
  size_t n = fread(buf, 1, sizeof buf - 1, f);
  fclose(f);
  buf[n] = 0;
  return buf;
}

TEST(app_config_write_backs_up_with_the_mode_replaces_and_says_so) {
  char dir[] = "/tmp/mcpp-config-write-XXXXXX";
  ASSERT(mkdtemp(dir) != NULL);
  char path[128], bak[160], want[400];
  snprintf(path, sizeof path, "%s/c.json", dir);
  FILE *f = fopen(path, "w");
  fputs("{\"old\":1}", f);
  fclose(f);
  ASSERT_EQ(chmod(path, 0600), 0);
  char *line = NULL;
  ASSERT_EQ(mcpp_config_write(path, "{}\n", 3, 0, 0, 0, &line), 0);
  snprintf(want, sizeof want, "mcpping: %s: no server to wrap; left as it is\n", path);
  ASSERT_STR_EQ(line, want);
  mcpp_config_free(line);
  ASSERT_STR_EQ(slurp(path), "{\"old\":1}");
  ASSERT_EQ(mcpp_config_write(path, "{\"new\":2}\n", 10, 0, 1, 1, &line), 0);
  snprintf(want, sizeof want,
           "mcpping: wrapped 1 server in %s (its comments and trailing commas were not kept); "
           "the original is in %s.bak\n", path, path);
  ASSERT_STR_EQ(line, want);
  mcpp_config_free(line);
  ASSERT_STR_EQ(slurp(path), "{\"new\":2}\n");
  snprintf(bak, sizeof bak, "%s.bak", path);
  ASSERT_STR_EQ(slurp(bak), "{\"old\":1}");
  struct stat st;
  ASSERT_EQ(stat(bak, &st), 0);
  ASSERT_EQ(st.st_mode & 0777, 0600); /* a config can hold secrets */
  ASSERT_EQ(stat(path, &st), 0);
  ASSERT_EQ(st.st_mode & 0777, 0600);
  /* A second write keeps the first backup and takes the next free name. */
  ASSERT_EQ(mcpp_config_write(path, "{}\n", 3, 1, 2, 0, &line), 0);
  snprintf(want, sizeof want, "mcpping: unwrapped 2 servers in %s; the original is in %s.bak.1\n",
           path, path);
  ASSERT_STR_EQ(line, want);
  mcpp_config_free(line);
  ASSERT_STR_EQ(slurp(bak), "{\"old\":1}");
  unlink(bak);
  snprintf(bak, sizeof bak, "%s.bak.1", path);
  unlink(bak);
  unlink(path);
  /* Nothing to copy: exit 2 and the OS's words, no stray temporary file. */
  ASSERT_EQ(mcpp_config_write(path, "{}\n", 3, 0, 1, 0, &line), MCPP_EXIT_USAGE);
  snprintf(want, sizeof want, "mcpping: cannot write %s: No such file or directory\n", path);
  ASSERT_STR_EQ(line, want);
  mcpp_config_free(line);
  snprintf(bak, sizeof bak, "%s.mcpping-tmp", path);
  ASSERT(access(bak, F_OK) != 0);
  ASSERT_EQ(rmdir(dir), 0);
}

TEST(app_config_files_named_once_in_order_auto_only_existing_files) {
  char dir[] = "/tmp/mcpp-config-files-XXXXXX";
  ASSERT(mkdtemp(dir) != NULL);
  char a[128], b[128], sub[128];
  snprintf(a, sizeof a, "%s/a.json", dir);
  snprintf(b, sizeof b, "%s/b.json", dir);
  snprintf(sub, sizeof sub, "%s/sub", dir);
  fclose(fopen(a, "w"));
  ASSERT_EQ(mkdir(sub, 0700), 0);
  const char *autos[] = {b, a, sub}; /* b absent; a directory is no config */
  const char *given[] = {"x.json", "auto", "x.json", "auto", a};
  const char *paths[8];
  int require[8];
  char *problem = (char *)"unset";
  ASSERT_EQ(mcpp_config_files(given, 5, autos, 3, paths, require, 8, &problem), 2);
  ASSERT(problem == NULL);
  ASSERT_STR_EQ(paths[0], "x.json");
  ASSERT_STR_EQ(paths[1], a);
  ASSERT_EQ(require[0], 1); /* named outright */
  ASSERT_EQ(require[1], 1); /* found by auto, but named too */
  const char *only_auto[] = {"auto"};
  ASSERT_EQ(mcpp_config_files(only_auto, 1, autos, 3, paths, require, 4, &problem), 1);
  ASSERT_EQ(require[0], 0); /* auto found it: it may hold no server */
  unlink(a);
  ASSERT_EQ(mcpp_config_files(only_auto, 1, autos, 2, paths, require, 4, &problem), 0);
  char want[400];
  snprintf(want, sizeof want, "--config auto: no client config found in %s, %s", b, a);
  ASSERT_STR_EQ(problem, want);
  mcpp_config_free(problem);
  ASSERT_EQ(rmdir(sub), 0);
  ASSERT_EQ(rmdir(dir), 0);
}
