'use strict';
// The CLI's Streamable HTTP session (node/http_session.js) against a fault
// server on loopback (tests/peers/http_fault.py): issue 8 item 11, a 404 is
// not always "unsupported".
const test = require('node:test');
const assert = require('node:assert/strict');
const { spawn } = require('node:child_process');
const path = require('node:path');
const readline = require('node:readline');
const { HttpSession } = require('../../node/http_session');
const { binding } = require('../../node/runtime');
const errors = require('../../node/errors');
const h = require('./helpers');

const INIT = { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'mcpping-test', version: '1' } };

/** Starts http_fault.py in `mode`; resolves with {url, stop}. */
async function faultServer(mode) {
  const child = spawn('python3', [path.join(h.ROOT, 'tests', 'peers', 'http_fault.py'), '--mode', mode], { stdio: ['ignore', 'pipe', 'inherit'] });
  const rl = readline.createInterface({ input: child.stdout });
  const [url] = await Promise.race([
    new Promise((resolve) => rl.once('line', (line) => resolve([line.trim()]))),
    new Promise((_, reject) => child.once('exit', (code) => reject(new Error(`http_fault.py exited ${code}`)))),
  ]);
  const exited = new Promise((resolve) => child.once('exit', resolve));
  return { url, stop: () => { rl.close(); child.kill(); return exited; } };
}

test('an expired session is initialized again and the ping answered', async () => {
  const server = await faultServer('expire');
  const records = [];
  const s = new HttpSession(server.url, { records: (r) => records.push(r) });
  try {
    await s.initialize(INIT, 5000);
    assert.equal(s.sessionId, 'session-1');
    const rtt = await s.ping({ timeoutMs: 5000 }); // meets the 404, re-initializes
    assert.ok(rtt > 0);
    assert.equal(s.sessionId, 'session-2');
    assert.ok((await s.ping({ timeoutMs: 5000 })) > 0);
    assert.equal(s.driver.stats.lossPct, 0);
  } finally {
    await s.close();
    await server.stop();
  }
  const events = records.map((r) => r.event);
  assert.ok(events.includes('reconnect'), events.join(','));
  assert.ok(!events.includes('ping_unsupported'), events.join(','));
  assert.equal(events.filter((e) => e === 'ping_ok').length, 2);
});

test('a 404 with -32601 is unsupported, and the session is kept', async () => {
  const server = await faultServer('unsupported');
  const s = new HttpSession(server.url);
  try {
    await s.initialize(INIT, 5000);
    await assert.rejects(s.ping({ timeoutMs: 5000 }), errors.PingUnsupportedError);
    assert.equal(s.sessionId, 'session-1');
  } finally {
    await s.close();
    await server.stop();
  }
});

test('the classification is the C core\'s', () => {
  assert.equal(binding.httpClassify(200, '', true), 'answer');
  assert.equal(binding.httpClassify(404, '{"error":{"code":-32601,"message":"x"}}', true), 'unsupported');
  assert.equal(binding.httpClassify(404, 'Not Found', true), 'session_expired');
  assert.equal(binding.httpClassify(404, 'Not Found', false), 'failed');
  assert.equal(binding.httpClassify(503, '', true), 'failed');
});
