'use strict';
/**
 * Drives the sans-I/O native Engine on the JavaScript thread: the clock,
 * the one timer (re-armed lazily, unref'd unless a manual ping or a
 * request is awaited),
 * the sink that turns engine output into writes, events and records, and
 * manual pings as promises. Used by guard() and the CLI's HTTP session.
 */
const { EventEmitter } = require('node:events');
const { binding } = require('./runtime');
const { toNativeSettings } = require('./settings');
const { outcomeError } = require('./native_conn');
const { makeRecordSink } = require('./records');
const { ClosedError, fromCode } = require('./errors');
const { RttStats } = require('./rtt_stats');
const check = require('./validate');
const { emitSafely, guardSink } = require('./isolate');
const { hub: metricsHub } = require('./metrics');

const SINK_SEND = 0;
const SINK_DELIVER = 1;
const SINK_EVENT = 2;
const SINK_RECORD = 3;
const OUTCOMES = new Set(['pong', 'timeout', 'ping_error', 'unsupported']);

/** @returns {number} monotonic µs, the engine's clock (uv_hrtime) */
function nowUs() {
  return Number(process.hrtime.bigint() / 1000n);
}

class EngineDriver extends EventEmitter {
  /**
   * @param {object} opts
   * @param {'client'|'server'} opts.role
   * @param {'stdio'|'streamable-http'|'custom'} opts.transport
   * @param {object} [opts.keepalive]
   * @param {string} [opts.peerName]
   * @param {string|null} [opts.probe] the idle probe on sessions without ping
   * @param {string|Function|object} [opts.records]
   * @param {(frame: string, kind: number) => void} opts.write writes an engine frame
   * @param {(frame: string, kind: string) => void} [opts.deliver] a synthetic frame for the app and its answer kind ('timeout', 'abandoned', ...)
   * @param {(ev: object) => void} [opts.onMustClose] called with the event (outside any engine call) when
   *   the engine's stale policy says the connection must close
   */
  constructor(opts) {
    super();
    this.write = opts.write;
    this.deliver = opts.deliver || (() => {});
    this.onMustClose = opts.onMustClose || null;
    this.records = guardSink(makeRecordSink(opts.records), this);
    this._state = 'alive';
    this.closed = false;
    /** @type {Map<number, {resolve: Function, reject: Function, timeoutMs: number, signal?: AbortSignal, onAbort?: Function}>} */
    this.pings = new Map();
    /** Requests the application awaits (holdUntil): their deadlines hold the process. */
    this.awaited = 0;
    this.rttStats = new RttStats();
    this.timer = null;
    this.armedAt = Infinity;
    /** The entry of a ping being started, for a pong that arrives synchronously. */
    this.pendingEntry = null;
    this.sink = (kind, a, b) => this.onSink(kind, a, b);
    const settings = toNativeSettings(opts.keepalive, {
      role: opts.role,
      transport: opts.transport,
      peerName: opts.peerName,
      probe: opts.probe,
    });
    this.timeoutMs = settings.timeoutMs || binding.defaultSettings().timeoutMs;
    this.transport = opts.transport || 'custom';
    this.peerName = opts.peerName || null;
    this.engine = new binding.Engine(settings, nowUs(), this.sink);
    // Metrics: the engine counts its events into a C cell (now, or when
    // metrics turn on).
    this.figures = null;
    const self = new WeakRef(this); // a driver dropped unclosed is still collected
    this.countMetrics = () => {
      const d = self.deref();
      const tally = metricsHub.tally;
      if (!d || !tally || d.figures || d.closed) return;
      d.figures = tally.opened((d.info() || {}).peerName || d.peerName, d.transport, d);
      d.engine.setMetrics(d.figures.cell);
    };
    metricsHub.followers.add(this.countMetrics);
    this.countMetrics();
    this.arm();
  }

  /** @returns {object|null} the engine's live counters, null once closed */
  info() {
    return this.engine ? this.engine.info() : null;
  }

  /** @returns {'alive'|'suspect'|'stale'|'closed'} */
  get state() {
    return this._state;
  }

  /** @returns {object} engine info plus health, RTT figures (rtt) and lossPct */
  get stats() {
    if (!this.engine) return { state: 'closed', healthy: false, ...this.rttStats.fields() };
    const info = this.engine.info();
    info.healthy = this.engine.healthy(nowUs());
    return Object.assign(info, this.rttStats.fields());
  }

  /**
   * Feeds one inbound frame.
   * @param {string} frame
   * @returns {boolean} true if the application should get it
   */
  recv(frame) {
    if (this.closed) return true;
    const forward = this.engine.recv(frame, nowUs(), this.sink);
    this.arm();
    return forward;
  }

  /** Bytes that are no message arrived (an SSE comment): proof of life only. */
  touch() {
    if (this.closed) return;
    this.engine.touch(nowUs(), this.sink);
    this.arm();
  }

  /**
   * False while the peer cannot be heard or reached through no fault of its
   * own: no keepalive ping goes out and nothing times out.
   * @param {boolean} reading
   */
  setReading(reading) {
    if (this.closed) return;
    this.engine.setReading(Boolean(reading), nowUs(), this.sink);
    this.arm();
  }

  /**
   * Tells the engine the application sends this frame. A request is timed
   * by the engine: past timeoutMs (0: the settings' request timeout) it
   * sends notifications/cancelled and delivers its -32001 answer.
   * @param {string} frame
   * @param {number} [timeoutMs]
   */
  observeOutbound(frame, timeoutMs = 0) {
    if (this.closed) return;
    this.engine.observeOutbound(frame, nowUs(), this.sink, timeoutMs);
    this.arm();
  }

  /**
   * Fails an in-flight request whose answer cannot come any more: the
   * engine delivers its in-doubt (or cancelled) -32003 answer; nothing is sent.
   * @param {string|number} id
   * @returns {boolean} false if it was not in flight
   */
  failRequest(id) {
    if (this.closed) return false;
    const failed = this.engine.failRequest(JSON.stringify(id), nowUs(), this.sink);
    this.arm();
    return failed;
  }

  /**
   * Whether frame, a request that went out (our ping or probe, an
   * application request), still waits for its answer.
   * @param {string} frame
   */
  awaits(frame) {
    return !this.closed && this.engine.awaits(frame);
  }

  /** @returns {string|null} which frames from the server were not JSON-RPC (C's sentence), null if none */
  unreadable() {
    return (!this.closed && this.engine.unreadable()) || null;
  }

  /** @param {string} sessionId */
  setSessionId(sessionId) {
    if (!this.closed && sessionId) this.engine.setSessionId(sessionId);
  }

  /** Emits a "reconnect" record (the session was initialized again). */
  recordReconnect() {
    if (!this.closed) this.engine.recordReconnect(nowUs(), this.sink);
  }

  /**
   * A manual ping.
   * @param {{timeoutMs?: number, signal?: AbortSignal}} [opts]
   * @returns {Promise<number>} RTT in ms
   */
  ping(opts) {
    let timeoutMs;
    let signal;
    try {
      ({ timeoutMs, signal } = check.pingOptions(opts));
    } catch (err) {
      return Promise.reject(err);
    }
    if (signal && signal.aborted) return Promise.reject(signal.reason);
    if (this.closed) return Promise.reject(new ClosedError());
    return new Promise((resolve, reject) => {
      const entry = { resolve, reject, timeoutMs: timeoutMs || this.timeoutMs, signal, onAbort: null };
      // The pong can arrive inside engine.ping (a synchronous transport), so
      // the entry is registered under a placeholder until the seq is known.
      this.pendingEntry = entry;
      let seq;
      try {
        seq = this.engine.ping(timeoutMs, nowUs(), this.sink);
      } catch (err) {
        this.pendingEntry = null;
        // The engine's refusal (closed, unsupported, too many out), worded as
        // the stdio peer and Python's EngineDriver word it.
        reject(typeof err.errno === 'number' ? fromCode(binding, err.errno) : err);
        return;
      } finally {
        this.arm();
      }
      this.pendingEntry = null;
      if (entry.settled) return;
      this.pings.set(seq, entry);
      this.updateRef(); // the armed timer now holds the process (arm() keeps an earlier one)
      if (signal) {
        entry.onAbort = () => {
          this.engine && this.engine.cancelPing(seq);
          this.settle(seq, null, signal.reason);
        };
        signal.addEventListener('abort', entry.onAbort, { once: true });
      }
      this.arm();
    });
  }

  /** @returns {string} why the connection went stale, the reason to close it with (C's) */
  staleReason() {
    return this.engine ? this.engine.staleReason() : '';
  }

  /**
   * Closes the engine: reports the closed event and record, stops the timer.
   * @param {string} [reason]
   * @param {number} [err] MCPP_ERR_* code or 0
   */
  close(reason, err = 0) {
    if (this.closed) return;
    this.engine.close(err, reason || null, nowUs(), this.sink);
    this.closed = true;
    metricsHub.followers.delete(this.countMetrics);
    if (this.figures && metricsHub.tally) metricsHub.tally.closed(this.figures);
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    for (const seq of [...this.pings.keys()]) this.settle(seq, null, new ClosedError(binding.pingClosedMessage));
    this.records.close();
    this.engine.free();
    this.engine = null;
  }

  // ---- internals

  settle(seq, value, error) {
    const entry = this.pings.get(seq);
    if (!entry) return;
    this.pings.delete(seq);
    this.updateRef();
    if (entry.signal && entry.onAbort) entry.signal.removeEventListener('abort', entry.onAbort);
    if (error) entry.reject(error);
    else entry.resolve(value);
    this.updateRef();
  }

  onSink(kind, a, b) {
    switch (kind) {
      case SINK_SEND:
        this.write(b, a);
        break;
      case SINK_DELIVER:
        this.deliver(a, b); // the frame and its answer kind
        break;
      case SINK_EVENT:
        this.onEvent(a);
        break;
      case SINK_RECORD:
        this.records.write(a);
        if (this.listenerCount('record') > 0) emitSafely(this, 'record', JSON.parse(a));
        break;
      default:
        break;
    }
  }

  onEvent(ev) {
    this._state = ev.state;
    this.rttStats.observe(ev);
    if (ev.manual && OUTCOMES.has(ev.type)) {
      const pending = this.pendingEntry;
      const value = ev.type === 'pong' ? ev.rttUs / 1000 : null;
      const error = ev.type === 'pong' ? null : outcomeError(ev, (pending || {}).timeoutMs || this.timeoutMs);
      if (this.pings.has(ev.pingSeq)) {
        this.settle(ev.pingSeq, value, error);
      } else if (pending && !pending.settled) {
        pending.settled = true;
        if (error) pending.reject(error);
        else pending.resolve(value);
      }
    }
    emitSafely(this, ev.type, ev);
    // The stale policy is the C core's (mcpp_engine_should_close). Acted on
    // once the engine call that reported the event has returned.
    if (this.onMustClose && this.engine && this.engine.shouldClose(ev)) {
      const mustClose = this.onMustClose;
      queueMicrotask(() => mustClose(ev));
    }
  }

  /** Re-arms the timer if the engine's deadline moved earlier. */
  arm() {
    if (this.closed || !this.engine) return;
    const deadline = this.engine.nextDeadline();
    if (deadline < 0) return;
    if (this.timer && deadline >= this.armedAt) return;
    if (this.timer) clearTimeout(this.timer);
    const delayMs = Math.max(0, Math.ceil((deadline - nowUs()) / 1000));
    this.armedAt = deadline;
    this.timer = setTimeout(() => this.fire(), delayMs);
    this.updateRef();
  }

  fire() {
    this.timer = null;
    this.armedAt = Infinity;
    if (this.closed) return;
    this.engine.onTimer(nowUs(), this.sink);
    this.arm();
  }

  /**
   * While the application awaits this request, the engine's timer (its
   * deadline) holds the process, as a manual ping's does.
   * @param {Promise<unknown>} settled
   */
  holdUntil(settled) {
    this.awaited++;
    this.updateRef();
    const done = () => {
      this.awaited--;
      this.updateRef();
    };
    settled.then(done, done);
  }

  /** The timer holds the process only while a manual ping or a request is awaited. */
  updateRef() {
    if (!this.timer) return;
    if (this.pings.size > 0 || this.awaited > 0) this.timer.ref();
    else this.timer.unref();
  }
}

module.exports = { EngineDriver, nowUs, SINK_SEND, SINK_DELIVER, SINK_EVENT, SINK_RECORD };
