'use strict';
/**
 * Block-protocol worker (bench/method.py): tools/call through the official
 * TypeScript SDK's Client, over mcpping's transport or the SDK's own.
 *
 *   node sdk_call.js mcpping|sdk|sdk-default|wrap RESPONDER
 *
 * mcpping: mcpping.StdioClientTransport (its defaults); sdk: the SDK's
 * StdioClientTransport with maxBufferSize raised to 64 MiB (its default, 10
 * MiB, refuses a 16 MiB line); sdk-default: the SDK's transport as shipped;
 * wrap: "sdk" launching `mcpping wrap -- RESPONDER` (node/cli.js) instead.
 * Only the transport differs. A command {n, bytes} runs n sequential
 * callTool('blob', {bytes}) calls, each checked to return that many bytes of
 * text; one latency per call.
 */
const path = require('node:path');
const { serve, timed, run } = require('./worker');

const ROOT = path.resolve(__dirname, '..', '..');
const sdk = (p) => require(require.resolve(`@modelcontextprotocol/sdk/${p}`, { paths: [ROOT] }));

function transport(mode, responder) {
  const params = mode === 'wrap'
    ? { command: process.execPath, args: [path.join(ROOT, 'node', 'cli.js'), 'wrap', '--', responder] }
    : { command: responder, args: [] };
  if (mode === 'mcpping') return new (require(ROOT).StdioClientTransport)(params);
  if (mode === 'sdk' || mode === 'wrap') params.maxBufferSize = 64 * 1024 * 1024;
  return new (sdk('client/stdio.js').StdioClientTransport)(params);
}

async function main(mode, responder) {
  const client = new (sdk('client/index.js').Client)({ name: 'bench', version: '0.1.0' });
  await client.connect(transport(mode, responder));
  try {
    await client.listTools();
    await serve(async (cmd) => {
      const call = async () => {
        const res = await client.callTool({ name: 'blob', arguments: { bytes: cmd.bytes } }, undefined, { timeout: 120000 });
        const got = res.content[0].text.length;
        if (got !== cmd.bytes) throw new Error(`got ${got} bytes, wanted ${cmd.bytes}`);
      };
      return (await timed(call, cmd.n))[0];
    });
  } finally {
    await client.close();
  }
}

const [mode, responder] = process.argv.slice(2);
run(() => main(mode, responder));
