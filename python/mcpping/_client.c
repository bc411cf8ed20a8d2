/*
 * The client protocol rules of the C core, for Python: the handshake
 * machine (mcpping._native.ClientHandshake), the SSE parser
 * (SseParser), a Streamable HTTP session's renewal (HttpRenewal) and the
 * 2026-07-28 request envelope. Python carries the bytes and keeps the clock; every rule and
 * sentence is C's.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "_native.h"

typedef struct {
  PyObject_HEAD
  mcpp_client_hs *hs;
} HandshakeObject;

static PyObject *Handshake_new(PyTypeObject *type, PyObject *args,
                               PyObject *kw) {
  static char *kwlist[] = {"timeout_ms", NULL};
  unsigned long long timeout_ms = 0;
  if (!PyArg_ParseTupleAndKeywords(args, kw, "K", kwlist, &timeout_ms))
    return NULL;
  allocfunc alloc = (allocfunc)PyType_GetSlot(type, Py_tp_alloc);
  HandshakeObject *self = (HandshakeObject *)alloc(type, 0);
  if (self == NULL) return NULL;
  self->hs = mcpp_client_hs_new((uint64_t)timeout_ms);
  if (self->hs == NULL) {
    Py_DECREF(self);
    return PyErr_NoMemory();
  }
  return (PyObject *)self;
}

static void Handshake_dealloc(PyObject *o) {
  HandshakeObject *self = (HandshakeObject *)o;
  PyTypeObject *tp = Py_TYPE(o);
  mcpp_client_hs_free(self->hs);
  freefunc f = (freefunc)PyType_GetSlot(tp, Py_tp_free);
  f(o);
  Py_DECREF(tp);
}

static PyObject *str_or_none(const char *s) {
  if (s == NULL) Py_RETURN_NONE;
  return PyUnicode_DecodeUTF8(s, (Py_ssize_t)strlen(s), "replace");
}

/* request() -> (id, bytes), or None when no request is to be sent. */
static PyObject *Handshake_request(PyObject *o, PyObject *unused) {
  (void)unused;
  HandshakeObject *self = (HandshakeObject *)o;
  size_t len = 0;
  const char *id = NULL;
  const char *msg = mcpp_client_hs_request(self->hs, &len, &id);
  if (msg == NULL) Py_RETURN_NONE;
  return Py_BuildValue("(sy#)", id, msg, (Py_ssize_t)len);
}

static PyObject *Handshake_answer(PyObject *o, PyObject *arg) {
  HandshakeObject *self = (HandshakeObject *)o;
  char *buf;
  Py_ssize_t n;
  if (PyBytes_AsStringAndSize(arg, &buf, &n) < 0) return NULL;
  return PyUnicode_FromString(
      mcpp_client_hs_state_name(mcpp_client_hs_answer(self->hs, buf, (size_t)n)));
}

static PyObject *Handshake_timed_out(PyObject *o, PyObject *args) {
  const char *why = NULL;
  if (!PyArg_ParseTuple(args, "|z", &why)) return NULL;
  mcpp_client_hs_timed_out_because(((HandshakeObject *)o)->hs, why);
  Py_RETURN_NONE;
}

static PyObject *Handshake_closed(PyObject *o, PyObject *args) {
  const char *reason = NULL;
  int status = -1, sig = 0;
  if (!PyArg_ParseTuple(args, "z|ii", &reason, &status, &sig)) return NULL;
  mcpp_client_hs_closed(((HandshakeObject *)o)->hs, reason, status, sig);
  Py_RETURN_NONE;
}

static PyObject *Handshake_notification(PyObject *o, PyObject *unused) {
  (void)unused;
  size_t len = 0;
  const char *msg = mcpp_client_hs_notification(((HandshakeObject *)o)->hs, &len);
  if (msg == NULL) Py_RETURN_NONE;
  return PyBytes_FromStringAndSize(msg, (Py_ssize_t)len);
}

/* outcome() -> dict of what the handshake learned or why it failed. */
static PyObject *Handshake_outcome(PyObject *o, PyObject *unused) {
  (void)unused;
  const mcpp_client_hs *hs = ((HandshakeObject *)o)->hs;
  mcpp_client_hs_state s = mcpp_client_hs_get_state(hs);
  PyObject *d = PyDict_New();
  if (d == NULL) return NULL;
  PyObject *v;
#define SET(key, expr)                                           \
  if ((v = (expr)) == NULL || PyDict_SetItemString(d, key, v) < 0) { \
    Py_XDECREF(v);                                               \
    Py_DECREF(d);                                                \
    return NULL;                                                 \
  }                                                              \
  Py_DECREF(v)
  SET("state", PyUnicode_FromString(mcpp_client_hs_state_name(s)));
  SET("version", str_or_none(mcpp_client_hs_version(hs)));
  SET("modern", PyBool_FromLong(mcpp_client_hs_modern(hs)));
  SET("server_name", str_or_none(s == MCPP_CHS_DONE ? mcpp_client_hs_server_name(hs) : NULL));
  SET("server_info", str_or_none(mcpp_client_hs_server_info(hs)));
  SET("result", str_or_none(mcpp_client_hs_result(hs)));
  SET("error", str_or_none(mcpp_client_hs_error(hs)));
  SET("kind", PyUnicode_FromString(
                  mcpp_client_hs_error_kind_name(mcpp_client_hs_error_kind_of(hs))));
#undef SET
  return d;
}

static PyMethodDef Handshake_methods[] = {
    {"request", Handshake_request, METH_NOARGS,
     "request() -> (id, bytes) to send next, or None."},
    {"answer", Handshake_answer, METH_O,
     "answer(bytes) -> state: the awaited request's answer."},
    {"timed_out", Handshake_timed_out, METH_VARARGS,
     "timed_out(why=None): the awaited request passed the deadline; why:\n"
     "what the transport saw that may say why (added to the sentence)."},
    {"closed", Handshake_closed, METH_VARARGS,
     "closed(reason|None, exit_status=-1, term_signal=0): the connection ended."},
    {"notification", Handshake_notification, METH_NOARGS,
     "notification() -> bytes to send once done, or None."},
    {"outcome", Handshake_outcome, METH_NOARGS,
     "outcome() -> dict: state, version, modern, server_name, server_info "
     "(JSON), result (JSON), error, kind."},
    {NULL, NULL, 0, NULL}};

static PyType_Slot Handshake_slots[] = {
    {Py_tp_new, Handshake_new},
    {Py_tp_dealloc, Handshake_dealloc},
    {Py_tp_methods, Handshake_methods},
    {Py_tp_doc, (void *)"ClientHandshake(timeout_ms): the C core's client "
                        "handshake (initialize, server/discover fallback)."},
    {0, NULL}};

static PyType_Spec Handshake_spec = {
    .name = "mcpping._native.ClientHandshake",
    .basicsize = sizeof(HandshakeObject),
    .flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_IMMUTABLETYPE,
    .slots = Handshake_slots,
};

/* SseParser(max=0): the C core's SSE parser. feed(bytes) and finish()
 * return a list with each event's data (bytes) and None for each comment
 * (proof of life); an oversize line or event raises ValueError. */
typedef struct {
  PyObject_HEAD
  mcpp_sse *sse;
} SseObject;

static PyObject *Sse_new(PyTypeObject *type, PyObject *args, PyObject *kw) {
  static char *kwlist[] = {"max", NULL};
  Py_ssize_t max = 0;
  if (!PyArg_ParseTupleAndKeywords(args, kw, "|n", kwlist, &max)) return NULL;
  if (max < 0) {
    PyErr_SetString(PyExc_ValueError, "max must be >= 0");
    return NULL;
  }
  allocfunc alloc = (allocfunc)PyType_GetSlot(type, Py_tp_alloc);
  SseObject *self = (SseObject *)alloc(type, 0);
  if (self == NULL) return NULL;
  self->sse = mcpp_sse_new((size_t)max);
  if (self->sse == NULL) {
    Py_DECREF(self);
    return PyErr_NoMemory();
  }
  return (PyObject *)self;
}

static void Sse_dealloc(PyObject *o) {
  PyTypeObject *tp = Py_TYPE(o);
  mcpp_sse_free(((SseObject *)o)->sse);
  freefunc f = (freefunc)PyType_GetSlot(tp, Py_tp_free);
  f(o);
  Py_DECREF(tp);
}

static int sse_collect(void *arg, mcpp_sse_kind kind, const char *data,
                       size_t len) {
  PyObject *out = arg;
  PyObject *v = kind == MCPP_SSE_DATA
                    ? PyBytes_FromStringAndSize(data, (Py_ssize_t)len)
                    : Py_NewRef(Py_None);
  if (v == NULL) return 1;
  int rc = PyList_Append(out, v);
  Py_DECREF(v);
  return rc < 0;
}

static PyObject *sse_result(PyObject *out, int rc) {
  if (PyErr_Occurred()) {
    Py_DECREF(out);
    return NULL;
  }
  if (rc < 0) {
    Py_DECREF(out);
    PyErr_SetString(PyExc_ValueError, mcpp_strerror(rc));
    return NULL;
  }
  return out;
}

static PyObject *Sse_feed(PyObject *o, PyObject *arg) {
  char *buf;
  Py_ssize_t n;
  if (PyBytes_AsStringAndSize(arg, &buf, &n) < 0) return NULL;
  PyObject *out = PyList_New(0);
  if (out == NULL) return NULL;
  int rc = mcpp_sse_feed(((SseObject *)o)->sse, buf, (size_t)n, sse_collect, out);
  return sse_result(out, rc);
}

static PyObject *Sse_finish(PyObject *o, PyObject *unused) {
  (void)unused;
  PyObject *out = PyList_New(0);
  if (out == NULL) return NULL;
  int rc = mcpp_sse_finish(((SseObject *)o)->sse, sse_collect, out);
  return sse_result(out, rc);
}

static PyObject *Sse_last_event_id(PyObject *o, void *unused) {
  (void)unused;
  const char *id = mcpp_sse_last_event_id(((SseObject *)o)->sse);
  return PyUnicode_DecodeUTF8(id, (Py_ssize_t)strlen(id), "replace");
}

/* answer_after(broken, wait_ms) -> (step, wait_ms): C's rule once a
 * request's answer stream is over without the answer (mcpp_http_answer_after). */
static PyObject *Sse_answer_after(PyObject *o, PyObject *args) {
  int broken;
  unsigned int wait_ms;
  if (!PyArg_ParseTuple(args, "pI", &broken, &wait_ms)) return NULL;
  uint32_t wait = wait_ms;
  mcpp_http_answer_step step = mcpp_http_answer_after(((SseObject *)o)->sse, broken, &wait);
  return Py_BuildValue("(sI)", mcpp_http_answer_step_name(step), (unsigned int)wait);
}

/* listen_after(opened, status, body, wait_ms) -> (step, wait_ms): C's rule
 * for this listening stream once it is over (mcpp_http_listen_after). */
static PyObject *Sse_listen_after(PyObject *o, PyObject *args) {
  int opened, status;
  unsigned int wait_ms;
  mcpping_bytes body = {0};
  if (!PyArg_ParseTuple(args, "piO&I", &opened, &status, mcpping_bytes_conv, &body, &wait_ms))
    return NULL;
  uint32_t wait = wait_ms;
  mcpp_http_listen_step step = mcpp_http_listen_after(((SseObject *)o)->sse, opened, status,
                                                      body.buf, (size_t)body.len, &wait);
  mcpping_bytes_release(&body);
  return Py_BuildValue("(sI)", mcpp_http_listen_step_name(step), (unsigned int)wait);
}

static PyGetSetDef Sse_getset[] = {
    {"last_event_id", Sse_last_event_id, NULL,
     "The stream's last event ID ('' before any): its Last-Event-ID.", NULL},
    {NULL, NULL, NULL, NULL, NULL}};

static PyMethodDef Sse_methods[] = {
    {"listen_after", Sse_listen_after, METH_VARARGS,
     "listen_after(opened, status, body, wait_ms) -> (step, wait_ms): after this GET "
     "listening stream is over, 'again' (after wait_ms), 'never' or 'expired'."},
    {"answer_after", Sse_answer_after, METH_VARARGS,
     "answer_after(broken, wait_ms) -> (step, wait_ms): after the stream ended (broken: "
     "not as HTTP ends a body) without its request's answer, 'resume' (Last-Event-ID, "
     "after wait_ms, from the last wait), 'wait' (the request keeps its deadline) or "
     "'lost' (the engine answers it in doubt now)."},
    {"feed", Sse_feed, METH_O,
     "feed(bytes) -> list: each event's data (bytes), None per comment."},
    {"finish", Sse_finish, METH_NOARGS,
     "finish() -> list: the stream ended; an unfinished event is delivered."},
    {NULL, NULL, 0, NULL}};

static PyType_Slot Sse_slots[] = {
    {Py_tp_new, Sse_new},
    {Py_tp_dealloc, Sse_dealloc},
    {Py_tp_methods, Sse_methods},
    {Py_tp_getset, Sse_getset},
    {Py_tp_doc, (void *)"SseParser(max=0): the C core's SSE parser."},
    {0, NULL}};

static PyType_Spec Sse_spec = {
    .name = "mcpping._native.SseParser",
    .basicsize = sizeof(SseObject),
    .flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_IMMUTABLETYPE,
    .slots = Sse_slots,
};

/* HttpRenewal(): a Streamable HTTP session's renewal (mcpp_http_renewal):
 * which session end starts the handshake again, what waits for the new
 * session, which pings are sent again on it, once. */
typedef struct {
  PyObject_HEAD
  mcpp_http_renewal *renewal;
} RenewalObject;

static PyObject *Renewal_new(PyTypeObject *type, PyObject *args, PyObject *kw) {
  static char *kwlist[] = {NULL};
  if (!PyArg_ParseTupleAndKeywords(args, kw, "", kwlist)) return NULL;
  allocfunc alloc = (allocfunc)PyType_GetSlot(type, Py_tp_alloc);
  RenewalObject *self = (RenewalObject *)alloc(type, 0);
  if (self == NULL) return NULL;
  self->renewal = mcpp_http_renewal_new();
  if (self->renewal == NULL) {
    Py_DECREF(self);
    return PyErr_NoMemory();
  }
  return (PyObject *)self;
}

static void Renewal_dealloc(PyObject *o) {
  PyTypeObject *tp = Py_TYPE(o);
  mcpp_http_renewal_free(((RenewalObject *)o)->renewal);
  freefunc f = (freefunc)PyType_GetSlot(tp, Py_tp_free);
  f(o);
  Py_DECREF(tp);
}

static PyObject *Renewal_expired(PyObject *o, PyObject *args) {
  int on_current;
  mcpping_bytes frame = {0};
  if (!PyArg_ParseTuple(args, "pO&", &on_current, mcpping_bytes_conv, &frame)) return NULL;
  int step = mcpp_http_renewal_expired(((RenewalObject *)o)->renewal, on_current,
                                       frame.len ? frame.buf : NULL, (size_t)frame.len);
  mcpping_bytes_release(&frame);
  return Py_BuildValue("(NN)", PyBool_FromLong(step & MCPP_HTTP_RENEW),
                       PyBool_FromLong(step & MCPP_HTTP_SEND_AGAIN));
}

static PyObject *Renewal_holds(PyObject *o, PyObject *arg) {
  char *buf;
  Py_ssize_t n;
  if (PyBytes_AsStringAndSize(arg, &buf, &n) < 0) return NULL;
  return PyBool_FromLong(mcpp_http_renewal_holds(((RenewalObject *)o)->renewal, buf, (size_t)n));
}

static PyObject *Renewal_done(PyObject *o, PyObject *arg) {
  int opened = PyObject_IsTrue(arg);
  if (opened < 0) return NULL;
  mcpp_http_renewal_done(((RenewalObject *)o)->renewal, opened);
  Py_RETURN_NONE;
}

static PyMethodDef Renewal_methods[] = {
    {"expired", Renewal_expired, METH_VARARGS,
     "expired(on_current_session, frame) -> (renew, send_again): a session's end met frame "
     "(b'': the listening stream or a resumed answer); renew: run the handshake again now; "
     "send_again: post the frame again (it waits), else answer it."},
    {"holds", Renewal_holds, METH_O,
     "holds(frame) -> bool: the frame waits for the new session (keep it, in order)."},
    {"done", Renewal_done, METH_O,
     "done(opened): the handshake ran again; send what waited if it opened."},
    {NULL, NULL, 0, NULL}};

static PyType_Slot Renewal_slots[] = {
    {Py_tp_new, Renewal_new},
    {Py_tp_dealloc, Renewal_dealloc},
    {Py_tp_methods, Renewal_methods},
    {Py_tp_doc, (void *)"HttpRenewal(): a Streamable HTTP session's renewal (C's rules)."},
    {0, NULL}};

static PyType_Spec Renewal_spec = {
    .name = "mcpping._native.HttpRenewal",
    .basicsize = sizeof(RenewalObject),
    .flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_IMMUTABLETYPE,
    .slots = Renewal_slots,
};

/* envelope(bytes) -> bytes: the request with the 2026-07-28 _meta. */
static PyObject *envelope(PyObject *module, PyObject *arg) {
  (void)module;
  char *buf;
  Py_ssize_t n;
  if (PyBytes_AsStringAndSize(arg, &buf, &n) < 0) return NULL;
  size_t out_len = 0;
  char *out = mcpp_client_envelope(buf, (size_t)n, &out_len);
  if (out == NULL) {
    Py_INCREF(arg);
    return arg;  /* no request object: sent as it is */
  }
  PyObject *r = PyBytes_FromStringAndSize(out, (Py_ssize_t)out_len);
  free(out);
  return r;
}

static PyMethodDef client_functions[] = {
    {"envelope", envelope, METH_O,
     "envelope(request: bytes) -> bytes: with the 2026-07-28 _meta."},
    {NULL, NULL, 0, NULL}};

static int add_type(PyObject *module, PyType_Spec *spec) {
  PyObject *t = PyType_FromModuleAndSpec(module, spec, NULL);
  if (t == NULL) return -1;
  int rc = PyModule_AddType(module, (PyTypeObject *)t);
  Py_DECREF(t);
  return rc;
}

int mcpping_client_add(PyObject *module) {
  if (add_type(module, &Handshake_spec) < 0) return -1;
  if (add_type(module, &Sse_spec) < 0) return -1;
  if (add_type(module, &Renewal_spec) < 0) return -1;
  if (PyModule_AddStringConstant(module, "PROTOCOL_VERSION", MCPP_PROTOCOL_VERSION) < 0 ||
      PyModule_AddStringConstant(module, "MODERN_PROTOCOL_VERSION",
                                 MCPP_MODERN_PROTOCOL_VERSION) < 0)
    return -1;
  return PyModule_AddFunctions(module, client_functions);
}
