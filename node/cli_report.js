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

/** @param {number[]} rtts @returns {[number, number, number]|null} min, avg, max */
function rttTriple(rtts) {
  if (rtts.length === 0) return null;
  let total = 0;
  for (const x of rtts) total += x;
  return [Math.min(...rtts), total / rtts.length, Math.max(...rtts)];
}

/**
 * A row's status: `ok`, `loss 33.3%`, `spawn failed: ...` (docs/cli.md).
 * @param {{status: string, reason: string|null, sent: number, received: number}} r
 */
function statusText(r) {
  if (r.status === 'loss') return `loss ${formatLoss(lossPct(r.sent, r.received))}`;
  if (['ok', 'unsupported', 'timeout'].includes(r.status)) return r.status;
  return r.reason ? `${r.status}: ${r.reason}` : r.status;
}

/** @param {string} s @returns {number} width in code points, as Python's len() */
const width = (s) => Array.from(s).length;
const plural = (n, word) => `${n} ${word}${n === 1 ? '' : 's'}`;

/**
 * Prints `mcpping --config`: which files were read, one aligned row per
 * server, a summary; or, with --json, one object for each. Python's
 * ConfigReporter prints the same bytes.
 */
class ConfigReporter {
  /** @param {{json: boolean, quiet?: boolean, out?: NodeJS.WritableStream}} opts */
  constructor(opts) {
    this.json = opts.json;
    this.quiet = Boolean(opts.quiet); // -q: the summary without the table
    this.out = opts.out || process.stdout;
  }

  line(text) {
    this.out.write(`${text}\n`);
  }

  /** @param {Array<[string, number]>} files each file read and its number of servers */
  files(files) {
    for (const [file, n] of files) {
      if (this.json) this.line(jsonLine([['event', 'config'], ['file', file], ['servers', n]]));
      else this.line(`config ${file}: ${plural(n, 'server')}`);
    }
  }

  start(servers, count, intervalS, timeoutS, deadlineS) {
    if (this.json) return;
    this.line(`MCPPING ${plural(servers, 'server')}: ${plural(count, 'ping')} each, interval ${intervalS.toFixed(1)} s, timeout ${timeoutS.toFixed(1)} s, deadline ${deadlineS.toFixed(1)} s`);
  }

  /** @param {object[]} rows results of config_check @param {number} timeMs */
  results(rows, timeMs, failed) {
    const counts = { ok: 0, unsupported: 0, skipped: 0, failed: 0 };
    for (const r of rows) counts[failed(r) ? 'failed' : r.status]++;
    if (this.json) {
      for (const r of rows) this.line(ConfigReporter.jsonRow(r));
      this.line(jsonLine([['event', 'summary'], ['servers', rows.length], ...Object.entries(counts), ['time_ms', Math.round(timeMs)]]));
      return;
    }
    const table = [ConfigReporter.COLUMNS, ...rows.map((r) => ConfigReporter.cells(r))];
    const widths = ConfigReporter.COLUMNS.slice(0, -1).map((_, i) => Math.max(...table.map((row) => width(row[i]))));
    if (rows.length && !this.quiet) {
      this.line('');
      for (const cells of table) {
        const head = widths.map((w, i) => cells[i] + ' '.repeat(w - width(cells[i]))).join('  ');
        this.line(`${head}  ${cells.at(-1)}`);
      }
    }
    this.line('');
    this.line('--- mcpping config statistics ---');
    this.line(`${plural(rows.length, 'server')}, ${counts.ok} ok, ${counts.unsupported} unsupported, ${counts.skipped} skipped, ${counts.failed} failed, time ${Math.round(timeMs)} ms`);
  }

  static cells(r) {
    const t = rttTriple(r.rttsMs);
    const rtt = t ? `${t.map((x) => x.toFixed(3)).join('/')} ms` : '-';
    // A name or a server's message with a newline must not break the table.
    // eslint-disable-next-line no-control-regex
    return [r.server.name, r.server.transport, r.protocolVersion || '-', rtt, statusText(r)].map((c) => c.replace(/[\x00-\x1f\x7f]/g, '?'));
  }

  static jsonRow(r) {
    const t = rttTriple(r.rttsMs);
    const rtt = jsonLine(['min', 'avg', 'max'].map((k, i) => (t ? [k, round3(t[i]), 'float'] : [k, null])));
    const loss = r.sent ? Math.round(lossPct(r.sent, r.received) * 10) / 10 : null;
    return jsonLine([
      ['event', 'server'],
      ['name', r.server.name],
      ['transport', r.server.transport],
      ['protocol_version', r.protocolVersion],
      ['status', r.status],
      ['reason', r.reason],
      ['sent', r.sent],
      ['received', r.received],
      ['loss_pct', loss, 'float'],
      ['rtt_ms', rtt, 'raw'],
      ['file', r.server.file],
      ['json_path', r.server.jsonPath],
    ]);
  }
}

ConfigReporter.COLUMNS = ['NAME', 'TRANSPORT', 'PROTOCOL', 'RTT MIN/AVG/MAX', 'STATUS'];

module.exports.ConfigReporter = ConfigReporter;
module.exports.statusText = statusText;
