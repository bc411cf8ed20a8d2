/*
 * mcpping wrap's internals shared by its files: wrap.c (the proxy and the
 * server's lifecycle) and wrap_metrics.c (the Prometheus endpoint).
 * Internal.
 */
#ifndef MCPP_WRAP_H
#define MCPP_WRAP_H

#include <stdint.h>
#include <uv.h>

#include "mcpping.h"

/* The figures of one wrapped server across its restarts (metrics.c
 * names and renders them). */
typedef struct mcpp__wrap_figures {
  mcpp_metric_series counts; /* the engine's events, counted */
  uint64_t reconnects;       /* wrap's restarts of the server */
  mcpp_state state;   /* of the current server; CLOSED while none runs */
  uint32_t in_flight; /* of the current server */
} mcpp__wrap_figures;

/* Counts an engine event. */
void mcpp__wrap_figures_observe(mcpp__wrap_figures *f, const mcpp_event *ev);

typedef struct mcpp__wrap_metrics mcpp__wrap_metrics;

/* Listens on a loopback "HOST:PORT" and answers every HTTP request with
 * the figures as Prometheus text; url gets "http://HOST:PORT/metrics"
 * with the port bound. Returns 0 and sets *out, or a negative uv error
 * (message in errbuf). peer is the peer label (copied). */
int mcpp__wrap_metrics_start(mcpp__wrap_metrics **out, uv_loop_t *loop,
                             const char *addr, const char *peer,
                             const mcpp__wrap_figures *figures, char *url,
                             size_t url_cap, char *errbuf, size_t cap);

/* Updates the peer label (the server's name, once learned). */
void mcpp__wrap_metrics_set_peer(mcpp__wrap_metrics *m, const char *peer);

/* Sets the server label (the config entry's name, wrap --name); it is
 * the first peer label until set. */
void mcpp__wrap_metrics_set_server(mcpp__wrap_metrics *m, const char *server);

/* Closes the listener and every open exchange; frees itself once their
 * handles closed. */
void mcpp__wrap_metrics_stop(mcpp__wrap_metrics *m);

#endif
