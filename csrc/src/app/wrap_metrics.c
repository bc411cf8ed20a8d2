/*
 * mcpping wrap's metrics: the figures of the wrapped server as Prometheus
 * text on a loopback address, rendered by metrics.c (the one home of the
 * names, help texts, labels and buckets).
 * Every HTTP request on the socket gets the figures and the connection
 * closes: enough for a scraper, and nothing to parse.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine/internal.h"
#include "wrap.h"

void mcpp__wrap_figures_observe(mcpp__wrap_figures *f, const mcpp_event *ev) {
  f->state = ev->state;
  f->in_flight = ev->in_flight;
  mcpp_metric_series_observe(&f->counts, ev);
}

struct mcpp__wrap_metrics {
  uv_tcp_t server;
  const mcpp__wrap_figures *figures;
  char peer[256];   /* the peer label (the renderer escapes it) */
  char server_name[256]; /* the server label: the config entry's name */
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

/* The exposition of the one series this wrap serves, as snprintf. */
static size_t render(const mcpp__wrap_metrics *m, char *out, size_t cap) {
  const mcpp__wrap_figures *f = m->figures;
  mcpp_metric_series s = f->counts;
  s.server = m->server_name;
  s.peer = m->peer;
  s.transport = "stdio";
  s.reconnects = f->reconnects; /* wrap's own restarts of the server */
  memset(s.states, 0, sizeof s.states);
  if ((int)f->state >= 0 && (int)f->state < MCPP_METRIC_STATES)
    s.states[f->state] = 1;
  s.in_flight = f->in_flight;
  return mcpp_metrics_render(&s, 1, out, cap);
}

static void on_answered(uv_write_t *req, int status) {
  exchange *x = req->data;
  uv_close((uv_handle_t *)&x->tcp, on_exchange_closed);
}

static void answer(exchange *x) {
  uv_read_stop((uv_stream_t *)&x->tcp);
  size_t body_len = render(x->m, NULL, 0);
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
  render(x->m, x->body + hn, body_len + 1);
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

static void copy_label(char *out, size_t cap, const char *in) {
  snprintf(out, cap, "%s", in ? in : "");
}

void mcpp__wrap_metrics_set_peer(mcpp__wrap_metrics *m, const char *peer) {
  copy_label(m->peer, sizeof m->peer, peer);
}

void mcpp__wrap_metrics_set_server(mcpp__wrap_metrics *m, const char *server) {
  copy_label(m->server_name, sizeof m->server_name, server);
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
  /* The config entry's name until wrap says one: the peer's first name. */
  mcpp__wrap_metrics_set_server(m, peer);
  uv_tcp_init(loop, &m->server);
  m->server.data = m;
  m->open_handles = 1;
  rc = uv_tcp_bind(&m->server, (const struct sockaddr *)&ss, 0);
  if (rc == 0) rc = uv_listen((uv_stream_t *)&m->server, 16, on_connection);
  if (rc) {
    /* The errno name, as watch says it ("cannot listen on ...: EADDRINUSE"). */
    snprintf(errbuf, cap, "--metrics %s: cannot listen: %s", addr, uv_err_name(rc));
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
