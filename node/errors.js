'use strict';
/**
 * Typed errors. A ping settles with exactly one of these or its RTT, so
 * callers can tell "the peer is slow" from "the peer said no" from "the peer
 * cannot ping" without parsing messages. The sentences a peer gave no words
 * for are C's (mcpping/rules.h).
 */
const { format } = require('node:util');
const native = require('./binding');

/** Base class of every error mcpping raises. */
class McppError extends Error {
  /**
   * @param {string} message
   * @param {{code?: string|number, errno?: number, cause?: unknown}} [opts]
   */
  constructor(message, opts = {}) {
    super(message, opts.cause === undefined ? undefined : { cause: opts.cause });
    this.name = this.constructor.name;
    if (opts.code !== undefined) this.code = opts.code;
    if (opts.errno !== undefined) this.errno = opts.errno;
  }
}

/** The peer did not answer the ping within its timeout. */
class PingTimeoutError extends McppError {
  /** @param {number} timeoutMs */
  constructor(timeoutMs) {
    super(format(native.pingTimeoutFormat, timeoutMs), { code: 'PING_TIMEOUT' });
    this.timeoutMs = timeoutMs;
  }
}

/** The peer answered the ping with a JSON-RPC error. `code` is its code. */
class PingError extends McppError {
  /** @param {number} code @param {string} message */
  constructor(code, message) {
    super(format(native.pingErrorFormat, code, message), { code });
    this.rpcMessage = message;
  }
}

/** The peer's pong had no `result` object. */
class PingInvalidError extends McppError {
  /** @param {string} [message] */
  constructor(message) {
    super(message || native.pingInvalidMessage, { code: 'PING_INVALID' });
  }
}

/**
 * The peer does not support ping (-32601/-32602, or a protocol version
 * without ping). The connection stays usable; the peer is not dead.
 */
class PingUnsupportedError extends McppError {
  /** @param {number|null} code @param {string} [message] */
  constructor(code, message) {
    const text = message || native.pingUnsupportedMessage;
    super(code === null ? text : format(native.pingErrorFormat, code, text), { code: 'PING_UNSUPPORTED' });
    this.rpcCode = code;
    this.rpcMessage = text;
  }
}

/** The connection is closed or closing. */
class ClosedError extends McppError {
  /**
   * @param {string|null} [message] a call still waiting when the connection
   *   closed says the close's reason, as C words it; else C's sentence
   */
  constructor(message) {
    super(message || native.connectionClosedText, { code: 'MCPP_ERR_CLOSED' });
  }
}

/**
 * The server failed while this request was in flight (reconnect). mcpping
 * never sends it again: `disposition` is 'in_doubt' when it may have run
 * (a tools/call: check before retrying), 'cancelled' when it is known to
 * have no side effects.
 */
class RequestInDoubtError extends McppError {
  /**
   * @param {string} method
   * @param {'in_doubt'|'cancelled'} disposition
   * @param {string} message the engine's answer's sentence
   * @param {number|null} [rpcCode] the engine's answer's JSON-RPC code (-32003)
   */
  constructor(method, disposition, message, rpcCode = null) {
    super(`${method}: ${message}`, { code: 'MCPP_REQUEST_IN_DOUBT' });
    this.method = method;
    this.disposition = disposition;
    this.rpcCode = rpcCode;
    this.rpcMessage = message;
  }
}

/**
 * Builds an McppError for a native MCPP_ERR_* code.
 * @param {object} binding the addon
 * @param {number} err negative MCPP_ERR_* code
 * @param {string} [detail]
 */
function fromCode(binding, err, detail) {
  const name = binding.errname(err);
  if (name === 'MCPP_ERR_CLOSED' || name === 'MCPP_ERR_NOT_FOUND') return new ClosedError(detail);
  if (name === 'MCPP_ERR_UNSUPPORTED') return new PingUnsupportedError(null, detail);
  return new McppError(detail || binding.strerror(err), { code: name, errno: err });
}

module.exports = {
  McppError,
  PingTimeoutError,
  PingError,
  PingInvalidError,
  PingUnsupportedError,
  ClosedError,
  RequestInDoubtError,
  fromCode,
};
