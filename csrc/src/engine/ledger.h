/*
 * The ledger of in-flight application requests: raw id text, method, send
 * time and deadline, kept in send order (a linked list) and found by id
 * through an open-addressing hash table, so thousands in flight stay cheap.
 * Each request has its own deadline: timed requests sit in a binary
 * min-heap (earliest deadline first, send order among equals), untimed
 * ones in a waiting list, oldest first. Ids match by value, not spelling:
 * a peer that re-encodes "a/b" as "a\/b" still clears the request, while
 * "1" and 1 stay distinct.
 */
#ifndef MCPP_LEDGER_H
#define MCPP_LEDGER_H

#include <stddef.h>
#include <stdint.h>

#include "internal.h"

/* An entry's deadline when it has none. */
#define MCPP__NO_DEADLINE UINT64_MAX

typedef struct mcpp__entry {
  struct mcpp__entry *prev, *next; /* send order */
  uint64_t sent_at;
  uint64_t deadline;   /* MCPP__NO_DEADLINE: untimed */
  uint64_t order;      /* insertion counter: send order among equal deadlines */
  uint32_t timeout_ms; /* the timeout that set the deadline, 0 if untimed */
  size_t heap_index;   /* timed: position in the heap */
  struct mcpp__entry *wprev, *wnext; /* untimed: the waiting list */
  uint64_t hash;
  size_t id_len;
  char *id;     /* raw JSON, NUL-terminated, points into this allocation */
  char *method; /* NUL-terminated, points into this allocation */
  char *key;    /* the id as compared (see ledger.c), in this allocation */
  size_t key_len;
} mcpp__entry;

typedef struct mcpp__ledger {
  const mcpp_allocator *alloc;
  mcpp__entry *head, *tail;
  mcpp__entry **slots; /* hash table, linear probing, power-of-two size */
  size_t nslots;
  size_t count;
  mcpp__entry **heap; /* timed entries, earliest deadline at heap[0] */
  size_t n_heap, cap_heap;
  mcpp__entry *whead, *wtail; /* untimed entries, oldest first */
  uint64_t next_order;
} mcpp__ledger;

void mcpp__ledger_init(mcpp__ledger *l, const mcpp_allocator *alloc);
/* Frees every entry and the table. */
void mcpp__ledger_free(mcpp__ledger *l);
/* Appends a request sent at `now` that expires at now + timeout_ms
 * (timeout_ms 0: never). Returns 0 or MCPP_ERR_NOMEM (the ledger
 * unchanged). */
int mcpp__ledger_add(mcpp__ledger *l, const char *id, size_t id_len,
                     const char *method, size_t method_len, uint64_t now,
                     uint32_t timeout_ms);
/* The timed request with the earliest deadline, or NULL. */
mcpp__entry *mcpp__ledger_earliest(const mcpp__ledger *l);
/* The untimed request sent first, or NULL. */
mcpp__entry *mcpp__ledger_oldest_untimed(const mcpp__ledger *l);
/* Finds a request with this raw id, or NULL. */
mcpp__entry *mcpp__ledger_find(const mcpp__ledger *l, const char *id,
                               size_t id_len);
/* Unlinks an entry without freeing it: the caller frees it with
 * mcpp__free(l->alloc, e) once it is done with its id and method. */
void mcpp__ledger_detach(mcpp__ledger *l, mcpp__entry *e);
/* Unlinks and frees an entry. */
void mcpp__ledger_remove(mcpp__ledger *l, mcpp__entry *e);
/* Removes the request with this raw id; returns 1 if there was one. */
int mcpp__ledger_remove_id(mcpp__ledger *l, const char *id, size_t id_len);
/* 1 if the method is known to have no side effects on the peer. */
int mcpp__method_is_safe(const char *method);
/* 1 if any in-flight request may have had side effects. */
int mcpp__ledger_any_unsafe(const mcpp__ledger *l);

#endif
