/* JSONC, as VS Code writes it: comments and trailing commas blanked out so a
 * plain JSON parser reads the rest, every other byte left where it was. */
#include <stdlib.h>
#include <string.h>

#include "app/config_jsonc.h"
#include "mcpping.h"

static int is_space(char c) {
  return c == ' ' || c == '\t' || c == '\n' || c == '\r';
}

int mcpp_config_strip_jsonc(char *t, size_t n) {
  int blanked = 0;
  size_t i = 0;
  size_t last_comma = (size_t)-1; /* a comma not yet followed by a value */
  while (i < n) {
    char c = t[i];
    if (c == '"') {
      last_comma = (size_t)-1;
      i++;
      while (i < n && t[i] != '"') i += t[i] == '\\' ? 2 : 1;
    } else if (c == '/' && i + 1 < n && t[i + 1] == '/') {
      for (; i < n && t[i] != '\n'; i++) t[i] = ' ';
      blanked = 1;
      continue;
    } else if (c == '/' && i + 1 < n && t[i + 1] == '*') {
      size_t end = i + 2;
      while (end + 1 < n && !(t[end] == '*' && t[end + 1] == '/')) end++;
      end = end + 1 < n ? end + 2 : n;
      for (; i < end; i++)
        if (t[i] != '\n') t[i] = ' ';
      blanked = 1;
      continue;
    } else if (c == ',') {
      last_comma = i;
    } else if (c == '}' || c == ']') {
      if (last_comma != (size_t)-1) {
        t[last_comma] = ' ';
        blanked = 1;
      }
      last_comma = (size_t)-1;
    } else if (!is_space(c)) {
      last_comma = (size_t)-1;
    }
    i++;
  }
  return blanked;
}

char *mcpp__config_plain(const char **text, size_t *len, int *blanked) {
  /* A BOM is not part of the text. */
  if (*len >= 3 && memcmp(*text, "\xEF\xBB\xBF", 3) == 0) {
    *text += 3;
    *len -= 3;
  }
  char *plain = malloc(*len + 1);
  if (!plain) return NULL;
  memcpy(plain, *text, *len);
  plain[*len] = '\0';
  int b = mcpp_config_strip_jsonc(plain, *len);
  if (blanked) *blanked = b;
  return plain;
}
