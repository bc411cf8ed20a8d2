'use strict';
// RttStats (node/rtt_stats.js): exact running min/max/avg/mdev, nearest-rank
// p50/p99 over a bounded window of recent RTTs; and peer.stats.rtt/lossPct
// fed from real pings.
const test = require('node:test');
const assert = require('node:assert/strict');
const path = require('node:path');
const mcpping = require('../../node');
const { RttStats, WINDOW } = require('../../node/rtt_stats');

/** The test's own oracle: nearest rank, the definition the C core follows. */
function percentile(sorted, p) {
  return sorted[Math.max(1, Math.ceil((p / 100) * sorted.length)) - 1];
}
const h = require('./helpers');

/** A deterministic PRNG (mulberry32). */
function rng(seed) {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** Latency-like samples in ms: ~1 ms, a long tail, the odd 50 ms outlier. */
function samples(n, seed = 1) {
  const r = rng(seed);
  const out = [];
  for (let i = 0; i < n; i++) out.push(1 + -Math.log(1 - r()) * 0.5 + (r() < 0.01 ? 50 : 0));
  return out;
}

/** min/avg/max/mdev from the full list, two-pass. */
function reference(values) {
  const n = values.length;
  const avg = values.reduce((s, x) => s + x, 0) / n;
  const variance = values.reduce((s, x) => s + (x - avg) ** 2, 0) / n;
  return { min: Math.min(...values), avg, max: Math.max(...values), mdev: Math.sqrt(variance) };
}

function close(actual, expected, rel, what) {
  assert.ok(Math.abs(actual - expected) <= rel * Math.abs(expected), `${what}: ${actual} vs ${expected}`);
}

const sortNum = (xs) => [...xs].sort((a, b) => a - b);

test('empty: null figures, count 0, no loss', () => {
  const s = new RttStats();
  assert.equal(s.window, WINDOW);
  assert.deepEqual(s.summary(), { count: 0, minMs: null, avgMs: null, maxMs: null, mdevMs: null, p50Ms: null, p99Ms: null });
  assert.equal(s.lossPct, 0);
  assert.deepEqual(s.recent(), []);
});

test('min/max/avg/mdev are exact over the whole life, past the window', () => {
  const values = samples(50000);
  const s = new RttStats({ window: 1000 });
  for (const v of values) s.add(v);
  const ref = reference(values);
  const got = s.summary();
  assert.equal(got.count, values.length);
  assert.equal(got.minMs, ref.min);
  assert.equal(got.maxMs, ref.max);
  // The extremes fell out of the window, so a window-only implementation fails.
  assert.ok(Math.min(...values.slice(-1000)) > ref.min);
  assert.ok(Math.max(...values.slice(-1000)) < ref.max);
  close(got.avgMs, ref.avg, 1e-12, 'avg');
  close(got.mdevMs, ref.mdev, 1e-9, 'mdev');
});

test('mdev: constant samples give 0; a large offset does not cancel away', () => {
  const c = new RttStats();
  for (let i = 0; i < 1000; i++) c.add(0.1);
  assert.equal(c.summary().mdevMs, 0);
  const s = new RttStats();
  for (let i = 0; i < 10000; i++) s.add(1e4 + (i % 2) * 1e-3);
  close(s.summary().mdevMs, 0.5e-3, 1e-6, 'mdev');
});

test('p50/p99 are nearest rank over the most recent window', () => {
  const values = samples(30000, 7);
  const window = 5000;
  const s = new RttStats({ window });
  for (const v of values) s.add(v);
  const recent = values.slice(-window);
  assert.deepEqual(s.recent(), recent);
  const sorted = sortNum(recent);
  const got = s.summary();
  assert.equal(got.p50Ms, percentile(sorted, 50));
  assert.equal(got.p99Ms, percentile(sorted, 99));
  // Old slow RTTs no longer count for the percentiles, still for max.
  const t = new RttStats({ window });
  for (let i = 0; i < 20000; i++) t.add(10000);
  for (let i = 0; i < window; i++) t.add(1);
  assert.equal(t.summary().p50Ms, 1);
  assert.equal(t.summary().p99Ms, 1);
  assert.equal(t.summary().maxMs, 10000);
});

test('percentiles before the window fills, and after each add', () => {
  const s = new RttStats();
  for (const v of [5, 1, 3, 2, 4]) s.add(v);
  assert.equal(s.summary().p50Ms, 3);
  assert.equal(s.summary().p99Ms, 5);
  s.add(0.5); // the cached sort is refreshed
  assert.equal(s.summary().p50Ms, 2);
  assert.equal(s.summary().minMs, 0.5);
});

test('percentile is nearest rank', () => {
  assert.equal(percentile([1], 50), 1);
  assert.equal(percentile([1, 2], 50), 1);
  assert.equal(percentile([1, 2, 3], 50), 2);
  const hundred = Array.from({ length: 100 }, (_, i) => i + 1);
  assert.equal(percentile(hundred, 99), 99);
  assert.equal(percentile(hundred, 0), 1);
});

// That the window never grows or reallocates is the C core's test
// (rtt_stats_never_allocates_after_the_first_summary); here, its effect.
test('the window stays bounded after 100k adds', () => {
  const s = new RttStats();
  for (const v of samples(WINDOW)) s.add(v);
  const last = samples(100000, 3);
  for (const v of last) s.add(v);
  s.summary();
  assert.deepEqual(s.recent(), last.slice(-WINDOW));
  assert.equal(s.summary().count, WINDOW + 100000);
});

test('window must be an integer from 1 to the C bound, in C\'s sentence', () => {
  // C's row (rtt_window): Node said "an integer >= 1" and took any size.
  assert.throws(() => new RttStats({ window: 0 }), { name: 'RangeError', message: 'window must be an integer between 1 and 16777216, not 0' });
  assert.throws(() => new RttStats({ window: 1.5 }), RangeError);
  assert.throws(() => new RttStats({ window: 2 ** 24 + 1 }), RangeError);
  assert.throws(() => new RttStats({ window: '9' }), TypeError);
  assert.equal(new RttStats({ window: 16 }).window, 16);
});

test('observe: ping counts sent, pong an RTT, timeout and ping_error lost (not closing errors)', () => {
  const s = new RttStats();
  s.observe({ type: 'ping' });
  s.observe({ type: 'ping' });
  s.observe({ type: 'ping' });
  s.observe({ type: 'ping' });
  s.observe({ type: 'pong', rttUs: 1500 });
  s.observe({ type: 'pong', rttUs: 2500 });
  s.observe({ type: 'pong', rttUs: 3500 });
  s.observe({ type: 'timeout', timeoutMs: 200 });
  s.observe({ type: 'timeout', error: -6 }); // MCPP_ERR_CLOSED: not lost
  s.observe({ type: 'suspect' });
  assert.equal(s.sent, 4);
  assert.equal(s.received, 3);
  assert.equal(s.lost, 1);
  assert.equal(s.lossPct, 25);
  const got = s.summary();
  assert.equal(got.count, 3);
  assert.equal(got.minMs, 1.5);
  assert.equal(got.avgMs, 2.5);
  assert.equal(got.maxMs, 3.5);
  close(got.mdevMs, Math.sqrt(2 / 3), 1e-12, 'mdev');
  s.observe({ type: 'ping_error', errorCode: -32603 });
  s.observe({ type: 'ping_error', invalid: true });
  assert.equal(s.lost, 3);
});

// Issue 8 item 8, the Node side of the shared rule: a ping abandoned at
// close (a timeout event carrying MCPP_ERR_CLOSED) is "closed", not lost.
test('a ping abandoned at close is not counted lost', () => {
  const { binding } = require('../../node/runtime');
  const s = new RttStats();
  s.observe({ type: 'ping' });
  const abandoned = { type: 'timeout', errorCode: -6, timeoutMs: 5000 };
  assert.equal(binding.errname(-6), 'MCPP_ERR_CLOSED');
  assert.equal(binding.eventOutcome(abandoned), 'closed');
  s.observe(abandoned);
  assert.equal(s.lost, 0);
  assert.equal(s.lossPct, 0);
  assert.equal(binding.eventOutcome({ type: 'timeout', errorCode: 0 }), 'timeout');
  assert.equal(binding.eventOutcome({ type: 'timeout', error: -6 }), 'closed');
  // The peer's code is never ours: a peer answering -6 made a ping_error.
  assert.equal(binding.eventOutcome({ type: 'ping_error', rpcCode: -6 }), 'error');
  assert.equal(binding.eventOutcome({ type: 'ping_error', errorCode: -6 }), 'error');
  assert.equal(binding.eventOutcome({ type: 'stale' }), null);
});

test('peer.stats.rtt after 20 pings to the demo server', async () => {
  const peer = await mcpping.connect({ command: process.execPath, args: [path.join(h.ROOT, 'node', 'demo-server.js')] });
  try {
    const before = peer.stats;
    assert.equal(before.rtt.count, 0);
    assert.equal(before.rtt.p50Ms, null);
    assert.equal(before.lossPct, 0);
    const rtts = [];
    for (let i = 0; i < 20; i++) rtts.push(await peer.ping({ timeoutMs: 2000 }));
    const { rtt, lossPct, pingsSent } = peer.stats;
    assert.equal(pingsSent, 20);
    assert.equal(rtt.count, 20);
    assert.equal(lossPct, 0);
    assert.ok(rtt.minMs > 0, `min ${rtt.minMs}`);
    assert.ok(rtt.minMs <= rtt.p50Ms && rtt.p50Ms <= rtt.p99Ms && rtt.p99Ms <= rtt.maxMs, JSON.stringify(rtt));
    assert.ok(rtt.minMs <= rtt.avgMs && rtt.avgMs <= rtt.maxMs, JSON.stringify(rtt));
    assert.ok(rtt.mdevMs >= 0);
    // The figures are the RTTs ping() resolved with.
    const sorted = sortNum(rtts);
    assert.equal(rtt.minMs, sorted[0]);
    assert.equal(rtt.maxMs, sorted[19]);
    assert.equal(rtt.p50Ms, percentile(sorted, 50));
  } finally {
    await peer.close();
  }
  // The figures outlive the connection, as in Python.
  assert.equal(peer.stats.state, 'closed');
  assert.equal(peer.stats.rtt.count, 20);
});

test('keepalive pongs and timeouts feed peer.stats too', async () => {
  const peer = await mcpping.connect(h.peer('echo.py'), {
    keepalive: { intervalMs: 50, minIntervalMs: 10, timeoutMs: 1000 },
  });
  try {
    while (peer.stats.rtt.count < 3) await h.nextEvent(peer, 'pong', 3000);
    assert.ok(peer.stats.rtt.minMs > 0);
  } finally {
    await peer.close();
  }
  const lossy = await mcpping.connect(h.peer('drop_pings.py'));
  try {
    await assert.rejects(lossy.ping({ timeoutMs: 100 }), mcpping.PingTimeoutError);
    assert.equal(lossy.stats.lossPct, 100);
    assert.equal(lossy.stats.rtt.count, 0);
    assert.equal(lossy.stats.rtt.minMs, null);
  } finally {
    await lossy.close();
  }
});

test('StdioClientTransport and guard() report rtt figures', async () => {
  const transport = new mcpping.StdioClientTransport({ command: process.execPath, args: [path.join(h.ROOT, 'node', 'demo-server.js')] });
  assert.equal(transport.stats.rtt.count, 0);
  await transport.start();
  try {
    await transport.send({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 't', version: '0' } } });
    for (let i = 0; i < 3; i++) await transport.ping({ timeoutMs: 2000 });
    assert.equal(transport.stats.rtt.count, 3);
    assert.ok(transport.stats.rtt.p50Ms > 0);
  } finally {
    await transport.close();
  }
  const { Client } = require('@modelcontextprotocol/sdk/client/index.js');
  const sdkStdio = require('@modelcontextprotocol/sdk/client/stdio.js');
  const guarded = mcpping.guard(new sdkStdio.StdioClientTransport(h.sdkServer()), { role: 'client' });
  const client = new Client({ name: 'mcpping-test', version: '1.0.0' });
  await client.connect(guarded);
  try {
    for (let i = 0; i < 3; i++) await guarded.ping({ timeoutMs: 2000 });
    const { rtt, lossPct } = guarded.stats;
    assert.equal(rtt.count, 3);
    assert.equal(lossPct, 0);
    assert.ok(rtt.minMs <= rtt.p50Ms && rtt.p50Ms <= rtt.maxMs, JSON.stringify(rtt));
  } finally {
    await client.close();
  }
  assert.equal(guarded.stats.rtt.count, 3);
});

test('the same RTTs give bit-identical figures in Python\'s Stats', async () => {
  const fs = require('node:fs');
  const os = require('node:os');
  const values = samples(25000, 11);
  const file = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'mcpping-stats-')), 'rtts.json');
  fs.writeFileSync(file, JSON.stringify(values));
  const script = [
    'import json, sys',
    'from mcpping.stats import Stats',
    's = Stats(window=4000)',
    'for v in json.load(open(sys.argv[1])): s.add_rtt(v)',
    'print(json.dumps([s.received, s.min, s.avg, s.max, s.mdev, s.p50, s.p99]))',
  ].join('\n');
  const res = await h.run('python3', ['-c', script, file], { timeoutMs: 60000 });
  fs.rmSync(path.dirname(file), { recursive: true, force: true });
  assert.equal(res.status, 0, res.stderr);
  const s = new RttStats({ window: 4000 });
  for (const v of values) s.add(v);
  const got = s.summary();
  assert.deepEqual(JSON.parse(res.stdout), [got.count, got.minMs, got.avgMs, got.maxMs, got.mdevMs, got.p50Ms, got.p99Ms]);
});

test('keepalive pongs nobody listens to stay in C; a listener then gets every ping and pong in order', async () => {
  const peer = await mcpping.connect(h.peer('echo.py'), {
    keepalive: { intervalMs: 20, minIntervalMs: 10, timeoutMs: 1000, jitterPct: 0 },
  });
  try {
    const crossed = [];
    const onItem = peer.conn.onItem.bind(peer.conn);
    peer.conn.onItem = (kind, payload) => {
      if (kind === 'event' && (payload.type === 'ping' || payload.type === 'pong')) crossed.push(payload.type);
      onItem(kind, payload);
    };
    // Nothing crosses for them, so there is no event to await: the
    // C-kept figures are looked at, bounded.
    for (let i = 0; i < 1000 && peer.rttStats.received < 10; i++) await new Promise((r) => setTimeout(r, 10));
    assert.ok(peer.rttStats.received >= 10, `${peer.rttStats.received} pongs`);
    assert.ok(peer.stats.pingsSent >= 10);
    assert.deepEqual(crossed, []);

    const got = [];
    const both = (ev) => got.push(ev);
    peer.on('ping', both);
    peer.on('pong', both);
    while (got.length < 21) await h.nextEvent(peer, 'pong', 3000);
    while (got[0].type === 'pong') got.shift(); // its ping went out before the listener came
    const pairs = Math.floor(got.length / 2);
    let last = 0;
    for (let i = 0; i < pairs; i++) {
      const [ping, pong] = [got[2 * i], got[2 * i + 1]];
      assert.deepEqual([ping.type, pong.type], ['ping', 'pong']);
      assert.equal(ping.pingSeq, pong.pingSeq);
      assert.ok(ping.pingSeq > last);
      last = ping.pingSeq;
    }
    assert.ok(crossed.filter((t) => t === 'pong').length >= pairs);
    // A manual ping still settles.
    assert.ok((await peer.ping()) > 0);
  } finally {
    await peer.close();
  }
});
