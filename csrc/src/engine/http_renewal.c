/* A Streamable HTTP session's renewal: which session end starts the
 * handshake again, what waits for the new session, and which pings are
 * sent again on it (once). The client keeps the frames that wait, with
 * whatever it sends them with; this keeps the pings among them. */
#include <string.h>

#include "internal.h"

/* Frames kept whole, one after another: a size_t length, then the bytes. */
typedef struct frame_set {
  char *bytes;
  size_t len;
  size_t cap;
} frame_set;

struct mcpp_http_renewal {
  const mcpp_allocator *alloc;
  int running;      /* the handshake runs again: what is sent waits */
  frame_set waiting; /* the pings that wait for the new session */
  frame_set resent;  /* the pings the last renewal sent again */
};

static int set_has(const frame_set *set, const char *frame, size_t len) {
  size_t at = 0;
  while (at < set->len) {
    size_t n;
    memcpy(&n, set->bytes + at, sizeof n);
    at += sizeof n;
    if (n == len && memcmp(set->bytes + at, frame, len) == 0) return 1;
    at += n;
  }
  return 0;
}

static int set_add(const mcpp_allocator *a, frame_set *set, const char *frame,
                   size_t len) {
  if (len > SIZE_MAX / 2 - sizeof len - set->len) return MCPP_ERR_NOMEM;
  size_t need = set->len + sizeof len + len;
  if (need > set->cap) {
    size_t cap = set->cap ? set->cap : 256;
    while (cap < need) cap *= 2;
    char *bytes = mcpp__realloc(a, set->bytes, cap);
    if (bytes == NULL) return MCPP_ERR_NOMEM;
    set->bytes = bytes;
    set->cap = cap;
  }
  memcpy(set->bytes + set->len, &len, sizeof len);
  if (len) memcpy(set->bytes + set->len + sizeof len, frame, len);
  set->len = need;
  return 0;
}

static void set_free(const mcpp_allocator *a, frame_set *set) {
  mcpp__free(a, set->bytes);
  memset(set, 0, sizeof *set);
}

mcpp_http_renewal *mcpp_http_renewal_new(void) {
  const mcpp_allocator *a = mcpp_default_allocator();
  mcpp_http_renewal *r = mcpp__malloc(a, sizeof *r);
  if (r == NULL) return NULL;
  memset(r, 0, sizeof *r);
  r->alloc = a;
  return r;
}

void mcpp_http_renewal_free(mcpp_http_renewal *r) {
  if (r == NULL) return;
  set_free(r->alloc, &r->waiting);
  set_free(r->alloc, &r->resent);
  mcpp__free(r->alloc, r);
}

int mcpp_http_renewal_expired(mcpp_http_renewal *r, int on_current_session,
                              const char *frame, size_t len) {
  int step = 0;
  if (on_current_session && !r->running) {
    r->running = 1;
    step |= MCPP_HTTP_RENEW;
  }
  /* A ping has no side effects: it goes again on the new session. One that
   * met a session's end again is answered instead, so a server that
   * refuses every session it gives costs one handshake per ping, not an
   * endless round of them. */
  if (frame != NULL && mcpp_http_resends(frame, len) &&
      !set_has(&r->resent, frame, len))
    step |= MCPP_HTTP_SEND_AGAIN;
  return step;
}

int mcpp_http_renewal_holds(mcpp_http_renewal *r, const char *frame,
                            size_t len) {
  if (!r->running) return 0;
  /* Out of memory the ping is not kept: it may go a third time, no more. */
  if (frame != NULL && mcpp_http_resends(frame, len))
    (void)set_add(r->alloc, &r->waiting, frame, len);
  return 1;
}

void mcpp_http_renewal_done(mcpp_http_renewal *r, int opened) {
  r->running = 0;
  set_free(r->alloc, &r->resent);
  if (opened) r->resent = r->waiting;
  else set_free(r->alloc, &r->waiting);
  memset(&r->waiting, 0, sizeof r->waiting);
}
