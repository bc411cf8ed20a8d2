/* `mcpping --config`'s check of one server as a sans-I/O state machine
 * (mcpping/config_run.h): the skips, the per-server deadline, the
 * handshake's bounds, the ping grid, and how each outcome becomes a status
 * and a reason (docs/cli.md's words). The binding does the I/O it is asked
 * for and feeds back what happened. No reason ever carries an env or headers
 * value, a URL or an argument: mcpping's own words name none, and what it
 * quotes (the server's error, its stderr) has the entry's secrets replaced. */
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "app/secrets.h"
#include "app/tail.h"
#include "app/text.h"
#include "mcpping.h"

/* The first protocol version without ping (it has server/discover). */
static const char NO_PING_VERSION[] = "2026-07-28";

enum {
  ST_OPEN,      /* OPEN not asked yet */
  ST_OPENING,   /* waiting for open_done */
  ST_HANDSHAKE, /* HANDSHAKE not asked yet */
  ST_SHAKING,   /* waiting for the handshake's outcome */
  ST_PING,      /* the next ping is due (or a WAIT before it) */
  ST_WAIT,      /* between pings */
  ST_PINGING,   /* waiting for replied */
  ST_VERDICT,   /* the pings are over: sum them up */
  ST_CLOSE,     /* CLOSE not asked yet */
  ST_CLOSING,   /* waiting for closed */
  ST_DONE
};

struct mcpp_config_run {
  mcpp_config_plan plan;
  int state;
  int stopped;     /* Ctrl-C: no ping after it */
  int need_exit;   /* the reason is how the connection ended */
  int64_t end_at;  /* the server's deadline */
  int64_t first_at; /* the first ping, for the grid */
  int64_t wake_at;
  uint64_t seq;    /* pings asked */
  uint32_t wait_ms; /* the ping out's timeout, cut by the deadline */
  const char *status;
  char *reason, *protocol_version, *last_stderr;
  int sent, received;
  double *rtts;
  size_t n_rtts, cap_rtts;
  unsigned long non_json_lines;
  int no_initialize; /* failed for want of an initialize result */
  mcpp__tail err; /* the server's stderr, for its last line */
  mcpp__secrets secrets; /* what no reason may quote */
};

const char *mcpp_config_skip_reason(const char *transport, int disabled) {
  if (disabled) return "disabled";
  if (transport && !strcmp(transport, "sse")) return "legacy HTTP+SSE transport";
  return NULL;
}

int mcpp_config_run_new(mcpp_config_run **out, const char *transport, int disabled,
                        const mcpp_config_plan *plan, int64_t now_ms) {
  *out = NULL;
  if (!transport || !plan) return MCPP_ERR_INVALID_ARGUMENT;
  mcpp_config_run *r = calloc(1, sizeof *r);
  if (!r) return MCPP_ERR_NOMEM;
  r->plan = *plan;
  r->status = "ok";
  r->state = ST_OPEN;
  const char *skip = mcpp_config_skip_reason(transport, disabled);
  if (skip) {
    r->status = "skipped";
    r->reason = strdup(skip);
    r->state = ST_DONE;
  }
  /* Taken after the skip check, before resolving the entry. */
  r->end_at = now_ms + plan->deadline_ms;
  *out = r;
  return 0;
}

void mcpp_config_run_free(mcpp_config_run *r) {
  if (!r) return;
  free(r->reason);
  free(r->protocol_version);
  free(r->last_stderr);
  free(r->rtts);
  mcpp__secrets_free(&r->secrets);
  free(r);
}

static void set_reason(mcpp_config_run *r, const char *reason) {
  free(r->reason);
  r->reason = mcpp__secrets_redact(&r->secrets, reason);
}

int mcpp_config_run_set_secrets(mcpp_config_run *r, const char *const *secrets, size_t n) {
  if (!r || (n && !secrets)) return MCPP_ERR_INVALID_ARGUMENT;
  return mcpp__secrets_add_all(&r->secrets, secrets, n);
}

/* Ends the check with status (reason NULL: none) and closes the connection. */
static void fail(mcpp_config_run *r, const char *status, const char *reason) {
  r->status = status;
  set_reason(r, reason);
  r->state = ST_CLOSE;
}

/* The handshake ran out of time; what the server wrote instead is added
 * when the binding tells it (mcpp_config_run_unreadable). */
static void no_initialize_result(mcpp_config_run *r) {
  fail(r, "timeout", "no initialize result");
  r->no_initialize = 1;
}

void mcpp_config_run_open_done(mcpp_config_run *r, int64_t now_ms,
                               mcpp_config_open_result result, const char *reason) {
  (void)now_ms;
  if (r->state != ST_OPENING) return;
  switch (result) {
    case MCPP_CONFIG_OPEN_OK:
      r->state = ST_HANDSHAKE;
      return;
    case MCPP_CONFIG_OPEN_UNRESOLVED:
      r->status = "not started";
      set_reason(r, reason);
      break;
    case MCPP_CONFIG_OPEN_SPAWN_FAILED:
      r->status = "spawn failed";
      set_reason(r, reason);
      break;
    case MCPP_CONFIG_OPEN_INVALID:
    default:
      /* The binding's message could quote a value: never shown. */
      r->status = "spawn failed";
      set_reason(r, "invalid command line or environment");
      break;
  }
  r->state = ST_DONE; /* nothing was opened: nothing to close */
}

void mcpp_config_run_handshake_done(mcpp_config_run *r, int64_t now_ms,
                                    const char *protocol_version) {
  (void)now_ms;
  if (r->state != ST_SHAKING) return;
  free(r->protocol_version);
  r->protocol_version = protocol_version ? strdup(protocol_version) : NULL;
  const char *pv = r->protocol_version;
  if (pv && strcmp(pv, NO_PING_VERSION) >= 0) {
    mcpp__text why = {0};
    mcpp__text_printf(&why, "protocol %s has no ping", pv);
    fail(r, "unsupported", why.p);
    mcpp__text_free(&why);
    return;
  }
  r->state = r->plan.count ? ST_PING : ST_CLOSE;
}

void mcpp_config_run_handshake_failed(mcpp_config_run *r, int64_t now_ms, int gone,
                                      int has_code, int64_t code, const char *message) {
  (void)now_ms;
  if (r->state != ST_SHAKING) return;
  if (gone) {
    fail(r, "handshake failed", NULL);
    r->need_exit = 1;
    return;
  }
  mcpp__text why = {0};
  if (has_code)
    mcpp__text_printf(&why, "initialize failed: %lld %s", (long long)code,
                      message ? message : "");
  else
    mcpp__text_puts(&why, message ? message : "");
  fail(r, "handshake failed", why.p ? why.p : "");
  mcpp__text_free(&why);
}

void mcpp_config_run_handshake_timed_out(mcpp_config_run *r, int64_t now_ms) {
  (void)now_ms;
  if (r->state != ST_SHAKING) return;
  no_initialize_result(r);
}

static void add_rtt(mcpp_config_run *r, double rtt_ms) {
  if (r->n_rtts == r->cap_rtts) {
    size_t cap = r->cap_rtts ? r->cap_rtts * 2 : 8;
    double *p = realloc(r->rtts, cap * sizeof *p);
    if (!p) return; /* the pong still counts; its RTT is lost */
    r->rtts = p;
    r->cap_rtts = cap;
  }
  r->rtts[r->n_rtts++] = rtt_ms;
}

void mcpp_config_run_replied(mcpp_config_run *r, int64_t now_ms, mcpp_cli_reply kind,
                             double rtt_ms) {
  (void)now_ms;
  if (r->state != ST_PINGING) return;
  r->state = ST_PING;
  switch (kind) {
    case MCPP_REPLY_OK:
      r->sent++;
      r->received++;
      add_rtt(r, rtt_ms);
      return;
    case MCPP_REPLY_TIMEOUT:
      if (r->wait_ms < r->plan.timeout_ms) {
        /* The deadline cut this ping short: it is not counted. */
        r->state = ST_VERDICT;
        return;
      }
      r->sent++;
      return;
    case MCPP_REPLY_UNSUPPORTED:
      fail(r, "unsupported", NULL);
      return;
    case MCPP_REPLY_CLOSED:
      fail(r, "closed", NULL);
      r->need_exit = 1;
      return;
    case MCPP_REPLY_ERROR:
    case MCPP_REPLY_INVALID:
    default:
      r->sent++;
      return;
  }
}

void mcpp_config_run_interrupt(mcpp_config_run *r, int64_t now_ms) {
  (void)now_ms;
  r->stopped = 1;
  if (r->state == ST_WAIT) r->state = ST_PING;
}

/* How the connection ended, in docs/cli.md's words; never the URL. */
static void exit_reason(mcpp_config_run *r, const mcpp_config_end *e) {
  mcpp__text why = {0};
  if (e->connect_error)
    mcpp__text_printf(&why, "cannot connect: %s", e->connect_error);
  else if (e->exited && e->term_signal)
    mcpp__text_printf(&why, "server killed by signal %d", e->term_signal);
  else if (e->exited)
    mcpp__text_printf(&why, "server exited with status %d", e->exit_status);
  else
    mcpp__text_puts(&why, "connection closed");
  set_reason(r, why.p ? why.p : "connection closed");
  mcpp__text_free(&why);
}

void mcpp_config_run_closed(mcpp_config_run *r, int64_t now_ms, const mcpp_config_end *e) {
  (void)now_ms;
  if (r->state != ST_CLOSING) return;
  r->state = ST_DONE;
  if (!e) return;
  if (r->need_exit) exit_reason(r, e);
  /* The server's last words matter only when it would not talk. */
  if (!strcmp(r->status, "handshake failed") || !strcmp(r->status, "closed")) {
    char last[MCPP__TAIL_BYTES + 1];
    if (mcpp__tail_last_line(&r->err, last, sizeof last))
      r->last_stderr = mcpp__secrets_redact(&r->secrets, last);
  }
}

void mcpp_config_run_stderr(mcpp_config_run *r, const char *data, size_t len) {
  if (r && data) mcpp__tail_feed(&r->err, data, len);
}

void mcpp_config_run_unreadable(mcpp_config_run *r, uint64_t count,
                                const char *sentence) {
  if (!r) return;
  r->non_json_lines = count > ULONG_MAX ? ULONG_MAX : (unsigned long)count;
  if (!r->no_initialize || !sentence || !sentence[0]) return;
  mcpp__text why = {0};
  mcpp__text_printf(&why, "no initialize result; %s", sentence);
  if (why.p) set_reason(r, why.p);
  mcpp__text_free(&why);
}

static void verdict(mcpp_config_run *r) {
  if (r->sent == 0) {
    r->status = "timeout";
    set_reason(r, "no ping finished before the deadline");
  } else if (r->received < r->sent) {
    r->status = "loss";
  }
  r->state = ST_CLOSE;
}

void mcpp_config_run_next(mcpp_config_run *r, int64_t now_ms, mcpp_config_action *a) {
  memset(a, 0, sizeof *a);
  for (;;) {
    switch (r->state) {
      case ST_OPEN:
        r->state = ST_OPENING;
        a->what = MCPP_CONFIG_DO_OPEN;
        a->until_ms = r->end_at;
        return;
      case ST_OPENING:
        a->what = MCPP_CONFIG_DO_OPEN;
        a->until_ms = r->end_at;
        return;
      case ST_HANDSHAKE: {
        int64_t left = r->end_at - now_ms;
        if (left <= 0) {
          no_initialize_result(r);
          continue;
        }
        /* The deadline decides a timeout, so the request itself gets a
         * second more: both commands then say the same. */
        r->state = ST_SHAKING;
        a->what = MCPP_CONFIG_DO_HANDSHAKE;
        a->timeout_ms = (uint32_t)(left > UINT32_MAX - 1000 ? UINT32_MAX - 1000 : left) + 1000;
        a->until_ms = r->end_at;
        return;
      }
      case ST_SHAKING:
        a->what = MCPP_CONFIG_DO_HANDSHAKE;
        a->until_ms = r->end_at;
        return;
      case ST_WAIT:
      case ST_PING: {
        if (r->seq >= r->plan.count) {
          r->state = ST_VERDICT;
          continue;
        }
        if (r->seq && !r->stopped) {
          /* Pings keep to a grid from the first one, as ping(8) does. */
          int64_t wake = r->first_at + (int64_t)r->seq * r->plan.interval_ms;
          if (wake > r->end_at) wake = r->end_at;
          if (now_ms < wake) {
            r->state = ST_WAIT;
            a->what = MCPP_CONFIG_DO_WAIT;
            a->until_ms = wake;
            return;
          }
        }
        int64_t left = r->end_at - now_ms;
        if (left <= 0 || r->stopped) {
          r->state = ST_VERDICT;
          continue;
        }
        if (!r->seq) r->first_at = now_ms;
        r->seq++;
        /* Whole milliseconds, at least one: the engine counts in them. */
        r->wait_ms = left < r->plan.timeout_ms ? (uint32_t)left : r->plan.timeout_ms;
        r->state = ST_PINGING;
        a->what = MCPP_CONFIG_DO_PING;
        a->timeout_ms = r->wait_ms;
        a->until_ms = r->end_at;
        return;
      }
      case ST_PINGING:
        a->what = MCPP_CONFIG_DO_PING;
        a->timeout_ms = r->wait_ms;
        a->until_ms = r->end_at;
        return;
      case ST_VERDICT:
        verdict(r);
        continue;
      case ST_CLOSE:
        r->state = ST_CLOSING;
        /* fall through */
      case ST_CLOSING:
        a->what = MCPP_CONFIG_DO_CLOSE;
        a->want_exit = r->need_exit;
        return;
      default:
        a->what = MCPP_CONFIG_DO_DONE;
        return;
    }
  }
}

void mcpp_config_run_row(const mcpp_config_run *r, mcpp_config_row *row) {
  row->protocol_version = r->protocol_version;
  row->status = r->status;
  row->reason = r->reason;
  row->last_stderr = r->last_stderr;
  row->sent = r->sent;
  row->received = r->received;
  row->rtts_ms = r->rtts;
  row->n_rtts = r->n_rtts;
  row->non_json_lines = r->non_json_lines;
}
