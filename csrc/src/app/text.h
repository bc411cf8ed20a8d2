/* A growing string for the application layer's output, and JSON strings
 * escaped as json.dumps(ensure_ascii=False) and JSON.stringify write them. */
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
/* A double as Python's json.dumps prints a float (20 -> 20.0). */
void mcpp__text_py_float(mcpp__text *t, double d);
/* The text, or NULL (and nothing leaked) if an allocation failed. */
char *mcpp__text_take(mcpp__text *t);

#endif
