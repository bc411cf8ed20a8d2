/* The demo MCP server's answers (mcpping/app.h mcpp_demo_answer): one
 * table for `python -m mcpping.demo` and `node/demo-server.js`, which only
 * carry lines, so the two demos answer the same bytes. */
#include <cjson/cJSON.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "app/text.h"
#include "engine/scan.h"
#include "mcpping.h"

/* The versions the demo speaks, newest first (the first is its answer to
 * any other). */
static const char *const versions[] = {MCPP_PROTOCOL_VERSION, "2025-06-18", "2025-03-26",
                                       "2024-11-05"};

static const char tools[] =
    "{\"tools\":["
    "{\"name\":\"echo\",\"description\":\"Returns its text argument unchanged.\","
    "\"inputSchema\":{\"type\":\"object\",\"properties\":{\"text\":{\"type\":\"string\"}},"
    "\"required\":[\"text\"]}},"
    "{\"name\":\"add\",\"description\":\"Adds two numbers.\","
    "\"inputSchema\":{\"type\":\"object\",\"properties\":{\"a\":{\"type\":\"number\"},"
    "\"b\":{\"type\":\"number\"}},\"required\":[\"a\",\"b\"]}}]}";

static void initialize_result(mcpp__text *t, const cJSON *params) {
  const char *asked = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(params, "protocolVersion"));
  const char *version = versions[0];
  for (size_t i = 0; asked && i < sizeof versions / sizeof *versions; i++)
    if (strcmp(asked, versions[i]) == 0) version = versions[i];
  mcpp__text_puts(t, "{\"protocolVersion\":");
  mcpp__text_json_string(t, version);
  mcpp__text_puts(t, ",\"capabilities\":{\"tools\":{}},\"serverInfo\":{\"name\":\"mcpping-demo\","
                     "\"version\":\"" MCPP_VERSION "\"}}");
}

/* A number as JSON.stringify and Python's repr of an int write it: 5, not
 * 5.0; otherwise the shortest text that reads back as it. */
static void number_text(char *out, size_t cap, double x) {
  if (x == floor(x) && fabs(x) < 9007199254740992.0)
    snprintf(out, cap, "%.0f", x);
  else
    mcpp__text_repr(out, cap, x);
}

/* A tools/call result: the tool's text, or its error as MCP wants tool
 * errors said (a result with isError). */
static void call_result(mcpp__text *t, const cJSON *params) {
  const char *name = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(params, "name"));
  const cJSON *args = cJSON_GetObjectItemCaseSensitive(params, "arguments");
  char number[40];
  const char *text = NULL;
  mcpp__text why = {0};
  if (name && strcmp(name, "echo") == 0) {
    text = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(args, "text"));
    if (!text) mcpp__text_puts(&why, "bad arguments: echo takes a string 'text'");
  } else if (name && strcmp(name, "add") == 0) {
    const cJSON *a = cJSON_GetObjectItemCaseSensitive(args, "a");
    const cJSON *b = cJSON_GetObjectItemCaseSensitive(args, "b");
    if (cJSON_IsNumber(a) && cJSON_IsNumber(b)) {
      number_text(number, sizeof number, a->valuedouble + b->valuedouble);
      text = number;
    } else {
      mcpp__text_puts(&why, "bad arguments: add takes numbers 'a' and 'b'");
    }
  } else {
    mcpp__text_printf(&why, "unknown tool: %s", name ? name : "");
  }
  mcpp__text_puts(t, "{\"content\":[{\"type\":\"text\",\"text\":");
  mcpp__text_json_string(t, text ? text : why.p ? why.p : "");
  mcpp__text_puts(t, text ? "}],\"isError\":false}" : "}],\"isError\":true}");
  mcpp__text_free(&why);
}

char *mcpp_demo_answer(const char *line, size_t len) {
  size_t start = 0;
  /* (A NUL is no blank: strchr would find the string's own terminator.) */
  while (start < len && line[start] && strchr(" \t\r\n", line[start])) start++;
  if (start == len) return NULL; /* a blank line */
  mcpp__text t = {0};
  /* Strict JSON only (as Python's json and JSON.parse read it): a NUL or a
   * byte that is no UTF-8 would otherwise reach the answer. */
  cJSON *msg = mcpp__json_strict(line, len) ? cJSON_ParseWithLength(line, len) : NULL;
  if (!msg) {
    mcpp__text_puts(&t, "{\"jsonrpc\":\"2.0\",\"id\":null,\"error\":{\"code\":-32700,\"message\":\"Parse error\"}}");
    return mcpp__text_take(&t);
  }
  mcpp__msg raw;
  const char *method = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(msg, "method"));
  /* A notification or a response: nothing to answer. */
  if (!cJSON_IsObject(msg) || !method || mcpp__scan_message(line, len, &raw) != 0 || !raw.id.p) {
    cJSON_Delete(msg);
    return NULL;
  }
  const cJSON *id = cJSON_GetObjectItemCaseSensitive(msg, "id");
  if (!cJSON_IsString(id) && !cJSON_IsNumber(id) && !cJSON_IsNull(id)) {
    /* JSON-RPC ids are strings or numbers: an object's could span lines. */
    cJSON_Delete(msg);
    mcpp__text_puts(&t, "{\"jsonrpc\":\"2.0\",\"id\":null,\"error\":{\"code\":-32600,\"message\":\"Invalid Request\"}}");
    return mcpp__text_take(&t);
  }
  const cJSON *params = cJSON_GetObjectItemCaseSensitive(msg, "params");
  /* The id as the client wrote it, byte for byte. */
  mcpp__text_puts(&t, "{\"jsonrpc\":\"2.0\",\"id\":");
  mcpp__text_put(&t, raw.id.p, raw.id.n);
  if (strcmp(method, "initialize") == 0) {
    mcpp__text_puts(&t, ",\"result\":");
    initialize_result(&t, params);
  } else if (strcmp(method, "ping") == 0) {
    mcpp__text_puts(&t, ",\"result\":{}");
  } else if (strcmp(method, "tools/list") == 0) {
    mcpp__text_puts(&t, ",\"result\":");
    mcpp__text_puts(&t, tools);
  } else if (strcmp(method, "tools/call") == 0) {
    mcpp__text_puts(&t, ",\"result\":");
    call_result(&t, params);
  } else {
    mcpp__text_puts(&t, ",\"error\":{\"code\":-32601,\"message\":\"Method not found\"}");
  }
  mcpp__text_puts(&t, "}");
  cJSON_Delete(msg);
  return mcpp__text_take(&t);
}
