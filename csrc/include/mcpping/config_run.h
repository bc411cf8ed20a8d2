/*
 * mcpping/config_run.h: `mcpping --config`'s check of one server as a
 * sans-I/O state machine (csrc/src/app/config_run.c), included by mcpping.h.
 * Which servers are skipped and why, each server's deadline, the handshake's
 * bounds, the ping grid, how every outcome becomes a status and a reason: all
 * here, so the Python and Node commands give the same rows by construction.
 * A binding runs one machine per server: it asks mcpp_config_run_next() what
 * to do, does it with its own connection (stdio or its HTTP stack), feeds the
 * outcome back, and hands the row to mcpp_config_format_results. Every call
 * takes the caller's monotonic time in milliseconds; nothing here reads a
 * clock.
 */
#ifndef MCPPING_CONFIG_RUN_H
#define MCPPING_CONFIG_RUN_H

#include <stddef.h>
#include <stdint.h>

#include "mcpping/app.h"
#include "mcpping/config.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct mcpp_config_run mcpp_config_run;

/* How each server is checked (the command line's -c, -i, -W and -w). */
typedef struct mcpp_config_plan {
  uint64_t count;       /* pings; 0: the handshake only */
  uint32_t interval_ms; /* pings keep to a grid from the first one */
  uint32_t timeout_ms;  /* per ping */
  uint32_t deadline_ms; /* per server, from mcpp_config_run_new */
} mcpp_config_plan;

typedef enum mcpp_config_do {
  MCPP_CONFIG_DO_OPEN = 1, /* resolve the entry's ${...}, then spawn or connect
                            * (no handshake); then mcpp_config_run_open_done */
  MCPP_CONFIG_DO_HANDSHAKE, /* initialize, the request's own timeout timeout_ms;
                             * no later than until_ms, else
                             * mcpp_config_run_handshake_timed_out; then
                             * mcpp_config_run_handshake_done or _failed */
  MCPP_CONFIG_DO_PING, /* one ping within timeout_ms; then
                        * mcpp_config_run_replied */
  MCPP_CONFIG_DO_WAIT, /* wait until until_ms or Ctrl-C
                        * (mcpp_config_run_interrupt), then next() */
  MCPP_CONFIG_DO_CLOSE, /* close the connection (want_exit: learn first how it
                         * ended, the server's exit or the connect error);
                         * then mcpp_config_run_closed */
  MCPP_CONFIG_DO_DONE   /* the row is final: mcpp_config_run_row */
} mcpp_config_do;

typedef struct mcpp_config_action {
  mcpp_config_do what;
  uint32_t timeout_ms;
  int64_t until_ms;
  int want_exit; /* CLOSE: the reason needs how the connection ended */
} mcpp_config_action;

/* How the OPEN step ended. */
typedef enum mcpp_config_open_result {
  MCPP_CONFIG_OPEN_OK = 0,
  MCPP_CONFIG_OPEN_UNRESOLVED,   /* reason: mcpp_config_resolve's problem */
  MCPP_CONFIG_OPEN_SPAWN_FAILED, /* reason: the driver's sentence */
  MCPP_CONFIG_OPEN_INVALID       /* a NUL in an argument and the like; the
                                  * reason is not shown (it could quote a
                                  * value) */
} mcpp_config_open_result;

/* How the connection ended, given after CLOSE. Strings are only read during
 * the call. */
typedef struct mcpp_config_end {
  int exited; /* 1: the server process ended with exit_status/term_signal */
  int exit_status, term_signal;
  const char *connect_error; /* HTTP: why it could not connect (an errno
                              * name, never the URL); NULL: none */
} mcpp_config_end;

/* A run for one server entry (its transport, "disabled"); the deadline starts
 * now. Returns 0, MCPP_ERR_INVALID_ARGUMENT or MCPP_ERR_NOMEM. */
int mcpp_config_run_new(mcpp_config_run **out, const char *transport, int disabled,
                        const mcpp_config_plan *plan, int64_t now_ms);
void mcpp_config_run_free(mcpp_config_run *r);

/* What to do next; after DONE it keeps answering DONE. */
void mcpp_config_run_next(mcpp_config_run *r, int64_t now_ms, mcpp_config_action *a);

void mcpp_config_run_open_done(mcpp_config_run *r, int64_t now_ms,
                               mcpp_config_open_result result, const char *reason);
void mcpp_config_run_handshake_done(mcpp_config_run *r, int64_t now_ms,
                                    const char *protocol_version);
/* gone: the connection ended (the reason is then how, from CLOSE); else the
 * reason is message, or `initialize failed: CODE MESSAGE` with a code. */
void mcpp_config_run_handshake_failed(mcpp_config_run *r, int64_t now_ms, int gone,
                                      int has_code, int64_t code, const char *message);
void mcpp_config_run_handshake_timed_out(mcpp_config_run *r, int64_t now_ms);
/* How one ping ended (app.h's kinds; MCPP_REPLY_ERROR and _INVALID count as
 * sent and lost). */
void mcpp_config_run_replied(mcpp_config_run *r, int64_t now_ms, mcpp_cli_reply kind,
                             double rtt_ms);
/* The values no reason may quote (mcpp_watch_add's: env and header values,
 * the URL, whose credentials and query are taken out of it too), given
 * once the entry is resolved, before its OPEN is done: its stderr and the
 * server's error messages then show `***` in their place. Returns 0,
 * MCPP_ERR_INVALID_ARGUMENT or MCPP_ERR_NOMEM. */
int mcpp_config_run_set_secrets(mcpp_config_run *r, const char *const *secrets, size_t n);
/* The server's stderr as it comes (stdio); its last non-blank line is the
 * row's last_stderr when the server would not talk (handshake failed,
 * closed). Only the last 4 KiB are kept. */
void mcpp_config_run_stderr(mcpp_config_run *r, const char *data, size_t len);
/* What the server wrote on stdout that is not JSON-RPC, as
 * mcpp_runtime_unreadable gives it (stdio; count 0 and NULL otherwise),
 * told at the CLOSE step before mcpp_config_run_closed: count is the row's
 * non_json_lines, and the sentence is added to a handshake timeout's
 * reason ("no initialize result; the server wrote a line that ..."). */
void mcpp_config_run_unreadable(mcpp_config_run *r, uint64_t count,
                                const char *sentence);
/* Ctrl-C: no ping is sent after it. */
void mcpp_config_run_interrupt(mcpp_config_run *r, int64_t now_ms);
void mcpp_config_run_closed(mcpp_config_run *r, int64_t now_ms, const mcpp_config_end *e);

/* Fills the row's outcome (protocol_version, status, reason, last_stderr,
 * sent, received, rtts_ms, non_json_lines); name, transport, file and
 * json_path are the caller's. The strings live as long as the run. */
void mcpp_config_run_row(const mcpp_config_run *r, mcpp_config_row *row);

#ifdef __cplusplus
}
#endif

#endif /* MCPPING_CONFIG_RUN_H */
