'use strict';
/**
 * Row 6, Node: a large tool result through mcpping's transport vs the SDK's.
 *
 *   node forwarding.js mcpping|sdk|sdk-default RESPONDER K SIZE [SIZE...]
 *
 * The SDK's transport refuses lines over 10 MiB by default (its ReadBuffer's
 * maxBufferSize); `sdk` raises that to 64 MiB so the 16 MiB result can be
 * timed, `sdk-default` keeps the default.
 *
 * Both use the official SDK's Client; only the transport differs:
 * mcpping.StdioClientTransport or the SDK's StdioClientTransport. For each
 * SIZE one warm-up call, then K timed callTool('blob') calls. Prints
 * {"SIZE": [seconds, ...], ...}.
 */
const path = require('node:path');

const ROOT = path.resolve(__dirname, '..', '..');
const sdkPath = (p) => require.resolve(`@modelcontextprotocol/sdk/${p}`, { paths: [ROOT] });

async function main() {
  const [mode, responder, k, ...sizes] = process.argv.slice(2);
  const { Client } = require(sdkPath('client/index.js'));
  let transport;
  if (mode === 'sdk' || mode === 'sdk-default') {
    const { StdioClientTransport } = require(sdkPath('client/stdio.js'));
    const params = { command: responder, args: [] };
    if (mode === 'sdk') params.maxBufferSize = 64 * 1024 * 1024;
    transport = new StdioClientTransport(params);
  } else {
    const mcpping = require(ROOT);
    transport = new mcpping.StdioClientTransport({ command: responder, args: [] });
  }
  const client = new Client({ name: 'bench', version: '0.1.0' });
  await client.connect(transport);
  const out = {};
  try {
    await client.listTools();
    for (const size of sizes) {
      const n = parseInt(size, 10);
      const times = [];
      for (let i = 0; i <= parseInt(k, 10); i++) {
        const t = process.hrtime.bigint();
        const res = await client.callTool({ name: 'blob', arguments: { bytes: n } }, undefined, { timeout: 120000 });
        const dt = Number(process.hrtime.bigint() - t) / 1e9;
        if (res.content[0].text.length !== n) throw new Error(`got ${res.content[0].text.length} bytes, wanted ${n}`);
        if (i) times.push(dt);
      }
      out[size] = times;
    }
  } finally {
    await client.close();
  }
  process.stdout.write(JSON.stringify(out) + '\n');
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
