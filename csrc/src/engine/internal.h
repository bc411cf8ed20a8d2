/*
 * Internal helpers shared by the engine's files: allocation through the
 * injectable allocator and a bounded string builder. Never installed.
 */
#ifndef MCPP_INTERNAL_H
#define MCPP_INTERNAL_H

#include <stddef.h>
#include <stdint.h>

#include "mcpping.h"

/* Frames up to this size that look like pings or pongs are validated with
 * cJSON; larger ones are classified from their top-level spans only. */
#define MCPP__SMALL_FRAME (64 * 1024)

/* The size of a settings struct of `version`, 0 for an unknown one. */
size_t mcpp__settings_size(int version);

/* c in lower case, ASCII letters only (HTTP names and tokens). */
static inline int mcpp__lower_ascii(int c) { return c >= 'A' && c <= 'Z' ? c + ('a' - 'A') : c; }

/* 1 if a and b (n bytes each) are equal, ASCII case ignored (http_client.c). */
int mcpp__same_token(const char *a, const char *b, size_t n);

/* error_answer.c: {"jsonrpc":"2.0","id":ID,"error":ERROR} answering the request
 * in frame (strict JSON, a method, an id that is not null: echoed byte for
 * byte) into out, snprintf-style; 0 if frame is no such request. */
size_t mcpp__error_answer(const char *frame, size_t frame_len, const char *error,
                          size_t error_len, char *out, size_t cap);

/* *out = *in read as a struct of in->version, the fields it lacks at their
 * defaults. Returns 0 or MCPP_ERR_INVALID_ARGUMENT (unknown version). */
int mcpp__settings_import(mcpp_settings *out, const mcpp_settings *in);

/* settings.c: checks *s and resolves the floor on min_interval_ms and a
 * clamped interval. Returns 0, MCPP_ERR_INVALID_ARGUMENT or
 * MCPP_ERR_INTERVAL_TOO_SHORT, and the sentence in *problem (may be NULL). */
int mcpp__settings_check(mcpp_settings *s, const char **problem);

/* 1 if the option or callback struct *p (may be NULL) is of a version the
 * library reads: 0 (zeroed) or v1 (see mcpping/alloc.h). */
#define MCPP__KNOWN_VERSION(p, v1) \
  ((p) == NULL || (p)->version == 0 || (p)->version == (v1))

/* Allocation through `a` (never NULL: callers resolve NULL to the default).
 * mcpp__malloc(a, 0) allocates one byte so NULL always means failure. */
void *mcpp__malloc(const mcpp_allocator *a, size_t size);
void *mcpp__realloc(const mcpp_allocator *a, void *ptr, size_t size);
void mcpp__free(const mcpp_allocator *a, void *ptr);
/* Copies s[0..n) and adds a NUL; NULL on failure. */
char *mcpp__strndup(const mcpp_allocator *a, const char *s, size_t n);

/* A string builder with snprintf semantics: writes what fits into buf
 * (always NUL-terminated if cap > 0) and counts the full length in len. */
typedef struct mcpp__sb {
  char *buf;
  size_t cap;
  size_t len;
} mcpp__sb;

void mcpp__sb_init(mcpp__sb *sb, char *buf, size_t cap);
void mcpp__sb_put(mcpp__sb *sb, const char *s, size_t n);
void mcpp__sb_puts(mcpp__sb *sb, const char *s);
void mcpp__sb_putc(mcpp__sb *sb, char c);
void mcpp__sb_u64(mcpp__sb *sb, uint64_t v);
/* Appends s[0..n) as a quoted JSON string, escaping quotes, backslashes
 * and control characters, and replacing invalid UTF-8 with U+FFFD. */
void mcpp__sb_json_string(mcpp__sb *sb, const char *s, size_t n);

/* 1 if the library can read *ev: version 0 (a zeroed event: V1) or one it
 * knows. Inline here, so outcome.c and rtt_stats.c need nothing above. */
static inline int mcpp__event_readable(const mcpp_event *ev) {
  return ev != NULL && (ev->version == 0 || ev->version == MCPP_EVENT_V1);
}

#endif
