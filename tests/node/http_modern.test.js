'use strict';
// A Streamable HTTP server on protocol 2026-07-28 only (issue 22): the C
// handshake opens it (initialize refused, server/discover), no ping ever
// reaches it, the engine watches it by probe, a frozen one goes stale, and
// a handshake timeout says the same sentence over HTTP and over stdio.
const test = require('node:test');
const assert = require('node:assert/strict');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const net = require('node:net');
const { spawn } = require('node:child_process');
const mcpping = require('../../node');
const { HttpSession } = require('../../node/http_session');
const h = require('./helpers');

const KEEPALIVE = { intervalMs: 300, timeoutMs: 500, failures: 2, minIntervalMs: 100, jitterPct: 0, onStale: 'report' };

async function startModern() {
  const port = await h.freePort();
  const log = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'http-modern-')), 'methods.log');
  const { command, args } = h.peer('http_modern.py', [String(port), '--log', log]);
  const child = spawn(command, args, { stdio: 'ignore' });
  for (;;) {
    const up = await new Promise((resolve) => {
      const s = net.connect(port, '127.0.0.1', () => { s.destroy(); resolve(true); });
      s.on('error', () => resolve(false));
    });
    if (up) break;
    if (child.exitCode !== null) throw new Error('http_modern.py exited');
    await new Promise((resolve) => setTimeout(resolve, 50)); // readiness polling of a foreign process
  }
  return { url: `http://127.0.0.1:${port}/mcp`, child, methods: () => (fs.existsSync(log) ? fs.readFileSync(log, 'utf8').split('\n').filter(Boolean) : []) };
}

test('Node HTTP opens a 2026-07-28-only server, never pings it, and watches it by probe', async () => {
  const srv = await startModern();
  const session = new HttpSession(srv.url, { keepalive: KEEPALIVE });
  try {
    await session.initialize({}, 10000);
    assert.equal(session.protocolVersion, '2026-07-28');
    assert.equal(session.modern, true);
    assert.equal(session.serverInfo.name, 'http-modern');
    assert.equal(session.sessionId, null);
    const ev = await h.nextEvent(session.driver, 'probe_ok', 20000);
    assert.equal(ev.proof, 'probe:server/discover');
    // tools/list comes as SSE with a comment first: the C parser reads it.
    const tools = await session.request('tools/list', {}, 10000);
    assert.equal(tools.tools[0].name, 'echo');
    const call = await session.request('tools/call', { name: 'echo', arguments: {} }, 10000);
    const meta = JSON.parse(call.content[0].text);
    assert.equal(meta['io.modelcontextprotocol/protocolVersion'], '2026-07-28');
  } finally {
    await session.close();
    srv.child.kill();
  }
  const methods = srv.methods();
  assert.deepEqual(methods.slice(0, 2), ['initialize', 'server/discover']);
  assert.ok(!methods.includes('ping') && !methods.includes('notifications/initialized'), methods.join(' '));
});

test('a frozen 2026-07-28 HTTP server goes stale by probe', async () => {
  const srv = await startModern();
  const session = new HttpSession(srv.url, { keepalive: KEEPALIVE });
  try {
    await session.initialize({}, 10000);
    const stale = h.nextEvent(session.driver, 'stale', 20000);
    srv.child.kill('SIGSTOP');
    const ev = await stale;
    assert.equal(ev.proof, 'probe:server/discover');
  } finally {
    srv.child.kill('SIGCONT');
    await session.close();
    srv.child.kill();
  }
  assert.ok(!srv.methods().includes('ping'));
});

test('a handshake timeout says the same sentence over HTTP and over stdio', async () => {
  const srv = await startModern();
  srv.child.kill('SIGSTOP'); // accepts connections, answers nothing
  const session = new HttpSession(srv.url, {});
  let httpErr;
  try {
    await session.initialize({}, 500).catch((err) => (httpErr = err));
  } finally {
    srv.child.kill('SIGCONT');
    await session.close();
    srv.child.kill();
  }
  const peer = new mcpping.Peer({ command: process.execPath, args: ['-e', 'setTimeout(() => {}, 60000)'] });
  let stdioErr;
  try {
    await peer.initialize({ timeoutMs: 500 }).catch((err) => (stdioErr = err));
  } finally {
    await peer.close();
  }
  assert.equal(httpErr.message, 'no initialize result after 0.5 s');
  assert.equal(stdioErr.message, httpErr.message);
  assert.equal(httpErr.kind, 'timed_out');
  assert.equal(stdioErr.kind, 'timed_out');
});
