'use strict';
// The metrics are defined once, in C (csrc/src/engine/metrics.c): the adapters to
// prom-client and OpenTelemetry expose exactly its table, which is the
// shared expectation tests/shared/metrics.json (Python's test reads it
// too), and mcpping.metrics.exposition() is the C renderer's text.
const test = require('node:test');
const assert = require('node:assert/strict');
const crypto = require('node:crypto');
const fs = require('node:fs');
const path = require('node:path');
const prom = require('prom-client');
const mcpping = require('../../node');
const binding = require('../../node/binding');
const h = require('./helpers');

const EXPECTED = JSON.parse(fs.readFileSync(path.join(__dirname, '..', 'shared', 'metrics.json'), 'utf8'));

/** @param {string} text @returns {Array<{name: string, labels: object, value: number}>} */
function parse(text) {
  const out = [];
  for (const line of text.split('\n')) {
    if (!line || line.startsWith('#')) continue;
    const m = /^([a-z_]+)(?:\{(.*)\})? (\S+)$/.exec(line);
    assert.ok(m, `unparsable sample line: ${line}`);
    const labels = {};
    const rest = (m[2] || '').replace(/([a-z_]+)="((?:[^"\\]|\\.)*)",?/g, (_, k, v) => {
      labels[k] = v.replace(/\\(.)/g, (__, c) => (c === 'n' ? '\n' : c));
      return '';
    });
    assert.equal(rest, '', `bad labels in ${line}`);
    out.push({ name: m[1], labels, value: Number(m[3]) });
  }
  return out;
}

/** An `le` label as the bound it names. */
const bound = (le) => (le === '+Inf' ? Infinity : Number(le));

async function oneConnection() {
  const name = `table-${crypto.randomBytes(4).toString('hex')}`;
  const peer = await mcpping.connect(h.peer('echo.py', ['--name', name]));
  try {
    await peer.ping();
  } finally {
    await peer.close();
  }
  return name;
}

test('the C table is the shared expectation, and the module constants are the table', () => {
  const got = binding.metricFamilies().map((f) => ({
    name: f.name,
    kind: f.kind,
    help: f.help,
    unit: f.unit,
    labels: ['peer', 'transport', ...(f.label ? [f.label] : [])],
    ...(f.values ? { values: f.values } : {}),
  }));
  assert.deepEqual(got, EXPECTED.families);
  assert.deepEqual(binding.metricSeriesLabels(), EXPECTED.series_labels);
  assert.deepEqual(binding.metricRttBuckets(), EXPECTED.rtt_buckets.map((b, i) => [b, EXPECTED.rtt_bucket_le[i]]));
  assert.deepEqual(mcpping.metrics.METRICS, Object.fromEntries(EXPECTED.families.map((f) => [f.name, [f.kind, f.help]])));
  assert.deepEqual([...mcpping.metrics.RTT_BUCKETS], EXPECTED.rtt_buckets);
});

test('prom-client adapter: exactly the table\'s names, help, types, labels and buckets', async () => {
  const registry = new prom.Registry();
  mcpping.metrics.registerPrometheus(registry);
  const name = await oneConnection();
  const json = await registry.getMetricsAsJSON();
  assert.deepEqual(json.map((m) => [m.name, m.help, m.type]), EXPECTED.families.map((f) => [f.name, f.help, f.kind]));
  for (const f of EXPECTED.families) {
    const mine = json.find((m) => m.name === f.name).values.filter((v) => v.labels.peer === name);
    assert.ok(mine.length, f.name);
    for (const v of mine) {
      const extra = (v.metricName || '').endsWith('_bucket') ? ['le'] : [];
      assert.deepEqual(Object.keys(v.labels).sort(), [...f.labels, ...extra].sort(), f.name);
    }
    if (f.values) assert.deepEqual(mine.map((v) => v.labels[f.labels[2]]), f.values);
    if (f.kind === 'histogram') {
      const les = mine.filter((v) => v.metricName.endsWith('_bucket')).map((v) => bound(v.labels.le));
      assert.deepEqual(les, [...EXPECTED.rtt_buckets, Infinity]);
    }
  }
});

test('OpenTelemetry adapter: exactly the table\'s names, descriptions, units and bounds', async () => {
  const { MeterProvider, PeriodicExportingMetricReader, InMemoryMetricExporter, AggregationTemporality } = require('@opentelemetry/sdk-metrics');
  const exporter = new InMemoryMetricExporter(AggregationTemporality.CUMULATIVE);
  const reader = new PeriodicExportingMetricReader({ exporter, exportIntervalMillis: 3600000 });
  const provider = new MeterProvider({ readers: [reader] });
  mcpping.metrics.instrumentOtel(provider);
  await oneConnection();
  await reader.forceFlush();
  const metrics = new Map();
  for (const rm of exporter.getMetrics()) for (const sm of rm.scopeMetrics) for (const m of sm.metrics) metrics.set(m.descriptor.name, m);
  assert.deepEqual([...metrics.keys()].sort(), EXPECTED.families.map((f) => f.name).sort());
  for (const f of EXPECTED.families) {
    const m = metrics.get(f.name);
    assert.deepEqual([m.descriptor.description, m.descriptor.unit], [f.help, f.unit], f.name);
    for (const dp of m.dataPoints) assert.deepEqual(Object.keys(dp.attributes).sort(), [...f.labels].sort(), f.name);
    if (f.kind === 'histogram') assert.deepEqual(m.dataPoints[0].value.buckets.boundaries, EXPECTED.rtt_buckets);
  }
  await provider.shutdown();
});

test('exposition() is the C renderer and says sample for sample what prom-client says', async () => {
  const registry = new prom.Registry();
  mcpping.metrics.registerPrometheus(registry);
  const name = await oneConnection();
  const text = mcpping.metrics.exposition();
  assert.ok(text.includes(`mcpping_pings_sent_total{peer="${name}",transport="stdio"} 1\n`), text);
  assert.ok(text.includes('# TYPE mcpping_ping_rtt_seconds histogram\n'));
  // prom-client writes le as a JS number ("1"), the C renderer as the table's text ("1.0").
  const norm = (samples) => samples.map((s) => JSON.stringify([s.name, Object.entries({ ...s.labels, ...(s.labels.le ? { le: String(bound(s.labels.le)) } : {}) }).sort(), Number(s.value.toFixed(9))])).sort();
  assert.deepEqual(norm(parse(text)), norm(parse(await registry.metrics())));
});

test('the C renderer escapes label values and keeps buckets cumulative', () => {
  const odd = 'say "hi"\\n\nnewline \\ backslash';
  const text = binding.metricsRender([
    { server: 'fleet "a"', peer: odd, transport: 'stdio', pingsSent: 3, rttBuckets: new Array(EXPECTED.rtt_buckets.length + 1).fill(1), rttSum: 0.1 + 0.2 },
    { peer: 'plain', transport: 'http' },
  ]);
  const samples = parse(text);
  const sent = samples.filter((s) => s.name === 'mcpping_pings_sent_total');
  assert.deepEqual(sent.map((s) => [s.labels, s.value]), [
    [{ server: 'fleet "a"', peer: odd, transport: 'stdio' }, 3],
    [{ peer: 'plain', transport: 'http' }, 0],
  ]);
  const buckets = samples.filter((s) => s.name === 'mcpping_ping_rtt_seconds_bucket' && s.labels.peer === odd).map((s) => s.value);
  assert.deepEqual(buckets, EXPECTED.rtt_buckets.map((_, i) => i + 1).concat(EXPECTED.rtt_buckets.length + 1));
  assert.ok(text.includes('} 0.30000000000000004\n'));
});
