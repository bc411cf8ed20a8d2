/*
 * `mcpping --config`'s check of one server (csrc/src/app/config_run.c,
 * mcpping/config_run.h) for Python: the state machine behind a capsule.
 * _config_check.py only plumbs: it opens, shakes hands, pings and closes
 * when asked, and every status and reason comes from C.
 */
#include "_native.h"

#include <stdarg.h>

static const char CAPSULE[] = "mcpping.config_run";

static void capsule_free(PyObject *cap) {
  mcpp_config_run_free(PyCapsule_GetPointer(cap, CAPSULE));
}

static mcpp_config_run *run_of(PyObject *cap) {
  return PyCapsule_GetPointer(cap, CAPSULE);
}

/* The feeds' common head: args are (run, now_ms, ...); the rest is parsed
 * with fmt. Returns the run, or NULL with an exception set. */
static mcpp_config_run *run_at(PyObject *args, long long *now, const char *fmt, ...) {
  Py_ssize_t n = PyTuple_Size(args);
  if (n < 2) {
    PyErr_SetString(PyExc_TypeError, "expected a config run and the time in ms");
    return NULL;
  }
  mcpp_config_run *r = run_of(PyTuple_GetItem(args, 0));
  if (!r) return NULL;
  *now = PyLong_AsLongLong(PyTuple_GetItem(args, 1));
  if (*now == -1 && PyErr_Occurred()) return NULL;
  PyObject *rest = PyTuple_GetSlice(args, 2, n);
  if (!rest) return NULL;
  va_list ap;
  va_start(ap, fmt);
  int ok = PyArg_VaParse(rest, fmt, ap);
  va_end(ap);
  Py_DECREF(rest);
  return ok ? r : NULL;
}

/* config_run(transport, disabled, count, interval_ms, timeout_ms,
 * deadline_ms, now_ms) -> a run */
static PyObject *py_run(PyObject *self, PyObject *args) {
  const char *transport;
  int disabled;
  unsigned long long count;
  unsigned int interval, timeout, deadline;
  long long now;
  if (!PyArg_ParseTuple(args, "spKIIIL", &transport, &disabled, &count, &interval, &timeout,
                        &deadline, &now))
    return NULL;
  mcpp_config_plan plan = {count, interval, timeout, deadline};
  mcpp_config_run *r;
  int rc = mcpp_config_run_new(&r, transport, disabled, &plan, now);
  if (rc == MCPP_ERR_NOMEM) return PyErr_NoMemory();
  PyObject *cap = PyCapsule_New(r, CAPSULE, capsule_free);
  if (!cap) mcpp_config_run_free(r);
  return cap;
}

/* config_run_next(run, now_ms) -> (what, timeout_ms, until_ms, want_exit) */
static PyObject *py_next(PyObject *self, PyObject *args) {
  long long now;
  mcpp_config_run *r = run_at(args, &now, "");
  if (!r) return NULL;
  mcpp_config_action a;
  mcpp_config_run_next(r, now, &a);
  return Py_BuildValue("(iILN)", (int)a.what, (unsigned)a.timeout_ms, (long long)a.until_ms,
                       PyBool_FromLong(a.want_exit));
}

/* config_run_open_done(run, now_ms, result, reason or None) */
static PyObject *py_open_done(PyObject *self, PyObject *args) {
  long long now;
  int result;
  const char *reason;
  mcpp_config_run *r = run_at(args, &now, "iz", &result, &reason);
  if (!r) return NULL;
  mcpp_config_run_open_done(r, now, (mcpp_config_open_result)result, reason);
  Py_RETURN_NONE;
}

/* config_run_handshake_done(run, now_ms, protocol_version or None) */
static PyObject *py_handshake_done(PyObject *self, PyObject *args) {
  long long now;
  const char *pv;
  mcpp_config_run *r = run_at(args, &now, "z", &pv);
  if (!r) return NULL;
  mcpp_config_run_handshake_done(r, now, pv);
  Py_RETURN_NONE;
}

/* config_run_handshake_failed(run, now_ms, gone, message): Python's
 * handshake errors are already sentences (no code to format). */
static PyObject *py_handshake_failed(PyObject *self, PyObject *args) {
  long long now;
  int gone;
  const char *message;
  mcpp_config_run *r = run_at(args, &now, "pz", &gone, &message);
  if (!r) return NULL;
  mcpp_config_run_handshake_failed(r, now, gone, 0, 0, message);
  Py_RETURN_NONE;
}

static PyObject *py_handshake_timed_out(PyObject *self, PyObject *args) {
  long long now;
  mcpp_config_run *r = run_at(args, &now, "");
  if (!r) return NULL;
  mcpp_config_run_handshake_timed_out(r, now);
  Py_RETURN_NONE;
}

/* config_run_replied(run, now_ms, kind, rtt_ms) */
static PyObject *py_replied(PyObject *self, PyObject *args) {
  long long now;
  int kind;
  double rtt;
  mcpp_config_run *r = run_at(args, &now, "id", &kind, &rtt);
  if (!r) return NULL;
  mcpp_config_run_replied(r, now, (mcpp_cli_reply)kind, rtt);
  Py_RETURN_NONE;
}

static PyObject *py_interrupt(PyObject *self, PyObject *args) {
  long long now;
  mcpp_config_run *r = run_at(args, &now, "");
  if (!r) return NULL;
  mcpp_config_run_interrupt(r, now);
  Py_RETURN_NONE;
}

/* config_run_closed(run, now_ms, exited, exit_status, term_signal,
 * connect_error or None) */
static PyObject *py_closed(PyObject *self, PyObject *args) {
  long long now;
  mcpp_config_end e = {0};
  mcpp_config_run *r = run_at(args, &now, "piiz", &e.exited, &e.exit_status, &e.term_signal,
                               &e.connect_error);
  if (!r) return NULL;
  mcpp_config_run_closed(r, now, &e);
  Py_RETURN_NONE;
}

/* (run, bytes): hands the bytes to feed. */
static PyObject *feed_bytes(PyObject *args, void (*feed)(mcpp_config_run *, const char *, size_t)) {
  PyObject *cap;
  const char *data;
  Py_ssize_t n;
  if (!PyArg_ParseTuple(args, "Oy#", &cap, &data, &n)) return NULL;
  mcpp_config_run *r = run_of(cap);
  if (!r) return NULL;
  feed(r, data, (size_t)n);
  Py_RETURN_NONE;
}

/* config_run_secrets(run, values): what no reason may quote (watch_add's). */
static PyObject *py_secrets(PyObject *self, PyObject *args) {
  PyObject *cap, *values, *holder;
  if (!PyArg_ParseTuple(args, "OO", &cap, &values)) return NULL;
  mcpp_config_run *r = run_of(cap);
  if (!r) return NULL;
  char **v = mcpping_to_argv(values, &holder, "secrets must be a sequence of str");
  if (!v) return NULL;
  size_t n = 0;
  while (v[n]) n++;
  int rc = mcpp_config_run_set_secrets(r, (const char *const *)v, n);
  PyMem_Free(v);
  Py_DECREF(holder);
  if (rc) return PyErr_NoMemory();
  Py_RETURN_NONE;
}

/* config_run_stderr(run, bytes): the server's stderr as it comes. */
static PyObject *py_stderr(PyObject *self, PyObject *args) {
  return feed_bytes(args, mcpp_config_run_stderr);
}

/* config_run_unreadable(run, count, sentence): what the server wrote on
 * stdout that is not JSON-RPC (Peer._unreadable_lines). */
static PyObject *py_unreadable(PyObject *self, PyObject *args) {
  PyObject *cap;
  unsigned long long count;
  const char *sentence;
  if (!PyArg_ParseTuple(args, "OKs", &cap, &count, &sentence)) return NULL;
  mcpp_config_run *r = run_of(cap);
  if (!r) return NULL;
  mcpp_config_run_unreadable(r, count, sentence);
  Py_RETURN_NONE;
}

/* config_run_row(run) -> the outcome's fields of a row dict (the server's
 * name, transport, file and json_path are the caller's). */
static PyObject *py_row(PyObject *self, PyObject *cap) {
  mcpp_config_run *r = run_of(cap);
  if (!r) return NULL;
  mcpp_config_row row = {0};
  mcpp_config_run_row(r, &row);
  PyObject *rtts = PyList_New((Py_ssize_t)row.n_rtts);
  if (!rtts) return NULL;
  for (size_t i = 0; i < row.n_rtts; i++) {
    PyObject *f = PyFloat_FromDouble(row.rtts_ms[i]);
    if (!f || PyList_SetItem(rtts, (Py_ssize_t)i, f) < 0) {
      Py_DECREF(rtts);
      return NULL;
    }
  }
  return Py_BuildValue("{s:z,s:s,s:z,s:z,s:i,s:i,s:N,s:k}", "protocol_version",
                       row.protocol_version, "status", row.status, "reason", row.reason,
                       "last_stderr", row.last_stderr, "sent", row.sent, "received",
                       row.received, "rtts_ms", rtts, "non_json_lines", row.non_json_lines);
}

/* config_skip_reason(transport, disabled) -> why the entry is not checked, or None */
static PyObject *py_skip_reason(PyObject *self, PyObject *args) {
  const char *transport;
  int disabled;
  if (!PyArg_ParseTuple(args, "sp", &transport, &disabled)) return NULL;
  const char *why = mcpp_config_skip_reason(transport, disabled);
  if (!why) Py_RETURN_NONE;
  return PyUnicode_FromString(why);
}

static PyMethodDef config_run_methods[] = {
    {"config_run", py_run, METH_VARARGS, "--config's check of one server (C)."},
    {"config_skip_reason", py_skip_reason, METH_VARARGS, "Why an entry is not checked."},
    {"config_run_next", py_next, METH_VARARGS, "What the check does next."},
    {"config_run_open_done", py_open_done, METH_VARARGS, "How the open step ended."},
    {"config_run_handshake_done", py_handshake_done, METH_VARARGS, "The handshake's version."},
    {"config_run_handshake_failed", py_handshake_failed, METH_VARARGS, "The handshake failed."},
    {"config_run_handshake_timed_out", py_handshake_timed_out, METH_VARARGS,
     "The deadline passed during the handshake."},
    {"config_run_replied", py_replied, METH_VARARGS, "How one ping ended."},
    {"config_run_interrupt", py_interrupt, METH_VARARGS, "Ctrl-C."},
    {"config_run_closed", py_closed, METH_VARARGS, "How the connection ended."},
    {"config_run_secrets", py_secrets, METH_VARARGS, "What no reason may quote."},
    {"config_run_stderr", py_stderr, METH_VARARGS, "The server's stderr, as it comes."},
    {"config_run_unreadable", py_unreadable, METH_VARARGS,
     "What the server wrote on stdout that is not JSON-RPC (count, sentence)."},
    {"config_run_row", py_row, METH_O, "The outcome's row fields."},
    {NULL, NULL, 0, NULL}};

int mcpping_config_run_add_functions(PyObject *module) {
  return PyModule_AddFunctions(module, config_run_methods);
}
