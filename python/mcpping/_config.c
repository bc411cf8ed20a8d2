/*
 * `--config` for Python: the rewrite of csrc/src/app/config_rewrite.c.
 * Python reads the file and writes the answer; it keeps no copy of the rule.
 */
#include <string.h>

#include "_native.h"

static PyObject *py_config_rewrite(PyObject *module, PyObject *args) {
  const char *text;
  Py_ssize_t len;
  int unwrap;
  PyObject *launcher_seq;
  if (!PyArg_ParseTuple(args, "s#pO", &text, &len, &unwrap, &launcher_seq)) return NULL;
  PyObject *holder = NULL;
  char **launcher = mcpping_to_argv(launcher_seq, &holder, "launcher");
  if (launcher == NULL) return NULL;
  size_t n = 0;
  while (launcher[n]) n++;
  char *out = NULL;
  size_t out_len = 0;
  int changed = 0, comments = 0;
  int rc = mcpp_config_rewrite(text, (size_t)len, unwrap, (const char *const *)launcher, n, &out,
                               &out_len, &changed, &comments);
  PyMem_Free(launcher);
  Py_XDECREF(holder);
  if (rc == MCPP_ERR_NOMEM) return PyErr_NoMemory();
  if (rc < 0) {
    PyErr_SetString(PyExc_ValueError, "not a JSON object, or no launcher to wrap with");
    return NULL;
  }
  PyObject *s = PyUnicode_DecodeUTF8(out, (Py_ssize_t)out_len, "surrogatepass");
  mcpp_config_free(out);
  if (s == NULL) return NULL;
  return Py_BuildValue("(NiO)", s, changed, comments ? Py_True : Py_False);
}

/* A str field of a row dict as UTF-8 (NULL for None or absent); -1 on error. */
static int str_field(PyObject *d, const char *key, const char **out) {
  PyObject *v = PyDict_GetItemString(d, key);
  *out = NULL;
  if (v == NULL || v == Py_None) return 0;
  if (!PyUnicode_Check(v)) {
    PyErr_Format(PyExc_TypeError, "row '%s' must be a str or None", key);
    return -1;
  }
  *out = PyUnicode_AsUTF8AndSize(v, NULL);
  return *out ? 0 : -1;
}

static int long_field(PyObject *d, const char *key, long *out) {
  PyObject *v = PyDict_GetItemString(d, key);
  *out = v ? PyLong_AsLong(v) : 0;
  return *out == -1 && PyErr_Occurred() ? -1 : 0;
}

static PyObject *text_result(char *out) {
  if (out == NULL) return PyErr_NoMemory();
  PyObject *s = PyUnicode_DecodeUTF8(out, (Py_ssize_t)strlen(out), "replace");
  mcpp_config_free(out);
  return s;
}

static PyObject *py_format_files(PyObject *module, PyObject *args) {
  PyObject *seq;
  int json;
  if (!PyArg_ParseTuple(args, "Op", &seq, &json)) return NULL;
  PyObject *fast = PySequence_List(seq);
  if (fast == NULL) return NULL;
  Py_ssize_t n = PyList_Size(fast);
  const char **files = PyMem_Calloc((size_t)n + 1, sizeof *files);
  size_t *counts = PyMem_Calloc((size_t)n + 1, sizeof *counts);
  PyObject *result = NULL;
  if (!files || !counts) {
    PyErr_NoMemory();
    goto done;
  }
  for (Py_ssize_t i = 0; i < n; i++) {
    const char *path;
    Py_ssize_t servers;
    if (!PyArg_ParseTuple(PyList_GetItem(fast, i), "sn", &path, &servers)) goto done;
    files[i] = path;
    counts[i] = (size_t)servers;
  }
  result = text_result(mcpp_config_format_files(files, counts, (size_t)n, json));
done:
  PyMem_Free(files);
  PyMem_Free(counts);
  Py_DECREF(fast);
  return result;
}

static PyObject *py_format_start(PyObject *module, PyObject *args) {
  Py_ssize_t servers;
  int count, json;
  double interval, timeout, deadline;
  if (!PyArg_ParseTuple(args, "nidddp", &servers, &count, &interval, &timeout, &deadline, &json))
    return NULL;
  return text_result(
      mcpp_config_format_start((size_t)servers, count, interval, timeout, deadline, json));
}

/* Reads one row dict into *r; its RTTs into *rtts (PyMem_Free it). */
static int row_from_dict(PyObject *d, mcpp_config_row *r, double **rtts) {
  long sent, received, noise;
  if (!PyDict_Check(d)) {
    PyErr_SetString(PyExc_TypeError, "each row must be a dict");
    return -1;
  }
  if (str_field(d, "name", &r->name) < 0 || str_field(d, "transport", &r->transport) < 0 ||
      str_field(d, "protocol_version", &r->protocol_version) < 0 ||
      str_field(d, "status", &r->status) < 0 || str_field(d, "reason", &r->reason) < 0 ||
      str_field(d, "last_stderr", &r->last_stderr) < 0 || str_field(d, "file", &r->file) < 0 ||
      str_field(d, "json_path", &r->json_path) < 0 || long_field(d, "sent", &sent) < 0 ||
      long_field(d, "received", &received) < 0 || long_field(d, "non_json_lines", &noise) < 0)
    return -1;
  r->sent = (int)sent;
  r->received = (int)received;
  r->non_json_lines = (unsigned long)noise;
  PyObject *list = PyDict_GetItemString(d, "rtts_ms");
  if (list == NULL || list == Py_None) return 0;
  PyObject *fl = PySequence_List(list);
  if (fl == NULL) return -1;
  Py_ssize_t m = PyList_Size(fl);
  *rtts = PyMem_Calloc((size_t)m + 1, sizeof **rtts);
  for (Py_ssize_t k = 0; *rtts && k < m; k++) (*rtts)[k] = PyFloat_AsDouble(PyList_GetItem(fl, k));
  Py_DECREF(fl);
  if (*rtts == NULL) {
    PyErr_NoMemory();
    return -1;
  }
  if (PyErr_Occurred()) return -1;
  r->rtts_ms = *rtts;
  r->n_rtts = (size_t)m;
  return 0;
}

static PyObject *py_format_results(PyObject *module, PyObject *args) {
  PyObject *seq;
  double time_ms;
  int json, quiet;
  if (!PyArg_ParseTuple(args, "Odpp", &seq, &time_ms, &json, &quiet)) return NULL;
  PyObject *fast = PySequence_List(seq);
  if (fast == NULL) return NULL;
  Py_ssize_t n = PyList_Size(fast);
  mcpp_config_row *rows = PyMem_Calloc((size_t)n + 1, sizeof *rows);
  double **rtts = PyMem_Calloc((size_t)n + 1, sizeof *rtts);
  PyObject *result = NULL;
  if (!rows || !rtts) {
    PyErr_NoMemory();
    goto done;
  }
  for (Py_ssize_t i = 0; i < n; i++)
    if (row_from_dict(PyList_GetItem(fast, i), &rows[i], &rtts[i]) < 0) goto done;
  int status = 0;
  char *out = mcpp_config_format_results(rows, (size_t)n, time_ms, json, quiet, &status);
  PyObject *text = text_result(out);
  if (text) result = Py_BuildValue("(Ni)", text, status);
done:
  for (Py_ssize_t i = 0; rtts && i < n; i++) PyMem_Free(rtts[i]);
  PyMem_Free(rtts);
  PyMem_Free(rows);
  Py_DECREF(fast);
  return result;
}

static PyObject *py_format_refusal(PyObject *module, PyObject *args) {
  const char *file;
  PyObject *d;
  if (!PyArg_ParseTuple(args, "sO", &file, &d)) return NULL;
  mcpp_config_row r = {0};
  double *rtts = NULL;
  PyObject *result = NULL;
  if (row_from_dict(d, &r, &rtts) == 0) result = text_result(mcpp_config_format_refusal(file, &r));
  PyMem_Free(rtts);
  return result;
}

static PyObject *py_line_is_json(PyObject *module, PyObject *arg) {
  mcpping_bytes b = {0};
  if (!mcpping_bytes_conv(arg, &b)) return NULL;
  int ok = mcpp_config_line_is_json(b.buf, (size_t)b.len);
  mcpping_bytes_release(&b);
  return PyBool_FromLong(ok);
}

static PyMethodDef config_methods[] = {
    {"config_rewrite", py_config_rewrite, METH_VARARGS,
     "config_rewrite(text, unwrap, launcher) -> (text, changed, had_comments): "
     "mcpp_config_rewrite."},
    {"config_format_files", py_format_files, METH_VARARGS,
     "config_format_files(files, json) -> str: mcpp_config_format_files."},
    {"config_format_start", py_format_start, METH_VARARGS,
     "config_format_start(servers, count, interval, timeout, deadline, json) -> str."},
    {"config_format_results", py_format_results, METH_VARARGS,
     "config_format_results(rows, time_ms, json, quiet) -> (str, exit_status)."},
    {"config_format_refusal", py_format_refusal, METH_VARARGS,
     "config_format_refusal(file, row) -> str: mcpp_config_format_refusal."},
    {"config_line_is_json", py_line_is_json, METH_O,
     "config_line_is_json(line) -> bool: mcpp_config_line_is_json."},
    {NULL, NULL, 0, NULL}};

int mcpping_config_add_functions(PyObject *module) {
  return PyModule_AddFunctions(module, config_methods);
}
