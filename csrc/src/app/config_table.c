/* `mcpping --config`'s output, every byte of it: the files read, the header,
 * one aligned row per server (or one --json object), the warnings, the
 * summary and the exit status (docs/cli.md). The bindings check the servers
 * and hand the outcomes here. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "app/text.h"
#include "mcpping.h"

enum { COLUMNS = 6 };
static const char *const HEAD[COLUMNS] = {"NAME",  "TRANSPORT", "PROTOCOL", "RTT MIN/AVG/MAX",
                                          "STATUS", "REASON"};

static const char *plural(size_t n) { return n == 1 ? "" : "s"; }

char *mcpp_config_format_files(const char *const *files, const size_t *servers, size_t n,
                               int json) {
  mcpp__text t = {0};
  for (size_t i = 0; i < n; i++) {
    if (json) {
      mcpp__text_puts(&t, "{\"event\":\"config\",\"file\":");
      mcpp__text_json_string(&t, files[i]);
      mcpp__text_printf(&t, ",\"servers\":%zu}\n", servers[i]);
    } else {
      mcpp__text_printf(&t, "config %s: %zu server%s\n", files[i], servers[i], plural(servers[i]));
    }
  }
  return mcpp__text_take(&t);
}

char *mcpp_config_format_start(size_t servers, int count, double interval_s,
                               double timeout_s, double deadline_s, int json) {
  mcpp__text t = {0};
  if (!json)
    mcpp__text_printf(&t,
                      "MCPPING %zu server%s: %d ping%s each, interval %.1f s, timeout %.1f s, "
                      "deadline %.1f s\n",
                      servers, plural(servers), count, plural((size_t)count), interval_s,
                      timeout_s, deadline_s);
  return mcpp__text_take(&t);
}

static int is(const char *a, const char *b) { return a && !strcmp(a, b); }

static int passing(const mcpp_config_row *r) {
  return is(r->status, "ok") || is(r->status, "unsupported") || is(r->status, "skipped");
}

/* Never started, never connected, or no handshake: exit status 3. */
static int not_up(const mcpp_config_row *r) {
  return is(r->status, "spawn failed") || is(r->status, "handshake failed") ||
         is(r->status, "not started") || (is(r->status, "timeout") && !r->protocol_version);
}

/* Python's round(x, 1) and Math.round(x * 10) / 10 agree on loss figures. */
static double round_to(double x, double scale) { return round(x * scale) / scale; }

static void loss_text(mcpp__text *t, int sent, int received) {
  double one = round_to((double)(sent - received) / sent * 100, 10);
  if (one == floor(one)) mcpp__text_printf(t, "%.0f%%", one);
  else mcpp__text_printf(t, "%.1f%%", one);
}

/* min, avg, max in the order the pongs came (a plain running sum). */
static void triple(const mcpp_config_row *r, double out[3]) {
  double total = 0;
  out[0] = out[2] = r->rtts_ms[0];
  for (size_t i = 0; i < r->n_rtts; i++) {
    total += r->rtts_ms[i];
    if (r->rtts_ms[i] < out[0]) out[0] = r->rtts_ms[i];
    if (r->rtts_ms[i] > out[2]) out[2] = r->rtts_ms[i];
  }
  out[1] = total / (double)r->n_rtts;
}

/* The reason, and the server's last words when it had any. */
static void reason_text(mcpp__text *t, const mcpp_config_row *r) {
  if (r->reason) mcpp__text_puts(t, r->reason);
  if (r->last_stderr && *r->last_stderr) {
    mcpp__text_puts(t, r->reason ? "; stderr: " : "stderr: ");
    mcpp__text_puts(t, r->last_stderr);
  }
}

static int has_reason(const mcpp_config_row *r) {
  return r->reason || (r->last_stderr && *r->last_stderr);
}

/* A cell as shown: control characters as '?' so nothing breaks the table. */
static char *cell(mcpp__text *t) {
  char *s = mcpp__text_take(t);
  for (char *p = s; p && *p; p++)
    if ((unsigned char)*p < 0x20 || *p == 0x7f) *p = '?';
  return s;
}

/* Width in code points, as the table's readers count. */
static size_t width(const char *s) {
  size_t n = 0;
  for (; *s; s++) n += ((unsigned char)*s & 0xC0) != 0x80;
  return n;
}

static int cells(const mcpp_config_row *r, char *out[COLUMNS]) {
  mcpp__text t[COLUMNS] = {{0}};
  mcpp__text_puts(&t[0], r->name ? r->name : "");
  mcpp__text_puts(&t[1], r->transport ? r->transport : "");
  mcpp__text_puts(&t[2], r->protocol_version ? r->protocol_version : "-");
  if (r->n_rtts) {
    double m[3];
    triple(r, m);
    mcpp__text_printf(&t[3], "%.3f/%.3f/%.3f ms", m[0], m[1], m[2]);
  } else {
    mcpp__text_puts(&t[3], "-");
  }
  if (is(r->status, "loss") && r->sent) {
    mcpp__text_puts(&t[4], "loss ");
    loss_text(&t[4], r->sent, r->received);
  } else {
    mcpp__text_puts(&t[4], r->status ? r->status : "");
  }
  if (has_reason(r)) reason_text(&t[5], r);
  else mcpp__text_puts(&t[5], "-");
  int ok = 1;
  for (int i = 0; i < COLUMNS; i++) ok &= (out[i] = cell(&t[i])) != NULL;
  return ok ? 0 : -1;
}

static void json_row(mcpp__text *t, const mcpp_config_row *r) {
  mcpp__text_puts(t, "{\"event\":\"server\",\"name\":");
  mcpp__text_json_string(t, r->name);
  mcpp__text_puts(t, ",\"transport\":");
  mcpp__text_json_string(t, r->transport);
  mcpp__text_puts(t, ",\"protocol_version\":");
  mcpp__text_json_string(t, r->protocol_version);
  mcpp__text_puts(t, ",\"status\":");
  mcpp__text_json_string(t, r->status);
  mcpp__text_puts(t, ",\"reason\":");
  if (has_reason(r)) {
    mcpp__text reason = {0};
    reason_text(&reason, r);
    char *s = mcpp__text_take(&reason);
    if (!s) t->oom = 1;
    mcpp__text_json_string(t, s ? s : "");
    free(s);
  } else {
    mcpp__text_puts(t, "null");
  }
  mcpp__text_printf(t, ",\"sent\":%d,\"received\":%d,\"loss_pct\":", r->sent, r->received);
  if (r->sent) mcpp__text_py_float(t, round_to((double)(r->sent - r->received) / r->sent * 100, 10));
  else mcpp__text_puts(t, "null");
  mcpp__text_puts(t, ",\"rtt_ms\":");
  if (r->n_rtts) {
    double m[3];
    triple(r, m);
    const char *k[3] = {"min", "avg", "max"};
    for (int i = 0; i < 3; i++) {
      mcpp__text_printf(t, "%s\"%s\":", i ? "," : "{", k[i]);
      mcpp__text_py_float(t, round_to(m[i], 1000));
    }
    mcpp__text_puts(t, "}");
  } else {
    mcpp__text_puts(t, "{\"min\":null,\"avg\":null,\"max\":null}");
  }
  mcpp__text_printf(t, ",\"non_json_lines\":%lu,\"file\":", r->non_json_lines);
  mcpp__text_json_string(t, r->file);
  mcpp__text_puts(t, ",\"json_path\":");
  mcpp__text_json_string(t, r->json_path);
  mcpp__text_puts(t, "}\n");
}

static void warnings(mcpp__text *t, const mcpp_config_row *rows, size_t n) {
  for (size_t i = 0; i < n; i++) {
    if (!rows[i].non_json_lines) continue;
    mcpp__text name = {0};
    mcpp__text_puts(&name, rows[i].name ? rows[i].name : "");
    char *shown = cell(&name);
    mcpp__text_printf(t,
                      "warning: %s printed %lu line%s on stdout that %s not JSON-RPC (a client may "
                      "fail on %s)\n",
                      shown ? shown : "", rows[i].non_json_lines,
                      plural(rows[i].non_json_lines), rows[i].non_json_lines == 1 ? "is" : "are",
                      rows[i].non_json_lines == 1 ? "it" : "them");
    if (!shown) t->oom = 1;
    free(shown);
  }
}

char *mcpp_config_format_results(const mcpp_config_row *rows, size_t n, double time_ms,
                                 int json, int quiet, int *exit_status) {
  size_t ok = 0, unsupported = 0, skipped = 0, failed = 0;
  int down = 0;
  for (size_t i = 0; i < n; i++) {
    const mcpp_config_row *r = &rows[i];
    if (!passing(r)) failed++;
    else if (is(r->status, "ok")) ok++;
    else if (is(r->status, "unsupported")) unsupported++;
    else skipped++;
    down |= not_up(r);
  }
  if (exit_status) *exit_status = down ? 3 : failed ? 1 : 0;
  long ms = lround(time_ms);
  mcpp__text t = {0};
  if (json) {
    for (size_t i = 0; i < n; i++) json_row(&t, &rows[i]);
    mcpp__text_printf(&t,
                      "{\"event\":\"summary\",\"servers\":%zu,\"ok\":%zu,\"unsupported\":%zu,"
                      "\"skipped\":%zu,\"failed\":%zu,\"time_ms\":%ld}\n",
                      n, ok, unsupported, skipped, failed, ms);
    return mcpp__text_take(&t);
  }
  if (n && !quiet) {
    char *(*table)[COLUMNS] = calloc(n + 1, sizeof *table);
    if (!table) return NULL;
    size_t w[COLUMNS] = {0};
    int bad = 0;
    for (size_t i = 0; i <= n; i++) {
      if (i == 0)
        for (int c = 0; c < COLUMNS; c++) table[0][c] = strdup(HEAD[c]);
      else if (cells(&rows[i - 1], table[i]) < 0)
        bad = 1;
      for (int c = 0; c < COLUMNS; c++) {
        if (!table[i][c]) {
          bad = 1;
          continue;
        }
        size_t cw = width(table[i][c]);
        if (cw > w[c]) w[c] = cw;
      }
    }
    mcpp__text_puts(&t, "\n");
    for (size_t i = 0; i <= n && !bad; i++) {
      for (int c = 0; c < COLUMNS; c++) {
        mcpp__text_puts(&t, table[i][c]);
        if (c == COLUMNS - 1) break;
        size_t pad = w[c] - width(table[i][c]) + 2;
        for (size_t k = 0; k < pad; k++) mcpp__text_put(&t, " ", 1);
      }
      mcpp__text_puts(&t, "\n");
    }
    for (size_t i = 0; i <= n; i++)
      for (int c = 0; c < COLUMNS; c++) free(table[i][c]);
    free(table);
    if (bad) t.oom = 1;
  }
  mcpp__text_puts(&t, "\n");
  warnings(&t, rows, n);
  mcpp__text_printf(&t,
                    "--- mcpping config statistics ---\n%zu server%s, %zu ok, %zu unsupported, "
                    "%zu skipped, %zu failed, time %ld ms\n",
                    n, plural(n), ok, unsupported, skipped, failed, ms);
  return mcpp__text_take(&t);
}

char *mcpp_config_format_refusal(const char *file, const mcpp_config_row *row) {
  mcpp__text t = {0};
  /* Alive (ok, or no ping to check it with) or not started for an unset
   * ${...} that the client would supply: no reason to refuse the write. */
  if (is(row->status, "ok") || is(row->status, "unsupported") ||
      is(row->status, "not started"))
    return mcpp__text_take(&t);
  mcpp__text name = {0};
  mcpp__text_puts(&name, row->name ? row->name : "");
  char *shown = cell(&name);
  mcpp__text_printf(&t, "mcpping: %s: not written: server '%s' would not start wrapped (%s",
                    file ? file : "", shown ? shown : "", row->status ? row->status : "");
  free(shown);
  if (has_reason(row)) {
    mcpp__text why = {0};
    mcpp__text_puts(&t, ": ");
    reason_text(&why, row);
    char *w = cell(&why);
    mcpp__text_puts(&t, w ? w : "");
    free(w);
  }
  mcpp__text_puts(&t, ")\n");
  return mcpp__text_take(&t);
}

