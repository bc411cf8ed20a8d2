/* The Streamable HTTP client session (http_session.c, issue 22): what it
 * asks its host to do for each thing the host reports, driven here by a
 * host that records the actions instead of running them. */
#include <stdio.h>
#include <string.h>

#include "engine_fixture.h"
#include "engine/test_hooks.h"

/* One action as the test reads it: its kind and its strings copied. */
typedef struct seen {
  mcpp_http_do_kind kind;
  uint64_t exchange, tag, wait;
  uint32_t ms;
  int value, method;
  char data[512];
  char target[128];
  char headers[1024]; /* "Name: value\n" each */
  uint32_t headers_timeout_ms;
} seen;

typedef struct host {
  seen did[32];
  size_t n;
} host;

/* Drains the session's actions into h (replacing what it held). */
static void take(mcpp_http_session *s, host *h) {
  mcpp_http_do d;
  h->n = 0;
  while (mcpp_http_session_next(s, &d)) {
    if (h->n == 32) continue;
    seen *w = &h->did[h->n++];
    memset(w, 0, sizeof *w);
    w->kind = d.kind;
    w->exchange = d.exchange;
    w->tag = d.tag;
    w->wait = d.wait;
    w->ms = d.ms;
    w->value = d.value;
    w->method = d.method;
    w->headers_timeout_ms = d.headers_timeout_ms;
    if (d.data != NULL) snprintf(w->data, sizeof w->data, "%.*s", (int)d.len, d.data);
    if (d.target != NULL) snprintf(w->target, sizeof w->target, "%s", d.target);
    size_t at = 0;
    for (size_t i = 0; i < d.n_headers; i++)
      at += (size_t)snprintf(w->headers + at, sizeof w->headers - at, "%s: %s\n",
                             d.headers[i].name, d.headers[i].value);
  }
}

/* The first action of kind in h (NULL: none). */
static const seen *find(const host *h, mcpp_http_do_kind kind) {
  for (size_t i = 0; i < h->n; i++)
    if (h->did[i].kind == kind) return &h->did[i];
  return NULL;
}

static size_t count(const host *h, mcpp_http_do_kind kind) {
  size_t n = 0;
  for (size_t i = 0; i < h->n; i++) n += h->did[i].kind == kind;
  return n;
}

static const char call[] = "{\"jsonrpc\":\"2.0\",\"id\":\"c1\",\"method\":\"tools/call\"}";
static const char ping[] = "{\"jsonrpc\":\"2.0\",\"id\":\"mcpping-ka-1\",\"method\":\"ping\"}";
static const char note[] = "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}";
static const char answer[] = "{\"jsonrpc\":\"2.0\",\"id\":\"c1\",\"result\":{}}";

#define POST(s, frame, tag, direct) \
  ASSERT_EQ(0, mcpp_http_session_post((s), (frame), sizeof(frame) - 1, (tag), (direct)))
#define BODY(s, ex, text) ASSERT_EQ(0, mcpp_http_session_body((s), (ex), (text), strlen(text)))

static mcpp_http_session *open_session(const char *url, int listen) {
  mcpp_http_header extra[] = {{"X-Team", "blue"}};
  const char *problem = "unset";
  mcpp_http_session *s = mcpp_http_session_new(url, strlen(url), extra, 1, 4096, listen,
                                               &problem);
  return problem == NULL ? s : NULL;
}

/* A session whose handshake gave session id "s1" (the START taken). */
static mcpp_http_session *session_s1(host *h, int listen) {
  mcpp_http_session *s = open_session("http://u:p@127.0.0.1:8080/mcp", listen);
  if (s == NULL) return NULL;
  mcpp_http_session_post(s, call, sizeof call - 1, 1, 1);
  take(s, h);
  uint64_t ex = h->did[0].exchange;
  mcpp_http_session_response(s, ex, 200, "application/json", "s1", NULL);
  mcpp_http_session_body(s, ex, answer, sizeof answer - 1);
  mcpp_http_session_end(s, ex, 0);
  mcpp_http_session_settled(s, 1);
  mcpp_http_session_set_version(s, "2025-11-25");
  mcpp_http_session_opened(s);
  take(s, h);
  return s;
}

TEST(http_session_posts_learn_the_session_and_hand_the_answer_on) {
  host h;
  mcpp_http_session *s = open_session("http://u:p@127.0.0.1:8080/mcp", 0);
  ASSERT(s != NULL);
  POST(s, call, 1, 1);
  take(s, &h);
  ASSERT_EQ(1, (int)h.n);
  const seen *st = &h.did[0];
  ASSERT_EQ(MCPP_HTTP_DO_START, st->kind);
  ASSERT_EQ(MCPP_HTTP_POST, st->method);
  ASSERT_STR_EQ("/mcp", st->target);
  ASSERT_STR_EQ(call, st->data);
  /* The caller's header, the URL's credentials, then mcpping's own. */
  ASSERT(strstr(st->headers, "X-Team: blue\n") != NULL);
  ASSERT(strstr(st->headers, "Authorization: Basic dTpw\n") != NULL);
  ASSERT(strstr(st->headers, "Accept: application/json, text/event-stream\n") != NULL);
  ASSERT(strstr(st->headers, "Mcp-Session-Id") == NULL);
  uint64_t ex = st->exchange;
  ASSERT_EQ(0, mcpp_http_session_response(s, ex, 200, "application/json", "s1", NULL));
  take(s, &h);
  ASSERT_EQ(MCPP_HTTP_DO_SESSION, h.did[0].kind);
  ASSERT_STR_EQ("s1", h.did[0].data);
  ASSERT_STR_EQ("s1", mcpp_http_session_id(s));
  BODY(s, ex, "{\"jsonrpc\":\"2.0\",");
  BODY(s, ex, "\"id\":\"c1\",\"result\":{}}  ");
  ASSERT_EQ(0, mcpp_http_session_end(s, ex, 0));
  take(s, &h);
  ASSERT_EQ(1, (int)h.n);
  ASSERT_EQ(MCPP_HTTP_DO_RECEIVE, h.did[0].kind);
  ASSERT_STR_EQ(answer, h.did[0].data);
  /* From now on every request carries the session and the version. */
  mcpp_http_session_set_version(s, "2025-11-25");
  POST(s, note, 0, 0);
  take(s, &h);
  ASSERT(strstr(h.did[0].headers, "Mcp-Session-Id: s1\n") != NULL);
  ASSERT(strstr(h.did[0].headers, "MCP-Protocol-Version: 2025-11-25\n") != NULL);
  /* A 202 gives nothing; reports of an exchange it forgot are ignored. */
  ex = h.did[0].exchange;
  mcpp_http_session_response(s, ex, 202, NULL, NULL, NULL);
  mcpp_http_session_end(s, ex, 0);
  mcpp_http_session_end(s, ex, 0);
  mcpp_http_session_body(s, 999, "x", 1);
  take(s, &h);
  ASSERT_EQ(0, (int)h.n);
  mcpp_http_session_free(s);
}

TEST(http_session_a_404_renews_the_session_and_what_waits_goes_in_order) {
  host h;
  mcpp_http_session *s = session_s1(&h, 0);
  ASSERT(s != NULL);
  POST(s, ping, 7, 0);
  POST(s, call, 8, 0);
  take(s, &h);
  uint64_t ping_ex = h.did[0].exchange, call_ex = h.did[1].exchange;
  mcpp_http_session_response(s, ping_ex, 404, "text/plain", NULL, NULL);
  BODY(s, ping_ex, "Session not found");
  mcpp_http_session_end(s, ping_ex, 0);
  take(s, &h);
  /* The session is forgotten, the handshake runs again, the ping waits. */
  ASSERT_EQ(MCPP_HTTP_DO_SESSION, h.did[0].kind);
  ASSERT_STR_EQ("", h.did[0].data);
  ASSERT_EQ(MCPP_HTTP_DO_RENEW, h.did[1].kind);
  ASSERT_EQ(2, (int)h.n);
  /* The request that met the end did not run: it gets the server's 404. */
  mcpp_http_session_response(s, call_ex, 404, "text/plain", NULL, NULL);
  mcpp_http_session_end(s, call_ex, 0);
  take(s, &h);
  ASSERT_EQ(1, (int)h.n);
  ASSERT_EQ(MCPP_HTTP_DO_RECEIVE, h.did[0].kind);
  ASSERT(strstr(h.did[0].data, "\"id\":\"c1\"") != NULL);
  ASSERT(strstr(h.did[0].data, "HTTP 404") != NULL);
  /* Sent meanwhile: held; the handshake's own: sent now, without a session. */
  POST(s, note, 0, 0);
  POST(s, call, 9, 1);
  take(s, &h);
  ASSERT_EQ(1, (int)h.n);
  ASSERT(strstr(h.did[0].headers, "Mcp-Session-Id") == NULL);
  uint64_t init = h.did[0].exchange;
  mcpp_http_session_response(s, init, 200, "application/json", "s2", NULL);
  mcpp_http_session_end(s, init, 0);
  ASSERT_EQ(0, mcpp_http_session_renewed(s, 1, NULL));
  take(s, &h);
  ASSERT_EQ(MCPP_HTTP_DO_SESSION, h.did[0].kind);
  ASSERT_EQ(3, (int)h.n);
  ASSERT_STR_EQ(ping, h.did[1].data); /* in the order they were sent */
  ASSERT_EQ(7, (int)h.did[1].tag);
  ASSERT_STR_EQ(note, h.did[2].data);
  ASSERT(strstr(h.did[2].headers, "Mcp-Session-Id: s2\n") != NULL);
  mcpp_http_session_free(s);
}

TEST(http_session_a_failed_renewal_ends_the_session) {
  host h;
  mcpp_http_session *s = session_s1(&h, 0);
  POST(s, call, 3, 0);
  take(s, &h);
  uint64_t ex = h.did[0].exchange;
  mcpp_http_session_response(s, ex, 404, NULL, NULL, NULL);
  mcpp_http_session_end(s, ex, 0);
  POST(s, note, 0, 0); /* held */
  mcpp_http_session_renewed(s, 0, "no initialize result after 5000 ms");
  take(s, &h);
  const seen *g = find(&h, MCPP_HTTP_DO_GONE);
  ASSERT(g != NULL);
  ASSERT_STR_EQ("the session expired and initialize failed: no initialize result after 5000 ms",
                g->data);
  ASSERT(find(&h, MCPP_HTTP_DO_START) == NULL); /* what waited is not sent */
  mcpp_http_session_close(s);
  take(s, &h);
  ASSERT_EQ(MCPP_HTTP_DO_CLOSED, h.did[0].kind); /* no DELETE to a gone session */
  ASSERT_EQ(1, (int)h.n);
  mcpp_http_session_free(s);
}

TEST(http_session_an_sse_answer_is_resumed_with_last_event_id_until_it_comes) {
  host h;
  mcpp_http_session *s = session_s1(&h, 0);
  POST(s, call, 4, 0);
  take(s, &h);
  uint64_t ex = h.did[0].exchange;
  mcpp_http_session_response(s, ex, 200, "text/event-stream", NULL, NULL);
  BODY(s, ex, ": keep-alive\n\nid: e1\ndata: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/progress\"}\n\n");
  take(s, &h);
  ASSERT_EQ(MCPP_HTTP_DO_TOUCH, h.did[0].kind);
  ASSERT_EQ(MCPP_HTTP_DO_RECEIVE, h.did[1].kind);
  ASSERT_EQ(2, (int)h.n);
  /* The server closes the stream before the answer (SEP-1699). */
  mcpp_http_session_end(s, ex, 0);
  take(s, &h);
  ASSERT_EQ(1, (int)h.n);
  ASSERT_EQ(MCPP_HTTP_DO_WAIT, h.did[0].kind);
  ASSERT_EQ(250, (int)h.did[0].ms);
  mcpp_http_session_wake(s, h.did[0].wait);
  take(s, &h);
  ASSERT_EQ(MCPP_HTTP_DO_START, h.did[0].kind);
  ASSERT_EQ(MCPP_HTTP_GET, h.did[0].method);
  ASSERT(strstr(h.did[0].headers, "Last-Event-ID: e1\n") != NULL);
  ASSERT(strstr(h.did[0].headers, "Mcp-Session-Id: s1\n") != NULL);
  ASSERT_EQ(MCPP_HTTP_SHORT_TIMEOUT_MS, h.did[0].headers_timeout_ms);
  ex = h.did[0].exchange;
  mcpp_http_session_response(s, ex, 200, "text/event-stream", NULL, NULL);
  BODY(s, ex, "id: e2\ndata: {\"jsonrpc\":\"2.0\",\"id\":\"c1\",\"result\":{}}\n\n");
  take(s, &h);
  /* The answer ends its stream: the GET is cut, nothing more is resumed. */
  ASSERT_EQ(MCPP_HTTP_DO_RECEIVE, h.did[0].kind);
  ASSERT_STR_EQ(answer, h.did[0].data);
  ASSERT_EQ(MCPP_HTTP_DO_CUT, h.did[1].kind);
  ASSERT_EQ(ex, h.did[1].exchange);
  mcpp_http_session_end(s, ex, 1);
  mcpp_http_session_settled(s, 4);
  take(s, &h);
  ASSERT_EQ(0, (int)h.n);
  mcpp_http_session_free(s);
}

TEST(http_session_a_broken_answer_without_an_event_id_is_lost_at_once) {
  host h;
  mcpp_http_session *s = session_s1(&h, 0);
  POST(s, call, 5, 0);
  POST(s, ping, 6, 0);
  take(s, &h);
  uint64_t sse = h.did[0].exchange, json = h.did[1].exchange;
  mcpp_http_session_response(s, sse, 200, "text/event-stream", NULL, NULL);
  BODY(s, sse, "data: {\"jsonrpc\":\"2.0\",\"meth");
  mcpp_http_session_end(s, sse, 1);
  mcpp_http_session_response(s, json, 200, "application/json", NULL, NULL);
  BODY(s, json, "{\"jsonrpc\":");
  mcpp_http_session_end(s, json, 1);
  take(s, &h);
  ASSERT_EQ(2, (int)h.n);
  ASSERT_EQ(MCPP_HTTP_DO_LOST, h.did[0].kind);
  ASSERT_EQ(5, (int)h.did[0].tag);
  ASSERT_EQ(MCPP_HTTP_DO_LOST, h.did[1].kind);
  ASSERT_EQ(6, (int)h.did[1].tag);
  mcpp_http_session_free(s);
}

TEST(http_session_a_settled_request_cuts_what_still_reads_for_it) {
  host h;
  mcpp_http_session *s = session_s1(&h, 0);
  POST(s, call, 9, 0);
  take(s, &h);
  uint64_t ex = h.did[0].exchange;
  mcpp_http_session_settled(s, 9); /* timed out: no answer left to come */
  take(s, &h);
  ASSERT_EQ(1, (int)h.n);
  ASSERT_EQ(MCPP_HTTP_DO_CUT, h.did[0].kind);
  ASSERT_EQ(ex, h.did[0].exchange);
  mcpp_http_session_response(s, ex, 200, "text/event-stream", NULL, NULL);
  BODY(s, ex, "data: {}\n\n");
  take(s, &h);
  ASSERT_EQ(0, (int)h.n);
  mcpp_http_session_free(s);
}

TEST(http_session_a_body_past_the_bound_is_cut_and_answered) {
  host h;
  mcpp_http_session *s = session_s1(&h, 0);
  POST(s, call, 2, 0);
  take(s, &h);
  uint64_t ex = h.did[0].exchange;
  mcpp_http_session_response(s, ex, 200, "application/json", NULL, NULL);
  char big[3000];
  memset(big, ' ', sizeof big);
  mcpp_http_session_body(s, ex, big, sizeof big);
  mcpp_http_session_body(s, ex, big, sizeof big); /* 6000 > 4096 */
  take(s, &h);
  ASSERT_EQ(MCPP_HTTP_DO_CUT, h.did[0].kind);
  ASSERT_EQ(MCPP_HTTP_DO_RECEIVE, h.did[1].kind);
  ASSERT(strstr(h.did[1].data, "longer than 4096 bytes") != NULL);
  ASSERT(strstr(h.did[1].data, "\"id\":\"c1\"") != NULL);
  mcpp_http_session_end(s, ex, 1);
  take(s, &h);
  ASSERT_EQ(0, (int)h.n);
  mcpp_http_session_free(s);
}

TEST(http_session_the_listening_stream_opens_reopens_and_stops_for_good_on_405) {
  host h;
  mcpp_http_session *s = session_s1(&h, 1);
  ASSERT(s != NULL);
  const seen *get = find(&h, MCPP_HTTP_DO_START);
  ASSERT(get != NULL);
  ASSERT_EQ(MCPP_HTTP_GET, get->method);
  ASSERT(strstr(get->headers, "Accept: text/event-stream\n") != NULL);
  uint64_t ex = get->exchange;
  mcpp_http_session_response(s, ex, 200, "text/event-stream", NULL, NULL);
  take(s, &h);
  ASSERT_EQ(MCPP_HTTP_DO_LISTENING, h.did[0].kind);
  ASSERT_EQ(1, h.did[0].value);
  BODY(s, ex, "retry: 1000\nid: 9\ndata: {\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"}\n\n");
  mcpp_http_session_end(s, ex, 0);
  take(s, &h);
  ASSERT_EQ(MCPP_HTTP_DO_RECEIVE, h.did[0].kind);
  ASSERT_EQ(MCPP_HTTP_DO_LISTENING, h.did[1].kind);
  ASSERT_EQ(0, h.did[1].value);
  ASSERT_EQ(MCPP_HTTP_DO_WAIT, h.did[2].kind);
  ASSERT_EQ(1000, (int)h.did[2].ms); /* the stream's retry */
  mcpp_http_session_wake(s, h.did[2].wait);
  take(s, &h);
  ASSERT_EQ(MCPP_HTTP_DO_START, h.did[0].kind);
  ASSERT(strstr(h.did[0].headers, "Last-Event-ID: 9\n") != NULL);
  ex = h.did[0].exchange;
  mcpp_http_session_response(s, ex, 405, "text/plain", NULL, NULL);
  BODY(s, ex, "Method Not Allowed");
  mcpp_http_session_end(s, ex, 0);
  take(s, &h);
  ASSERT_EQ(1, (int)h.n); /* not open, and never asked again */
  ASSERT_EQ(MCPP_HTTP_DO_LISTENING, h.did[0].kind);
  mcpp_http_session_free(s);
}

TEST(http_session_a_404_on_the_listening_stream_renews_the_session) {
  host h;
  mcpp_http_session *s = session_s1(&h, 1);
  uint64_t ex = find(&h, MCPP_HTTP_DO_START)->exchange;
  mcpp_http_session_response(s, ex, 404, NULL, NULL, NULL);
  mcpp_http_session_end(s, ex, 0);
  take(s, &h);
  ASSERT(find(&h, MCPP_HTTP_DO_RENEW) != NULL);
  ASSERT(find(&h, MCPP_HTTP_DO_WAIT) == NULL);
  mcpp_http_session_free(s);
}

TEST(http_session_an_unreachable_server_ends_the_session_before_its_handshake_or_after) {
  host h;
  mcpp_http_session *s = open_session("http://127.0.0.1:1/mcp?key=secret", 0);
  POST(s, call, 1, 1);
  take(s, &h);
  mcpp_http_session_failed(s, h.did[0].exchange, "ECONNREFUSED");
  take(s, &h);
  ASSERT_EQ(1, (int)h.n);
  ASSERT_EQ(MCPP_HTTP_DO_GONE, h.did[0].kind);
  ASSERT_STR_EQ("cannot reach http://127.0.0.1:1/mcp?***: ECONNREFUSED", h.did[0].data);
  mcpp_http_session_free(s);

  s = session_s1(&h, 0);
  POST(s, call, 2, 0);
  POST(s, ping, 3, 0);
  take(s, &h);
  mcpp_http_session_failed(s, h.did[0].exchange, "ECONNRESET");
  take(s, &h);
  ASSERT_EQ(MCPP_HTTP_DO_CUT, h.did[0].kind); /* the ping's POST */
  const seen *g = find(&h, MCPP_HTTP_DO_GONE);
  ASSERT(g != NULL);
  ASSERT_STR_EQ("cannot reach http://***@127.0.0.1:8080/mcp: ECONNRESET", g->data);
  POST(s, note, 0, 0); /* over: nothing is sent */
  take(s, &h);
  ASSERT_EQ(0, (int)h.n);
  mcpp_http_session_free(s);
}

TEST(http_session_close_cuts_everything_then_deletes_the_session) {
  host h;
  mcpp_http_session *s = session_s1(&h, 1);
  POST(s, call, 2, 0);
  take(s, &h);
  ASSERT_EQ(0, mcpp_http_session_close(s));
  take(s, &h);
  ASSERT_EQ(2, (int)count(&h, MCPP_HTTP_DO_CUT)); /* the GET and the POST */
  const seen *del = find(&h, MCPP_HTTP_DO_START);
  ASSERT(del != NULL);
  ASSERT_EQ(MCPP_HTTP_DELETE, del->method);
  ASSERT(strstr(del->headers, "Mcp-Session-Id: s1\n") != NULL);
  mcpp_http_session_response(s, del->exchange, 405, NULL, NULL, NULL);
  mcpp_http_session_end(s, del->exchange, 0);
  take(s, &h);
  ASSERT_EQ(1, (int)h.n);
  ASSERT_EQ(MCPP_HTTP_DO_CLOSED, h.did[0].kind);
  mcpp_http_session_free(s);

  /* No session: nothing to delete. */
  s = open_session("http://127.0.0.1:9/mcp", 1);
  mcpp_http_session_close(s);
  take(s, &h);
  ASSERT_EQ(1, (int)h.n);
  ASSERT_EQ(MCPP_HTTP_DO_CLOSED, h.did[0].kind);
  mcpp_http_session_free(s);
}

TEST(http_session_a_307_on_the_same_origin_moves_the_session) {
  host h;
  mcpp_http_session *s = open_session("http://127.0.0.1:8080/mcp/", 0);
  POST(s, call, 1, 1);
  take(s, &h);
  uint64_t ex = h.did[0].exchange;
  mcpp_http_session_response(s, ex, 307, NULL, NULL, "/mcp");
  take(s, &h);
  ASSERT_EQ(MCPP_HTTP_DO_CUT, h.did[0].kind);
  ASSERT_EQ(MCPP_HTTP_DO_START, h.did[1].kind);
  ASSERT_STR_EQ("/mcp", h.did[1].target);
  ASSERT_STR_EQ(call, h.did[1].data);
  /* However long the Location is. */
  ex = h.did[1].exchange;
  char far[3000] = "/";
  memset(far + 1, 'p', sizeof far - 2);
  mcpp_http_session_response(s, ex, 308, NULL, NULL, far);
  mcpp_http_do d;
  ASSERT_EQ(1, mcpp_http_session_next(s, &d));
  ASSERT_EQ(MCPP_HTTP_DO_CUT, d.kind);
  ASSERT_EQ(1, mcpp_http_session_next(s, &d));
  ASSERT_EQ(MCPP_HTTP_DO_START, d.kind);
  ASSERT_EQ(sizeof far - 1, strlen(d.target));
  ex = d.exchange;
  ASSERT_EQ(0, mcpp_http_session_next(s, &d));
  /* Elsewhere: no. */
  mcpp_http_session_response(s, ex, 307, NULL, NULL, "http://evil.example/mcp");
  mcpp_http_session_end(s, ex, 0);
  take(s, &h);
  ASSERT_EQ(MCPP_HTTP_DO_RECEIVE, h.did[0].kind);
  ASSERT(strstr(h.did[0].data, "HTTP 307") != NULL);
  mcpp_http_session_free(s);
}

TEST(http_session_refuses_a_url_it_cannot_open) {
  const char *problem = NULL;
  ASSERT(mcpp_http_session_new("ftp://x/", 8, NULL, 0, 0, 1, &problem) == NULL);
  ASSERT(problem != NULL);
  ASSERT_STR_EQ("start", mcpp_http_do_name(MCPP_HTTP_DO_START));
  ASSERT_STR_EQ("closed", mcpp_http_do_name(MCPP_HTTP_DO_CLOSED));
}

/* The first exchange a START in h names (0: none came). */
static uint64_t started(const host *h) {
  const seen *st = find(h, MCPP_HTTP_DO_START);
  return st != NULL ? st->exchange : 0;
}

#define OK_OR_NOMEM(expr)                                                   \
  do {                                                                      \
    int rc_ = (expr);                                                       \
    if (rc_ != 0 && rc_ != MCPP_ERR_NOMEM) MCPP_FAIL("%s returned %d", #expr, rc_); \
  } while (0)

/* A session through most of its paths with the default allocator's
 * fail_at-th allocation (counted from here) failing. */
static void http_session_scenario(long fail_at) {
  host h;
  mcpp__default_fail_at = mcpp__default_allocs + fail_at;
  const char *problem = NULL;
  mcpp_http_session *s = mcpp_http_session_new("http://u:p@127.0.0.1:8080/mcp", 29, NULL, 0,
                                               4096, 1, &problem);
  if (s == NULL) {
    ASSERT_STR_EQ("out of memory", problem);
    return;
  }
  OK_OR_NOMEM(mcpp_http_session_post(s, call, sizeof call - 1, 1, 1));
  take(s, &h);
  uint64_t ex = started(&h);
  OK_OR_NOMEM(mcpp_http_session_response(s, ex, 200, "application/json", "s1", NULL));
  OK_OR_NOMEM(mcpp_http_session_body(s, ex, answer, sizeof answer - 1));
  OK_OR_NOMEM(mcpp_http_session_end(s, ex, 0));
  OK_OR_NOMEM(mcpp_http_session_settled(s, 1));
  OK_OR_NOMEM(mcpp_http_session_set_version(s, "2025-11-25"));
  OK_OR_NOMEM(mcpp_http_session_opened(s));
  take(s, &h);
  uint64_t get = started(&h);
  OK_OR_NOMEM(mcpp_http_session_response(s, get, 200, "text/event-stream", NULL, NULL));
  static const char ev[] = ": hi\n\nid: 3\ndata: {\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"}\n\n";
  OK_OR_NOMEM(mcpp_http_session_body(s, get, ev, sizeof ev - 1));
  OK_OR_NOMEM(mcpp_http_session_post(s, call, sizeof call - 1, 2, 0));
  take(s, &h);
  ex = started(&h);
  OK_OR_NOMEM(mcpp_http_session_response(s, ex, 200, "text/event-stream", NULL, NULL));
  static const char prime[] = "id: e1\ndata:\n\n";
  OK_OR_NOMEM(mcpp_http_session_body(s, ex, prime, sizeof prime - 1));
  OK_OR_NOMEM(mcpp_http_session_end(s, ex, 0));
  take(s, &h);
  const seen *w = find(&h, MCPP_HTTP_DO_WAIT);
  OK_OR_NOMEM(mcpp_http_session_wake(s, w != NULL ? w->wait : 0));
  take(s, &h);
  ex = started(&h);
  OK_OR_NOMEM(mcpp_http_session_response(s, ex, 404, "text/plain", NULL, NULL));
  OK_OR_NOMEM(mcpp_http_session_body(s, ex, "gone", 4));
  OK_OR_NOMEM(mcpp_http_session_end(s, ex, 0));
  OK_OR_NOMEM(mcpp_http_session_post(s, ping, sizeof ping - 1, 3, 0));
  OK_OR_NOMEM(mcpp_http_session_post(s, note, sizeof note - 1, 0, 0));
  OK_OR_NOMEM(mcpp_http_session_renewed(s, 1, NULL));
  take(s, &h);
  ex = started(&h);
  OK_OR_NOMEM(mcpp_http_session_failed(s, ex, "ECONNRESET"));
  OK_OR_NOMEM(mcpp_http_session_close(s));
  take(s, &h);
  mcpp_http_session_free(s);
}

TEST(out_of_memory_at_every_allocation_of_an_http_session_fails_cleanly) {
  long live = mcpp__default_live;
  long k = 1;
  for (;; k++) {
    long before = mcpp__default_allocs;
    http_session_scenario(k);
    ASSERT_EQ(live, mcpp__default_live); /* nothing left allocated */
    if (mcpp__default_allocs - before < k) break; /* no allocation failed: all were tried */
  }
  mcpp__default_fail_at = 0;
  ASSERT(k > 40);
}

TEST(http_session_an_oversize_event_ends_the_listening_stream_and_the_next_starts_afresh) {
  host h;
  mcpp_http_session *s = session_s1(&h, 1);
  uint64_t ex = started(&h);
  mcpp_http_session_response(s, ex, 200, "text/event-stream", NULL, NULL);
  BODY(s, ex, "id: 5\ndata: {}\n\n");
  char big[5000];
  memcpy(big, "data: ", 6);
  memset(big + 6, 'x', sizeof big - 6); /* past the session's 4096-byte bound */
  mcpp_http_session_body(s, ex, big, sizeof big);
  take(s, &h);
  ASSERT(find(&h, MCPP_HTTP_DO_CUT) != NULL);
  const seen *w = find(&h, MCPP_HTTP_DO_WAIT);
  ASSERT(w != NULL);
  mcpp_http_session_wake(s, w->wait);
  take(s, &h);
  ASSERT_EQ(MCPP_HTTP_DO_START, h.did[0].kind);
  /* A new parser: the old stream's event ID is not asked for again. */
  ASSERT(strstr(h.did[0].headers, "Last-Event-ID") == NULL);
  mcpp_http_session_free(s);
}

TEST(http_session_next_of_an_unknown_version_takes_and_writes_nothing) {
  mcpp_http_session *s = open_session("http://127.0.0.1:9/mcp", 0);
  POST(s, call, 1, 1);
  mcpp_http_do d;
  memset(&d, 0xab, sizeof d);
  ASSERT_EQ(MCPP_ERR_INVALID_ARGUMENT, mcpp_http_session_next_versioned(MCPP_HTTP_DO_V1 + 1, s, &d));
  ASSERT_EQ(0xabababab, (uint32_t)d.version);
  ASSERT_EQ(1, mcpp_http_session_next(s, &d)); /* still there */
  ASSERT_EQ(MCPP_HTTP_DO_V1, d.version);
  ASSERT_EQ(MCPP_HTTP_DO_START, d.kind);
  mcpp_http_session_free(s);
}
