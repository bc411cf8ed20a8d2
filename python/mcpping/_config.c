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

/* config_write(path, text, unwrap, changed, had_comments) -> (exit_status, line) */
static PyObject *py_config_write(PyObject *module, PyObject *args) {
  const char *path, *text;
  Py_ssize_t len, changed;
  int unwrap, comments;
  if (!PyArg_ParseTuple(args, "ss#pnp", &path, &text, &len, &unwrap, &changed, &comments))
    return NULL;
  char *line = NULL;
  int status = mcpp_config_write(path, text, (size_t)len, unwrap, (size_t)changed, comments, &line);
  if (status == MCPP_ERR_NOMEM) return PyErr_NoMemory();
  PyObject *s = text_result(line);
  return s ? Py_BuildValue("(iN)", status, s) : NULL;
}

/* ---- Reading a config: csrc/src/app/config_load.c and config_resolve.c ---- */

static PyObject *str_or_none(const char *s) {
  if (s == NULL) Py_RETURN_NONE;
  return PyUnicode_DecodeUTF8(s, (Py_ssize_t)strlen(s), "surrogatepass");
}

static PyObject *tuple_of(char **items, size_t n) {
  PyObject *t = PyTuple_New((Py_ssize_t)n);
  for (size_t i = 0; t && i < n; i++) {
    PyObject *s = str_or_none(items[i]);
    if (s == NULL || PyTuple_SetItem(t, (Py_ssize_t)i, s) < 0) {
      Py_CLEAR(t);
    }
  }
  return t;
}

static PyObject *dict_of(char **pairs, size_t n) {
  PyObject *d = PyDict_New();
  for (size_t i = 0; d && i < n; i++) {
    PyObject *k = str_or_none(pairs[2 * i]), *v = str_or_none(pairs[2 * i + 1]);
    if (k == NULL || v == NULL || PyDict_SetItem(d, k, v) < 0) Py_CLEAR(d);
    Py_XDECREF(k);
    Py_XDECREF(v);
  }
  return d;
}

/* (name, transport, json_path, command, args, env, cwd, url, headers, disabled) */
static PyObject *server_tuple(const mcpp_config_server *s) {
  return Py_BuildValue("(NsNNNNNNNO)", str_or_none(s->name), s->transport,
                       str_or_none(s->json_path), str_or_none(s->command),
                       tuple_of(s->args, s->nargs), dict_of(s->env, s->nenv), str_or_none(s->cwd),
                       str_or_none(s->url), dict_of(s->headers, s->nheaders),
                       s->disabled ? Py_True : Py_False);
}

/* config_parse(data, require_servers, project) -> (servers, json_path, problem) */
static PyObject *py_config_parse(PyObject *module, PyObject *args) {
  const char *data, *project = NULL;
  Py_ssize_t len;
  int require;
  if (!PyArg_ParseTuple(args, "y#pz", &data, &len, &require, &project)) return NULL;
  mcpp_config_doc doc;
  if (mcpp_config_parse(data, (size_t)len, require, project, &doc) < 0) return PyErr_NoMemory();
  PyObject *list = PyList_New((Py_ssize_t)doc.nservers);
  for (size_t i = 0; list && i < doc.nservers; i++) {
    PyObject *t = server_tuple(&doc.servers[i]);
    if (t == NULL || PyList_SetItem(list, (Py_ssize_t)i, t) < 0) Py_CLEAR(list);
  }
  PyObject *result = list ? Py_BuildValue("(NNN)", list, str_or_none(doc.json_path),
                                          str_or_none(doc.problem))
                          : NULL;
  mcpp_config_doc_free(&doc);
  return result;
}

static PyObject *py_config_syntax_error_at(PyObject *module, PyObject *arg) {
  Py_ssize_t len;
  PyObject *b = PyUnicode_AsEncodedString(arg, "utf-8", "surrogatepass");
  if (b == NULL) return NULL;
  char *text;
  if (PyBytes_AsStringAndSize(b, &text, &len) < 0) {
    Py_DECREF(b);
    return NULL;
  }
  long at = mcpp_config_syntax_error_at(text, (size_t)len);
  Py_DECREF(b);
  if (at < 0) Py_RETURN_NONE;
  return PyLong_FromLong(at);
}

/* config_json_path(parent, key: str | int) -> str */
static PyObject *py_config_json_path(PyObject *module, PyObject *args) {
  const char *parent;
  PyObject *key;
  if (!PyArg_ParseTuple(args, "sO", &parent, &key)) return NULL;
  char *out;
  if (PyLong_Check(key)) {
    Py_ssize_t i = PyLong_AsSsize_t(key);
    if (i == -1 && PyErr_Occurred()) return NULL;
    out = mcpp_config_json_path(parent, NULL, 0, (size_t)i);
  } else {
    Py_ssize_t n;
    const char *k = PyUnicode_AsUTF8AndSize(key, &n);
    if (k == NULL) return NULL;
    out = mcpp_config_json_path(parent, k, (size_t)n, 0);
  }
  return text_result(out);
}

static PyObject *py_config_read_problem(PyObject *module, PyObject *args) {
  const char *code;
  if (!PyArg_ParseTuple(args, "s", &code)) return NULL;
  return text_result(mcpp_config_read_problem(code));
}

/* The environment a lookup reads: a mapping; the last value is held so its
 * UTF-8 stays valid until the next lookup. */
typedef struct env_ctx {
  PyObject *mapping, *last;
  int failed;
} env_ctx;

static const char *env_lookup(void *ctx, const char *name) {
  env_ctx *e = ctx;
  if (e->failed || e->mapping == NULL || e->mapping == Py_None) return NULL;
  PyObject *key = PyUnicode_DecodeUTF8(name, (Py_ssize_t)strlen(name), "surrogatepass");
  PyObject *v = key ? PyObject_GetItem(e->mapping, key) : NULL;
  Py_XDECREF(key);
  if (v == NULL) {
    if (PyErr_ExceptionMatches(PyExc_KeyError)) PyErr_Clear();
    else e->failed = 1;
    return NULL;
  }
  Py_XDECREF(e->last);
  e->last = v;
  const char *s = PyUnicode_AsUTF8AndSize(v, NULL);
  if (s == NULL) e->failed = 1;
  return s;
}

/* A mapping's (name, value) pairs as UTF-8 borrowed from *keep (the items
 * list: the caller releases it after the call). */
static int pairs_from(PyObject *d, char ***out, size_t *n, PyObject **keep) {
  PyObject *items = *keep = PyMapping_Items(d);
  if (items == NULL) return -1;
  Py_ssize_t m = PyList_Size(items);
  *out = PyMem_Calloc(2 * (size_t)m + 1, sizeof **out);
  if (*out == NULL) {
    PyErr_NoMemory();
    return -1;
  }
  *n = (size_t)m;
  int rc = 0;
  for (Py_ssize_t i = 0; i < m && rc == 0; i++) {
    PyObject *kv = PyList_GetItem(items, i);
    const char *k, *v;
    if (!PyArg_ParseTuple(kv, "ss", &k, &v)) rc = -1;
    (*out)[2 * i] = (char *)k;
    (*out)[2 * i + 1] = (char *)v;
  }
  return rc;
}

/* config_resolve((name, transport, json_path, command, args, env, cwd, url,
 * headers, disabled), workspace, environ, home) -> (command, args, env, cwd,
 * url, headers) or the problem (str). */
static PyObject *py_config_resolve(PyObject *module, PyObject *args) {
  PyObject *fields, *environ, *argv, *envd, *headersd;
  const char *workspace, *home = NULL;
  if (!PyArg_ParseTuple(args, "OsOz", &fields, &workspace, &environ, &home)) return NULL;
  mcpp_config_server in = {0};
  const char *transport;
  int disabled;
  if (!PyArg_ParseTuple(fields, "sssz" "O" "O" "z" "z" "O" "p", &in.name, &transport,
                        &in.json_path, &in.command, &argv, &envd, &in.cwd, &in.url, &headersd,
                        &disabled))
    return NULL;
  in.transport = transport;
  PyObject *argl = PySequence_List(argv), *result = NULL, *env_items = NULL, *hdr_items = NULL;
  if (argl == NULL) return NULL;
  in.nargs = (size_t)PyList_Size(argl);
  in.args = PyMem_Calloc(in.nargs + 1, sizeof *in.args);
  if (in.args == NULL) {
    PyErr_NoMemory();
    goto done;
  }
  for (size_t i = 0; i < in.nargs; i++)
    if ((in.args[i] = (char *)PyUnicode_AsUTF8AndSize(PyList_GetItem(argl, (Py_ssize_t)i),
                                                      NULL)) == NULL)
      goto done;
  if (pairs_from(envd, &in.env, &in.nenv, &env_items) < 0 ||
      pairs_from(headersd, &in.headers, &in.nheaders, &hdr_items) < 0)
    goto done;
  env_ctx ctx = {environ, NULL, 0};
  mcpp_config_server out;
  char *problem = NULL;
  int rc = mcpp_config_resolve(&in, workspace, home, env_lookup, &ctx, &out, &problem);
  Py_XDECREF(ctx.last);
  if (ctx.failed) {
    if (rc == 0) mcpp_config_server_free(&out);
    mcpp_config_free(problem);
    goto done;
  }
  if (rc < 0) {
    PyErr_NoMemory();
  } else if (rc == 1) {
    result = text_result(problem);
  } else {
    result = Py_BuildValue("(NNNNNN)", str_or_none(out.command), tuple_of(out.args, out.nargs),
                           dict_of(out.env, out.nenv), str_or_none(out.cwd), str_or_none(out.url),
                           dict_of(out.headers, out.nheaders));
    mcpp_config_server_free(&out);
  }
done:
  PyMem_Free(in.args);
  PyMem_Free(in.env);
  PyMem_Free(in.headers);
  Py_XDECREF(env_items);
  Py_XDECREF(hdr_items);
  Py_DECREF(argl);
  return result;
}

static PyObject *py_config_workspace(PyObject *module, PyObject *args) {
  const char *path, *cwd = NULL;
  if (!PyArg_ParseTuple(args, "s|z", &path, &cwd)) return NULL;
  return text_result(mcpp_config_workspace(path, cwd));
}

/* config_auto_paths(cwd, home, platform, environ) -> list[str] */
static PyObject *py_config_auto_paths(PyObject *module, PyObject *args) {
  const char *cwd, *home, *platform;
  PyObject *environ;
  if (!PyArg_ParseTuple(args, "zzzO", &cwd, &home, &platform, &environ)) return NULL;
  env_ctx ctx = {environ, NULL, 0};
  char *paths[MCPP_CONFIG_AUTO_PATHS] = {0};
  int rc = mcpp_config_auto_paths(cwd, home, platform, env_lookup, &ctx, paths);
  Py_XDECREF(ctx.last);
  PyObject *list = NULL;
  if (ctx.failed) {
  } else if (rc < 0) {
    PyErr_NoMemory();
  } else {
    list = tuple_of(paths, MCPP_CONFIG_AUTO_PATHS);
  }
  for (int i = 0; i < MCPP_CONFIG_AUTO_PATHS; i++) mcpp_config_free(paths[i]);
  if (list == NULL) return NULL;
  PyObject *l = PySequence_List(list);
  Py_DECREF(list);
  return l;
}

/* config_files(given, auto_paths) -> [(path, require_servers)], or why none (str) */
static PyObject *py_config_files(PyObject *module, PyObject *args) {
  PyObject *given_seq, *auto_seq, *h_given = NULL, *h_auto = NULL, *result = NULL;
  if (!PyArg_ParseTuple(args, "OO", &given_seq, &auto_seq)) return NULL;
  char **given = mcpping_to_argv(given_seq, &h_given, "configs");
  char **autos = given ? mcpping_to_argv(auto_seq, &h_auto, "auto_paths") : NULL;
  size_t ng = 0, na = 0;
  while (given && given[ng]) ng++;
  while (autos && autos[na]) na++;
  const char **paths = autos ? PyMem_Calloc(ng + na + 1, sizeof *paths) : NULL;
  int *require = paths ? PyMem_Calloc(ng + na + 1, sizeof *require) : NULL;
  char *problem = NULL;
  if (autos && !require) PyErr_NoMemory();
  if (require) {
    size_t n = mcpp_config_files((const char *const *)given, ng, (const char *const *)autos, na,
                                 paths, require, ng + na, &problem);
    if (problem) result = text_result(problem);
    else if ((result = PyList_New((Py_ssize_t)n)))
      for (size_t i = 0; i < n; i++)
        PyList_SetItem(result, (Py_ssize_t)i, Py_BuildValue("(sO)", paths[i], require[i] ? Py_True : Py_False));
  }
  PyMem_Free(require);
  PyMem_Free(paths);
  PyMem_Free(autos);
  PyMem_Free(given);
  Py_XDECREF(h_auto);
  Py_XDECREF(h_given);
  return result;
}

static PyObject *py_config_strip_jsonc(PyObject *module, PyObject *arg) {
  Py_ssize_t len;
  const char *text = PyUnicode_AsUTF8AndSize(arg, &len);
  if (text == NULL) return NULL;
  char *copy = PyMem_Malloc((size_t)len + 1);
  if (copy == NULL) return PyErr_NoMemory();
  memcpy(copy, text, (size_t)len + 1);
  mcpp_config_strip_jsonc(copy, (size_t)len);
  PyObject *s = PyUnicode_DecodeUTF8(copy, len, "surrogatepass");
  PyMem_Free(copy);
  return s;
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
     "config_format_refusal(file, row) -> str (\"\": no refusal): mcpp_config_format_refusal."},
    {"config_write", py_config_write, METH_VARARGS,
     "config_write(path, text, unwrap, changed, had_comments) -> (status, line)."},
    {"config_parse", py_config_parse, METH_VARARGS,
     "config_parse(data, require_servers, project) -> (servers, json_path, problem)."},
    {"config_syntax_error_at", py_config_syntax_error_at, METH_O,
     "config_syntax_error_at(text) -> int | None: mcpp_config_syntax_error_at."},
    {"config_json_path", py_config_json_path, METH_VARARGS,
     "config_json_path(parent, key) -> str: mcpp_config_json_path."},
    {"config_read_problem", py_config_read_problem, METH_VARARGS,
     "config_read_problem(errno_name) -> str: mcpp_config_read_problem."},
    {"config_resolve", py_config_resolve, METH_VARARGS,
     "config_resolve(fields, workspace, environ, home) -> tuple | str: mcpp_config_resolve."},
    {"config_workspace", py_config_workspace, METH_VARARGS,
     "config_workspace(path, cwd=None) -> str: mcpp_config_workspace."},
    {"config_auto_paths", py_config_auto_paths, METH_VARARGS,
     "config_auto_paths(cwd, home, platform, environ) -> list[str]."},
    {"config_files", py_config_files, METH_VARARGS,
     "config_files(configs, auto_paths) -> [(path, require_servers)] | str."},
    {"config_strip_jsonc", py_config_strip_jsonc, METH_O,
     "config_strip_jsonc(text) -> str: mcpp_config_strip_jsonc."},
    {NULL, NULL, 0, NULL}};

int mcpping_config_add_functions(PyObject *module) {
  if (PyModule_AddStringConstant(module, "CONFIG_START_PATH", MCPP_CONFIG_START_PATH) ||
      PyModule_AddIntConstant(module, "CONFIG_START_TIMEOUT_MS", MCPP_CONFIG_START_TIMEOUT_MS))
    return -1;
  return PyModule_AddFunctions(module, config_methods);
}
