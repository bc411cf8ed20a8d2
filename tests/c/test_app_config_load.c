/* --config's loader in C: each client format read into entries, each bad
 * file's sentence with its JSON path, the strict grammar's error positions,
 * ${...} filling (a missing variable named, its value never), the workspace
 * folder and the auto paths per OS. */
#include <stdlib.h>
#include <string.h>

#include "mcpping.h"
#include "task.h"

/* "PATH: problem" (or "problem") for a bad text; "" if it loads. */
static char *why(const char *text, int require) {
  static char out[512];
  mcpp_config_doc d;
  ASSERT_EQ(mcpp_config_parse(text, strlen(text), require, "/proj", &d), 0);
  out[0] = '\0';
  if (d.problem) {
    ASSERT_EQ(d.nservers, 0);
    snprintf(out, sizeof out, "%s%s%s", d.json_path ? d.json_path : "", d.json_path ? ": " : "",
             d.problem);
  }
  mcpp_config_doc_free(&d);
  return out;
}

static mcpp_config_doc load_ok(const char *text) {
  mcpp_config_doc d;
  ASSERT_EQ(mcpp_config_parse(text, strlen(text), 1, "/proj", &d), 0);
  if (d.problem) MCPP_FAIL("unexpected problem: %s", d.problem);
  return d;
}

TEST(app_config_load_claude_desktop_keeps_command_args_env_in_file_order) {
  mcpp_config_doc d = load_ok(
      "{\"globalShortcut\": \"x\", \"mcpServers\": {"
      "\"time\": {\"command\": \"uvx\", \"args\": [\"mcp-server-time\"], \"env\": {\"TZ\": "
      "\"UTC\"}}, \"fs\": {\"command\": \"npx\", \"args\": [\"-y\", \"/tmp\"]}}}");
  ASSERT_EQ(d.nservers, 2);
  mcpp_config_server *t = &d.servers[0];
  ASSERT_STR_EQ(t->name, "time");
  ASSERT_STR_EQ(t->transport, "stdio");
  ASSERT_STR_EQ(t->json_path, "$.mcpServers.time");
  ASSERT_STR_EQ(t->command, "uvx");
  ASSERT_EQ(t->nargs, 1);
  ASSERT_STR_EQ(t->args[0], "mcp-server-time");
  ASSERT_EQ(t->nenv, 1);
  ASSERT_STR_EQ(t->env[0], "TZ");
  ASSERT_STR_EQ(t->env[1], "UTC");
  ASSERT(t->cwd == NULL && t->url == NULL && !t->disabled);
  ASSERT_STR_EQ(d.servers[1].name, "fs");
  ASSERT_STR_EQ(d.servers[1].args[1], "/tmp");
  mcpp_config_doc_free(&d);
}

TEST(app_config_load_types_map_to_transports_and_url_alone_is_streamable_http) {
  mcpp_config_doc d = load_ok(
      "{\"mcpServers\": {\"a\": {\"type\": \"stdio\", \"command\": \"p\", \"cwd\": \"srv\"},"
      "\"b\": {\"type\": \"http\", \"url\": \"https://h/mcp\", \"headers\": {\"A\": \"t\"}},"
      "\"c\": {\"url\": \"HTTP://h/\"}, \"d\": {\"type\": \"sse\", \"url\": \"http://h/sse\"},"
      "\"e\": {\"type\": \"streamableHttp\", \"url\": \"http://h/\", \"disabled\": true},"
      "\"f\": {\"type\": \"streamable-http\", \"url\": \"http://h/\"}}}");
  ASSERT_EQ(d.nservers, 6);
  const char *want[] = {"stdio", "streamable-http", "streamable-http", "sse", "streamable-http",
                        "streamable-http"};
  for (size_t i = 0; i < 6; i++) ASSERT_STR_EQ(d.servers[i].transport, want[i]);
  ASSERT_STR_EQ(d.servers[0].cwd, "srv");
  ASSERT_STR_EQ(d.servers[1].headers[0], "A");
  ASSERT_STR_EQ(d.servers[1].headers[1], "t");
  ASSERT(d.servers[1].command == NULL);
  ASSERT(d.servers[4].disabled);
  mcpp_config_doc_free(&d);
}

TEST(app_config_load_vscode_jsonc_settings_json_and_claude_json_projects) {
  mcpp_config_doc d = load_ok("\xEF\xBB\xBF{\n // VS Code writes JSONC\n \"servers\": {\n"
                              "  \"py\": {\"command\": \"python3\", \"args\": [\"a,}\",],},\n"
                              "  /* http */ \"gh\": {\"url\": \"http://h//x/*y*/\"},\n },\n}");
  ASSERT_EQ(d.nservers, 2);
  ASSERT_STR_EQ(d.servers[0].json_path, "$.servers.py");
  ASSERT_STR_EQ(d.servers[0].args[0], "a,}");
  ASSERT_STR_EQ(d.servers[1].url, "http://h//x/*y*/");
  mcpp_config_doc_free(&d);
  d = load_ok("{\"editor.tabSize\": 2, \"mcp\": {\"servers\": {\"a\": {\"command\": \"x\"}}}}");
  ASSERT_STR_EQ(d.servers[0].json_path, "$.mcp.servers.a");
  mcpp_config_doc_free(&d);
  d = load_ok("{\"mcpServers\": {\"u\": {\"command\": \"x\"}}, \"projects\": {\"/other\": "
              "{\"mcpServers\": {\"o\": {\"command\": \"y\"}}}, \"/proj\": {\"mcpServers\": "
              "{\"p\": {\"command\": \"z\"}}}}}");
  ASSERT_EQ(d.nservers, 2);
  ASSERT_STR_EQ(d.servers[1].json_path, "$.projects[\"/proj\"].mcpServers.p");
  mcpp_config_doc_free(&d);
}

TEST(app_config_load_a_repeated_name_keeps_its_first_place_and_last_value) {
  mcpp_config_doc d = load_ok("{\"mcpServers\": {\"a\": {\"command\": \"one\"}, \"b\": "
                              "{\"command\": \"b\"}, \"a\": {\"command\": \"two\"}}}");
  ASSERT_EQ(d.nservers, 2);
  ASSERT_STR_EQ(d.servers[0].name, "a");
  ASSERT_STR_EQ(d.servers[0].command, "two");
  mcpp_config_doc_free(&d);
}

TEST(app_config_load_every_bad_entry_is_named_by_its_json_path) {
  static const char *const cases[][2] = {
      {"[]", "$: must be an object, got array"},
      {"{\"other\": 1}", "$: has no \"mcpServers\" or \"servers\" object"},
      {"{\"mcpServers\": []}", "$.mcpServers: must be an object, got array"},
      {"{\"mcpServers\": null}", "$.mcpServers: must be an object, got null"},
      {"{\"servers\": {\"a\": \"npx\"}}", "$.servers.a: must be an object, got string"},
      {"{\"mcpServers\": {\"a\": {}}}",
       "$.mcpServers.a: needs \"command\" (stdio) or \"url\" (HTTP)"},
      {"{\"mcpServers\": {\"a\": {\"type\": \"stdio\"}}}", "$.mcpServers.a.command: is missing"},
      {"{\"mcpServers\": {\"a\": {\"command\": \"\"}}}",
       "$.mcpServers.a.command: must not be empty"},
      {"{\"mcpServers\": {\"a\": {\"command\": null}}}",
       "$.mcpServers.a.command: must be a string, got null"},
      {"{\"mcpServers\": {\"a\": {\"command\": \"x\", \"args\": \"y\"}}}",
       "$.mcpServers.a.args: must be an array of strings, got string"},
      {"{\"mcpServers\": {\"a\": {\"command\": \"x\", \"args\": [\"y\", 2]}}}",
       "$.mcpServers.a.args[1]: must be a string, got number"},
      {"{\"mcpServers\": {\"a\": {\"command\": \"x\", \"args\": [\"y\\u0000\"]}}}",
       "$.mcpServers.a.args[0]: contains a NUL character"},
      {"{\"mcpServers\": {\"a\": {\"command\": \"x\", \"env\": {\"PORT\": 3000}}}}",
       "$.mcpServers.a.env.PORT: must be a string, got number"},
      {"{\"mcpServers\": {\"a\": {\"command\": \"x\", \"env\": {\"A=B\": \"1\"}}}}",
       "$.mcpServers.a.env[\"A=B\"]: is not a variable name (empty, or with = or NUL)"},
      {"{\"mcpServers\": {\"a\": {\"command\": \"x\", \"env\": {\"\": \"1\"}}}}",
       "$.mcpServers.a.env[\"\"]: is not a variable name (empty, or with = or NUL)"},
      {"{\"mcpServers\": {\"a\": {\"command\": \"x\", \"env\": {\"K\": \"a\\u0000b\"}}}}",
       "$.mcpServers.a.env.K: contains a NUL character"},
      {"{\"mcpServers\": {\"a\": {\"command\": \"x\", \"env\": [\"A=1\"]}}}",
       "$.mcpServers.a.env: must be an object of strings, got array"},
      {"{\"mcpServers\": {\"a\": {\"command\": \"x\", \"cwd\": true}}}",
       "$.mcpServers.a.cwd: must be a string, got boolean"},
      {"{\"servers\": {\"a\": {\"type\": \"ws\", \"url\": \"ws://h\"}}}",
       "$.servers.a.type: unknown transport \"ws\" (expected stdio, http or sse)"},
      {"{\"servers\": {\"a\": {\"type\": 7, \"url\": \"ws://h\"}}}",
       "$.servers.a.type: unknown transport number (expected stdio, http or sse)"},
      {"{\"servers\": {\"a\": {\"url\": \"ftp://h/x\"}}}",
       "$.servers.a.url: is not an http:// or https:// URL"},
      {"{\"servers\": {\"a\": {\"url\": \"http:/h\"}}}",
       "$.servers.a.url: is not an http:// or https:// URL"},
      {"{\"servers\": {\"a\": {\"url\": \"http://[::1/mcp\"}}}",
       "$.servers.a.url: has an IPv6 address without its closing ]"},
      {"{\"servers\": {\"a\": {\"url\": \"http://h:99999/mcp\"}}}",
       "$.servers.a.url: has a port that is not a number from 1 to 65535"},
      {"{\"servers\": {\"a\": {\"url\": \"http://h\", \"headers\": {\"K\": null}}}}",
       "$.servers.a.headers.K: must be a string, got null"},
      {"{\"servers\": {\"a\": {\"url\": \"http://h\", \"headers\": {\"Bad Name\": \"x\"}}}}",
       "$.servers.a.headers[\"Bad Name\"]: is not an HTTP header name (letters, digits and "
       "!#$%&'*+-.^_`|~ only)"},
      {"{\"servers\": {\"a\": {\"url\": \"http://h\", \"headers\": {\"X\": \"a\\r\\nY: 1\"}}}}",
       "$.servers.a.headers.X: has a control character in its value (CR, LF and the like would "
       "split the request)"},
      {"{\"mcpServers\": {\"a\": {\"command\": \"x\", \"disabled\": \"yes\"}}}",
       "$.mcpServers.a.disabled: must be a boolean, got string"},
      {"{\"mcpServers\": {\"my server\": {\"command\": 1}}}",
       "$.mcpServers[\"my server\"].command: must be a string, got number"},
      {"{\"mcpServers\": {\"a\\nb\": 1}}", "$.mcpServers[\"a\\nb\"]: must be an object, got number"},
      {"{\n  \"mcpServers\": {\n    \"a\": {\"command\": \"x\"}\n    \"b\": {}\n}",
       "invalid JSON at line 4 column 5"},
      {"{\"mcpServers\": {\"caf\xC3\xA9\": 1 x}}", "invalid JSON at line 1 column 27"},
      {"{\"mcpServers\": {\"caf\xE9\": {\"command\": \"x\"}}}", "not UTF-8 text"},
      {"\xED\xA0\x80", "not UTF-8 text"},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
    ASSERT_STR_EQ(why(cases[i][0], 1), cases[i][1]);
}

TEST(app_config_load_a_file_without_servers_is_empty_unless_required) {
  ASSERT_STR_EQ(why("{\"numStartups\": 3}", 0), "");
  ASSERT_STR_EQ(why("{\"numStartups\": 3}", 1), "$: has no \"mcpServers\" or \"servers\" object");
}

TEST(app_config_load_problems_never_quote_a_value) {
  ASSERT_STR_EQ(why("{\"servers\": {\"a\": {\"url\": \"sekrit\"}}}", 1),
                "$.servers.a.url: is not an http:// or https:// URL");
}

TEST(app_config_load_one_strict_grammar_finds_where_json_goes_wrong) {
  static const struct {
    const char *text;
    long at;
  } cases[] = {
      {"{}", -1},        {"[1, -2.5e+3, {\"a\": [true, false, null, \"\\u00e9\\n\"]}]", -1},
      {"[NaN]", 1},      {"{\"a\": Infinity}", 6},
      {"[1, -Infinity]", 5}, {"{\"a\": 1,,}", 8},
      {"{\"a\" 1}", 5},  {"{\"a\": tru}", 6},
      {"{\"a\":\"x\n\"}", 7}, {"\"\\q\"", 2},
      {"\"\\u12G4\"", 2}, {"[01]", 2},
      {"[1.]", 3},       {"[-]", 2},
      {"{\"a\":1} x", 8}, {"", 0},
      {"\"open", 5},     {"[\"\xC3\xA9\", x]", 6},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
    ASSERT_EQ(mcpp_config_syntax_error_at(cases[i].text, strlen(cases[i].text)), cases[i].at);
  char deep[200];
  memset(deep, '[', 65);
  memset(deep + 65, ']', 65);
  ASSERT_EQ(mcpp_config_syntax_error_at(deep, 130), 64);
  ASSERT_EQ(mcpp_config_syntax_error_at(deep + 1, 128), -1);
}

TEST(app_config_load_read_problem_names_the_errno_in_words) {
  char *p = mcpp_config_read_problem("ENOENT");
  ASSERT_STR_EQ(p, "cannot read: No such file or directory");
  mcpp_config_free(p);
  p = mcpp_config_read_problem("ELOOP");
  ASSERT_STR_EQ(p, "cannot read: ELOOP");
  mcpp_config_free(p);
}

static const char *fake_env(void *ctx, const char *name) {
  (void)ctx;
  if (strcmp(name, "TZ") == 0) return "UTC";
  if (strcmp(name, "API_KEY") == 0) return "k1";
  if (strcmp(name, "XDG_CONFIG_HOME") == 0) return "/x";
  return NULL;
}

TEST(app_config_resolve_fills_each_clients_variables) {
  mcpp_config_doc d = load_ok(
      "{\"servers\": {\"a\": {\"command\": \"${workspaceFolder}/bin/srv\", \"args\": "
      "[\"${userHome}\", \"${env:TZ}\", \"${TZ}\", \"${MISSING:-fall back}\", \"${open\"], "
      "\"env\": {\"K\": \"${API_KEY}\"}, \"cwd\": \"sub\"}, \"b\": {\"command\": \"x\", "
      "\"cwd\": \"/abs\"}}}");
  mcpp_config_server live;
  char *problem = NULL;
  ASSERT_EQ(mcpp_config_resolve(&d.servers[0], "/ws", "/h", fake_env, NULL, &live, &problem), 0);
  ASSERT(problem == NULL);
  ASSERT_STR_EQ(live.command, "/ws/bin/srv");
  ASSERT_EQ(live.nargs, 5);
  ASSERT_STR_EQ(live.args[0], "/h");
  ASSERT_STR_EQ(live.args[1], "UTC");
  ASSERT_STR_EQ(live.args[2], "UTC");
  ASSERT_STR_EQ(live.args[3], "fall back");
  ASSERT_STR_EQ(live.args[4], "${open");
  ASSERT_STR_EQ(live.env[0], "K");
  ASSERT_STR_EQ(live.env[1], "k1");
  ASSERT_STR_EQ(live.cwd, "/ws/sub");
  ASSERT_STR_EQ(d.servers[0].command, "${workspaceFolder}/bin/srv");
  mcpp_config_server_free(&live);
  ASSERT_EQ(mcpp_config_resolve(&d.servers[1], "/ws", "/h", fake_env, NULL, &live, &problem), 0);
  ASSERT_STR_EQ(live.cwd, "/abs");
  mcpp_config_server_free(&live);
  mcpp_config_doc_free(&d);
}

TEST(app_config_resolve_names_the_field_and_variable_never_the_value) {
  mcpp_config_doc d = load_ok(
      "{\"servers\": {\"gh\": {\"url\": \"https://h/mcp\", \"headers\": {\"Authorization\": "
      "\"Bearer ${input:token}\"}}, \"x\": {\"command\": \"srv\", \"env\": {\"T\": \"${TZ}\", "
      "\"K\": \"${NOT_SET_ANYWHERE}\"}}, \"y\": {\"command\": \"s\", \"args\": [\"${env:TZ}\", "
      "\"${env:NOPE}\"]}}}");
  mcpp_config_server live;
  char *problem = NULL;
  ASSERT_EQ(mcpp_config_resolve(&d.servers[0], ".", "/h", fake_env, NULL, &live, &problem), 1);
  ASSERT_STR_EQ(problem,
                "$.servers.gh.headers.Authorization: ${input:token} is asked of the user by the "
                "editor");
  mcpp_config_free(problem);
  ASSERT_EQ(mcpp_config_resolve(&d.servers[1], ".", "/h", fake_env, NULL, &live, &problem), 1);
  ASSERT_STR_EQ(problem, "$.servers.x.env.K: ${NOT_SET_ANYWHERE} is not set");
  mcpp_config_free(problem);
  ASSERT_EQ(mcpp_config_resolve(&d.servers[2], ".", "/h", fake_env, NULL, &live, &problem), 1);
  ASSERT_STR_EQ(problem, "$.servers.y.args[1]: ${env:NOPE} is not set");
  mcpp_config_free(problem);
  mcpp_config_doc_free(&d);
}

TEST(app_config_workspace_is_the_folder_holding_vscode_or_cursor) {
  char *w = mcpp_config_workspace("/p/.vscode/mcp.json", NULL);
  ASSERT_STR_EQ(w, "/p");
  mcpp_config_free(w);
  w = mcpp_config_workspace("sub/../.cursor/mcp.json", "/home/u/");
  ASSERT_STR_EQ(w, "/home/u");
  mcpp_config_free(w);
  w = mcpp_config_workspace("claude.json", "/home/u");
  ASSERT_STR_EQ(w, "/home/u");
  mcpp_config_free(w);
  w = mcpp_config_workspace("/mcp.json", NULL);
  ASSERT_STR_EQ(w, "/");
  mcpp_config_free(w);
}

static const char *no_env(void *ctx, const char *name) {
  (void)ctx;
  (void)name;
  return NULL;
}

TEST(app_config_auto_paths_per_os_project_files_first) {
  char *p[MCPP_CONFIG_AUTO_PATHS];
  ASSERT_EQ(mcpp_config_auto_paths("/p", "/home/u", "linux", no_env, NULL, p), 0);
  const char *linux_[] = {"/p/.mcp.json",
                          "/p/.cursor/mcp.json",
                          "/p/.vscode/mcp.json",
                          "/home/u/.config/Claude/claude_desktop_config.json",
                          "/home/u/.claude.json",
                          "/home/u/.cursor/mcp.json",
                          "/home/u/.config/Code/User/mcp.json"};
  for (int i = 0; i < MCPP_CONFIG_AUTO_PATHS; i++) {
    ASSERT_STR_EQ(p[i], linux_[i]);
    mcpp_config_free(p[i]);
  }
  ASSERT_EQ(mcpp_config_auto_paths("/p", "/Users/u", "darwin", no_env, NULL, p), 0);
  ASSERT_STR_EQ(p[3], "/Users/u/Library/Application Support/Claude/claude_desktop_config.json");
  for (int i = 0; i < MCPP_CONFIG_AUTO_PATHS; i++) mcpp_config_free(p[i]);
  ASSERT_EQ(mcpp_config_auto_paths("/p", "/home/u", "linux", fake_env, NULL, p), 0);
  ASSERT_STR_EQ(p[3], "/x/Claude/claude_desktop_config.json");
  for (int i = 0; i < MCPP_CONFIG_AUTO_PATHS; i++) mcpp_config_free(p[i]);
  ASSERT_EQ(mcpp_config_auto_paths("C:\\p", "C:\\Users\\u", "win32", no_env, NULL, p), 0);
  ASSERT_STR_EQ(p[1], "C:\\p\\.cursor\\mcp.json");
  ASSERT_STR_EQ(p[3], "C:\\Users\\u\\AppData\\Roaming\\Claude\\claude_desktop_config.json");
  for (int i = 0; i < MCPP_CONFIG_AUTO_PATHS; i++) mcpp_config_free(p[i]);
}
