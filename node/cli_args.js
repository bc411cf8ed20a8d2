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

/**
 * @param {string} flag
 * @param {string|undefined} value
 * @param {{integer?: boolean, min?: number, positive?: boolean, seconds?: boolean}} rule
 *   seconds: a time, at most MAX_SECONDS (never wrapped or clamped)
 */
function number(flag, value, rule) {
  if (value === undefined) throw new UsageError(`option ${flag} needs a value`);
  const n = Number(value);
  if (value.trim() === '' || !Number.isFinite(n)) throw new UsageError(`invalid value for ${flag}: ${value}`);
  if (rule.integer && !Number.isInteger(n)) throw new UsageError(`invalid value for ${flag}: ${value}`);
  if (n < (rule.min ?? 0) || (rule.positive && n <= 0)) throw new UsageError(`invalid value for ${flag}: ${value}`);
  if (rule.seconds && n > MAX_SECONDS) throw new UsageError(`invalid value for ${flag}: ${value} (at most ${MAX_SECONDS} seconds)`);
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
      if (o.command.length === 0) throw new UsageError('no command after --');
      break;
    }
    // Attached values: -c5, --log=FILE.
    const short = /^-([ciWw])(.+)$/.exec(a);
    const [flag, attached] = short ? [`-${short[1]}`, short[2]] : a.startsWith('--log=') ? ['--log', a.slice(6)]
        : a.startsWith('--config=') ? ['--config', a.slice(9)] : [a, undefined];
    const value = () => (attached !== undefined ? attached : argv[++i]);
    switch (flag) {
      case '-c':
        o.count = number('-c', value(), { integer: true, positive: true });
        break;
      case '-i':
        o.intervalS = number('-i', value(), { seconds: true });
        break;
      case '-W':
        o.timeoutS = number('-W', value(), { positive: true, seconds: true });
        break;
      case '-w':
        o.deadlineS = number('-w', value(), { positive: true, seconds: true });
        break;
      case '-q':
        o.quiet = true;
        break;
      case '--json':
        o.json = true;
        break;
      case '--log': {
        const v = value();
        if (!v) throw new UsageError('option --log needs a value');
        o.log = v;
        break;
      }
      case '--config': {
        const v = value();
        if (!v) throw new UsageError('option --config needs a FILE or auto');
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
        if (a.startsWith('-') && a !== '-') throw new UsageError(`unknown option: ${a}`);
        positional.push(a);
    }
  }
  const targets = (o.command ? 1 : 0) + positional.length + (demo ? 1 : 0) + (o.configs.length ? 1 : 0);
  if (targets > 1 || positional.length > 1) throw new UsageError('give one target: --demo, a URL, --config, or -- COMMAND');
  if (o.configs.length) {
    if (!o.init) throw new UsageError('--config runs each server\'s handshake: drop --no-init');
    return { ...o, mode: 'config', count: o.count ?? 3, deadlineS: o.deadlineS ?? CONFIG_DEADLINE_S };
  }
  if (o.command) o.mode = 'stdio';
  else if (positional.length === 1) {
    if (!/^https?:\/\//i.test(positional[0])) throw new UsageError(`not a URL: ${positional[0]} (use -- COMMAND for a stdio server)`);
    o.mode = 'http';
    o.url = positional[0];
  }
  if (o.mode === 'demo' && o.count === null) o.count = 5;
  return o;
}

module.exports = { parseArgs, UsageError, USAGE };
