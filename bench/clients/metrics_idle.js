'use strict';
/**
 * Block-protocol worker (bench/method.py): keepalive over idle connections,
 * with or without mcpping.metrics, from Node.
 *
 *   node metrics_idle.js off|prometheus|otel CONNS INTERVAL_MS RESPONDER
 *
 * Opens CONNS connections to the responder with keepalive every
 * INTERVAL_MS (jitter 10%). A command {n: MS} lets keepalive run for MS
 * milliseconds; ops is the keepalive pongs in it, so cpu_us_per_op is the
 * CPU per keepalive ping. With metrics: false the block runs with every
 * connection's C cell detached (what a process that never turned metrics
 * on runs), so one process measures both, alternating: the same heap,
 * threads and connections on either side. A command {n: K, collect:
 * true} (metrics on) collects K times in a row (a prom-client scrape, or an
 * OpenTelemetry collection into an in-memory exporter): cpu_us_per_op is the
 * CPU of one collection. A command {n: K, events: true} runs what the
 * binding does per ping-and-pong event pair for metrics (nothing since C
 * counts; hooked and unhooked alike).
 */
const path = require('node:path');
const { setTimeout: sleep } = require('node:timers/promises');
const { serve, run } = require('./worker');

const ROOT = path.resolve(__dirname, '..', '..');
const dep = (p) => require(require.resolve(p, { paths: [ROOT] }));

/** Turns metrics on; returns a function that collects them once, or null. */
function collector(mcpping, mode) {
  if (mode === 'prometheus') {
    const registry = new (dep('prom-client').Registry)();
    mcpping.metrics.registerPrometheus(registry);
    return () => registry.metrics();
  }
  if (mode === 'otel') {
    const otel = dep('@opentelemetry/sdk-metrics');
    const exporter = new otel.InMemoryMetricExporter(otel.AggregationTemporality.CUMULATIVE);
    const reader = new otel.PeriodicExportingMetricReader({ exporter, exportIntervalMillis: 3600000 });
    mcpping.metrics.instrumentOtel(new otel.MeterProvider({ readers: [reader] }));
    return () => reader.forceFlush();
  }
  if (mode !== 'off') throw new Error(`mode must be off, prometheus or otel, not ${mode}`);
  return null;
}

async function main() {
  const [mode, conns, intervalMs, responder] = process.argv.slice(2);
  const mcpping = require(ROOT);
  const collect = collector(mcpping, mode);
  const keepalive = { intervalMs: Number(intervalMs), timeoutMs: 5000, minIntervalMs: 10, jitterPct: 10 };
  const peers = [];
  for (let i = 0; i < Number(conns); i++) peers.push(await mcpping.connect({ command: responder, args: [] }, { keepalive }));
  const pongs = () => peers.reduce((sum, p) => sum + p.rttStats.received, 0);
  try {
    const binding = require(path.join(ROOT, 'node', 'binding'));
    const ping = { type: 'ping', state: 'alive', inFlight: 0 };
    const pong = { type: 'pong', state: 'alive', rttUs: 100, inFlight: 0 };
    await serve(async (cmd) => {
      if (cmd.events) {
        // What NativeConn.onEvent adds per event for metrics: nothing since
        // C counts (both sides run the same loop).
        let sink = 0;
        for (let i = 0; i < cmd.n; i++) {
          for (const ev of [ping, pong]) sink += ev.inFlight;
        }
        return { ops: cmd.n + sink };
      }
      if (cmd.collect) {
        for (let i = 0; i < cmd.n; i++) await collect();
        return { ops: cmd.n };
      }
      // Unhooked: the connections count into no C cell, as in a process
      // that never turned metrics on.
      for (const p of peers) binding.setMetrics(p.conn.id, cmd.metrics === false ? null : p.conn.figures.cell);
      const before = pongs();
      await sleep(cmd.n);
      return { ops: Math.max(1, pongs() - before) };
    }, { conns: peers.length });
  } finally {
    await Promise.all(peers.map((p) => p.close()));
  }
}

run(main);
