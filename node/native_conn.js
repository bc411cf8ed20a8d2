'use strict';
/**
 * One stdio connection served by the native runtime: spawn, send, ping,
 * close, and the routing of its items to an owner (Peer or
 * StdioClientTransport). Ping outcomes are matched to their promises here.
 */
const path = require('node:path');
const util = require('node:util');
const { binding, Hold, register, newToken } = require('./runtime');
const { toNativeSettings } = require('./settings');
const errors = require('./errors');
const { hub: metricsHub } = require('./metrics');

const OUTCOMES = new Set(['pong', 'timeout', 'ping_error', 'unsupported']);

/**
 * @typedef {object} ConnOwner
 * @property {(text: string) => void} onMessage an inbound application frame
 * @property {(event: object) => void} onEvent an engine event
 * @property {(json: string) => void} onRecord a governance record
 * @property {(chunk: Buffer) => void} onStderr server stderr (stderr: 'pipe')
 * @property {(info: object) => void} onClosed the last call
 */

class NativeConn {
  /**
   * Spawns the server. Throws McppError (code MCPP_ERR_SPAWN, ...) on failure.
   * @param {{command: string, args?: string[], env: string[]|null, cwd?: string,
   *          stderr?: string, killGraceMs?: number, probe?: string|null,
   *          reconnect?: object, maxPendingBytes?: number}} params
   *   probe: the idle probe on sessions without ping ('auto', a method, null);
   *   maxPendingBytes: backpressure (checked by the caller; absent: the default)
   * @param {object} settings public keepalive options plus role/transport
   * @param {ConnOwner} owner
   */
  constructor(params, settings, owner) {
    this.owner = owner;
    this.closed = false;
    this.closeInfo = null;
    /** @type {Map<number, {resolve: Function, reject: Function, hold: Hold, timeoutMs: number}>} */
    this.pings = new Map();
    this.closeWaiters = [];
    this.closeHold = new Hold();
    // Frames the runtime refused (its outbound queue is full:
    // maxPendingBytes), in order, each with its request timeout; handed
    // over again on the runtime's 'writable' item. Never dropped.
    /** @type {Array<[string, number]>} */
    this.outbox = [];
    this.outboxHold = new Hold();
    /** @type {Array<{resolve: Function, reject: Function}>} */
    this.drainWaiters = [];
    const native = toNativeSettings(settings, {
      role: 'client',
      transport: 'stdio',
      peerName: path.basename(params.command),
      probe: params.probe,
      maxPendingBytes: params.maxPendingBytes, // backpressure: the connection's, not keepalive's
    });
    if (params.reconnect) native.reconnect = params.reconnect;
    this.timeoutMs = native.timeoutMs || binding.defaultSettings().timeoutMs;
    try {
      this.id = binding.spawn(native, {
        file: params.command,
        args: [params.command, ...(params.args || [])],
        env: params.env,
        cwd: params.cwd,
        stderr: params.stderr || 'inherit',
        killGraceMs: params.killGraceMs,
      });
    } catch (err) {
      const e = new errors.McppError(err.message, { code: err.code, errno: err.errno, cause: err });
      if (err.osErrno) {
        // Why the OS refused, named as Node names it ('ENOENT', -2).
        e.osErrno = err.osErrno;
        e.osCode = util.getSystemErrorName(err.osErrno);
      }
      throw e;
    }
    register(this.id, this);
    this.programName = path.basename(params.command);
    // Metrics: the runtime counts this connection's events into a C cell
    // (now, or when metrics turn on), so none crosses to be counted.
    this.figures = null;
    this.countMetrics = () => {
      const tally = metricsHub.tally;
      if (!tally || this.figures || this.closed) return;
      this.figures = tally.opened(this.peerLabel(), 'stdio', this);
      binding.setMetrics(this.id, this.figures.cell);
    };
    metricsHub.followers.add(this.countMetrics);
    this.countMetrics();
  }

  /**
   * Records cost a text per event and a crossing each: the runtime makes
   * and hands over none while nobody takes them, i.e. while the owner has
   * no records sink and no 'record' listener (followed as they come and go).
   * @param {import('node:events').EventEmitter} emitter the owner
   * @param {boolean} hasSink the owner writes every record somewhere
   */
  followRecordListeners(emitter, hasSink) {
    if (hasSink) return; // the runtime queues records by default
    const want = (on) => {
      if (!this.closed) binding.setRecords(this.id, on);
    };
    // 'newListener' comes before the listener is added, 'removeListener' after.
    emitter.on('newListener', (name) => {
      if (name === 'record') want(true);
    });
    emitter.on('removeListener', (name) => {
      if (name === 'record') want(emitter.listenerCount('record') > 0);
    });
    want(emitter.listenerCount('record') > 0);
  }

  /**
   * Every ping outcome is counted into rttStats in C, as it happens; ping
   * and keepalive pong events cross only while someone listens (a 'ping' or
   * 'pong' listener; metrics count in C), so an idle connection's pong
   * wakes nobody.
   * @param {import('node:events').EventEmitter} emitter the owner
   * @param {{native: object}} rttStats the owner's RttStats
   */
  followPingListeners(emitter, rttStats) {
    binding.feedRtt(this.id, rttStats.native);
    let on = true;
    const want = (next) => {
      if (next !== on && !this.closed) {
        on = next;
        binding.setPingEvents(this.id, next);
      }
    };
    const sync = () => want(emitter.listenerCount('ping') > 0 || emitter.listenerCount('pong') > 0);
    // 'newListener' comes before the listener is added, 'removeListener' after.
    emitter.on('newListener', (name) => {
      if (name === 'ping' || name === 'pong') want(true);
    });
    emitter.on('removeListener', (name) => {
      if (name === 'ping' || name === 'pong') sync();
    });
    sync();
  }

  /** @returns {string} the server's name as far as the owner knows it */
  peerLabel() {
    return this.owner.name || this.programName;
  }

  /** @returns {number|null} the server's process id, null once closed */
  pid() {
    return this.closed ? null : binding.pid(this.id);
  }

  /** @returns {object|null} engine counters and state, null once closed */
  info() {
    return this.closed ? null : binding.info(this.id);
  }

  /** @returns {[number, string]} how many lines the server wrote are not JSON-RPC, and C's sentence for them ('' if none, or once closed) */
  unreadable() {
    return (this.closed ? null : binding.unreadable(this.id)) || [0, ''];
  }

  /**
   * Queues one application frame, in order after every earlier one.
   * @param {string} text one JSON-RPC message without newline
   * @param {number} [timeoutMs] a request's deadline: 0 the engine's
   *   default (requestTimeoutMs, if set)
   * @returns {boolean} true if handed to the runtime, false if it waits
   *   here for room (like stream.write: await drained() before more)
   */
  send(text, timeoutMs = 0) {
    if (this.closed) throw new errors.ClosedError();
    if (this.outbox.length === 0) {
      const rc = binding.send(this.id, text, timeoutMs);
      if (rc === 0) return true;
      if (binding.errname(rc) !== 'MCPP_ERR_WOULD_BLOCK') throw errors.fromCode(binding, rc);
      this.outboxHold.take();
    }
    this.outbox.push([text, timeoutMs]);
    return false;
  }

  /** @returns {Promise<void>} resolves once nothing waits in the outbox */
  drained() {
    if (this.outbox.length === 0) return Promise.resolve();
    if (this.closed) return Promise.reject(new errors.ClosedError());
    return new Promise((resolve, reject) => this.drainWaiters.push({ resolve, reject }));
  }

  /**
   * Abandons a request the caller gave up on: taken out of the outbox if
   * it never left, else cancelled by the engine (notifications/cancelled,
   * the ledger entry cleared).
   * @param {string} text the request as sent
   * @param {string} idJson its id as JSON
   */
  abandon(text, idJson) {
    const i = this.outbox.findIndex(([queued]) => queued === text);
    if (i >= 0) {
      this.outbox.splice(i, 1);
      if (this.outbox.length === 0) this.onWritable();
      return;
    }
    if (!this.closed) binding.cancelRequest(this.id, idJson);
  }

  /** The runtime has room again: hands over what waits, in order. */
  onWritable() {
    let sent = 0;
    while (sent < this.outbox.length) {
      const [text, timeoutMs] = this.outbox[sent];
      const rc = binding.send(this.id, text, timeoutMs);
      if (rc < 0 && binding.errname(rc) === 'MCPP_ERR_WOULD_BLOCK') break;
      if (rc < 0) return; // closing: the closed item fails the waiters
      sent++;
    }
    this.outbox.splice(0, sent);
    if (this.outbox.length > 0) return;
    this.outboxHold.release();
    for (const w of this.drainWaiters.splice(0)) w.resolve();
    if (this.owner.onDrain) this.owner.onDrain();
  }

  /**
   * Sends a manual ping.
   * @param {number} [timeoutMs]
   * @param {AbortSignal} [signal]
   * @returns {Promise<object>} the pong event (rttUs set)
   */
  ping(timeoutMs, signal) {
    if (signal && signal.aborted) return Promise.reject(signal.reason);
    if (this.closed) return Promise.reject(new errors.ClosedError());
    const token = newToken();
    const rc = binding.ping(this.id, timeoutMs || 0, token);
    if (rc < 0) return Promise.reject(errors.fromCode(binding, rc));
    const hold = new Hold();
    hold.take();
    return new Promise((resolve, reject) => {
      const entry = { resolve, reject, hold, timeoutMs: timeoutMs || this.timeoutMs, signal, onAbort: null };
      if (signal) {
        // The engine stops timing the ping and reports nothing more for it.
        entry.onAbort = () => {
          binding.cancelPing(this.id, token);
          this.settlePing(token, null, signal.reason);
        };
        signal.addEventListener('abort', entry.onAbort, { once: true });
      }
      this.pings.set(token, entry);
    });
  }

  /**
   * Settles one pending ping (no-op if already settled).
   * @param {number} token
   * @param {object|null} value
   * @param {Error} [error]
   */
  settlePing(token, value, error) {
    const entry = this.pings.get(token);
    if (!entry) return;
    this.pings.delete(token);
    entry.hold.release();
    if (entry.signal && entry.onAbort) entry.signal.removeEventListener('abort', entry.onAbort);
    if (error) entry.reject(error);
    else entry.resolve(value);
  }

  /**
   * Closes: SIGTERM to the server's process group, SIGKILL after the grace,
   * reap. Resolves with the close info once everything is gone.
   * @returns {Promise<object>}
   */
  close() {
    if (this.closeInfo) return Promise.resolve(this.closeInfo);
    return new Promise((resolve) => {
      this.closeWaiters.push(resolve);
      if (this.closeWaiters.length === 1) {
        this.closeHold.take();
        // An error here means it is already closing: its closed item is on the way.
        binding.close(this.id);
      }
    });
  }

  /**
   * Routes one native item (called by the runtime dispatcher).
   * @param {string} kind
   * @param {unknown} payload
   */
  onItem(kind, payload) {
    switch (kind) {
      case 'message':
        this.owner.onMessage(payload);
        break;
      case 'answer': // one the engine or the runtime made: its kind says which
        this.owner.onMessage(payload.frame, payload.kind);
        break;
      case 'event':
        this.onEvent(payload);
        break;
      case 'record':
        this.owner.onRecord(payload);
        break;
      case 'stderr':
        this.owner.onStderr(payload);
        break;
      case 'ping_failed':
        this.settlePing(payload.token, null, errors.fromCode(binding, payload.error));
        break;
      case 'writable':
        this.onWritable();
        break;
      case 'closed':
        this.onClosed(payload);
        break;
      default:
        break;
    }
  }

  /** @param {object} ev */
  onEvent(ev) {
    if (ev.type === 'closed') this.closedEvent = ev;
    this.owner.onEvent(ev); // isolates its listeners: the ping below always settles
    if (!ev.manual || !ev.token || !OUTCOMES.has(ev.type)) return;
    const entry = this.pings.get(ev.token);
    if (!entry) return;
    if (ev.type === 'pong') this.settlePing(ev.token, ev);
    else this.settlePing(ev.token, null, outcomeError(ev, entry.timeoutMs));
  }

  /** @param {object} item the closed item's fields ({errorName, reason, exitStatus, termSignal}) */
  onClosed(item) {
    this.closed = true;
    metricsHub.followers.delete(this.countMetrics);
    if (this.figures && metricsHub.tally) metricsHub.tally.closed(this.figures);
    const ev = this.closedEvent;
    this.closeInfo = {
      error: item.errorName || null,
      reason: item.reason,
      exitStatus: item.exitStatus,
      termSignal: item.termSignal,
      inFlight: ev ? ev.inFlight : 0,
      disposition: ev ? ev.disposition : 'continued',
    };
    for (const token of [...this.pings.keys()]) {
      this.settlePing(token, null, new errors.ClosedError(binding.pingClosedMessage));
    }
    this.outbox.length = 0;
    this.outboxHold.release();
    for (const w of this.drainWaiters.splice(0)) w.reject(new errors.ClosedError(item.reason));
    this.closeHold.release();
    const waiters = this.closeWaiters.splice(0);
    try {
      this.owner.onClosed(this.closeInfo);
    } finally {
      // close() resolves whatever the owner's listeners do.
      for (const resolve of waiters) resolve(this.closeInfo);
    }
  }
}

/**
 * The error a failed ping outcome rejects with.
 * @param {object} ev a timeout, ping_error or unsupported event
 * @param {number} timeoutMs
 */
function outcomeError(ev, timeoutMs) {
  // The C core decides how the ping ended (ev.outcome); this translates.
  const outcome = ev.outcome || binding.eventOutcome(ev);
  if (outcome === 'unsupported') return new errors.PingUnsupportedError(ev.rpcCode || null, ev.message || undefined);
  if (outcome === 'invalid') return new errors.PingInvalidError(ev.message || undefined);
  if (outcome === 'error') return new errors.PingError(ev.rpcCode, ev.message || '');
  if (outcome === 'closed') return new errors.ClosedError(binding.pingClosedMessage);
  return new errors.PingTimeoutError(ev.timeoutMs || timeoutMs);
}

module.exports = { NativeConn, outcomeError };
