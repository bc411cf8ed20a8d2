/*
 * The mcpping command's application layer (issue 22 item 4): the command
 * line, the check as a sans-I/O state machine, and every byte the command
 * prints, so that the Python and Node commands print the same bytes by
 * construction. A binding only plumbs: it asks mcpp_cli_next() what to do,
 * does it with its own connection (stdio or its HTTP stack), feeds the
 * outcome back and writes the bytes it is given.
 */
#ifndef MCPPING_APP_H
#define MCPPING_APP_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* What the command line asks for. */
typedef enum mcpp_cli_mode {
  MCPP_CLI_CHECK = 0, /* check one target (-- COMMAND, URL or the demo) */
  MCPP_CLI_CONFIG,    /* --config: every server of client configs */
  MCPP_CLI_HELP,      /* -h: print mcpp_cli_usage(), exit 0 */
  MCPP_CLI_VERSION,   /* -V: print the version, exit 0 */
  MCPP_CLI_BAD_USAGE, /* options.error says why; exit MCPP_EXIT_USAGE */
  MCPP_CLI_WATCH,     /* watch --config: standing watch (mcpping/watch.h) */
  MCPP_CLI_WATCH_HELP, /* watch -h: print mcpp_watch_usage(), exit 0 */
  MCPP_CLI_WRAP,       /* wrap -- COMMAND: the proxy (mcpping/wrap.h) */
  MCPP_CLI_WRAP_HELP   /* wrap -h: print mcpp_wrap_usage(), exit 0 */
} mcpp_cli_mode;

typedef enum mcpp_cli_target {
  MCPP_CLI_DEMO = 0, /* the bundled demo server, which the binding starts */
  MCPP_CLI_STDIO,    /* options.command */
  MCPP_CLI_HTTP      /* options.url */
} mcpp_cli_target;

typedef enum mcpp_cli_method {
  MCPP_METHOD_AUTO = 0, /* ping where the protocol has it, else a probe */
  MCPP_METHOD_PING,
  MCPP_METHOD_DISCOVER,  /* server/discover */
  MCPP_METHOD_TOOLS_LIST /* tools/list */
} mcpp_cli_method;

/* The exit statuses, the same in both commands (docs/cli.md). */
#define MCPP_EXIT_ALIVE 0
#define MCPP_EXIT_MISSING 1 /* replies missing */
#define MCPP_EXIT_USAGE 2   /* bad usage */
#define MCPP_EXIT_CONNECT 3 /* could not start, connect or finish the handshake */
#define MCPP_EXIT_REFUSED 4 /* alive but refusing the check asked for */
/* Nobody reads stdout any more (`mcpping ... | head -1`): the run stops at
 * once, closes its server and says nothing more; 128 + SIGPIPE, what
 * ping(8) dies of there. */
#define MCPP_EXIT_OUTPUT_CLOSED 141

/* The SIGTERM-to-SIGKILL grace the commands (the check, --config, watch)
 * give a server they started: shorter than the library's default, since
 * nothing of the server's work is the command's to wait for. */
#define MCPP_APP_KILL_GRACE_MS 1000u
/* A binding bounds each step's operation (OPEN's handshake, a SEND's
 * request) at timeout_ms plus this, so the step's own deadline, C's,
 * decides every timeout and both commands word it the same. */
#define MCPP_CLI_STEP_SLACK_MS 1000u

/* The demo MCP server the command pings with no target (`python -m
 * mcpping.demo`, `node/demo-server.js`: each host only carries lines):
 * the answer to one line it read, without its newline, or NULL when none
 * is due (a notification, a response, a blank line). It answers
 * initialize (serverInfo mcpping-demo; the client's protocol version if it
 * speaks it, else its newest), ping, tools/list and tools/call for `echo`
 * ({text}) and `add` ({a, b}; bad arguments or an unknown tool are a
 * result with isError), -32601 for any other method and -32700 for a line
 * that is not JSON. The id is echoed byte for byte. Free the answer with
 * mcpp_config_free. */
char *mcpp_demo_answer(const char *line, size_t len);

/* The parsed command line's layout: fields are only ever added at the end,
 * and mcpp_cli_parse writes the version the caller's header had (no byte
 * past it), as mcpp_settings_default does (docs/design.md). */
#define MCPP_CLI_OPTIONS_V1 1
#define MCPP_CLI_OPTIONS_VERSION MCPP_CLI_OPTIONS_V1

/* The parsed command line. Strings point into the argv given to
 * mcpp_cli_parse (which must outlive them); arrays are owned and freed by
 * mcpp_cli_options_free. Times are in milliseconds. */
typedef struct mcpp_cli_options {
  int version; /* set by mcpp_cli_parse */
  mcpp_cli_mode mode;
  mcpp_cli_target target;
  mcpp_cli_method method;
  uint64_t count;              /* 0: until interrupted */
  uint32_t interval_ms;        /* 0: flood */
  uint32_t timeout_ms;         /* -W, per reply */
  uint32_t deadline_ms;        /* -w; 0: none */
  uint32_t connect_timeout_ms; /* spawn + connect + handshake */
  int quiet, json, init;
  int wrap, unwrap, write;     /* --config --wrap|--unwrap [--write] */
  const char *command_path;    /* --command PATH, or NULL */
  const char *log;             /* --log FILE, or NULL */
  const char *url;             /* MCPP_CLI_HTTP */
  const char *const *command;  /* MCPP_CLI_STDIO: argv of the server */
  size_t ncommand;
  const char **configs; /* --config FILE|auto, in order */
  size_t nconfigs;
  const char **headers; /* -H NAME:VALUE, checked */
  size_t nheaders;
  const char **env; /* --env NAME=VALUE, checked */
  size_t nenv;
  const char **expect_tools; /* --expect-tool NAME */
  size_t nexpect_tools;
  /* watch: --listen HOST:PORT (default 127.0.0.1:9464), --failures N. */
  char listen_host[64];
  int listen_port;
  int listen_any;
  uint32_t failures;
  char error[256]; /* MCPP_CLI_BAD_USAGE: the reason, without "mcpping: " */
  /* wrap: --no-restart clears restart; --metrics ADDR; --name ENTRY (also
   * the records' peer name). interval_ms, timeout_ms, failures, log and
   * command are the fields above. */
  int restart;
  const char *metrics;
  const char *name;
  int wrap_args; /* the arguments were wrap's: its usage errors say "mcpping wrap: " */
} mcpp_cli_options;

/* Parses the arguments after the program name into *o, a struct of
 * options_version (always fills it; o->mode says what to do). Returns 0,
 * MCPP_ERR_NOMEM, or MCPP_ERR_INVALID_ARGUMENT for an unknown version
 * (nothing written). Call it through mcpp_cli_parse. */
int mcpp_cli_parse_versioned(int options_version, mcpp_cli_options *o, int argc,
                             const char *const *argv);
#define mcpp_cli_parse(o, argc, argv)                                          \
  mcpp_cli_parse_versioned(MCPP_CLI_OPTIONS_VERSION, (o), (argc), (argv))
void mcpp_cli_options_free(mcpp_cli_options *o);

/* The usage text printed by -h (ends with a newline). */
const char *mcpp_cli_usage(void);

/* The usage error of *o as the command prints it: "mcpping: why\n", or
 * "mcpping wrap: why\n" for wrap's arguments. */
size_t mcpp_cli_problem_line(const mcpp_cli_options *o, char *buf, size_t cap);

/* `mcpping wrap --help` (ends with a newline; the defaults are the
 * settings table's policy). */
const char *mcpp_wrap_usage(void);

/* Splits one of options.headers (-H NAME:VALUE; header != 0) or options.env
 * (--env NAME=VALUE), both checked by the parse, into its name (the first
 * name_len bytes of item) and its value (a header's without the blanks
 * around it). */
void mcpp_cli_pair(const char *item, int header, size_t *name_len, const char **value,
                   size_t *value_len);

/* When the command line alone decides what happens (-h, -V, a usage error,
 * watch -h, wrap -h, wrap's usage errors, a --log FILE that cannot be
 * opened for appending: the check and --config create it here, before
 * anything is checked): returns 1, sets *out to what goes
 * to stdout ("" if nothing), writes what goes to stderr into err ("" if
 * nothing; cap bytes) and sets *status to the exit status. Returns 0 when
 * there is a run to do (nothing set). */
int mcpp_cli_immediate(const mcpp_cli_options *o, const char **out, char *err, size_t cap,
                       int *status);

/* ---- The check, sans I/O. Every call takes the caller's monotonic time
 * in milliseconds, as ngtcp2's do; nothing here reads a clock. */

typedef struct mcpp_cli_run mcpp_cli_run;

typedef enum mcpp_cli_do {
  MCPP_CLI_DO_OPEN = 1, /* start or connect and run the handshake (unless
                         * options.init is 0) within timeout_ms, then call
                         * mcpp_cli_opened */
  MCPP_CLI_DO_LIST_TOOLS, /* send tools/list within timeout_ms, then call
                           * mcpp_cli_tools */
  MCPP_CLI_DO_SEND, /* send one check with `method` within timeout_ms (the
                     * reply timeout); wait no later than until_ms (the -w
                     * deadline, 0: none) else call mcpp_cli_interrupt; then
                     * call mcpp_cli_replied */
  MCPP_CLI_DO_WAIT, /* wait until until_ms (or an interrupt), then next() */
  MCPP_CLI_DO_EXIT  /* close the connection, exit with `status` */
} mcpp_cli_do;

typedef struct mcpp_cli_action {
  mcpp_cli_do what;
  const char *method; /* SEND: "ping", "server/discover" or "tools/list" */
  uint32_t timeout_ms;
  int64_t until_ms;
  int status;
  /* Bytes to write to stdout and stderr BEFORE doing `what`; valid until
   * the next call on the run. */
  const char *out;
  size_t out_len;
  const char *err;
  size_t err_len;
} mcpp_cli_action;

/* How the OPEN step ended. */
typedef enum mcpp_cli_open_result {
  MCPP_OPEN_OK = 0,
  MCPP_OPEN_SPAWN_FAILED,     /* reason: the driver's sentence, "cannot start
                               * FILE: no such file or directory (ENOENT)" */
  MCPP_OPEN_CONNECT_FAILED,   /* reason: why the URL could not be reached */
  MCPP_OPEN_HANDSHAKE_FAILED, /* reason: the handshake's error */
  MCPP_OPEN_TIMED_OUT,        /* the OPEN's timeout passed; reason (NULL
                               * or ""): what the server wrote instead
                               * (mcpp_runtime_unreadable), added after
                               * "; " */
  MCPP_OPEN_LOG_FAILED        /* --log FILE cannot be opened; reason: why */
} mcpp_cli_open_result;

typedef struct mcpp_cli_opened {
  mcpp_cli_open_result result;
  const char *peer;             /* serverInfo name, or the program/host */
  const char *transport;        /* "stdio" or "streamable-http" */
  const char *protocol_version; /* NULL without a handshake */
  const char *session_id;       /* NULL if none */
  const char *reason;           /* failures: see above */
} mcpp_cli_opened;

/* How one check (or tools/list) ended. */
typedef enum mcpp_cli_reply {
  MCPP_REPLY_OK = 0,      /* a result; rtt_ms */
  MCPP_REPLY_TIMEOUT,     /* no answer within timeout_ms */
  MCPP_REPLY_ERROR,       /* a JSON-RPC error (code, message); -32601 means
                           * the method is refused */
  MCPP_REPLY_INVALID,     /* an answer that is not a valid reply (message;
                           * NULL: "the answer has no result object") */
  MCPP_REPLY_UNSUPPORTED, /* the binding knows the method is refused */
  MCPP_REPLY_CLOSED       /* the connection ended (message) */
} mcpp_cli_reply;

/* Creates a run for options o (mode MCPP_CLI_CHECK), which must outlive
 * it. Returns 0, MCPP_ERR_INVALID_ARGUMENT or MCPP_ERR_NOMEM. */
int mcpp_cli_run_new(mcpp_cli_run **out, const mcpp_cli_options *o,
                     int64_t now_ms);
void mcpp_cli_run_free(mcpp_cli_run *r);

/* What to do next (see mcpp_cli_do); after EXIT it keeps answering EXIT. */
void mcpp_cli_next(mcpp_cli_run *r, int64_t now_ms, mcpp_cli_action *a);

void mcpp_cli_open_done(mcpp_cli_run *r, int64_t now_ms,
                          const mcpp_cli_opened *o);
void mcpp_cli_replied(mcpp_cli_run *r, int64_t now_ms, mcpp_cli_reply kind,
                      double rtt_ms, int has_code, int64_t code,
                      const char *message);
/* tools/list ended: kind, code and message as for a check; names are the
 * tools listed. */
void mcpp_cli_tools(mcpp_cli_run *r, int64_t now_ms, mcpp_cli_reply kind,
                    const char *const *names, size_t nnames, int has_code,
                    int64_t code, const char *message);
/* Ctrl-C, or the -w deadline while a check is out: stop and summarise. */
void mcpp_cli_interrupt(mcpp_cli_run *r, int64_t now_ms);

#ifdef __cplusplus
}
#endif
#endif
