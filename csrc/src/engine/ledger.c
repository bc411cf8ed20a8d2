/* The in-flight request ledger (see ledger.h). */
#include "ledger.h"

#include <string.h>

static uint64_t hash_bytes(const char *p, size_t n) {
  uint64_t h = 1469598103934665603ULL; /* FNV-1a */
  for (size_t i = 0; i < n; i++) {
    h ^= (unsigned char)p[i];
    h *= 1099511628211ULL;
  }
  return h;
}

/* String ids up to this long are compared decoded; longer ids (and ids
 * with escapes this decoder rejects) by their raw text. */
#define KEY_MAX 256

static size_t put_utf8(char *out, uint32_t cp) {
  if (cp < 0x80) {
    out[0] = (char)cp;
    return 1;
  }
  if (cp < 0x800) {
    out[0] = (char)(0xc0 | (cp >> 6));
    out[1] = (char)(0x80 | (cp & 0x3f));
    return 2;
  }
  if (cp < 0x10000) {
    out[0] = (char)(0xe0 | (cp >> 12));
    out[1] = (char)(0x80 | ((cp >> 6) & 0x3f));
    out[2] = (char)(0x80 | (cp & 0x3f));
    return 3;
  }
  out[0] = (char)(0xf0 | (cp >> 18));
  out[1] = (char)(0x80 | ((cp >> 12) & 0x3f));
  out[2] = (char)(0x80 | ((cp >> 6) & 0x3f));
  out[3] = (char)(0x80 | (cp & 0x3f));
  return 4;
}

static int hex4(const char *p, uint32_t *v) {
  *v = 0;
  for (int i = 0; i < 4; i++) {
    char c = p[i];
    uint32_t d;
    if (c >= '0' && c <= '9')
      d = (uint32_t)(c - '0');
    else if (c >= 'a' && c <= 'f')
      d = (uint32_t)(c - 'a' + 10);
    else if (c >= 'A' && c <= 'F')
      d = (uint32_t)(c - 'A' + 10);
    else
      return 0;
    *v = *v << 4 | d;
  }
  return 1;
}

/* Decodes the JSON string s[0..n) (quotes excluded) after an 's' tag, so
 * no number's text can equal it. The key is never longer than the raw id.
 * Returns 0 if an escape is malformed. */
static size_t decode_string(const char *s, size_t n, char *out) {
  size_t o = 0;
  out[o++] = 's';
  for (size_t i = 0; i < n;) {
    if (s[i] != '\\') {
      out[o++] = s[i++];
      continue;
    }
    if (i + 1 >= n) return 0;
    char c = s[i + 1];
    const char *simple = strchr("\"\\/bfnrt", c);
    if (c != '\0' && simple) {
      static const char map[] = "\"\\/\b\f\n\r\t";
      out[o++] = map[simple - "\"\\/bfnrt"];
      i += 2;
      continue;
    }
    uint32_t cp, lo;
    if (c != 'u' || i + 6 > n || !hex4(s + i + 2, &cp)) return 0;
    i += 6;
    if (cp >= 0xd800 && cp <= 0xdbff) {
      if (i + 6 > n || s[i] != '\\' || s[i + 1] != 'u' ||
          !hex4(s + i + 2, &lo) || lo < 0xdc00 || lo > 0xdfff)
        return 0;
      cp = 0x10000 + ((cp - 0xd800) << 10) + (lo - 0xdc00);
      i += 6;
    } else if (cp >= 0xdc00 && cp <= 0xdfff) {
      return 0;
    }
    o += put_utf8(out + o, cp);
  }
  return o;
}

/* The id as compared: a string decoded, anything else as written. Points
 * at buf or at raw. */
static const char *key_of(const char *raw, size_t n, char buf[KEY_MAX],
                          size_t *key_len) {
  if (n >= 2 && n <= KEY_MAX && raw[0] == '"' && raw[n - 1] == '"') {
    size_t k = decode_string(raw + 1, n - 2, buf);
    if (k) {
      *key_len = k;
      return buf;
    }
  }
  *key_len = n;
  return raw;
}

void mcpp__ledger_init(mcpp__ledger *l, const mcpp_allocator *alloc) {
  memset(l, 0, sizeof *l);
  l->alloc = alloc;
}

void mcpp__ledger_free(mcpp__ledger *l) {
  mcpp__entry *e = l->head;
  while (e) {
    mcpp__entry *next = e->next;
    mcpp__free(l->alloc, e);
    e = next;
  }
  mcpp__free(l->alloc, l->slots);
  mcpp__free(l->alloc, l->heap);
  mcpp__ledger_init(l, l->alloc);
}

/* ------------------------------------------------ the deadline heap */

static int heap_before(const mcpp__entry *a, const mcpp__entry *b) {
  return a->deadline < b->deadline ||
         (a->deadline == b->deadline && a->order < b->order);
}

static void heap_set(mcpp__ledger *l, size_t i, mcpp__entry *e) {
  l->heap[i] = e;
  e->heap_index = i;
}

static void heap_up(mcpp__ledger *l, size_t i) {
  mcpp__entry *e = l->heap[i];
  while (i > 0) {
    size_t parent = (i - 1) / 2;
    if (!heap_before(e, l->heap[parent])) break;
    heap_set(l, i, l->heap[parent]);
    i = parent;
  }
  heap_set(l, i, e);
}

static void heap_down(mcpp__ledger *l, size_t i) {
  mcpp__entry *e = l->heap[i];
  for (;;) {
    size_t child = 2 * i + 1;
    if (child >= l->n_heap) break;
    if (child + 1 < l->n_heap && heap_before(l->heap[child + 1], l->heap[child]))
      child++;
    if (!heap_before(l->heap[child], e)) break;
    heap_set(l, i, l->heap[child]);
    i = child;
  }
  heap_set(l, i, e);
}

static int heap_reserve(mcpp__ledger *l) {
  if (l->n_heap < l->cap_heap) return 0;
  size_t cap = l->cap_heap ? l->cap_heap * 2 : 16;
  mcpp__entry **h = mcpp__realloc(l->alloc, l->heap, cap * sizeof *h);
  if (h == NULL) return MCPP_ERR_NOMEM;
  l->heap = h;
  l->cap_heap = cap;
  return 0;
}

static void heap_remove(mcpp__ledger *l, mcpp__entry *e) {
  size_t i = e->heap_index;
  mcpp__entry *last = l->heap[--l->n_heap];
  if (last == e) return;
  heap_set(l, i, last);
  /* The moved entry may belong above or below its new place. */
  if (i > 0 && heap_before(last, l->heap[(i - 1) / 2]))
    heap_up(l, i);
  else
    heap_down(l, i);
}

mcpp__entry *mcpp__ledger_earliest(const mcpp__ledger *l) {
  return l->n_heap ? l->heap[0] : NULL;
}

mcpp__entry *mcpp__ledger_oldest_untimed(const mcpp__ledger *l) {
  return l->whead;
}

/* ------------------------------------------------ the waiting list */

static void wait_append(mcpp__ledger *l, mcpp__entry *e) {
  e->wnext = NULL;
  e->wprev = l->wtail;
  if (l->wtail)
    l->wtail->wnext = e;
  else
    l->whead = e;
  l->wtail = e;
}

static void wait_remove(mcpp__ledger *l, mcpp__entry *e) {
  if (e->wprev)
    e->wprev->wnext = e->wnext;
  else
    l->whead = e->wnext;
  if (e->wnext)
    e->wnext->wprev = e->wprev;
  else
    l->wtail = e->wprev;
  e->wprev = e->wnext = NULL;
}

static void slot_insert(mcpp__entry **slots, size_t nslots, mcpp__entry *e) {
  size_t mask = nslots - 1, i = (size_t)e->hash & mask;
  while (slots[i]) i = (i + 1) & mask;
  slots[i] = e;
}

/* Keeps the load factor at or below one half. */
static int reserve(mcpp__ledger *l, size_t want) {
  if (want * 2 <= l->nslots) return 0;
  size_t n = l->nslots ? l->nslots * 2 : 16;
  while (want * 2 > n) n *= 2;
  mcpp__entry **slots = mcpp__malloc(l->alloc, n * sizeof *slots);
  if (slots == NULL) return MCPP_ERR_NOMEM;
  memset(slots, 0, n * sizeof *slots);
  for (size_t i = 0; i < l->nslots; i++)
    if (l->slots[i]) slot_insert(slots, n, l->slots[i]);
  mcpp__free(l->alloc, l->slots);
  l->slots = slots;
  l->nslots = n;
  return 0;
}

int mcpp__ledger_add(mcpp__ledger *l, const char *id, size_t id_len,
                     const char *method, size_t method_len, uint64_t now,
                     uint32_t timeout_ms) {
  if (reserve(l, l->count + 1) != 0) return MCPP_ERR_NOMEM;
  if (timeout_ms && heap_reserve(l) != 0) return MCPP_ERR_NOMEM;
  char buf[KEY_MAX];
  size_t key_len;
  const char *key = key_of(id, id_len, buf, &key_len);
  mcpp__entry *e = mcpp__malloc(
      l->alloc, sizeof *e + id_len + 1 + method_len + 1 + key_len);
  if (e == NULL) return MCPP_ERR_NOMEM;
  e->id = (char *)(e + 1);
  e->method = e->id + id_len + 1;
  e->key = e->method + method_len + 1;
  e->key_len = key_len;
  memcpy(e->key, key, key_len);
  memcpy(e->id, id, id_len);
  e->id[id_len] = '\0';
  memcpy(e->method, method, method_len);
  e->method[method_len] = '\0';
  e->id_len = id_len;
  e->sent_at = now;
  e->timeout_ms = timeout_ms;
  e->deadline = timeout_ms ? now + (uint64_t)timeout_ms * 1000 : MCPP__NO_DEADLINE;
  e->order = l->next_order++;
  e->hash = hash_bytes(key, key_len);
  e->next = NULL;
  e->prev = l->tail;
  if (l->tail)
    l->tail->next = e;
  else
    l->head = e;
  l->tail = e;
  slot_insert(l->slots, l->nslots, e);
  l->count++;
  if (timeout_ms) {
    e->wprev = e->wnext = NULL;
    l->heap[l->n_heap++] = e;
    heap_up(l, l->n_heap - 1);
  } else {
    e->heap_index = SIZE_MAX;
    wait_append(l, e);
  }
  return 0;
}

/* Duplicate ids are an application bug; any one of them may match. */
static size_t find_slot(const mcpp__ledger *l, const char *id, size_t id_len) {
  if (l->nslots == 0) return SIZE_MAX;
  char buf[KEY_MAX];
  size_t key_len;
  const char *key = key_of(id, id_len, buf, &key_len);
  uint64_t h = hash_bytes(key, key_len);
  size_t mask = l->nslots - 1, i = (size_t)h & mask;
  while (l->slots[i]) {
    const mcpp__entry *e = l->slots[i];
    if (e->hash == h && e->key_len == key_len &&
        memcmp(e->key, key, key_len) == 0)
      return i;
    i = (i + 1) & mask;
  }
  return SIZE_MAX;
}

mcpp__entry *mcpp__ledger_find(const mcpp__ledger *l, const char *id,
                               size_t id_len) {
  size_t i = find_slot(l, id, id_len);
  return i == SIZE_MAX ? NULL : l->slots[i];
}

/* Deletes slot i with backward-shift deletion (no tombstones). */
static void slot_delete(mcpp__ledger *l, size_t i) {
  size_t mask = l->nslots - 1, j = i;
  l->slots[i] = NULL;
  for (;;) {
    j = (j + 1) & mask;
    mcpp__entry *e = l->slots[j];
    if (e == NULL) return;
    size_t home = (size_t)e->hash & mask;
    /* Move e back into the hole if its home is not in (i, j]. */
    int between = i <= j ? (home > i && home <= j) : (home > i || home <= j);
    if (!between) {
      l->slots[i] = e;
      l->slots[j] = NULL;
      i = j;
    }
  }
}

void mcpp__ledger_detach(mcpp__ledger *l, mcpp__entry *e) {
  size_t mask = l->nslots - 1, i = (size_t)e->hash & mask;
  while (l->slots[i] != e) i = (i + 1) & mask;
  slot_delete(l, i);
  if (e->deadline == MCPP__NO_DEADLINE)
    wait_remove(l, e);
  else
    heap_remove(l, e);
  if (e->prev)
    e->prev->next = e->next;
  else
    l->head = e->next;
  if (e->next)
    e->next->prev = e->prev;
  else
    l->tail = e->prev;
  l->count--;
  e->prev = e->next = NULL;
}

void mcpp__ledger_remove(mcpp__ledger *l, mcpp__entry *e) {
  mcpp__ledger_detach(l, e);
  mcpp__free(l->alloc, e);
}

int mcpp__ledger_remove_id(mcpp__ledger *l, const char *id, size_t id_len) {
  mcpp__entry *e = mcpp__ledger_find(l, id, id_len);
  if (e == NULL) return 0;
  mcpp__ledger_remove(l, e);
  return 1;
}

int mcpp__method_is_safe(const char *method) {
  /* Reads and listings only; anything else (tools/call, subscriptions,
   * sampling, unknown methods) may have acted on the peer. */
  static const char *const safe[] = {
      "ping",           "initialize",   "tools/list",
      "resources/list", "resources/read", "resources/templates/list",
      "prompts/list",   "prompts/get",  "completion/complete",
      "roots/list",     NULL};
  for (size_t i = 0; safe[i]; i++)
    if (strcmp(method, safe[i]) == 0) return 1;
  return 0;
}

int mcpp__ledger_any_unsafe(const mcpp__ledger *l) {
  for (const mcpp__entry *e = l->head; e; e = e->next)
    if (!mcpp__method_is_safe(e->method)) return 1;
  return 0;
}
