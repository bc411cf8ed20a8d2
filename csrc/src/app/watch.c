/* mcpping watch, sans I/O (mcpping/watch.h): per-server state, the
 * re-open backoff, /status, /metrics, the listener's routing, the log
 * lines and the redaction of secrets. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "app/secrets.h"
#include "app/tail.h"
#include "app/text.h"
#include "mcpping.h"

enum wstate {
  WS_STARTING = 0, /* not opened yet, or being opened */
  WS_ALIVE,
  WS_SUSPECT,
  WS_STALE,
  WS_RESTARTING, /* the connection's reconnect is starting a new server */
  WS_DOWN,       /* closed or failed to open: waiting for the backoff */
  WS_SKIPPED     /* not watched (skip_reason) */
};
static const char *const WS_NAMES[] = {"starting", "alive",      "suspect",
                                       "stale",    "restarting", "down",
                                       "skipped"};

typedef struct wserver {
  char *name, *transport, *peer, *protocol, *reason;
  mcpp__secrets secrets;
  enum wstate state;
  int64_t pid;
  int64_t due_ms; /* when to open; -1: not scheduled */
  int opened;     /* opened at least once: a later open is a restart */
  int opening;    /* given out by mcpp_watch_due, not yet opened or failed */
  char *lost;     /* the server died during that open: how (reconnecting's message) */
  uint32_t failed_in_row;
  double last_rtt_ms;
  int has_rtt;
  mcpp_metric_series fig;
  mcpp__tail err;     /* the server's stderr since it last opened */
  char *last_stderr;  /* its last line, redacted, at the last close */
} wserver;

struct mcpp_watch {
  wserver *s;
  size_t n;
  uint32_t initial_ms, max_delay_ms;
  double multiplier;
  char listen[96];
  mcpp__text out, taken;
  int stopping; /* after mcpp_watch_stopping: servers close, nothing more is said of them */
};

#define LOG "mcpping watch: "

static double policy(const char *name) {
  const mcpp_setting_info *s = mcpp_setting_find(name);
  return s ? s->policy : 0;
}

int mcpp_watch_new(mcpp_watch **out, const mcpp_cli_options *o) {
  *out = NULL;
  if (!o || o->version != MCPP_CLI_OPTIONS_V1 || o->mode != MCPP_CLI_WATCH)
    return MCPP_ERR_INVALID_ARGUMENT;
  mcpp_watch *w = calloc(1, sizeof *w);
  if (!w) return MCPP_ERR_NOMEM;
  w->initial_ms = (uint32_t)policy("reconnect.initial_ms");
  w->max_delay_ms = (uint32_t)policy("reconnect.max_delay_ms");
  w->multiplier = policy("reconnect.multiplier");
  snprintf(w->listen, sizeof w->listen, strchr(o->listen_host, ':') ? "[%s]:%d" : "%s:%d",
           o->listen_host, o->listen_port);
  *out = w;
  return 0;
}

static void server_free(wserver *s) {
  free(s->name), free(s->transport), free(s->peer), free(s->protocol), free(s->reason);
  free(s->last_stderr), free(s->lost);
  mcpp__secrets_free(&s->secrets);
}

void mcpp_watch_free(mcpp_watch *w) {
  if (!w) return;
  for (size_t i = 0; i < w->n; i++) server_free(&w->s[i]);
  free(w->s);
  mcpp__text_free(&w->out);
  mcpp__text_free(&w->taken);
  free(w);
}

static void set_text(const wserver *s, char **field, const char *v) {
  free(*field);
  *field = mcpp__secrets_redact(&s->secrets, v);
}

int mcpp_watch_add(mcpp_watch *w, const char *name, const char *transport,
                   const char *const *secrets, size_t nsecrets,
                   const char *skip_reason) {
  wserver *grown = realloc(w->s, (w->n + 1) * sizeof *grown);
  if (!grown) return MCPP_ERR_NOMEM;
  w->s = grown;
  wserver *s = &w->s[w->n];
  memset(s, 0, sizeof *s);
  if (mcpp__secrets_add_all(&s->secrets, secrets, nsecrets)) {
    server_free(s);
    return MCPP_ERR_NOMEM;
  }
  s->name = mcpp__secrets_redact(&s->secrets, name ? name : "");
  s->transport = strdup(transport ? transport : "");
  if (!s->name || !s->transport) {
    server_free(s);
    return MCPP_ERR_NOMEM;
  }
  s->state = skip_reason ? WS_SKIPPED : WS_STARTING;
  s->due_ms = skip_reason ? -1 : 0;
  set_text(s, &s->reason, skip_reason);
  return (int)w->n++;
}

static wserver *at(mcpp_watch *w, int i) {
  return i >= 0 && (size_t)i < w->n ? &w->s[i] : NULL;
}

void mcpp_watch_listening(mcpp_watch *w, const char *host, int port) {
  snprintf(w->listen, sizeof w->listen, strchr(host, ':') ? "[%s]:%d" : "%s:%d", host, port);
  size_t watched = 0;
  for (size_t i = 0; i < w->n; i++) watched += w->s[i].state != WS_SKIPPED;
  mcpp__text_printf(&w->out,
                    LOG "watching %zu server%s; metrics on http://%s/metrics, status on "
                        "http://%s/status\n",
                    watched, watched == 1 ? "" : "s", w->listen, w->listen);
  for (size_t i = 0; i < w->n; i++)
    if (w->s[i].state == WS_SKIPPED)
      mcpp__text_printf(&w->out, LOG "%s: not watched (%s)\n", w->s[i].name, w->s[i].reason);
}

void mcpp_watch_listen_failed(mcpp_watch *w, const char *why) {
  mcpp__text_printf(&w->out, LOG "cannot listen on %s: %s\n", w->listen, why ? why : "");
}

int mcpp_watch_due(mcpp_watch *w, int64_t now_ms, int64_t *next_ms) {
  int64_t next = -1;
  int pick = -1;
  for (size_t i = 0; i < w->n; i++) {
    wserver *s = &w->s[i];
    if (s->due_ms < 0) continue;
    if (pick < 0 && s->due_ms <= now_ms) pick = (int)i;
    else if (next < 0 || s->due_ms < next) next = s->due_ms;
  }
  if (pick >= 0) {
    w->s[pick].due_ms = -1;
    w->s[pick].opening = 1;
    if (next < 0 || next < now_ms) next = next < 0 ? -1 : now_ms;
  }
  *next_ms = next;
  return pick;
}

/* The wait before the next open of s: initial, doubling, at most max. */
static uint32_t backoff_ms(const mcpp_watch *w, const wserver *s) {
  double d = w->initial_ms;
  for (uint32_t k = 1; k < s->failed_in_row && d < w->max_delay_ms; k++) d *= w->multiplier;
  return d > w->max_delay_ms ? w->max_delay_ms : (uint32_t)d;
}

static void schedule(mcpp_watch *w, wserver *s, int64_t now_ms, const char *what,
                     const char *reason) {
  s->failed_in_row++;
  uint32_t wait = backoff_ms(w, s);
  s->due_ms = now_ms + wait;
  s->state = WS_DOWN;
  s->pid = 0;
  set_text(s, &s->reason, reason);
  char last[MCPP__TAIL_BYTES + 1];
  set_text(s, &s->last_stderr, mcpp__tail_last_line(&s->err, last, sizeof last) ? last : NULL);
  s->err.len = 0;
  mcpp__text_printf(&w->out, LOG "%s: %s: %s", s->name, what, s->reason ? s->reason : "");
  /* The driver's exit reasons often quote the stderr already. */
  if (s->last_stderr && !(s->reason && strstr(s->reason, s->last_stderr)))
    mcpp__text_printf(&w->out, " (last stderr: %s)", s->last_stderr);
  mcpp__text_printf(&w->out, "; retrying in %g s\n", wait / 1000.0);
}

void mcpp_watch_stderr(mcpp_watch *w, int i, const char *data, size_t len) {
  wserver *s = at(w, i);
  if (s && data) mcpp__tail_feed(&s->err, data, len);
}

void mcpp_watch_opened(mcpp_watch *w, int i, int64_t now_ms, const char *peer,
                       const char *protocol_version, int64_t pid) {
  if (w->stopping) return;
  wserver *s = at(w, i);
  if (!s) return;
  if (s->opened) s->fig.reconnects++;
  s->opened = 1;
  s->opening = 0;
  set_text(s, &s->lost, NULL);
  s->failed_in_row = 0;
  s->state = WS_ALIVE;
  s->pid = pid;
  set_text(s, &s->peer, peer);
  set_text(s, &s->protocol, protocol_version);
  set_text(s, &s->reason, NULL);
  set_text(s, &s->last_stderr, NULL);
  s->err.len = 0;
  mcpp__text_printf(&w->out, LOG "%s: up (%s, %s", s->name, s->peer ? s->peer : "",
                    s->transport);
  if (s->protocol) mcpp__text_printf(&w->out, ", protocol %s", s->protocol);
  if (pid > 0) mcpp__text_printf(&w->out, ", pid %lld", (long long)pid);
  mcpp__text_puts(&w->out, ")\n");
}

/* The sentence for why (the same words as --config's check). */
static char *worded(mcpp_watch_why why, const char *detail) {
  mcpp__text t = {0};
  switch (why) {
  case MCPP_WATCH_WHY_NO_INITIALIZE:
    mcpp__text_puts(&t, "no initialize result");
    if (detail && *detail) mcpp__text_printf(&t, "; %s", detail);
    break;
  case MCPP_WATCH_WHY_UNREACHABLE:
    mcpp__text_printf(&t, "cannot connect: %s", detail ? detail : "unreachable");
    break;
  case MCPP_WATCH_WHY_INVALID:
    mcpp__text_puts(&t, "invalid command line or environment");
    break;
  default:
    mcpp__text_puts(&t, detail && *detail ? detail : "connection closed");
  }
  return mcpp__text_take(&t);
}

void mcpp_watch_open_failed(mcpp_watch *w, int i, int64_t now_ms, mcpp_watch_why why,
                            const char *detail) {
  if (w->stopping) return;
  wserver *s = at(w, i);
  if (!s) return;
  s->opening = 0;
  /* The library's reconnect restarted a server that died before answering
   * initialize; how it died says more than the cancelled request. */
  char *text;
  if (s->lost) {
    mcpp__text t = {0};
    mcpp__text_printf(&t, "the server ended before answering initialize: %s", s->lost);
    text = mcpp__text_take(&t);
    set_text(s, &s->lost, NULL);
  } else {
    text = worded(why, detail);
  }
  schedule(w, s, now_ms, "cannot open", text);
  free(text);
}

void mcpp_watch_closed(mcpp_watch *w, int i, int64_t now_ms, mcpp_watch_why why,
                       const char *detail) {
  if (w->stopping) return;
  wserver *s = at(w, i);
  if (!s || s->state == WS_DOWN) return;
  s->failed_in_row = 0;
  char *text = worded(why, detail);
  schedule(w, s, now_ms, "closed", text);
  free(text);
}

static int event_type(const char *name) {
  for (int t = 0; t <= MCPP_EV_LAST; t++) {
    const char *n = mcpp_event_name((mcpp_event_type)t);
    if (n && name && !strcmp(n, name)) return t;
  }
  return -1;
}

void mcpp_watch_feed(mcpp_watch *w, int i, int64_t now_ms, const mcpp_watch_event *e) {
  if (w->stopping) return;
  wserver *s = at(w, i);
  int t = e && (e->version == 0 || e->version == MCPP_WATCH_EVENT_V1) ? event_type(e->name) : -1;
  if (!s || t < 0) return;
  /* A server waiting to be re-opened has no connection to speak of, but the
   * one being opened may die during it (RECONNECTING, below). */
  if (s->state == WS_DOWN && !(s->opening && t == MCPP_EV_RECONNECTING)) return;
  mcpp_event ev;
  memset(&ev, 0, sizeof ev);
  ev.type = (mcpp_event_type)t;
  ev.state = e->state && !strcmp(e->state, "closed") ? MCPP_STATE_CLOSED : MCPP_STATE_ALIVE;
  ev.invalid = e->invalid;
  ev.ping_seq = e->ping_seq;
  ev.rtt_us = e->rtt_s > 0 ? (uint64_t)(e->rtt_s * 1e6 + 0.5) : 0;
  mcpp_metric_series_observe(&s->fig, &ev);
  const char *proof = e->proof ? e->proof : "unknown";
  switch (ev.type) {
  case MCPP_EV_PONG:
  case MCPP_EV_PROBE_OK:
    s->last_rtt_ms = ev.rtt_us / 1000.0; /* whole µs: 1.215, not 1.2149999999999999 */
    s->has_rtt = 1;
    break;
  case MCPP_EV_SUSPECT:
    s->state = WS_SUSPECT;
    break;
  case MCPP_EV_STALE:
    s->state = WS_STALE;
    mcpp__text_printf(&w->out, LOG "%s: stale (proof: %s)\n", s->name, proof);
    break;
  case MCPP_EV_RECOVERED:
    s->state = WS_ALIVE;
    mcpp__text_printf(&w->out, LOG "%s: recovered (proof: %s)\n", s->name, proof);
    break;
  case MCPP_EV_RECONNECTING:
    if (s->opening) { /* not up yet: the open fails, and says how it died */
      if (!s->lost) set_text(s, &s->lost, e->message ? e->message : "connection closed");
      break;
    }
    s->state = WS_RESTARTING;
    s->pid = 0;
    set_text(s, &s->reason, e->message); /* why: "server exited with status 3" */
    mcpp__text_printf(&w->out, LOG "%s: restarting (attempt %lld)", s->name, (long long)e->attempt);
    if (s->reason) mcpp__text_printf(&w->out, ": %s", s->reason);
    mcpp__text_puts(&w->out, "\n");
    break;
  case MCPP_EV_RECONNECTED:
    s->state = WS_ALIVE;
    s->pid = e->pid;
    set_text(s, &s->reason, NULL);
    mcpp__text_printf(&w->out, LOG "%s: restarted (pid %lld)\n", s->name, (long long)e->pid);
    break;
  default:
    break;
  }
}

/* The figures of s as mcpp_metrics_render takes them. */
static mcpp_metric_series series_of(const wserver *s) {
  mcpp_metric_series x = s->fig;
  x.server = s->name;
  x.peer = s->peer ? s->peer : "";
  x.transport = s->transport;
  memset(x.states, 0, sizeof x.states);
  switch (s->state) {
  case WS_ALIVE: x.states[MCPP_STATE_ALIVE] = 1; break;
  case WS_SUSPECT: x.states[MCPP_STATE_SUSPECT] = 1; break;
  case WS_STALE:
  case WS_RESTARTING: x.states[MCPP_STATE_STALE] = 1; break;
  default: x.states[MCPP_STATE_CLOSED] = 1; break;
  }
  return x;
}

static int render_metrics(mcpp_watch *w, mcpp__text *t) {
  mcpp_metric_series *all = calloc(w->n + 1, sizeof *all);
  if (!all) return MCPP_ERR_NOMEM;
  size_t n = 0;
  for (size_t i = 0; i < w->n; i++)
    if (w->s[i].state != WS_SKIPPED) all[n++] = series_of(&w->s[i]);
  size_t len = mcpp_metrics_render(all, n, NULL, 0);
  char *buf = malloc(len + 1);
  if (buf) {
    mcpp_metrics_render(all, n, buf, len + 1);
    mcpp__text_put(t, buf, len);
  }
  free(buf);
  free(all);
  return buf ? 0 : MCPP_ERR_NOMEM;
}

static void render_status(mcpp_watch *w, mcpp__text *t) {
  mcpp__text_puts(t, "{\"listen\":");
  mcpp__text_json_string(t, w->listen);
  mcpp__text_puts(t, ",\"servers\":[");
  for (size_t i = 0; i < w->n; i++) {
    const wserver *s = &w->s[i];
    if (i) mcpp__text_puts(t, ",");
    mcpp__text_puts(t, "{\"name\":");
    mcpp__text_json_string(t, s->name);
    mcpp__text_puts(t, ",\"transport\":");
    mcpp__text_json_string(t, s->transport);
    mcpp__text_puts(t, ",\"state\":");
    mcpp__text_json_string(t, WS_NAMES[s->state]);
    mcpp__text_puts(t, ",\"peer\":");
    mcpp__text_json_string(t, s->peer);
    mcpp__text_puts(t, ",\"protocol_version\":");
    mcpp__text_json_string(t, s->protocol);
    if (s->pid > 0) mcpp__text_printf(t, ",\"pid\":%lld", (long long)s->pid);
    else mcpp__text_puts(t, ",\"pid\":null");
    mcpp__text_printf(t, ",\"restarts\":%llu,\"stale\":%llu,\"pings_sent\":%llu,"
                         "\"pongs_received\":%llu,\"last_rtt_ms\":",
                      (unsigned long long)s->fig.reconnects, (unsigned long long)s->fig.stale,
                      (unsigned long long)s->fig.pings_sent,
                      (unsigned long long)s->fig.pongs_received);
    if (s->has_rtt) mcpp__text_py_float(t, s->last_rtt_ms);
    else mcpp__text_puts(t, "null");
    mcpp__text_puts(t, ",\"reason\":");
    mcpp__text_json_string(t, s->reason);
    mcpp__text_puts(t, ",\"last_stderr\":");
    mcpp__text_json_string(t, s->last_stderr);
    mcpp__text_puts(t, "}");
  }
  mcpp__text_puts(t, "]}\n");
}

static void response(mcpp__text *t, const char *status, const char *type,
                     const char *extra, const mcpp__text *body, int head_only) {
  mcpp__text_printf(t, "HTTP/1.1 %s\r\nContent-Type: %s\r\nContent-Length: %zu\r\n%s"
                       "Cache-Control: no-store\r\nConnection: close\r\n\r\n",
                    status, type, body->len, extra ? extra : "");
  if (!head_only && body->len) mcpp__text_put(t, body->p, body->len);
}

int mcpp_watch_respond(mcpp_watch *w, int64_t now_ms, const char *head, size_t len,
                       char **out, size_t *out_len) {
  *out = NULL;
  *out_len = 0;
  char method[16] = "", path[256] = "";
  size_t line = 0;
  while (line < len && head[line] != '\r' && head[line] != '\n') line++;
  const char *sp1 = memchr(head, ' ', line);
  const char *sp2 = sp1 ? memchr(sp1 + 1, ' ', line - (size_t)(sp1 + 1 - head)) : NULL;
  mcpp__text body = {0}, t = {0};
  int rc = 0;
  const char *plain = "text/plain; charset=utf-8";
  if (!sp1 || !sp2 || (size_t)(sp1 - head) >= sizeof method ||
      strncmp(sp2 + 1, "HTTP/", 5)) {
    mcpp__text_puts(&body, "bad request\n");
    response(&t, "400 Bad Request", plain, NULL, &body, 0);
  } else {
    memcpy(method, head, (size_t)(sp1 - head));
    size_t pn = strcspn(sp1 + 1, "? ");
    if (pn > (size_t)(sp2 - sp1 - 1)) pn = (size_t)(sp2 - sp1 - 1);
    snprintf(path, sizeof path, "%.*s", (int)pn, sp1 + 1);
    int get = !strcmp(method, "GET"), headm = !strcmp(method, "HEAD");
    int metrics = !strcmp(path, "/metrics"), status = !strcmp(path, "/status");
    if (!metrics && !status) {
      mcpp__text_puts(&body, "not found: try /metrics or /status\n");
      response(&t, "404 Not Found", plain, NULL, &body, headm);
    } else if (!get && !headm) {
      mcpp__text_puts(&body, "method not allowed\n");
      response(&t, "405 Method Not Allowed", plain, "Allow: GET, HEAD\r\n", &body, 0);
    } else if (metrics) {
      rc = render_metrics(w, &body);
      response(&t, "200 OK", "text/plain; version=0.0.4; charset=utf-8", NULL, &body, headm);
    } else {
      render_status(w, &body);
      response(&t, "200 OK", "application/json", NULL, &body, headm);
    }
  }
  if (body.oom) rc = MCPP_ERR_NOMEM;
  mcpp__text_free(&body);
  size_t n = t.len;
  char *text = mcpp__text_take(&t);
  if (rc || !text) {
    free(text);
    return MCPP_ERR_NOMEM;
  }
  *out = text;
  *out_len = n;
  return 0;
}

void mcpp_watch_text_free(char *text) { free(text); }

void mcpp_watch_stopping(mcpp_watch *w) {
  /* A restart or an error met while closing is shutdown noise: the
   * stopping line is the last word on the servers, "stopped" the last. */
  w->stopping = 1;
  mcpp__text_puts(&w->out, LOG "stopping every server\n");
}

void mcpp_watch_stopped(mcpp_watch *w) {
  mcpp__text_puts(&w->out, LOG "stopped\n");
}

const char *mcpp_watch_output(mcpp_watch *w, size_t *len) {
  mcpp__text_free(&w->taken);
  w->taken = w->out;
  memset(&w->out, 0, sizeof w->out);
  *len = w->taken.len;
  return w->taken.p ? w->taken.p : "";
}
