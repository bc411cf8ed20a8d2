/*
 * libFuzzer harness for mcpp_http_url_parse and what is made of a URL
 * (http_url.c): the command line's, a config's and both libraries' URLs.
 * The input is the URL, in an exact-size copy (ASan catches a read past
 * its end; it has no NUL). A URL taken has a host, a port from 1 to 65535,
 * spans inside the input; its request URL is taken again with the same
 * host, port and target and no credentials; its name and credentials
 * report their whole length however short the buffer. The input also
 * feeds the resolve-error names.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "mcpping.h"

#define CHECK(cond) \
  do {              \
    if (!(cond)) abort(); \
  } while (0)

static int inside(const char *p, size_t n, const char *base, size_t size) {
  return p >= base && p + n <= base + size;
}

static char *text(const mcpp_http_url *u, mcpp_http_url_part part, size_t *len) {
  char small[8];
  *len = mcpp_http_url_text(u, part, small, sizeof small);
  char *out = malloc(*len + 1);
  CHECK(out);
  CHECK(mcpp_http_url_text(u, part, out, *len + 1) == *len && strlen(out) == *len);
  CHECK(memcmp(small, out, *len < sizeof small ? *len + 1 : sizeof small - 1) == 0);
  return out;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  char *url = malloc(size ? size : 1);
  CHECK(url);
  memcpy(url, data, size);
  mcpp_http_url u;
  const char *problem = mcpp_http_url_parse(url, size, &u);
  if (problem == NULL) {
    CHECK(u.host_len > 0 && inside(u.host, u.host_len, url, size));
    CHECK(u.port >= 1 && u.port <= 65535);
    CHECK(inside(u.target, u.target_len, url, size));
    CHECK(memchr(u.target, '#', u.target_len) == NULL);
    CHECK(u.userinfo == NULL || inside(u.userinfo, u.userinfo_len, url, size));
    size_t len;
    char *request = text(&u, MCPP_HTTP_URL_REQUEST, &len);
    mcpp_http_url again;
    CHECK(mcpp_http_url_parse(request, len, &again) == NULL);
    CHECK(again.userinfo == NULL && again.port == u.port && again.https == u.https);
    CHECK(again.host_len == u.host_len && memcmp(again.host, u.host, u.host_len) == 0);
    char *target = text(&u, MCPP_HTTP_URL_TARGET, &len);
    CHECK(len >= 1 && target[0] == '/' && again.target_len == len &&
          memcmp(again.target, target, len) == 0);
    free(target);
    free(request);
    free(text(&u, MCPP_HTTP_URL_NAME, &len));
    char small[4];
    size_t need = mcpp_http_url_credentials(&u, NULL, 0, small, sizeof small);
    CHECK((need == 0) == (u.userinfo == NULL));
    if (need) {
      char *auth = malloc(need + 1);
      CHECK(auth && mcpp_http_url_credentials(&u, NULL, 0, auth, need + 1) == need);
      CHECK(strncmp(auth, "Basic ", 6) == 0 && (need - 6) % 4 == 0);
      CHECK(strspn(auth + 6, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/=") ==
            need - 6);
      free(auth);
    }
    mcpp_http_header own = {"authorization", "x"};
    CHECK(mcpp_http_url_credentials(&u, &own, 1, small, sizeof small) == 0 && small[0] == '\0');
  } else {
    CHECK(strlen(problem) > 0);
  }
  /* The input as a redirect's Location from a fixed URL: followed only to
   * a URL on the same origin. */
  static const char from_text[] = "http://127.0.0.1:8000/mcp/";
  mcpp_http_url from, to;
  CHECK(mcpp_http_url_parse(from_text, sizeof from_text - 1, &from) == NULL);
  char *location = malloc(size + 1);
  CHECK(location);
  memcpy(location, data, size);
  location[size] = '\0';
  char where[64];
  size_t need = mcpp_http_redirect_url(307, location, &from, where, sizeof where);
  if (need) {
    char *out = malloc(need + 1);
    CHECK(out && mcpp_http_redirect_url(307, location, &from, out, need + 1) == need);
    CHECK(mcpp_http_url_parse(out, need, &to) == NULL && to.port == 8000 && !to.https &&
          to.userinfo == NULL && to.host_len == 9 && memcmp(to.host, "127.0.0.1", 9) == 0);
    free(out);
  }
  CHECK(mcpp_http_redirect_url(302, location, &from, where, sizeof where) == 0);
  free(location);
  int code = 0;
  memcpy(&code, data, size < sizeof code ? size : sizeof code);
  const char *name = mcpp_http_resolve_error_name(code);
  CHECK(name == NULL || name[0] == 'E');
  free(url);
  return 0;
}
