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
