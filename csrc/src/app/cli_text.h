/* Text helpers of the command's output: a growing byte buffer, floats as
 * Python's repr() prints them, JSON strings. */
#ifndef MCPP_APP_CLI_TEXT_H
#define MCPP_APP_CLI_TEXT_H

#include <stddef.h>

#include "mcpping/app.h"

typedef struct mcpp__cli_buf {
  char *data;
  size_t len, cap;
  int failed; /* an allocation failed: the text is cut short */
} mcpp__cli_buf;

void mcpp__cli_put(mcpp__cli_buf *b, const char *s, size_t n);
void mcpp__cli_printf(mcpp__cli_buf *b, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
/* A JSON string (or null for NULL), escaped as json.dumps(ensure_ascii=False). */
void mcpp__cli_json_str(mcpp__cli_buf *b, const char *s);
/* A JSON float as json.dumps prints it: 20.0, 0.123, 1e-05 (null if not
 * finite). */
void mcpp__cli_json_float(mcpp__cli_buf *b, double x);
/* The shortest text that reads back as x, as Python's repr(float). */
void mcpp__cli_repr(char *out, size_t cap, double x);
void mcpp__cli_buf_free(mcpp__cli_buf *b);

#endif
