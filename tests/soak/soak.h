/*
 * The soak driver's shared state: one slot per concurrent connection, each
 * running one soak-server after another, and the counters the last line
 * reports. soak.c runs the loop and the traffic, check.c checks what
 * arrives, audit.c looks at /proc.
 */
#ifndef SOAK_H
#define SOAK_H

#include <stddef.h>
#include <stdio.h>
#include <stdint.h>

#include "mcpping.h"
#include "wire.h"

/* Keepalive and timeouts (see README.md, "Soak"): a ping after 1 s of
 * silence, 2 s to answer it, stale after 3 failures in a row. */
enum {
  KA_INTERVAL_MS = 1000,
  PING_TIMEOUT_MS = 2000,
  FAILURES = 3,
  REQUEST_TIMEOUT_MS = 5000,
  KILL_GRACE_MS = 1000,
  PAUSE_THRESHOLD_MS = 1000, /* mcpp_settings' default */
  /* Healthy but busy servers: long tool calls run past the ping timeout,
   * "under" answers come at 70% of the request timeout, slow pongs at 60%
   * of the ping timeout. */
  LONG_CALL_MIN_MS = 2500,
  LONG_CALL_MAX_MS = 3500,
  /* Longer calls than the default request timeout, each sent with its own
   * (mcpp_runtime_send_timed); a fifth of them aborted by us before the
   * answer (mcpp_runtime_cancel_request). */
  LONGER_CALL_MIN_MS = REQUEST_TIMEOUT_MS + 1000,
  LONGER_CALL_MAX_MS = REQUEST_TIMEOUT_MS + 4000,
  LONGER_TIMEOUT_MS = 4 * REQUEST_TIMEOUT_MS,
  ABORT_MAX_MS = 1000,
  UNDER_MS = REQUEST_TIMEOUT_MS * 7 / 10,
  SLOW_PONG_MS = PING_TIMEOUT_MS * 6 / 10,
  /* The slow fault answers at 150%: each such request must time out. */
  OVER_MS = REQUEST_TIMEOUT_MS * 3 / 2,
  /* Detection bounds, from the announcement of the fault. A frozen server
   * is stale within interval + failures x timeout; one extra timeout is
   * allowed for a re-probe after a pause of ours, 2 s for the machine. */
  FREEZE_BOUND_MS = KA_INTERVAL_MS + (FAILURES + 1) * PING_TIMEOUT_MS + 2000,
  /* A spinning server's CPU time advances: with requests in flight it is
   * busy, not stale, until their own deadlines (issue 25), the longest
   * the soak gives one being LONGER_TIMEOUT_MS. */
  SPIN_BOUND_MS = FREEZE_BOUND_MS + LONGER_TIMEOUT_MS,
  /* Exits and closed pipes are seen at once. */
  EXIT_BOUND_MS = 3000
};

typedef enum fault {
  F_NONE,
  F_STOP,      /* SIGSTOP: frozen */
  F_SPIN,      /* a busy loop: frozen but running */
  F_CRASH,     /* exit, abort or SIGKILL */
  F_HALFOPEN,  /* stdout closed, process alive, SIGTERM ignored */
  F_PINGFLOOD, /* pings without reading the answers */
  F_SLOW,      /* answers past the request timeout: the requests time out,
                  the server stays (not a liveness fault) */
  F_COUNT
} fault;

/* Healthy-but-busy and noisy flavours; any mix. None may be convicted. */
enum {
  FL_LONG = 1 << 0,     /* long tool calls */
  FL_UNDER = 1 << 1,    /* answers just under the request timeout */
  FL_BURST = 1 << 2,    /* bursts of requests and of notifications */
  FL_GARBAGE = 1 << 3,  /* non-JSON lines among the traffic */
  FL_FLOOD = 1 << 4,    /* floods of notifications */
  FL_SLOWPONG = 1 << 5, /* pongs just under the ping timeout */
  FL_SERVPING = 1 << 6, /* the server pings us */
  FL_QUIET = 1 << 7     /* little traffic, so keepalive pings go out */
};

typedef enum phase {
  P_FREE,    /* no server; respawn at respawn_at */
  P_INIT,    /* initialize sent */
  P_RUN,     /* traffic */
  P_FINISH,  /* no new requests; waiting for the outstanding ones */
  P_FINWAIT, /* soak/finish sent */
  P_CLOSING  /* close requested, waiting for CLOSED */
} phase;

typedef struct req {
  uint64_t iseq;
  uint64_t rawhash;
  uint64_t sent_ms;
  uint64_t sent_us;    /* Unix µs, to compare with the server's stamps */
  uint64_t abort_at;   /* ms; 0: never */
  uint64_t aborted_us; /* Unix µs when we called cancel_request */
  uint32_t delay_ms;   /* the server answers this late */
  uint32_t timeout_ms; /* the timeout it was sent with */
  int expect_timeout;
  int aborted;   /* cancel_request called; mcpping's -32800 must follow */
  int server_late; /* its timeout is counted as the server's lateness */
  int timed_out; /* answered by mcpping (timeout or abort); a late answer
                    may follow */
} req;

typedef struct slot {
  int idx;
  phase phase;
  uint64_t phase_ms; /* when the phase began */
  uint64_t conn_id;
  int pid;
  uint64_t seed;
  unsigned flags;
  fault fault;
  uint64_t born_ms, fault_ms, end_ms, respawn_at;
  uint64_t next_req_ms, req_every_ms, next_burst_ms;
  uint64_t next_iseq, next_oseq;
  uint64_t sent_app;  /* lines with an iseq we sent */
  uint64_t timeouts;  /* requests answered by mcpping's timeout */
  uint64_t aborts;    /* requests we abandoned, answered by mcpping */
  req *reqs;
  size_t n_reqs, cap_reqs;
  uint64_t finish_iseq;
  uint64_t announced_ms; /* when we read the fault's announcement; 0: not */
  uint64_t announced_us; /* Unix time (µs) the server faulted */
  int detected;          /* 1 within bound, -1 counted undetected */
  int close_requested;
  int stale_counted;
  int exited_unread; /* stale for its exit before its last lines arrived */
} slot;

typedef struct fault_stats {
  uint64_t injected, detected, late, late_paused, max_ms, sum_ms;
  char verdicts[160]; /* close reasons seen, e.g. "MCPP_ERR_STALE" */
} fault_stats;

typedef struct counters {
  uint64_t conns, app_messages;
  uint64_t lost, reordered, altered, zombies, leaked_fds, false_stale;
  uint64_t undetected, unexpected_closes, false_timeouts, missed_timeouts;
  uint64_t missed_aborts;
  uint64_t stuck;
  /* For the record, not failures. */
  uint64_t suspect_healthy, late_answers, abandoned, timeouts, stalls;
  uint64_t aborts, longer_calls, late_aborts, server_late, paused_timeouts;
  uint64_t late_pongs; /* our answers to the server's pings, after 5 s */
  uint64_t stall_ms, garbage, pings_answered_by_us;
  uint64_t max_tick_gap_ms; /* how far behind this loop fell, stalls aside */
  fault_stats faults[F_COUNT];
} counters;

typedef struct soak {
  mcpp_runtime *rt;
  slot *slots;
  int n_slots;
  uint64_t start_ms, end_ms;
  int winding;
  counters c;
  /* Host stalls we made: [from, to) ms. */
  uint64_t (*stalls)[2];
  size_t n_stalls, cap_stalls;
  /* Ticks that came later than pause_threshold_ms: the machine starved
   * this process, its I/O thread too. */
  uint64_t (*starved)[2];
  size_t n_starved, cap_starved;
} soak;

extern const char *const fault_names[F_COUNT];

uint64_t soak_now_ms(void);
/* Whether this process was starved (a tick more than 1 s late) within
 * [from, to] ms. */
int soak_starved_between(const soak *k, uint64_t from, uint64_t to);
uint64_t fault_bound_ms(fault f);
int fault_is_detected(fault f); /* convicted or closed, not survived */

/* check.c */
void check_item(soak *k, const mcpp_item *it);
size_t slot_outstanding(const slot *s);

/* soak.c, for check.c */
void slot_send(soak *k, slot *s, const soak_buf *line);
void slot_close(soak *k, slot *s);
void slot_after_close(soak *k, slot *s);
req *slot_add_req(slot *s, uint64_t iseq, uint64_t rawhash,
                  uint32_t delay_ms, int expect_timeout);

/* audit.c */
int audit_count_fds(void);
void audit_list_fds(FILE *out);
int audit_count_children(void);
int audit_is_leftover(int pid); /* a zombie of ours, or its group alive */
int audit_has_exited(int pid);
long audit_rss_kib(void);

#endif
