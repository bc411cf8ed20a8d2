/*
 * The lifecycle soak (issue 23): spawn/kill/restart cycles through the
 * public runtime API, in hosts that are SIGKILLed every --epoch cycles.
 *
 *   soak-cycles [--cycles N] [--epoch N] [--server PATH]
 *
 * Each host is a forked child. It runs SLOTS connections at once to
 * soak-servers, one cycle after another: spawn, a ping answered, then by
 * turns a close (SIGTERM), a SIGKILL of the server (the close follows), or
 * a restart (reconnect on: the server is SIGKILLed, a new one spawned and
 * pinged, then closed). After each CLOSED every server of the cycle must
 * be gone: not a zombie, not alive. Once its epoch is done the host counts
 * its fds against its baseline, spawns SLOTS more servers, reports their
 * pids and is SIGKILLed with them running: the keeper must take them all
 * within KEEPER_BOUND_MS. This driver is a subreaper, so servers orphaned
 * by a host come to it and nothing is left unreaped by the container's
 * init. It ends with one line:
 *
 *   cycles: N cycles (S servers), K host SIGKILLs, T s, survivors 0, zombies 0,
 *   host fds B->A, driver fds B->A
 *
 * and exits 1 if any server survived, any zombie was seen or any fd grew.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "mcpping.h"

/* From audit.c. */
int audit_count_fds(void);
int audit_count_children(void);

enum {
  SLOTS = 8,
  KILL_GRACE_MS = 1000,
  /* The keeper sends SIGTERM, waits up to 0.5 s, then SIGKILL; 2 s more
   * for a machine shared with others. */
  KEEPER_BOUND_MS = 3000,
  /* No item for this long means a stuck host. */
  STUCK_MS = 30000
};

typedef enum step { IDLE, PINGING, RESTARTING, CLOSING } step;
typedef enum ending { END_CLOSE, END_KILL, END_RESTART, END_COUNT } ending;

typedef struct server_id {
  int pid;
  unsigned long long start; /* /proc/<pid>/stat starttime: not a reused pid */
} server_id;

typedef struct slot {
  uint64_t conn;
  step step;
  ending ending;
  int pongs;
  server_id ids[2]; /* the first server, and the restarted one */
  int n_ids;
} slot;

typedef struct report {
  int cycles, servers, zombies, survivors, errors;
  int fds_before, fds_after;
  int n_live;
  server_id live[SLOTS];
} report;

static const char *server_path = "build/soak-server";
static char marker[64]; /* seed=<run nonce>: names our servers in /proc */
static int wake[2];
static mcpp_runtime *rt;
static report rep;
static int started, finished, target;

static uint64_t now_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

/* State letter and starttime of pid; 0 if there is no such process. */
static char stat_of(int pid, unsigned long long *start) {
  char path[64], buf[1024];
  snprintf(path, sizeof path, "/proc/%d/stat", pid);
  int fd = open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return 0;
  ssize_t n = read(fd, buf, sizeof buf - 1);
  close(fd);
  if (n <= 0) return 0;
  buf[n] = '\0';
  char *p = strrchr(buf, ')');
  if (!p || p[1] != ' ') return 0;
  char state = p[2];
  /* The fields after the state: ppid (4th of the line) ... starttime (22nd). */
  p += 3;
  for (int i = 0; i < 18 && p; i++) p = strchr(p + 1, ' ');
  if (start) *start = p ? strtoull(p + 1, NULL, 10) : 0;
  return state;
}

static server_id id_of(int pid) {
  server_id s = {pid, 0};
  if (!stat_of(pid, &s.start)) s.start = 0;
  return s;
}

/* 'Z' a zombie, 'L' still alive, 0 gone (or its pid now someone else's). */
static char fate(server_id s) {
  unsigned long long start;
  char st = stat_of(s.pid, &start);
  if (!st || start != s.start) return 0;
  return st == 'Z' || st == 'X' ? 'Z' : 'L';
}

static void notify(void *ud) {
  char c = 0;
  ssize_t w = write(wake[1], &c, 1);
  (void)w;
}

static int spawn(slot *s, int reconnect) {
  mcpp_settings st;
  mcpp_settings_default(&st);
  st.interval_ms = 0; /* manual pings only: the cycle sets the pace */
  if (reconnect) {
    st.reconnect.enabled = 1;
    st.reconnect.initial_ms = 1;
    st.reconnect.max_delay_ms = 10;
  }
  char *argv[] = {(char *)server_path, marker, NULL};
  mcpp_spawn_options o = {0};
  o.file = server_path;
  o.args = argv;
  o.stderr_mode = MCPP_STDERR_IGNORE;
  o.kill_grace_ms = KILL_GRACE_MS;
  char err[256];
  int rc = mcpp_runtime_spawn(rt, &st, &o, s, &s->conn, err, sizeof err);
  if (rc) {
    fprintf(stderr, "soak-cycles: spawn failed: %s\n", err);
    return -1;
  }
  s->ids[0] = id_of(mcpp_runtime_pid(rt, s->conn));
  s->n_ids = 1;
  s->pongs = 0;
  s->step = PINGING;
  return mcpp_runtime_ping(rt, s->conn, 10000, 1);
}

static void next_cycle(slot *s) {
  if (started >= target) {
    s->step = IDLE;
    return;
  }
  s->ending = (ending)(started % END_COUNT);
  started++;
  if (spawn(s, s->ending == END_RESTART)) rep.errors++, s->step = IDLE;
}

static void on_pong(slot *s) {
  s->pongs++;
  if (s->ending == END_RESTART && s->pongs == 1) {
    s->step = RESTARTING;
    kill(s->ids[0].pid, SIGKILL);
    return;
  }
  s->step = CLOSING;
  if (s->ending == END_KILL)
    kill(s->ids[0].pid, SIGKILL);
  else
    mcpp_runtime_close(rt, s->conn);
}

static void on_closed(slot *s) {
  rep.servers += s->n_ids;
  for (int i = 0; i < s->n_ids; i++) {
    char f = fate(s->ids[i]);
    if (f == 'Z') rep.zombies++;
    if (f == 'L') rep.survivors++;
  }
  rep.cycles++;
  finished++;
  next_cycle(s);
}

static void handle(mcpp_item *it) {
  slot *s = mcpp_item_get_conn_user_data(it);
  switch (mcpp_item_get_type(it)) {
  case MCPP_ITEM_EVENT: {
    const mcpp_event *ev = mcpp_item_get_event(it);
    if (ev->type == MCPP_EV_PONG && mcpp_item_get_ping_token(it) &&
        s->step != CLOSING)
      on_pong(s);
    else if ((ev->type == MCPP_EV_TIMEOUT && mcpp_item_get_ping_token(it)) ||
             ev->type == MCPP_EV_STALE)
      rep.errors++;
    else if (ev->type == MCPP_EV_RECONNECTED && s->step == RESTARTING) {
      s->ids[s->n_ids++] = id_of(mcpp_runtime_pid(rt, s->conn));
      s->step = PINGING;
      mcpp_runtime_ping(rt, s->conn, 10000, 1);
    }
    break;
  }
  case MCPP_ITEM_PING_FAILED:
    rep.errors++;
    break;
  case MCPP_ITEM_CLOSED:
    if (s->step != CLOSING) rep.errors++;
    on_closed(s);
    break;
  default:
    break;
  }
}

/* Runs the loop until `want` cycles finished; 0, or -1 if stuck. */
static int run_until(int want) {
  uint64_t last = now_ms();
  while (finished < want) {
    struct pollfd p = {wake[0], POLLIN, 0};
    poll(&p, 1, 1000);
    char buf[256];
    while (read(wake[0], buf, sizeof buf) > 0) {
    }
    mcpp_item *items = mcpp_runtime_drain(rt);
    if (items) last = now_ms();
    for (mcpp_item *it = items; it; it = mcpp_item_next(it)) handle(it);
    mcpp_runtime_items_free(rt, items);
    if (now_ms() - last > STUCK_MS) return -1;
  }
  return 0;
}

static void host_main(int cycles, int out) {
  if (pipe2(wake, O_NONBLOCK | O_CLOEXEC)) _exit(2);
  mcpp_runtime_options ro = {.notify = notify, .user_data = NULL};
  if (mcpp_runtime_new(&rt, &ro)) _exit(2);
  /* A very large retry budget: restarts are the point here. */
  mcpp_runtime_set_retry_budget(rt, MCPP_MAX_RETRY_BUDGET_BURST, 1e6);
  slot slots[SLOTS];
  memset(slots, 0, sizeof slots);
  /* One cycle alone first: the runtime's thread and loop and the keeper
   * exist from then on, once per process, and are in the baseline. */
  target = 1;
  next_cycle(&slots[0]);
  if (run_until(1)) rep.errors++;
  rep.fds_before = audit_count_fds();
  target = cycles;
  for (int i = 0; i < SLOTS; i++) next_cycle(&slots[i]);
  if (run_until(cycles)) rep.errors++;
  rep.fds_after = audit_count_fds();
  /* Then servers that stay up until the host is SIGKILLed. */
  for (int i = 0; i < SLOTS; i++) {
    slots[i].ending = END_CLOSE;
    if (spawn(&slots[i], 0) == 0) rep.live[rep.n_live++] = slots[i].ids[0];
  }
  for (int waiting = 1; waiting;) {
    struct pollfd p = {wake[0], POLLIN, 0};
    poll(&p, 1, 1000);
    char buf[256];
    while (read(wake[0], buf, sizeof buf) > 0) {
    }
    mcpp_item *items = mcpp_runtime_drain(rt);
    for (mcpp_item *it = items; it; it = mcpp_item_next(it)) {
      slot *s = mcpp_item_get_conn_user_data(it);
      const mcpp_event *ev = mcpp_item_get_event(it);
      if (ev && ev->type == MCPP_EV_PONG) s->pongs++;
    }
    mcpp_runtime_items_free(rt, items);
    waiting = 0;
    for (int i = 0; i < SLOTS; i++) waiting |= !slots[i].pongs;
  }
  if (write(out, &rep, sizeof rep) != sizeof rep) _exit(2);
  for (;;) pause();
}

/* Reaps every child that ended (orphaned servers come to us). */
static void reap_children(void) {
  while (waitpid(-1, NULL, WNOHANG) > 0) {
  }
}

/* Our servers still in /proc, by their marker: alive ones, and zombies. */
static void scan_marked(int *alive, int *zombies) {
  *alive = *zombies = 0;
  FILE *ls = popen("ls /proc", "r");
  if (!ls) return;
  char name[64];
  while (fgets(name, sizeof name, ls)) {
    int pid = atoi(name);
    if (pid <= 0) continue;
    char path[64], cmd[512];
    snprintf(path, sizeof path, "/proc/%d/cmdline", pid);
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) continue;
    ssize_t n = read(fd, cmd, sizeof cmd - 1);
    close(fd);
    if (n <= 0) continue;
    cmd[n] = '\0';
    const char *arg = cmd + strlen(cmd) + 1;
    if (arg >= cmd + n || strcmp(arg, marker) != 0) continue;
    char st = stat_of(pid, NULL);
    if (st == 'Z' || st == 'X')
      (*zombies)++;
    else if (st)
      (*alive)++;
  }
  pclose(ls);
}

int main(int argc, char **argv) {
  int cycles = 10000, epoch = 1000;
  static const struct option opts[] = {{"cycles", required_argument, 0, 'c'},
                                       {"epoch", required_argument, 0, 'e'},
                                       {"server", required_argument, 0, 's'},
                                       {0, 0, 0, 0}};
  for (int o; (o = getopt_long(argc, argv, "", opts, NULL)) != -1;) {
    if (o == 'c') cycles = atoi(optarg);
    else if (o == 'e') epoch = atoi(optarg);
    else if (o == 's') server_path = optarg;
    else return 2;
  }
  if (cycles < 1 || epoch < 1 || access(server_path, X_OK)) {
    fprintf(stderr, "soak-cycles: bad options or no %s (make build/soak-server)\n",
            server_path);
    return 2;
  }
  snprintf(marker, sizeof marker, "seed=%llu",
           (unsigned long long)getpid() * 1000003ull + (unsigned long long)now_ms());
  if (prctl(PR_SET_CHILD_SUBREAPER, 1)) return 2;
  int driver_fds_before = audit_count_fds();
  uint64_t t0 = now_ms();
  int kills = 0, survivors = 0, zombies = 0, errors = 0, total = 0, servers = 0;
  int host_fds_before = -1, host_fds_after = -1, fd_growth = 0;
  uint64_t slowest_ms = 0;
  for (int done = 0; done < cycles; done += epoch) {
    int n = cycles - done < epoch ? cycles - done : epoch;
    int pipefd[2];
    if (pipe(pipefd)) return 2;
    pid_t host = fork();
    if (host == 0) {
      close(pipefd[0]);
      host_main(n, pipefd[1]);
    }
    close(pipefd[1]);
    report r;
    ssize_t got = read(pipefd[0], &r, sizeof r);
    close(pipefd[0]);
    if (got != sizeof r) {
      fprintf(stderr, "soak-cycles: host %d died without a report\n", (int)host);
      errors++;
      kill(host, SIGKILL);
      waitpid(host, NULL, 0);
      continue;
    }
    kill(host, SIGKILL);
    waitpid(host, NULL, 0);
    kills++;
    uint64_t killed = now_ms();
    /* The keeper must take every live server within its bound. */
    for (int left = r.n_live; left;) {
      reap_children();
      left = 0;
      for (int i = 0; i < r.n_live; i++)
        if (fate(r.live[i]) == 'L') left++;
      if (!left) break;
      if (now_ms() - killed > KEEPER_BOUND_MS) {
        survivors += left;
        break;
      }
      usleep(5000);
    }
    if (now_ms() - killed > slowest_ms) slowest_ms = now_ms() - killed;
    reap_children();
    total += r.cycles;
    servers += r.servers + r.n_live;
    zombies += r.zombies;
    survivors += r.survivors;
    errors += r.errors;
    if (host_fds_before < 0) host_fds_before = r.fds_before;
    host_fds_after = r.fds_after;
    if (r.fds_after != r.fds_before) fd_growth++;
    fprintf(stderr,
            "soak-cycles: host %d: %d cycles, zombies %d, survivors %d, "
            "errors %d, fds %d->%d; its %d live servers gone in %" PRIu64
            " ms after its SIGKILL\n",
            kills, r.cycles, r.zombies, r.survivors, r.errors, r.fds_before,
            r.fds_after, r.n_live, now_ms() - killed);
  }
  /* The keepers exit once their groups are gone; they come to us too. */
  for (uint64_t t = now_ms(); now_ms() - t < KEEPER_BOUND_MS;) {
    reap_children();
    if (audit_count_children() == 0) break;
    usleep(10000);
  }
  int alive, marked_zombies;
  scan_marked(&alive, &marked_zombies);
  survivors += alive;
  zombies += marked_zombies;
  int driver_fds_after = audit_count_fds();
  double secs = (double)(now_ms() - t0) / 1000.0;
  printf("cycles: %d cycles (%d servers), %d host SIGKILLs, %.1f s, survivors %d, zombies "
         "%d, host fds %d->%d (%d hosts grew), driver fds %d->%d, errors %d, "
         "slowest keeper %" PRIu64 " ms\n",
         total, servers, kills, secs, survivors, zombies, host_fds_before,
         host_fds_after, fd_growth, driver_fds_before, driver_fds_after,
         errors, slowest_ms);
  return survivors || zombies || fd_growth || errors || total != cycles ||
                 driver_fds_after != driver_fds_before
             ? 1
             : 0;
}
