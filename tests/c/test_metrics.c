/* metrics.c: the families' table and the Prometheus text it renders for
 * any number of connections, checked by a small exposition-format parser
 * (tests/python/test_metrics_table.py also feeds it to prometheus_client's). */
#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mcpping.h"
#include "task.h"

/* Reads one label value at *p (after the opening quote) into out,
 * unescaping; returns 0, or -1 on a bad escape or a missing quote. */
static int read_label_value(const char **p, char *out, size_t cap) {
  size_t n = 0;
  const char *s = *p;
  for (; *s && *s != '"'; s++) {
    char c = *s;
    if (c == '\n') return -1;
    if (c == '\\') {
      s++;
      if (*s == 'n') c = '\n';
      else if (*s == '\\' || *s == '"') c = *s;
      else return -1;
    }
    if (n + 1 < cap) out[n++] = c;
  }
  if (*s != '"') return -1;
  out[n] = '\0';
  *p = s + 1;
  return 0;
}

typedef struct check {
  int families, samples;
  char family[128];
  char kind[16];
  char last_label[8][64];  /* the label values of a sample that was read */
  char last_key[8][64];
  int labels;
} check;

static int is_name_char(char c, int first) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' ||
         c == ':' || (!first && c >= '0' && c <= '9');
}

/* The sample's name belongs to the family last typed: itself, or for a
 * histogram its _bucket, _sum or _count. */
static int belongs(const check *c, const char *name, size_t n) {
  size_t fl = strlen(c->family);
  if (n == fl && strncmp(name, c->family, n) == 0)
    return strcmp(c->kind, "histogram") != 0;
  if (strcmp(c->kind, "histogram") != 0 || n <= fl ||
      strncmp(name, c->family, fl) != 0)
    return 0;
  const char *suffix = name + fl;
  size_t sl = n - fl;
  return (sl == 7 && !strncmp(suffix, "_bucket", 7)) ||
         (sl == 4 && !strncmp(suffix, "_sum", 4)) ||
         (sl == 6 && !strncmp(suffix, "_count", 6));
}

/* Parses the text exposition format 0.0.4 line by line: HELP before TYPE,
 * each family once, every sample in the family just typed, labels well
 * formed and escaped, values numbers. Returns the failing line's number,
 * or 0. */
static int parse_exposition(const char *text, check *c) {
  memset(c, 0, sizeof *c);
  int line = 0;
  char help_of[128] = "";
  while (*text) {
    line++;
    const char *end = strchr(text, '\n');
    if (!end) return line; /* every line ends with a newline */
    if (strncmp(text, "# HELP ", 7) == 0) {
      const char *name = text + 7, *sp = memchr(name, ' ', (size_t)(end - name));
      if (!sp || (size_t)(sp - name) >= sizeof help_of) return line;
      memcpy(help_of, name, (size_t)(sp - name));
      help_of[sp - name] = '\0';
      for (const char *h = sp + 1; h < end; h++)
        if (*h == '\\' && h[1] != '\\' && h[1] != 'n') return line;
        else if (*h == '\\') h++;
    } else if (strncmp(text, "# TYPE ", 7) == 0) {
      const char *name = text + 7, *sp = memchr(name, ' ', (size_t)(end - name));
      if (!sp || (size_t)(sp - name) >= sizeof c->family) return line;
      if (strncmp(help_of, name, (size_t)(sp - name)) != 0) return line;
      memcpy(c->family, name, (size_t)(sp - name));
      c->family[sp - name] = '\0';
      size_t kl = (size_t)(end - sp - 1);
      if (kl >= sizeof c->kind) return line;
      memcpy(c->kind, sp + 1, kl);
      c->kind[kl] = '\0';
      if (strcmp(c->kind, "counter") && strcmp(c->kind, "gauge") &&
          strcmp(c->kind, "histogram"))
        return line;
      c->families++;
    } else {
      const char *p = text;
      if (!is_name_char(*p, 1)) return line;
      while (is_name_char(*p, 0)) p++;
      if (!c->family[0] || !belongs(c, text, (size_t)(p - text))) return line;
      c->labels = 0;
      if (*p == '{') {
        p++;
        while (*p != '}') {
          const char *k = p;
          if (!is_name_char(*p, 1)) return line;
          while (is_name_char(*p, 0)) p++;
          if (p[0] != '=' || p[1] != '"' || c->labels == 8) return line;
          snprintf(c->last_key[c->labels], 64, "%.*s", (int)(p - k), k);
          p += 2;
          if (read_label_value(&p, c->last_label[c->labels], 64)) return line;
          c->labels++;
          if (*p == ',') p++;
          else if (*p != '}') return line;
        }
        p++;
      }
      if (*p != ' ') return line;
      char *num_end;
      const char *num = p + 1;
      if (strncmp(num, "+Inf", 4) && strncmp(num, "NaN", 3)) {
        strtod(num, &num_end);
        if (num_end != end || num_end == num) return line;
      }
      c->samples++;
    }
    text = end + 1;
  }
  return 0;
}

static char *render(const mcpp_metric_series *s, size_t n) {
  size_t need = mcpp_metrics_render(s, n, NULL, 0);
  char *text = malloc(need + 1);
  ASSERT(text != NULL);
  ASSERT_UINT_EQ(need, mcpp_metrics_render(s, n, text, need + 1));
  ASSERT_UINT_EQ(need, strlen(text));
  return text;
}

TEST(metric_table_names_kinds_labels_and_bounds) {
  int n = 0;
  while (mcpp_metric_family_at(n)) n++;
  ASSERT_EQ(n, MCPP_METRIC_COUNT);
  ASSERT(mcpp_metric_family_at(-1) == NULL);
  for (int i = 0; i < n; i++) {
    const mcpp_metric_family *f = mcpp_metric_family_at(i);
    ASSERT(strncmp(f->name, "mcpping_", 8) == 0);
    ASSERT(f->help[0] && f->field[0] && f->unit[0]);
    ASSERT(mcpp_metric_kind_name(f->kind) != NULL);
    /* A counter's name ends in _total, as OpenMetrics parsers expect. */
    size_t len = strlen(f->name);
    if (f->kind == MCPP_METRIC_COUNTER)
      ASSERT_STR_EQ(f->name + len - 6, "_total");
    for (int j = 0; j < i; j++)
      ASSERT(strcmp(f->name, mcpp_metric_family_at(j)->name) != 0);
  }
  /* The state label's values are the engine's state names. */
  const mcpp_metric_family *st = mcpp_metric_family_at(MCPP_METRIC_PEER_STATE);
  ASSERT_STR_EQ(st->label, "state");
  for (int s = 0; s < MCPP_METRIC_STATES; s++)
    ASSERT_STR_EQ(st->values[s], mcpp_state_name((mcpp_state)s));
  ASSERT(st->values[MCPP_METRIC_STATES] == NULL);
  ASSERT_STR_EQ(mcpp_metric_family_at(MCPP_METRIC_PING_RTT)->unit, "s");
  const double *b = mcpp_metric_rtt_bounds();
  for (int i = 0; i < MCPP_METRIC_RTT_BOUNDS; i++) {
    ASSERT(i == 0 || b[i] > b[i - 1]);
    /* The `le` text reads back as the bound itself. */
    ASSERT(strtod(mcpp_metric_rtt_bound_text(i), NULL) == b[i]);
    ASSERT_EQ(mcpp_metric_rtt_bucket(b[i]), i); /* a bound is inclusive */
  }
  ASSERT(mcpp_metric_rtt_bound_text(MCPP_METRIC_RTT_BOUNDS) == NULL);
  ASSERT_EQ(mcpp_metric_rtt_bucket(0), 0);
  ASSERT_EQ(mcpp_metric_rtt_bucket(10.5), MCPP_METRIC_RTT_BOUNDS);
  ASSERT_STR_EQ(mcpp_metric_series_labels()[0], "server");
}

TEST(metrics_render_parses_as_exposition_for_many_connections) {
  mcpp_metric_series s[3];
  memset(s, 0, sizeof s);
  s[0].server = "fs";
  s[0].peer = "filesystem";
  s[0].transport = "stdio";
  s[0].pings_sent = 7;
  s[0].rtt_buckets[0] = 2;
  s[0].rtt_buckets[5] = 3;
  s[0].rtt_buckets[MCPP_METRIC_RTT_BOUNDS] = 1;
  s[0].rtt_sum = 0.1 + 0.2; /* 0.30000000000000004: kept exactly */
  s[0].states[MCPP_STATE_ALIVE] = 1;
  s[1].server = "web";
  s[1].peer = "web";
  s[1].transport = "http";
  s[1].states[MCPP_STATE_STALE] = 1;
  s[2].peer = "no server label";
  s[2].transport = "custom";
  char *text = render(s, 3);
  check c;
  ASSERT_EQ(0, parse_exposition(text, &c));
  ASSERT_EQ(c.families, MCPP_METRIC_COUNT);
  /* Per series: 6 counters, 4 reasons, 18 buckets + _sum + _count, 4
   * states, in flight, 2 probe results. */
  ASSERT_EQ(c.samples, 3 * (6 + 4 + 20 + 4 + 1 + 2));
  ASSERT(strstr(text, "# HELP mcpping_pings_sent_total Pings sent to the "
                      "peer, keepalive and manual.\n"
                      "# TYPE mcpping_pings_sent_total counter\n"
                      "mcpping_pings_sent_total{server=\"fs\",peer="
                      "\"filesystem\",transport=\"stdio\"} 7\n"));
  ASSERT(strstr(text, "mcpping_peer_state{server=\"web\",peer=\"web\","
                      "transport=\"http\",state=\"stale\"} 1\n"));
  ASSERT(strstr(text, "mcpping_in_flight_requests{peer=\"no server label\","
                      "transport=\"custom\"} 0\n"));
  ASSERT(strstr(text, "mcpping_ping_rtt_seconds_sum{server=\"fs\",peer="
                      "\"filesystem\",transport=\"stdio\"} "
                      "0.30000000000000004\n"));
  free(text);
}

TEST(metrics_render_histogram_buckets_are_cumulative_with_inf_and_count) {
  mcpp_metric_series s;
  memset(&s, 0, sizeof s);
  s.peer = "p";
  s.transport = "stdio";
  for (int i = 0; i <= MCPP_METRIC_RTT_BOUNDS; i++) s.rtt_buckets[i] = 1;
  s.rtt_sum = 2.5;
  char *text = render(&s, 1);
  char want[160];
  for (int i = 0; i < MCPP_METRIC_RTT_BOUNDS; i++) {
    snprintf(want, sizeof want,
             "mcpping_ping_rtt_seconds_bucket{peer=\"p\",transport=\"stdio\","
             "le=\"%s\"} %d\n",
             mcpp_metric_rtt_bound_text(i), i + 1);
    ASSERT(strstr(text, want) != NULL);
  }
  ASSERT(strstr(text, "mcpping_ping_rtt_seconds_bucket{peer=\"p\",transport="
                      "\"stdio\",le=\"+Inf\"} 18\n"
                      "mcpping_ping_rtt_seconds_count{peer=\"p\",transport="
                      "\"stdio\"} 18\n"
                      "mcpping_ping_rtt_seconds_sum{peer=\"p\",transport="
                      "\"stdio\"} 2.5\n"));
  ASSERT(strstr(text, "le=\"5e-05\"} 1\n") && strstr(text, "le=\"1.0\"} 14\n"));
  free(text);
}

TEST(metrics_render_escapes_quotes_backslashes_and_newlines_in_labels) {
  mcpp_metric_series s;
  memset(&s, 0, sizeof s);
  s.server = "a\\b";
  s.peer = "say \"hi\"\nthen \\n";
  s.transport = "stdio";
  char *text = render(&s, 1);
  ASSERT(strstr(text, "mcpping_stale_total{server=\"a\\\\b\",peer=\"say "
                      "\\\"hi\\\"\\nthen \\\\n\",transport=\"stdio\"} 0\n"));
  check c;
  ASSERT_EQ(0, parse_exposition(text, &c));
  /* The last sample read back: the escapes undone give the names given. */
  ASSERT_STR_EQ(c.last_key[0], "server");
  ASSERT_STR_EQ(c.last_label[0], "a\\b");
  ASSERT_STR_EQ(c.last_label[1], "say \"hi\"\nthen \\n");
  /* The checker refuses an unescaped quote or newline (it can fail). */
  ASSERT(parse_exposition("# HELP x h\n# TYPE x gauge\nx{a=\"b\"c\"} 1\n", &c));
  ASSERT(parse_exposition("# HELP x h\n# TYPE x gauge\nx{a=\"b\n\"} 1\n", &c));
  ASSERT(parse_exposition("# HELP x h\n# TYPE x counter\ny 1\n", &c));
  free(text);
}

TEST(metrics_render_sizes_like_snprintf_and_empty_fleet_has_families) {
  char *text = render(NULL, 0);
  check c;
  ASSERT_EQ(0, parse_exposition(text, &c));
  ASSERT_EQ(c.families, MCPP_METRIC_COUNT);
  ASSERT_EQ(c.samples, 0);
  size_t need = strlen(text);
  char small[16];
  ASSERT_UINT_EQ(need, mcpp_metrics_render(NULL, 0, small, sizeof small));
  ASSERT_UINT_EQ(strlen(small), sizeof small - 1);
  ASSERT(strncmp(small, text, sizeof small - 1) == 0);
  free(text);
}

static void observe(mcpp_metric_series *s, mcpp_event_type type,
                    mcpp_state state, int invalid, uint64_t ping_seq,
                    uint64_t rtt_us) {
  mcpp_event ev;
  memset(&ev, 0, sizeof ev);
  ev.type = type;
  ev.state = state;
  ev.invalid = invalid;
  ev.ping_seq = ping_seq;
  ev.rtt_us = rtt_us;
  mcpp_metric_series_observe(s, &ev);
}

TEST(metric_series_observe_counts_each_event_once_by_reason) {
  mcpp_metric_series s;
  memset(&s, 0, sizeof s);
  observe(&s, MCPP_EV_PING, MCPP_STATE_ALIVE, 0, 1, 0);
  observe(&s, MCPP_EV_PONG, MCPP_STATE_ALIVE, 0, 1, 300);      /* 0.3 ms */
  observe(&s, MCPP_EV_TIMEOUT, MCPP_STATE_SUSPECT, 0, 2, 0);
  observe(&s, MCPP_EV_TIMEOUT, MCPP_STATE_CLOSED, 0, 3, 0);    /* abandoned */
  observe(&s, MCPP_EV_PING_ERROR, MCPP_STATE_ALIVE, 0, 4, 0);
  observe(&s, MCPP_EV_PING_ERROR, MCPP_STATE_ALIVE, 1, 5, 0);
  observe(&s, MCPP_EV_UNSUPPORTED, MCPP_STATE_ALIVE, 0, 6, 0);
  observe(&s, MCPP_EV_UNSUPPORTED, MCPP_STATE_ALIVE, 0, 0, 0); /* no ping */
  observe(&s, MCPP_EV_PING_ANSWERED, MCPP_STATE_ALIVE, 0, 0, 0);
  observe(&s, MCPP_EV_STALE, MCPP_STATE_STALE, 0, 0, 0);
  observe(&s, MCPP_EV_PING_DEAF, MCPP_STATE_ALIVE, 0, 0, 0);
  observe(&s, MCPP_EV_RECONNECTED, MCPP_STATE_ALIVE, 0, 0, 0);
  ASSERT_UINT_EQ(s.pings_sent, 1);
  ASSERT_UINT_EQ(s.pongs_received, 1);
  ASSERT_UINT_EQ(s.rtt_buckets[3], 1); /* 0.0003 s: le 0.0005 */
  ASSERT(fabs(s.rtt_sum - 0.0003) < 1e-12);
  ASSERT_UINT_EQ(s.failures[0], 1);
  ASSERT_UINT_EQ(s.failures[1], 1);
  ASSERT_UINT_EQ(s.failures[2], 1);
  ASSERT_UINT_EQ(s.failures[3], 1);
  ASSERT_UINT_EQ(s.pings_answered, 1);
  ASSERT_UINT_EQ(s.stale, 1);
  ASSERT_UINT_EQ(s.ping_deaf, 1);
  ASSERT_UINT_EQ(s.reconnects, 1);
  /* The rule the bindings read as a table: what counts, and what not. */
  mcpp_event ev;
  memset(&ev, 0, sizeof ev);
  int value = -1;
  ev.type = MCPP_EV_TIMEOUT;
  ev.state = MCPP_STATE_CLOSED;
  ASSERT_EQ(mcpp_metric_event_figure(&ev, &value), -1);
  ev.state = MCPP_STATE_SUSPECT;
  ASSERT_EQ(mcpp_metric_event_figure(&ev, &value), MCPP_METRIC_PING_FAILURES);
  ASSERT_STR_EQ(mcpp_metric_family_at(MCPP_METRIC_PING_FAILURES)->values[value],
                "timeout");
  ev.type = MCPP_EV_PROBE_OK;
  ASSERT_EQ(mcpp_metric_event_figure(&ev, &value), MCPP_METRIC_PROBES);
  ASSERT_STR_EQ(mcpp_metric_family_at(MCPP_METRIC_PROBES)->values[value], "ok");
}

TEST(metric_series_observe_counts_probes_by_result_and_renders_result_labels) {
  mcpp_metric_series s;
  memset(&s, 0, sizeof s);
  s.peer = "p";
  s.transport = "stdio";
  s.states[MCPP_STATE_ALIVE] = 1;
  observe(&s, MCPP_EV_PROBE, MCPP_STATE_ALIVE, 0, 1, 0); /* sent: no figure */
  observe(&s, MCPP_EV_PROBE_OK, MCPP_STATE_ALIVE, 0, 1, 200);
  mcpp_event ev;
  memset(&ev, 0, sizeof ev);
  ev.type = MCPP_EV_PROBE_OK;
  ev.rpc_code = -32601; /* an error answer still proves the loop ran */
  mcpp_metric_series_observe(&s, &ev);
  observe(&s, MCPP_EV_PROBE_TIMEOUT, MCPP_STATE_SUSPECT, 0, 3, 0);
  observe(&s, MCPP_EV_PROBE_TIMEOUT, MCPP_STATE_CLOSED, 0, 4, 0); /* abandoned */
  ASSERT_UINT_EQ(s.probes[0], 2);
  ASSERT_UINT_EQ(s.probes[1], 1);
  /* A probe's answer is not a pong: no ping figure moves. */
  ASSERT_UINT_EQ(s.pongs_received + s.pings_sent + s.failures[0], 0);
  const mcpp_metric_family *f = mcpp_metric_family_at(MCPP_METRIC_PROBES);
  ASSERT_STR_EQ(f->name, "mcpping_probes_total");
  ASSERT_STR_EQ(f->label, "result");
  ASSERT_STR_EQ(f->field, "probes");
  char *text = render(&s, 1);
  ASSERT(strstr(text, "# TYPE mcpping_probes_total counter\n"
                      "mcpping_probes_total{peer=\"p\",transport=\"stdio\","
                      "result=\"ok\"} 2\n"
                      "mcpping_probes_total{peer=\"p\",transport=\"stdio\","
                      "result=\"timeout\"} 1\n"));
  check c;
  ASSERT_EQ(0, parse_exposition(text, &c));
  free(text);
}

TEST(metric_series_of_version_1_are_read_at_their_size_without_probes) {
  /* Two series as a program built before probes lays them out: the
   * library steps by V1's size, and neither reads nor writes past it. */
  enum { GUARD = 32 };
  size_t v1 = offsetof(mcpp_metric_series, probes);
  unsigned char buf[2 * sizeof(mcpp_metric_series) + GUARD];
  memset(buf, 0xAA, sizeof buf);
  for (int i = 0; i < 2; i++) {
    memset(buf + i * v1, 0, v1);
    mcpp_metric_series *s = (mcpp_metric_series *)(void *)(buf + i * v1);
    s->peer = i ? "second" : "first";
    s->transport = "stdio";
  }
  mcpp_event ev;
  memset(&ev, 0, sizeof ev);
  ev.type = MCPP_EV_PROBE_OK;
  mcpp_metric_series_observe_versioned(
      MCPP_METRIC_SERIES_V1, (mcpp_metric_series *)(void *)(buf + v1), &ev);
  ev.type = MCPP_EV_PING;
  mcpp_metric_series_observe_versioned(
      MCPP_METRIC_SERIES_V1, (mcpp_metric_series *)(void *)(buf + v1), &ev);
  for (size_t i = 2 * v1; i < sizeof buf; i++) ASSERT_EQ(buf[i], 0xAA);
  size_t need = mcpp_metrics_render_versioned(
      MCPP_METRIC_SERIES_V1, (const mcpp_metric_series *)(void *)buf, 2, NULL,
      0);
  char *text = malloc(need + 1);
  ASSERT(text != NULL);
  mcpp_metrics_render_versioned(MCPP_METRIC_SERIES_V1,
                                (const mcpp_metric_series *)(void *)buf, 2,
                                text, need + 1);
  ASSERT(strstr(text, "mcpping_pings_sent_total{peer=\"second\","
                      "transport=\"stdio\"} 1\n"));
  ASSERT(strstr(text, "mcpping_probes_total") == NULL);
  check c;
  ASSERT_EQ(0, parse_exposition(text, &c));
  ASSERT_EQ(c.families, MCPP_METRIC_PROBES);
  free(text);
  /* An unknown version writes and counts nothing. */
  char small[8] = "x";
  ASSERT_UINT_EQ(0, mcpp_metrics_render_versioned(MCPP_METRIC_SERIES_VERSION + 1,
                                                  NULL, 0, small, sizeof small));
  ASSERT_STR_EQ(small, "");
  mcpp_metric_series s;
  memset(&s, 0, sizeof s);
  mcpp_metric_series_observe_versioned(0, &s, &ev);
  ASSERT_UINT_EQ(s.pings_sent, 0);
}
