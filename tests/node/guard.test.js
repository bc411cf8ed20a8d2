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

test('guard() on both ends of an in-memory pair: the pong comes back inside the ping, and no event is lost', async () => {
  // The server's engine answers the ping inside the client's engine.ping
  // (InMemoryTransport delivers synchronously): the client's engine is fed
  // from inside its own call.
  const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
  const server = new McpServer({ name: 'guarded-server', version: '1.0.0' });
  await server.connect(mcpping.guard(serverSide, { role: 'server' }));
  const guarded = mcpping.guard(clientSide, { role: 'client' });
  const client = new Client({ name: 'in-memory-client', version: '1.0.0' });
  await client.connect(guarded);
  try {
    const seen = [];
    for (const name of ['ping', 'pong']) guarded.on(name, () => seen.push(name));
    const rtt = await guarded.ping();
    assert.ok(rtt >= 0 && rtt < 1000);
    assert.deepEqual([...seen].sort(), ['ping', 'pong']);
    assert.equal(guarded.stats.pingsSent, 1);
    assert.equal(guarded.stats.pongsReceived, 1);
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

/**
 * A Client over a guarded SDK stdio transport to a server that never
 * answers pings (drop_pings.py): keepalive makes it stale in ~200 ms.
 * With probing off (probe: null) pings alone decide; with the default
 * probe it would be ping-deaf instead (the next test).
 */
async function guardedDropPings(onStale, probe = null) {
  const inner = new sdkStdio.StdioClientTransport(h.peer('drop_pings.py'));
  const keepalive = { intervalMs: 50, minIntervalMs: 10, timeoutMs: 100, failures: 2, onStale };
  const transport = mcpping.guard(inner, { role: 'client', keepalive, probe });
  const client = new Client({ name: 'mcpping-test', version: '1.0.0' });
  await client.connect(transport);
  return { inner, transport, client, pid: inner.pid };
}

test('guard() with onStale "close" (the default) closes a stale session: closed event, inner transport closed, SDK onclose', async () => {
  const { transport, client, pid } = await guardedDropPings(undefined);
  const clientClosed = new Promise((resolve) => {
    client.onclose = resolve;
  });
  const staleEvent = h.nextEvent(transport, 'stale', 5000);
  const closedEvent = h.nextEvent(transport, 'closed', 5000);
  try {
    const stale = await staleEvent;
    assert.equal(stale.failureCount, 2);
    const closed = await closedEvent;
    assert.equal(closed.state, 'closed');
    assert.match(closed.message, /stale/);
    await h.within(clientClosed, 5000, 'the SDK client to see the close');
    assert.equal(transport.state, 'closed');
    assert.equal(h.exists(pid), false, 'the inner transport\'s server is gone');
    await assert.rejects(client.listTools(), /Not connected/);
  } finally {
    await client.close();
  }
});

test('guard() with the default probe finds a server that answers all but ping ping-deaf, never stale', async () => {
  const { transport, client } = await guardedDropPings(undefined, 'auto');
  try {
    const seen = [];
    transport.on('stale', () => seen.push('stale'));
    const deaf = await h.nextEvent(transport, 'ping_deaf', 5000);
    assert.equal(deaf.proof, 'probe:tools/list');
    await h.nextEvent(transport, 'probe_ok', 5000); // watched by probe from now on
    await h.nextEvent(transport, 'probe_ok', 5000);
    assert.deepEqual(seen, []);
    assert.equal(transport.state, 'alive');
  } finally {
    await client.close();
  }
});

test('guard() with onStale "report" reports a stale session and keeps it open', async () => {
  const { transport, client } = await guardedDropPings('report');
  try {
    let closed = false;
    transport.on('closed', () => {
      closed = true;
    });
    await h.nextEvent(transport, 'stale', 5000);
    assert.equal(transport.state, 'stale');
    // Still open: a request is answered, and that traffic proves it alive.
    const recovered = h.nextEvent(transport, 'recovered', 5000);
    const { tools } = await client.listTools();
    assert.ok(Array.isArray(tools));
    await recovered;
    assert.equal(closed, false);
  } finally {
    await client.close();
  }
});
