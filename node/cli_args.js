'use strict';
/**
 * Parses the mcpping command line (docs/cli.md).
 */

const USAGE = `usage: mcpping [options] -- COMMAND [ARG...]   spawn a stdio server and ping it
       mcpping [options] URL                   ping a Streamable HTTP server
       mcpping [options] [--demo]              ping the bundled demo server (the default)
       mcpping [options] --config FILE|auto    ping every server of a client config
       mcpping wrap [options] -- COMMAND [ARG...]  proxy a stdio server for an MCP client
                                               (mcpping wrap --help)
       mcpping --config FILE --wrap|--unwrap [--write]  put every stdio server of a
                                               config behind mcpping wrap, or take it away
  -c N        count (demo default 5, --config 3; otherwise until Ctrl-C)
  -i SEC      interval between pings (default 1; 0 = flood)
  -W SEC      per-ping timeout (default 5)
  -w SEC      overall deadline: stop after SEC seconds whatever the count
              (--config: each server's deadline, default 15)
  -q          summary only
  --json      one JSON object per line
  --log FILE  append governance records (JSONL) to FILE
  --no-init   ping without the initialize handshake
  --config FILE|auto  Claude Desktop, Claude Code, Cursor or VS Code config;
              auto: the usual places on this OS (repeatable)
  -h, --help  usage;  -V, --version  version
`;

/** A usage error: exit 2 with its message. */
class UsageError extends Error {}

/** Each server's deadline under --config unless -w says otherwise, in seconds. */
const CONFIG_DEADLINE_S = 15;

/** The longest time mcpping can wait, in seconds (mcpping.h MCPP_MAX_MS, setTimeout's limit too). */
const MAX_SECONDS = 2147483.647;

/** Python's repr() of a float, so that both commands print the same reason (docs/cli.md). */
function pyFloat(n) {
  if (n === 0) return Object.is(n, -0) ? '-0.0' : '0.0';
  const a = Math.abs(n);
  if (a < 1e-4 || a >= 1e16) return n.toExponential().replace(/e([+-])(\d)$/, 'e$10$2');
  return Number.isInteger(n) ? n.toFixed(1) : String(n);
}

/**
 * Parses a numeric option with the Python command's rules and messages
 * (python/mcpping/cli.py `_number` / `_seconds`): both print the same line.
 * @param {string} flag
 * @param {string|undefined} value
 * @param {{integer?: boolean, low?: number}} rule
 *   integer: a count, at least 1; otherwise a time in seconds, low .. MAX_SECONDS
 *   (never wrapped or clamped)
 */
function number(flag, value, rule) {
  if (value === undefined) throw new UsageError(`${flag} needs a value`);
  // What Python's int() / float() read: decimal only (no 0x10), inf and nan included.
  const integer = /^\s*[+-]?\d+\s*$/.test(value);
  const decimal = /^\s*[+-]?(\d+\.?\d*|\.\d+)(e[+-]?\d+)?\s*$/i.test(value);
  const special = /^\s*([+-]?)(inf|infinity|nan)\s*$/i.exec(value);
  if (rule.integer ? !integer : !decimal && !special) {
    throw new UsageError(`${flag} needs ${rule.integer ? 'an integer' : 'a number'}, got '${value}'`);
  }
  const n = special ? NaN : Number(value);
  if (rule.integer) {
    if (n < 1) throw new UsageError(`${flag} must be a positive integer`);
    return n;
  }
  const low = rule.low ?? 0;
  if (!(n >= low && n <= MAX_SECONDS)) {
    const shown = special ? `${special[1] === '-' && !/nan/i.test(special[2]) ? '-' : ''}${/nan/i.test(special[2]) ? 'nan' : 'inf'}`
      : Number.isFinite(n) ? pyFloat(n) : n > 0 ? 'inf' : '-inf';
    throw new UsageError(`${flag} must be between ${low} and ${MAX_SECONDS} seconds, not ${shown}`);
  }
  return n;
}

/**
 * @param {string[]} argv arguments after the program name
 * @returns {{mode: 'demo'|'stdio'|'http'|'config'|'help'|'version', command?: string[], url?: string,
 *   configs: string[],
 *   count: number|null, intervalS: number, timeoutS: number, deadlineS: number|null,
 *   quiet: boolean, json: boolean, log: string|null, init: boolean}}
 */
function parseArgs(argv) {
  const o = {
    mode: 'demo',
    count: null,
    intervalS: 1,
    timeoutS: 5,
    deadlineS: null,
    quiet: false,
    json: false,
    log: null,
    init: true,
    configs: [],
  };
  let demo = false;
  const positional = [];
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    if (a === '--') {
      o.command = argv.slice(i + 1);
      if (o.command.length === 0) throw new UsageError('-- needs a COMMAND');
      break;
    }
    // Attached values: -c5, --log=FILE.
    const short = /^-([ciWw])(.+)$/.exec(a);
    const [flag, attached] = short ? [`-${short[1]}`, short[2]] : a.startsWith('--log=') ? ['--log', a.slice(6)]
        : a.startsWith('--config=') ? ['--config', a.slice(9)] : [a, undefined];
    const value = () => (attached !== undefined ? attached : argv[++i]);
    switch (flag) {
      case '-c':
        o.count = number('-c', value(), { integer: true });
        break;
      case '-i':
        o.intervalS = number('-i', value(), { low: 0 }); // 0: flood
        break;
      case '-W':
        o.timeoutS = number('-W', value(), { low: 0.001 });
        break;
      case '-w':
        o.deadlineS = number('-w', value(), { low: 0.001 });
        break;
      case '-q':
        o.quiet = true;
        break;
      case '--json':
        o.json = true;
        break;
      case '--log': {
        const v = value();
        if (!v) throw new UsageError('--log needs a value');
        o.log = v;
        break;
      }
      case '--config': {
        const v = value();
        if (v === undefined) throw new UsageError('--config needs a value');
        if (!v) throw new UsageError('--config needs a FILE or auto');
        o.configs.push(v);
        break;
      }
      case '--no-init':
        o.init = false;
        break;
      case '--demo':
        demo = true;
        break;
      case '-h':
      case '--help':
        return { ...o, mode: 'help' };
      case '-V':
      case '--version':
        return { ...o, mode: 'version' };
      default:
        if (a.startsWith('-')) throw new UsageError(`unknown option ${a}`);
        if (positional.length || !/^https?:\/\//.test(a)) {
          throw new UsageError(`unexpected argument '${a}' (put a server command after --)`);
        }
        positional.push(a);
    }
  }
  const targets = (o.command ? 1 : 0) + positional.length + (demo ? 1 : 0) + (o.configs.length ? 1 : 0);
  if (targets > 1 || positional.length > 1) throw new UsageError('give one target: -- COMMAND, URL, --config, or --demo');
  if (o.configs.length) {
    if (!o.init) throw new UsageError('--config runs each server\'s handshake: drop --no-init');
    return { ...o, mode: 'config', count: o.count ?? 3, deadlineS: o.deadlineS ?? CONFIG_DEADLINE_S };
  }
  if (o.command) o.mode = 'stdio';
  else if (positional.length === 1) {
    o.mode = 'http';
    o.url = positional[0];
  }
  if (o.mode === 'demo' && o.count === null) o.count = 5;
  return o;
}

module.exports = { parseArgs, UsageError, USAGE };
