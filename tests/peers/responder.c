/*
 * responder: the one stdio MCP server every benchmark talks to. It answers
 * pings as fast as it can with no JSON parser, and it is a proper enough
 * MCP server for the official SDK clients: it answers initialize (echoing the requested protocol
 * version), tools/list (one tool, "blob") and tools/call ("blob" returns a
 * text content of arguments.bytes bytes), ignores notifications and
 * responses, and answers any other request with -32601.
 *
 *   responder [--pidfile PATH] [--ping-client N]
 *
 * --ping-client N: after every Nth tools/call it answers, it also pings the
 * client (ids "srv-1", "srv-2"...; the answers are ignored like any
 * response), for the host-mode hand-off soak.
 *
 * Built by the Makefile as build/responder.
 */
#define _GNU_SOURCE
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static char out[1 << 16];
static size_t out_len;

static void flush_out(void) {
  size_t off = 0;
  while (off < out_len) {
    ssize_t n = write(1, out + off, out_len - off);
    if (n <= 0) {
      if (n < 0) perror("responder: write");
      exit(0);
    }
    off += (size_t)n;
  }
  out_len = 0;
}

static void put(const char *p, size_t n) {
  if (out_len + n > sizeof out) flush_out();
  if (n > sizeof out) {
    while (n) {
      ssize_t w = write(1, p, n);
      if (w <= 0) exit(0);
      p += w;
      n -= (size_t)w;
    }
    return;
  }
  memcpy(out + out_len, p, n);
  out_len += n;
}

static void puts_(const char *s) { put(s, strlen(s)); }

/* Returns the end of the raw JSON value (string or number) starting at p. */
static const char *value_end(const char *p, const char *end) {
  if (p < end && *p == '"') {
    for (p++; p < end && *p != '"'; p++)
      if (*p == '\\') p++;
    return p < end ? p + 1 : end;
  }
  while (p < end && *p != ',' && *p != '}' && *p != ' ') p++;
  return p;
}

/* Finds "key": in the line and returns the start of its value, or NULL. */
static const char *find_value(const char *line, const char *end, const char *key) {
  char pat[64];
  int n = snprintf(pat, sizeof pat, "\"%s\":", key);
  const char *p = memmem(line, (size_t)(end - line), pat, (size_t)n);
  if (!p) return NULL;
  p += n;
  while (p < end && *p == ' ') p++;
  return p;
}

static int method_is(const char *m, const char *end, const char *name) {
  size_t n = strlen(name);
  return m && end - m >= (ptrdiff_t)n + 2 && m[0] == '"' && memcmp(m + 1, name, n) == 0 &&
         m[n + 1] == '"';
}

static void reply_head(const char *id, const char *id_end_) {
  puts_("{\"jsonrpc\":\"2.0\",\"id\":");
  put(id, (size_t)(id_end_ - id));
}

static void blob(const char *id, const char *ide, size_t bytes) {
  static char chunk[1 << 16];
  if (!chunk[0]) memset(chunk, 'x', sizeof chunk);
  reply_head(id, ide);
  puts_(",\"result\":{\"content\":[{\"type\":\"text\",\"text\":\"");
  while (bytes) {
    size_t n = bytes < sizeof chunk ? bytes : sizeof chunk;
    put(chunk, n);
    bytes -= n;
  }
  puts_("\"}],\"isError\":false}}\n");
}

static unsigned long ping_client_every, calls, client_pings;

static void handle(const char *line, size_t len) {
  const char *end = line + len;
  const char *m = find_value(line, end, "method");
  const char *id = find_value(line, end, "id");
  if (!m || !id) return; /* a notification or a response: nothing to say */
  const char *ide = value_end(id, end);
  if (method_is(m, end, "ping")) {
    reply_head(id, ide);
    puts_(",\"result\":{}}\n");
  } else if (method_is(m, end, "initialize")) {
    const char *v = find_value(line, end, "protocolVersion");
    reply_head(id, ide);
    puts_(",\"result\":{\"protocolVersion\":");
    if (v && *v == '"')
      put(v, (size_t)(value_end(v, end) - v));
    else
      puts_("\"2025-11-25\"");
    puts_(",\"capabilities\":{\"tools\":{}},"
          "\"serverInfo\":{\"name\":\"responder\",\"version\":\"0.1.0\"}}}\n");
  } else if (method_is(m, end, "tools/list")) {
    reply_head(id, ide);
    puts_(",\"result\":{\"tools\":[{\"name\":\"blob\",\"description\":\"returns N bytes of text\","
          "\"inputSchema\":{\"type\":\"object\",\"properties\":{\"bytes\":{\"type\":\"integer\"}}}}]}}\n");
  } else if (method_is(m, end, "tools/call")) {
    const char *b = find_value(line, end, "bytes");
    blob(id, ide, b ? (size_t)strtoull(b, NULL, 10) : 0);
    if (ping_client_every && ++calls % ping_client_every == 0) {
      char ping[80];
      snprintf(ping, sizeof ping,
               "{\"jsonrpc\":\"2.0\",\"id\":\"srv-%lu\",\"method\":\"ping\"}\n",
               ++client_pings);
      puts_(ping);
    }
  } else {
    reply_head(id, ide);
    puts_(",\"error\":{\"code\":-32601,\"message\":\"Method not found\"}}\n");
  }
}

int main(int argc, char **argv) {
  for (int i = 1; i + 1 < argc; i++) {
    if (strcmp(argv[i], "--pidfile") == 0) {
      FILE *f = fopen(argv[i + 1], "w");
      if (f) {
        fprintf(f, "%d\n", (int)getpid());
        fclose(f);
      }
    } else if (strcmp(argv[i], "--ping-client") == 0) {
      ping_client_every = strtoul(argv[i + 1], NULL, 10);
    }
  }
  size_t cap = 1 << 16, len = 0;
  char *buf = malloc(cap);
  if (!buf) return 1;
  for (;;) {
    if (len == cap) {
      cap *= 2;
      buf = realloc(buf, cap);
      if (!buf) return 1;
    }
    ssize_t n = read(0, buf + len, cap - len);
    if (n <= 0) break;
    len += (size_t)n;
    size_t start = 0;
    char *nl;
    while ((nl = memchr(buf + start, '\n', len - start))) {
      size_t l = (size_t)(nl - (buf + start));
      if (l && buf[start + l - 1] == '\r') l--;
      handle(buf + start, l);
      start = (size_t)(nl - buf) + 1;
    }
    memmove(buf, buf + start, len - start);
    len -= start;
    flush_out();
  }
  flush_out();
  free(buf);
  return 0;
}
