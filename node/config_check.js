'use strict';
/**
 * `mcpping --config`: checks every server of a client config at once.
 *
 * Each server gets its own deadline: spawn (or connect), handshake, then up
 * to `count` pings. The outcome is one result per server; the statuses and
 * their reasons are docs/cli.md's, and python/mcpping/_config_check.py gives
 * the same ones. No reason ever carries an env or headers value, a URL or
 * an argument.
 */
const { resolve, UnresolvedVariable } = require('./config');
const { HttpSession, describe } = require('./http_session');
const { connect, PROTOCOL_VERSION } = require('./peer');
const errors = require('./errors');
const { RpcError } = require('./rpc');
const { pause } = require('./pause');
const { version } = require('../package.json');

const NO_PING_VERSION = '2026-07-28';


/** Settles with 'deadline' after ms (the timer is cleared by the returned cancel). */
function deadlineAfter(ms) {
  let timer;
  const promise = new Promise((resolve_) => {
    timer = setTimeout(() => resolve_('deadline'), Math.max(0, ms));
  });
  return { promise, cancel: () => clearTimeout(timer) };
}

/** Why initialize was refused, as Python's command says it. */
function initializeFailure(err) {
  if (err instanceof RpcError) return `initialize failed: ${err.code} ${err.message}`;
  return err.message;
}

/** @param {{exitStatus: number, termSignal: number}} info */
function exitText(info) {
  if (info.termSignal) return `server killed by signal ${info.termSignal}`;
  return `server exited with status ${info.exitStatus}`;
}

/**
 * One opened server: a stdio Peer or an HTTP session behind the same face.
 * @returns {Promise<{initialize: Function, ping: Function, close: Function,
 *   protocolVersion: () => string|null, unreachable: () => boolean,
 *   closedReason: () => Promise<string>}>}
 */
async function open(live, plan, res) {
  const records = plan.log || undefined;
  const keepalive = { timeoutMs: Math.max(1, Math.round(plan.timeoutS * 1000)) };
  if (live.transport === 'stdio') {
    const peer = await connect(
      // plan.environ: the environment to start in instead of ours.
      { command: live.command, args: live.args, env: { ...plan.environ, ...live.env }, cwd: live.cwd || undefined, stderr: 'pipe' },
      { keepalive, records, initialize: false, inheritEnv: !plan.environ },
    );
    // The server's last stderr line (kept for a server that dies) and the
    // lines on stdout that are not JSON.
    let tail = '';
    peer.on('stderr', (chunk) => { tail = (tail + chunk.toString('utf8')).slice(-4096); });
    peer.on('invalid_message', () => { res.nonJsonLines++; });
    return {
      lastStderr: () => tail.split(/\r?\n/).map((l) => l.trim()).filter(Boolean).at(-1) || null,
      initialize: (timeoutMs) => peer.initialize({ timeoutMs }),
      ping: (o) => peer.ping(o),
      close: () => peer.close(),
      protocolVersion: () => peer.protocolVersion,
      unreachable: () => false,
      closedReason: async () => exitText(await peer.close()),
    };
  }
  const session = new HttpSession(live.url, { keepalive, records, headers: live.headers });
  const clientInfo = { name: 'mcpping', version };
  return {
    initialize: (timeoutMs) => session.initialize({ protocolVersion: PROTOCOL_VERSION, capabilities: {}, clientInfo }, timeoutMs),
    ping: (o) => session.ping(o),
    close: () => session.close(),
    protocolVersion: () => session.protocolVersion,
    unreachable: () => session.connectError !== null,
    closedReason: async () => (session.connectError ? `cannot connect: ${describe(session.connectError)}` : 'connection closed'),
  };
}

/**
 * Spawns or connects, runs the handshake and pings one server.
 * @param {import('./config').Server} server
 * @param {string} workspace
 * @param {{count: number, intervalS: number, timeoutS: number, deadlineS: number, log: string|null}} plan
 * @param {AbortSignal} stop Ctrl-C
 */
async function check(server, workspace, plan, stop) {
  const res = { server, status: 'ok', reason: null, protocolVersion: null, sent: 0, received: 0, rttsMs: [], lastStderr: null, nonJsonLines: 0 };
  if (server.disabled) return { ...res, status: 'skipped', reason: 'disabled' };
  if (server.transport === 'sse') return { ...res, status: 'skipped', reason: 'legacy HTTP+SSE transport' };
  const end = Date.now() + plan.deadlineS * 1000;
  let live;
  try {
    live = resolve(server, workspace);
  } catch (err) {
    if (err instanceof UnresolvedVariable) return { ...res, status: 'not started', reason: err.message };
    throw err;
  }
  let target;
  try {
    target = await open(live, plan, res);
  } catch (err) {
    if (err.code === 'MCPP_ERR_SPAWN') return { ...res, status: 'spawn failed', reason: err.message };
    // A NUL in an argument and the like; the message could quote a value.
    return { ...res, status: 'spawn failed', reason: 'invalid command line or environment' };
  }
  try {
    await handshake(target, res, end);
    if (res.status === 'ok' && plan.count) await pings(target, res, plan, end, stop);
  } finally {
    await target.close();
  }
  if ((res.status === 'handshake failed' || res.status === 'closed') && target.lastStderr) res.lastStderr = target.lastStderr();
  return res;
}

async function handshake(target, res, end) {
  const left = end - Date.now();
  const deadline = deadlineAfter(left);
  const init = target.initialize(Math.max(1, Math.ceil(left)) + 1000).then(() => 'done');
  let outcome;
  try {
    outcome = await Promise.race([init, deadline.promise]);
  } catch (err) {
    res.status = 'handshake failed';
    const gone = err instanceof errors.ClosedError || err.kind === 'closed' || target.unreachable();
    res.reason = gone ? await target.closedReason() : initializeFailure(err);
    return;
  } finally {
    deadline.cancel();
  }
  if (outcome === 'deadline') {
    init.catch(() => {}); // settles once the connection closes
    Object.assign(res, { status: 'timeout', reason: 'no initialize result' });
    return;
  }
  const pv = target.protocolVersion();
  res.protocolVersion = pv;
  if (pv && pv >= NO_PING_VERSION) Object.assign(res, { status: 'unsupported', reason: `protocol ${pv} has no ping` });
}

async function pings(target, res, plan, end, stop) {
  const first = Date.now();
  const timeoutMs = Math.max(1, Math.round(plan.timeoutS * 1000));
  for (let seq = 0; seq < plan.count; seq++) {
    // Pings keep to a grid from the first one, as ping(8) does.
    if (seq) await pause(Math.min(first + seq * plan.intervalS * 1000, end) - Date.now(), stop);
    const left = end - Date.now();
    if (left <= 0 || stop.aborted) break;
    const wait = Math.max(1, Math.min(timeoutMs, Math.floor(left)));
    try {
      const rtt = await target.ping({ timeoutMs: wait });
      res.sent++;
      res.received++;
      res.rttsMs.push(rtt);
    } catch (err) {
      if (err instanceof errors.PingTimeoutError) {
        if (wait < timeoutMs) break; // the deadline cut this ping short: not counted
        res.sent++;
      } else if (err instanceof errors.PingUnsupportedError) {
        Object.assign(res, { status: 'unsupported', reason: null });
        return;
      } else if (err instanceof errors.PingInvalidError || err instanceof errors.PingError) {
        res.sent++;
      } else if (err instanceof errors.ClosedError) {
        Object.assign(res, { status: 'closed', reason: await target.closedReason() });
        return;
      } else {
        throw err;
      }
    }
  }
  if (res.sent === 0) Object.assign(res, { status: 'timeout', reason: 'no ping finished before the deadline' });
  else if (res.received < res.sent) res.status = 'loss';
}

/**
 * Checks every [server, workspace] at once; results in the given order.
 * @returns {Promise<object[]>}
 */
function checkAll(servers, plan, stop) {
  return Promise.all(servers.map(([s, ws]) => check(s, ws, plan, stop)));
}

module.exports = { check, checkAll };
