'use strict';
// mcpping.metrics against real servers: the prom-client registry's text
// scraped and parsed, OpenTelemetry read through an in-memory exporter.
// The tally is process-wide, so each test gives its server a name of its
// own (echo.py --name) or compares figures before and after.
const test = require('node:test');
const assert = require('node:assert/strict');
const crypto = require('node:crypto');
const { spawnSync } = require('node:child_process');
const prom = require('prom-client');
const { Client } = require('@modelcontextprotocol/sdk/client/index.js');
const { InMemoryTransport } = require('@modelcontextprotocol/sdk/inMemory.js');
const mcpping = require('../../node');
const h = require('./helpers');

const { METRICS, RTT_BUCKETS, STATES, FAILURE_REASONS, PROBE_RESULTS } = mcpping.metrics;
const registry = new prom.Registry();
mcpping.metrics.registerPrometheus(registry);

/** @returns {Promise<Map<string, number>>} every sample: 'name{k="v",...}' (keys sorted) -> value */
async function scrape() {
  return parse(await registry.metrics());
}

/** @param {string} text the exposition format */
function parse(text) {
  const out = new Map();
  for (const line of text.split('\n')) {
    if (!line || line.startsWith('#')) continue;
    const m = /^([a-z_]+)(?:\{(.*)\})? (\S+)$/.exec(line);
    assert.ok(m, `unparsable sample line: ${line}`);
    const labels = {};
    for (const [, k, v] of (m[2] || '').matchAll(/([a-z_]+)="((?:[^"\\]|\\.)*)"/g)) labels[k] = v;
    out.set(key(m[1], labels), Number(m[3]));
  }
  return out;
}

function key(name, labels) {
  return `${name}{${Object.keys(labels).sort().map((k) => `${k}="${labels[k]}"`).join(',')}}`;
}

/** One sample's value; 0 if the series does not exist (yet). */
function value(samples, name, labels) {
  return samples.get(key(name, labels)) || 0;
}

function stateOf(samples, lb) {
  return Object.fromEntries(STATES.map((state) => [state, value(samples, 'mcpping_peer_state', { ...lb, state })]));
}

const unique = (prefix) => `${prefix}-${crypto.randomBytes(4).toString('hex')}`;
const echo = (name, extra = []) => h.peer('echo.py', ['--name', name, ...extra]);

test('exact counters, histogram and state after N pings and N answered pings', async () => {
  const name = unique('echo');
  const lb = { peer: name, transport: 'stdio' };
  const n = 5;
  const peer = await mcpping.connect(echo(name));
  try {
    const rtts = [];
    for (let i = 0; i < n; i++) rtts.push((await peer.ping()) / 1000);
    const answered = new Promise((resolve) => peer.on('ping_answered', (ev) => ev.id === '"srv-3"' && resolve()));
    assert.deepEqual(await peer.request('test/ping_me', { count: 3 }), { sent: 3 });
    await h.within(answered, 5000, 'the third answered ping');
    const s = await scrape();
    const info = peer.stats;
    assert.equal(value(s, 'mcpping_pings_sent_total', lb), n);
    assert.equal(info.pingsSent, n);
    assert.equal(value(s, 'mcpping_pongs_received_total', lb), n);
    assert.equal(value(s, 'mcpping_pings_answered_total', lb), 3);
    for (const reason of FAILURE_REASONS) assert.equal(value(s, 'mcpping_ping_failures_total', { ...lb, reason }), 0, reason);
    assert.equal(value(s, 'mcpping_stale_total', lb), 0);
    assert.equal(value(s, 'mcpping_reconnects_total', lb), 0);
    assert.equal(value(s, 'mcpping_ping_rtt_seconds_count', lb), n);
    const sum = rtts.reduce((a, b) => a + b, 0);
    assert.ok(Math.abs(value(s, 'mcpping_ping_rtt_seconds_sum', lb) - sum) < 1e-9, `sum ${sum}`);
    for (const le of RTT_BUCKETS) {
      assert.equal(value(s, 'mcpping_ping_rtt_seconds_bucket', { ...lb, le: String(le) }), rtts.filter((r) => r <= le).length, `le=${le}`);
    }
    assert.equal(value(s, 'mcpping_ping_rtt_seconds_bucket', { ...lb, le: '+Inf' }), n);
    assert.deepEqual(stateOf(s, lb), { alive: 1, suspect: 0, stale: 0, closed: 0 });
    assert.equal(value(s, 'mcpping_in_flight_requests', lb), 0);
  } finally {
    await peer.close();
  }
  const s = await scrape();
  assert.equal(value(s, 'mcpping_pings_sent_total', lb), n, 'counters survive the close');
  assert.deepEqual(stateOf(s, lb), { alive: 0, suspect: 0, stale: 0, closed: 1 });
});

test('a stale transition: each timeout counted, stale_total 1, the state gauge says stale', async () => {
  const lb = { peer: 'freeze', transport: 'stdio' };
  const before = await scrape();
  const failures = 2;
  const peer = await mcpping.connect(h.peer('freeze.py', ['--after', '2']), {
    keepalive: { intervalMs: 50, timeoutMs: 100, failures, minIntervalMs: 10, jitterPct: 0, onStale: 'report' },
  });
  try {
    // registry.metrics() reads the tally synchronously, inside the listener:
    // the figures as of the stale event itself.
    const atStale = new Promise((resolve) => peer.once('stale', () => resolve(registry.metrics())));
    const s = parse(await h.within(atStale, 5000, 'stale'));
    const delta = (name, labels) => value(s, name, labels) - value(before, name, labels);
    assert.equal(delta('mcpping_stale_total', lb), 1);
    assert.equal(delta('mcpping_ping_failures_total', { ...lb, reason: 'timeout' }), failures);
    assert.ok(delta('mcpping_pings_sent_total', lb) >= failures);
    assert.equal(delta('mcpping_pongs_received_total', lb), 0);
    assert.deepEqual(stateOf(s, lb), { alive: 0, suspect: 0, stale: 1, closed: 0 });
  } finally {
    await peer.close();
  }
  assert.equal(stateOf(await scrape(), lb).closed, 1);
});

for (const [what, params, reason, errorClass] of [
  ['drop_pings.py', h.peer('drop_pings.py'), 'timeout', mcpping.PingTimeoutError],
  ['unsupported.py', h.peer('unsupported.py'), 'unsupported', mcpping.PingUnsupportedError],
  ['bad pong error', h.badPong('error'), 'error', mcpping.PingError],
  ['bad pong invalid', h.badPong('invalid'), 'invalid', mcpping.PingInvalidError],
]) {
  test(`a ${reason} failure (${what}) is counted once, under its reason only`, async () => {
    const before = await scrape();
    const peer = await mcpping.connect(params);
    let lb;
    let s;
    try {
      await assert.rejects(peer.ping({ timeoutMs: 200 }), errorClass);
      lb = { peer: peer.name, transport: 'stdio' };
      s = await scrape();
    } finally {
      await peer.close();
    }
    for (const r of FAILURE_REASONS) {
      const got = value(s, 'mcpping_ping_failures_total', { ...lb, reason: r }) - value(before, 'mcpping_ping_failures_total', { ...lb, reason: r });
      assert.equal(got, r === reason ? 1 : 0, r);
    }
    assert.equal(value(s, 'mcpping_pings_sent_total', lb) - value(before, 'mcpping_pings_sent_total', lb), 1);
    assert.equal(value(s, 'mcpping_pongs_received_total', lb) - value(before, 'mcpping_pongs_received_total', lb), 0);
  });
}

test('probes of a ping-deaf server are counted by result, apart from the pings that timed out', async () => {
  const lb = { peer: 'drop_pings', transport: 'stdio' };
  const before = await scrape();
  const peer = await mcpping.connect(h.peer('drop_pings.py'), {
    keepalive: { intervalMs: 50, timeoutMs: 300, failures: 2, minIntervalMs: 10, jitterPct: 0 },
  });
  let s;
  try {
    await h.nextEvent(peer, 'ping_deaf', 10000);
    // Two probes answered after the verdict (watched by probe from then on).
    await h.nextEvent(peer, 'probe_ok', 5000);
    await h.nextEvent(peer, 'probe_ok', 5000);
    s = await scrape();
  } finally {
    await peer.close();
  }
  const delta = (name, labels) => value(s, name, labels) - value(before, name, labels);
  assert.ok(delta('mcpping_probes_total', { ...lb, result: 'ok' }) >= 2);
  // A "timeout" of each in its own family: the dropped pings timed out, no probe did.
  assert.equal(delta('mcpping_probes_total', { ...lb, result: 'timeout' }), 0);
  assert.ok(delta('mcpping_ping_failures_total', { ...lb, reason: 'timeout' }) >= 1);
  assert.deepEqual(PROBE_RESULTS, ['ok', 'timeout']);
  // The C renderer shows the same figure (exposition() sums the same tally).
  assert.match(mcpping.metrics.exposition(), /^mcpping_probes_total\{peer="drop_pings",transport="stdio",result="ok"\} [1-9]/m);
});

test('the in-flight gauge counts unanswered requests through a guard, live', async () => {
  const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
  const name = unique('silent');
  const lb = { peer: name, transport: 'custom' };
  const received = [];
  serverSide.onmessage = (m) => received.push(m);
  await serverSide.start();
  const guarded = mcpping.guard(clientSide, { role: 'client', peerName: name, transport: 'custom' });
  await guarded.start();
  await guarded.send({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'x' } });
  await guarded.send({ jsonrpc: '2.0', id: 2, method: 'tools/list' });
  assert.equal(value(await scrape(), 'mcpping_in_flight_requests', lb), 2);
  const answered = new Promise((resolve) => { guarded.onmessage = resolve; });
  await serverSide.send({ jsonrpc: '2.0', id: 2, result: { tools: [] } });
  assert.equal((await h.within(answered, 5000, 'the answer')).id, 2);
  assert.equal(value(await scrape(), 'mcpping_in_flight_requests', lb), 1);
  await guarded.close();
  const s = await scrape();
  assert.equal(value(s, 'mcpping_in_flight_requests', lb), 0);
  assert.deepEqual(stateOf(s, lb), { alive: 0, suspect: 0, stale: 0, closed: 1 });
  assert.equal(received.length, 2);
});

test('the in-flight gauge of a spawned server', async (t) => {
  const lb = { peer: 'freeze', transport: 'stdio' };
  const peer = await mcpping.connect(h.peer('freeze.py'));
  let pending;
  try {
    await peer.request('test/freeze');
    pending = peer.request('tools/call', { name: 'x' }, { timeoutMs: 30000 });
    pending.catch(() => {});
    // The I/O thread counts it when it writes the frame; the runtime's
    // snapshot is refreshed by that only once issue 8 item 3 (task cruntime) lands.
    for (let i = 0; i < 100 && peer.stats.inFlight !== 1; i++) await new Promise((r) => setTimeout(r, 10));
    if (peer.stats.inFlight !== 1) {
      t.skip('the runtime info snapshot is not refreshed by a send yet (issue 8 item 3)');
      return;
    }
    assert.equal(value(await scrape(), 'mcpping_in_flight_requests', lb), 1);
  } finally {
    await peer.close();
  }
  await assert.rejects(pending, mcpping.ClosedError);
  assert.equal(value(await scrape(), 'mcpping_in_flight_requests', lb), 0);
});

test('server-everything through StdioClientTransport: labelled with its serverInfo name, learned from the handshake', async () => {
  const lb = { peer: 'mcp-servers/everything', transport: 'stdio' };
  const before = await scrape();
  const transport = new mcpping.StdioClientTransport({ command: process.execPath, args: [h.EVERYTHING, 'stdio'], stderr: 'ignore' });
  const client = new Client({ name: 'mcpping-test', version: '1.0.0' });
  await client.connect(transport);
  let s;
  try {
    for (let i = 0; i < 3; i++) await transport.ping();
    await client.ping(); // the SDK's own ping is an application request
    s = await scrape();
  } finally {
    await client.close();
  }
  assert.equal(value(s, 'mcpping_pings_sent_total', lb) - value(before, 'mcpping_pings_sent_total', lb), 3);
  assert.equal(value(s, 'mcpping_pongs_received_total', lb) - value(before, 'mcpping_pongs_received_total', lb), 3);
  assert.equal(stateOf(s, lb).alive, 1);
  assert.equal(stateOf(await scrape(), lb).closed, 1);
});

test('labels are peer and transport only, and carry nothing from argv, env or payloads', async () => {
  const name = unique('echo');
  const secretArg = unique('ARGV-SECRET');
  const secretEnv = unique('ENV-SECRET');
  const peer = await mcpping.connect({ ...echo(name, ['--stderr', secretArg]), env: { TOKEN: secretEnv }, stderr: 'ignore' });
  try {
    await peer.ping();
    await peer.request('echo', { payload: 'PAYLOAD-SECRET' });
  } finally {
    await peer.close();
  }
  const text = await registry.metrics();
  for (const secret of [secretArg, secretEnv, 'PAYLOAD-SECRET', 'TOKEN']) assert.ok(!text.includes(secret), secret);
  const allowed = new Set(['peer', 'transport', 'reason', 'state', 'result', 'le']);
  for (const k of (await scrape()).keys()) {
    const [, name, labels] = /^([a-z_]+)\{(.*)\}$/.exec(k);
    assert.ok(Object.keys(METRICS).some((m) => name === m || name.startsWith(`${m}_`)), name);
    const keys = [...labels.matchAll(/([a-z_]+)="/g)].map((x) => x[1]);
    assert.ok(keys.includes('peer') && keys.includes('transport'), k);
    for (const x of keys) assert.ok(allowed.has(x), `${x} in ${k}`);
  }
});

test('hooked keepalive pongs are counted in C and cross nothing (issue 21)', async () => {
  // Metrics used to count each event in JS, so every keepalive ping and
  // pong crossed from the runtime's thread; now C counts them.
  const name = unique('echo');
  const lb = { peer: name, transport: 'stdio' };
  const peer = await mcpping.connect(echo(name), {
    keepalive: { intervalMs: 20, minIntervalMs: 10, timeoutMs: 1000, jitterPct: 0 },
  });
  try {
    const crossed = [];
    const onItem = peer.conn.onItem.bind(peer.conn);
    peer.conn.onItem = (kind, payload) => {
      if (kind === 'event' && (payload.type === 'ping' || payload.type === 'pong')) crossed.push(payload.type);
      onItem(kind, payload);
    };
    const start = value(await scrape(), 'mcpping_pongs_received_total', lb);
    for (let i = 0; i < 1000 && value(await scrape(), 'mcpping_pongs_received_total', lb) < start + 10; i++) {
      await new Promise((r) => setTimeout(r, 10));
    }
    const s = await scrape();
    assert.ok(value(s, 'mcpping_pongs_received_total', lb) >= start + 10);
    assert.ok(value(s, 'mcpping_ping_rtt_seconds_count', lb) >= start + 10);
    assert.ok(value(s, 'mcpping_pings_sent_total', lb) >= start + 10);
    assert.deepEqual(crossed, []);
  } finally {
    await peer.close();
  }
});

test('OpenTelemetry: instruments on a MeterProvider, read through an in-memory exporter', async () => {
  const { MeterProvider, PeriodicExportingMetricReader, InMemoryMetricExporter, AggregationTemporality } = require('@opentelemetry/sdk-metrics');
  const exporter = new InMemoryMetricExporter(AggregationTemporality.CUMULATIVE);
  const reader = new PeriodicExportingMetricReader({ exporter, exportIntervalMillis: 3600000 });
  const provider = new MeterProvider({ readers: [reader] });
  mcpping.metrics.instrumentOtel(provider);
  assert.throws(() => mcpping.metrics.instrumentOtel(provider), /already/);
  const name = unique('echo');
  const attrs = { peer: name, transport: 'stdio' };
  const n = 4;
  const peer = await mcpping.connect(echo(name));
  const rtts = [];
  try {
    for (let i = 0; i < n; i++) rtts.push((await peer.ping()) / 1000);
    await reader.forceFlush();
  } finally {
    await peer.close();
  }
  const points = [];
  for (const rm of exporter.getMetrics()) {
    for (const sm of rm.scopeMetrics) for (const m of sm.metrics) for (const dp of m.dataPoints) points.push([m.descriptor.name, dp]);
  }
  const one = (metric, extra = {}) => {
    const want = JSON.stringify({ ...attrs, ...extra });
    const found = points.filter(([m, dp]) => m === metric && JSON.stringify(dp.attributes) === want);
    assert.equal(found.length, 1, `${metric} ${want}`);
    return found[0][1];
  };
  assert.equal(one('mcpping_pings_sent_total').value, n);
  assert.equal(one('mcpping_pongs_received_total').value, n);
  assert.equal(one('mcpping_ping_failures_total', { reason: 'timeout' }).value, 0);
  assert.equal(one('mcpping_peer_state', { state: 'alive' }).value, 1);
  assert.equal(one('mcpping_in_flight_requests').value, 0);
  const hist = one('mcpping_ping_rtt_seconds').value;
  assert.equal(hist.count, n);
  assert.ok(Math.abs(hist.sum - rtts.reduce((a, b) => a + b, 0)) < 1e-9);
  assert.deepEqual(hist.buckets.boundaries, [...RTT_BUCKETS]);
  await provider.shutdown();
});

test('requiring mcpping loads neither exporter; calling one without its package names it', () => {
  const code = `
    const Module = require('node:module');
    const load = Module._load;
    Module._load = function (request, ...rest) {
      if (request === 'prom-client' || request === '@opentelemetry/api') {
        const err = new Error("Cannot find module '" + request + "'");
        err.code = 'MODULE_NOT_FOUND';
        throw err;
      }
      return load.call(this, request, ...rest);
    };
    const mcpping = require(${JSON.stringify(require.resolve('../../node'))});
    const loaded = Object.keys(require.cache).filter((f) => /prom-client|@opentelemetry/.test(f));
    if (loaded.length) throw new Error('loaded ' + loaded.join(', '));
    for (const [fn, pkg] of [['registerPrometheus', 'prom-client'], ['instrumentOtel', '@opentelemetry/api']]) {
      try {
        mcpping.metrics[fn]();
        throw new Error(fn + ' did not throw');
      } catch (err) {
        if (err.code !== 'ERR_MCPPING_MISSING_PACKAGE' || !err.message.includes('npm install ' + pkg)) throw err;
      }
    }
    console.log('ok');
  `;
  const r = spawnSync(process.execPath, ['-e', code], { encoding: 'utf8', timeout: 30000 });
  assert.equal(r.status, 0, r.stderr);
  assert.equal(r.stdout.trim(), 'ok');
});

test('registering twice with one registry is refused', () => {
  assert.throws(() => mcpping.metrics.registerPrometheus(registry), { code: 'ERR_MCPPING_DUPLICATE_METRIC' });
});

test('a server that cannot start never reads alive', async () => {
  const name = unique('missing');
  await assert.rejects(mcpping.connect({ command: `/nonexistent/${name}` }));
  const s = await scrape();
  assert.equal(value(s, 'mcpping_peer_state', { peer: name, transport: 'stdio', state: 'alive' }), 0);
});

test('an exporter that throws becomes a warning; the ping and the listeners after it still get through', async () => {
  const { hub } = require('../../node/metrics');
  const broken = () => {
    throw new Error('exporter broke');
  };
  const warned = new Promise((resolve) => process.once('warning', resolve));
  hub.tally.rttSinks.push(broken);
  const peer = await mcpping.connect(echo(unique('echo')));
  try {
    const pong = h.nextEvent(peer, 'pong', 5000);
    assert.ok((await peer.ping()) > 0);
    await pong;
    hub.tally.rows(); // OpenTelemetry's record() runs when the figures are collected
    const w = await h.within(warned, 5000, 'the warning');
    assert.equal(w.name, 'McppMetricsWarning');
    assert.match(w.message, /exporter broke/);
  } finally {
    hub.tally.rttSinks.splice(hub.tally.rttSinks.indexOf(broken), 1);
    await peer.close();
  }
});
