/*
 * mcpping's metrics for Python (metrics.c's table and renderer): the
 * families' names, help texts, units, labels and RTT buckets, and the
 * Prometheus text of a list of series. mcpping.metrics adapts them to
 * prometheus_client and OpenTelemetry and names nothing itself.
 */
#include <string.h>

#include "_native.h"

static PyObject *str_or_none(const char *s) {
  if (s) return PyUnicode_FromString(s);
  Py_RETURN_NONE;
}

static PyObject *str_tuple(const char *const *v) {
  if (v == NULL) Py_RETURN_NONE;
  Py_ssize_t n = 0;
  while (v[n]) n++;
  PyObject *t = PyTuple_New(n);
  for (Py_ssize_t i = 0; t && i < n; i++) {
    PyObject *s = PyUnicode_FromString(v[i]);
    if (s == NULL || PyTuple_SetItem(t, i, s) < 0) {
      Py_CLEAR(t);
    }
  }
  return t;
}

static int put(PyObject *d, const char *key, PyObject *v) {
  if (v == NULL) return -1;
  int rc = PyDict_SetItemString(d, key, v);
  Py_DECREF(v);
  return rc;
}

static PyObject *metric_families(PyObject *module, PyObject *unused) {
  PyObject *t = PyTuple_New(MCPP_METRIC_COUNT);
  for (int i = 0; t && i < MCPP_METRIC_COUNT; i++) {
    const mcpp_metric_family *f = mcpp_metric_family_at(i);
    PyObject *d = PyDict_New();
    if (d == NULL || put(d, "name", PyUnicode_FromString(f->name)) < 0 ||
        put(d, "kind", PyUnicode_FromString(mcpp_metric_kind_name(f->kind))) < 0 ||
        put(d, "help", PyUnicode_FromString(f->help)) < 0 ||
        put(d, "unit", PyUnicode_FromString(f->unit)) < 0 ||
        put(d, "field", PyUnicode_FromString(f->field)) < 0 ||
        put(d, "label", str_or_none(f->label)) < 0 ||
        put(d, "values", str_tuple(f->values)) < 0 || PyTuple_SetItem(t, i, d) < 0) {
      Py_XDECREF(d);
      Py_CLEAR(t);
    }
  }
  return t;
}

static PyObject *metric_series_labels(PyObject *module, PyObject *unused) {
  return str_tuple(mcpp_metric_series_labels());
}

static PyObject *metric_rtt_buckets(PyObject *module, PyObject *unused) {
  const double *b = mcpp_metric_rtt_bounds();
  PyObject *t = PyTuple_New(MCPP_METRIC_RTT_BOUNDS);
  for (int i = 0; t && i < MCPP_METRIC_RTT_BOUNDS; i++) {
    PyObject *pair = Py_BuildValue("(ds)", b[i], mcpp_metric_rtt_bound_text(i));
    if (pair == NULL || PyTuple_SetItem(t, i, pair) < 0) Py_CLEAR(t);
  }
  return t;
}

/* d[key] as a uint64 (0 if absent); -1 with an exception set. */
static int get_u64(PyObject *d, const char *key, uint64_t *out) {
  PyObject *v = PyMapping_GetItemString(d, key);
  if (v == NULL) {
    if (!PyErr_ExceptionMatches(PyExc_KeyError)) return -1;
    PyErr_Clear();
    *out = 0;
    return 0;
  }
  *out = PyLong_AsUnsignedLongLong(v);
  Py_DECREF(v);
  return PyErr_Occurred() ? -1 : 0;
}

/* d[key], a sequence of exactly n ints, into out. */
static int get_u64s(PyObject *d, const char *key, uint64_t *out, Py_ssize_t n) {
  PyObject *v = PyMapping_GetItemString(d, key);
  if (v == NULL) {
    if (!PyErr_ExceptionMatches(PyExc_KeyError)) return -1;
    PyErr_Clear();
    return 0;
  }
  int rc = -1;
  if (PySequence_Size(v) != n) {
    if (!PyErr_Occurred())
      PyErr_Format(PyExc_ValueError, "series %s must have %zd numbers", key, n);
  } else {
    rc = 0;
    for (Py_ssize_t i = 0; rc == 0 && i < n; i++) {
      PyObject *x = PySequence_GetItem(v, i);
      out[i] = x ? PyLong_AsUnsignedLongLong(x) : 0;
      Py_XDECREF(x);
      if (x == NULL || PyErr_Occurred()) rc = -1;
    }
  }
  Py_DECREF(v);
  return rc;
}

/* d[key] as UTF-8 living as long as *keep (NULL if absent or None). */
static int get_str(PyObject *d, const char *key, const char **out, PyObject **keep) {
  *out = NULL;
  *keep = PyMapping_GetItemString(d, key);
  if (*keep == NULL) {
    if (!PyErr_ExceptionMatches(PyExc_KeyError)) return -1;
    PyErr_Clear();
    return 0;
  }
  if (*keep == Py_None) return 0;
  *out = PyUnicode_AsUTF8AndSize(*keep, NULL);
  return *out ? 0 : -1;
}

/* metrics_render([series dict, ...]) -> the Prometheus text. */
static PyObject *metrics_render(PyObject *module, PyObject *seq) {
  Py_ssize_t n = PySequence_Size(seq);
  if (n < 0) return NULL;
  mcpp_metric_series *s = PyMem_Calloc((size_t)n + 1, sizeof *s);
  PyObject **keep = PyMem_Calloc((size_t)n * 3 + 1, sizeof *keep);
  PyObject *out = NULL;
  if (s == NULL || keep == NULL) {
    PyErr_NoMemory();
    goto done;
  }
  for (Py_ssize_t i = 0; i < n; i++) {
    PyObject *d = PySequence_GetItem(seq, i);
    if (d == NULL) goto done;
    mcpp_metric_series *x = &s[i];
    PyObject *sum = PyMapping_GetItemString(d, "rtt_sum");
    int bad = get_str(d, "server", &x->server, &keep[3 * i]) < 0 ||
              get_str(d, "peer", &x->peer, &keep[3 * i + 1]) < 0 ||
              get_str(d, "transport", &x->transport, &keep[3 * i + 2]) < 0 ||
              get_u64(d, "pings_sent", &x->pings_sent) < 0 ||
              get_u64(d, "pongs_received", &x->pongs_received) < 0 ||
              get_u64(d, "pings_answered", &x->pings_answered) < 0 ||
              get_u64(d, "stale", &x->stale) < 0 ||
              get_u64(d, "ping_deaf", &x->ping_deaf) < 0 ||
              get_u64(d, "reconnects", &x->reconnects) < 0 ||
              get_u64(d, "in_flight", &x->in_flight) < 0 ||
              get_u64s(d, "failures", x->failures, MCPP_METRIC_REASONS) < 0 ||
              get_u64s(d, "rtt_buckets", x->rtt_buckets, MCPP_METRIC_RTT_BOUNDS + 1) < 0 ||
              get_u64s(d, "states", x->states, MCPP_METRIC_STATES) < 0 ||
              get_u64s(d, "probes", x->probes, MCPP_METRIC_PROBE_RESULTS) < 0;
    if (!bad && sum) {
      x->rtt_sum = PyFloat_AsDouble(sum);
      bad = PyErr_Occurred() != NULL;
    } else if (!sum && !bad) {
      PyErr_Clear();
    }
    Py_XDECREF(sum);
    Py_DECREF(d);
    if (bad) goto done;
  }
  size_t need = mcpp_metrics_render(s, (size_t)n, NULL, 0);
  char *text = PyMem_Malloc(need + 1);
  if (text == NULL) {
    PyErr_NoMemory();
    goto done;
  }
  mcpp_metrics_render(s, (size_t)n, text, need + 1);
  out = PyUnicode_DecodeUTF8(text, (Py_ssize_t)need, "replace");
  PyMem_Free(text);
done:
  if (keep)
    for (Py_ssize_t i = 0; i < n * 3; i++) Py_XDECREF(keep[i]);
  PyMem_Free(keep);
  PyMem_Free(s);
  return out;
}

/* ------------------------------------------------------------------ cells
 * A connection's figures counted in C (metrics_tally.c), as a capsule. The
 * capsule's context marks it retired, so retiring twice (explicitly, then
 * when it is collected) folds it once. */

#define CELL_NAME "mcpping.metrics_cell"

static void cell_destroy(PyObject *cap) {
  mcpp_metrics_cell *c = PyCapsule_GetPointer(cap, CELL_NAME);
  if (c && PyCapsule_GetContext(cap) == NULL) mcpp_metrics_cell_retire(c);
}

static mcpp_metrics_cell *cell_get(PyObject *cap) {
  mcpp_metrics_cell *c = PyCapsule_GetPointer(cap, CELL_NAME);
  if (c && PyCapsule_GetContext(cap) != NULL) {
    PyErr_SetString(PyExc_ValueError, "the metrics cell is retired");
    return NULL;
  }
  return c;
}

/* metrics_cell(peer, transport) -> a cell, counting nothing until attached. */
static PyObject *metrics_cell(PyObject *module, PyObject *args) {
  const char *peer, *transport;
  if (!PyArg_ParseTuple(args, "ss:metrics_cell", &peer, &transport)) return NULL;
  mcpp_metrics_cell *c = mcpp_metrics_cell_new(peer, transport);
  if (c == NULL) return PyErr_NoMemory();
  PyObject *cap = PyCapsule_New(c, CELL_NAME, cell_destroy);
  if (cap == NULL) mcpp_metrics_cell_retire(c);
  return cap;
}

static PyObject *metrics_retire(PyObject *module, PyObject *cap) {
  mcpp_metrics_cell *c = PyCapsule_GetPointer(cap, CELL_NAME);
  if (c == NULL) return NULL;
  if (PyCapsule_GetContext(cap) == NULL) {
    if (PyCapsule_SetContext(cap, (void *)1) < 0) return NULL;
    mcpp_metrics_cell_retire(c);
  }
  Py_RETURN_NONE;
}

/* metrics_attach(conn_id, cell): the runtime counts the connection's events
 * (None: no longer). */
static PyObject *metrics_attach(PyObject *module, PyObject *args) {
  mcpping_state *st = mcpping_get_state(module);
  unsigned long long id;
  PyObject *cap;
  if (!PyArg_ParseTuple(args, "KO:metrics_attach", &id, &cap)) return NULL;
  mcpp_metrics_cell *c = NULL; /* None detaches */
  if (cap != Py_None && (c = cell_get(cap)) == NULL) return NULL;
  if (st->rt) mcpp_runtime_set_metrics(st->rt, (uint64_t)id, c);
  Py_RETURN_NONE;
}

/* metrics_attach_engine(engine, cell): the engine counts its events. */
static PyObject *metrics_attach_engine(PyObject *module, PyObject *args) {
  PyObject *engine, *cap;
  if (!PyArg_ParseTuple(args, "OO:metrics_attach_engine", &engine, &cap)) return NULL;
  mcpp_metrics_cell *c = cell_get(cap);
  if (c == NULL) return NULL;
  mcpp_engine *e = mcpping_engine_get(module, engine);
  if (e) mcpp_engine_set_metrics(e, c);
  Py_RETURN_NONE;
}

static PyObject *metrics_set_in_flight(PyObject *module, PyObject *args) {
  PyObject *cap;
  unsigned long long n;
  if (!PyArg_ParseTuple(args, "OK:metrics_set_in_flight", &cap, &n)) return NULL;
  mcpp_metrics_cell *c = cell_get(cap);
  if (c == NULL) return NULL;
  mcpp_metrics_cell_set_in_flight(c, (uint64_t)n);
  Py_RETURN_NONE;
}

static PyObject *u64_list(const uint64_t *v, int n) {
  PyObject *l = PyList_New(n);
  for (int i = 0; l && i < n; i++) {
    PyObject *x = PyLong_FromUnsignedLongLong(v[i]);
    if (x == NULL || PyList_SetItem(l, i, x) < 0) Py_CLEAR(l);
  }
  return l;
}

/* The tally's row as the dict metrics_render reads. */
static PyObject *series_dict(const mcpp_metric_series *r) {
  PyObject *d = PyDict_New();
  if (d == NULL || put(d, "peer", PyUnicode_DecodeUTF8(r->peer, (Py_ssize_t)strlen(r->peer), "replace")) < 0 ||
      put(d, "transport", PyUnicode_DecodeUTF8(r->transport, (Py_ssize_t)strlen(r->transport), "replace")) < 0 ||
      put(d, "pings_sent", PyLong_FromUnsignedLongLong(r->pings_sent)) < 0 ||
      put(d, "pongs_received", PyLong_FromUnsignedLongLong(r->pongs_received)) < 0 ||
      put(d, "pings_answered", PyLong_FromUnsignedLongLong(r->pings_answered)) < 0 ||
      put(d, "stale", PyLong_FromUnsignedLongLong(r->stale)) < 0 ||
      put(d, "ping_deaf", PyLong_FromUnsignedLongLong(r->ping_deaf)) < 0 ||
      put(d, "reconnects", PyLong_FromUnsignedLongLong(r->reconnects)) < 0 ||
      put(d, "in_flight", PyLong_FromUnsignedLongLong(r->in_flight)) < 0 ||
      put(d, "failures", u64_list(r->failures, MCPP_METRIC_REASONS)) < 0 ||
      put(d, "rtt_buckets", u64_list(r->rtt_buckets, MCPP_METRIC_RTT_BOUNDS + 1)) < 0 ||
      put(d, "rtt_sum", PyFloat_FromDouble(r->rtt_sum)) < 0 ||
      put(d, "states", u64_list(r->states, MCPP_METRIC_STATES)) < 0 ||
      put(d, "probes", u64_list(r->probes, MCPP_METRIC_PROBE_RESULTS)) < 0)
    Py_CLEAR(d);
  return d;
}

/* metrics_rows() -> [series dict, ...]: every label set's figures now. */
static PyObject *metrics_rows(PyObject *module, PyObject *unused) {
  mcpp_metric_series *rows;
  long n = mcpp_metrics_tally_rows(&rows);
  if (n < 0) return PyErr_NoMemory();
  PyObject *l = PyList_New(n);
  for (long i = 0; l && i < n; i++) {
    PyObject *d = series_dict(&rows[i]);
    if (d == NULL || PyList_SetItem(l, i, d) < 0) Py_CLEAR(l);
  }
  mcpp_metrics_rows_free(rows, (size_t)n);
  return l;
}

/* metric_rtt_growth(now, before, sum) -> [rtt, ...]: values reproducing an
 * RTT histogram's growth (mcpp_metric_rtt_growth), for OpenTelemetry. */
static PyObject *metric_rtt_growth(PyObject *module, PyObject *args) {
  PyObject *now_o, *before_o;
  double sum;
  if (!PyArg_ParseTuple(args, "OOd:metric_rtt_growth", &now_o, &before_o, &sum)) return NULL;
  PyObject *d = Py_BuildValue("{sOsO}", "now", now_o, "before", before_o);
  uint64_t now[MCPP_METRIC_RTT_BOUNDS + 1] = {0}, before[MCPP_METRIC_RTT_BOUNDS + 1] = {0};
  if (d == NULL || get_u64s(d, "now", now, MCPP_METRIC_RTT_BOUNDS + 1) < 0 ||
      get_u64s(d, "before", before, MCPP_METRIC_RTT_BOUNDS + 1) < 0) {
    Py_XDECREF(d);
    return NULL;
  }
  Py_DECREF(d);
  size_t n = mcpp_metric_rtt_growth(now, before, sum, NULL, 0);
  double *v = PyMem_Calloc(n + 1, sizeof *v);
  if (v == NULL) return PyErr_NoMemory();
  mcpp_metric_rtt_growth(now, before, sum, v, n);
  PyObject *l = PyList_New((Py_ssize_t)n);
  for (size_t i = 0; l && i < n; i++) {
    PyObject *x = PyFloat_FromDouble(v[i]);
    if (x == NULL || PyList_SetItem(l, (Py_ssize_t)i, x) < 0) Py_CLEAR(l);
  }
  PyMem_Free(v);
  return l;
}

/* metrics_text() -> the Prometheus text of the tally's rows now. */
static PyObject *metrics_text(PyObject *module, PyObject *unused) {
  mcpp_metric_series *rows;
  long n = mcpp_metrics_tally_rows(&rows);
  if (n < 0) return PyErr_NoMemory();
  size_t need = mcpp_metrics_render(rows, (size_t)n, NULL, 0);
  char *text = PyMem_Malloc(need + 1);
  PyObject *out = NULL;
  if (text == NULL) {
    PyErr_NoMemory();
  } else {
    mcpp_metrics_render(rows, (size_t)n, text, need + 1);
    out = PyUnicode_DecodeUTF8(text, (Py_ssize_t)need, "replace");
    PyMem_Free(text);
  }
  mcpp_metrics_rows_free(rows, (size_t)n);
  return out;
}

static PyMethodDef metrics_methods[] = {
    {"metric_families", metric_families, METH_NOARGS,
     "The metric families of metrics.c, in order: dicts of name, kind, "
     "help, unit, field, label (or None) and values (or None)."},
    {"metric_series_labels", metric_series_labels, METH_NOARGS,
     "A connection's labels: ('server', 'peer', 'transport')."},
    {"metric_rtt_buckets", metric_rtt_buckets, METH_NOARGS,
     "The RTT histogram's bounds: (seconds, le text) pairs."},
    {"metrics_render", metrics_render, METH_O,
     "The Prometheus text of a list of series dicts (metrics.c)."},
    {"metrics_cell", metrics_cell, METH_VARARGS,
     "A connection's figures counted in C, labelled (peer, transport)."},
    {"metrics_retire", metrics_retire, METH_O,
     "Folds a cell into its labels' total (once; also when collected)."},
    {"metrics_attach", metrics_attach, METH_VARARGS,
     "The runtime counts a connection's events into a cell."},
    {"metrics_attach_engine", metrics_attach_engine, METH_VARARGS,
     "An Engine counts its events into a cell."},
    {"metrics_set_in_flight", metrics_set_in_flight, METH_VARARGS,
     "Sets a cell's in-flight gauge from the live connection."},
    {"metrics_rows", metrics_rows, METH_NOARGS,
     "Every label set's figures now, as series dicts."},
    {"metric_rtt_growth", metric_rtt_growth, METH_VARARGS,
     "RTTs reproducing a histogram's growth (now, before, sum grown)."},
    {"metrics_text", metrics_text, METH_NOARGS,
     "The Prometheus text of every label set's figures now."},
    {NULL, NULL, 0, NULL}};

int mcpping_metrics_add_functions(PyObject *module) {
  return PyModule_AddFunctions(module, metrics_methods);
}
