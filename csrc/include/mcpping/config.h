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

/* `--wrap --write`'s refusal for one wrapped entry that did not start under a
 * desktop client's environment (row: its check), one line:
 * `mcpping: FILE: not written: server 'NAME' would not start wrapped (WHY)`. */
char *mcpp_config_format_refusal(const char *file, const mcpp_config_row *row);

/* 1 if a stdout line of a server is JSON, 0 if it is noise. */
int mcpp_config_line_is_json(const char *line, size_t len);

/* Frees a string returned by this layer. */
void mcpp_config_free(char *p);

#ifdef __cplusplus
}
#endif

#endif /* MCPPING_CONFIG_H */
