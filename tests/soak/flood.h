/*
 * The lines of the flood soak, built the same way by the server
 * (flood_server.c) and the checker (flood.c), so each byte the host gets
 * can be compared with what the server must have written.
 */
#ifndef MCPP_SOAK_FLOOD_H
#define MCPP_SOAK_FLOOD_H

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

/* Every flood line (stdout or stderr) is LINE bytes, newline included. */
enum { LINE = 256 };

/* The stdout notification number seq, newline included; returns LINE. */
static inline size_t flood_line(char *buf, uint64_t seq) {
  int n = snprintf(buf, LINE, "{\"jsonrpc\":\"2.0\",\"method\":\"flood/seq\",\"params\":{\"seq\":%020" PRIu64 ",\"pad\":\"", seq);
  memset(buf + n, 'x', LINE - (size_t)n - 4);
  memcpy(buf + LINE - 4, "\"}}\n", 4);
  return LINE;
}

/* Line n of the stderr stream, newline included; returns LINE. */
static inline size_t flood_err_line(char *buf, uint64_t n) {
  int k = snprintf(buf, LINE, "E%020" PRIu64 " ", n);
  memset(buf + k, 'e', LINE - (size_t)k - 1);
  buf[LINE - 1] = '\n';
  return LINE;
}

#endif
