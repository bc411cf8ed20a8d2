'use strict';
// The process exits on its own when nothing is awaited: an idle mcpping
// never keeps it alive, and the exit cleanup reaps every server. Each
// scenario runs in its own child process with a bound.
const test = require('node:test');
const assert = require('node:assert/strict');
const fs = require('node:fs');
const path = require('node:path');
const { Worker } = require('node:worker_threads');
const mcpping = require('../../node');
const runtime = require('../../node/runtime');
const h = require('./helpers');

const SCENARIOS = path.join(h.FIXTURES, 'exit_scenarios.js');

/** Runs a scenario; it must exit by itself within 10 s. */
async function scenario(name) {
  const res = await h.run(process.execPath, [SCENARIOS, name], { timeoutMs: 10000 });
  assert.equal(res.status, 0, res.stderr);
  const lines = h.jsonLines(res.stdout);
  return lines[0] || {};
}

/** @returns {string|null} /proc/PID/stat, null once the process is gone */
function procStat(pid) {
  try {
    return fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
  } catch {
    return null;
  }
}

/**
 * Waits up to `ms` for a process that is not our child to be gone or a
 * zombie. The SIGKILL sent to its group takes effect once the kernel runs
 * it, and a foreign process's death has no event to await, so this polls.
 */
async function gone(pid, ms) {
  const deadline = Date.now() + ms;
  for (;;) {
    const stat = procStat(pid);
    if (stat === null || /\) Z /.test(stat)) return null;
    if (Date.now() > deadline) return stat;
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

for (const name of ['closed', 'idleOpen', 'keepaliveUnref', 'processExit']) {
  test(`the process exits on its own and leaves no server behind: ${name}`, async () => {
    const { grandchild } = await scenario(name);
    assert.ok(Number.isInteger(grandchild) && grandchild > 0);
    // The server's group was killed at close or at exit: its grandchild is
    // gone (at most a zombie awaiting its new parent).
    const stat = await gone(grandchild, 2000);
    assert.equal(stat, null, `grandchild ${grandchild} still runs: ${stat}`);
  });
}

test('the process exits on its own after a StdioClientTransport is closed', async () => {
  await scenario('transportClosed');
});

test('a request on a closed or closing peer, or a handshake with a dying server, rejects at once and leaves no timer', async () => {
  const { codes, timers } = await scenario('requestClosed');
  assert.deepEqual(codes, ['MCPP_ERR_CLOSED', 'MCPP_ERR_CLOSED', 'MCPP_ERR_CLOSED', 'HANDSHAKE']);
  assert.equal(timers, 0);
});

test('holds: an awaited ping or a keepalive peer keeps the process alive; an idle peer does not', async () => {
  const base = runtime.holdCount();
  const idle = await mcpping.connect(h.peer('echo.py'));
  assert.equal(runtime.holdCount(), base);
  const ping = idle.ping();
  assert.equal(runtime.holdCount(), base + 1);
  await ping;
  assert.equal(runtime.holdCount(), base);
  const watched = await mcpping.connect(h.peer('echo.py'), { keepalive: { intervalMs: 1000 } });
  assert.equal(runtime.holdCount(), base + 1);
  watched.unref();
  assert.equal(runtime.holdCount(), base);
  watched.ref();
  assert.equal(runtime.holdCount(), base + 1);
  await Promise.all([idle.close(), watched.close()]);
  assert.equal(runtime.holdCount(), base);
});

test('worker threads each get their own runtime; terminating one reaps its servers', async () => {
  const code = `
    const { parentPort } = require('node:worker_threads');
    const mcpping = require(${JSON.stringify(path.join(h.ROOT, 'node'))});
    (async () => {
      const peer = await mcpping.connect(${JSON.stringify(h.peer('echo.py'))});
      const rtt = await peer.ping();
      const { pid } = await peer.request('test/spawn_child', {});
      parentPort.postMessage({ rtt, grandchild: pid });
    })();
  `;
  const workers = [new Worker(code, { eval: true }), new Worker(code, { eval: true })];
  const msgs = await Promise.all(workers.map((w) => h.nextEvent(w, 'message', 10000)));
  // The main thread's runtime still works beside them.
  const peer = await mcpping.connect(h.peer('echo.py'));
  assert.ok((await peer.ping()) > 0);
  await peer.close();
  for (const m of msgs) assert.ok(m.rtt > 0);
  await Promise.all(workers.map((w) => w.terminate()));
  for (const m of msgs) {
    const stat = await gone(m.grandchild, 2000);
    assert.equal(stat, null, `grandchild ${m.grandchild} still runs: ${stat}`);
  }
});
