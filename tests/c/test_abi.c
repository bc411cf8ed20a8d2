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

static void message_nowhere(mcpp_conn *c, const char *f, size_t n, void *ud) {}

TEST(option_and_callback_structs_of_an_unknown_version_are_refused) {
  /* Zeroed structs are version 1; any version the library does not know
   * is refused before anything is read or started. */
  mcpp_settings s;
  mcpp_settings_default(&s);
  mcpp_engine_callbacks cb;
  memset(&cb, 0, sizeof cb);
  cb.send = send_nothing;
  mcpp_engine *e = NULL;
  cb.version = MCPP_ENGINE_CALLBACKS_V1 + 1;
  ASSERT_EQ(mcpp_engine_new(&e, &s, &cb, NULL, NULL, 0), MCPP_ERR_INVALID_ARGUMENT);
  ASSERT(e == NULL);
  cb.version = MCPP_ENGINE_CALLBACKS_V1;
  ASSERT_EQ(mcpp_engine_new(&e, &s, &cb, NULL, NULL, 0), 0);
  mcpp_engine_free(e);

  mcpp_runtime_options ro;
  memset(&ro, 0, sizeof ro);
  mcpp_runtime *rt = (mcpp_runtime *)&ro; /* must be reset to NULL */
  ro.version = -1;
  ASSERT_EQ(mcpp_runtime_new(&rt, &ro), MCPP_ERR_INVALID_ARGUMENT);
  ASSERT(rt == NULL);
  ro.version = 0;
  ASSERT_EQ(mcpp_runtime_new(&rt, &ro), 0);

  char *args[] = {"true", NULL};
  mcpp_spawn_options so;
  memset(&so, 0, sizeof so);
  so.file = args[0];
  so.args = args;
  so.version = MCPP_SPAWN_OPTIONS_V1 + 1;
  uint64_t id = 0;
  ASSERT_EQ(mcpp_runtime_spawn(rt, &s, &so, NULL, &id, NULL, 0),
            MCPP_ERR_INVALID_ARGUMENT);
  mcpp_host_options ho;
  memset(&ho, 0, sizeof ho);
  ho.version = MCPP_HOST_OPTIONS_V2 + 1; /* the newest known plus one */
  int fd = -1;
  ASSERT_EQ(mcpp_runtime_host_attach(rt, &ho, &fd), MCPP_ERR_INVALID_ARGUMENT);
  mcpp_runtime_free(rt);

  /* The driver checks both of its structs before it looks at the loop. */
  mcpp_conn_callbacks cc;
  memset(&cc, 0, sizeof cc);
  cc.on_message = message_nowhere;
  mcpp_conn *conn = NULL;
  uv_loop_t *not_a_loop = (uv_loop_t *)&cc;
  ASSERT_EQ(mcpp_conn_spawn(&conn, not_a_loop, &s, &so, &cc, NULL, NULL),
            MCPP_ERR_INVALID_ARGUMENT);
  so.version = MCPP_SPAWN_OPTIONS_V1;
  cc.version = MCPP_CONN_CALLBACKS_V1 + 1;
  ASSERT_EQ(mcpp_conn_spawn(&conn, not_a_loop, &s, &so, &cc, NULL, NULL),
            MCPP_ERR_INVALID_ARGUMENT);
  ASSERT(conn == NULL);
}
