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

/* Frees a string returned by this layer. */
void mcpp_config_free(char *p);

#ifdef __cplusplus
}
#endif

#endif /* MCPPING_CONFIG_H */
