#!/usr/bin/env node
'use strict';
// The official TypeScript SDK's Client, with mcpping underneath.
//
//   node examples/node_sdk_client.js
//
// The only change from a plain SDK client is the transport class: the
// server's pipes then belong to mcpping's native I/O thread, which answers
// the server's pings (even while this thread is busy) and sends keepalive
// pings whenever the line goes quiet.
const path = require('node:path');
const { once } = require('node:events');
const { Client } = require('@modelcontextprotocol/sdk/client/index.js');
const mcpping = require('mcpping');

// The bundled demo server (no dependencies): tools `echo` and `add`.
const DEMO = path.join(__dirname, '..', 'node', 'demo-server.js');

async function main() {
  const transport = new mcpping.StdioClientTransport(
    { command: process.execPath, args: [DEMO] },
    // Short so the demo shows keepalive at once; minIntervalMs lowers the
    // 1 s floor. Real deployments use seconds to minutes.
    { keepalive: { intervalMs: 200, minIntervalMs: 100, timeoutMs: 2000, failures: 3 } },
  );
  transport.on('pong', (ev) => {
    const kind = ev.manual ? 'manual' : 'keepalive';
    console.log(`pong (${kind}) seq=${ev.pingSeq} rtt=${(ev.rttUs / 1000).toFixed(3)} ms`);
  });
  transport.on('stale', (ev) => console.log(`stale: failures=${ev.failureCount}`));

  const client = new Client({ name: 'mcpping-example', version: '1.0.0' });
  await client.connect(transport); // runs the initialize handshake
  try {
    const server = client.getServerVersion();
    console.log(`connected to ${server.name} (pid ${transport.pid})`);
    const { tools } = await client.listTools();
    console.log('tools:', tools.map((t) => t.name).join(', '));
    const sum = await client.callTool({ name: 'add', arguments: { a: 2, b: 3 } });
    console.log('add(2, 3) =', sum.content[0].text);
    console.log(`manual ping rtt=${(await transport.ping({ timeoutMs: 2000 })).toFixed(3)} ms`);

    // Idle now: wait for two keepalive pongs, bounded so a broken keepalive
    // fails instead of hanging.
    const signal = AbortSignal.timeout(10000);
    for (let seen = 0; seen < 2;) {
      const [ev] = await once(transport, 'pong', { signal });
      if (!ev.manual) seen++;
    }
  } finally {
    // Closes the transport: the server is killed and reaped, and nothing
    // is left to keep this process alive, success or failure.
    await client.close();
  }
  console.log(`done: ${transport.state}`);
}

main().catch((err) => {
  console.error(err);
  process.exitCode = 1;
});
