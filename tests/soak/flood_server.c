/*
 * flood-server: a stdio MCP server that floods its client as fast as it
 * can, for the flood soak (flood.c). One poll() loop, so it answers the
 * client's pings (and reads our pongs) while it floods.
 *
 *   flood-server stdout|stderr|ping BYTES
 *
 * stdout: notifications of LINE bytes, flood_line(seq) (flood.h), until
 * BYTES are written; stderr: flood_err_line(n) on fd 2 until BYTES;
 * ping: pings with ids 1, 2, ... until BYTES of them are written, as
 * fast as it can with at most WINDOW unanswered (more answers than the
 * driver's flood guard allows left unread is a server that does not read
 * them, convicted as MCPP_ERR_FLOODED), and every answer is checked (in
 * order, one per ping). Then one
 * {"jsonrpc":"2.0","method":"flood/done","params":{"count":N,"bytes":B,
 * "pongs":P,"bad":X}} and it serves pings until stdin closes.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "flood.h"

enum { OUT_LOW = 64 * 1024, OUT_CAP = 256 * 1024, WINDOW = 1000 };

static char out[OUT_CAP + 4096];
static size_t out_len;
static char err[64 * 1024];
static char in[1 << 20];
static size_t in_len;

static int mode; /* 0 stdout, 1 stderr, 2 ping */
static uint64_t target, written, count, pongs, bad, next_pong = 1;
static int done_sent, stdin_open = 1;

static void put(const char *p, size_t n) {
  if (out_len + n > sizeof out) {
    fprintf(stderr, "flood-server: output buffer overflow\n");
    exit(2);
  }
  memcpy(out + out_len, p, n);
  out_len += n;
}

/* One line from the client: answer its pings, check our pongs. */
static void on_line(const char *line, size_t len) {
  const char *m = memmem(line, len, "\"method\":\"ping\"", 15);
  const char *id = memmem(line, len, "\"id\":", 5);
  if (m && id) {
    id += 5;
    const char *end = line + len;
    const char *e = id;
    if (*e == '"') {
      for (e++; e < end && *e != '"'; e++)
        if (*e == '\\') e++;
      e++;
    } else {
      while (e < end && *e != ',' && *e != '}') e++;
    }
    char buf[256];
    int n = snprintf(buf, sizeof buf, "{\"jsonrpc\":\"2.0\",\"id\":%.*s,\"result\":{}}\n",
                     (int)(e - id), id);
    put(buf, (size_t)n);
    return;
  }
  if (id && memmem(line, len, "\"result\"", 8)) {
    /* A pong: ids come back in the order we sent them. */
    if (strtoull(id + 5, NULL, 10) != next_pong) bad++;
    next_pong++;
    pongs++;
  }
}

static void read_input(void) {
  ssize_t n = read(0, in + in_len, sizeof in - in_len);
  if (n <= 0) {
    if (n < 0 && (errno == EAGAIN || errno == EINTR)) return;
    stdin_open = 0;
    return;
  }
  in_len += (size_t)n;
  size_t start = 0;
  for (size_t i = 0; i < in_len; i++) {
    if (in[i] != '\n') continue;
    on_line(in + start, i - start);
    start = i + 1;
  }
  memmove(in, in + start, in_len - start);
  in_len -= start;
  if (in_len == sizeof in) {
    fprintf(stderr, "flood-server: line too long\n");
    exit(2);
  }
}

/* Tops the output up with flood lines (stdout, ping modes). */
static void produce(void) {
  char line[LINE + 64];
  while (out_len < OUT_LOW && written < target &&
         (mode != 2 || count - pongs < WINDOW)) {
    size_t n;
    if (mode == 0) {
      n = flood_line(line, count);
    } else {
      n = (size_t)snprintf(line, sizeof line,
                           "{\"jsonrpc\":\"2.0\",\"id\":%" PRIu64 ",\"method\":\"ping\"}\n",
                           count + 1);
    }
    put(line, n);
    written += n;
    count++;
  }
}

static int finished(void) {
  if (written < target) return 0;
  return mode != 2 || pongs == count;
}

static void write_fd(int fd, char *buf, size_t *len) {
  ssize_t n = write(fd, buf, *len);
  if (n < 0) {
    if (errno == EAGAIN || errno == EINTR) return;
    exit(0); /* the client is gone */
  }
  memmove(buf, buf + n, *len - (size_t)n);
  *len -= (size_t)n;
}

int main(int argc, char **argv) {
  if (argc != 3) {
    fprintf(stderr, "usage: flood-server stdout|stderr|ping BYTES\n");
    return 2;
  }
  mode = strcmp(argv[1], "stdout") == 0 ? 0 : strcmp(argv[1], "stderr") == 0 ? 1 : 2;
  target = strtoull(argv[2], NULL, 10);
  for (int fd = 0; fd < 3; fd++)
    fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK);
  size_t err_len = 0;
  while (stdin_open || out_len) {
    if (mode != 1) produce();
    if (mode == 1) {
      while (err_len + LINE <= sizeof err && written < target) {
        err_len += flood_err_line(err + err_len, count++);
        written += LINE;
      }
    }
    if (!done_sent && finished() && (mode != 1 || err_len == 0)) {
      char buf[256];
      int n = snprintf(buf, sizeof buf,
                       "{\"jsonrpc\":\"2.0\",\"method\":\"flood/done\",\"params\":{"
                       "\"count\":%" PRIu64 ",\"bytes\":%" PRIu64 ",\"pongs\":%" PRIu64
                       ",\"bad\":%" PRIu64 "}}\n",
                       count, written, pongs, bad);
      put(buf, (size_t)n);
      done_sent = 1;
    }
    struct pollfd p[3] = {{0, stdin_open ? POLLIN : 0, 0},
                          {1, out_len ? POLLOUT : 0, 0},
                          {2, err_len ? POLLOUT : 0, 0}};
    if (!stdin_open && !out_len) break;
    if (poll(p, 3, -1) < 0 && errno != EINTR) return 1;
    if (p[0].revents) read_input();
    if (p[1].revents & (POLLERR | POLLHUP)) return 0;
    if (p[1].revents & POLLOUT) write_fd(1, out, &out_len);
    if (p[2].revents & POLLOUT) write_fd(2, err, &err_len);
    if (p[2].revents & (POLLERR | POLLHUP)) err_len = 0;
  }
  return 0;
}
