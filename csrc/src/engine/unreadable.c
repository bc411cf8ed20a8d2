/* Lines from the peer that are not JSON-RPC messages: the engine counts
 * them and keeps the opening of the first, so a handshake that times out
 * can say why (a server that writes a byte order mark, its logs, another
 * framing, or its answer without a newline to stdout otherwise fails with
 * no word of it). */
#include <stdio.h>
#include <string.h>

#include "engine.h"

/* The bytes of a line the sentence shows (MCPP_UNREADABLE_KEPT keeps one
 * more, so it knows whether to add "..."). */
#define SHOWN (MCPP_UNREADABLE_KEPT - 1)
/* The kept length is stored in the copy's first byte. */
_Static_assert(MCPP_UNREADABLE_KEPT <= 255, "the kept length fits a byte");

void mcpp__note_unreadable(mcpp_engine *e, const char *frame, size_t len) {
  if (e->unreadable++ > 0) return;
  size_t kept = len > MCPP_UNREADABLE_KEPT ? MCPP_UNREADABLE_KEPT : len;
  /* Out of memory: counted, not shown. */
  e->unreadable_first = mcpp__malloc(e->alloc, 1 + kept);
  if (e->unreadable_first == NULL) return;
  e->unreadable_first[0] = (unsigned char)kept;
  if (kept) memcpy(e->unreadable_first + 1, frame, kept);
}

uint64_t mcpp_engine_unreadable(const mcpp_engine *e, const char **first,
                                size_t *len) {
  const unsigned char *kept = e ? e->unreadable_first : NULL;
  if (first) *first = kept ? (const char *)kept + 1 : NULL;
  if (len) *len = kept ? kept[0] : 0;
  return e ? e->unreadable : 0;
}

/* How long the UTF-8 sequence at p is (2..4), or 0 if it is not one
 * (RFC 3629: no overlong form, no surrogate, nothing past U+10FFFF). */
static size_t utf8_length(const unsigned char *p, size_t n) {
  size_t need = p[0] >= 0xf0 && p[0] <= 0xf4   ? 4
                : p[0] >= 0xe0 && p[0] <= 0xef ? 3
                : p[0] >= 0xc2 && p[0] <= 0xdf ? 2
                                               : 0;
  if (need == 0 || need > n) return 0;
  /* The second byte's range narrows after four leads. */
  unsigned char lo = p[0] == 0xe0 ? 0xa0 : p[0] == 0xf0 ? 0x90 : 0x80;
  unsigned char hi = p[0] == 0xed ? 0x9f : p[0] == 0xf4 ? 0x8f : 0xbf;
  if (p[1] < lo || p[1] > hi) return 0;
  for (size_t i = 2; i < need; i++)
    if ((p[i] & 0xc0) != 0x80) return 0;
  return need;
}

typedef struct sink {
  char *out;
  size_t cap, len;
} sink;

static void put(sink *s, const char *p, size_t n) {
  for (size_t i = 0; i < n; i++, s->len++)
    if (s->len + 1 < s->cap) s->out[s->len] = p[i];
}

static void put_text(sink *s, const char *text) { put(s, text, strlen(text)); }

static void putf(sink *s, const char *fmt, unsigned long long v) {
  char t[48];
  int n = snprintf(t, sizeof t, fmt, v);
  put(s, t, n > 0 ? (size_t)n : 0);
}

/* The line in quotes, escaped as a JSON string is, and what cannot be seen
 * too (controls, the byte order mark as \ufeff, a byte that is not UTF-8
 * as \xff); other text stays readable, and the sentence valid UTF-8. */
static void put_visible(sink *s, const unsigned char *p, size_t n) {
  size_t shown = n > SHOWN ? SHOWN : n;
  put(s, "\"", 1);
  for (size_t i = 0; i < shown;) {
    unsigned char c = p[i];
    size_t seq = c >= 0x80 ? utf8_length(p + i, shown - i) : 1;
    if (c == '"' || c == '\\') {
      put(s, "\\", 1);
      put(s, (const char *)&p[i], 1);
    } else if (c == '\n') put(s, "\\n", 2);
    else if (c == '\r') put(s, "\\r", 2);
    else if (c == '\t') put(s, "\\t", 2);
    else if (c < 0x20 || c == 0x7f) putf(s, "\\u%04llx", c);
    else if (seq == 3 && memcmp(p + i, "\xef\xbb\xbf", 3) == 0)
      put(s, "\\ufeff", 6);
    else if (seq == 0 && i + 4 > shown && n > shown)
      break; /* a character the cut split: "..." follows */
    else if (seq == 0) putf(s, "\\x%02llx", c);
    else put(s, (const char *)p + i, seq);
    i += seq ? seq : 1;
  }
  put(s, n > shown ? "...\"" : "\"", n > shown ? 4 : 1);
}

/* What the line is, where its opening shows it: " (...)" or "". */
static const char *kind_of(const unsigned char *p, size_t n) {
  if (n >= 3 && memcmp(p, "\xef\xbb\xbf", 3) == 0)
    return " (it starts with a byte order mark)";
  size_t i = 0;
  while (i < n && (p[i] == ' ' || p[i] == '\t')) i++;
  if (i < n && p[i] == '[') {
    for (i++; i < n && (p[i] == ' ' || p[i] == '\t'); i++) {
    }
    if (i < n && p[i] == '{') return " (a JSON-RPC batch: MCP has had none since 2025-06-18)";
  }
  return "";
}

/* The sentence with its subject, verb and noun: a stdio peer "wrote" a
 * "line"; a peer on another transport "sent" a "message" (an SSE event, a
 * JSON body, an SDK's message). */
static size_t unreadable_text(const char *who, const char *verb,
                              const char *noun, const mcpp_unreadable *what,
                              char *out, size_t cap) {
  sink s = {out, cap, 0};
  int lines = what && what->lines && what->first;
  int unended = what && what->unended && what->tail;
  if (!lines && !unended) {
    if (cap) out[0] = '\0';
    return 0;
  }
  if (!who) who = "the peer";
  put_text(&s, who);
  put(&s, " ", 1);
  put_text(&s, verb);
  put(&s, " ", 1);
  if (lines) {
    const unsigned char *p = (const unsigned char *)what->first;
    const char *kind = kind_of(p, what->first_len);
    if (what->lines == 1) {
      put(&s, "a ", 2);
      put_text(&s, noun);
      put_text(&s, " that is not JSON-RPC");
    } else {
      putf(&s, "%llu ", what->lines);
      put_text(&s, noun);
      put_text(&s, "s that are not JSON-RPC, the first");
    }
    put(&s, kind, strlen(kind));
    put(&s, ": ", 2);
    put_visible(&s, p, what->first_len);
    if (unended) put(&s, ", then ", 7);
  }
  if (unended) {
    putf(&s, "%llu byte", (unsigned long long)what->unended);
    put(&s, what->unended == 1 ? " that no newline ends: " : "s that no newline ends: ",
        what->unended == 1 ? 23 : 24);
    put_visible(&s, (const unsigned char *)what->tail, what->tail_len);
  }
  if (cap) out[s.len < cap ? s.len : cap - 1] = '\0';
  return s.len;
}

size_t mcpp_unreadable_text(const char *who, const mcpp_unreadable *what,
                            char *out, size_t cap) {
  return unreadable_text(who, "wrote", "line", what, out, cap);
}

size_t mcpp_engine_unreadable_text(const mcpp_engine *e, char *out,
                                   size_t cap) {
  mcpp_unreadable what = {0};
  what.lines = mcpp_engine_unreadable(e, &what.first, &what.first_len);
  int stdio = e && e->s.transport == MCPP_TRANSPORT_STDIO;
  const char *who = e && e->s.role == MCPP_ROLE_SERVER ? "the client" : "the server";
  return unreadable_text(who, stdio ? "wrote" : "sent", stdio ? "line" : "message", &what,
                         out, cap);
}
