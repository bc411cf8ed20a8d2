/* Internal: a config's text made plain JSON for a parser (config_jsonc.c). */
#ifndef MCPP_APP_CONFIG_JSONC_H
#define MCPP_APP_CONFIG_JSONC_H

#include <stddef.h>

/* Skips a UTF-8 BOM (*text and *len move past it) and returns a
 * NUL-terminated copy with JSONC's comments and trailing commas blanked
 * (*blanked: whether any were), or NULL when out of memory. */
char *mcpp__config_plain(const char **text, size_t *len, int *blanked);

#endif
