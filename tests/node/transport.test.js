'use strict';
// StdioClientTransport: the SDK's Client over mcpping, unchanged; server
// pings answered in C, also while the JavaScript thread is blocked.
const test = require('node:test');
const assert = require('node:assert/strict');
const { Client } = require('@modelcontextprotocol/sdk/client/index.js');
const sdkStdio = require('@modelcontextprotocol/sdk/client/stdio.js');
const mcpping = require('../../node');
const h = require('./helpers');

const KEEPALIVE = { intervalMs: 20, minIntervalMs: 10, timeoutMs: 2000 };

/** Blocks the JavaScript thread for ms (a busy loop, on purpose). */
function busy(ms) {
  const end = Date.now() + ms;
  while (Date.now() < end) {
    // Spin: nothing on this thread can run, timers included.
  }
}

/** @returns {Promise<object[]>} the fixture's record of its pings to us */
async function pingResults(client) {
  const res = await client.callTool({ name: 'ping_results', arguments: {} });
  return JSON.parse(res.content[0].text);
}

/**
 * Has the SDK server ping the client 8 times, 150 ms apart from 200 ms on,
 * while this thread is blocked for 2 s; returns what the server measured.
 */
async function pingsWhileBlocked(client) {
  await client.callTool({ name: 'schedule_pings', arguments: { delayMs: 200, count: 8, intervalMs: 150, timeoutMs: 1500 } });
  const blockedFrom = Date.now();
  busy(2000);
  const blockedTo = Date.now();
  let results = await pingResults(client);
  while (results.length < 8) {
    await h.within(new Promise((r) => setImmediate(r)), 1000, 'a turn of the loop');
    results = await pingResults(client);
  }
  return { results, blockedFrom, blockedTo };
}

test('Client lists and calls tools over StdioClientTransport with keepalive, nothing lost', async () => {
  const transport = new mcpping.StdioClientTransport(h.sdkServer(), { keepalive: KEEPALIVE });
  const client = new Client({ name: 'mcpping-test', version: '1.0.0' });
  await client.connect(transport);
  try {
    assert.equal(client.getServerVersion().name, 'sdk-fixture');
    const { tools } = await client.listTools();
    assert.deepEqual(tools.map((t) => t.name).sort(), ['add', 'echo', 'ping_results', 'schedule_pings']);
    const pongs = [];
    transport.on('pong', (ev) => pongs.push(ev));
    // Many calls in flight at once, while keepalive pings interleave.
    const calls = [];
    for (let i = 0; i < 200; i++) {
      calls.push(client.callTool({ name: 'add', arguments: { a: i, b: 1000 } }));
      calls.push(client.callTool({ name: 'echo', arguments: { text: `m${i}\u00e9` } }));
    }
    const results = await h.within(Promise.all(calls), 20000, '400 tool calls');
    for (let i = 0; i < 200; i++) {
      assert.equal(results[2 * i].content[0].text, String(i + 1000));
      assert.equal(results[2 * i + 1].content[0].text, `m${i}\u00e9`);
    }
    while (pongs.length < 2) await h.nextEvent(transport, 'pong', 3000);
    // The SDK's own ping goes through the transport untouched.
    assert.deepEqual(await client.ping(), {});
    const stats = transport.stats;
    assert.equal(stats.pingTimeouts, 0);
    assert.equal(stats.inFlight, 0);
    assert.equal(stats.healthy, true);
  } finally {
    await client.close();
  }
  assert.equal(transport.state, 'closed');
});

test('the SDK server\'s pings to the client are answered, also while JavaScript is blocked for 2 s', async () => {
  const transport = new mcpping.StdioClientTransport(h.sdkServer());
  const client = new Client({ name: 'mcpping-test', version: '1.0.0' });
  await client.connect(transport);
  try {
    assert.deepEqual(await client.callTool({ name: 'schedule_pings', arguments: { delayMs: 0, count: 1, intervalMs: 1, timeoutMs: 1000 } }).then(() => 'ok'), 'ok');
    let first = await pingResults(client);
    while (first.length < 1) first = await pingResults(client);
    assert.equal(first[0].ok, true);

    const takeovers = mcpping.hostStats().takeovers;
    const { results, blockedFrom, blockedTo } = await pingsWhileBlocked(client);
    const during = results.slice(1).filter((r) => r.sentAt >= blockedFrom && r.sentAt < blockedTo);
    assert.ok(during.length >= 6, `${during.length} pings sent during the block`);
    for (const r of during) {
      assert.equal(r.ok, true, JSON.stringify(r));
      assert.ok(r.rttMs < 250, `answered in ${r.rttMs} ms while blocked`);
    }
    // In host mode (the default) it is the watchdog that answered them.
    if (process.env.MCPPING_HOST_MODE !== '0') {
      assert.equal(mcpping.runtimeMode().mode, 'host');
      assert.ok(mcpping.hostStats().takeovers > takeovers, 'the watchdog never took over');
    }
  } finally {
    await client.close();
  }
});

test('control: over the SDK\'s own StdioClientTransport the same pings wait for the blocked thread', async () => {
  // Shows the previous test can fail: without mcpping, pings sent during
  // the block are answered only after it (or time out).
  const transport = new sdkStdio.StdioClientTransport(h.sdkServer());
  const client = new Client({ name: 'sdk-test', version: '1.0.0' });
  await client.connect(transport);
  try {
    const { results, blockedFrom, blockedTo } = await pingsWhileBlocked(client);
    const during = results.filter((r) => r.sentAt >= blockedFrom && r.sentAt < blockedTo);
    assert.ok(during.length >= 6);
    assert.ok(during.some((r) => !r.ok || r.rttMs >= 250), JSON.stringify(during));
  } finally {
    await client.close();
  }
});

test('StdioClientTransport reports start failures and rejects a second start', async () => {
  const bad = new mcpping.StdioClientTransport({ command: 'mcpping-no-such-program' });
  const errorsSeen = [];
  bad.onerror = (err) => errorsSeen.push(err);
  await assert.rejects(bad.start(), (err) => err.code === 'ENOENT' && err.cause.code === 'MCPP_ERR_SPAWN');
  assert.equal(errorsSeen.length, 1);
  // The error the SDK's own transport rejects with (child_process's), so
  // code written for it (err.code === 'ENOENT': not installed) still works.
  const shape = (e) => ({ message: e.message, code: e.code, errno: e.errno, syscall: e.syscall, path: e.path, spawnargs: e.spawnargs });
  for (const command of ['mcpping-no-such-program', '/dev/null']) {
    const params = { command, args: ['a'] };
    const [ours, sdks] = await Promise.all([new mcpping.StdioClientTransport(params).start().catch((e) => e),
      new sdkStdio.StdioClientTransport(params).start().catch((e) => e)]);
    assert.deepEqual(shape(ours), shape(sdks));
  }
  await assert.rejects(mcpping.connect({ command: '/dev/null' }),
    (err) => err.code === 'MCPP_ERR_SPAWN' && err.osCode === 'EACCES' && err.osErrno === -13);

  const transport = new mcpping.StdioClientTransport(h.peer('echo.py'));
  await transport.start();
  try {
    await assert.rejects(transport.start(), /already started/);
  } finally {
    await transport.close();
  }
});

test('onclose fires once when the server exits by itself, and send then rejects', async () => {
  const transport = new mcpping.StdioClientTransport(h.peer('dies.py', ['--after', '1', '--code', '0']));
  let closes = 0;
  const closed = new Promise((resolve) => {
    transport.onclose = () => {
      closes++;
      resolve();
    };
  });
  const messages = [];
  transport.onmessage = (m) => messages.push(m);
  await transport.start();
  await transport.send({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 't', version: '1' } } });
  await h.within(closed, 5000, 'onclose');
  assert.equal(closes, 1);
  assert.equal(messages.length, 1);
  assert.equal(messages[0].id, 1);
  await assert.rejects(transport.send({ jsonrpc: '2.0', method: 'x' }), mcpping.ClosedError);
});

test('stderr: "pipe" exposes the server\'s stderr as a stream', async () => {
  const transport = new mcpping.StdioClientTransport({ ...h.peer('echo.py', ['--stderr', 'hello from stderr']), stderr: 'pipe' });
  const chunks = [];
  transport.stderr.on('data', (c) => chunks.push(c));
  await transport.start();
  try {
    while (!Buffer.concat(chunks).toString().includes('hello from stderr')) await h.nextEvent(transport.stderr, 'data', 5000);
  } finally {
    await transport.close();
  }
});

test('large frames pass through whole and in order (4 MiB each way)', async () => {
  const transport = new mcpping.StdioClientTransport(h.peer('echo.py'));
  const received = [];
  const got = new Promise((resolve) => {
    transport.onmessage = (m) => {
      received.push(m);
      if (received.length === 3) resolve();
    };
  });
  await transport.start();
  try {
    const big = 'x'.repeat(4 << 20);
    await transport.send({ jsonrpc: '2.0', id: 1, method: 'echo', params: { big, n: 1 } });
    await transport.send({ jsonrpc: '2.0', id: 2, method: 'echo', params: { small: '\u00e9\u2028' } });
    await transport.send({ jsonrpc: '2.0', id: 3, method: 'echo', params: { big, n: 3 } });
    await h.within(got, 20000, 'three echoes');
    assert.deepEqual(received.map((m) => m.id), [1, 2, 3]);
    assert.equal(received[0].result.big.length, big.length);
    assert.equal(received[0].result.big, big);
    assert.equal(received[1].result.small, '\u00e9\u2028');
    assert.equal(received[2].result.n, 3);
  } finally {
    await transport.close();
  }
});

test('awkward server output: JSON-RPC lines arrive in order, the rest goes to onerror, pings still work', async () => {
  const transport = new mcpping.StdioClientTransport(h.peer('garbage.py', ['--long', String(3 << 20), '--delay-ms', '10']));
  const messages = [];
  const errs = [];
  const done = new Promise((resolve) => {
    transport.onmessage = (m) => {
      messages.push(m);
      if (m.method === 'notifications/done') resolve();
    };
  });
  transport.onerror = (err) => errs.push(err);
  await transport.start();
  try {
    await h.within(done, 20000, 'notifications/done');
    assert.deepEqual(messages.map((m) => m.method), ['notifications/message', 'notifications/crlf', 'notifications/done']);
    assert.equal(messages[0].params.data, 'split');
    // "not json at all", the non-UTF-8 line, {"a":N} x3 and the long line.
    assert.equal(errs.length, 6, errs.map((e) => e.message).join('; '));
    assert.ok((await transport.ping()) > 0);
  } finally {
    await transport.close();
  }
});
