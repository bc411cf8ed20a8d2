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

/* The figure each event adds one to (mcpp_metric_event_figure): per event
 * name that counts, 8 entries indexed by closed * 4 + invalid * 2 +
 * (ping_seq != 0), each (field, label value or None) or None. */
static PyObject *metric_event_figures(PyObject *module, PyObject *unused) {
  PyObject *out = PyDict_New();
  for (int t = MCPP_EV_PING; out && t <= MCPP_EV_LAST; t++) {
    PyObject *row = PyTuple_New(8);
    int any = 0;
    for (int k = 0; row && k < 8; k++) {
      mcpp_event ev;
      memset(&ev, 0, sizeof ev);
      ev.type = (mcpp_event_type)t;
      ev.state = k & 4 ? MCPP_STATE_CLOSED : MCPP_STATE_ALIVE;
      ev.invalid = (k & 2) != 0;
      ev.ping_seq = k & 1;
      int value;
      int id = mcpp_metric_event_figure(&ev, &value);
      const mcpp_metric_family *f = mcpp_metric_family_at(id);
      PyObject *e;
      if (f == NULL) {
        e = Py_None;
        Py_INCREF(e);
      } else {
        any = 1;
        e = f->values ? Py_BuildValue("(ss)", f->field, f->values[value])
                      : Py_BuildValue("(sO)", f->field, Py_None);
      }
      if (e == NULL || PyTuple_SetItem(row, k, e) < 0) Py_CLEAR(row);
    }
    if (row == NULL || (any && PyDict_SetItemString(out, mcpp_event_name((mcpp_event_type)t), row) < 0))
      Py_CLEAR(out);
    Py_XDECREF(row);
  }
  return out;
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

static PyMethodDef metrics_methods[] = {
    {"metric_families", metric_families, METH_NOARGS,
     "The metric families of metrics.c, in order: dicts of name, kind, "
     "help, unit, field, label (or None) and values (or None)."},
    {"metric_series_labels", metric_series_labels, METH_NOARGS,
     "A connection's labels: ('server', 'peer', 'transport')."},
    {"metric_rtt_buckets", metric_rtt_buckets, METH_NOARGS,
     "The RTT histogram's bounds: (seconds, le text) pairs."},
    {"metric_event_figures", metric_event_figures, METH_NOARGS,
     "Which figure each engine event counts toward (metrics.c)."},
    {"metrics_render", metrics_render, METH_O,
     "The Prometheus text of a list of series dicts (metrics.c)."},
    {NULL, NULL, 0, NULL}};

int mcpping_metrics_add_functions(PyObject *module) {
  return PyModule_AddFunctions(module, metrics_methods);
}
