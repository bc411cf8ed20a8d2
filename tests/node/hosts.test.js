'use strict';
// The host matrix: mcpping loaded and used as real hosts do, each in its own
// process that must do the work and then exit by itself (status 0, within
// the bound): CommonJS, ES module named imports, worker_threads, and a host
// running its own child processes.
const test = require('node:test');
const assert = require('node:assert/strict');
const fs = require('node:fs');
const path = require('node:path');
const h = require('./helpers');

const HOSTS = path.join(h.FIXTURES, 'hosts');

/** Runs a host fixture; resolves its JSON report. */
async function host(file) {
  const res = await h.run(process.execPath, [path.join(HOSTS, file)], { timeoutMs: 30000 });
  assert.equal(res.status, 0, res.stderr);
  const lines = h.jsonLines(res.stdout);
  assert.equal(lines.length, 1, res.stdout);
  return lines[0];
}

/** The report of fixtures/hosts/common.js workOnce(). */
function assertWorked(out) {
  assert.ok(out.rtt > 0 && out.rtt < 5000, `rtt ${out.rtt}`);
  assert.equal(out.pongs, 1);
  assert.deepEqual(out.echoed, { host: true });
  assert.equal(out.error, null);
  assert.equal(out.closedError, 'MCPP_ERR_CLOSED');
}

/**
 * Waits for a process that is not our child to be gone (or a zombie of
 * its new parent). Its death has no event we can await, so this polls.
 */
async function gone(pid, ms) {
  const deadline = Date.now() + ms;
  for (;;) {
    let stat = null;
    try {
      stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
    } catch {
      return true;
    }
    if (/\) Z /.test(stat)) return true;
    if (Date.now() > deadline) return false;
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

test('CommonJS host: require("mcpping") connects, pings, requests, closes and exits', async () => {
  const out = await host('cjs_host.js');
  assert.equal(out.host, 'cjs');
  assertWorked(out);
});

test('ES module host: named imports from "mcpping" connect, ping, request, close and exit', async () => {
  const out = await host('esm_host.mjs');
  assert.equal(out.host, 'esm');
  assert.equal(out.version, require('../../node').version);
  assertWorked(out);
});

test('worker_threads host: workers work on their own runtimes and exit by themselves; a worker\'s open peer is reaped at its exit', async () => {
  const out = await host('worker_host.js');
  for (const w of out.workers) {
    assert.equal(w.code, 0);
    assertWorked(w.msg);
  }
  assertWorked(out.main);
  assert.equal(out.open.code, 0);
  assert.ok(out.open.msg.serverPid > 0 && out.open.msg.grandchild > 0);
  assert.ok(await gone(out.open.msg.serverPid, 2000), `server ${out.open.msg.serverPid} outlived its worker`);
  assert.ok(await gone(out.open.msg.grandchild, 2000), `grandchild ${out.open.msg.grandchild} outlived its worker`);
});

test('child_process host: its own children keep their exit statuses, nothing is left a zombie, and it exits', async () => {
  const out = await host('child_process_host.js');
  assert.equal(out.host, 'child_process');
  for (const round of out.codes) assert.deepEqual(round, [1, 2, 3, 7, 42]);
  for (const s of out.sleepers) assert.deepEqual(s, { code: 0, signal: null });
  assert.equal(out.pingsOk, 15);
  assert.deepEqual(out.closed, [null, null, null]);
  assert.deepEqual(out.zombies, []);
});
