'use strict';
/**
 * StdioClientTransport: the official SDK's Transport interface over the
 * native runtime, so `client.connect(transport)` works unchanged while pings
 * (the server's and ours) are answered and timed in C, even while the
 * JavaScript thread is busy.
 */
const { PassThrough } = require('node:stream');
const { ConnOwner } = require('./conn_owner');
const { Hold } = require('./runtime');
const { childEnvironment } = require('./settings');
const { McppError, ClosedError } = require('./errors');
const check = require('./validate');
const { emitSafely, callUser } = require('./isolate');

/**
 * A program the OS would not start, as child_process reports it ('spawn X
 * ENOENT', code 'ENOENT', errno -2, syscall, path, spawnargs), which is what
 * the SDK's own transport rejects with; mcpping's McppError is its cause.
 * @param {import('./errors').McppError & {osCode: string, osErrno: number}} err
 * @param {{command: string, args?: string[]}} params
 */
function spawnError(err, params) {
  const e = new Error(`spawn ${params.command} ${err.osCode}`, { cause: err });
  Object.assign(e, { errno: err.osErrno, code: err.osCode, syscall: `spawn ${params.command}`,
    path: params.command, spawnargs: params.args || [] });
  return e;
}

/** StdioClientTransport's options (index.d.ts): a misspelt one throws, never ignored. */
const TRANSPORT_OPTIONS = ['keepalive', 'records', 'probe', 'requestTimeoutMs', 'maxPendingBytes', 'reconnect'];

class StdioClientTransport extends ConnOwner {
  /**
   * @param {{command: string, args?: string[], env?: Record<string,string>,
   *          cwd?: string, stderr?: 'inherit'|'pipe'|'ignore'}} params as the SDK's
   *   StdioServerParameters; env is added to the SDK's safe default subset
   * @param {{keepalive?: object, records?: string|Function|object, probe?: string|null,
   *          requestTimeoutMs?: number, maxPendingBytes?: number}} [options]
   *   probe: the idle probe on sessions without ping ('auto', a method name, null for none).
   *   requestTimeoutMs: the engine's deadline for every request the SDK
   *   sends (0 or absent: none); past it the server gets
   *   notifications/cancelled and the SDK a -32001 error answer.
   *   maxPendingBytes: backpressure per connection (default 16 MiB).
   *   reconnect: respawn a server that fails, under the same Client (see
   *   connect()'s reconnect option); default off.
   */
  constructor(params, options) {
    super();
    check.serverParams('StdioClientTransport', params);
    options = check.options('options', options);
    check.knownKeys('options', options, TRANSPORT_OPTIONS);
    // Checked now, so a bad option throws here, not in start().
    check.keepaliveOptions(options.keepalive);
    check.optional('options.requestTimeoutMs', 'request_timeout_ms', options.requestTimeoutMs, 0);
    check.optional('options.maxPendingBytes', 'max_pending_bytes', options.maxPendingBytes);
    this.reconnect = check.reconnectOptions(options.reconnect) || null;
    this.params = params;
    this.options = options;
    this.recordTo(options.records);
    this._stderr = params.stderr === 'pipe' ? new PassThrough() : null;
    // Like the SDK's child-process transport, an open transport keeps the
    // process alive; unref() opts out.
    this.openHold = new Hold();
    this.wantRef = true;
    /** @type {((message: object, extra?: object) => void)|undefined} */
    this.onmessage = undefined;
    /** @type {(() => void)|undefined} */
    this.onclose = undefined;
    /** @type {((error: Error) => void)|undefined} */
    this.onerror = undefined;
    this.sessionId = undefined;
  }

  /** Spawns the server. Call once (Client.connect calls it). */
  async start() {
    if (this.conn) {
      throw new Error('StdioClientTransport already started! If using Client class, note that connect() calls start() automatically.');
    }
    const env = childEnvironment(this.params.env, false);
    try {
      const settings = { ...this.options.keepalive };
      if (this.options.requestTimeoutMs) settings.requestTimeoutMs = this.options.requestTimeoutMs;
      this.spawn({ ...this.params, stderr: this.params.stderr || 'inherit', env, probe: this.options.probe,
        reconnect: this.reconnect, maxPendingBytes: this.options.maxPendingBytes }, settings);
    } catch (caught) {
      const err = caught.osCode ? spawnError(caught, this.params) : caught;
      if (this.onerror) this.onerror(err);
      throw err;
    }
    if (this.wantRef) this.openHold.take();
  }

  /**
   * Sends one JSON-RPC message.
   * @param {object} message
   */
  async send(message) {
    if (!this.conn || this.conn.closed) throw new ClosedError('Not connected');
    // Backpressure: while the server is behind, the next send waits.
    if (!this.conn.send(JSON.stringify(message))) await this.conn.drained();
  }

  /** Closes the connection; resolves once the server is reaped. */
  async close() {
    if (!this.conn) return;
    await this.conn.close();
  }

  /**
   * Protocol version negotiated by the SDK. The engine learns it itself
   * from the handshake passing through (initialize or server/discover):
   * info() shows it as protocolVersion, with the server's name as peerName.
   */
  setProtocolVersion(version) {
    this.protocolVersion = version;
  }

  /** @returns {object|null} the engine's live counters, state and session; null before start and once closed */
  info() {
    return this.conn ? this.conn.info() : null;
  }

  /**
   * The server's process id (its process group id too), as the SDK's
   * transport exposes it; null before start and once closed.
   * @returns {number|null}
   */
  get pid() {
    return this.conn ? this.conn.pid() : null;
  }

  /** @returns {import('node:stream').PassThrough|null} server stderr when stderr: 'pipe' */
  get stderr() {
    return this._stderr;
  }

  /** @returns {object} engine counters and state, plus RTT figures (rtt) and lossPct */
  get stats() {
    const info = this.conn ? this.conn.info() : null;
    return Object.assign(info || { state: this._state, healthy: false }, this.rttStats.fields());
  }

  /** Keeps the process alive while the transport is open (default). */
  ref() {
    this.wantRef = true;
    if (this.conn && !this.conn.closed) this.openHold.take();
    return this;
  }

  /** Lets the process exit while the transport is open. */
  unref() {
    this.wantRef = false;
    this.openHold.release();
    return this;
  }

  // ---- ConnOwner

  /** @param {string} text */
  onMessage(text) {
    let message;
    try {
      message = JSON.parse(text);
    } catch (err) {
      if (this.onerror) this.onerror(new McppError(`invalid JSON from server: ${err.message}`, { code: 'PARSE' }));
      return;
    }
    if (!message || typeof message !== 'object' || message.jsonrpc !== '2.0') {
      if (this.onerror) this.onerror(new McppError('not a JSON-RPC 2.0 message', { code: 'PARSE' }));
      return;
    }
    if (this.onmessage) callUser(this, this.onmessage, this, [message]);
  }

  /** @param {object} ev */
  onEvent(ev) {
    this._state = ev.state; // rttStats counted it in C already (feedRtt)
    if (ev.type === 'closed') return;
    emitSafely(this, ev.type, ev);
  }

  /** @param {Buffer} chunk */
  onStderr(chunk) {
    if (this._stderr) this._stderr.write(chunk);
  }

  /** @param {object} info */
  onClosed(info) {
    this._state = 'closed';
    this.openHold.release();
    this.records.close();
    if (this._stderr) this._stderr.end();
    emitSafely(this, 'closed', info);
    if (this.onclose) callUser(this, this.onclose, this, []);
  }
}

module.exports = { TRANSPORT_OPTIONS, StdioClientTransport };
