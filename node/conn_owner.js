'use strict';
/**
 * What Peer and StdioClientTransport, the two owners of a NativeConn, do
 * alike: where records go, the state, the RTT figures (counted in C) and
 * manual pings. Each subclass adds its own face (an SDK Transport, or
 * requests and the handshake) and the rest of NativeConn's ConnOwner calls.
 */
const { EventEmitter } = require('node:events');
const { NativeConn } = require('./native_conn');
const { makeRecordSink } = require('./records');
const { RttStats } = require('./rtt_stats');
const { ClosedError } = require('./errors');
const check = require('./validate');
const { emitSafely, guardSink } = require('./isolate');

class ConnOwner extends EventEmitter {
  constructor() {
    super();
    /** @type {NativeConn|null} null until spawn() */
    this.conn = null;
    this._state = 'alive';
    this.rttStats = new RttStats();
  }

  /**
   * Where this connection's governance records go (the records option;
   * throws for one that is no target). Before spawn().
   * @param {string|Function|object|undefined} target
   */
  recordTo(target) {
    this.records = guardSink(makeRecordSink(target), this);
    this.recordsTaken = target != null;
  }

  /**
   * Spawns the server, which reports to this owner: records made only
   * while someone takes them, every ping outcome counted into rttStats in C.
   * @param {object} params @param {object} settings NativeConn's
   */
  spawn(params, settings) {
    this.conn = new NativeConn(params, settings, this);
    this.conn.followRecordListeners(this, this.recordsTaken);
    this.conn.followPingListeners(this, this.rttStats);
  }

  /** @returns {'alive'|'suspect'|'stale'|'closed'} the engine's, live */
  get state() {
    const info = this.conn ? this.conn.info() : null;
    return info ? info.state : this._state;
  }

  /**
   * Pings the server from mcpping (over a transport, the SDK's
   * client.ping() works too).
   * @param {{timeoutMs?: number, signal?: AbortSignal}} [opts]
   * @returns {Promise<number>} the round-trip time in ms
   */
  async ping(opts) {
    const { timeoutMs, signal } = check.pingOptions(opts);
    if (!this.conn) throw new ClosedError('Not connected');
    const ev = await this.conn.ping(timeoutMs, signal);
    return ev.rttUs / 1000;
  }

  /** @param {string} json */
  onRecord(json) {
    this.records.write(json);
    if (this.listenerCount('record') > 0) emitSafely(this, 'record', JSON.parse(json));
  }
}

module.exports = { ConnOwner };
