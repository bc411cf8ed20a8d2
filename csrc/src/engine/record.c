/* The governance record serializer (see record.h). */
#include "record.h"

#include <stdio.h>
#include <string.h>

/* Converts days since 1970-01-01 to a civil date (H. Hinnant's algorithm),
 * so formatting needs no time zone or libc state. */
static void civil_from_days(int64_t z, int64_t *y, unsigned *m, unsigned *d) {
  z += 719468;
  int64_t era = (z >= 0 ? z : z - 146096) / 146097;
  unsigned doe = (unsigned)(z - era * 146097);
  unsigned yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
  unsigned doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
  unsigned mp = (5 * doy + 2) / 153;
  *d = doy - (153 * mp + 2) / 5 + 1;
  *m = mp < 10 ? mp + 3 : mp - 9;
  *y = (int64_t)yoe + era * 400 + (*m <= 2);
}

/* Writes v as exactly n decimal digits (zero-padded); returns the end. */
static char *digits(char *p, unsigned v, int n) {
  for (int i = n - 1; i >= 0; i--) {
    p[i] = (char)('0' + v % 10);
    v /= 10;
  }
  return p + n;
}

void mcpp__format_ts(int64_t unix_us, char out[32]) {
  /* RFC 3339 has four-digit years; clamp instead of printing garbage. */
  const int64_t max_us = 253402300799999999LL; /* 9999-12-31T23:59:59.999999 */
  if (unix_us < 0) unix_us = 0;
  if (unix_us > max_us) unix_us = max_us;
  int64_t secs = unix_us / 1000000, us = unix_us % 1000000;
  int64_t days = secs / 86400, sod = secs % 86400;
  int64_t y;
  unsigned m, d;
  civil_from_days(days, &y, &m, &d);
  /* By hand: every record formats one, and snprintf was a visible part of
   * a ping's CPU in the Node profile. "YYYY-MM-DDTHH:MM:SS.uuuuuuZ" */
  char *p = out;
  p = digits(p, (unsigned)y % 10000u, 4);
  *p++ = '-';
  p = digits(p, m % 100u, 2);
  *p++ = '-';
  p = digits(p, d % 100u, 2);
  *p++ = 'T';
  p = digits(p, (unsigned)(sod / 3600) % 100u, 2);
  *p++ = ':';
  p = digits(p, (unsigned)(sod / 60 % 60), 2);
  *p++ = ':';
  p = digits(p, (unsigned)(sod % 60), 2);
  *p++ = '.';
  p = digits(p, (unsigned)us % 1000000u, 6);
  *p++ = 'Z';
  *p = '\0';
}

static void key(mcpp__sb *sb, const char *name) {
  mcpp__sb_puts(sb, ",\"");
  mcpp__sb_puts(sb, name);
  mcpp__sb_puts(sb, "\":");
}

static void str_or_null(mcpp__sb *sb, const char *s) {
  if (s)
    mcpp__sb_json_string(sb, s, strlen(s));
  else
    mcpp__sb_puts(sb, "null");
}

static const char *role_name(mcpp_role r) {
  return r == MCPP_ROLE_SERVER ? "server" : "client";
}

static const char *transport_name(mcpp_transport t) {
  switch (t) {
    case MCPP_TRANSPORT_STDIO: return "stdio";
    case MCPP_TRANSPORT_STREAMABLE_HTTP: return "streamable-http";
    case MCPP_TRANSPORT_CUSTOM: return "custom";
  }
  return NULL;
}

size_t mcpp__record_format(const mcpp__record *r, int64_t unix_us, char *buf,
                           size_t cap) {
  mcpp__sb sb;
  char ts[32];
  mcpp__sb_init(&sb, buf, cap);
  mcpp__format_ts(unix_us, ts);
  mcpp__sb_puts(&sb, "{\"ts\":\"");
  mcpp__sb_puts(&sb, ts);
  mcpp__sb_putc(&sb, '"');
  key(&sb, "event");
  str_or_null(&sb, r->event);

  const char *us = role_name(r->role);
  const char *them = role_name(r->role == MCPP_ROLE_SERVER ? MCPP_ROLE_CLIENT
                                                           : MCPP_ROLE_SERVER);
  const char *dir = NULL, *sender = NULL, *receiver = NULL;
  if (r->direction == MCPP__DIR_OUTBOUND)
    dir = "outbound", sender = us, receiver = them;
  else if (r->direction == MCPP__DIR_INBOUND)
    dir = "inbound", sender = them, receiver = us;
  key(&sb, "direction");
  str_or_null(&sb, dir);
  key(&sb, "sender");
  str_or_null(&sb, sender);
  key(&sb, "receiver");
  str_or_null(&sb, receiver);
  key(&sb, "peer");
  str_or_null(&sb, r->peer);
  key(&sb, "session_id");
  str_or_null(&sb, r->session_id);
  key(&sb, "protocol_version");
  str_or_null(&sb, r->protocol_version);
  key(&sb, "transport");
  str_or_null(&sb, transport_name(r->transport));

  key(&sb, "ping_id");
  if (r->ping_id)
    mcpp__sb_put(&sb, r->ping_id, r->ping_id_len);
  else
    mcpp__sb_puts(&sb, "null");
  key(&sb, "timeout_ms");
  if (r->has_timeout)
    mcpp__sb_u64(&sb, r->timeout_ms);
  else
    mcpp__sb_puts(&sb, "null");
  key(&sb, "latency_ms");
  if (r->has_latency) {
    char frac[5] = {'.'};
    mcpp__sb_u64(&sb, r->latency_us / 1000);
    *digits(frac + 1, (unsigned)(r->latency_us % 1000), 3) = '\0';
    mcpp__sb_puts(&sb, frac);
  } else {
    mcpp__sb_puts(&sb, "null");
  }
  key(&sb, "failure_count");
  mcpp__sb_u64(&sb, r->failure_count);
  key(&sb, "reconnect_attempt");
  if (r->reconnect_attempt)
    mcpp__sb_u64(&sb, r->reconnect_attempt);
  else
    mcpp__sb_puts(&sb, "null");
  key(&sb, "in_flight");
  mcpp__sb_puts(&sb, "{\"count\":");
  mcpp__sb_u64(&sb, r->in_flight);
  mcpp__sb_puts(&sb, ",\"disposition\":\"");
  mcpp__sb_puts(&sb, mcpp_disposition_name(r->disposition));
  mcpp__sb_puts(&sb, "\"}");
  key(&sb, "proof");
  str_or_null(&sb, r->proof);
  mcpp__sb_putc(&sb, '}');
  return sb.len;
}
