/*
 * `mcpping watch`'s core (csrc/src/app/watch.c, mcpping/watch.h) for
 * Python: the watch behind a capsule. python/mcpping/watch.py only
 * plumbs (opens servers, serves the listener's bytes, writes the log
 * bytes); every state, line, byte and backoff comes from C.
 */
#include <stdlib.h>
#include <string.h>

#include "_native.h"

static const char CAPSULE[] = "mcpping.watch";

static void capsule_free(PyObject *cap) {
  mcpp_watch_free(PyCapsule_GetPointer(cap, CAPSULE));
}

static mcpp_watch *watch_of(PyObject *cap) {
  return PyCapsule_GetPointer(cap, CAPSULE);
}

/* watch_new(argv) -> a watch (argv, after "watch", must parse to it). */
static PyObject *py_watch_new(PyObject *self, PyObject *seq) {
  PyObject *holder = NULL;
  char **argv = mcpping_to_argv(seq, &holder, "argv must be a sequence of str");
  if (argv == NULL) return NULL;
  int argc = 0;
  while (argv[argc]) argc++;
  mcpp_cli_options o;
  mcpp_watch *w = NULL;
  int rc = mcpp_cli_parse(&o, argc, (const char *const *)argv);
  if (!rc) rc = mcpp_watch_new(&w, &o);
  mcpp_cli_options_free(&o);
  PyMem_Free(argv);
  Py_XDECREF(holder);
  if (rc) {
    if (rc == MCPP_ERR_NOMEM) return PyErr_NoMemory();
    PyErr_SetString(PyExc_ValueError, "argv does not ask for mcpping watch");
    return NULL;
  }
  PyObject *cap = PyCapsule_New(w, CAPSULE, capsule_free);
  if (!cap) mcpp_watch_free(w);
  return cap;
}

static PyObject *py_watch_usage(PyObject *self, PyObject *unused) {
  return PyUnicode_FromString(mcpp_watch_usage());
}

/* watch_add(w, name, transport, secrets, skip_reason or None) -> index */
static PyObject *py_watch_add(PyObject *self, PyObject *args) {
  PyObject *cap, *secrets;
  const char *name, *transport, *skip;
  if (!PyArg_ParseTuple(args, "OssOz", &cap, &name, &transport, &secrets, &skip)) return NULL;
  mcpp_watch *w = watch_of(cap);
  if (!w) return NULL;
  PyObject *holder;
  char **v = mcpping_to_argv(secrets, &holder, "secrets must be a sequence of str");
  if (!v) return NULL;
  size_t n = 0;
  while (v[n]) n++;
  int rc = mcpp_watch_add(w, name, transport, (const char *const *)v, n, skip);
  PyMem_Free(v);
  Py_DECREF(holder);
  if (rc < 0) return PyErr_NoMemory();
  return PyLong_FromLong(rc);
}

static PyObject *py_watch_listening(PyObject *self, PyObject *args) {
  PyObject *cap;
  const char *host;
  int port;
  if (!PyArg_ParseTuple(args, "Osi", &cap, &host, &port)) return NULL;
  mcpp_watch *w = watch_of(cap);
  if (!w) return NULL;
  mcpp_watch_listening(w, host, port);
  Py_RETURN_NONE;
}

static PyObject *py_watch_listen_failed(PyObject *self, PyObject *args) {
  PyObject *cap;
  const char *why;
  if (!PyArg_ParseTuple(args, "Os", &cap, &why)) return NULL;
  mcpp_watch *w = watch_of(cap);
  if (!w) return NULL;
  mcpp_watch_listen_failed(w, why);
  Py_RETURN_NONE;
}

/* watch_due(w, now_ms) -> (index or -1, next_ms or -1) */
static PyObject *py_watch_due(PyObject *self, PyObject *args) {
  PyObject *cap;
  long long now;
  if (!PyArg_ParseTuple(args, "OL", &cap, &now)) return NULL;
  mcpp_watch *w = watch_of(cap);
  if (!w) return NULL;
  int64_t next;
  int i = mcpp_watch_due(w, now, &next);
  return Py_BuildValue("(iL)", i, (long long)next);
}

/* watch_opened(w, i, now_ms, peer, protocol_version or None, pid) */
static PyObject *py_watch_opened(PyObject *self, PyObject *args) {
  PyObject *cap;
  int i;
  long long now, pid;
  const char *peer, *version;
  if (!PyArg_ParseTuple(args, "OiLzzL", &cap, &i, &now, &peer, &version, &pid)) return NULL;
  mcpp_watch *w = watch_of(cap);
  if (!w) return NULL;
  mcpp_watch_opened(w, i, now, peer, version, pid);
  Py_RETURN_NONE;
}

/* watch_open_failed / watch_closed(w, i, now_ms, why, detail): why is a
 * mcpp_watch_why, detail its text or None. */
static PyObject *reasoned(PyObject *args,
                          void (*fn)(mcpp_watch *, int, int64_t, mcpp_watch_why, const char *)) {
  PyObject *cap;
  int i, why;
  long long now;
  const char *detail;
  if (!PyArg_ParseTuple(args, "OiLiz", &cap, &i, &now, &why, &detail)) return NULL;
  mcpp_watch *w = watch_of(cap);
  if (!w) return NULL;
  fn(w, i, now, (mcpp_watch_why)why, detail);
  Py_RETURN_NONE;
}

static PyObject *py_watch_open_failed(PyObject *self, PyObject *args) {
  return reasoned(args, mcpp_watch_open_failed);
}

static PyObject *py_watch_closed(PyObject *self, PyObject *args) {
  return reasoned(args, mcpp_watch_closed);
}

/* watch_stderr(w, i, bytes): server i's stderr as it comes. */
static PyObject *py_watch_stderr(PyObject *self, PyObject *args) {
  PyObject *cap;
  int i;
  const char *data;
  Py_ssize_t n;
  if (!PyArg_ParseTuple(args, "Oiy#", &cap, &i, &data, &n)) return NULL;
  mcpp_watch *w = watch_of(cap);
  if (!w) return NULL;
  mcpp_watch_stderr(w, i, data, (size_t)n);
  Py_RETURN_NONE;
}

/* watch_feed(w, i, now_ms, name, state, rtt_s, invalid, ping_seq, proof, attempt, pid,
 * message) */
static PyObject *py_watch_feed(PyObject *self, PyObject *args) {
  PyObject *cap;
  int i, invalid;
  long long now, attempt, pid;
  unsigned long long seq;
  mcpp_watch_event ev;
  memset(&ev, 0, sizeof ev);
  ev.version = MCPP_WATCH_EVENT_V1;
  if (!PyArg_ParseTuple(args, "OiLzzdpKzLLz", &cap, &i, &now, &ev.name, &ev.state, &ev.rtt_s,
                        &invalid, &seq, &ev.proof, &attempt, &pid, &ev.message))
    return NULL;
  mcpp_watch *w = watch_of(cap);
  if (!w) return NULL;
  ev.invalid = invalid;
  ev.ping_seq = seq;
  ev.attempt = attempt;
  ev.pid = pid;
  mcpp_watch_feed(w, i, now, &ev);
  Py_RETURN_NONE;
}

/* watch_respond(w, now_ms, head bytes) -> the whole response, bytes */
static PyObject *py_watch_respond(PyObject *self, PyObject *args) {
  PyObject *cap;
  long long now;
  const char *head;
  Py_ssize_t len;
  if (!PyArg_ParseTuple(args, "OLy#", &cap, &now, &head, &len)) return NULL;
  mcpp_watch *w = watch_of(cap);
  if (!w) return NULL;
  char *out;
  size_t n;
  if (mcpp_watch_respond(w, now, head, (size_t)len, &out, &n)) return PyErr_NoMemory();
  PyObject *b = PyBytes_FromStringAndSize(out, (Py_ssize_t)n);
  mcpp_watch_text_free(out);
  return b;
}

static PyObject *py_watch_stopping(PyObject *self, PyObject *cap) {
  mcpp_watch *w = watch_of(cap);
  if (!w) return NULL;
  mcpp_watch_stopping(w);
  Py_RETURN_NONE;
}

static PyObject *py_watch_stopped(PyObject *self, PyObject *cap) {
  mcpp_watch *w = watch_of(cap);
  if (!w) return NULL;
  mcpp_watch_stopped(w);
  Py_RETURN_NONE;
}

/* watch_output(w) -> the log bytes written since the last call */
static PyObject *py_watch_output(PyObject *self, PyObject *cap) {
  mcpp_watch *w = watch_of(cap);
  if (!w) return NULL;
  size_t n;
  const char *p = mcpp_watch_output(w, &n);
  return PyBytes_FromStringAndSize(p, (Py_ssize_t)n);
}

static PyMethodDef watch_methods[] = {
    {"watch_new", py_watch_new, METH_O, "mcpping watch's core for argv (C)."},
    {"watch_usage", py_watch_usage, METH_NOARGS, "mcpping watch --help's text."},
    {"watch_add", py_watch_add, METH_VARARGS, "Adds a config entry."},
    {"watch_listening", py_watch_listening, METH_VARARGS, "The listener is up."},
    {"watch_listen_failed", py_watch_listen_failed, METH_VARARGS, "The listener failed."},
    {"watch_due", py_watch_due, METH_VARARGS, "The server to open now."},
    {"watch_opened", py_watch_opened, METH_VARARGS, "A server is up."},
    {"watch_open_failed", py_watch_open_failed, METH_VARARGS, "Opening a server failed."},
    {"watch_closed", py_watch_closed, METH_VARARGS, "A connection ended for good."},
    {"watch_stderr", py_watch_stderr, METH_VARARGS, "A server's stderr, as it comes."},
    {"watch_feed", py_watch_feed, METH_VARARGS, "One event of a server's connection."},
    {"watch_respond", py_watch_respond, METH_VARARGS, "The listener's answer to a request."},
    {"watch_stopping", py_watch_stopping, METH_O, "SIGTERM or SIGINT arrived."},
    {"watch_stopped", py_watch_stopped, METH_O, "Everything is closed."},
    {"watch_output", py_watch_output, METH_O, "Log bytes for stderr."},
    {NULL, NULL, 0, NULL}};

int mcpping_watch_add_functions(PyObject *module) {
  if (PyModule_AddIntConstant(module, "WATCH_MAX_HEAD", MCPP_WATCH_MAX_HEAD) ||
      PyModule_AddIntConstant(module, "WATCH_HEAD_TIMEOUT_MS", MCPP_WATCH_HEAD_TIMEOUT_MS))
    return -1;
  return PyModule_AddFunctions(module, watch_methods);
}
