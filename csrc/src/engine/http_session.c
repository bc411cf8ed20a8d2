/* A Streamable HTTP client session, sans-I/O (see http_session.h): the
 * exchanges, the session id, the frames held while the session is
 * renewed, the resumption of broken answers and the listening stream, as
 * one machine both hosts drive. The rules each step applies are in
 * rules.h; this file only sequences them. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

typedef enum exchange_role { ROLE_POST, ROLE_RESUME, ROLE_LISTEN, ROLE_DELETE } exchange_role;

/* A request of the host's (a tag) whose answer is awaited: kept across the
 * POST, its SSE answer and the GETs that resume it. */
typedef struct request {
  uint64_t tag;
  char *frame;
  size_t frame_len;
  mcpp_sse *sse;       /* its answer stream's parser: the last event ID */
  char *session;       /* the session its answer stream was on */
  uint32_t wait_ms;    /* the last wait before resuming */
  uint64_t wait;       /* the WAIT pending for it (0: none) */
  int answered;
  int dead;            /* an oversize event: its stream is over for good */
  struct request *next;
} request;

typedef struct exchange {
  uint64_t id;
  exchange_role role;
  uint64_t tag;         /* POST, RESUME */
  char *frame;          /* POST: what it carried */
  size_t frame_len;
  char *sent_session;   /* the Mcp-Session-Id it carried (NULL: none) */
  int redirects;
  int status;           /* 0 until the response */
  mcpp_http_body kind;
  char *content_type;
  mcpp_sse *sse;        /* SSE bodies: the request's, the listening stream's, or own */
  int own_sse;
  int answered;         /* a POST with no request: its frame's answer came */
  char *body;           /* bodies read whole, at most max_body bytes */
  size_t body_len;
  int whole;            /* 0: the body ran past max_body and was cut */
  size_t dropped;       /* bodies read and dropped (202, DELETE) */
  struct exchange *next;
} exchange;

typedef struct held {
  char *frame;
  size_t len;
  uint64_t tag;
  struct held *next;
} held;

/* A queued thing to do and the memory its strings live in. */
typedef struct action {
  mcpp_http_do d;
  void *mem[3];
} action;

struct mcpp_http_session {
  const mcpp_allocator *alloc;
  char *url_text;       /* the request URL; url points into it */
  char *shown;          /* the URL as sentences quote it (MCPP_HTTP_URL_SHOWN) */
  mcpp_http_url url;
  mcpp_http_header *extra;
  size_t n_extra;
  char *extra_text;
  size_t max_body;
  char *session_id;
  char *version;
  mcpp_http_renewal *renewal;
  held *held, **held_tail;
  exchange *exchanges;
  request *requests;
  uint64_t next_exchange, next_wait;
  int closed;
  int gone;             /* over without a DELETE */
  /* The GET listening stream. */
  int listen_wanted;
  int listening;
  uint64_t listen_exchange;
  mcpp_sse *listen_sse;  /* kept across reopenings of one session's stream */
  char *listen_session;
  uint32_t relisten_ms;
  uint64_t relisten_wait;
  /* What to do, in order; `handed` is the memory of the last one taken. */
  action *queue;
  size_t q_head, q_len, q_cap;
  action handed;
  int nomem;
};

/* ------------------------------------------------------------ helpers */

static char *dup_n(mcpp_http_session *s, const char *p, size_t n) {
  char *c = mcpp__strndup(s->alloc, p != NULL ? p : "", p != NULL ? n : 0);
  if (c == NULL) s->nomem = 1;
  return c;
}

static char *dup(mcpp_http_session *s, const char *p) {
  return p == NULL ? NULL : dup_n(s, p, strlen(p));
}

static int same(const char *a, const char *b) {
  return a == NULL ? b == NULL : b != NULL && strcmp(a, b) == 0;
}

/* The reason a session ends with when an open session's server cannot be
 * reached (why: the host's cause) or its renewal failed (shown NULL; why:
 * the handshake's error); NULL when out of memory. */
static char *gone_reason(mcpp_http_session *s, const char *shown, const char *why) {
  int n = shown != NULL ? snprintf(NULL, 0, MCPP_HTTP_UNREACHABLE_FORMAT, shown, why)
                        : snprintf(NULL, 0, MCPP_HTTP_REINIT_FAILED_FORMAT, why);
  char *out = n >= 0 ? mcpp__malloc(s->alloc, (size_t)n + 1) : NULL;
  if (out == NULL) s->nomem = 1;
  else if (shown != NULL) snprintf(out, (size_t)n + 1, MCPP_HTTP_UNREACHABLE_FORMAT, shown, why);
  else snprintf(out, (size_t)n + 1, MCPP_HTTP_REINIT_FAILED_FORMAT, why);
  return out;
}

static void release(mcpp_http_session *s, action *a) {
  for (size_t i = 0; i < 3; i++) mcpp__free(s->alloc, a->mem[i]);
  memset(a, 0, sizeof *a);
}

static action *push(mcpp_http_session *s, mcpp_http_do_kind kind) {
  if (s->q_len == s->q_cap) {
    size_t cap = s->q_cap ? s->q_cap * 2 : 16;
    action *q = mcpp__realloc(s->alloc, s->queue, cap * sizeof *q);
    if (q == NULL) {
      s->nomem = 1;
      return NULL;
    }
    s->queue = q;
    s->q_cap = cap;
  }
  action *a = &s->queue[s->q_len++];
  memset(a, 0, sizeof *a);
  a->d.kind = kind;
  return a;
}

/* An action whose data is a copy of p[0..n). */
static action *push_data(mcpp_http_session *s, mcpp_http_do_kind kind, const char *p, size_t n) {
  action *a = push(s, kind);
  if (a == NULL || p == NULL) return a;
  char *c = dup_n(s, p, n);
  a->mem[0] = c;
  a->d.data = c;
  a->d.len = c != NULL ? n : 0;
  return a;
}

static void push_listening(mcpp_http_session *s, int value) {
  s->listening = value;
  action *a = push(s, MCPP_HTTP_DO_LISTENING);
  if (a != NULL) a->d.value = value;
}

static uint64_t push_wait(mcpp_http_session *s, uint32_t ms) {
  action *a = push(s, MCPP_HTTP_DO_WAIT);
  if (a == NULL) return 0;
  a->d.wait = ++s->next_wait;
  a->d.ms = ms;
  return a->d.wait;
}

static request *find_request(mcpp_http_session *s, uint64_t tag) {
  for (request *r = s->requests; tag != 0 && r != NULL; r = r->next)
    if (r->tag == tag) return r;
  return NULL;
}

static exchange *find_exchange(mcpp_http_session *s, uint64_t id) {
  for (exchange *e = s->exchanges; e != NULL; e = e->next)
    if (e->id == id) return e;
  return NULL;
}

static void free_exchange(mcpp_http_session *s, exchange *e) {
  if (e->own_sse) mcpp_sse_free(e->sse);
  mcpp__free(s->alloc, e->frame);
  mcpp__free(s->alloc, e->sent_session);
  mcpp__free(s->alloc, e->content_type);
  mcpp__free(s->alloc, e->body);
  mcpp__free(s->alloc, e);
}

/* Takes e out of the session (what its host reports next is ignored),
 * still readable by the caller, who frees it. */
static void unlink_exchange(mcpp_http_session *s, exchange *e) {
  for (exchange **p = &s->exchanges; *p != NULL; p = &(*p)->next)
    if (*p == e) {
      *p = e->next;
      break;
    }
  if (s->listen_exchange == e->id) s->listen_exchange = 0;
}

/* Forgets e (its host reports nothing more that is read). */
static void drop(mcpp_http_session *s, exchange *e) {
  unlink_exchange(s, e);
  free_exchange(s, e);
}

/* Stops e now: the host closes its connection. */
static void cut(mcpp_http_session *s, exchange *e) {
  action *a = push(s, MCPP_HTTP_DO_CUT);
  if (a != NULL) a->d.exchange = e->id;
  drop(s, e);
}

static void free_request(mcpp_http_session *s, request *r) {
  mcpp_sse_free(r->sse);
  mcpp__free(s->alloc, r->frame);
  mcpp__free(s->alloc, r->session);
  mcpp__free(s->alloc, r);
}

static void free_held(mcpp_http_session *s) {
  while (s->held != NULL) {
    held *h = s->held;
    s->held = h->next;
    mcpp__free(s->alloc, h->frame);
    mcpp__free(s->alloc, h);
  }
  s->held_tail = &s->held;
}

/* ------------------------------------------------------------ starting */

/* Starts an exchange: a START with the headers C's rule gives. */
static exchange *start(mcpp_http_session *s, exchange_role role, mcpp_http_method method,
                       const char *session, const char *frame, size_t frame_len,
                       uint64_t tag, const char *last_event_id) {
  exchange *e = mcpp__malloc(s->alloc, sizeof *e);
  if (e == NULL) {
    s->nomem = 1;
    return NULL;
  }
  memset(e, 0, sizeof *e);
  e->id = ++s->next_exchange;
  e->role = role;
  e->tag = tag;
  e->whole = 1;
  e->sent_session = dup(s, session);
  if (frame != NULL) {
    e->frame = dup_n(s, frame, frame_len);
    e->frame_len = frame_len;
  }
  e->next = s->exchanges;
  s->exchanges = e;

  action *a = push(s, MCPP_HTTP_DO_START);
  if (a == NULL) return e;
  size_t cap = s->n_extra + 6;
  mcpp_http_header *h = mcpp__malloc(s->alloc, cap * sizeof *h);
  if (h == NULL) {
    s->nomem = 1;
    return e;
  }
  size_t n = mcpp_http_request_headers(method, s->extra, s->n_extra, session, s->version, h,
                                       cap - 1);
  if (last_event_id != NULL && *last_event_id != '\0')
    h[n++] = (mcpp_http_header){MCPP_HTTP_LAST_EVENT_ID, last_event_id};
  /* The names and values, host and target copied into one block: the
   * session's own strings may change before the host reads them. */
  size_t need = s->url.host_len + 1 + s->url.target_len + 2;
  for (size_t i = 0; i < n; i++) need += strlen(h[i].name) + strlen(h[i].value) + 2;
  char *text = mcpp__malloc(s->alloc, need);
  if (text == NULL) {
    s->nomem = 1;
    mcpp__free(s->alloc, h);
    return e;
  }
  char *at = text;
  for (size_t i = 0; i < n; i++) {
    size_t nl = strlen(h[i].name) + 1, vl = strlen(h[i].value) + 1;
    memcpy(at, h[i].name, nl);
    h[i].name = at;
    at += nl;
    memcpy(at, h[i].value, vl);
    h[i].value = at;
    at += vl;
  }
  a->d.host = at;
  memcpy(at, s->url.host, s->url.host_len);
  at += s->url.host_len;
  *at++ = '\0';
  a->d.target = at;
  mcpp_http_url_text(&s->url, MCPP_HTTP_URL_TARGET, at, s->url.target_len + 2);
  a->mem[1] = text;
  a->mem[2] = h;
  a->d.headers = h;
  a->d.n_headers = n;
  a->d.exchange = e->id;
  a->d.tag = tag;
  a->d.method = (int)method;
  a->d.https = s->url.https;
  a->d.port = s->url.port;
  if (frame != NULL) {
    a->mem[0] = dup_n(s, frame, frame_len);
    a->d.data = a->mem[0];
    a->d.len = a->mem[0] != NULL ? frame_len : 0;
  }
  if (method == MCPP_HTTP_POST) {
    a->d.connect_timeout_ms = MCPP_HTTP_POST_CONNECT_TIMEOUT_MS;
  } else {
    a->d.connect_timeout_ms = MCPP_HTTP_SHORT_TIMEOUT_MS;
    a->d.headers_timeout_ms = MCPP_HTTP_SHORT_TIMEOUT_MS;
  }
  return e;
}

static void post_now(mcpp_http_session *s, const char *frame, size_t len, uint64_t tag,
                     int redirects) {
  if (tag != 0 && find_request(s, tag) == NULL) {
    request *r = mcpp__malloc(s->alloc, sizeof *r);
    if (r == NULL) {
      s->nomem = 1;
      return;
    }
    memset(r, 0, sizeof *r);
    r->tag = tag;
    r->frame = dup_n(s, frame, len);
    r->frame_len = len;
    r->sse = mcpp_sse_new(s->max_body);
    if (r->sse == NULL) s->nomem = 1;
    r->next = s->requests;
    s->requests = r;
  }
  exchange *e = start(s, ROLE_POST, MCPP_HTTP_POST, s->session_id, frame, len, tag, NULL);
  if (e != NULL) e->redirects = redirects;
}

static void send_frame(mcpp_http_session *s, const char *frame, size_t len, uint64_t tag,
                       int direct) {
  if (s->closed) return;
  if (!direct && mcpp_http_renewal_holds(s->renewal, frame, len)) {
    held *h = mcpp__malloc(s->alloc, sizeof *h);
    char *copy = dup_n(s, frame, len);
    if (h == NULL || copy == NULL) {
      s->nomem = 1;
      mcpp__free(s->alloc, h);
      mcpp__free(s->alloc, copy);
      return;
    }
    *h = (held){copy, len, tag, NULL};
    *s->held_tail = h;
    s->held_tail = &h->next;
    return;
  }
  post_now(s, frame, len, tag, 0);
}

static void start_listen(mcpp_http_session *s) {
  if (s->closed || !s->listen_wanted || s->session_id == NULL || s->listen_exchange != 0)
    return;
  if (s->listen_sse == NULL || !same(s->listen_session, s->session_id)) {
    /* A new session's stream: its event IDs start over. */
    mcpp_sse_free(s->listen_sse);
    mcpp__free(s->alloc, s->listen_session);
    s->listen_sse = mcpp_sse_new(s->max_body);
    s->listen_session = dup(s, s->session_id);
    if (s->listen_sse == NULL) {
      s->nomem = 1;
      return;
    }
  }
  exchange *e = start(s, ROLE_LISTEN, MCPP_HTTP_GET, s->session_id, NULL, 0, 0,
                      mcpp_sse_last_event_id(s->listen_sse));
  if (e == NULL) return;
  e->sse = s->listen_sse;
  s->listen_exchange = e->id;
}

static void stop_listening(mcpp_http_session *s) {
  s->relisten_wait = 0;
  exchange *e = s->listen_exchange ? find_exchange(s, s->listen_exchange) : NULL;
  if (e != NULL) cut(s, e);
  if (s->listening) push_listening(s, 0);
}

/* Cuts every exchange but a DELETE; nothing is held or resumed any more. */
static void cut_all(mcpp_http_session *s) {
  s->closed = 1;
  free_held(s);
  stop_listening(s);
  exchange *e = s->exchanges;
  while (e != NULL) {
    exchange *next = e->next;
    if (e->role != ROLE_DELETE) cut(s, e);
    e = next;
  }
  for (request *r = s->requests; r != NULL; r = r->next) r->wait = 0;
}

/* The session is over without a DELETE: GONE with the reason. */
static void go(mcpp_http_session *s, uint64_t exchange_id, const char *reason) {
  if (s->closed) return;
  cut_all(s);
  s->gone = 1;
  action *a = push_data(s, MCPP_HTTP_DO_GONE, reason, strlen(reason));
  if (a != NULL) a->d.exchange = exchange_id;
}

/* ------------------------------------------------------------ answers */

/* A session of ours ended (C's verdict on what answered frame; NULL: the
 * listening stream or a resumed answer met it). */
static void session_expired(mcpp_http_session *s, const char *frame, size_t frame_len,
                            uint64_t tag, const char *sent_session, int status,
                            const char *body, size_t body_len) {
  if (s->closed) return;
  int current = sent_session != NULL && same(sent_session, s->session_id);
  int steps = mcpp_http_renewal_expired(s->renewal, current, frame, frame_len);
  if (steps & MCPP_HTTP_RENEW) {
    mcpp__free(s->alloc, s->session_id);
    mcpp__free(s->alloc, s->version);
    s->session_id = NULL;
    s->version = NULL;
    stop_listening(s);
    push(s, MCPP_HTTP_DO_SESSION);
    push(s, MCPP_HTTP_DO_RENEW);
  }
  if (steps & MCPP_HTTP_SEND_AGAIN) {
    send_frame(s, frame, frame_len, tag, 0); /* waits while the handshake runs */
    return;
  }
  if (frame == NULL) return;
  char small[512];
  size_t n = mcpp_http_error_answer(status, body, body_len, frame, frame_len, small, sizeof small);
  if (n == 0) return;
  if (n < sizeof small) {
    push_data(s, MCPP_HTTP_DO_RECEIVE, small, n);
    return;
  }
  char *big = mcpp__malloc(s->alloc, n + 1);
  if (big == NULL) {
    s->nomem = 1;
    return;
  }
  mcpp_http_error_answer(status, body, body_len, frame, frame_len, big, n + 1);
  push_data(s, MCPP_HTTP_DO_RECEIVE, big, n);
  mcpp__free(s->alloc, big);
}

/* A POST's JSON or error body has been read (whole, or cut at max_body). */
static void post_answered(mcpp_http_session *s, exchange *e) {
  const char *msg;
  size_t msg_len;
  char small[512];
  const char *body = e->body != NULL ? e->body : "";
  size_t len = e->body != NULL ? e->body_len : 0;
  mcpp_http_post_step step = mcpp_http_post_answer(
      e->kind, e->status, e->content_type, body, len, e->whole, s->max_body, e->frame,
      e->frame_len, e->sent_session != NULL, &msg, &msg_len, small, sizeof small);
  char *big = NULL;
  if (step == MCPP_HTTP_POST_MESSAGE && msg == NULL) {
    big = mcpp__malloc(s->alloc, msg_len + 1);
    if (big == NULL) {
      s->nomem = 1;
      return;
    }
    step = mcpp_http_post_answer(e->kind, e->status, e->content_type, body, len, e->whole,
                                 s->max_body, e->frame, e->frame_len, e->sent_session != NULL,
                                 &msg, &msg_len, big, msg_len + 1);
  }
  if (step == MCPP_HTTP_POST_EXPIRED)
    session_expired(s, e->frame, e->frame_len, e->tag, e->sent_session, e->status,
                    e->whole ? body : "", e->whole ? len : 0);
  else if (step == MCPP_HTTP_POST_MESSAGE && msg != NULL)
    push_data(s, MCPP_HTTP_DO_RECEIVE, msg, msg_len);
  mcpp__free(s->alloc, big);
}

typedef struct feed_ctx {
  mcpp_http_session *s;
  const char *frame; /* whose answer ends the stream (NULL: none) */
  size_t frame_len;
  int *answered;
} feed_ctx;

static int on_event(void *arg, mcpp_sse_kind kind, const char *data, size_t len) {
  feed_ctx *c = arg;
  if (kind == MCPP_SSE_COMMENT) {
    push(c->s, MCPP_HTTP_DO_TOUCH); /* no message, but the server is alive */
    return 0;
  }
  if (c->answered != NULL && !*c->answered && c->frame != NULL &&
      mcpp_http_is_answer(c->frame, c->frame_len, data, len))
    *c->answered = 1;
  push_data(c->s, MCPP_HTTP_DO_RECEIVE, data, len);
  return 0;
}

static feed_ctx feed_of(mcpp_http_session *s, exchange *e) {
  request *r = find_request(s, e->tag);
  if (r != NULL) return (feed_ctx){s, r->frame, r->frame_len, &r->answered};
  if (e->role == ROLE_LISTEN) return (feed_ctx){s, NULL, 0, NULL};
  return (feed_ctx){s, e->frame, e->frame_len, &e->answered};
}

/* The answer stream of a request (a POST's SSE, a resuming GET) is over,
 * or a resuming GET got no answer: resumed after a wait while it can be. */
static void answer_over(mcpp_http_session *s, exchange *e, int broken) {
  request *r = find_request(s, e->tag);
  drop(s, e);
  if (r == NULL || r->answered || r->dead || s->closed) return;
  mcpp_http_answer_step step = mcpp_http_answer_after(r->sse, broken, &r->wait_ms);
  if (step == MCPP_HTTP_ANSWER_LOST) {
    action *a = push(s, MCPP_HTTP_DO_LOST);
    if (a != NULL) a->d.tag = r->tag;
  } else if (step == MCPP_HTTP_ANSWER_RESUME) {
    r->wait = push_wait(s, r->wait_ms);
  }
}

/* The listening stream is over: C's rule says what follows. body points
 * into e, freed last. */
static void listen_over(mcpp_http_session *s, exchange *e, int opened, int status,
                        const char *body, size_t len) {
  unlink_exchange(s, e);
  if (!s->closed && same(e->sent_session, s->session_id)) {
    push_listening(s, 0);
    if (s->listen_wanted) {
      mcpp_http_listen_step step = mcpp_http_listen_after(e->sse, opened, status, body, len,
                                                          &s->relisten_ms);
      if (step == MCPP_HTTP_LISTEN_EXPIRED)
        session_expired(s, NULL, 0, 0, e->sent_session, status, body, len);
      else if (step == MCPP_HTTP_LISTEN_NEVER)
        s->listen_wanted = 0;
      else if (s->relisten_wait == 0)
        s->relisten_wait = push_wait(s, s->relisten_ms);
    }
  }
  free_exchange(s, e);
}

/* A refused resuming GET: the answer has nowhere left to come. */
static void resume_refused(mcpp_http_session *s, exchange *e) {
  unlink_exchange(s, e);
  request *r = find_request(s, e->tag);
  const char *body = e->whole && e->body != NULL ? e->body : "";
  size_t len = e->whole && e->body != NULL ? e->body_len : 0;
  if (mcpp_http_classify(e->status, body, len, NULL, 0, e->sent_session != NULL) ==
      MCPP_HTTP_SESSION_EXPIRED)
    session_expired(s, NULL, 0, 0, e->sent_session, e->status, body, len);
  if (r != NULL && !s->closed) {
    action *a = push(s, MCPP_HTTP_DO_LOST);
    if (a != NULL) a->d.tag = r->tag;
  }
  free_exchange(s, e);
}

/* An exchange whose body was read whole (or to max_body) is done. */
static void finish_read(mcpp_http_session *s, exchange *e) {
  switch (e->role) {
    case ROLE_POST:
      if (e->kind == MCPP_HTTP_BODY_JSON || e->kind == MCPP_HTTP_BODY_ERROR) post_answered(s, e);
      drop(s, e);
      return;
    case ROLE_RESUME:
      resume_refused(s, e);
      return;
    case ROLE_LISTEN:
      listen_over(s, e, 0, e->status, e->whole && e->body ? e->body : "",
                  e->whole && e->body ? e->body_len : 0);
      return;
    case ROLE_DELETE:
      drop(s, e);
      push(s, MCPP_HTTP_DO_CLOSED);
      return;
  }
}

/* ------------------------------------------------------------ public */

mcpp_http_session *mcpp_http_session_new(const char *url, size_t len,
                                         const mcpp_http_header *extra, size_t n_extra,
                                         size_t max_body, int listen, const char **problem) {
  const mcpp_allocator *a = mcpp_default_allocator();
  const char *why = NULL;
  if (problem == NULL) problem = &why;
  mcpp_http_url parsed;
  *problem = mcpp_http_url_parse(url, len, &parsed);
  if (*problem != NULL) return NULL;
  *problem = "out of memory";
  mcpp_http_session *s = mcpp__malloc(a, sizeof *s);
  if (s == NULL) return NULL;
  memset(s, 0, sizeof *s);
  s->alloc = a;
  s->held_tail = &s->held;
  s->listen_wanted = listen != 0;
  if (max_body == 0) {
    mcpp_settings st;
    mcpp_settings_default(&st);
    max_body = st.max_line_bytes;
  }
  s->max_body = max_body;
  s->renewal = mcpp_http_renewal_new();
  /* The request URL, kept as the one text the parts point into. */
  size_t n = mcpp_http_url_text(&parsed, MCPP_HTTP_URL_REQUEST, NULL, 0);
  s->url_text = mcpp__malloc(a, n + 1);
  size_t shown = mcpp_http_url_text(&parsed, MCPP_HTTP_URL_SHOWN, NULL, 0);
  s->shown = mcpp__malloc(a, shown + 1);
  /* The URL's user:password as Authorization, whatever its length. */
  size_t auth_len = mcpp_http_url_credentials(&parsed, extra, n_extra, NULL, 0);
  size_t text = auth_len + 32;
  for (size_t i = 0; i < n_extra; i++)
    text += strlen(extra[i].name) + strlen(extra[i].value) + 2;
  s->extra = mcpp__malloc(a, (n_extra + 1) * sizeof *s->extra);
  s->extra_text = mcpp__malloc(a, text);
  if (s->renewal == NULL || s->url_text == NULL || s->shown == NULL || s->extra == NULL || s->extra_text == NULL) {
    mcpp_http_session_free(s);
    return NULL;
  }
  mcpp_http_url_text(&parsed, MCPP_HTTP_URL_REQUEST, s->url_text, n + 1);
  mcpp_http_url_parse(s->url_text, n, &s->url);
  mcpp_http_url_text(&parsed, MCPP_HTTP_URL_SHOWN, s->shown, shown + 1);
  char *at = s->extra_text;
  for (size_t i = 0; i < n_extra; i++) {
    size_t nl = strlen(extra[i].name) + 1, vl = strlen(extra[i].value) + 1;
    s->extra[s->n_extra].name = memcpy(at, extra[i].name, nl);
    at += nl;
    s->extra[s->n_extra++].value = memcpy(at, extra[i].value, vl);
    at += vl;
  }
  if (auth_len > 0) {
    s->extra[s->n_extra].name = memcpy(at, "Authorization", sizeof "Authorization");
    at += sizeof "Authorization";
    mcpp_http_url_credentials(&parsed, extra, n_extra, at, auth_len + 1);
    s->extra[s->n_extra++].value = at;
  }
  *problem = NULL;
  return s;
}

void mcpp_http_session_free(mcpp_http_session *s) {
  if (s == NULL) return;
  while (s->exchanges != NULL) {
    exchange *e = s->exchanges;
    s->exchanges = e->next;
    free_exchange(s, e);
  }
  while (s->requests != NULL) {
    request *r = s->requests;
    s->requests = r->next;
    free_request(s, r);
  }
  free_held(s);
  for (size_t i = s->q_head; i < s->q_len; i++) release(s, &s->queue[i]);
  release(s, &s->handed);
  mcpp__free(s->alloc, s->queue);
  mcpp_sse_free(s->listen_sse);
  mcpp__free(s->alloc, s->listen_session);
  mcpp_http_renewal_free(s->renewal);
  mcpp__free(s->alloc, s->session_id);
  mcpp__free(s->alloc, s->version);
  mcpp__free(s->alloc, s->url_text);
  mcpp__free(s->alloc, s->shown);
  mcpp__free(s->alloc, s->extra);
  mcpp__free(s->alloc, s->extra_text);
  mcpp__free(s->alloc, s);
}

int mcpp_http_session_next_versioned(int do_version, mcpp_http_session *s, mcpp_http_do *out) {
  if (do_version != MCPP_HTTP_DO_V1) return MCPP_ERR_INVALID_ARGUMENT;
  release(s, &s->handed);
  if (s->q_head == s->q_len) {
    s->q_head = s->q_len = 0;
    return 0;
  }
  s->handed = s->queue[s->q_head++];
  *out = s->handed.d;
  out->version = do_version;
  return 1;
}

/* Every input ends here: MCPP_ERR_NOMEM if an allocation failed on the way. */
static int done(mcpp_http_session *s) {
  int failed = s->nomem;
  s->nomem = 0;
  return failed ? MCPP_ERR_NOMEM : 0;
}

int mcpp_http_session_post(mcpp_http_session *s, const char *frame, size_t len, uint64_t tag,
                           int direct) {
  send_frame(s, frame, len, tag, direct);
  return done(s);
}

int mcpp_http_session_settled(mcpp_http_session *s, uint64_t tag) {
  request **p = &s->requests;
  while (*p != NULL && (*p)->tag != tag) p = &(*p)->next;
  if (tag == 0 || *p == NULL) return done(s);
  request *r = *p;
  *p = r->next;
  if (!r->answered) {
    exchange *e = s->exchanges;
    while (e != NULL) {
      exchange *next = e->next;
      if (e->tag == tag) cut(s, e);
      e = next;
    }
  }
  /* A held frame of a request settled meanwhile is not sent. */
  for (held **h = &s->held; *h != NULL;) {
    if ((*h)->tag == tag) {
      held *gone = *h;
      *h = gone->next;
      mcpp__free(s->alloc, gone->frame);
      mcpp__free(s->alloc, gone);
    } else {
      h = &(*h)->next;
    }
  }
  s->held_tail = &s->held;
  while (*s->held_tail != NULL) s->held_tail = &(*s->held_tail)->next;
  free_request(s, r);
  return done(s);
}

int mcpp_http_session_response(mcpp_http_session *s, uint64_t id, int status,
                               const char *content_type, const char *session_id,
                               const char *location) {
  exchange *e = find_exchange(s, id);
  if (e == NULL || e->status != 0) return done(s);
  e->status = status > 0 ? status : 1;
  e->content_type = dup(s, content_type);
  if (e->role == ROLE_POST) {
    size_t n = mcpp_http_redirect_url(status, location, &s->url, NULL, 0);
    if (n > 0 && e->redirects < MCPP_HTTP_MAX_REDIRECTS) {
      /* 307/308 on the same origin: the session goes there from now on. */
      char *text = mcpp__malloc(s->alloc, n + 1);
      if (text == NULL) s->nomem = 1;
      else mcpp_http_redirect_url(status, location, &s->url, text, n + 1);
      mcpp_http_url parsed;
      if (text != NULL && mcpp_http_url_parse(text, n, &parsed) == NULL) {
        mcpp__free(s->alloc, s->url_text);
        s->url_text = text;
        s->url = parsed;
        char *frame = e->frame;
        size_t frame_len = e->frame_len;
        uint64_t tag = e->tag;
        int redirects = e->redirects + 1;
        e->frame = NULL;
        cut(s, e);
        post_now(s, frame, frame_len, tag, redirects);
        mcpp__free(s->alloc, frame);
        return done(s);
      }
      mcpp__free(s->alloc, text);
    }
    e->kind = mcpp_http_body_kind(MCPP_HTTP_POST, status, content_type);
    if (e->kind != MCPP_HTTP_BODY_ERROR && session_id != NULL && *session_id != '\0' &&
        s->session_id == NULL) {
      s->session_id = dup(s, session_id);
      push_data(s, MCPP_HTTP_DO_SESSION, session_id, strlen(session_id));
    }
    if (e->kind == MCPP_HTTP_BODY_SSE) {
      request *r = find_request(s, e->tag);
      if (r != NULL) {
        mcpp__free(s->alloc, r->session);
        r->session = dup(s, s->session_id); /* its resumptions go there */
        e->sse = r->sse;
      } else {
        e->sse = mcpp_sse_new(s->max_body);
        e->own_sse = 1;
        if (e->sse == NULL) s->nomem = 1;
      }
    }
    return done(s);
  }
  e->kind = e->role == ROLE_DELETE ? MCPP_HTTP_BODY_NONE
                                   : mcpp_http_body_kind(MCPP_HTTP_GET, status, content_type);
  if (e->kind == MCPP_HTTP_BODY_SSE) {
    if (e->role == ROLE_RESUME) {
      request *r = find_request(s, e->tag);
      e->sse = r != NULL ? r->sse : NULL;
    } else if (same(e->sent_session, s->session_id)) {
      push_listening(s, 1);
    }
  } else if (e->kind != MCPP_HTTP_BODY_NONE) {
    e->kind = MCPP_HTTP_BODY_ERROR; /* a refusal, read whole */
  }
  return done(s);
}

int mcpp_http_session_body(mcpp_http_session *s, uint64_t id, const char *data, size_t len) {
  exchange *e = find_exchange(s, id);
  if (e == NULL || e->status == 0) return done(s);
  if (e->kind == MCPP_HTTP_BODY_SSE) {
    if (e->sse == NULL) return done(s);
    feed_ctx c = feed_of(s, e);
    int rc = mcpp_sse_feed(e->sse, data, len, on_event, &c);
    if (rc == MCPP_ERR_NOMEM) s->nomem = 1;
    if (rc == MCPP_ERR_FRAME_TOO_LARGE) {
      /* An oversize event: this stream is over for good, as a too long
       * line ends a stdio peer. */
      if (e->role == ROLE_LISTEN) {
        action *a = push(s, MCPP_HTTP_DO_CUT);
        if (a != NULL) a->d.exchange = e->id;
        /* The next stream gets a new parser; this one is freed with the
         * exchange, after the rule read it. (One listening exchange at a
         * time, and its parser is the session's.) */
        if (s->listen_sse == e->sse) {
          s->listen_sse = NULL;
          e->own_sse = 1;
        }
        listen_over(s, e, 1, 0, "", 0);
      } else {
        request *r = find_request(s, e->tag);
        if (r != NULL) r->dead = 1;
        cut(s, e);
      }
    } else if (c.answered != NULL && *c.answered) {
      /* The answer ends its stream: a server that keeps it open after it
       * would hold a connection per request for good. */
      cut(s, e);
    }
    return done(s);
  }
  if (e->kind == MCPP_HTTP_BODY_NONE) {
    e->dropped += len;
    if (e->dropped > s->max_body) {
      action *a = push(s, MCPP_HTTP_DO_CUT);
      if (a != NULL) a->d.exchange = e->id;
      finish_read(s, e);
    }
    return done(s);
  }
  if (len > s->max_body - e->body_len) {
    /* Past the bound: the rest is not read. */
    e->whole = 0;
    action *a = push(s, MCPP_HTTP_DO_CUT);
    if (a != NULL) a->d.exchange = e->id;
    finish_read(s, e);
    return done(s);
  }
  char *body = mcpp__realloc(s->alloc, e->body, e->body_len + len + 1);
  if (body == NULL) {
    s->nomem = 1;
    return done(s);
  }
  memcpy(body + e->body_len, data, len);
  e->body = body;
  e->body_len += len;
  e->body[e->body_len] = '\0';
  return done(s);
}

int mcpp_http_session_end(mcpp_http_session *s, uint64_t id, int broken) {
  exchange *e = find_exchange(s, id);
  if (e == NULL || e->status == 0) return done(s);
  if (e->kind == MCPP_HTTP_BODY_SSE) {
    if (!broken && e->sse != NULL) {
      /* An event whose blank line never came is delivered. */
      feed_ctx c = feed_of(s, e);
      if (mcpp_sse_finish(e->sse, on_event, &c) == MCPP_ERR_NOMEM) s->nomem = 1;
    }
    if (e->role == ROLE_LISTEN) listen_over(s, e, 1, 0, "", 0);
    else answer_over(s, e, broken);
    return done(s);
  }
  if (broken && e->role == ROLE_POST && e->kind == MCPP_HTTP_BODY_JSON) {
    /* Cut off mid-answer, with no event ID to resume from: C's rule says
     * the answer is lost, so the engine answers in doubt now. */
    request *r = find_request(s, e->tag);
    uint32_t wait = 0;
    if (r != NULL && !s->closed &&
        mcpp_http_answer_after(NULL, 1, &wait) == MCPP_HTTP_ANSWER_LOST) {
      action *a = push(s, MCPP_HTTP_DO_LOST);
      if (a != NULL) a->d.tag = r->tag;
    }
    drop(s, e);
    return done(s);
  }
  if (broken) {
    mcpp__free(s->alloc, e->body); /* a broken error body is classified as empty */
    e->body = NULL;
    e->body_len = 0;
  }
  finish_read(s, e);
  return done(s);
}

int mcpp_http_session_failed(mcpp_http_session *s, uint64_t id, const char *cause) {
  exchange *e = find_exchange(s, id);
  if (e == NULL) return done(s);
  if (cause == NULL) cause = "unreachable";
  switch (e->role) {
    case ROLE_POST:
      drop(s, e);
      if (!s->closed) {
        /* A server a POST cannot reach: the session is over (before its
         * handshake too: the handshake's request is told why). */
        char *reason = gone_reason(s, s->shown, cause);
        go(s, id, reason != NULL ? reason : cause);
        mcpp__free(s->alloc, reason);
      }
      break;
    case ROLE_RESUME:
      answer_over(s, e, 0); /* not reached: tried again after the next wait */
      break;
    case ROLE_LISTEN:
      listen_over(s, e, 0, 0, "", 0);
      break;
    case ROLE_DELETE:
      drop(s, e);
      push(s, MCPP_HTTP_DO_CLOSED);
      break;
  }
  return done(s);
}

int mcpp_http_session_set_version(mcpp_http_session *s, const char *version) {
  mcpp__free(s->alloc, s->version);
  s->version = version != NULL && *version != '\0' ? dup(s, version) : NULL;
  return done(s);
}

int mcpp_http_session_opened(mcpp_http_session *s) {
  start_listen(s);
  if (s->listen_exchange == 0) push_listening(s, 0); /* none to wait for */
  return done(s);
}

int mcpp_http_session_renewed(mcpp_http_session *s, int opened, const char *why) {
  mcpp_http_renewal_done(s->renewal, opened);
  if (!opened) {
    char *reason = gone_reason(s, NULL, why != NULL ? why : "");
    go(s, 0, reason != NULL ? reason : "the session expired and initialize failed");
    mcpp__free(s->alloc, reason);
    return done(s);
  }
  held *h = s->held;
  s->held = NULL;
  s->held_tail = &s->held;
  while (h != NULL) {
    held *next = h->next;
    send_frame(s, h->frame, h->len, h->tag, 0);
    mcpp__free(s->alloc, h->frame);
    mcpp__free(s->alloc, h);
    h = next;
  }
  return done(s);
}

int mcpp_http_session_wake(mcpp_http_session *s, uint64_t wait) {
  if (wait == 0 || s->closed) return done(s);
  if (wait == s->relisten_wait) {
    s->relisten_wait = 0;
    start_listen(s);
    return done(s);
  }
  for (request *r = s->requests; r != NULL; r = r->next) {
    if (r->wait != wait) continue;
    r->wait = 0;
    if (!r->answered && !r->dead) {
      /* SEP-1699: resumed with Last-Event-ID on the session it was on. */
      exchange *e = start(s, ROLE_RESUME, MCPP_HTTP_GET, r->session, NULL, 0, r->tag,
                          mcpp_sse_last_event_id(r->sse));
      (void)e;
    }
    break;
  }
  return done(s);
}

int mcpp_http_session_close(mcpp_http_session *s) {
  if (s->closed) {
    if (!s->gone) return done(s);
    push(s, MCPP_HTTP_DO_CLOSED);
    return done(s);
  }
  cut_all(s);
  if (s->session_id != NULL)
    start(s, ROLE_DELETE, MCPP_HTTP_DELETE, s->session_id, NULL, 0, 0, NULL);
  else
    push(s, MCPP_HTTP_DO_CLOSED);
  return done(s);
}

int mcpp_http_session_lose(mcpp_http_session *s) {
  if (!s->closed) {
    cut_all(s);
    s->gone = 1;
  }
  return done(s);
}

const char *mcpp_http_session_id(const mcpp_http_session *s) { return s->session_id; }

int mcpp_http_session_listens(const mcpp_http_session *s) { return s->listen_wanted; }

const char *mcpp_http_do_name(mcpp_http_do_kind kind) {
  switch (kind) {
    case MCPP_HTTP_DO_START: return "start";
    case MCPP_HTTP_DO_CUT: return "cut";
    case MCPP_HTTP_DO_RECEIVE: return "receive";
    case MCPP_HTTP_DO_TOUCH: return "touch";
    case MCPP_HTTP_DO_LOST: return "lost";
    case MCPP_HTTP_DO_SESSION: return "session";
    case MCPP_HTTP_DO_RENEW: return "renew";
    case MCPP_HTTP_DO_GONE: return "gone";
    case MCPP_HTTP_DO_LISTENING: return "listening";
    case MCPP_HTTP_DO_WAIT: return "wait";
    case MCPP_HTTP_DO_CLOSED: return "closed";
  }
  return "unknown";
}
