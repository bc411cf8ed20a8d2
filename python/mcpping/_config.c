/*
 * `--config` for Python: the rewrite of csrc/src/app/config_rewrite.c.
 * Python reads the file and writes the answer; it keeps no copy of the rule.
 */
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

static PyMethodDef config_methods[] = {
    {"config_rewrite", py_config_rewrite, METH_VARARGS,
     "config_rewrite(text, unwrap, launcher) -> (text, changed, had_comments): "
     "mcpp_config_rewrite."},
    {NULL, NULL, 0, NULL}};

int mcpping_config_add_functions(PyObject *module) {
  return PyModule_AddFunctions(module, config_methods);
}
