/*
 * The shared rules of the C core, for Python: ping outcomes, the stale
 * policy, the Streamable HTTP URLs and headers the client sends and the
 * names of its connect failures, and mcpping._native.RttStats. The
 * Python package translates these answers; it keeps no copy of the rules.
 */
#include <limits.h>
#include <math.h>
#include <string.h>

#include "_native.h"

/* Fills *ev from a native event dict (type, rpc_code, error, invalid,
 * rtt_us);
 * returns 0, or -1 with an exception set. */
int mcpping_event_from_dict(PyObject *d, mcpp_event *ev) {
  memset(ev, 0, sizeof *ev);
  if (!PyDict_Check(d)) {
    PyErr_SetString(PyExc_TypeError, "event must be a native event dict");
    return -1;
  }
  PyObject *type = PyDict_GetItemString(d, "type");
  const char *name = type && PyUnicode_Check(type) ? PyUnicode_AsUTF8AndSize(type, NULL) : NULL;
  if (name == NULL) {
    if (!PyErr_Occurred()) PyErr_SetString(PyExc_TypeError, "event has no 'type' string");
    return -1;
  }
  int found = 0;
  for (int t = MCPP_EV_PING; t <= MCPP_EV_LAST; t++) {
    if (strcmp(mcpp_event_name((mcpp_event_type)t), name) == 0) {
      ev->type = (mcpp_event_type)t;
      found = 1;
      break;
    }
  }
  if (!found) {
    PyErr_Format(PyExc_ValueError, "unknown event type %R", type);
    return -1;
  }
  PyObject *v;
  if ((v = PyDict_GetItemString(d, "rpc_code")) && v != Py_None) {
    ev->rpc_code = PyLong_AsLongLong(v);
    if (PyErr_Occurred()) return -1;
  }
  if ((v = PyDict_GetItemString(d, "error")) && v != Py_None) {
    long err = PyLong_AsLong(v);
    if (err == -1 && PyErr_Occurred()) return -1;
    if (err < INT_MIN || err > INT_MAX) {
      PyErr_SetString(PyExc_OverflowError, "event 'error' out of range");
      return -1;
    }
    ev->error = (int)err;
  }
  if ((v = PyDict_GetItemString(d, "invalid"))) ev->invalid = PyObject_IsTrue(v) == 1;
  if ((v = PyDict_GetItemString(d, "rtt_us")) && v != Py_None) {
    ev->rtt_us = PyLong_AsUnsignedLongLong(v);
    if (PyErr_Occurred()) return -1;
  }
  return 0;
}

PyObject *mcpping_event_outcome(PyObject *module, PyObject *d) {
  mcpp_event ev;
  if (mcpping_event_from_dict(d, &ev) < 0) return NULL;
  const char *name = mcpp_outcome_name(mcpp_event_outcome(&ev));
  if (name == NULL) Py_RETURN_NONE;
  return PyUnicode_FromString(name);
}

PyObject *mcpping_outcome_is_lost(PyObject *module, PyObject *arg) {
  const char *name = PyUnicode_Check(arg) ? PyUnicode_AsUTF8AndSize(arg, NULL) : NULL;
  if (name == NULL) {
    if (!PyErr_Occurred()) PyErr_SetString(PyExc_TypeError, "outcome must be a str");
    return NULL;
  }
  for (int o = MCPP_OUTCOME_PONG; o <= MCPP_OUTCOME_CLOSED; o++)
    if (strcmp(mcpp_outcome_name((mcpp_ping_outcome)o), name) == 0)
      return PyBool_FromLong(mcpp_outcome_is_lost((mcpp_ping_outcome)o));
  PyErr_Format(PyExc_ValueError, "unknown ping outcome %R", arg);
  return NULL;
}

/* A C text writer, called with no buffer to size its text, then to write
 * it (the text and a NUL into out, at most cap bytes), as snprintf does. */
typedef size_t (*text_writer)(const void *args, char *out, size_t cap);

/* What write makes, as bytes written into the bytes object itself (its
 * hidden last byte takes the NUL); None when it writes nothing. */
static PyObject *written_bytes(text_writer write, const void *args) {
  size_t n = write(args, NULL, 0);
  if (n == 0) return Py_NewRef(Py_None);
  PyObject *res = PyBytes_FromStringAndSize(NULL, (Py_ssize_t)n);
  if (res != NULL) write(args, PyBytes_AsString(res), n + 1);
  return res;
}

/* The caller's headers (a dict of str to str) as C's array, in the dict's
 * order; NULL with an exception set on failure. Free with PyMem_Free. */
static mcpp_http_header *headers_of(PyObject *extra, size_t *n) {
  Py_ssize_t pos = 0;
  PyObject *k, *v;
  mcpp_http_header *in = PyMem_Calloc((size_t)PyDict_Size(extra) + 1, sizeof *in);
  *n = 0;
  if (in == NULL) return (mcpp_http_header *)PyErr_NoMemory();
  while (PyDict_Next(extra, &pos, &k, &v)) {
    if (!PyUnicode_Check(k) || !PyUnicode_Check(v)) {
      PyErr_SetString(PyExc_TypeError, "headers must map str to str");
      break;
    }
    if ((in[*n].name = PyUnicode_AsUTF8AndSize(k, NULL)) == NULL ||
        (in[*n].value = PyUnicode_AsUTF8AndSize(v, NULL)) == NULL)
      break;
    (*n)++;
  }
  if (!PyErr_Occurred()) return in;
  PyMem_Free(in);
  return NULL;
}

/* One part of a parsed URL as a str (mcpp_http_url_text sizes it). */
static PyObject *url_part(const mcpp_http_url *u, mcpp_http_url_part part) {
  size_t n = mcpp_http_url_text(u, part, NULL, 0);
  char *buf = PyMem_Malloc(n + 1);
  if (buf == NULL) return PyErr_NoMemory();
  mcpp_http_url_text(u, part, buf, n + 1);
  PyObject *s = PyUnicode_FromStringAndSize(buf, (Py_ssize_t)n);
  PyMem_Free(buf);
  return s;
}

PyObject *mcpping_http_url(PyObject *module, PyObject *args) {
  const char *url;
  Py_ssize_t len;
  PyObject *extra;
  if (!PyArg_ParseTuple(args, "s#O!", &url, &len, &PyDict_Type, &extra)) return NULL;
  mcpp_http_url u;
  const char *problem = mcpp_http_url_parse(url, (size_t)len, &u);
  if (problem != NULL) return PyUnicode_FromString(problem);
  size_t n_in;
  mcpp_http_header *in = headers_of(extra, &n_in);
  if (in == NULL) return NULL;
  size_t n = mcpp_http_url_credentials(&u, in, n_in, NULL, 0);
  char *auth = PyMem_Malloc(n + 1);
  PyObject *res = NULL;
  if (auth == NULL) {
    PyErr_NoMemory();
  } else {
    mcpp_http_url_credentials(&u, in, n_in, auth, n + 1);
    PyObject *request = url_part(&u, MCPP_HTTP_URL_REQUEST), *target = url_part(&u, MCPP_HTTP_URL_TARGET),
             *name = url_part(&u, MCPP_HTTP_URL_NAME), *host = url_part(&u, MCPP_HTTP_URL_HOST),
             *shown = url_part(&u, MCPP_HTTP_URL_SHOWN);
    if (request && target && name && host && shown)
      res = Py_BuildValue("{sOsOsOsOsOsIsOsz}", "request_url", request, "target", target, "name", name,
                          "host", host, "shown", shown, "port", u.port,
                          "https", u.https ? Py_True : Py_False, "authorization", n ? auth : NULL);
    Py_XDECREF(shown);
    Py_XDECREF(request);
    Py_XDECREF(target);
    Py_XDECREF(name);
    Py_XDECREF(host);
  }
  PyMem_Free(auth);
  PyMem_Free(in);
  return res;
}

PyObject *mcpping_http_tls_error_name(PyObject *module, PyObject *arg) {
  long code = PyLong_AsLong(arg);
  if (code == -1 && PyErr_Occurred()) return NULL;
  return PyUnicode_FromString(mcpp_http_tls_error_name(code >= INT_MIN && code <= INT_MAX ? (int)code : -1));
}

PyObject *mcpping_http_resolve_error_name(PyObject *module, PyObject *arg) {
  long code = PyLong_AsLong(arg);
  if (code == -1 && PyErr_Occurred()) return NULL;
  const char *name = code >= INT_MIN && code <= INT_MAX ? mcpp_http_resolve_error_name((int)code) : NULL;
  return name ? PyUnicode_FromString(name) : Py_NewRef(Py_None);
}

PyObject *mcpping_http_header_problem(PyObject *module, PyObject *args) {
  const char *name, *value;
  Py_ssize_t name_len, value_len;
  if (!PyArg_ParseTuple(args, "s#s#", &name, &name_len, &value, &value_len)) return NULL;
  const char *why = mcpp_http_header_problem(name, (size_t)name_len, value, (size_t)value_len);
  return why ? PyUnicode_FromString(why) : Py_NewRef(Py_None);
}

PyObject *mcpping_env_safe(PyObject *module, PyObject *args) {
  const char *name, *value;
  if (!PyArg_ParseTuple(args, "ss", &name, &value)) return NULL;
  return PyBool_FromLong(mcpp_env_safe(name, value));
}

/* A -32601 answer: the one make writes for the request in frame. */
typedef struct {
  size_t (*make)(const char *frame, size_t len, char *out, size_t cap);
  mcpping_bytes frame;
} method_not_found_args;

static size_t write_method_not_found(const void *args, char *out, size_t cap) {
  const method_not_found_args *a = args;
  return a->make(a->frame.buf, (size_t)a->frame.len, out, cap);
}

static PyObject *method_not_found(PyObject *arg, size_t (*make)(const char *, size_t, char *, size_t)) {
  method_not_found_args a = {make, {0}};
  if (!mcpping_bytes_conv(arg, &a.frame)) return NULL;
  PyObject *res = written_bytes(write_method_not_found, &a);
  mcpping_bytes_release(&a.frame);
  return res;
}

PyObject *mcpping_ping_unreachable_answer(PyObject *module, PyObject *arg) {
  return method_not_found(arg, mcpp_ping_unreachable_answer);
}

PyObject *mcpping_unserved_request_answer(PyObject *module, PyObject *arg) {
  return method_not_found(arg, mcpp_unserved_request_answer);
}

/* ---------------------------------------------------------------- RttStats */

typedef struct {
  PyObject_HEAD
  mcpp_rtt_stats *stats;
} RttStatsObject;

static PyObject *RttStats_new(PyTypeObject *type, PyObject *args, PyObject *kw) {
  static char *names[] = {"window", NULL};
  long long window = MCPP_RTT_WINDOW;
  if (!PyArg_ParseTupleAndKeywords(args, kw, "|L", names, &window)) return NULL;
  if (window < 1 || window > (long long)MCPP_MAX_RTT_WINDOW) {
    PyErr_Format(PyExc_ValueError, "window must be between 1 and %u", MCPP_MAX_RTT_WINDOW);
    return NULL;
  }
  RttStatsObject *self = (RttStatsObject *)((allocfunc)PyType_GetSlot(type, Py_tp_alloc))(type, 0);
  if (self == NULL) return NULL;
  if (mcpp_rtt_stats_new(&self->stats, (uint32_t)window, NULL) != 0) {
    Py_DECREF(self);
    return PyErr_NoMemory();
  }
  return (PyObject *)self;
}

static void RttStats_dealloc(RttStatsObject *self) {
  PyTypeObject *tp = Py_TYPE(self);
  mcpp_rtt_stats_free(self->stats);
  ((freefunc)PyType_GetSlot(tp, Py_tp_free))(self);
  Py_DECREF(tp);
}

static PyObject *RttStats_add(RttStatsObject *self, PyObject *arg) {
  double rtt = PyFloat_AsDouble(arg);
  if (rtt == -1.0 && PyErr_Occurred()) return NULL;
  if (!isfinite(rtt) || rtt < 0) {
    PyErr_SetString(PyExc_ValueError, "rtt must be a finite number >= 0");
    return NULL;
  }
  mcpp_runtime_rtt_lock();
  mcpp_rtt_stats_add(self->stats, rtt);
  mcpp_runtime_rtt_unlock();
  Py_RETURN_NONE;
}

static PyObject *RttStats_observe(RttStatsObject *self, PyObject *args) {
  PyObject *d;
  double per_unit;
  if (!PyArg_ParseTuple(args, "Od", &d, &per_unit)) return NULL;
  if (!(per_unit > 0) || !isfinite(per_unit)) {
    PyErr_SetString(PyExc_ValueError, "us_per_unit must be a finite number > 0");
    return NULL;
  }
  mcpp_event ev;
  /* A drained NativeEvent carries the event itself: nothing to parse. */
  if (!mcpping_native_event_get(d, &ev) && mcpping_event_from_dict(d, &ev) < 0)
    return NULL;
  mcpp_runtime_rtt_lock();
  mcpp_rtt_stats_observe(self->stats, &ev, per_unit);
  mcpp_runtime_rtt_unlock();
  Py_RETURN_NONE;
}

mcpp_rtt_stats *mcpping_rtt_stats_get(PyObject *o) {
  /* Only RttStats objects have this type's dealloc. */
  if (PyType_GetSlot(Py_TYPE(o), Py_tp_dealloc) != (void *)RttStats_dealloc) return NULL;
  return ((RttStatsObject *)o)->stats;
}

static PyObject *figure(double v) {
  if (isnan(v)) Py_RETURN_NONE;
  return PyFloat_FromDouble(v);
}

static PyObject *RttStats_summary(RttStatsObject *self, PyObject *Py_UNUSED(ignored)) {
  mcpp_rtt_summary s;
  /* The runtime may be feeding it from its thread (feed_rtt). */
  mcpp_runtime_rtt_lock();
  mcpp_rtt_stats_summary(self->stats, &s);
  mcpp_runtime_rtt_unlock();
  return Py_BuildValue("{sKsKsKsdsKsNsNsNsNsNsN}", "sent", (unsigned long long)s.sent,
                       "received", (unsigned long long)s.received, "lost",
                       (unsigned long long)s.lost, "loss_pct", s.loss_pct, "count",
                       (unsigned long long)s.count, "min", figure(s.min), "avg", figure(s.avg),
                       "max", figure(s.max), "mdev", figure(s.mdev), "p50", figure(s.p50), "p99",
                       figure(s.p99));
}

static PyObject *RttStats_recent(RttStatsObject *self, PyObject *Py_UNUSED(ignored)) {
  mcpp_runtime_rtt_lock();
  size_t n = mcpp_rtt_stats_recent(self->stats, NULL, 0);
  mcpp_runtime_rtt_unlock();
  double *buf = PyMem_Malloc((n ? n : 1) * sizeof *buf);
  if (buf == NULL) return PyErr_NoMemory();
  /* More may have come meanwhile: the first n of them. */
  mcpp_runtime_rtt_lock();
  size_t now = mcpp_rtt_stats_recent(self->stats, buf, n);
  mcpp_runtime_rtt_unlock();
  if (now < n) n = now;
  PyObject *list = PyList_New((Py_ssize_t)n);
  for (size_t i = 0; list && i < n; i++) {
    PyObject *f = PyFloat_FromDouble(buf[i]);
    if (f == NULL) {
      Py_CLEAR(list);
      break;
    }
    (void)PyList_SetItem(list, (Py_ssize_t)i, f); /* a new list: cannot fail */
  }
  PyMem_Free(buf);
  return list;
}

static PyMethodDef RttStats_methods[] = {
    {"add", (PyCFunction)RttStats_add, METH_O, "add(rtt): records a pong's RTT."},
    {"observe", (PyCFunction)RttStats_observe, METH_VARARGS,
     "observe(event, us_per_unit): feeds a native event dict or NativeEvent (ping: sent; pong: "
     "rtt_us / us_per_unit; a lost outcome: lost)."},
    {"summary", (PyCFunction)RttStats_summary, METH_NOARGS,
     "summary() -> dict: sent, received, lost, loss_pct, count, min, avg, max, "
     "mdev, p50, p99 (None before any pong)."},
    {"recent", (PyCFunction)RttStats_recent, METH_NOARGS,
     "recent() -> list: the window's RTTs, oldest first."},
    {NULL, NULL, 0, NULL}};

static PyType_Slot RttStats_slots[] = {
    {Py_tp_new, RttStats_new},
    {Py_tp_dealloc, RttStats_dealloc},
    {Py_tp_methods, RttStats_methods},
    {Py_tp_doc, (void *)"RttStats(window=10000): the C core's RTT statistics."},
    {0, NULL}};

static PyType_Spec RttStats_spec = {
    .name = "mcpping._native.RttStats",
    .basicsize = sizeof(RttStatsObject),
    .flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_IMMUTABLETYPE,
    .slots = RttStats_slots,
};

int mcpping_rules_add_types(PyObject *module) {
  PyObject *t = PyType_FromModuleAndSpec(module, &RttStats_spec, NULL);
  if (t == NULL) return -1;
  int rc = PyModule_AddType(module, (PyTypeObject *)t);
  Py_DECREF(t);
  if (rc || PyModule_AddStringConstant(module, "PING_INVALID_MESSAGE", MCPP_PING_INVALID_MESSAGE) ||
      PyModule_AddStringConstant(module, "PING_UNSUPPORTED_MESSAGE", MCPP_PING_UNSUPPORTED_MESSAGE) ||
      PyModule_AddStringConstant(module, "PING_CLOSED_MESSAGE", MCPP_PING_CLOSED_MESSAGE) ||
      PyModule_AddStringConstant(module, "PING_TIMEOUT_FORMAT", MCPP_PING_TIMEOUT_FORMAT) ||
      PyModule_AddStringConstant(module, "PING_ERROR_FORMAT", MCPP_PING_ERROR_FORMAT) ||
      PyModule_AddStringConstant(module, "CLOSED_BY_APP_REASON", MCPP_CLOSED_BY_APP_REASON) ||
      PyModule_AddStringConstant(module, "TRANSPORT_CLOSED_REASON", MCPP_TRANSPORT_CLOSED_REASON) ||
      PyModule_AddStringConstant(module, "CONNECTION_CLOSED_TEXT", MCPP_CONNECTION_CLOSED_TEXT) ||
      PyModule_AddStringConstant(module, "PROBE_AUTO", MCPP_PROBE_AUTO) ||
      PyModule_AddStringConstant(module, "HTTP_NOT_HTTP_CAUSE", MCPP_HTTP_NOT_HTTP_CAUSE))
    return -1;
  if (PyModule_AddIntConstant(module, "REQUEST_TIMEOUT_MS", MCPP_REQUEST_TIMEOUT_MS) ||
      PyModule_AddIntConstant(module, "MAX_RTT_WINDOW", MCPP_MAX_RTT_WINDOW) ||
      PyModule_AddIntConstant(module, "INITIALIZE_TIMEOUT_MS", MCPP_INITIALIZE_TIMEOUT_MS) ||
      PyModule_AddIntConstant(module, "HTTP_SHORT_TIMEOUT_MS", MCPP_HTTP_SHORT_TIMEOUT_MS) ||
      PyModule_AddIntConstant(module, "DEFAULT_KILL_GRACE_MS", MCPP_DEFAULT_KILL_GRACE_MS) ||
      PyModule_AddIntConstant(module, "DEFAULT_MAX_PENDING_BYTES", MCPP_DEFAULT_MAX_PENDING_BYTES) ||
      PyModule_AddIntConstant(module, "RETRY_BUDGET_BURST", MCPP_RETRY_BUDGET_BURST))
    return -1;
  if (PyModule_AddIntConstant(module, "MAX_RETRY_BUDGET_BURST", MCPP_MAX_RETRY_BUDGET_BURST))
    return -1;
  /* The answer kinds that stand for a request in doubt (C's rule). */
  PyObject *in_doubt = PyFrozenSet_New(NULL);
  for (int k = 0; in_doubt != NULL && k <= MCPP_ANSWER_LAST; k++) {
    if (!mcpp_answer_kind_is_in_doubt((mcpp_answer_kind)k)) continue;
    PyObject *name = PyUnicode_FromString(mcpp_answer_kind_name((mcpp_answer_kind)k));
    if (name == NULL || PySet_Add(in_doubt, name) < 0) Py_CLEAR(in_doubt);
    Py_XDECREF(name);
  }
  if (in_doubt == NULL || PyModule_AddObject(module, "IN_DOUBT_KINDS", in_doubt) < 0) {
    Py_XDECREF(in_doubt);
    return -1;
  }
  PyObject *names = PyTuple_New(MCPP_EV_LAST + 1);
  for (int t = MCPP_EV_PING; names != NULL && t <= MCPP_EV_LAST; t++) {
    PyObject *name = PyUnicode_FromString(mcpp_event_name((mcpp_event_type)t));
    if (name == NULL || PyTuple_SetItem(names, t, name) < 0) Py_CLEAR(names);
  }
  if (names == NULL || PyModule_AddObject(module, "EVENT_NAMES", names) < 0) {
    Py_XDECREF(names);
    return -1;
  }
  static const struct {
    const char *name;
    double value;
  } rates[] = {{"RETRY_BUDGET_PER_SECOND", MCPP_RETRY_BUDGET_PER_SECOND},
               {"MIN_RETRY_BUDGET_PER_SECOND", MCPP_MIN_RETRY_BUDGET_PER_SECOND},
               {"MAX_RETRY_BUDGET_PER_SECOND", MCPP_MAX_RETRY_BUDGET_PER_SECOND}};
  for (size_t i = 0; i < sizeof rates / sizeof rates[0]; i++) {
    PyObject *v = PyFloat_FromDouble(rates[i].value);
    if (PyModule_AddObject(module, rates[i].name, v) < 0) {
      Py_XDECREF(v);
      return -1;
    }
  }
  return PyModule_AddIntConstant(module, "RTT_WINDOW", MCPP_RTT_WINDOW);
}
