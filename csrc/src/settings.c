/* Settings: the defaults, and the one check every boundary uses. A bad
 * value is refused with a sentence naming it, never clamped or wrapped. */
#include <string.h>

#include "engine.h"

/* MCPP_MAX_MS, MCPP_MAX_FAILURES, MCPP_MAX_OUTSTANDING_PINGS and
 * MCPP_MAX_PROBE_METHOD spelled out for the sentences below. */
#define MAX_MS "2147483647"
#define MAX_FAILURES "1000"
#define MAX_OUTSTANDING "1048576"
#define MAX_PROBE "128"

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

static void fill_defaults(mcpp_settings *s);

void mcpp_settings_default_versioned(int version, mcpp_settings *settings) {
  size_t size = mcpp__settings_size(version);
  if (settings == NULL || size == 0) return;
  mcpp_settings s;
  fill_defaults(&s);
  s.version = version;
  memcpy(settings, &s, size);
}

static void fill_defaults(mcpp_settings *s) {
  memset(s, 0, sizeof *s);
  s->role = MCPP_ROLE_CLIENT;
  s->transport = MCPP_TRANSPORT_STDIO;
  s->interval_ms = 0;
  s->jitter_pct = 10;
  s->timeout_ms = 5000;
  s->failures = 3;
  s->min_interval_ms = 1000;
  s->clamp_interval = 0;
  s->pause_threshold_ms = 1000;
  s->request_timeout_ms = 0;
  s->on_stale = MCPP_STALE_CLOSE;
  s->max_outstanding_pings = 1024;
  s->max_line_bytes = (size_t)64 * 1024 * 1024;
  s->probe_method = NULL;
  s->nonce = 0;
  s->clock_offset_us = 0;
  s->peer_name = NULL;
  s->forward_peer_pings = 0;
  mcpp_reconnect_default(&s->reconnect);
}

static int in_ms_range(uint32_t v) { return v >= 1 && v <= MCPP_MAX_MS; }

static int probe_method_ok(const char *m) {
  size_t n = strlen(m);
  if (n > MCPP_MAX_PROBE_METHOD) return 0;
  for (size_t i = 0; i < n; i++)
    if ((unsigned char)m[i] < 0x20 || m[i] == 0x7f) return 0;
  return 1;
}

/* Everything but the interval floor, in the order the fields are declared. */
static const char *range_problem(const mcpp_settings *s) {
  if (s->role != MCPP_ROLE_CLIENT && s->role != MCPP_ROLE_SERVER)
    return "role must be MCPP_ROLE_CLIENT (0) or MCPP_ROLE_SERVER (1)";
  if (s->transport != MCPP_TRANSPORT_STDIO &&
      s->transport != MCPP_TRANSPORT_STREAMABLE_HTTP &&
      s->transport != MCPP_TRANSPORT_CUSTOM)
    return "transport must be MCPP_TRANSPORT_STDIO (0), "
           "MCPP_TRANSPORT_STREAMABLE_HTTP (1) or MCPP_TRANSPORT_CUSTOM (2)";
  if (s->interval_ms > MCPP_MAX_MS)
    return "interval_ms must be 0 (off) or between min_interval_ms and " MAX_MS
           " ms";
  if (s->jitter_pct > 100) return "jitter_pct must be between 0 and 100";
  if (!in_ms_range(s->timeout_ms))
    return "timeout_ms must be between 1 and " MAX_MS " ms";
  if (s->failures < 1 || s->failures > MCPP_MAX_FAILURES)
    return "failures must be between 1 and " MAX_FAILURES;
  if (s->min_interval_ms > MCPP_MAX_MS)
    return "min_interval_ms must be at most " MAX_MS " ms";
  if (s->clamp_interval != 0 && s->clamp_interval != 1)
    return "clamp_interval must be 0 or 1";
  if (!in_ms_range(s->pause_threshold_ms))
    return "pause_threshold_ms must be between 1 and " MAX_MS " ms";
  if (s->request_timeout_ms > MCPP_MAX_MS)
    return "request_timeout_ms must be 0 (none) or between 1 and " MAX_MS
           " ms";
  if (s->on_stale != MCPP_STALE_CLOSE && s->on_stale != MCPP_STALE_REPORT)
    return "on_stale must be MCPP_STALE_CLOSE (0) or MCPP_STALE_REPORT (1)";
  if (s->max_outstanding_pings < 1 ||
      s->max_outstanding_pings > MCPP_MAX_OUTSTANDING_PINGS)
    return "max_outstanding_pings must be between 1 and " MAX_OUTSTANDING;
  if (s->probe_method && !probe_method_ok(s->probe_method))
    return "probe_method must be NULL (automatic), \"\" (none) or a method "
           "name of at most " MAX_PROBE " bytes without control characters";
  if (s->forward_peer_pings != 0 && s->forward_peer_pings != 1)
    return "forward_peer_pings must be 0 or 1";
  return mcpp_reconnect_problem(&s->reconnect);
}

int mcpp__settings_check(mcpp_settings *s, const char **problem) {
  const char *p = range_problem(s);
  if (problem) *problem = p;
  if (p) return MCPP_ERR_INVALID_ARGUMENT;
  if (s->min_interval_ms < MCPP_MIN_INTERVAL_FLOOR_MS)
    s->min_interval_ms = MCPP_MIN_INTERVAL_FLOOR_MS;
  if (s->interval_ms > 0 && s->interval_ms < s->min_interval_ms) {
    if (!s->clamp_interval) {
      if (problem)
        *problem = "interval_ms must be 0 (off) or at least min_interval_ms "
                   "(clamp_interval = 1 raises it to the floor instead)";
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
