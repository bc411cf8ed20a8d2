'use strict';
/**
 * `mcpping --config`: checks every server of a client config at once.
 *
 * Plumbing only: each server's check is C's state machine
 * (csrc/src/app/config_run.c, via the addon's configRun* functions): the
 * skips, the deadline, the handshake's bounds, the ping grid, every status
 * and reason. This file resolves, spawns or connects, shakes hands, pings,
 * waits and closes when asked, and returns C's row for the table.
 */
const native = require('./binding');
const { resolve, UnresolvedVariable } = require('./config');
const { HttpSession, describe } = require('./http_session');
const { connect, PROTOCOL_VERSION } = require('./peer');
const errors = require('./errors');
const { RpcError } = require('./rpc');
const { pause } = require('./pause');
const { version } = require('../package.json');

// What the state machine asks (config_run.h mcpp_config_do) and what it is told.
const OPEN = 1, HANDSHAKE = 2, PING = 3, WAIT = 4, CLOSE = 5, DONE = 6;
const OPEN_OK = 0, UNRESOLVED = 1, SPAWN_FAILED = 2, INVALID = 3;
const OK = 0, TIMEOUT = 1, ERROR = 2, BAD_REPLY = 3, UNSUPPORTED = 4, CLOSED = 5;

const nowMs = () => Math.floor(performance.now());

/**
 * One opened server: a stdio Peer or an HTTP session behind the same face;
 * close() tells C's run what the server wrote on stdout that is not
 * JSON-RPC and resolves to how it ended, as configRunClosed takes it. The
 * server's stderr goes to C's run as it comes.
 */
async function open(live, plan, run) {
  const records = plan.log || undefined;
  const keepalive = { timeoutMs: Math.max(1, Math.round(plan.timeoutS * 1000)) };
  if (live.transport === 'stdio') {
    const peer = await connect(
      // plan.environ: set on top of the SDKs' safe subset of ours, instead of ours.
      { command: live.command, args: live.args, env: { ...plan.environ, ...live.env }, cwd: live.cwd || undefined, stderr: 'pipe', killGraceMs: native.appKillGraceMs },
      { keepalive, records, initialize: false, inheritEnv: !plan.environ },
    );
    peer.on('stderr', (chunk) => native.configRunStderr(run, chunk));
    return {
      initialize: (timeoutMs) => peer.initialize({ timeoutMs }),
      ping: (timeoutMs) => peer.ping({ timeoutMs }),
      protocolVersion: () => peer.protocolVersion,
      unreachable: () => false,
      close: async () => {
        native.configRunUnreadable(run, ...peer.conn.unreadable()); // before the close forgets them
        const info = await peer.close();
        return [true, info.exitStatus, info.termSignal, null];
      },
    };
  }
  const session = new HttpSession(live.url, { keepalive, records, headers: live.headers });
  const clientInfo = { name: 'mcpping', version };
  return {
    initialize: (timeoutMs) => session.initialize({ protocolVersion: PROTOCOL_VERSION, capabilities: {}, clientInfo }, timeoutMs),
    ping: (timeoutMs) => session.ping({ timeoutMs }),
    protocolVersion: () => session.protocolVersion,
    unreachable: () => session.connectError !== null,
    close: async () => {
      await session.close();
      return [false, 0, 0, session.connectError ? describe(session.connectError) : null];
    },
  };
}

/** [result, reason, target] as configRunOpenDone takes them. */
async function openStep(server, workspace, plan, run) {
  let live;
  try {
    live = resolve(server, workspace);
  } catch (err) {
    if (err instanceof UnresolvedVariable) return [UNRESOLVED, err.message, null];
    throw err;
  }
  native.configRunSecrets(run, live.secrets); // before the server can say anything
  try {
    return [OPEN_OK, null, await open(live, plan, run)];
  } catch (err) {
    if (err.code === 'MCPP_ERR_SPAWN') return [SPAWN_FAILED, err.message, null];
    return [INVALID, null, null];
  }
}

/** Runs initialize until it settles or untilMs passes, and feeds the outcome. */
async function handshake(run, target, timeoutMs, untilMs) {
  let timer;
  const late = new Promise((resolve_) => { timer = setTimeout(() => resolve_('late'), Math.max(0, untilMs - nowMs())); });
  const init = target.initialize(timeoutMs).then(() => 'done');
  init.catch(() => {}); // settles once the connection closes
  try {
    if (await Promise.race([init, late]) === 'late') native.configRunHandshakeTimedOut(run, nowMs());
    else native.configRunHandshakeDone(run, nowMs(), target.protocolVersion());
  } catch (err) {
    const gone = err instanceof errors.ClosedError || err.kind === 'closed' || target.unreachable();
    native.configRunHandshakeFailed(run, nowMs(), gone, err instanceof RpcError ? err.code : null, err.message);
  } finally {
    clearTimeout(timer);
  }
}

/** One ping: [kind, rttMs] as configRunReplied takes them. */
async function ping(target, timeoutMs) {
  try {
    return [OK, await target.ping(timeoutMs)];
  } catch (err) {
    if (err instanceof errors.PingTimeoutError) return [TIMEOUT, 0];
    if (err instanceof errors.PingUnsupportedError) return [UNSUPPORTED, 0];
    if (err instanceof errors.PingInvalidError) return [BAD_REPLY, 0];
    if (err instanceof errors.PingError) return [ERROR, 0];
    if (err instanceof errors.ClosedError) return [CLOSED, 0];
    throw err;
  }
}

/**
 * One server's check, run as C's state machine asks; its row.
 * @param {import('./config').Server} server
 * @param {string} workspace
 * @param {{count: number, intervalS: number, timeoutS: number, deadlineS: number, log: string|null}} plan
 * @param {AbortSignal} stop Ctrl-C
 */
async function check(server, workspace, plan, stop) {
  const run = native.configRun(server.transport, Boolean(server.disabled), plan.count, Math.round(plan.intervalS * 1000),
    Math.max(1, Math.round(plan.timeoutS * 1000)), Math.round(plan.deadlineS * 1000), nowMs());
  let target = null;
  let closed = false;
  try {
    for (;;) {
      if (stop.aborted) native.configRunInterrupt(run, nowMs());
      const [what, timeoutMs, untilMs] = native.configRunNext(run, nowMs());
      if (what === DONE) break;
      if (what === OPEN) {
        const [result, reason, opened] = await openStep(server, workspace, plan, run);
        target = opened;
        native.configRunOpenDone(run, nowMs(), result, reason);
      } else if (what === HANDSHAKE) {
        await handshake(run, target, timeoutMs, untilMs);
      } else if (what === PING) {
        native.configRunReplied(run, nowMs(), ...(await ping(target, timeoutMs)));
      } else if (what === WAIT) {
        await pause(untilMs - nowMs(), stop);
      } else if (what === CLOSE) {
        closed = true;
        native.configRunClosed(run, nowMs(), ...(await target.close()));
      }
    }
  } finally {
    if (target && !closed) await target.close();
  }
  const { name, transport, file, jsonPath } = server;
  return { ...native.configRunRow(run), name, transport, file, jsonPath };
}

/**
 * Checks every [server, workspace] at once; rows in the given order.
 * @returns {Promise<object[]>}
 */
function checkAll(servers, plan, stop) {
  return Promise.all(servers.map(([s, ws]) => check(s, ws, plan, stop)));
}

module.exports = { check, checkAll };
