/* What the commands never print (app/secrets.h). */
#include <stdlib.h>
#include <string.h>

#include "app/secrets.h"
#include "app/text.h"
#include "mcpping.h"

#define REDACTED "***"
/* Shorter values are no secret: masking every "1" of DEBUG=1 or ?page=1
 * would garble each number a sentence says ("exited with status ***"). */
#define SHORTEST 4

static int add_one(mcpp__secrets *s, const char *p, size_t n) {
  if (n < SHORTEST) return 0;
  char **grown = realloc(s->v, (s->n + 1) * sizeof *grown);
  if (!grown) return MCPP_ERR_NOMEM;
  s->v = grown;
  char *copy = malloc(n + 1);
  if (!copy) return MCPP_ERR_NOMEM;
  memcpy(copy, p, n);
  copy[n] = 0;
  s->v[s->n++] = copy;
  return 0;
}

int mcpp__secrets_add(mcpp__secrets *s, const char *v) {
  int rc = add_one(s, v, strlen(v));
  const char *scheme = strstr(v, "://");
  if (rc || !scheme) return rc;
  const char *host = scheme + 3;
  const char *end = host + strcspn(host, "/?#");
  const char *at = memchr(host, '@', (size_t)(end - host));
  if (at) {
    const char *colon = memchr(host, ':', (size_t)(at - host));
    if ((rc = add_one(s, host, (size_t)(at - host)))) return rc;
    if (colon && (rc = add_one(s, colon + 1, (size_t)(at - colon - 1)))) return rc;
  }
  const char *q = strchr(v, '?');
  if (!q) return 0;
  size_t qn = strcspn(q + 1, "#");
  if ((rc = add_one(s, q + 1, qn))) return rc;
  /* Each parameter's value on its own too. */
  for (const char *p = q + 1, *end_q = q + 1 + qn; p < end_q && !rc;) {
    size_t pn = strcspn(p, "&#");
    if (p + pn > end_q) pn = (size_t)(end_q - p);
    const char *eq = memchr(p, '=', pn);
    if (eq) rc = add_one(s, eq + 1, (size_t)(p + pn - eq - 1));
    p += pn + 1;
  }
  return rc;
}

int mcpp__secrets_add_all(mcpp__secrets *s, const char *const *values, size_t n) {
  for (size_t k = 0; k < n; k++)
    if (values[k] && mcpp__secrets_add(s, values[k])) return MCPP_ERR_NOMEM;
  return 0;
}

char *mcpp__secrets_redact(const mcpp__secrets *s, const char *in) {
  if (!in) return NULL;
  char *cur = strdup(in);
  for (size_t k = 0; cur && k < s->n; k++) {
    const char *sec = s->v[k];
    size_t sn = strlen(sec);
    if (!strstr(cur, sec)) continue;
    mcpp__text t = {0};
    for (const char *p = cur, *hit; *p;) {
      if (!(hit = strstr(p, sec))) {
        mcpp__text_puts(&t, p);
        break;
      }
      mcpp__text_put(&t, p, (size_t)(hit - p));
      mcpp__text_puts(&t, REDACTED);
      p = hit + sn;
    }
    free(cur);
    cur = mcpp__text_take(&t);
    if (cur == NULL) cur = strdup(REDACTED);
  }
  return cur;
}

void mcpp__secrets_free(mcpp__secrets *s) {
  for (size_t k = 0; k < s->n; k++) free(s->v[k]);
  free(s->v);
  s->v = NULL;
  s->n = 0;
}
