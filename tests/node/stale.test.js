'use strict';
// Stale detection and reaping: a frozen server goes suspect then stale on
// time, and its whole process group is killed and reaped; a dying server is
// reported closed with its exit status; a half-open one goes stale.
const test = require('node:test');
const assert = require('node:assert/strict');
const path = require('node:path');
const mcpping = require('../../node');
const h = require('./helpers');

const KEEPALIVE = { intervalMs: 100, timeoutMs: 200, failures: 2, minIntervalMs: 10, jitterPct: 0 };

/**
 * A peer started through sh so that a grandchild (sleep) shares its
 * process group; sh reports "PGID GRANDCHILD" on stderr, then execs.
 */
function frozenInGroup() {
  const freeze = path.join(h.PEERS, 'freeze.py');
  return {
    command: 'sh',
    args: ['-c', `sleep 1000 </dev/null >/dev/null 2>&1 & echo "$$ $!" >&2; exec python3 ${freeze}`],
    stderr: 'pipe',
  };
}

test('a frozen server goes suspect, then stale on time, and its process group is reaped', async () => {
  const peer = new mcpping.Peer(frozenInGroup(), { keepalive: KEEPALIVE });
  const firstStderr = h.nextEvent(peer, 'stderr', 5000);
  const [pgid, grandchild] = String(await firstStderr).trim().split(/\s+/).map(Number);
  await peer.initialize({ timeoutMs: 5000 });
  assert.ok(h.groupMembers(pgid).includes(grandchild), 'the grandchild runs in the server group');

  const states = [];
  for (const name of ['suspect', 'stale', 'recovered']) peer.on(name, () => states.push(name));
  const stale = h.nextEvent(peer, 'stale', 5000);
  const closed = h.nextEvent(peer, 'closed', 8000);
  const frozeAt = performance.now();
  peer.request('test/freeze', {}).catch(() => {});

  const ev = await stale;
  const elapsed = performance.now() - frozeAt;
  // Two failed keepalive pings: each at least interval + timeout after the
  // last sign of life; never more than a generous bound.
  assert.ok(elapsed >= 2 * KEEPALIVE.timeoutMs, `stale after ${elapsed} ms`);
  assert.ok(elapsed < 2500, `stale after ${elapsed} ms`);
  assert.equal(ev.failureCount, 2);
  assert.deepEqual(states, ['suspect', 'stale']);

  const info = await closed;
  assert.equal(peer.state, 'closed');
  assert.equal(info.error, 'MCPP_ERR_STALE');
  assert.ok(info.termSignal === 15 || info.termSignal === 9, `signal ${info.termSignal}`);
  assert.deepEqual(await h.groupGone(pgid), [], 'nothing of the server group keeps running');
});

test('with onStale "report" a frozen server is reported stale but kept open', async () => {
  const peer = await mcpping.connect(h.peer('freeze.py'), { keepalive: { ...KEEPALIVE, onStale: 'report' } });
  try {
    const stale = h.nextEvent(peer, 'stale', 5000);
    await peer.request('test/freeze', {});
    await stale;
    assert.equal(peer.state, 'stale');
    assert.notEqual(peer.stats.state, 'closed');
  } finally {
    await peer.close();
  }
});

test('a server that exits is reported closed with its exit status', async () => {
  const peer = await mcpping.connect(h.peer('dies.py', ['--after', '3', '--code', '7']));
  const closed = h.nextEvent(peer, 'closed', 5000);
  await peer.ping();
  const info = await closed;
  assert.equal(info.exitStatus, 7);
  assert.equal(peer.state, 'closed');
  await assert.rejects(peer.ping(), mcpping.ClosedError);
});

test('a half-open server (stdout closed, still running) is closed and killed, not left behind', async () => {
  // It answers the handshake and one ping, then closes stdout and idles.
  const peer = await mcpping.connect(h.peer('half_open.py', ['--after', '3']));
  const closed = h.nextEvent(peer, 'closed', 8000);
  await peer.ping();
  const info = await closed;
  // It never exits by itself, so only our signal can have ended it.
  assert.ok(info.termSignal === 15 || info.termSignal === 9, JSON.stringify(info));
  assert.equal(peer.state, 'closed');
});

test('pending requests are failed, never replayed, when the server goes stale', async () => {
  const peer = await mcpping.connect(h.peer('freeze.py'), { keepalive: KEEPALIVE });
  const closed = h.nextEvent(peer, 'closed', 8000);
  await peer.request('test/freeze', {});
  const pending = peer.request('tools/call', { name: 'echo', arguments: {} }, { timeoutMs: 0 });
  await assert.rejects(pending, mcpping.ClosedError);
  const info = await closed;
  assert.equal(info.inFlight, 1);
  assert.equal(info.disposition, 'in_doubt');
});

test('requestTimeoutMs: an unanswered request fails on time and health is not laundered by pongs', async () => {
  // Answers the handshake, then freezes: nothing more is answered.
  // The timeout covers the handshake too, so it leaves a loaded machine
  // time to start the Python peer.
  const peer = await mcpping.connect(h.peer('freeze.py', ['--after', '2']), { keepalive: { requestTimeoutMs: 1500 } });
  try {
    const timedOut = h.nextEvent(peer, 'request_timeout', 6000);
    const t0 = performance.now();
    await assert.rejects(peer.request('tools/call', { name: 'x', arguments: {} }, { timeoutMs: 0 }), (err) => {
      assert.equal(err.code, -32001);
      return true;
    });
    const elapsed = performance.now() - t0;
    assert.ok(elapsed >= 1490 && elapsed < 4000, `failed after ${elapsed} ms`);
    assert.equal((await timedOut).id, '"mcpping-2"');
    assert.equal(peer.stats.appTimeouts, 1);
    assert.equal(peer.stats.healthy, false);
  } finally {
    await peer.close();
  }
});
