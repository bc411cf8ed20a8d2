/* `--config`: what an entry means once it is about to start (its ${...}
 * variables filled in, its folder) and where the usual clients keep their
 * configs. The host only supplies its environment through a callback, so
 * both commands fill the same variables with the same refusals. */
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <uv.h>

#include "app/text.h"
#include "mcpping.h"

/* ------------------------------------------------------------- paths */

static int absolute(const char *p) { return p[0] == '/'; }

/* path joined to base (path alone if absolute), as os.path.join does. */
static void join(mcpp__text *b, const char *base, const char *path, char sep) {
  if (absolute(path) || !*base) {
    mcpp__text_puts(b, path);
    return;
  }
  mcpp__text_puts(b, base);
  if (base[strlen(base) - 1] != sep && *path) mcpp__text_put(b, &sep, 1);
  mcpp__text_puts(b, path);
}

/* An absolute POSIX path without ".", ".." or repeated slashes, in place. */
static void normalize(char *p) {
  size_t out = 0;
  const char *s = p;
  while (*s) {
    while (*s == '/') s++;
    const char *end = strchr(s, '/');
    size_t n = end ? (size_t)(end - s) : strlen(s);
    if (n == 0) break;
    if (n == 1 && s[0] == '.') {
    } else if (n == 2 && s[0] == '.' && s[1] == '.') {
      while (out > 0 && p[out - 1] != '/') out--;
      if (out > 0) out--;
    } else {
      p[out++] = '/';
      memmove(p + out, s, n);
      out += n;
    }
    s += n;
  }
  if (out == 0) p[out++] = '/';
  p[out] = '\0';
}

static void dirname_in_place(char *p) {
  char *slash = strrchr(p, '/');
  if (slash == p) p[1] = '\0';
  else if (slash) *slash = '\0';
}

char *mcpp_config_workspace(const char *path, const char *cwd) {
  char here[4096];
  size_t here_len = sizeof here;
  if (!cwd) cwd = uv_cwd(here, &here_len) == 0 ? here : "/";
  mcpp__text b = {0};
  join(&b, absolute(path) ? "" : cwd, path, '/');
  char *folder = mcpp__text_take(&b);
  if (!folder) return NULL;
  normalize(folder);
  dirname_in_place(folder);
  const char *slash = strrchr(folder, '/');
  const char *base = slash ? slash + 1 : folder;
  /* ${workspaceFolder} is the folder holding .vscode/ or .cursor/. */
  if (strcmp(base, ".vscode") == 0 || strcmp(base, ".cursor") == 0) dirname_in_place(folder);
  return folder;
}

/* ------------------------------------------------------------- variables */

typedef struct fill {
  const char *workspace, *home;
  mcpp_config_getenv_cb getenv_cb;
  void *ctx;
  char *problem;
  int oom;
} fill;

static int is_name(const char *v, size_t n) {
  if (n == 0) return 0;
  for (size_t i = 0; i < n; i++) {
    char c = v[i];
    int alpha = (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || c == '_';
    if (!alpha && !(i > 0 && c >= '0' && c <= '9')) return 0;
  }
  return 1;
}

static const char *lookup(fill *f, const char *name, size_t n) {
  char *z = malloc(n + 1);
  if (!z) {
    f->oom = 1;
    return NULL;
  }
  memcpy(z, name, n);
  z[n] = '\0';
  const char *v = f->getenv_cb ? f->getenv_cb(f->ctx, z) : NULL;
  free(z);
  return v;
}

/* One ${var}'s value into b; -1 (f->problem) if mcpping cannot fill it. */
static int one(fill *f, mcpp__text *b, const char *var, size_t n, const char *at) {
  const char *v;
  if (n == 15 && memcmp(var, "workspaceFolder", 15) == 0) {
    mcpp__text_puts(b, f->workspace);
    return 0;
  }
  if (n == 8 && memcmp(var, "userHome", 8) == 0) {
    mcpp__text_puts(b, f->home);
    return 0;
  }
  if (n > 4 && memcmp(var, "env:", 4) == 0 && (v = lookup(f, var + 4, n - 4))) {
    mcpp__text_puts(b, v);
    return 0;
  }
  size_t name_n = n;
  const char *fallback = NULL;
  for (size_t i = 0; i + 1 < n; i++)
    if (var[i] == ':' && var[i + 1] == '-') {
      name_n = i;
      fallback = var + i + 2;
      break;
    }
  if (is_name(var, name_n)) {
    if ((v = lookup(f, var, name_n))) {
      mcpp__text_puts(b, v);
      return 0;
    }
    if (fallback) {
      mcpp__text_put(b, fallback, (size_t)(var + n - fallback));
      return 0;
    }
  }
  if (f->oom) return -1;
  mcpp__text t = {0};
  mcpp__text_printf(&t, "%s: ${%.*s} %s", at, (int)n, var,
                    n >= 6 && memcmp(var, "input:", 6) == 0
                        ? "is asked of the user by the editor"
                        : "is not set");
  f->problem = mcpp__text_take(&t);
  if (!f->problem) f->oom = 1;
  return -1;
}

/* text with every ${...} filled in; NULL on a problem or out of memory. */
static char *expand(fill *f, const char *text, const char *at) {
  if (!at) {
    f->oom = 1;
    return NULL;
  }
  mcpp__text b = {0};
  const char *s = text;
  for (;;) {
    const char *open = strstr(s, "${");
    const char *close = open ? strchr(open + 2, '}') : NULL;
    if (!close) break;
    mcpp__text_put(&b, s, (size_t)(open - s));
    if (one(f, &b, open + 2, (size_t)(close - open - 2), at) < 0) {
      mcpp__text_free(&b);
      return NULL;
    }
    s = close + 1;
  }
  mcpp__text_puts(&b, s);
  char *out = mcpp__text_take(&b);
  if (!out) f->oom = 1;
  return out;
}

static char *path_of(const char *parent, const char *key, size_t index) {
  return mcpp_config_json_path(parent, key, key ? strlen(key) : 0, index);
}

/* Fills a list (pairs: every second item, the values) into *out. */
static int expand_list(fill *f, char *const *in, size_t n, int pairs, const char *at,
                       const char *key, char ***out) {
  size_t items = pairs ? 2 * n : n;
  *out = calloc(items + 1, sizeof **out);
  if (!*out) {
    f->oom = 1;
    return -1;
  }
  char *where = path_of(at, key, 0);
  int rc = where ? 0 : (f->oom = 1, -1);
  for (size_t i = 0; rc == 0 && i < n; i++) {
    if (pairs && !((*out)[2 * i] = strdup(in[2 * i]))) {
      f->oom = 1;
      rc = -1;
      break;
    }
    char *item_at = pairs ? path_of(where, in[2 * i], 0) : path_of(where, NULL, i);
    char *v = expand(f, pairs ? in[2 * i + 1] : in[i], item_at);
    free(item_at);
    if (!v) rc = -1;
    else (*out)[pairs ? 2 * i + 1 : i] = v;
  }
  free(where);
  return rc;
}

static char *expand_field(fill *f, const char *text, const char *at, const char *key) {
  char *where = path_of(at, key, 0);
  char *v = expand(f, text, where);
  free(where);
  return v;
}

int mcpp_config_resolve(const mcpp_config_server *in, const char *workspace, const char *home,
                        mcpp_config_getenv_cb getenv_cb, void *ctx, mcpp_config_server *out,
                        char **problem) {
  char home_buf[4096];
  size_t home_len = sizeof home_buf;
  if (!home) home = uv_os_homedir(home_buf, &home_len) == 0 ? home_buf : "";
  fill f = {workspace, home, getenv_cb, ctx, NULL, 0};
  const char *at = in->json_path;
  memset(out, 0, sizeof *out);
  *problem = NULL;
  out->transport = in->transport;
  out->disabled = in->disabled;
  out->nargs = in->nargs;
  out->nenv = in->nenv;
  out->nheaders = in->nheaders;
  int bad = !(out->name = strdup(in->name)) || !(out->json_path = strdup(at));
  if (bad) f.oom = 1;
  if (!bad && in->command) bad = !(out->command = expand_field(&f, in->command, at, "command"));
  if (!bad && in->args) bad = expand_list(&f, in->args, in->nargs, 0, at, "args", &out->args) < 0;
  if (!bad && in->env) bad = expand_list(&f, in->env, in->nenv, 1, at, "env", &out->env) < 0;
  if (!bad && in->cwd) {
    char *cwd = expand_field(&f, in->cwd, at, "cwd");
    bad = !cwd;
    if (cwd) {
      mcpp__text b = {0};
      join(&b, workspace, cwd, '/');
      free(cwd);
      bad = !(out->cwd = mcpp__text_take(&b));
      if (bad) f.oom = 1;
    }
  }
  if (!bad && in->url) bad = !(out->url = expand_field(&f, in->url, at, "url"));
  if (!bad && in->headers)
    bad = expand_list(&f, in->headers, in->nheaders, 1, at, "headers", &out->headers) < 0;
  if (!bad) return 0;
  /* The lists are zeroed past what was filled: free() takes their NULLs. */
  mcpp_config_server_free(out);
  if (f.oom) {
    free(f.problem);
    return MCPP_ERR_NOMEM;
  }
  *problem = f.problem;
  return 1;
}

/* ------------------------------------------------------------- auto */

int mcpp_config_auto_paths(const char *cwd, const char *home, const char *platform,
                           mcpp_config_getenv_cb getenv_cb, void *ctx,
                           char *out[MCPP_CONFIG_AUTO_PATHS]) {
  char cwd_buf[4096], home_buf[4096];
  size_t cwd_len = sizeof cwd_buf, home_len = sizeof home_buf;
  const char *env_home = getenv_cb ? getenv_cb(ctx, "HOME") : NULL;
  char *home_copy = NULL;
  if ((!home || !*home) && env_home && *env_home) home = home_copy = strdup(env_home);
  if (!home || !*home) home = uv_os_homedir(home_buf, &home_len) == 0 ? home_buf : "";
  if (!cwd || !*cwd) cwd = uv_cwd(cwd_buf, &cwd_len) == 0 ? cwd_buf : ".";
  if (!platform) {
#if defined(__APPLE__)
    platform = "darwin";
#elif defined(_WIN32)
    platform = "win32";
#else
    platform = "linux";
#endif
  }
  int windows = strncmp(platform, "win", 3) == 0;
  char sep = windows ? '\\' : '/';
  mcpp__text app = {0};
  const char *from_env = NULL;
  if (strcmp(platform, "darwin") == 0) {
    join(&app, home, "Library", sep);
    mcpp__text_put(&app, &sep, 1);
    mcpp__text_puts(&app, "Application Support");
  } else if ((from_env = getenv_cb ? getenv_cb(ctx, windows ? "APPDATA" : "XDG_CONFIG_HOME")
                                   : NULL) &&
             *from_env) {
    mcpp__text_puts(&app, from_env);
  } else if (windows) {
    join(&app, home, "AppData\\Roaming", sep);
  } else {
    join(&app, home, ".config", sep);
  }
  char *app_dir = mcpp__text_take(&app);
  const char *s = windows ? "\\" : "/";
  /* Project files first: Claude Code, Cursor, VS Code's workspace; then
   * Claude Desktop, Claude Code's user file, Cursor's and VS Code's. */
  const char *const parts[MCPP_CONFIG_AUTO_PATHS][2] = {
      {cwd, ".mcp.json"},
      {cwd, ".cursor|mcp.json"},
      {cwd, ".vscode|mcp.json"},
      {app_dir ? app_dir : "", "Claude|claude_desktop_config.json"},
      {home, ".claude.json"},
      {home, ".cursor|mcp.json"},
      {app_dir ? app_dir : "", "Code|User|mcp.json"},
  };
  int rc = app_dir ? 0 : MCPP_ERR_NOMEM;
  for (int i = 0; i < MCPP_CONFIG_AUTO_PATHS; i++) {
    mcpp__text b = {0};
    mcpp__text t = {0};
    for (const char *p = parts[i][1]; *p; p++) mcpp__text_puts(&t, *p == '|' ? s : (char[2]){*p, 0});
    char *tail = mcpp__text_take(&t);
    if (tail) join(&b, parts[i][0], tail, sep);
    free(tail);
    out[i] = tail ? mcpp__text_take(&b) : NULL;
    if (!out[i]) rc = MCPP_ERR_NOMEM;
  }
  free(app_dir);
  free(home_copy);
  if (rc < 0)
    for (int i = 0; i < MCPP_CONFIG_AUTO_PATHS; i++) {
      free(out[i]);
      out[i] = NULL;
    }
  return rc;
}

/* ------------------------------------------------------------- --config's files */

static int listed(const char *const *paths, size_t n, const char *p) {
  for (size_t i = 0; i < n; i++)
    if (strcmp(paths[i], p) == 0) return 1;
  return 0;
}

size_t mcpp_config_files(const char *const *given, size_t ngiven,
                         const char *const *auto_paths, size_t nauto, const char **paths,
                         int *require, size_t cap, char **problem) {
  size_t n = 0;
  *problem = NULL;
  for (size_t i = 0; i < ngiven; i++) {
    int is_auto = strcmp(given[i], "auto") == 0;
    for (size_t j = 0; j < (is_auto ? nauto : 1); j++) {
      const char *p = is_auto ? auto_paths[j] : given[i];
      struct stat st;
      if (listed(paths, n, p) || n == cap) continue;
      if (is_auto && (stat(p, &st) != 0 || !S_ISREG(st.st_mode))) continue;
      paths[n++] = p;
    }
  }
  /* A file named outright must hold servers, one auto found need not. */
  int any_auto = listed(given, ngiven, "auto");
  for (size_t i = 0; i < n; i++) require[i] = !any_auto || listed(given, ngiven, paths[i]);
  if (n == 0) {
    mcpp__text t = {0};
    mcpp__text_puts(&t, "--config auto: no client config found in ");
    for (size_t j = 0; j < nauto; j++)
      mcpp__text_printf(&t, "%s%s", j ? ", " : "", auto_paths[j]);
    *problem = mcpp__text_take(&t);
  }
  return n;
}
