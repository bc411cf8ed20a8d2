/*
 * The settings table for Python (mcpping/settings.h): its rows, and the one
 * check of a value in Python's units (seconds for times). The sentences
 * are C's; _check.py only tells a wrong type from a bad value.
 */
#include <math.h>

#include "_native.h"

/* A setting, or a call argument that is none (mcpp_arguments_table). */
static const mcpp_setting_info *find(const char *name) {
  const mcpp_setting_info *info = mcpp_setting_find(name);
  if (info == NULL) info = mcpp_argument_find(name);
  if (info == NULL) PyErr_Format(PyExc_KeyError, "no setting %s", name);
  return info;
}

/* A number in Python's unit: seconds for a time setting. */
static PyObject *in_python_unit(const mcpp_setting_info *info, double v) {
  return PyFloat_FromDouble(info->unit == MCPP_UNIT_MS ? v / 1000.0 : v);
}

static PyObject *str_or_none(const char *s) {
  if (s == NULL) Py_RETURN_NONE;
  return PyUnicode_FromString(s);
}

static PyObject *rows_tuple(const mcpp_setting_info *t, size_t n) {
  static const char *const units[] = {"ms", "count", "percent", "bytes",
                                      "ratio", "flag", "choice", "text"};
  PyObject *out = PyTuple_New((Py_ssize_t)n);
  if (out == NULL) return NULL;
  for (size_t i = 0; i < n; i++) {
    PyObject *row = Py_BuildValue(
        "{s:s,s:s,s:N,s:N,s:N,s:N,s:N,s:N,s:N,s:s}", "name", t[i].name,
        "unit", units[t[i].unit], "default", in_python_unit(&t[i], t[i].def),
        "policy", in_python_unit(&t[i], t[i].policy), "min",
        in_python_unit(&t[i], t[i].min), "max", in_python_unit(&t[i], t[i].max),
        "zero", str_or_none(t[i].zero), "floor", str_or_none(t[i].floor),
        "choices", str_or_none(t[i].choices), "meaning", t[i].meaning);
    if (row == NULL) {
      Py_DECREF(out);
      return NULL;
    }
    PyTuple_SetItem(out, (Py_ssize_t)i, row);
  }
  return out;
}

static PyObject *py_settings_table(PyObject *module, PyObject *unused) {
  size_t n = 0;
  const mcpp_setting_info *t = mcpp_settings_table(&n);
  return rows_tuple(t, n);
}

static PyObject *py_arguments_table(PyObject *module, PyObject *unused) {
  size_t n = 0;
  const mcpp_setting_info *t = mcpp_arguments_table(&n);
  return rows_tuple(t, n);
}

/* setting_range(name, low=None, low_name=None): what the setting allows. */
static PyObject *py_setting_range(PyObject *module, PyObject *args) {
  const char *name, *low_name = NULL;
  PyObject *low = Py_None;
  if (!PyArg_ParseTuple(args, "s|Oz", &name, &low, &low_name)) return NULL;
  const mcpp_setting_info *info = find(name);
  if (info == NULL) return NULL;
  double lo = low == Py_None ? NAN : PyFloat_AsDouble(low);
  if (lo == -1.0 && PyErr_Occurred()) return NULL;
  char buf[256];
  return PyUnicode_FromString(
      mcpp_setting_range(info, MCPP_IN_SECONDS, lo, low_name, buf, sizeof buf));
}

/* setting_check(name, shown, value, low=None, low_name=None): the value in
 * C's unit (int ms for times, int for whole numbers), or ValueError. */
static PyObject *py_setting_check(PyObject *module, PyObject *args) {
  const char *name, *shown, *low_name = NULL;
  double value;
  PyObject *low = Py_None;
  if (!PyArg_ParseTuple(args, "ssd|Oz", &name, &shown, &value, &low, &low_name))
    return NULL;
  const mcpp_setting_info *info = find(name);
  if (info == NULL) return NULL;
  double lo = low == Py_None ? NAN : PyFloat_AsDouble(low);
  if (lo == -1.0 && PyErr_Occurred()) return NULL;
  char buf[256];
  double out;
  if (mcpp_setting_check(info, shown, value, MCPP_IN_SECONDS, lo, low_name,
                         &out, buf, sizeof buf) != 0) {
    PyErr_SetString(PyExc_ValueError, buf);
    return NULL;
  }
  if (info->unit == MCPP_UNIT_RATIO) return PyFloat_FromDouble(out);
  return PyLong_FromDouble(out);
}

/* setting_check_text(name, shown, value): None, or ValueError with C's
 * sentence (probe_method: a method name). */
static PyObject *py_setting_check_text(PyObject *module, PyObject *args) {
  const char *name, *shown, *value;
  Py_ssize_t len;
  if (!PyArg_ParseTuple(args, "sss#", &name, &shown, &value, &len)) return NULL;
  const mcpp_setting_info *info = find(name);
  if (info == NULL) return NULL;
  char buf[256];
  if (mcpp_setting_check_text(info, shown, value, (size_t)len, buf, sizeof buf)) {
    PyErr_SetString(PyExc_ValueError, buf);
    return NULL;
  }
  Py_RETURN_NONE;
}

static PyObject *py_stale_bound_ms(PyObject *module, PyObject *args) {
  unsigned int interval_ms, timeout_ms, failures;
  if (!PyArg_ParseTuple(args, "III:stale_bound_ms", &interval_ms, &timeout_ms,
                        &failures))
    return NULL;
  return PyLong_FromUnsignedLong(
      mcpp_stale_bound_ms(interval_ms, timeout_ms, failures));
}

static PyMethodDef settings_methods[] = {
    {"stale_bound_ms", py_stale_bound_ms, METH_VARARGS,
     "stale_bound_ms(interval_ms, timeout_ms, failures): interval + timeout "
     "x failures, capped at the longest timer (0: the default)."},
    {"setting_check_text", py_setting_check_text, METH_VARARGS,
     "setting_check_text(name, shown, value): None, or ValueError with C's "
     "sentence."},
    {"settings_table", py_settings_table, METH_NOARGS,
     "Every setting: name, unit, default, policy, min, max (seconds for "
     "times), zero, floor, choices, meaning."},
    {"arguments_table", py_arguments_table, METH_NOARGS,
     "The call arguments that are no setting (kill_grace, the retry budget, "
     "an RTT window), as settings_table's rows."},
    {"setting_range", py_setting_range, METH_VARARGS,
     "setting_range(name, low=None, low_name=None): what the setting "
     "allows, in seconds for a time."},
    {"setting_check", py_setting_check, METH_VARARGS,
     "setting_check(name, shown, value, low=None, low_name=None): value "
     "(seconds for a time) in C's unit, or ValueError with C's sentence."},
    {NULL, NULL, 0, NULL}};

int mcpping_settings_add_functions(PyObject *module) {
  return PyModule_AddFunctions(module, settings_methods);
}
