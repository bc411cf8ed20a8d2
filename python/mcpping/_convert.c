/*
 * Conversions between mcpping's C structs and Python objects, shared by the
 * runtime binding and the engine binding, and the helpers every glue file
 * uses (NativeError, argv): here, below _module.c, so that the files it
 * registers never call back into it.
 */
#include "_native.h"

/* Reads an optional unsigned field; returns 0 (absent or read) or -1. */
static int get_u64(PyObject *dict, const char *key, unsigned long long *out,
                   unsigned long long max) {
  PyObject *v = PyDict_GetItemString(dict, key); /* borrowed */
  if (v == NULL || v == Py_None) return 0;
  if (!PyLong_Check(v)) {
    PyErr_Format(PyExc_TypeError,
                 "setting %s must be an integer between 0 and %llu, not %R",
                 key, max, v);
    return -1;
  }
  unsigned long long x = PyLong_AsUnsignedLongLong(v);
  if ((x == (unsigned long long)-1 && PyErr_Occurred()) || x > max) {
    /* Negative or too big: never wrapped, refused by name. */
    PyErr_Clear();
    PyErr_Format(PyExc_ValueError,
                 "setting %s must be between 0 and %llu, not %R", key, max, v);
    return -1;
  }
  *out = x;
  return 0;
}

#define U32(key, field)                                              \
  do {                                                               \
    unsigned long long x_ = s->field;                                \
    if (get_u64(dict, key, &x_, UINT32_MAX) < 0) return -1;          \
    s->field = (uint32_t)x_;                                         \
  } while (0)

/* Reads an optional str setting into *out, a UTF-8 copy owned by holder
 * (a list); None or absent leaves *out as it is. Returns 0 or -1. */
static int utf8_setting(PyObject *dict, const char *key, PyObject *holder,
                        const char **out) {
  PyObject *v = PyDict_GetItemString(dict, key); /* borrowed */
  if (v == NULL || v == Py_None) return 0;
  if (!PyUnicode_Check(v)) {
    PyErr_Format(PyExc_TypeError, "%s must be a str", key);
    return -1;
  }
  PyObject *bytes = PyUnicode_AsUTF8String(v);
  if (bytes == NULL) return -1;
  int rc = PyList_Append(holder, bytes);
  Py_DECREF(bytes);
  if (rc < 0) return -1;
  *out = PyBytes_AsString(bytes);
  return 0;
}

/* Reads a float field of the reconnect dict (absent: unchanged). */
static int get_double(PyObject *dict, const char *key, double *out) {
  PyObject *v = PyDict_GetItemString(dict, key); /* borrowed */
  if (v == NULL || v == Py_None) return 0;
  double x = PyFloat_AsDouble(v);
  if (x == -1.0 && PyErr_Occurred()) return -1;
  *out = x;
  return 0;
}

/* settings["reconnect"]: None (off) or a dict of the mcpp_reconnect
 * fields (ms as ints); present means enabled. Returns 0 or -1. */
static int reconnect_from_dict(PyObject *settings, mcpp_reconnect *p) {
  PyObject *dict = PyDict_GetItemString(settings, "reconnect"); /* borrowed */
  if (dict == NULL || dict == Py_None) return 0;
  if (!PyDict_Check(dict)) {
    PyErr_SetString(PyExc_TypeError, "settings reconnect must be a dict");
    return -1;
  }
  unsigned long long x;
  p->enabled = 1;
  x = p->initial_ms;
  if (get_u64(dict, "initial_ms", &x, UINT32_MAX) < 0) return -1;
  p->initial_ms = (uint32_t)x;
  x = p->max_delay_ms;
  if (get_u64(dict, "max_delay_ms", &x, UINT32_MAX) < 0) return -1;
  p->max_delay_ms = (uint32_t)x;
  x = p->max_attempts;
  if (get_u64(dict, "max_attempts", &x, UINT32_MAX) < 0) return -1;
  p->max_attempts = (uint32_t)x;
  if (get_double(dict, "multiplier", &p->multiplier) < 0 ||
      get_double(dict, "jitter", &p->jitter) < 0)
    return -1;
  return 0;
}

int mcpping_settings_from_dict(PyObject *dict, mcpp_settings *s,
                               PyObject **name_holder) {
  *name_holder = NULL;
  mcpp_settings_default(s);
  if (dict == NULL || dict == Py_None) return 0;
  if (!PyDict_Check(dict)) {
    PyErr_SetString(PyExc_TypeError, "settings must be a dict");
    return -1;
  }
  unsigned long long x;
  x = (unsigned long long)s->role;
  if (get_u64(dict, "role", &x, 1) < 0) return -1;
  s->role = (mcpp_role)x;
  x = (unsigned long long)s->transport;
  if (get_u64(dict, "transport", &x, 2) < 0) return -1;
  s->transport = (mcpp_transport)x;
  x = (unsigned long long)s->on_stale;
  if (get_u64(dict, "on_stale", &x, 1) < 0) return -1;
  s->on_stale = (mcpp_stale_action)x;
  U32("interval_ms", interval_ms);
  U32("jitter_pct", jitter_pct);
  U32("timeout_ms", timeout_ms);
  U32("failures", failures);
  U32("min_interval_ms", min_interval_ms);
  U32("pause_threshold_ms", pause_threshold_ms);
  U32("request_timeout_ms", request_timeout_ms);
  U32("max_outstanding_pings", max_outstanding_pings);
  x = s->clamp_interval;
  if (get_u64(dict, "clamp_interval", &x, 1) < 0) return -1;
  s->clamp_interval = (int)x;
  x = s->max_line_bytes;
  if (get_u64(dict, "max_line_bytes", &x, SIZE_MAX) < 0) return -1;
  s->max_line_bytes = (size_t)x;
  x = s->max_pending_bytes;
  if (get_u64(dict, "max_pending_bytes", &x, SIZE_MAX) < 0) return -1;
  s->max_pending_bytes = (size_t)x;
  x = s->nonce;
  if (get_u64(dict, "nonce", &x, UINT64_MAX) < 0) return -1;
  s->nonce = (uint64_t)x;

  PyObject *off = PyDict_GetItemString(dict, "clock_offset_us");
  if (off != NULL && off != Py_None) {
    long long o = PyLong_AsLongLong(off);
    if (o == -1 && PyErr_Occurred()) return -1;
    s->clock_offset_us = (int64_t)o;
  }
  if (reconnect_from_dict(dict, &s->reconnect) < 0) return -1;
  /* The holder keeps the UTF-8 copies the settings' strings point into. */
  *name_holder = PyList_New(0);
  if (*name_holder == NULL) return -1;
  if (utf8_setting(dict, "peer_name", *name_holder, &s->peer_name) < 0 ||
      utf8_setting(dict, "probe_method", *name_holder, &s->probe_method) < 0) {
    Py_CLEAR(*name_holder); /* on error the caller owns nothing */
    return -1;
  }
  /* The engine's own check, so its sentence (naming the field and its
   * range) reaches Python as a ValueError rather than a bare code. */
  const char *problem = mcpp_settings_problem(s);
  if (problem != NULL) {
    PyErr_Format(PyExc_ValueError, "settings: %s", problem);
    Py_CLEAR(*name_holder);
    return -1;
  }
  return 0;
}

/* Sets dict[key] = value and drops the reference to value; -1 on error. */
static int put(PyObject *dict, const char *key, PyObject *value) {
  if (value == NULL) return -1;
  int rc = PyDict_SetItemString(dict, key, value);
  Py_DECREF(value);
  return rc;
}

static PyObject *str_or_none(const char *s, Py_ssize_t len) {
  if (s == NULL) Py_RETURN_NONE;
  if (len < 0) len = (Py_ssize_t)strlen(s);
  return PyUnicode_DecodeUTF8(s, len, "replace");
}

PyObject *mcpping_event_to_dict(const mcpp_event *ev) {
  PyObject *d = PyDict_New();
  if (d == NULL) return NULL;
  if (put(d, "type", PyUnicode_FromString(mcpp_event_name(ev->type))) < 0 ||
      put(d, "state", PyUnicode_FromString(mcpp_state_name(ev->state))) < 0 ||
      put(d, "ping_seq", PyLong_FromUnsignedLongLong(ev->ping_seq)) < 0 ||
      put(d, "manual", PyBool_FromLong(ev->manual)) < 0 ||
      put(d, "rtt_us", PyLong_FromUnsignedLongLong(ev->rtt_us)) < 0 ||
      put(d, "timeout_ms", PyLong_FromUnsignedLong(ev->timeout_ms)) < 0 ||
      put(d, "rpc_code", PyLong_FromLongLong(ev->rpc_code)) < 0 ||
      put(d, "error", PyLong_FromLong(ev->error)) < 0 ||
      put(d, "invalid", PyBool_FromLong(ev->invalid)) < 0 ||
      put(d, "message", str_or_none(ev->message, -1)) < 0 ||
      put(d, "id", ev->id ? str_or_none(ev->id, (Py_ssize_t)ev->id_len)
                          : str_or_none(NULL, 0)) < 0 ||
      put(d, "failure_count", PyLong_FromUnsignedLong(ev->failure_count)) <
          0 ||
      put(d, "in_flight", PyLong_FromUnsignedLong(ev->in_flight)) < 0 ||
      put(d, "disposition",
          PyUnicode_FromString(mcpp_disposition_name(ev->disposition))) < 0 ||
      put(d, "outcome", str_or_none(mcpp_outcome_name(mcpp_event_outcome(ev)), -1)) < 0 ||
      put(d, "proof", str_or_none(ev->proof, -1)) < 0 ||
      put(d, "reconnect_attempt",
          PyLong_FromUnsignedLong(ev->reconnect_attempt)) < 0 ||
      put(d, "delay_ms", PyLong_FromUnsignedLong(ev->delay_ms)) < 0 ||
      put(d, "pid", PyLong_FromLong(ev->pid)) < 0) {
    Py_DECREF(d);
    return NULL;
  }
  return d;
}

PyObject *mcpping_info_to_dict(const mcpp_engine_info *info, int healthy) {
  PyObject *d = PyDict_New();
  if (d == NULL) return NULL;
  if (put(d, "state", PyUnicode_FromString(mcpp_state_name(info->state))) <
          0 ||
      put(d, "unsupported", PyBool_FromLong(info->unsupported)) < 0 ||
      put(d, "initialized", PyBool_FromLong(info->initialized)) < 0 ||
      put(d, "protocol_version", str_or_none(info->protocol_version, -1)) <
          0 ||
      put(d, "peer_name", str_or_none(info->peer_name, -1)) < 0 ||
      put(d, "failure_count", PyLong_FromUnsignedLong(info->failure_count)) <
          0 ||
      put(d, "in_flight", PyLong_FromUnsignedLong(info->in_flight)) < 0 ||
      put(d, "oldest_in_flight_us",
          PyLong_FromUnsignedLongLong(info->oldest_in_flight_us)) < 0 ||
      put(d, "app_timeouts", PyLong_FromUnsignedLongLong(info->app_timeouts)) <
          0 ||
      put(d, "last_rx", PyLong_FromUnsignedLongLong(info->last_rx)) < 0 ||
      put(d, "pings_sent", PyLong_FromUnsignedLongLong(info->pings_sent)) <
          0 ||
      put(d, "pongs_received",
          PyLong_FromUnsignedLongLong(info->pongs_received)) < 0 ||
      put(d, "ping_timeouts",
          PyLong_FromUnsignedLongLong(info->ping_timeouts)) < 0 ||
      put(d, "ping_errors", PyLong_FromUnsignedLongLong(info->ping_errors)) <
          0 ||
      put(d, "pings_answered",
          PyLong_FromUnsignedLongLong(info->pings_answered)) < 0 ||
      put(d, "frames_in", PyLong_FromUnsignedLongLong(info->frames_in)) < 0 ||
      put(d, "frames_out", PyLong_FromUnsignedLongLong(info->frames_out)) <
          0 ||
      put(d, "last_traffic_us",
          PyLong_FromUnsignedLongLong(info->last_traffic_us)) < 0 ||
      put(d, "last_ping_us", PyLong_FromUnsignedLongLong(info->last_ping_us)) <
          0 ||
      put(d, "last_probe_us",
          PyLong_FromUnsignedLongLong(info->last_probe_us)) < 0 ||
      put(d, "last_process_us",
          PyLong_FromUnsignedLongLong(info->last_process_us)) < 0 ||
      put(d, "freshest_proof",
          str_or_none(mcpp_proof_name(info->freshest_proof), -1)) < 0 ||
      put(d, "probe_method", str_or_none(info->probe_method, -1)) < 0 ||
      put(d, "process_state",
          PyUnicode_FromString(mcpp_process_state_name(info->process_state))) <
          0 ||
      put(d, "reading", PyBool_FromLong(info->reading)) < 0 ||
      put(d, "probes_sent", PyLong_FromUnsignedLongLong(info->probes_sent)) <
          0 ||
      put(d, "probes_answered",
          PyLong_FromUnsignedLongLong(info->probes_answered)) < 0 ||
      put(d, "probe_timeouts",
          PyLong_FromUnsignedLongLong(info->probe_timeouts)) < 0 ||
      put(d, "app_cancels", PyLong_FromUnsignedLongLong(info->app_cancels)) <
          0 ||
      put(d, "healthy", PyBool_FromLong(healthy)) < 0) {
    Py_DECREF(d);
    return NULL;
  }
  return d;
}

int mcpping_bytes_conv(PyObject *obj, void *out) {
  mcpping_bytes *b = out;
  if (obj == NULL) { /* cleanup after a later argument failed */
    mcpping_bytes_release(b);
    return 0;
  }
  PyObject *bytes;
  if (PyBytes_Check(obj)) {
    bytes = Py_NewRef(obj);
  } else {
    /* The memoryview refuses what has no buffer (str included), as y* did. */
    PyObject *view = PyMemoryView_FromObject(obj);
    if (view == NULL) return 0;
    bytes = PyBytes_FromObject(view);
    Py_DECREF(view);
    if (bytes == NULL) return 0;
  }
  char *buf;
  Py_ssize_t len;
  if (PyBytes_AsStringAndSize(bytes, &buf, &len) < 0) {
    Py_DECREF(bytes);
    return 0;
  }
  b->owner = bytes;
  b->buf = buf;
  b->len = len;
  return Py_CLEANUP_SUPPORTED;
}

void mcpping_bytes_release(mcpping_bytes *b) {
  Py_CLEAR(b->owner);
  b->buf = NULL;
  b->len = 0;
}

PyObject *mcpping_raise(mcpping_state *st, int code, const char *message) {
  PyObject *args = Py_BuildValue(
      "(iss)", code, message ? message : mcpp_strerror(code),
      mcpp_errname(code));
  if (args != NULL) {
    PyErr_SetObject(st->error, args);
    Py_DECREF(args);
  }
  return NULL;
}

/* Converts a sequence of str/bytes to a NULL-terminated char* array of
 * filesystem-encoded copies; *holder keeps the bytes alive. */
char **mcpping_to_argv(PyObject *seq, PyObject **holder, const char *what) {
  *holder = NULL;
  PyObject *fast = PySequence_Fast(seq, what);
  if (fast == NULL) return NULL;
  Py_ssize_t n = PySequence_Size(fast);
  PyObject *list = PyList_New(n);
  char **argv = PyMem_Calloc((size_t)n + 1, sizeof(char *));
  if (list == NULL || argv == NULL) {
    Py_XDECREF(list);
    PyMem_Free(argv);
    Py_DECREF(fast);
    PyErr_NoMemory();
    return NULL;
  }
  for (Py_ssize_t i = 0; i < n; i++) {
    PyObject *b = NULL;
    PyObject *item = PySequence_GetItem(fast, i);
    int ok = item != NULL && PyUnicode_FSConverter(item, &b);
    Py_XDECREF(item);
    if (!ok) {
      Py_DECREF(list);
      PyMem_Free(argv);
      Py_DECREF(fast);
      return NULL;
    }
    (void)PyList_SetItem(list, i, b); /* a new list's slot: cannot fail */
    argv[i] = PyBytes_AsString(b);
  }
  Py_DECREF(fast);
  *holder = list;
  return argv;
}
