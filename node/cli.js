#!/usr/bin/env node
/**
 * The `mcpping` command (docs/cli.md): ping a stdio server, a Streamable
 * HTTP server or the bundled demo, ping(8) style.
 */
'use strict';
const fs = require('node:fs');
const path = require('node:path');
const { parseArgs, UsageError, USAGE } = require('./cli_args');
const { Reporter, ConfigReporter } = require('./cli_report');
const { pause } = require('./pause');
const { HttpSession, describe } = require('./http_session');
const { connect, PROTOCOL_VERSION } = require('./peer');
const errors = require('./errors');
const { version } = require('../package.json');

const FIRST_VERSION_WITHOUT_PING = '2026-07-28';

/** Ends the run with exit 2 and a one-line reason. */
class Fatal extends Error {}

/**
 * Opens the target and performs the handshake.
 * @returns {Promise<{peer: string, transport: string, protocolVersion: string|null,
 *   sessionId: string|null, ping: Function, close: Function}>}
 */
async function open(opts, handshakeMs) {
  if (opts.log) {
    try {
      fs.closeSync(fs.openSync(opts.log, 'a'));
    } catch (err) {
      throw new Fatal(`cannot open log: ${err.message}`);
    }
  }
  const keepalive = { timeoutMs: Math.max(1, Math.round(opts.timeoutS * 1000)) };
  const records = opts.log || undefined;
  if (opts.mode === 'http') return openHttp(opts, keepalive, records, handshakeMs);
  const params = opts.mode === 'demo'
    ? { command: process.execPath, args: [path.join(__dirname, 'demo-server.js')] }
    : { command: opts.command[0], args: opts.command.slice(1) };
  const fallbackName = opts.mode === 'demo' ? 'mcpping-demo' : path.basename(params.command);
  let peer;
  try {
    // Server stderr is dropped so that the output stays ping(8)'s (as in
    // the Python command).
    peer = await connect({ ...params, stderr: 'ignore' }, { keepalive, records, initialize: false });
  } catch (err) {
    throw new Fatal(err.code === 'MCPP_ERR_SPAWN' ? err.message : `cannot start ${params.command}: ${err.message}`);
  }
  if (opts.init) {
    try {
      await peer.initialize({ timeoutMs: handshakeMs });
    } catch (err) {
      await peer.close();
      const why = peer.closeInfo && err.code === 'MCPP_ERR_CLOSED' ? endedText(peer.closeInfo) : err.message;
      throw new Fatal(`handshake failed: ${why}`);
    }
  }
  return {
    peer: peer.name || fallbackName,
    transport: 'stdio',
    protocolVersion: peer.protocolVersion,
    sessionId: null,
    ping: (o) => peer.ping(o),
    close: () => peer.close(),
  };
}

async function openHttp(opts, keepalive, records, handshakeMs) {
  const session = new HttpSession(opts.url, { keepalive, records });
  const host = new URL(opts.url).host;
  if (opts.init) {
    try {
      await session.initialize(
        { protocolVersion: PROTOCOL_VERSION, capabilities: {}, clientInfo: { name: 'mcpping', version } },
        handshakeMs,
      );
    } catch (err) {
      session.driver.close('handshake failed');
      if (session.connectError) throw new Fatal(`cannot connect to ${opts.url}: ${describe(session.connectError)}`);
      throw new Fatal(`handshake failed: ${err.message}`);
    }
  }
  return {
    peer: (session.serverInfo && session.serverInfo.name) || host,
    transport: 'streamable-http',
    protocolVersion: session.protocolVersion,
    sessionId: session.sessionId,
    ping: (o) => session.ping(o),
    close: () => session.close(),
    connectError: () => session.connectError,
  };
}

/** @param {object} info close info @returns {string} */
function endedText(info) {
  // Python's words (peer.py Peer._closed_during_handshake): both commands print the same line.
  let reason = info.reason;
  if (!/^server (exited|killed)/.test(reason)) {
    const how = info.termSignal ? `server killed by signal ${info.termSignal}`
      : info.exitStatus >= 0 ? `server exited with status ${info.exitStatus}` : 'server closed the connection';
    reason = `${how}; ${reason}`;
  }
  return `the server ended before answering initialize: ${reason}`;
}

/**
 * --config: checks every server of the configs at once, one row each.
 * @returns {Promise<number>} the exit status
 */
async function runConfig(opts) {
  const config = require('./config');
  const { checkAll } = require('./config_check');
  const isFile = (p) => {
    try {
      return fs.statSync(p).isFile();
    } catch {
      return false;
    }
  };
  const paths = [];
  let auto = false;
  for (const c of opts.configs) {
    if (c === 'auto') {
      auto = true;
      for (const p of config.autoPaths()) if (isFile(p) && !paths.includes(p)) paths.push(p);
    } else if (!paths.includes(c)) {
      paths.push(c);
    }
  }
  if (paths.length === 0) throw new Fatal(`--config auto: no client config found in ${config.autoPaths().join(', ')}`);
  const files = [];
  for (const p of paths) {
    try {
      files.push(config.load(p, !auto || opts.configs.includes(p)));
    } catch (err) {
      if (err instanceof config.ConfigError) throw new Fatal(err.message);
      throw err;
    }
  }
  if (opts.log) {
    try {
      fs.closeSync(fs.openSync(opts.log, 'a'));
    } catch (err) {
      throw new Fatal(`cannot open log: ${err.message}`);
    }
  }
  const stop = new AbortController();
  // Every server waiting between pings listens to it at once.
  require('node:events').setMaxListeners(0, stop.signal);
  const onSigint = () => stop.abort();
  process.on('SIGINT', onSigint);
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
  }
  return report.results(results, Date.now() - start);
}

/** @returns {Promise<number>} the exit status */
async function run(argv) {
  let opts;
  try {
    opts = parseArgs(argv);
  } catch (err) {
    if (err instanceof UsageError) {
      process.stderr.write(`mcpping: ${err.message}\n`);
      return 2;
    }
    throw err;
  }
  if (opts.mode === 'help') {
    process.stdout.write(USAGE);
    return 0;
  }
  if (opts.mode === 'version') {
    process.stdout.write(`mcpping ${version}\n`);
    return 0;
  }
  if (opts.mode === 'config') {
    try {
      return await runConfig(opts);
    } catch (err) {
      if (!(err instanceof Fatal)) throw err;
      process.stderr.write(`mcpping: ${err.message}\n`);
      return 2;
    }
  }

  const stop = new AbortController();
  const onSigint = () => stop.abort();
  process.on('SIGINT', onSigint);
  let deadlineTimer = null;
  if (opts.deadlineS !== null) deadlineTimer = setTimeout(() => stop.abort(), opts.deadlineS * 1000);
  const handshakeMs = Math.max(1, Math.min(30000, opts.deadlineS !== null ? Math.ceil(opts.deadlineS * 1000) : 30000));

  const report = new Reporter({ json: opts.json, quiet: opts.quiet });
  let target;
  try {
    target = await open(opts, handshakeMs);
    if (target.protocolVersion && target.protocolVersion >= FIRST_VERSION_WITHOUT_PING) {
      await target.close();
      throw new Fatal(`ping unsupported: protocol ${target.protocolVersion} has no ping`);
    }
  } catch (err) {
    if (deadlineTimer) clearTimeout(deadlineTimer);
    process.off('SIGINT', onSigint);
    if (err instanceof Fatal) {
      process.stderr.write(`mcpping: ${err.message}\n`);
      return 2;
    }
    throw err;
  }

  const timeoutMs = Math.max(1, Math.round(opts.timeoutS * 1000));
  const intervalMs = Math.round(opts.intervalS * 1000);
  report.connected({ peer: target.peer, transport: target.transport, protocolVersion: target.protocolVersion, sessionId: target.sessionId, timeoutMs, intervalMs });

  const stats = { sent: 0, received: 0, failed: 0 };
  let unsupported = null;
  let lost = null;
  const first = Date.now();
  while (!stop.signal.aborted && (opts.count === null || stats.sent < opts.count)) {
    const seq = stats.sent + 1;
    stats.sent++;
    try {
      const rtt = await target.ping({ timeoutMs, signal: stop.signal });
      stats.received++;
      report.pong(seq, rtt);
    } catch (err) {
      if (stop.signal.aborted && !(err instanceof errors.McppError)) break; // Ctrl-C or -w mid-ping
      stats.failed++;
      if (err instanceof errors.PingUnsupportedError) {
        unsupported = err;
        report.unsupported(seq, err.rpcCode, err.message);
        break;
      } else if (err instanceof errors.PingTimeoutError) {
        report.timeout(seq, timeoutMs);
      } else if (err instanceof errors.PingInvalidError) {
        report.invalid(seq, err.message);
      } else if (err instanceof errors.PingError) {
        report.pingError(seq, err.code, err.message);
      } else if (err instanceof errors.ClosedError) {
        // The connection went away: that ping was never really sent.
        stats.sent--;
        if (stats.received === 0) {
          lost = target.connectError && target.connectError()
            ? `cannot connect to ${opts.url}: ${describe(target.connectError())}`
            : `connection closed: ${err.message}`;
        }
        break;
      } else {
        throw err;
      }
    }
    if (opts.count !== null && stats.sent >= opts.count) break;
    // Pings keep to a grid from the first one, as ping(8) does.
    await pause(first + stats.sent * intervalMs - Date.now(), stop.signal);
  }
  const timeMs = Date.now() - first;
  if (deadlineTimer) clearTimeout(deadlineTimer);
  process.off('SIGINT', onSigint);
  await target.close();

  if (unsupported) {
    const code = unsupported.rpcCode !== null ? `code=${unsupported.rpcCode} ` : '';
    process.stderr.write(`mcpping: ping unsupported: ${code}${unsupported.message}\n`);
    return 2;
  }
  if (lost) {
    process.stderr.write(`mcpping: ${lost}\n`);
    return 2;
  }
  report.summary({ sent: stats.sent, received: stats.received, timeMs });
  return stats.received === stats.sent && stats.sent > 0 ? 0 : 1;
}

if (require.main === module && process.argv[2] === 'wrap') {
  // The proxy owns stdin and stdout: nothing here may touch them first.
  process.exit(require('./wrap').main(process.argv.slice(3)));
} else if (require.main === module && process.argv.slice(2).some((a) => a === '--wrap' || a === '--unwrap')) {
  require('./config_wrap').main(process.argv.slice(2)).then((status) => process.exit(status));
} else if (require.main === module) {
  run(process.argv.slice(2)).then(
    (status) => {
      process.stdout.write('', () => process.exit(status));
    },
    (err) => {
      process.stderr.write(`mcpping: ${err && err.message ? err.message : err}\n`);
      process.exit(2);
    },
  );
}

module.exports = { run };
