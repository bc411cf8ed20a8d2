/*
 * An HTTP/1.1 response, parsed as its bytes come (http_response.h). What
 * is not body (the head, a chunk's size line, its CRLF, a trailer line) is
 * gathered in one bounded buffer until its line ends; body bytes are given
 * as spans of what was fed, never copied.
 */
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "internal.h"

typedef enum state {
  HEAD,       /* reading the head, up to its blank line */
  LENGTH,     /* a body of known length; left: what remains */
  SIZE,       /* a chunk's size line */
  CHUNK,      /* a chunk's data; left: what remains */
  CHUNK_CRLF, /* the CRLF after a chunk's data */
  TRAILER,    /* trailer lines, up to the blank one */
  UNTIL_CLOSE,
  DONE
} state;

typedef struct header {
  size_t name, value; /* offsets into text, NUL-terminated */
} header;

struct mcpp_http_response {
  const mcpp_allocator *alloc;
  state state;
  uint64_t left;
  char *line; /* what is gathered (head or line), its end not yet seen */
  size_t len, cap;
  int status;
  int keep_alive, until_close;
  char *text; /* the headers: lower-case name, NUL, joined value, NUL, ... */
  header headers[MCPP_HTTP_HEADERS_MAX];
  size_t n_headers;
  int error;
  char problem[256];
};

mcpp_http_response *mcpp_http_response_new(void) {
  const mcpp_allocator *a = mcpp_default_allocator();
  mcpp_http_response *r = mcpp__malloc(a, sizeof *r);
  if (r == NULL) return NULL;
  memset(r, 0, sizeof *r);
  r->alloc = a;
  return r;
}

void mcpp_http_response_free(mcpp_http_response *r) {
  if (r == NULL) return;
  mcpp__free(r->alloc, r->line);
  mcpp__free(r->alloc, r->text);
  mcpp__free(r->alloc, r);
}

static int is_space(char c) { return c == ' ' || c == '\t'; }
/* Python's bytes.split() white space: the status line is split as http.client splits it. */
static int is_ws(char c) { return is_space(c) || (c >= '\n' && c <= '\r'); }
static int is_digit(char c) { return c >= '0' && c <= '9'; }

/* The first CRLF in [p, end), or end. */
static const char *crlf(const char *p, const char *end) {
  while (p + 1 < end && !(p[0] == '\r' && p[1] == '\n')) p++;
  return p + 1 < end ? p : end;
}

static void trim(const char **p, size_t *n) {
  while (*n && (is_space(**p) || **p == '\r' || **p == '\n')) (*p)++, (*n)--;
  while (*n && (is_space((*p)[*n - 1]) || (*p)[*n - 1] == '\r' || (*p)[*n - 1] == '\n')) (*n)--;
}


/* Whether needle (lower case) is in s, ASCII case ignored. */
static int contains(const char *s, const char *needle) {
  size_t n = strlen(needle), sn = strlen(s);
  for (size_t i = 0; i + n <= sn; i++)
    if (mcpp__same_token(s + i, needle, n)) return 1;
  return 0;
}

/* Refuses the answer: why, with up to 40 bytes of what was wrong, escaped. */
static int not_http(mcpp_http_response *r, const char *why, const char *p, size_t n) {
  char excerpt[4 * 40 + 1];
  size_t at = 0;
  for (size_t i = 0; i < n && i < 40; i++) {
    unsigned char c = (unsigned char)p[i];
    if (c >= 0x20 && c < 0x7f && c != '"' && c != '\\')
      excerpt[at++] = (char)c;
    else
      at += (size_t)snprintf(excerpt + at, sizeof excerpt - at, "\\x%02x", c);
  }
  excerpt[at] = '\0';
  snprintf(r->problem, sizeof r->problem, "%s: \"%s\"", why, excerpt);
  return r->error = MCPP_ERR_NOT_HTTP;
}

const char *mcpp_http_response_header(const mcpp_http_response *r, const char *lower_name) {
  for (size_t i = 0; i < r->n_headers; i++)
    if (strcmp(r->text + r->headers[i].name, lower_name) == 0) return r->text + r->headers[i].value;
  return NULL;
}

/* One line of the head after the status line, as a record for joining. */
typedef struct field {
  const char *name, *value;
  size_t name_len, value_len;
  size_t key;  /* which header it belongs to */
  int folded;  /* an obsolete folded line: its header's value goes on */
} field;

/* The headers of head's lines into r->text: each name once, in lower
 * case, its lines' values joined (", " between repeats, " " for a fold). */
static int keep_headers(mcpp_http_response *r, field *f, size_t n, size_t head_len) {
  r->text = mcpp__malloc(r->alloc, head_len + 4 * n + 1);
  if (r->text == NULL) return r->error = MCPP_ERR_NOMEM;
  size_t at = 0;
  for (size_t k = 0; k < r->n_headers; k++) {
    size_t first = 0;
    while (f[first].key != k || f[first].folded) first++;
    r->headers[k].name = at;
    for (size_t i = 0; i < f[first].name_len; i++)
      r->text[at++] = (char)mcpp__lower_ascii((unsigned char)f[first].name[i]);
    r->text[at++] = '\0';
    r->headers[k].value = at;
    for (size_t i = first; i < n; i++) {
      if (f[i].key != k) continue;
      if (i != first) {
        if (!f[i].folded) r->text[at++] = ',';
        r->text[at++] = ' ';
      }
      memcpy(r->text + at, f[i].value, f[i].value_len);
      at += f[i].value_len;
    }
    r->text[at++] = '\0';
  }
  return 0;
}

/* Splits the head's header lines into fields and names their headers. */
static int read_fields(mcpp_http_response *r, const char *p, const char *end, field *f,
                       size_t *count) {
  size_t n = 0;
  while (p < end) {
    const char *eol = crlf(p, end);
    if (n == MCPP_HTTP_HEADERS_MAX) return not_http(r, "more than 100 headers", p, (size_t)(eol - p));
    field *x = &f[n];
    if (is_space(*p) && n > 0) {
      x->value = p;
      x->value_len = (size_t)(eol - p);
      trim(&x->value, &x->value_len);
      x->folded = 1;
      x->key = f[n - 1].key;
    } else {
      const char *colon = memchr(p, ':', (size_t)(eol - p));
      if (colon == NULL) return not_http(r, "not a header line", p, (size_t)(eol - p));
      x->name = p;
      x->name_len = (size_t)(colon - p);
      trim(&x->name, &x->name_len);
      x->value = colon + 1;
      x->value_len = (size_t)(eol - colon - 1);
      trim(&x->value, &x->value_len);
      x->folded = 0;
      x->key = r->n_headers;
      for (size_t i = 0; i < n; i++)
        if (!f[i].folded && f[i].name_len == x->name_len &&
            mcpp__same_token(f[i].name, x->name, x->name_len)) {
          x->key = f[i].key;
          break;
        }
      if (x->key == r->n_headers) r->n_headers++;
    }
    n++;
    if (eol == end) break;
    p = eol + 2;
  }
  *count = n;
  return 0;
}

/* The status line: "HTTP/1.x", white space, three digits. */
static int read_status(mcpp_http_response *r, const char *p, size_t n, int *http11) {
  size_t i = 0, v0, v1, s0;
  while (i < n && is_ws(p[i])) i++;
  v0 = i;
  while (i < n && !is_ws(p[i])) i++;
  v1 = i;
  while (i < n && is_ws(p[i])) i++;
  s0 = i;
  while (i < n && !is_ws(p[i])) i++;
  if (v1 - v0 < 7 || memcmp(p + v0, "HTTP/1.", 7) != 0 || i - s0 != 3 ||
      !is_digit(p[s0]) || !is_digit(p[s0 + 1]) ||
      !is_digit(p[s0 + 2]))
    return not_http(r, "not an HTTP/1.1 status line", p, n);
  *http11 = v1 - v0 == 8 && p[v0 + 7] == '1';
  return (p[s0] - '0') * 100 + (p[s0 + 1] - '0') * 10 + (p[s0 + 2] - '0');
}

/* How the body is framed, by the head just read. */
static int frame_body(mcpp_http_response *r) {
  const char *coding = mcpp_http_response_header(r, "transfer-encoding");
  const char *length = mcpp_http_response_header(r, "content-length");
  if (r->status == 204 || r->status == 304) {
    r->state = DONE;
  } else if (coding != NULL && *coding != '\0') {
    const char *last = strrchr(coding, ',');
    last = last ? last + 1 : coding;
    size_t n = strlen(last);
    trim(&last, &n);
    r->state = n == 7 && mcpp__same_token(last, "chunked", 7) ? SIZE : UNTIL_CLOSE;
  } else if (length != NULL) {
    const char *comma = strchr(length, ',');
    size_t n = comma ? (size_t)(comma - length) : strlen(length);
    trim(&length, &n);
    r->left = 0;
    for (size_t i = 0; i < n; i++) {
      if (!is_digit(length[i]) || n > 18)
        return not_http(r, "a bad Content-Length", length, n);
      r->left = r->left * 10 + (uint64_t)(length[i] - '0');
    }
    if (n == 0) return not_http(r, "a bad Content-Length", length, n);
    r->state = r->left ? LENGTH : DONE;
  } else {
    r->state = UNTIL_CLOSE;
  }
  r->until_close = r->state == UNTIL_CLOSE;
  if (r->until_close) r->keep_alive = 0;
  return 0;
}

/* A whole head (its blank line cut off). An interim answer leaves the
 * parser reading the next head. */
static int read_head(mcpp_http_response *r, const char *p, size_t n) {
  const char *eol = crlf(p, p + n);
  int http11 = 0;
  int status = read_status(r, p, (size_t)(eol - p), &http11);
  if (status < 0) return status;
  if (status >= 100 && status < 200 && status != 101) return 0;
  field f[MCPP_HTTP_HEADERS_MAX];
  size_t count = 0;
  r->n_headers = 0;
  int rc = read_fields(r, eol + 2 < p + n ? eol + 2 : p + n, p + n, f, &count);
  if (rc == 0) rc = keep_headers(r, f, count, n);
  if (rc != 0) return rc;
  r->status = status;
  const char *connection = mcpp_http_response_header(r, "connection");
  if (connection == NULL) connection = "";
  r->keep_alive = http11 ? !contains(connection, "close") : contains(connection, "keep-alive");
  return frame_body(r);
}

/* A chunk's size line: hex digits, maybe ";extensions". */
static int read_size(mcpp_http_response *r, const char *p, size_t n) {
  const char *semi = memchr(p, ';', n);
  size_t len = semi ? (size_t)(semi - p) : n;
  trim(&p, &len);
  r->left = 0;
  for (size_t i = 0; i < len; i++) {
    int c = mcpp__lower_ascii((unsigned char)p[i]);
    if (!(is_digit((char)c) || (c >= 'a' && c <= 'f')) || len > 15)
      return not_http(r, "a bad chunk size", p, len);
    r->left = r->left * 16 + (uint64_t)(c <= '9' ? c - '0' : c - 'a' + 10);
  }
  if (len == 0) return not_http(r, "a bad chunk size", p, len);
  r->state = r->left ? CHUNK : TRAILER;
  return 0;
}

/* A line (or, in HEAD, the head) whose end was just seen. */
static int read_line(mcpp_http_response *r, const char *p, size_t n) {
  switch (r->state) {
    case HEAD: return read_head(r, p, n);
    case SIZE: return read_size(r, p, n);
    case CHUNK_CRLF:
      if (n) return not_http(r, "a chunk longer than its size", p, n);
      r->state = SIZE;
      return 0;
    default: /* TRAILER: dropped; the blank line ends the body */
      if (n == 0) r->state = DONE;
      return 0;
  }
}

/* Gathers bytes of a line (the head's up to its blank line) from data;
 * returns how many it took, and *whole once the end was seen. */
static size_t gather(mcpp_http_response *r, const char *data, size_t n, int *whole) {
  const char *end = r->state == HEAD ? "\r\n\r\n" : "\r\n";
  size_t k = strlen(end), took = 0;
  *whole = 0;
  while (took < n && !*whole) {
    const char *nl = memchr(data + took, '\n', n - took);
    size_t take = nl ? (size_t)(nl - data - took) + 1 : n - took;
    if (r->len + take > r->cap) {
      size_t cap = r->cap ? r->cap : 256;
      while (cap < r->len + take) cap *= 2;
      if (cap > MCPP_HTTP_HEAD_MAX + 8) cap = MCPP_HTTP_HEAD_MAX + 8;
      if (r->len + take > cap) take = cap - r->len, nl = NULL; /* the LF is not taken */
      char *grown = mcpp__realloc(r->alloc, r->line, cap);
      if (grown == NULL) {
        r->error = MCPP_ERR_NOMEM;
        return took;
      }
      r->line = grown;
      r->cap = cap;
    }
    memcpy(r->line + r->len, data + took, take);
    r->len += take;
    took += take;
    if (nl && (r->len < 2 || r->line[r->len - 2] != '\r')) {
      /* As llhttp (Node) refuses it: a line that will never end in CRLF. */
      not_http(r, "a line that ends in LF without CR", r->line, r->len);
      return took;
    }
    *whole = r->len >= k && memcmp(r->line + r->len - k, end, k) == 0;
    if (!*whole && r->len > MCPP_HTTP_HEAD_MAX) {
      not_http(r, "a line without end", r->line, r->len);
      return took;
    }
  }
  return took;
}

int mcpp_http_response_feed(mcpp_http_response *r, const char *data, size_t n,
                            mcpp_http_part_fn fn, void *arg) {
  size_t at = 0;
  while (r->error == 0 && at < n) {
    state s = r->state;
    if (s == DONE) {
      r->keep_alive = 0; /* bytes past the answer: no next answer can be told apart */
      break;
    }
    if (s == LENGTH || s == CHUNK || s == UNTIL_CLOSE) {
      size_t take = n - at;
      if (s != UNTIL_CLOSE && r->left < take) take = (size_t)r->left;
      fn(arg, MCPP_HTTP_PART_BODY, data + at, take);
      at += take;
      if (s == UNTIL_CLOSE || (r->left -= take) > 0) continue;
      r->state = s == LENGTH ? DONE : CHUNK_CRLF;
      if (r->state == DONE) fn(arg, MCPP_HTTP_PART_END, NULL, 0);
      continue;
    }
    int whole;
    at += gather(r, data + at, n - at, &whole);
    if (!whole) continue;
    size_t len = r->len - (s == HEAD ? 4 : 2);
    r->len = 0;
    if (read_line(r, r->line, len) != 0) break;
    if (s == HEAD && r->state != HEAD) fn(arg, MCPP_HTTP_PART_HEAD, NULL, 0);
    if (r->state == DONE) fn(arg, MCPP_HTTP_PART_END, NULL, 0);
  }
  return r->error;
}

int mcpp_http_response_closed(mcpp_http_response *r) {
  if (r->state != UNTIL_CLOSE && r->state != DONE) return 0;
  r->state = DONE;
  return 1;
}

const char *mcpp_http_response_problem(const mcpp_http_response *r) { return r->problem; }
int mcpp_http_response_status(const mcpp_http_response *r) { return r->status; }
size_t mcpp_http_response_header_count(const mcpp_http_response *r) { return r->n_headers; }

void mcpp_http_response_header_at(const mcpp_http_response *r, size_t i, const char **name,
                                  const char **value) {
  *name = i < r->n_headers ? r->text + r->headers[i].name : NULL;
  *value = i < r->n_headers ? r->text + r->headers[i].value : NULL;
}

int mcpp_http_response_started(const mcpp_http_response *r) { return r->state != HEAD; }
int mcpp_http_response_ended(const mcpp_http_response *r) { return r->state == DONE; }
int mcpp_http_response_keep_alive(const mcpp_http_response *r) { return r->keep_alive; }
int mcpp_http_response_until_close(const mcpp_http_response *r) { return r->until_close; }
