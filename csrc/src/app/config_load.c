/* `--config`: a client config's bytes read into server entries, every
 * problem named by its JSON path in docs/cli.md's words. The grammar is
 * strict JSON (after JSONC's comments and trailing commas are blanked), with
 * one scanner that both finds the first error and builds the tree, so a bad
 * file gets one line and column whichever command reads it. */
#include <stdlib.h>
#include <string.h>

#include <uv.h>

#include "app/config_jsonc.h"
#include "app/text.h"
#include "mcpping.h"

/* Deeper nesting than this is refused (no client config comes close). */
#define MAX_DEPTH 64

enum { J_NULL, J_FALSE, J_TRUE, J_NUM, J_STR, J_ARR, J_OBJ };

typedef struct jstr {
  char *p;
  size_t n;
} jstr;

typedef struct jval {
  int type;
  jstr s;             /* J_STR */
  struct jval **kids; /* J_ARR, J_OBJ */
  jstr *keys;         /* J_OBJ */
  size_t n, cap;
} jval;

static void jfree(jval *v) {
  if (!v) return;
  for (size_t i = 0; i < v->n; i++) {
    jfree(v->kids[i]);
    if (v->keys) free(v->keys[i].p);
  }
  free(v->kids);
  free(v->keys);
  free(v->s.p);
  free(v);
}

/* ------------------------------------------------------------- scanning */

typedef struct scan {
  const unsigned char *t;
  size_t n, i;
  size_t bad; /* where the grammar first failed */
  int failed, oom;
} scan;

static int fail(scan *s, size_t at) {
  if (!s->failed) s->bad = at;
  s->failed = 1;
  return -1;
}

static void ws(scan *s) {
  while (s->i < s->n && (s->t[s->i] == ' ' || s->t[s->i] == '\t' || s->t[s->i] == '\n' ||
                         s->t[s->i] == '\r'))
    s->i++;
}

static int is_digit(scan *s) { return s->i < s->n && s->t[s->i] >= '0' && s->t[s->i] <= '9'; }

static int digits(scan *s) {
  if (!is_digit(s)) return fail(s, s->i);
  while (is_digit(s)) s->i++;
  return 0;
}

static int hex4(const unsigned char *p, unsigned *out) {
  unsigned v = 0;
  for (int k = 0; k < 4; k++) {
    unsigned c = p[k];
    if (c >= '0' && c <= '9') v = v * 16 + (c - '0');
    else if (c >= 'a' && c <= 'f') v = v * 16 + (c - 'a' + 10);
    else if (c >= 'A' && c <= 'F') v = v * 16 + (c - 'A' + 10);
    else return -1;
  }
  *out = v;
  return 0;
}

static void put_utf8(mcpp__text *b, unsigned cp) {
  char u[4];
  size_t k;
  if (cp < 0x80) {
    u[0] = (char)cp;
    k = 1;
  } else if (cp < 0x800) {
    u[0] = (char)(0xC0 | cp >> 6);
    u[1] = (char)(0x80 | (cp & 0x3F));
    k = 2;
  } else if (cp < 0x10000) {
    /* A lone surrogate too, as Python and JavaScript keep it. */
    u[0] = (char)(0xE0 | cp >> 12);
    u[1] = (char)(0x80 | (cp >> 6 & 0x3F));
    u[2] = (char)(0x80 | (cp & 0x3F));
    k = 3;
  } else {
    u[0] = (char)(0xF0 | cp >> 18);
    u[1] = (char)(0x80 | (cp >> 12 & 0x3F));
    u[2] = (char)(0x80 | (cp >> 6 & 0x3F));
    u[3] = (char)(0x80 | (cp & 0x3F));
    k = 4;
  }
  mcpp__text_put(b, u, k);
}

/* A string at s->i (on its quote); its decoded bytes into *out if out. */
static int string(scan *s, jstr *out) {
  mcpp__text b = {0};
  s->i++;
  size_t run = s->i;
  while (s->i < s->n) {
    unsigned c = s->t[s->i];
    if (c == '"') {
      if (out) {
        mcpp__text_put(&b, (const char *)s->t + run, s->i - run);
        if (!b.p && !b.oom) mcpp__text_put(&b, "", 0);
        if (b.oom) {
          mcpp__text_free(&b);
          s->oom = 1;
          return -1;
        }
        out->p = b.p;
        out->n = b.len;
      }
      s->i++;
      return 0;
    }
    if (c == '\\') {
      if (out) mcpp__text_put(&b, (const char *)s->t + run, s->i - run);
      unsigned nx = s->i + 1 < s->n ? s->t[s->i + 1] : 0;
      unsigned cp;
      const char *simple = strchr("\"\\/bfnrt", (int)nx);
      if (nx && simple) {
        static const char to[] = "\"\\/\b\f\n\r\t";
        if (out) mcpp__text_put(&b, &to[simple - "\"\\/bfnrt"], 1);
        s->i += 2;
      } else if (nx == 'u' && s->i + 6 <= s->n && hex4(s->t + s->i + 2, &cp) == 0) {
        s->i += 6;
        unsigned lo;
        if (cp >= 0xD800 && cp < 0xDC00 && s->i + 6 <= s->n && s->t[s->i] == '\\' &&
            s->t[s->i + 1] == 'u' && hex4(s->t + s->i + 2, &lo) == 0 && lo >= 0xDC00 &&
            lo < 0xE000) {
          cp = 0x10000 + ((cp - 0xD800) << 10) + (lo - 0xDC00);
          s->i += 6;
        }
        if (out) put_utf8(&b, cp);
      } else {
        mcpp__text_free(&b);
        return fail(s, s->i + 1);
      }
      run = s->i;
    } else if (c < ' ') {
      mcpp__text_free(&b);
      return fail(s, s->i);
    } else {
      s->i++;
    }
  }
  mcpp__text_free(&b);
  return fail(s, s->n);
}

static jval *node(scan *s, int type) {
  jval *v = calloc(1, sizeof *v);
  if (!v) s->oom = 1;
  else v->type = type;
  return v;
}

static int add_kid(scan *s, jval *v, jval *kid, jstr key) {
  if (v->n == v->cap) {
    size_t cap = v->cap ? v->cap * 2 : 4;
    jval **kids = realloc(v->kids, cap * sizeof *kids);
    if (kids) v->kids = kids;
    jstr *keys = NULL;
    if (kids && v->type == J_OBJ) {
      keys = realloc(v->keys, cap * sizeof *keys);
      if (keys) v->keys = keys;
    }
    if (!kids || (v->type == J_OBJ && !keys)) {
      s->oom = 1;
      return -1;
    }
    v->cap = cap;
  }
  v->kids[v->n] = kid;
  if (v->type == J_OBJ) v->keys[v->n] = key;
  v->n++;
  return 0;
}

/* One value at s->i; the tree into *out if out (else only checked). */
static int value(scan *s, int depth, jval **out) {
  if (s->i >= s->n) return fail(s, s->n);
  unsigned c = s->t[s->i];
  int build = out != NULL;
  if (c == '{' || c == '[') {
    if (depth >= MAX_DEPTH) return fail(s, s->i);
    unsigned close = c == '{' ? '}' : ']';
    jval *v = build ? node(s, c == '{' ? J_OBJ : J_ARR) : NULL;
    if (build && !v) return -1;
    if (build) *out = v;
    s->i++;
    ws(s);
    if (s->i < s->n && s->t[s->i] == close) {
      s->i++;
      return 0;
    }
    for (;;) {
      jstr key = {0};
      if (c == '{') {
        if (s->i >= s->n || s->t[s->i] != '"') return fail(s, s->i);
        if (string(s, build ? &key : NULL) < 0) return -1;
        ws(s);
        if (s->i >= s->n || s->t[s->i] != ':') {
          free(key.p);
          return fail(s, s->i);
        }
        s->i++;
        ws(s);
      }
      jval *kid = NULL;
      int rc = value(s, depth + 1, build ? &kid : NULL);
      if (build && kid && add_kid(s, v, kid, key) < 0) {
        jfree(kid);
        free(key.p);
        return -1;
      }
      if (build && !kid) free(key.p);
      if (rc < 0) return -1;
      ws(s);
      if (s->i < s->n && s->t[s->i] == ',') {
        s->i++;
        ws(s);
      } else if (s->i < s->n && s->t[s->i] == close) {
        s->i++;
        return 0;
      } else {
        return fail(s, s->i);
      }
    }
  }
  if (c == '"') {
    jval *v = build ? node(s, J_STR) : NULL;
    if (build && !v) return -1;
    if (build) *out = v;
    return string(s, build ? &v->s : NULL);
  }
  if (c == '-' || (c >= '0' && c <= '9')) {
    if (c == '-') s->i++;
    if (s->i < s->n && s->t[s->i] == '0') s->i++;
    else if (digits(s) < 0) return -1;
    if (s->i < s->n && s->t[s->i] == '.') {
      s->i++;
      if (digits(s) < 0) return -1;
    }
    if (s->i < s->n && (s->t[s->i] == 'e' || s->t[s->i] == 'E')) {
      s->i++;
      if (s->i < s->n && (s->t[s->i] == '+' || s->t[s->i] == '-')) s->i++;
      if (digits(s) < 0) return -1;
    }
    if (build && !(*out = node(s, J_NUM))) return -1;
    return 0;
  }
  static const char *const words[] = {"null", "false", "true"};
  for (int w = 0; w < 3; w++) {
    size_t k = strlen(words[w]);
    if (s->n - s->i >= k && memcmp(s->t + s->i, words[w], k) == 0) {
      s->i += k;
      if (build && !(*out = node(s, J_NULL + w))) return -1;
      return 0;
    }
  }
  return fail(s, s->i);
}

/* The document's tree; NULL with s->failed (at s->bad) or s->oom. */
static jval *parse_json(scan *s, int build) {
  jval *root = NULL;
  ws(s);
  if (value(s, 0, build ? &root : NULL) == 0) {
    ws(s);
    if (s->i < s->n) fail(s, s->i);
  }
  if (s->failed || s->oom || !build) {
    jfree(root);
    return NULL;
  }
  return root;
}

static size_t code_points(const char *t, size_t from, size_t to) {
  size_t k = 0;
  for (size_t i = from; i < to; i++) k += ((unsigned char)t[i] & 0xC0) != 0x80;
  return k;
}

long mcpp_config_syntax_error_at(const char *text, size_t len) {
  scan s = {(const unsigned char *)text, len, 0, 0, 0, 0};
  parse_json(&s, 0);
  return s.failed ? (long)code_points(text, 0, s.bad) : -1;
}

/* ------------------------------------------------------------- messages */

static int is_ident(const char *k, size_t n) {
  if (n == 0) return 0;
  for (size_t i = 0; i < n; i++) {
    char c = k[i];
    int alpha = (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || c == '_' || c == '$';
    if (!alpha && !(i > 0 && c >= '0' && c <= '9')) return 0;
  }
  return 1;
}

/* A JSON string as json.dumps(ensure_ascii=False) and JSON.stringify write
 * it, NULs included. */
static void put_quoted(mcpp__text *b, const char *k, size_t n) {
  mcpp__text_put(b, "\"", 1);
  for (size_t i = 0; i < n; i++) {
    unsigned char c = (unsigned char)k[i];
    const char *esc = c == '"'    ? "\\\""
                      : c == '\\' ? "\\\\"
                      : c == '\n' ? "\\n"
                      : c == '\r' ? "\\r"
                      : c == '\t' ? "\\t"
                      : c == '\b' ? "\\b"
                      : c == '\f' ? "\\f"
                                  : NULL;
    if (esc) mcpp__text_puts(b, esc);
    else if (c < 0x20) mcpp__text_printf(b, "\\u%04x", c);
    else mcpp__text_put(b, (const char *)&k[i], 1);
  }
  mcpp__text_put(b, "\"", 1);
}

char *mcpp_config_json_path(const char *parent, const char *key, size_t key_len, size_t index) {
  mcpp__text b = {0};
  mcpp__text_puts(&b, parent);
  if (!key) {
    mcpp__text_printf(&b, "[%zu]", index);
  } else if (is_ident(key, key_len)) {
    mcpp__text_put(&b, ".", 1);
    mcpp__text_put(&b, key, key_len);
  } else {
    mcpp__text_put(&b, "[", 1);
    put_quoted(&b, key, key_len);
    mcpp__text_put(&b, "]", 1);
  }
  return mcpp__text_take(&b);
}

static const char *kind(const jval *v) {
  static const char *const names[] = {"null",   "boolean", "boolean", "number",
                                      "string", "array",   "object"};
  return names[v->type];
}

char *mcpp_config_read_problem(const char *code) {
  static const char *const text[][2] = {{"ENOENT", "No such file or directory"},
                                        {"EACCES", "Permission denied"},
                                        {"EISDIR", "Is a directory"},
                                        {"ENOTDIR", "Not a directory"}};
  const char *shown = code ? code : "unknown error";
  for (size_t i = 0; code && i < sizeof text / sizeof text[0]; i++)
    if (strcmp(code, text[i][0]) == 0) shown = text[i][1];
  mcpp__text b = {0};
  mcpp__text_printf(&b, "cannot read: %s", shown);
  return mcpp__text_take(&b);
}

/* ------------------------------------------------------------- the model */

typedef struct load {
  mcpp_config_doc *doc;
  int oom;
} load;

/* Records the first problem (path owned by the call, copied); returns -1. */
static int problem(load *L, const char *path, const char *fmt, const char *arg) {
  if (L->doc->problem) return -1;
  mcpp__text b = {0};
  mcpp__text_printf(&b, fmt, arg);
  L->doc->problem = mcpp__text_take(&b);
  L->doc->json_path = path ? strdup(path) : NULL;
  if (!L->doc->problem || (path && !L->doc->json_path)) L->oom = 1;
  return -1;
}

/* An object's member by name: the last of equal names, as Python's dict and
 * JavaScript's objects keep it. */
static jval *get(const jval *o, const char *name) {
  if (!o || o->type != J_OBJ) return NULL;
  size_t n = strlen(name);
  for (size_t i = o->n; i-- > 0;)
    if (o->keys[i].n == n && memcmp(o->keys[i].p, name, n) == 0) return o->kids[i];
  return NULL;
}

/* 1 if member i's name came before (a later duplicate, skipped: the first
 * one stands in the file's order with the last value). */
static int repeated(const jval *o, size_t i) {
  for (size_t j = 0; j < i; j++)
    if (o->keys[j].n == o->keys[i].n && memcmp(o->keys[j].p, o->keys[i].p, o->keys[i].n) == 0)
      return 1;
  return 0;
}

/* The value of member i, the last of its name. */
static jval *last_of(const jval *o, size_t i) {
  for (size_t j = o->n; j-- > i;)
    if (o->keys[j].n == o->keys[i].n && memcmp(o->keys[j].p, o->keys[i].p, o->keys[i].n) == 0)
      return o->kids[j];
  return o->kids[i];
}

static int has_nul(const jstr *s) { return memchr(s->p, '\0', s->n) != NULL; }

static char *dup_str(load *L, const jstr *s) {
  char *p = malloc(s->n + 1);
  if (!p) {
    L->oom = 1;
    return NULL;
  }
  memcpy(p, s->p, s->n);
  p[s->n] = '\0';
  return p;
}

/* A child path; NULL (and L->oom) if out of memory. */
static char *child(load *L, const char *parent, const char *key, size_t n, size_t index) {
  char *p = mcpp_config_json_path(parent, key, n, index);
  if (!p) L->oom = 1;
  return p;
}

/* A string member (required: must be there and not empty); -1 on a problem. */
static int field_string(load *L, const jval *e, const char *at, const char *key, int required,
                        char **out) {
  jval *v = get(e, key);
  *out = NULL;
  if ((!v || v->type == J_NULL) && !required) return 0;
  char *where = child(L, at, key, strlen(key), 0);
  if (!where) return -1;
  int rc = -1;
  if (!v) problem(L, where, "is missing", NULL);
  else if (v->type != J_STR) problem(L, where, "must be a string, got %s", kind(v));
  else if (required && v->s.n == 0) problem(L, where, "must not be empty", NULL);
  else if (has_nul(&v->s)) problem(L, where, "contains a NUL character", NULL);
  else rc = (*out = dup_str(L, &v->s)) ? 0 : -1;
  free(where);
  return rc;
}

static int field_strings(load *L, const jval *e, const char *at, const char *key, char ***out,
                         size_t *n) {
  jval *v = get(e, key);
  *out = NULL;
  *n = 0;
  if (!v || v->type == J_NULL) return 0;
  char *where = child(L, at, key, strlen(key), 0);
  if (!where) return -1;
  if (v->type != J_ARR) {
    problem(L, where, "must be an array of strings, got %s", kind(v));
    free(where);
    return -1;
  }
  *out = calloc(v->n + 1, sizeof **out);
  int rc = *out ? 0 : -1;
  if (!*out) L->oom = 1;
  for (size_t i = 0; rc == 0 && i < v->n; i++) {
    jval *item = v->kids[i];
    char *ip = child(L, where, NULL, 0, i);
    if (!ip) rc = -1;
    else if (item->type != J_STR) rc = problem(L, ip, "must be a string, got %s", kind(item));
    else if (has_nul(&item->s)) rc = problem(L, ip, "contains a NUL character", NULL);
    else if (!((*out)[i] = dup_str(L, &item->s))) rc = -1;
    else (*n)++;
    free(ip);
  }
  free(where);
  return rc;
}

/* An object of strings (env, names = 1: names must be variable names;
 * headers, names = 0: each one must be sendable, mcpp_http_header_problem). */
static int field_table(load *L, const jval *e, const char *at, const char *key, int names,
                       char ***out, size_t *n) {
  jval *v = get(e, key);
  *out = NULL;
  *n = 0;
  if (!v || v->type == J_NULL) return 0;
  char *where = child(L, at, key, strlen(key), 0);
  if (!where) return -1;
  if (v->type != J_OBJ) {
    problem(L, where, "must be an object of strings, got %s", kind(v));
    free(where);
    return -1;
  }
  *out = calloc(2 * v->n + 1, sizeof **out);
  int rc = *out ? 0 : -1;
  if (!*out) L->oom = 1;
  for (size_t i = 0; rc == 0 && i < v->n; i++) {
    if (repeated(v, i)) continue;
    const jstr *k = &v->keys[i];
    jval *item = last_of(v, i);
    const char *unsendable; /* headers: why this one cannot be sent */
    char *ip = child(L, where, k->p, k->n, 0);
    if (!ip) rc = -1;
    else if (names && (k->n == 0 || memchr(k->p, '=', k->n) || has_nul(k)))
      rc = problem(L, ip, "is not a variable name (empty, or with = or NUL)", NULL);
    else if (item->type != J_STR) rc = problem(L, ip, "must be a string, got %s", kind(item));
    else if (has_nul(&item->s) || has_nul(k)) rc = problem(L, ip, "contains a NUL character", NULL);
    else if (!names && (unsendable = mcpp_http_header_problem(k->p, k->n, item->s.p, item->s.n)))
      rc = problem(L, ip, "%s", unsendable);
    else if (!((*out)[2 * *n] = dup_str(L, k)) || !((*out)[2 * *n + 1] = dup_str(L, &item->s)))
      rc = -1;
    else (*n)++;
    free(ip);
  }
  free(where);
  return rc;
}

/* `type` values and the transport each one means. */
static const char *transport_of(const jstr *t) {
  static const char *const map[][2] = {{"stdio", "stdio"},
                                       {"http", "streamable-http"},
                                       {"streamable-http", "streamable-http"},
                                       {"streamableHttp", "streamable-http"},
                                       {"sse", "sse"}};
  for (size_t i = 0; i < sizeof map / sizeof map[0]; i++)
    if (strlen(map[i][0]) == t->n && memcmp(map[i][0], t->p, t->n) == 0) return map[i][1];
  return NULL;
}

static int entry(load *L, const char *at, const jstr *name, const jval *e,
                 mcpp_config_server *s) {
  if (e->type != J_OBJ) return problem(L, at, "must be an object, got %s", kind(e));
  if (has_nul(name)) return problem(L, at, "contains a NUL character", NULL);
  jval *type = get(e, "type");
  const char *transport = NULL;
  if (type && type->type != J_NULL) {
    if (type->type == J_STR) transport = transport_of(&type->s);
    if (!transport) {
      mcpp__text shown = {0};
      if (type->type == J_STR) put_quoted(&shown, type->s.p, type->s.n);
      else mcpp__text_puts(&shown, kind(type));
      char *where = child(L, at, "type", 4, 0);
      char *text = mcpp__text_take(&shown);
      if (where && text)
        problem(L, where, "unknown transport %s (expected stdio, http or sse)", text);
      else L->oom = 1;
      free(where);
      free(text);
      return -1;
    }
  } else if (get(e, "command")) {
    transport = "stdio";
  } else if (get(e, "url")) {
    transport = "streamable-http";
  } else {
    return problem(L, at, "needs \"command\" (stdio) or \"url\" (HTTP)", NULL);
  }
  jval *disabled = get(e, "disabled");
  if (disabled && disabled->type != J_NULL && disabled->type != J_TRUE &&
      disabled->type != J_FALSE) {
    char *where = child(L, at, "disabled", 8, 0);
    if (where) problem(L, where, "must be a boolean, got %s", kind(disabled));
    free(where);
    return -1;
  }
  s->transport = transport;
  s->disabled = disabled && disabled->type == J_TRUE;
  if (!(s->name = dup_str(L, name)) || !(s->json_path = strdup(at))) {
    L->oom = 1;
    return -1;
  }
  if (strcmp(transport, "stdio") == 0)
    return field_string(L, e, at, "command", 1, &s->command) < 0 ||
                   field_strings(L, e, at, "args", &s->args, &s->nargs) < 0 ||
                   field_table(L, e, at, "env", 1, &s->env, &s->nenv) < 0 ||
                   field_string(L, e, at, "cwd", 0, &s->cwd) < 0
               ? -1
               : 0;
  if (field_string(L, e, at, "url", 1, &s->url) < 0) return -1;
  mcpp_http_url url;
  const char *refused = mcpp_http_url_parse(s->url, strlen(s->url), &url);
  if (refused) {
    char *where = child(L, at, "url", 3, 0);
    if (where) problem(L, where, "%s", refused);
    free(where);
    return -1;
  }
  return field_table(L, e, at, "headers", 0, &s->headers, &s->nheaders);
}

static void free_list(char **l, size_t n) {
  for (size_t i = 0; l && i < n; i++) free(l[i]);
  free(l);
}

void mcpp_config_server_free(mcpp_config_server *s) {
  if (!s) return;
  free(s->name);
  free(s->json_path);
  free(s->command);
  free_list(s->args, s->nargs);
  free_list(s->env, 2 * s->nenv);
  free(s->cwd);
  free(s->url);
  free_list(s->headers, 2 * s->nheaders);
  memset(s, 0, sizeof *s);
}

void mcpp_config_doc_free(mcpp_config_doc *doc) {
  if (!doc) return;
  for (size_t i = 0; i < doc->nservers; i++) mcpp_config_server_free(&doc->servers[i]);
  free(doc->servers);
  free(doc->json_path);
  free(doc->problem);
  memset(doc, 0, sizeof *doc);
}

/* Strict UTF-8 (no overlong forms, surrogates or code points past U+10FFFF),
 * as Python's decoder and TextDecoder({fatal: true}) take it. */
static int valid_utf8(const unsigned char *t, size_t n) {
  size_t i = 0;
  while (i < n) {
    unsigned c = t[i];
    if (c < 0x80) {
      i++;
      continue;
    }
    size_t k;
    unsigned lo = 0x80, hi = 0xBF;
    if (c >= 0xC2 && c <= 0xDF) k = 1;
    else if (c >= 0xE0 && c <= 0xEF) {
      k = 2;
      if (c == 0xE0) lo = 0xA0;
      if (c == 0xED) hi = 0x9F;
    } else if (c >= 0xF0 && c <= 0xF4) {
      k = 3;
      if (c == 0xF0) lo = 0x90;
      if (c == 0xF4) hi = 0x8F;
    } else {
      return 0;
    }
    if (n - i <= k) return 0;
    if (t[i + 1] < lo || t[i + 1] > hi) return 0;
    for (size_t j = 2; j <= k; j++)
      if ((t[i + j] & 0xC0) != 0x80) return 0;
    i += k + 1;
  }
  return 1;
}

static int add_table(load *L, const char *where, const jval *table) {
  if (table->type != J_OBJ) return problem(L, where, "must be an object, got %s", kind(table));
  mcpp_config_doc *d = L->doc;
  mcpp_config_server *more = realloc(d->servers, (d->nservers + table->n + 1) * sizeof *more);
  if (!more) {
    L->oom = 1;
    return -1;
  }
  d->servers = more;
  for (size_t i = 0; i < table->n; i++) {
    if (repeated(table, i)) continue;
    char *at = child(L, where, table->keys[i].p, table->keys[i].n, 0);
    if (!at) return -1;
    mcpp_config_server *s = &d->servers[d->nservers++];
    memset(s, 0, sizeof *s);
    int rc = entry(L, at, &table->keys[i], last_of(table, i), s);
    free(at);
    if (rc < 0) return -1;
  }
  return 0;
}

int mcpp_config_parse(const char *text, size_t len, int require_servers, const char *project,
                      mcpp_config_doc *doc) {
  load L = {doc, 0};
  memset(doc, 0, sizeof *doc);
  char cwd[4096];
  size_t cwd_len = sizeof cwd;
  if (!project) project = uv_cwd(cwd, &cwd_len) == 0 ? cwd : "";
  if (!valid_utf8((const unsigned char *)text, len)) {
    problem(&L, NULL, "not UTF-8 text", NULL);
    return L.oom ? MCPP_ERR_NOMEM : 0;
  }
  char *plain = mcpp__config_plain(&text, &len, NULL);
  if (!plain) return MCPP_ERR_NOMEM;
  scan s = {(const unsigned char *)plain, len, 0, 0, 0, 0};
  jval *root = parse_json(&s, 1);
  if (s.oom) {
    free(plain);
    return MCPP_ERR_NOMEM;
  }
  if (s.failed) {
    size_t line_start = 0, line = 1;
    for (size_t i = 0; i < s.bad; i++)
      if (text[i] == '\n') {
        line++;
        line_start = i + 1;
      }
    mcpp__text b = {0};
    mcpp__text_printf(&b, "invalid JSON at line %zu column %zu", line,
                      code_points(text, line_start, s.bad) + 1);
    char *msg = mcpp__text_take(&b);
    if (msg) problem(&L, NULL, "%s", msg);
    free(msg);
    free(plain);
    return msg && !L.oom ? 0 : MCPP_ERR_NOMEM;
  }
  free(plain);
  if (root->type != J_OBJ) {
    problem(&L, "$", "must be an object, got %s", kind(root));
    jfree(root);
    return L.oom ? MCPP_ERR_NOMEM : 0;
  }
  const char *where[3] = {0};
  const jval *tables[3] = {0};
  size_t n = 0;
  char *local_at = NULL;
  if ((tables[n] = get(root, "mcpServers"))) where[n++] = "$.mcpServers";
  if ((tables[n] = get(root, "servers"))) where[n++] = "$.servers";
  /* VS Code's settings.json. */
  if (n == 0 && (tables[n] = get(get(root, "mcp"), "servers"))) where[n++] = "$.mcp.servers";
  /* Claude Code's "local" scope: ~/.claude.json, per project folder. */
  const jval *local = get(get(root, "projects"), project);
  if ((tables[n] = get(local, "mcpServers"))) {
    char *p = child(&L, "$.projects", project, strlen(project), 0);
    local_at = p ? child(&L, p, "mcpServers", 10, 0) : NULL;
    free(p);
    where[n++] = local_at;
  }
  if (n == 0 && require_servers)
    problem(&L, "$", "has no \"mcpServers\" or \"servers\" object", NULL);
  for (size_t i = 0; i < n && !L.oom && where[i]; i++)
    if (add_table(&L, where[i], tables[i]) < 0) break;
  free(local_at);
  jfree(root);
  if (L.oom) {
    mcpp_config_doc_free(doc);
    return MCPP_ERR_NOMEM;
  }
  if (doc->problem) {
    /* A file that cannot be used has no servers to show. */
    for (size_t i = 0; i < doc->nservers; i++) mcpp_config_server_free(&doc->servers[i]);
    free(doc->servers);
    doc->servers = NULL;
    doc->nservers = 0;
  }
  return 0;
}
