/* The HTTP/1.1 response parser: however the reads split an answer, the same
 * head, body and end; framing, keep-alive, interim answers, joined headers,
 * what no server sends; and the request bytes a START goes as. */
#include <stdlib.h>
#include <string.h>

#include "mcpping.h"
#include "task.h"

/* What the parts came to: "H" a head, "E" an end; the body's bytes apart. */
typedef struct parts {
  char order[16];
  size_t n;
  char body[4096];
  size_t body_len;
} parts;

static void collect(void *arg, mcpp_http_part part, const char *data, size_t len) {
  parts *p = arg;
  if (part == MCPP_HTTP_PART_BODY) {
    ASSERT_LE(p->body_len + len, sizeof p->body);
    memcpy(p->body + p->body_len, data, len);
    p->body_len += len;
    if (p->n == 0 || p->order[p->n - 1] != 'B') p->order[p->n++] = 'B';
  } else {
    ASSERT_LT(p->n, sizeof p->order - 1);
    p->order[p->n++] = part == MCPP_HTTP_PART_HEAD ? 'H' : 'E';
  }
}

/* Feeds text in two reads cut at cut; returns feed's last result. */
static int parse(mcpp_http_response *r, const char *text, size_t cut, parts *p) {
  size_t n = strlen(text);
  if (cut > n) cut = n;
  int rc = mcpp_http_response_feed(r, text, cut, collect, p);
  if (rc == 0) rc = mcpp_http_response_feed(r, text + cut, n - cut, collect, p);
  return rc;
}

#define EVENT "event: message\r\ndata: {\"jsonrpc\":\"2.0\",\"id\":1}\r\n\r\n"
static const char sse_answer[] =
    "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nMcp-Session-Id: s-1\r\n"
    "Transfer-Encoding: chunked\r\n\r\n"
    "32\r\n" EVENT "\r\n0\r\n\r\n";

TEST(http_response_chunked_event_stream_is_the_same_however_it_is_split) {
  ASSERT_EQ(0x32, strlen(EVENT));
  size_t n = strlen(sse_answer);
  for (size_t cut = 0; cut <= n; cut++) {
    parts p = {0};
    mcpp_http_response *r = mcpp_http_response_new();
    ASSERT_EQ(0, parse(r, sse_answer, cut, &p));
    ASSERT_STR_EQ("HBE", p.order);
    ASSERT_MEM_EQ(p.body, p.body_len, EVENT);
    ASSERT_EQ(200, mcpp_http_response_status(r));
    ASSERT_STR_EQ("s-1", mcpp_http_response_header(r, "mcp-session-id"));
    ASSERT_STR_EQ("text/event-stream", mcpp_http_response_header(r, "content-type"));
    ASSERT_EQ(3, mcpp_http_response_header_count(r));
    ASSERT(mcpp_http_response_ended(r) && mcpp_http_response_keep_alive(r));
    mcpp_http_response_free(r);
  }
  /* A byte at a time. */
  parts p = {0};
  mcpp_http_response *r = mcpp_http_response_new();
  for (size_t i = 0; i < n; i++) ASSERT_EQ(0, mcpp_http_response_feed(r, sse_answer + i, 1, collect, &p));
  ASSERT_STR_EQ("HBE", p.order);
  ASSERT_MEM_EQ(p.body, p.body_len, EVENT);
  mcpp_http_response_free(r);
}

TEST(http_response_length_body_ends_at_its_length_and_no_body_at_once) {
  const char *const no_body[] = {"HTTP/1.1 202 Accepted\r\nContent-Length: 0\r\n\r\n",
                                 "HTTP/1.1 204 No Content\r\n\r\n",
                                 "HTTP/1.1 304 Not Modified\r\nContent-Length: 9\r\n\r\n"};
  for (size_t i = 0; i < 3; i++) {
    parts p = {0};
    mcpp_http_response *r = mcpp_http_response_new();
    ASSERT_EQ(0, parse(r, no_body[i], 0, &p));
    ASSERT_STR_EQ("HE", p.order);
    mcpp_http_response_free(r);
  }
  parts p = {0};
  mcpp_http_response *r = mcpp_http_response_new();
  ASSERT_EQ(0, parse(r, "HTTP/1.1 200 OK\r\ncontent-length: 5\r\n\r\nabcde", 40, &p));
  ASSERT_STR_EQ("HBE", p.order);
  ASSERT_MEM_EQ(p.body, p.body_len, "abcde");
  ASSERT_EQ(1, mcpp_http_response_closed(r)); /* already whole */
  mcpp_http_response_free(r);
}

TEST(http_response_body_without_length_ends_at_the_close_and_is_not_kept) {
  parts p = {0};
  mcpp_http_response *r = mcpp_http_response_new();
  ASSERT_EQ(0, parse(r, "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\n\r\ndata: 1\n\n", 9, &p));
  ASSERT_STR_EQ("HB", p.order);
  ASSERT(!mcpp_http_response_ended(r) && mcpp_http_response_until_close(r));
  ASSERT(!mcpp_http_response_keep_alive(r));
  ASSERT_EQ(1, mcpp_http_response_closed(r));
  ASSERT(mcpp_http_response_ended(r));
  mcpp_http_response_free(r);
  /* A length or chunked body cut short by the close is broken. */
  const char *const cut_short[] = {"HTTP/1.1 200 OK\r\nContent-Length: 9\r\n\r\nabc",
                                   "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nab",
                                   "HTTP/1.1 200 OK\r\nContent-"};
  for (size_t i = 0; i < 3; i++) {
    parts q = {0};
    r = mcpp_http_response_new();
    ASSERT_EQ(0, parse(r, cut_short[i], 0, &q));
    ASSERT_EQ(0, mcpp_http_response_closed(r));
    mcpp_http_response_free(r);
  }
}

static int kept(const char *answer) {
  parts p = {0};
  mcpp_http_response *r = mcpp_http_response_new();
  ASSERT_EQ(0, parse(r, answer, 0, &p));
  int k = mcpp_http_response_keep_alive(r);
  mcpp_http_response_free(r);
  return k;
}

TEST(http_response_says_which_connections_may_carry_the_next_request) {
  ASSERT(kept("HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n"));
  ASSERT(!kept("HTTP/1.1 200 OK\r\nConnection: Close\r\nContent-Length: 0\r\n\r\n"));
  ASSERT(!kept("HTTP/1.0 200 OK\r\nContent-Length: 0\r\n\r\n"));
  ASSERT(kept("HTTP/1.0 200 OK\r\nConnection: keep-alive\r\nContent-Length: 0\r\n\r\n"));
  ASSERT(!kept("HTTP/1.1 200 OK\r\nTransfer-Encoding: gzip\r\n\r\n"));
  /* Bytes past the answer's end belong to no request: the connection goes. */
  ASSERT(!kept("HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\nHTTP/1.1"));
}

TEST(http_response_skips_interim_answers_and_joins_folded_and_repeated_headers) {
  parts p = {0};
  mcpp_http_response *r = mcpp_http_response_new();
  ASSERT_EQ(0, parse(r,
                     "HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 200 OK\r\nContent-Length: 0\r\n"
                     "X-A: one\r\n  two\r\nx-a:three \r\n\r\n",
                     30, &p));
  ASSERT_STR_EQ("HE", p.order);
  ASSERT_EQ(2, mcpp_http_response_header_count(r));
  const char *name, *value;
  mcpp_http_response_header_at(r, 1, &name, &value);
  ASSERT_STR_EQ("x-a", name);
  ASSERT_STR_EQ("one two, three", value);
  ASSERT(mcpp_http_response_header(r, "x-b") == NULL);
  mcpp_http_response_free(r);
}

TEST(http_response_refuses_what_no_http_server_sends) {
  char many[2048] = "HTTP/1.1 200 OK\r\n";
  for (int i = 0; i < 101; i++) strcat(many, "X: y\r\n");
  strcat(many, "\r\n");
  char *endless = malloc(MCPP_HTTP_HEAD_MAX + 64);
  ASSERT(endless != NULL);
  strcpy(endless, "HTTP/1.1 200 OK\r\nX: ");
  memset(endless + strlen(endless), 'y', MCPP_HTTP_HEAD_MAX);
  endless[MCPP_HTTP_HEAD_MAX + 20] = '\0';
  const char *const bad[] = {
      "SSH-2.0-OpenSSH_9.2\r\n\r\n",
      "HTTP/1.1 20 OK\r\n\r\n",
      "HTTP/2 200 OK\r\n\r\n",
      "HTTP/1.1 200 OK\r\nno colon here\r\n\r\n",
      "HTTP/1.1 200 OK\r\nContent-Length: -1\r\n\r\n",
      "HTTP/1.1 200 OK\r\nContent-Length: 99999999999999999999\r\n\r\n",
      "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n",
      "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n2\r\nabc\r\n",
      "HTTP/1.1 200 OK\nContent-Length: 2\n\n{}",
      "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n2\nab\r\n0\r\n\r\n",
      many,
      endless,
  };
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
    for (size_t cut = 0; cut < 40; cut += 13) {
      parts p = {0};
      mcpp_http_response *r = mcpp_http_response_new();
      ASSERT_EQ(MCPP_ERR_NOT_HTTP, parse(r, bad[i], cut, &p));
      ASSERT(mcpp_http_response_problem(r)[0] != '\0');
      /* Final: nothing more is read. */
      ASSERT_EQ(MCPP_ERR_NOT_HTTP, mcpp_http_response_feed(r, "\r\n\r\n", 4, collect, &p));
      mcpp_http_response_free(r);
    }
  }
  parts p = {0};
  mcpp_http_response *r = mcpp_http_response_new();
  ASSERT_EQ(MCPP_ERR_NOT_HTTP, parse(r, bad[0], 0, &p));
  ASSERT_STR_EQ("not an HTTP/1.1 status line: \"SSH-2.0-OpenSSH_9.2\"", mcpp_http_response_problem(r));
  mcpp_http_response_free(r);
  free(endless);
}

TEST(http_request_bytes_are_what_node_sends) {
  mcpp_http_header headers[] = {{"Authorization", "Bearer \xc3\xa9"},
                                {"Accept", "application/json, text/event-stream"}};
  mcpp_http_do d = {0};
  d.method = MCPP_HTTP_POST;
  d.target = "/mcp?x=1";
  d.host = "::1";
  d.port = 8080;
  d.headers = headers;
  d.n_headers = 2;
  d.data = "{\"jsonrpc\":\"2.0\"}";
  d.len = strlen(d.data);
  const char want[] =
      "POST /mcp?x=1 HTTP/1.1\r\nHost: [::1]:8080\r\nAuthorization: Bearer \xe9\r\n"
      "Accept: application/json, text/event-stream\r\nContent-Length: 17\r\n\r\n"
      "{\"jsonrpc\":\"2.0\"}";
  char out[256];
  ASSERT_EQ(sizeof want - 1, mcpp_http_request_bytes(&d, out, sizeof out));
  ASSERT_MEM_EQ(out, sizeof want - 1, want);
  /* snprintf-style: the size, whatever fits. */
  ASSERT_EQ(sizeof want - 1, mcpp_http_request_bytes(&d, out, 10));
  /* Past Latin-1, the line goes as its UTF-8. */
  headers[0].value = "\xe2\x82\xac \xc3\xa9";
  size_t n = mcpp_http_request_bytes(&d, out, sizeof out);
  ASSERT(memmem(out, n, "Authorization: \xe2\x82\xac \xc3\xa9\r\n", 22) != NULL);
  mcpp_http_do get = {0};
  get.method = MCPP_HTTP_GET;
  get.https = 1;
  get.host = "example.com";
  get.port = 443;
  get.target = "/mcp";
  n = mcpp_http_request_bytes(&get, out, sizeof out);
  ASSERT_MEM_EQ(out, n, "GET /mcp HTTP/1.1\r\nHost: example.com\r\n\r\n");
}
