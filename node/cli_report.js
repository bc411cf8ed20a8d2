'use strict';
/**
 * The CLI's output, human (ping(8) style) or --json, and its statistics.
 * docs/cli.md is the contract; the Python command prints the same.
 */
const { RttStats } = require('./rtt_stats');

/**
 * A number as Python's json.dumps prints a float (20 -> "20.0").
 * @param {number|null} x
 */
function pyFloat(x) {
  if (x === null || x === undefined || !Number.isFinite(x)) return 'null';
  return Number.isInteger(x) ? `${x}.0` : String(x);
}

/** @param {number} x @returns {number} x rounded to 3 decimals */
function round3(x) {
  return Math.round(x * 1000) / 1000;
}

/**
 * ping(8)'s loss: unanswered of sent (stats.lossPct counts finished pings only).
 * @param {number} sent @param {number} received @returns {number} loss in percent
 */
function lossPct(sent, received) {
  if (sent === 0) return 0;
  return ((sent - received) / sent) * 100;
}

/** @param {number} pct @returns {string} "20%" when whole, else one decimal */
function formatLoss(pct) {
  const one = Math.round(pct * 10) / 10;
  return Number.isInteger(one) ? `${one}%` : `${one.toFixed(1)}%`;
}

/** Serialises one JSON line with fixed key order; floats as Python prints them. */
function jsonLine(pairs) {
  const parts = pairs.map(([k, v, kind]) => {
    let text;
    if (kind === 'float') text = pyFloat(v);
    else if (kind === 'raw') text = v;
    else text = JSON.stringify(v === undefined ? null : v);
    return `${JSON.stringify(k)}:${text}`;
  });
  return `{${parts.join(',')}}`;
}

class Reporter {
  /**
   * The summary's RTT figures come from RttStats, fed by pong(), so memory
   * stays bounded however long the run: min/avg/max/mdev cover every pong,
   * p50/p99 the most recent 10,000 pongs. Python's command uses Stats, which
   * gives bit-identical figures.
   * @param {{json: boolean, quiet: boolean, out?: NodeJS.WritableStream}} opts
   */
  constructor(opts) {
    this.json = opts.json;
    this.quiet = opts.quiet;
    this.out = opts.out || process.stdout;
    this.name = '';
    this.stats = new RttStats();
  }

  line(text) {
    this.out.write(`${text}\n`);
  }

  /** @param {{peer: string, transport: string, protocolVersion: string|null, sessionId: string|null, timeoutMs: number, intervalMs: number}} c */
  connected(c) {
    this.name = c.peer;
    if (this.json) {
      this.line(jsonLine([
        ['event', 'connected'],
        ['peer', c.peer],
        ['transport', c.transport],
        ['protocol_version', c.protocolVersion],
        ['session_id', c.sessionId],
      ]));
      return;
    }
    const proto = c.protocolVersion ? `protocol ${c.protocolVersion}` : 'no handshake';
    this.line(`MCPPING ${c.peer} (${c.transport}, ${proto}): timeout ${(c.timeoutMs / 1000).toFixed(1)} s, interval ${(c.intervalMs / 1000).toFixed(1)} s`);
  }

  pong(seq, rttMs) {
    this.stats.add(rttMs); // counted for the summary even with -q
    if (this.quiet) return;
    if (this.json) this.line(jsonLine([['event', 'pong'], ['seq', seq], ['rtt_ms', round3(rttMs), 'float']]));
    else this.line(`pong from ${this.name}: seq=${seq} time=${rttMs.toFixed(3)} ms`);
  }

  timeout(seq, timeoutMs) {
    if (this.quiet) return;
    if (this.json) this.line(jsonLine([['event', 'timeout'], ['seq', seq], ['timeout_ms', timeoutMs]]));
    else this.line(`timeout from ${this.name}: seq=${seq} no answer after ${timeoutMs} ms`);
  }

  pingError(seq, code, message) {
    if (this.quiet) return;
    if (this.json) this.line(jsonLine([['event', 'ping_error'], ['seq', seq], ['code', code], ['message', message]]));
    else this.line(`error from ${this.name}: seq=${seq} code=${code} ${message}`);
  }

  invalid(seq, message) {
    if (this.quiet) return;
    if (this.json) this.line(jsonLine([['event', 'ping_invalid'], ['seq', seq], ['message', message]]));
    else this.line(`invalid pong from ${this.name}: seq=${seq} ${message}`);
  }

  unsupported(seq, code, message) {
    if (this.json && !this.quiet) {
      this.line(jsonLine([['event', 'unsupported'], ['seq', seq], ['code', code], ['message', message]]));
    }
  }

  /**
   * @param {{sent: number, received: number, timeMs: number}} s
   */
  summary(s) {
    // ping(8)'s loss from the counts, not RttStats.lossPct (lost of finished).
    const loss = lossPct(s.sent, s.received);
    const r = this.stats.summary();
    const st = r.count === 0 ? null
      : { min: r.minMs, avg: r.avgMs, max: r.maxMs, mdev: r.mdevMs, p50: r.p50Ms, p99: r.p99Ms };
    if (this.json) {
      const rtt = st
        ? jsonLine(['min', 'avg', 'max', 'mdev', 'p50', 'p99'].map((k) => [k, round3(st[k]), 'float']))
        : jsonLine(['min', 'avg', 'max', 'mdev', 'p50', 'p99'].map((k) => [k, null]));
      this.line(jsonLine([
        ['event', 'summary'],
        ['sent', s.sent],
        ['received', s.received],
        ['loss_pct', Math.round(loss * 10) / 10, 'float'],
        ['time_ms', Math.round(s.timeMs)],
        ['rtt_ms', rtt, 'raw'],
      ]));
      return;
    }
    this.line('');
    this.line(`--- ${this.name} mcpping statistics ---`);
    this.line(`${s.sent} pings sent, ${s.received} pongs received, ${formatLoss(loss)} loss, time ${Math.round(s.timeMs)} ms`);
    if (st) {
      this.line(`rtt min/avg/max/mdev = ${st.min.toFixed(3)}/${st.avg.toFixed(3)}/${st.max.toFixed(3)}/${st.mdev.toFixed(3)} ms`);
    }
  }
}

module.exports = { Reporter, lossPct, formatLoss, pyFloat, jsonLine };

/** A config_check result as the C formatter reads it. */
function configRow(x) {
  const { name, transport, file, jsonPath } = x.server;
  return { ...x, name, transport, file, jsonPath };
}

/**
 * Prints `mcpping --config`'s lines, every byte of which comes from C
 * (csrc/src/app/config_table.c); results() returns the exit status.
 */
class ConfigReporter {
  /** @param {{json: boolean, quiet?: boolean, out?: NodeJS.WritableStream}} opts */
  constructor(opts) {
    this.json = opts.json;
    this.quiet = Boolean(opts.quiet); // -q: the summary without the table
    this.out = opts.out || process.stdout;
  }

  /** @param {Array<[string, number]>} files each file read and its number of servers */
  files(files) {
    this.out.write(require('./binding').configFormatFiles(files, this.json));
  }

  start(servers, count, intervalS, timeoutS, deadlineS) {
    this.out.write(require('./binding').configFormatStart(servers, count, intervalS, timeoutS, deadlineS, this.json));
  }

  /** @param {object[]} rows results of config_check @param {number} timeMs @returns {number} the exit status */
  results(rows, timeMs) {
    const r = require('./binding').configFormatResults(rows.map(configRow), timeMs, this.json, this.quiet);
    this.out.write(r.text);
    return r.status;
  }
}

module.exports.ConfigReporter = ConfigReporter;
module.exports.configRow = configRow;
