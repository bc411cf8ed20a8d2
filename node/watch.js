'use strict';
/**
 * `mcpping watch`: every server of a client config under standing watch.
 * Plumbing only: the command line, each server's state, the re-open
 * backoff, /status, /metrics, the listener's routing, every log line and
 * the redaction of secrets come from the C core (csrc/src/app/watch.c, via
 * the addon's watch* functions). This file opens the servers (stdio: a Peer
 * with keepalive and the library's reconnect; HTTP: an HttpSession with
 * keepalive), feeds their events to C, serves the bytes C gives for each
 * request on a net server and writes C's log bytes to stderr.
 */
const net = require('node:net');
const path = require('node:path');
const native = require('./binding');

// mcpping/watch.h mcpp_watch_why: C words each.
const WHY_TEXT = 0, WHY_NO_INITIALIZE = 1, WHY_UNREACHABLE = 2, WHY_INVALID = 3;
const { resolve, UnresolvedVariable } = require('./config');
const { HttpSession, describe } = require('./http_session');
const { connect, PROTOCOL_VERSION } = require('./peer');
const { version } = require('../package.json');

// A request head longer than this, or slower than this, gets no answer.
const MAX_HEAD = native.watchMaxHead;
const HEAD_TIMEOUT_MS = native.watchHeadTimeoutMs;
const EVENTS = native.watchEvents();

const nowMs = () => Math.floor(performance.now());

class Watch {
  constructor(argv, o) {
    this.w = native.watchNew(argv);
    this.o = o;
    this.entries = [];
    this.peers = new Map();
    this.opening = new Map();
    this.stopping = false;
    this.wake = null;
  }

  flush() {
    const out = native.watchOutput(this.w);
    if (out) process.stderr.write(out);
  }

  poke() {
    if (this.wake) this.wake();
  }

  add(server, workspace) {
    let live = server;
    let skip = native.configSkipReason(server.transport, Boolean(server.disabled));
    if (skip === null) {
      try {
        live = resolve(server, workspace);
      } catch (err) {
        if (!(err instanceof UnresolvedVariable)) throw err;
        skip = err.message; // names the field and the variable, never a value
      }
    }
    native.watchAdd(this.w, server.name, live.transport === 'stdio' ? 'stdio' : 'streamable-http', live.secrets, skip);
    this.entries.push(live);
  }

  /** The command's -i, -W and failures, down to the engine's floor (C's). */
  keepalive() {
    const o = this.o;
    return { intervalMs: o.intervalMs, timeoutMs: o.timeoutMs, failures: o.failures, minIntervalMs: native.minIntervalFloorMs };
  }

  onEvent(i, ev) {
    native.watchFeed(this.w, i, nowMs(), ev.type, ev.state, (ev.rttUs || 0) / 1e6, !!ev.invalid,
      ev.pingSeq || 0, ev.proof || null, ev.attempt || 0, ev.pid || 0, ev.message || null);
    this.flush();
  }

  /** The connection ended for good (reconnect gave up, an HTTP session lost). */
  onClosed(i, why) {
    if (this.stopping || this.opening.has(i) || !this.peers.has(i)) return;
    this.peers.delete(i);
    native.watchClosed(this.w, i, nowMs(), ...why);
    this.flush();
    this.poke();
  }

  async open(i) {
    const live = this.entries[i];
    const timeoutMs = this.o.connectTimeoutMs;
    let handle = null;
    let timer;
    try {
      if (live.transport === 'stdio') {
        const peer = await connect(
          { command: live.command, args: live.args, env: live.env, cwd: live.cwd || undefined, stderr: 'pipe', killGraceMs: native.appKillGraceMs },
          { keepalive: this.keepalive(), initialize: false, reconnect: true },
        );
        // C keeps the last line, for the log line of a server that goes down.
        peer.on('stderr', (chunk) => native.watchStderr(this.w, i, chunk));
        for (const name of EVENTS) if (name !== 'closed') peer.on(name, (ev) => this.onEvent(i, ev));
        peer.on('closed', (info) => {
          this.onEvent(i, { type: 'closed', state: 'closed' });
          this.onClosed(i, [WHY_TEXT, (info && info.reason) || null]);
        });
        handle = { peer, close: () => peer.close(), name: () => peer.name || path.basename(live.command), pid: () => peer.pid || 0,
          version: () => peer.protocolVersion, init: (ms) => peer.initialize({ timeoutMs: ms }), fatal: () => null,
          unreadable: () => peer.conn.unreadable()[1] || null };
      } else {
        const session = new HttpSession(live.url, { keepalive: this.keepalive(), headers: live.headers });
        for (const name of EVENTS) {
          session.driver.on(name, (ev) => {
            this.onEvent(i, ev);
            if (name === 'closed') this.onClosed(i, session.connectError ? [WHY_UNREACHABLE, describe(session.connectError)] : [WHY_TEXT, ev.message || null]);
          });
        }
        const clientInfo = { name: 'mcpping', version };
        handle = { session, close: () => session.close(), name: () => (session.serverInfo && session.serverInfo.name) || session.address,
          pid: () => 0, version: () => session.protocolVersion, fatal: () => session.connectError, unreadable: () => null,
          init: (ms) => session.initialize({ protocolVersion: PROTOCOL_VERSION, capabilities: {}, clientInfo }, ms) };
      }
      this.peers.set(i, handle);
      const deadline = new Promise((_, reject) => {
        timer = setTimeout(() => reject(Object.assign(new Error('initialize timed out'), { watchTimeout: true })), timeoutMs);
      });
      await Promise.race([handle.init(timeoutMs + native.cliStepSlackMs), deadline]);
      native.watchOpened(this.w, i, nowMs(), handle.name(), handle.version(), handle.pid());
    } catch (err) {
      this.peers.delete(i);
      const reason = why(err, handle); // before the close forgets what the server wrote
      if (handle) await handle.close().catch(() => {});
      if (!this.stopping) native.watchOpenFailed(this.w, i, nowMs(), ...reason);
    } finally {
      clearTimeout(timer);
      this.opening.delete(i);
      this.flush();
      this.poke();
    }
  }

  serve(socket) {
    let head = Buffer.alloc(0);
    socket.setTimeout(HEAD_TIMEOUT_MS, () => socket.destroy());
    socket.on('error', () => {});
    socket.on('data', (chunk) => {
      head = Buffer.concat([head, chunk]);
      const end = head.indexOf('\r\n\r\n');
      if (end >= 0) {
        socket.removeAllListeners('data');
        socket.end(native.watchRespond(this.w, nowMs(), head.subarray(0, end + 4)));
      } else if (head.length > MAX_HEAD) {
        socket.destroy();
      }
    });
  }

  async run() {
    const o = this.o;
    let stop;
    const stopped = new Promise((r) => { stop = r; });
    process.on('SIGTERM', stop);
    process.on('SIGINT', stop);
    const server = net.createServer((socket) => this.serve(socket));
    const listening = await new Promise((res) => {
      server.once('error', (err) => res(err));
      server.listen(o.listenPort, o.listenHost, () => res(null));
    });
    if (listening) {
      native.watchListenFailed(this.w, listening.code || listening.message);
      this.flush();
      process.off('SIGTERM', stop);
      process.off('SIGINT', stop);
      return o.exitUsage;
    }
    native.watchListening(this.w, o.listenHost, server.address().port);
    this.flush();
    let done = false;
    stopped.then(() => { done = true; this.poke(); });
    while (!done) {
      const [i, nextMs] = native.watchDue(this.w, nowMs());
      if (i >= 0) {
        this.opening.set(i, this.open(i));
        continue;
      }
      await new Promise((res) => {
        let timer = null;
        this.wake = () => { clearTimeout(timer); this.wake = null; res(); };
        if (nextMs >= 0) timer = setTimeout(this.wake, Math.max(0, nextMs - nowMs()));
      });
    }
    this.stopping = true;
    native.watchStopping(this.w);
    this.flush();
    await new Promise((res) => server.close(() => res()));
    // Closing a server being opened ends its handshake at once.
    await Promise.allSettled([...this.peers.values()].map((h) => h.close()));
    await Promise.allSettled([...this.opening.values()]);
    native.watchStopped(this.w);
    this.flush();
    process.off('SIGTERM', stop);
    process.off('SIGINT', stop);
    return 0;
  }
}

/** [why, detail] of a failed open, for C to word (mcpping/watch.h mcpp_watch_why). */
function why(err, handle) {
  // What a stdio server wrote instead of JSON-RPC, if it did.
  if (err && err.watchTimeout) return [WHY_NO_INITIALIZE, handle ? handle.unreadable() : null];
  const fatal = err && err.code !== 'MCPP_ERR_SPAWN' && handle && handle.fatal();
  if (fatal) return [WHY_UNREACHABLE, describe(fatal)];
  // A value that cannot be used (a header C would not send, say): its
  // message could quote a secret, so C words it, as Python and --config do.
  if (err instanceof TypeError || err instanceof RangeError) return [WHY_INVALID, null];
  return [WHY_TEXT, (err && err.message) || String(err)];
}

/** Runs `mcpping watch` until SIGTERM or SIGINT; resolves to the exit status. */
async function runWatch(argv, o, loadConfigs) {
  const files = loadConfigs(o.configs);
  const w = new Watch(argv, o);
  for (const f of files) for (const s of f.servers) w.add(s, f.workspace);
  return w.run();
}

module.exports = { runWatch };
