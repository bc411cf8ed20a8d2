'use strict';
/**
 * `mcpping --config`'s table and JSON rows (docs/cli.md). The single-target
 * check's report is C's (csrc/src/app/cli_run.c); this is the --config
 * runner's, which moves to C with the --config rules.
 */

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

module.exports = { lossPct, formatLoss, pyFloat, jsonLine };

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

  /** @param {object[]} rows config_check's rows @param {number} timeMs @returns {number} the exit status */
  results(rows, timeMs) {
    const r = require('./binding').configFormatResults(rows, timeMs, this.json, this.quiet);
    this.out.write(r.text);
    return r.status;
  }
}

module.exports.ConfigReporter = ConfigReporter;
