/*
 * The mcpping command's application layer (csrc/src/app, mcpping/app.h)
 * for Python: the parsed command line as a dict, and the check's state
 * machine behind a capsule. cli.py only plumbs: every rule, sentence and
 * output byte comes from C.
 */
#include <stdlib.h>
#include <string.h>

#include "_native.h"

typedef struct cli_holder {
  int argc;
  char **argv;
  mcpp_cli_options o;
  mcpp_cli_run *run;
} cli_holder;

static void holder_free(cli_holder *h) {
  if (!h) return;
  mcpp_cli_run_free(h->run);
  mcpp_cli_options_free(&h->o);
  for (int i = 0; i < h->argc; i++) free(h->argv[i]);
  free(h->argv);
  free(h);
}

/* Copies argv (a list of str) and parses it; NULL with an exception set. */
static cli_holder *holder_parse(PyObject *list) {
  if (!PyList_Check(list)) {
    PyErr_SetString(PyExc_TypeError, "argv must be a list of str");
    return NULL;
  }
  Py_ssize_t n = PyList_Size(list);
  cli_holder *h = calloc(1, sizeof *h);
  if (!h || !(h->argv = calloc((size_t)n + 1, sizeof *h->argv))) {
    free(h);
    PyErr_NoMemory();
    return NULL;
  }
  for (Py_ssize_t i = 0; i < n; i++) {
    PyObject *item = PyList_GetItem(list, i);
    const char *s = item && PyUnicode_Check(item) ? PyUnicode_AsUTF8AndSize(item, NULL) : NULL;
    if (!s) {
      if (!PyErr_Occurred()) PyErr_SetString(PyExc_TypeError, "argv must be a list of str");
      holder_free(h);
      return NULL;
    }
    if (!(h->argv[i] = strdup(s))) {
      holder_free(h);
      PyErr_NoMemory();
      return NULL;
    }
    h->argc = (int)i + 1;
  }
  if (mcpp_cli_parse(&h->o, h->argc, (const char *const *)h->argv)) {
    holder_free(h);
    PyErr_NoMemory();
    return NULL;
  }
  return h;
}

static PyObject *str_list(const char *const *v, size_t n) {
  PyObject *l = PyList_New((Py_ssize_t)n);
  if (!l) return NULL;
  for (size_t i = 0; i < n; i++) {
    PyObject *s = PyUnicode_FromString(v[i]);
    if (!s) {
      Py_DECREF(l);
      return NULL;
    }
    PyList_SetItem(l, (Py_ssize_t)i, s);
  }
  return l;
}

/* -H or --env as a dict, split by C (mcpp_cli_pair). */
static PyObject *pair_dict(const char *const *v, size_t n, int header) {
  PyObject *d = PyDict_New();
  for (size_t i = 0; d && i < n; i++) {
    size_t nl, vl;
    const char *value;
    mcpp_cli_pair(v[i], header, &nl, &value, &vl);
    PyObject *k = PyUnicode_FromStringAndSize(v[i], (Py_ssize_t)nl);
    PyObject *x = PyUnicode_FromStringAndSize(value, (Py_ssize_t)vl);
    if (!k || !x || PyDict_SetItem(d, k, x) < 0) Py_CLEAR(d);
    Py_XDECREF(k);
    Py_XDECREF(x);
  }
  return d;
}

static PyObject *opt_str(const char *s) {
  if (s) return PyUnicode_FromString(s);
  Py_RETURN_NONE;
}

static const char *const MODES[] = {"check", "config",     "help", "version",  "usage",
                                    "watch", "watch_help", "wrap", "wrap_help"};
static const char *const TARGETS[] = {"demo", "stdio", "http"};

/* cli_parse(argv) -> dict of the parsed command line (app.h's fields;
 * times in ms). "error_line" is what to print for bad usage, "error" its
 * reason alone; with "done" the command only prints "out" and "err" and
 * exits with "status" (mcpp_cli_immediate). */
static PyObject *py_cli_parse(PyObject *self, PyObject *argv) {
  cli_holder *h = holder_parse(argv);
  if (!h) return NULL;
  const mcpp_cli_options *o = &h->o;
  char line[300], err[300];
  mcpp_cli_problem_line(o, line, sizeof line);
  const char *out = "";
  int status = 0, done = mcpp_cli_immediate(o, &out, err, sizeof err, &status);
  PyObject *d = Py_BuildValue(
      "{s:s,s:s,s:i,s:K,s:I,s:I,s:I,s:I,s:O,s:O,s:O,s:O,s:O,s:O,s:N,s:N,s:N,s:N,s:N,s:N,s:N,s:N,"
      "s:s,s:i,s:s,s:i,s:O,s:I,s:O,s:N,s:N,s:s,s:s,s:O,s:s,s:s,s:i}",
      "mode", MODES[o->mode], "target", TARGETS[o->target], "method", (int)o->method,
      "count", (unsigned long long)o->count, "interval_ms", (unsigned)o->interval_ms,
      "timeout_ms", (unsigned)o->timeout_ms, "deadline_ms", (unsigned)o->deadline_ms,
      "connect_timeout_ms", (unsigned)o->connect_timeout_ms,
      "quiet", o->quiet ? Py_True : Py_False, "json", o->json ? Py_True : Py_False,
      "init", o->init ? Py_True : Py_False, "wrap", o->wrap ? Py_True : Py_False,
      "unwrap", o->unwrap ? Py_True : Py_False, "write", o->write ? Py_True : Py_False,
      "command_path", opt_str(o->command_path), "log", opt_str(o->log), "url", opt_str(o->url),
      "command", str_list(o->command, o->ncommand), "configs", str_list(o->configs, o->nconfigs),
      "headers", pair_dict(o->headers, o->nheaders, 1), "env", pair_dict(o->env, o->nenv, 0),
      "expect_tools", str_list(o->expect_tools, o->nexpect_tools),
      "error_line", line, "exit_usage", MCPP_EXIT_USAGE,
      "listen_host", o->listen_host, "listen_port", o->listen_port,
      "listen_any", o->listen_any ? Py_True : Py_False, "failures", (unsigned)o->failures,
      "restart", o->restart ? Py_True : Py_False,
      "metrics", opt_str(o->metrics), "name", opt_str(o->name), "wrap_usage", mcpp_wrap_usage(),
      "error", o->error, "done", done ? Py_True : Py_False, "out", out, "err", done ? err : "",
      "status", status);
  holder_free(h);
  return d;
}

static const char CAPSULE[] = "mcpping.cli_run";

static void capsule_free(PyObject *cap) {
  holder_free(PyCapsule_GetPointer(cap, CAPSULE));
}

static cli_holder *holder_of(PyObject *cap) {
  return PyCapsule_GetPointer(cap, CAPSULE);
}

/* cli_run(argv, now_ms) -> a run (argv must parse to mode "check"). */
static PyObject *py_cli_run(PyObject *self, PyObject *args) {
  PyObject *argv;
  long long now;
  if (!PyArg_ParseTuple(args, "OL", &argv, &now)) return NULL;
  cli_holder *h = holder_parse(argv);
  if (!h) return NULL;
  if (mcpp_cli_run_new(&h->run, &h->o, now)) {
    holder_free(h);
    PyErr_SetString(PyExc_ValueError, "argv does not ask for a check");
    return NULL;
  }
  PyObject *cap = PyCapsule_New(h, CAPSULE, capsule_free);
  if (!cap) holder_free(h);
  return cap;
}

/* cli_next(run, now_ms) -> (what, method, timeout_ms, until_ms, status,
 * stdout bytes, stderr bytes). */
static PyObject *py_cli_next(PyObject *self, PyObject *args) {
  PyObject *cap;
  long long now;
  if (!PyArg_ParseTuple(args, "OL", &cap, &now)) return NULL;
  cli_holder *h = holder_of(cap);
  if (!h) return NULL;
  mcpp_cli_action a;
  mcpp_cli_next(h->run, now, &a);
  return Py_BuildValue("(izILiy#y#)", (int)a.what, a.method, (unsigned)a.timeout_ms,
                       (long long)a.until_ms, a.status, a.out, (Py_ssize_t)a.out_len,
                       a.err, (Py_ssize_t)a.err_len);
}

/* cli_open_done(run, now_ms, result, peer, transport, protocol, session, reason) */
static PyObject *py_cli_open_done(PyObject *self, PyObject *args) {
  PyObject *cap;
  long long now;
  int result;
  mcpp_cli_opened op;
  memset(&op, 0, sizeof op);
  if (!PyArg_ParseTuple(args, "OLizzzzz", &cap, &now, &result, &op.peer, &op.transport,
                        &op.protocol_version, &op.session_id, &op.reason))
    return NULL;
  cli_holder *h = holder_of(cap);
  if (!h) return NULL;
  op.result = (mcpp_cli_open_result)result;
  mcpp_cli_open_done(h->run, now, &op);
  Py_RETURN_NONE;
}

/* cli_replied(run, now_ms, kind, rtt_ms, code or None, message or None) */
static PyObject *py_cli_replied(PyObject *self, PyObject *args) {
  PyObject *cap, *code;
  long long now;
  int kind;
  double rtt;
  const char *message;
  if (!PyArg_ParseTuple(args, "OLidOz", &cap, &now, &kind, &rtt, &code, &message)) return NULL;
  cli_holder *h = holder_of(cap);
  if (!h) return NULL;
  long long c = 0;
  if (code != Py_None) {
    c = PyLong_AsLongLong(code);
    if (c == -1 && PyErr_Occurred()) return NULL;
  }
  mcpp_cli_replied(h->run, now, (mcpp_cli_reply)kind, rtt, code != Py_None, c, message);
  Py_RETURN_NONE;
}

/* cli_tools(run, now_ms, kind, names, code or None, message or None) */
static PyObject *py_cli_tools(PyObject *self, PyObject *args) {
  PyObject *cap, *names, *code;
  long long now;
  int kind;
  const char *message;
  if (!PyArg_ParseTuple(args, "OLiOOz", &cap, &now, &kind, &names, &code, &message)) return NULL;
  cli_holder *h = holder_of(cap);
  if (!h) return NULL;
  long long c = 0;
  if (code != Py_None) {
    c = PyLong_AsLongLong(code);
    if (c == -1 && PyErr_Occurred()) return NULL;
  }
  PyObject *seq = PySequence_Fast(names, "names must be a sequence of str");
  if (!seq) return NULL;
  Py_ssize_t n = PySequence_Size(seq);
  const char **v = calloc((size_t)n + 1, sizeof *v);
  if (!v) {
    Py_DECREF(seq);
    return PyErr_NoMemory();
  }
  for (Py_ssize_t i = 0; i < n; i++) {
    PyObject *item = PySequence_GetItem(seq, i);
    v[i] = item && PyUnicode_Check(item) ? PyUnicode_AsUTF8AndSize(item, NULL) : "";
    Py_XDECREF(item); /* the list keeps the str alive */
    if (!v[i]) PyErr_Clear(), v[i] = "";
  }
  mcpp_cli_tools(h->run, now, (mcpp_cli_reply)kind, v, (size_t)n, code != Py_None, c, message);
  free(v);
  Py_DECREF(seq);
  Py_RETURN_NONE;
}

static PyObject *py_cli_interrupt(PyObject *self, PyObject *args) {
  PyObject *cap;
  long long now;
  if (!PyArg_ParseTuple(args, "OL", &cap, &now)) return NULL;
  cli_holder *h = holder_of(cap);
  if (!h) return NULL;
  mcpp_cli_interrupt(h->run, now);
  Py_RETURN_NONE;
}

/* demo_answer(line: bytes) -> bytes | None: the demo server's answer (C's). */
static PyObject *py_demo_answer(PyObject *self, PyObject *arg) {
  char *line;
  Py_ssize_t len;
  if (PyBytes_AsStringAndSize(arg, &line, &len) < 0) return NULL;
  char *answer = mcpp_demo_answer(line, (size_t)len);
  if (!answer) Py_RETURN_NONE;
  PyObject *out = PyBytes_FromString(answer);
  mcpp_config_free(answer);
  return out;
}

static PyMethodDef app_methods[] = {
    {"demo_answer", py_demo_answer, METH_O, "The demo server's answer to one line (C)."},
    {"cli_parse", py_cli_parse, METH_O, "Parses the mcpping command line (C)."},
    {"cli_run", py_cli_run, METH_VARARGS, "The check's state machine for argv (C)."},
    {"cli_next", py_cli_next, METH_VARARGS, "What the check does next."},
    {"cli_open_done", py_cli_open_done, METH_VARARGS, "How the open step ended."},
    {"cli_replied", py_cli_replied, METH_VARARGS, "How one check ended."},
    {"cli_tools", py_cli_tools, METH_VARARGS, "What tools/list listed."},
    {"cli_interrupt", py_cli_interrupt, METH_VARARGS, "Ctrl-C or the deadline."},
    {NULL, NULL, 0, NULL}};

int mcpping_app_add_functions(PyObject *module) {
  if (PyModule_AddIntConstant(module, "APP_KILL_GRACE_MS", MCPP_APP_KILL_GRACE_MS) ||
      PyModule_AddIntConstant(module, "CLI_STEP_SLACK_MS", MCPP_CLI_STEP_SLACK_MS) ||
      PyModule_AddIntConstant(module, "EXIT_OUTPUT_CLOSED", MCPP_EXIT_OUTPUT_CLOSED))
    return -1;
  return PyModule_AddFunctions(module, app_methods);
}
