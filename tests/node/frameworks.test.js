'use strict';
// mcpping under the Node agent frameworks, installed from npm, no language
// model involved: the Vercel AI SDK's createMCPClient({ transport }), the
// OpenAI Agents SDK's MCPServerStdio and LangChain's MultiServerMCPClient
// under instrument(), LangChain's loadMcpTools over an SDK Client. Each
// lists tools and calls one on server-everything; liveness shows through
// the framework: keepalive ping_ok records, and a SIGSTOPped server fails
// the framework's call within the keepalive bound instead of hanging it.
const test = require('node:test');
const assert = require('node:assert/strict');
const { pathToFileURL } = require('node:url');
const h = require('./helpers');
const mcpping = require('../../node');

const EVERYTHING = { command: process.execPath, args: [h.EVERYTHING, 'stdio'] };
// Convicted within interval + timeout x failures (the process check may be sooner).
const KEEPALIVE = { intervalMs: 1000, timeoutMs: 500, failures: 2 };
const BOUND_MS = KEEPALIVE.intervalMs + KEEPALIVE.timeoutMs * KEEPALIVE.failures;

/** Resolves once records holds a ping_ok (the keepalive's first round). */
function firstPingOk(emitter) {
  return h.within(new Promise((resolve) => {
    emitter.on('record', function seen(r) {
      if (r.event !== 'ping_ok') return;
      emitter.off('record', seen);
      resolve(r);
    });
  }), 10000, 'a keepalive ping_ok');
}

/** SIGSTOPs the server and times how long the framework's call takes to fail. */
async function frozenCallFails(pid, call) {
  process.kill(pid, 'SIGSTOP');
  const t0 = Date.now();
  try {
    await assert.rejects(h.within(call(), BOUND_MS + 3000, 'the call on a frozen server to fail'));
  } finally {
    try {
      process.kill(pid, 'SIGCONT');
    } catch {
      // Already killed by mcpping: the point.
    }
  }
  return Date.now() - t0;
}

test('Vercel AI SDK: createMCPClient({ transport }) over mcpping lists and calls a tool', async () => {
  const { createMCPClient } = require('@ai-sdk/mcp');
  const transport = new mcpping.StdioClientTransport({ ...EVERYTHING, stderr: 'ignore' }, { keepalive: KEEPALIVE });
  const client = await createMCPClient({ transport });
  try {
    const tools = await client.tools();
    assert.ok(Object.hasOwn(tools, 'echo'), Object.keys(tools).join(', '));
    const result = await tools.echo.execute({ message: 'hi' }, { toolCallId: 'call-1', messages: [] });
    assert.deepEqual(result.content, [{ type: 'text', text: 'Echo: hi' }]);
    assert.equal(transport.info().protocolVersion, '2025-11-25');
    const ok = await firstPingOk(transport);
    assert.equal(ok.peer, 'mcp-servers/everything');
    const took = await frozenCallFails(transport.pid, () => tools.echo.execute({ message: 'frozen' }, { toolCallId: 'call-2', messages: [] }));
    assert.ok(took <= BOUND_MS + 1000, `${took} ms (bound ${BOUND_MS} ms)`);
    assert.equal(transport.state, 'closed');
  } finally {
    await client.close();
  }
});

test('OpenAI Agents SDK: MCPServerStdio goes through mcpping under instrument()', async () => {
  const patched = mcpping.instrument({ keepalive: KEEPALIVE });
  const { MCPServerStdio } = require('@openai/agents');
  const server = new MCPServerStdio({ name: 'everything', ...EVERYTHING });
  try {
    // Its v2 client's module is among those patched.
    assert.ok(patched.some((f) => f.includes('@modelcontextprotocol/client')), patched.join(', '));
    await server.connect();
    const tools = await server.listTools();
    assert.ok(tools.some((t) => t.name === 'echo'));
    assert.deepEqual(await server.callTool('echo', { message: 'hi' }), [{ type: 'text', text: 'Echo: hi' }]);
    const [transport] = mcpping.instrumentedTransports();
    assert.ok(transport instanceof mcpping.StdioClientTransport);
    assert.equal(mcpping.instrumentedTransports().length, 1);
    await firstPingOk(transport);
    const took = await frozenCallFails(transport.pid, () => server.callTool('echo', { message: 'frozen' }));
    assert.ok(took <= BOUND_MS + 1000, `${took} ms (bound ${BOUND_MS} ms)`);
  } finally {
    await server.close();
    mcpping.uninstrument();
  }
  assert.deepEqual(mcpping.instrumentedTransports(), []);
});

test('LangChain: MultiServerMCPClient under instrument(), loadMcpTools over an SDK Client', async () => {
  const { MultiServerMCPClient, loadMcpTools } = require('@langchain/mcp-adapters');
  mcpping.instrument({ keepalive: KEEPALIVE });
  const multi = new MultiServerMCPClient({ mcpServers: { everything: { transport: 'stdio', ...EVERYTHING } } });
  try {
    const tools = await multi.getTools();
    const echo = tools.find((t) => t.name.endsWith('echo'));
    assert.equal(await echo.invoke({ message: 'hi' }), 'Echo: hi');
    const [transport] = mcpping.instrumentedTransports();
    assert.ok(transport instanceof mcpping.StdioClientTransport);
    await firstPingOk(transport);
  } finally {
    await multi.close();
    mcpping.uninstrument();
  }
  // No instrument(), ESM or not: the application's own Client.
  const { Client } = require('@modelcontextprotocol/sdk/client/index.js');
  const transport = new mcpping.StdioClientTransport({ ...EVERYTHING, stderr: 'ignore' });
  const client = new Client({ name: 'app', version: '1.0.0' });
  await client.connect(transport);
  try {
    const tools = await loadMcpTools('everything', client);
    assert.equal(await tools.find((t) => t.name.endsWith('echo')).invoke({ message: 'there' }), 'Echo: there');
    assert.equal(transport.state, 'alive');
  } finally {
    await client.close();
  }
});

test('instrument() is idempotent, validated, and uninstrument() restores the SDK class', async () => {
  const sdkStdio = require('@modelcontextprotocol/sdk/client/stdio.js');
  const original = sdkStdio.StdioClientTransport;
  const first = mcpping.instrument();
  try {
    assert.deepEqual(mcpping.instrument({ keepalive: { intervalMs: 5000 } }), first); // patched once
    assert.notEqual(sdkStdio.StdioClientTransport, original);
    const made = new sdkStdio.StdioClientTransport({ command: 'x' });
    assert.ok(made instanceof mcpping.StdioClientTransport);
    // stderr as a stream is the SDK's to honour: its own transport, unwatched.
    const { PassThrough } = require('node:stream');
    assert.ok(new sdkStdio.StdioClientTransport({ command: 'x', stderr: new PassThrough() }) instanceof original);
    assert.throws(() => mcpping.instrument({ keepalive: { intervalMs: -1 } }), { code: 'ERR_MCPPING_INVALID_ARG' });
    assert.throws(() => mcpping.instrument({ paths: 'node_modules' }), /options\.paths must be an array/);
    // reconnect is checked here too, not later inside the framework's constructor.
    assert.throws(() => mcpping.instrument({ reconnect: { multiplier: 0 } }), { code: 'ERR_MCPPING_INVALID_ARG' });
    assert.throws(() => mcpping.instrument({ reconnect: 'yes' }), { code: 'ERR_MCPPING_INVALID_ARG' });
  } finally {
    mcpping.uninstrument();
  }
  assert.equal(sdkStdio.StdioClientTransport, original);
});

test('instrument() cannot reach ES modules: an import() namespace keeps the SDK class', async () => {
  mcpping.instrument();
  try {
    const file = require.resolve('@modelcontextprotocol/sdk/client/stdio.js').replace('/dist/cjs/', '/dist/esm/');
    const esm = await import(pathToFileURL(file).href);
    assert.ok(!(new esm.StdioClientTransport({ command: 'x' }) instanceof mcpping.StdioClientTransport));
    assert.throws(() => {
      esm.StdioClientTransport = mcpping.StdioClientTransport;
    }, TypeError);
  } finally {
    mcpping.uninstrument();
  }
});

test('from an ES module, @openai/agents loaded with createRequire is reached by instrument()', async () => {
  const fs = require('node:fs');
  const path = require('node:path');
  const dir = fs.mkdtempSync(path.join(h.ROOT, 'build', 'esm-agents-'));
  const file = path.join(dir, 'agent.mjs');
  fs.writeFileSync(file, `
import { createRequire } from 'node:module';
import * as mcpping from 'mcpping';
const require = createRequire(import.meta.url);
mcpping.instrument();
const { MCPServerStdio } = require('@openai/agents');
const server = new MCPServerStdio({ name: 'everything', command: ${JSON.stringify(process.execPath)}, args: [${JSON.stringify(h.EVERYTHING)}, 'stdio'] });
await server.connect();
const [transport] = mcpping.instrumentedTransports();
const text = (await server.callTool('echo', { message: 'esm' }))[0].text;
console.log(JSON.stringify({ text, mcpping: transport instanceof mcpping.StdioClientTransport, rtt: await transport.ping() > 0 }));
await server.close();
`);
  try {
    const res = await h.run(process.execPath, [file], { cwd: dir, timeoutMs: 30000 });
    assert.equal(res.status, 0, res.stderr);
    assert.deepEqual(JSON.parse(res.stdout), { text: 'Echo: esm', mcpping: true, rtt: true });
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
});
