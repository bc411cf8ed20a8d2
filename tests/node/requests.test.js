'use strict';
// Per-request deadlines and aborts, live health, and backpressure (issue 8
// items 3, 4, 10): against flood.py (a busy, healthy peer) and
// server-everything's long-running tool.
const test = require('node:test');
const assert = require('node:assert/strict');
const path = require('node:path');
const { execFile } = require('node:child_process');
const { Client } = require('@modelcontextprotocol/sdk/client/index.js');
const mcpping = require('../../node');
const { peer, within, EVERYTHING } = require('./helpers');

const HANG = { name: 'hang' };
const HOST = path.join(__dirname, 'fixtures', 'backpressure_host.js');
const UNREAD_HOST = path.join(__dirname, 'fixtures', 'flood_unread_host.js');

/** @returns {Promise<unknown[]>} requestIds of every notifications/cancelled flood.py got */
async function cancelledIds(p) {
  return (await p.request('test/cancelled')).ids;
}

test('a hung call reads unhealthy live (keepalive off) and an abort cancels it', async () => {
  const p = await mcpping.connect(peer('flood.py'), { keepalive: { timeoutMs: 300 } });
  try {
    const ac = new AbortController();
    const call = p.request('tools/call', HANG, { timeoutMs: 0, signal: ac.signal }); // no deadline
    await p.ping(); // commands run in order: the call is on the wire
    assert.equal(p.stats.inFlight, 1);
    assert.equal(p.stats.healthy, true);
    // Past the ping timeout with nothing queued: before the live snapshot
    // this read healthy true, inFlight 0, for ever.
    await new Promise((resolve) => setTimeout(resolve, 500));
    assert.equal(p.stats.inFlight, 1);
    assert.equal(p.stats.healthy, false);
    assert.equal(p.state, 'alive');
    ac.abort(new Error('caller gave up'));
    await assert.rejects(call, /caller gave up/);
    assert.deepEqual(await cancelledIds(p), ['mcpping-2']); // initialize was mcpping-1
    assert.equal(p.stats.inFlight, 0);
    assert.equal(p.stats.healthy, true);
  } finally {
    await p.close();
  }
});

test('request timeoutMs: cancelled on the wire, a -32001 answer, ledger cleared, nothing leaks', async () => {
  const p = await mcpping.connect(peer('flood.py'));
  const leaked = [];
  p.on('message', (m) => leaked.push(m));
  try {
    await assert.rejects(p.request('tools/call', HANG, { timeoutMs: 200 }), (err) => {
      assert.ok(err instanceof mcpping.RpcError);
      assert.equal(err.code, -32001);
      assert.equal(err.answerKind, 'timeout'); // the engine's kind, beside its words
      assert.match(err.message, /no answer after 200 ms/);
      return true;
    });
    assert.equal(p.stats.inFlight, 0);
    assert.deepEqual(await cancelledIds(p), ['mcpping-2']);
    assert.equal(p.stats.healthy, true);
    assert.deepEqual(leaked, []);
  } finally {
    await p.close();
  }
});

// A server that answers in mcpping's own words is still the server: the
// engine's answers are known by the kind the C core puts on them, not by text.
test('a server answer in mcpping\'s words is the server\'s answer (no timeout, not in doubt)', async () => {
  const p = await mcpping.connect(peer('echo.py'));
  try {
    const mimics = [
      { code: -32001, message: 'Request timed out (mcpping: no answer after 5 ms)' },
      { code: -32003, message: 'Request in doubt (mcpping: the server failed while it was in flight; it may have run, and it is not replayed)', data: { mcpping: 'in_doubt' } },
    ];
    for (const error of mimics) {
      await assert.rejects(p.request('test/error', { error }, { timeoutMs: 5000 }), (err) => {
        assert.ok(err instanceof mcpping.RpcError && !(err instanceof mcpping.RequestInDoubtError), err.name);
        assert.equal(err.answerKind, null);
        assert.equal(err.code, error.code);
        return true;
      });
    }
  } finally {
    await p.close();
  }
});

test('request option validation: RangeError with a stable code, nothing sent', async () => {
  const p = await mcpping.connect(peer('flood.py'));
  try {
    // A number out of range is a RangeError, a string a TypeError (C's
    // row request_timeout_ms: a fraction of a ms rounds, as every time does).
    for (const bad of [-1, 0.5, NaN, Infinity, 2 ** 31, '5']) {
      await assert.rejects(p.request('ping', undefined, { timeoutMs: bad }), (err) => {
        assert.ok(err instanceof (typeof bad === 'number' ? RangeError : TypeError), err.message);
        assert.equal(err.code, 'ERR_MCPPING_INVALID_ARG');
        assert.match(err.message, /^timeoutMs must be 0 \(none\) or between 1 and 2147483647 ms, not /);
        return true;
      });
    }
    assert.equal(p.stats.inFlight, 0);
  } finally {
    await p.close();
  }
  // The C table's row and sentence (0 is its default, as in Python).
  assert.throws(() => new mcpping.StdioClientTransport(peer('flood.py'), { maxPendingBytes: -1 }),
    { name: 'RangeError', message: 'options.maxPendingBytes must be 0 (the default, 16 MiB) or an integer between 1 and 281474976710656 bytes, not -1' });
  await assert.rejects(mcpping.connect(peer('flood.py'), { maxLineBytes: -5 }), { code: 'ERR_MCPPING_INVALID_ARG' });
});

test('params JSON cannot carry (a BigInt, a cycle, NaN) reject that call and leave nothing waiting', async () => {
  // The request used to stay registered: close() rejected its promise with
  // nobody awaiting it, an unhandled rejection that ended the process.
  const unhandled = [];
  const onUnhandled = (err) => unhandled.push(err);
  process.on('unhandledRejection', onUnhandled);
  const p = await mcpping.connect(peer('echo.py'));
  try {
    const cycle = {};
    cycle.self = cycle;
    await assert.rejects(p.request('echo', { n: 10n }), /BigInt/);
    await assert.rejects(p.request('echo', cycle), /circular/);
    // NaN and Infinity: JSON.stringify wrote null, the message altered; now
    // refused, as Python's json refuses them (send and notify too).
    await assert.rejects(p.request('echo', { x: NaN }), { name: 'RangeError', message: 'message is not JSON: "x" is NaN, which JSON has no number for' });
    assert.throws(() => p.notify('notifications/x', { y: [1, -Infinity] }), { name: 'RangeError', message: 'message is not JSON: "1" is -Infinity, which JSON has no number for' });
    assert.throws(() => p.send({ jsonrpc: '2.0', method: 'n', params: { z: NaN } }), RangeError);
    assert.equal(p.rpc.pending.size, 0);
    assert.deepEqual(await p.request('echo', { nothing: null }), { nothing: null });
    assert.deepEqual(await p.request('echo', { after: 1 }), { after: 1 });
  } finally {
    await p.close();
  }
  await new Promise((resolve) => setImmediate(resolve)); // where an unhandled rejection would be reported
  process.off('unhandledRejection', onUnhandled);
  assert.deepEqual(unhandled, []);
});

test('SDK Client over StdioClientTransport: requestTimeoutMs answers -32001 from server-everything, session goes on', async () => {
  const transport = new mcpping.StdioClientTransport(
    { command: process.execPath, args: [EVERYTHING, 'stdio'], stderr: 'ignore' },
    { requestTimeoutMs: 3000 }, // initialize included: the server starts within it
  );
  const client = new Client({ name: 'mcpping-test', version: '1.0.0' });
  await client.connect(transport);
  try {
    await assert.rejects(
      client.callTool({ name: 'trigger-long-running-operation', arguments: { duration: 10, steps: 5 } }),
      (err) => {
        assert.equal(err.code, -32001);
        assert.match(err.message, /timed out/);
        return true;
      },
    );
    assert.equal(transport.stats.inFlight, 0);
    const tools = await client.listTools();
    assert.ok(tools.tools.some((t) => t.name === 'trigger-long-running-operation'));
    assert.equal(transport.stats.healthy, true);
  } finally {
    await client.close();
  }
});

test('a full outbound queue waits in order, emits drain, loses nothing', async () => {
  const p = await mcpping.connect(peer('flood.py'), { maxPendingBytes: 64 * 1024 });
  try {
    const answers = [];
    p.on('message', (m) => typeof m.id === 'number' && answers.push(m.id));
    process.kill(p.pid, 'SIGSTOP'); // it reads nothing: the pipe, then the queue, fill up
    const pad = 'y'.repeat(4000);
    const n = 200;
    let queued = 0;
    try {
      for (let i = 0; i < n; i++) {
        if (!p.conn.send(JSON.stringify({ jsonrpc: '2.0', id: i, method: 'ping', params: { pad } }))) queued++;
      }
      assert.ok(queued > 0, 'some sends waited in JavaScript');
    } finally {
      process.kill(p.pid, 'SIGCONT');
    }
    await within(new Promise((resolve) => p.once('drain', resolve)), 10000, 'drain');
    while (answers.length < n) await p.request('test/cancelled'); // a round trip
    assert.deepEqual(answers, [...Array(n).keys()]);
  } finally {
    await p.close();
  }
});

test('a flood while the JavaScript thread is blocked: every frame, in order, hash checked, memory bounded', async () => {
  // 64 MiB flood, 4 MiB cap, thread blocked 2 s. The 1 GiB run is manual
  // (docs/node.md, "Backpressure").
  const cap = 4 << 20;
  const out = await new Promise((resolve, reject) => {
    execFile(process.execPath, [HOST, '65536', '1024', String(cap), '2000'], { timeout: 120000 }, (err, stdout) =>
      err ? reject(err) : resolve(JSON.parse(stdout)),
    );
  });
  assert.equal(out.frames, 65536);
  assert.equal(out.inOrder, true);
  assert.equal(out.hashOk, true);
  assert.deepEqual(out.convicted, []);
  // Twice the cap (what the native runtime and the item being dispatched
  // may hold) plus 8 MiB that no cap governs: V8's young generation grows
  // from 1 to about 4 MiB per semi-space under this allocation rate, and
  // node's own code pages for JSON and hashing are touched for the first
  // time. Measured: 9.4 MiB. Converting a drained batch all at once grew it
  // by 54 MiB (V8 promoted the batch); unbounded, by 250+ MiB.
  assert.ok(out.rssGrowth < 2 * cap + (8 << 20), `rss growth ${out.rssGrowth}`);
});

/**
 * Runs fixtures/flood_unread_host.js with V8's heap capped (16 MiB old
 * space, 1 MiB semi-spaces), so its peak RSS counts what is kept rather
 * than garbage V8 has not collected yet, and a queue that kept the flood
 * would die of it.
 */
function runUnread(mode, count, size, cap, where = 'main') {
  const args = ['--max-old-space-size=16', '--max-semi-space-size=1', UNREAD_HOST, mode, String(count), String(size), String(cap), where];
  return new Promise((resolve, reject) => {
    execFile(process.execPath, args, { timeout: 120000 }, (err, stdout) => (err ? reject(err) : resolve(JSON.parse(stdout))));
  });
}

for (const where of ['main', 'worker']) {
  test(`a peer used only through request() keeps nothing of a 256 MiB notification flood (issue 23, ${where} thread)`, async () => {
    // No 'message' listener: an EventEmitter keeps nothing, and no other
    // queue holds the notifications. Requests are answered throughout.
    const cap = 1 << 20;
    const out = await runUnread('requests', 262144, 1024, cap, where);
    assert.ok(out.answered >= 1);
    assert.equal(out.state, 'alive');
    // Three times the cap plus 8 MiB for node itself (measured 3.9-4.6 MiB).
    assert.ok(out.rssGrowth < 3 * cap + (8 << 20), `rss growth ${out.rssGrowth}`);
  });

  test(`the SDK Client over StdioClientTransport takes a 256 MiB flood, slowly, in order, memory bounded (issue 23, ${where} thread)`, async () => {
    // The SDK calls onmessage synchronously and mcpping queues nothing in
    // between: a slow handler keeps the thread busy, so the runtime pauses.
    const cap = 1 << 20;
    const out = await runUnread('sdk', 65536, 4096, cap, where);
    assert.equal(out.received, 65536);
    assert.equal(out.inOrder, true);
    assert.equal(out.done, 65536);
    assert.equal(out.tools, 2);
    assert.ok(out.rssGrowth < 3 * cap + (8 << 20), `rss growth ${out.rssGrowth}`); // measured 6.3-7.2 MiB
  });
}
