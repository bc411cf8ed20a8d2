/*
 * Shared declarations of the mcpping._native extension module: the module
 * state and the converters used by both the runtime binding (_module.c) and
 * the engine binding (_engine.c).
 */
#ifndef MCPPING_PY_NATIVE_H
#define MCPPING_PY_NATIVE_H

/* The stable ABI of CPython 3.10: one abi3 wheel serves 3.10 and later.
 * setup.py defines it too; this keeps a hand build honest. */
#ifndef Py_LIMITED_API
#define Py_LIMITED_API 0x030A0000
#endif
#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include "mcpping.h"

/* The wake pipe lives outside the module state: the I/O thread writes to it
 * from notify() without the GIL, and after fork the child swaps its fds. */
typedef struct mcpping_wake {
  int rfd;
  int wfd;
} mcpping_wake;

typedef struct mcpping_state {
  PyTypeObject *engine_type; /* mcpping._native.Engine */
  PyObject *error;           /* mcpping._native.NativeError */
  PyObject *not_http;        /* mcpping._native.NotHttp */
  mcpp_runtime *rt;          /* created lazily by the first spawn */
  mcpping_wake *wake;        /* allocated with rt */
  /* set_retry_budget's figures (burst 0: the default), kept for a runtime
   * created again after shutdown(). */
  uint32_t budget_burst;
  double budget_per_second;
  /* Host mode (host_attach): the asyncio loop's thread runs the runtime.
   * arm(ms) is _runtime._arm, which makes the loop call host_turn within
   * ms; armed_due (monotonic ms, UINT64_MAX: none) is when the turn it
   * last armed is due, so a later or equal time costs no Python call. */
  int hosted;
  PyObject *arm;
  uint64_t armed_due;
  /* watch(fd, on) is _runtime._watch: the loop watches (add_reader) or
   * stops watching a connection's fd, read through host_read_ready. */
  PyObject *watch;
} mcpping_state;

/* Returns the state of the module object m. */
static inline mcpping_state *mcpping_get_state(PyObject *m) {
  return (mcpping_state *)PyModule_GetState(m);
}

/* Raises NativeError(code, strerror) (or with the given message) and returns
 * NULL. In _convert.c, as mcpping_to_argv. */
PyObject *mcpping_raise(mcpping_state *st, int code, const char *message);

/* Fills *s from a dict of settings (missing keys keep their defaults). The
 * peer_name and probe_method strings point into `name_holder`, a new
 * reference the caller releases after use. Returns 0, or -1 with an exception set. */
int mcpping_settings_from_dict(PyObject *dict, mcpp_settings *s,
                               PyObject **name_holder);

/* A read-only view of a bytes-like argument ("O&" with mcpping_bytes_conv).
 * Py_buffer is not in the 3.10 limited API, so bytes are read in place and
 * any other buffer (bytearray, memoryview) is copied once into `owner`. The
 * converter supports cleanup: PyArg_Parse* releases it when a later argument
 * fails; after a successful parse the caller calls mcpping_bytes_release. */
typedef struct mcpping_bytes {
  PyObject *owner; /* a bytes object, a new reference */
  const char *buf;
  Py_ssize_t len;
} mcpping_bytes;

int mcpping_bytes_conv(PyObject *obj, void *out);
void mcpping_bytes_release(mcpping_bytes *b);

/* _rules.c: the statistics of an mcpping._native.RttStats, else NULL. */
mcpp_rtt_stats *mcpping_rtt_stats_get(PyObject *o);

/* Returns a new dict describing an engine event, or NULL. */
PyObject *mcpping_event_to_dict(const mcpp_event *ev);
/* _event.c: a NativeEvent holding a copy of ev (its dict built on demand);
 * _get copies a NativeEvent's event into *ev and returns 1, else 0. */
PyObject *mcpping_native_event_new(const mcpp_event *ev);
int mcpping_native_event_get(PyObject *o, mcpp_event *ev);
int mcpping_event_add_type(PyObject *module);

/* Returns a new dict of an engine info struct, or NULL. */
PyObject *mcpping_info_to_dict(const mcpp_engine_info *info, int healthy);

/* The shared rules (_rules.c): a native event dict as an mcpp_event
 * (type, rpc_code, error, invalid, rtt_us), module functions, and the RttStats
 * type for the exec slot. */
int mcpping_event_from_dict(PyObject *d, mcpp_event *ev);
PyObject *mcpping_event_outcome(PyObject *module, PyObject *d);
PyObject *mcpping_outcome_is_lost(PyObject *module, PyObject *arg);
PyObject *mcpping_http_header_problem(PyObject *module, PyObject *args);
PyObject *mcpping_env_safe(PyObject *module, PyObject *args);
PyObject *mcpping_http_url(PyObject *module, PyObject *args);
PyObject *mcpping_http_resolve_error_name(PyObject *module, PyObject *arg);
PyObject *mcpping_http_tls_error_name(PyObject *module, PyObject *arg);
PyObject *mcpping_ping_unreachable_answer(PyObject *module, PyObject *arg);
PyObject *mcpping_unserved_request_answer(PyObject *module, PyObject *arg);
int mcpping_rules_add_types(PyObject *module);

/* A sequence of str/bytes as a NULL-terminated argv (PyMem_Free it) whose
 * strings live in *holder (a new reference the caller releases); NULL
 * with an exception set (`what` for a non-sequence). */
char **mcpping_to_argv(PyObject *seq, PyObject **holder, const char *what);

/* Adds wrap() (_wrap.c) to the module; used by the exec slot. */
int mcpping_wrap_add_functions(PyObject *module);
/* Adds the mcpping command (_app.c) to the module; used by the exec slot. */
int mcpping_app_add_functions(PyObject *module);

/* Adds settings_table, setting_range, setting_check (_settings.c). */
int mcpping_settings_add_functions(PyObject *module);
/* The engine of an mcpping._native.Engine (NULL once freed), or NULL if o
 * is not an Engine (_engine.c; for _metrics.c's metrics_attach_engine). */
mcpp_engine *mcpping_engine_get(PyObject *module, PyObject *o);
/* Adds the metric table's functions (_metrics.c); used by the exec slot. */
int mcpping_metrics_add_functions(PyObject *module);

/* Adds config_rewrite() (_config.c) to the module; used by the exec slot. */
int mcpping_config_add_functions(PyObject *module);
/* Adds --config's per-server check, config_run* (_config_run.c). */
int mcpping_config_run_add_functions(PyObject *module);
/* _watch.c: mcpping watch's core. */
int mcpping_watch_add_functions(PyObject *module);

/* Adds ClientHandshake, HttpSession and envelope() (_client.c). */
int mcpping_client_add(PyObject *module);

/* Adds the Engine type to the module; used by the exec slot. */
int mcpping_engine_add_type(PyObject *module, mcpping_state *st);

#endif
