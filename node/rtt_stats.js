'use strict';
/**
 * Round-trip statistics of a connection's pings, in bounded memory: exact
 * running min/max/avg/mdev over every pong (Welford for mdev), and p50/p99
 * by nearest rank over a ring of the most recent RTTs. The same design and
 * figures as Python's mcpping.Stats.
 */

/** How many of the most recent RTTs the percentiles cover. */
const WINDOW = 10000;

/**
 * Nearest-rank percentile of sorted values.
 * @param {ArrayLike<number>} sorted ascending, non-empty
 * @param {number} p 0..100
 */
function percentile(sorted, p) {
  const rank = Math.max(1, Math.ceil((p / 100) * sorted.length));
  return sorted[rank - 1];
}

/**
 * True for MCPP_ERR_CLOSED: a ping_error the connection's closing caused.
 * @param {number} [code]
 */
function isClosedCode(code) {
  if (!code) return false;
  const { binding } = require('./runtime'); // lazily: the unit tests need no addon
  return binding.errname(code) === 'MCPP_ERR_CLOSED';
}

class RttStats {
  /**
   * @param {{window?: number, isClosedError?: (code: number) => boolean}} [opts]
   *   isClosedError: a ping_error whose code it accepts does not count as lost
   *   (default: MCPP_ERR_CLOSED, as in Python).
   */
  constructor(opts = {}) {
    const window = opts.window === undefined ? WINDOW : opts.window;
    if (!Number.isInteger(window) || window < 1) throw new RangeError('window must be an integer >= 1');
    this.window = window;
    this.isClosedError = opts.isClosedError || isClosedCode;
    /** Pings sent, pongs received, pings lost (timeouts and errors). */
    this.sent = 0;
    this.received = 0;
    this.lost = 0;
    this.n = 0;
    this.min = Infinity;
    this.max = -Infinity;
    this.sum = 0;
    this.mean = 0;
    this.m2 = 0;
    this.ring = new Float64Array(window);
    this.next = 0; // where the next RTT goes
    this.sorted = null; // the window sorted, until the next add
  }

  /** Records a pong. @param {number} rttMs */
  add(rttMs) {
    this.received += 1;
    this.n += 1;
    if (rttMs < this.min) this.min = rttMs;
    if (rttMs > this.max) this.max = rttMs;
    this.sum += rttMs;
    const delta = rttMs - this.mean;
    this.mean += delta / this.n;
    this.m2 += delta * (rttMs - this.mean);
    this.ring[this.next] = rttMs;
    this.next = (this.next + 1) % this.window;
    this.sorted = null;
  }

  /**
   * Feeds an engine event: ping, pong, timeout or ping_error (others are ignored).
   * @param {{type: string, rttUs?: number, errorCode?: number}} ev
   */
  observe(ev) {
    if (ev.type === 'ping') this.sent += 1;
    else if (ev.type === 'pong' && typeof ev.rttUs === 'number') this.add(ev.rttUs / 1000);
    else if (ev.type === 'timeout') this.lost += 1;
    else if (ev.type === 'ping_error' && !this.isClosedError(ev.errorCode)) this.lost += 1;
  }

  /** @returns {number[]} the most recent RTTs (at most window), oldest first */
  recent() {
    if (this.n < this.window) return Array.from(this.ring.subarray(0, this.n));
    return [...this.ring.subarray(this.next), ...this.ring.subarray(0, this.next)];
  }

  /** @returns {number} lost percent of the pings that finished (0 before any) */
  get lossPct() {
    const done = this.received + this.lost;
    return done ? (this.lost / done) * 100 : 0;
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
    if (this.n === 0) {
      return { count: 0, minMs: null, avgMs: null, maxMs: null, mdevMs: null, p50Ms: null, p99Ms: null };
    }
    if (!this.sorted) {
      const filled = Math.min(this.n, this.window);
      this.sorted = this.ring.slice(0, filled).sort(); // typed arrays sort numerically
    }
    return {
      count: this.n,
      minMs: this.min,
      avgMs: this.sum / this.n,
      maxMs: this.max,
      mdevMs: Math.sqrt(Math.max(0, this.m2 / this.n)),
      p50Ms: percentile(this.sorted, 50),
      p99Ms: percentile(this.sorted, 99),
    };
  }
}

module.exports = { RttStats, percentile, WINDOW };
