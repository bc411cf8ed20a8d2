/*
 * ABI care (issue 12): the structs that grow are read and written only as
 * far as the caller's version reaches, an unknown version is refused with
 * a message that says what to do, and nothing past a struct is touched.
 */
#include <stdlib.h>
#include <string.h>

#include "mcpping.h"
#include "task.h"

enum { GUARD = 32 };

/* 1 if every byte of p[0..n) is b. */
static int all_bytes(const void *p, size_t n, unsigned char b) {
  const unsigned char *c = p;
  for (size_t i = 0; i < n; i++)
    if (c[i] != b) return 0;
  return 1;
}

static int send_nothing(mcpp_engine *e, mcpp_frame_kind kind, const char *f,
                        size_t n, void *ud) {
  return 0;
}

TEST(settings_default_writes_only_its_version) {
  unsigned char buf[sizeof(mcpp_settings) + GUARD];
  memset(buf, 0xAA, sizeof buf);
  mcpp_settings_default_versioned(MCPP_SETTINGS_V1, (mcpp_settings *)buf);
  mcpp_settings *s = (mcpp_settings *)buf;
  ASSERT_EQ(s->version, MCPP_SETTINGS_V1);
  ASSERT_EQ(s->role, MCPP_ROLE_CLIENT);
  ASSERT(all_bytes(buf + sizeof(mcpp_settings), GUARD, 0xAA));
  /* An unknown version writes nothing at all. */
  memset(buf, 0xAA, sizeof buf);
  mcpp_settings_default_versioned(0, (mcpp_settings *)buf);
  mcpp_settings_default_versioned(MCPP_SETTINGS_VERSION + 1, (mcpp_settings *)buf);
  ASSERT(all_bytes(buf, sizeof buf, 0xAA));
}

TEST(settings_of_an_unknown_version_are_refused) {
  mcpp_settings s;
  mcpp_settings_default(&s);
  ASSERT(mcpp_settings_problem(&s) == NULL);
  /* Settings filled by hand, never through mcpp_settings_default. */
  memset(&s, 0, sizeof s);
  s.interval_ms = 1000;
  ASSERT_STR_EQ(mcpp_settings_problem(&s),
                "settings.version must be a known version: initialize "
                "settings with mcpp_settings_default");
  mcpp_engine_callbacks cb;
  memset(&cb, 0, sizeof cb);
  cb.send = send_nothing;
  mcpp_engine *e = (mcpp_engine *)&s; /* must be reset to NULL */
  ASSERT_EQ(mcpp_engine_new(&e, &s, &cb, NULL, NULL, 0), MCPP_ERR_INVALID_ARGUMENT);
  ASSERT(e == NULL);
  /* Defaults with the version spoiled are refused; restored, accepted. */
  mcpp_settings_default(&s);
  s.version = MCPP_SETTINGS_VERSION + 1;
  ASSERT(mcpp_settings_problem(&s) != NULL);
  ASSERT_EQ(mcpp_engine_new(&e, &s, &cb, NULL, NULL, 0), MCPP_ERR_INVALID_ARGUMENT);
  s.version = MCPP_SETTINGS_VERSION;
  ASSERT_EQ(mcpp_engine_new(&e, &s, &cb, NULL, NULL, 0), 0);
  mcpp_engine_free(e);
}

TEST(engine_info_writes_only_its_version) {
  mcpp_settings s;
  mcpp_settings_default(&s);
  mcpp_engine_callbacks cb;
  memset(&cb, 0, sizeof cb);
  cb.send = send_nothing;
  mcpp_engine *e = NULL;
  ASSERT_EQ(mcpp_engine_new(&e, &s, &cb, NULL, NULL, 0), 0);
  unsigned char buf[sizeof(mcpp_engine_info) + GUARD];
  memset(buf, 0xAA, sizeof buf);
  mcpp_engine_get_info_versioned(e, MCPP_ENGINE_INFO_V1, (mcpp_engine_info *)buf);
  ASSERT_EQ(((mcpp_engine_info *)buf)->state, MCPP_STATE_ALIVE);
  ASSERT_EQ(((mcpp_engine_info *)buf)->pings_sent, 0);
  ASSERT(all_bytes(buf + sizeof(mcpp_engine_info), GUARD, 0xAA));
  memset(buf, 0xAA, sizeof buf);
  mcpp_engine_get_info_versioned(e, MCPP_ENGINE_INFO_VERSION + 1, (mcpp_engine_info *)buf);
  ASSERT(all_bytes(buf, sizeof buf, 0xAA));
  mcpp_engine_free(e);
}

TEST(runtime_info_refuses_an_unknown_version) {
  mcpp_runtime *rt = NULL;
  ASSERT_EQ(0, mcpp_runtime_new(&rt, NULL));
  mcpp_engine_info info;
  int healthy = 0;
  ASSERT_EQ(mcpp_runtime_info_versioned(rt, 1, 0, &info, &healthy), MCPP_ERR_INVALID_ARGUMENT);
  ASSERT_EQ(mcpp_runtime_info(rt, 1, &info, &healthy), MCPP_ERR_NOT_FOUND);
  mcpp_runtime_free(rt);
}
