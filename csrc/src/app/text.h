/* A growing string for the application layer's output (both commands and
 * the config rewrite), JSON strings escaped as json.dumps(ensure_ascii=False)
 * and JSON.stringify write them, and floats as Python prints them. */
#ifndef MCPP_APP_TEXT_H
#define MCPP_APP_TEXT_H

#include <stddef.h>

typedef struct mcpp__text {
  char *p;
  size_t len, cap;
  int oom; /* an allocation failed: the text is incomplete */
} mcpp__text;

void mcpp__text_put(mcpp__text *t, const char *s, size_t n);
void mcpp__text_puts(mcpp__text *t, const char *s);
void mcpp__text_printf(mcpp__text *t, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
void mcpp__text_json_string(mcpp__text *t, const char *s); /* NULL: null */
/* A double as Python's json.dumps prints a float: 20.0, 0.123, 1e-05
 * (null if not finite). */
void mcpp__text_py_float(mcpp__text *t, double d);
/* The shortest text that reads back as x, as Python's repr(float) writes it
 * (nan, inf and -0.0 included). */
void mcpp__text_repr(char *out, size_t cap, double x);
/* The text, or NULL (and nothing leaked) if an allocation failed. */
char *mcpp__text_take(mcpp__text *t);
/* Frees the text and leaves it empty, ready for reuse. */
void mcpp__text_free(mcpp__text *t);

#endif
