/* Keepalive and the state machine: when to ping or probe, the idle probe
 * for sessions without ping, process checks, failures, suspect -> stale ->
 * recovered, host pauses, read backpressure and the timer. Keepalive runs
 * on the freshest proof of life: it is due an interval after the last
 * inbound byte, so traffic that proves the peer alive also keeps pings
 * and probes from going out. */
#include <stdio.h>
#include <string.h>

#include "deadlines.h"
#include "engine.h"

#define US_PER_MS 1000ULL

/* splitmix64: the engine reads no randomness, so jitter comes from the
 * caller's nonce. */
static uint64_t next_random(uint64_t *state) {
  uint64_t z = (*state += 0x9e3779b97f4a7c15ULL);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

static void draw_jitter(mcpp_engine *e) {
  uint64_t interval = (uint64_t)e->s.interval_ms * US_PER_MS;
  uint64_t span = interval * e->s.jitter_pct / 100;
  /* Strictly less than the interval: at jitter_pct 100 a draw of the whole
   * interval would make the next keepalive due at once (found by
   * fuzz_engine: the deadline after on_timer was `now`). */
  if (span >= interval) span = interval ? interval - 1 : 0;
  e->ka_jitter_us = span ? next_random(&e->rng) % (span + 1) : 0;
}

void mcpp__keepalive_init(mcpp_engine *e) { draw_jitter(e); }

static uint64_t timeout_us(const mcpp_engine *e) {
  return (uint64_t)e->s.timeout_ms * US_PER_MS;
}

/* ------------------------------------------------------------ the probe */

const char *mcpp__probe_proof(const mcpp_engine *e) {
  /* Pings serve, unless the server turned out deaf to them. */
  if (!e->unsupported && !e->ping_deaf) return NULL;
  return mcpp__probe_choice(e);
}

const char *mcpp__probe_choice(const mcpp_engine *e) {
  /* Before the handshake a request of ours could open the session in the
   * wrong protocol era (a 2026 server decides by the first request). */
  if (!e->initialized) return NULL;
  if (e->probe_setting) return *e->probe_setting ? e->probe_proof : NULL;
  if (e->s.role != MCPP_ROLE_CLIENT) return NULL;
  if (e->protocol_version && mcpp__version_has_no_ping(e->protocol_version))
    return "probe:server/discover";
  return "probe:tools/list";
}

int mcpp__is_probe_seq(const mcpp_engine *e, uint64_t seq) {
  return e->ka_active && e->ka_is_probe && e->ka.seq == seq;
}

const char *mcpp__answer_proof(const mcpp_engine *e, uint64_t seq) {
  if (e->ka_active && e->ka.seq == seq) return e->ka_proof;
  /* A late answer proves no more than any other traffic. */
  return mcpp__is_manual(e, seq) ? "ping" : "traffic";
}

/* The probe request. On 2026 sessions a client's request carries the
 * per-request _meta envelope the protocol requires. */
static int write_probe(mcpp_engine *e, const char *method, const char *id,
                       size_t id_len) {
  char buf[4096];
  mcpp__sb sb;
  mcpp__sb_init(&sb, buf, sizeof buf);
  mcpp__sb_puts(&sb, "{\"jsonrpc\":\"2.0\",\"id\":");
  mcpp__sb_put(&sb, id, id_len);
  mcpp__sb_puts(&sb, ",\"method\":");
  mcpp__sb_json_string(&sb, method, strlen(method));
  if (e->s.role == MCPP_ROLE_CLIENT && e->protocol_version &&
      mcpp__version_has_no_ping(e->protocol_version)) {
    mcpp__sb_puts(&sb, ",\"params\":{\"_meta\":{"
                       "\"io.modelcontextprotocol/protocolVersion\":");
    mcpp__sb_json_string(&sb, e->protocol_version,
                         strlen(e->protocol_version));
    mcpp__sb_puts(&sb, ",\"io.modelcontextprotocol/clientInfo\":{\"name\":"
                       "\"mcpping\",\"version\":\"" MCPP_VERSION "\"},"
                       "\"io.modelcontextprotocol/clientCapabilities\":{}}}");
  }
  mcpp__sb_putc(&sb, '}');
  /* Method and version are capped in length, so the frame always fits. */
  if (sb.len >= sizeof buf) return MCPP_ERR_NOMEM;
  mcpp__piece piece = {buf, sb.len};
  return mcpp__output(e, MCPP_FRAME_PROBE, &piece, 1);
}

static void probe_event(const mcpp_engine *e, mcpp_event *ev,
                        mcpp_event_type type, char idbuf[64]) {
  mcpp__ping_event(e, ev, type, &e->ka, 0, idbuf);
  ev->proof = e->ka_proof;
}

int mcpp__send_probe(mcpp_engine *e, const char *proof, uint64_t now) {
  uint32_t timeout_ms = mcpp__detector_timeout_ms(e);
  mcpp__ping p = {e->next_seq++, now,
                  now + (uint64_t)timeout_ms * US_PER_MS, timeout_ms};
  e->ka = p;
  e->ka_active = 1;
  e->ka_is_probe = 1;
  e->ka_checked = 0;
  e->ka_proof = proof;
  e->ka_probe_now = 0;
  char id[64];
  size_t id_len = mcpp__format_id(e, p.seq, id);
  int rc = write_probe(e, proof + 6, id, id_len); /* past "probe:" */
  if (rc) {
    if (e->ka_active && e->ka.seq == p.seq) e->ka_active = 0;
    return rc;
  }
  e->probes_sent++;
  mcpp_event ev;
  char idbuf[64];
  probe_event(e, &ev, MCPP_EV_PROBE, idbuf);
  mcpp__emit(e, &ev, NULL, now);
  return 0;
}

/* ------------------------------------------------------------ scheduling */

static int ka_enabled(const mcpp_engine *e) {
  /* A ping written before the peer has said anything sits in its stdin
   * while it starts up (an SDK server can take seconds): timing it out
   * would convict a slow starter. Startup is the handshake's business. */
  if (e->s.interval_ms == 0 || !e->heard_from_peer) return 0;
  /* While we are not reading, silence is ours. */
  if (e->not_reading || e->process_exited) return 0;
  if (e->state == MCPP_STATE_CLOSED) return 0;
  if (e->state == MCPP_STATE_STALE && e->s.on_stale == MCPP_STALE_CLOSE)
    return 0;
  /* Without ping, probe or process status there is nothing to do. */
  return !e->unsupported || mcpp__probe_proof(e) || e->cb.process_state;
}

/* A call in flight shortens the wait (issue 24): while the application
 * waits for an answer, the silence that matters runs from the later of the
 * server's last byte and the start of the spell with calls in flight, not
 * from the keepalive interval. Returns when that silence began, or
 * UINT64_MAX with nothing in flight (or stale and still reporting: probed
 * at the interval). Each time it can return was "now" when recorded, so
 * nothing computed from it is due before it exists, as the pause guard
 * (mcpp_engine_on_timer) assumes. Not the oldest call's sending: when a
 * call times out or is cancelled, the next one's sending time is already
 * old, the pause guard took the look or probe then due for a late wake-up
 * and forgave the silence, cancelling the keepalive ping or the detector's
 * probe each time, and a spinning server fed new calls went unconvicted. */
static uint64_t inflight_since(const mcpp_engine *e) {
  if (e->ledger.head == NULL || e->state == MCPP_STATE_STALE) return UINT64_MAX;
  uint64_t t = e->inflight_from;
  if (e->last_rx > t) t = e->last_rx;
  if (e->ka_base > t) t = e->ka_base;
  return t;
}

/* The ping timeout the detector uses, in microseconds. */
static uint64_t probe_timeout_us(const mcpp_engine *e) {
  return (uint64_t)mcpp__detector_timeout_ms(e) * US_PER_MS;
}

/* When the next keepalive ping or probe is due (UINT64_MAX: none).
 * Computed from state, so traffic never needs a timer restart. With a
 * request in flight it is due once the server has been silent for the
 * ping timeout: the probe feeds the same machinery (failures, the
 * detector's corroboration, busy), it only starts it sooner. */
static uint64_t ka_due(const mcpp_engine *e) {
  if (!ka_enabled(e) || e->ka_active) return UINT64_MAX;
  if (e->ka_probe_now) return e->ka_probe_at;
  uint64_t base = e->last_rx > e->ka_base ? e->last_rx : e->ka_base;
  uint64_t due = base + (uint64_t)e->s.interval_ms * US_PER_MS - e->ka_jitter_us;
  uint64_t since = inflight_since(e);
  if (since == UINT64_MAX) return due;
  /* After a pause of ours, answers waiting in the pipe are read first. */
  uint64_t soon = mcpp__with_grace(e, since + probe_timeout_us(e));
  return soon < due ? soon : due;
}

/* With a request in flight the process is looked at halfway to the
 * in-flight probe, as it is halfway through a ping's timeout, once per
 * silence (UINT64_MAX: not due). */
static uint64_t inflight_look_due(const mcpp_engine *e) {
  uint64_t since = inflight_since(e);
  if (since == UINT64_MAX || e->inflight_looked == since) return UINT64_MAX;
  return mcpp__with_grace(e, since + probe_timeout_us(e) / 2);
}

/* When a stop, if the next look still finds it, is held against the
 * server: a timeout after it was first seen while idle (job control, a
 * debugger's pause), a tenth of one once a call waits too, whose caller
 * waits with it (counted from when both held, so a call sent to a process
 * already stopped does not make it due in the past). Two looks, not one:
 * a traced process is stopped for an instant at each syscall. */
static uint64_t stop_verdict_at(const mcpp_engine *e) {
  uint64_t idle = e->stopped_since + timeout_us(e);
  if (inflight_since(e) == UINT64_MAX) return idle;
  uint64_t from = e->stopped_since > e->inflight_from ? e->stopped_since
                                                      : e->inflight_from;
  uint64_t waiting = from + timeout_us(e) / 10;
  return waiting < idle ? waiting : idle;
}

/* When the process must be looked at next (UINT64_MAX: not before the
 * next keepalive): halfway through the keepalive request's timeout, so a
 * stopped server is known before that times out, and a timeout after it
 * was seen stopped, to tell whether it stayed stopped. */
static uint64_t process_due(const mcpp_engine *e) {
  if (e->cb.process_state == NULL || !ka_enabled(e)) return UINT64_MAX;
  uint64_t t = UINT64_MAX;
  if (e->ka_active && !e->ka_checked)
    t = e->ka.sent_at + (uint64_t)e->ka.timeout_ms * US_PER_MS / 2;
  if (e->stopped_since && e->state != MCPP_STATE_STALE) {
    uint64_t s = stop_verdict_at(e);
    if (s < t) t = s;
  }
  uint64_t look = inflight_look_due(e);
  return look < t ? look : t;
}

uint64_t mcpp__with_grace(const mcpp_engine *e, uint64_t deadline) {
  return deadline < e->grace_until ? e->grace_until : deadline;
}

static uint64_t min3(uint64_t a, uint64_t b, uint64_t c) {
  uint64_t m = a < b ? a : b;
  return m < c ? m : c;
}

uint64_t mcpp__engine_next_expiry(const mcpp_engine *e) {
  if (e == NULL || e->state == MCPP_STATE_CLOSED) return UINT64_MAX;
  uint64_t t = UINT64_MAX;
  if (ka_enabled(e)) {
    if (e->ka_active) t = e->ka.deadline;
    uint64_t p = process_due(e);
    if (p < t) t = p;
  }
  if (e->not_reading) return t;
  return min3(t, mcpp__manual_deadline(e), mcpp__request_deadline(e));
}

uint64_t mcpp__engine_next_send(const mcpp_engine *e) {
  if (e == NULL || e->state == MCPP_STATE_CLOSED) return UINT64_MAX;
  return ka_due(e);
}

uint64_t mcpp__engine_send_if_answered(const mcpp_engine *e, uint64_t now) {
  if (e == NULL || e->state == MCPP_STATE_CLOSED || !e->ka_active ||
      !ka_enabled(e))
    return UINT64_MAX;
  /* As ka_due would say once the answer moved last_rx to now: the jitter
   * for the next round was drawn when this one was sent. */
  return now + (uint64_t)e->s.interval_ms * US_PER_MS - e->ka_jitter_us;
}

uint64_t mcpp_engine_next_deadline(const mcpp_engine *e) {
  if (e == NULL || e->state == MCPP_STATE_CLOSED) return UINT64_MAX;
  uint64_t t = mcpp__engine_next_expiry(e), send = ka_due(e);
  return send < t ? send : t;
}

/* ------------------------------------------------------------ life, state */

static void change_state(mcpp_engine *e, mcpp_state to, mcpp_event_type type,
                         const char *proof, const char *message,
                         mcpp_disposition d, const char *record,
                         uint64_t now) {
  e->state = to;
  mcpp_event ev;
  memset(&ev, 0, sizeof ev);
  ev.type = type;
  ev.proof = proof;
  ev.message = message;
  ev.disposition = d;
  mcpp__emit(e, &ev, record, now);
}

void mcpp__go_suspect(mcpp_engine *e, const char *proof, const char *message,
                      uint64_t now) {
  change_state(e, MCPP_STATE_SUSPECT, MCPP_EV_SUSPECT, proof, message,
               MCPP_DISPOSITION_CONTINUED, "suspect", now);
}

size_t mcpp_engine_stale_reason(const mcpp_engine *e, char *out, size_t cap) {
  int n;
  const char *what = e ? e->stale_what : NULL;
  if (what == NULL) {
    n = snprintf(out, cap, "%s", "");
  } else {
    const char *peer = e->s.role == MCPP_ROLE_SERVER ? "client" : "server";
    if (strncmp(what, "ping", 4) == 0)
      n = snprintf(out, cap, "the %s went stale: %u keepalive pings failed", peer,
                   (unsigned)e->failure_count);
    else if (strncmp(what, "probe:", 6) == 0)
      n = snprintf(out, cap, "the %s went stale: %u idle probes (%.*s) failed", peer,
                   (unsigned)e->failure_count,
                   (int)strcspn(what + 6, ";"), /* the method, not the detector's clauses */
                   what + 6);
    else
      n = snprintf(out, cap, "the %s went stale: %s", peer, what);
  }
  return n < 0 ? 0 : (size_t)n;
}

/* forced: nothing will answer whatever on_stale says (the process exited). */
void mcpp__go_stale(mcpp_engine *e, const char *proof, const char *message,
                    int forced, uint64_t now) {
  /* The close reason names what failed: pings, idle probes or the process. */
  e->stale_what = proof && strcmp(proof, "process") == 0 && message ? message
                  : proof && strncmp(proof, "probe:", 6) == 0     ? proof
                                                                  : "ping";
  mcpp_disposition d = e->s.on_stale == MCPP_STALE_REPORT && !forced
                           ? MCPP_DISPOSITION_CONTINUED
                           : mcpp__abandon_disposition(e);
  change_state(e, MCPP_STATE_STALE, MCPP_EV_STALE, proof, message, d, "stale",
               now);
}

void mcpp__on_rx(mcpp_engine *e, uint64_t now, const char *proof) {
  if (now > e->last_rx) e->last_rx = now;
  e->heard_from_peer = 1;
  e->ka_probe_now = 0;
  e->failure_count = 0;
  mcpp__detector_reset(e);
  /* Bytes a dead server left in the pipe do not bring it back. */
  if (e->state != MCPP_STATE_SUSPECT && e->state != MCPP_STATE_STALE) return;
  if (e->process_exited) return;
  e->stopped_since = 0;
  change_state(e, MCPP_STATE_ALIVE, MCPP_EV_RECOVERED, proof, NULL,
               MCPP_DISPOSITION_CONTINUED, "recovered", now);
}

void mcpp_engine_touch(mcpp_engine *e, uint64_t now) {
  if (e == NULL || e->state == MCPP_STATE_CLOSED) return;
  mcpp__on_rx(e, now, "traffic");
}

void mcpp__turn_off_pings(mcpp_engine *e) {
  e->unsupported = 1;
  if (!e->ka_is_probe) e->ka_active = 0;
  e->ka_probe_now = 0;
}

/* ---------------------------------------------------------- the process */

/* Asks the driver about the process and acts on the answer: stopped makes
 * an alive peer suspect at once, exited makes it stale for good. */
static void check_process(mcpp_engine *e, uint64_t now) {
  /* The driver may feed the CPU time from inside the callback: growth
   * between two looks is the detector's sign of a busy server. */
  uint64_t cpu_before = e->cpu_us;
  int cpu_had = e->cpu_known;
  int st = e->cb.process_state(e, e->user_data);
  e->cpu_advanced = cpu_had && e->cpu_us > cpu_before;
  if (st < MCPP_PROCESS_UNKNOWN || st > MCPP_PROCESS_EXITED)
    st = MCPP_PROCESS_UNKNOWN;
  e->process_state = (mcpp_process_state)st;
  if (st == MCPP_PROCESS_EXITED) {
    e->process_exited = 1;
    e->ka_active = 0;
    if (e->state != MCPP_STATE_STALE)
      mcpp__go_stale(e, "process", "the server process exited", 1, now);
    return;
  }
  if (st != MCPP_PROCESS_STOPPED) {
    /* Running (or unknowable): the usual path, through pings or probes. */
    e->stopped_since = 0;
    if (st == MCPP_PROCESS_RUNNING) e->last_process = now;
    return;
  }
  if (e->stopped_since == 0) e->stopped_since = now;
  if (e->state == MCPP_STATE_ALIVE)
    mcpp__go_suspect(e, "process", "the server process is stopped", now);
}

/* A process check that came due (see process_due). */
static void process_check_due(mcpp_engine *e, uint64_t now) {
  uint64_t stopped = e->stopped_since;
  int halfway = e->ka_active && !e->ka_checked;
  if (halfway) e->ka_checked = 1;
  if (inflight_look_due(e) <= now) e->inflight_looked = inflight_since(e);
  check_process(e, now);
  if (e->state == MCPP_STATE_CLOSED || e->process_exited) return;
  if (stopped && e->stopped_since == stopped && now >= stop_verdict_at(e) &&
      e->state != MCPP_STATE_STALE)
    mcpp__go_stale(e, "process", "the server process stayed stopped", 0, now);
}

/* ------------------------------------------------------- keepalive outcomes */

void mcpp__answered_by_peer(mcpp_engine *e, uint64_t seq, int kind,
                            int64_t code, const char *message, uint64_t now) {
  mcpp_event ev;
  char idbuf[64];
  if (mcpp__is_probe_seq(e, seq)) {
    /* Any answer, an error included, shows the peer's loop ran. */
    e->ka_active = 0;
    e->ka_base = now;
    e->last_probe = now;
    e->probes_answered++;
    probe_event(e, &ev, MCPP_EV_PROBE_OK, idbuf);
    ev.rtt_us = now > e->ka.sent_at ? now - e->ka.sent_at : 0;
    mcpp__detector_observe_rtt(e, ev.rtt_us);
    int error = kind >= 2;
    if (error) {
      ev.rpc_code = code;
      ev.message = message;
    }
    mcpp__emit(e, &ev, error ? "probe_error" : "probe_ok", now);
    if (e->corroborating && e->state != MCPP_STATE_CLOSED)
      mcpp__detector_probe_answered(e, now);
    return;
  }
  mcpp__ping p;
  int manual;
  if (e->ka_active && !e->ka_is_probe && e->ka.seq == seq) {
    p = e->ka;
    manual = 0;
    e->ka_active = 0;
    e->ka_base = now;
  } else if (mcpp__take_manual(e, seq, &p)) {
    manual = 1;
  } else {
    /* A late or cancelled ping: already counted as life; its outcome is no
     * longer reported, but "unsupported" is still worth knowing. */
    if (kind == 3) mcpp__turn_off_pings(e);
    mcpp__detector_late_pong(e);
    return;
  }
  e->last_ping = now;
  mcpp__ping_event(e, &ev, MCPP_EV_PONG, &p, manual, idbuf);
  ev.rtt_us = now > p.sent_at ? now - p.sent_at : 0;
  mcpp__detector_observe_rtt(e, ev.rtt_us);
  const char *record = "ping_ok";
  switch (kind) {
    case 0:
      e->pongs_received++;
      break;
    case 1:
      e->ping_errors++;
      ev.type = MCPP_EV_PING_ERROR;
      ev.invalid = 1;
      record = "ping_invalid";
      break;
    case 2:
      e->ping_errors++;
      ev.type = MCPP_EV_PING_ERROR;
      ev.rpc_code = code;
      ev.message = message;
      record = "ping_error";
      break;
    default:
      mcpp__turn_off_pings(e);
      ev.type = MCPP_EV_UNSUPPORTED;
      ev.rpc_code = code;
      ev.message = message;
      record = "ping_unsupported";
      break;
  }
  mcpp__emit(e, &ev, record, now);
}

/* The keepalive ping or probe went unanswered. */
static void keepalive_timed_out(mcpp_engine *e, uint64_t now) {
  int probe = e->ka_is_probe;
  const char *proof = e->ka_proof;
  uint64_t sent_at = e->ka.sent_at;
  /* A corroborating probe stands in for the pings that failed before it. */
  int corroboration = probe && e->corroborating;
  e->ka_active = 0;
  e->corroborating = 0;
  if (probe)
    e->probe_timeouts++;
  else
    e->ping_timeouts++;
  /* Traffic that arrived after the request was sent proves the peer's loop
   * runs (as gRPC's keepalive does), so only silence is a failure. */
  int failed = e->last_rx <= sent_at;
  /* Saturates at settings.failures: a stale peer that is still probed
   * (on_stale = report) stays "failures" failures deep, the documented
   * bound, instead of counting up forever. */
  if (failed && e->failure_count < e->s.failures) e->failure_count++;
  mcpp_event ev;
  char idbuf[64];
  if (probe) {
    probe_event(e, &ev, MCPP_EV_PROBE_TIMEOUT, idbuf);
    mcpp__emit(e, &ev, "probe_timeout", now);
  } else {
    mcpp__ping_event(e, &ev, MCPP_EV_TIMEOUT, &e->ka, 0, idbuf);
    mcpp__emit(e, &ev, "ping_timeout", now);
  }
  if (!failed || e->state == MCPP_STATE_CLOSED) return;

  if (corroboration) e->probe_failed = 1;
  if (e->failure_count >= e->s.failures && e->state != MCPP_STATE_STALE)
    mcpp__detector_decide(e, corroboration ? "ping" : proof, now);
  else if (e->state == MCPP_STATE_ALIVE)
    mcpp__go_suspect(e, proof, NULL, now);
  if (e->state == MCPP_STATE_CLOSED || e->ka_active) return;
  if (e->state == MCPP_STATE_STALE) {
    /* Stale and still reporting: keep probing at the interval. */
    e->ka_base = now;
  } else {
    /* Probe again at once, so a frozen peer is stale within
     * interval + timeout x failures. */
    e->ka_probe_now = 1;
    e->ka_probe_at = now;
  }
}

/* Keepalive is due: ping or probe, or, with nothing to send, look at the
 * process. After the first round, which looks once so that info() knows
 * the process, a ping or probe is not preceded by a process check (a few
 * syscalls, most of an idle connection's cost): an answer makes it moot,
 * and a stopped server behind an unanswered one is seen halfway through
 * its timeout (process_due). */
static int keepalive_fire(mcpp_engine *e, uint64_t now) {
  int looked = 0;
  if (e->cb.process_state && !e->process_asked) {
    e->process_asked = looked = 1;
    check_process(e, now);
    if (!ka_enabled(e)) return 0; /* exited, or closed by a listener */
  }
  int rc;
  const char *probe;
  if (!e->unsupported && !e->ping_deaf)
    rc = mcpp__send_ping(e, 0, mcpp__detector_timeout_ms(e), now, NULL);
  else if ((probe = mcpp__probe_proof(e)) != NULL)
    rc = mcpp__send_probe(e, probe, now);
  else {
    /* Nothing to send (ka_enabled: the process can be asked): the process
     * check is this round's keepalive. */
    e->ka_base = now;
    e->ka_probe_now = 0;
    if (!looked) check_process(e, now);
    rc = 0;
  }
  if (rc == 0) draw_jitter(e);
  return rc;
}

/* ------------------------------------------------ silence that was ours */

void mcpp__forgive_silence(mcpp_engine *e, uint64_t now) {
  if (e->ka_active) {
    e->ka_active = 0;
    e->corroborating = 0;
    e->ka_probe_now = 1;
    e->ka_probe_at = now;
  }
  e->grace_until = now + (uint64_t)e->s.pause_threshold_ms * US_PER_MS;
}

void mcpp_engine_set_reading(mcpp_engine *e, int reading, uint64_t now) {
  if (e == NULL || e->state == MCPP_STATE_CLOSED) return;
  if (!reading) {
    e->not_reading = 1;
    return;
  }
  if (!e->not_reading) return;
  e->not_reading = 0;
  mcpp__forgive_silence(e, now);
  e->ka_base = now; /* the interval starts over */
}

/* Local health, said out loud: a record that the silence was ours, so a
 * reader can tell a widened verdict from a missed one. */
static void report_pause(mcpp_engine *e, uint64_t late_us, uint64_t now) {
  mcpp_event ev;
  memset(&ev, 0, sizeof ev);
  ev.type = MCPP_EV_PAUSED;
  uint64_t late_ms = late_us / US_PER_MS;
  ev.timeout_ms = late_ms > UINT32_MAX ? UINT32_MAX : (uint32_t)late_ms;
  ev.proof = "local";
  ev.message = "woken late (a stalled host, a suspended machine or a clock "
               "jump): the silence meanwhile is not held against the peer";
  mcpp__emit(e, &ev, "paused", now);
}

/* ----------------------------------------------------------------- timer */

int mcpp_engine_on_timer(mcpp_engine *e, uint64_t now) {
  if (e == NULL) return MCPP_ERR_INVALID_ARGUMENT;
  if (e->state == MCPP_STATE_CLOSED || e->not_reading) return 0;
  uint64_t pause_us = (uint64_t)e->s.pause_threshold_ms * US_PER_MS;
  uint64_t due = mcpp_engine_next_deadline(e);
  /* Woken far too late: the host was paused, and answers may be waiting
   * unread in the pipe. Nothing that expired meanwhile is the peer's
   * fault. */
  if (due != UINT64_MAX && now > due && now - due > pause_us) {
    mcpp__forgive_silence(e, now);
    report_pause(e, now - due, now);
    if (e->state == MCPP_STATE_CLOSED) return 0;
  }

  mcpp__expire_manual(e, now);
  if (e->state == MCPP_STATE_CLOSED) return 0;

  if (ka_enabled(e) && e->ka_active && e->ka.deadline <= now) {
    keepalive_timed_out(e, now);
    if (e->state == MCPP_STATE_CLOSED) return 0;
  }
  if (process_due(e) <= now) {
    process_check_due(e, now);
    if (e->state == MCPP_STATE_CLOSED) return 0;
  }

  int rc = mcpp__expire_requests(e, now);
  if (rc || e->state == MCPP_STATE_CLOSED) return rc;

  if (ka_due(e) <= now) return keepalive_fire(e, now);
  return 0;
}
