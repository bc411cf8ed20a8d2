/*
 * libFuzzer harness for the Streamable HTTP client session (http_session.c):
 * the input is a script a host would report, a byte per step (and the
 * bytes after some steps as a body chunk): posts, responses of every
 * status and media type, body chunks, ends clean and broken, failures,
 * settled requests, wakes, renewals, close. Whatever the order, the
 * session asks only for what a host can do: every START names a new
 * exchange; a CUT names one the host still runs (started, not ended,
 * failed or cut); a WAIT is no longer than the rules' 30 s; LISTENING is
 * 0 or 1; CLOSED comes at most once, and only after close. ASan and
 * valgrind see no leak once the session is freed.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "mcpping.h"

#define CHECK(cond) \
  do {              \
    if (!(cond)) abort(); \
  } while (0)

#define MAX_EX 4096 /* more than an input can start */

typedef struct host {
  uint64_t running[MAX_EX]; /* the exchanges the host runs */
  uint8_t responded[MAX_EX];
  size_t n;
  uint64_t last_started, last_wait;
  int closing, closed;
} host;

static int runs(const host *h, uint64_t id) {
  for (size_t i = 0; i < h->n; i++)
    if (h->running[i] == id) return 1;
  return 0;
}

static void stop(host *h, uint64_t id) {
  for (size_t i = 0; i < h->n; i++)
    if (h->running[i] == id) {
      h->n--;
      h->running[i] = h->running[h->n];
      h->responded[i] = h->responded[h->n];
      return;
    }
}

/* The exchange the host runs chosen by b, answered or not (0: none). */
static uint64_t pick_where(const host *h, uint8_t b, int responded) {
  size_t k = 0;
  for (size_t i = 0; i < h->n; i++) k += h->responded[i] == responded;
  if (k == 0) return 0;
  k = b % k;
  for (size_t i = 0; i < h->n; i++)
    if (h->responded[i] == responded && k-- == 0) return h->running[i];
  return 0;
}

static void mark_responded(host *h, uint64_t id) {
  for (size_t i = 0; i < h->n; i++)
    if (h->running[i] == id) h->responded[i] = 1;
}

static void take(mcpp_http_session *s, host *h) {
  mcpp_http_do d;
  while (mcpp_http_session_next(s, &d)) {
    switch (d.kind) {
      case MCPP_HTTP_DO_START:
        CHECK(d.exchange > h->last_started);
        CHECK(d.host != NULL && d.target != NULL && d.target[0] == '/');
        h->last_started = d.exchange;
        CHECK(h->n < MAX_EX);
        h->responded[h->n] = 0;
        h->running[h->n++] = d.exchange;
        break;
      case MCPP_HTTP_DO_CUT:
        CHECK(runs(h, d.exchange));
        stop(h, d.exchange);
        break;
      case MCPP_HTTP_DO_WAIT:
        CHECK(d.ms <= 30000);
        h->last_wait = d.wait;
        break;
      case MCPP_HTTP_DO_LISTENING:
        CHECK(d.value == 0 || d.value == 1);
        break;
      case MCPP_HTTP_DO_CLOSED:
        CHECK(h->closing && !h->closed);
        h->closed = 1;
        break;
      case MCPP_HTTP_DO_RECEIVE:
      case MCPP_HTTP_DO_GONE:
        CHECK(d.data != NULL);
        break;
      default:
        break;
    }
  }
}


static const char *const frames[] = {
    "{\"jsonrpc\":\"2.0\",\"id\":\"c1\",\"method\":\"tools/call\"}",
    "{\"jsonrpc\":\"2.0\",\"id\":\"mcpping-ka-1\",\"method\":\"ping\"}",
    "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}",
    "{\"jsonrpc\":\"2.0\",\"id\":0,\"method\":\"initialize\"}",
};
static const int statuses[] = {200, 202, 204, 307, 308, 400, 404, 405, 429, 500, 503, 200};
static const char *const types[] = {"application/json", "text/event-stream", NULL,
                                    "text/html", "text/event-stream; charset=utf-8"};
static const char *const sids[] = {NULL, "s1", "s2", ""};
static const char *const locations[] = {NULL, "/mcp2", "http://other.example/mcp",
                                        "http://127.0.0.1:8080/mcp"};

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  const char *problem = NULL;
  mcpp_http_header extra[] = {{"X-Key", "k"}};
  mcpp_http_session *s = mcpp_http_session_new("http://u:p@127.0.0.1:8080/mcp", 29, extra, 1,
                                               512, 1, &problem);
  CHECK(s != NULL && problem == NULL);
  host h = {0};
  uint64_t tags = 0;
  size_t i = 0;
  while (i + 1 < size) {
    uint8_t op = data[i++], arg = data[i++];
    switch (op % 14) {
      case 0: {
        const char *f = frames[arg % 4];
        mcpp_http_session_post(s, f, strlen(f), arg & 4 ? ++tags : 0, arg & 8);
        break;
      }
      case 1: mcpp_http_session_settled(s, tags ? 1 + arg % tags : 0); break;
      case 2: {
        /* arg: status and media type; the next byte: which exchange, the
         * session id and the Location. */
        uint8_t more = i < size ? data[i++] : 0;
        uint64_t ex = pick_where(&h, more >> 4, 0);
        mark_responded(&h, ex);
        mcpp_http_session_response(s, ex, statuses[arg % 12], types[arg / 12 % 5],
                                   sids[more % 4], locations[more / 4 % 4]);
        break;
      }
      case 3:
      case 4: {
        /* The next bytes, up to arg of them, as a body chunk. */
        size_t n = arg % 64;
        if (n > size - i) n = size - i;
        mcpp_http_session_body(s, pick_where(&h, op, 1), (const char *)data + i, n);
        i += n;
        break;
      }
      case 5: {
        uint64_t ex = pick_where(&h, arg, 1);
        stop(&h, ex);
        mcpp_http_session_end(s, ex, arg & 1);
        break;
      }
      case 6: {
        uint64_t ex = pick_where(&h, arg, 0);
        stop(&h, ex);
        mcpp_http_session_failed(s, ex, arg & 1 ? "ECONNREFUSED" : NULL);
        break;
      }
      case 7: mcpp_http_session_set_version(s, arg & 1 ? "2025-11-25" : NULL); break;
      case 8: mcpp_http_session_opened(s); break;
      case 9: mcpp_http_session_renewed(s, arg & 1, "boom"); break;
      case 10: mcpp_http_session_wake(s, arg & 1 ? h.last_wait : arg); break;
      case 11:
        if (!h.closing) {
          h.closing = 1;
          mcpp_http_session_close(s);
        }
        break;
      case 12: mcpp_http_session_lose(s); break;
      default: {
        /* An SSE event as a body chunk: the answer to c1, a ping, a comment. */
        static const char *const events[] = {
            "id: 1\ndata: {\"jsonrpc\":\"2.0\",\"id\":\"c1\",\"result\":{}}\n\n",
            "retry: 10\ndata: {\"jsonrpc\":\"2.0\",\"id\":9,\"method\":\"ping\"}\n\n",
            ": keep-alive\n\n", "id: 7\n\n"};
        const char *ev = events[arg % 4];
        mcpp_http_session_body(s, pick_where(&h, arg >> 2, 1), ev, strlen(ev));
        break;
      }
    }
    take(s, &h);
  }
  (void)mcpp_http_session_id(s);
  (void)mcpp_http_session_listens(s);
  mcpp_http_session_free(s);
  return 0;
}
