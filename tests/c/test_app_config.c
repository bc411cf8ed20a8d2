/* --config --wrap/--unwrap in C: JSONC, each client format, the wrapped
 * entry's exact form, the round trip, and the output bytes. */
#include <stdlib.h>
#include <string.h>

#include "mcpping.h"
#include "task.h"

static const char *const LAUNCHER[] = {"/opt/venv/bin/mcpping"};

static char *rewrite(const char *in, int unwrap, int *changed, int *comments) {
  char *out = NULL;
  size_t len = 0;
  ASSERT_EQ(mcpp_config_rewrite(in, strlen(in), unwrap, LAUNCHER, 1, &out, &len, changed,
                                comments),
            0);
  ASSERT_EQ(len, strlen(out));
  return out;
}

TEST(app_config_jsonc_blanks_comments_and_trailing_commas_in_place) {
  char t[] = "{\"a\": \"//x\", // c\n /* b\n */ \"b\": [1,],}";
  size_t n = strlen(t);
  ASSERT_EQ(mcpp_config_strip_jsonc(t, n), 1);
  ASSERT_EQ(strlen(t), n);
  ASSERT_STR_EQ(t, "{\"a\": \"//x\",     \n     \n    \"b\": [1 ] }");
  char plain[] = "{\"a\": [1, 2]}";
  ASSERT_EQ(mcpp_config_strip_jsonc(plain, strlen(plain)), 0);
}

TEST(app_config_wrap_writes_absolute_launcher_name_and_original_command) {
  int changed = 0, comments = 0;
  char *out = rewrite("{\"mcpServers\": {\"fs\": {\"command\": \"npx\", \"args\": [\"-y\", "
                      "\"srv\"], \"env\": {\"K\": \"v\"}}, \"web\": {\"url\": \"http://h/\"}}}",
                      0, &changed, &comments);
  ASSERT_EQ(changed, 1);
  ASSERT_EQ(comments, 0);
  ASSERT_STR_EQ(out, "{\n"
                     "  \"mcpServers\": {\n"
                     "    \"fs\": {\n"
                     "      \"command\": \"/opt/venv/bin/mcpping\",\n"
                     "      \"args\": [\n"
                     "        \"wrap\",\n"
                     "        \"--name\",\n"
                     "        \"fs\",\n"
                     "        \"--\",\n"
                     "        \"npx\",\n"
                     "        \"-y\",\n"
                     "        \"srv\"\n"
                     "      ],\n"
                     "      \"env\": {\n"
                     "        \"K\": \"v\"\n"
                     "      }\n"
                     "    },\n"
                     "    \"web\": {\n"
                     "      \"url\": \"http://h/\"\n"
                     "    }\n"
                     "  }\n"
                     "}\n");
  mcpp_config_free(out);
}

TEST(app_config_wrap_then_unwrap_gives_back_the_same_bytes) {
  const char *formats[] = {
      /* Claude Desktop / Cursor, without and with args. */
      "{\n  \"mcpServers\": {\n    \"a\": {\n      \"command\": \"uvx\"\n    },\n"
      "    \"b\": {\n      \"command\": \"node\",\n      \"args\": [\n        \"s.js\"\n"
      "      ],\n      \"disabled\": false,\n      \"n\": 3\n    }\n  }\n}\n",
      /* VS Code mcp.json. */
      "{\n  \"servers\": {\n    \"v\": {\n      \"type\": \"stdio\",\n      \"command\": "
      "\"x\"\n    },\n    \"h\": {\n      \"type\": \"http\",\n      \"url\": \"u\"\n    }\n"
      "  }\n}\n",
      /* VS Code settings.json. */
      "{\n  \"mcp\": {\n    \"servers\": {\n      \"s\": {\n        \"command\": "
      "\"\\u00e9\\\"q\\n\"\n      }\n    }\n  },\n  \"editor.x\": []\n}\n",
  };
  for (size_t i = 0; i < sizeof formats / sizeof *formats; i++) {
    int changed = 0;
    char *wrapped = rewrite(formats[i], 0, &changed, NULL);
    ASSERT_GE(changed, 1);
    int again = 0;
    char *twice = rewrite(wrapped, 0, &again, NULL);
    ASSERT_EQ(again, 0); /* never wrapped twice */
    ASSERT_STR_EQ(twice, wrapped);
    char *back = rewrite(wrapped, 1, &again, NULL);
    ASSERT_EQ(again, changed);
    /* \u00e9 comes back as the character itself, as json.dumps prints it. */
    if (i == 2) ASSERT(strstr(back, "\"\xC3\xA9\\\"q\\n\"") != NULL);
    else ASSERT_STR_EQ(back, formats[i]);
    mcpp_config_free(wrapped);
    mcpp_config_free(twice);
    mcpp_config_free(back);
  }
}

TEST(app_config_jsonc_and_bom_are_read_and_reported) {
  int changed = 0, comments = 0;
  char *out = rewrite("\xEF\xBB\xBF{\"servers\": {\"a\": {\"command\": \"x\",}, // hi\n},}", 0,
                      &changed, &comments);
  ASSERT_EQ(changed, 1);
  ASSERT_EQ(comments, 1);
  ASSERT(out[0] == '{');
  mcpp_config_free(out);
}

TEST(app_config_unwrap_knows_interpreter_launchers_and_drops_wrap_options) {
  int changed = 0;
  char *out = rewrite("{\"mcpServers\": {\"p\": {\"command\": \"/usr/bin/python3\", \"args\": "
                      "[\"-m\", \"mcpping\", \"wrap\", \"--name\", \"p\", \"--\", \"srv\", "
                      "\"--flag\"]}, \"n\": {\"command\": \"/usr/bin/node\", \"args\": "
                      "[\"/x/node/cli.js\", \"wrap\", \"--\", \"s\"]}, \"o\": {\"command\": "
                      "\"other\", \"args\": [\"wrap\", \"--\", \"s\"]}}}",
                      1, &changed, NULL);
  ASSERT_EQ(changed, 2);
  ASSERT(strstr(out, "\"p\": {\n      \"command\": \"srv\",\n      \"args\": [\n"
                     "        \"--flag\"\n      ]\n    }") != NULL);
  ASSERT(strstr(out, "\"n\": {\n      \"command\": \"s\"\n    }") != NULL);
  ASSERT(strstr(out, "\"command\": \"other\"") != NULL);
  mcpp_config_free(out);
}

TEST(app_config_rewrite_refuses_what_is_not_an_object) {
  char *out = NULL;
  int changed = 0;
  ASSERT_EQ(mcpp_config_rewrite("[1]", 3, 1, NULL, 0, &out, NULL, &changed, NULL),
            MCPP_ERR_INVALID_ARGUMENT);
  ASSERT_EQ(mcpp_config_rewrite("{", 1, 1, NULL, 0, &out, NULL, &changed, NULL),
            MCPP_ERR_INVALID_ARGUMENT);
  ASSERT_EQ(mcpp_config_rewrite("{}", 2, 0, NULL, 0, &out, NULL, &changed, NULL),
            MCPP_ERR_INVALID_ARGUMENT); /* wrapping needs a launcher */
  ASSERT(out == NULL);
}
