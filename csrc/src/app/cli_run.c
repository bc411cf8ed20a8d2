/* The mcpping command's check as a sans-I/O state machine (app.h): count,
 * interval, deadline, the per-reply and connect timeouts, the choice of
 * method, exit statuses, and every byte of the report (docs/cli.md). The
 * binding does the I/O it is asked for and feeds back what happened. */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "app/text.h"
#include "mcpping.h"

/* The first protocol version without ping (it has server/discover). */
static const char NO_PING_VERSION[] = "2026-07-28";

enum {
  ST_OPEN,     /* OPEN not asked yet */
  ST_OPENING,  /* waiting for mcpp_cli_open_done */
  ST_TOOLS,    /* LIST_TOOLS not asked yet */
  ST_LISTING,  /* waiting for mcpp_cli_tools */
  ST_SEND,     /* the next check is due */
  ST_SENDING,  /* waiting for mcpp_cli_replied */
  ST_WAIT,     /* between checks */
  ST_SUMMARY,  /* print the summary */
  ST_EXIT
};

struct mcpp_cli_run {
  const mcpp_cli_options *o;
  int state, status, returned;
  int64_t deadline_at; /* INT64_MAX: none */
  int64_t first_at;    /* the first check, for the grid and the time */
  int64_t next_at;
  uint64_t seq, sent, received;
  mcpp_cli_method method;
  char *peer;
  mcpp_rtt_stats *stats;
  mcpp__text out, err;
  char *closed; /* why the connection closed after an answer, or NULL */
};

static const char *method_name(mcpp_cli_method m) {
  switch (m) {
    case MCPP_METHOD_DISCOVER: return "server/discover";
    case MCPP_METHOD_TOOLS_LIST: return "tools/list";
    default: return "ping";
  }
}

/* What an answer without a result object says when the binding has no
 * words of its own for it. */
static const char NO_RESULT[] = "the answer has no result object";

int mcpp_cli_run_new(mcpp_cli_run **out, const mcpp_cli_options *o,
                     int64_t now_ms) {
  *out = NULL;
  if (!o || o->version != MCPP_CLI_OPTIONS_V1 || o->mode != MCPP_CLI_CHECK)
    return MCPP_ERR_INVALID_ARGUMENT;
  mcpp_cli_run *r = calloc(1, sizeof *r);
  if (!r) return MCPP_ERR_NOMEM;
  if (mcpp_rtt_stats_new(&r->stats, 0, NULL)) {
    free(r);
    return MCPP_ERR_NOMEM;
  }
  r->o = o;
  r->state = ST_OPEN;
  r->deadline_at = o->deadline_ms ? now_ms + o->deadline_ms : INT64_MAX;
  r->method = o->method;
  *out = r;
  return 0;
}

void mcpp_cli_run_free(mcpp_cli_run *r) {
  if (!r) return;
  mcpp_rtt_stats_free(r->stats);
  mcpp__text_free(&r->out);
  mcpp__text_free(&r->err);
  free(r->closed);
  free(r->peer);
  free(r);
}

/* Bytes handed out by the last next() are written by now: start afresh. */
static void fresh(mcpp_cli_run *r) {
  if (!r->returned) return;
  r->returned = 0;
  r->out.len = r->err.len = 0;
}

static void finish(mcpp_cli_run *r, int status, const char *why) {
  r->status = status;
  r->state = ST_EXIT;
  if (why) mcpp__text_printf(&r->err, "mcpping: %s\n", why);
}

static void finishf(mcpp_cli_run *r, int status, const char *fmt,
                    const char *a, const char *b) {
  mcpp__text why = {0};
  mcpp__text_printf(&why, fmt, a, b ? b : "");
  finish(r, status, why.p ? why.p : "out of memory");
  mcpp__text_free(&why);
}

static const char *peer_name(const mcpp_cli_run *r) {
  return r->peer ? r->peer : "";
}

void mcpp_cli_open_done(mcpp_cli_run *r, int64_t now_ms,
                        const mcpp_cli_opened *op) {
  fresh(r);
  if (r->state != ST_OPENING) return;
  const mcpp_cli_options *o = r->o;
  const char *why = op->reason ? op->reason : "unknown error";
  switch (op->result) {
    case MCPP_OPEN_OK: break;
    case MCPP_OPEN_SPAWN_FAILED:
      /* The driver's sentence: "cannot start FILE: why (ENOENT)". */
      finish(r, MCPP_EXIT_CONNECT, why);
      return;
    case MCPP_OPEN_CONNECT_FAILED: {
      /* The URL as written, unless it holds credentials or a query
       * (where secrets go): then as records show it, those as ***, so a
       * probe's log never holds them. */
      char shown[2048];
      mcpp_http_url u;
      if (mcpp_http_url_parse(o->url, strlen(o->url), &u) != NULL)
        snprintf(shown, sizeof shown, "the URL");
      else if (u.userinfo || memchr(u.target, '?', u.target_len))
        mcpp_http_url_text(&u, MCPP_HTTP_URL_SHOWN, shown, sizeof shown);
      else
        snprintf(shown, sizeof shown, "%s", o->url);
      finishf(r, MCPP_EXIT_CONNECT, "cannot connect to %s: %s", shown, why);
      return;
    }
    case MCPP_OPEN_HANDSHAKE_FAILED:
      finishf(r, MCPP_EXIT_CONNECT, "handshake failed: %s", why, NULL);
      return;
    case MCPP_OPEN_TIMED_OUT: {
      char t[40];
      uint32_t ms = o->connect_timeout_ms;
      if (r->deadline_at != INT64_MAX && o->deadline_ms < ms) ms = o->deadline_ms;
      mcpp__text_repr(t, sizeof t, ms / 1000.0);
      /* reason: what the server wrote instead, if the binding saw it
       * (mcpp_runtime_unreadable). */
      mcpp__text instead = {0};
      if (op->reason && op->reason[0]) mcpp__text_printf(&instead, "; %s", op->reason);
      finishf(r, MCPP_EXIT_CONNECT,
              o->init ? "no connection and handshake within %s s (--connect-timeout)%s"
                      : "no connection within %s s (--connect-timeout)%s",
              t, instead.p);
      mcpp__text_free(&instead);
      return;
    }
    case MCPP_OPEN_LOG_FAILED:
    default:
      finishf(r, MCPP_EXIT_USAGE, "cannot open log: %s", why, NULL);
      return;
  }
  free(r->peer);
  r->peer = strdup(op->peer ? op->peer : "");
  const char *proto = op->protocol_version;
  int modern = proto && strcmp(proto, NO_PING_VERSION) >= 0;
  if (r->method == MCPP_METHOD_AUTO)
    r->method = modern ? MCPP_METHOD_DISCOVER : MCPP_METHOD_PING;
  else if (r->method == MCPP_METHOD_PING && modern) {
    finishf(r, MCPP_EXIT_REFUSED,
            "ping unsupported: protocol %s has no ping (--method auto checks it with server/discover)",
            proto, NULL);
    return;
  }
  if (o->json) {
    mcpp__text_put(&r->out, "{\"event\":\"connected\",\"peer\":", 28);
    mcpp__text_json_string(&r->out, peer_name(r));
    mcpp__text_printf(&r->out, ",\"transport\":");
    mcpp__text_json_string(&r->out, op->transport);
    mcpp__text_printf(&r->out, ",\"protocol_version\":");
    mcpp__text_json_string(&r->out, proto);
    mcpp__text_printf(&r->out, ",\"session_id\":");
    mcpp__text_json_string(&r->out, op->session_id);
    mcpp__text_printf(&r->out, ",\"method\":\"%s\"}\n", method_name(r->method));
  } else {
    mcpp__text_printf(&r->out, "MCPPING %s (%s, ", peer_name(r),
                     op->transport ? op->transport : "stdio");
    if (proto) mcpp__text_printf(&r->out, "protocol %s", proto);
    else mcpp__text_printf(&r->out, "no handshake");
    mcpp__text_printf(&r->out, "): method %s, timeout %.1f s, interval %.1f s\n",
                     method_name(r->method), o->timeout_ms / 1000.0,
                     o->interval_ms / 1000.0);
  }
  (void)now_ms;
  r->state = o->nexpect_tools ? ST_TOOLS : ST_SEND;
}

void mcpp_cli_tools(mcpp_cli_run *r, int64_t now_ms, mcpp_cli_reply kind,
                    const char *const *names, size_t nnames, int has_code,
                    int64_t code, const char *message) {
  fresh(r);
  (void)now_ms;
  if (r->state != ST_LISTING) return;
  const mcpp_cli_options *o = r->o;
  if (kind == MCPP_REPLY_CLOSED) {
    finishf(r, MCPP_EXIT_CONNECT, "connection closed: %s",
            message ? message : "", NULL);
    return;
  }
  if (kind != MCPP_REPLY_OK) {
    char t[24];
    snprintf(t, sizeof t, "%u", (unsigned)o->timeout_ms);
    if (kind == MCPP_REPLY_TIMEOUT)
      finishf(r, MCPP_EXIT_REFUSED,
              "--expect-tool: tools/list got no answer after %s ms", t, NULL);
    else if (has_code) {
      char c[24];
      snprintf(c, sizeof c, "%lld", (long long)code);
      finishf(r, MCPP_EXIT_REFUSED, "--expect-tool: tools/list failed: %s %s",
              c, message ? message : "");
    } else
      finishf(r, MCPP_EXIT_REFUSED, "--expect-tool: tools/list failed: %s",
              message ? message : kind == MCPP_REPLY_INVALID ? NO_RESULT : "", NULL);
    return;
  }
  for (size_t i = 0; i < o->nexpect_tools; i++) {
    size_t j = 0;
    while (j < nnames && strcmp(names[j], o->expect_tools[i])) j++;
    if (j == nnames) {
      finishf(r, MCPP_EXIT_REFUSED, "%s does not list the tool '%s' (--expect-tool)",
              peer_name(r), o->expect_tools[i]);
      return;
    }
  }
  if (o->json && !o->quiet) {
    mcpp__text_printf(&r->out, "{\"event\":\"tools\",\"expected\":[");
    for (size_t i = 0; i < o->nexpect_tools; i++) {
      if (i) mcpp__text_put(&r->out, ",", 1);
      mcpp__text_json_string(&r->out, o->expect_tools[i]);
    }
    mcpp__text_printf(&r->out, "],\"listed\":%zu}\n", nnames);
  }
  r->state = ST_SEND;
}

/* One line per reply, timeout or error, naming the method (docs/cli.md). */
static void line_start(mcpp_cli_run *r, const char *event) {
  mcpp__text_printf(&r->out, "{\"event\":\"%s\",\"seq\":%llu,\"method\":\"%s\"",
                   event, (unsigned long long)r->seq, method_name(r->method));
}

static void report(mcpp_cli_run *r, mcpp_cli_reply kind, double rtt_ms,
                   int has_code, int64_t code, const char *message) {
  const mcpp_cli_options *o = r->o;
  if (o->quiet) return;
  const char *m = method_name(r->method);
  unsigned long long seq = (unsigned long long)r->seq;
  const char *msg = message ? message : kind == MCPP_REPLY_INVALID ? NO_RESULT : "";
  if (o->json) {
    switch (kind) {
      case MCPP_REPLY_OK:
        line_start(r, "reply");
        mcpp__text_printf(&r->out, ",\"rtt_ms\":");
        mcpp__text_py_float(&r->out, nearbyint(rtt_ms * 1000) / 1000);
        break;
      case MCPP_REPLY_TIMEOUT:
        line_start(r, "timeout");
        mcpp__text_printf(&r->out, ",\"timeout_ms\":%u", (unsigned)o->timeout_ms);
        break;
      case MCPP_REPLY_INVALID:
        line_start(r, "invalid");
        mcpp__text_printf(&r->out, ",\"message\":");
        mcpp__text_json_string(&r->out, msg);
        break;
      default:
        line_start(r, kind == MCPP_REPLY_ERROR ? "error" : "unsupported");
        if (has_code) mcpp__text_printf(&r->out, ",\"code\":%lld", (long long)code);
        else mcpp__text_printf(&r->out, ",\"code\":null");
        mcpp__text_printf(&r->out, ",\"message\":");
        mcpp__text_json_string(&r->out, msg);
    }
    mcpp__text_put(&r->out, "}\n", 2);
    return;
  }
  const char *name = peer_name(r);
  switch (kind) {
    case MCPP_REPLY_OK:
      mcpp__text_printf(&r->out, "%s reply from %s: seq=%llu time=%.3f ms\n", m,
                       name, seq, rtt_ms);
      break;
    case MCPP_REPLY_TIMEOUT:
      mcpp__text_printf(&r->out, "%s timeout from %s: seq=%llu no answer after %u ms\n",
                       m, name, seq, (unsigned)o->timeout_ms);
      break;
    case MCPP_REPLY_INVALID:
      mcpp__text_printf(&r->out, "%s invalid reply from %s: seq=%llu %s\n", m,
                       name, seq, msg);
      break;
    default:
      mcpp__text_printf(&r->out, "%s %s from %s: seq=%llu ", m,
                       kind == MCPP_REPLY_ERROR ? "error" : "refused", name, seq);
      if (has_code) mcpp__text_printf(&r->out, "code=%lld ", (long long)code);
      mcpp__text_printf(&r->out, "%s\n", msg);
  }
}

static void after_check(mcpp_cli_run *r) {
  if (r->o->count && r->sent >= r->o->count) {
    r->state = ST_SUMMARY;
    return;
  }
  r->next_at = r->first_at + (int64_t)r->sent * r->o->interval_ms;
  r->state = ST_WAIT;
}

void mcpp_cli_replied(mcpp_cli_run *r, int64_t now_ms, mcpp_cli_reply kind,
                      double rtt_ms, int has_code, int64_t code,
                      const char *message) {
  fresh(r);
  (void)now_ms;
  if (r->state != ST_SENDING) return;
  if (kind == MCPP_REPLY_ERROR && has_code && code == -32601)
    kind = MCPP_REPLY_UNSUPPORTED; /* JSON-RPC "method not found" */
  switch (kind) {
    case MCPP_REPLY_OK:
      r->received++;
      mcpp_rtt_stats_add(r->stats, rtt_ms); /* counted even with -q */
      report(r, kind, rtt_ms, 0, 0, NULL);
      break;
    case MCPP_REPLY_CLOSED:
      if (!r->received) {
        /* Gone before its first answer: it never came up for the check. */
        r->sent--;
        r->seq--;
        finishf(r, MCPP_EXIT_CONNECT, "connection closed: %s",
                message ? message : "", NULL);
        return;
      }
      /* Gone after answering: this check is lost, the run ends early and
       * its last line says why (a server that died is not "alive"). */
      free(r->closed);
      r->closed = strdup(message ? message : "");
      r->state = ST_SUMMARY;
      return;
    case MCPP_REPLY_UNSUPPORTED:
      report(r, kind, 0, has_code, code, message);
      if (r->o->method == MCPP_METHOD_AUTO && r->method == MCPP_METHOD_PING) {
        /* A server that refuses ping is checked by tools/list instead: the
         * refusal proves it alive, and is not a loss. */
        r->sent--;
        r->seq--;
        r->method = MCPP_METHOD_TOOLS_LIST;
        r->state = ST_SEND;
        return;
      }
      {
        mcpp__text why = {0};
        mcpp__text_printf(&why, "%s unsupported: ", method_name(r->method));
        if (has_code) mcpp__text_printf(&why, "code=%lld ", (long long)code);
        mcpp__text_printf(&why, "%s", message ? message : "");
        finish(r, MCPP_EXIT_REFUSED, why.p ? why.p : "unsupported");
        mcpp__text_free(&why);
      }
      return;
    default:
      report(r, kind, 0, has_code, code, message);
  }
  after_check(r);
}

void mcpp_cli_interrupt(mcpp_cli_run *r, int64_t now_ms) {
  fresh(r);
  (void)now_ms;
  switch (r->state) {
    case ST_OPEN:
    case ST_OPENING:
    case ST_TOOLS:
    case ST_LISTING:
      finish(r, MCPP_EXIT_CONNECT, "interrupted before the check began");
      return;
    case ST_SENDING:
      /* Cut short by Ctrl-C or -w: neither sent nor lost. */
      r->sent--;
      r->seq--;
      /* fall through */
    case ST_SEND:
    case ST_WAIT:
      r->state = ST_SUMMARY;
      return;
    default:
      return;
  }
}

static void format_loss(char *buf, size_t cap, double pct) {
  double one = nearbyint(pct * 10) / 10;
  if (one == floor(one)) snprintf(buf, cap, "%.0f%%", one);
  else snprintf(buf, cap, "%.1f%%", one);
}

static void summary(mcpp_cli_run *r, int64_t now_ms) {
  const mcpp_cli_options *o = r->o;
  double loss = r->sent ? (double)(r->sent - r->received) / r->sent * 100 : 0;
  int64_t time_ms = r->sent ? now_ms - r->first_at : 0;
  mcpp_rtt_summary s;
  mcpp_rtt_stats_summary(r->stats, &s);
  if (o->json) {
    static const char *const keys[] = {"min", "avg", "max", "mdev", "p50", "p99"};
    double v[] = {s.min, s.avg, s.max, s.mdev, s.p50, s.p99};
    mcpp__text_printf(&r->out,
                     "{\"event\":\"summary\",\"sent\":%llu,\"received\":%llu,\"loss_pct\":",
                     (unsigned long long)r->sent, (unsigned long long)r->received);
    mcpp__text_py_float(&r->out, nearbyint(loss * 10) / 10);
    mcpp__text_printf(&r->out, ",\"rtt_ms\":{");
    for (int i = 0; i < 6; i++) {
      mcpp__text_printf(&r->out, "%s\"%s\":", i ? "," : "", keys[i]);
      mcpp__text_py_float(&r->out, s.count ? nearbyint(v[i] * 1000) / 1000 : NAN);
    }
    mcpp__text_put(&r->out, "}}\n", 3);
  } else {
    char l[32];
    format_loss(l, sizeof l, loss);
    mcpp__text_printf(&r->out, "\n--- %s mcpping statistics ---\n", peer_name(r));
    mcpp__text_printf(&r->out, "%llu sent, %llu received, %s loss, time %lld ms\n",
                     (unsigned long long)r->sent, (unsigned long long)r->received,
                     l, (long long)time_ms);
    if (s.count)
      mcpp__text_printf(&r->out, "rtt min/avg/max/mdev = %.3f/%.3f/%.3f/%.3f ms\n",
                       s.min, s.avg, s.max, s.mdev);
  }
  if (r->sent && r->received == r->sent) {
    finish(r, MCPP_EXIT_ALIVE, NULL);
  } else if (!r->sent) {
    finish(r, MCPP_EXIT_MISSING, "no check was sent");
  } else {
    char missing[64];
    snprintf(missing, sizeof missing, "%llu of %llu replies missing",
             (unsigned long long)(r->sent - r->received),
             (unsigned long long)r->sent);
    if (r->closed)
      finishf(r, MCPP_EXIT_MISSING, "connection closed: %s; %s", r->closed, missing);
    else
      finish(r, MCPP_EXIT_MISSING, missing);
  }
}

static uint32_t min_left(uint32_t ms, int64_t deadline_at, int64_t now) {
  if (deadline_at == INT64_MAX) return ms;
  int64_t left = deadline_at - now;
  if (left < 1) left = 1;
  return left < ms ? (uint32_t)left : ms;
}

void mcpp_cli_next(mcpp_cli_run *r, int64_t now_ms, mcpp_cli_action *a) {
  fresh(r);
  const mcpp_cli_options *o = r->o;
  memset(a, 0, sizeof *a);
  for (;;) {
    switch (r->state) {
      case ST_OPEN:
        r->state = ST_OPENING;
        a->what = MCPP_CLI_DO_OPEN;
        a->timeout_ms = min_left(o->connect_timeout_ms, r->deadline_at, now_ms);
        break;
      case ST_TOOLS:
        r->state = ST_LISTING;
        a->what = MCPP_CLI_DO_LIST_TOOLS;
        a->timeout_ms = min_left(o->timeout_ms, r->deadline_at, now_ms);
        break;
      case ST_WAIT: {
        int64_t wake = r->next_at < r->deadline_at ? r->next_at : r->deadline_at;
        if (now_ms < wake) {
          a->what = MCPP_CLI_DO_WAIT;
          a->until_ms = wake;
          break;
        }
        r->state = ST_SEND;
        continue;
      }
      case ST_SEND:
        if (now_ms >= r->deadline_at || (o->count && r->sent >= o->count)) {
          r->state = ST_SUMMARY;
          continue;
        }
        if (!r->sent) r->first_at = now_ms;
        r->seq++;
        r->sent++;
        r->state = ST_SENDING;
        a->what = MCPP_CLI_DO_SEND;
        a->method = method_name(r->method);
        a->timeout_ms = o->timeout_ms;
        a->until_ms = r->deadline_at == INT64_MAX ? 0 : r->deadline_at;
        break;
      case ST_SUMMARY:
        summary(r, now_ms);
        continue;
      case ST_EXIT:
        a->what = MCPP_CLI_DO_EXIT;
        a->status = r->status;
        break;
      default: /* waiting for an outcome: asked again, the answer is the same */
        a->what = r->state == ST_OPENING ? MCPP_CLI_DO_OPEN
                  : r->state == ST_LISTING ? MCPP_CLI_DO_LIST_TOOLS
                                           : MCPP_CLI_DO_SEND;
        a->method = method_name(r->method);
        a->timeout_ms = o->timeout_ms;
        break;
    }
    break;
  }
  a->out = r->out.p ? r->out.p : "";
  a->out_len = r->out.len;
  a->err = r->err.p ? r->err.p : "";
  a->err_len = r->err.len;
  r->returned = 1;
}
