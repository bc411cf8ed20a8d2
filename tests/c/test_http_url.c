/* Which Streamable HTTP URLs mcpping opens and what it makes of one
 * (http_url.c, issue 22): one rule for the command line, configs and both
 * bindings, where Python crashed on "http://[::1" and Node said only
 * "Invalid URL". */
#include <netdb.h>
#include <string.h>

#include "engine_fixture.h"

static const char *problem_of(const char *url) {
  mcpp_http_url u;
  return mcpp_http_url_parse(url, strlen(url), &u);
}

static const char *text_of(const char *url, mcpp_http_url_part part) {
  static char buf[256];
  mcpp_http_url u;
  if (mcpp_http_url_parse(url, strlen(url), &u) != NULL) return "(refused)";
  mcpp_http_url_text(&u, part, buf, sizeof buf);
  return buf;
}

TEST(http_url_parts_of_the_urls_servers_use) {
  mcpp_http_url u;
  const char *url = "https://Example.com:8443/mcp?x=1#frag";
  ASSERT(mcpp_http_url_parse(url, strlen(url), &u) == NULL);
  ASSERT_EQ(1, u.https);
  ASSERT_UINT_EQ(8443, u.port);
  ASSERT_UINT_EQ(11, u.host_len);
  ASSERT_MEM_EQ(u.host, u.host_len, "Example.com");
  ASSERT(u.userinfo == NULL);
  ASSERT_STR_EQ("https://Example.com:8443/mcp?x=1", text_of(url, MCPP_HTTP_URL_REQUEST));
  ASSERT_STR_EQ("/mcp?x=1", text_of(url, MCPP_HTTP_URL_TARGET));
  ASSERT_STR_EQ("Example.com:8443", text_of(url, MCPP_HTTP_URL_NAME));
  ASSERT_STR_EQ("Example.com", text_of(url, MCPP_HTTP_URL_HOST));
  /* Default ports, an empty path, the scheme in any case, ":" alone. */
  ASSERT_STR_EQ("http://127.0.0.1:80/", text_of("HTTP://127.0.0.1", MCPP_HTTP_URL_REQUEST));
  ASSERT_STR_EQ("h:443", text_of("https://h:/", MCPP_HTTP_URL_NAME));
  ASSERT_STR_EQ("/?q", text_of("http://h?q", MCPP_HTTP_URL_TARGET));
  /* IPv6: brackets in the name and the request, none in the host. */
  ASSERT_STR_EQ("[::1]:3000", text_of("http://[::1]:3000/mcp", MCPP_HTTP_URL_NAME));
  ASSERT_STR_EQ("::1", text_of("http://[::1]:3000/mcp", MCPP_HTTP_URL_HOST));
  ASSERT_STR_EQ("http://[::ffff:127.0.0.1]:80/",
                text_of("http://[::ffff:127.0.0.1]", MCPP_HTTP_URL_REQUEST));
  /* What a sentence or a record may quote: no credentials, no query. */
  ASSERT_STR_EQ("http://***@127.0.0.1:9/mcp?***",
                text_of("http://u:sekrit@127.0.0.1:9/mcp?token=sekrit#f", MCPP_HTTP_URL_SHOWN));
  ASSERT_STR_EQ("https://h:443/", text_of("https://h", MCPP_HTTP_URL_SHOWN));
  ASSERT_STR_EQ("http://[::1]:8/a/b", text_of("http://[::1]:8/a/b#x", MCPP_HTTP_URL_SHOWN));
  ASSERT_STR_EQ("http://h:80/?***", text_of("http://h?q", MCPP_HTTP_URL_SHOWN));
  /* Credentials never reach the request URL. */
  ASSERT_STR_EQ("http://127.0.0.1:9/mcp", text_of("http://u:p@127.0.0.1:9/mcp", MCPP_HTTP_URL_REQUEST));
}

TEST(http_url_refuses_what_no_client_should_send) {
  ASSERT_STR_EQ("is not an http:// or https:// URL", problem_of("ftp://h/"));
  ASSERT_STR_EQ("is not an http:// or https:// URL", problem_of("http:/h/"));
  ASSERT_STR_EQ("has no host", problem_of("http://"));
  ASSERT_STR_EQ("has no host", problem_of("http:///mcp"));
  ASSERT_STR_EQ("has no host", problem_of("http://:8080/mcp"));
  ASSERT_STR_EQ("has no host", problem_of("http://u:p@/mcp"));
  ASSERT_STR_EQ("has an IPv6 address without its closing ]", problem_of("http://[::1"));
  ASSERT_STR_EQ("has an IPv6 address that is not hex digits, colons and dots",
                problem_of("http://[zz]:1/"));
  ASSERT_STR_EQ("has something other than :PORT after its IPv6 address",
                problem_of("http://[::1]x/"));
  const char *port = "has a port that is not a number from 1 to 65535";
  ASSERT_STR_EQ(port, problem_of("http://h:99999/"));
  ASSERT_STR_EQ(port, problem_of("http://h:0/"));
  ASSERT_STR_EQ(port, problem_of("http://h:-1/"));
  ASSERT_STR_EQ(port, problem_of("http://h:abc/"));
  ASSERT_STR_EQ(port, problem_of("http://h:1:2/"));
  ASSERT_STR_EQ(port, problem_of("http://h:99999999999999999999/"));
  ASSERT(problem_of("http://h:65535/") == NULL);
  ASSERT(strstr(problem_of("http://a b/"), "space") != NULL);
  ASSERT(strstr(problem_of("http://h/m cp"), "space") != NULL);
  ASSERT(strstr(problem_of("http://h/\r\nX: y"), "control") != NULL);
  ASSERT(strstr(problem_of("http://h\xc3\xa9.com/"), "beyond ASCII") != NULL);
  ASSERT(strstr(problem_of("http://h,x/"), "host with a character") != NULL);
  ASSERT(strstr(problem_of("http://h/%zz"), "path or query") != NULL);
  ASSERT(strstr(problem_of("http://h/%4"), "path or query") != NULL);
  ASSERT(strstr(problem_of("http://u%:p@h/"), "user or password") != NULL);
  ASSERT(problem_of("http://h/%41#%zz") == NULL); /* the fragment is never sent */
  mcpp_http_url u;
  ASSERT_STR_EQ("is not an http:// or https:// URL", mcpp_http_url_parse(NULL, 0, &u));
  /* len bounds the parse: a NUL-free prefix is a URL of its own. */
  ASSERT(mcpp_http_url_parse("http://h/x y", 10, &u) == NULL);
  ASSERT_UINT_EQ(2, u.target_len);
}

static const char *credentials_of(const char *url, const mcpp_http_header *extra, size_t n) {
  static char buf[128];
  mcpp_http_url u;
  ASSERT(mcpp_http_url_parse(url, strlen(url), &u) == NULL);
  mcpp_http_url_credentials(&u, extra, n, buf, sizeof buf);
  return buf;
}

TEST(http_url_credentials_become_basic_unless_the_caller_sends_its_own) {
  /* RFC 7617's example, and the decoded form of an escaped '@' and ':'. */
  ASSERT_STR_EQ("Basic QWxhZGRpbjpvcGVuIHNlc2FtZQ==",
                credentials_of("http://Aladdin:open%20sesame@h/", NULL, 0));
  ASSERT_STR_EQ("Basic dUB4OnA6cQ==", credentials_of("http://u%40x:p%3Aq@h/", NULL, 0));
  ASSERT_STR_EQ("Basic dTo=", credentials_of("http://u:@h/", NULL, 0));
  ASSERT_STR_EQ("Basic dQ==", credentials_of("http://u@h/", NULL, 0));
  ASSERT_STR_EQ("", credentials_of("http://h/", NULL, 0));
  /* The last '@' ends them (a browser's reading of an unescaped one). */
  ASSERT_STR_EQ("Basic dUBoOnA=", credentials_of("http://u@h:p@host/", NULL, 0));
  mcpp_http_header own[] = {{"X-A", "1"}, {"AUTHORIZATION", "Bearer t"}};
  ASSERT_STR_EQ("", credentials_of("http://u:p@h/", own, 2));
  ASSERT_STR_EQ("Basic dTpw", credentials_of("http://u:p@h/", own, 1));
  /* Sized as snprintf: the length of what did not fit. */
  mcpp_http_url u;
  char small[4];
  ASSERT(mcpp_http_url_parse("http://u:p@h/", 13, &u) == NULL);
  ASSERT_UINT_EQ(10, mcpp_http_url_credentials(&u, NULL, 0, small, sizeof small));
  ASSERT_STR_EQ("Bas", small);
  ASSERT_UINT_EQ(4, mcpp_http_url_text(&u, MCPP_HTTP_URL_NAME, small, sizeof small)); /* "h:80" */
  ASSERT_STR_EQ("h:8", small);
}

TEST(http_resolve_error_names_as_node_gives_them) {
  ASSERT_STR_EQ("ENOTFOUND", mcpp_http_resolve_error_name(EAI_NONAME));
#ifdef EAI_NODATA
  ASSERT_STR_EQ("ENOTFOUND", mcpp_http_resolve_error_name(EAI_NODATA));
#endif
  ASSERT_STR_EQ("EAI_AGAIN", mcpp_http_resolve_error_name(EAI_AGAIN));
  ASSERT_STR_EQ("EAI_FAIL", mcpp_http_resolve_error_name(EAI_FAIL));
  ASSERT(mcpp_http_resolve_error_name(12345) == NULL);
}

TEST(http_tls_error_names_as_node_gives_them) {
  ASSERT_STR_EQ("EPROTO", mcpp_http_tls_error_name(0));
  ASSERT_STR_EQ("DEPTH_ZERO_SELF_SIGNED_CERT", mcpp_http_tls_error_name(18));
  ASSERT_STR_EQ("CERT_HAS_EXPIRED", mcpp_http_tls_error_name(10));
  ASSERT_STR_EQ("ERR_TLS_CERT_ALTNAME_INVALID", mcpp_http_tls_error_name(62));
  ASSERT_STR_EQ("CERT_VERIFY_FAILED", mcpp_http_tls_error_name(999));
}

static const char *redirect(int status, const char *location, const char *from) {
  static char out[256];
  mcpp_http_url u;
  ASSERT(mcpp_http_url_parse(from, strlen(from), &u) == NULL);
  return mcpp_http_redirect_url(status, location, &u, out, sizeof out) ? out : NULL;
}

TEST(http_redirect_follows_307_and_308_on_the_same_origin_only) {
  /* The official Python SDK's server: POST /mcp/ is a 307 to /mcp. */
  ASSERT_STR_EQ("http://127.0.0.1:8000/mcp", redirect(307, "http://127.0.0.1:8000/mcp", "http://127.0.0.1:8000/mcp/"));
  ASSERT_STR_EQ("http://127.0.0.1:8000/mcp?x", redirect(308, " /mcp?x#f ", "http://u:p@127.0.0.1:8000/mcp/"));
  ASSERT_STR_EQ("https://h:443/", redirect(307, "https://h/", "https://H/a")); /* host case ignored */
  ASSERT_STR_EQ("http://[::1]:80/x", redirect(307, "/x", "http://[::1]/"));
  /* Another origin, a method-changing status, nothing usable: not followed. */
  ASSERT(redirect(307, "http://evil.example:8000/mcp", "http://127.0.0.1:8000/mcp/") == NULL);
  ASSERT(redirect(307, "https://127.0.0.1:8000/mcp", "http://127.0.0.1:8000/mcp/") == NULL);
  ASSERT(redirect(307, "http://127.0.0.1:8001/mcp", "http://127.0.0.1:8000/mcp/") == NULL);
  ASSERT(redirect(307, "//evil.example/mcp", "http://127.0.0.1:8000/mcp/") == NULL);
  ASSERT(redirect(307, "mcp", "http://127.0.0.1:8000/mcp/") == NULL);
  ASSERT(redirect(307, "/a b", "http://h/") == NULL);
  ASSERT(redirect(307, "", "http://h/") == NULL);
  ASSERT(redirect(307, NULL, "http://h/") == NULL);
  ASSERT(redirect(302, "/mcp", "http://h/mcp/") == NULL);
  ASSERT(redirect(301, "/mcp", "http://h/mcp/") == NULL);
  ASSERT(redirect(200, "/mcp", "http://h/mcp/") == NULL);
}
