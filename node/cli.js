#!/usr/bin/env node
/**
 * The `mcpping` command (docs/cli.md). Plumbing only: the command line,
 * the check's rules (count, interval, deadlines, the method, exit statuses)
 * and every byte printed come from the C application layer (csrc/src/app,
 * via the addon's cli* functions). This file opens the connection it is
 * asked to open, sends what it is asked to send, and writes what it is given.
 */
'use strict';
const path = require('node:path');
const native = require('./binding');
const { HttpSession, describe } = require('./http_session');
const { connect, PROTOCOL_VERSION } = require('./peer');
const errors = require('./errors');
const { ConfigReporter } = require('./cli_report');
const { version } = require('../package.json');

// What the state machine asks (app.h mcpp_cli_do) and what it is told.
const OPEN = 1, LIST_TOOLS = 2, SEND = 3, WAIT = 4, EXIT = 5;
const OPEN_OK = 0, SPAWN_FAILED = 1, CONNECT_FAILED = 2, HANDSHAKE_FAILED = 3, TIMED_OUT = 4;
const OK = 0, TIMEOUT = 1, ERROR = 2, INVALID = 3, UNSUPPORTED = 4, CLOSED = 5;

const nowMs = () => Math.floor(performance.now());

/** Ends the --config run with exit 2 and a one-line reason. */
class Fatal extends Error {}

/** The connection the check runs on: stdio (the C driver) or HTTP. */
class Target {
  constructor(o) {
    this.o = o;
    this.peer = null;
    this.session = null;
  }

  /** @returns {Promise<[number, Array<string|null>]>} a result and (peer, transport, protocol, session, reason) */
  async open(timeoutMs, signal) {
    const o = this.o;
    const keepalive = { timeoutMs: o.timeoutMs };
    const records = o.log || undefined;
    if (o.target === 'http') {
      const session = new HttpSession(o.url, { keepalive, records, headers: o.headers });
      this.session = session;
      signal.addEventListener('abort', () => session.close(), { once: true });
      if (o.init) {
        try {
          await session.initialize({ protocolVersion: PROTOCOL_VERSION, capabilities: {}, clientInfo: { name: 'mcpping', version } }, timeoutMs + native.cliStepSlackMs);
        } catch (err) {
          if (session.connectError) return [CONNECT_FAILED, [null, null, null, null, describe(session.connectError)]];
          return [HANDSHAKE_FAILED, [null, null, null, null, err.message]];
        }
      }
      const name = (session.serverInfo && session.serverInfo.name) || session.address;
      return [OPEN_OK, [name, 'streamable-http', session.protocolVersion, session.sessionId, null]];
    }
    const params = o.target === 'demo'
      ? { command: process.execPath, args: [path.join(__dirname, 'demo-server.js')] }
      : { command: o.command[0], args: o.command.slice(1) };
    if (Object.keys(o.env).length) params.env = o.env;
    try {
      // Server stderr is not shown, so that the output stays ping(8)'s, but
      // read: a server that exits is quoted by C ("status 3: fatal: ...").
      this.peer = await connect({ ...params, stderr: 'pipe', killGraceMs: native.appKillGraceMs }, { keepalive, records, initialize: false });
    } catch (err) {
      if (err.code === 'MCPP_ERR_SPAWN') return [SPAWN_FAILED, [null, null, null, null, err.message]];
      throw err;
    }
    signal.addEventListener('abort', () => this.peer.close(), { once: true });
    if (o.init) {
      try {
        // The step's own bound (check()) decides a timeout, so both
        // commands say the same: the handshake gets a second more.
        await this.peer.initialize({ timeoutMs: timeoutMs + native.cliStepSlackMs });
      } catch (err) {
        return [HANDSHAKE_FAILED, [null, null, null, null, err.message]];
      }
    }
    const fallback = o.target === 'demo' ? 'mcpping-demo' : path.basename(params.command);
    return [OPEN_OK, [this.peer.name || fallback, 'stdio', this.peer.protocolVersion, null, null]];
  }

  /** @returns {string|null} what the server wrote that is not JSON-RPC (C's sentence) */
  unreadable() {
    if (this.session) return this.session.driver.unreadable();
    return this.peer ? this.peer.conn.unreadable()[1] || null : null;
  }

  /** One check: [kind, rttMs, code, message] as app.h's mcpp_cli_replied takes them. */
  async check(method, timeoutMs, signal) {
    const conn = this.session || this.peer;
    if (method === 'ping') {
      try {
        return [OK, await conn.ping({ timeoutMs, signal }), null, null];
      } catch (err) {
        if (err instanceof errors.PingTimeoutError) return [TIMEOUT, 0, null, null];
        if (err instanceof errors.PingInvalidError) return [INVALID, 0, null, err.message];
        // The peer's own words: C's report says the code beside them.
        if (err instanceof errors.PingUnsupportedError) return [UNSUPPORTED, 0, err.rpcCode, err.rpcMessage];
        if (err instanceof errors.PingError) return [ERROR, 0, err.code, err.rpcMessage];
        if (err instanceof errors.ClosedError) return [CLOSED, 0, null, await this.closedReason(err, timeoutMs)];
        throw err;
      }
    }
    const t0 = performance.now();
    const timer = AbortSignal.timeout(timeoutMs);
    try {
      this.result = this.session
        ? await this.session.request(method, {}, timeoutMs)
        : await this.peer.request(method, {}, { timeoutMs: timeoutMs + native.cliStepSlackMs, signal: AbortSignal.any([timer, signal]) });
    } catch (err) {
      if (timer.aborted || err.answerKind === 'timeout') return [TIMEOUT, 0, null, null];
      // Its answer broke off: the engine's answer, as an error.
      if (err instanceof errors.RequestInDoubtError) return [ERROR, 0, err.rpcCode, err.rpcMessage];
      if (err instanceof errors.ClosedError) return [CLOSED, 0, null, await this.closedReason(err, timeoutMs)];
      if (signal.aborted) throw err;
      if (typeof err.code === 'number') return [ERROR, 0, err.code, err.message];
      if (this.session && this.session.connectError) return [CLOSED, 0, null, await this.closedReason(err, timeoutMs)];
      throw err;
    }
    const rtt = performance.now() - t0;
    if (!this.result || typeof this.result !== 'object' || Array.isArray(this.result)) return [INVALID, 0, null, null]; // C words it
    return [OK, rtt, null, null];
  }

  /**
   * Why the connection closed: what could not reach the URL, or a stdio
   * server's close reason ("server exited with status 3"), which arrives
   * just after the check that met it.
   * @param {Error} err @param {number} waitMs @returns {Promise<string>}
   */
  async closedReason(err, waitMs) {
    if (this.session) return this.session.connectError ? describe(this.session.connectError) : err.message;
    const peer = this.peer;
    if (peer && !peer.closeInfo) {
      let timer;
      await Promise.race([
        new Promise((resolve) => peer.once('closed', resolve)),
        new Promise((resolve) => (timer = setTimeout(resolve, waitMs))),
      ]);
      clearTimeout(timer);
    }
    return peer && peer.closeInfo ? peer.closeInfo.reason : err.message;
  }

  /** tools/list for --expect-tool: [kind, names, code, message]. */
  async tools(timeoutMs, signal) {
    const [kind, , code, message] = await this.check('tools/list', timeoutMs, signal);
    if (kind !== OK) return [kind, [], code, message];
    const tools = Array.isArray(this.result.tools) ? this.result.tools : [];
    return [OK, tools.filter((t) => t && typeof t.name === 'string').map((t) => t.name), null, null];
  }

  async close() {
    if (this.session) await this.session.close();
    else if (this.peer) await this.peer.close();
  }
}

/** Resolves true when promise settles first, false when signal aborts or ms pass (null: never). */
function first(promise, signal, ms) {
  return new Promise((resolve, reject) => {
    let timer = null;
    const done = (v) => {
      if (timer) clearTimeout(timer);
      signal.removeEventListener('abort', onAbort);
      resolve(v);
    };
    const onAbort = () => done(false);
    if (signal.aborted) return done(false);
    signal.addEventListener('abort', onAbort);
    if (ms !== null) timer = setTimeout(() => done(false), Math.max(0, ms));
    promise.then(() => done(true), (err) => {
      if (timer) clearTimeout(timer);
      signal.removeEventListener('abort', onAbort);
      reject(err);
    });
  });
}

/**
 * Aborted once nobody reads stdout any more (EPIPE: `mcpping ... | head -1`):
 * the run stops as at Ctrl-C, closes its server and exits with C's status
 * for it, saying nothing more (a write to a closed pipe fails quietly).
 */
const outputClosed = new AbortController();

function watchOutput() {
  process.stdout.on('error', (err) => {
    if (err && err.code === 'EPIPE') outputClosed.abort();
    else throw err;
  });
}

/** Runs the check the C state machine describes; resolves to the exit status. */
async function check(argv, o) {
  const run = native.cliRun(argv, nowMs());
  const stop = new AbortController();
  // One signal cuts whatever is in flight (Ctrl-C, -w, --connect-timeout):
  // after a cut the run only summarises and exits, so one per run is enough
  // and a check costs no new controller.
  const cut = new AbortController();
  const onSigint = () => {
    stop.abort();
    cut.abort();
  };
  process.on('SIGINT', onSigint);
  outputClosed.signal.addEventListener('abort', onSigint);
  const target = new Target(o);
  try {
    for (;;) {
      const [what, method, timeoutMs, untilMs, status, out, err] = native.cliNext(run, nowMs());
      if (out) process.stdout.write(out);
      if (err) process.stderr.write(err);
      if (what === EXIT) return status;
      if (what === OPEN) {
        const opening = target.open(timeoutMs, cut.signal);
        opening.catch(() => {});
        if (await first(opening, stop.signal, timeoutMs)) {
          const [result, info] = await opening;
          native.cliOpenDone(run, nowMs(), result, ...info);
        } else {
          const instead = target.unreadable(); // before the cut closes the server
          cut.abort();
          if (stop.signal.aborted) native.cliInterrupt(run, nowMs());
          else native.cliOpenDone(run, nowMs(), TIMED_OUT, null, null, null, null, instead);
        }
      } else if (what === LIST_TOOLS) {
        native.cliTools(run, nowMs(), ...await target.tools(timeoutMs, cut.signal));
      } else if (what === SEND) {
        const sending = target.check(method, timeoutMs, cut.signal);
        sending.catch(() => {});
        if (await first(sending, stop.signal, untilMs ? untilMs - nowMs() : null)) {
          native.cliReplied(run, nowMs(), ...(await sending));
        } else {
          cut.abort(); // Ctrl-C or -w
          native.cliInterrupt(run, nowMs());
        }
      } else if (what === WAIT) {
        const waited = new Promise((resolve) => setTimeout(resolve, Math.max(0, untilMs - nowMs())));
        if (!(await first(waited, stop.signal, null))) native.cliInterrupt(run, nowMs());
      }
    }
  } finally {
    process.off('SIGINT', onSigint);
    outputClosed.signal.removeEventListener('abort', onSigint);
    await target.close();
  }
}

/**
 * The hand-over to the --config runner: C's parsed options in its units.
 * @returns {object}
 */
function configOptions(o) {
  return {
    configs: o.configs, wrap: o.wrap, unwrap: o.unwrap, write: o.write, commandPath: o.commandPath,
    count: o.count, intervalS: o.intervalMs / 1000, timeoutS: o.timeoutMs / 1000, deadlineS: o.deadlineMs / 1000,
    connectTimeoutS: o.connectTimeoutMs / 1000, json: o.json, quiet: o.quiet, log: o.log,
  };
}

/** The --config files (C's choice: mcpp_config_files); throws Fatal. */
function loadConfigs(configs) {
  const config = require('./config');
  const picked = native.configFiles(configs, config.autoPaths());
  if (typeof picked === 'string') throw new Fatal(picked);
  try {
    return picked.map(([p, must]) => config.load(p, must));
  } catch (err) {
    if (err instanceof config.ConfigError) throw new Fatal(err.message);
    throw err;
  }
}

async function runConfig(opts) {
  const { checkAll } = require('./config_check');
  const files = loadConfigs(opts.configs);
  const stop = new AbortController();
  // Every server waiting between pings listens to it at once.
  require('node:events').setMaxListeners(0, stop.signal);
  const onSigint = () => stop.abort();
  process.on('SIGINT', onSigint);
  outputClosed.signal.addEventListener('abort', onSigint);
  const report = new ConfigReporter({ json: opts.json, quiet: opts.quiet });
  report.files(files.map((f) => [f.path, f.servers.length]));
  const servers = files.flatMap((f) => f.servers.map((s) => [s, f.workspace]));
  report.start(servers.length, opts.count, opts.intervalS, opts.timeoutS, opts.deadlineS);
  const plan = { count: opts.count, intervalS: opts.intervalS, timeoutS: opts.timeoutS, deadlineS: opts.deadlineS, log: opts.log };
  const start = Date.now();
  let results;
  try {
    results = await checkAll(servers, plan, stop.signal);
  } finally {
    process.off('SIGINT', onSigint);
    outputClosed.signal.removeEventListener('abort', onSigint);
  }
  return report.results(results, Date.now() - start);
}


/** @returns {Promise<number>} the exit status */
async function run(argv) {
  const o = native.cliParse(argv);
  if (o.done) { // -h, -V, bad usage: C's bytes and status
    process.stdout.write(o.out);
    process.stderr.write(o.err);
    return o.status;
  }
  if (o.mode === 'watch') {
    try {
      return await require('./watch').runWatch(argv, o, loadConfigs);
    } catch (err) {
      if (!(err instanceof Fatal)) throw err;
      process.stderr.write(`mcpping: ${err.message}\n`);
      return 2;
    }
  }
  if (o.mode === 'config') {
    if (o.wrap || o.unwrap) {
      const { runWrap } = require('./config_wrap');
      return runWrap({ file: o.configs[0], unwrap: o.unwrap, write: o.write, command: o.commandPath });
    }
    try {
      return await runConfig(configOptions(o));
    } catch (err) {
      if (!(err instanceof Fatal)) throw err;
      process.stderr.write(`mcpping: ${err.message}\n`);
      return 2;
    }
  }
  return check(argv, o);
}

if (require.main === module && process.argv[2] === 'wrap') {
  // The proxy owns stdin and stdout: nothing here may touch them first.
  process.exit(require('./wrap').main(process.argv.slice(3)));
} else if (require.main === module) {
  watchOutput();
  run(process.argv.slice(2)).then(
    (status) => {
      if (outputClosed.signal.aborted) process.exit(native.exitOutputClosed);
      process.stdout.write('', () => process.exit(outputClosed.signal.aborted ? native.exitOutputClosed : status));
    },
    (err) => {
      process.stderr.write(`mcpping: ${err && err.message ? err.message : err}\n`);
      process.exit(2);
    },
  );
}

module.exports = { run, configOptions };
