/*
 * The values a command must never print (a config entry's env and header
 * values, its URL's credentials and query), and text with each of them
 * replaced by `***`: what `watch` logs and serves, and what `--config`
 * says of a server, stderr included, pass through it.
 */
#ifndef MCPP_APP_SECRETS_H
#define MCPP_APP_SECRETS_H

#include <stddef.h>

typedef struct mcpp__secrets {
  char **v;
  size_t n;
} mcpp__secrets;

/* Adds value, and for a URL its user:password, its password and its query
 * (whole and each parameter's value), which a sentence could quote apart
 * from the rest. Values under 4 bytes are no secret (masking every "1"
 * would garble every number). Returns 0 or MCPP_ERR_NOMEM. */
int mcpp__secrets_add(mcpp__secrets *s, const char *value);

/* mcpp__secrets_add of each of values[0..n) but the NULLs. */
int mcpp__secrets_add_all(mcpp__secrets *s, const char *const *values, size_t n);

/* in with every secret replaced (the longest first wins where two overlap,
 * as each is replaced in turn): a new string, NULL for NULL or out of memory. */
char *mcpp__secrets_redact(const mcpp__secrets *s, const char *in);

void mcpp__secrets_free(mcpp__secrets *s);

#endif
