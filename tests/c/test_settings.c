/* Settings at the boundary: mcpp_settings_problem names the bad field and
 * its range, mcpp_engine_new refuses exactly those, nothing is clamped or
 * wrapped. */
#include <math.h>
#include <stdio.h>
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
    {"role", role, "role must be 'client' (0) or 'server' (1)"},
    {"transport", transport, NULL},
    {"interval_ms", interval_huge,
     "interval_ms must be 0 (off) or between min_interval_ms and 2147483647 ms"},
    {"jitter_pct", jitter, "jitter_pct must be between 0 and 100"},
    {"timeout_ms", timeout_zero, "timeout_ms must be between 1 and 2147483647 ms"},
    {"timeout_ms", timeout_huge, "timeout_ms must be between 1 and 2147483647 ms"},
    {"failures", failures_zero, "failures must be between 1 and 1000"},
    {"failures", failures_huge, "failures must be between 1 and 1000"},
    {"min_interval_ms", min_interval, "min_interval_ms must be between 0 and 2147483647 ms"},
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
  ASSERT_STR_EQ(p, "interval_ms must be 0 (off) or between min_interval_ms and 2147483647 ms "
                   "(clamp_interval = 1 raises it to the floor instead)");
  fx *f = fx_new();
  f->s = s;
  ASSERT_EQ(fx_try_start(f, T0), MCPP_ERR_INTERVAL_TOO_SHORT);
  f->s.clamp_interval = 1;
  ASSERT(mcpp_settings_problem(&f->s) == NULL);
  fx_start(f, T0);
  fx_done(f);
}

TEST(settings_table_defaults_and_policies_lie_within_their_ranges) {
  size_t n = 0;
  const mcpp_setting_info *t = mcpp_settings_table(&n);
  ASSERT(n >= 20);
  for (size_t i = 0; i < n; i++) {
    double v[2] = {t[i].def, t[i].policy};
    for (int k = 0; k < 2; k++) {
      int ok = (t[i].zero && v[k] == 0) || (v[k] >= t[i].min && v[k] <= t[i].max);
      if (!ok) fprintf(stderr, "%s: %g outside its range\n", t[i].name, v[k]);
      ASSERT(ok);
    }
    ASSERT(t[i].meaning && t[i].meaning[0]);
    ASSERT(mcpp_setting_find(t[i].name) == &t[i]);
  }
  /* The table's defaults are what mcpp_settings_default writes. */
  mcpp_settings s;
  mcpp_settings_default(&s);
  ASSERT_EQ(s.timeout_ms, (uint32_t)mcpp_setting_find("timeout_ms")->def);
  ASSERT_EQ(s.reconnect.max_attempts,
            (uint32_t)mcpp_setting_find("reconnect.max_attempts")->def);
  ASSERT_EQ(s.interval_ms, 0u); /* C keeps keepalive off ... */
  ASSERT_EQ(mcpp_setting_find("interval_ms")->policy, 15000); /* ... the library pings */
  mcpp_wrap_options w;
  mcpp_wrap_options_default(&w);
  ASSERT(w.settings == NULL); /* wrap's own defaults: */
  mcpp_settings ws;
  mcpp_wrap_settings_default(&ws);
  ASSERT_EQ(ws.interval_ms, 15000u);
  ASSERT(mcpp_setting_find("no_such") == NULL);
}

TEST(settings_table_every_refusal_names_the_setting) {
  size_t n = 0;
  const mcpp_setting_info *t = mcpp_settings_table(&n);
  char buf[256];
  double out;
  for (size_t i = 0; i < n; i++) {
    if (t[i].unit == MCPP_UNIT_CHOICE || t[i].unit == MCPP_UNIT_TEXT) continue;
    for (int unit = MCPP_IN_MS; unit <= MCPP_IN_SECONDS; unit++) {
      double worst[] = {-1, t[i].max * 2 + 1, NAN, INFINITY};
      for (size_t b = 0; b < sizeof worst / sizeof worst[0]; b++) {
        ASSERT_EQ(mcpp_setting_check(&t[i], "shown.name", worst[b], unit, NAN, NULL,
                                     &out, buf, sizeof buf),
                  MCPP_ERR_INVALID_ARGUMENT);
        ASSERT(strncmp(buf, "shown.name must be ", 19) == 0);
      }
    }
  }
  /* The engine's own sentences name the field too. */
  mcpp_settings s;
  mcpp_settings_default(&s);
  s.reconnect.enabled = 1;
  s.reconnect.jitter = 2;
  ASSERT_STR_EQ(mcpp_settings_problem(&s), "reconnect.jitter must be between 0 and 1");
}

TEST(settings_check_speaks_the_callers_unit_and_rounds_times_to_ms) {
  const mcpp_setting_info *timeout = mcpp_setting_find("timeout_ms");
  char buf[256];
  double out = 0;
  ASSERT_EQ(mcpp_setting_check(timeout, "KeepAlive.timeout", -1, MCPP_IN_SECONDS, NAN,
                               NULL, &out, buf, sizeof buf),
            MCPP_ERR_INVALID_ARGUMENT);
  ASSERT_STR_EQ(buf, "KeepAlive.timeout must be between 0.001 and 2147483.647 seconds, not -1");
  ASSERT_EQ(mcpp_setting_check(timeout, "keepalive.timeoutMs", -1000, MCPP_IN_MS, NAN,
                               NULL, &out, buf, sizeof buf),
            MCPP_ERR_INVALID_ARGUMENT);
  ASSERT_STR_EQ(buf, "keepalive.timeoutMs must be between 1 and 2147483647 ms, not -1000");
  ASSERT_EQ(mcpp_setting_check(timeout, "t", 1.0015, MCPP_IN_SECONDS, NAN, NULL, &out,
                               buf, sizeof buf), 0);
  ASSERT_EQ(out, 1002);
  /* Whole numbers refuse fractions; 0 is allowed where it means something. */
  ASSERT_EQ(mcpp_setting_check(mcpp_setting_find("failures"), "failures", 1.5,
                               MCPP_IN_MS, NAN, NULL, &out, buf, sizeof buf),
            MCPP_ERR_INVALID_ARGUMENT);
  ASSERT_STR_EQ(buf, "failures must be an integer between 1 and 1000, not 1.5");
  ASSERT_EQ(mcpp_setting_check(mcpp_setting_find("interval_ms"), "interval", 0,
                               MCPP_IN_SECONDS, NAN, NULL, &out, buf, sizeof buf), 0);
  ASSERT_EQ(out, 0);
  /* A raised lower bound names the setting that raised it. */
  ASSERT_EQ(mcpp_setting_check(mcpp_setting_find("interval_ms"), "interval", 0.5,
                               MCPP_IN_SECONDS, 1, "min_interval", &out, buf, sizeof buf),
            MCPP_ERR_INVALID_ARGUMENT);
  ASSERT_STR_EQ(buf, "interval must be 0 (off) or between 1 (min_interval) and "
                     "2147483.647 seconds, not 0.5");
  /* C's one min_interval rule: below the 10 ms floor means the floor. */
  ASSERT_EQ(mcpp_setting_check(mcpp_setting_find("min_interval_ms"), "m", 0.001,
                               MCPP_IN_SECONDS, NAN, NULL, &out, buf, sizeof buf), 0);
  ASSERT_EQ(out, MCPP_MIN_INTERVAL_FLOOR_MS);
}

TEST(settings_check_text_refuses_long_or_control_method_names_in_one_sentence) {
  const mcpp_setting_info *probe = mcpp_setting_find("probe_method");
  char buf[256], long_name[130];
  memset(long_name, 'x', sizeof long_name);
  ASSERT_EQ(mcpp_setting_check_text(probe, "probe", "tools/list", 10, buf, sizeof buf), 0);
  ASSERT_EQ(mcpp_setting_check_text(probe, "probe", long_name, 128, buf, sizeof buf), 0);
  ASSERT_EQ(mcpp_setting_check_text(probe, "probe", long_name, 129, buf, sizeof buf),
            MCPP_ERR_INVALID_ARGUMENT);
  ASSERT_STR_EQ(buf, "probe must be a method name of at most 128 bytes without control characters");
  ASSERT_EQ(mcpp_setting_check_text(probe, "probe", "a\nb", 3, buf, sizeof buf),
            MCPP_ERR_INVALID_ARGUMENT);
}

/* A reaper's stream grace, and keepalive's promise: interval + timeout x
 * failures, defaults for 0, never past the longest timer. */
TEST(settings_stale_bound_is_interval_plus_timeout_times_failures_capped) {
  ASSERT_EQ(16000, (int)mcpp_stale_bound_ms(1000, 5000, 3));
  mcpp_settings d;
  mcpp_settings_default(&d);
  ASSERT_EQ((int64_t)(2000 + d.timeout_ms * d.failures),
            (int64_t)mcpp_stale_bound_ms(2000, 0, 0));
  ASSERT_EQ((int64_t)MCPP_MAX_MS,
            (int64_t)mcpp_stale_bound_ms(MCPP_MAX_MS, MCPP_MAX_MS, 10));
}

TEST(arguments_table_rows_are_checked_and_said_as_settings_are) {
  size_t n = 0;
  const mcpp_setting_info *t = mcpp_arguments_table(&n);
  ASSERT_EQ(n, 4u);
  for (size_t i = 0; i < n; i++) {
    ASSERT(t[i].def >= t[i].min && t[i].def <= t[i].max);
    ASSERT(t[i].meaning && t[i].meaning[0]);
    ASSERT(mcpp_argument_find(t[i].name) == &t[i]);
    ASSERT(mcpp_setting_find(t[i].name) == NULL); /* no field of mcpp_settings */
  }
  ASSERT(mcpp_argument_find("timeout_ms") == NULL);
  /* The defaults are the ones the C core uses. */
  ASSERT_EQ(mcpp_argument_find("kill_grace_ms")->def, MCPP_DEFAULT_KILL_GRACE_MS);
  ASSERT_EQ(mcpp_argument_find("retry_budget.burst")->def, MCPP_RETRY_BUDGET_BURST);
  ASSERT_EQ(mcpp_argument_find("rtt_window")->max, MCPP_MAX_RTT_WINDOW);
  char buf[256];
  double out = -1;
  const mcpp_setting_info *grace = mcpp_argument_find("kill_grace_ms");
  ASSERT_EQ(mcpp_setting_check(grace, "kill_grace", 0, MCPP_IN_SECONDS, NAN, NULL, &out,
                               buf, sizeof buf), 0);
  ASSERT_EQ(out, 0); /* SIGKILL at once */
  ASSERT_EQ(mcpp_setting_check(grace, "params.killGraceMs", -1, MCPP_IN_MS, NAN, NULL, &out,
                               buf, sizeof buf), MCPP_ERR_INVALID_ARGUMENT);
  ASSERT_STR_EQ(buf, "params.killGraceMs must be 0 (SIGKILL at once) or between 1 and "
                     "2147483647 ms, not -1");
  ASSERT_EQ(mcpp_setting_check(mcpp_argument_find("retry_budget.per_second"), "per_second", 0,
                               MCPP_IN_SECONDS, NAN, NULL, &out, buf, sizeof buf),
            MCPP_ERR_INVALID_ARGUMENT);
  ASSERT_STR_EQ(buf, "per_second must be a number between 0.001 and 1000000, not 0");
  ASSERT_EQ(mcpp_setting_check(mcpp_argument_find("rtt_window"), "window", 1.5, MCPP_IN_MS,
                               NAN, NULL, &out, buf, sizeof buf), MCPP_ERR_INVALID_ARGUMENT);
  ASSERT_STR_EQ(buf, "window must be an integer between 1 and 16777216, not 1.5");
}
