'use strict';
/**
 * `mcpping wrap` (docs/cli.md): liveness for MCP clients you cannot change.
 * The proxy itself is C (mcpp_wrap_run, the same as in the Python command);
 * this parses the command line, validates every number with validate.js
 * and hands over. The process then belongs to the proxy until the client
 * or the server is gone.
 */
const validate = require('./validate');

const S = (name) => validate.settingDefault(name);
const USAGE = `usage: mcpping wrap [options] -- COMMAND [ARG...]
  Runs COMMAND as the MCP server of the client that launched us: every line
  passes through unchanged, a server that goes stale or exits is restarted,
  and the server never outlives the client.
  -i, --interval SEC  keepalive: ping the server after SEC idle (default ${S('interval_ms') / 1000}; 0 = off)
  -W, --timeout SEC   per-ping timeout (default ${S('timeout_ms') / 1000})
  --failures N        failed pings in a row that make the server stale (default ${S('failures')})
  --no-restart        exit (status 1) when the server goes stale or exits
                      (default: restart it, replaying the client's handshake)
  --log FILE          append governance records (JSONL) to FILE
  --metrics ADDR      Prometheus text on a loopback HOST:PORT (e.g. 127.0.0.1:9464)
  --name NAME         the config entry's name: \`server\` in records and metrics
  -h, --help          this text
`;

class WrapUsageError extends Error {}

/** @param {string} flag @param {string} text @returns {number} */
function finite(flag, text) {
  const v = text.trim() === '' ? NaN : Number(text);
  if (Number.isNaN(v)) throw new WrapUsageError(`${flag} needs a number, got ${JSON.stringify(text)}`);
  if (!Number.isFinite(v)) throw new WrapUsageError(`${flag} needs a finite number, got ${JSON.stringify(text)}`);
  return v;
}

/** A setting given in seconds (or a count), checked by the C table; C's value. */
function setting(flag, name, value, opts) {
  try {
    return validate.setting(flag, name, value, { inSeconds: true, ...opts });
  } catch (err) {
    throw new WrapUsageError(err.message);
  }
}

/**
 * Parses the arguments after `wrap`.
 * @param {string[]} argv
 * @returns {'help' | {intervalMs: number, timeoutMs: number, failures: number, restart: boolean,
 *   log: string|null, metrics: string|null, name: string|null, command: string[]}}
 */
function parseWrapArgs(argv) {
  const o = { intervalMs: S('interval_ms'), timeoutMs: S('timeout_ms'), failures: S('failures'), restart: true, log: null, metrics: null, name: null, command: [] };
  const takes = new Set(['-i', '--interval', '-W', '--timeout', '--failures', '--log', '--metrics', '--name']);
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    if (a === '--') {
      o.command = argv.slice(i + 1);
      break;
    }
    if (a === '-h' || a === '--help') return 'help';
    if (a === '--no-restart') {
      o.restart = false;
    } else if (a === '--restart') {
      o.restart = true;
    } else if (takes.has(a)) {
      if (i + 1 >= argv.length) throw new WrapUsageError(`${a} needs a value`);
      const v = argv[++i];
      // wrap has no --min-interval: the floor is the library's.
      if (a === '-i' || a === '--interval') {
        o.intervalMs = setting('--interval', 'interval_ms', finite(a, v), { low: S('min_interval_ms') / 1000, lowName: 'min_interval' });
      } else if (a === '-W' || a === '--timeout') o.timeoutMs = setting('--timeout', 'timeout_ms', finite(a, v));
      else if (a === '--failures') {
        if (!/^[+-]?\d+$/.test(v.trim())) throw new WrapUsageError(`--failures needs an integer, got ${JSON.stringify(v)}`);
        o.failures = setting('--failures', 'failures', Number(v));
      } else if (a === '--log') o.log = v;
      else if (a === '--metrics') o.metrics = v;
      else {
        if (!v) throw new WrapUsageError('--name needs a non-empty value');
        o.name = v;
      }
    } else {
      throw new WrapUsageError(`unknown option ${JSON.stringify(a)} (put the server command after --)`);
    }
  }
  if (o.command.length === 0) {
    throw new WrapUsageError('a server command is required: mcpping wrap [options] -- COMMAND [ARG...]');
  }
  return o;
}

/**
 * `mcpping wrap ARGS`: returns the exit status (docs/cli.md). Blocks the
 * JavaScript thread while the proxy runs.
 * @param {string[]} argv
 * @returns {number}
 */
function main(argv) {
  let o;
  try {
    o = parseWrapArgs(argv);
  } catch (err) {
    if (!(err instanceof WrapUsageError)) throw err;
    process.stderr.write(`mcpping wrap: ${err.message}\n`);
    return 2;
  }
  if (o === 'help') {
    process.stdout.write(USAGE);
    return 0;
  }
  const native = require('./binding');
  const settings = { intervalMs: o.intervalMs, timeoutMs: o.timeoutMs, failures: o.failures };
  if (o.name !== null) settings.peerName = o.name;
  return native.wrap({
    spawn: { file: o.command[0], args: o.command, stderr: 'inherit' },
    settings,
    restart: o.restart,
    log: o.log,
    metrics: o.metrics,
    server: o.name,
    inFd: 0,
    outFd: 1,
  });
}

module.exports = { USAGE, WrapUsageError, parseWrapArgs, main };
