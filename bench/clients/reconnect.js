'use strict';
/**
 * The reconnect row, Node: time from a server crash to the first
 * successful tools/call after it.
 *
 *   node reconnect.js mcpping|sdk RESPONDER CYCLES
 *
 * mcpping: the TS SDK's Client over mcpping.StdioClientTransport with
 * reconnect (1 ms backoff, no jitter, a retry budget wide enough for every
 * cycle, so the figure is not the fleet budget's 2 a second); a call that
 * fails in doubt is retried at once. sdk: the Client over the SDK's own StdioClientTransport, rebuilt
 * by hand when a call fails: close, new transport, new Client, connect (the
 * handshake), call again. Each cycle SIGKILLs the server and times until a
 * call succeeds. Prints one JSON object: {"samples_ms": [...], "failures": N}.
 */
const path = require('node:path');

const ROOT = path.resolve(__dirname, '..', '..');
const sdkPath = (p) => require.resolve(`@modelcontextprotocol/sdk/${p}`, { paths: [ROOT] });
const { Client } = require(sdkPath('client/index.js'));
const BYTES = 64;
const now = () => Number(process.hrtime.bigint()) / 1e6;

async function call(client) {
  const res = await client.callTool({ name: 'blob', arguments: { bytes: BYTES } });
  if (res.content[0].text.length !== BYTES) throw new Error('wrong answer');
}

async function withMcpping(responder, cycles) {
  const mcpping = require(ROOT);
  mcpping.setRetryBudget({ burst: 1e6, perSecond: 1e6 });
  const transport = new mcpping.StdioClientTransport({ command: responder, args: [] },
    { reconnect: { initialMs: 1, maxDelayMs: 1, jitter: 0, maxAttempts: 100 } });
  const client = new Client({ name: 'bench', version: '0.1.0' });
  await client.connect(transport);
  await call(client);
  const samples = [];
  let failures = 0;
  for (let i = 0; i < cycles; i++) {
    const old = transport.pid;
    const t0 = now();
    process.kill(old, 'SIGKILL');
    for (;;) {
      try {
        await call(client);
        break;
      } catch {
        failures++; // in doubt: the crash caught it in flight
      }
    }
    if (transport.pid === old) throw new Error('the call succeeded on the killed server');
    samples.push(now() - t0);
  }
  await client.close();
  return { samples, failures };
}

async function byHand(responder, cycles) {
  const { StdioClientTransport } = require(sdkPath('client/stdio.js'));
  const open = async () => {
    const transport = new StdioClientTransport({ command: responder, args: [] });
    const client = new Client({ name: 'bench', version: '0.1.0' });
    await client.connect(transport);
    return { transport, client };
  };
  let s = await open();
  await call(s.client);
  const samples = [];
  let failures = 0;
  for (let i = 0; i < cycles; i++) {
    const old = s.transport.pid;
    const t0 = now();
    process.kill(old, 'SIGKILL');
    for (;;) {
      try {
        await call(s.client);
        break;
      } catch {
        failures++;
        await s.client.close().catch(() => {});
        s = await open();
      }
    }
    if (s.transport.pid === old) throw new Error('the call succeeded on the killed server');
    samples.push(now() - t0);
  }
  await s.client.close();
  return { samples, failures };
}

async function main() {
  const [mode, responder, cycles] = process.argv.slice(2);
  const run = mode === 'mcpping' ? withMcpping : byHand;
  const { samples, failures } = await run(responder, Number(cycles));
  console.log(JSON.stringify({ samples_ms: samples, failures }));
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
