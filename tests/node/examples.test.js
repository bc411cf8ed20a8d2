'use strict';
// The Node examples in examples/ run as a user would run them, and do what
// they say; the servers they start are gone when they exit.
const test = require('node:test');
const assert = require('node:assert/strict');
const path = require('node:path');
const h = require('./helpers');

const EXAMPLES = path.join(h.ROOT, 'examples');

/** Runs an example with node, bounded; returns {status, stdout, stderr, lines}. */
async function example(name, args = []) {
  const r = await h.run(process.execPath, [path.join(EXAMPLES, name), ...args], { timeoutMs: 60000 });
  return { ...r, lines: r.stdout.split('\n').filter(Boolean) };
}

/** The server pid an example printed as "pid N". */
function serverPid(stdout) {
  const m = /\bpid (\d+)\b/.exec(stdout);
  assert.ok(m, `no pid in: ${stdout}`);
  return Number(m[1]);
}

test('node_sdk_client: the SDK Client lists and calls tools over mcpping, keepalive pongs', async () => {
  const r = await example('node_sdk_client.js');
  assert.equal(r.status, 0, r.stderr);
  assert.match(r.lines[0], /^connected to mcpping-demo \(pid \d+\)$/);
  assert.ok(r.lines.includes('tools: echo, add'));
  assert.ok(r.lines.includes('add(2, 3) = 5'));
  assert.ok(r.lines.some((l) => /^manual ping rtt=\d+\.\d{3} ms$/.test(l)));
  const keepalive = r.lines.filter((l) => /^pong \(keepalive\) seq=\d+ rtt=\d+\.\d{3} ms$/.test(l));
  assert.ok(keepalive.length >= 2, r.stdout);
  assert.equal(r.lines.at(-1), 'done: closed');
  assert.deepEqual(await h.groupGone(serverPid(r.stdout)), []);
});

test('node_peer: pings the demo COUNT times and reaps it', async () => {
  const r = await example('node_peer.js', ['4']);
  assert.equal(r.status, 0, r.stderr);
  assert.match(r.lines[0], /^PING mcpping-demo \(pid \d+, protocol 2025-11-25\)$/);
  const pongs = r.lines.filter((l) => /^pong from mcpping-demo: seq=\d time=\d+\.\d{3} ms$/.test(l));
  assert.deepEqual(pongs.map((l) => l.split(' ')[3]), ['seq=1', 'seq=2', 'seq=3', 'seq=4']);
  assert.ok(r.lines.includes('closed: closed by the application'));
  assert.equal(r.lines.at(-1), '4 pings sent, 4 pongs received');
  assert.deepEqual(await h.groupGone(serverPid(r.stdout)), []);
});

test('node_peer: a server that drops pings gives timeouts and exit status 1', async () => {
  const p = h.peer('drop_pings.py');
  const r = await example('node_peer.js', ['1', '--', p.command, ...p.args]);
  assert.equal(r.status, 1, r.stderr);
  assert.ok(r.lines.includes('timeout: seq=1 after 2000 ms'), r.stdout);
  assert.equal(r.lines.at(-1), '1 pings sent, 0 pongs received');
  assert.deepEqual(await h.groupGone(serverPid(r.stdout)), []);
});

test('node_peer: a server that cannot start is reported, exit status 1', async () => {
  const r = await example('node_peer.js', ['1', '--', '/nonexistent/server']);
  assert.equal(r.status, 1);
  assert.match(r.stderr, /^node_peer: .*nonexistent/m);
});
