/*
 * Reconnect: a failed server (stale, exited, pipes closed) is replaced.
 * The driver asks mcpp__respawn_plan at the close, the engine fails what
 * was in flight and reports RECONNECTING, and once the old group is reaped
 * the timer spawns a new server at retry_at, replays the captured
 * initialize, swallows its answer, sends notifications/initialized and the
 * frames held meanwhile (never a request that was in flight: those were
 * answered in doubt). Runs on the loop's owner, as the rest of the loop.
 */
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <uv.h>

#include "engine/deadlines.h"
#include "engine/record.h"
#include "engine/scan.h"
#include "internal.h"

enum { REPLAY_TIMEOUT_MS = 30000 };

static uint64_t next_random(mcpp_runtime *rt) {
  if (!rt->rng) rt->rng = uv_hrtime() ^ ((uint64_t)getpid() << 32) ^ 1;
  /* splitmix64 */
  uint64_t z = (rt->rng += 0x9E3779B97F4A7C15ull);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

static size_t vec_len(char **v) {
  size_t n = 0;
  while (v && v[n]) n++;
  return n;
}

/* Copies the spawn inputs into two blocks (strings, pointer vectors). */
static int copy_spawn(mcpp_runtime *rt, reconnect *x,
                      const mcpp_settings *settings,
                      const mcpp_spawn_options *o) {
  size_t nargs = vec_len(o->args), nenv = vec_len(o->env), bytes = 0;
  const char *one[4] = {o->file, o->cwd, settings ? settings->peer_name : NULL,
                        settings ? settings->probe_method : NULL};
  for (int i = 0; i < 4; i++)
    if (one[i]) bytes += strlen(one[i]) + 1;
  for (size_t i = 0; i < nargs; i++) bytes += strlen(o->args[i]) + 1;
  for (size_t i = 0; i < nenv; i++) bytes += strlen(o->env[i]) + 1;
  x->strings = rt_malloc(rt, bytes ? bytes : 1);
  x->vectors = rt_malloc(rt, (nargs + 1 + nenv + 1) * sizeof(char *));
  if (!x->strings || !x->vectors) return MCPP_ERR_NOMEM;
  char *p = x->strings;
  char *dup[4];
  for (int i = 0; i < 4; i++) {
    dup[i] = NULL;
    if (!one[i]) continue;
    dup[i] = strcpy(p, one[i]);
    p += strlen(one[i]) + 1;
  }
  char **args = x->vectors, **env = x->vectors + nargs + 1;
  for (size_t i = 0; i < nargs; i++) {
    args[i] = strcpy(p, o->args[i]);
    p += strlen(p) + 1;
  }
  args[nargs] = NULL;
  for (size_t i = 0; i < nenv; i++) {
    env[i] = strcpy(p, o->env[i]);
    p += strlen(p) + 1;
  }
  env[nenv] = NULL;
  /* mcpp_runtime_spawn checked the version. */
  if (!settings || mcpp__settings_import(&x->settings, settings))
    mcpp_settings_default(&x->settings);
  x->settings.peer_name = dup[2];
  x->settings.probe_method = dup[3];
  x->options = *o;
  x->options.file = dup[0];
  x->options.cwd = dup[1];
  x->options.args = args;
  x->options.env = o->env ? env : NULL;
  return 0;
}

void mcpp__respawn_free(mcpp_runtime *rt, reconnect *x) {
  for (cmd *k = x->held, *next; k; k = next) {
    next = k->next;
    rt_free(rt, k);
  }
  x->held = x->held_tail = NULL;
  mcpp_handshake_free(x->hs);
  x->hs = NULL;
  rt_free(rt, x->strings);
  rt_free(rt, x->vectors);
  x->strings = NULL;
  x->vectors = NULL;
}

/* The next attempt: its number and, budget applied, when it runs. Returns
 * 0, or 1 if max_attempts are spent (why says so). */
static int next_attempt(rconn *r, const char *reason, uint32_t *attempt,
                        uint32_t *delay_ms, char *why, size_t cap) {
  reconnect *x = r->rc;
  mcpp_runtime *rt = r->rt;
  if (x->streak >= x->policy.max_attempts) {
    snprintf(why, cap, "gave up reconnecting after %u attempts: %s",
             (unsigned)x->streak, reason);
    return 1;
  }
  x->streak++;
  uint64_t now = uv_hrtime() / 1000;
  uint64_t want = now + mcpp_reconnect_delay_us(&x->policy, x->streak,
                                                next_random(rt));
  pthread_mutex_lock(&rt->mu);
  x->retry_at = mcpp_retry_budget_take(&rt->budget, want);
  pthread_mutex_unlock(&rt->mu);
  x->phase = WAITING;
  *attempt = x->streak;
  uint64_t ms = (x->retry_at - now + 999) / 1000;
  *delay_ms = ms > MCPP_MAX_MS ? MCPP_MAX_MS : (uint32_t)ms;
  return 0;
}

/* The driver's hook (see mcpp__reconnect_hook). */
int mcpp__respawn_plan(mcpp_conn *c, int err, const char *reason,
                       uint32_t *attempt, uint32_t *delay_ms, char *why,
                       size_t cap, void *ud) {
  rconn *r = ud;
  if (!r->rc || mcpp__rt_host_closed(r)) return 0;
  return next_attempt(r, reason, attempt, delay_ms, why, cap) == 0;
}

/* No engine runs between servers: the runtime says what happens itself. */
static void push_own_event(rconn *r, mcpp_event_type type, const char *message,
                           uint32_t attempt, uint32_t delay_ms, int err) {
  mcpp_event ev;
  memset(&ev, 0, sizeof ev);
  ev.type = type;
  ev.state = type == MCPP_EV_CLOSED ? MCPP_STATE_CLOSED
             : type == MCPP_EV_RECONNECTED ? MCPP_STATE_ALIVE
                                           : MCPP_STATE_STALE;
  ev.message = message;
  ev.error = err;
  ev.reconnect_attempt = attempt;
  ev.delay_ms = delay_ms;
  ev.pid = r->pid;
  mcpp__rt_push_event(r, &ev);
}

/* The "reconnect" record of an attempt no engine saw (its server could not
 * start), as the engine words its own: no reason, no payload. Only this
 * thread writes r->session, so it is read here without the lock. */
static void push_own_record(rconn *r, uint32_t attempt) {
  reconnect *x = r->rc;
  mcpp__record rec;
  memset(&rec, 0, sizeof rec);
  rec.event = "reconnect";
  rec.direction = MCPP__DIR_NONE;
  rec.role = x->settings.role;
  rec.peer = r->session && *mcpp__rt_session_name(r->session)
                 ? mcpp__rt_session_name(r->session)
                 : x->settings.peer_name;
  rec.protocol_version = r->session && *r->session ? r->session : NULL;
  rec.transport = x->settings.transport;
  rec.reconnect_attempt = attempt;
  rec.disposition = MCPP_DISPOSITION_CONTINUED;
  int64_t offset = x->settings.clock_offset_us;
  if (!offset) {
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    offset = (int64_t)ts.tv_sec * 1000000 + ts.tv_nsec / 1000 -
             (int64_t)(uv_hrtime() / 1000);
  }
  char buf[1024];
  size_t n = mcpp__record_format(&rec, (int64_t)(uv_hrtime() / 1000) + offset,
                                 buf, sizeof buf);
  /* Bounded by the name caps: it always fits. */
  if (n < sizeof buf) mcpp__rt_push_data(r, MCPP_ITEM_RECORD, buf, n);
}

/* Ends a connection that has no server running (host close, give-up). */
void mcpp__respawn_finish_idle(rconn *r, int err, const char *reason) {
  uv_timer_stop(&r->rc->timer);
  push_own_event(r, MCPP_EV_CLOSED, reason, r->rc->streak, 0, err);
  mcpp_close_info info = {err, reason, -1, 0};
  mcpp__rt_finish(r, &info);
}

static void on_retry(uv_timer_t *t);

/* A held frame's request timeout in ms as the engine would take it, or 0:
 * untimed, or no request the engine would time (m: the frame, scanned). */
static uint32_t held_timeout_ms(const reconnect *x, const cmd *k,
                                mcpp__msg *m) {
  uint32_t ms = k->timeout_ms == MCPP_TIMEOUT_DEFAULT
                    ? x->settings.request_timeout_ms
                : k->timeout_ms == MCPP_TIMEOUT_NONE ? 0
                                                     : k->timeout_ms;
  if (!ms || mcpp__scan_message(k->data, k->len, m) != 0 || m->dup ||
      !m->id.p || !m->method.p || m->method.n < 2 || m->method.p[0] != '"')
    return 0;
  return ms;
}

/* Sets the timer for what comes first: the respawn (waiting, the old
 * server reaped) or the earliest held request's expiry. */
static void reconnect_arm(rconn *r) {
  reconnect *x = r->rc;
  if (uv_is_closing((uv_handle_t *)&x->timer)) return;
  uint64_t due = x->held_due;
  x->retry_armed = x->phase == WAITING && !r->conn && x->retry_at <= due;
  if (x->retry_armed) due = x->retry_at;
  if (due == UINT64_MAX) {
    uv_timer_stop(&x->timer);
    return;
  }
  uint64_t now = uv_hrtime() / 1000;
  uv_timer_start(&x->timer, on_retry, due > now ? (due - now + 999) / 1000 : 0,
                 0);
}

/* A request held now has its timeout run from now, as it would had a
 * server been there: the application's wait does not stop for a
 * reconnect. */
void mcpp__respawn_start_held_timeout(rconn *r, cmd *k) {
  reconnect *x = r->rc;
  mcpp__msg m;
  uint32_t ms = held_timeout_ms(x, k, &m);
  k->deadline = ms ? uv_hrtime() / 1000 + (uint64_t)ms * 1000 : 0;
  if (!k->deadline || k->deadline >= x->held_due) return;
  x->held_due = k->deadline;
  reconnect_arm(r);
}

/* Answers a held request that is given up on (k unlinked by the caller,
 * id inside k or not) with the JSON-RPC error the engine gives one it
 * sent (error: "code,message"), and the event; then drops the frame: no
 * server saw it, so no notifications/cancelled goes anywhere. */
static void answer_held(rconn *r, cmd *k, const char *id, size_t id_len,
                        const char *error, mcpp_event *ev) {
  static const char d1[] = "{\"jsonrpc\":\"2.0\",\"id\":";
  static const char d2[] = ",\"error\":{\"code\":";
  static const char d3[] = "}}";
  size_t ne = strlen(error);
  mcpp_item *it = mcpp__rt_new_item(
      r->rt, r, MCPP_ITEM_MESSAGE,
      sizeof d1 - 1 + id_len + sizeof d2 - 1 + ne + sizeof d3 - 1);
  if (it) {
    char *p = it->data;
    memcpy(p, d1, sizeof d1 - 1);
    p += sizeof d1 - 1;
    memcpy(p, id, id_len);
    p += id_len;
    memcpy(p, d2, sizeof d2 - 1);
    p += sizeof d2 - 1;
    memcpy(p, error, ne);
    memcpy(p + ne, d3, sizeof d3 - 1);
    it->answer_kind = ev->type == MCPP_EV_REQUEST_TIMEOUT ? MCPP_ANSWER_TIMEOUT
                                                          : MCPP_ANSWER_ABANDONED;
  }
  mcpp__rt_push(r->rt, r, it);
  ev->state = MCPP_STATE_STALE;
  ev->id = id;
  ev->id_len = id_len;
  mcpp__rt_push_event(r, ev);
  /* Its bytes leave the outbound count, as a sent frame's do. */
  pthread_mutex_lock(&r->rt->mu);
  r->out_cmd_bytes -= k->len + 1;
  int wake = mcpp__rt_append_locked(r->rt, mcpp__rt_writable_locked(r));
  pthread_mutex_unlock(&r->rt->mu);
  if (wake) mcpp__rt_defer_wake(r->rt);
  rt_free(r->rt, k);
}

/* Answers each held request whose deadline has passed as the engine
 * answers one of its own that timed out (-32001, REQUEST_TIMEOUT), and
 * learns the earliest deadline left. */
static void expire_held(rconn *r, uint64_t now) {
  reconnect *x = r->rc;
  cmd *prev = NULL, *k = x->held;
  x->held_due = UINT64_MAX;
  while (k) {
    cmd *next = k->next;
    if (!k->deadline || k->deadline > now) {
      if (k->deadline && k->deadline < x->held_due) x->held_due = k->deadline;
      prev = k;
      k = next;
      continue;
    }
    if (prev)
      prev->next = next;
    else
      x->held = next;
    if (x->held_tail == k) x->held_tail = prev;
    mcpp__msg m;
    uint32_t ms = held_timeout_ms(x, k, &m);
    char error[128];
    mcpp__request_error(error, sizeof error, 1, ms);
    /* The frame goes: its method string is ended in place for the event. */
    char *method = k->data + (m.method.p - k->data) + 1;
    method[m.method.n - 2] = '\0';
    mcpp_event ev;
    memset(&ev, 0, sizeof ev);
    ev.type = MCPP_EV_REQUEST_TIMEOUT;
    ev.timeout_ms = ms;
    ev.message = method;
    answer_held(r, k, m.id.p, m.id.n, error, &ev);
    k = next;
  }
}

/* The old server is reaped: wait for retry_at. */
void mcpp__respawn_wait(rconn *r) {
  mcpp_runtime *rt = r->rt;
  pthread_mutex_lock(&rt->mu);
  r->info.state = MCPP_STATE_STALE;
  r->healthy_until = 0;
  pthread_mutex_unlock(&rt->mu);
  reconnect_arm(r);
}

static void on_retry(uv_timer_t *t) {
  rconn *r = t->data;
  reconnect *x = r->rc;
  mcpp_runtime *rt = r->rt;
  int retry = x->retry_armed;
  expire_held(r, uv_hrtime() / 1000);
  if (!retry) {
    reconnect_arm(r);
    return;
  }
  mcpp_conn *c = NULL;
  int rc = mcpp_conn_spawn(&c, rt->loop, &x->settings, &x->options,
                           &mcpp__rt_conn_callbacks, r, &rt->alloc);
  if (rc) {
    /* A server that cannot start is a failed attempt too. */
    char reason[320], why[512];
    snprintf(reason, sizeof reason, "%s",
             *mcpp_conn_spawn_error() ? mcpp_conn_spawn_error()
                                      : mcpp_strerror(rc));
    uint32_t attempt, delay_ms;
    if (next_attempt(r, reason, &attempt, &delay_ms, why, sizeof why)) {
      mcpp__respawn_finish_idle(r, MCPP_ERR_SPAWN, why);
      return;
    }
    push_own_event(r, MCPP_EV_RECONNECTING, reason, attempt, delay_ms, rc);
    push_own_record(r, attempt);
    mcpp__respawn_wait(r);
    return;
  }
  r->conn = c;
  mcpp__conn_set_progress(c, mcpp__rt_on_progress);
  mcpp__conn_follow_records(c, &r->records);
  mcpp__hw_adopt(rt, c);
  mcpp__conn_set_reconnect_hook(c, mcpp__respawn_plan);
  mcpp_engine_set_reconnect_attempt(mcpp_conn_engine(c), x->streak);
  pthread_mutex_lock(&rt->mu);
  r->pid = mcpp_conn_pid(c);
  /* The new server is read from the start: a pause was the old one's. */
  if (r->paused) {
    r->paused = 0;
    rt->paused--;
  }
  pthread_mutex_unlock(&rt->mu);
  x->phase = REPLAYING;
  size_t n;
  const char *init = mcpp_handshake_replay(x->hs, x->streak, &n);
  if (init) {
    mcpp_conn_send_timed(c, init, n, REPLAY_TIMEOUT_MS);
  } else if (mcpp_handshake_captured(x->hs)) {
    mcpp__conn_fail(c, MCPP_ERR_NOMEM, "out of memory replaying initialize");
  } else {
    /* The application never initialized: nothing to replay. */
    mcpp__respawn_answer(r, c, NULL, 0);
  }
  /* Held requests still expire while the replay is answered. */
  reconnect_arm(r);
}

/* The new server has the session: the application's initialized, then
 * whatever it sent meanwhile, in order. */
static void reconnected(rconn *r, mcpp_conn *c) {
  reconnect *x = r->rc;
  uint32_t attempt = x->streak;
  x->phase = LIVE;
  x->streak = 0;
  size_t n;
  const char *inited = mcpp_handshake_initialized(x->hs, &n);
  if (inited) mcpp_conn_send(c, inited, n);
  mcpp__rt_note_session(r, 1);
  mcpp_engine_info info;
  mcpp_engine_get_info(mcpp_conn_engine(c), &info);
  push_own_event(r, MCPP_EV_RECONNECTED, info.peer_name, attempt, 0, 0);
  uint64_t now = uv_hrtime() / 1000;
  expire_held(r, now);
  cmd *k = x->held;
  x->held = x->held_tail = NULL;
  x->held_due = UINT64_MAX;
  while (k) {
    cmd *next = k->next;
    /* Its timeout ran while it was held: only what is left goes with it. */
    if (k->deadline) k->timeout_ms = (uint32_t)((k->deadline - now + 999) / 1000);
    mcpp__rt_send_now(r, k);
    rt_free(r->rt, k);
    k = next;
  }
  reconnect_arm(r);
}

/* Swallows the answer to the replayed initialize (and the in-doubt error
 * the engine gives it if that server fails too). Returns 1 if the frame
 * was it. frame NULL: there was nothing to replay. */
int mcpp__respawn_answer(rconn *r, mcpp_conn *c, const char *frame,
                         size_t len) {
  reconnect *x = r->rc;
  int a = frame ? mcpp_handshake_answer(x->hs, frame, len) : MCPP_REPLAY_RESULT;
  if (a == MCPP_REPLAY_OTHER) return 0;
  if (x->phase != REPLAYING) return 1;
  if (a == MCPP_REPLAY_RESULT)
    reconnected(r, c);
  else
    mcpp__conn_fail(c, MCPP_ERR_IO,
                    "the new server did not accept the replayed initialize");
  return 1;
}

/* The application abandons a request held between two servers: it is
 * taken out (nothing goes to any server) and answered as the engine
 * answers an abandoned request. Returns 1 if it was held. Ids compare by
 * their raw text, as the application wrote both. */
int mcpp__respawn_cancel_held(rconn *r, const char *id, size_t id_len) {
  reconnect *x = r->rc;
  cmd *prev = NULL;
  for (cmd *k = x->held; k; prev = k, k = k->next) {
    mcpp__msg m;
    if (mcpp__scan_message(k->data, k->len, &m) != 0 || !m.method.p ||
        !mcpp__span_eq(m.id, id, id_len))
      continue;
    if (prev)
      prev->next = k->next;
    else
      x->held = k->next;
    if (x->held_tail == k) x->held_tail = prev;
    mcpp_event ev;
    memset(&ev, 0, sizeof ev);
    ev.type = MCPP_EV_REQUEST_CANCELLED;
    char error[128];
    answer_held(r, k, id, id_len, mcpp__request_error(error, sizeof error, 0, 0),
                &ev);
    return 1;
  }
  return 0;
}

/* Sets up reconnect for a connection just spawned. */
int mcpp__respawn_setup(rconn *r, const mcpp_settings *settings,
                        const mcpp_spawn_options *options) {
  mcpp_runtime *rt = r->rt;
  reconnect *x = rt_malloc(rt, sizeof *x);
  if (!x) return MCPP_ERR_NOMEM;
  memset(x, 0, sizeof *x);
  x->policy = settings->reconnect;
  x->held_due = UINT64_MAX;
  int rc = mcpp_handshake_new(&x->hs, &rt->alloc);
  if (rc == 0) rc = copy_spawn(rt, x, settings, options);
  if (rc) {
    mcpp__respawn_free(rt, x);
    rt_free(rt, x);
    return rc;
  }
  uv_timer_init(rt->loop, &x->timer);
  x->timer.data = r;
  r->rc = x;
  return 0;
}
