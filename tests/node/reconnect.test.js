'use strict';
// Reconnect against real processes: a call in flight at the crash fails as
// in doubt and never reaches the new server; the TS SDK's Client over
// StdioClientTransport keeps working across a crash of server-everything;
// max_attempts ends it with a reason; options are checked at the boundary.
const test = require('node:test');
const assert = require('node:assert/strict');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { Client } = require('@modelcontextprotocol/sdk/client/index.js');
const mcpping = require('../../node');
const h = require('./helpers');

const FAST = { initialMs: 20, maxDelayMs: 50, jitter: 0, maxAttempts: 5 };

function tmpdir() {
  return fs.mkdtempSync(path.join(os.tmpdir(), 'mcpping-reconnect-'));
}

function logged(dir) {
  return fs.readFileSync(path.join(dir, 'log.jsonl'), 'utf8').trim().split('\n').map((l) => JSON.parse(l));
}

test('a call in flight at the crash rejects in doubt and reaches the new server zero times', async () => {
  const dir = tmpdir();
  const peer = await mcpping.connect(h.peer('recorder.py', ['--log', path.join(dir, 'log.jsonl')]), { reconnect: FAST });
  try {
    const old = peer.pid;
    const hang = peer.request('tools/call', { name: 'hang', arguments: {} });
    hang.catch(() => {});
    await peer.request('tools/list', {}); // answered after it: the server holds the call
    const reconnecting = h.nextEvent(peer, 'reconnecting', 10000);
    const reconnected = h.nextEvent(peer, 'reconnected', 10000);
    process.kill(old, 'SIGKILL');
    await assert.rejects(hang, (err) => {
      assert.ok(err instanceof mcpping.RequestInDoubtError);
      assert.equal(err.disposition, 'in_doubt');
      assert.equal(err.method, 'tools/call');
      return true;
    });
    const ing = await reconnecting;
    assert.equal(ing.attempt, 1);
    assert.equal(ing.inFlight, 1);
    assert.equal(ing.disposition, 'in_doubt');
    assert.match(ing.message, /signal 9/);
    const ed = await reconnected;
    assert.equal(ed.pid, peer.pid);
    assert.notEqual(ed.pid, old);
    const res = await peer.request('tools/call', { name: 'echo', arguments: {} });
    assert.equal(res.content[0].text, String(ed.pid));
    const log = logged(dir);
    const hangs = log.filter((e) => e.msg.params && e.msg.params.name === 'hang');
    assert.deepEqual(hangs.map((e) => e.pid), [old]);
    const fresh = log.filter((e) => e.pid === ed.pid).map((e) => e.msg);
    assert.equal(fresh[0].method, 'initialize');
    assert.equal(fresh[0].id, 'mcpp-reconnect-1');
    assert.equal(fresh[1].method, 'notifications/initialized');
    assert.equal(fresh.filter((m) => m.method === 'initialize').length, 1);
  } finally {
    await peer.close();
    fs.rmSync(dir, { recursive: true, force: true });
  }
});

test('a request sent during a long backoff rejects with the timeout error on its own clock', async () => {
  // The next server comes 8 s after the crash; the request's 1 s runs from
  // when it was sent, so its timeout comes first (an ordering, not a speed).
  const backoffMs = 8000;
  const dir = tmpdir();
  const peer = await mcpping.connect(h.peer('recorder.py', ['--log', path.join(dir, 'log.jsonl')]), {
    reconnect: { initialMs: backoffMs, maxDelayMs: backoffMs, jitter: 0 },
  });
  try {
    let reconnectedAt = null;
    peer.on('reconnected', () => { reconnectedAt = Date.now(); });
    const timeouts = [];
    peer.on('request_timeout', (ev) => timeouts.push(ev));
    const reconnecting = h.nextEvent(peer, 'reconnecting', 10000);
    const reconnected = h.nextEvent(peer, 'reconnected', backoffMs + 20000);
    process.kill(peer.pid, 'SIGKILL');
    await reconnecting;
    const sent = Date.now();
    await assert.rejects(peer.request('tools/list', {}, { timeoutMs: 1000 }), (err) => {
      assert.ok(err instanceof mcpping.RpcError);
      assert.equal(err.code, -32001);
      assert.match(err.message, /^Request timed out \(mcpping: no answer after 1000 ms\)/);
      return true;
    });
    const waited = Date.now() - sent;
    assert.ok(waited >= 1000 && waited < backoffMs, `waited ${waited} ms`);
    assert.equal(reconnectedAt, null);
    assert.deepEqual(timeouts.map((ev) => ev.message), ['tools/list']);
    // Awaited, not abandoned: the held frame is seen to go to no server.
    const ed = await reconnected;
    const res = await peer.request('tools/call', { name: 'echo', arguments: {} });
    assert.equal(res.content[0].text, String(ed.pid));
    assert.deepEqual(logged(dir).filter((e) => e.msg.method === 'tools/list'), []);
  } finally {
    await peer.close();
    fs.rmSync(dir, { recursive: true, force: true });
  }
});

test('the TS SDK Client over StdioClientTransport keeps working across a server-everything crash', async () => {
  const transport = new mcpping.StdioClientTransport(
    { command: process.execPath, args: [h.EVERYTHING, 'stdio'], stderr: 'ignore' },
    { reconnect: FAST });
  const client = new Client({ name: 'reconnect-test', version: '1.0.0' });
  await client.connect(transport);
  try {
    const before = await client.listTools();
    assert.ok(before.tools.some((t) => t.name === 'echo'));
    const first = await client.callTool({ name: 'echo', arguments: { message: 'before' } });
    assert.match(first.content[0].text, /before/);
    const old = transport.pid;
    const reconnected = h.nextEvent(transport, 'reconnected', 15000);
    process.kill(old, 'SIGKILL');
    const ed = await reconnected;
    assert.notEqual(ed.pid, old);
    assert.equal(transport.pid, ed.pid);
    // The same Client, no code change: the new server answers.
    const after = await client.listTools();
    assert.deepEqual(after.tools.map((t) => t.name), before.tools.map((t) => t.name));
    const second = await client.callTool({ name: 'echo', arguments: { message: 'after' } });
    assert.match(second.content[0].text, /after/);
  } finally {
    await client.close();
  }
});

test('max attempts spent closes with a reason that says so', async () => {
  const dir = tmpdir();
  const peer = await mcpping.connect(
    h.peer('recorder.py', ['--log', path.join(dir, 'log.jsonl'), '--once', path.join(dir, 'once')]),
    { reconnect: { initialMs: 10, maxDelayMs: 20, maxAttempts: 2 } });
  const attempts = [];
  peer.on('reconnecting', (ev) => attempts.push(ev.attempt));
  const closed = h.nextEvent(peer, 'closed', 15000);
  process.kill(peer.pid, 'SIGKILL');
  const info = await closed;
  assert.match(info.reason, /^gave up reconnecting after 2 attempts: server exited with status 4/);
  assert.deepEqual(attempts, [1, 2]);
  assert.equal(peer.pid, null);
  fs.rmSync(dir, { recursive: true, force: true });
});

test('reconnect options and the budget are checked at the boundary', () => {
  const params = h.peer('echo.py');
  const bad = [
    [{ initialMs: 0 }, RangeError, /reconnect.initialMs/],
    [{ initialMs: 100, maxDelayMs: 50 }, RangeError, /reconnect.maxDelayMs/],
    [{ multiplier: 0.5 }, RangeError, /reconnect.multiplier/],
    [{ multiplier: '2' }, TypeError, /reconnect.multiplier/],
    [{ jitter: 1.5 }, RangeError, /reconnect.jitter/],
    [{ jitter: NaN }, RangeError, /reconnect.jitter/],
    [{ maxAttempts: 0 }, RangeError, /reconnect.maxAttempts/],
    [{ maxAttempts: 1.5 }, RangeError, /reconnect.maxAttempts/],
    [{ retries: 3 }, TypeError, /reconnect.retries is not an option/],
  ];
  for (const [reconnect, Kind, message] of bad) {
    assert.throws(() => new mcpping.Peer(params, { reconnect }), (err) => err instanceof Kind && message.test(err.message) && err.code === 'ERR_MCPPING_INVALID_ARG');
    assert.throws(() => new mcpping.StdioClientTransport(params, { reconnect }), Kind);
  }
  // C's rows (retry_budget.*) and sentences, as Python says them.
  assert.throws(() => mcpping.setRetryBudget({ burst: 0 }), { name: 'RangeError', message: 'budget.burst must be an integer between 1 and 1000000, not 0' });
  assert.throws(() => mcpping.setRetryBudget({ perSecond: 0 }), { name: 'RangeError', message: 'budget.perSecond must be a number between 0.001 and 1000000, not 0' });
  // A misspelt field is refused, as connect()'s are (it was ignored, the budget left as it was).
  assert.throws(() => mcpping.setRetryBudget({ brust: 1 }),
    { name: 'TypeError', message: 'budget.brust is not an option; the options are burst, perSecond' });
  mcpping.setRetryBudget({ burst: 10, perSecond: 2 });
});

test('a stopped server goes stale and is replaced; records carry reconnect_attempt', async () => {
  const dir = tmpdir();
  const records = [];
  const peer = await mcpping.connect(h.peer('recorder.py', ['--log', path.join(dir, 'log.jsonl')]), {
    reconnect: FAST,
    keepalive: { intervalMs: 100, timeoutMs: 300, failures: 2, minIntervalMs: 10, jitterPct: 0 },
    records: (r) => records.push(r),
  });
  try {
    await h.nextEvent(peer, 'pong', 10000);
    assert.ok(records.length > 0 && records.every((r) => r.reconnect_attempt === null));
    const old = peer.pid;
    const stale = h.nextEvent(peer, 'stale', 10000);
    const reconnecting = h.nextEvent(peer, 'reconnecting', 10000);
    const reconnected = h.nextEvent(peer, 'reconnected', 10000);
    process.kill(old, 'SIGSTOP');
    assert.equal((await stale).proof, 'process');
    assert.match((await reconnecting).message, /^the server went stale/);
    const ed = await reconnected;
    assert.notEqual(ed.pid, old);
    const before = records.length;
    await h.nextEvent(peer, 'pong', 10000);
    // Every record is delivered by the close (a record may follow its event).
    await peer.close();
    const rec = records.find((r) => r.event === 'reconnect');
    assert.equal(rec.reconnect_attempt, 1);
    const later = records.slice(before);
    assert.ok(later.some((r) => r.event === 'ping_ok'));
    assert.ok(later.every((r) => r.reconnect_attempt === 1));
  } finally {
    await peer.close();
    fs.rmSync(dir, { recursive: true, force: true });
  }
});
