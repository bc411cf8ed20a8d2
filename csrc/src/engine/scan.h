/*
 * A top-level JSON object scanner: it walks the keys of one object and
 * skips the values structurally, recording the raw text of the values whose
 * keys it is asked for. No allocation, no decoding; strings are skipped
 * with memchr. Used to classify every frame cheaply before (rarely)
 * parsing it.
 */
#ifndef MCPP_SCAN_H
#define MCPP_SCAN_H

#include <stddef.h>

/* A raw value: p points into the scanned buffer; p == NULL if absent. */
typedef struct mcpp__span {
  const char *p;
  size_t n;
} mcpp__span;

/* Scans the object in buf[0..len) (surrounding whitespace allowed). For
 * each names[i], spans[i] gets the raw value of its first occurrence (keys
 * are compared by value: "\u0069d" is "id", as every JSON parser reads it).
 * Sets *dup (may be NULL) if a wanted key occurs twice. Returns 0, or -1 if
 * the text is not one well-formed object at the top level. */
int mcpp__scan_object(const char *buf, size_t len, const char *const *names,
                      size_t count, mcpp__span *spans, int *dup);

/* The members of a JSON-RPC message the engine classifies by. */
typedef struct mcpp__msg {
  mcpp__span id, method, result, error, params;
  int dup;
} mcpp__msg;

/* Scans a JSON-RPC message. Returns 0 or -1 (not an object). */
int mcpp__scan_message(const char *buf, size_t len, mcpp__msg *msg);

/* 1 if buf[0..len) is strict RFC 8259 JSON text (valid UTF-8, no control
 * characters in strings, numbers as the grammar writes them), nested at
 * most as deep as the scanner goes. Iterative; no allocation. */
int mcpp__json_strict(const char *buf, size_t len);

/* 1 if the span is exactly the JSON string literal `lit` (given with its
 * quotes, e.g. "\"ping\""), else 0. */
int mcpp__span_is(mcpp__span s, const char *lit);

/* 1 if the span's raw bytes equal p[0..n). */
int mcpp__span_eq(mcpp__span s, const char *p, size_t n);

/* 1 if frame (NULL: none) is a ping request: an id and method "ping". */
int mcpp__is_ping_request(const char *frame, size_t len);

#endif
