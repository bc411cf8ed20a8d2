/*
 * The client protocol rules of the C core, for Python: the handshake
 * machine (mcpping._native.ClientHandshake), the Streamable HTTP client
 * session (HttpSession) and the 2026-07-28 request envelope. Python
 * carries the bytes and keeps the clock; every rule and sentence is C's.
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

/* HttpSession(url, headers, max_body, listen): the sans-I/O Streamable HTTP
 * client session (mcpp_http_session). Each input returns what to do next
 * as a list of dicts (the "do" key names the action); Python does the I/O
 * and keeps the timers. */
typedef struct {
  PyObject_HEAD
  mcpp_http_session *session;
} HttpSessionObject;

static PyObject *HttpSession_new(PyTypeObject *type, PyObject *args, PyObject *kw) {
  static char *kwlist[] = {"url", "headers", "max_body", "listen", NULL};
  const char *url;
  Py_ssize_t url_len;
  PyObject *headers;
  Py_ssize_t max_body;
  int listen;
  if (!PyArg_ParseTupleAndKeywords(args, kw, "s#Onp", kwlist, &url, &url_len, &headers,
                                   &max_body, &listen))
    return NULL;
  if (max_body < 0) {
    PyErr_SetString(PyExc_ValueError, "max_body must be >= 0");
    return NULL;
  }
  /* The items keep the UTF-8 of each name and value alive until C copied them. */
  PyObject *items = PyMapping_Check(headers) ? PyMapping_Items(headers) : NULL;
  if (items == NULL) {
    /* A sequence passes PyMapping_Check but has no items(). */
    if (!PyErr_Occurred() || PyErr_ExceptionMatches(PyExc_AttributeError)) {
      PyErr_Clear();
      PyErr_SetString(PyExc_TypeError, "headers must be a mapping of str to str");
    }
    return NULL;
  }
  Py_ssize_t n = PyList_Size(items);
  mcpp_http_header *extra = PyMem_Calloc((size_t)n + 1, sizeof *extra);
  PyObject *self = NULL;
  if (extra == NULL) {
    PyErr_NoMemory();
    goto done;
  }
  for (Py_ssize_t i = 0; i < n; i++) {
    PyObject *item = PyList_GetItem(items, i);
    PyObject *k = item && PyTuple_Check(item) && PyTuple_Size(item) == 2 ? PyTuple_GetItem(item, 0) : NULL;
    PyObject *v = k ? PyTuple_GetItem(item, 1) : NULL;
    if (v == NULL || !PyUnicode_Check(k) || !PyUnicode_Check(v)) {
      PyErr_Clear();
      PyErr_SetString(PyExc_TypeError, "headers must map str to str");
      goto done;
    }
    Py_ssize_t kn, vn;
    if ((extra[i].name = PyUnicode_AsUTF8AndSize(k, &kn)) == NULL ||
        (extra[i].value = PyUnicode_AsUTF8AndSize(v, &vn)) == NULL)
      goto done;
    if (strlen(extra[i].name) != (size_t)kn || strlen(extra[i].value) != (size_t)vn) {
      PyErr_Format(PyExc_ValueError, "headers: %R has a NUL character", k);
      goto done;
    }
  }
  allocfunc alloc = (allocfunc)PyType_GetSlot(type, Py_tp_alloc);
  self = alloc(type, 0);
  if (self == NULL) goto done;
  const char *problem = NULL;
  mcpp_http_session *session = mcpp_http_session_new(url, (size_t)url_len, extra, (size_t)n,
                                                     (size_t)max_body, listen, &problem);
  if (session == NULL) {
    Py_CLEAR(self);
    if (problem == NULL || strcmp(problem, "out of memory") == 0)
      PyErr_NoMemory();
    else
      PyErr_SetString(PyExc_ValueError, problem);
    goto done;
  }
  ((HttpSessionObject *)self)->session = session;
done:
  PyMem_Free(extra);
  Py_DECREF(items);
  return self;
}

static void HttpSession_dealloc(PyObject *o) {
  PyTypeObject *tp = Py_TYPE(o);
  if (((HttpSessionObject *)o)->session != NULL)
    mcpp_http_session_free(((HttpSessionObject *)o)->session);
  freefunc f = (freefunc)PyType_GetSlot(tp, Py_tp_free);
  f(o);
  Py_DECREF(tp);
}

static PyObject *text_or_none(const char *s, size_t len) {
  if (s == NULL) Py_RETURN_NONE;
  return PyUnicode_DecodeUTF8(s, (Py_ssize_t)len, "replace");
}

static PyObject *bytes_or_none(const char *s, size_t len) {
  if (s == NULL) Py_RETURN_NONE;
  return PyBytes_FromStringAndSize(s, (Py_ssize_t)len);
}

/* [(name, value), ...] of a START's headers. */
static PyObject *do_headers(const mcpp_http_do *d) {
  PyObject *list = PyList_New((Py_ssize_t)d->n_headers);
  if (list == NULL) return NULL;
  for (size_t i = 0; i < d->n_headers; i++) {
    const mcpp_http_header *h = &d->headers[i];
    PyObject *pair = Py_BuildValue("(NN)", text_or_none(h->name, strlen(h->name)),
                                   text_or_none(h->value, strlen(h->value)));
    if (pair == NULL) {
      Py_DECREF(list);
      return NULL;
    }
    PyList_SetItem(list, (Py_ssize_t)i, pair); /* steals pair */
  }
  return list;
}

/* The START's request as it goes on the wire (head and body). */
static PyObject *request_bytes(const mcpp_http_do *d) {
  size_t n = mcpp_http_request_bytes(d, NULL, 0);
  PyObject *b = PyBytes_FromStringAndSize(NULL, (Py_ssize_t)n);
  if (b != NULL) mcpp_http_request_bytes(d, PyBytes_AsString(b), n);
  return b;
}

/* One action as the dict the docstring of HttpSession names. */
static PyObject *do_dict(const mcpp_http_do *d) {
  PyObject *r = PyDict_New();
  if (r == NULL) return NULL;
  PyObject *v;
#define SET(key, expr)                                           \
  if ((v = (expr)) == NULL || PyDict_SetItemString(r, key, v) < 0) { \
    Py_XDECREF(v);                                               \
    Py_DECREF(r);                                                \
    return NULL;                                                 \
  }                                                              \
  Py_DECREF(v)
  SET("do", PyUnicode_FromString(mcpp_http_do_name(d->kind)));
  switch (d->kind) {
    case MCPP_HTTP_DO_START:
      SET("exchange", PyLong_FromUnsignedLongLong(d->exchange));
      SET("tag", PyLong_FromUnsignedLongLong(d->tag));
      SET("method", PyUnicode_FromString(mcpp_http_method_name((mcpp_http_method)d->method)));
      SET("https", PyBool_FromLong(d->https));
      SET("host", text_or_none(d->host, strlen(d->host)));
      SET("port", PyLong_FromUnsignedLong(d->port));
      SET("target", text_or_none(d->target, strlen(d->target)));
      SET("headers", do_headers(d));
      SET("body", bytes_or_none(d->data, d->len));
      SET("request", request_bytes(d));
      SET("connect_timeout_ms", PyLong_FromUnsignedLong(d->connect_timeout_ms));
      SET("headers_timeout_ms", PyLong_FromUnsignedLong(d->headers_timeout_ms));
      break;
    case MCPP_HTTP_DO_CUT:
      SET("exchange", PyLong_FromUnsignedLongLong(d->exchange));
      break;
    case MCPP_HTTP_DO_RECEIVE:
      SET("data", PyBytes_FromStringAndSize(d->data ? d->data : "", (Py_ssize_t)d->len));
      break;
    case MCPP_HTTP_DO_LOST:
      SET("tag", PyLong_FromUnsignedLongLong(d->tag));
      break;
    case MCPP_HTTP_DO_SESSION:
      SET("id", text_or_none(d->data, d->len));
      break;
    case MCPP_HTTP_DO_GONE:
      SET("exchange", PyLong_FromUnsignedLongLong(d->exchange));
      SET("reason", PyUnicode_DecodeUTF8(d->data ? d->data : "", (Py_ssize_t)d->len, "replace"));
      break;
    case MCPP_HTTP_DO_LISTENING:
      SET("value", PyBool_FromLong(d->value));
      break;
    case MCPP_HTTP_DO_WAIT:
      SET("wait", PyLong_FromUnsignedLongLong(d->wait));
      SET("ms", PyLong_FromUnsignedLong(d->ms));
      break;
    default: /* TOUCH, RENEW, CLOSED: the name says it all */
      break;
  }
#undef SET
  return r;
}

/* The list of what to do after an input returned rc. An action that could
 * not be made a dict (no memory) is lost; those after it stay queued. */
static PyObject *HttpSession_drain(PyObject *o, int rc) {
  if (rc == MCPP_ERR_NOMEM) return PyErr_NoMemory();
  if (rc < 0) {
    PyErr_SetString(PyExc_RuntimeError, mcpp_strerror(rc));
    return NULL;
  }
  mcpp_http_session *session = ((HttpSessionObject *)o)->session;
  PyObject *out = PyList_New(0);
  if (out == NULL) return NULL;
  mcpp_http_do d;
  while (mcpp_http_session_next(session, &d)) {
    PyObject *item = do_dict(&d);
    if (item == NULL || PyList_Append(out, item) < 0) {
      Py_XDECREF(item);
      Py_DECREF(out);
      return NULL;
    }
    Py_DECREF(item);
  }
  return out;
}

#define SESSION(o) (((HttpSessionObject *)(o))->session)

static PyObject *HttpSession_post(PyObject *o, PyObject *args) {
  mcpping_bytes frame = {0};
  unsigned long long tag;
  int direct;
  if (!PyArg_ParseTuple(args, "O&Kp", mcpping_bytes_conv, &frame, &tag, &direct)) return NULL;
  int rc = mcpp_http_session_post(SESSION(o), frame.buf, (size_t)frame.len, tag, direct);
  mcpping_bytes_release(&frame);
  return HttpSession_drain(o, rc);
}

static PyObject *HttpSession_settled(PyObject *o, PyObject *arg) {
  unsigned long long tag = PyLong_AsUnsignedLongLong(arg);
  if (tag == (unsigned long long)-1 && PyErr_Occurred()) return NULL;
  return HttpSession_drain(o, mcpp_http_session_settled(SESSION(o), tag));
}

static PyObject *HttpSession_response(PyObject *o, PyObject *args) {
  unsigned long long exchange;
  int status;
  const char *content_type, *session_id, *location;
  if (!PyArg_ParseTuple(args, "Kizzz", &exchange, &status, &content_type, &session_id, &location))
    return NULL;
  return HttpSession_drain(o, mcpp_http_session_response(SESSION(o), exchange, status,
                                                          content_type, session_id, location));
}

static PyObject *HttpSession_body(PyObject *o, PyObject *args) {
  unsigned long long exchange;
  mcpping_bytes data = {0};
  if (!PyArg_ParseTuple(args, "KO&", &exchange, mcpping_bytes_conv, &data)) return NULL;
  int rc = mcpp_http_session_body(SESSION(o), exchange, data.buf, (size_t)data.len);
  mcpping_bytes_release(&data);
  return HttpSession_drain(o, rc);
}

static PyObject *HttpSession_end(PyObject *o, PyObject *args) {
  unsigned long long exchange;
  int broken;
  if (!PyArg_ParseTuple(args, "Kp", &exchange, &broken)) return NULL;
  return HttpSession_drain(o, mcpp_http_session_end(SESSION(o), exchange, broken));
}

static PyObject *HttpSession_failed(PyObject *o, PyObject *args) {
  unsigned long long exchange;
  const char *cause;
  if (!PyArg_ParseTuple(args, "Ks", &exchange, &cause)) return NULL;
  return HttpSession_drain(o, mcpp_http_session_failed(SESSION(o), exchange, cause));
}

static PyObject *HttpSession_set_version(PyObject *o, PyObject *args) {
  const char *version;
  if (!PyArg_ParseTuple(args, "z", &version)) return NULL;
  return HttpSession_drain(o, mcpp_http_session_set_version(SESSION(o), version));
}

static PyObject *HttpSession_opened(PyObject *o, PyObject *unused) {
  (void)unused;
  return HttpSession_drain(o, mcpp_http_session_opened(SESSION(o)));
}

static PyObject *HttpSession_renewed(PyObject *o, PyObject *args) {
  int ok;
  const char *why = NULL;
  if (!PyArg_ParseTuple(args, "p|z", &ok, &why)) return NULL;
  return HttpSession_drain(o, mcpp_http_session_renewed(SESSION(o), ok, why));
}

static PyObject *HttpSession_wake(PyObject *o, PyObject *arg) {
  unsigned long long wait = PyLong_AsUnsignedLongLong(arg);
  if (wait == (unsigned long long)-1 && PyErr_Occurred()) return NULL;
  return HttpSession_drain(o, mcpp_http_session_wake(SESSION(o), wait));
}

static PyObject *HttpSession_close(PyObject *o, PyObject *unused) {
  (void)unused;
  return HttpSession_drain(o, mcpp_http_session_close(SESSION(o)));
}

static PyObject *HttpSession_lose(PyObject *o, PyObject *unused) {
  (void)unused;
  return HttpSession_drain(o, mcpp_http_session_lose(SESSION(o)));
}

static PyObject *HttpSession_session_id(PyObject *o, void *unused) {
  (void)unused;
  const char *id = mcpp_http_session_id(SESSION(o));
  return text_or_none(id, id ? strlen(id) : 0);
}

static PyObject *HttpSession_listens(PyObject *o, void *unused) {
  (void)unused;
  return PyBool_FromLong(mcpp_http_session_listens(SESSION(o)));
}

#undef SESSION

static PyGetSetDef HttpSession_getset[] = {
    {"session_id", HttpSession_session_id, NULL,
     "The Mcp-Session-Id the server gave, None if none.", NULL},
    {"listens", HttpSession_listens, NULL,
     "True while the session opens the listening stream when it can; False once "
     "listening is off or the server offers none.", NULL},
    {NULL, NULL, NULL, NULL, NULL}};

static PyMethodDef HttpSession_methods[] = {
    {"post", HttpSession_post, METH_VARARGS,
     "post(frame, tag, direct) -> actions: send frame (tag: the request's, 0: none; direct: "
     "the handshake's own, never held while the session is renewed)."},
    {"settled", HttpSession_settled, METH_O,
     "settled(tag) -> actions: the request is settled; what still reads for it is cut."},
    {"response", HttpSession_response, METH_VARARGS,
     "response(exchange, status, content_type, session_id, location) -> actions: the answer "
     "began (each header None if absent)."},
    {"body", HttpSession_body, METH_VARARGS,
     "body(exchange, data) -> actions: the next bytes of the answer's body."},
    {"end", HttpSession_end, METH_VARARGS,
     "end(exchange, broken) -> actions: the body ended (broken: not as HTTP ends one)."},
    {"failed", HttpSession_failed, METH_VARARGS,
     "failed(exchange, cause) -> actions: no answer came (cause: ECONNREFUSED, ...)."},
    {"set_version", HttpSession_set_version, METH_VARARGS,
     "set_version(version) -> actions: the negotiated protocol version (None: none)."},
    {"opened", HttpSession_opened, METH_NOARGS,
     "opened() -> actions: the handshake succeeded (the listening stream opens)."},
    {"renewed", HttpSession_renewed, METH_VARARGS,
     "renewed(ok, why=None) -> actions: the handshake a 'renew' asked for ended."},
    {"wake", HttpSession_wake, METH_O,
     "wake(wait) -> actions: a 'wait' action's time has come."},
    {"close", HttpSession_close, METH_NOARGS,
     "close() -> actions: cut everything, DELETE the session; 'closed' follows."},
    {"lose", HttpSession_lose, METH_NOARGS,
     "lose() -> actions: the session is over without a DELETE; everything is cut."},
    {NULL, NULL, 0, NULL}};

static PyType_Slot HttpSession_slots[] = {
    {Py_tp_new, HttpSession_new},
    {Py_tp_dealloc, HttpSession_dealloc},
    {Py_tp_methods, HttpSession_methods},
    {Py_tp_getset, HttpSession_getset},
    {Py_tp_doc, (void *)"HttpSession(url, headers, max_body, listen): the C core's sans-I/O "
                        "Streamable HTTP client session; each input returns the actions to do."},
    {0, NULL}};

static PyType_Spec HttpSession_spec = {
    .name = "mcpping._native.HttpSession",
    .basicsize = sizeof(HttpSessionObject),
    .flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_IMMUTABLETYPE,
    .slots = HttpSession_slots,
};

/* ------------------------------------------------------------ HttpResponse */

typedef struct {
  PyObject_HEAD
  mcpp_http_response *r;
} ResponseObject;

static PyObject *Response_new(PyTypeObject *type, PyObject *args, PyObject *kw) {
  if (!PyArg_ParseTuple(args, ":HttpResponse") || (kw != NULL && PyDict_Size(kw) > 0)) {
    if (!PyErr_Occurred()) PyErr_SetString(PyExc_TypeError, "HttpResponse() takes no arguments");
    return NULL;
  }
  allocfunc alloc = (allocfunc)PyType_GetSlot(type, Py_tp_alloc);
  ResponseObject *self = (ResponseObject *)alloc(type, 0);
  if (self == NULL) return NULL;
  if ((self->r = mcpp_http_response_new()) == NULL) {
    Py_DECREF(self);
    return PyErr_NoMemory();
  }
  return (PyObject *)self;
}

static void Response_dealloc(PyObject *o) {
  PyTypeObject *tp = Py_TYPE(o);
  mcpp_http_response_free(((ResponseObject *)o)->r);
  freefunc f = (freefunc)PyType_GetSlot(tp, Py_tp_free);
  f(o);
  Py_DECREF(tp);
}

#define RESPONSE(o) (((ResponseObject *)(o))->r)

static PyObject *Response_headers(PyObject *o, void *unused) {
  (void)unused;
  PyObject *d = PyDict_New();
  for (size_t i = 0; d != NULL && i < mcpp_http_response_header_count(RESPONSE(o)); i++) {
    const char *name, *value;
    mcpp_http_response_header_at(RESPONSE(o), i, &name, &value);
    PyObject *k = PyUnicode_DecodeLatin1(name, (Py_ssize_t)strlen(name), NULL);
    PyObject *v = k ? PyUnicode_DecodeLatin1(value, (Py_ssize_t)strlen(value), NULL) : NULL;
    if (v == NULL || PyDict_SetItem(d, k, v) < 0) Py_CLEAR(d);
    Py_XDECREF(k);
    Py_XDECREF(v);
  }
  return d;
}

/* What one feed() gives: its parts, the body's runs joined into one. */
typedef struct feeding {
  PyObject *self;
  PyObject *out;
  const char *first; /* the body's first run, in what was fed */
  size_t first_len;
  char *joined;      /* the body's runs, once there are two */
  size_t len, cap;
  int failed;
} feeding;

static void add_part(feeding *f, PyObject *part) {
  if (part == NULL || PyList_Append(f->out, part) < 0) f->failed = 1;
  Py_XDECREF(part);
}

static void flush_body(feeding *f) {
  if (f->first != NULL) add_part(f, Py_BuildValue("(sy#)", "body", f->first, (Py_ssize_t)f->first_len));
  else if (f->len) add_part(f, Py_BuildValue("(sy#)", "body", f->joined, (Py_ssize_t)f->len));
  f->first = NULL;
  f->len = 0;
}

static void join_body(feeding *f, const char *data, size_t len) {
  if (f->first == NULL && f->len == 0) {
    f->first = data;
    f->first_len = len;
    return;
  }
  size_t need = f->len + (f->first ? f->first_len : 0) + len;
  if (need > f->cap) {
    char *grown = PyMem_Realloc(f->joined, need * 2);
    if (grown == NULL) {
      f->failed = 1;
      return;
    }
    f->joined = grown;
    f->cap = need * 2;
  }
  if (f->first != NULL) {
    memcpy(f->joined, f->first, f->first_len);
    f->len = f->first_len;
    f->first = NULL;
  }
  memcpy(f->joined + f->len, data, len);
  f->len += len;
}

static void on_part(void *arg, mcpp_http_part part, const char *data, size_t len) {
  feeding *f = arg;
  if (f->failed) return;
  if (part == MCPP_HTTP_PART_BODY) {
    join_body(f, data, len);
    return;
  }
  flush_body(f);
  if (part == MCPP_HTTP_PART_HEAD)
    add_part(f, Py_BuildValue("(siN)", "head", mcpp_http_response_status(RESPONSE(f->self)),
                              Response_headers(f->self, NULL)));
  else
    add_part(f, Py_BuildValue("(s)", "end"));
}

static PyObject *Response_feed(PyObject *o, PyObject *arg) {
  mcpping_bytes data = {0};
  if (!mcpping_bytes_conv(arg, &data)) return NULL;
  feeding f = {o, PyList_New(0), NULL, 0, NULL, 0, 0, 0};
  int rc = f.out ? mcpp_http_response_feed(RESPONSE(o), data.buf, (size_t)data.len, on_part, &f) : 0;
  if (f.out != NULL && !f.failed) flush_body(&f);
  mcpping_bytes_release(&data);
  PyMem_Free(f.joined);
  if (f.out == NULL || f.failed || rc != 0) {
    Py_XDECREF(f.out);
    if (rc == MCPP_ERR_NOT_HTTP) {
      mcpping_state *st = PyType_GetModuleState(Py_TYPE(o));
      PyErr_SetString(st->not_http, mcpp_http_response_problem(RESPONSE(o)));
    } else if (rc == MCPP_ERR_NOMEM || !PyErr_Occurred()) {
      PyErr_NoMemory();
    }
    return NULL;
  }
  return f.out;
}

static PyObject *Response_closed(PyObject *o, PyObject *unused) {
  (void)unused;
  return PyBool_FromLong(mcpp_http_response_closed(RESPONSE(o)));
}

/* The flags, each a getter (a getset closure cannot carry a function). */
#define FLAG(name)                                                       \
  static PyObject *Response_##name(PyObject *o, void *unused) {          \
    (void)unused;                                                        \
    return PyBool_FromLong(mcpp_http_response_##name(RESPONSE(o)));      \
  }
FLAG(started)
FLAG(ended)
FLAG(keep_alive)
FLAG(until_close)
#undef FLAG

static PyObject *Response_status(PyObject *o, void *unused) {
  (void)unused;
  return PyLong_FromLong(mcpp_http_response_status(RESPONSE(o)));
}

#undef RESPONSE

static PyGetSetDef Response_getset[] = {
    {"started", Response_started, NULL, "Whether the head was read.", NULL},
    {"ended", Response_ended, NULL, "Whether the answer ended.", NULL},
    {"keep_alive", Response_keep_alive, NULL,
     "Whether the connection may carry the next request once the answer ends.", NULL},
    {"until_close", Response_until_close, NULL,
     "Whether the body ends only when the server closes.", NULL},
    {"status", Response_status, NULL, "The status, once the head was read (else 0).", NULL},
    {"headers", Response_headers, NULL,
     "The headers, once the head was read: lower-case names, repeated ones joined.", NULL},
    {NULL, NULL, NULL, NULL, NULL}};

static PyMethodDef Response_methods[] = {
    {"feed", Response_feed, METH_O,
     "feed(data) -> parts, in order: ('head', status, headers), ('body', bytes), ('end',). "
     "Raises NotHttp on what no HTTP server sends."},
    {"closed", Response_closed, METH_NOARGS,
     "closed() -> bool: the server closed; whether that ended the answer whole."},
    {NULL, NULL, 0, NULL}};

static PyType_Slot Response_slots[] = {
    {Py_tp_new, Response_new},
    {Py_tp_dealloc, Response_dealloc},
    {Py_tp_methods, Response_methods},
    {Py_tp_getset, Response_getset},
    {Py_tp_doc, (void *)"HttpResponse(): one HTTP/1.1 response, parsed as its bytes come "
                        "(the C core's sans-I/O parser, mcpping/http_response.h)."},
    {0, NULL}};

static PyType_Spec Response_spec = {
    .name = "mcpping._native.HttpResponse",
    .basicsize = sizeof(ResponseObject),
    .flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_IMMUTABLETYPE,
    .slots = Response_slots,
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
  if (add_type(module, &HttpSession_spec) < 0) return -1;
  if (add_type(module, &Response_spec) < 0) return -1;
  mcpping_state *st = mcpping_get_state(module);
  st->not_http = PyErr_NewExceptionWithDoc("mcpping._native.NotHttp",
                                           "What the server sent is no HTTP/1.1 response.", NULL,
                                           NULL);
  if (st->not_http == NULL || PyModule_AddObjectRef(module, "NotHttp", st->not_http) < 0)
    return -1;
  if (PyModule_AddStringConstant(module, "PROTOCOL_VERSION", MCPP_PROTOCOL_VERSION) < 0 ||
      PyModule_AddStringConstant(module, "MODERN_PROTOCOL_VERSION",
                                 MCPP_MODERN_PROTOCOL_VERSION) < 0)
    return -1;
  return PyModule_AddFunctions(module, client_functions);
}
