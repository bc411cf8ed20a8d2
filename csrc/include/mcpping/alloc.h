/* mcpping the injectable allocator the engine allocates through.
 * Included by mcpping.h; compiles alone too. */
#ifndef MCPPING_ALLOC_H
#define MCPPING_ALLOC_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* ------------------------------------------------------------- allocator */

/* All engine/driver/runtime memory goes through this allocator. Pass NULL
 * where an allocator is taken to use malloc/realloc/free. */
/* Option and callback structs (mcpp_engine_callbacks, mcpp_spawn_options,
 * mcpp_conn_callbacks, mcpp_runtime_options, mcpp_host_options) begin with
 * `int version`: 0 (a zeroed struct) or the struct's _V1 is read as
 * version 1, and a function given any other version refuses it with
 * MCPP_ERR_INVALID_ARGUMENT. A later version only adds fields at the end,
 * read only from callers that set that version. mcpp_settings and
 * mcpp_wrap_options, which have a _default function, require its version. */

typedef struct mcpp_allocator {
  void *(*malloc)(size_t size, void *user_data);
  void *(*realloc)(void *ptr, size_t size, void *user_data);
  void (*free)(void *ptr, void *user_data);
  void *user_data;
} mcpp_allocator;

/* Returns the default allocator (malloc/realloc/free). */
const mcpp_allocator *mcpp_default_allocator(void);

#ifdef __cplusplus
}
#endif

#endif /* MCPPING_ALLOC_H */
