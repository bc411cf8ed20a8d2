/* Which Streamable HTTP URLs mcpping opens and what it makes of one (see
 * rules.h): the host and port it connects to, the request target, the
 * server's name before its handshake, the Basic credentials a URL's
 * user:password becomes. The command line, a config's url, Python's
 * http.connect and Node's HttpSession all ask here, so a URL either side
 * refuses is refused by both, with the same sentence, before anything is
 * sent. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* glibc's EAI_NODATA and EAI_ADDRFAMILY */
#endif
#include <stdio.h>
#include <string.h>
#ifdef _WIN32
#include <ws2tcpip.h>
#else
#include <netdb.h>
#endif

#include "internal.h"

static int lower(int c) { return c >= 'A' && c <= 'Z' ? c + ('a' - 'A') : c; }

/* 1 if s (n bytes) starts with prefix, ASCII case ignored. */
static int starts_with(const char *s, size_t n, const char *prefix) {
  size_t k = strlen(prefix);
  if (n < k) return 0;
  for (size_t i = 0; i < k; i++)
    if (lower((unsigned char)s[i]) != prefix[i]) return 0;
  return 1;
}

static int hex_value(int c) {
  if (c >= '0' && c <= '9') return c - '0';
  c = lower(c);
  return c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
}

static int is_alnum(int c) {
  return (c >= '0' && c <= '9') || (lower(c) >= 'a' && lower(c) <= 'z');
}

/* RFC 3986 reg-name without percent-escapes (which no resolver takes). */
static int is_host_char(int c) { return is_alnum(c) || (c != '\0' && strchr("-._~", c)); }

/* 1 if s (n bytes) has a valid %XX at every '%'. */
static int escapes_ok(const char *s, size_t n) {
  for (size_t i = 0; i < n; i++)
    if (s[i] == '%' && (i + 2 >= n || hex_value((unsigned char)s[i + 1]) < 0 ||
                        hex_value((unsigned char)s[i + 2]) < 0))
      return 0;
  return 1;
}

/* The IPv6 literal between brackets: hex digits, colons, dots (an IPv4
 * tail); at least two colons. A zone ("%25eth0") is not taken: no HTTP
 * client of either host sends one. */
static int ipv6_ok(const char *s, size_t n) {
  size_t colons = 0;
  for (size_t i = 0; i < n; i++) {
    if (s[i] == ':') colons++;
    else if (s[i] != '.' && hex_value((unsigned char)s[i]) < 0) return 0;
  }
  return colons >= 2;
}

const char *mcpp_http_url_parse(const char *url, size_t len, mcpp_http_url *out) {
  memset(out, 0, sizeof *out);
  if (url == NULL) return "is not an http:// or https:// URL";
  for (size_t i = 0; i < len; i++) {
    unsigned char c = (unsigned char)url[i];
    if (c <= ' ' || c >= 0x7f)
      return "has a space, a control character or a character beyond ASCII "
             "(percent-encode it; write an international host name in its xn-- form)";
  }
  size_t i;
  if (starts_with(url, len, "https://")) {
    out->https = 1;
    i = 8;
  } else if (starts_with(url, len, "http://")) {
    i = 7;
  } else {
    return "is not an http:// or https:// URL";
  }
  size_t end = i; /* the authority ends at the path, query or fragment */
  while (end < len && url[end] != '/' && url[end] != '?' && url[end] != '#') end++;
  /* user:password@ is the last '@' before the path (RFC 3986 puts no '@'
   * in a host; a password may hold one only escaped, but browsers take the
   * last). */
  const char *at = NULL;
  for (size_t k = i; k < end; k++)
    if (url[k] == '@') at = url + k;
  if (at != NULL) {
    out->userinfo = url + i;
    out->userinfo_len = (size_t)(at - (url + i));
    if (!escapes_ok(out->userinfo, out->userinfo_len))
      return "has a % in its user or password that is not followed by two hex digits";
    i = (size_t)(at - url) + 1;
  }
  size_t port_at; /* where ":PORT" starts, or end */
  if (i < end && url[i] == '[') {
    const char *close = memchr(url + i, ']', end - i);
    if (close == NULL) return "has an IPv6 address without its closing ]";
    out->host = url + i + 1;
    out->host_len = (size_t)(close - out->host);
    out->ipv6 = 1;
    if (!ipv6_ok(out->host, out->host_len))
      return "has an IPv6 address that is not hex digits, colons and dots";
    port_at = (size_t)(close + 1 - url);
    if (port_at < end && url[port_at] != ':')
      return "has something other than :PORT after its IPv6 address";
  } else {
    port_at = i;
    while (port_at < end && url[port_at] != ':') port_at++;
    out->host = url + i;
    out->host_len = port_at - i;
    for (size_t k = 0; k < out->host_len; k++)
      if (!is_host_char((unsigned char)out->host[k]))
        return "has a host with a character other than letters, digits, '-', '.', '_' and '~'";
  }
  if (out->host_len == 0) return "has no host";
  out->port = out->https ? 443 : 80;
  if (port_at < end) {
    /* ":" and no digits is the default port (RFC 3986 3.2.3). */
    static const char bad_port[] = "has a port that is not a number from 1 to 65535";
    unsigned long port = 0;
    size_t digits = 0;
    for (size_t k = port_at + 1; k < end; k++, digits++) {
      if (url[k] < '0' || url[k] > '9' || port > 65535) return bad_port;
      port = port * 10 + (unsigned long)(url[k] - '0');
    }
    if (digits > 0) {
      if (port < 1 || port > 65535) return bad_port;
      out->port = (unsigned)port;
    }
  }
  /* The target: path and query; a request never carries the fragment. */
  size_t target_end = end;
  while (target_end < len && url[target_end] != '#') target_end++;
  out->target = url + end;
  out->target_len = target_end - end;
  if (!escapes_ok(out->target, out->target_len))
    return "has a % in its path or query that is not followed by two hex digits";
  return NULL;
}

/* Appends n bytes of s to out (at most cap with its NUL), counting all. */
static void put(char *out, size_t cap, size_t *n, const char *s, size_t len) {
  for (size_t k = 0; k < len; k++, (*n)++)
    if (*n + 1 < cap) out[*n] = s[k];
}

static void put_str(char *out, size_t cap, size_t *n, const char *s) {
  put(out, cap, n, s, strlen(s));
}

static void put_host_port(const mcpp_http_url *u, char *out, size_t cap, size_t *n) {
  char port[8];
  if (u->ipv6) put_str(out, cap, n, "[");
  put(out, cap, n, u->host, u->host_len);
  if (u->ipv6) put_str(out, cap, n, "]");
  snprintf(port, sizeof port, ":%u", u->port);
  put_str(out, cap, n, port);
}

/* base64 of the percent-decoded user:password (RFC 7617). */
static void put_basic(const mcpp_http_url *u, char *out, size_t cap, size_t *n) {
  static const char b64[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  unsigned acc = 0;
  int bits = 0;
  put_str(out, cap, n, "Basic ");
  for (size_t k = 0; k < u->userinfo_len; k++) {
    unsigned char c = (unsigned char)u->userinfo[k];
    if (c == '%') { /* checked by the parse */
      c = (unsigned char)(hex_value((unsigned char)u->userinfo[k + 1]) * 16 +
                          hex_value((unsigned char)u->userinfo[k + 2]));
      k += 2;
    }
    acc = (acc << 8) | c;
    bits += 8;
    while (bits >= 6) {
      bits -= 6;
      put(out, cap, n, &b64[(acc >> bits) & 63], 1);
    }
  }
  if (bits > 0) {
    put(out, cap, n, &b64[(acc << (6 - bits)) & 63], 1);
    put_str(out, cap, n, bits == 2 ? "==" : "=");
  }
}

size_t mcpp_http_url_text(const mcpp_http_url *u, mcpp_http_url_part part, char *out,
                          size_t cap) {
  size_t n = 0;
  switch (part) {
    case MCPP_HTTP_URL_REQUEST:
      put_str(out, cap, &n, u->https ? "https://" : "http://");
      put_host_port(u, out, cap, &n);
      if (u->target_len == 0 || u->target[0] != '/') put_str(out, cap, &n, "/");
      put(out, cap, &n, u->target, u->target_len);
      break;
    case MCPP_HTTP_URL_TARGET:
      if (u->target_len == 0 || u->target[0] != '/') put_str(out, cap, &n, "/");
      put(out, cap, &n, u->target, u->target_len);
      break;
    case MCPP_HTTP_URL_SHOWN: {
      const char *query = memchr(u->target, '?', u->target_len);
      size_t path_len = query ? (size_t)(query - u->target) : u->target_len;
      put_str(out, cap, &n, u->https ? "https://" : "http://");
      if (u->userinfo != NULL) put_str(out, cap, &n, "***@");
      put_host_port(u, out, cap, &n);
      if (path_len == 0 || u->target[0] != '/') put_str(out, cap, &n, "/");
      put(out, cap, &n, u->target, path_len);
      if (query != NULL) put_str(out, cap, &n, "?***");
      break;
    }
    case MCPP_HTTP_URL_NAME: put_host_port(u, out, cap, &n); break;
    case MCPP_HTTP_URL_HOST: put(out, cap, &n, u->host, u->host_len); break;
  }
  if (cap > 0) out[n < cap ? n : cap - 1] = '\0';
  return n;
}

size_t mcpp_http_url_credentials(const mcpp_http_url *u, const mcpp_http_header *extra,
                                 size_t n_extra, char *out, size_t cap) {
  static const char auth[] = "authorization";
  size_t n = 0;
  if (cap > 0) out[0] = '\0';
  if (u->userinfo == NULL) return 0;
  /* The caller's own Authorization wins (as Node's http module decides). */
  for (size_t i = 0; i < n_extra; i++)
    if (extra[i].name != NULL && strlen(extra[i].name) == sizeof auth - 1 &&
        mcpp__same_token(extra[i].name, auth, sizeof auth - 1))
      return 0;
  put_basic(u, out, cap, &n);
  if (cap > 0) out[n < cap ? n : cap - 1] = '\0';
  return n;
}

const char *mcpp_http_resolve_error_name(int code) {
  switch (code) {
#ifdef EAI_NONAME
    case EAI_NONAME: return "ENOTFOUND";
#endif
#if defined(EAI_NODATA) && (!defined(EAI_NONAME) || EAI_NODATA != EAI_NONAME)
    case EAI_NODATA: return "ENOTFOUND";
#endif
#ifdef EAI_AGAIN
    case EAI_AGAIN: return "EAI_AGAIN";
#endif
#ifdef EAI_FAIL
    case EAI_FAIL: return "EAI_FAIL";
#endif
#if defined(EAI_ADDRFAMILY)
    case EAI_ADDRFAMILY: return "EAI_ADDRFAMILY";
#endif
#ifdef EAI_FAMILY
    case EAI_FAMILY: return "EAI_FAMILY";
#endif
#ifdef EAI_MEMORY
    case EAI_MEMORY: return "EAI_MEMORY";
#endif
#ifdef EAI_SERVICE
    case EAI_SERVICE: return "EAI_SERVICE";
#endif
    default: return NULL;
  }
}

const char *mcpp_http_tls_error_name(int verify_code) {
  /* OpenSSL's X509_V_ERR_* without the prefix, as Node's tls names them. */
  switch (verify_code) {
    case 0: return "EPROTO"; /* the handshake itself failed */
    case 2: return "UNABLE_TO_GET_ISSUER_CERT";
    case 9: return "CERT_NOT_YET_VALID";
    case 10: return "CERT_HAS_EXPIRED";
    case 18: return "DEPTH_ZERO_SELF_SIGNED_CERT";
    case 19: return "SELF_SIGNED_CERT_IN_CHAIN";
    case 20: return "UNABLE_TO_GET_ISSUER_CERT_LOCALLY";
    case 21: return "UNABLE_TO_VERIFY_LEAF_SIGNATURE";
    case 23: return "CERT_REVOKED";
    case 62: return "ERR_TLS_CERT_ALTNAME_INVALID"; /* X509_V_ERR_HOSTNAME_MISMATCH */
    default: return "CERT_VERIFY_FAILED";
  }
}

size_t mcpp_http_redirect_url(int status, const char *location, const mcpp_http_url *from,
                              char *out, size_t cap) {
  if (cap > 0) out[0] = '\0';
  if ((status != 307 && status != 308) || location == NULL || from == NULL) return 0;
  size_t len = strlen(location);
  while (len > 0 && (location[len - 1] == ' ' || location[len - 1] == '\t')) len--;
  while (len > 0 && (*location == ' ' || *location == '\t')) location++, len--;
  mcpp_http_url to;
  if (len > 0 && location[0] == '/' && (len == 1 || location[1] != '/')) {
    /* A path on the same server: the request's scheme, host and port. */
    to = *from;
    to.target = location;
    to.target_len = 0;
    while (to.target_len < len && location[to.target_len] != '#') to.target_len++;
    for (size_t k = 0; k < to.target_len; k++) {
      unsigned char c = (unsigned char)location[k];
      if (c <= ' ' || c >= 0x7f) return 0;
    }
    if (!escapes_ok(to.target, to.target_len)) return 0;
  } else if (mcpp_http_url_parse(location, len, &to) != NULL || to.https != from->https ||
             to.port != from->port || to.host_len != from->host_len ||
             !mcpp__same_token(to.host, from->host, to.host_len)) {
    return 0; /* elsewhere: the caller's headers (credentials) go to no other origin */
  }
  to.userinfo = NULL;
  to.userinfo_len = 0;
  return mcpp_http_url_text(&to, MCPP_HTTP_URL_REQUEST, out, cap);
}
