/*
 * Checks everything the runtime hands the host: each inbound line against
 * the one the server must have written (sequence, bytes), each request's
 * one outcome, each verdict against the server's plan.
 */
#include <cjson/cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "soak.h"

size_t slot_outstanding(const slot *s) {
  size_t n = 0;
  for (size_t i = 0; i < s->n_reqs; i++) n += !s->reqs[i].timed_out;
  return n;
}

static req *find_req(slot *s, uint64_t iseq) {
  for (size_t i = 0; i < s->n_reqs; i++)
    if (s->reqs[i].iseq == iseq) return &s->reqs[i];
  return NULL;
}

static void drop_req(slot *s, req *r) { *r = s->reqs[--s->n_reqs]; }

/* A step in the server's output sequence. */
static void saw_oseq(soak *k, slot *s, uint64_t oseq) {
  if (oseq == s->next_oseq) {
    s->next_oseq++;
  } else if (oseq > s->next_oseq) {
    fprintf(stderr, "soak: conn %d: lost %llu lines before oseq %llu\n",
            s->idx, (unsigned long long)(oseq - s->next_oseq),
            (unsigned long long)oseq);
    k->c.lost += oseq - s->next_oseq;
    s->next_oseq = oseq + 1;
  } else {
    fprintf(stderr, "soak: conn %d: oseq %llu after %llu\n", s->idx,
            (unsigned long long)oseq, (unsigned long long)(s->next_oseq - 1));
    k->c.reordered++;
  }
}

static void altered(soak *k, slot *s, const char *what, const char *frame,
                    size_t len) {
  fprintf(stderr, "soak: conn %d: %s: %.*s\n", s->idx, what,
          (int)(len > 200 ? 200 : len), frame);
  k->c.altered++;
}

static void expect_bytes(soak *k, slot *s, const soak_buf *want,
                         const char *frame, size_t len, const char *what) {
  if (want->len != len || memcmp(want->p, frame, len) != 0)
    altered(k, s, what, frame, len);
}

static uint64_t u64(const cJSON *obj, const char *key) {
  const cJSON *v = cJSON_GetObjectItemCaseSensitive(obj, key);
  return cJSON_IsNumber(v) ? (uint64_t)v->valuedouble : 0;
}

static int64_t i64(const cJSON *obj, const char *key) {
  const cJSON *v = cJSON_GetObjectItemCaseSensitive(obj, key);
  return cJSON_IsNumber(v) ? (int64_t)v->valuedouble : 0;
}

static int has(const cJSON *obj, const char *key) {
  return cJSON_GetObjectItemCaseSensitive(obj, key) != NULL;
}

/* Our ids are iseq (even) or "r-<iseq>" (odd); see soak_request_id. */
static int iseq_of(const cJSON *id, uint64_t *iseq) {
  if (cJSON_IsNumber(id)) {
    *iseq = (uint64_t)id->valuedouble;
    return 1;
  }
  if (cJSON_IsString(id) && strncmp(id->valuestring, "r-", 2) == 0) {
    *iseq = strtoull(id->valuestring + 2, NULL, 10);
    return 1;
  }
  return 0;
}

static int convictable(const slot *s) {
  return fault_is_detected(s->fault) && s->announced_ms;
}

/* The engine's verdict on a faulty server, at the time its governance
 * record says (our own stalls delay only when we read it). */
static void detected(soak *k, slot *s, uint64_t at_us) {
  if (s->detected) return;
  fault_stats *fs = &k->c.faults[s->fault];
  uint64_t ms = at_us > s->announced_us ? (at_us - s->announced_us) / 1000 : 0;
  s->detected = 1;
  fs->detected++;
  fs->sum_ms += ms;
  if (ms > fs->max_ms) fs->max_ms = ms;
  if (ms > fault_bound_ms(s->fault)) {
    /* Each pause of the engine's own (a starved machine) buys the peer
     * another probe: late then is by design. */
    uint64_t now = soak_now_ms();
    int paused = soak_starved_between(k, now > ms ? now - ms : 0, now);
    fprintf(stderr, "soak: conn %d: %s detected after %llu ms (bound %llu)%s\n",
            s->idx, fault_names[s->fault], (unsigned long long)ms,
            (unsigned long long)fault_bound_ms(s->fault),
            paused ? ", after a pause of ours" : "");
    if (paused)
      fs->late_paused++;
    else
      fs->late++;
  }
}

static void note_verdict(soak *k, slot *s, const char *verdict) {
  fault_stats *fs = &k->c.faults[s->fault];
  if (!strstr(fs->verdicts, verdict) &&
      strlen(fs->verdicts) + strlen(verdict) + 2 < sizeof fs->verdicts) {
    if (fs->verdicts[0]) strcat(fs->verdicts, ",");
    strcat(fs->verdicts, verdict);
  }
}

/* "2026-12-03T06:40:00.123456Z" as Unix µs; 0 if it is not one. */
static uint64_t parse_ts(const char *p, size_t n) {
  struct tm tm;
  unsigned us;
  memset(&tm, 0, sizeof tm);
  if (n < 27 || sscanf(p, "%4d-%2d-%2dT%2d:%2d:%2d.%6uZ", &tm.tm_year,
                       &tm.tm_mon, &tm.tm_mday, &tm.tm_hour, &tm.tm_min,
                       &tm.tm_sec, &us) != 7)
    return 0;
  tm.tm_year -= 1900;
  tm.tm_mon -= 1;
  return (uint64_t)timegm(&tm) * 1000000 + us;
}

static void on_record(soak *k, slot *s, const char *json, size_t len) {
  static const char ts[] = "{\"ts\":\"";
  if (!convictable(s) || s->detected || len < sizeof ts ||
      memcmp(json, ts, sizeof ts - 1) != 0)
    return;
  if (memmem(json, len, "\"event\":\"stale\"", 15) ||
      memmem(json, len, "\"event\":\"closed\"", 16))
    detected(k, s, parse_ts(json + sizeof ts - 1, len - (sizeof ts - 1)));
}

/* ---------------------------------------------------------- messages */

static void on_answer(soak *k, slot *s, const cJSON *root, const char *frame,
                      size_t len) {
  uint64_t iseq;
  const cJSON *result = cJSON_GetObjectItemCaseSensitive(root, "result");
  const cJSON *error = cJSON_GetObjectItemCaseSensitive(root, "error");
  if (!iseq_of(cJSON_GetObjectItemCaseSensitive(root, "id"), &iseq)) {
    altered(k, s, "an answer with an id we never sent", frame, len);
    return;
  }
  if (error) {
    /* mcpping's own answer for a request past its deadline. */
    int ours = (iseq == 0 && s->phase == P_INIT) ||
               (iseq == s->finish_iseq && s->phase == P_FINWAIT);
    if (ours && i64(error, "code") == -32001) {
      /* The handshake or soak/finish: only a frozen server may miss it. */
      if (!convictable(s)) {
        fprintf(stderr, "soak: conn %d: %s timed out (%s, flags 0x%x)\n",
                s->idx, iseq ? "soak/finish" : "initialize",
                fault_names[s->fault], s->flags);
        k->c.false_timeouts++;
        slot_close(k, s);
      }
      return;
    }
    req *r = find_req(s, iseq);
    int64_t code = i64(error, "code");
    if (code == -32800 && r && r->aborted && !r->timed_out) {
      /* mcpping's answer for a request we abandoned. */
      r->timed_out = 1;
      s->aborts++;
      k->c.aborts++;
      return;
    }
    if (code != -32001 || !r || r->timed_out) {
      fprintf(stderr,
              "soak: conn %d (%s, flags 0x%x, phase %d): request %llu %s\n",
              s->idx, fault_names[s->fault], s->flags, s->phase,
              (unsigned long long)iseq,
              !r ? "was answered already"
                 : r->timed_out ? "had timed out already" : "is in flight");
      altered(k, s, "an unexpected error answer", frame, len);
      return;
    }
    /* The timeout in force must be the one the request was sent with. */
    const cJSON *msg = cJSON_GetObjectItemCaseSensitive(error, "message");
    const char *after = cJSON_IsString(msg) ? strstr(msg->valuestring, "after ")
                                            : NULL;
    unsigned long in_force = after ? strtoul(after + 6, NULL, 10) : 0;
    int wrong = in_force != r->timeout_ms;
    if (wrong) {
      fprintf(stderr,
              "soak: conn %d: request %llu timed out after %lu ms, its own "
              "timeout was %u ms\n",
              s->idx, (unsigned long long)iseq, in_force, r->timeout_ms);
      k->c.false_timeouts++;
    }
    r->timed_out = 1;
    s->timeouts++;
    k->c.timeouts++;
    if (r->expect_timeout) k->c.faults[F_SLOW].detected++;
    /* A healthy server's request that timed out is judged by its late
     * answer, if one comes: written before the deadline means the timeout
     * was ours (see on_late_answer); dropped on the cancel or written after
     * it, the server was late. Counted late until shown otherwise. */
    if (!wrong && !r->expect_timeout && !convictable(s)) {
      r->server_late = 1;
      k->c.server_late++;
    }
    return;
  }
  saw_oseq(k, s, u64(result, "oseq"));
  if (iseq == 0 && s->phase == P_INIT) { /* initialize */
    soak_buf note = {0};
    soak_buf_printf(&note,
                    "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/"
                    "initialized\",\"params\":{\"iseq\":%llu}}",
                    (unsigned long long)s->next_iseq++);
    slot_send(k, s, &note);
    soak_buf_free(&note);
    s->phase = P_RUN;
    s->phase_ms = soak_now_ms();
    return;
  }
  if (s->phase == P_FINWAIT && iseq == s->finish_iseq) {
    /* What the server counted must match what we sent. */
    if (u64(result, "received") != s->sent_app) {
      fprintf(stderr, "soak: conn %d: server received %llu of %llu lines\n",
              s->idx, (unsigned long long)u64(result, "received"),
              (unsigned long long)s->sent_app);
      k->c.lost += s->sent_app > u64(result, "received")
                       ? s->sent_app - u64(result, "received")
                       : 1;
    }
    k->c.lost += u64(result, "lost_in");
    k->c.reordered += u64(result, "reordered_in");
    k->c.altered += u64(result, "altered_in");
    /* Each timeout and each abort sends one notifications/cancelled. */
    uint64_t cancels = u64(result, "cancels");
    uint64_t ended = s->timeouts + s->aborts;
    if (cancels != ended) {
      fprintf(stderr,
              "soak: conn %d: %llu cancels for %llu timeouts and aborts\n",
              s->idx, (unsigned long long)cancels, (unsigned long long)ended);
      k->c.lost += cancels > ended ? cancels - ended : ended - cancels;
    }
    /* Its pings to us: all answered but perhaps the last one. */
    uint64_t sp = u64(result, "servpings_sent");
    uint64_t spa = u64(result, "servpings_answered");
    k->c.pings_answered_by_us += spa;
    k->c.late_pongs += u64(result, "servpings_late");
    if (sp > spa + 1) {
      fprintf(stderr, "soak: conn %d: %llu of the server's pings unanswered\n",
              s->idx, (unsigned long long)(sp - spa - 1));
      k->c.lost += sp - spa - 1;
    }
    slot_close(k, s);
    return;
  }
  req *r = find_req(s, iseq);
  if (!r) {
    altered(k, s, "an answer to no request of ours", frame, len);
    return;
  }
  soak_buf want = {0};
  soak_line_echo(&want, s->seed, iseq, u64(result, "oseq"), r->rawhash,
                 u64(result, "wrote_us"));
  expect_bytes(k, s, &want, frame, len, "an echo answer differs");
  soak_buf_free(&want);
  uint64_t wrote_us = u64(result, "wrote_us");
  if (r->timed_out) {
    k->c.late_answers++;
    /* Written before the deadline (sent + timeout, and the engine saw the
     * request no sooner than we sent it): the answer was there in time. */
    if (r->server_late &&
        wrote_us < r->sent_us + (uint64_t)r->timeout_ms * 1000) {
      fprintf(stderr,
              "soak: conn %d: request %llu timed out, but the server wrote "
              "its answer %lld ms after sending (flags 0x%x)\n",
              s->idx, (unsigned long long)iseq,
              (long long)(wrote_us - r->sent_us) / 1000, s->flags);
      k->c.server_late--;
      k->c.false_timeouts++;
    }
  } else if (r->aborted && wrote_us < r->aborted_us + 2000000) {
    /* Written before our cancel could reach the server (2 s): the race
     * is the server's to win. */
    k->c.late_aborts++;
  } else if (r->aborted) {
    fprintf(stderr, "soak: conn %d: request %llu answered, not aborted\n",
            s->idx, (unsigned long long)iseq);
    k->c.missed_aborts++;
  } else if (r->expect_timeout &&
             soak_starved_between(k, r->sent_ms, soak_now_ms())) {
    /* The engine gives deadlines a grace period after a pause of its own
     * (pause_threshold_ms): the machine starved us, so this is that. */
    k->c.paused_timeouts++;
  } else if (r->expect_timeout) {
    fprintf(stderr, "soak: conn %d: request %llu should have timed out\n",
            s->idx, (unsigned long long)iseq);
    k->c.missed_timeouts++;
  }
  drop_req(s, r);
}

static void on_notification(soak *k, slot *s, const cJSON *root,
                            const char *method, const char *frame,
                            size_t len) {
  const cJSON *params = cJSON_GetObjectItemCaseSensitive(root, "params");
  if (strcmp(method, "notifications/message") == 0) {
    uint64_t oseq = u64(cJSON_GetObjectItemCaseSensitive(params, "data"), "oseq");
    saw_oseq(k, s, oseq);
    soak_buf want = {0};
    soak_line_note(&want, s->seed, oseq);
    expect_bytes(k, s, &want, frame, len, "a notification differs");
    soak_buf_free(&want);
  } else if (strcmp(method, "notifications/soak/fault") == 0) {
    saw_oseq(k, s, u64(params, "oseq"));
    const cJSON *f = cJSON_GetObjectItemCaseSensitive(params, "fault");
    if (!cJSON_IsString(f) || strcmp(f->valuestring, fault_names[s->fault]))
      altered(k, s, "a fault we did not plan", frame, len);
    s->announced_ms = soak_now_ms();
    s->announced_us = u64(params, "at_us");
    k->c.faults[s->fault].injected++;
  } else {
    altered(k, s, "an unexpected message", frame, len);
  }
}

/* The server's notifications, the bulk of the traffic, are checked by
 * rebuilding them from their oseq alone: no parse needed. */
static int quick_note(soak *k, slot *s, const char *frame, size_t len) {
  static const char head[] =
      "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/message\","
      "\"params\":{\"level\":\"info\",\"logger\":\"soak\","
      "\"data\":{\"oseq\":";
  if (len < sizeof head || memcmp(frame, head, sizeof head - 1) != 0) return 0;
  char digits[24];
  size_t n = len - (sizeof head - 1) < 23 ? len - (sizeof head - 1) : 23;
  memcpy(digits, frame + sizeof head - 1, n);
  digits[n] = '\0';
  uint64_t oseq = strtoull(digits, NULL, 10);
  saw_oseq(k, s, oseq);
  soak_buf want = {0};
  soak_line_note(&want, s->seed, oseq);
  expect_bytes(k, s, &want, frame, len, "a notification differs");
  soak_buf_free(&want);
  return 1;
}

static void on_message(soak *k, slot *s, const char *frame, size_t len) {
  k->c.app_messages++;
  if (quick_note(k, s, frame, len)) return;
  size_t plen = strlen(SOAK_GARBAGE_PREFIX);
  if (len > plen && memcmp(frame, SOAK_GARBAGE_PREFIX, plen) == 0) {
    uint64_t oseq = strtoull(frame + plen, NULL, 10);
    saw_oseq(k, s, oseq);
    soak_buf want = {0};
    soak_line_garbage(&want, s->seed, oseq);
    expect_bytes(k, s, &want, frame, len, "a garbage line differs");
    soak_buf_free(&want);
    k->c.garbage++;
    return;
  }
  cJSON *root = cJSON_ParseWithLength(frame, len);
  const cJSON *method = cJSON_GetObjectItemCaseSensitive(root, "method");
  if (!root) {
    altered(k, s, "a line that is not JSON", frame, len);
  } else if (cJSON_IsString(method)) {
    on_notification(k, s, root, method->valuestring, frame, len);
  } else if (has(root, "id") && (has(root, "result") || has(root, "error"))) {
    on_answer(k, s, root, frame, len);
  } else {
    altered(k, s, "an unexpected message", frame, len);
  }
  cJSON_Delete(root);
}

/* ---------------------------------------------------------- events */

static void on_event(soak *k, slot *s, const mcpp_event *ev) {
  if (ev->type == MCPP_EV_STALE) {
    if (convictable(s)) {
      note_verdict(k, s, "stale");
    } else if (s->fault == F_CRASH && audit_has_exited(s->pid)) {
      /* It did crash, but its announcement, written before, is not here
       * yet: whatever it wrote last must still arrive (see on_closed). */
      s->exited_unread = 1;
    } else if (!s->stale_counted) {
      fprintf(stderr, "soak: conn %d: false stale (%s, flags 0x%x, proof %s)\n",
              s->idx, fault_names[s->fault], s->flags,
              ev->proof ? ev->proof : "?");
      s->stale_counted = 1;
      k->c.false_stale++;
    }
  } else if (ev->type == MCPP_EV_SUSPECT && !convictable(s)) {
    k->c.suspect_healthy++;
  } else if (ev->type == MCPP_EV_CLOSED && convictable(s) &&
             ev->error != MCPP_ERR_STALE) {
    note_verdict(k, s, mcpp_errname(ev->error));
  }
}

static void on_closed(soak *k, slot *s, const mcpp_close_info *info) {
  if (audit_is_leftover(s->pid)) {
    fprintf(stderr, "soak: conn %d: pid %d left behind\n", s->idx, s->pid);
    k->c.zombies++;
  }
  if (s->exited_unread && !s->announced_ms) {
    fprintf(stderr,
            "soak: conn %d: the server exited and was closed (%s) before "
            "its last lines were read: at least its announcement was "
            "dropped\n",
            s->idx, info->reason);
    k->c.lost++;
  } else if (convictable(s)) {
    if (!s->detected) {
      fprintf(stderr, "soak: conn %d: closed without a record\n", s->idx);
      k->c.undetected++;
    }
  } else if (!s->close_requested || info->err != 0) {
    fprintf(stderr, "soak: conn %d: closed unexpectedly (%s, flags 0x%x): %s\n",
            s->idx, fault_names[s->fault], s->flags, info->reason);
    k->c.unexpected_closes++;
    if (info->err == MCPP_ERR_STALE && !s->stale_counted) k->c.false_stale++;
  }
  k->c.abandoned += slot_outstanding(s);
  slot_after_close(k, s);
}

void check_item(soak *k, const mcpp_item *it) {
  slot *s = mcpp_item_get_conn_user_data(it);
  if (!s || s->phase == P_FREE || mcpp_item_get_conn_id(it) != s->conn_id) {
    if (mcpp_item_get_type(it) != MCPP_ITEM_RECORD &&
        mcpp_item_get_type(it) != MCPP_ITEM_STDERR)
      fprintf(stderr, "soak: an item (%d) for no open connection\n",
              (int)mcpp_item_get_type(it));
    return;
  }
  switch (mcpp_item_get_type(it)) {
  case MCPP_ITEM_MESSAGE:
    on_message(k, s, mcpp_item_get_data(it), mcpp_item_get_len(it));
    break;
  case MCPP_ITEM_EVENT:
    on_event(k, s, mcpp_item_get_event(it));
    break;
  case MCPP_ITEM_RECORD:
    on_record(k, s, mcpp_item_get_data(it), mcpp_item_get_len(it));
    break;
  case MCPP_ITEM_CLOSED:
    on_closed(k, s, mcpp_item_get_close(it));
    break;
  default:
    break;
  }
}
