/* The mcpping command line: every mode, option and usage error sentence,
 * once (docs/cli.md). Both commands call this; neither parses argv. */
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <uv.h>

#include "app/files.h"
#include "app/text.h"
#include "mcpping.h"

/* Each server's deadline under --config unless -w says otherwise. */
#define CONFIG_DEADLINE_MS 15000u
#define CONFIG_COUNT 3u
#define DEMO_COUNT 5u
/* --connect-timeout's default: a handshake that takes longer is a failure
 * a probe should report, not wait out (issue 24 item 4). */
#define CONNECT_TIMEOUT_MS 10000u
#define WRAP_USAGE "usage: mcpping --config FILE --wrap|--unwrap [--write] [--command PATH]"

static const char USAGE[] =
    "usage: mcpping [options] -- COMMAND [ARG...]   spawn a stdio server and check it\n"
    "       mcpping [options] URL                   check a Streamable HTTP server\n"
    "       mcpping [options] [--demo]              check the bundled demo server (the default)\n"
    "       mcpping [options] --config FILE|auto    check every server of a client config\n"
    "       mcpping wrap [options] -- COMMAND [ARG...]  proxy a stdio server for an MCP client\n"
    "                                               (mcpping wrap --help)\n"
    "       mcpping --config FILE --wrap [--write] [--command PATH] | --unwrap [--write]\n"
    "                                               put every stdio server of a config\n"
    "                                               behind mcpping wrap, or take it away\n"
    "       mcpping watch --config FILE|auto [--listen 127.0.0.1:9464]\n"
    "                                               watch every server; /metrics, /status\n"
    "                                               (mcpping watch --help)\n"
    "  -c N      count (demo default 5, --config 3; otherwise until Ctrl-C)\n"
    "  -i SEC    interval between checks (default 1; 0 = flood)\n"
    "  -W SEC    per-reply timeout (default 5)\n"
    "  -w SEC    overall deadline: stop after SEC seconds whatever the count\n"
    "            (--config: each server's deadline, default 15)\n"
    "  --connect-timeout SEC  spawn + connect + handshake (default 10)\n"
    "  --method auto|ping|discover|tools/list  the check (auto: ping where the\n"
    "            protocol has it, server/discover on 2026-07-28, tools/list for a\n"
    "            server that refuses ping)\n"
    "  -H, --header NAME:VALUE  an HTTP request header (repeatable)\n"
    "  --env NAME=VALUE  an environment variable for the server (repeatable)\n"
    "  --expect-tool NAME  exit 4 unless the server lists this tool (repeatable)\n"
    "  -q        summary only\n"
    "  --json    one JSON object per line\n"
    "  --log FILE  append governance records (JSONL) to FILE\n"
    "  --no-init   check without the handshake\n"
    "  --config FILE|auto  Claude Desktop, Claude Code, Cursor or VS Code config;\n"
    "              auto: the usual places on this OS (repeatable)\n"
    "  -h, --help  usage;  -V, --version  version\n"
    "exit status: 0 alive; 1 replies missing; 2 bad usage; 3 could not start,\n"
    "  connect or finish the handshake; 4 alive but refusing the check asked for;\n"
    "  141 nobody reads the output any more (| head)\n";

const char *mcpp_cli_usage(void) { return USAGE; }

static int bad(mcpp_cli_options *o, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(o->error, sizeof o->error, fmt, ap);
  va_end(ap);
  o->mode = MCPP_CLI_BAD_USAGE;
  return 0;
}

static int push(const char ***arr, size_t *n, const char *s) {
  const char **grown = realloc((void *)*arr, (*n + 1) * sizeof **arr);
  if (!grown) return MCPP_ERR_NOMEM;
  grown[(*n)++] = s;
  *arr = grown;
  return 0;
}

/* What Python's int() and float() read, and nothing else: decimal only
 * (no 0x10), with inf/infinity/nan; so the sentences name what was typed. */
static int is_integer(const char *s) {
  const char *p = s;
  while (*p == ' ' || *p == '\t') p++;
  if (*p == '+' || *p == '-') p++;
  if (*p < '0' || *p > '9') return 0;
  while (*p >= '0' && *p <= '9') p++;
  while (*p == ' ' || *p == '\t') p++;
  return *p == 0;
}

static int is_number(const char *s) {
  const char *p = s;
  while (*p == ' ' || *p == '\t') p++;
  if (*p == '+' || *p == '-') p++;
  if (!strcasecmp(p, "inf") || !strcasecmp(p, "infinity") ||
      !strcasecmp(p, "nan"))
    return 1;
  int digits = 0;
  while (*p >= '0' && *p <= '9') p++, digits++;
  if (*p == '.') {
    p++;
    while (*p >= '0' && *p <= '9') p++, digits++;
  }
  if (!digits) return 0;
  if (*p == 'e' || *p == 'E') {
    p++;
    if (*p == '+' || *p == '-') p++;
    if (*p < '0' || *p > '9') return 0;
    while (*p >= '0' && *p <= '9') p++;
  }
  while (*p == ' ' || *p == '\t') p++;
  return *p == 0;
}

static int count_value(mcpp_cli_options *o, const char *flag, const char *v,
                       uint64_t *out) {
  if (!is_integer(v))
    return bad(o, "%s needs an integer, got '%s'", flag, v), -1;
  errno = 0;
  long long n = strtoll(v, NULL, 10);
  if (n < 1 || errno == ERANGE)
    return bad(o, "%s must be a positive integer", flag), -1;
  *out = (uint64_t)n;
  return 0;
}

/* A time in seconds, low .. MCPP_MAX_MS ms, never clamped; whole ms. */
static int seconds_value(mcpp_cli_options *o, const char *flag,
                         const char *v, double low, uint32_t *out) {
  if (!is_number(v)) return bad(o, "%s needs a number, got '%s'", flag, v), -1;
  double d = strtod(v, NULL);
  if (!(d >= low && d <= MCPP_MAX_MS / 1000.0)) {
    char shown[40], lo[40];
    mcpp__text_repr(shown, sizeof shown, d);
    snprintf(lo, sizeof lo, "%g", low);
    return bad(o, "%s must be between %s and 2147483.647 seconds, not %s",
               flag, lo, shown),
           -1;
  }
  double ms = nearbyint(d * 1000.0);
  *out = d == 0 ? 0 : ms < 1 ? 1 : (uint32_t)ms;
  return 0;
}

/* Why the header NAME:VALUE h (a colon in it) cannot be sent, or NULL
 * (mcpp_http_header_problem). */
static const char *header_problem(const char *h, const char *colon) {
  return mcpp_http_header_problem(h, (size_t)(colon - h), colon + 1, strlen(colon + 1));
}

static const char *const TAKES[] = {
    "-c", "-i", "-W", "-w", "--log", "--config", "--connect-timeout",
    "--method", "-H", "--header", "--env", "--expect-tool", "--command", NULL};

static int takes_value(const char *flag) {
  for (const char *const *t = TAKES; *t; t++)
    if (!strcmp(*t, flag)) return 1;
  return 0;
}

static int parse_watch(mcpp_cli_options *o, int argc, const char *const *argv);
static int parse_wrap(mcpp_cli_options *o, int argc, const char *const *argv);

size_t mcpp_cli_problem_line(const mcpp_cli_options *o, char *buf, size_t cap) {
  int n = snprintf(buf, cap, "%s: %s\n", o->wrap_args ? "mcpping wrap" : "mcpping", o->error);
  return n < 0 ? 0 : (size_t)n;
}

void mcpp_cli_pair(const char *item, int header, size_t *name_len, const char **value,
                   size_t *value_len) {
  const char *sep = strchr(item, header ? ':' : '=');
  if (!sep) sep = item + strlen(item);
  *name_len = (size_t)(sep - item);
  const char *v = *sep ? sep + 1 : sep, *end = v + strlen(v);
  if (header) {
    while (*v && strchr(" \t\v\f", *v)) v++;
    while (end > v && strchr(" \t\v\f", end[-1])) end--;
  }
  *value = v;
  *value_len = (size_t)(end - v);
}

int mcpp_cli_immediate(const mcpp_cli_options *o, const char **out, char *err, size_t cap,
                       int *status) {
  const char *text;
  switch (o->mode) {
    case MCPP_CLI_HELP: text = USAGE; break;
    case MCPP_CLI_VERSION: text = "mcpping " MCPP_VERSION "\n"; break;
    case MCPP_CLI_WATCH_HELP: text = mcpp_watch_usage(); break;
    case MCPP_CLI_WRAP_HELP: text = mcpp_wrap_usage(); break;
    case MCPP_CLI_BAD_USAGE:
      *out = "";
      mcpp_cli_problem_line(o, err, cap);
      *status = MCPP_EXIT_USAGE;
      return 1;
    case MCPP_CLI_CHECK:
    case MCPP_CLI_CONFIG: {
      /* The records' file is opened (created) before anything is checked,
       * so a bad --log costs nothing and reads the same from both. */
      int fd = o->log ? open(o->log, O_WRONLY | O_APPEND | O_CREAT | MCPP__O_CLOEXEC, 0666) : -2;
      if (fd >= 0) close(fd);
      if (fd != -1) return 0;
      *out = "";
      snprintf(err, cap, "mcpping: cannot open log: %s\n", strerror(errno));
      *status = MCPP_EXIT_USAGE;
      return 1;
    }
    default: return 0;
  }
  *out = text;
  if (cap) err[0] = 0;
  *status = MCPP_EXIT_ALIVE;
  return 1;
}

int mcpp_cli_parse_versioned(int options_version, mcpp_cli_options *o, int argc,
                             const char *const *argv) {
  if (options_version != MCPP_CLI_OPTIONS_V1) return MCPP_ERR_INVALID_ARGUMENT;
  memset(o, 0, sizeof *o);
  o->version = options_version;
  if (argc > 0 && !strcmp(argv[0], "watch")) return parse_watch(o, argc - 1, argv + 1);
  if (argc > 0 && !strcmp(argv[0], "wrap")) return parse_wrap(o, argc - 1, argv + 1);
  o->mode = MCPP_CLI_CHECK;
  o->interval_ms = 1000;
  o->timeout_ms = 5000;
  o->connect_timeout_ms = CONNECT_TIMEOUT_MS;
  o->init = 1;
  int demo = 0, have_count = 0, have_deadline = 0, rc = 0;
  const char *not_wrap = NULL; /* the first argument --wrap/--unwrap refuse */
  for (int i = 0; i < argc && o->mode == MCPP_CLI_CHECK; i++) {
    const char *a = argv[i];
    if (!strcmp(a, "--")) {
      o->command = argv + i + 1;
      o->ncommand = (size_t)(argc - i - 1);
      if (!o->ncommand) return bad(o, "-- needs a COMMAND");
      break;
    }
    char flag[24];
    const char *attached = NULL;
    const char *eq = strchr(a, '=');
    if (a[0] == '-' && strchr("ciWwH", a[1]) && a[1] && a[2]) {
      /* Attached values, as ping(8) takes them: -c5, -i0.2. */
      snprintf(flag, sizeof flag, "-%c", a[1]);
      attached = a + 2;
    } else if (!strncmp(a, "--", 2) && eq && (size_t)(eq - a) < sizeof flag) {
      snprintf(flag, sizeof flag, "%.*s", (int)(eq - a), a);
      attached = eq + 1;
      if (!takes_value(flag)) return bad(o, "unknown option %s", a);
    } else {
      snprintf(flag, sizeof flag, "%s", a);
    }
    if (!strcmp(flag, "-h") || !strcmp(flag, "--help")) {
      o->mode = MCPP_CLI_HELP;
      return 0;
    }
    if (!strcmp(flag, "-V") || !strcmp(flag, "--version")) {
      o->mode = MCPP_CLI_VERSION;
      return 0;
    }
    if (!not_wrap && strcmp(flag, "--config") && strcmp(flag, "--command") &&
        strcmp(a, "--wrap") && strcmp(a, "--unwrap") && strcmp(a, "--write"))
      not_wrap = a;
    if (takes_value(flag)) {
      const char *v = attached;
      if (!v) {
        if (i + 1 >= argc) return bad(o, "%s needs a value", flag);
        v = argv[++i];
      }
      if (!strcmp(flag, "-c")) {
        if (count_value(o, flag, v, &o->count)) return 0;
        have_count = 1;
      } else if (!strcmp(flag, "-i")) {
        if (seconds_value(o, flag, v, 0, &o->interval_ms)) return 0;
      } else if (!strcmp(flag, "-W")) {
        if (seconds_value(o, flag, v, 0.001, &o->timeout_ms)) return 0;
      } else if (!strcmp(flag, "-w")) {
        if (seconds_value(o, flag, v, 0.001, &o->deadline_ms)) return 0;
        have_deadline = 1;
      } else if (!strcmp(flag, "--connect-timeout")) {
        if (seconds_value(o, flag, v, 0.001, &o->connect_timeout_ms)) return 0;
      } else if (!strcmp(flag, "--method")) {
        if (!strcmp(v, "auto")) o->method = MCPP_METHOD_AUTO;
        else if (!strcmp(v, "ping")) o->method = MCPP_METHOD_PING;
        else if (!strcmp(v, "discover")) o->method = MCPP_METHOD_DISCOVER;
        else if (!strcmp(v, "tools/list")) o->method = MCPP_METHOD_TOOLS_LIST;
        else
          return bad(o, "--method must be auto, ping, discover or tools/list, not '%s'", v);
      } else if (!strcmp(flag, "--log")) {
        if (!*v) return bad(o, "--log needs a value");
        o->log = v;
      } else if (!strcmp(flag, "--command")) {
        if (!*v) return bad(o, "--command needs a PATH");
        o->command_path = v;
      } else if (!strcmp(flag, "--config")) {
        if (!*v) return bad(o, "--config needs a FILE or auto");
        rc = push(&o->configs, &o->nconfigs, v);
      } else if (!strcmp(flag, "-H") || !strcmp(flag, "--header")) {
        const char *colon = strchr(v, ':'), *why = colon ? header_problem(v, colon) : NULL;
        if (!colon)
          return bad(o, "%s needs NAME:VALUE (a header name, a colon, a value), got '%s'", flag, v);
        if (why) return bad(o, "%s '%.*s' %s", flag, (int)(colon - v), v, why);
        rc = push(&o->headers, &o->nheaders, v);
      } else if (!strcmp(flag, "--env")) {
        const char *e = strchr(v, '=');
        if (!e || e == v)
          return bad(o, "--env needs NAME=VALUE, got '%s'", v);
        rc = push(&o->env, &o->nenv, v);
      } else {
        if (!*v) return bad(o, "--expect-tool needs a tool name");
        rc = push(&o->expect_tools, &o->nexpect_tools, v);
      }
      if (rc) return rc;
      continue;
    }
    if (!strcmp(a, "-q")) o->quiet = 1;
    else if (!strcmp(a, "--json")) o->json = 1;
    else if (!strcmp(a, "--no-init")) o->init = 0;
    else if (!strcmp(a, "--demo")) demo = 1;
    else if (!strcmp(a, "--wrap")) o->wrap = 1;
    else if (!strcmp(a, "--unwrap")) o->unwrap = 1;
    else if (!strcmp(a, "--write")) o->write = 1;
    else if (a[0] == '-') return bad(o, "unknown option %s", a);
    else if (strstr(a, "://") && !o->url) {
      /* Any scheme://: a URL, refused here if mcpping would not open it. */
      mcpp_http_url url;
      const char *problem = mcpp_http_url_parse(a, strlen(a), &url);
      if (problem) return bad(o, "the URL '%s' %s", a, problem);
      o->url = a;
    }
    else
      return bad(o, "unexpected argument '%s' (put a server command after --)", a);
  }
  if (o->mode != MCPP_CLI_CHECK) return 0;
  if ((o->ncommand > 0) + (o->url != NULL) + demo + (o->nconfigs > 0) > 1)
    return bad(o, "give one target: -- COMMAND, URL, --config, or --demo");
  if (o->wrap || o->unwrap) {
    /* A config rewrite takes one file and nothing of the check's. */
    if (not_wrap)
      return bad(o, "%s does not go with --wrap/--unwrap (%s)", not_wrap, WRAP_USAGE);
    if (o->wrap && o->unwrap)
      return bad(o, "give one of --wrap and --unwrap (%s)", WRAP_USAGE);
    if (o->nconfigs != 1 || !strcmp(o->configs[0], "auto"))
      return bad(o, "--wrap and --unwrap edit one --config FILE (%s)", WRAP_USAGE);
    if (o->command_path && !o->wrap) return bad(o, "--command PATH goes with --wrap");
    o->mode = MCPP_CLI_CONFIG;
    return 0;
  }
  if (o->write) return bad(o, "--write needs --wrap or --unwrap");
  if (o->command_path) return bad(o, "--command PATH goes with --wrap");
  if (o->nconfigs) {
    if (!o->init) return bad(o, "--config runs each server's handshake: drop --no-init");
    if (o->nheaders || o->nenv || o->nexpect_tools || o->method)
      return bad(o, "-H, --env, --expect-tool and --method check one server, not --config");
    o->mode = MCPP_CLI_CONFIG;
    if (!have_count) o->count = CONFIG_COUNT;
    if (!have_deadline) o->deadline_ms = CONFIG_DEADLINE_MS;
    return 0;
  }
  if (o->url) o->target = MCPP_CLI_HTTP;
  else if (o->ncommand) o->target = MCPP_CLI_STDIO;
  else o->target = MCPP_CLI_DEMO;
  if (o->nheaders && o->target != MCPP_CLI_HTTP)
    return bad(o, "-H is for a URL; a stdio server takes --env");
  if (o->nenv && o->target == MCPP_CLI_HTTP)
    return bad(o, "--env is for a server mcpping starts; a URL takes -H");
  if (o->target == MCPP_CLI_DEMO && !have_count) o->count = DEMO_COUNT;
  return 0;
}

void mcpp_cli_options_free(mcpp_cli_options *o) {
  free((void *)o->configs);
  free((void *)o->headers);
  free((void *)o->env);
  free((void *)o->expect_tools);
  o->configs = o->headers = o->env = o->expect_tools = NULL;
  o->nconfigs = o->nheaders = o->nenv = o->nexpect_tools = 0;
}

/* ---- mcpping watch (mcpping/watch.h) ---- */

#define WATCH_USAGE_LINE "usage: mcpping watch --config FILE|auto [--listen HOST:PORT] [options]"
#define WATCH_PORT 9464

static const char WATCH_USAGE[] =
    WATCH_USAGE_LINE "\n"
    "  Keeps every server of a client config under watch: stdio servers are\n"
    "  started and kept (restarted when stale or gone), HTTP servers connected;\n"
    "  serves Prometheus text on /metrics and a JSON view on /status.\n"
    "  --config FILE|auto   the client config (repeatable; auto: the usual places)\n"
    "  --listen HOST:PORT   where /metrics and /status are served (default\n"
    "                       127.0.0.1:9464; port 0 picks a free one); loopback only\n"
    "  --listen-any         allow a --listen address that is not loopback\n"
    "  -i, --interval SEC   keepalive: ping a server after SEC idle (default 15)\n"
    "  -W, --timeout SEC    per-ping timeout (default 5)\n"
    "  --failures N         failed pings in a row that make a server stale (default 3)\n"
    "  -h, --help           this text\n"
    "  SIGTERM or SIGINT stops every server and exits 0.\n";

const char *mcpp_watch_usage(void) { return WATCH_USAGE; }

static int setting_policy_u32(const char *name) {
  const mcpp_setting_info *s = mcpp_setting_find(name);
  return s ? (int)s->policy : 0;
}

/* A loopback host: localhost, 127.0.0.0/8, ::1. */
static int is_loopback(const char *h) {
  if (!strcmp(h, "localhost") || !strcmp(h, "::1")) return 1;
  if (strncmp(h, "127.", 4)) return 0;
  int dots = 0;
  for (const char *p = h; *p; p++) {
    if (*p == '.') dots++;
    else if (*p < '0' || *p > '9') return 0;
  }
  return dots == 3;
}

/* HOST:PORT, [V6]:PORT or :PORT (loopback) into o->listen_host/port. */
static int listen_value(mcpp_cli_options *o, const char *v) {
  const char *colon = strrchr(v, ':');
  if (!colon || !colon[1])
    return bad(o, "--listen needs HOST:PORT, got '%s'", v), -1;
  const char *h = v;
  size_t hn = (size_t)(colon - v);
  if (hn >= 2 && h[0] == '[' && h[hn - 1] == ']') h++, hn -= 2;
  else if (memchr(h, ':', hn))
    return bad(o, "--listen: write an IPv6 address in brackets, [::1]:PORT, not '%s'", v), -1;
  if (!is_integer(colon + 1))
    return bad(o, "--listen needs HOST:PORT with a port number, got '%s'", v), -1;
  long port = strtol(colon + 1, NULL, 10);
  if (port < 0 || port > 65535)
    return bad(o, "--listen: the port must be between 0 and 65535, not %ld", port), -1;
  if (hn >= sizeof o->listen_host)
    return bad(o, "--listen: the host is too long"), -1;
  if (hn == 0) snprintf(o->listen_host, sizeof o->listen_host, "127.0.0.1");
  else snprintf(o->listen_host, sizeof o->listen_host, "%.*s", (int)hn, h);
  o->listen_port = (int)port;
  return 0;
}

static int parse_watch(mcpp_cli_options *o, int argc, const char *const *argv) {
  o->mode = MCPP_CLI_WATCH;
  o->interval_ms = (uint32_t)setting_policy_u32("interval_ms");
  o->timeout_ms = (uint32_t)setting_policy_u32("timeout_ms");
  o->failures = (uint32_t)setting_policy_u32("failures");
  o->connect_timeout_ms = CONNECT_TIMEOUT_MS;
  o->init = 1;
  snprintf(o->listen_host, sizeof o->listen_host, "127.0.0.1");
  o->listen_port = WATCH_PORT;
  for (int i = 0; i < argc; i++) {
    const char *a = argv[i], *v = NULL;
    char flag[24];
    const char *eq = strchr(a, '=');
    if (!strncmp(a, "--", 2) && eq && (size_t)(eq - a) < sizeof flag) {
      snprintf(flag, sizeof flag, "%.*s", (int)(eq - a), a);
      v = eq + 1;
    } else if (a[0] == '-' && (a[1] == 'i' || a[1] == 'W') && a[2]) {
      snprintf(flag, sizeof flag, "-%c", a[1]);
      v = a + 2;
    } else {
      snprintf(flag, sizeof flag, "%s", a);
    }
    if (!strcmp(flag, "-h") || !strcmp(flag, "--help")) {
      o->mode = MCPP_CLI_WATCH_HELP;
      return 0;
    }
    if (!strcmp(a, "--listen-any")) {
      o->listen_any = 1;
      continue;
    }
    int takes = !strcmp(flag, "--config") || !strcmp(flag, "--listen") ||
                !strcmp(flag, "-i") || !strcmp(flag, "--interval") ||
                !strcmp(flag, "-W") || !strcmp(flag, "--timeout") ||
                !strcmp(flag, "--failures");
    if (!takes) {
      if (a[0] == '-') return bad(o, "watch: unknown option %s (%s)", a, WATCH_USAGE_LINE);
      return bad(o, "watch: unexpected argument '%s' (%s)", a, WATCH_USAGE_LINE);
    }
    if (!v) {
      if (i + 1 >= argc) return bad(o, "%s needs a value", flag);
      v = argv[++i];
    }
    if (!strcmp(flag, "--config")) {
      if (!*v) return bad(o, "--config needs a FILE or auto");
      int rc = push(&o->configs, &o->nconfigs, v);
      if (rc) return rc;
    } else if (!strcmp(flag, "--listen")) {
      if (listen_value(o, v)) return 0;
    } else if (!strcmp(flag, "-i") || !strcmp(flag, "--interval")) {
      if (seconds_value(o, flag, v, 0.01, &o->interval_ms)) return 0;
    } else if (!strcmp(flag, "-W") || !strcmp(flag, "--timeout")) {
      if (seconds_value(o, flag, v, 0.001, &o->timeout_ms)) return 0;
    } else {
      uint64_t n;
      if (count_value(o, flag, v, &n)) return 0;
      const mcpp_setting_info *f = mcpp_setting_find("failures");
      if (f && (double)n > f->max)
        return bad(o, "--failures must be between 1 and %.0f, not %llu", f->max,
                   (unsigned long long)n);
      o->failures = (uint32_t)n;
    }
  }
  if (!o->nconfigs) return bad(o, "watch needs --config FILE or auto (%s)", WATCH_USAGE_LINE);
  if (!o->listen_any && !is_loopback(o->listen_host))
    return bad(o, "--listen %s is not a loopback address: /metrics and /status would be "
                  "open to the network (add --listen-any to mean it)", o->listen_host);
  return 0;
}

/* ---- mcpping wrap (mcpping/wrap.h runs it) ---- */

#define WRAP_COMMAND_LINE "mcpping wrap [options] -- COMMAND [ARG...]"

static double policy_of(const char *name) {
  const mcpp_setting_info *s = mcpp_setting_find(name);
  return s ? s->policy : 0;
}

static char wrap_usage_text[1400];
static uv_once_t wrap_usage_once = UV_ONCE_INIT;

/* Built once, on whichever thread asks first (uv_once: the bindings may
 * ask from several): the defaults come from the settings table. */
static void build_wrap_usage(void) {
  snprintf(wrap_usage_text, sizeof wrap_usage_text,
        "usage: " WRAP_COMMAND_LINE "\n"
        "  Runs COMMAND as the MCP server of the client that launched us: every line\n"
        "  passes through unchanged, a server that goes stale or exits is restarted,\n"
        "  and the server never outlives the client.\n"
        "  -i, --interval SEC  keepalive: ping the server after SEC idle (default %g; 0 = off)\n"
        "  -W, --timeout SEC   per-ping timeout (default %g)\n"
        "  --failures N        failed pings in a row that make the server stale (default %g)\n"
        "  --no-restart        exit (status 1) when the server goes stale or exits\n"
        "                      (default: restart it, replaying the client's handshake)\n"
        "  --log FILE          append governance records (JSONL) to FILE\n"
        "  --metrics ADDR      Prometheus text on a loopback HOST:PORT (e.g. 127.0.0.1:9464)\n"
        "  --name NAME         the config entry's name: `server` in records and metrics\n"
        "  -h, --help          this text\n",
        policy_of("interval_ms") / 1000, policy_of("timeout_ms") / 1000, policy_of("failures"));
}

const char *mcpp_wrap_usage(void) {
  uv_once(&wrap_usage_once, build_wrap_usage);
  return wrap_usage_text;
}

/* One setting of wrap's in seconds (or a count), checked by the table. */
static int wrap_setting(mcpp_cli_options *o, const char *shown, const char *name, double v,
                        double low, const char *low_name, uint32_t *out) {
  double in_c;
  if (mcpp_setting_check(mcpp_setting_find(name), shown, v, MCPP_IN_SECONDS, low, low_name,
                         &in_c, o->error, sizeof o->error)) {
    o->mode = MCPP_CLI_BAD_USAGE;
    return -1;
  }
  *out = (uint32_t)in_c;
  return 0;
}

static int parse_wrap(mcpp_cli_options *o, int argc, const char *const *argv) {
  o->mode = MCPP_CLI_WRAP;
  o->wrap_args = 1;
  o->restart = 1;
  o->interval_ms = (uint32_t)policy_of("interval_ms");
  o->timeout_ms = (uint32_t)policy_of("timeout_ms");
  o->failures = (uint32_t)policy_of("failures");
  for (int i = 0; i < argc; i++) {
    const char *a = argv[i];
    if (!strcmp(a, "--")) {
      o->command = argv + i + 1;
      o->ncommand = (size_t)(argc - i - 1);
      break;
    }
    if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
      o->mode = MCPP_CLI_WRAP_HELP;
      return 0;
    }
    if (!strcmp(a, "--no-restart") || !strcmp(a, "--restart")) {
      o->restart = !strcmp(a, "--restart");
      continue;
    }
    int is_interval = !strcmp(a, "-i") || !strcmp(a, "--interval");
    int is_timeout = !strcmp(a, "-W") || !strcmp(a, "--timeout");
    if (!is_interval && !is_timeout && strcmp(a, "--failures") && strcmp(a, "--log") &&
        strcmp(a, "--metrics") && strcmp(a, "--name"))
      return bad(o, "unknown option %s (put the server command after --)", a);
    if (i + 1 >= argc) return bad(o, "%s needs a value", a);
    const char *v = argv[++i];
    if (is_interval || is_timeout) {
      if (!is_number(v)) return bad(o, "%s needs a number, got '%s'", a, v);
      double d = strtod(v, NULL);
      if (!isfinite(d)) return bad(o, "%s needs a finite number, got '%s'", a, v);
      /* wrap has no --min-interval: the floor is the library's. */
      if (is_interval ? wrap_setting(o, "--interval", "interval_ms", d,
                                     policy_of("min_interval_ms") / 1000, "min_interval",
                                     &o->interval_ms)
                      : wrap_setting(o, "--timeout", "timeout_ms", d, NAN, NULL, &o->timeout_ms))
        return 0;
    } else if (!strcmp(a, "--failures")) {
      if (!is_integer(v)) return bad(o, "--failures needs an integer, got '%s'", v);
      if (wrap_setting(o, "--failures", "failures", strtod(v, NULL), NAN, NULL, &o->failures))
        return 0;
    } else if (!strcmp(a, "--log")) {
      o->log = v;
    } else if (!strcmp(a, "--metrics")) {
      o->metrics = v;
    } else {
      if (!*v) return bad(o, "--name needs a non-empty value");
      o->name = v;
    }
  }
  if (!o->ncommand) return bad(o, "a server command is required: " WRAP_COMMAND_LINE);
  return 0;
}
