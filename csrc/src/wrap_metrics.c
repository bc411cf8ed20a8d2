/*
 * mcpping wrap's metrics: the figures of the wrapped server as Prometheus
 * text on a loopback address, with the names, help texts and labels of
 * python/mcpping/metrics.py (one home for them there; a test compares).
 * Every HTTP request on the socket gets the figures and the connection
 * closes: enough for a scraper, and nothing to parse.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"
#include "wrap.h"

static const double rtt_bounds[17] = {
    0.00005, 0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025,
    0.05,    0.1,    0.25,    0.5,    1.0,   2.5,    5.0,   10.0};
static const char *const bound_text[17] = {
    "5e-05", "0.0001", "0.00025", "0.0005", "0.001", "0.0025",
    "0.005", "0.01",   "0.025",   "0.05",   "0.1",   "0.25",
    "0.5",   "1.0",    "2.5",     "5.0",    "10.0"};
static const char *const reasons[4] = {"timeout", "error", "invalid",
                                       "unsupported"};

void mcpp__wrap_figures_observe(mcpp__wrap_figures *f, const mcpp_event *ev) {
  f->state = ev->state;
  f->in_flight = ev->in_flight;
  switch (ev->type) {
  case MCPP_EV_PING:
    f->pings_sent++;
    break;
  case MCPP_EV_PONG: {
    double rtt = (double)ev->rtt_us / 1e6;
    size_t i = 0;
    while (i < 17 && rtt > rtt_bounds[i]) i++;
    f->rtt_buckets[i]++;
    f->rtt_sum += rtt;
    f->pongs++;
    break;
  }
  case MCPP_EV_TIMEOUT:
    /* A ping still out when the connection closes was abandoned. */
    if (ev->state != MCPP_STATE_CLOSED) f->failures[0]++;
    break;
  case MCPP_EV_PING_ERROR:
    f->failures[ev->invalid ? 2 : 1]++;
    break;
  case MCPP_EV_UNSUPPORTED:
    if (ev->ping_seq) f->failures[3]++;
    break;
  case MCPP_EV_PING_ANSWERED:
    f->answered++;
    break;
  case MCPP_EV_STALE:
    f->stale++;
    break;
  case MCPP_EV_PING_DEAF:
    f->ping_deaf++;
    break;
  default:
    break;
  }
}

struct mcpp__wrap_metrics {
  uv_tcp_t server;
  const mcpp__wrap_figures *figures;
  char peer[256]; /* escaped for a label value */
  int open_handles;
  int stopping;
};

typedef struct exchange {
  uv_tcp_t tcp;
  uv_write_t write;
  mcpp__wrap_metrics *m;
  size_t seen; /* request bytes read: we answer at the end of the head */
  char tail[4];
  char *body;
} exchange;

static void release(mcpp__wrap_metrics *m) {
  if (--m->open_handles == 0 && m->stopping) free(m);
}

static void on_exchange_closed(uv_handle_t *h) {
  exchange *x = h->data;
  mcpp__wrap_metrics *m = x->m;
  free(x->body);
  free(x);
  release(m);
}

static void on_server_closed(uv_handle_t *h) { release(h->data); }

static void put_help(mcpp__sb *sb, const char *name, const char *kind,
                     const char *help) {
  mcpp__sb_puts(sb, "# HELP ");
  mcpp__sb_puts(sb, name);
  mcpp__sb_putc(sb, ' ');
  mcpp__sb_puts(sb, help);
  mcpp__sb_puts(sb, "\n# TYPE ");
  mcpp__sb_puts(sb, name);
  mcpp__sb_putc(sb, ' ');
  mcpp__sb_puts(sb, kind);
  mcpp__sb_putc(sb, '\n');
}

static void put_sample(mcpp__sb *sb, const mcpp__wrap_metrics *m,
                       const char *name, const char *extra_key,
                       const char *extra, const char *value) {
  mcpp__sb_puts(sb, name);
  mcpp__sb_puts(sb, "{peer=\"");
  mcpp__sb_puts(sb, m->peer);
  mcpp__sb_puts(sb, "\",transport=\"stdio\"");
  if (extra_key) {
    mcpp__sb_putc(sb, ',');
    mcpp__sb_puts(sb, extra_key);
    mcpp__sb_puts(sb, "=\"");
    mcpp__sb_puts(sb, extra);
    mcpp__sb_putc(sb, '"');
  }
  mcpp__sb_puts(sb, "} ");
  mcpp__sb_puts(sb, value);
  mcpp__sb_putc(sb, '\n');
}

static void put_count(mcpp__sb *sb, const mcpp__wrap_metrics *m,
                      const char *name, const char *key, const char *extra,
                      uint64_t v) {
  char text[32];
  snprintf(text, sizeof text, "%llu", (unsigned long long)v);
  put_sample(sb, m, name, key, extra, text);
}

/* The exposition; sb sized by a first pass. */
static void render(mcpp__sb *sb, const mcpp__wrap_metrics *m) {
  const mcpp__wrap_figures *f = m->figures;
  static const struct {
    const char *name, *help;
    size_t field;
  } counters[] = {
      {"mcpping_pings_sent_total", "Pings sent to the peer, keepalive and manual.",
       offsetof(mcpp__wrap_figures, pings_sent)},
      {"mcpping_pongs_received_total", "Pongs received from the peer.",
       offsetof(mcpp__wrap_figures, pongs)},
      {"mcpping_pings_answered_total",
       "Pings from the peer that mcpping answered.",
       offsetof(mcpp__wrap_figures, answered)},
      {"mcpping_stale_total", "Times the peer was declared stale.",
       offsetof(mcpp__wrap_figures, stale)},
      {"mcpping_ping_deaf_total",
       "Times the peer was found ping-deaf: pings failed, a probe was answered.",
       offsetof(mcpp__wrap_figures, ping_deaf)},
      {"mcpping_reconnects_total", "Reconnects to the peer.",
       offsetof(mcpp__wrap_figures, reconnects)}};
  for (size_t i = 0; i < sizeof counters / sizeof counters[0]; i++) {
    put_help(sb, counters[i].name, "counter", counters[i].help);
    put_count(sb, m, counters[i].name, NULL, NULL,
              *(const uint64_t *)((const char *)f + counters[i].field));
  }
  put_help(sb, "mcpping_ping_failures_total", "counter",
           "Pings that got no pong, by reason: timeout, error (a JSON-RPC "
           "error), invalid (a result that is not an object), unsupported "
           "(-32601 or -32602).");
  for (int i = 0; i < 4; i++)
    put_count(sb, m, "mcpping_ping_failures_total", "reason", reasons[i],
              f->failures[i]);
  put_help(sb, "mcpping_ping_rtt_seconds", "histogram",
           "Round-trip time of answered pings, in seconds.");
  uint64_t cumulative = 0;
  for (int i = 0; i < 18; i++) {
    cumulative += f->rtt_buckets[i];
    put_count(sb, m, "mcpping_ping_rtt_seconds_bucket", "le",
              i < 17 ? bound_text[i] : "+Inf", cumulative);
  }
  put_count(sb, m, "mcpping_ping_rtt_seconds_count", NULL, NULL, cumulative);
  char sum[48];
  snprintf(sum, sizeof sum, "%.9g", f->rtt_sum);
  put_sample(sb, m, "mcpping_ping_rtt_seconds_sum", NULL, NULL, sum);
  put_help(sb, "mcpping_peer_state", "gauge",
           "Connections to the peer in each state; closed is 1 once none is "
           "open.");
  for (int st = MCPP_STATE_ALIVE; st <= MCPP_STATE_CLOSED; st++)
    put_count(sb, m, "mcpping_peer_state", "state",
              mcpp_state_name((mcpp_state)st), f->state == (mcpp_state)st);
  put_help(sb, "mcpping_in_flight_requests", "gauge",
           "Application requests awaiting an answer from the peer.");
  put_count(sb, m, "mcpping_in_flight_requests", NULL, NULL, f->in_flight);
}

static void on_answered(uv_write_t *req, int status) {
  exchange *x = req->data;
  uv_close((uv_handle_t *)&x->tcp, on_exchange_closed);
}

static void answer(exchange *x) {
  uv_read_stop((uv_stream_t *)&x->tcp);
  mcpp__sb sb;
  mcpp__sb_init(&sb, NULL, 0);
  render(&sb, x->m);
  size_t body_len = sb.len;
  char head[160];
  int hn = snprintf(head, sizeof head,
                    "HTTP/1.1 200 OK\r\nContent-Type: text/plain; "
                    "version=0.0.4; charset=utf-8\r\nContent-Length: %zu\r\n"
                    "Connection: close\r\n\r\n",
                    body_len);
  x->body = malloc((size_t)hn + body_len + 1);
  if (!x->body) {
    uv_close((uv_handle_t *)&x->tcp, on_exchange_closed);
    return;
  }
  memcpy(x->body, head, (size_t)hn);
  mcpp__sb_init(&sb, x->body + hn, body_len + 1);
  render(&sb, x->m);
  uv_buf_t b = uv_buf_init(x->body, (unsigned)((size_t)hn + body_len));
  x->write.data = x;
  if (uv_write(&x->write, (uv_stream_t *)&x->tcp, &b, 1, on_answered))
    uv_close((uv_handle_t *)&x->tcp, on_exchange_closed);
}

static void on_alloc(uv_handle_t *h, size_t suggested, uv_buf_t *b) {
  static _Thread_local char rbuf[4096];
  *b = uv_buf_init(rbuf, sizeof rbuf);
}

static void on_read(uv_stream_t *s, ssize_t n, const uv_buf_t *b) {
  exchange *x = s->data;
  if (n == 0) return;
  if (n < 0 || x->seen + (size_t)n > 65536) {
    uv_close((uv_handle_t *)&x->tcp, on_exchange_closed);
    return;
  }
  /* The head ends at the first blank line. */
  for (ssize_t i = 0; i < n; i++) {
    memmove(x->tail, x->tail + 1, 3);
    x->tail[3] = b->base[i];
    if (memcmp(x->tail, "\r\n\r\n", 4) == 0 || memcmp(x->tail + 2, "\n\n", 2) == 0) {
      answer(x);
      return;
    }
  }
  x->seen += (size_t)n;
}

static void on_connection(uv_stream_t *server, int status) {
  mcpp__wrap_metrics *m = server->data;
  if (status < 0 || m->stopping) return;
  exchange *x = calloc(1, sizeof *x);
  if (!x) return;
  x->m = m;
  uv_tcp_init(server->loop, &x->tcp);
  x->tcp.data = x;
  m->open_handles++;
  if (uv_accept(server, (uv_stream_t *)&x->tcp) ||
      uv_read_start((uv_stream_t *)&x->tcp, on_alloc, on_read))
    uv_close((uv_handle_t *)&x->tcp, on_exchange_closed);
}

static void escape_label(char *out, size_t cap, const char *in) {
  size_t n = 0;
  for (; *in && n + 3 < cap; in++) {
    if (*in == '\\' || *in == '"') out[n++] = '\\';
    if (*in == '\n') {
      out[n++] = '\\';
      out[n++] = 'n';
      continue;
    }
    out[n++] = *in;
  }
  out[n] = '\0';
}

void mcpp__wrap_metrics_set_peer(mcpp__wrap_metrics *m, const char *peer) {
  escape_label(m->peer, sizeof m->peer, peer);
}

void mcpp__wrap_metrics_set_server(mcpp__wrap_metrics *m, const char *server) {
  /* The server label is metrics.c's (wt/metrics); this renderer has none. */
  (void)m;
  (void)server;
}

/* "127.0.0.1:9464", "[::1]:9464", "localhost:9464", ":9464" (loopback). */
static int parse_addr(const char *addr, struct sockaddr_storage *ss) {
  const char *colon = strrchr(addr, ':');
  if (!colon) return UV_EINVAL;
  char *end;
  long port = strtol(colon + 1, &end, 10);
  if (*end || colon[1] == '\0' || port < 0 || port > 65535) return UV_EINVAL;
  char host[64];
  size_t hn = (size_t)(colon - addr);
  if (hn >= sizeof host) return UV_EINVAL;
  memcpy(host, addr, hn);
  host[hn] = '\0';
  if (hn >= 2 && host[0] == '[' && host[hn - 1] == ']') {
    memmove(host, host + 1, hn - 2);
    host[hn - 2] = '\0';
  }
  if (!*host || strcmp(host, "localhost") == 0) strcpy(host, "127.0.0.1");
  if (uv_ip4_addr(host, (int)port, (struct sockaddr_in *)ss) == 0) {
    unsigned char first =
        (unsigned char)(((struct sockaddr_in *)ss)->sin_addr.s_addr & 0xff);
    return first == 127 ? 0 : UV_EACCES;
  }
  if (uv_ip6_addr(host, (int)port, (struct sockaddr_in6 *)ss) == 0)
    return strcmp(host, "::1") == 0 ? 0 : UV_EACCES;
  return UV_EINVAL;
}

int mcpp__wrap_metrics_start(mcpp__wrap_metrics **out, uv_loop_t *loop,
                             const char *addr, const char *peer,
                             const mcpp__wrap_figures *figures, char *url,
                             size_t url_cap, char *errbuf, size_t cap) {
  struct sockaddr_storage ss;
  memset(&ss, 0, sizeof ss);
  int rc = parse_addr(addr, &ss);
  if (rc) {
    snprintf(errbuf, cap,
             rc == UV_EACCES
                 ? "--metrics %s: only a loopback address (127.0.0.1, ::1, "
                   "localhost) is served"
                 : "--metrics %s: expected HOST:PORT (127.0.0.1:9464)",
             addr);
    return rc;
  }
  mcpp__wrap_metrics *m = calloc(1, sizeof *m);
  if (!m) return UV_ENOMEM;
  m->figures = figures;
  mcpp__wrap_metrics_set_peer(m, peer);
  uv_tcp_init(loop, &m->server);
  m->server.data = m;
  m->open_handles = 1;
  rc = uv_tcp_bind(&m->server, (const struct sockaddr *)&ss, 0);
  if (rc == 0) rc = uv_listen((uv_stream_t *)&m->server, 16, on_connection);
  if (rc) {
    snprintf(errbuf, cap, "--metrics %s: %s", addr, uv_strerror(rc));
    m->stopping = 1;
    uv_close((uv_handle_t *)&m->server, on_server_closed);
    return rc;
  }
  struct sockaddr_storage bound;
  int len = sizeof bound;
  char host[64] = "";
  uv_tcp_getsockname(&m->server, (struct sockaddr *)&bound, &len);
  if (bound.ss_family == AF_INET6) {
    uv_ip6_name((struct sockaddr_in6 *)&bound, host, sizeof host);
    snprintf(url, url_cap, "http://[%s]:%d/metrics", host,
             ntohs(((struct sockaddr_in6 *)&bound)->sin6_port));
  } else {
    uv_ip4_name((struct sockaddr_in *)&bound, host, sizeof host);
    snprintf(url, url_cap, "http://%s:%d/metrics", host,
             ntohs(((struct sockaddr_in *)&bound)->sin_port));
  }
  *out = m;
  return 0;
}

static void close_exchange(uv_handle_t *h, void *arg) {
  if (h->data && h->data != arg && h->type == UV_TCP && !uv_is_closing(h)) {
    exchange *x = h->data;
    if (x->m == arg) uv_close(h, on_exchange_closed);
  }
}

void mcpp__wrap_metrics_stop(mcpp__wrap_metrics *m) {
  if (!m || m->stopping) return;
  m->stopping = 1;
  uv_walk(m->server.loop, close_exchange, m);
  uv_close((uv_handle_t *)&m->server, on_server_closed);
}
