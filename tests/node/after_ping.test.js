'use strict';
// Liveness after ping (issue 9): sessions on protocol 2026-07-28 and servers
// that refuse ping, over StdioClientTransport, the SDK Client and HTTP.
// Every conviction meets interval + timeout x failures + 1 s.
const test = require('node:test');
const assert = require('node:assert/strict');
const net = require('node:net');
const { spawn } = require('node:child_process');
const { once } = require('node:events');
const { Client } = require('@modelcontextprotocol/sdk/client/index.js');
const sdkStdio = require('@modelcontextprotocol/sdk/client/stdio.js');
const sdkTypes = require('@modelcontextprotocol/sdk/types.js');
const mcpping = require('../../node');
const { HttpSession } = require('../../node/http_session');
const h = require('./helpers');

const KEEPALIVE = { intervalMs: 500, timeoutMs: 500, failures: 2, minIntervalMs: 100, jitterPct: 0 };
const BOUND_MS = KEEPALIVE.intervalMs + KEEPALIVE.timeoutMs * KEEPALIVE.failures + 1000;
const ENVELOPE = {
  'io.modelcontextprotocol/protocolVersion': '2026-07-28',
  'io.modelcontextprotocol/clientInfo': { name: 'after-ping-test', version: '1' },
  'io.modelcontextprotocol/clientCapabilities': {},
};

/** A raw JSON-RPC client over a transport: the test runs the handshake itself. */
function rawClient(transport) {
  const waiting = new Map();
  let next = 1;
  transport.onmessage = (msg) => {
    const w = waiting.get(msg.id);
    if (w) {
      waiting.delete(msg.id);
      w(msg);
    }
  };
  return (method, params = {}) => {
    const id = next++;
    const answer = new Promise((resolve) => waiting.set(id, resolve));
    transport.send({ jsonrpc: '2.0', id, method, params: { ...params, _meta: ENVELOPE } });
    return answer;
  };
}

/** Resolves with the transport's close info and how long it took from `t0`. */
async function staleAfterFreeze(transport) {
  const pid = transport.pid;
  const closed = once(transport, 'closed');
  process.kill(pid, 'SIGSTOP');
  const t0 = Date.now();
  const [info] = await h.within(closed, BOUND_MS + 5000, 'the frozen server to be convicted');
  return { info, elapsed: Date.now() - t0, pid };
}

test('a 2026-07-28 session run by the application is learned, probed with server/discover, and a frozen server is stale in bound', async () => {
  const t = new mcpping.StdioClientTransport(h.peer('modern.py'), { keepalive: KEEPALIVE });
  const events = [];
  for (const name of ['ping', 'probe_ok', 'suspect', 'stale']) t.on(name, (ev) => events.push(ev));
  await t.start();
  const call = rawClient(t);
  const discovered = await h.within(call('server/discover'), 5000, 'server/discover');
  assert.deepEqual(discovered.result.supportedVersions, ['2026-07-28']);
  const info = t.info();
  assert.equal(info.protocolVersion, '2026-07-28');
  assert.equal(info.peerName, 'modern');
  assert.equal(info.unsupported, true, 'no ping on a 2026 session');
  const ok = await h.nextEvent(t, 'probe_ok', 5000);
  assert.equal(ok.proof, 'probe:server/discover');
  // The probe's answer went to the engine, not to the application.
  const tools = await h.within(call('tools/list'), 5000, 'tools/list');
  assert.ok(tools.result.tools.length > 0);

  const { info: closed, elapsed, pid } = await staleAfterFreeze(t);
  assert.equal(closed.error, 'MCPP_ERR_STALE');
  assert.ok(elapsed <= BOUND_MS, `stale after ${elapsed} ms, bound ${BOUND_MS} ms`);
  assert.match(closed.reason, /idle probes \(server\/discover\)|process/);
  assert.equal(h.exists(pid), false, 'the stopped server was reaped');
  assert.equal(events.filter((e) => e.type === 'ping').length, 0);
  const stale = events.find((e) => e.type === 'stale');
  assert.ok(['probe:server/discover', 'process'].includes(stale.proof), stale.proof);
});

test('connect() reaches a 2026-07-28-only server through server/discover, probes it and convicts it frozen in bound', async () => {
  // modern.py refuses initialize (-32601): connect() asks server/discover.
  const peer = await mcpping.connect(h.peer('modern.py'), { keepalive: KEEPALIVE });
  assert.equal(peer.protocolVersion, '2026-07-28');
  assert.equal(peer.name, 'modern');
  const ok = await h.nextEvent(peer, 'probe_ok', 5000);
  assert.equal(ok.proof, 'probe:server/discover');
  const stats = peer.stats;
  assert.equal(stats.protocolVersion, '2026-07-28');
  assert.equal(stats.pingsSent, 0);
  const pid = peer.pid;
  const closed = once(peer, 'closed');
  process.kill(pid, 'SIGSTOP');
  const t0 = Date.now();
  const [info] = await h.within(closed, BOUND_MS + 5000, 'the frozen server to be convicted');
  const elapsed = Date.now() - t0;
  assert.equal(info.error, 'MCPP_ERR_STALE');
  assert.ok(elapsed <= BOUND_MS, `stale after ${elapsed} ms, bound ${BOUND_MS} ms`);
  assert.equal(h.exists(pid), false, 'the stopped server was reaped');
});

test('a stdio request on a 2026-07-28 session carries the _meta envelope, merged with the application\'s own _meta', async () => {
  const peer = await mcpping.connect(h.peer('modern.py'), { keepalive: null });
  try {
    const own = { progressToken: 'tok-1', 'com.example/trace': { span: [1, 2.5, 'ü'], on: true } };
    const result = await peer.request('tools/call', { name: 'meta', arguments: {}, _meta: own });
    const seen = JSON.parse(result.content[0].text);
    assert.equal(seen['io.modelcontextprotocol/protocolVersion'], '2026-07-28');
    assert.equal(seen['io.modelcontextprotocol/clientInfo'].name, 'mcpping');
    assert.deepEqual(seen['io.modelcontextprotocol/clientCapabilities'], {});
    // The application's keys arrive as it wrote them, in its order, first.
    const added = Object.keys(seen).filter((k) => !(k in own));
    assert.deepEqual(added.sort(), ['io.modelcontextprotocol/clientCapabilities',
      'io.modelcontextprotocol/clientInfo', 'io.modelcontextprotocol/protocolVersion']);
    const kept = Object.fromEntries(Object.keys(own).map((k) => [k, seen[k]]));
    assert.equal(JSON.stringify(kept), JSON.stringify(own));
  } finally {
    await peer.close();
  }
});

test('connect() names both refusals when a server shares no protocol version', async () => {
  await assert.rejects(mcpping.connect(h.peer('modern.py', ['--versions', '2027-01-01']), { keepalive: null }), (err) => {
    assert.equal(err.code, 'HANDSHAKE');
    assert.equal(err.message, 'initialize failed: -32601 Method not found; server/discover '
      + 'lists protocol versions ["2027-01-01"], and mcpping speaks 2025-11-25 and 2026-07-28');
    return true;
  });
});

test('the SDK Client on a legacy server that refuses ping: learned from initialize, probed with tools/list, convicted in bound', async () => {
  const t = new mcpping.StdioClientTransport(h.peer('unsupported.py'), { keepalive: KEEPALIVE });
  const client = new Client({ name: 'after-ping-test', version: '1' });
  await client.connect(t);
  const info = t.info();
  // What the engine learned from the traffic is what the SDK negotiated.
  assert.equal(info.protocolVersion, t.protocolVersion);
  assert.ok(sdkTypes.SUPPORTED_PROTOCOL_VERSIONS.includes(info.protocolVersion), info.protocolVersion);
  assert.equal(info.peerName, 'unsupported');
  const ok = await h.nextEvent(t, 'probe_ok', 5000);
  assert.equal(ok.proof, 'probe:tools/list');
  assert.equal(t.info().unsupported, true);

  const pid = t.pid;
  process.kill(pid, 'SIGSTOP');
  const t0 = Date.now();
  await assert.rejects(h.within(client.listTools(), BOUND_MS + 5000, 'listTools to fail'), (err) => !/timed out after/.test(err.message));
  const elapsed = Date.now() - t0;
  assert.ok(elapsed <= BOUND_MS, `failed after ${elapsed} ms, bound ${BOUND_MS} ms`);
  if (t.state !== 'closed') await h.nextEvent(t, 'closed', 5000);
  assert.equal(h.exists(pid), false);
});

const SDK_SPEAKS_2026 = sdkTypes.SUPPORTED_PROTOCOL_VERSIONS.includes('2026-07-28');
const SDK_VERSION = JSON.parse(require('node:fs').readFileSync(
  require('node:path').join(h.ROOT, 'node_modules', '@modelcontextprotocol', 'sdk', 'package.json'), 'utf8')).version;

test('the SDK Client negotiating 2026-07-28 over StdioClientTransport: a frozen server fails the next call in bound', {
  skip: SDK_SPEAKS_2026 ? false : `@modelcontextprotocol/sdk ${SDK_VERSION} cannot negotiate 2026-07-28 (it speaks ${sdkTypes.SUPPORTED_PROTOCOL_VERSIONS.join(', ')})`,
}, async () => {
  const t = new mcpping.StdioClientTransport(h.peer('modern.py'), { keepalive: KEEPALIVE });
  const client = new Client({ name: 'after-ping-test', version: '1' });
  await client.connect(t);
  assert.equal(t.info().protocolVersion, '2026-07-28');
  const pid = t.pid;
  process.kill(pid, 'SIGSTOP');
  const t0 = Date.now();
  await assert.rejects(h.within(client.listTools(), BOUND_MS + 5000, 'listTools to fail'), (err) => !/timed out after/.test(err.message));
  assert.ok(Date.now() - t0 <= BOUND_MS);
  if (t.state !== 'closed') await h.nextEvent(t, 'closed', 5000);
  assert.equal(h.exists(pid), false);
});

test('probe option: a named method is used, null turns probing off, a bad one is refused by name', async () => {
  const named = new mcpping.StdioClientTransport(h.peer('unsupported.py'), { keepalive: KEEPALIVE, probe: 'echo' });
  const client = new Client({ name: 'after-ping-test', version: '1' });
  await client.connect(named);
  const ok = await h.nextEvent(named, 'probe_ok', 5000);
  assert.equal(ok.proof, 'probe:echo');
  await client.close();

  const off = new mcpping.StdioClientTransport(h.peer('unsupported.py'), { keepalive: KEEPALIVE, probe: null });
  const quiet = new Client({ name: 'after-ping-test', version: '1' });
  await quiet.connect(off);
  await h.nextEvent(off, 'unsupported', 5000);
  // Three intervals with only the process to watch: no probe goes out.
  await new Promise((r) => setTimeout(r, 3 * KEEPALIVE.intervalMs));
  assert.equal(off.info().probesSent, 0);
  assert.ok(await quiet.listTools());
  await quiet.close();

  for (const bad of ['x'.repeat(129), 'tools\nlist', 42]) {
    const t = new mcpping.StdioClientTransport(h.peer('unsupported.py'), { probe: bad });
    await assert.rejects(t.start(), (err) => err.code === 'ERR_MCPPING_INVALID_ARG' && /probe must be/.test(err.message));
  }
});

/** Starts tests/peers/http_sse.py on a free port; resolves {url, stop}. */
async function startSseServer(args = []) {
  const port = await h.freePort();
  const child = spawn('python3', [`${h.PEERS}/http_sse.py`, String(port), ...args], { stdio: 'ignore' });
  const deadline = Date.now() + 20000;
  for (;;) {
    const up = await new Promise((resolve) => {
      const s = net.connect(port, '127.0.0.1', () => {
        s.end();
        resolve(true);
      });
      s.on('error', () => resolve(false));
    });
    if (up) break;
    if (Date.now() > deadline || child.exitCode !== null) throw new Error('http_sse.py did not listen');
    await new Promise((r) => setTimeout(r, 50)); // readiness polling of a foreign process
  }
  return {
    url: `http://127.0.0.1:${port}/mcp`,
    async stop() {
      child.kill('SIGKILL');
      if (child.exitCode === null && child.signalCode === null) await once(child, 'exit');
    },
  };
}

async function longHttpCall(args) {
  const server = await startSseServer(args);
  const session = new HttpSession(server.url, { keepalive: { ...KEEPALIVE, onStale: 'report' } });
  const names = [];
  for (const name of ['ping', 'timeout', 'suspect', 'stale']) session.driver.on(name, () => names.push(name));
  try {
    await session.initialize({ protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 't', version: '1' } }, 10000);
    const result = await session.request('tools/call', { name: 'slow', arguments: {} }, 15000);
    return { result, names };
  } finally {
    await session.close();
    await server.stop();
  }
}

test('over HTTP, SSE comments during a 5 s request keep the server alive', async () => {
  const { result, names } = await longHttpCall([]);
  assert.equal(result.content[0].text, 'done');
  assert.ok(!names.includes('suspect') && !names.includes('stale'), names.join(','));
});

test('over HTTP, the same request without comments is convicted (the control)', async () => {
  const { result, names } = await longHttpCall(['--no-comments', '--seconds', '3']);
  assert.equal(result.content[0].text, 'done');
  assert.ok(names.includes('suspect') && names.includes('stale'), names.join(','));
});

test('guard over the SDK\'s own stdio transport learns the session from the traffic, probes, and reports a frozen server stale in bound', async () => {
  const inner = new sdkStdio.StdioClientTransport({ ...h.peer('unsupported.py'), stderr: 'ignore' });
  const g = mcpping.guard(inner, { keepalive: { ...KEEPALIVE, onStale: 'report' } });
  let negotiated = null;
  const setVersion = g.setProtocolVersion.bind(g);
  g.setProtocolVersion = (v) => {
    negotiated = v;
    setVersion(v);
  };
  const client = new Client({ name: 'after-ping-test', version: '1' });
  await client.connect(g);
  try {
    const stats = g.stats;
    // What the engine learned from the traffic is what the SDK negotiated.
    assert.equal(stats.protocolVersion, negotiated);
    assert.ok(sdkTypes.SUPPORTED_PROTOCOL_VERSIONS.includes(stats.protocolVersion), stats.protocolVersion);
    assert.equal(stats.peerName, 'unsupported');
    const ok = await h.nextEvent(g, 'probe_ok', 5000);
    assert.equal(ok.proof, 'probe:tools/list');
    assert.equal(g.stats.probeMethod, 'tools/list');
    const stale = h.nextEvent(g, 'stale', BOUND_MS + 5000);
    process.kill(inner.pid, 'SIGSTOP');
    const t0 = Date.now();
    const ev = await stale;
    assert.ok(Date.now() - t0 <= BOUND_MS, `stale after ${Date.now() - t0} ms`);
    assert.equal(ev.proof, 'probe:tools/list');
    process.kill(inner.pid, 'SIGCONT');
  } finally {
    await client.close();
  }
});

test('a legacy server frozen is suspect from its process state before the ping times out', async () => {
  // Pings answered (echo.py); a long ping timeout so only the process check can be early.
  const keepalive = { intervalMs: 300, timeoutMs: 4000, failures: 2, minIntervalMs: 100, jitterPct: 0 };
  const transport = new mcpping.StdioClientTransport(h.peer('echo.py'), { keepalive });
  const client = new Client({ name: 'after-ping-test', version: '1' });
  await client.connect(transport);
  try {
    await h.nextEvent(transport, 'pong', 5000);
    // The process is read halfway through the unanswered ping's timeout (not
    // before every ping): suspect at 2 s, the ping would time out at 4.
    const first = new Promise((resolve) => {
      transport.once('suspect', (ev) => resolve(ev));
      transport.once('timeout', (ev) => resolve(ev));
    });
    process.kill(transport.pid, 'SIGSTOP');
    const t0 = Date.now();
    const ev = await h.within(first, 10000, 'suspect');
    const elapsed = Date.now() - t0;
    process.kill(transport.pid, 'SIGCONT');
    assert.equal(ev.type, 'suspect', 'the ping timed out before the process check');
    assert.equal(ev.proof, 'process');
    assert.ok(elapsed < keepalive.timeoutMs, `suspect after ${elapsed} ms`);
    // Running again: it serves.
    assert.ok(await client.listTools());
  } finally {
    await client.close();
  }
});
