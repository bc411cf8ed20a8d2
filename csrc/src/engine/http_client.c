/* What a Streamable HTTP client sends and how it reads what comes back
 * (see rules.h): the headers of each request, the way each answer's body
 * is read, the frames sent again on a new session. The bindings run the
 * HTTP; these rules are the same for both. */
#include <stdio.h>
#include <string.h>

#include "internal.h"
#include "scan.h"

const char *mcpp_http_method_name(mcpp_http_method method) {
  switch (method) {
    case MCPP_HTTP_POST: return "POST";
    case MCPP_HTTP_GET: return "GET";
    default: return "DELETE";
  }
}


/* ASCII case-insensitive equality: HTTP header names, media types, hosts. */
int mcpp__same_token(const char *a, const char *b, size_t n) {
  for (size_t i = 0; i < n; i++)
    if (mcpp__lower_ascii((unsigned char)a[i]) != mcpp__lower_ascii((unsigned char)b[i])) return 0;
  return 1;
}

/* RFC 9110 tchar. */
static int is_tchar(unsigned char c) {
  return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
         (c != '\0' && strchr("!#$%&'*+-.^_`|~", c) != NULL);
}

/* Whether the UTF-8 text s (n bytes) is all Latin-1 (U+0000..U+00FF). */
static int is_latin1(const char *s, size_t n) {
  const unsigned char *p = (const unsigned char *)s;
  for (size_t i = 0; i < n; i++) {
    if (p[i] < 0x80) continue;
    if ((p[i] != 0xc2 && p[i] != 0xc3) || i + 1 == n || (p[i + 1] & 0xc0) != 0x80) return 0;
    i++;
  }
  return 1;
}

const char *mcpp_http_header_problem(const char *name, size_t name_len, const char *value,
                                     size_t value_len) {
  if (name == NULL || name_len == 0) return "is not an HTTP header name (it is empty)";
  for (size_t i = 0; i < name_len; i++)
    if (!is_tchar((unsigned char)name[i]))
      return "is not an HTTP header name (letters, digits and !#$%&'*+-.^_`|~ only)";
  for (size_t i = 0; value != NULL && i < value_len; i++) {
    unsigned char c = (unsigned char)value[i];
    if ((c < 0x20 && c != '\t') || c == 0x7f)
      return "has a control character in its value (CR, LF and the like would split the request)";
  }
  /* node:http throws at the request, http.client too: refused up front. */
  if (value != NULL && !is_latin1(value, value_len))
    return "has a character past Latin-1 in its value (HTTP sends a header value a byte a "
           "character)";
  return NULL;
}

static const char *const own_names[] = {"Content-Type", "Accept", "Mcp-Session-Id",
                                        "MCP-Protocol-Version"};

static int is_own(const char *name) {
  size_t n = strlen(name);
  for (size_t i = 0; i < sizeof own_names / sizeof own_names[0]; i++)
    if (strlen(own_names[i]) == n && mcpp__same_token(name, own_names[i], n)) return 1;
  return 0;
}

static void add(mcpp_http_header *out, size_t cap, size_t *n, const char *name,
                const char *value) {
  if (*n < cap) out[*n] = (mcpp_http_header){name, value};
  (*n)++;
}

size_t mcpp_http_request_headers(mcpp_http_method method, const mcpp_http_header *extra,
                                 size_t n_extra, const char *session, const char *version,
                                 mcpp_http_header *out, size_t cap) {
  size_t n = 0;
  /* mcpping's own win: the session and the protocol are the client's, and
   * a caller's Accept would keep the server from answering with SSE. */
  for (size_t i = 0; i < n_extra; i++)
    if (extra[i].name != NULL && extra[i].value != NULL && !is_own(extra[i].name))
      add(out, cap, &n, extra[i].name, extra[i].value);
  if (method == MCPP_HTTP_POST) {
    add(out, cap, &n, "Content-Type", "application/json");
    add(out, cap, &n, "Accept", "application/json, text/event-stream");
  } else if (method == MCPP_HTTP_GET) {
    add(out, cap, &n, "Accept", "text/event-stream");
  }
  if (session != NULL && session[0] != '\0') add(out, cap, &n, "Mcp-Session-Id", session);
  if (version != NULL && version[0] != '\0') add(out, cap, &n, "MCP-Protocol-Version", version);
  return n;
}

/* 1 if the Content-Type's media type (before any ';', blanks around it
 * ignored) is text/event-stream. */
static int is_event_stream(const char *type) {
  static const char want[] = "text/event-stream";
  if (type == NULL) return 0;
  while (*type == ' ' || *type == '\t') type++;
  size_t n = strcspn(type, ";");
  while (n > 0 && (type[n - 1] == ' ' || type[n - 1] == '\t')) n--;
  return n == sizeof want - 1 && mcpp__same_token(type, want, n);
}

mcpp_http_body mcpp_http_body_kind(mcpp_http_method method, int status,
                                   const char *content_type) {
  switch (method) {
    case MCPP_HTTP_DELETE: return MCPP_HTTP_BODY_NONE;
    case MCPP_HTTP_GET:
      /* A listening stream is a 200 event stream; anything else opens none. */
      return status == 200 && is_event_stream(content_type) ? MCPP_HTTP_BODY_SSE
                                                            : MCPP_HTTP_BODY_ERROR;
    default:
      if (status < 200 || status > 299) return MCPP_HTTP_BODY_ERROR;
      if (is_event_stream(content_type)) return MCPP_HTTP_BODY_SSE;
      return status == 202 ? MCPP_HTTP_BODY_NONE : MCPP_HTTP_BODY_JSON;
  }
}

const char *mcpp_http_body_name(mcpp_http_body body) {
  switch (body) {
    case MCPP_HTTP_BODY_SSE: return "sse";
    case MCPP_HTTP_BODY_JSON: return "json";
    case MCPP_HTTP_BODY_NONE: return "none";
    default: return "error";
  }
}

int mcpp_http_resends(const char *frame, size_t len) {
  return mcpp__is_ping_request(frame, len);
}

/* Where a request's bytes go, snprintf-style: len counts all, out gets
 * what fits. */
typedef struct writer {
  char *out;
  size_t cap, len;
} writer;

static void put_byte(writer *w, char c) {
  if (w->len < w->cap) w->out[w->len] = c;
  w->len++;
}

static void put(writer *w, const char *s, size_t n) {
  for (size_t i = 0; i < n; i++) put_byte(w, s[i]);
}

/* A line of the head from its parts: a byte a character when every part
 * is Latin-1 (as node:http and http.client send a head), else the UTF-8
 * it is. */
static void put_line(writer *w, const char *const *parts, size_t n) {
  int latin1 = 1;
  for (size_t i = 0; i < n; i++) latin1 = latin1 && is_latin1(parts[i], strlen(parts[i]));
  for (size_t i = 0; i < n; i++)
    for (const unsigned char *p = (const unsigned char *)parts[i]; *p; p++)
      if (latin1 && *p >= 0x80) {
        put_byte(w, (char)(((p[0] & 0x03) << 6) | (p[1] & 0x3f)));
        p++;
      } else {
        put_byte(w, (char)*p);
      }
  put(w, "\r\n", 2);
}

size_t mcpp_http_request_bytes(const mcpp_http_do *d, char *out, size_t cap) {
  writer w = {out, cap, 0};
  const char *method = mcpp_http_method_name((mcpp_http_method)d->method);
  put_line(&w, (const char *const[]){method, " ", d->target, " HTTP/1.1"}, 4);
  char port[16] = "";
  if (d->port != (d->https ? 443u : 80u)) snprintf(port, sizeof port, ":%u", d->port);
  int v6 = strchr(d->host, ':') != NULL;
  put_line(&w, (const char *const[]){"Host: ", v6 ? "[" : "", d->host, v6 ? "]" : "", port}, 5);
  for (size_t i = 0; i < d->n_headers; i++)
    put_line(&w, (const char *const[]){d->headers[i].name, ": ", d->headers[i].value}, 3);
  if (d->data != NULL) {
    char length[32];
    snprintf(length, sizeof length, "%zu", d->len);
    put_line(&w, (const char *const[]){"Content-Length: ", length}, 2);
  }
  put(&w, "\r\n", 2);
  if (d->data != NULL) put(&w, d->data, d->len);
  return w.len;
}
