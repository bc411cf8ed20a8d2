/*
 * The engine against hostile input: many seeded frames (valid JSON-RPC of
 * every shape, corruptions of it, cuts at every position, NULs, invalid
 * UTF-8, 100k-deep nesting, multi-MiB frames) checked against a reference
 * model. Bad input must get a clear answer (FORWARD) and lose nothing: a
 * frame is CONSUMED only if it is a well-formed ping (answered with exactly
 * one PONG echoing its id byte for byte) or a response to one of our issued
 * ping or probe ids. Requests expire in deadline order; while the driver
 * is not reading nothing times out. A failure prints its seed and
 * iteration.
 */
#include "engine_fixture.h"
#include "gen.h"

#define SMALL_FRAME (64 * 1024) /* MCPP__SMALL_FRAME */
#define SCAN_DEPTH 512          /* the scanner's bracket bound */
#define NONCE "0123456789abcdef"

static uint64_t cur_seed;
static long cur_iter;
static const char *cur_frame;
static size_t cur_len;

#define H_ASSERT(expr)                                                      \
  do {                                                                      \
    if (!(expr)) {                                                          \
      fprintf(stderr, "  seed %llu, iteration %ld, frame (%zu bytes): ",    \
              (unsigned long long)cur_seed, cur_iter, cur_len);             \
      for (size_t i_ = 0; cur_frame && i_ < cur_len && i_ < 300; i_++) {    \
        unsigned char c_ = (unsigned char)cur_frame[i_];                    \
        if (c_ >= 0x20 && c_ < 0x7f) fputc(c_, stderr);                     \
        else fprintf(stderr, "\\x%02x", c_);                                \
      }                                                                     \
      fputc('\n', stderr);                                                  \
      MCPP_FAIL("%s", #expr);                                               \
    }                                                                       \
  } while (0)

static int under_valgrind(void) { return getenv("MCPP_UNDER_VALGRIND") != NULL; }

/* ------------------------------------------------------------- oracle */

/* A strict RFC 8259 validator, independent of the engine's scanner and of
 * cJSON, that also collects the top-level members the engine classifies by
 * (keys compared by their decoded value). Iterative: any depth. */
enum { M_ID, M_METHOD, M_RESULT, M_ERROR, M_PARAMS, M_COUNT };
static const char *const member_names[M_COUNT] = {"id", "method", "result",
                                                  "error", "params"};

typedef struct omember {
  const char *p;
  size_t n;
  int count;
} omember;

typedef struct oracle {
  int valid;  /* strict JSON */
  int object; /* ... and an object at the top */
  size_t max_depth;
  omember m[M_COUNT];
} oracle;

static const char *o_ws(const char *p, const char *e) {
  while (p < e && (*p == ' ' || *p == '\t' || *p == '\n' || *p == '\r')) p++;
  return p;
}

static int o_hex(char c) {
  return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') ||
         (c >= 'A' && c <= 'F');
}

static size_t o_utf8(const unsigned char *p, const unsigned char *e) {
  unsigned c = p[0];
  size_t n;
  unsigned lo = 0x80, hi = 0xbf;
  if (c < 0x80) return 1;
  if (c >= 0xc2 && c <= 0xdf) n = 2;
  else if (c == 0xe0) n = 3, lo = 0xa0;
  else if (c == 0xed) n = 3, hi = 0x9f;
  else if (c >= 0xe1 && c <= 0xef) n = 3;
  else if (c == 0xf0) n = 4, lo = 0x90;
  else if (c == 0xf4) n = 4, hi = 0x8f;
  else if (c >= 0xf1 && c <= 0xf3) n = 4;
  else return 0;
  if ((size_t)(e - p) < n) return 0;
  if (p[1] < lo || p[1] > hi) return 0;
  for (size_t i = 2; i < n; i++)
    if (p[i] < 0x80 || p[i] > 0xbf) return 0;
  return n;
}

static const char *o_string(const char *p, const char *e) {
  p++;
  while (p < e) {
    unsigned char c = (unsigned char)*p;
    if (c == '"') return p + 1;
    if (c < 0x20) return NULL;
    if (c == '\\') {
      if (e - p < 2) return NULL;
      char x = p[1];
      if (x == 'u') {
        /* Lone surrogates are grammatical but not well-formed (I-JSON,
         * RFC 7493): no parser agrees on them. */
        if (e - p < 6 || !o_hex(p[2]) || !o_hex(p[3]) || !o_hex(p[4]) ||
            !o_hex(p[5]))
          return NULL;
        unsigned v = (unsigned)strtoul((char[]){p[2], p[3], p[4], p[5], 0}, NULL, 16);
        p += 6;
        if (v >= 0xdc00 && v <= 0xdfff) return NULL;
        if (v >= 0xd800 && v <= 0xdbff) {
          if (e - p < 6 || p[0] != '\\' || p[1] != 'u' || !o_hex(p[2]) ||
              !o_hex(p[3]) || !o_hex(p[4]) || !o_hex(p[5]))
            return NULL;
          unsigned lo = (unsigned)strtoul((char[]){p[2], p[3], p[4], p[5], 0}, NULL, 16);
          if (lo < 0xdc00 || lo > 0xdfff) return NULL;
          p += 6;
        }
      } else if (x && strchr("\"\\/bfnrt", x)) {
        p += 2;
      } else {
        return NULL;
      }
      continue;
    }
    size_t k = o_utf8((const unsigned char *)p, (const unsigned char *)e);
    if (k == 0) return NULL;
    p += k;
  }
  return NULL;
}

static int o_digit(const char *p, const char *e) {
  return p < e && *p >= '0' && *p <= '9';
}

static const char *o_number(const char *p, const char *e) {
  if (p < e && *p == '-') p++;
  if (!o_digit(p, e)) return NULL;
  if (*p == '0') p++;
  else while (o_digit(p, e)) p++;
  if (p < e && *p == '.') {
    p++;
    if (!o_digit(p, e)) return NULL;
    while (o_digit(p, e)) p++;
  }
  if (p < e && (*p == 'e' || *p == 'E')) {
    p++;
    if (p < e && (*p == '+' || *p == '-')) p++;
    if (!o_digit(p, e)) return NULL;
    while (o_digit(p, e)) p++;
  }
  return p;
}

static const char *o_literal(const char *p, const char *e) {
  static const char *const lits[] = {"true", "false", "null"};
  for (int i = 0; i < 3; i++) {
    size_t k = strlen(lits[i]);
    if ((size_t)(e - p) >= k && memcmp(p, lits[i], k) == 0) return p + k;
  }
  return NULL;
}

/* Decodes a (validated) key body into ASCII for comparison; any non-ASCII
 * code point becomes 0x80. Returns 0 if longer than cap. */
static size_t o_key_decode(const char *p, size_t n, char *out, size_t cap) {
  size_t o = 0;
  for (size_t i = 0; i < n;) {
    if (o == cap) return 0;
    char c = p[i];
    if (c != '\\') {
      out[o++] = (unsigned char)c < 0x80 ? c : (char)0x80;
      i++;
      continue;
    }
    char x = p[i + 1];
    if (x == 'u') {
      unsigned v = (unsigned)strtoul((char[]){p[i + 2], p[i + 3], p[i + 4], p[i + 5], 0}, NULL, 16);
      out[o++] = v < 0x80 ? (char)v : (char)0x80;
      i += 6;
    } else {
      static const char from[] = "\"\\/bfnrt", to[] = "\"\\/\b\f\n\r\t";
      out[o++] = to[strchr(from, x) - from];
      i += 2;
    }
  }
  return o;
}

/* Parses a key at p; at the top level it becomes *member. */
static const char *o_key(oracle *o, const char *p, const char *e, int top,
                         int *member) {
  if (p == e || *p != '"') return NULL;
  const char *q = o_string(p, e);
  if (q == NULL) return NULL;
  if (top) {
    char dec[16];
    size_t k = o_key_decode(p + 1, (size_t)(q - p - 2), dec, sizeof dec);
    *member = -1;
    for (int i = 0; i < M_COUNT; i++) {
      if (strlen(member_names[i]) == k && memcmp(dec, member_names[i], k) == 0 &&
          (k || q - p == 2)) {
        if (++o->m[i].count == 1) *member = i;
        break;
      }
    }
  }
  q = o_ws(q, e);
  if (q == e || *q != ':') return NULL;
  return o_ws(q + 1, e);
}

static void oracle_scan(const char *buf, size_t len, oracle *o) {
  memset(o, 0, sizeof *o);
  const char *p = o_ws(buf, buf + len), *e = buf + len;
  char *stack = malloc(len + 1);
  size_t depth = 0;
  int member = -1;
  const char *vstart = NULL;
  int top_is_object = p < e && *p == '{';
  for (;;) {
    if (p == e) goto out;
    if (depth == 1 && stack[0] == '{') vstart = p;
    if (*p == '{' || *p == '[') {
      char close = *p == '{' ? '}' : ']';
      int obj = *p == '{';
      stack[depth++] = *p;
      if (depth > o->max_depth) o->max_depth = depth;
      p = o_ws(p + 1, e);
      if (p < e && *p == close) {
        depth--;
        p++;
        goto after;
      }
      if (obj && (p = o_key(o, p, e, depth == 1, &member)) == NULL) goto out;
      continue;
    }
    if (*p == '"')
      p = o_string(p, e);
    else if (*p == '-' || (*p >= '0' && *p <= '9'))
      p = o_number(p, e);
    else
      p = o_literal(p, e);
    if (p == NULL) goto out;
  after:
    if (depth == 1 && stack[0] == '{' && member >= 0) {
      o->m[member].p = vstart;
      o->m[member].n = (size_t)(p - vstart);
      member = -1;
    }
    p = o_ws(p, e);
    if (depth == 0) {
      o->valid = p == e;
      o->object = o->valid && top_is_object;
      goto out;
    }
    if (p == e) goto out;
    if (*p == ',') {
      p = o_ws(p + 1, e);
      if (stack[depth - 1] == '{' &&
          (p = o_key(o, p, e, depth == 1, &member)) == NULL)
        goto out;
      continue;
    }
    if (*p == (stack[depth - 1] == '{' ? '}' : ']')) {
      depth--;
      p++;
      goto after;
    }
    goto out;
  }
out:
  free(stack);
}

static int o_dup(const oracle *o) {
  for (int i = 0; i < M_COUNT; i++)
    if (o->m[i].count > 1) return 1;
  return 0;
}

static int span_is(const omember *m, const char *lit) {
  return m->p && m->n == strlen(lit) && memcmp(m->p, lit, m->n) == 0;
}

/* The value decodes to the string "ping" (however it is spelled). */
static int span_decodes_to_ping(const omember *m) {
  if (m->p == NULL || m->n < 2 || m->p[0] != '"') return 0;
  char dec[8];
  size_t k = o_key_decode(m->p + 1, m->n - 2, dec, sizeof dec);
  return k == 4 && memcmp(dec, "ping", 4) == 0;
}

static int id_is_scalar(const omember *id) {
  if (id->p == NULL) return 0;
  char c = id->p[0];
  return c == '"' || c == '-' || (c >= '0' && c <= '9');
}

/* The seq if the raw id is exactly one we issued ("mcpp-<nonce>-<seq>",
 * seq written as we write it: no leading zero), else 0. */
static uint64_t our_seq(const char *p, size_t n, uint64_t max_seq) {
  static const char prefix[] = "\"mcpp-" NONCE "-";
  const size_t k = sizeof prefix - 1;
  if (n < k + 2 || n > k + 21 || memcmp(p, prefix, k) != 0 || p[n - 1] != '"')
    return 0;
  if (p[k] == '0') return 0;
  uint64_t v = 0;
  for (size_t i = k; i < n - 1; i++) {
    if (p[i] < '0' || p[i] > '9') return 0;
    if (v > max_seq) return 0;
    v = v * 10 + (uint64_t)(p[i] - '0');
  }
  return v >= 1 && v <= max_seq ? v : 0;
}

/* ---------------------------------------------------------------- host */

typedef struct host {
  fx_alloc alloc;
  mcpp_engine *e;
  mcpp_settings s;
  /* What the current call did. */
  int call_sent, call_pongs, call_deliveries;
  gbuf last_sent;
  long sent_by_kind[4];
  long events[MCPP_EV_LAST + 1];
  long outcomes; /* answers to our pings and probes (PONG ... PROBE_OK) */
  long records;
  /* Pings. */
  uint64_t max_seq;
  int ka_out;
  uint64_t ka_seq;
  int pause_ok; /* a detected host pause may abandon the keepalive ping */
  long ka_abandoned;
  uint64_t manual_out[2048];
  int n_manual_out;
  /* State machine. */
  mcpp_state state;
  int closing;
  /* Ledger model: application requests "req-<n>" in flight, and entries
   * made by hostile frames the model does not track one by one; each
   * tracked request's deadline (UINT64_MAX: none). */
  unsigned char *app_live;
  uint64_t *app_deadline;
  long app_cap, app_count, foreign, next_app;
  uint64_t now; /* of the current engine call */
  /* Driver and process. */
  int reading;
  int observe_process;
  mcpp_process_state process;
} host;

static int is_outcome(mcpp_event_type t) {
  return t == MCPP_EV_PONG || t == MCPP_EV_TIMEOUT || t == MCPP_EV_PING_ERROR ||
         t == MCPP_EV_UNSUPPORTED || t == MCPP_EV_PROBE_OK ||
         t == MCPP_EV_PROBE_TIMEOUT;
}

/* A REQUEST_TIMEOUT for tracked request n: it was due, and no tracked
 * request with an earlier deadline is still waiting. */
static void check_expiry_order(host *h, long n) {
  H_ASSERT(h->app_deadline[n] != UINT64_MAX && h->app_deadline[n] <= h->now);
  for (long m = 0; m < h->next_app; m++)
    if (h->app_live[m] && m != n) H_ASSERT(h->app_deadline[m] >= h->app_deadline[n]);
}

static void host_on_event(mcpp_engine *e, const mcpp_event *ev, void *ud) {
  host *h = ud;
  H_ASSERT(ev->type >= 0 && ev->type <= MCPP_EV_LAST);
  h->events[ev->type]++;
  H_ASSERT(ev->failure_count <= h->s.failures);
  /* Silence while we do not read is ours: nothing is convicted for it. */
  if (!h->reading)
    H_ASSERT(ev->type != MCPP_EV_TIMEOUT && ev->type != MCPP_EV_PROBE_TIMEOUT &&
             ev->type != MCPP_EV_SUSPECT && ev->type != MCPP_EV_STALE &&
             ev->type != MCPP_EV_REQUEST_TIMEOUT);
  switch (ev->type) {
    case MCPP_EV_SUSPECT:
      H_ASSERT(h->state == MCPP_STATE_ALIVE);
      H_ASSERT(ev->state == MCPP_STATE_SUSPECT);
      break;
    case MCPP_EV_STALE:
      H_ASSERT(h->state == MCPP_STATE_ALIVE || h->state == MCPP_STATE_SUSPECT);
      H_ASSERT(ev->state == MCPP_STATE_STALE);
      /* Failed pings or probes, or the process seen stopped or exited. */
      H_ASSERT(ev->failure_count == h->s.failures ||
               (ev->proof && strcmp(ev->proof, "process") == 0));
      H_ASSERT(ev->proof != NULL);
      break;
    case MCPP_EV_RECOVERED:
      /* Never without a preceding SUSPECT or STALE. */
      H_ASSERT(h->state == MCPP_STATE_SUSPECT || h->state == MCPP_STATE_STALE);
      H_ASSERT(ev->state == MCPP_STATE_ALIVE);
      H_ASSERT(ev->failure_count == 0);
      break;
    case MCPP_EV_CLOSED:
      H_ASSERT(h->closing);
      H_ASSERT(ev->state == MCPP_STATE_CLOSED);
      break;
    default:
      H_ASSERT(ev->state == h->state ||
               (h->closing && ev->state == MCPP_STATE_CLOSED));
      break;
  }
  h->state = ev->state;

  if (ev->type == MCPP_EV_SUSPECT || ev->type == MCPP_EV_RECOVERED)
    H_ASSERT(ev->proof != NULL);
  int outcome = ev->id && is_outcome(ev->type);
  if (outcome && ev->type != MCPP_EV_TIMEOUT && ev->type != MCPP_EV_PROBE_TIMEOUT)
    h->outcomes++;
  if (ev->type == MCPP_EV_PING || ev->type == MCPP_EV_PROBE) {
    H_ASSERT(ev->type == MCPP_EV_PING || !ev->manual);
    H_ASSERT(ev->ping_seq == h->max_seq + 1);
    h->max_seq = ev->ping_seq;
    if (ev->manual) {
      H_ASSERT(h->n_manual_out < 2048);
      h->manual_out[h->n_manual_out++] = ev->ping_seq;
    } else {
      /* At most one keepalive ping outstanding; the only way one goes
       * without an outcome is a detected host pause (re-probe). */
      if (h->ka_out) {
        H_ASSERT(h->pause_ok);
        h->ka_abandoned++;
      }
      h->ka_out = 1;
      h->ka_seq = ev->ping_seq;
    }
  } else if (outcome && !ev->manual) {
    H_ASSERT(h->ka_out && ev->ping_seq == h->ka_seq);
    h->ka_out = 0;
  } else if (outcome) {
    int i;
    for (i = 0; i < h->n_manual_out; i++)
      if (h->manual_out[i] == ev->ping_seq) break;
    H_ASSERT(i < h->n_manual_out);
    h->manual_out[i] = h->manual_out[--h->n_manual_out];
  }
  if (ev->type == MCPP_EV_REQUEST_TIMEOUT) {
    unsigned long n;
    if (ev->id_len > 6 && sscanf(ev->id, "\"req-%lu\"", &n) == 1) {
      H_ASSERT((long)n < h->app_cap && h->app_live[n]);
      check_expiry_order(h, (long)n);
      h->app_live[n] = 0;
      h->app_count--;
    } else {
      H_ASSERT(h->foreign > 0);
      h->foreign--;
    }
  }
}

static int host_send(mcpp_engine *e, mcpp_frame_kind kind, const char *frame,
                     size_t len, void *ud) {
  host *h = ud;
  H_ASSERT(kind >= 0 && kind <= 3);
  H_ASSERT(h->reading || kind == MCPP_FRAME_PING || kind == MCPP_FRAME_PONG ||
           kind == MCPP_FRAME_CANCEL); /* no keepalive probe while not reading */
  if (kind != MCPP_FRAME_CANCEL) H_ASSERT(memchr(frame, '\n', len) == NULL);
  h->call_sent++;
  h->sent_by_kind[kind]++;
  if (kind == MCPP_FRAME_PONG) h->call_pongs++;
  g_clear(&h->last_sent);
  g_put(&h->last_sent, frame, len);
  if (kind != MCPP_FRAME_CANCEL) {
    /* Our pings, probes and pongs are valid JSON. (A cancel echoes the id
     * of the application's own request, whatever bytes it used.) */
    oracle o;
    oracle_scan(frame, len, &o);
    H_ASSERT(o.object);
  }
  return 0;
}

static void host_deliver(mcpp_engine *e, const char *frame, size_t len,
                         void *ud) {
  host *h = ud;
  h->call_deliveries++; /* echoes the application's own request id */
}

static void host_on_record(mcpp_engine *e, const char *json, size_t len,
                           void *ud) {
  host *h = ud;
  h->records++;
  H_ASSERT(strlen(json) == len);
  H_ASSERT(memchr(json, '\n', len) == NULL);
  oracle o;
  oracle_scan(json, len, &o);
  H_ASSERT(o.object); /* records are valid JSON, whatever the peer sent */
}

static int host_process_state(mcpp_engine *e, void *ud) {
  host *h = ud;
  H_ASSERT(h->reading); /* never asked while the driver is not reading */
  return h->process;
}

/* (Re)creates the engine from h->s. */
static void host_start(host *h, uint64_t now) {
  mcpp_engine_callbacks cb = {
      .send = host_send,
      .deliver = host_deliver,
      .on_event = host_on_event,
      .on_record = host_on_record};
  if (h->observe_process) cb.process_state = host_process_state;
  mcpp_engine_free(h->e);
  ASSERT_EQ(mcpp_engine_new(&h->e, &h->s, &cb, h, &h->alloc.a, now), 0);
}

static host *host_new(uint64_t seed, void (*tweak)(mcpp_settings *),
                      uint64_t now) {
  host *h = calloc(1, sizeof *h);
  cur_seed = seed;
  cur_iter = -1;
  cur_frame = NULL;
  cur_len = 0;
  mcpp_settings_default(&h->s);
  h->s.nonce = 0x0123456789abcdefULL;
  h->s.peer_name = "hostile";
  if (tweak) tweak(&h->s);
  h->alloc.a.malloc = fx_malloc;
  h->alloc.a.realloc = fx_realloc;
  h->alloc.a.free = fx_free_block;
  h->alloc.a.user_data = &h->alloc;
  h->reading = 1;
  h->process = MCPP_PROCESS_RUNNING;
  host_start(h, now);
  h->state = MCPP_STATE_ALIVE;
  h->app_cap = 1 << 20;
  h->app_live = calloc((size_t)h->app_cap, 1);
  h->app_deadline = malloc((size_t)h->app_cap * sizeof *h->app_deadline);
  return h;
}

static void host_done(host *h, uint64_t now) {
  h->closing = 1;
  mcpp_engine_close(h->e, 0, "test over", now);
  H_ASSERT(h->n_manual_out == 0); /* close reports every manual ping */
  mcpp_engine_free(h->e);
  ASSERT_EQ(h->alloc.live, 0);
  g_free(&h->last_sent);
  free(h->app_live);
  free(h->app_deadline);
  free(h);
}

static void host_info(host *h, mcpp_engine_info *info) {
  mcpp_engine_get_info(h->e, info);
  H_ASSERT(info->failure_count <= h->s.failures);
  H_ASSERT(info->state == h->state);
}

/* Runs the timer as a driver would; checks the deadline afterwards. */
static void host_timer(host *h, uint64_t now) {
  uint64_t due = mcpp_engine_next_deadline(h->e);
  uint64_t pause = (uint64_t)h->s.pause_threshold_ms * MS;
  h->pause_ok = due != UINT64_MAX && now > due && now - due > pause;
  h->call_sent = h->call_pongs = 0;
  h->now = now;
  cur_frame = NULL;
  H_ASSERT(mcpp_engine_on_timer(h->e, now) == 0);
  h->pause_ok = 0;
  H_ASSERT(h->call_pongs == 0);
  /* Whatever was due has run: the next deadline is not in the past (the
   * pause grace may push deadlines ahead, never behind). */
  uint64_t next = mcpp_engine_next_deadline(h->e);
  H_ASSERT(next > now);
}

/* Feeds one inbound frame and checks the classification invariants. */
static int host_recv(host *h, const char *f, size_t n, uint64_t now) {
  cur_frame = f;
  cur_len = n;
  char *copy = n <= 4096 ? malloc(n + 1) : NULL;
  if (copy) memcpy(copy, f, n);
  h->call_sent = h->call_pongs = 0;
  h->now = now;
  long outcomes = h->outcomes;
  int rc = mcpp_engine_recv(h->e, f, n, now);
  if (copy) {
    H_ASSERT(memcmp(copy, f, n) == 0); /* the frame is never altered */
    free(copy);
  }
  if (h->state == MCPP_STATE_CLOSED) {
    H_ASSERT(rc == MCPP_ERR_CLOSED);
    H_ASSERT(h->call_sent == 0);
    return rc;
  }
  H_ASSERT(rc == MCPP_RECV_FORWARD || rc == MCPP_RECV_CONSUMED);
  oracle o;
  oracle_scan(f, n, &o);
  int dup = o_dup(&o);
  long new_outcomes = h->outcomes - outcomes;
  if (rc == MCPP_RECV_CONSUMED && h->call_pongs) {
    /* (a) a well-formed ping, answered once, id echoed byte for byte. */
    H_ASSERT(h->call_sent == 1 && h->call_pongs == 1);
    H_ASSERT(o.object && !dup);
    H_ASSERT(span_decodes_to_ping(&o.m[M_METHOD]));
    H_ASSERT(id_is_scalar(&o.m[M_ID]));
    H_ASSERT(n <= SMALL_FRAME);
    static const char head[] = "{\"jsonrpc\":\"2.0\",\"id\":";
    static const char tail[] = ",\"result\":{}}";
    const gbuf *s = &h->last_sent;
    H_ASSERT(s->n == sizeof head - 1 + o.m[M_ID].n + sizeof tail - 1);
    H_ASSERT(memcmp(s->p, head, sizeof head - 1) == 0);
    H_ASSERT(memcmp(s->p + sizeof head - 1, o.m[M_ID].p, o.m[M_ID].n) == 0);
    H_ASSERT(memcmp(s->p + s->n - (sizeof tail - 1), tail, sizeof tail - 1) == 0);
    H_ASSERT(new_outcomes == 0);
  } else if (rc == MCPP_RECV_CONSUMED) {
    /* (b) a response to one of our issued ping or probe ids. */
    H_ASSERT(h->call_sent == 0);
    H_ASSERT(new_outcomes <= 1);
    if (o.valid) {
      H_ASSERT(o.object && !dup);
      H_ASSERT(o.m[M_METHOD].p == NULL);
      H_ASSERT(o.m[M_RESULT].p || o.m[M_ERROR].p);
      H_ASSERT(our_seq(o.m[M_ID].p, o.m[M_ID].n, h->max_seq) != 0);
    } else {
      /* Not strict JSON (cJSON is laxer): at least our id is in it. */
      H_ASSERT(memmem(f, n, "\"mcpp-" NONCE "-", 23) != NULL);
    }
  } else {
    H_ASSERT(h->call_sent == 0);
    H_ASSERT(new_outcomes == 0);
    /* Nothing that is certainly ours is forwarded. */
    if (o.object && !dup && o.max_depth <= SCAN_DEPTH) {
      if (span_is(&o.m[M_METHOD], "\"ping\"") && id_is_scalar(&o.m[M_ID]) &&
          n <= SMALL_FRAME)
        H_ASSERT(!"a well-formed ping was forwarded");
      if (o.m[M_METHOD].p == NULL && (o.m[M_RESULT].p || o.m[M_ERROR].p) &&
          o.m[M_ID].p && our_seq(o.m[M_ID].p, o.m[M_ID].n, h->max_seq))
        H_ASSERT(!"a response to our ping was forwarded");
    }
  }
  cur_frame = NULL;
  return rc;
}

static int host_out_timed(host *h, const char *f, size_t n, uint32_t timeout_ms,
                          uint64_t now) {
  cur_frame = f;
  cur_len = n;
  h->call_sent = 0;
  h->now = now;
  int rc = mcpp_engine_observe_outbound_timed(h->e, f, n, timeout_ms, now);
  H_ASSERT(rc == 0); /* never fails but for NOMEM; this allocator never fails */
  H_ASSERT(h->call_sent == 0);
  cur_frame = NULL;
  return rc;
}

static int host_out(host *h, const char *f, size_t n, uint64_t now) {
  return host_out_timed(h, f, n, MCPP_TIMEOUT_DEFAULT, now);
}

/* ------------------------------------------------------------ messages */

/* A JSON-RPC message with its members in random order and whitespace
 * everywhere; NULL members are left out. Keys are sometimes spelled with
 * escapes ("\u0069d"), which every JSON parser reads as the same key. */
static void g_message(gbuf *b, grng *r, const char *id, const char *method,
                      const char *body_key, const char *body) {
  const char *keys[6], *vals[6];
  int n = 0;
  if (g_chance(r, 90)) keys[n] = "\"jsonrpc\"", vals[n++] = "\"2.0\"";
  if (id) keys[n] = g_chance(r, 5) ? "\"\\u0069d\"" : "\"id\"", vals[n++] = id;
  if (method)
    keys[n] = g_chance(r, 5) ? "\"\\u006dethod\"" : "\"method\"",
    vals[n++] = method;
  if (body_key) keys[n] = body_key, vals[n++] = body;
  if (g_chance(r, 10)) keys[n] = "\"_x\"", vals[n++] = "[\"method\",\"ping\"]";
  for (int i = n - 1; i > 0; i--) { /* shuffle */
    int j = (int)g_below(r, (uint32_t)i + 1);
    const char *k = keys[i], *v = vals[i];
    keys[i] = keys[j], vals[i] = vals[j];
    keys[j] = k, vals[j] = v;
  }
  g_ws(b, r);
  g_putc(b, '{');
  for (int i = 0; i < n; i++) {
    if (i) g_putc(b, ',');
    g_ws(b, r);
    g_puts(b, keys[i]);
    g_ws(b, r);
    g_putc(b, ':');
    g_ws(b, r);
    g_puts(b, vals[i]);
    g_ws(b, r);
  }
  g_putc(b, '}');
  g_ws(b, r);
}

/* An id of any shape: valid and not, mimicking ours or not. */
static void g_id(gbuf *b, grng *r, uint64_t max_seq) {
  switch (g_below(r, 16)) {
    case 0: case 1: g_number(b, r); break;
    case 2: case 3: g_string(b, r, 10); break;
    case 4: g_puts(b, "\"mcpp-0123456789abcdee-1\""); break; /* other nonce */
    case 5: g_printf_u64(b, "\"mcpp-" NONCE "-%llu\"", max_seq + 1 + g_below(r, 5));
      break; /* unissued */
    case 6: g_printf_u64(b, "\"mcpp-" NONCE "-0%llu\"", 1 + g_below(r, max_seq + 1));
      break; /* leading zero */
    case 7: g_printf_u64(b, "\"mcpp-" NONCE "-%llu \"", 1 + g_below(r, max_seq + 1));
      break;
    case 8: g_printf_u64(b, "\"mcpp-" NONCE "-\\u003%llu\"", 1 + g_below(r, 9));
      break; /* escaped digit */
    case 9: g_puts(b, "\"mcpp-" NONCE "-\""); break;
    case 10: g_puts(b, "null"); break;
    case 11: g_puts(b, g_chance(r, 50) ? "true" : "{}"); break;
    case 12: g_puts(b, "[1]"); break;
    case 13: g_puts(b, "\"\\u0000\""); break;
    case 14: g_puts(b, "\"mcpp-" NONCE "-99999999999999999999999\""); break;
    default: g_puts(b, "-0"); break;
  }
}

static void g_our_id(gbuf *b, grng *r, uint64_t max_seq) {
  if (max_seq == 0) {
    g_id(b, r, max_seq);
    return;
  }
  g_printf_u64(b, "\"mcpp-" NONCE "-%llu\"", 1 + g_below(r, (uint32_t)max_seq));
}

typedef struct gen_ctx {
  gbuf frame, id, body, tmp;
} gen_ctx;

static void gen_ctx_free(gen_ctx *g) {
  g_free(&g->frame);
  g_free(&g->id);
  g_free(&g->body);
  g_free(&g->tmp);
}

/* One inbound frame of any kind, valid or corrupted. */
static void g_inbound(gen_ctx *g, grng *r, uint64_t max_seq) {
  gbuf *b = &g->frame;
  g_clear(b);
  g_clear(&g->id);
  g_clear(&g->body);
  uint32_t kind = g_below(r, 100);
  int corrupt = g_chance(r, 30);
  if (kind < 25) { /* a ping, maybe with params */
    g_id(&g->id, r, max_seq);
    const char *bk = NULL;
    if (g_chance(r, 40)) {
      g_value(&g->body, r, 3);
      bk = "\"params\"";
    }
    g_message(b, r, g->id.p, g_chance(r, 90) ? "\"ping\"" : "\"p\\u0069ng\"",
              bk, g->body.p);
  } else if (kind < 45) { /* an answer to our ping (or one that looks so) */
    if (g_chance(r, 70)) g_our_id(&g->id, r, max_seq);
    else g_id(&g->id, r, max_seq);
    uint32_t a = g_below(r, 5);
    if (a == 0) g_puts(&g->body, "{}");
    else if (a == 1) g_value(&g->body, r, 3);
    else g_puts(&g->body, a == 2 ? "{\"code\":-32601,\"message\":\"nope\"}"
                                 : "{\"code\":-32603,\"message\":\"busy \\\"x\\\"\"}");
    g_message(b, r, g->id.p, NULL, a >= 2 ? "\"error\"" : "\"result\"",
              g->body.p);
  } else if (kind < 65) { /* other requests, notifications, responses */
    uint32_t a = g_below(r, 4);
    if (a != 1) g_id(&g->id, r, max_seq);
    g_value(&g->body, r, 4);
    static const char *methods[] = {"\"tools/call\"", "\"notifications/progress\"",
                                    "\"sampling/createMessage\"", "\"pinG\"",
                                    "\"ping \"", "\"method\""};
    if (a == 3)
      g_message(b, r, g->id.p, NULL, "\"result\"", g->body.p);
    else
      g_message(b, r, a == 1 ? NULL : g->id.p, methods[g_below(r, 6)],
                g_chance(r, 50) ? "\"params\"" : NULL, g->body.p);
  } else if (kind < 75) { /* duplicate keys, raw or escaped */
    g_id(&g->id, r, max_seq);
    static const char *dups[] = {
        ",\"id\":7", ",\"\\u0069d\":7", ",\"method\":\"tools/call\"",
        ",\"\\u006dethod\":\"tools/call\"", ",\"result\":{}",
        ",\"\\u0072esult\":{}", ",\"params\":1,\"params\":2",
        ",\"error\":{\"code\":1}"};
    g_message(b, r, g->id.p, g_chance(r, 60) ? "\"ping\"" : NULL,
              g_chance(r, 50) ? "\"result\"" : NULL, "{}");
    size_t close = b->n;
    while (close > 0 && b->p[close - 1] != '}') close--;
    g_clear(&g->tmp);
    g_put(&g->tmp, b->p + close - 1, b->n - close + 1);
    b->n = close - 1;
    g_puts(b, dups[g_below(r, 8)]);
    g_put(b, g->tmp.p, g->tmp.n);
  } else if (kind < 85) { /* pings hidden in values */
    g_clear(&g->body);
    g_puts(&g->body, "{\"method\":\"ping\",\"id\":");
    g_our_id(&g->body, r, max_seq);
    g_puts(&g->body, ",\"result\":{}}");
    g_id(&g->id, r, max_seq);
    g_message(b, r, g_chance(r, 50) ? g->id.p : NULL,
              g_chance(r, 50) ? "\"tools/call\"" : NULL,
              g_chance(r, 50) ? "\"params\"" : "\"result\"", g->body.p);
  } else if (kind < 92) { /* not an object at all */
    g_value(b, r, 3);
  } else { /* junk bytes */
    for (uint32_t i = g_below(r, 40); i > 0; i--) g_putc(b, (char)g_below(r, 256));
  }
  if (corrupt)
    for (uint32_t i = 1 + g_below(r, 3); i > 0; i--) g_corrupt(b, r);
}

/* ---------------------------------------------------------------- tests */

static void tweak_keepalive(mcpp_settings *s) {
  s->interval_ms = 1000;
  s->timeout_ms = 300;
  s->failures = 3;
  s->pause_threshold_ms = 2000;
  s->on_stale = MCPP_STALE_REPORT;
}

/* Every kind of inbound frame; manual pings issued and answered on the
 * way, the timer run when due. */
static void run_inbound(uint64_t seed, long iterations) {
  uint64_t now = T0;
  host *h = host_new(seed, seed & 1 ? tweak_keepalive : NULL, now);
  grng r = {seed};
  gen_ctx g = {0};
  for (cur_iter = 0; cur_iter < iterations; cur_iter++) {
    now += g_below(&r, 3000);
    if (g_chance(&r, 3)) {
      uint64_t seq;
      cur_frame = NULL;
      int rc = mcpp_engine_ping(h->e, g_below(&r, 2000), now, &seq);
      H_ASSERT(rc == 0 || rc == MCPP_ERR_UNSUPPORTED);
    }
    if (g_chance(&r, 1) && h->n_manual_out) { /* its outcome never comes */
      int i = (int)g_below(&r, (uint32_t)h->n_manual_out);
      H_ASSERT(mcpp_engine_cancel_ping(h->e, h->manual_out[i]) == 0);
      h->manual_out[i] = h->manual_out[--h->n_manual_out];
    }
    if (mcpp_engine_next_deadline(h->e) <= now) host_timer(h, now);
    g_inbound(&g, &r, h->max_seq);
    host_recv(h, g.frame.p, g.frame.n, now);
    if (cur_iter % 1024 == 0) {
      mcpp_engine_info info;
      host_info(h, &info);
    }
  }
  host_done(h, now);
  gen_ctx_free(&g);
}

TEST_TIMEOUT(hostile_inbound_frames_classified_exactly, 60) {
  long n = under_valgrind() ? 4000 : 25000;
  for (uint64_t seed = 1; seed <= 4; seed++) run_inbound(seed * 7919, n);
}

/* A few frames cut at every position, and with a NUL, a stray byte and an
 * invalid UTF-8 byte at every position. */
TEST_TIMEOUT(hostile_cut_and_poke_at_every_position, 60) {
  uint64_t now = T0;
  host *h = host_new(42, NULL, now);
  uint64_t seq;
  ASSERT_EQ(mcpp_engine_ping(h->e, 0, now, &seq), 0);
  ASSERT_EQ(mcpp_engine_ping(h->e, 0, now, &seq), 0);
  const char *frames[] = {
      "{\"jsonrpc\":\"2.0\",\"id\":\"a\\\"b\\\\c\\u00e9\\ud83d\\ude00/\",\"method\":\"ping\"}",
      " { \"method\" : \"ping\" , \"params\" : {\"_meta\":{\"x\":[1,{\"id\":2}]}} , \"id\" : 12345678901234567890123 } ",
      "{\"jsonrpc\":\"2.0\",\"id\":\"mcpp-" NONCE "-1\",\"result\":{}}",
      "{\"jsonrpc\":\"2.0\",\"id\":\"mcpp-" NONCE "-2\",\"error\":{\"code\":-32601,\"message\":\"x\"}}",
      "{\"jsonrpc\":\"2.0\",\"id\":7,\"result\":{\"method\":\"ping\",\"id\":\"mcpp-" NONCE "-1\"}}",
      "{\"jsonrpc\":\"2.0\",\"id\":-0.5e3,\"method\":\"ping\",\"params\":[\"\xe2\x82\xac\",true,false,null]}",
      "{\"\\u0069d\":1,\"method\":\"ping\"}",
      "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"initialize\",\"params\":{\"protocolVersion\":\"2025-06-18\",\"clientInfo\":{\"name\":\"c\"}}}",
  };
  static const char pokes[] = {'\0', '"', '\\', '{', ']', '\x01', '\n'};
  gbuf b = {0};
  cur_iter = 0;
  for (size_t i = 0; i < sizeof frames / sizeof frames[0]; i++) {
    size_t n = strlen(frames[i]);
    for (size_t cut = 0; cut <= n; cut++, cur_iter++) {
      /* An exact-size heap copy, so ASan sees any read past the end. */
      char *f = malloc(cut ? cut : 1);
      memcpy(f, frames[i], cut);
      host_recv(h, f, cut, now);
      free(f);
      if (cut == n) break;
      for (size_t k = 0; k < sizeof pokes + 2; k++, cur_iter++) {
        g_clear(&b);
        g_put(&b, frames[i], n);
        if (k < sizeof pokes) {
          b.p[cut] = pokes[k];
        } else if (k == sizeof pokes) {
          b.p[cut] = (char)0xff;
        } else { /* a truncated multi-byte sequence inserted */
          g_clear(&b);
          g_put(&b, frames[i], cut);
          g_puts(&b, "\xe2\x82");
          g_put(&b, frames[i] + cut, n - cut);
        }
        host_recv(h, b.p, b.n, now);
      }
    }
  }
  g_free(&b);
  host_done(h, now);
}

static char *repeat(const char *head, char c, size_t count, const char *mid,
                    char c2, size_t count2, const char *tail, size_t *len) {
  gbuf b = {0};
  g_puts(&b, head);
  g_fill(&b, c, count);
  g_puts(&b, mid);
  g_fill(&b, c2, count2);
  g_puts(&b, tail);
  *len = b.n;
  return b.p;
}

/* 100k-deep brackets in every position must neither recurse nor be
 * consumed; multi-MiB frames are handled without copies or parses. */
TEST_TIMEOUT(hostile_deep_nesting_and_huge_frames, 120) {
  uint64_t now = T0;
  host *h = host_new(99, tweak_keepalive, now);
  uint64_t seq;
  ASSERT_EQ(mcpp_engine_ping(h->e, 0, now, &seq), 0);
  size_t len;
  const size_t deep = 100000;
  struct {
    const char *head, *mid, *tail;
    char open, close;
  } nests[] = {
      {"", "", "", '[', ']'},
      {"", "", "", '[', '['},
      {"", "", "", '{', '}'},
      {"{\"id\":1,\"method\":\"ping\",\"params\":", "", "}", '[', ']'},
      {"{\"id\":\"mcpp-" NONCE "-1\",\"result\":", "", "}", '[', ']'},
      {"{\"id\":", "", ",\"method\":\"ping\"}", '[', ']'},
      {"{\"id\":1,\"method\":\"ping\",\"params\":", "", "", '[', ']'},
      {"{\"id\":1,\"result\":", "1", "}", '[', ']'},
      {"{\"a\":", "\"", "", '{', '"'},
  };
  cur_iter = 0;
  for (size_t i = 0; i < sizeof nests / sizeof nests[0]; i++, cur_iter++) {
    char *f = repeat(nests[i].head, nests[i].open, deep, nests[i].mid,
                     nests[i].close, nests[i].close == '"' ? 1 : deep,
                     nests[i].tail, &len);
    host_recv(h, f, len, now);
    host_out(h, f, len, now);
    free(f);
  }
  mcpp_engine_info info;
  host_info(h, &info);
  ASSERT_EQ(info.in_flight, 0);

  /* Huge frames, 1 to 8 MiB. */
  grng r = {99};
  int rounds = under_valgrind() ? 2 : 8;
  for (int i = 0; i < rounds; i++, cur_iter++) {
    size_t big = ((size_t)1 << 20) * (1 + g_below(&r, 8));
    now += MS;
    /* Our request with a huge payload, then its huge answer, id last. */
    char *f = repeat("{\"jsonrpc\":\"2.0\",\"id\":\"req-1\",\"method\":\"tools/call\",\"params\":{\"s\":\"",
                     'x', big, "", 'y', 0, "\"}}", &len);
    host_out(h, f, len, now);
    free(f);
    host_info(h, &info);
    ASSERT_EQ(info.in_flight, 1);
    f = repeat("{\"jsonrpc\":\"2.0\",\"result\":{\"s\":\"", 'x', big, "\\\"",
               '\\', 2, "\"},\"id\":\"req-1\"}", &len);
    ASSERT_EQ(host_recv(h, f, len, now), MCPP_RECV_FORWARD);
    free(f);
    host_info(h, &info);
    ASSERT_EQ(info.in_flight, 0);
    /* A huge ping is forwarded (the application may answer it). */
    f = repeat("{\"id\":1,\"method\":\"ping\",\"params\":\"", 'p', big, "", 0, 0,
               "\"}", &len);
    ASSERT_EQ(host_recv(h, f, len, now), MCPP_RECV_FORWARD);
    free(f);
    /* A huge answer to our ping is consumed without a full parse. */
    ASSERT_EQ(mcpp_engine_ping(h->e, 0, now, &seq), 0);
    char head[128];
    snprintf(head, sizeof head, "{\"id\":\"mcpp-" NONCE "-%llu\",\"result\":{\"s\":\"",
             (unsigned long long)seq);
    f = repeat(head, 'z', big, "", 0, 0, "\"}}", &len);
    long pongs = h->events[MCPP_EV_PONG];
    ASSERT_EQ(host_recv(h, f, len, now), MCPP_RECV_CONSUMED);
    ASSERT_EQ(h->events[MCPP_EV_PONG], pongs + 1);
    /* Truncated, it is not ours to take. */
    ASSERT_EQ(host_recv(h, f, len - 1, now), MCPP_RECV_FORWARD);
    free(f);
    /* A huge string id on an application request, answered. */
    f = repeat("{\"id\":\"", 'i', big, "", 0, 0, "\",\"method\":\"x\"}", &len);
    host_out(h, f, len, now);
    free(f);
    f = repeat("{\"id\":\"", 'i', big, "", 0, 0, "\",\"result\":{}}", &len);
    host_recv(h, f, len, now);
    free(f);
    host_info(h, &info);
    ASSERT_EQ(info.in_flight, 0);
  }
  /* The largest ping we still answer: its id is echoed, and recorded. */
  size_t id_len = SMALL_FRAME - 64;
  char *f = repeat("{\"method\":\"ping\",\"id\":\"", 'q', id_len, "", 0, 0, "\"}", &len);
  ASSERT_EQ(host_recv(h, f, len, now), MCPP_RECV_CONSUMED);
  free(f);
  host_done(h, now);
}

/* ------------------------------------------------------- ledger model */

static void app_id(gbuf *b, grng *r, long n, int answer) {
  /* The same id in another spelling when answered: ids match by value. */
  switch (answer ? g_below(r, 4) : 0) {
    case 1: g_printf_u64(b, "\"re\\u0071-%llu\"", (uint64_t)n); break;
    case 2: g_printf_u64(b, "\"req\\u002d%llu\"", (uint64_t)n); break;
    default: g_printf_u64(b, "\"req-%llu\"", (uint64_t)n); break;
  }
}

static long pick_live(host *h, grng *r, long next) {
  if (h->app_count == 0) return -1;
  for (int tries = 0; tries < 64; tries++) {
    long n = (long)g_below(r, (uint32_t)next);
    if (h->app_live[n]) return n;
  }
  for (long n = 0; n < next; n++)
    if (h->app_live[n]) return n;
  return -1;
}

static void count_app(const char *id, size_t id_len, const char *method,
                      uint64_t sent_at, void *arg) {
  long *n = arg;
  if (id_len > 5 && memcmp(id, "\"req-", 5) == 0) (*n)++;
}

static void run_ledger(uint64_t seed, long iterations) {
  uint64_t now = T0;
  host *h = host_new(seed, NULL, now);
  if (seed & 1) { /* half the runs time requests out by default too */
    h->s.request_timeout_ms = 50;
    host_start(h, now);
  }
  grng r = {seed};
  gen_ctx g = {0};
  long next = 0;
  for (cur_iter = 0; cur_iter < iterations; cur_iter++) {
    now += g_below(&r, 2000);
    if (mcpp_engine_next_deadline(h->e) <= now) host_timer(h, now);
    /* Whatever was due has expired: every tracked request still waiting
     * has a later deadline (no host pause in these small steps). */
    if (cur_iter % 64 == 0)
      for (long m = 0; m < next; m++)
        if (h->app_live[m]) H_ASSERT(h->app_deadline[m] > now);
    mcpp_engine_info before, after;
    host_info(h, &before);
    g_clear(&g.frame);
    g_clear(&g.id);
    g_clear(&g.body);
    uint32_t k = g_below(&r, 100);
    long n;
    if (k < 30 && next < h->app_cap) { /* an application request */
      n = next++;
      app_id(&g.id, &r, n, 0);
      g_value(&g.body, &r, 3);
      static const char *methods[] = {"\"tools/call\"", "\"tools/list\"",
                                      "\"initialize\"", "\"x\\ny\""};
      g_message(&g.frame, &r, g.id.p, methods[g_below(&r, 4)],
                g_chance(&r, 70) ? "\"params\"" : NULL, g.body.p);
      /* Each request its own timeout: the default, none, or its own. */
      uint32_t pick = g_below(&r, 4), timeout_ms;
      if (pick == 0) timeout_ms = MCPP_TIMEOUT_DEFAULT;
      else if (pick == 1) timeout_ms = MCPP_TIMEOUT_NONE;
      else timeout_ms = 1 + g_below(&r, 200);
      uint32_t effective = pick == 0 ? h->s.request_timeout_ms
                           : pick == 1 ? 0 : timeout_ms;
      H_ASSERT(host_out_timed(h, g.frame.p, g.frame.n, timeout_ms, now) == 0);
      h->app_live[n] = 1;
      h->app_deadline[n] = effective ? now + (uint64_t)effective * MS : UINT64_MAX;
      h->next_app = next;
      h->app_count++;
      host_info(h, &after);
      H_ASSERT(after.in_flight == before.in_flight + 1);
    } else if (k < 50 && (n = pick_live(h, &r, next)) >= 0) { /* answered */
      app_id(&g.id, &r, n, 1);
      g_message(&g.frame, &r, g.id.p, NULL,
                g_chance(&r, 80) ? "\"result\"" : "\"error\"", "{}");
      host_recv(h, g.frame.p, g.frame.n, now);
      h->app_live[n] = 0;
      h->app_count--;
      host_info(h, &after);
      H_ASSERT(after.in_flight == before.in_flight - 1);
    } else if (k < 54 && (n = pick_live(h, &r, next)) >= 0) { /* aborted */
      app_id(&g.id, &r, n, 1);
      long cancels = h->events[MCPP_EV_REQUEST_CANCELLED];
      h->now = now;
      H_ASSERT(mcpp_engine_cancel_request(h->e, g.id.p, g.id.n, now) == 0);
      H_ASSERT(h->events[MCPP_EV_REQUEST_CANCELLED] == cancels + 1);
      h->app_live[n] = 0;
      h->app_count--;
      host_info(h, &after);
      H_ASSERT(after.in_flight == before.in_flight - 1);
      /* Gone: a second abort finds nothing. */
      H_ASSERT(mcpp_engine_cancel_request(h->e, g.id.p, g.id.n, now) ==
               MCPP_ERR_NOT_FOUND);
    } else if (k < 58 && (n = pick_live(h, &r, next)) >= 0) { /* cancelled */
      app_id(&g.id, &r, n, 1);
      g_clear(&g.body);
      g_puts(&g.body, "{\"reason\":\"user\",\"requestId\":");
      g_puts(&g.body, g.id.p);
      g_puts(&g.body, "}");
      g_message(&g.frame, &r, NULL, "\"notifications/cancelled\"",
                "\"params\"", g.body.p);
      host_out(h, g.frame.p, g.frame.n, now);
      h->app_live[n] = 0;
      h->app_count--;
      host_info(h, &after);
      H_ASSERT(after.in_flight == before.in_flight - 1);
    } else if (k < 80) { /* hostile outbound: may add an untracked entry */
      g_inbound(&g, &r, h->max_seq);
      host_out(h, g.frame.p, g.frame.n, now);
      host_info(h, &after);
      H_ASSERT(after.in_flight == before.in_flight ||
               after.in_flight == before.in_flight + 1);
      h->foreign += (long)after.in_flight - (long)before.in_flight;
    } else { /* hostile inbound: may only clear an untracked entry */
      g_inbound(&g, &r, h->max_seq);
      host_recv(h, g.frame.p, g.frame.n, now);
      host_info(h, &after);
      H_ASSERT(after.in_flight == before.in_flight ||
               after.in_flight + 1 == before.in_flight);
      h->foreign -= (long)before.in_flight - (long)after.in_flight;
      H_ASSERT(h->foreign >= 0);
    }
    host_info(h, &after);
    /* The reference model: sent - answered - cancelled - timed out. */
    H_ASSERT((long)after.in_flight == h->app_count + h->foreign);
    if (cur_iter % 256 == 0) {
      long apps = 0;
      mcpp_engine_foreach_in_flight(h->e, count_app, &apps);
      H_ASSERT(apps == h->app_count);
    }
  }
  h->n_manual_out = 0;
  host_done(h, now);
  gen_ctx_free(&g);
}

TEST_TIMEOUT(hostile_ledger_matches_reference_model, 60) {
  long n = under_valgrind() ? 4000 : 25000;
  for (uint64_t seed = 1; seed <= 4; seed++) run_ledger(seed * 104729, n);
}

/* ------------------------------------------------------ state machine */

static void run_timeline(uint64_t seed, long iterations, int close_on_stale) {
  uint64_t now = T0;
  host *h = host_new(seed, tweak_keepalive, now);
  if (close_on_stale) h->s.on_stale = MCPP_STALE_CLOSE;
  h->observe_process = seed % 3 != 0; /* a stdio server, or not */
  host_start(h, now);
  mcpp_engine_touch(h->e, now);
  if (seed % 2 == 0) { /* a 2026 session: probes instead of pings */
    static const char discover[] =
        "{\"jsonrpc\":\"2.0\",\"id\":\"d\",\"method\":\"server/discover\",\"params\":"
        "{\"_meta\":{\"io.modelcontextprotocol/protocolVersion\":\"2026-07-28\"}}}";
    static const char result[] =
        "{\"jsonrpc\":\"2.0\",\"id\":\"d\",\"result\":{\"supportedVersions\":[\"2026-07-28\"]}}";
    host_out(h, discover, sizeof discover - 1, now);
    host_recv(h, result, sizeof result - 1, now);
    mcpp_engine_info info;
    host_info(h, &info);
    H_ASSERT(info.unsupported && info.probe_method != NULL);
  }
  grng r = {seed};
  gen_ctx g = {0};
  uint64_t pause_us = (uint64_t)h->s.pause_threshold_ms * MS;
  /* The peer: answers our keepalive ping after a delay, or never. */
  uint64_t answer_at = UINT64_MAX, answer_seq = 0;
  int peer_mood = 0; /* 0 responsive, 1 slow, 2 dead, 3 chatty but deaf */
  long stale_closed = 0;
  for (cur_iter = 0; cur_iter < iterations; cur_iter++) {
    if (g_chance(&r, 2)) peer_mood = (int)g_below(&r, 4);
    /* The process: mostly running, sometimes stopped, rarely gone. */
    if (g_chance(&r, 2)) {
      uint32_t p = g_below(&r, 100);
      h->process = p < 70   ? MCPP_PROCESS_RUNNING
                   : p < 90 ? MCPP_PROCESS_STOPPED
                   : p < 99 ? MCPP_PROCESS_UNKNOWN
                            : MCPP_PROCESS_EXITED;
    }
    /* The driver stops and resumes reading (backpressure). */
    if (h->state != MCPP_STATE_CLOSED && g_chance(&r, h->reading ? 1 : 5)) {
      h->reading = !h->reading;
      /* Resuming abandons the keepalive request out, to send it again. */
      if (h->reading) h->ka_out = 0;
      cur_frame = NULL;
      mcpp_engine_set_reading(h->e, h->reading, now);
      mcpp_engine_info info;
      host_info(h, &info);
      H_ASSERT(info.reading == h->reading);
      if (!h->reading) H_ASSERT(mcpp_engine_next_deadline(h->e) == UINT64_MAX);
    }
    /* Time moves: small steps, sometimes to the next deadline, rarely a
     * host pause far past it. */
    uint64_t due = mcpp_engine_next_deadline(h->e);
    uint32_t step = g_below(&r, 100);
    if (step < 60) now += g_below(&r, 200 * MS);
    else if (step < 95 && due != UINT64_MAX && due > now) now = due + g_below(&r, 5 * MS);
    else if (step < 98) now += g_below(&r, 2 * SEC);
    else now += pause_us + g_below(&r, 10 * SEC);
    if (h->state == MCPP_STATE_STALE && close_on_stale && !h->closing) {
      /* What a driver does on stale with on_stale = close. */
      h->closing = 1;
      mcpp_engine_close(h->e, MCPP_ERR_STALE, "stale", now);
      stale_closed++;
      h->n_manual_out = 0;
    }
    /* The peer's answer, if due. */
    if (answer_at <= now && h->state != MCPP_STATE_CLOSED) {
      g_clear(&g.frame);
      g_printf_u64(&g.frame, "{\"jsonrpc\":\"2.0\",\"id\":\"mcpp-" NONCE "-%llu\",\"result\":{}}",
                   answer_seq);
      H_ASSERT(host_recv(h, g.frame.p, g.frame.n, answer_at > now - 1 ? now : now) ==
               MCPP_RECV_CONSUMED);
      answer_at = UINT64_MAX;
    }
    if (mcpp_engine_next_deadline(h->e) <= now || g_chance(&r, 10)) {
      long pings = h->sent_by_kind[MCPP_FRAME_PING] + h->sent_by_kind[MCPP_FRAME_PROBE];
      host_timer(h, now);
      if (h->sent_by_kind[MCPP_FRAME_PING] + h->sent_by_kind[MCPP_FRAME_PROBE] > pings &&
          h->ka_out && h->ka_seq == h->max_seq) {
        if (peer_mood == 0)
          answer_at = now + g_below(&r, 200 * MS), answer_seq = h->ka_seq;
        else if (peer_mood == 1)
          answer_at = now + 200 * MS + g_below(&r, 500 * MS), answer_seq = h->ka_seq;
        else
          answer_at = UINT64_MAX;
      }
    }
    /* Other traffic. */
    uint32_t t = g_below(&r, 100);
    if (h->state == MCPP_STATE_CLOSED) {
      if (t < 20) {
        g_inbound(&g, &r, h->max_seq);
        H_ASSERT(mcpp_engine_recv(h->e, g.frame.p, g.frame.n, now) == MCPP_ERR_CLOSED);
        H_ASSERT(mcpp_engine_observe_outbound(h->e, g.frame.p, g.frame.n, now) == 0);
        H_ASSERT(mcpp_engine_ping(h->e, 0, now, NULL) == MCPP_ERR_CLOSED);
        H_ASSERT(mcpp_engine_next_deadline(h->e) == UINT64_MAX);
      }
      continue;
    }
    if ((peer_mood == 0 && t < 30) || (peer_mood == 3 && t < 60) || t < 3) {
      g_inbound(&g, &r, h->max_seq);
      host_recv(h, g.frame.p, g.frame.n, now);
    } else if (t < 70) {
      g_inbound(&g, &r, h->max_seq);
      host_out(h, g.frame.p, g.frame.n, now);
    } else if (t < 72) {
      cur_frame = NULL;
      int rc = mcpp_engine_ping(h->e, 1 + g_below(&r, 500), now, NULL);
      H_ASSERT(rc == 0 || rc == MCPP_ERR_UNSUPPORTED);
    } else if (t < 74) {
      mcpp_engine_touch(h->e, now);
    }
    mcpp_engine_info info;
    host_info(h, &info);
    /* healthy() and healthy_until() agree. */
    uint64_t until = mcpp_engine_healthy_until(h->e, now);
    H_ASSERT(until >= now);
    H_ASSERT(mcpp_engine_healthy(h->e, now) == (until > now));
    if (until > now && until != UINT64_MAX)
      H_ASSERT(mcpp_engine_healthy(h->e, until - 1) && !mcpp_engine_healthy(h->e, until));
  }
  if (!h->closing) host_done(h, now);
  else {
    mcpp_engine_free(h->e);
    ASSERT_EQ(h->alloc.live, 0);
    g_free(&h->last_sent);
    free(h->app_live);
    free(h->app_deadline);
    free(h);
  }
  gen_ctx_free(&g);
}

TEST_TIMEOUT(hostile_timeline_state_machine_stays_consistent, 60) {
  long n = under_valgrind() ? 5000 : 30000;
  for (uint64_t seed = 1; seed <= 3; seed++) run_timeline(seed * 31337, n, 0);
  for (uint64_t seed = 4; seed <= 6; seed++) run_timeline(seed * 31337, n, 1);
}
