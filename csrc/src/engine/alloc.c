/* The default allocator and the helpers every engine file allocates with. */
#include <stdlib.h>
#include <string.h>

#include "internal.h"
#include "test_hooks.h"

static void *default_malloc(size_t size, void *user_data) {
  (void)user_data;
  if (MCPP__HOOK_DEFAULT_ALLOC_FAILS()) return NULL;
  void *p = malloc(size);
  if (p != NULL) MCPP__HOOK_DEFAULT_LIVE(1);
  return p;
}

static void *default_realloc(void *ptr, size_t size, void *user_data) {
  (void)user_data;
  if (MCPP__HOOK_DEFAULT_ALLOC_FAILS()) return NULL;
  return realloc(ptr, size);
}

static void default_free(void *ptr, void *user_data) {
  (void)user_data;
  MCPP__HOOK_DEFAULT_LIVE(-1);
  free(ptr);
}

static const mcpp_allocator default_allocator = {
    default_malloc, default_realloc, default_free, NULL};

const mcpp_allocator *mcpp_default_allocator(void) {
  return &default_allocator;
}

void *mcpp__malloc(const mcpp_allocator *a, size_t size) {
  return a->malloc(size ? size : 1, a->user_data);
}

void *mcpp__realloc(const mcpp_allocator *a, void *ptr, size_t size) {
  if (ptr == NULL) return mcpp__malloc(a, size);
  return a->realloc(ptr, size ? size : 1, a->user_data);
}

void mcpp__free(const mcpp_allocator *a, void *ptr) {
  if (ptr) a->free(ptr, a->user_data);
}

char *mcpp__strndup(const mcpp_allocator *a, const char *s, size_t n) {
  if (n == SIZE_MAX) return NULL;
  char *p = mcpp__malloc(a, n + 1);
  if (p == NULL) return NULL;
  if (n) memcpy(p, s, n);
  p[n] = '\0';
  return p;
}
