'use strict';
// mcpping in a Node host that also uses child_process: the host's children
// and mcpping's server each report their own exit, close returns, and the
// process exits by itself with no server left (issue 8, item 1's Node side).
const test = require('node:test');
const assert = require('node:assert/strict');
const path = require('node:path');
const h = require('./helpers');

test('a host using child_process: every exit is seen, the host exits on its own', async () => {
  const res = await h.run(process.execPath, [path.join(h.FIXTURES, 'child_process_host.js')],
    { timeoutMs: 20000 });
  assert.equal(res.status, 0, res.stderr);
  const [r] = h.jsonLines(res.stdout);
  assert.equal(r.out, 'hi');
  assert.ok(r.rtt > 0);
  assert.deepEqual(r.sleeperExit, { code: 0, signal: null });
  assert.deepEqual(r.late, { code: 4, signal: null });
  // close() ends stdin and sends SIGTERM in the same turn: the server dies of
  // the signal, or (a busy machine preempting our thread between the two)
  // exits by itself on the EOF first. Either is its own exit, seen.
  assert.ok(r.termSignal === 15 || (r.termSignal === 0 && r.exitStatus === 0), JSON.stringify(r));
  assert.equal(h.exists(r.serverPid), false);
});
