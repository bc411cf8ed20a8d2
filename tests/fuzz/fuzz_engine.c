/*
 * libFuzzer harness for the sans-I/O engine: the input picks the settings,
 * then a sequence of calls (frames received, frames sent by the
 * application, manual pings and their cancellation, request aborts, clock
 * advances and timer wake-ups, reading paused and resumed, the process
 * stopped or gone, failing writes, close). After every call the harness
 * checks the engine's invariants against its own model:
 *
 *   - every manual ping is resolved exactly once (none once cancelled), and
 *     all of them by the time the engine is closed;
 *   - the ledger holds exactly the application requests the model says are
 *     in flight; each leaves it once, and a synthetic answer is delivered
 *     only for a request that was in flight;
 *   - a wake-up before the next deadline does nothing, and after on_timer
 *     the next deadline is in the future (no busy loop);
 *   - healthy and healthy_until agree;
 *   - the engine never writes to a frame it is given, answers a peer's
 *     ping with its id byte for byte, and consumes only pings and answers
 *     to its own ids (never an ambiguous frame with duplicate keys);
 *   - CLOSED is the last event, and comes exactly once.
 */
#include <cjson/cJSON.h>
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mcpping.h"

/* The model's own code gets no coverage instrumentation: its branches and
 * comparisons are the harness's, not the engine's, and tracing them (the
 * per-call invariant checks above all) cost most of an execution while
 * steering the fuzzer nowhere. ASan and UBSan still check it. */
#pragma clang attribute push(__attribute__((no_sanitize("coverage"))), \
                             apply_to = function)

#define CHECK(cond)                                                        \
  do {                                                                     \
    if (!(cond)) {                                                         \
      fprintf(stderr, "fuzz_engine: check failed at line %d: %s\n",        \
              __LINE__, #cond);                                            \
      abort();                                                             \
    }                                                                      \
  } while (0)

#define MS 1000ULL
#define T0 (1000 * 1000 * MS)

enum { MAX_PINGS = 256, MAX_REQS = 256, ID_RING = 16, ID_MAX = 64 };

typedef enum { P_OUT, P_DONE, P_CANCELLED } ping_state;
typedef enum { R_OUT, R_DONE } req_state;

typedef struct model {
  mcpp_engine *e;
  uint64_t now;
  int send_rc;
  mcpp_process_state process;
  /* Manual pings by the order they were sent. */
  uint64_t ping_seq[MAX_PINGS];
  ping_state ping_st[MAX_PINGS];
  int ping_outcomes[MAX_PINGS];
  int n_pings;
  /* Application requests: id i is the JSON number 1000 + i. */
  req_state req_st[MAX_REQS];
  int n_reqs;
  int in_flight;
  int last_delivered; /* the request index of the last synthetic answer */
  /* The ids of our latest pings and probes, for answers. */
  char ids[ID_RING][ID_MAX];
  int n_ids;
  /* What the last call did. */
  long events, sends;
  char last_sent[256];
  size_t last_sent_len;
  int closed_events;
  int closed; /* mcpp_engine_close was called or CLOSED was emitted */
} model;

static int find_ping(const model *m, uint64_t seq) {
  for (int i = 0; i < m->n_pings; i++)
    if (m->ping_seq[i] == seq) return i;
  return -1;
}

/* The request index of a raw id 1000 + i, or -1. */
static int req_of(const char *id, size_t n) {
  char buf[32];
  if (n == 0 || n >= sizeof buf) return -1;
  memcpy(buf, id, n);
  buf[n] = '\0';
  char *end;
  long v = strtol(buf, &end, 10);
  if (*end || v < 1000 || v >= 1000 + MAX_REQS) return -1;
  return (int)(v - 1000);
}

static void end_req(model *m, int i) {
  CHECK(i >= 0 && i < m->n_reqs);
  CHECK(m->req_st[i] == R_OUT);
  m->req_st[i] = R_DONE;
  m->in_flight--;
}

static int cb_send(mcpp_engine *e, mcpp_frame_kind kind, const char *frame,
                   size_t len, void *ud) {
  model *m = ud;
  CHECK(memchr(frame, '\n', len) == NULL);
  m->sends++;
  if (m->send_rc) return m->send_rc;
  m->last_sent_len = len < sizeof m->last_sent ? len : sizeof m->last_sent;
  memcpy(m->last_sent, frame, m->last_sent_len);
  if (kind == MCPP_FRAME_PING || kind == MCPP_FRAME_PROBE) {
    /* Keep the id for answers: it follows "id": in our own frames. */
    const char *p = strstr(frame, "\"id\":");
    CHECK(p && (size_t)(p - frame) < len);
    p += 5;
    const char *q = memchr(p + 1, '"', len - (size_t)(p + 1 - frame));
    if (*p == '"' && q && q - p + 1 < ID_MAX) {
      char *slot = m->ids[m->n_ids++ % ID_RING];
      memcpy(slot, p, (size_t)(q - p + 1));
      slot[q - p + 1] = '\0';
    }
  }
  return 0;
}

static void cb_deliver(mcpp_engine *e, const char *frame, size_t len,
                       void *ud) {
  model *m = ud;
  cJSON *root = cJSON_ParseWithLength(frame, len);
  CHECK(root != NULL);
  cJSON *id = cJSON_GetObjectItemCaseSensitive(root, "id");
  cJSON *err = cJSON_GetObjectItemCaseSensitive(root, "error");
  CHECK(cJSON_IsNumber(id) && cJSON_IsObject(err));
  int i = (int)id->valuedouble - 1000;
  CHECK(i >= 0 && i < m->n_reqs && m->req_st[i] == R_OUT);
  m->last_delivered = i;
  cJSON_Delete(root);
}

static void cb_event(mcpp_engine *e, const mcpp_event *ev, void *ud) {
  model *m = ud;
  CHECK(m->closed_events == 0); /* nothing after CLOSED */
  m->events++;
  switch (ev->type) {
    case MCPP_EV_PONG:
    case MCPP_EV_TIMEOUT:
    case MCPP_EV_PING_ERROR:
    case MCPP_EV_UNSUPPORTED:
      if (ev->manual && ev->ping_seq) {
        int i = find_ping(m, ev->ping_seq);
        if (i >= 0) {
          /* Resolved at most once: checked here, where it happens,
           * rather than over every ping after every call. */
          CHECK(m->ping_st[i] == P_OUT && m->ping_outcomes[i] == 0);
          m->ping_st[i] = P_DONE;
          m->ping_outcomes[i]++;
        }
      }
      break;
    case MCPP_EV_REQUEST_TIMEOUT:
    case MCPP_EV_REQUEST_CANCELLED: {
      int i = req_of(ev->id, ev->id_len);
      CHECK(i >= 0);
      CHECK(m->last_delivered == i); /* its answer went first */
      end_req(m, i);
      m->last_delivered = -1;
      break;
    }
    case MCPP_EV_CLOSED:
      m->closed_events++;
      m->closed = 1;
      break;
    default:
      break;
  }
}

static int cb_process(mcpp_engine *e, void *ud) {
  return ((model *)ud)->process;
}

/* ----------------------------------------------------------- the input */

typedef struct input {
  const uint8_t *p;
  size_t n;
} input;

static uint8_t byte(input *in) {
  if (in->n == 0) return 0;
  in->n--;
  return *in->p++;
}

static uint16_t u16(input *in) {
  uint16_t hi = byte(in);
  return (uint16_t)(hi << 8 | byte(in));
}

static void settings_from(input *in, mcpp_settings *s, int *observe) {
  static const uint32_t intervals[] = {0, 10, 100, 1000, 5000, 30000};
  static const char *const probes[] = {NULL, "", "tools/list",
                                       "server/discover"};
  uint8_t a = byte(in), b = byte(in), c = byte(in);
  mcpp_settings_default(s);
  s->role = a & 1 ? MCPP_ROLE_SERVER : MCPP_ROLE_CLIENT;
  s->on_stale = a & 2 ? MCPP_STALE_REPORT : MCPP_STALE_CLOSE;
  *observe = (a >> 2) & 1;
  s->min_interval_ms = 10;
  s->interval_ms = intervals[(a >> 3) % 6];
  s->jitter_pct = b % 101;
  s->timeout_ms = 1 + (uint32_t)(c % 8) * 250;
  s->failures = 1 + (b >> 4) % 4;
  s->request_timeout_ms = (c >> 3) & 1 ? 0 : 1 + (uint32_t)(c >> 4) * 300;
  s->pause_threshold_ms = 1 + (uint32_t)(b & 3) * 500;
  s->probe_method = probes[(c >> 6) & 3];
  s->max_outstanding_pings = 1 + (a >> 6) * 40;
  s->nonce = 0x1234u + a;
  s->peer_name = "fuzz";
}

/* -------------------------------------------------------- frames to feed */

static const char *const peer_ids[] = {
    "7", "\"p\"", "123456789012345678901234567890", "\"a\\\"b\"", "-0.5e3",
    "\"\\u00e9\"", "0", "\"\""};

static size_t frame_for(model *m, input *in, char *buf, size_t cap,
                        int *kind) {
  uint8_t t = byte(in), arg = byte(in);
  const char *our = m->n_ids ? m->ids[(m->n_ids - 1 - arg % ID_RING + 64 * ID_RING) %
                                      ID_RING]
                             : "\"mcpp-0-1\"";
  if (m->n_ids && arg % ID_RING >= (unsigned)m->n_ids) our = m->ids[0];
  int req = m->n_reqs ? arg % m->n_reqs : 0;
  *kind = t % 12;
  switch (*kind) {
    case 0:
      return (size_t)snprintf(buf, cap,
                              "{\"jsonrpc\":\"2.0\",\"id\":%s,\"method\":\"ping\"}",
                              peer_ids[arg % 8]);
    case 1:
      return (size_t)snprintf(buf, cap, "{\"jsonrpc\":\"2.0\",\"id\":%s,\"result\":{}}", our);
    case 2:
      return (size_t)snprintf(buf, cap,
                              "{\"jsonrpc\":\"2.0\",\"id\":%s,\"error\":{\"code\":-32601,"
                              "\"message\":\"Method not found\"}}", our);
    case 3:
      return (size_t)snprintf(buf, cap,
                              "{\"jsonrpc\":\"2.0\",\"id\":%s,\"error\":{\"code\":-32000,"
                              "\"message\":\"busy\"}}", our);
    case 4:
      return (size_t)snprintf(buf, cap, "{\"jsonrpc\":\"2.0\",\"id\":%s,\"result\":%d}", our, arg);
    case 5:
      return (size_t)snprintf(buf, cap, "{\"jsonrpc\":\"2.0\",\"id\":%d,\"result\":{\"ok\":1}}",
                              1000 + req);
    case 6:
      return (size_t)snprintf(buf, cap,
                              "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/progress\","
                              "\"params\":{\"n\":%d}}", arg);
    case 7:
      return (size_t)snprintf(buf, cap,
                              "{\"jsonrpc\":\"2.0\",\"id\":%d,\"result\":{\"protocolVersion\":\"%s\","
                              "\"serverInfo\":{\"name\":\"srv%d\"}}}",
                              1000 + req, arg & 1 ? "2026-07-28" : "2025-11-25", arg);
    case 8: {
      /* Raw bytes from the input. */
      size_t n = arg < in->n ? arg : in->n;
      if (n > cap) n = cap;
      memcpy(buf, in->p, n);
      in->p += n;
      in->n -= n;
      return n;
    }
    case 9:
      return (size_t)snprintf(buf, cap, "{\"id\":%s,\"id\":%s,\"result\":{}}", our, our);
    case 10:
      return (size_t)snprintf(buf, cap,
                              "{\"jsonrpc\":\"2.0\",\"id\":%d,\"method\":\"sampling/createMessage\"}",
                              arg);
    default:
      return (size_t)snprintf(buf, cap, "not json %d", arg);
  }
}

static void op_recv(model *m, input *in) {
  char buf[512];
  int kind;
  size_t n = frame_for(m, in, buf, sizeof buf, &kind);
  if (n >= sizeof buf) n = sizeof buf - 1;
  char *frame = malloc(n ? n : 1); /* exact size: ASan sees overreads */
  CHECK(frame);
  memcpy(frame, buf, n);
  int req = -1;
  if (kind == 5 || kind == 7) {
    req = req_of(buf + 22, (size_t)(strchr(buf + 22, ',') - (buf + 22)));
  }
  long sends = m->sends;
  /* Asked of any text (a client asks it of every request it POSTed). */
  int awaits = mcpp_engine_awaits(m->e, frame, n);
  CHECK(awaits == 0 || awaits == 1);
  int rc = mcpp_engine_recv(m->e, frame, n, m->now);
  CHECK(memcmp(frame, buf, n) == 0); /* the engine never writes to it */
  if (m->closed) {
    CHECK(rc == MCPP_ERR_CLOSED);
  } else if (rc == MCPP_RECV_CONSUMED) {
    /* Only pings and answers to our own ids are consumed. */
    CHECK(kind == 0 || kind == 1 || kind == 2 || kind == 3 || kind == 4 ||
          kind == 8);
    if (kind == 0 && !m->send_rc) {
      /* The pong echoes the id exactly as received. */
      const char *id = strstr(buf, "\"id\":") + 5;
      size_t id_len = (size_t)(strstr(buf, ",\"method\"") - id);
      CHECK(m->sends == sends + 1);
      CHECK(m->last_sent_len == 22 + id_len + 13);
      CHECK(memcmp(m->last_sent + 22, id, id_len) == 0);
    }
    if (kind == 8) {
      CHECK(memmem(frame, n, "ping", 4) || memmem(frame, n, "mcpp-", 5) ||
            memmem(frame, n, "\\u", 2));
    }
  } else if (rc == MCPP_RECV_FORWARD) {
    /* A peer ping is answered unless the write failed. */
    CHECK(kind != 0 || m->send_rc);
    if (req >= 0 && req < m->n_reqs && m->req_st[req] == R_OUT) end_req(m, req);
  } else {
    CHECK(rc == m->send_rc && rc != 0);
  }
  free(frame);
}

static const char *const methods[] = {"tools/call", "resources/read",
                                      "initialize", "server/discover"};

static void op_outbound(model *m, input *in) {
  uint8_t a = byte(in), b = byte(in);
  char buf[256];
  int i = m->n_reqs;
  if (i == MAX_REQS) return;
  int n;
  if ((a & 3) == 3 && (a & 4))
    n = snprintf(buf, sizeof buf,
                 "{\"jsonrpc\":\"2.0\",\"id\":%d,\"method\":\"server/discover\",\"params\":"
                 "{\"_meta\":{\"io.modelcontextprotocol/protocolVersion\":\"2026-07-28\"}}}",
                 1000 + i);
  else
    n = snprintf(buf, sizeof buf, "{\"jsonrpc\":\"2.0\",\"id\":%d,\"method\":\"%s\"}",
                 1000 + i, methods[a & 3]);
  static const uint32_t timeouts[] = {MCPP_TIMEOUT_DEFAULT, MCPP_TIMEOUT_NONE,
                                      1, 50, 700, 3000};
  uint32_t t = timeouts[b % 6];
  int rc = mcpp_engine_observe_outbound_timed(m->e, buf, (size_t)n, t, m->now);
  CHECK(rc == 0);
  if (m->closed) return;
  m->req_st[i] = R_OUT;
  m->n_reqs++;
  m->in_flight++;
}

static void op_app_cancel(model *m, input *in) {
  uint8_t a = byte(in);
  if (m->n_reqs == 0) return;
  int i = a % m->n_reqs;
  char buf[160];
  int n = snprintf(buf, sizeof buf,
                   "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/cancelled\","
                   "\"params\":{\"requestId\":%d}}", 1000 + i);
  CHECK(mcpp_engine_observe_outbound(m->e, buf, (size_t)n, m->now) == 0);
  if (!m->closed && m->req_st[i] == R_OUT) end_req(m, i);
}

static void op_abort(model *m, input *in) {
  uint8_t a = byte(in);
  if (m->n_reqs == 0) return;
  int i = a % m->n_reqs;
  char id[16];
  int n = snprintf(id, sizeof id, "%d", 1000 + i);
  req_state before = m->req_st[i];
  int rc = mcpp_engine_cancel_request(m->e, id, (size_t)n, m->now);
  if (m->closed) {
    CHECK(rc == MCPP_ERR_CLOSED);
  } else if (before == R_OUT) {
    CHECK(rc == 0 || rc == m->send_rc);
    CHECK(m->req_st[i] == R_DONE); /* gone even if the write failed */
  } else {
    CHECK(rc == MCPP_ERR_NOT_FOUND);
  }
}

static void op_ping(model *m, input *in) {
  uint8_t a = byte(in);
  static const uint32_t timeouts[] = {0, 1, 30, 500, 2000, MCPP_MAX_MS};
  uint64_t seq = 0;
  mcpp_engine_info info;
  mcpp_engine_get_info(m->e, &info);
  int rc = mcpp_engine_ping(m->e, timeouts[a % 6], m->now, &seq);
  if (m->closed) {
    CHECK(rc == MCPP_ERR_CLOSED);
    return;
  }
  if (rc == 0) {
    CHECK(seq != 0 && find_ping(m, seq) < 0);
    if (m->n_pings == MAX_PINGS) {
      /* Out of model room: stop tracking it by cancelling it. */
      CHECK(mcpp_engine_cancel_ping(m->e, seq) == 0);
      return;
    }
    m->ping_seq[m->n_pings] = seq;
    m->ping_st[m->n_pings] = P_OUT;
    m->ping_outcomes[m->n_pings++] = 0;
  } else {
    CHECK(rc == MCPP_ERR_UNSUPPORTED || rc == MCPP_ERR_TOO_MANY_PINGS ||
          (m->send_rc && rc == m->send_rc));
    if (rc == MCPP_ERR_UNSUPPORTED) CHECK(info.unsupported);
  }
}

static void op_cancel_ping(model *m, input *in) {
  uint8_t a = byte(in);
  if (m->n_pings == 0) return;
  int i = a % m->n_pings;
  int rc = mcpp_engine_cancel_ping(m->e, m->ping_seq[i]);
  if (m->ping_st[i] == P_OUT) {
    CHECK(rc == 0);
    m->ping_st[i] = P_CANCELLED;
  } else {
    CHECK(rc == MCPP_ERR_NOT_FOUND);
  }
}

/* Wakes the engine at `t`: nothing may happen before the deadline, and
 * afterwards the next one lies ahead. */
static void wake(model *m, uint64_t t) {
  CHECK(t >= m->now);
  m->now = t;
  uint64_t due = mcpp_engine_next_deadline(m->e);
  long events = m->events, sends = m->sends;
  int rc = mcpp_engine_on_timer(m->e, t);
  CHECK(rc == 0 || rc == m->send_rc);
  if (t < due) {
    CHECK(m->events == events);
    CHECK(m->sends == sends);
  }
  if (rc == 0 && !m->closed) CHECK(mcpp_engine_next_deadline(m->e) > t);
}

static void check_invariants(model *m) {
  mcpp_engine_info info;
  mcpp_engine_get_info(m->e, &info);
  if (!m->closed) CHECK(info.in_flight == (uint32_t)m->in_flight);
  int healthy = mcpp_engine_healthy(m->e, m->now);
  uint64_t until = mcpp_engine_healthy_until(m->e, m->now);
  CHECK(healthy == (until > m->now));
  if (m->closed) CHECK(info.state == MCPP_STATE_CLOSED);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  input in = {data, size};
  mcpp_settings s;
  int observe;
  settings_from(&in, &s, &observe);
  /* One model for every execution, cleared: no allocation per input. */
  static model the_model;
  model *m = &the_model;
  memset(m, 0, sizeof *m);
  m->now = T0;
  m->last_delivered = -1;
  m->process = MCPP_PROCESS_RUNNING;
  mcpp_engine_callbacks cb = {.send = cb_send, .deliver = cb_deliver,
                              .on_event = cb_event};
  if (observe) cb.process_state = cb_process;
  int rc = mcpp_engine_new(&m->e, &s, &cb, m, NULL, m->now);
  CHECK(rc == 0);

  while (in.n > 0) {
    uint8_t op = byte(&in);
    switch (op % 14) {
      case 0: case 1: case 2: op_recv(m, &in); break;
      case 3: case 4: op_outbound(m, &in); break;
      case 5: op_app_cancel(m, &in); break;
      case 6: op_abort(m, &in); break;
      case 7: op_ping(m, &in); break;
      case 8: op_cancel_ping(m, &in); break;
      case 9: wake(m, m->now + (uint64_t)u16(&in) * MS); break;
      case 10: {
        uint64_t due = mcpp_engine_next_deadline(m->e);
        uint64_t jitter = byte(&in);
        if (due != UINT64_MAX && due < m->now + 3600 * 1000 * MS)
          wake(m, (due > m->now ? due : m->now) + (jitter & 1 ? 0 : jitter * MS));
        break;
      }
      case 11: {
        uint8_t a = byte(&in);
        if (a & 1) mcpp_engine_touch(m->e, m->now);
        else mcpp_engine_set_reading(m->e, (a >> 1) & 1, m->now);
        break;
      }
      case 12: {
        uint8_t a = byte(&in);
        if (a & 1) m->process = (mcpp_process_state)((a >> 1) % 4);
        else m->send_rc = (a >> 1) & 1 ? MCPP_ERR_IO : 0;
        break;
      }
      default:
        if ((byte(&in) & 7) == 0) {
          mcpp_engine_close(m->e, 0, "fuzz", m->now);
          m->closed = 1;
        }
        break;
    }
    check_invariants(m);
  }
  mcpp_engine_close(m->e, 0, "done", m->now);
  mcpp_engine_close(m->e, 0, "again", m->now); /* idempotent */
  m->closed = 1;
  check_invariants(m);
  CHECK(m->closed_events == 1);
  for (int i = 0; i < m->n_pings; i++)
    CHECK(m->ping_outcomes[i] == (m->ping_st[i] == P_CANCELLED ? 0 : 1));
  mcpp_engine_free(m->e);
  return 0;
}

#pragma clang attribute pop
