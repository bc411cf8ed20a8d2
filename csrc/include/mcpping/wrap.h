/* mcpping mcpping wrap: the stdio proxy for clients that cannot be changed.
 * Included by mcpping.h; compiles alone too. */
#ifndef MCPPING_WRAP_H
#define MCPPING_WRAP_H

#include <stddef.h>
#include <stdint.h>
#include "mcpping/driver.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ------------------------------------------------------------------ wrap
 *
 * mcpping wrap: a stdio proxy for MCP clients that cannot be changed. The
 * client talks to us on in_fd/out_fd (normally our own stdin and stdout);
 * the server runs as our child, as mcpp_conn spawns it. Every line passes
 * through unchanged and in order, both ways; pings pass too (the client's
 * go to the server, the server's to the client), and our own keepalive
 * toward the server uses our own ids. When the server goes stale or
 * exits, every request the client has in flight gets a JSON-RPC error
 * (never a replay); with restart on, a new server is spawned and the
 * client's handshake replayed on its behalf. When the client goes (EOF,
 * a broken stdout, SIGTERM, SIGINT, SIGHUP), the server is closed and
 * reaped before we return. */

#define MCPP_WRAP_OPTIONS_V1 1
#define MCPP_WRAP_OPTIONS_VERSION MCPP_WRAP_OPTIONS_V1

typedef struct mcpp_wrap_options {
  /* The layout this struct has: set by mcpp_wrap_options_default, checked
   * by mcpp_wrap_options_problem and mcpp_wrap_run. */
  int version;
  /* Keepalive toward the server (interval_ms, timeout_ms, failures, ...)
   * and the name for records (peer_name). forward_peer_pings is always 1
   * here, and on_stale always MCPP_STALE_CLOSE. By pointer, so settings of
   * any version mcpp_settings_default knows can be given; read during
   * mcpp_wrap_options_problem and mcpp_wrap_run only. NULL: the settings
   * of mcpp_wrap_settings_default. */
  const mcpp_settings *settings;
  /* The server. stderr_mode MCPP_STDERR_INHERIT passes its stderr
   * through; kill_grace_ms 0 means 1000 here, so that a server ignoring
   * SIGTERM is gone within 2 s of the client. */
  mcpp_spawn_options spawn;
  /* 1 (default): respawn a server that went stale or exited, with the
   * defaults of mcpp_reconnect (1 s doubling up to 30 s, 20% jitter, at
   * most 10 attempts in a row) and a mcpp_retry_budget; 0 or 1. 0: exit
   * with a message on stderr. */
  int restart;
  /* Governance records (JSON lines) are appended to this file; NULL:
   * none. */
  const char *log_path;
  /* Prometheus text exposition on this loopback "HOST:PORT" (127.0.0.1,
   * [::1] or localhost; port 0 picks a free one), NULL: none. Once it
   * listens, stderr says where: "mcpping wrap: metrics on
   * http://127.0.0.1:PORT/metrics". */
  const char *metrics_addr;
  int in_fd, out_fd; /* the client; default 0 and 1 */
  /* The server's name in the client's config (wrap --name): the `server`
   * field of records and the server label of metrics. NULL: the peer's
   * name (serverInfo.name, or the program's basename). */
  const char *server_name;
} mcpp_wrap_options;

/* Fills *options with the defaults above (settings NULL: those of
 * mcpp_wrap_settings_default). */
void mcpp_wrap_options_default(mcpp_wrap_options *options);

/* Fills *settings with wrap's defaults: mcpp_settings_default, with
 * interval_ms the settings table's policy, 15000: keepalive on, as in the
 * bindings and the command. */
void mcpp_wrap_settings_default(mcpp_settings *settings);

/* Returns NULL if *options can run, else a static sentence naming the
 * first bad field (settings included, as mcpp_settings_problem). */
const char *mcpp_wrap_options_problem(const mcpp_wrap_options *options);

/* Runs the proxy on a loop of its own in the calling thread until the
 * client goes away, or the server is gone for good. Blocks SIGPIPE in the
 * calling thread while it runs. Returns the process exit status: 0 the
 * client went away (128 + the signal's number after SIGTERM, SIGINT or
 * SIGHUP), 1 the server went stale or exited and is not restarted (a
 * line on stderr says why), 2 it could not start (bad options, the
 * server could not be spawned, the log or metrics address could not be
 * opened; a line on stderr says why). */
int mcpp_wrap_run(const mcpp_wrap_options *options);

#ifdef __cplusplus
}
#endif

#endif /* MCPPING_WRAP_H */
