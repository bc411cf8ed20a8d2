/*
 * mcpping._native.Engine: the sans-I/O engine as a Python object, driven on
 * the asyncio thread by mcpping.guard and the HTTP pinger. The host feeds
 * frames and timestamps; the engine answers through Python callables.
 *
 * Callbacks run inside engine calls. An exception raised by one is kept and
 * re-raised when the engine call returns, so the engine itself always sees
 * a plain C return.
 */
#include "_native.h"

typedef struct {
  PyObject_HEAD
  mcpp_engine *engine;
  PyObject *send;       /* send(kind: int, frame: bytes) -> None */
  PyObject *on_event;   /* on_event(dict) -> None, or None */
  PyObject *on_record;  /* on_record(str) -> None, or None */
  PyObject *deliver;    /* deliver(bytes, answer kind) -> None, or None */
  PyObject *exc;        /* first exception raised by a callback */
  int busy;             /* inside an engine call: no re-entry */
} EngineObject;

mcpp_engine *mcpping_engine_get(PyObject *module, PyObject *o) {
  mcpping_state *st = mcpping_get_state(module);
  if (!PyObject_TypeCheck(o, st->engine_type)) return NULL;
  return ((EngineObject *)o)->engine;
}

static mcpping_state *type_state(PyObject *self) {
  return (mcpping_state *)PyType_GetModuleState(Py_TYPE(self));
}

/* Keeps the first exception a callback raised. */
static void stash_error(EngineObject *self) {
  if (self->exc == NULL) {
    PyObject *t, *v, *tb;
    PyErr_Fetch(&t, &v, &tb);
    PyErr_NormalizeException(&t, &v, &tb);
    if (tb != NULL && v != NULL) PyException_SetTraceback(v, tb);
    self->exc = v;
    Py_XDECREF(t);
    Py_XDECREF(tb);
  } else {
    PyErr_Clear();
  }
}

static int cb_send(mcpp_engine *e, mcpp_frame_kind kind, const char *frame,
                   size_t len, void *ud) {
  EngineObject *self = ud;
  PyObject *r = PyObject_CallFunction(self->send, "iy#", (int)kind, frame,
                                      (Py_ssize_t)len);
  if (r == NULL) {
    stash_error(self);
    return MCPP_ERR_IO;
  }
  Py_DECREF(r);
  return 0;
}

static void cb_deliver(mcpp_engine *e, const char *frame, size_t len,
                       void *ud) {
  EngineObject *self = ud;
  if (self->deliver == NULL || self->deliver == Py_None) return;
  /* The answer's kind (timeout, abandoned, ...) travels beside the frame. */
  PyObject *r = PyObject_CallFunction(
      self->deliver, "y#s", frame, (Py_ssize_t)len,
      mcpp_answer_kind_name(mcpp_engine_delivery_kind(e)));
  if (r == NULL) stash_error(self);
  Py_XDECREF(r);
}

static void cb_event(mcpp_engine *e, const mcpp_event *ev, void *ud) {
  EngineObject *self = ud;
  if (self->on_event == NULL || self->on_event == Py_None) return;
  PyObject *d = mcpping_event_to_dict(ev);
  PyObject *r = d ? PyObject_CallFunctionObjArgs(self->on_event, d, NULL) : NULL;
  Py_XDECREF(d);
  if (r == NULL) stash_error(self);
  Py_XDECREF(r);
}

static void cb_record(mcpp_engine *e, const char *json, size_t len,
                      void *ud) {
  EngineObject *self = ud;
  if (self->on_record == NULL || self->on_record == Py_None) return;
  PyObject *r =
      PyObject_CallFunction(self->on_record, "s#", json, (Py_ssize_t)len);
  if (r == NULL) stash_error(self);
  Py_XDECREF(r);
}

/* Brackets every engine call: refuses re-entry and checks liveness. */
static int enter(EngineObject *self) {
  if (self->engine == NULL) {
    PyErr_SetString(PyExc_ValueError, "engine is freed");
    return -1;
  }
  if (self->busy) {
    PyErr_SetString(PyExc_RuntimeError,
                    "engine called from inside one of its callbacks");
    return -1;
  }
  self->busy = 1;
  return 0;
}

/* Ends an engine call; returns -1 with the stashed exception or rc's
 * NativeError set, else 0. */
static int leave(EngineObject *self, int rc) {
  self->busy = 0;
  if (self->exc != NULL) {
    PyObject *v = self->exc;
    self->exc = NULL;
    PyErr_SetObject((PyObject *)Py_TYPE(v), v);
    Py_DECREF(v);
    return -1;
  }
  if (rc < 0) {
    mcpping_raise(type_state((PyObject *)self), rc, NULL);
    return -1;
  }
  return 0;
}

static PyObject *Engine_new(PyTypeObject *type, PyObject *args,
                            PyObject *kwds) {
  static char *kwlist[] = {"settings", "send",    "on_event",
                           "on_record", "deliver", "now", NULL};
  PyObject *settings_obj, *send, *on_event = Py_None, *on_record = Py_None,
                                 *deliver = Py_None;
  unsigned long long now = 0;
  if (!PyArg_ParseTupleAndKeywords(args, kwds, "OO|OOOK:Engine", kwlist,
                                   &settings_obj, &send, &on_event,
                                   &on_record, &deliver, &now))
    return NULL;
  if (!PyCallable_Check(send)) {
    PyErr_SetString(PyExc_TypeError, "send must be callable");
    return NULL;
  }
  mcpp_settings settings;
  PyObject *name_holder = NULL;
  if (mcpping_settings_from_dict(settings_obj, &settings, &name_holder) < 0)
    return NULL;
  EngineObject *self = (EngineObject *)((allocfunc)PyType_GetSlot(type, Py_tp_alloc))(type, 0);
  if (self == NULL) {
    Py_XDECREF(name_holder);
    return NULL;
  }
  self->send = Py_NewRef(send);
  self->on_event = Py_NewRef(on_event);
  self->on_record = Py_NewRef(on_record);
  self->deliver = Py_NewRef(deliver);
  mcpp_engine_callbacks cbs = {
      .send = cb_send,
      .deliver = cb_deliver,
      .on_event = cb_event,
      .on_record = cb_record};
  int rc = mcpp_engine_new(&self->engine, &settings, &cbs, self, NULL,
                           (uint64_t)now);
  Py_XDECREF(name_holder);
  if (rc != 0) {
    mcpping_state *st = type_state((PyObject *)self);
    self->engine = NULL;
    Py_DECREF(self);
    return mcpping_raise(st, rc, NULL);
  }
  return (PyObject *)self;
}

static int Engine_traverse(EngineObject *self, visitproc visit, void *arg) {
  Py_VISIT(Py_TYPE(self));
  Py_VISIT(self->send);
  Py_VISIT(self->on_event);
  Py_VISIT(self->on_record);
  Py_VISIT(self->deliver);
  Py_VISIT(self->exc);
  return 0;
}

static int Engine_clear(EngineObject *self) {
  Py_CLEAR(self->send);
  Py_CLEAR(self->on_event);
  Py_CLEAR(self->on_record);
  Py_CLEAR(self->deliver);
  Py_CLEAR(self->exc);
  return 0;
}

static void Engine_dealloc(EngineObject *self) {
  PyTypeObject *tp = Py_TYPE(self);
  PyObject_GC_UnTrack(self);
  /* mcpp_engine_free emits nothing, so no callback runs here. */
  mcpp_engine_free(self->engine);
  self->engine = NULL;
  Engine_clear(self);
  ((freefunc)PyType_GetSlot(tp, Py_tp_free))(self);
  Py_DECREF(tp);
}

PyDoc_STRVAR(recv_doc, "recv(frame: bytes, now: int) -> int\n\n"
                       "Feed one inbound frame; returns 0 (forward it to the "
                       "application) or 1 (consumed).");
static PyObject *Engine_recv(EngineObject *self, PyObject *args) {
  mcpping_bytes f = {0};
  unsigned long long now;
  if (!PyArg_ParseTuple(args, "O&K:recv", mcpping_bytes_conv, &f, &now)) return NULL;
  if (enter(self) < 0) {
    mcpping_bytes_release(&f);
    return NULL;
  }
  int rc = mcpp_engine_recv(self->engine, f.buf, (size_t)f.len, now);
  mcpping_bytes_release(&f);
  if (leave(self, rc < 0 ? rc : 0) < 0) return NULL;
  return PyLong_FromLong(rc);
}

PyDoc_STRVAR(touch_doc, "touch(now: int) -> None\n\nBytes arrived: liveness only.");
static PyObject *Engine_touch(EngineObject *self, PyObject *arg) {
  unsigned long long now = PyLong_AsUnsignedLongLong(arg);
  if (PyErr_Occurred()) return NULL;
  if (enter(self) < 0) return NULL;
  mcpp_engine_touch(self->engine, now);
  if (leave(self, 0) < 0) return NULL;
  Py_RETURN_NONE;
}

PyDoc_STRVAR(observe_doc,
             "observe_outbound(frame: bytes, now: int, timeout_ms: int = 0) -> None\n\n"
             "The application is sending this frame (the caller writes it). A\n"
             "request is timed with timeout_ms (0: the settings' default,\n"
             "MCPP_TIMEOUT_NONE: never); NativeError if it is out of range.");
static PyObject *Engine_observe(EngineObject *self, PyObject *args) {
  mcpping_bytes f = {0};
  unsigned long long now;
  unsigned int timeout_ms = MCPP_TIMEOUT_DEFAULT;
  if (!PyArg_ParseTuple(args, "O&K|I:observe_outbound", mcpping_bytes_conv, &f, &now,
                        &timeout_ms))
    return NULL;
  if (enter(self) < 0) {
    mcpping_bytes_release(&f);
    return NULL;
  }
  int rc = mcpp_engine_observe_outbound_timed(self->engine, f.buf,
                                              (size_t)f.len, timeout_ms, now);
  mcpping_bytes_release(&f);
  /* NOMEM here only loses ledgering; the frame must still go out. */
  if (rc == MCPP_ERR_NOMEM) rc = 0;
  if (leave(self, rc) < 0) return NULL;
  Py_RETURN_NONE;
}

PyDoc_STRVAR(cancel_request_doc,
             "cancel_request(id_json: bytes, now: int) -> bool\n\n"
             "Abandons the in-flight request with this raw JSON id: cancelled on\n"
             "the wire, a -32800 error delivered. False if it is not in flight.");
static PyObject *Engine_cancel_request(EngineObject *self, PyObject *args) {
  mcpping_bytes id = {0};
  unsigned long long now;
  if (!PyArg_ParseTuple(args, "O&K:cancel_request", mcpping_bytes_conv, &id, &now)) return NULL;
  if (enter(self) < 0) {
    mcpping_bytes_release(&id);
    return NULL;
  }
  int rc = mcpp_engine_cancel_request(self->engine, id.buf, (size_t)id.len, now);
  mcpping_bytes_release(&id);
  int found = rc != MCPP_ERR_NOT_FOUND && rc != MCPP_ERR_CLOSED;
  /* A send error abandons the request all the same; the transport reports it. */
  if (leave(self, rc == MCPP_ERR_INVALID_ARGUMENT ? rc : 0) < 0) return NULL;
  return PyBool_FromLong(found);
}

PyDoc_STRVAR(fail_request_doc,
             "fail_request(id_json: bytes, now: int) -> bool\n\n"
             "Fails the in-flight request with this raw JSON id, whose answer cannot\n"
             "come any more: an in-doubt (or cancelled) -32003 error delivered,\n"
             "nothing sent. False if it is not in flight.");
static PyObject *Engine_fail_request(EngineObject *self, PyObject *args) {
  mcpping_bytes id = {0};
  unsigned long long now;
  if (!PyArg_ParseTuple(args, "O&K:fail_request", mcpping_bytes_conv, &id, &now)) return NULL;
  if (enter(self) < 0) {
    mcpping_bytes_release(&id);
    return NULL;
  }
  int rc = mcpp_engine_fail_request(self->engine, id.buf, (size_t)id.len, now);
  mcpping_bytes_release(&id);
  if (leave(self, rc == MCPP_ERR_INVALID_ARGUMENT ? rc : 0) < 0) return NULL;
  return PyBool_FromLong(rc == 0);
}

PyDoc_STRVAR(awaits_doc,
             "awaits(frame: bytes) -> bool\n\n"
             "True while frame, a request that went out (the engine's ping or\n"
             "probe, an application request it saw), still waits for its answer.");
static PyObject *Engine_awaits(EngineObject *self, PyObject *arg) {
  mcpping_bytes frame = {0};
  if (!mcpping_bytes_conv(arg, &frame)) return NULL;
  /* A pure read, also from inside the engine's own send callback. */
  int awaits = mcpp_engine_awaits(self->engine, frame.buf, (size_t)frame.len);
  mcpping_bytes_release(&frame);
  return PyBool_FromLong(awaits);
}

PyDoc_STRVAR(unreadable_doc,
             "unreadable() -> str\n\n"
             "The sentence that says which frames from the server were not\n"
             "JSON-RPC messages (mcpp_engine_unreadable_text), \"\" if none.");
static PyObject *Engine_unreadable(EngineObject *self, PyObject *unused) {
  (void)unused;
  char text[512];
  mcpp_engine_unreadable_text(self->engine, text, sizeof text);
  return PyUnicode_DecodeUTF8(text, (Py_ssize_t)strlen(text), "replace");
}

PyDoc_STRVAR(set_reading_doc,
             "set_reading(reading: bool, now: int) -> None\n\n"
             "Whether the peer can be heard (and reached) now. While not, the\n"
             "silence is ours: no keepalive ping goes out and nothing times out.");
static PyObject *Engine_set_reading(EngineObject *self, PyObject *args) {
  int reading;
  unsigned long long now;
  if (!PyArg_ParseTuple(args, "pK:set_reading", &reading, &now)) return NULL;
  if (enter(self) < 0) return NULL;
  mcpp_engine_set_reading(self->engine, reading, now);
  if (leave(self, 0) < 0) return NULL;
  Py_RETURN_NONE;
}

PyDoc_STRVAR(ping_doc, "ping(timeout_ms: int, now: int) -> int\n\n"
                       "Send a manual ping; returns its sequence number.");
static PyObject *Engine_ping(EngineObject *self, PyObject *args) {
  unsigned int timeout_ms;
  unsigned long long now;
  if (!PyArg_ParseTuple(args, "IK:ping", &timeout_ms, &now)) return NULL;
  if (enter(self) < 0) return NULL;
  uint64_t seq = 0;
  int rc = mcpp_engine_ping(self->engine, timeout_ms, now, &seq);
  if (leave(self, rc) < 0) return NULL;
  return PyLong_FromUnsignedLongLong(seq);
}

PyDoc_STRVAR(cancel_ping_doc,
             "cancel_ping(seq: int) -> bool\n\nForget a manual ping.");
static PyObject *Engine_cancel_ping(EngineObject *self, PyObject *arg) {
  unsigned long long seq = PyLong_AsUnsignedLongLong(arg);
  if (PyErr_Occurred()) return NULL;
  if (self->engine == NULL) Py_RETURN_FALSE;
  return PyBool_FromLong(mcpp_engine_cancel_ping(self->engine, seq) == 0);
}

PyDoc_STRVAR(next_deadline_doc,
             "next_deadline() -> int | None\n\n"
             "Monotonic µs at which on_timer must run, None if nothing is "
             "scheduled.");
static PyObject *Engine_next_deadline(EngineObject *self,
                                      PyObject *Py_UNUSED(ignored)) {
  if (self->engine == NULL) Py_RETURN_NONE;
  uint64_t d = mcpp_engine_next_deadline(self->engine);
  if (d == UINT64_MAX) Py_RETURN_NONE;
  return PyLong_FromUnsignedLongLong(d);
}

PyDoc_STRVAR(on_timer_doc, "on_timer(now: int) -> None\n\nRun what is due.");
static PyObject *Engine_on_timer(EngineObject *self, PyObject *arg) {
  unsigned long long now = PyLong_AsUnsignedLongLong(arg);
  if (PyErr_Occurred()) return NULL;
  if (enter(self) < 0) return NULL;
  int rc = mcpp_engine_on_timer(self->engine, now);
  if (leave(self, rc) < 0) return NULL;
  Py_RETURN_NONE;
}

PyDoc_STRVAR(close_doc,
             "close(err: int, reason: str | None, now: int) -> None\n\n"
             "Mark the connection closed (emits the closed event once).");
static PyObject *Engine_close(EngineObject *self, PyObject *args) {
  int err;
  const char *reason;
  unsigned long long now;
  if (!PyArg_ParseTuple(args, "izK:close", &err, &reason, &now)) return NULL;
  if (enter(self) < 0) return NULL;
  mcpp_engine_close(self->engine, err, reason, now);
  if (leave(self, 0) < 0) return NULL;
  Py_RETURN_NONE;
}

PyDoc_STRVAR(set_session_id_doc,
             "set_session_id(session_id: str) -> None");
static PyObject *Engine_set_session_id(EngineObject *self, PyObject *arg) {
  const char *s = PyUnicode_AsUTF8AndSize(arg, NULL);
  if (s == NULL) return NULL;
  if (self->engine == NULL) Py_RETURN_NONE;
  int rc = mcpp_engine_set_session_id(self->engine, s);
  if (rc < 0) return mcpping_raise(type_state((PyObject *)self), rc, NULL);
  Py_RETURN_NONE;
}

PyDoc_STRVAR(info_doc, "info(now: int) -> dict\n\nState and counters.");
static PyObject *Engine_info(EngineObject *self, PyObject *arg) {
  unsigned long long now = PyLong_AsUnsignedLongLong(arg);
  if (PyErr_Occurred()) return NULL;
  if (self->engine == NULL) {
    PyErr_SetString(PyExc_ValueError, "engine is freed");
    return NULL;
  }
  mcpp_engine_info info;
  mcpp_engine_get_info(self->engine, &info);
  return mcpping_info_to_dict(&info, mcpp_engine_healthy(self->engine, now));
}

static void collect_in_flight(const char *id, size_t id_len,
                              const char *method, uint64_t sent_at,
                              void *arg) {
  PyObject *list = arg;
  PyObject *t = Py_BuildValue("(s#zK)", id, (Py_ssize_t)id_len, method,
                              (unsigned long long)sent_at);
  if (t == NULL || PyList_Append(list, t) < 0) PyErr_Clear();
  Py_XDECREF(t);
}

PyDoc_STRVAR(in_flight_doc,
             "in_flight() -> list[tuple[str, str | None, int]]\n\n"
             "(raw id, method, sent_at µs) of application requests awaiting "
             "answers, in send order.");
static PyObject *Engine_in_flight(EngineObject *self,
                                  PyObject *Py_UNUSED(ignored)) {
  PyObject *list = PyList_New(0);
  if (list != NULL && self->engine != NULL)
    mcpp_engine_foreach_in_flight(self->engine, collect_in_flight, list);
  return list;
}

PyDoc_STRVAR(record_reconnect_doc,
             "record_reconnect(now: int) -> None\n\n"
             "Emit a 'reconnect' record (a session initialized again).");
static PyObject *Engine_record_reconnect(EngineObject *self, PyObject *arg) {
  unsigned long long now = PyLong_AsUnsignedLongLong(arg);
  if (PyErr_Occurred()) return NULL;
  if (enter(self) < 0) return NULL;
  mcpp_engine_record_reconnect(self->engine, now);
  if (leave(self, 0) < 0) return NULL;
  Py_RETURN_NONE;
}

PyDoc_STRVAR(should_close_doc,
             "should_close(event) -> bool: the stale policy. True if after this "
             "native event dict the host must close the connection.");

static PyObject *Engine_should_close(EngineObject *self, PyObject *arg) {
  mcpp_event ev;
  if (mcpping_event_from_dict(arg, &ev) < 0) return NULL;
  return PyBool_FromLong(mcpp_engine_should_close(self->engine, &ev));
}

PyDoc_STRVAR(stale_reason_doc,
             "stale_reason() -> str: why the connection went stale, the reason to "
             "close it with (\"the server went stale: 3 keepalive pings failed\"); "
             "\"\" before it did.");

static PyObject *Engine_stale_reason(EngineObject *self, PyObject *unused) {
  char why[256];
  mcpp_engine_stale_reason(self->engine, why, sizeof why);
  return PyUnicode_FromString(why);
}

static PyMethodDef Engine_methods[] = {
    {"stale_reason", (PyCFunction)Engine_stale_reason, METH_NOARGS, stale_reason_doc},
    {"recv", (PyCFunction)Engine_recv, METH_VARARGS, recv_doc},
    {"touch", (PyCFunction)Engine_touch, METH_O, touch_doc},
    {"observe_outbound", (PyCFunction)Engine_observe, METH_VARARGS,
     observe_doc},
    {"cancel_request", (PyCFunction)Engine_cancel_request, METH_VARARGS,
     cancel_request_doc},
    {"fail_request", (PyCFunction)Engine_fail_request, METH_VARARGS, fail_request_doc},
    {"awaits", (PyCFunction)Engine_awaits, METH_O, awaits_doc},
    {"unreadable", (PyCFunction)Engine_unreadable, METH_NOARGS, unreadable_doc},
    {"set_reading", (PyCFunction)Engine_set_reading, METH_VARARGS,
     set_reading_doc},
    {"ping", (PyCFunction)Engine_ping, METH_VARARGS, ping_doc},
    {"cancel_ping", (PyCFunction)Engine_cancel_ping, METH_O, cancel_ping_doc},
    {"next_deadline", (PyCFunction)Engine_next_deadline, METH_NOARGS,
     next_deadline_doc},
    {"on_timer", (PyCFunction)Engine_on_timer, METH_O, on_timer_doc},
    {"close", (PyCFunction)Engine_close, METH_VARARGS, close_doc},
    {"set_session_id", (PyCFunction)Engine_set_session_id, METH_O,
     set_session_id_doc},
    {"info", (PyCFunction)Engine_info, METH_O, info_doc},
    {"in_flight", (PyCFunction)Engine_in_flight, METH_NOARGS, in_flight_doc},
    {"should_close", (PyCFunction)Engine_should_close, METH_O, should_close_doc},
    {"record_reconnect", (PyCFunction)Engine_record_reconnect, METH_O,
     record_reconnect_doc},
    {NULL, NULL, 0, NULL}};

PyDoc_STRVAR(Engine_doc,
             "Engine(settings, send, on_event=None, on_record=None, "
             "deliver=None, now=0)\n\n"
             "The sans-I/O mcpping engine. Times are monotonic microseconds.");

static PyType_Slot Engine_slots[] = {
    {Py_tp_new, Engine_new},
    {Py_tp_dealloc, Engine_dealloc},
    {Py_tp_traverse, Engine_traverse},
    {Py_tp_clear, Engine_clear},
    {Py_tp_methods, Engine_methods},
    {Py_tp_doc, (void *)Engine_doc},
    {0, NULL}};

static PyType_Spec Engine_spec = {
    .name = "mcpping._native.Engine",
    .basicsize = sizeof(EngineObject),
    .flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_GC,
    .slots = Engine_slots,
};

int mcpping_engine_add_type(PyObject *module, mcpping_state *st) {
  st->engine_type =
      (PyTypeObject *)PyType_FromModuleAndSpec(module, &Engine_spec, NULL);
  if (st->engine_type == NULL) return -1;
  return PyModule_AddType(module, st->engine_type);
}
