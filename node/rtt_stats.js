'use strict';
/**
 * Round-trip statistics of a connection's pings, in bounded memory: the C
 * core's mcpp_rtt_stats (exact running min/max/avg/mdev over every pong,
 * p50/p99 by nearest rank over a window of the most recent RTTs), the same
 * code Python's mcpping.Stats and both command lines read. Which outcomes
 * count as lost is the core's rule too: a ping abandoned because the
 * connection closed is not lost.
 */


/** Microseconds per millisecond: RttStats keeps RTTs in ms. */
const US_PER_MS = 1000;

/** @returns {object} the addon, loaded on first use */
function addon() {
  return require('./runtime').binding;
}

/** How many of the most recent RTTs the percentiles cover (C's MCPP_RTT_WINDOW). */
const WINDOW = require('./binding').rttWindow;

class RttStats {
  /** @param {{window?: number}} [opts] window: 1..16777216 RTTs (default 10000) */
  constructor(opts = {}) {
    const window = opts.window === undefined ? WINDOW : opts.window;
    this.window = require('./validate').setting('window', 'rtt_window', window);
    this.native = new (addon().RttStats)(this.window);
  }

  /** Records a pong. @param {number} rttMs */
  add(rttMs) {
    this.native.add(rttMs);
  }

  /**
   * Feeds an engine event: a ping counts sent, a pong its RTT, a lost
   * outcome lost; others are ignored.
   * @param {{type: string, rttUs?: number, rpcCode?: number, error?: number, errorCode?: number, invalid?: boolean}} ev
   */
  observe(ev) {
    // An event the addon made says its outcome (named in C): a pong's RTT
    // goes in as a number, without the event crossing back field by field.
    if (ev.outcome === 'pong') this.native.add(ev.rttUs / US_PER_MS);
    else this.native.observe(ev, US_PER_MS);
  }

  /** @returns {number} pings sent */
  get sent() {
    return this.native.summary().sent;
  }

  /** @returns {number} pongs received */
  get received() {
    return this.native.summary().received;
  }

  /** @returns {number} pings lost (timeouts, errors, invalid answers) */
  get lost() {
    return this.native.summary().lost;
  }

  /** @returns {number[]} the most recent RTTs (at most window), oldest first */
  recent() {
    return Array.from(this.native.recent());
  }

  /** @returns {number} lost percent of the pings that finished (0 before any) */
  get lossPct() {
    return this.native.summary().lossPct;
  }

  /** @returns {{rtt: object, lossPct: number}} what the stats getters add to the engine's info */
  fields() {
    return { rtt: this.summary(), lossPct: this.lossPct };
  }

  /**
   * @returns {{count: number, minMs: number|null, avgMs: number|null, maxMs: number|null,
   *   mdevMs: number|null, p50Ms: number|null, p99Ms: number|null}}
   *   count is the number of RTTs; p50Ms/p99Ms cover the recent window
   */
  summary() {
    const s = this.native.summary();
    return { count: s.count, minMs: s.min, avgMs: s.avg, maxMs: s.max, mdevMs: s.mdev, p50Ms: s.p50, p99Ms: s.p99 };
  }
}

module.exports = { RttStats, WINDOW };
