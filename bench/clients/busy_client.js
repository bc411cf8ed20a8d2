'use strict';
/**
 * The busy-client row, Node clients: block the JavaScript thread for 2 s while the server
 * pings every 100 ms.
 *
 *   node busy_client.js api|sdk|sdk-mcpping SERVER_OUT_FILE [PRE POST BLOCK]
 *
 * After the handshake the client waits PRE s, then runs a busy loop for
 * BLOCK s, then waits POST s and closes. Prints {block_start_ns,
 * block_end_ns} on CLOCK_MONOTONIC (process.hrtime); the server's log tells
 * which pings were answered and when.
 *
 * api: mcpping.connect; sdk: the SDK's Client over its StdioClientTransport;
 * sdk-mcpping: the SDK's Client over mcpping.StdioClientTransport.
 */
const path = require('node:path');

const ROOT = path.resolve(__dirname, '..', '..');
const sdkPath = (p) => require.resolve(`@modelcontextprotocol/sdk/${p}`, { paths: [ROOT] });
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

async function blockLoop(pre, block, post) {
  await sleep(pre * 1000);
  const window = {};
  await new Promise((resolve) => {
    setImmediate(() => {
      const start = process.hrtime.bigint();
      window.block_start_ns = Number(start);
      const until = start + BigInt(Math.round(block * 1e9));
      while (process.hrtime.bigint() < until) {
        // Busy: the JavaScript thread answers nothing meanwhile.
      }
      window.block_end_ns = Number(process.hrtime.bigint());
      resolve();
    });
  });
  await sleep(post * 1000);
  return window;
}

async function main() {
  const [mode, log, ...rest] = process.argv.slice(2);
  const [pre, post, block] = rest.length ? rest.map(Number) : [0.4, 1.2, 2.0];
  const command = process.env.PYTHON || 'python3';
  const args = [path.join(__dirname, 'ping_server.py'), log, '--duration', String(pre + block + post - 0.2)];
  let out;
  if (mode === 'api') {
    const mcpping = require(ROOT);
    const peer = await mcpping.connect({ command, args });
    try {
      out = await blockLoop(pre, block, post);
    } finally {
      await peer.close();
    }
  } else {
    const { Client } = require(sdkPath('client/index.js'));
    let transport;
    if (mode === 'sdk') {
      const { StdioClientTransport } = require(sdkPath('client/stdio.js'));
      transport = new StdioClientTransport({ command, args });
    } else {
      const mcpping = require(ROOT);
      transport = new mcpping.StdioClientTransport({ command, args });
    }
    const client = new Client({ name: 'bench', version: '0.1.0' });
    await client.connect(transport);
    try {
      out = await blockLoop(pre, block, post);
    } finally {
      await client.close();
    }
  }
  process.stdout.write(JSON.stringify(out) + '\n');
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
