/*
 * A fake host for engine tests: a counting (and optionally failing)
 * allocator, and callbacks that capture every frame sent or delivered,
 * every event and every record. Time is whatever the test passes.
 */
#ifndef MCPP_ENGINE_FIXTURE_H
#define MCPP_ENGINE_FIXTURE_H

#include <stdlib.h>
#include <string.h>

#include "mcpping.h"
#include "task.h"

/* Internal: how often an engine ran cJSON (engine.h). */
uint64_t mcpp__engine_json_parses(const mcpp_engine *e);

#define MS 1000ULL
#define SEC 1000000ULL
#define T0 (1000 * SEC)

enum { FX_MAX = 512, FX_TEXT = 1024 };

typedef struct fx_frame {
  int kind;
  size_t len;
  char text[FX_TEXT];
} fx_frame;

typedef struct fx_event {
  mcpp_event ev; /* id/message/proof pointers cleared; copies below */
  char id[FX_TEXT];
  char message[256];
  int has_message;
  char proof[160]; /* "" if none */
  uint64_t at;     /* the fixture's clock when it was emitted */
} fx_event;

typedef struct fx_alloc {
  mcpp_allocator a;
  long live;
  long count;   /* allocations attempted */
  long fail_at; /* fail the Nth attempt (1-based); 0: never */
  int failed;
} fx_alloc;

typedef struct fx {
  mcpp_engine *e;
  mcpp_settings s;
  fx_alloc alloc;
  fx_frame sent[FX_MAX];
  int n_sent;
  fx_frame delivered[FX_MAX];
  int n_delivered;
  fx_event events[FX_MAX];
  int n_events;
  char *records[FX_MAX];
  int n_records;
  int send_rc; /* what the send callback returns */
  /* The fake process (with observe_process set before fx_start): what
   * process_state answers, and when the engine asked. */
  int observe_process;
  mcpp_process_state process;
  long process_calls;
  uint64_t process_asked_at[FX_MAX];
  /* With feed_cpu, each look also feeds cpu_us (as a driver reading
   * /proc/PID/stat does), after adding cpu_step: a busy process's CPU time
   * grows between looks, an idle one's does not. */
  int feed_cpu;
  uint64_t cpu_us, cpu_step;
  uint64_t clock; /* the time of the current engine call, for the above */
} fx;

static inline int fx_should_fail(fx_alloc *a) {
  a->count++;
  if (a->fail_at && a->count == a->fail_at) {
    a->failed = 1;
    return 1;
  }
  return 0;
}

/* Each block carries its size in a header so the count stays exact. */
static inline void *fx_malloc(size_t n, void *ud) {
  fx_alloc *a = ud;
  if (fx_should_fail(a)) return NULL;
  void *p = malloc(n);
  if (p) a->live++;
  return p;
}

static inline void *fx_realloc(void *p, size_t n, void *ud) {
  fx_alloc *a = ud;
  if (fx_should_fail(a)) return NULL;
  void *q = realloc(p, n);
  if (q && p == NULL) a->live++;
  return q;
}

static inline void fx_free_block(void *p, void *ud) {
  fx_alloc *a = ud;
  if (p) a->live--;
  free(p);
}

static inline void fx_copy(fx_frame *f, int kind, const char *p, size_t n) {
  f->kind = kind;
  f->len = n;
  size_t k = n < FX_TEXT - 1 ? n : FX_TEXT - 1;
  memcpy(f->text, p, k);
  f->text[k] = '\0';
}

static inline int fx_send(mcpp_engine *e, mcpp_frame_kind kind, const char *frame,
                   size_t len, void *ud) {
  fx *f = ud;
  ASSERT(memchr(frame, '\n', len) == NULL);
  if (f->send_rc) return f->send_rc;
  ASSERT(f->n_sent < FX_MAX);
  fx_copy(&f->sent[f->n_sent++], kind, frame, len);
  return 0;
}

static inline void fx_deliver(mcpp_engine *e, const char *frame, size_t len,
                       void *ud) {
  fx *f = ud;
  ASSERT(f->n_delivered < FX_MAX);
  /* A delivered frame's kind is what the engine says it is. */
  fx_copy(&f->delivered[f->n_delivered++], (int)mcpp_engine_delivery_kind(e), frame,
          len);
}

static inline void fx_on_event(mcpp_engine *e, const mcpp_event *ev, void *ud) {
  fx *f = ud;
  ASSERT(f->n_events < FX_MAX);
  fx_event *c = &f->events[f->n_events++];
  memset(c, 0, sizeof *c);
  c->ev = *ev;
  if (ev->id) {
    size_t k = ev->id_len < FX_TEXT - 1 ? ev->id_len : FX_TEXT - 1;
    memcpy(c->id, ev->id, k);
  }
  if (ev->message) {
    snprintf(c->message, sizeof c->message, "%s", ev->message);
    c->has_message = 1;
  }
  if (ev->proof) snprintf(c->proof, sizeof c->proof, "%s", ev->proof);
  c->at = f->clock;
  c->ev.id = NULL;
  c->ev.message = NULL;
  c->ev.proof = NULL;
}

static inline int fx_process_state(mcpp_engine *e, void *ud) {
  fx *f = ud;
  if (f->process_calls < FX_MAX) f->process_asked_at[f->process_calls] = f->clock;
  f->process_calls++;
  if (f->feed_cpu) {
    f->cpu_us += f->cpu_step;
    mcpp_engine_set_process_cpu(e, f->cpu_us);
  }
  return f->process;
}

static inline void fx_on_record(mcpp_engine *e, const char *json, size_t len,
                         void *ud) {
  fx *f = ud;
  ASSERT(f->n_records < FX_MAX);
  ASSERT(strlen(json) == len); /* NUL-terminated and no embedded NUL */
  ASSERT(memchr(json, '\n', len) == NULL);
  char *copy = malloc(len + 1);
  memcpy(copy, json, len + 1);
  f->records[f->n_records++] = copy;
}

/* Settings every test starts from: client, keepalive off, fixed nonce. */
static inline void fx_settings(fx *f) {
  mcpp_settings_default(&f->s);
  f->s.nonce = 0x0123456789abcdefULL;
  f->s.peer_name = "demo-server";
}

static inline int fx_try_start(fx *f, uint64_t now) {
  mcpp_engine_callbacks cb = {
      .send = fx_send,
      .deliver = fx_deliver,
      .on_event = fx_on_event,
      .on_record = fx_on_record};
  if (f->observe_process) {
    cb.process_state = fx_process_state;
    if (f->process == MCPP_PROCESS_UNKNOWN) f->process = MCPP_PROCESS_RUNNING;
  }
  f->alloc.a.malloc = fx_malloc;
  f->alloc.a.realloc = fx_realloc;
  f->alloc.a.free = fx_free_block;
  f->alloc.a.user_data = &f->alloc;
  return mcpp_engine_new(&f->e, &f->s, &cb, f, &f->alloc.a, now);
}

/* Allocates a fixture with default settings; adjust f->s then fx_start. */
static inline fx *fx_new(void) {
  fx *f = calloc(1, sizeof *f);
  fx_settings(f);
  return f;
}

/* Starts the engine with a peer that has already spoken: keepalive waits
 * for the peer's first byte (test_engine_keepalive.c proves that). */
static inline void fx_start(fx *f, uint64_t now) {
  ASSERT_EQ(fx_try_start(f, now), 0);
  mcpp_engine_touch(f->e, now);
}

/* Frees the engine and checks that nothing it allocated is left. */
static inline void fx_done(fx *f) {
  mcpp_engine_free(f->e);
  ASSERT_EQ(f->alloc.live, 0);
  for (int i = 0; i < f->n_records; i++) free(f->records[i]);
  free(f);
}

static inline int fx_recv(fx *f, const char *json, uint64_t now) {
  f->clock = now;
  return mcpp_engine_recv(f->e, json, strlen(json), now);
}

static inline int fx_out(fx *f, const char *json, uint64_t now) {
  f->clock = now;
  return mcpp_engine_observe_outbound(f->e, json, strlen(json), now);
}

static inline int fx_out_timed(fx *f, const char *json, uint32_t timeout_ms,
                               uint64_t now) {
  f->clock = now;
  return mcpp_engine_observe_outbound_timed(f->e, json, strlen(json),
                                            timeout_ms, now);
}

/* Runs the timer at every deadline up to `until`, as a driver would. */
static inline void fx_run_until(fx *f, uint64_t until) {
  for (int guard = 0; guard < 100000; guard++) {
    uint64_t d = mcpp_engine_next_deadline(f->e);
    /* Nothing may be due before the engine call that made it due: the
     * pause guard would take it for a late wake-up (keepalive.c). */
    MCPP_ASSERT_CMP(uint64_t, PRIu64, d, >=, f->clock);
    if (d > until) return;
    f->clock = d;
    ASSERT_EQ(mcpp_engine_on_timer(f->e, d), 0);
  }
  MCPP_FAIL("timer loop did not settle");
}

static inline int fx_count_events(const fx *f, mcpp_event_type t) {
  int n = 0;
  for (int i = 0; i < f->n_events; i++) n += f->events[i].ev.type == t;
  return n;
}

static inline const fx_event *fx_last_event(const fx *f, mcpp_event_type t) {
  for (int i = f->n_events - 1; i >= 0; i--)
    if (f->events[i].ev.type == t) return &f->events[i];
  return NULL;
}

static inline int fx_count_sent(const fx *f, int kind) {
  int n = 0;
  for (int i = 0; i < f->n_sent; i++) n += f->sent[i].kind == kind;
  return n;
}

static inline const fx_frame *fx_last_sent(const fx *f, int kind) {
  for (int i = f->n_sent - 1; i >= 0; i--)
    if (f->sent[i].kind == kind) return &f->sent[i];
  return NULL;
}

/* Extracts the raw id of one of our ping frames into buf. */
static inline const char *fx_ping_id(const fx_frame *ping, char *buf, size_t cap) {
  const char *p = strstr(ping->text, "\"id\":");
  ASSERT(p != NULL);
  p += 5;
  const char *q = strchr(p + 1, '"');
  ASSERT(q != NULL);
  snprintf(buf, cap, "%.*s", (int)(q - p + 1), p);
  return buf;
}

/* Answers our last ping with `tail` (e.g. "\"result\":{}"). */
static inline int fx_answer_last_ping(fx *f, const char *tail, uint64_t now) {
  char id[128], frame[512];
  const fx_frame *ping = fx_last_sent(f, MCPP_FRAME_PING);
  ASSERT(ping != NULL);
  snprintf(frame, sizeof frame, "{\"jsonrpc\":\"2.0\",\"id\":%s,%s}",
           fx_ping_id(ping, id, sizeof id), tail);
  return fx_recv(f, frame, now);
}

static inline const fx_event *fx_first_event(const fx *f, mcpp_event_type t) {
  for (int i = 0; i < f->n_events; i++)
    if (f->events[i].ev.type == t) return &f->events[i];
  return NULL;
}

static inline const char *fx_last_record(const fx *f) {
  return f->n_records ? f->records[f->n_records - 1] : NULL;
}

static inline int fx_count_records(const fx *f, const char *event) {
  char needle[64];
  snprintf(needle, sizeof needle, "\"event\":\"%s\"", event);
  int n = 0;
  for (int i = 0; i < f->n_records; i++) n += strstr(f->records[i], needle) != NULL;
  return n;
}

#endif
