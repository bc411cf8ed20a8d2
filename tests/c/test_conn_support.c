/* Helpers for the driver and runtime tests (see test_conn_support.h). */
#include "test_conn_support.h"

#include <dirent.h>
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include "driver/keeper.h"
#include "task.h"

int under_valgrind(void) { return getenv("MCPP_UNDER_VALGRIND") != NULL; }

uint32_t margin_ms(uint32_t ms) { return under_valgrind() ? ms * 10 : ms; }

const char *peer_path(const char *name) {
  static char path[4096];
  snprintf(path, sizeof path, "%s/tests/peers/%s", mcpp_test_source_dir(),
           name);
  return path;
}

int count_fds(void) {
  DIR *d = opendir("/proc/self/fd");
  ASSERT(d != NULL);
  int n = 0;
  struct dirent *e;
  while ((e = readdir(d)))
    if (e->d_name[0] != '.') n++;
  closedir(d);
  return n - 1; /* the DIR's own fd */
}

int fd_baseline(void) {
  /* Orphaned grandchildren reparent to this test process, which reaps them
   * in cf_finish(): the container's init may not. */
  ASSERT_EQ(0, prctl(PR_SET_CHILD_SUBREAPER, 1));
  uv_loop_t warm;
  ASSERT_EQ(0, uv_loop_init(&warm));
  ASSERT_EQ(0, uv_loop_close(&warm));
  /* The keeper's socket is process-wide, like libuv's fds. */
  ASSERT_EQ(0, mcpp__keeper_ensure());
  return count_fds();
}

void test_settings(mcpp_settings *s) {
  mcpp_settings_default(s);
  s->min_interval_ms = MCPP_MIN_INTERVAL_FLOOR_MS;
  s->timeout_ms = margin_ms(5000);
  s->nonce = 42;
}

static void rec_message(mcpp_conn *c, const char *frame, size_t len,
                        void *ud) {
  rec *r = ud;
  ASSERT(!r->closed);
  if (r->n_frames == r->cap_frames) {
    r->cap_frames = r->cap_frames ? r->cap_frames * 2 : 64;
    r->frames = realloc(r->frames, r->cap_frames * sizeof *r->frames);
    ASSERT(r->frames != NULL);
  }
  char *copy = malloc(len + 1);
  ASSERT(copy != NULL);
  memcpy(copy, frame, len);
  copy[len] = '\0';
  r->frames[r->n_frames++] = (rec_frame){copy, len};
  if (r->on_frame) r->on_frame(r, frame, len);
}

static void rec_event(mcpp_conn *c, const mcpp_event *ev, void *ud) {
  rec *r = ud;
  ASSERT(!r->closed);
  if (r->n_events < REC_MAX_EVENTS) {
    r->events[r->n_events] = ev->type;
    r->event_seq[r->n_events++] = ev->ping_seq;
  }
  if (ev->type == MCPP_EV_PONG) r->last_rtt_us = ev->rtt_us;
  if (ev->type == MCPP_EV_STALE && ev->proof)
    snprintf(r->stale_proof, sizeof r->stale_proof, "%s", ev->proof);
  if (ev->type == MCPP_EV_UNSUPPORTED || ev->type == MCPP_EV_PING_ERROR)
    r->last_rpc_code = ev->rpc_code;
}

static void rec_record(mcpp_conn *c, const char *json, size_t len, void *ud) {
  rec *r = ud;
  ASSERT(len > 2 && json[0] == '{' && json[len - 1] == '}');
  r->n_records++;
}

static void rec_stderr(mcpp_conn *c, const char *data, size_t len, void *ud) {
  rec *r = ud;
  size_t room = sizeof r->stderr_buf - 1 - r->stderr_len;
  if (len > room) len = room;
  memcpy(r->stderr_buf + r->stderr_len, data, len);
  r->stderr_len += len;
  r->stderr_buf[r->stderr_len] = '\0';
}

static void rec_close(mcpp_conn *c, const mcpp_close_info *info, void *ud) {
  rec *r = ud;
  r->close_calls++;
  r->closed = 1;
  r->close = *info;
  snprintf(r->close_reason, sizeof r->close_reason, "%s", info->reason);
  r->close.reason = r->close_reason;
  r->conn = NULL;
}

static const mcpp_conn_callbacks rec_callbacks = {
    .on_message = rec_message, .on_event = rec_event, .on_record = rec_record,
    .on_stderr = rec_stderr, .on_close = rec_close};

const mcpp_conn_callbacks *test_rec_callbacks(void) { return &rec_callbacks; }

static int vspawn_peer(uv_loop_t *loop, rec *r, const mcpp_settings *s,
                       mcpp_stderr_mode mode, const char *peer, va_list ap) {
  char *args[32];
  int n = 0;
  args[n++] = "python3";
  args[n++] = (char *)peer_path(peer);
  const char *a;
  while ((a = va_arg(ap, const char *)) && n < 31) args[n++] = (char *)a;
  args[n] = NULL;
  mcpp_spawn_options o = {0};
  o.file = "python3";
  o.args = args;
  o.stderr_mode = mode;
  int rc = mcpp_conn_spawn(&r->conn, loop, s, &o, &rec_callbacks, r, NULL);
  if (rc == 0) r->pid = mcpp_conn_pid(r->conn);
  return rc;
}

int spawn_peer(uv_loop_t *loop, rec *r, const mcpp_settings *s,
               mcpp_stderr_mode mode, const char *peer, ...) {
  va_list ap;
  va_start(ap, peer);
  int rc = vspawn_peer(loop, r, s, mode, peer, ap);
  va_end(ap);
  return rc;
}

void run_until(uv_loop_t *loop, const int *flag) {
  while (!*flag) ASSERT(uv_run(loop, UV_RUN_ONCE) || *flag);
}

void run_until_frames(uv_loop_t *loop, rec *r, size_t n) {
  while (r->n_frames < n) {
    ASSERT(!r->closed);
    uv_run(loop, UV_RUN_ONCE);
  }
}

size_t run_until_event(uv_loop_t *loop, rec *r, mcpp_event_type type) {
  size_t i;
  while ((i = find_event(r, type)) == SIZE_MAX) {
    ASSERT(!r->closed);
    uv_run(loop, UV_RUN_ONCE);
  }
  return i;
}

static void timer_done(uv_timer_t *t) { *(int *)t->data = 1; }

void run_for(uv_loop_t *loop, uint32_t ms) {
  uv_timer_t t;
  int done = 0;
  uv_timer_init(loop, &t);
  t.data = &done;
  uv_timer_start(&t, timer_done, ms, 0);
  run_until(loop, &done);
  uv_close((uv_handle_t *)&t, NULL);
  uv_run(loop, UV_RUN_NOWAIT);
}

size_t count_events(const rec *r, mcpp_event_type type) {
  size_t n = 0;
  for (size_t i = 0; i < r->n_events; i++) n += r->events[i] == type;
  return n;
}

size_t find_event(const rec *r, mcpp_event_type type) {
  for (size_t i = 0; i < r->n_events; i++)
    if (r->events[i] == type) return i;
  return SIZE_MAX;
}

int frame_is(const rec *r, size_t i, const char *s) {
  return i < r->n_frames && r->frames[i].len == strlen(s) &&
         memcmp(r->frames[i].data, s, r->frames[i].len) == 0;
}

size_t find_frame(const rec *r, const char *s) {
  for (size_t i = 0; i < r->n_frames; i++)
    if (strstr(r->frames[i].data, s)) return i;
  return SIZE_MAX;
}

/* 1 if /proc/<pid>/cmdline names the keeper. */
static int is_keeper(int pid) {
  char path[64], buf[4096];
  snprintf(path, sizeof path, "/proc/%d/cmdline", pid);
  FILE *f = fopen(path, "r");
  if (!f) return 0;
  size_t n = fread(buf, 1, sizeof buf, f);
  fclose(f);
  return memmem(buf, n, MCPP__KEEPER_NAME, strlen(MCPP__KEEPER_NAME)) != NULL;
}

int children_besides_keeper(int *pids, int cap) {
  DIR *d = opendir("/proc");
  ASSERT(d != NULL);
  int n = 0;
  struct dirent *e;
  while ((e = readdir(d))) {
    int pid = atoi(e->d_name);
    if (pid <= 0) continue;
    char path[64], buf[512];
    snprintf(path, sizeof path, "/proc/%d/stat", pid);
    FILE *f = fopen(path, "r");
    if (!f) continue;
    size_t len = fread(buf, 1, sizeof buf - 1, f);
    fclose(f);
    buf[len] = '\0';
    char *end = strrchr(buf, ')');
    int ppid = 0;
    if (!end || sscanf(end + 2, "%*c %d", &ppid) != 1) continue;
    if (ppid != getpid() || is_keeper(pid)) continue;
    if (n < cap) pids[n] = pid;
    n++;
  }
  closedir(d);
  return n;
}

void reap_orphans(void) {
  int pids[256], n;
  while ((n = children_besides_keeper(pids, 256)) > 0)
    for (int i = 0; i < n && i < 256; i++) waitpid(pids[i], NULL, 0);
}

void assert_gone(int pid) {
  ASSERT(pid > 0);
  errno = 0;
  ASSERT_EQ(-1, kill(pid, 0));
  ASSERT_EQ(ESRCH, errno);
  errno = 0;
  ASSERT_EQ(-1, kill(-pid, 0));
  ASSERT_EQ(ESRCH, errno);
}

void cf_init(conn_fixture *f) {
  memset(f, 0, sizeof *f);
  f->fds = fd_baseline();
  ASSERT_EQ(0, uv_loop_init(&f->loop));
  test_settings(&f->s);
  f->stderr_mode = MCPP_STDERR_INHERIT;
}

void cf_start(conn_fixture *f, const char *peer, ...) {
  va_list ap;
  va_start(ap, peer);
  int rc = vspawn_peer(&f->loop, &f->r, &f->s, f->stderr_mode, peer, ap);
  va_end(ap);
  ASSERT_EQ(0, rc);
}

void cf_finish(conn_fixture *f) {
  rec *r = &f->r;
  run_until(&f->loop, &r->closed);
  ASSERT_EQ(1, r->close_calls);
  ASSERT_EQ(0, uv_run(&f->loop, UV_RUN_DEFAULT));
  ASSERT_EQ(0, uv_loop_close(&f->loop));
  ASSERT_EQ(1, r->close_calls);
  reap_orphans();
  assert_gone(r->pid);
  ASSERT_EQ(f->fds, count_fds());
  for (size_t i = 0; i < r->n_frames; i++) free(r->frames[i].data);
  free(r->frames);
  r->frames = NULL;
}

int wait_notified(int efd, uint32_t ms) {
  struct pollfd p = {efd, POLLIN, 0};
  int r;
  while ((r = poll(&p, 1, (int)ms)) < 0 && errno == EINTR) {
  }
  ASSERT(r >= 0);
  uint64_t n;
  if (r == 1) ASSERT_EQ(8, read(efd, &n, 8));
  return r == 1;
}
