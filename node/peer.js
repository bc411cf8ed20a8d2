'use strict';
/**
 * Peer: an MCP server spawned over stdio and watched by mcpping. Pings are
 * answered and timed on the native I/O thread; this object reports what
 * happened as EventEmitter events named as in docs/design.md.
 */
const { EventEmitter } = require('node:events');
const { NativeConn } = require('./native_conn');
const { Hold } = require('./runtime');
const { RpcRequester } = require('./rpc');
const { makeRecordSink } = require('./records');
const { RttStats } = require('./rtt_stats');
const { childEnvironment } = require('./settings');
const { McppError, ClosedError } = require('./errors');
const { version } = require('../package.json');

const PROTOCOL_VERSION = '2025-11-25';

/**
 * @typedef {object} ServerParams
 * @property {string} command program, looked up in PATH
 * @property {string[]} [args]
 * @property {Record<string,string>} [env] added to our environment
 * @property {string} [cwd]
 * @property {'inherit'|'pipe'|'ignore'} [stderr] default 'inherit'
 */

class Peer extends EventEmitter {
  /**
   * Use mcpping.connect() instead.
   * @param {ServerParams} params
   * @param {object} [options]
   */
  constructor(params, options = {}) {
    super();
    this.keepalive = options.keepalive || {};
    this.records = makeRecordSink(options.records);
    this.rpc = new RpcRequester('mcpping-');
    this._state = 'alive';
    this.serverInfo = null;
    this.protocolVersion = null;
    this.capabilities = null;
    this.closeInfo = null;
    this.keepaliveHold = new Hold();
    this.rttStats = new RttStats();
    const env = childEnvironment(params.env, options.inheritEnv !== false);
    this.conn = new NativeConn({ ...params, env, probe: options.probe }, this.keepalive, this);
    if (this.keepalive.intervalMs > 0) this.keepaliveHold.take();
  }

  /** @returns {'alive'|'suspect'|'stale'|'closed'} */
  get state() {
    return this._state;
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
    if (!this.closeInfo && this.keepalive.intervalMs > 0) this.keepaliveHold.take();
    return this;
  }

  /** Lets the process exit even though this peer runs keepalive. */
  unref() {
    this.keepaliveHold.release();
    return this;
  }

  /**
   * Pings the server.
   * @param {{timeoutMs?: number, signal?: AbortSignal}} [opts]
   * @returns {Promise<number>} the round-trip time in ms
   */
  async ping(opts = {}) {
    const ev = await this.conn.ping(opts.timeoutMs, opts.signal);
    return ev.rttUs / 1000;
  }

  /**
   * Sends a JSON-RPC request and resolves with its result.
   * @param {string} method
   * @param {object} [params]
   * @param {{timeoutMs?: number}} [opts] default 60000; 0 for none
   * @returns {Promise<unknown>}
   */
  async request(method, params, opts = {}) {
    const timeoutMs = opts.timeoutMs === undefined ? 60000 : opts.timeoutMs;
    const { message, promise } = this.rpc.create(method, params, timeoutMs);
    const hold = new Hold();
    hold.take();
    try {
      // A closed or closing peer throws ClosedError here; cancel() in the
      // finally clears the timer of the request that never went out.
      this.conn.send(JSON.stringify(message));
      return await promise;
    } finally {
      this.rpc.cancel(message.id);
      hold.release();
    }
  }

  /**
   * Sends a JSON-RPC notification.
   * @param {string} method
   * @param {object} [params]
   */
  notify(method, params) {
    const message = { jsonrpc: '2.0', method };
    if (params !== undefined) message.params = params;
    this.conn.send(JSON.stringify(message));
  }

  /**
   * The MCP handshake: initialize, then notifications/initialized.
   * @param {{timeoutMs?: number}} [opts]
   */
  async initialize(opts = {}) {
    const result = await this.request(
      'initialize',
      {
        protocolVersion: PROTOCOL_VERSION,
        capabilities: {},
        clientInfo: { name: 'mcpping', version },
      },
      { timeoutMs: opts.timeoutMs === undefined ? 30000 : opts.timeoutMs },
    );
    this.serverInfo = result && result.serverInfo ? result.serverInfo : null;
    this.protocolVersion = result && result.protocolVersion ? result.protocolVersion : null;
    this.capabilities = result && result.capabilities ? result.capabilities : null;
    this.notify('notifications/initialized');
    return result;
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

  /** @param {string} text */
  onMessage(text) {
    let msg;
    try {
      msg = JSON.parse(text);
    } catch {
      this.emit('invalid_message', text);
      return;
    }
    if (this.rpc.handle(msg)) return;
    if (msg && typeof msg.method === 'string' && msg.id !== undefined && msg.id !== null) {
      // A request we do not serve (pings never get here: answered in C).
      if (this.listenerCount('request') > 0) {
        this.emit('request', msg);
      } else {
        const error = { code: -32601, message: 'Method not found' };
        try {
          this.conn.send(JSON.stringify({ jsonrpc: '2.0', id: msg.id, error }));
        } catch {
          // Closing: nothing to answer.
        }
      }
      return;
    }
    this.emit('message', msg);
  }

  /** @param {object} ev */
  onEvent(ev) {
    this._state = ev.state;
    this.rttStats.observe(ev);
    if (ev.type === 'closed') return; // emitted with the close info, last
    this.emit(ev.type, ev);
  }

  /** @param {string} json */
  onRecord(json) {
    this.records.write(json);
    if (this.listenerCount('record') > 0) this.emit('record', JSON.parse(json));
  }

  /** @param {Buffer} chunk */
  onStderr(chunk) {
    this.emit('stderr', chunk);
  }

  /** @param {object} info */
  onClosed(info) {
    this._state = 'closed';
    this.closeInfo = info;
    this.keepaliveHold.release();
    this.rpc.failAll(new ClosedError(`connection closed: ${info.reason}`));
    this.records.close();
    this.emit('closed', info);
  }
}

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
async function connect(params, options = {}) {
  if (!params || typeof params.command !== 'string') {
    throw new TypeError('connect: params.command must be a string');
  }
  const peer = new Peer(params, options);
  if (options.initialize === false) return peer;
  try {
    await peer.initialize({ timeoutMs: options.initializeTimeoutMs });
  } catch (err) {
    await peer.close();
    if (err instanceof McppError && err.code === 'MCPP_ERR_CLOSED') {
      const reason = peer.closeInfo ? peer.closeInfo.reason : 'closed';
      throw new McppError(`handshake failed: ${reason}`, { code: 'HANDSHAKE', cause: err });
    }
    throw new McppError(`handshake failed: ${err.message}`, { code: 'HANDSHAKE', cause: err });
  }
  return peer;
}

module.exports = { Peer, connect, PROTOCOL_VERSION };
