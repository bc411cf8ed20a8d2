/* Settings at the boundary: mcpp_settings_problem names the bad field and
 * its range, mcpp_engine_new refuses exactly those, nothing is clamped or
 * wrapped. */
#include <string.h>

#include "engine_fixture.h"

typedef struct bad_case {
  const char *field;
  void (*spoil)(mcpp_settings *);
  const char *sentence;
} bad_case;

static void role(mcpp_settings *s) { s->role = 2; }
static void transport(mcpp_settings *s) { s->transport = 3; }
static void interval_huge(mcpp_settings *s) { s->interval_ms = MCPP_MAX_MS + 1; }
static void jitter(mcpp_settings *s) { s->jitter_pct = 101; }
static void timeout_zero(mcpp_settings *s) { s->timeout_ms = 0; }
static void timeout_huge(mcpp_settings *s) { s->timeout_ms = MCPP_MAX_MS + 1; }
static void failures_zero(mcpp_settings *s) { s->failures = 0; }
static void failures_huge(mcpp_settings *s) { s->failures = MCPP_MAX_FAILURES + 1; }
static void min_interval(mcpp_settings *s) { s->min_interval_ms = MCPP_MAX_MS + 1; }
static void clamp(mcpp_settings *s) { s->clamp_interval = 2; }
static void pause_zero(mcpp_settings *s) { s->pause_threshold_ms = 0; }
static void request_huge(mcpp_settings *s) { s->request_timeout_ms = UINT32_MAX; }
static void on_stale(mcpp_settings *s) { s->on_stale = 9; }
static void pings_zero(mcpp_settings *s) { s->max_outstanding_pings = 0; }
static void pings_huge(mcpp_settings *s) { s->max_outstanding_pings = MCPP_MAX_OUTSTANDING_PINGS + 1; }
static void probe_ctl(mcpp_settings *s) { s->probe_method = "tools/\nlist"; }

static const bad_case bad[] = {
    {"role", role, "role must be MCPP_ROLE_CLIENT (0) or MCPP_ROLE_SERVER (1)"},
    {"transport", transport, NULL},
    {"interval_ms", interval_huge,
     "interval_ms must be 0 (off) or between min_interval_ms and 2147483647 ms"},
    {"jitter_pct", jitter, "jitter_pct must be between 0 and 100"},
    {"timeout_ms", timeout_zero, "timeout_ms must be between 1 and 2147483647 ms"},
    {"timeout_ms", timeout_huge, "timeout_ms must be between 1 and 2147483647 ms"},
    {"failures", failures_zero, "failures must be between 1 and 1000"},
    {"failures", failures_huge, "failures must be between 1 and 1000"},
    {"min_interval_ms", min_interval, "min_interval_ms must be at most 2147483647 ms"},
    {"clamp_interval", clamp, "clamp_interval must be 0 or 1"},
    {"pause_threshold_ms", pause_zero,
     "pause_threshold_ms must be between 1 and 2147483647 ms"},
    {"request_timeout_ms", request_huge,
     "request_timeout_ms must be 0 (none) or between 1 and 2147483647 ms"},
    {"on_stale", on_stale, NULL},
    {"max_outstanding_pings", pings_zero,
     "max_outstanding_pings must be between 1 and 1048576"},
    {"max_outstanding_pings", pings_huge, NULL},
    {"probe_method", probe_ctl, NULL},
};

TEST(settings_problem_names_each_bad_field_and_its_range) {
  mcpp_settings s;
  mcpp_settings_default(&s);
  ASSERT(mcpp_settings_problem(&s) == NULL);
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
    mcpp_settings_default(&s);
    bad[i].spoil(&s);
    const char *p = mcpp_settings_problem(&s);
    ASSERT(p != NULL);
    ASSERT(strncmp(p, bad[i].field, strlen(bad[i].field)) == 0);
    if (bad[i].sentence) ASSERT_STR_EQ(p, bad[i].sentence);
    /* The engine refuses the same settings, creating nothing. */
    fx *f = fx_new();
    f->s = s;
    ASSERT_EQ(fx_try_start(f, T0), MCPP_ERR_INVALID_ARGUMENT);
    ASSERT(f->e == NULL);
    ASSERT_EQ(f->alloc.live, 0);
    free(f);
  }
  ASSERT_STR_EQ(mcpp_settings_problem(NULL), "settings must not be NULL");
}

TEST(settings_at_their_limits_are_accepted) {
  mcpp_settings s;
  mcpp_settings_default(&s);
  s.interval_ms = MCPP_MAX_MS;
  s.min_interval_ms = MCPP_MAX_MS;
  s.jitter_pct = 100;
  s.timeout_ms = MCPP_MAX_MS;
  s.failures = MCPP_MAX_FAILURES;
  s.pause_threshold_ms = MCPP_MAX_MS;
  s.request_timeout_ms = MCPP_MAX_MS;
  s.max_outstanding_pings = MCPP_MAX_OUTSTANDING_PINGS;
  char method[MCPP_MAX_PROBE_METHOD + 1];
  memset(method, 'm', MCPP_MAX_PROBE_METHOD);
  method[MCPP_MAX_PROBE_METHOD] = '\0';
  s.probe_method = method;
  ASSERT(mcpp_settings_problem(&s) == NULL);
  fx *f = fx_new();
  f->s = s;
  fx_start(f, T0);
  /* No deadline wrapped: the first keepalive is an interval away (less
   * jitter), never in the past. */
  uint64_t d = mcpp_engine_next_deadline(f->e);
  ASSERT(d > T0 && d <= T0 + (uint64_t)MCPP_MAX_MS * MS);
  fx_done(f);
  s.probe_method = "";
  ASSERT(mcpp_settings_problem(&s) == NULL);
  method[0] = '\x7f';
  s.probe_method = method;
  ASSERT(mcpp_settings_problem(&s) != NULL);
}

TEST(settings_problem_explains_an_interval_below_the_floor) {
  mcpp_settings s;
  mcpp_settings_default(&s);
  s.interval_ms = 999;
  const char *p = mcpp_settings_problem(&s);
  ASSERT(p != NULL);
  ASSERT(strstr(p, "interval_ms must be 0 (off) or at least min_interval_ms") == p);
  fx *f = fx_new();
  f->s = s;
  ASSERT_EQ(fx_try_start(f, T0), MCPP_ERR_INTERVAL_TOO_SHORT);
  f->s.clamp_interval = 1;
  ASSERT(mcpp_settings_problem(&f->s) == NULL);
  fx_start(f, T0);
  fx_done(f);
}
