/*
 * soak-server: the stdio MCP server the soak runs a thousand of. One small
 * poll() loop with timers, so it answers pings while its tool calls
 * "run" (as any async server does), and one process costs little.
 *
 *   soak-server seed=S [notify=MS] [burst=MS:N] [garbage=MS] [servping=MS]
 *               [pongdelay=MS] [fault=KIND@MS]
 *
 * notify: a notification every MS; burst: N notifications every MS;
 * garbage: a non-JSON line every MS; servping: a ping to the client every
 * MS (its answer is checked); pongdelay: answer pings MS late. tools/call
 * "echo" answers after arguments.delay_ms with its payload and the hash of
 * the raw request line; notifications/cancelled drops a pending answer.
 * soak/finish stops every timer and answers with what the server counted.
 *
 * fault=KIND@MS, MS after start, announced first with
 * notifications/soak/fault: stop (SIGSTOP itself), spin (a busy loop at
 * nice 19), crash (exit 3, abort or SIGKILL, by seed), halfopen (close
 * stdout, ignore SIGTERM, never read again), pingflood (20000 pings to the
 * client without reading the answers).
 */
#include <cjson/cJSON.h>
#include <errno.h>
#include <inttypes.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "wire.h"

typedef enum action_kind { ANSWER, PONG } action_kind;

typedef struct action {
  action_kind kind;
  uint64_t due;     /* ms, monotonic */
  uint64_t iseq;    /* ANSWER */
  uint64_t rawhash; /* ANSWER */
  char *id;         /* raw JSON id */
} action;

typedef struct periodic {
  uint64_t every, next;
  unsigned count;
} periodic;

static struct {
  uint64_t seed;
  periodic notify, burst, garbage, servping;
  uint64_t pong_delay;
  char fault[16];
  uint64_t fault_at; /* 0: none */
  int finished;

  action *actions;
  size_t n_actions, cap_actions;

  soak_buf out;
  uint64_t oseq;
  uint64_t next_iseq;
  /* What the server counts, for soak/finish. */
  uint64_t received, lost_in, reordered_in, altered_in, cancels;
  uint64_t servpings_sent, servpings_answered;
  uint64_t servping_outstanding_since; /* ms; 0 if none out */
  uint64_t servpings_late;
} S;

static uint64_t now_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

/* The announcement's time, on the clock governance records print. */
static uint64_t unix_us(void) {
  struct timespec ts;
  clock_gettime(CLOCK_REALTIME, &ts);
  return (uint64_t)ts.tv_sec * 1000000 + (uint64_t)ts.tv_nsec / 1000;
}

static void flush(void) {
  size_t off = 0;
  while (off < S.out.len) {
    ssize_t n = write(1, S.out.p + off, S.out.len - off);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) exit(0); /* the client is gone */
    off += (size_t)n;
  }
  S.out.len = 0;
}

static void end_line(void) {
  soak_buf_put(&S.out, "\n", 1);
  if (S.out.len > 65536) flush();
}

static void add_action(action a) {
  if (S.n_actions == S.cap_actions) {
    S.cap_actions = S.cap_actions ? S.cap_actions * 2 : 64;
    S.actions = realloc(S.actions, S.cap_actions * sizeof *S.actions);
    if (!S.actions) abort();
  }
  S.actions[S.n_actions++] = a;
}

static void drop_action(size_t i) {
  free(S.actions[i].id);
  S.actions[i] = S.actions[--S.n_actions];
}

/* ------------------------------------------------------------- writing */

static void write_note(void) {
  soak_line_note(&S.out, S.seed, S.oseq++);
  end_line();
}

static void write_garbage(void) {
  soak_line_garbage(&S.out, S.seed, S.oseq++);
  end_line();
}

static void write_servping(void) {
  soak_buf_printf(&S.out,
                  "{\"jsonrpc\":\"2.0\",\"id\":\"sp-%" PRIu64
                  "\",\"method\":\"ping\"}",
                  ++S.servpings_sent);
  end_line();
}

static void run_action(const action *a) {
  if (a->kind == PONG) {
    soak_buf_printf(&S.out, "{\"jsonrpc\":\"2.0\",\"id\":%s,\"result\":{}}",
                    a->id);
  } else {
    soak_line_echo(&S.out, S.seed, a->iseq, S.oseq++, a->rawhash);
  }
  end_line();
}

/* ------------------------------------------------------------- faults */

static void announce(const char *kind) {
  soak_buf_printf(&S.out,
                  "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/soak/"
                  "fault\",\"params\":{\"oseq\":%" PRIu64
                  ",\"fault\":\"%s\",\"at_us\":%" PRIu64 "}}",
                  S.oseq++, kind, unix_us());
  end_line();
  flush();
}

static void inject_fault(void) {
  announce(S.fault);
  if (strcmp(S.fault, "stop") == 0) {
    raise(SIGSTOP);
    for (;;) pause(); /* SIGCONT comes with the SIGTERM that ends us */
  }
  if (strcmp(S.fault, "spin") == 0) {
    if (nice(19) == -1) {
      /* still spin: the loop is frozen either way */
    }
    for (volatile uint64_t i = 0;; i++) {
    }
  }
  if (strcmp(S.fault, "crash") == 0) {
    switch (S.seed % 3) {
    case 0:
      _exit(3);
    case 1:
      signal(SIGABRT, SIG_DFL);
      abort();
    default:
      raise(SIGKILL);
    }
  }
  if (strcmp(S.fault, "halfopen") == 0) {
    close(1);
    signal(SIGTERM, SIG_IGN);
    for (;;) pause(); /* only SIGKILL ends us */
  }
  if (strcmp(S.fault, "pingflood") == 0) {
    for (int i = 0; i < 20000; i++) write_servping();
    flush();
    for (;;) pause();
  }
  fprintf(stderr, "soak-server: unknown fault %s\n", S.fault);
  exit(2);
}

/* ------------------------------------------------------------- reading */

static const char *raw_id(const cJSON *id) {
  return cJSON_PrintUnformatted(id);
}

static void check_iseq(const cJSON *params) {
  const cJSON *j = cJSON_GetObjectItemCaseSensitive(params, "iseq");
  if (!cJSON_IsNumber(j)) return;
  uint64_t iseq = (uint64_t)j->valuedouble;
  S.received++;
  if (iseq == S.next_iseq) {
    S.next_iseq++;
  } else if (iseq > S.next_iseq) {
    S.lost_in += iseq - S.next_iseq;
    S.next_iseq = iseq + 1;
  } else {
    S.reordered_in++;
  }
}

static void answer_initialize(const char *id) {
  soak_buf_printf(
      &S.out,
      "{\"jsonrpc\":\"2.0\",\"id\":%s,\"result\":{\"protocolVersion\":"
      "\"2025-11-25\",\"capabilities\":{\"tools\":{}},\"serverInfo\":{"
      "\"name\":\"soak-server\",\"version\":\"1\"},\"oseq\":%" PRIu64 "}}",
      id, S.oseq++);
  end_line();
}

static void answer_finish(const char *id) {
  S.finished = 1;
  soak_buf_printf(
      &S.out,
      "{\"jsonrpc\":\"2.0\",\"id\":%s,\"result\":{\"oseq\":%" PRIu64
      ",\"received\":%" PRIu64 ",\"lost_in\":%" PRIu64
      ",\"reordered_in\":%" PRIu64 ",\"altered_in\":%" PRIu64
      ",\"cancels\":%" PRIu64 ",\"servpings_sent\":%" PRIu64
      ",\"servpings_answered\":%" PRIu64 ",\"servpings_late\":%" PRIu64 "}}",
      id, S.oseq++, S.received, S.lost_in, S.reordered_in, S.altered_in,
      S.cancels, S.servpings_sent, S.servpings_answered, S.servpings_late);
  end_line();
}

static void on_tools_call(const char *id, const cJSON *params,
                          const char *line, size_t len) {
  const cJSON *args = cJSON_GetObjectItemCaseSensitive(params, "arguments");
  const cJSON *delay = cJSON_GetObjectItemCaseSensitive(args, "delay_ms");
  const cJSON *iseq = cJSON_GetObjectItemCaseSensitive(params, "iseq");
  const cJSON *payload = cJSON_GetObjectItemCaseSensitive(args, "payload");
  action a = {ANSWER, now_ms(), 0, soak_fnv(line, len), strdup(id)};
  if (!cJSON_IsNumber(iseq) || !cJSON_IsString(payload)) {
    S.altered_in++;
    free(a.id);
    return;
  }
  a.iseq = (uint64_t)iseq->valuedouble;
  if (cJSON_IsNumber(delay)) a.due += (uint64_t)delay->valuedouble;
  add_action(a);
}

static void on_client_note(const cJSON *params, const char *line,
                           size_t len) {
  const cJSON *j = cJSON_GetObjectItemCaseSensitive(params, "iseq");
  if (!cJSON_IsNumber(j)) return;
  soak_buf want = {0};
  soak_line_client_note(&want, S.seed, (uint64_t)j->valuedouble);
  if (want.len != len || memcmp(want.p, line, len) != 0) S.altered_in++;
  soak_buf_free(&want);
}

static void on_cancelled(const cJSON *params) {
  const cJSON *rid = cJSON_GetObjectItemCaseSensitive(params, "requestId");
  if (!rid) return;
  char *want = cJSON_PrintUnformatted(rid);
  S.cancels++;
  for (size_t i = 0; i < S.n_actions; i++) {
    if (S.actions[i].kind == ANSWER && strcmp(S.actions[i].id, want) == 0) {
      drop_action(i);
      break;
    }
  }
  free(want);
}

static void on_line(const char *line, size_t len) {
  cJSON *root = cJSON_ParseWithLength(line, len);
  if (!root) {
    S.altered_in++;
    return;
  }
  const cJSON *method = cJSON_GetObjectItemCaseSensitive(root, "method");
  const cJSON *id = cJSON_GetObjectItemCaseSensitive(root, "id");
  const cJSON *params = cJSON_GetObjectItemCaseSensitive(root, "params");
  char *rid = id ? (char *)raw_id(id) : NULL;
  if (cJSON_IsString(method)) {
    const char *m = method->valuestring;
    check_iseq(params);
    if (strcmp(m, "ping") == 0 && rid) {
      if (S.pong_delay) {
        add_action((action){PONG, now_ms() + S.pong_delay, 0, 0, strdup(rid)});
      } else {
        soak_buf_printf(&S.out, "{\"jsonrpc\":\"2.0\",\"id\":%s,\"result\":{}}",
                        rid);
        end_line();
      }
    } else if (strcmp(m, "initialize") == 0 && rid) {
      answer_initialize(rid);
    } else if (strcmp(m, "tools/call") == 0 && rid) {
      on_tools_call(rid, params, line, len);
    } else if (strcmp(m, "soak/finish") == 0 && rid) {
      answer_finish(rid);
    } else if (strcmp(m, "notifications/cancelled") == 0) {
      on_cancelled(params);
    } else if (strcmp(m, "notifications/soak") == 0) {
      on_client_note(params, line, len);
    }
  } else if (cJSON_IsString(id) && strncmp(id->valuestring, "sp-", 3) == 0) {
    S.servpings_answered++;
    S.servping_outstanding_since = 0;
  }
  free(rid);
  cJSON_Delete(root);
}

/* ------------------------------------------------------------- timers */

static int periodic_due(periodic *p, uint64_t now) {
  if (!p->every || S.finished || now < p->next) return 0;
  p->next = now + p->every;
  return 1;
}

static uint64_t run_timers(uint64_t now) {
  if (S.fault_at && !S.finished && now >= S.fault_at) inject_fault();
  if (periodic_due(&S.notify, now)) write_note();
  if (periodic_due(&S.garbage, now)) write_garbage();
  if (periodic_due(&S.burst, now))
    for (unsigned i = 0; i < S.burst.count; i++) write_note();
  if (periodic_due(&S.servping, now)) {
    /* One out at a time: an answer slower than 5 s is counted late. */
    if (S.servping_outstanding_since &&
        now - S.servping_outstanding_since > 5000) {
      S.servpings_late++;
      S.servping_outstanding_since = 0;
    }
    if (!S.servping_outstanding_since) {
      S.servping_outstanding_since = now;
      write_servping();
    }
  }
  for (size_t i = 0; i < S.n_actions;) {
    if (S.actions[i].due <= now) {
      run_action(&S.actions[i]);
      drop_action(i);
    } else {
      i++;
    }
  }
  uint64_t next = now + 1000;
  const periodic *ps[] = {&S.notify, &S.garbage, &S.burst, &S.servping};
  for (size_t i = 0; i < 4; i++)
    if (ps[i]->every && !S.finished && ps[i]->next < next) next = ps[i]->next;
  if (S.fault_at && !S.finished && S.fault_at < next) next = S.fault_at;
  for (size_t i = 0; i < S.n_actions; i++)
    if (S.actions[i].due < next) next = S.actions[i].due;
  return next;
}

/* ------------------------------------------------------------- main */

static void parse_arg(const char *arg, uint64_t start) {
  unsigned long long a = 0, b = 0;
  char kind[16];
  if (sscanf(arg, "seed=%llu", &a) == 1) {
    S.seed = a;
  } else if (sscanf(arg, "notify=%llu", &a) == 1) {
    S.notify = (periodic){a, start + a, 1};
  } else if (sscanf(arg, "burst=%llu:%llu", &a, &b) == 2) {
    S.burst = (periodic){a, start + a, (unsigned)b};
  } else if (sscanf(arg, "garbage=%llu", &a) == 1) {
    S.garbage = (periodic){a, start + a, 1};
  } else if (sscanf(arg, "servping=%llu", &a) == 1) {
    S.servping = (periodic){a, start + a, 1};
  } else if (sscanf(arg, "pongdelay=%llu", &a) == 1) {
    S.pong_delay = a;
  } else if (sscanf(arg, "fault=%15[a-z]@%llu", kind, &a) == 2) {
    snprintf(S.fault, sizeof S.fault, "%s", kind);
    S.fault_at = start + a;
  } else {
    fprintf(stderr, "soak-server: bad argument %s\n", arg);
    exit(2);
  }
}

int main(int argc, char **argv) {
  uint64_t start = now_ms();
  for (int i = 1; i < argc; i++) parse_arg(argv[i], start);
  soak_buf in = {0};
  char chunk[65536];
  for (;;) {
    uint64_t now = now_ms();
    uint64_t next = run_timers(now);
    flush();
    now = now_ms();
    struct pollfd pfd = {0, POLLIN, 0};
    int wait = next > now ? (int)(next - now) : 0;
    int rc = poll(&pfd, 1, wait);
    if (rc < 0 && errno != EINTR) return 1;
    if (rc <= 0) continue;
    ssize_t n = read(0, chunk, sizeof chunk);
    if (n == 0) return 0; /* stdin closed: the client is done with us */
    if (n < 0) {
      if (errno == EINTR || errno == EAGAIN) continue;
      return 1;
    }
    soak_buf_put(&in, chunk, (size_t)n);
    size_t off = 0;
    for (;;) {
      char *nl = memchr(in.p + off, '\n', in.len - off);
      if (!nl) break;
      size_t len = (size_t)(nl - (in.p + off));
      if (len) on_line(in.p + off, len);
      off += len + 1;
    }
    memmove(in.p, in.p + off, in.len - off);
    in.len -= off;
  }
}
