/*
 * The soak's wire format, shared by the driver (soak.c) and its server
 * (server.c) so that each side can rebuild, byte for byte, the line the
 * other one must have written: what arrives is compared with what was
 * sent, not just parsed.
 *
 * Every application line carries a sequence number: "iseq" (client to
 * server, in params) and "oseq" (server to client). A gap is a lost
 * message, a step back a reordered one, a byte that differs an altered one.
 * Payloads are generated from (seed, seq), so neither side stores them.
 */
#ifndef SOAK_WIRE_H
#define SOAK_WIRE_H

#include <stddef.h>
#include <stdint.h>

typedef struct soak_buf {
  char *p;
  size_t len, cap;
} soak_buf;

void soak_buf_put(soak_buf *b, const void *data, size_t n);
void soak_buf_puts(soak_buf *b, const char *s);
void soak_buf_printf(soak_buf *b, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
/* A JSON string literal, escaped the one way both sides escape. */
void soak_buf_json_string(soak_buf *b, const char *s, size_t n);
void soak_buf_free(soak_buf *b);

uint64_t soak_fnv(const void *p, size_t n);
uint64_t soak_mix(uint64_t x);

/* Payload text for (seed, seq): quotes, backslashes, control characters
 * and multi-byte UTF-8 included, up to max bytes. */
void soak_gen_text(soak_buf *b, uint64_t seed, uint64_t seq, size_t max);

/* Streams are distinguished by salting the seed. */
#define SOAK_SALT_REQUEST 0x5265717565737431ull
#define SOAK_SALT_CLIENT_NOTE 0x436c69656e744e31ull
#define SOAK_SALT_NOTE 0x4e6f74696669636eull
#define SOAK_SALT_GARBAGE 0x4761726261676531ull

/* The request id for iseq: odd ones are strings, even ones numbers. */
void soak_request_id(soak_buf *b, uint64_t iseq);

/* Client lines. */
void soak_line_request(soak_buf *b, uint64_t seed, uint64_t iseq,
                       uint32_t delay_ms);
void soak_line_client_note(soak_buf *b, uint64_t seed, uint64_t iseq);

/* Server lines. The echo answer returns the request's payload and the hash
 * of the raw request line as the server read it. */
void soak_line_echo(soak_buf *b, uint64_t seed, uint64_t iseq, uint64_t oseq,
                    uint64_t rawhash);
void soak_line_note(soak_buf *b, uint64_t seed, uint64_t oseq);
/* Not JSON (invalid UTF-8, JSON fragments, NULs), every 16th one long
 * enough to cross several reads. */
void soak_line_garbage(soak_buf *b, uint64_t seed, uint64_t oseq);

#define SOAK_GARBAGE_PREFIX "soak-garbage "

#endif
