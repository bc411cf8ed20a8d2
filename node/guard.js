'use strict';
/**
 * guard(transport, {role, keepalive}): wraps any SDK Transport (stdio,
 * Streamable HTTP, in-memory, ...) with the mcpping engine as middleware.
 * The returned object is itself a Transport: give it to Client.connect or
 * Server.connect instead of the inner one. Pings from the peer are
 * answered by the engine and never reach the SDK session; keepalive pings
 * go out through the inner transport; everything else passes unchanged.
 */
const { EventEmitter } = require('node:events');
const { EngineDriver } = require('./engine_driver');
const check = require('./validate');
const { emitSafely, reportError, callUser } = require('./isolate');

const binding = require('./binding');

/** mcpping.h: closed because the peer went stale (MCPP_ERRNO_MAP). */
const { MCPP_ERR_STALE } = binding.errorCodes;
/** Every engine event's name (C's mcpp_event_name), forwarded as the engine driver emits it. */
const EVENT_NAMES = binding.eventNames().type;

class GuardedTransport extends EventEmitter {
  /**
   * @param {object} inner an SDK Transport
   * @param {{role?: 'client'|'server', keepalive?: object, records?: string|Function|object,
   *          transport?: 'stdio'|'streamable-http'|'custom', peerName?: string,
   *          probe?: string|null}} [options]
   *   probe: the idle probe on sessions without ping ('auto', a method name, null for none)
   */
  constructor(inner, options) {
    super();
    if (!inner || typeof inner.send !== 'function' || typeof inner.start !== 'function' || typeof inner.close !== 'function') {
      throw check.invalid(TypeError, 'guard: expected an SDK Transport (start, send, close)');
    }
    options = check.options('guard options', options);
    check.knownKeys('options', options, ['role', 'keepalive', 'records', 'transport', 'peerName', 'probe']);
    check.ofType('options.peerName', options.peerName, 'string');
    this.inner = inner;
    /** @type {(() => boolean)|null} set by SessionReaper: whether a ping can reach the peer now */
    this.reachable = null;
    this.role = options.role == null ? 'client' : check.setting('options.role', 'role', options.role);
    /** @type {((message: object, extra?: object) => void)|undefined} */
    this.onmessage = undefined;
    /** @type {(() => void)|undefined} */
    this.onclose = undefined;
    /** @type {((error: Error) => void)|undefined} */
    this.onerror = undefined;
    this.driver = new EngineDriver({
      role: this.role,
      transport: options.transport == null ? detectTransport(inner) : check.setting('options.transport', 'transport', options.transport),
      keepalive: options.keepalive,
      peerName: options.peerName,
      probe: options.probe,
      records: options.records,
      write: (frame, kind) => this.writeEngineFrame(frame, kind),
      deliver: (frame) => this.deliverSynthetic(frame),
      // The stale policy is the C core's (mcpp_engine_should_close): close
      // unless onStale is 'report', and always once the process is gone.
      onMustClose: (ev) => this.closeStale(ev),
    });
    // Re-emit the engine's events from the transport object.
    for (const name of [...EVENT_NAMES, 'record']) {
      this.driver.on(name, (ev) => emitSafely(this, name, ev));
    }
    // What the driver could not deliver (a record sink that throws) is ours to report.
    this.driver.on('error', (err) => reportError(this, err));
    inner.onmessage = (message, extra) => this.onInnerMessage(message, extra);
    inner.onclose = () => this.onInnerClose();
    inner.onerror = (err) => {
      if (this.onerror) this.onerror(err);
    };
  }

  /** @returns {string|undefined} the inner transport's session id */
  get sessionId() {
    return this.inner.sessionId;
  }

  /** @returns {'alive'|'suspect'|'stale'|'closed'} */
  get state() {
    return this.driver.state;
  }

  /** @returns {object} engine counters, state and health, plus RTT figures (rtt) and lossPct */
  get stats() {
    return this.driver.stats;
  }

  /** Starts the inner transport. */
  async start() {
    await this.inner.start();
  }

  /**
   * Sends an application message through the inner transport.
   * @param {object} message
   * @param {object} [options] TransportSendOptions, passed through
   */
  async send(message, options) {
    this.driver.observeOutbound(JSON.stringify(message));
    this.syncSession();
    await this.inner.send(message, options);
    this.syncSession();
  }

  /** Closes the inner transport (onclose follows from it). */
  async close() {
    await this.inner.close();
    if (!this.driver.closed) this.onInnerClose();
  }

  /** @param {string} version */
  setProtocolVersion(version) {
    if (typeof this.inner.setProtocolVersion === 'function') this.inner.setProtocolVersion(version);
  }

  /**
   * Pings the peer through the inner transport.
   * @param {{timeoutMs?: number, signal?: AbortSignal}} [opts]
   * @returns {Promise<number>} RTT in ms
   */
  ping(opts) {
    return this.driver.ping(opts);
  }

  // ---- internals


  onInnerMessage(message, extra) {
    this.syncSession();
    if (!this.driver.recv(JSON.stringify(message))) return;
    if (this.onmessage) this.onmessage(message, extra);
  }

  onInnerClose() {
    if (!this.driver.closed) this.driver.close(binding.transportClosedReason);
    if (this.onclose) {
      const cb = this.onclose;
      this.onclose = undefined;
      callUser(this, cb, this, []);
    }
  }

  /**
   * Writes a frame the engine produced (our ping, our pong, a cancel).
   * @param {string} frame
   * @param {number} kind
   */
  writeEngineFrame(frame, kind) {
    if (kind === binding.frameKinds.ping && this.reachable && !this.reachable()) {
      // Nothing would carry this ping to the peer: it is answered
      // "unsupported" here (C's answer, soon, outside the engine's
      // callback), so keepalive stops and the peer is never convicted for it.
      const answer = binding.pingUnreachableAnswer(frame);
      setImmediate(() => this.driver.recv(answer));
      return;
    }
    const message = JSON.parse(frame);
    // A pong answers a request: on HTTP servers it must go back on the
    // stream of that request.
    const options = kind === binding.frameKinds.pong ? { relatedRequestId: message.id } : undefined;
    this.inner.send(message, options).catch((err) => {
      if (this.onerror) this.onerror(err);
    });
  }

  /**
   * Ends a stale session: the engine reports it closed (MCPP_ERR_STALE), the
   * inner transport is closed, and the SDK session above gets onclose.
   * @param {object} ev the stale event
   */
  closeStale(ev) {
    if (this.driver.closed) return;
    this.driver.close(this.driver.staleReason(), MCPP_ERR_STALE);
    this.inner.close().then(
      () => this.onInnerClose(),
      (err) => {
        if (this.onerror) this.onerror(err);
        this.onInnerClose();
      },
    );
  }

  /** @param {string} frame a synthetic error for a timed-out app request */
  deliverSynthetic(frame) {
    // Inside the engine's callback: what the SDK throws is reported, not thrown into it.
    if (this.onmessage) callUser(this, this.onmessage, this, [JSON.parse(frame)]);
  }

  syncSession() {
    const sid = this.inner.sessionId;
    if (sid && sid !== this.lastSessionId) {
      this.lastSessionId = sid;
      this.driver.setSessionId(sid);
    }
  }
}

/** @returns {'stdio'|'streamable-http'|'custom'} a guess from the class name */
function detectTransport(inner) {
  const name = inner && inner.constructor ? inner.constructor.name : '';
  if (/StreamableHTTP/i.test(name)) return 'streamable-http';
  if (/Stdio/i.test(name)) return 'stdio';
  return 'custom';
}

/**
 * Wraps an SDK Transport with the mcpping engine.
 * @param {object} transport
 * @param {{role?: 'client'|'server', keepalive?: object, records?: string|Function|object}} [options]
 * @returns {GuardedTransport}
 */
function guard(transport, options) {
  return new GuardedTransport(transport, options);
}

module.exports = { guard, GuardedTransport };
