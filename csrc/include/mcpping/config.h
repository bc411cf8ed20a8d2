/*
 * mcpping/config.h: the command line's `--config` layer (csrc/src/app/),
 * included by mcpping.h. Client configs (Claude Desktop, Claude Code, Cursor,
 * VS Code) are read and rewritten here once, so both commands print the same
 * bytes by construction.
 */
#ifndef MCPPING_CONFIG_H
#define MCPPING_CONFIG_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Blanks `//` and block comments and trailing commas (JSONC) with spaces, in
 * place, keeping every other byte where it was so that a parse error's
 * offset still points into the file. Returns 1 if anything was blanked. */
int mcpp_config_strip_jsonc(char *text, size_t len);

/* Rewrites a client config's text (JSON or JSONC, optional UTF-8 BOM) so that
 * every stdio server (an entry with a string "command") runs behind
 * `mcpping wrap`, or no longer does (unwrap != 0). The wrapped entry is
 * `launcher[0]` with arguments `launcher[1..]`, "wrap", "--name", ENTRY, "--",
 * then the original command and arguments; launcher is the absolute path of
 * the running mcpping (or an interpreter and its script). An entry already
 * wrapped is left alone; unwrapping drops the wrap options too.
 * On success *out (free with mcpp_config_free) holds the new text, indented
 * by two spaces and ending in a newline, *changed how many entries changed
 * and *had_comments whether comments or trailing commas were dropped.
 * Returns MCPP_ERR_INVALID_ARGUMENT if the text is not a JSON object. */
int mcpp_config_rewrite(const char *text, size_t len, int unwrap,
                        const char *const *launcher, size_t nlauncher,
                        char **out, size_t *out_len, int *changed,
                        int *had_comments);

/* One server's check, as `mcpping --config` found it. Strings are UTF-8
 * and only read during the call. */
typedef struct mcpp_config_row {
  const char *name;
  const char *transport;        /* stdio, streamable-http or sse */
  const char *protocol_version; /* NULL: no handshake */
  /* docs/cli.md's words: ok, loss, unsupported, skipped, spawn failed,
   * handshake failed, timeout, closed, not started. */
  const char *status;
  const char *reason;      /* NULL: none */
  const char *last_stderr; /* the server's last stderr line, NULL: none */
  int sent, received;
  const double *rtts_ms; /* every pong's RTT */
  size_t n_rtts;
  const char *file, *json_path;
  unsigned long non_json_lines; /* stdout lines that were not JSON */
} mcpp_config_row;

/* The `config FILE: N servers` lines (or --json objects), one per file. */
char *mcpp_config_format_files(const char *const *files, const size_t *servers, size_t n,
                               int json);

/* The `MCPPING N servers: ...` header; "" under --json. */
char *mcpp_config_format_start(size_t servers, int count, double interval_s,
                               double timeout_s, double deadline_s, int json);

/* Every row (an aligned table with a STATUS and a REASON column, or one
 * --json object each), the warnings and the summary; quiet drops the table.
 * *exit_status: 0 if every server is ok, unsupported or skipped, 3 if one
 * could not start, connect or finish the handshake, else 1. */
char *mcpp_config_format_results(const mcpp_config_row *rows, size_t n, double time_ms,
                                 int json, int quiet, int *exit_status);

/* `--wrap --write` first starts every wrapped entry as a desktop client
 * would (the SDKs' safe subset of our environment, mcpp_env_safe, with
 * this PATH and the entry's env on top) and gives each this long to
 * answer initialize. */
#define MCPP_CONFIG_START_PATH "/usr/bin:/bin"
#define MCPP_CONFIG_START_TIMEOUT_MS 10000

/* `--wrap --write`'s refusal for one wrapped entry that did not start under a
 * desktop client's environment (row: its check), one line:
 * `mcpping: FILE: not written: server 'NAME' would not start wrapped (WHY)`;
 * "" when the row does not refuse (ok, unsupported, not started). */
char *mcpp_config_format_refusal(const char *file, const mcpp_config_row *row);

/* `--wrap|--unwrap --write` once the start check passed: with changed == 0
 * nothing is written; else path is copied to a new backup (FILE.bak, or the
 * first free FILE.bak.N, with the file's mode) and replaced by text (written
 * beside it, given its mode, renamed over it). *line (mcpp_config_free) is
 * what the command prints on stderr. Returns the exit status, 0 or
 * MCPP_EXIT_USAGE ("cannot write FILE: ..."), or MCPP_ERR_NOMEM. */
int mcpp_config_write(const char *path, const char *text, size_t len, int unwrap,
                      size_t changed, int had_comments, char **line);

/* Why an entry is not checked or watched at all: "disabled" ("disabled":
 * true), "legacy HTTP+SSE transport" (type "sse": mcpping speaks
 * Streamable HTTP only); NULL: it is. */
const char *mcpp_config_skip_reason(const char *transport, int disabled);

/* Frees a string returned by this layer. */
void mcpp_config_free(char *p);

/* ---- Reading a client config (csrc/src/app/config_load.c) ---- */

/* One server entry as written in its file (strings UTF-8, NUL-free). */
typedef struct mcpp_config_server {
  char *name;
  const char *transport; /* stdio, streamable-http or sse (legacy, not pinged) */
  char *json_path;       /* where the entry is, e.g. $.mcpServers.time */
  char *command;         /* stdio: the program; NULL for HTTP */
  char **args;
  size_t nargs;
  char **env; /* name, value, name, value... */
  size_t nenv;
  char *cwd; /* NULL: none */
  char *url; /* HTTP: the endpoint; NULL for stdio */
  char **headers; /* name, value, ... */
  size_t nheaders;
  int disabled; /* "disabled": true (Cline, Windsurf, Claude Code) */
} mcpp_config_server;

/* One config file read: its servers in file order, or why it cannot be used. */
typedef struct mcpp_config_doc {
  mcpp_config_server *servers;
  size_t nservers;
  char *json_path; /* of the problem; NULL: the file as a whole */
  char *problem;   /* NULL: the file is usable */
} mcpp_config_doc;

/* Reads a config's bytes (JSON or JSONC, UTF-8, optional BOM): the Claude
 * Desktop / Claude Code / Cursor ("mcpServers"), VS Code ("servers",
 * settings.json's "mcp.servers") and ~/.claude.json
 * ("projects[project].mcpServers") shapes. require_servers == 0 reads a file
 * with none of these as one without servers. project NULL: the current
 * directory. Every entry is checked; the first problem found is in
 * doc->json_path/doc->problem (docs/cli.md's sentences). Returns 0, or
 * MCPP_ERR_NOMEM. Free with mcpp_config_doc_free. */
int mcpp_config_parse(const char *text, size_t len, int require_servers, const char *project,
                      mcpp_config_doc *doc);
void mcpp_config_doc_free(mcpp_config_doc *doc);

/* `cannot read: No such file or directory`: the problem for a file that
 * could not be read, from its errno name (ENOENT...). */
char *mcpp_config_read_problem(const char *errno_name);

/* Where strict JSON first goes wrong in text, in code points; -1 if nowhere.
 * (Comments and trailing commas are errors here: strip them first.) */
long mcpp_config_syntax_error_at(const char *text, size_t len);

/* `$.a.b`, `$.a["b c"]`: the JSON path of parent's child key; with key NULL,
 * `parent[index]`. */
char *mcpp_config_json_path(const char *parent, const char *key, size_t key_len, size_t index);

/* An environment variable's value, or NULL if unset; the pointer need only
 * stay valid until the next call. */
typedef const char *(*mcpp_config_getenv_cb)(void *ctx, const char *name);

/* The entry with its ${...} filled in, its cwd joined to workspace:
 * ${workspaceFolder}, ${userHome} (home; NULL: the user's), ${env:NAME},
 * ${NAME} and ${NAME:-default}. Anything else, ${input:...} included, fails:
 * *problem (free with mcpp_config_free) names the field and the variable,
 * never a value, and 1 is returned. 0: *out holds the entry (free with
 * mcpp_config_server_free). MCPP_ERR_NOMEM. */
int mcpp_config_resolve(const mcpp_config_server *in, const char *workspace, const char *home,
                        mcpp_config_getenv_cb getenv_cb, void *ctx, mcpp_config_server *out,
                        char **problem);
void mcpp_config_server_free(mcpp_config_server *s);

/* The folder ${workspaceFolder} means for a config at path (relative to cwd;
 * NULL: the current directory): the one holding it, or holding its .vscode
 * or .cursor folder. */
char *mcpp_config_workspace(const char *path, const char *cwd);

/* The files `--config` reads, from its arguments in order, each once: a
 * FILE as given, "auto" each of auto_paths (mcpp_config_auto_paths) that is
 * a regular file. Writes up to cap of them (pointers into given and
 * auto_paths) to paths and whether each must hold servers (named outright;
 * one that auto found need not) to require. Returns how many; with none,
 * *problem (mcpp_config_free) is the sentence ("--config auto: no client
 * config found in A, B, ..."), else NULL. cap = ngiven + nauto is enough. */
size_t mcpp_config_files(const char *const *given, size_t ngiven,
                         const char *const *auto_paths, size_t nauto, const char **paths,
                         int *require, size_t cap, char **problem);

/* How many paths mcpp_config_auto_paths gives. */
#define MCPP_CONFIG_AUTO_PATHS 7

/* Where the usual clients keep their configs (`--config auto`), project
 * files (under cwd) first, existing or not. cwd/home NULL: the current
 * directory / $HOME or the user's; platform NULL: this one ("darwin",
 * "win32", "linux"...); getenv_cb supplies APPDATA, XDG_CONFIG_HOME and HOME.
 * Fills out[0..6] (each freed with mcpp_config_free); MCPP_ERR_NOMEM. */
int mcpp_config_auto_paths(const char *cwd, const char *home, const char *platform,
                           mcpp_config_getenv_cb getenv_cb, void *ctx,
                           char *out[MCPP_CONFIG_AUTO_PATHS]);

#ifdef __cplusplus
}
#endif

#endif /* MCPPING_CONFIG_H */
