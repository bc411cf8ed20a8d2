/* `--config FILE --wrap|--unwrap`: one client config rewritten so its stdio
 * servers run behind `mcpping wrap --name ENTRY --`, or no longer do. The
 * output is JSON indented by two spaces, byte for byte what Python's
 * json.dumps(indent=2, ensure_ascii=False) and JavaScript's
 * JSON.stringify(doc, null, 2) print for the same document. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "app/config_jsonc.h"
#include "app/text.h"
#include "mcpping.h"

typedef mcpp__text sbuf;
#define put mcpp__text_put
#define puts_ mcpp__text_puts
#define put_string mcpp__text_json_string

static void indent(sbuf *b, int depth) {
  for (int i = 0; i < depth; i++) put(b, "  ", 2);
}

static void put_number(sbuf *b, double d) {
  char num[32];
  /* Integers as integers (the only numbers client configs hold); others at
   * the shortest precision that reads back the same. */
  if (d == floor(d) && fabs(d) < 1e15) {
    snprintf(num, sizeof num, "%.0f", d);
  } else {
    for (int prec = 15; prec <= 17; prec++) {
      snprintf(num, sizeof num, "%.*g", prec, d);
      if (strtod(num, NULL) == d) break;
    }
  }
  puts_(b, num);
}

static void put_value(sbuf *b, const cJSON *v, int depth) {
  if (cJSON_IsObject(v) || cJSON_IsArray(v)) {
    int obj = cJSON_IsObject(v);
    if (!v->child) {
      puts_(b, obj ? "{}" : "[]");
      return;
    }
    puts_(b, obj ? "{\n" : "[\n");
    for (const cJSON *c = v->child; c; c = c->next) {
      indent(b, depth + 1);
      if (obj) {
        put_string(b, c->string);
        puts_(b, ": ");
      }
      put_value(b, c, depth + 1);
      puts_(b, c->next ? ",\n" : "\n");
    }
    indent(b, depth);
    puts_(b, obj ? "}" : "]");
  } else if (cJSON_IsString(v)) {
    put_string(b, v->valuestring);
  } else if (cJSON_IsNumber(v)) {
    put_number(b, v->valuedouble);
  } else if (cJSON_IsTrue(v)) {
    puts_(b, "true");
  } else if (cJSON_IsFalse(v)) {
    puts_(b, "false");
  } else {
    puts_(b, "null");
  }
}

static const char *base_name(const char *p) {
  const char *s = strrchr(p, '/');
  const char *bs = strrchr(p, '\\');
  if (bs && (!s || bs > s)) s = bs;
  return s ? s + 1 : p;
}

/* A program that is mcpping: its console script, or Node's cli.js. */
static int names_mcpping(const char *p) {
  const char *n = base_name(p);
  return !strcmp(n, "mcpping") || !strcmp(n, "mcpping.exe") || !strcmp(n, "cli.js");
}

static const char *str_at(const cJSON *args, int i) {
  const cJSON *a = cJSON_GetArrayItem(args, i);
  return cJSON_IsString(a) ? a->valuestring : NULL;
}

/* The index of "wrap" if the entry already runs through mcpping wrap
 * (`mcpping wrap ... -- CMD`, `python -m mcpping wrap`, `node cli.js wrap`),
 * else -1. */
static int wrap_index(const cJSON *entry) {
  const cJSON *cmd = cJSON_GetObjectItemCaseSensitive(entry, "command");
  const cJSON *args = cJSON_GetObjectItemCaseSensitive(entry, "args");
  if (!cJSON_IsString(cmd) || !cJSON_IsArray(args)) return -1;
  int n = cJSON_GetArraySize(args);
  for (int k = 0; k < n; k++) {
    const char *a = str_at(args, k);
    if (!a || strcmp(a, "wrap")) continue;
    int ours = k == 0 ? names_mcpping(cmd->valuestring)
                      : (str_at(args, k - 1) && names_mcpping(str_at(args, k - 1)));
    if (!ours) return -1;
    for (int j = k + 1; j < n; j++)
      if (str_at(args, j) && !strcmp(str_at(args, j), "--")) return k;
    return -1;
  }
  return -1;
}

static int add_str(cJSON *arr, const char *s) {
  cJSON *v = cJSON_CreateString(s);
  if (!v) return MCPP_ERR_NOMEM;
  cJSON_AddItemToArray(arr, v);
  return 0;
}

static int set_item(cJSON *entry, const char *key, cJSON *value) {
  if (!value) return MCPP_ERR_NOMEM;
  if (cJSON_GetObjectItemCaseSensitive(entry, key))
    return cJSON_ReplaceItemInObjectCaseSensitive(entry, key, value) ? 0 : MCPP_ERR_NOMEM;
  return cJSON_AddItemToObject(entry, key, value) ? 0 : MCPP_ERR_NOMEM;
}

static int wrap_entry(cJSON *entry, const char *name, const char *const *launcher,
                      size_t nlauncher) {
  if (wrap_index(entry) >= 0) return 0;
  const cJSON *cmd = cJSON_GetObjectItemCaseSensitive(entry, "command");
  const cJSON *old = cJSON_GetObjectItemCaseSensitive(entry, "args");
  cJSON *args = cJSON_CreateArray();
  if (!args) return MCPP_ERR_NOMEM;
  int rc = 0;
  for (size_t i = 1; i < nlauncher && !rc; i++) rc = add_str(args, launcher[i]);
  const char *fixed[] = {"wrap", "--name", name, "--", cmd->valuestring};
  for (size_t i = 0; i < 5 && !rc; i++) rc = add_str(args, fixed[i]);
  if (cJSON_IsArray(old)) {
    for (const cJSON *a = old->child; a && !rc; a = a->next) {
      cJSON *dup = cJSON_Duplicate(a, 1);
      if (!dup) rc = MCPP_ERR_NOMEM;
      else cJSON_AddItemToArray(args, dup);
    }
  }
  if (rc) {
    cJSON_Delete(args);
    return rc;
  }
  /* "args" keeps its place; a new one goes after "command". */
  if (cJSON_IsArray(old)) rc = set_item(entry, "args", args);
  else {
    cJSON *c = cJSON_GetObjectItemCaseSensitive(entry, "command");
    args->string = strdup("args");
    if (!args->string) {
      cJSON_Delete(args);
      return MCPP_ERR_NOMEM;
    }
    args->prev = c;
    args->next = c->next;
    if (c->next) c->next->prev = args;
    else entry->child->prev = args;
    c->next = args;
  }
  if (rc) return rc;
  rc = set_item(entry, "command", cJSON_CreateString(launcher[0]));
  return rc ? rc : 1;
}

static int unwrap_entry(cJSON *entry) {
  int k = wrap_index(entry);
  if (k < 0) return 0;
  cJSON *args = cJSON_GetObjectItemCaseSensitive(entry, "args");
  int n = cJSON_GetArraySize(args), dash = k + 1;
  while (strcmp(str_at(args, dash) ? str_at(args, dash) : "", "--")) dash++;
  if (dash + 1 >= n || !str_at(args, dash + 1)) return 0;
  int rc = set_item(entry, "command", cJSON_CreateString(str_at(args, dash + 1)));
  if (rc) return rc;
  /* No arguments: no "args" (as most entries without any are written). */
  if (dash + 2 >= n) {
    cJSON_DeleteItemFromObjectCaseSensitive(entry, "args");
    return 1;
  }
  for (int i = 0; i <= dash + 1; i++) cJSON_DeleteItemFromArray(args, 0);
  return 1;
}

/* As the loader decides: "type": "stdio", or no type and a "command". */
static int is_stdio(const cJSON *e) {
  if (!cJSON_IsObject(e) || !cJSON_IsString(cJSON_GetObjectItemCaseSensitive(e, "command")))
    return 0;
  const cJSON *type = cJSON_GetObjectItemCaseSensitive(e, "type");
  return !type || (cJSON_IsString(type) && !strcmp(type->valuestring, "stdio"));
}

/* The server tables, where the config loader finds them. */
static int tables(cJSON *doc, cJSON **out) {
  int n = 0;
  const char *keys[] = {"mcpServers", "servers"};
  for (int i = 0; i < 2; i++) {
    cJSON *t = cJSON_GetObjectItemCaseSensitive(doc, keys[i]);
    if (cJSON_IsObject(t)) out[n++] = t;
  }
  cJSON *mcp = cJSON_GetObjectItemCaseSensitive(doc, "mcp");
  cJSON *vs = mcp ? cJSON_GetObjectItemCaseSensitive(mcp, "servers") : NULL;
  if (n == 0 && cJSON_IsObject(vs)) out[n++] = vs; /* VS Code settings.json */
  return n;
}

int mcpp_config_rewrite(const char *text, size_t len, int unwrap,
                        const char *const *launcher, size_t nlauncher,
                        char **out, size_t *out_len, int *changed,
                        int *had_comments) {
  if (!text || !out || !changed || (!unwrap && (!launcher || nlauncher == 0 || !launcher[0])))
    return MCPP_ERR_INVALID_ARGUMENT;
  *out = NULL;
  *changed = 0;
  char *plain = mcpp__config_plain(&text, &len, had_comments);
  if (!plain) return MCPP_ERR_NOMEM;
  cJSON *doc = cJSON_ParseWithLength(plain, len);
  free(plain);
  if (!cJSON_IsObject(doc)) {
    cJSON_Delete(doc);
    return MCPP_ERR_INVALID_ARGUMENT;
  }
  cJSON *t[2];
  int nt = tables(doc, t), rc = 0;
  for (int i = 0; i < nt && rc >= 0; i++) {
    for (cJSON *e = t[i]->child; e && rc >= 0; e = e->next) {
      if (!is_stdio(e)) continue;
      rc = unwrap ? unwrap_entry(e) : wrap_entry(e, e->string, launcher, nlauncher);
      if (rc > 0) *changed += 1;
    }
  }
  sbuf b = {0};
  if (rc >= 0) {
    put_value(&b, doc, 0);
    put(&b, "\n", 1);
    if (b.oom) rc = MCPP_ERR_NOMEM;
  }
  cJSON_Delete(doc);
  if (rc < 0) {
    free(b.p);
    return rc;
  }
  *out = b.p;
  if (out_len) *out_len = b.len;
  return 0;
}

void mcpp_config_free(char *p) { free(p); }
