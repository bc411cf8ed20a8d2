/*
 * c_ping: ping an MCP stdio server N times with mcpping's C driver.
 *
 *   make build/example-c-ping
 *   ./build/example-c-ping 5 python3 -m mcpping.demo
 *
 * The driver (mcpp_conn_*) spawns the server in its own process group on a
 * uv loop we own, answers the server's pings, and times ours. Everything
 * happens in callbacks on this one thread; uv_run returns once the server
 * is reaped and every handle is closed.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <uv.h>

#include "mcpping.h"

typedef struct app {
  int count, sent, answered, initialized, stop;
} app;

static void ping_next(mcpp_conn *conn, app *a) {
  if (a->sent == a->count || a->stop) {
    mcpp_conn_close(conn); /* SIGTERM the group, reap, then on_close */
    return;
  }
  int rc = mcpp_conn_ping(conn, 2000, NULL); /* 2 s timeout for this ping */
  if (rc == 0) {
    a->sent++;
    return;
  }
  if (rc != MCPP_ERR_CLOSED) /* closed: on_close says why */
    fprintf(stderr, "c_ping: %s\n", mcpp_strerror(rc));
  mcpp_conn_close(conn);
}

/* Everything the server sends except pings and our pongs lands here. The
 * only thing we await is the initialize result (a real client would parse
 * the JSON; the handshake's is the only response we can get). */
static void on_message(mcpp_conn *conn, const char *frame, size_t len, void *ud) {
  app *a = ud;
  if (a->initialized) return;
  a->initialized = 1;
  if (!memmem(frame, len, "\"result\"", 8)) { /* an error, or our timeout */
    fprintf(stderr, "c_ping: initialize failed: %.*s\n", (int)len, frame);
    mcpp_conn_close(conn);
    return;
  }
  static const char note[] = "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}";
  mcpp_conn_send(conn, note, sizeof note - 1);
  ping_next(conn, a);
}

/* Each manual ping ends in exactly one of PONG, TIMEOUT, PING_ERROR or
 * UNSUPPORTED; the next ping goes out only then, one in flight at a time. */
static void on_event(mcpp_conn *conn, const mcpp_event *ev, void *ud) {
  app *a = ud;
  switch (ev->type) {
  case MCPP_EV_PONG:
    a->answered++;
    printf("pong seq=%d time=%.3f ms\n", a->sent, (double)ev->rtt_us / 1e3);
    break;
  case MCPP_EV_TIMEOUT:
  case MCPP_EV_PING_ERROR:
  case MCPP_EV_UNSUPPORTED:
    /* A close reports the ping still out as a TIMEOUT with MCPP_ERR_CLOSED. */
    printf("%s seq=%d\n", ev->error == MCPP_ERR_CLOSED ? "closed before pong"
                                                           : mcpp_event_name(ev->type),
           a->sent);
    if (ev->type == MCPP_EV_UNSUPPORTED) a->stop = 1; /* further pings would fail */
    break;
  default:
    return;
  }
  fflush(stdout);
  ping_next(conn, a);
}

static void on_close(mcpp_conn *conn, const mcpp_close_info *info, void *ud) {
  printf("closed: %s\n", info->reason);
}

int main(int argc, char **argv) {
  if (argc < 3 || atoi(argv[1]) < 1) {
    fprintf(stderr, "usage: %s COUNT COMMAND [ARG...]\n", argv[0]);
    return 2;
  }
  app a = {.count = atoi(argv[1])};
  uv_loop_t loop;
  uv_loop_init(&loop);

  mcpp_settings s;
  mcpp_settings_default(&s); /* keepalive off: we ping by hand */
  s.nonce = uv_hrtime();     /* the engine reads no randomness itself */
  /* A server that never answers initialize gets a JSON-RPC error delivered
   * to on_message after this long, instead of hanging us forever. */
  s.request_timeout_ms = 10000;

  mcpp_spawn_options o = {0};
  o.file = argv[2];
  o.args = argv + 2; /* NULL-terminated, as argv is */
  o.stderr_mode = MCPP_STDERR_INHERIT;

  mcpp_conn_callbacks cb = {0};
  cb.on_message = on_message;
  cb.on_event = on_event;
  cb.on_close = on_close;

  mcpp_conn *conn;
  int rc = mcpp_conn_spawn(&conn, &loop, &s, &o, &cb, &a, NULL);
  if (rc) {
    fprintf(stderr, "c_ping: %s\n", rc == MCPP_ERR_SPAWN ? mcpp_conn_spawn_error() : mcpp_strerror(rc));
    return 2;
  }
  /* MCP allows ping before the handshake, but servers built on the SDKs
   * expect initialize first; sending it also names the peer in records. */
  static const char init[] =
      "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"initialize\",\"params\":{"
      "\"protocolVersion\":\"2025-11-25\",\"capabilities\":{},"
      "\"clientInfo\":{\"name\":\"c_ping\",\"version\":\"1\"}}}";
  mcpp_conn_send(conn, init, sizeof init - 1);

  uv_run(&loop, UV_RUN_DEFAULT);
  uv_loop_close(&loop);
  printf("%d pings sent, %d pongs received\n", a.sent, a.answered);
  return a.answered == a.count ? 0 : 1;
}
