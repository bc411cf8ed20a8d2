/* Settings: the table of every setting (default, range, unit, meaning),
 * and everything made from it: the defaults, the one check every boundary
 * uses and the sentences that refuse a value. A bad value is refused with
 * a sentence naming it, never clamped or wrapped. */
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

/* The C engine's own sentences: C units, no value, "between 1 and 1000". */
#define IN_C 2

/* How a row's field is stored, to read and write it as a double. */
enum { U32, INT, SIZE, DBL, STR };

typedef struct row {
  mcpp_setting_info info;
  size_t offset; /* in mcpp_settings, or in mcpp_reconnect if reconnect */
  int reconnect;
  int type;
} row;

#define MS MCPP_UNIT_MS
#define COUNT MCPP_UNIT_COUNT
#define MAXMS ((double)MCPP_MAX_MS)
#define MAXBYTES 281474976710656.0 /* 2^48: exact in every binding's numbers */
#define S(field) offsetof(mcpp_settings, field), 0
#define R(field) offsetof(mcpp_reconnect, field), 1

/* In the order mcpp_settings declares them. policy differs from def only
 * for interval_ms: C's zero-initialised settings keep keepalive off, the
 * library (bindings, wrap, the command) pings every 15 s. */
static const row rows[] = {
    {{"role", MCPP_UNIT_CHOICE, 0, 0, 0, 1, NULL, NULL, "client|server",
      "Which end we are: the MCP client (the peer is a server) or the server."},
     S(role), INT},
    {{"transport", MCPP_UNIT_CHOICE, 0, 0, 0, 2, NULL, NULL,
      "stdio|streamable-http|custom", "How frames travel."},
     S(transport), INT},
    {{"interval_ms", MS, 0, 15000, 1, MAXMS, "off", "min_interval_ms", NULL,
      "A keepalive ping (or idle probe) after this long without an inbound "
      "byte."},
     S(interval_ms), U32},
    {{"jitter_pct", MCPP_UNIT_PERCENT, 10, 10, 0, 100, NULL, NULL, NULL,
      "Each keepalive ping may fire up to this many percent early."},
     S(jitter_pct), U32},
    {{"timeout_ms", MS, 5000, 5000, 1, MAXMS, NULL, NULL, NULL,
      "How long a keepalive ping, probe or manual ping may take."},
     S(timeout_ms), U32},
    {{"failures", COUNT, 3, 3, 1, MCPP_MAX_FAILURES, NULL, NULL, NULL,
      "Consecutive failed keepalive pings that make the peer stale."},
     S(failures), U32},
    {{"min_interval_ms", MS, 1000, 1000, 0, MAXMS, NULL, NULL, NULL,
      "The floor on interval_ms (below 10 ms means 10 ms)."},
     S(min_interval_ms), U32},
    {{"clamp_interval", MCPP_UNIT_FLAG, 0, 0, 0, 1, NULL, NULL, NULL,
      "1: an interval below the floor is raised to it instead of refused."},
     S(clamp_interval), INT},
    {{"pause_threshold_ms", MS, 1000, 1000, 1, MAXMS, NULL, NULL, NULL,
      "A wake-up this late means the host was paused, not the peer."},
     S(pause_threshold_ms), U32},
    {{"request_timeout_ms", MS, 0, 0, 1, MAXMS, "none", NULL, NULL,
      "The default timeout of the application's own requests."},
     S(request_timeout_ms), U32},
    {{"on_stale", MCPP_UNIT_CHOICE, 0, 0, 0, 1, NULL, NULL, "close|report",
      "What a stale peer does to the connection."},
     S(on_stale), INT},
    {{"max_outstanding_pings", COUNT, 1024, 1024, 1,
      MCPP_MAX_OUTSTANDING_PINGS, NULL, NULL, NULL,
      "Manual pings outstanding at once."},
     S(max_outstanding_pings), U32},
    {{"max_line_bytes", MCPP_UNIT_BYTES, 67108864.0, 67108864.0, 1, MAXBYTES,
      NULL, NULL, NULL, "The longest accepted line, newline excluded."},
     S(max_line_bytes), SIZE},
    {{"max_pending_bytes", MCPP_UNIT_BYTES, 0, 0, 1, MAXBYTES,
      "the default, 16 MiB", NULL, NULL,
      "Backpressure: bytes held for the host, or queued for the server, per "
      "connection."},
     S(max_pending_bytes), SIZE},
    {{"probe_method", MCPP_UNIT_TEXT, 0, 0, 0, MCPP_MAX_PROBE_METHOD, NULL,
      NULL, NULL,
      "The idle probe for sessions without ping: automatic, none or a "
      "method."},
     S(probe_method), STR},
    {{"forward_peer_pings", MCPP_UNIT_FLAG, 0, 0, 0, 1, NULL, NULL, NULL,
      "1: the peer's pings go to the application, which answers them."},
     S(forward_peer_pings), INT},
    {{"reconnect.enabled", MCPP_UNIT_FLAG, 0, 0, 0, 1, NULL, NULL, NULL,
      "1: a failed stdio server is spawned again."},
     R(enabled), INT},
    {{"reconnect.initial_ms", MS, 1000, 1000, 1, MAXMS, NULL, NULL, NULL,
      "The first delay before a respawn."},
     R(initial_ms), U32},
    {{"reconnect.max_delay_ms", MS, 30000, 30000, 1, MAXMS, NULL,
      "reconnect.initial_ms", NULL, "The longest delay before a respawn."},
     R(max_delay_ms), U32},
    {{"reconnect.multiplier", MCPP_UNIT_RATIO, 2.0, 2.0, 1,
      MCPP_MAX_RECONNECT_MULTIPLIER, NULL, NULL, NULL,
      "Each delay is the previous one's times this."},
     R(multiplier), DBL},
    {{"reconnect.jitter", MCPP_UNIT_RATIO, 0.2, 0.2, 0, 1, NULL, NULL, NULL,
      "Each delay is spread over delay * [1 - jitter, 1 + jitter]."},
     R(jitter), DBL},
    {{"reconnect.max_attempts", COUNT, 10, 10, 1, MCPP_MAX_RECONNECT_ATTEMPTS,
      NULL, NULL, NULL, "Failed attempts in a row before closing for good."},
     R(max_attempts), U32},
};

#define N_ROWS (sizeof rows / sizeof rows[0])

static mcpp_setting_info infos[N_ROWS];
/* The engine's own sentence for each row, and interval_ms's floor one. */
static char problems[N_ROWS][224];
static char interval_floor_problem[288];
static pthread_once_t once = PTHREAD_ONCE_INIT;

/* ------------------------------------------------------------ sentences */

/* v as the shortest text that reads back as v ("0.001", "2147483.647"). */
static void number_text(double v, char *buf, size_t size) {
  if (isfinite(v) && v == floor(v) && fabs(v) < 1e17) {
    snprintf(buf, size, "%.0f", v);
    return;
  }
  for (int p = 1; p <= 17; p++) {
    snprintf(buf, size, "%.*g", p, v);
    if (!isfinite(v) || strtod(buf, NULL) == v) return;
  }
}

static int whole(mcpp_setting_unit u) {
  return u == MCPP_UNIT_COUNT || u == MCPP_UNIT_PERCENT ||
         u == MCPP_UNIT_BYTES;
}

static double scale(const mcpp_setting_info *info, int in_unit) {
  return info->unit == MCPP_UNIT_MS && in_unit == MCPP_IN_SECONDS ? 1000.0
                                                                  : 1.0;
}

/* Appends printf-style text to buf at *at, never past size. */
#define ADD(...)                                                     \
  do {                                                               \
    if (*at < size) *at += (size_t)snprintf(buf + *at, size - *at, __VA_ARGS__); \
  } while (0)

static void range_text(const mcpp_setting_info *info, int in_unit, double low,
                       const char *low_name, char *buf, size_t size,
                       size_t *at) {
  char a[40], b[40];
  if (info->unit == MCPP_UNIT_CHOICE) {
    const char *c = info->choices;
    for (int i = 0; *c; i++) {
      size_t n = strcspn(c, "|");
      const char *sep = i == 0 ? "" : c[n] ? ", " : " or ";
      if (in_unit == IN_C)
        ADD("%s'%.*s' (%d)", sep, (int)n, c, i);
      else
        ADD("%s'%.*s'", sep, (int)n, c);
      c += n + (c[n] == '|');
    }
    return;
  }
  if (info->unit == MCPP_UNIT_FLAG) {
    ADD("0 or 1");
    return;
  }
  if (info->unit == MCPP_UNIT_TEXT) {
    ADD("NULL (automatic), \"\" (none) or a method name of at most %g bytes "
        "without control characters", info->max);
    return;
  }
  double k = scale(info, in_unit);
  if (info->zero) ADD("0 (%s) or ", info->zero);
  if (in_unit != IN_C && whole(info->unit)) ADD("an integer ");
  if (info->unit == MCPP_UNIT_RATIO && in_unit != IN_C) ADD("a number ");
  number_text(info->max / k, b, sizeof b);
  if (!isnan(low)) {
    number_text(low, a, sizeof a);
    ADD("between %s (%s) and %s", a, low_name ? low_name : "", b);
  } else if (low_name) {
    ADD("between %s and %s", low_name, b);
  } else {
    number_text(info->min / k, a, sizeof a);
    ADD("between %s and %s", a, b);
  }
  if (info->unit == MCPP_UNIT_MS)
    ADD(in_unit == MCPP_IN_SECONDS ? " seconds" : " ms");
  else if (info->unit == MCPP_UNIT_BYTES)
    ADD(" bytes");
}

static void make_sentences(void) {
  for (size_t i = 0; i < N_ROWS; i++) {
    infos[i] = rows[i].info;
    size_t pos = 0, *at = &pos, size = sizeof problems[i];
    char *buf = problems[i];
    const char *floor = rows[i].info.floor;
    /* The floor's own name, without the "reconnect." both share. */
    if (floor && strncmp(floor, "reconnect.", 10) == 0) floor += 10;
    ADD("%s must be ", rows[i].info.name);
    range_text(&rows[i].info, IN_C, NAN, floor, buf, size, at);
    if (strcmp(rows[i].info.name, "interval_ms") == 0)
      snprintf(interval_floor_problem, sizeof interval_floor_problem,
               "%.223s (clamp_interval = 1 raises it to the floor instead)",
               buf);
  }
}

static void ready(void) { pthread_once(&once, make_sentences); }

/* ----------------------------------------------------------- public table */

const mcpp_setting_info *mcpp_settings_table(size_t *n) {
  ready();
  if (n) *n = N_ROWS;
  return infos;
}

uint32_t mcpp_stale_bound_ms(uint32_t interval_ms, uint32_t timeout_ms,
                             uint32_t failures) {
  if (timeout_ms == 0) timeout_ms = (uint32_t)mcpp_setting_find("timeout_ms")->def;
  if (failures == 0) failures = (uint32_t)mcpp_setting_find("failures")->def;
  uint64_t ms = (uint64_t)interval_ms + (uint64_t)timeout_ms * failures;
  return ms > MCPP_MAX_MS ? MCPP_MAX_MS : (uint32_t)ms;
}

const mcpp_setting_info *mcpp_setting_find(const char *name) {
  ready();
  for (size_t i = 0; name && i < N_ROWS; i++)
    if (strcmp(infos[i].name, name) == 0) return &infos[i];
  return NULL;
}

const char *mcpp_setting_range(const mcpp_setting_info *info, int in_unit,
                               double low, const char *low_name, char *buf,
                               size_t size) {
  size_t at = 0;
  if (buf == NULL || size == 0) return buf;
  buf[0] = '\0';
  if (info) range_text(info, in_unit, low, low_name, buf, size, &at);
  return buf;
}

int mcpp_setting_check(const mcpp_setting_info *info, const char *shown,
                       double value, int in_unit, double low,
                       const char *low_name, double *out, char *buf,
                       size_t size) {
  if (info == NULL || info->unit == MCPP_UNIT_CHOICE ||
      info->unit == MCPP_UNIT_TEXT)
    return MCPP_ERR_INVALID_ARGUMENT;
  double k = scale(info, in_unit);
  double lo = isnan(low) ? info->min / k : low;
  int ok = isfinite(value) &&
           ((info->zero && value == 0) ||
            (value >= lo && value <= info->max / k));
  if (ok && (whole(info->unit) || info->unit == MCPP_UNIT_FLAG))
    ok = value == floor(value);
  if (ok) {
    double v = info->unit == MCPP_UNIT_MS ? round(value * k) : value;
    /* C's one min_interval rule: below the floor means the floor. */
    if (strcmp(info->name, "min_interval_ms") == 0 &&
        v < MCPP_MIN_INTERVAL_FLOOR_MS)
      v = MCPP_MIN_INTERVAL_FLOOR_MS;
    if (out) *out = v;
    return 0;
  }
  if (buf && size) {
    size_t pos = 0, *at = &pos;
    char v[40];
    ADD("%s must be ", shown ? shown : info->name);
    range_text(info, in_unit, low, low_name, buf, size, at);
    number_text(value, v, sizeof v);
    ADD(", not %s", v);
  }
  return MCPP_ERR_INVALID_ARGUMENT;
}

/* ------------------------------------------------------------ the struct */

static void *field(const row *r, const mcpp_settings *s) {
  const char *base = r->reconnect ? (const char *)&s->reconnect
                                  : (const char *)s;
  return (void *)(base + r->offset);
}

static double get(const row *r, const mcpp_settings *s) {
  void *p = field(r, s);
  switch (r->type) {
    case U32: return *(uint32_t *)p;
    case INT: return *(int *)p;
    case SIZE: return (double)*(size_t *)p;
    case DBL: return *(double *)p;
    default: return 0;
  }
}

static void set(const row *r, mcpp_settings *s, double v) {
  void *p = field(r, s);
  switch (r->type) {
    case U32: *(uint32_t *)p = (uint32_t)v; break;
    case INT: *(int *)p = (int)v; break;
    case SIZE: *(size_t *)p = (size_t)v; break;
    case DBL: *(double *)p = v; break;
    default: *(const char **)p = NULL; break;
  }
}

size_t mcpp__settings_size(int version) {
  /* A later version adds fields at the end; V1's size then becomes
   * offsetof(mcpp_settings, <its first new field>). */
  return version == MCPP_SETTINGS_V1 ? sizeof(mcpp_settings) : 0;
}

int mcpp__settings_import(mcpp_settings *out, const mcpp_settings *in) {
  size_t size = mcpp__settings_size(in->version);
  if (size == 0) return MCPP_ERR_INVALID_ARGUMENT;
  mcpp_settings_default_versioned(MCPP_SETTINGS_VERSION, out);
  memcpy(out, in, size); /* fields the caller's version lacks keep defaults */
  out->version = MCPP_SETTINGS_VERSION;
  return 0;
}

static void fill_defaults(mcpp_settings *s) {
  memset(s, 0, sizeof *s); /* nonce, clock_offset_us, peer_name: none */
  for (size_t i = 0; i < N_ROWS; i++) set(&rows[i], s, rows[i].info.def);
}

void mcpp_settings_default_versioned(int version, mcpp_settings *settings) {
  size_t size = mcpp__settings_size(version);
  if (settings == NULL || size == 0) return;
  mcpp_settings s;
  fill_defaults(&s);
  s.version = version;
  memcpy(settings, &s, size);
}

void mcpp_reconnect_default(mcpp_reconnect *p) {
  if (p == NULL) return;
  mcpp_settings s;
  fill_defaults(&s);
  *p = s.reconnect;
}

static int text_ok(const mcpp_setting_info *info, const char *m, size_t n) {
  if ((double)n > info->max) return 0;
  for (size_t i = 0; i < n; i++)
    if ((unsigned char)m[i] < 0x20 || m[i] == 0x7f) return 0;
  return 1;
}

int mcpp_setting_check_text(const mcpp_setting_info *info, const char *shown,
                            const char *value, size_t len, char *buf,
                            size_t size) {
  if (info == NULL || info->unit != MCPP_UNIT_TEXT || value == NULL)
    return MCPP_ERR_INVALID_ARGUMENT;
  if (text_ok(info, value, len)) return 0;
  if (buf && size)
    snprintf(buf, size,
             "%s must be a method name of at most %g bytes without control "
             "characters",
             shown ? shown : info->name, info->max);
  return MCPP_ERR_INVALID_ARGUMENT;
}

/* The first row of [from, to) whose value is out of range, else NULL. */
static const char *rows_problem(const mcpp_settings *s, size_t from,
                                size_t to) {
  ready();
  for (size_t i = from; i < to; i++) {
    const row *r = &rows[i];
    const mcpp_setting_info *in = &r->info;
    if (r->type == STR) {
      const char *m = *(const char **)field(r, s);
      if (m && !text_ok(in, m, strlen(m))) return problems[i];
      continue;
    }
    double v = get(r, s);
    /* Written so that NaN fails too. */
    int ok = (in->zero && v == 0) || (v >= in->min && v <= in->max);
    if (ok && in->floor && strcmp(in->name, "interval_ms") != 0)
      ok = v >= get(&rows[i - 1], s); /* max_delay_ms follows initial_ms */
    if (!ok) return problems[i];
    /* A disabled reconnect's fields are not checked. */
    if (strcmp(in->name, "reconnect.enabled") == 0 && v == 0) return NULL;
  }
  return NULL;
}

static size_t first_reconnect_row(void) {
  size_t i = 0;
  while (i < N_ROWS && !rows[i].reconnect) i++;
  return i;
}

const char *mcpp_reconnect_problem(const mcpp_reconnect *p) {
  if (p == NULL) return "reconnect must not be NULL";
  mcpp_settings s;
  fill_defaults(&s);
  s.reconnect = *p;
  return rows_problem(&s, first_reconnect_row(), N_ROWS);
}

int mcpp__settings_check(mcpp_settings *s, const char **problem) {
  const char *p = rows_problem(s, 0, N_ROWS);
  if (problem) *problem = p;
  if (p) return MCPP_ERR_INVALID_ARGUMENT;
  if (s->min_interval_ms < MCPP_MIN_INTERVAL_FLOOR_MS)
    s->min_interval_ms = MCPP_MIN_INTERVAL_FLOOR_MS;
  if (s->interval_ms > 0 && s->interval_ms < s->min_interval_ms) {
    if (!s->clamp_interval) {
      if (problem) *problem = interval_floor_problem;
      return MCPP_ERR_INTERVAL_TOO_SHORT;
    }
    s->interval_ms = s->min_interval_ms;
  }
  return 0;
}

const char *mcpp_settings_problem(const mcpp_settings *settings) {
  if (settings == NULL) return "settings must not be NULL";
  mcpp_settings copy;
  if (mcpp__settings_import(&copy, settings))
    return "settings.version must be a known version: initialize settings "
           "with mcpp_settings_default";
  const char *problem;
  mcpp__settings_check(&copy, &problem);
  return problem;
}
