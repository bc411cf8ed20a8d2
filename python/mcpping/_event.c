/* mcpping._native.NativeEvent: one runtime event as the host drains it.
 *
 * The drain used to build a 19-key dict for every event, twice per ping
 * (PING and PONG), and RttStats.observe parsed it back into an mcpp_event.
 * A NativeEvent keeps the mcpp_event itself: the hot path reads name,
 * state, outcome and rtt_us (interned names, no dict), RttStats.observe
 * takes it as is, and the dict is built only when an Event is wanted
 * (a listener, an iterator, the metrics tap). */

#include "_native.h"

#include <string.h>

typedef struct {
  PyObject_HEAD
  mcpp_event ev; /* its strings point into text */
  char *text;    /* "message\0id\0proof\0", owned */
  PyObject *dict; /* built on first dict() */
} NativeEventObject;

static PyTypeObject *event_type;

/* Interned names: a str compare on the hot path is then an identity. */
#define N_EVENT_NAMES 64
#define N_STATE_NAMES 8
#define N_OUTCOMES 8
static PyObject *event_names[N_EVENT_NAMES];
static PyObject *state_names[N_STATE_NAMES];
static PyObject *outcome_names[N_OUTCOMES];

static PyObject *interned(PyObject **cache, int n, int i, const char *s) {
  if (s == NULL) Py_RETURN_NONE;
  if (i < 0 || i >= n) return PyUnicode_FromString(s);
  if (cache[i] == NULL && (cache[i] = PyUnicode_InternFromString(s)) == NULL)
    return NULL;
  Py_INCREF(cache[i]);
  return cache[i];
}

PyObject *mcpping_native_event_new(const mcpp_event *ev) {
  size_t mlen = ev->message ? strlen(ev->message) : 0;
  size_t ilen = ev->id ? ev->id_len : 0;
  size_t plen = ev->proof ? strlen(ev->proof) : 0;
  NativeEventObject *self = (NativeEventObject *)((allocfunc)PyType_GetSlot(
      event_type, Py_tp_alloc))(event_type, 0);
  if (self == NULL) return NULL;
  self->dict = NULL;
  self->text = PyMem_Malloc(mlen + ilen + plen + 3);
  if (self->text == NULL) {
    Py_DECREF(self);
    return PyErr_NoMemory();
  }
  self->ev = *ev;
  char *p = self->text;
  if (ev->message) memcpy(p, ev->message, mlen);
  p[mlen] = '\0';
  self->ev.message = ev->message ? p : NULL;
  p += mlen + 1;
  if (ev->id) memcpy(p, ev->id, ilen);
  p[ilen] = '\0';
  self->ev.id = ev->id ? p : NULL;
  p += ilen + 1;
  if (ev->proof) memcpy(p, ev->proof, plen);
  p[plen] = '\0';
  self->ev.proof = ev->proof ? p : NULL;
  return (PyObject *)self;
}

int mcpping_native_event_get(PyObject *o, mcpp_event *ev) {
  if (event_type == NULL || !PyObject_TypeCheck(o, event_type)) return 0;
  *ev = ((NativeEventObject *)o)->ev;
  return 1;
}

static void NativeEvent_dealloc(NativeEventObject *self) {
  PyTypeObject *tp = Py_TYPE(self);
  PyMem_Free(self->text);
  Py_XDECREF(self->dict);
  ((freefunc)PyType_GetSlot(tp, Py_tp_free))(self);
  Py_DECREF(tp);
}

static PyObject *NativeEvent_name(NativeEventObject *self, void *closure) {
  return interned(event_names, N_EVENT_NAMES, (int)self->ev.type,
                  mcpp_event_name(self->ev.type));
}

static PyObject *NativeEvent_state(NativeEventObject *self, void *closure) {
  return interned(state_names, N_STATE_NAMES, (int)self->ev.state,
                  mcpp_state_name(self->ev.state));
}

static PyObject *NativeEvent_outcome(NativeEventObject *self, void *closure) {
  mcpp_ping_outcome o = mcpp_event_outcome(&self->ev);
  return interned(outcome_names, N_OUTCOMES, (int)o, mcpp_outcome_name(o));
}

static PyObject *NativeEvent_rtt_us(NativeEventObject *self, void *closure) {
  return PyLong_FromUnsignedLongLong(self->ev.rtt_us);
}

static PyObject *NativeEvent_dict(NativeEventObject *self,
                                  PyObject *Py_UNUSED(ignored)) {
  if (self->dict == NULL && (self->dict = mcpping_event_to_dict(&self->ev)) == NULL)
    return NULL;
  Py_INCREF(self->dict);
  return self->dict;
}

static PyGetSetDef NativeEvent_getset[] = {
    {"name", (getter)NativeEvent_name, NULL, "The event's name (interned).", NULL},
    {"state", (getter)NativeEvent_state, NULL, "The state after it (interned).", NULL},
    {"outcome", (getter)NativeEvent_outcome, NULL,
     "A ping's outcome as the C core decides it (pong, timeout, ...), or None.", NULL},
    {"rtt_us", (getter)NativeEvent_rtt_us, NULL, "PONG: the RTT in µs.", NULL},
    {NULL}};

static PyMethodDef NativeEvent_methods[] = {
    {"dict", (PyCFunction)NativeEvent_dict, METH_NOARGS,
     "dict() -> dict\n\nThe event as Engine callbacks give it (built once)."},
    {NULL}};

static PyType_Slot NativeEvent_slots[] = {
    {Py_tp_dealloc, NativeEvent_dealloc},
    {Py_tp_getset, NativeEvent_getset},
    {Py_tp_methods, NativeEvent_methods},
    {Py_tp_doc, "One event the runtime queued (see drain()); dict() builds "
                "the full dict on demand."},
    {0, NULL}};

static PyType_Spec NativeEvent_spec = {
    .name = "mcpping._native.NativeEvent",
    .basicsize = sizeof(NativeEventObject),
    .flags = Py_TPFLAGS_DEFAULT,
    .slots = NativeEvent_slots,
};

int mcpping_event_add_type(PyObject *module) {
  PyObject *t = PyType_FromSpec(&NativeEvent_spec);
  if (t == NULL) return -1;
  /* One module per process: the type outlives it (kept for the check). */
  Py_XDECREF(event_type);
  event_type = (PyTypeObject *)t;
  Py_INCREF(t);
  if (PyModule_AddObject(module, "NativeEvent", t) < 0) {
    Py_DECREF(t);
    return -1;
  }
  return 0;
}
