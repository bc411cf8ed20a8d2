'use strict';
/**
 * Block-protocol worker (bench/method.py): pings from Node.
 *
 *   node ping_worker.js api|sdk RESPONDER
 *
 * api: mcpping's own API (mcpping.connect, keepalive off, peer.ping());
 * sdk: the official TypeScript SDK (Client + StdioClientTransport,
 * client.ping()). A command {n, depth} runs n pings with depth in flight.
 * Each latency is the wall time around one awaited ping, which is what a
 * caller sees; for api, native_us also holds the RTT that mcpping reported
 * (timed in C on its I/O thread).
 */
const path = require('node:path');
const { serve, timed, run } = require('./worker');

const ROOT = path.resolve(__dirname, '..', '..');
const sdk = (p) => require(require.resolve(`@modelcontextprotocol/sdk/${p}`, { paths: [ROOT] }));

async function runApi(responder) {
  const mcpping = require(ROOT);
  const peer = await mcpping.connect({ command: responder, args: [] });
  // Which mode the runtime runs in and why (host or thread, issue 21), in
  // the ready line; each block counts the watchdog's takeovers.
  let hosted = false;
  let readyInfo = {};
  try {
    readyInfo = { runtime_mode: mcpping.runtimeMode() };
    hosted = true;
  } catch {
    // an addon from before host mode (a before/after comparison)
  }
  try {
    await serve(async (cmd) => {
      const before = hosted ? mcpping.hostStats().takeovers : 0;
      const [res, rtts] = await timed(() => peer.ping(), cmd.n, cmd.depth || 1);
      if (rtts.length) res.native_us = rtts.map((ms) => ms * 1000);
      if (hosted) res.takeovers = mcpping.hostStats().takeovers - before;
      return res;
    }, readyInfo);
  } finally {
    await peer.close();
  }
}

async function runSdk(responder) {
  const { Client } = sdk('client/index.js');
  const { StdioClientTransport } = sdk('client/stdio.js');
  const client = new Client({ name: 'bench', version: '0.1.0' });
  await client.connect(new StdioClientTransport({ command: responder, args: [] }));
  try {
    await serve(async (cmd) => (await timed(() => client.ping(), cmd.n, cmd.depth || 1))[0]);
  } finally {
    await client.close();
  }
}

const [mode, responder] = process.argv.slice(2);
run(() => ({ api: runApi, sdk: runSdk })[mode](responder));
