#!/usr/bin/env node
/**
 * RTT and throughput of mcpping's peer.ping() next to the official SDK's
 * client.ping(), against the same server, in the same run.
 *
 * Usage: node bench/node/bench_ping.js [-n N] [--warmup W] [--server demo|sdk] [--json]
 *
 * Each client spawns its own copy of the server; after a warm-up the two
 * take turns in blocks of pings (so drift hits both alike) until each sent N
 * sequential pings. The report gives p50/p90/p99 RTT in ms, pings per second
 * and the SDK/mcpping ratios (above 1 means mcpping is faster). Top-level
 * mcpping figures are await-to-await, comparable with the SDK's; "native" is
 * the RTT the C I/O thread measured. `--json` prints one object for
 * bench/run.py.
 */
'use strict';
const path = require('node:path');
const { Client } = require('@modelcontextprotocol/sdk/client/index.js');
const { StdioClientTransport } = require('@modelcontextprotocol/sdk/client/stdio.js');
const mcpping = require('../../node');

const ROOT = path.resolve(__dirname, '..', '..');
const SERVERS = {
  demo: { command: process.execPath, args: [path.join(ROOT, 'node', 'demo-server.js')] },
  sdk: { command: process.execPath, args: [path.join(ROOT, 'tests', 'node', 'fixtures', 'sdk_server.mjs')] },
};
const BLOCK = 250;

/** @param {number[]} sorted ascending @param {number} p */
function pct(sorted, p) {
  return sorted[Math.max(1, Math.ceil((p / 100) * sorted.length)) - 1];
}

/** @param {number[]} ms @param {number} wallMs time spent pinging */
function summarize(ms, wallMs) {
  const s = [...ms].sort((a, b) => a - b);
  return {
    p50_ms: pct(s, 50),
    p90_ms: pct(s, 90),
    p99_ms: pct(s, 99),
    mean_ms: s.reduce((a, b) => a + b, 0) / s.length,
    pings_per_s: s.length / (wallMs / 1000),
  };
}

function parse(argv) {
  const o = { n: 5000, warmup: 200, server: 'demo', json: false };
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    if (a === '-n') o.n = Number(argv[++i]);
    else if (a === '--warmup') o.warmup = Number(argv[++i]);
    else if (a === '--server') o.server = argv[++i];
    else if (a === '--json') o.json = true;
    else throw new Error(`unknown argument ${a}`);
  }
  if (!SERVERS[o.server]) throw new Error(`--server must be one of ${Object.keys(SERVERS).join(', ')}`);
  return o;
}

async function main() {
  const o = parse(process.argv.slice(2));
  const params = SERVERS[o.server];
  const peer = await mcpping.connect(params);
  const client = new Client({ name: 'bench', version: '1.0.0' });
  await client.connect(new StdioClientTransport(params));

  for (let i = 0; i < o.warmup; i++) {
    await peer.ping();
    await client.ping();
  }
  const mine = { walls: [], native: [], wall: 0 };
  const sdk = { walls: [], wall: 0 };
  while (mine.walls.length < o.n) {
    const k = Math.min(BLOCK, o.n - mine.walls.length);
    let t0 = performance.now();
    for (let i = 0; i < k; i++) {
      const s = performance.now();
      mine.native.push(await peer.ping());
      mine.walls.push(performance.now() - s);
    }
    mine.wall += performance.now() - t0;
    t0 = performance.now();
    for (let i = 0; i < k; i++) {
      const s = performance.now();
      await client.ping();
      sdk.walls.push(performance.now() - s);
    }
    sdk.wall += performance.now() - t0;
  }
  await Promise.all([peer.close(), client.close()]);

  const m = { ...summarize(mine.walls, mine.wall), native: summarize(mine.native, mine.wall) };
  const s = summarize(sdk.walls, sdk.wall);
  const ratio = { p50: s.p50_ms / m.p50_ms, p99: s.p99_ms / m.p99_ms, throughput: m.pings_per_s / s.pings_per_s };
  const out = { bench: 'node_ping', server: o.server, n: o.n, node: process.version, mcpping: m, sdk: s, ratio_sdk_over_mcpping: ratio };
  if (o.json) {
    process.stdout.write(`${JSON.stringify(out)}\n`);
    return;
  }
  const f = (x, w, d = 3) => x.toFixed(d).padStart(w);
  console.log(`${o.n} sequential pings to the ${o.server} server (stdio), Node ${process.version}`);
  console.log(`${''.padEnd(20)}${'p50 ms'.padStart(10)}${'p90 ms'.padStart(10)}${'p99 ms'.padStart(10)}${'pings/s'.padStart(12)}`);
  for (const [name, r] of [['mcpping peer.ping()', m], ['  native RTT', m.native], ['SDK client.ping()', s]]) {
    console.log(`${name.padEnd(20)}${f(r.p50_ms, 10)}${f(r.p90_ms, 10)}${f(r.p99_ms, 10)}${f(r.pings_per_s, 12, 0)}`);
  }
  console.log("(await-to-await times; 'native RTT' is what the C thread measured)");
  console.log(`SDK/mcpping: p50 x${ratio.p50.toFixed(1)}, p99 x${ratio.p99.toFixed(1)}, throughput x${ratio.throughput.toFixed(1)}`);
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
