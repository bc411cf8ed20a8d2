/*
 * mcpping._native: the module object and its binding of mcpp_runtime, the
 * process-wide native I/O thread that spawns MCP servers, answers and times
 * pings in C, and queues what the host must see.
 *
 * The I/O thread never touches Python: its notify callback only writes one
 * byte to a non-blocking pipe whose read end the asyncio side watches with
 * loop.add_reader. That keeps the thread out of the GIL (no stall while
 * Python is busy, no crash or hang at interpreter shutdown) and batches
 * wake-ups: the runtime notifies once per empty -> non-empty transition and
 * the host drains every queued item per wake.
 *
 * In host mode (issue 21; docs/python.md) the asyncio loop's own thread
 * runs the runtime's loop: _runtime.py watches its descriptor and calls
 * host_turn, commands run inline, and after each one host_after makes sure
 * the loop turns again in time; the I/O thread only watches, and takes
 * over (then wakes the host through the same pipe) while the loop stalls.
 */
#include "_native.h"

#include <errno.h>
#include <fcntl.h>
#include <time.h>
#include <unistd.h>

/* Item kinds as seen by Python (the second field of each drained tuple). */
enum {
  K_MESSAGE = 0,
  K_EVENT,
  K_RECORD,
  K_STDERR,
  K_CLOSED,
  K_PING_FAILED,
  K_WRITABLE
};

/* ------------------------------------------------------------ wake pipe */

static int make_pipe(mcpping_wake *w) {
  int fds[2];
  if (pipe(fds) != 0) return -1;
  for (int i = 0; i < 2; i++) {
    fcntl(fds[i], F_SETFL, fcntl(fds[i], F_GETFL) | O_NONBLOCK);
    fcntl(fds[i], F_SETFD, FD_CLOEXEC);
  }
  w->rfd = fds[0];
  w->wfd = fds[1];
  return 0;
}

/* Runs on the I/O thread, without the GIL. A full pipe already means
 * "wake pending", so EAGAIN is fine. */
static void notify_cb(void *user_data) {
  mcpping_wake *w = user_data;
  int saved = errno;
  ssize_t n;
  do {
    n = write(w->wfd, "!", 1);
  } while (n < 0 && errno == EINTR);
  errno = saved;
}

/* Empties the pipe so the next transition wakes the reader again. */
static void clear_pipe(mcpping_wake *w) {
  char buf[256];
  for (;;) {
    ssize_t n = read(w->rfd, buf, sizeof buf);
    if (n > 0) continue;
    if (n < 0 && errno == EINTR) continue;
    break;
  }
}

/* Creates the runtime on first use. Returns 0 or -1 with an exception. */
static int ensure_runtime(mcpping_state *st) {
  if (st->rt != NULL) return 0;
  mcpping_wake *w = malloc(sizeof *w);
  if (w == NULL) {
    PyErr_NoMemory();
    return -1;
  }
  if (make_pipe(w) != 0) {
    free(w);
    PyErr_SetFromErrno(PyExc_OSError);
    return -1;
  }
  mcpp_runtime_options opts = {.notify = notify_cb, .user_data = w};
  int rc = mcpp_runtime_new(&st->rt, &opts);
  if (rc != 0) {
    close(w->rfd);
    close(w->wfd);
    free(w);
    st->rt = NULL;
    mcpping_raise(st, rc, NULL);
    return -1;
  }
  st->wake = w;
  if (st->budget_burst)
    mcpp_runtime_set_retry_budget(st->rt, st->budget_burst,
                                  st->budget_per_second);
  return 0;
}

/* Frees the runtime (kills and reaps every server, joins the thread). */
static void free_runtime(mcpping_state *st, int release_gil) {
  mcpp_runtime *rt = st->rt;
  mcpping_wake *w = st->wake;
  st->rt = NULL;
  st->wake = NULL;
  st->hosted = 0;
  st->armed_due = UINT64_MAX;
  if (rt != NULL) {
    if (release_gil) {
      Py_BEGIN_ALLOW_THREADS mcpp_runtime_free(rt);
      Py_END_ALLOW_THREADS
    } else {
      mcpp_runtime_free(rt);
    }
  }
  if (w != NULL) {
    close(w->rfd);
    close(w->wfd);
    free(w);
  }
}

/* ------------------------------------------------------------ host mode */

static uint64_t mono_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u;
}

/* Makes sure the host's loop calls host_turn within ms (0: soon). Calls
 * Python (_runtime._arm) only if that is sooner than the turn it armed
 * last: one armed turn at a time, so most commands cost no Python call.
 * _arm returns whether it armed; an exception it raises is reported as
 * unraisable, never lost into the caller's result. GIL held. */
static void host_arm(mcpping_state *st, int64_t ms) {
  uint64_t now = mono_ms(), due = now + (uint64_t)ms;
  /* An armed turn overdue has been lost (cancelled, its loop stopped) or
   * is late (a busy loop): arming again is harmless, trusting it is not. */
  if ((due >= st->armed_due && now <= st->armed_due) || st->arm == NULL)
    return;
  PyObject *type, *value, *tb;
  PyErr_Fetch(&type, &value, &tb);
  PyObject *r = PyObject_CallFunction(st->arm, "L", (long long)ms);
  if (r == NULL) {
    PyErr_WriteUnraisable(st->arm);
  } else {
    if (PyObject_IsTrue(r) == 1) st->armed_due = due;
    Py_DECREF(r);
  }
  PyErr_Restore(type, value, tb);
}

/* After every runtime call made on the host thread: the command ran
 * inline and may have set an earlier timer or queued items. In thread
 * mode, or off the host thread, it costs one branch. GIL held. */
static inline void host_after(mcpping_state *st) {
  if (!st->hosted || st->rt == NULL) return;
  int64_t ms = mcpp_runtime_host_rearm(st->rt);
  if (ms >= 0) host_arm(st, ms);
}

/* ------------------------------------------------------------ helpers */

static int get_conn_id(PyObject *o, uint64_t *id) {
  unsigned long long v = PyLong_AsUnsignedLongLong(o);
  if (v == (unsigned long long)-1 && PyErr_Occurred()) return -1;
  *id = (uint64_t)v;
  return 0;
}

/* ------------------------------------------------------------ functions */

PyDoc_STRVAR(spawn_doc,
             "spawn(handle, argv, env, cwd, settings, stderr_mode, "
             "kill_grace_ms) -> int\n\n"
             "Spawn a stdio MCP server on the I/O thread; return its conn id.\n"
             "kill_grace_ms 0 means SIGKILL at once, no SIGTERM.\n"
             "`handle` is returned with every drained item of the connection.");

static PyObject *py_spawn(PyObject *module, PyObject *args) {
  mcpping_state *st = mcpping_get_state(module);
  PyObject *handle, *argv_obj, *env_obj, *cwd_obj, *settings_obj;
  int stderr_mode;
  unsigned int kill_grace_ms;
  if (!PyArg_ParseTuple(args, "OOOOOiI:spawn", &handle, &argv_obj, &env_obj,
                        &cwd_obj, &settings_obj, &stderr_mode,
                        &kill_grace_ms))
    return NULL;
  if (stderr_mode < 0 || stderr_mode > 2) {
    PyErr_SetString(PyExc_ValueError, "bad stderr_mode");
    return NULL;
  }
  mcpp_settings settings;
  PyObject *name_holder = NULL, *argv_holder = NULL, *env_holder = NULL,
           *cwd_bytes = NULL, *result = NULL;
  char **argv = NULL, **env = NULL;
  if (mcpping_settings_from_dict(settings_obj, &settings, &name_holder) < 0)
    goto done;
  argv = mcpping_to_argv(argv_obj, &argv_holder, "argv must be a sequence");
  if (argv == NULL) goto done;
  if (argv[0] == NULL) {
    PyErr_SetString(PyExc_ValueError, "argv must not be empty");
    goto done;
  }
  if (env_obj != Py_None) {
    env = mcpping_to_argv(env_obj, &env_holder, "env must be a sequence");
    if (env == NULL) goto done;
  }
  if (cwd_obj != Py_None && !PyUnicode_FSConverter(cwd_obj, &cwd_bytes))
    goto done;
  if (ensure_runtime(st) < 0) goto done;

  mcpp_spawn_options opts = {0};
  opts.file = argv[0];
  opts.args = argv;
  opts.env = env;
  opts.cwd = cwd_bytes ? PyBytes_AsString(cwd_bytes) : NULL;
  opts.stderr_mode = (mcpp_stderr_mode)stderr_mode;
  /* Python's kill_grace=0 is no grace (SIGKILL at once); C's 0 is the
   * default, which Python always passes in full. */
  opts.kill_grace_ms = kill_grace_ms ? kill_grace_ms : MCPP_KILL_GRACE_NONE;

  char errbuf[512] = {0};
  uint64_t conn_id = 0;
  int rc;
  /* The runtime holds a strong reference to handle until the CLOSED item. */
  Py_INCREF(handle);
  mcpp_runtime *rt = st->rt;
  Py_BEGIN_ALLOW_THREADS rc = mcpp_runtime_spawn(
      rt, &settings, &opts, handle, &conn_id, errbuf, sizeof errbuf);
  Py_END_ALLOW_THREADS host_after(st);
  if (rc != 0) {
    Py_DECREF(handle);
    mcpping_raise(st, rc, errbuf[0] ? errbuf : NULL);
    goto done;
  }
  result = PyLong_FromUnsignedLongLong(conn_id);

done:
  PyMem_Free(argv);
  PyMem_Free(env);
  Py_XDECREF(argv_holder);
  Py_XDECREF(env_holder);
  Py_XDECREF(cwd_bytes);
  Py_XDECREF(name_holder);
  return result;
}

PyDoc_STRVAR(send_doc,
             "send(conn_id, frame: bytes, timeout_ms=0) -> bool\n\n"
             "Queue one application frame (no newline); a request gets\n"
             "timeout_ms (0: the default, MCPP_TIMEOUT_NONE: none). False:\n"
             "the outbound queue is full (max_pending_bytes), nothing was\n"
             "queued: retry after the connection's WRITABLE item.");

static PyObject *py_send(PyObject *module, PyObject *args) {
  mcpping_state *st = mcpping_get_state(module);
  PyObject *id_obj;
  mcpping_bytes frame = {0};
  unsigned int timeout_ms = MCPP_TIMEOUT_DEFAULT;
  uint64_t id;
  if (!PyArg_ParseTuple(args, "OO&|I:send", &id_obj, mcpping_bytes_conv, &frame, &timeout_ms))
    return NULL;
  if (get_conn_id(id_obj, &id) < 0) {
    mcpping_bytes_release(&frame);
    return NULL;
  }
  int rc = st->rt ? mcpp_runtime_send_timed(st->rt, id, frame.buf,
                                            (size_t)frame.len, timeout_ms)
                  : MCPP_ERR_NOT_FOUND;
  mcpping_bytes_release(&frame);
  host_after(st);
  if (rc == MCPP_ERR_WOULD_BLOCK) Py_RETURN_FALSE;
  if (rc != 0) return mcpping_raise(st, rc, NULL);
  Py_RETURN_TRUE;
}

PyDoc_STRVAR(cancel_request_doc,
             "cancel_request(conn_id, id_json: bytes) -> None\n\n"
             "Abandon an in-flight request (its id as raw JSON): the engine\n"
             "sends notifications/cancelled and answers with a -32800 error.");

static PyObject *py_cancel_request(PyObject *module, PyObject *args) {
  mcpping_state *st = mcpping_get_state(module);
  PyObject *id_obj;
  mcpping_bytes rid = {0};
  uint64_t id;
  if (!PyArg_ParseTuple(args, "OO&:cancel_request", &id_obj, mcpping_bytes_conv, &rid))
    return NULL;
  if (get_conn_id(id_obj, &id) < 0 || rid.len == 0) {
    if (!PyErr_Occurred())
      PyErr_SetString(PyExc_ValueError, "id_json must not be empty");
    mcpping_bytes_release(&rid);
    return NULL;
  }
  /* A connection already gone has nothing left to abandon. */
  if (st->rt) mcpp_runtime_cancel_request(st->rt, id, rid.buf, (size_t)rid.len);
  mcpping_bytes_release(&rid);
  host_after(st);
  Py_RETURN_NONE;
}

PyDoc_STRVAR(ping_doc, "ping(conn_id, timeout_ms, token) -> None\n\n"
                       "Queue a manual ping; its outcome is drained as an "
                       "event carrying `token`.");

static PyObject *py_ping(PyObject *module, PyObject *args) {
  mcpping_state *st = mcpping_get_state(module);
  PyObject *id_obj;
  unsigned int timeout_ms;
  unsigned long long token;
  uint64_t id;
  if (!PyArg_ParseTuple(args, "OIK:ping", &id_obj, &timeout_ms, &token))
    return NULL;
  if (get_conn_id(id_obj, &id) < 0) return NULL;
  int rc = st->rt ? mcpp_runtime_ping(st->rt, id, timeout_ms, token)
                  : MCPP_ERR_NOT_FOUND;
  host_after(st);
  if (rc != 0) return mcpping_raise(st, rc, NULL);
  Py_RETURN_NONE;
}

PyDoc_STRVAR(cancel_ping_doc,
             "cancel_ping(conn_id, token) -> None\n\n"
             "Forget the manual ping queued with token: no outcome follows.");

static PyObject *py_cancel_ping(PyObject *module, PyObject *args) {
  mcpping_state *st = mcpping_get_state(module);
  PyObject *id_obj;
  unsigned long long token;
  uint64_t id;
  if (!PyArg_ParseTuple(args, "OK:cancel_ping", &id_obj, &token)) return NULL;
  if (get_conn_id(id_obj, &id) < 0) return NULL;
  /* A connection already gone has nothing left to cancel. */
  if (st->rt) mcpp_runtime_cancel_ping(st->rt, id, token);
  host_after(st);
  Py_RETURN_NONE;
}

PyDoc_STRVAR(pid_doc, "pid(conn_id) -> int | None\n\n"
                      "The server's process id, None once closed.");

static PyObject *py_pid(PyObject *module, PyObject *arg) {
  mcpping_state *st = mcpping_get_state(module);
  uint64_t id;
  if (get_conn_id(arg, &id) < 0) return NULL;
  int pid = st->rt ? mcpp_runtime_pid(st->rt, id) : MCPP_ERR_NOT_FOUND;
  if (pid < 0) Py_RETURN_NONE;
  return PyLong_FromLong(pid);
}

PyDoc_STRVAR(set_retry_budget_doc,
             "set_retry_budget(burst, per_second) -> None\n\n"
             "The reconnect budget every connection of the process shares.");

static PyObject *py_set_retry_budget(PyObject *module, PyObject *args) {
  mcpping_state *st = mcpping_get_state(module);
  unsigned int burst;
  double per_second;
  if (!PyArg_ParseTuple(args, "Id:set_retry_budget", &burst, &per_second))
    return NULL;
  mcpp_retry_budget check;
  int rc = mcpp_retry_budget_init(&check, burst, per_second);
  if (rc != 0) return mcpping_raise(st, rc, "burst or per_second out of range");
  st->budget_burst = burst;
  st->budget_per_second = per_second;
  if (st->rt) mcpp_runtime_set_retry_budget(st->rt, burst, per_second);
  Py_RETURN_NONE;
}

PyDoc_STRVAR(set_records_doc,
             "set_records(conn_id, enabled) -> None\n\n"
             "Whether the connection's governance records cross to the host.");

/* (conn_id, enabled) -> set(rt, id, enabled); a connection already gone
 * is nothing to tell. */
static PyObject *set_flag(PyObject *module, PyObject *args, const char *format,
                          int (*set)(mcpp_runtime *, uint64_t, int)) {
  mcpping_state *st = mcpping_get_state(module);
  PyObject *id_obj;
  int enabled;
  uint64_t id;
  if (!PyArg_ParseTuple(args, format, &id_obj, &enabled)) return NULL;
  if (get_conn_id(id_obj, &id) < 0) return NULL;
  if (st->rt) set(st->rt, id, enabled);
  Py_RETURN_NONE;
}

static PyObject *py_set_records(PyObject *module, PyObject *args) {
  return set_flag(module, args, "Op:set_records", mcpp_runtime_set_records);
}

PyDoc_STRVAR(set_ping_events_doc,
             "set_ping_events(conn_id, enabled) -> None\n\n"
             "Whether PING and keepalive PONG events cross to the host.");

static PyObject *py_set_ping_events(PyObject *module, PyObject *args) {
  return set_flag(module, args, "Op:set_ping_events", mcpp_runtime_set_ping_events);
}

PyDoc_STRVAR(feed_rtt_doc,
             "feed_rtt(conn_id, stats) -> None\n\n"
             "The runtime feeds the RttStats every ping outcome (RTTs in seconds) until the\n"
             "CLOSED item; the caller keeps stats alive until then.");

static PyObject *py_feed_rtt(PyObject *module, PyObject *args) {
  mcpping_state *st = mcpping_get_state(module);
  PyObject *id_obj, *stats_obj;
  uint64_t id;
  if (!PyArg_ParseTuple(args, "OO:feed_rtt", &id_obj, &stats_obj)) return NULL;
  if (get_conn_id(id_obj, &id) < 0) return NULL;
  mcpp_rtt_stats *stats = mcpping_rtt_stats_get(stats_obj);
  if (!stats) {
    PyErr_SetString(PyExc_TypeError, "stats must be an RttStats");
    return NULL;
  }
  if (st->rt) mcpp_runtime_feed_rtt_stats(st->rt, id, stats, 1e6);
  Py_RETURN_NONE;
}

PyDoc_STRVAR(close_doc, "close(conn_id) -> bool\n\n"
                        "Queue a close; False if the connection is gone.");

static PyObject *py_close(PyObject *module, PyObject *arg) {
  mcpping_state *st = mcpping_get_state(module);
  uint64_t id;
  if (get_conn_id(arg, &id) < 0) return NULL;
  int rc = st->rt ? mcpp_runtime_close(st->rt, id) : MCPP_ERR_NOT_FOUND;
  host_after(st);
  return PyBool_FromLong(rc == 0);
}

PyDoc_STRVAR(info_doc, "info(conn_id) -> dict | None\n\n"
                       "The engine's counters and state, None if gone.");

static PyObject *py_info(PyObject *module, PyObject *arg) {
  mcpping_state *st = mcpping_get_state(module);
  uint64_t id;
  if (get_conn_id(arg, &id) < 0) return NULL;
  mcpp_engine_info info;
  int healthy = 0;
  memset(&info, 0, sizeof info);
  /* The snapshot carries no strings: the session comes separately. */
  char version[64], name[257];
  if (st->rt == NULL || mcpp_runtime_info(st->rt, id, &info, &healthy) != 0 ||
      mcpp_runtime_session(st->rt, id, version, sizeof version, name,
                           sizeof name) != 0)
    Py_RETURN_NONE;
  info.protocol_version = version[0] ? version : NULL;
  info.peer_name = name[0] ? name : NULL;
  return mcpping_info_to_dict(&info, healthy);
}

PyDoc_STRVAR(unreadable_doc, "unreadable(conn_id) -> (int, str) | None\n\n"
                             "How many lines the server wrote are not JSON-RPC, and the\n"
                             "sentence that says so (\"\" if none); None if the connection is gone.");

static PyObject *py_unreadable(PyObject *module, PyObject *arg) {
  mcpping_state *st = mcpping_get_state(module);
  uint64_t id;
  if (get_conn_id(arg, &id) < 0) return NULL;
  char text[512];
  uint64_t count = 0;
  if (st->rt == NULL || mcpp_runtime_unreadable(st->rt, id, &count, text, sizeof text) != 0)
    Py_RETURN_NONE;
  PyObject *sentence = PyUnicode_DecodeUTF8(text, (Py_ssize_t)strlen(text), "replace");
  if (sentence == NULL) return NULL;
  return Py_BuildValue("(KN)", (unsigned long long)count, sentence);
}

/* A str of bytes the engine or the server wrote (a close reason may quote
 * the server's stderr): bytes that are not UTF-8 are replaced, never an
 * error that would cost the whole drain. len < 0: NUL-terminated. */
static PyObject *text_of(const char *s, Py_ssize_t len) {
  if (len < 0) len = (Py_ssize_t)strlen(s);
  return PyUnicode_DecodeUTF8(s, len, "replace");
}

/* Builds the Python tuple of one item; NULL with an exception on error. */
static PyObject *item_to_tuple(const mcpp_item *it) {
  PyObject *h = (PyObject *)mcpp_item_get_conn_user_data(it);
  switch (mcpp_item_get_type(it)) {
    case MCPP_ITEM_MESSAGE:
      /* One the engine or the runtime made carries its kind's name. */
      if (mcpp_item_get_answer_kind(it) != MCPP_ANSWER_PEER)
        return Py_BuildValue("(Oiy#s)", h, K_MESSAGE, mcpp_item_get_data(it),
                             (Py_ssize_t)mcpp_item_get_len(it),
                             mcpp_answer_kind_name(mcpp_item_get_answer_kind(it)));
      return Py_BuildValue("(Oiy#)", h, K_MESSAGE, mcpp_item_get_data(it),
                           (Py_ssize_t)mcpp_item_get_len(it));
    case MCPP_ITEM_EVENT: {
      PyObject *ev = mcpping_native_event_new(mcpp_item_get_event(it));
      if (ev == NULL) return NULL;
      return Py_BuildValue("(OiNK)", h, K_EVENT, ev,
                           (unsigned long long)mcpp_item_get_ping_token(it));
    }
    case MCPP_ITEM_RECORD:
      return Py_BuildValue("(OiN)", h, K_RECORD,
                           text_of(mcpp_item_get_data(it),
                                   (Py_ssize_t)mcpp_item_get_len(it)));
    case MCPP_ITEM_STDERR:
      return Py_BuildValue("(Oiy#)", h, K_STDERR, mcpp_item_get_data(it),
                           (Py_ssize_t)mcpp_item_get_len(it));
    case MCPP_ITEM_CLOSED: {
      const mcpp_close_info *c = mcpp_item_get_close(it);
      return Py_BuildValue("(Oi(iNLi))", h, K_CLOSED, c->err,
                           text_of(c->reason ? c->reason : "closed", -1),
                           (long long)c->exit_status, c->term_signal);
    }
    case MCPP_ITEM_PING_FAILED:
      return Py_BuildValue("(OiKi)", h, K_PING_FAILED,
                           (unsigned long long)mcpp_item_get_ping_token(it),
                           mcpp_item_get_error(it));
    case MCPP_ITEM_WRITABLE:
      return Py_BuildValue("(Oi)", h, K_WRITABLE);
  }
  Py_RETURN_NONE;
}

PyDoc_STRVAR(drain_doc,
             "drain() -> list[list]\n\n"
             "Clear the wake pipe and take every queued item, oldest first,\n"
             "as one [handle, conn_id, charge, items] per connection, in the\n"
             "order each first appears; items are (handle, kind, ...) tuples.\n"
             "The charge (bytes) still counts against the connection's\n"
             "max_pending_bytes: give it back with release(conn_id, charge)\n"
             "once the connection's own loop has processed the items.");

/* Gives back the charges taken so far (a drain that failed part way). */
static void release_batches(mcpping_state *st, PyObject *batches) {
  for (Py_ssize_t i = 0; i < PyList_Size(batches); i++) {
    PyObject *b = PyList_GetItem(batches, i);
    mcpp_runtime_release(st->rt,
                         PyLong_AsUnsignedLongLong(PyList_GetItem(b, 1)),
                         PyLong_AsSize_t(PyList_GetItem(b, 2)));
  }
}

/* The batch of connection `id` in batches (made and indexed if new), or
 * NULL with an exception set. Borrowed. */
static PyObject *batch_of(PyObject *index, PyObject *batches,
                          const mcpp_item *it, uint64_t id) {
  PyObject *key = PyLong_FromUnsignedLongLong(id);
  if (key == NULL) return NULL;
  PyObject *b = PyDict_GetItemWithError(index, key);
  if (b == NULL && !PyErr_Occurred()) {
    PyObject *handle = (PyObject *)mcpp_item_get_conn_user_data(it);
    b = Py_BuildValue("[OOn[]]", handle ? handle : Py_None, key,
                      (Py_ssize_t)0);
    if (b && (PyDict_SetItem(index, key, b) < 0 ||
              PyList_Append(batches, b) < 0))
      Py_CLEAR(b);
    Py_XDECREF(b); /* index and batches hold it */
  }
  Py_DECREF(key);
  return b;
}

/* Adds a run's charge to its batch. Returns 0, or -1 with an exception
 * set: then the charge is given back at once, so none is ever lost (a
 * connection whose count never falls would stay paused). */
static int add_charge(mcpping_state *st, PyObject *batch, uint64_t id,
                      size_t charge) {
  if (batch == NULL || charge == 0) return 0;
  PyObject *sum =
      PyLong_FromSize_t(PyLong_AsSize_t(PyList_GetItem(batch, 2)) + charge);
  if (sum == NULL) {
    mcpp_runtime_release(st->rt, id, charge);
    return -1;
  }
  PyList_SetItem(batch, 2, sum);
  return 0;
}

/* Takes every queued item as drain() returns them. */
static PyObject *batches_of(mcpping_state *st, mcpp_item *items);

static PyObject *drain_items(mcpping_state *st) {
  if (st->rt == NULL) return PyList_New(0);
  return batches_of(st, mcpp_runtime_drain(st->rt));
}

/* The drained items (a list), as drain() returns them. */
static PyObject *batches_of(mcpping_state *st, mcpp_item *items) {
  PyObject *batches = PyList_New(0);
  PyObject *index = batches ? PyDict_New() : NULL; /* conn_id -> its batch */
  if (index == NULL) {
    Py_XDECREF(batches);
    mcpp_runtime_items_free(st->rt, items);
    return NULL;
  }
  int failed = 0;
  /* Items come in runs of one connection: its batch is looked up and its
   * charge summed once per run, not per item. */
  PyObject *run = NULL; /* borrowed */
  uint64_t run_id = 0;
  size_t run_charge = 0;
  for (mcpp_item *it = items; it != NULL; it = mcpp_item_next(it)) {
    uint64_t id = mcpp_item_get_conn_id(it);
    if (!failed && (run == NULL || id != run_id)) {
      failed = add_charge(st, run, run_id, run_charge) < 0;
      run_charge = 0;
      run_id = id;
      run = failed ? NULL : batch_of(index, batches, it, id);
      failed = run == NULL;
    }
    if (!failed) {
      /* Per connection: its bytes stay counted until its own loop is done
       * with them (another loop may be blocked), not until this drain. */
      PyObject *t = item_to_tuple(it);
      if (t == NULL || PyList_Append(PyList_GetItem(run, 3), t) < 0)
        failed = 1;
      else
        run_charge += mcpp_item_take_charge(it);
      Py_XDECREF(t);
    }
    /* The runtime's reference to the handle ends with the CLOSED item. */
    if (mcpp_item_get_type(it) == MCPP_ITEM_CLOSED)
      Py_XDECREF((PyObject *)mcpp_item_get_conn_user_data(it));
  }
  if (!failed) failed = add_charge(st, run, run_id, run_charge) < 0;
  else mcpp_runtime_release(st->rt, run_id, run_charge);
  mcpp_runtime_items_free(st->rt, items);
  Py_DECREF(index);
  if (failed) {
    PyObject *type, *value, *tb;
    PyErr_Fetch(&type, &value, &tb);
    release_batches(st, batches);
    PyErr_Restore(type, value, tb);
    Py_DECREF(batches);
    return NULL;
  }
  return batches;
}

static PyObject *py_drain(PyObject *module, PyObject *Py_UNUSED(ignored)) {
  mcpping_state *st = mcpping_get_state(module);
  /* Clear first, then drain: an item queued after the drain wakes us again. */
  if (st->rt != NULL) clear_pipe(st->wake);
  return drain_items(st);
}

/* What woke the host's loop (host_turn's argument). */
enum { TURN_READY = 0, TURN_WAKE = 1, TURN_TIMER = 2 };

PyDoc_STRVAR(host_turn_doc,
             "host_turn(source) -> list[list]\n\n"
             "One turn of the host's loop. source: 0 the runtime's descriptor\n"
             "is readable, 1 the wake pipe is (cleared first), 2 the turn\n"
             "armed through arm() is due. In host mode, on the host thread, it\n"
             "runs the runtime's loop once without blocking and arms the next\n"
             "turn (arm(ms)) if the runtime needs one sooner than the armed one;\n"
             "then, in any mode, it drains: the result is drain()'s.");

static PyObject *py_host_turn(PyObject *module, PyObject *arg) {
  mcpping_state *st = mcpping_get_state(module);
  long source = PyLong_AsLong(arg);
  if (source == -1 && PyErr_Occurred()) return NULL;
  if (st->rt == NULL) return PyList_New(0);
  if (source == TURN_WAKE) clear_pipe(st->wake);
  if (source == TURN_TIMER) st->armed_due = UINT64_MAX; /* it fired */
  if (st->hosted) {
    /* Not the host thread (another loop's wake), or detached meanwhile:
     * nothing runs, the drain below is all there is to do. */
    int64_t wake_ms;
    if (mcpp_runtime_host_run(st->rt, &wake_ms) == 0 && wake_ms >= 0)
      host_arm(st, wake_ms);
  }
  return drain_items(st);
}

PyDoc_STRVAR(host_read_ready_doc,
             "host_read_ready(fd, dispatch) -> None\n\n"
             "A connection's fd that watch(fd, True) asked the loop to watch is\n"
             "readable (this is the loop's reader callback itself): the host\n"
             "reads it (no turn of the runtime's loop), arms the next turn if\n"
             "one is needed sooner, and calls dispatch(batches) (drain()'s\n"
             "result) only when the read queued something, so a keepalive\n"
             "pong nobody listens to runs no Python code.");

static PyObject *py_host_read_ready(PyObject *module, PyObject *args) {
  mcpping_state *st = mcpping_get_state(module);
  int fd;
  PyObject *dispatch;
  if (!PyArg_ParseTuple(args, "iO:host_read_ready", &fd, &dispatch))
    return NULL;
  if (st->rt == NULL) Py_RETURN_NONE;
  if (st->hosted) {
    int64_t wake_ms;
    if (mcpp_runtime_host_read(st->rt, fd, &wake_ms) == 0 && wake_ms >= 0)
      host_arm(st, wake_ms);
  }
  mcpp_item *items = mcpp_runtime_drain(st->rt);
  if (items == NULL) Py_RETURN_NONE;
  PyObject *batches = batches_of(st, items);
  if (batches == NULL) return NULL;
  PyObject *r = PyObject_CallFunctionObjArgs(dispatch, batches, NULL);
  Py_DECREF(batches);
  return r;
}

/* mcpp_host_options.watch_fd: on the host thread, from inside a runtime
 * call, which may have released the GIL (a spawn). */
static void host_watch_fd(void *ctx, int fd, int on) {
  mcpping_state *st = ctx;
  PyGILState_STATE g = PyGILState_Ensure();
  if (st->watch != NULL) {
    PyObject *type, *value, *tb;
    PyErr_Fetch(&type, &value, &tb);
    PyObject *r = PyObject_CallFunction(st->watch, "ii", fd, on);
    if (r == NULL)
      PyErr_WriteUnraisable(st->watch);
    else
      Py_DECREF(r);
    PyErr_Restore(type, value, tb);
  }
  PyGILState_Release(g);
}

PyDoc_STRVAR(host_attach_doc,
             "host_attach(arm, watch=None) -> int | None\n\n"
             "Host mode: the calling thread (its asyncio loop) runs the\n"
             "runtime from now on. Returns the descriptor to watch for\n"
             "readability (call host_turn(0) then), or None if the runtime\n"
             "refused (thread mode; runtime_mode() says why). arm(ms) is called\n"
             "on this thread when a turn is needed within ms ms (0: soon); it\n"
             "returns whether it armed one (then host_turn(2) when it is due).\n"
             "watch(fd, on), if given, is called on this thread to watch each\n"
             "connection's fd (host_read_ready is its reader) or stop.");

static PyObject *py_host_attach(PyObject *module, PyObject *args) {
  mcpping_state *st = mcpping_get_state(module);
  PyObject *arm, *watch = Py_None;
  if (!PyArg_ParseTuple(args, "O|O:host_attach", &arm, &watch)) return NULL;
  if (!PyCallable_Check(arm) || (watch != Py_None && !PyCallable_Check(watch))) {
    PyErr_SetString(PyExc_TypeError, "arm and watch must be callable");
    return NULL;
  }
  if (ensure_runtime(st) < 0) return NULL;
  mcpp_runtime *rt = st->rt;
  int fd = -1, rc;
  mcpp_host_options o = {.version = MCPP_HOST_OPTIONS_V2};
  if (watch != Py_None) {
    o.watch_fd = host_watch_fd;
    o.watch_ctx = st;
    PyObject *old_watch = st->watch;
    Py_INCREF(watch);
    st->watch = watch;
    Py_XDECREF(old_watch);
  }
  /* Waits for the I/O thread to leave the loop; it never takes the GIL. */
  Py_BEGIN_ALLOW_THREADS rc = mcpp_runtime_host_attach(rt, &o, &fd);
  Py_END_ALLOW_THREADS if (rc == MCPP_ERR_UNSUPPORTED) Py_RETURN_NONE;
  if (rc != 0) return mcpping_raise(st, rc, NULL);
  PyObject *old = st->arm;
  Py_INCREF(arm);
  st->arm = arm;
  Py_XDECREF(old);
  st->armed_due = UINT64_MAX;
  st->hosted = 1;
  return PyLong_FromLong(fd);
}

PyDoc_STRVAR(host_detach_doc,
             "host_detach() -> bool\n\n"
             "Back to thread mode (any thread; waits for a turn in progress).\n"
             "False if the runtime was not in host mode. Items the host had\n"
             "yet to drain stay queued: drain after it.");

static PyObject *py_host_detach(PyObject *module, PyObject *Py_UNUSED(ignored)) {
  mcpping_state *st = mcpping_get_state(module);
  mcpp_runtime *rt = st->rt;
  if (rt == NULL) Py_RETURN_FALSE;
  int rc;
  st->hosted = 0; /* no more host_run nor arm from the old host thread */
  Py_BEGIN_ALLOW_THREADS rc = mcpp_runtime_host_detach(rt);
  Py_END_ALLOW_THREADS st->armed_due = UINT64_MAX;
  return PyBool_FromLong(rc == 0);
}

PyDoc_STRVAR(spawn_os_error_doc,
             "spawn_os_error() -> int\n\n"
             "After a spawn() that failed on this thread because the OS refused: "
             "its errno (ENOENT, EACCES), else 0.");

static PyObject *py_spawn_os_error(PyObject *module, PyObject *Py_UNUSED(ignored)) {
  /* libuv's codes are negative errnos on Unix. */
  return PyLong_FromLong(-(long)mcpp_runtime_spawn_os_error());
}

PyDoc_STRVAR(runtime_mode_doc,
             "runtime_mode() -> tuple[str, str]\n\n"
             "('host' or 'thread', why): who runs the runtime's loop.");

static PyObject *py_runtime_mode(PyObject *module,
                                 PyObject *Py_UNUSED(ignored)) {
  mcpping_state *st = mcpping_get_state(module);
  if (st->rt == NULL)
    return Py_BuildValue("(ss)", "thread",
                         "thread mode: no connection yet (the runtime starts "
                         "with the first)");
  char why[160] = "";
  mcpp_mode m = mcpp_runtime_mode(st->rt, why, sizeof why);
  return Py_BuildValue("(sN)", m == MCPP_MODE_HOST ? "host" : "thread",
                       text_of(why, -1));
}

PyDoc_STRVAR(host_stats_doc,
             "host_stats() -> dict[str, int]\n\n"
             "takeovers (the I/O thread ran the loop for a stalled host),\n"
             "host_turns, inline_commands and host_reads (a connection's fd\n"
             "read by the host itself); for tests and benchmarks.");

static PyObject *py_host_stats(PyObject *module, PyObject *Py_UNUSED(ignored)) {
  mcpping_state *st = mcpping_get_state(module);
  mcpp_host_stats hs;
  mcpp_runtime_host_stats(st->rt, &hs);
  return Py_BuildValue("{sKsKsKsK}", "takeovers",
                       (unsigned long long)hs.takeovers, "host_turns",
                       (unsigned long long)hs.host_turns, "inline_commands",
                       (unsigned long long)hs.inline_commands, "host_reads",
                       (unsigned long long)mcpp_runtime_host_reads(st->rt));
}

PyDoc_STRVAR(release_doc,
             "release(conn_id, charge) -> None\n\n"
             "Give back the charge of a drained batch once its connection's\n"
             "loop has processed it (reading resumes below half the cap).");

static PyObject *py_release(PyObject *module, PyObject *args) {
  mcpping_state *st = mcpping_get_state(module);
  PyObject *id_obj;
  Py_ssize_t charge;
  if (!PyArg_ParseTuple(args, "On", &id_obj, &charge)) return NULL;
  uint64_t id;
  if (get_conn_id(id_obj, &id) < 0) return NULL;
  /* A closed connection counts nothing any more. */
  if (st->rt != NULL && charge > 0) {
    mcpp_runtime_release(st->rt, id, (size_t)charge);
    host_after(st);
  }
  Py_RETURN_NONE;
}

PyDoc_STRVAR(wake_fd_doc,
             "wake_fd() -> int\n\n"
             "The read end of the wake pipe (creates the runtime if needed).");

static PyObject *py_wake_fd(PyObject *module, PyObject *Py_UNUSED(ignored)) {
  mcpping_state *st = mcpping_get_state(module);
  if (ensure_runtime(st) < 0) return NULL;
  return PyLong_FromLong(st->wake->rfd);
}

PyDoc_STRVAR(after_fork_doc,
             "after_fork_child() -> None\n\n"
             "In a forked child: forget the parent's connections and give\n"
             "the child its own wake pipe. Registered with os.register_at_fork.");

static PyObject *py_after_fork_child(PyObject *module,
                                     PyObject *Py_UNUSED(ignored)) {
  mcpping_state *st = mcpping_get_state(module);
  if (st->rt == NULL) Py_RETURN_NONE;
  /* The pipe is shared with the parent: a child's wake must not reach it. */
  mcpping_wake fresh;
  if (make_pipe(&fresh) == 0) {
    close(st->wake->rfd);
    close(st->wake->wfd);
    *st->wake = fresh;
  }
  mcpp_runtime_after_fork_child(st->rt);
  /* The parent's host loop is not this process's: thread mode. */
  st->hosted = 0;
  st->armed_due = UINT64_MAX;
  Py_RETURN_NONE;
}

PyDoc_STRVAR(shutdown_doc,
             "shutdown() -> None\n\n"
             "Close every connection (killing and reaping servers), stop the\n"
             "I/O thread. A later spawn starts a fresh runtime.");

static PyObject *py_shutdown(PyObject *module, PyObject *Py_UNUSED(ignored)) {
  free_runtime(mcpping_get_state(module), 1);
  Py_RETURN_NONE;
}

PyDoc_STRVAR(strerror_doc, "strerror(code) -> str");
static PyObject *py_strerror(PyObject *module, PyObject *arg) {
  int code = PyLong_AsLong(arg);
  if (code == -1 && PyErr_Occurred()) return NULL;
  return PyUnicode_FromString(mcpp_strerror(code));
}

PyDoc_STRVAR(errname_doc, "errname(code) -> str");
static PyObject *py_errname(PyObject *module, PyObject *arg) {
  int code = PyLong_AsLong(arg);
  if (code == -1 && PyErr_Occurred()) return NULL;
  return PyUnicode_FromString(mcpp_errname(code));
}

static PyMethodDef module_methods[] = {
    {"spawn", py_spawn, METH_VARARGS, spawn_doc},
    {"send", py_send, METH_VARARGS, send_doc},
    {"cancel_request", py_cancel_request, METH_VARARGS, cancel_request_doc},
    {"ping", py_ping, METH_VARARGS, ping_doc},
    {"cancel_ping", py_cancel_ping, METH_VARARGS, cancel_ping_doc},
    {"pid", py_pid, METH_O, pid_doc},
    {"close", py_close, METH_O, close_doc},
    {"set_records", py_set_records, METH_VARARGS, set_records_doc},
    {"set_ping_events", py_set_ping_events, METH_VARARGS, set_ping_events_doc},
    {"feed_rtt", py_feed_rtt, METH_VARARGS, feed_rtt_doc},
    {"set_retry_budget", py_set_retry_budget, METH_VARARGS,
     set_retry_budget_doc},
    {"info", py_info, METH_O, info_doc},
    {"unreadable", py_unreadable, METH_O, unreadable_doc},
    {"drain", py_drain, METH_NOARGS, drain_doc},
    {"release", py_release, METH_VARARGS, release_doc},
    {"wake_fd", py_wake_fd, METH_NOARGS, wake_fd_doc},
    {"host_turn", py_host_turn, METH_O, host_turn_doc},
    {"host_attach", py_host_attach, METH_VARARGS, host_attach_doc},
    {"host_read_ready", py_host_read_ready, METH_VARARGS, host_read_ready_doc},
    {"host_detach", py_host_detach, METH_NOARGS, host_detach_doc},
    {"runtime_mode", py_runtime_mode, METH_NOARGS, runtime_mode_doc},
    {"spawn_os_error", py_spawn_os_error, METH_NOARGS, spawn_os_error_doc},
    {"host_stats", py_host_stats, METH_NOARGS, host_stats_doc},
    {"after_fork_child", py_after_fork_child, METH_NOARGS, after_fork_doc},
    {"shutdown", py_shutdown, METH_NOARGS, shutdown_doc},
    {"strerror", py_strerror, METH_O, strerror_doc},
    {"errname", py_errname, METH_O, errname_doc},
    {"event_outcome", mcpping_event_outcome, METH_O,
     "event_outcome(event) -> str | None: how a ping ended ('pong', 'timeout', "
     "'error', 'invalid', 'unsupported', 'closed'), None if the event ends none."},
    {"outcome_is_lost", mcpping_outcome_is_lost, METH_O,
     "outcome_is_lost(outcome) -> bool: whether the outcome counts as a lost ping."},
    {"http_url", mcpping_http_url, METH_VARARGS,
     "http_url(url, headers) -> dict | str: what a Streamable HTTP client makes of url "
     "(request_url, target, name, host, port, https, authorization), or why it is "
     "refused (mcpp_http_url_parse)"},
    {"http_tls_error_name", mcpping_http_tls_error_name, METH_O,
     "http_tls_error_name(verify_code) -> str: a TLS failure's name (0: EPROTO; "
     "DEPTH_ZERO_SELF_SIGNED_CERT, ...)"},
    {"http_resolve_error_name", mcpping_http_resolve_error_name, METH_O,
     "http_resolve_error_name(code) -> str | None: a getaddrinfo failure's name "
     "(ENOTFOUND, EAI_AGAIN, ...)"},
    {"env_safe", mcpping_env_safe, METH_VARARGS,
     "env_safe(name, value) -> bool: whether the SDKs' safe subset of the environment "
     "keeps name=value (mcpp_env_safe)."},
    {"http_header_problem", mcpping_http_header_problem, METH_VARARGS,
     "http_header_problem(name, value) -> str | None: why the header cannot be sent "
     "(the sentence reads after its name), None if it can."},
    {"ping_unreachable_answer", mcpping_ping_unreachable_answer, METH_O,
     "ping_unreachable_answer(ping) -> bytes | None: the -32601 answer a ping gets "
     "when no stream would carry it to the peer (None: ping is no request)."},
    {"unserved_request_answer", mcpping_unserved_request_answer, METH_O,
     "unserved_request_answer(frame) -> bytes | None: the -32601 answer a request "
     "from the peer gets when the application serves none (None: frame is no request)."},
    {NULL, NULL, 0, NULL}};

/* ------------------------------------------------------------ module */

static int module_exec(PyObject *m) {
  mcpping_state *st = mcpping_get_state(m);
  st->rt = NULL;
  st->wake = NULL;
  st->hosted = 0;
  st->arm = NULL;
  st->watch = NULL;
  st->not_http = NULL;
  st->armed_due = UINT64_MAX;
  st->error = PyErr_NewExceptionWithDoc(
      "mcpping._native.NativeError",
      "An MCPP_ERR_* code from the C layer: args are (code, message, name).",
      NULL, NULL);
  if (st->error == NULL) return -1;
  if (PyModule_AddObjectRef(m, "NativeError", st->error) < 0) return -1;
  if (mcpping_engine_add_type(m, st) < 0) return -1;
  if (mcpping_rules_add_types(m) < 0) return -1;
  if (mcpping_event_add_type(m) < 0) return -1;
  if (mcpping_wrap_add_functions(m) < 0) return -1;
  if (mcpping_settings_add_functions(m) < 0) return -1;
  if (mcpping_metrics_add_functions(m) < 0) return -1;
  if (mcpping_app_add_functions(m) < 0) return -1;
  if (mcpping_config_add_functions(m) < 0) return -1;
  if (mcpping_config_run_add_functions(m) < 0) return -1;
  if (mcpping_watch_add_functions(m) < 0) return -1;
  if (mcpping_client_add(m) < 0) return -1;
  if (PyModule_AddStringConstant(m, "VERSION", MCPP_VERSION) < 0) return -1;
#define C(name) \
  if (PyModule_AddIntConstant(m, #name, name) < 0) return -1
  /* Every MCPP_ERR_* from the one list (MCPP_ERRNO_MAP). */
#define XX(name, code, text) C(MCPP_ERR_##name);
  MCPP_ERRNO_MAP(XX)
#undef XX
  C(MCPP_CODE_IN_DOUBT);
  /* What the engine's send callback is handed (mcpp_frame_kind). */
  C(MCPP_FRAME_PING);
  C(MCPP_FRAME_PONG);
  C(MCPP_FRAME_CANCEL);
  C(MCPP_FRAME_PROBE);
  C(MCPP_MAX_MS);
  C(MCPP_MIN_INTERVAL_FLOOR_MS);
#undef C
  if (PyModule_AddObject(m, "MCPP_TIMEOUT_NONE",
                         PyLong_FromUnsignedLong(MCPP_TIMEOUT_NONE)) < 0)
    return -1;
  return 0;
}

static int module_traverse(PyObject *m, visitproc visit, void *arg) {
  mcpping_state *st = mcpping_get_state(m);
  Py_VISIT(st->engine_type);
  Py_VISIT(st->error);
  Py_VISIT(st->not_http);
  Py_VISIT(st->arm);
  Py_VISIT(st->watch);
  return 0;
}

static int module_clear(PyObject *m) {
  mcpping_state *st = mcpping_get_state(m);
  Py_CLEAR(st->engine_type);
  Py_CLEAR(st->error);
  Py_CLEAR(st->not_http);
  Py_CLEAR(st->arm);
  Py_CLEAR(st->watch);
  return 0;
}

static void module_free(void *m) {
  /* The I/O thread never takes the GIL, so freeing here cannot deadlock. */
  free_runtime(mcpping_get_state((PyObject *)m), 0);
  module_clear((PyObject *)m);
}

static PyModuleDef_Slot module_slots[] = {{Py_mod_exec, module_exec},
                                          {0, NULL}};

PyDoc_STRVAR(module_doc,
             "Native core of mcpping: the process-wide I/O runtime and the "
             "sans-I/O engine.");

static struct PyModuleDef module_def = {
    PyModuleDef_HEAD_INIT,
    .m_name = "mcpping._native",
    .m_doc = module_doc,
    .m_size = sizeof(mcpping_state),
    .m_methods = module_methods,
    .m_slots = module_slots,
    .m_traverse = module_traverse,
    .m_clear = module_clear,
    .m_free = module_free,
};

PyMODINIT_FUNC PyInit__native(void) { return PyModuleDef_Init(&module_def); }
