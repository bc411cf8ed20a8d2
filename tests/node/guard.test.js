'use strict';
// guard(): the engine as middleware around any SDK Transport, in either
// role: SDK stdio, Streamable HTTP (server-everything), in-memory.
const test = require('node:test');
const assert = require('node:assert/strict');
const { Client } = require('@modelcontextprotocol/sdk/client/index.js');
const sdkStdio = require('@modelcontextprotocol/sdk/client/stdio.js');
const { StreamableHTTPClientTransport } = require('@modelcontextprotocol/sdk/client/streamableHttp.js');
const { InMemoryTransport } = require('@modelcontextprotocol/sdk/inMemory.js');
const { McpServer } = require('@modelcontextprotocol/sdk/server/mcp.js');
const mcpping = require('../../node');
const h = require('./helpers');

test('guard() over the SDK stdio transport: Client works, pings are timed, records carry no payloads', async () => {
  const records = [];
  const inner = new sdkStdio.StdioClientTransport(h.sdkServer());
  const transport = mcpping.guard(inner, { role: 'client', records: (r) => records.push(r) });
  const client = new Client({ name: 'mcpping-test', version: '1.0.0' });
  await client.connect(transport);
  try {
    const res = await client.callTool({ name: 'echo', arguments: { text: 'secret-argument' } });
    assert.equal(res.content[0].text, 'secret-argument');
    const rtt = await transport.ping();
    assert.ok(rtt > 0 && rtt < 1000);
    assert.equal(transport.stats.protocolVersion, '2025-11-25');
    assert.equal(transport.stats.peerName, 'sdk-fixture');
    const ok = records.find((r) => r.event === 'ping_ok');
    assert.ok(ok, JSON.stringify(records));
    assert.equal(ok.transport, 'stdio');
    assert.equal(ok.direction, 'outbound');
    assert.equal(ok.peer, 'sdk-fixture');
    assert.ok(!JSON.stringify(records).includes('secret-argument'));
  } finally {
    await client.close();
  }
  assert.equal(transport.state, 'closed');
  assert.equal(records.at(-1).event, 'closed');
});

test('guard() over Streamable HTTP against server-everything: ping, keepalive, session id in records', async () => {
  const server = await h.startEverythingHttp();
  try {
    const records = [];
    const inner = new StreamableHTTPClientTransport(new URL(server.url));
    const transport = mcpping.guard(inner, {
      role: 'client',
      keepalive: { intervalMs: 50, minIntervalMs: 10, timeoutMs: 3000 },
      records: (r) => records.push(r),
    });
    const client = new Client({ name: 'mcpping-test', version: '1.0.0' });
    await client.connect(transport);
    try {
      assert.ok(transport.sessionId, 'a session id was assigned');
      const rtt = await transport.ping({ timeoutMs: 3000 });
      assert.ok(rtt > 0 && rtt < 3000);
      while (!records.some((r) => r.event === 'ping_ok' && r.session_id === transport.sessionId)) {
        await h.nextEvent(transport, 'pong', 5000);
      }
      const rec = records.find((r) => r.event === 'ping_ok');
      assert.equal(rec.transport, 'streamable-http');
      const { tools } = await client.listTools();
      assert.ok(tools.length > 0);
    } finally {
      await client.close();
    }
  } finally {
    await server.stop();
  }
});

test('guard() in the server role answers the client\'s pings itself and keeps the client alive-checked', async () => {
  const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
  const server = new McpServer({ name: 'guarded-server', version: '1.0.0' });
  const guarded = mcpping.guard(serverSide, { role: 'server' });
  const answered = [];
  guarded.on('ping_answered', (ev) => answered.push(ev));
  await server.connect(guarded);
  const client = new Client({ name: 'in-memory-client', version: '1.0.0' });
  await client.connect(clientSide);
  try {
    assert.deepEqual(await client.ping(), {});
    assert.equal(answered.length, 1);
    assert.equal(guarded.stats.pingsAnswered, 1);
    // The server pings its client through the engine.
    const rtt = await guarded.ping();
    assert.ok(rtt >= 0 && rtt < 1000);
    assert.equal(guarded.stats.peerName, 'in-memory-client');
  } finally {
    await client.close();
  }
});

test('guard() reports an unsupported peer without convicting it', async () => {
  const inner = new sdkStdio.StdioClientTransport(h.peer('unsupported.py'));
  const transport = mcpping.guard(inner);
  const client = new Client({ name: 'mcpping-test', version: '1.0.0' });
  await client.connect(transport);
  try {
    await assert.rejects(transport.ping(), mcpping.PingUnsupportedError);
    assert.equal(transport.state, 'alive');
    await assert.rejects(transport.ping(), mcpping.PingUnsupportedError);
  } finally {
    await client.close();
  }
});

test('guard() rejects what is not a transport', () => {
  assert.throws(() => mcpping.guard({}), TypeError);
});

// Issue 8 item 7: the guard follows the C core's stale policy. With
// onStale: 'close' a stale peer's session ends (onclose fires, the server
// process goes); with 'report' it stays open.
async function guardFrozen(onStale) {
  const inner = new sdkStdio.StdioClientTransport(h.peer('freeze.py', ['--after', '3']));
  const transport = mcpping.guard(inner, {
    role: 'client',
    keepalive: { intervalMs: 50, minIntervalMs: 10, timeoutMs: 150, failures: 1, jitterPct: 0, onStale },
  });
  const client = new Client({ name: 'mcpping-test', version: '1.0.0' });
  await client.connect(transport); // initialize + initialized: 2 messages
  const closed = new Promise((resolve) => {
    const prev = transport.onclose;
    transport.onclose = () => {
      if (prev) prev();
      resolve();
    };
  });
  await h.nextEvent(transport, 'stale', 10000);
  return { client, transport, inner, closed };
}

test('guard() closes a stale peer when onStale is close', async () => {
  const { client, transport, inner, closed } = await guardFrozen('close');
  try {
    await closed;
    assert.equal(transport.state, 'closed');
    assert.equal(inner._process, undefined, 'the SDK transport let the server go');
  } finally {
    await client.close();
  }
});

test('guard() keeps a stale peer open when onStale is report', async () => {
  const { client, transport, closed } = await guardFrozen('report');
  try {
    const outcome = await Promise.race([closed.then(() => 'closed'), h.nextEvent(transport, 'timeout', 10000).then(() => 'still pinging')]);
    assert.equal(outcome, 'still pinging');
    assert.equal(transport.state, 'stale');
  } finally {
    await client.close();
  }
});
