'use strict';
/**
 * A minimal JSON-RPC requester: ids and pending promises (the engine times
 * each request and delivers its answer if none comes). Shared by Peer
 * (stdio) and the Streamable HTTP session.
 */
const binding = require('./binding');
const { McppError, RequestInDoubtError } = require('./errors');
const check = require('./validate');

/** A JSON-RPC error answer, as an exception. */
class RpcError extends McppError {
  /** @param {{code: number, message: string, data?: unknown}} error @param {string} [answerKind] the engine's, if it made the answer */
  constructor(error, answerKind) {
    super(error && error.message ? error.message : 'JSON-RPC error', { code: error ? error.code : undefined });
    this.data = error ? error.data : undefined;
    this.answerKind = answerKind || null; // null: the peer's; else the engine's: timeout or abandoned
  }
}

class RpcRequester {
  /** @param {string} prefix id prefix, so ours never collide with the engine's */
  constructor(prefix) {
    this.prefix = prefix;
    this.next = 1;
    /** @type {Map<string|number, {method: string, resolve: Function, reject: Function}>} */
    this.pending = new Map();
    // Requests given up on (aborted, timed out): their late answers are
    // consumed here, not passed on. Bounded: the oldest go first.
    /** @type {Set<string|number>} */
    this.ignored = new Set();
  }

  /**
   * Stops waiting for a request: its promise never settles, its answer
   * (if one comes) is consumed.
   * @param {string|number} id
   */
  ignore(id) {
    this.pending.delete(id);
    this.ignored.add(id);
    if (this.ignored.size > 1024) this.ignored.delete(this.ignored.values().next().value);
  }

  /**
   * Builds a request and registers its promise (the engine times it).
   * @param {string} method
   * @param {object|undefined} params
   * @returns {{message: object, promise: Promise<object>}}
   */
  create(method, params) {
    const id = `${this.prefix}${this.next++}`;
    const message = { jsonrpc: '2.0', id, method };
    if (params !== undefined) message.params = params;
    const promise = new Promise((resolve, reject) => this.pending.set(id, { method, resolve, reject }));
    return { message, promise };
  }

  /**
   * Settles the request this message answers: its result, an RpcError, or
   * a RequestInDoubtError when the engine says the answer cannot come.
   * @param {object} msg a parsed inbound message
   * @param {string} [answerKind] set when the engine made the answer
   * @returns {boolean} true if it was an answer to one of ours
   */
  handle(msg, answerKind) {
    if (!msg || typeof msg !== 'object' || msg.method !== undefined || msg.id === undefined) return false;
    const entry = this.pending.get(msg.id);
    if (!entry) return this.ignored.delete(msg.id);
    this.pending.delete(msg.id);
    if (msg.error === undefined) entry.resolve(msg.result);
    // The engine's answer for a request whose answer cannot come (the
    // server failed under it): in doubt or cancelled, on stdio and HTTP alike.
    else if (binding.inDoubtKinds.includes(answerKind)) {
      entry.reject(new RequestInDoubtError(entry.method, answerKind, msg.error.message, msg.error.code));
    } else entry.reject(new RpcError(msg.error, answerKind));
    return true;
  }

  /**
   * Forgets a request without settling it: a request that was never sent
   * leaves no rejection nobody awaits. Idempotent.
   * @param {string|number} id
   */
  cancel(id) {
    this.pending.delete(id);
  }

  /**
   * Rejects every pending request.
   * @param {Error} err
   */
  failAll(err) {
    for (const [id, entry] of this.pending) {
      this.pending.delete(id);
      entry.reject(err);
    }
  }
}

/** The engine's own answer to a request that passed its deadline. */
function timedOutByEngine(err) {
  return err instanceof RpcError && err.answerKind === 'timeout';
}

/**
 * A request's JSON text, as sent: on a 2026-07-28 session (modern) every
 * request carries the _meta envelope (C writes it). Throws for params
 * JSON cannot carry (a BigInt, a cycle, NaN).
 * @param {object} message @param {boolean} modern @returns {string}
 */
function requestText(message, modern) {
  const text = check.json(message);
  return modern ? binding.envelope(text) : text;
}

module.exports = { RpcRequester, RpcError, timedOutByEngine, requestText };
