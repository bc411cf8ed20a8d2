'use strict';
/**
 * `mcpping wrap` (docs/cli.md): liveness for MCP clients you cannot change.
 * The proxy itself is C (mcpp_wrap_run), and so is the command line's parse (mcpp_cli_parse): its help, defaults,
 * checks and sentences. This hands C's parse over to the proxy. The process
 * then belongs to the proxy until the client or the server is gone.
 */
const native = require('./binding');

/** C's parse of the arguments after `wrap`. */
const parse = (argv) => native.cliParse(['wrap', ...argv]);

/** `mcpping wrap --help` (C's text: csrc/src/app/cli_args.c). */
const USAGE = parse(['--help']).wrapUsage;

/** A bad `mcpping wrap` command line: `line` is what the command prints. */
class WrapUsageError extends Error {
  constructor(why, line) {
    super(why);
    this.line = line;
  }
}

/**
 * Parses the arguments after `wrap` (C's rules, cli_args.c).
 * @param {string[]} argv
 * @returns {'help' | {intervalMs: number, timeoutMs: number, failures: number, restart: boolean,
 *   log: string|null, metrics: string|null, name: string|null, command: string[]}}
 */
function parseWrapArgs(argv) {
  const o = parse(argv);
  if (o.mode === 'wrap_help') return 'help';
  if (o.mode !== 'wrap') throw new WrapUsageError(o.error, o.errorLine);
  const { intervalMs, timeoutMs, failures, restart, log, metrics, name, command } = o;
  return { intervalMs, timeoutMs, failures, restart, log, metrics, name, command };
}

/**
 * `mcpping wrap ARGS`: returns the exit status (docs/cli.md). Blocks the
 * JavaScript thread while the proxy runs.
 * @param {string[]} argv
 * @returns {number}
 */
function main(argv) {
  const o = parse(argv);
  if (o.done) { // -h or a usage error: C's bytes and status
    process.stdout.write(o.out);
    process.stderr.write(o.err);
    return o.status;
  }
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
