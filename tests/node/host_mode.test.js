'use strict';
// Host mode (issue 21): the environment's own libuv loop runs the
// runtime's loop, and the runtime's thread only watches; it takes the loop
// over while the JavaScript thread is busy, so the server's pings are still
// answered. MCPPING_HOST_MODE=0 keeps thread mode.
const test = require('node:test');
const assert = require('node:assert/strict');
const path = require('node:path');
const { Worker } = require('node:worker_threads');
const { once } = require('node:events');
const mcpping = require('../../node');
const h = require('./helpers');
const { pingedWhileBusy, PINGER } = require('./fixtures/busy_host');

const MODULE = path.join(h.ROOT, 'node');
const BUSY = path.join(__dirname, 'fixtures', 'busy_host.js');
// The in-process tests need host mode; a run forced to thread mode skips them.
const FORCED_THREAD = process.env.MCPPING_HOST_MODE === '0' && 'MCPPING_HOST_MODE=0: thread mode forced';

/** runtimeMode() in a fresh process with env's MCPPING_HOST_MODE (undefined: unset). */
async function modeIn(value) {
  const env = { ...process.env };
  delete env.MCPPING_HOST_MODE;
  if (value !== undefined) env.MCPPING_HOST_MODE = value;
  const res = await h.run(process.execPath, ['-e', `console.log(JSON.stringify(require(${JSON.stringify(MODULE)}).runtimeMode()))`], { env, timeoutMs: 20000 });
  assert.equal(res.status, 0, res.stderr);
  return JSON.parse(res.stdout);
}

test('the default mode is host; MCPPING_HOST_MODE=0 gives thread mode and says why', async () => {
  const host = await modeIn(undefined);
  assert.equal(host.mode, 'host', host.why);
  assert.match(host.why, /host's event loop/);
  const thread = await modeIn('0');
  assert.equal(thread.mode, 'thread');
  assert.match(thread.why, /MCPPING_HOST_MODE=0/);
});

test('in host mode a ping runs inline on this thread and its pong comes in a host turn', { skip: FORCED_THREAD }, async () => {
  const peer = await mcpping.connect({ command: process.execPath, args: [PINGER] });
  try {
    const before = mcpping.hostStats();
    for (let i = 0; i < 20; i++) assert.ok((await peer.ping()) >= 0);
    const after = mcpping.hostStats();
    assert.equal(mcpping.runtimeMode().mode, 'host');
    assert.ok(after.inlineCommands - before.inlineCommands >= 20, JSON.stringify({ before, after }));
    assert.ok(after.hostTurns - before.hostTurns >= 40, JSON.stringify({ before, after }));
    // Each pong is read by this thread from the connection's own fd.
    assert.ok(after.hostReads - before.hostReads >= 20, JSON.stringify({ before, after }));
  } finally {
    await peer.close();
  }
});

test('while the JavaScript thread is blocked, the watchdog answers the server\'s pings (CommonJS main thread)', { skip: FORCED_THREAD }, async () => {
  const r = await pingedWhileBusy(mcpping);
  assert.equal(r.mode, 'host');
  assert.equal(r.pongs, 5, `pongs while blocked: ${JSON.stringify(r)}`);
  assert.ok(r.takeovers > 0, `the watchdog never took over: ${JSON.stringify(r)}`);
});

test('while a worker_thread\'s JavaScript is blocked, its watchdog answers the server\'s pings', { skip: FORCED_THREAD }, async () => {
  const code = `
    const { parentPort, workerData } = require('node:worker_threads');
    const mcpping = require(workerData.module);
    require(workerData.busy).pingedWhileBusy(mcpping).then((r) => parentPort.postMessage(r));
  `;
  const worker = new Worker(code, { eval: true, workerData: { module: MODULE, busy: BUSY } });
  // Listening for the exit from the start: a worker that ends at once after
  // its message has both emitted in the same turn, before an await would
  // add the listener.
  const exited = once(worker, 'exit');
  const [r] = await h.within(once(worker, 'message'), 30000, 'the worker\'s result');
  const [code_] = await h.within(exited, 10000, 'the worker\'s exit');
  assert.equal(code_, 0);
  assert.equal(r.mode, 'host');
  assert.equal(r.pongs, 5, `pongs while blocked: ${JSON.stringify(r)}`);
  assert.ok(r.takeovers > 0, `the watchdog never took over: ${JSON.stringify(r)}`);
});

test('a worker_thread with an open connection exits cleanly: ending by itself, and terminated mid-ping', async () => {
  // In a child process: a handle left open on a worker's loop aborts the
  // whole process at the worker's teardown.
  const script = `
    const { Worker } = require('node:worker_threads');
    const { once } = require('node:events');
    const code = \`
      const { parentPort, workerData } = require('node:worker_threads');
      const mcpping = require(workerData.module);
      (async () => {
        const peer = await mcpping.connect({ command: process.execPath, args: [workerData.pinger] });
        await peer.ping();
        // Pending for good (the server answers no more pings), so the
        // worker is terminated mid-ping, not after a quick pong let it end.
        if (workerData.pending) {
          await peer.request('test/mute');
          peer.ping({ timeoutMs: 60000 }).catch(() => {});
        }
        parentPort.postMessage({ mode: mcpping.runtimeMode().mode, pid: peer.pid });
        // left open: the worker's teardown closes it, the handles and the runtime
      })();
    \`;
    async function run(pending) {
      const w = new Worker(code, { eval: true, workerData: { module: ${JSON.stringify(MODULE)}, pinger: ${JSON.stringify(PINGER)}, pending } });
      const exited = once(w, 'exit'); // the exit can come in the message's turn
      const [msg] = await once(w, 'message');
      if (pending) w.terminate();
      const [exitCode] = await exited;
      return { ...msg, exitCode };
    }
    (async () => {
      const ended = await run(false);
      const terminated = await run(true);
      console.log(JSON.stringify({ ended, terminated }));
    })();
  `;
  const env = { ...process.env };
  delete env.MCPPING_HOST_MODE;
  const res = await h.run(process.execPath, ['-e', script], { env, timeoutMs: 60000 });
  assert.equal(res.status, 0, `status ${res.status} signal ${res.signal}: ${res.stderr}`);
  assert.doesNotMatch(res.stderr, /open handles|Assertion|abort/i);
  const out = JSON.parse(res.stdout);
  assert.equal(out.ended.mode, 'host');
  assert.equal(out.ended.exitCode, 0);
  assert.equal(out.terminated.exitCode, 1);
  for (const pid of [out.ended.pid, out.terminated.pid]) assert.equal(h.exists(pid), false, `server ${pid} left behind`);
});

test('a worker that calls process.exit() in a listener mid-batch exits with its code: no fatal error, its server reaped', async () => {
  // The pong listener ends the worker while its batch is being delivered:
  // JavaScript can no longer run, and the rest of the batch is dropped
  // (building an error for it used to be a fatal error: abort).
  const script = `
    const { Worker } = require('node:worker_threads');
    const code = \`
      const { parentPort, workerData } = require('node:worker_threads');
      const mcpping = require(workerData.module);
      (async () => {
        const peer = await mcpping.connect({ command: process.execPath, args: [workerData.pinger] });
        parentPort.postMessage({ pid: peer.pid });
        peer.on('pong', () => process.exit(4));
        await peer.ping();
      })();
    \`;
    const w = new Worker(code, { eval: true, workerData: { module: ${JSON.stringify(MODULE)}, pinger: ${JSON.stringify(PINGER)} } });
    let pid = null;
    w.on('message', (m) => (pid = m.pid));
    w.on('exit', (exitCode) => console.log(JSON.stringify({ pid, exitCode })));
  `;
  const res = await h.run(process.execPath, ['-e', script], { timeoutMs: 30000 });
  assert.equal(res.status, 0, `status ${res.status} signal ${res.signal}: ${res.stderr}`);
  assert.doesNotMatch(res.stderr, /FATAL ERROR|Assertion|abort/i);
  const out = JSON.parse(res.stdout);
  assert.equal(out.exitCode, 4);
  assert.equal(h.exists(out.pid), false, `server ${out.pid} left behind`);
});
