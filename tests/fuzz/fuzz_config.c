/*
 * libFuzzer harness for the config loader (config_load.c, config_resolve.c).
 * Any bytes either load into entries or give one problem, never both; the
 * syntax scanner agrees with the loader on whether the text is JSON; every
 * entry's strings are NUL-free C strings of the kinds promised; and filling
 * each entry's variables either succeeds or names a problem.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "mcpping.h"

#define CHECK(cond)       \
  do {                    \
    if (!(cond)) abort(); \
  } while (0)

static const char *env(void *ctx, const char *name) {
  (void)ctx;
  return strcmp(name, "SET") == 0 ? "value" : NULL;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  mcpp_config_doc doc;
  CHECK(mcpp_config_parse((const char *)data, size, size & 1, "/p", &doc) == 0);
  CHECK(!doc.problem || doc.nservers == 0);
  if (!doc.problem) {
    /* A loadable file is JSON once its comments are blanked. */
    char *plain = malloc(size + 1);
    CHECK(plain);
    memcpy(plain, data, size);
    size_t skip = size >= 3 && memcmp(plain, "\xEF\xBB\xBF", 3) == 0 ? 3 : 0;
    mcpp_config_strip_jsonc(plain + skip, size - skip);
    CHECK(mcpp_config_syntax_error_at(plain + skip, size - skip) == -1);
    free(plain);
  }
  for (size_t i = 0; i < doc.nservers; i++) {
    mcpp_config_server *s = &doc.servers[i];
    CHECK(s->name && s->json_path && s->transport);
    CHECK((strcmp(s->transport, "stdio") == 0) == (s->command != NULL));
    CHECK((s->url != NULL) == (s->command == NULL));
    mcpp_config_server live;
    char *problem = NULL;
    int rc = mcpp_config_resolve(s, "/ws", "/h", env, NULL, &live, &problem);
    CHECK(rc == 0 || rc == 1);
    if (rc == 0) {
      CHECK(problem == NULL && live.nargs == s->nargs && live.nenv == s->nenv);
      mcpp_config_server_free(&live);
    } else {
      CHECK(problem && strncmp(problem, s->json_path, strlen(s->json_path)) == 0);
      mcpp_config_free(problem);
    }
  }
  mcpp_config_doc_free(&doc);
  return 0;
}
