#!/usr/bin/env node
'use strict';
// mcpping's own Peer: ping an MCP stdio server in a loop, like ping(8).
//
//   node examples/node_peer.js [COUNT] [-- COMMAND [ARG...]]
//
// Without a command it pings the bundled demo server. The whole run has one
// deadline, an AbortSignal shared by every ping and every pause, so a hung
// server cannot keep the loop waiting past it.
const path = require('node:path');
const { setTimeout: sleep } = require('node:timers/promises');
const mcpping = require('mcpping');

const DEADLINE_MS = 10000;
const INTERVAL_MS = 100; // the pause between pings (ping(8)'s -i)

async function main() {
  const argv = process.argv.slice(2);
  const dash = argv.indexOf('--');
  const count = Number(dash === 0 ? 5 : argv[0] || 5);
  const [command, ...args] = dash >= 0
    ? argv.slice(dash + 1)
    : [process.execPath, path.join(__dirname, '..', 'node', 'demo-server.js')];

  // connect() spawns the server and runs the MCP handshake.
  const peer = await mcpping.connect({ command, args });
  // Liveness events arrive on the Peer, an EventEmitter, under their names.
  peer.on('timeout', (ev) => console.log(`timeout: seq=${ev.pingSeq} after ${ev.timeoutMs} ms`));
  peer.on('closed', (info) => console.log(`closed: ${info.reason}`));

  const signal = AbortSignal.timeout(DEADLINE_MS);
  let answered = 0;
  try {
    console.log(`PING ${peer.name} (pid ${peer.pid}, protocol ${peer.protocolVersion})`);
    for (let seq = 1; seq <= count; seq++) {
      try {
        const rtt = await peer.ping({ timeoutMs: 2000, signal });
        answered++;
        console.log(`pong from ${peer.name}: seq=${seq} time=${rtt.toFixed(3)} ms`);
      } catch (err) {
        // A lost ping is reported and the loop goes on; the deadline is not.
        if (!(err instanceof mcpping.PingTimeoutError)) throw err;
      }
      if (seq < count) await sleep(INTERVAL_MS, undefined, { signal });
    }
  } finally {
    await peer.close(); // kills and reaps the server's process group
  }
  console.log(`${count} pings sent, ${answered} pongs received`);
  return answered === count ? 0 : 1;
}

main().then((code) => { process.exitCode = code; }, (err) => {
  console.error(`node_peer: ${err.message}`);
  process.exitCode = 1;
});
