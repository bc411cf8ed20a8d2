/*
 * `mcpping watch` (issue 24 item 6), sans I/O: every server of a client
 * config under standing watch. The bindings open each server (stdio with
 * keepalive and reconnect, HTTP with keepalive), feed what happens here,
 * serve the listener's bytes and write the log bytes; the per-server
 * state, the re-open backoff, the /status JSON, the /metrics text (via
 * mcpp_metrics_render), the HTTP routing, every log line and the redaction
 * of secrets live here, once. Included by mcpping.h.
 */
#ifndef MCPPING_WATCH_H
#define MCPPING_WATCH_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

struct mcpp_cli_options;

/* The listener's bounds on a request: its head (request line and headers)
 * at most this many bytes, read within this long, else the connection is
 * dropped. */
#define MCPP_WATCH_MAX_HEAD 65536u
#define MCPP_WATCH_HEAD_TIMEOUT_MS 5000u

typedef struct mcpp_watch mcpp_watch;

/* The usage text of `mcpping watch --help` (ends with a newline). */
const char *mcpp_watch_usage(void);

/* Creates a watch for options o (mode MCPP_CLI_WATCH; copied, need not
 * outlive it). Returns 0, MCPP_ERR_INVALID_ARGUMENT or MCPP_ERR_NOMEM. */
int mcpp_watch_new(mcpp_watch **out, const struct mcpp_cli_options *o);
void mcpp_watch_free(mcpp_watch *w);

/* Adds a config entry: its name, "stdio" or "streamable-http", and the
 * values that must never be printed (env and header values, the URL: its
 * credentials and query are taken out of it too). skip_reason non-NULL
 * means it is not watched (disabled, legacy SSE, an unset variable): it
 * shows in /status only. Returns its index (>= 0) or MCPP_ERR_NOMEM. */
int mcpp_watch_add(mcpp_watch *w, const char *name, const char *transport,
                   const char *const *secrets, size_t nsecrets,
                   const char *skip_reason);

/* The listener is up on host:port (the port bound, for port 0): writes
 * the start line. */
void mcpp_watch_listening(mcpp_watch *w, const char *host, int port);

/* The listener cannot be opened (why: the OS error's name, EADDRINUSE):
 * writes the line; the command then exits MCPP_EXIT_USAGE. */
void mcpp_watch_listen_failed(mcpp_watch *w, const char *why);

/* The server to open now (spawn or connect, then the handshake), or -1;
 * *next_ms gets when to ask again (-1: only after a feed). A server given
 * out is not given out again until mcpp_watch_open_failed or
 * mcpp_watch_closed schedules it. */
int mcpp_watch_due(mcpp_watch *w, int64_t now_ms, int64_t *next_ms);

/* Server i is up: peer (serverInfo name), its protocol version (NULL if
 * none), its pid (0 for HTTP). */
void mcpp_watch_opened(mcpp_watch *w, int i, int64_t now_ms, const char *peer,
                       const char *protocol_version, int64_t pid);
/* Why a server could not be opened or its connection ended, as the
 * binding knows it; C words it. */
typedef enum mcpp_watch_why {
  MCPP_WATCH_WHY_TEXT = 0,      /* detail is the sentence (a spawn error's, the
                                 * handshake's, a close's); NULL: "connection closed" */
  MCPP_WATCH_WHY_NO_INITIALIZE, /* no initialize result in --connect-timeout;
                                 * detail (NULL: none): what the server wrote
                                 * instead (mcpp_runtime_unreadable) */
  MCPP_WATCH_WHY_UNREACHABLE,   /* HTTP: detail is the connect error's name
                                 * (ECONNREFUSED), never the URL */
  MCPP_WATCH_WHY_INVALID        /* a NUL in an argument and the like: detail
                                 * is not shown (it could quote a value) */
} mcpp_watch_why;

/* Opening server i failed; it is tried again after the backoff (the
 * reconnect settings' initial delay, doubling to their maximum). */
void mcpp_watch_open_failed(mcpp_watch *w, int i, int64_t now_ms, mcpp_watch_why why,
                            const char *detail);
/* Server i's stderr as it comes (stdio): the last non-blank line of its
 * last 4 KiB, redacted, ends the log line of its next close or failed open
 * ("(last stderr: ...)") and is /status's last_stderr; a server that opens
 * starts a new tail. */
void mcpp_watch_stderr(mcpp_watch *w, int i, const char *data, size_t len);
/* Server i's connection ended for good: re-opened after the backoff,
 * which counts as a restart. */
void mcpp_watch_closed(mcpp_watch *w, int i, int64_t now_ms, mcpp_watch_why why,
                       const char *detail);

/* One event of server i's connection, as the binding's event carries it:
 * its name (mcpp_event_name), rtt in seconds (pong), invalid (ping_error),
 * ping_seq (nonzero for a refused ping), the state after it ("closed"
 * tells an abandoned ping), the proof, the attempt (reconnecting), the
 * new pid (reconnected) and the message (reconnecting: why the server
 * failed). Versioned as the option structs are: version 0 (a zeroed
 * struct) or MCPP_WATCH_EVENT_V1; an event of another version is ignored. */
#define MCPP_WATCH_EVENT_V1 1
typedef struct mcpp_watch_event {
  int version;
  const char *name;
  const char *state;
  double rtt_s;
  int invalid;
  uint64_t ping_seq;
  const char *proof;
  int64_t attempt;
  int64_t pid;
  const char *message;
} mcpp_watch_event;

void mcpp_watch_feed(mcpp_watch *w, int i, int64_t now_ms,
                     const mcpp_watch_event *ev);

/* The listener's answer to one request head (the bytes up to the blank
 * line): GET or HEAD /metrics (Prometheus text) and /status (JSON), 404
 * for another path, 405 for another method, 400 for no request line; the
 * connection closes after it. *out is the status line, headers and body,
 * owned by the caller (mcpp_watch_text_free). Returns 0 or
 * MCPP_ERR_NOMEM. */
int mcpp_watch_respond(mcpp_watch *w, int64_t now_ms, const char *head,
                       size_t len, char **out, size_t *out_len);
void mcpp_watch_text_free(char *text);

/* SIGTERM or SIGINT arrived: writes the stopping line; from then on what
 * the binding feeds about its servers is ignored. Then the binding closes
 * the listener and every connection and calls mcpp_watch_stopped, which
 * writes the last line. */
void mcpp_watch_stopping(mcpp_watch *w);
void mcpp_watch_stopped(mcpp_watch *w);

/* The log bytes (for stderr) written since the last call; valid until the
 * next call on w. Every line starts "mcpping watch: ". */
const char *mcpp_watch_output(mcpp_watch *w, size_t *len);

#ifdef __cplusplus
}
#endif
#endif
