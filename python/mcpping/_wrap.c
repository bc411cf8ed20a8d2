/*
 * mcpping._native.wrap: runs `mcpping wrap` (mcpp_wrap_run) in the calling
 * thread, with the GIL released, until the client or the server is gone.
 * The CLI (mcpping/wrap.py) validates the options first; this only
 * converts them.
 */
#include "_native.h"

PyDoc_STRVAR(wrap_doc,
             "wrap(argv, settings, restart, log, metrics, in_fd, out_fd, "
             "server=None) -> int: runs the proxy until the client or the "
             "server is gone; returns the exit status (0, 1 or 2, or 128 + a "
             "signal). Messages go to stderr.");

static PyObject *py_wrap(PyObject *module, PyObject *args) {
  PyObject *argv_obj, *settings_obj, *log_obj, *metrics_obj;
  int restart, in_fd, out_fd;
  const char *server = NULL; /* wrap --name: the config entry's name */
  if (!PyArg_ParseTuple(args, "OOpOOii|z:wrap", &argv_obj, &settings_obj,
                        &restart, &log_obj, &metrics_obj, &in_fd, &out_fd,
                        &server))
    return NULL;
  mcpp_wrap_options o;
  mcpp_wrap_options_default(&o);
  mcpp_settings settings;
  PyObject *name_holder = NULL, *argv_holder = NULL, *log_bytes = NULL,
           *result = NULL;
  const char *metrics = NULL;
  char **argv = NULL;
  if (mcpping_settings_from_dict(settings_obj, &settings, &name_holder) < 0)
    goto done;
  o.settings = &settings;
  argv = mcpping_to_argv(argv_obj, &argv_holder, "argv must be a sequence");
  if (argv == NULL) goto done;
  if (argv[0] == NULL) {
    PyErr_SetString(PyExc_ValueError, "argv must not be empty");
    goto done;
  }
  if (log_obj != Py_None && !PyUnicode_FSConverter(log_obj, &log_bytes))
    goto done;
  if (metrics_obj != Py_None) {
    metrics = PyUnicode_AsUTF8AndSize(metrics_obj, NULL);
    if (metrics == NULL) goto done;
  }
  o.spawn.file = argv[0];
  o.spawn.args = argv;
  o.restart = restart;
  o.log_path = log_bytes ? PyBytes_AsString(log_bytes) : NULL;
  o.metrics_addr = metrics;
  o.in_fd = in_fd;
  o.out_fd = out_fd;
  o.server_name = server;
  const char *problem = mcpp_wrap_options_problem(&o);
  if (problem) {
    PyErr_SetString(PyExc_ValueError, problem);
    goto done;
  }
  int status;
  Py_BEGIN_ALLOW_THREADS status = mcpp_wrap_run(&o);
  Py_END_ALLOW_THREADS result = PyLong_FromLong(status);

done:
  PyMem_Free(argv);
  Py_XDECREF(argv_holder);
  Py_XDECREF(name_holder);
  Py_XDECREF(log_bytes);
  return result;
}

static PyMethodDef wrap_methods[] = {
    {"wrap", py_wrap, METH_VARARGS, wrap_doc}, {NULL, NULL, 0, NULL}};

int mcpping_wrap_add_functions(PyObject *module) {
  return PyModule_AddFunctions(module, wrap_methods);
}
