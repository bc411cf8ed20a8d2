'use strict';
/**
 * Peer: an MCP server spawned over stdio and watched by mcpping. Pings are
 * answered and timed in C (by the runtime's loop: on this thread in host
 * mode, on the native thread while it is busy or in thread mode); this
 * object reports what happened as EventEmitter events named as in
 * docs/design.md.
 */
const { ConnOwner } = require('./conn_owner');
const { Hold, binding } = require('./runtime');
const { RpcRequester, RpcError, timedOutByEngine, requestText } = require('./rpc');
const { childEnvironment } = require('./settings');
const { ClosedError } = require('./errors');
const check = require('./validate');
const { emitSafely } = require('./isolate');
const { runHandshake } = require('./handshake');

const PROTOCOL_VERSION = binding.PROTOCOL_VERSION;

/**
 * @typedef {object} ServerParams
 * @property {string} command program, looked up in PATH
 * @property {string[]} [args]
 * @property {Record<string,string>} [env] added to our environment
 * @property {string} [cwd]
 * @property {'inherit'|'pipe'|'ignore'} [stderr] default 'inherit'
 */

class Peer extends ConnOwner {
  /**
   * Use mcpping.connect() instead.
   * @param {ServerParams} params
   * @param {object} [options]
   */
  constructor(params, options) {
    super();
    check.serverParams('connect', params);
    check.knownKeys('params', params, check.SERVER_PARAMS);
    options = check.options('options', options);
    check.knownKeys('options', options, CONNECT_OPTIONS);
    check.ofType('options.inheritEnv', options.inheritEnv, 'boolean');
    this.keepalive = check.keepaliveOptions(options.keepalive);
    check.optional('options.maxPendingBytes', 'max_pending_bytes', options.maxPendingBytes);
    check.optional('options.maxLineBytes', 'max_line_bytes', options.maxLineBytes);
    /** The reconnect policy in force, null when a failed server closes the connection. */
    this.reconnect = check.reconnectOptions(options.reconnect) || null;
    this.recordTo(options.records);
    this.rpc = new RpcRequester('mcpping-');
    this.serverInfo = null;
    this.protocolVersion = null;
    this.modern = false; // a 2026-07-28 session: requests carry the envelope
    this.capabilities = null;
    this.closeInfo = null;
    this.keepaliveHold = new Hold();
    const env = childEnvironment(params.env, options.inheritEnv !== false);
    const settings = { ...this.keepalive };
    // The line cap is a connection option too (keepalive.maxLineBytes is its older spelling).
    if (options.maxLineBytes !== undefined) settings.maxLineBytes = options.maxLineBytes;
    this.spawn({ ...params, env, probe: options.probe, reconnect: this.reconnect,
      maxPendingBytes: options.maxPendingBytes }, settings);
    // Only a keepalive asked for holds the process open; the default one
    // (the settings table's policy) watches without keeping it alive.
    this.holdsProcess = options.keepalive != null && options.keepalive.intervalMs > 0;
    if (this.holdsProcess) this.keepaliveHold.take();
  }

  /**
   * @returns {object} counters, state and health from the engine, plus RTT
   *   figures (rtt) and lossPct over this peer's pings, manual and keepalive
   */
  get stats() {
    const info = this.conn.info();
    if (!info) return { state: 'closed', healthy: false, ...this.rttStats.fields() };
    // The runtime leaves strings out of its info; they are known here.
    if (info.protocolVersion === null) info.protocolVersion = this.protocolVersion;
    if (info.peerName === null) info.peerName = this.name;
    return Object.assign(info, this.rttStats.fields());
  }

  /** @returns {number|null} the server's process id, null once closed */
  get pid() {
    return this.conn.pid();
  }

  /** @returns {number} the connection's id in the runtime */
  get id() {
    return this.conn.id;
  }

  /** @returns {string|null} serverInfo.name once known */
  get name() {
    return this.serverInfo && typeof this.serverInfo.name === 'string' ? this.serverInfo.name : null;
  }

  /** Keeps the process alive while this peer runs keepalive (the default). */
  ref() {
    if (!this.closeInfo && this.holdsProcess) this.keepaliveHold.take();
    return this;
  }

  /** Lets the process exit even though this peer runs keepalive. */
  unref() {
    this.keepaliveHold.release();
    return this;
  }

  /**
   * Sends a JSON-RPC request and resolves with its result. The engine
   * times it: past timeoutMs it sends notifications/cancelled (never for
   * initialize) and this rejects with the engine's JSON-RPC error (an
   * RpcError, code -32001); an abort through `signal` cancels it the same
   * way and rejects with the signal's reason. Either way the request
   * leaves the in-flight ledger.
   * @param {string} method
   * @param {object} [params]
   * @param {{timeoutMs?: number, signal?: AbortSignal}} [opts] timeoutMs
   *   default 30000 (C's); 0 for none of its own (keepalive.requestTimeoutMs
   *   applies if set)
   * @returns {Promise<unknown>}
   */
  async request(method, params, opts) {
    requestArgs(method, params);
    const o = check.options('request options', opts);
    check.knownKeys('options', o, check.PING_KEYS);
    const timeoutMs = check.optional('timeoutMs', 'request_timeout_ms', o.timeoutMs, binding.requestTimeoutMs);
    check.abortSignal('signal', o.signal);
    const { signal } = o;
    if (signal && signal.aborted) throw signal.reason;
    const { message, promise } = this.rpc.create(method, params);
    const hold = new Hold();
    hold.take();
    let onAbort = null;
    try {
      // Inside the try: params JSON cannot carry (a BigInt, a cycle) throw
      // here, and the finally forgets the request (its promise rejected at
      // close, with nobody awaiting it, crashed the process).
      const text = requestText(message, this.modern);
      this.conn.send(text, timeoutMs);
      if (!signal) return await promise;
      const aborted = new Promise((resolve, reject) => {
        onAbort = () => {
          this.rpc.ignore(message.id);
          this.conn.abandon(text, JSON.stringify(message.id));
          reject(signal.reason);
        };
        signal.addEventListener('abort', onAbort, { once: true });
      });
      return await Promise.race([promise, aborted]);
    } catch (err) {
      // The engine gave up on it: a late answer is not the application's.
      if (timedOutByEngine(err)) this.rpc.ignore(message.id);
      throw err;
    } finally {
      if (onAbort) signal.removeEventListener('abort', onAbort);
      this.rpc.cancel(message.id);
      hold.release();
    }
  }

  /**
   * Sends one JSON-RPC message as it is: the answer to a server's request
   * (the 'request' event), say. An object goes as its JSON; a string must
   * be its JSON text, one line. Never dropped or reordered: while the
   * server does not keep up it waits here, in order ('drain' when handed over).
   * @param {object|string} message
   */
  send(message) {
    if (typeof message !== 'string' && (message === null || typeof message !== 'object' || Array.isArray(message))) {
      throw check.invalid(TypeError, `message must be an object or its JSON text, not ${check.shown(message)}`);
    }
    this.conn.send(typeof message === 'string' ? message : check.json(message));
  }

  /**
   * Sends a JSON-RPC notification.
   * @param {string} method
   * @param {object} [params]
   */
  notify(method, params) {
    requestArgs(method, params);
    const message = { jsonrpc: '2.0', method };
    if (params !== undefined) message.params = params;
    this.conn.send(check.json(message));
  }

  /**
   * The MCP handshake, the C core's (handshake.js): `initialize` first; a
   * server that refuses it is asked `server/discover` (protocol 2026-07-28:
   * no handshake, no ping), and one that lists 2026-07-28 gives that
   * session and its discover result. Otherwise rejects with McppError code
   * 'HANDSHAKE' (one sentence from C, its `kind`).
   * @param {{timeoutMs?: number}} [opts]
   * @returns {Promise<object>} the initialize (or server/discover) result
   */
  async initialize(opts) {
    const o = check.options('initialize options', opts);
    check.knownKeys('options', o, ['timeoutMs']);
    const timeoutMs = check.optional('timeoutMs', 'request_timeout_ms', o.timeoutMs, binding.initializeTimeoutMs);
    const out = await runHandshake({
      request: (method, params, left) => this.request(method, params, { timeoutMs: left }),
      notify: (method) => this.notify(method),
      timeoutMs,
      isTimeout: timedOutByEngine,
      isLost: (err) => !(err instanceof RpcError),
      unreadable: () => this.conn.unreadable()[1] || null,
      // A request can fail closed before the closed item reaches this
      // thread (the runtime's thread saw the exit first: thread mode), so
      // wait for the item to word the close.
      closedWhy: async (err) => {
        if (!(err instanceof ClosedError)) return null;
        const info = this.closeInfo || await this.conn.close();
        return [info.reason, info.exitStatus, info.termSignal];
      },
      done: (o) => {
        this.serverInfo = o.serverInfo;
        this.protocolVersion = o.version;
        this.modern = o.modern;
        this.capabilities = isObject(o.result.capabilities) ? o.result.capabilities : null;
      },
    });
    return out.result;
  }

  /**
   * Closes the connection: the server's process group is terminated and
   * reaped. Resolves once it is gone.
   * @returns {Promise<object>} close info ({reason, exitStatus, termSignal, ...})
   */
  close() {
    return this.conn.close();
  }

  // ---- ConnOwner: called by NativeConn on the JavaScript thread.

  /** @param {string} text @param {string} [answerKind] set when the engine made it ('timeout', ...) */
  onMessage(text, answerKind) {
    let msg;
    try {
      msg = JSON.parse(text);
    } catch {
      emitSafely(this, 'invalid_message', text);
      return;
    }
    if (this.rpc.handle(msg, answerKind)) return;
    if (msg && typeof msg.method === 'string' && msg.id !== undefined && msg.id !== null) {
      // A request we do not serve (pings never get here: answered in C).
      if (this.listenerCount('request') > 0) {
        emitSafely(this, 'request', msg);
      } else {
        const answer = binding.unservedRequestAnswer(text); // -32601, the id as the server wrote it
        try {
          if (answer !== null) this.conn.send(answer);
        } catch {
          // Closing: nothing to answer.
        }
      }
      return;
    }
    emitSafely(this, 'message', msg);
  }

  /** @param {object} ev */
  onEvent(ev) {
    this._state = ev.state; // rttStats counted it in C already (feedRtt)
    if (ev.type === 'closed') return; // emitted with the close info, last
    if (ev.type === 'reconnected') {
      // The replayed handshake's answer is not delivered again: the
      // session it opened is read from the engine.
      const info = this.conn.info();
      if (info && info.protocolVersion) this.protocolVersion = info.protocolVersion;
    }
    emitSafely(this, ev.type, ev);
  }

  /** Everything queued while the server was behind has been handed over. */
  onDrain() {
    this.emit('drain');
  }

  /** @param {Buffer} chunk */
  onStderr(chunk) {
    emitSafely(this, 'stderr', chunk);
  }

  /** @param {object} info */
  onClosed(info) {
    this._state = 'closed';
    this.closeInfo = info;
    this.keepaliveHold.release();
    this.rpc.failAll(new ClosedError(info.reason));
    this.records.close();
    emitSafely(this, 'closed', info);
  }
}

/** connect()'s and Peer's options (ConnectOptions, index.d.ts): a misspelt one throws, never ignored. */
const CONNECT_OPTIONS = ['keepalive', 'records', 'initialize', 'initializeTimeoutMs', 'inheritEnv', 'probe',
  'maxPendingBytes', 'maxLineBytes', 'reconnect'];

/**
 * Spawns an MCP server over stdio, performs the handshake (unless
 * `initialize: false`) and starts keepalive if asked.
 * @param {ServerParams} params
 * @param {{keepalive?: object, records?: string|Function|object,
 *          initialize?: boolean, initializeTimeoutMs?: number,
 *          inheritEnv?: boolean, probe?: string|null}} [options]
 *   probe: the idle probe keepalive sends where ping is not available:
 *   'auto' (server/discover on 2026-07-28 sessions, tools/list on servers
 *   that refuse ping), a method name, or null/'' for none
 * @returns {Promise<Peer>}
 */
async function connect(params, options) {
  const o = check.options('options', options);
  check.ofType('options.initialize', o.initialize, 'boolean');
  const initializeTimeoutMs = check.optional('options.initializeTimeoutMs', 'request_timeout_ms', o.initializeTimeoutMs, binding.initializeTimeoutMs);
  const peer = new Peer(params, o);
  if (o.initialize === false) return peer;
  try {
    await peer.initialize({ timeoutMs: initializeTimeoutMs });
  } catch (err) {
    await peer.close();
    throw err; // initialize()'s own error: C's sentence, as Python's connect raises it
  }
  return peer;
}

/** @param {unknown} v @returns {boolean} a plain JSON object */
function isObject(v) {
  return v !== null && typeof v === 'object' && !Array.isArray(v);
}

/**
 * A JSON-RPC method name and params (an object or array, or none).
 * @param {unknown} method
 * @param {unknown} params
 */
function requestArgs(method, params) {
  if (typeof method !== 'string' || method === '') {
    throw check.invalid(TypeError, `method must be a non-empty string, not ${check.shown(method)}`);
  }
  if (params !== undefined && (params === null || typeof params !== 'object')) {
    throw check.invalid(TypeError, `params must be an object or an array, not ${check.shown(params)}`);
  }
}

module.exports = { Peer, connect, PROTOCOL_VERSION };
