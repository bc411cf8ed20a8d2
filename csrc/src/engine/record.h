/*
 * Governance records: one JSON object per line with the fields of
 * docs/design.md, in that order. Records carry identities and timings only,
 * never payloads, params or arguments.
 */
#ifndef MCPP_RECORD_H
#define MCPP_RECORD_H

#include "internal.h"

#define MCPP__DIR_NONE (-1)
#define MCPP__DIR_OUTBOUND 0
#define MCPP__DIR_INBOUND 1

typedef struct mcpp__record {
  const char *event;
  int direction;          /* MCPP__DIR_*: sender/receiver follow from it */
  mcpp_role role;         /* ours */
  const char *peer;       /* NULL: null */
  const char *session_id; /* NULL: null */
  const char *protocol_version;
  mcpp_transport transport;
  const char *ping_id; /* raw JSON; NULL: null */
  size_t ping_id_len;
  int has_timeout;
  uint32_t timeout_ms;
  int has_latency;
  uint64_t latency_us;
  uint32_t failure_count;
  uint32_t reconnect_attempt; /* 0: null */
  uint32_t in_flight;
  mcpp_disposition disposition;
  const char *proof; /* NULL: null */
} mcpp__record;

/* Formats r with timestamp unix_us (µs since the Unix epoch) into buf,
 * snprintf-style: returns the full length, writes at most cap - 1 bytes
 * and a NUL if cap > 0. */
size_t mcpp__record_format(const mcpp__record *r, int64_t unix_us, char *buf,
                           size_t cap);

/* Writes an RFC 3339 UTC timestamp with microseconds (27 bytes + NUL). */
void mcpp__format_ts(int64_t unix_us, char out[32]);

#endif
