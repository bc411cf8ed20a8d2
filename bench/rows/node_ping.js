'use strict';
/**
 * Rows 1 and 2 from Node: sequential ping RTT and pipelined throughput.
 *
 *   node node_ping.js api|sdk N DEPTH RESPONDER
 *
 * `api` is mcpping's own API (mcpping.connect + peer.ping()); `sdk` is the
 * official TypeScript SDK (Client + StdioClientTransport, client.ping()).
 * Each RTT is the wall time around one awaited ping, which is what a caller
 * sees. DEPTH 1 is sequential; DEPTH > 1 runs DEPTH concurrent ping loops.
 * Prints one JSON object like c_ping. 200 warm-up pings are not counted.
 */
const path = require('node:path');

const ROOT = path.resolve(__dirname, '..', '..');
const WARMUP = 200;

async function measure(ping, n, depth) {
  for (let i = 0; i < WARMUP; i++) await ping();
  const samples = [];
  const clock = process.hrtime.bigint;
  let t0;
  let t1;
  if (depth === 1) {
    t0 = clock();
    for (let i = 0; i < n; i++) {
      const a = clock();
      await ping();
      samples.push(Number(clock() - a) / 1e3);
    }
    t1 = clock();
  } else {
    let left = n;
    const worker = async () => {
      while (left > 0) {
        left--;
        await ping();
      }
    };
    t0 = clock();
    await Promise.all(Array.from({ length: depth }, worker));
    t1 = clock();
  }
  const secs = Number(t1 - t0) / 1e9;
  return { n, depth, elapsed_s: secs, rate: n / secs, samples_us: samples.map((x) => Math.round(x * 1000) / 1000) };
}

async function runApi(n, depth, responder) {
  const mcpping = require(ROOT);
  const peer = await mcpping.connect({ command: responder, args: [] });
  try {
    return await measure(() => peer.ping(), n, depth);
  } finally {
    await peer.close();
  }
}

async function runSdk(n, depth, responder) {
  const { Client } = require(require.resolve('@modelcontextprotocol/sdk/client/index.js', { paths: [ROOT] }));
  const { StdioClientTransport } = require(require.resolve('@modelcontextprotocol/sdk/client/stdio.js', { paths: [ROOT] }));
  const client = new Client({ name: 'bench', version: '0.1.0' });
  await client.connect(new StdioClientTransport({ command: responder, args: [] }));
  try {
    return await measure(() => client.ping(), n, depth);
  } finally {
    await client.close();
  }
}

async function main() {
  const [mode, n, depth, responder] = process.argv.slice(2);
  const fn = { api: runApi, sdk: runSdk }[mode];
  const out = await fn(parseInt(n, 10), parseInt(depth, 10), responder);
  process.stdout.write(JSON.stringify(out) + '\n');
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
