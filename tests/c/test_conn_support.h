/*
 * Helpers for the driver and runtime tests: peers by name, fd counting,
 * a recording connection, the driver tests' fixture, and the end-of-test
 * checks (loop closed, no fd, no process left).
 */
#ifndef MCPP_TEST_CONN_SUPPORT_H
#define MCPP_TEST_CONN_SUPPORT_H

#include <uv.h>

#include "mcpping.h"

enum { REC_MAX_EVENTS = 4096 };

typedef struct rec_frame {
  char *data;
  size_t len;
} rec_frame;

/* Everything one connection reported. */
typedef struct rec {
  mcpp_conn *conn;
  int pid;
  rec_frame *frames;
  size_t n_frames, cap_frames;
  mcpp_event_type events[REC_MAX_EVENTS];
  uint64_t event_seq[REC_MAX_EVENTS];
  size_t n_events;
  uint64_t last_rtt_us;
  int64_t last_rpc_code;
  char stale_proof[160]; /* the STALE event's proof ("" before one) */
  size_t n_records;
  char stderr_buf[4096];
  size_t stderr_len;
  int closed;
  int close_calls;
  mcpp_close_info close;
  char close_reason[256];
  /* Optional hook run on every forwarded frame. */
  void (*on_frame)(struct rec *r, const char *frame, size_t len);
  void *arg;
} rec;

/* 1 under valgrind (MCPP_UNDER_VALGRIND): timing margins grow, never the
 * logic. */
int under_valgrind(void);
/* Scales a timing margin (ms) for valgrind. */
uint32_t margin_ms(uint32_t ms);

/* The path of tests/peers/<name> (static buffer, one at a time). */
const char *peer_path(const char *name);

/* Open fds of this process; call fd_baseline() once first so that libuv's
 * process-wide fds exist before the count. */
int count_fds(void);
int fd_baseline(void);

/* Settings for tests: keepalive off, generous timeouts, a low floor. */
void test_settings(mcpp_settings *s);

/* Spawns python3 tests/peers/<peer> args... (NULL-terminated) into r. */
int spawn_peer(uv_loop_t *loop, rec *r, const mcpp_settings *s,
               mcpp_stderr_mode mode, const char *peer, ...)
    __attribute__((sentinel));

/* The callbacks that record into a rec (user_data). */
const mcpp_conn_callbacks *test_rec_callbacks(void);

/* Runs the loop until *flag is non-zero. */
void run_until(uv_loop_t *loop, const int *flag);
/* Runs the loop until the connection forwarded at least n frames. */
void run_until_frames(uv_loop_t *loop, rec *r, size_t n);
/* Runs the loop until an event of this type arrived; returns its index. */
size_t run_until_event(uv_loop_t *loop, rec *r, mcpp_event_type type);
/* Runs the loop for ms milliseconds (a timer, not a sleep). */
void run_for(uv_loop_t *loop, uint32_t ms);

/* Counts events of a type. */
size_t count_events(const rec *r, mcpp_event_type type);
/* Index of the first event of a type, or SIZE_MAX. */
size_t find_event(const rec *r, mcpp_event_type type);
/* 1 if frame i equals s. */
int frame_is(const rec *r, size_t i, const char *s);
/* Index of the first frame containing s, or SIZE_MAX. */
size_t find_frame(const rec *r, const char *s);

/* One driver test: a loop and one recorded connection to a peer, with
 * the checks every such test ends with. */
typedef struct conn_fixture {
  int fds; /* open fds before the test */
  uv_loop_t loop;
  mcpp_settings s;              /* test_settings(); adjust before cf_start */
  mcpp_stderr_mode stderr_mode; /* for cf_start; INHERIT unless set */
  rec r;
} conn_fixture;

/* Takes the fd baseline, initializes the loop and the settings. */
void cf_init(conn_fixture *f);
/* Spawns python3 tests/peers/<peer> args... (NULL-terminated) into f->r
 * with f->s and f->stderr_mode, and asserts it started. */
void cf_start(conn_fixture *f, const char *peer, ...) __attribute__((sentinel));
/* Once f->r is closed (runs the loop until then): frees the recording,
 * runs the loop dry, and checks on_close ran once, the loop closes, the
 * process and its group are gone and fds are back to the baseline. */
void cf_finish(conn_fixture *f);

/* Waits for every child left (orphans reparented to us); call only when
 * no libuv process handle is live. */
void reap_orphans(void);

/* Waits up to ms for an eventfd a runtime's notify writes to, and takes
 * the wake-up; returns 1 if one came. */
int wait_notified(int efd, uint32_t ms);
/* The children of this process (orphans reparented to it included) other
 * than mcpping's keeper: fills up to cap pids, returns how many. */
int children_besides_keeper(int *pids, int cap);
/* Asserts that pid and its process group no longer exist. */
void assert_gone(int pid);

#endif
