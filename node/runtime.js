'use strict';
/**
 * The JavaScript side of the per-environment runtime: routes each batch of
 * native items to its connection, and decides when mcpping keeps the
 * process alive.
 *
 * Mode: by default the runtime runs in host mode (see docs/node.md,
 * "Host mode"): this environment's libuv loop runs the runtime's loop, so a
 * ping or a message costs no thread hop, and the runtime's native thread
 * only watches, answering the server's pings while the JavaScript thread is
 * busy. MCPPING_HOST_MODE=0 selects thread mode (the native thread runs
 * everything and hands batches over), as before.
 *
 * Liveness policy: the native wake-up function is unreferenced by default,
 * so an idle mcpping never keeps a process alive. It is referenced while at
 * least one Hold is taken: a ping, request or close being awaited, a peer
 * running keepalive (unless `peer.unref()`), or an open
 * StdioClientTransport (as the SDK's child-process transport would).
 */
const binding = require('./binding');

/** @type {Map<number, {onItem: (kind: string, payload: unknown) => void}>} */
const conns = new Map();
let holds = 0;
let nextToken = 1;

/**
 * Delivers one native item; the addon calls it for each item of a drained
 * batch in order (one at a time, so a batch is never all in the heap at
 * once). A throwing handler does not stop the rest; its error is rethrown
 * asynchronously as uncaught.
 * @param {number} conn the connection's id
 * @param {string} kind 'message', 'event', 'record', 'stderr', 'closed', 'ping_failed' or 'writable'
 * @param {unknown} payload the frame, record or stderr bytes, the event, or the item's fields
 */
function dispatch(conn, kind, payload) {
  const handler = conns.get(conn);
  if (kind === 'closed') conns.delete(conn);
  if (!handler) return;
  try {
    handler.onItem(kind, payload);
  } catch (err) {
    process.nextTick(() => {
      throw err;
    });
  }
}

/** The C core's names of event types, states, dispositions and outcomes, by code. */
const NAMES = binding.eventNames();

/**
 * Builds an engine event for the addon (convert.cc EventToJs passes the
 * fields in this order; this is the one place that names them): one object
 * literal here is much cheaper than the addon setting each property from C++.
 * type, state, disposition and outcome come as codes, named from NAMES.
 */
function makeEvent(type, state, pingSeq, manual, token, rttUs, timeoutMs, rpcCode, error, errorCode,
  invalid, message, id, failureCount, inFlight, disposition, outcome, proof) {
  return {
    type: NAMES.type[type], state: NAMES.state[state], pingSeq, manual, token, rttUs, timeoutMs,
    rpcCode, error, errorCode, invalid, message, id, failureCount, inFlight,
    disposition: NAMES.disposition[disposition], outcome: NAMES.outcome[outcome], proof,
  };
}

binding.setDispatch(dispatch, makeEvent);
// process.exit() skips the addon's environment cleanup hook on the main
// thread: free the runtime here too, so every server is killed and reaped.
process.on('exit', () => binding.shutdown());

/** A reason to keep the process alive; release() is idempotent. */
class Hold {
  constructor() {
    this.held = false;
  }

  /** Takes the hold (no-op if already taken). */
  take() {
    if (this.held) return;
    this.held = true;
    if (holds++ === 0) binding.ref();
  }

  /** Releases the hold (no-op if not taken). */
  release() {
    if (!this.held) return;
    this.held = false;
    if (--holds === 0) binding.unref();
  }
}

/**
 * Registers a handler for a connection's items.
 * @param {number} connId
 * @param {{onItem: (kind: string, payload: unknown) => void}} handler
 */
function register(connId, handler) {
  conns.set(connId, handler);
}

/** @returns {number} a fresh token for a manual ping */
function newToken() {
  return nextToken++;
}

/** @returns {number} holds currently taken (for tests) */
function holdCount() {
  return holds;
}

/**
 * Which mode this environment's runtime runs in, and why (creates the
 * runtime if no connection has yet).
 * @returns {{mode: 'host'|'thread', why: string}}
 */
function runtimeMode() {
  return binding.runtimeMode();
}

/**
 * Host mode's counters (all 0 in thread mode): how often the native thread
 * took the loop over from a busy JavaScript thread, host turns, commands
 * run inline, reads of a connection's fd by this thread. For tests and
 * benchmarks.
 * @returns {{takeovers: number, hostTurns: number, inlineCommands: number, hostReads: number}}
 */
function hostStats() {
  return binding.hostStats();
}

module.exports = { binding, Hold, register, newToken, holdCount, runtimeMode, hostStats };
