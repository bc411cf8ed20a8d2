'use strict';
// The library in Python and in Node, failing the same way against the same
// servers, says the same sentence: each comes from C (mcpping/rules.h, the
// engine's answers, the handshake), so this guards that no host words a
// failure of its own; and the two demo servers, whose answers are C's,
// answer the same bytes. The Python package is installed by `make
// test-python`, which runs before this suite.
const test = require('node:test');
const assert = require('node:assert/strict');
const { spawn } = require('node:child_process');
const net = require('node:net');
const path = require('node:path');
const { format } = require('node:util');
const mcpping = require('../../node');
const { HttpSession } = require('../../node/http_session');
const { binding } = require('../../node/runtime');
const h = require('./helpers');

/** Each failure: the server, what the application does, and its bound. */
const CASES = [
  { name: 'ping-timeout', peer: ['freeze.py', '--after', '2'], action: 'ping', timeoutMs: 200 },
  { name: 'ping-refused', peer: ['unsupported.py', '--code', '-32000', '--message', 'busy'], action: 'ping' },
  { name: 'ping-unsupported', peer: ['unsupported.py'], action: 'ping' },
  { name: 'request-timeout', peer: ['freeze.py', '--after', '2'], action: 'request', timeoutMs: 200 },
  { name: 'request-server-exits', peer: ['dies.py', '--after', '3'], action: 'request' },
  { name: 'handshake-refused', peer: ['modern.py', '--versions', '2027-01-01'], action: 'connect' },
  { name: 'handshake-timeout', command: ['python3', '-c', 'import time; time.sleep(30)'], action: 'connect', timeoutMs: 300 },
  { name: 'spawn-fails', command: ['/nonexistent/mcpping-server'], action: 'connect' },
  { name: 'ping-after-close', peer: ['echo.py'], action: 'ping-after-close' },
  { name: 'request-after-close', peer: ['echo.py'], action: 'request-after-close' },
];

const PYTHON = `
import asyncio, json, os, sys
import mcpping

PEERS, CASES = sys.argv[1], json.loads(sys.argv[2])

def command(c):
    return c.get("command") or [sys.executable, os.path.join(PEERS, c["peer"][0]), *c["peer"][1:]]

async def one(c):
    bound = c["timeoutMs"] / 1000 if c.get("timeoutMs") else None
    try:
        if c["action"] == "connect":
            p = await mcpping.connect(command(c), keepalive=None, init_timeout=bound or 30.0)
            await p.close()
            return "ok"
        p = await mcpping.connect(command(c), keepalive=None)
        try:
            if c["action"].endswith("after-close"):
                await p.close()
            if c["action"].startswith("ping"):
                await p.ping(bound)
            else:
                await p.request("echo", {}, **({"timeout": bound} if bound else {}))
        finally:
            await p.close()
        return "ok"
    except Exception as e:
        return str(e)

async def main():
    print(json.dumps({c["name"]: await one(c) for c in CASES}))

asyncio.run(main())
`;

/** @param {object} c @returns {Promise<string>} the failure's sentence, or 'ok' */
async function node(c) {
  const params = c.command ? { command: c.command[0], args: c.command.slice(1) } : h.peer(c.peer[0], c.peer.slice(1));
  try {
    if (c.action === 'connect') {
      const p = await mcpping.connect(params, { keepalive: null, initializeTimeoutMs: c.timeoutMs || 30000 });
      await p.close();
      return 'ok';
    }
    const p = await mcpping.connect(params, { keepalive: null });
    try {
      if (c.action.endsWith('after-close')) await p.close();
      const bound = c.timeoutMs ? { timeoutMs: c.timeoutMs } : {};
      if (c.action.startsWith('ping')) await p.ping(bound);
      else await p.request('echo', {}, bound);
    } finally {
      await p.close();
    }
    return 'ok';
  } catch (err) {
    return err.message;
  }
}

test('each failure is said in the same words by the Python and the Node library', { timeout: 120000 }, async () => {
  const py = h.run('python3', ['-c', PYTHON, h.PEERS, JSON.stringify(CASES)], { timeoutMs: 90000 });
  const js = {};
  for (const c of CASES) js[c.name] = await node(c);
  const r = await py;
  assert.equal(r.status, 0, r.stderr);
  const python = JSON.parse(r.stdout);
  assert.deepEqual(js, python);
  // And they are C's: none is 'ok', and the ones C formats read as C has them.
  for (const [name, said] of Object.entries(js)) assert.notEqual(said, 'ok', name);
  assert.equal(js['ping-timeout'], format(binding.pingTimeoutFormat, 200));
  assert.equal(js['ping-refused'], format(binding.pingErrorFormat, -32000, 'busy'));
  assert.equal(js['ping-unsupported'], format(binding.pingErrorFormat, -32601, 'Method not found'));
  assert.equal(js['request-after-close'], binding.connectionClosedText);
});

/** Writes lines to a demo server's stdin; resolves with all it wrote. */
function serve(command, args, lines) {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { stdio: ['pipe', 'pipe', 'inherit'] });
    let out = '';
    child.stdout.on('data', (d) => (out += d));
    child.on('error', reject);
    child.on('close', (status) => (status === 0 ? resolve(out) : reject(new Error(`${command} exited ${status}`))));
    child.stdin.end(lines.join('\n') + '\n');
  });
}

test('the Python and the Node demo servers answer the same bytes', async () => {
  const lines = [
    '{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18"}}',
    '{"jsonrpc":"2.0","method":"notifications/initialized"}',
    '',
    '{"jsonrpc":"2.0","id":"a\\u00e9","method":"ping"}',
    '{"jsonrpc":"2.0","id":12345678901234567890,"method":"tools/list"}',
    '{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"echo","arguments":{"text":"h\u00e9 \\"q\\"\\n"}}}',
    '{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"add","arguments":{"a":0.1,"b":0.2}}}',
    '{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"add","arguments":{"a":"1","b":2}}}',
    '{"jsonrpc":"2.0","id":6,"method":"tools/call","params":{"name":"nope"}}',
    '{"jsonrpc":"2.0","id":7,"method":"resources/list"}',
    'not json',
  ];
  const [py, js] = await Promise.all([
    serve('python3', ['-m', 'mcpping.demo'], lines),
    serve(process.execPath, [path.join(__dirname, '..', '..', 'node', 'demo-server.js')], lines),
  ]);
  assert.equal(js, py);
  const answers = js.trimEnd().split('\n').map((l) => JSON.parse(l));
  // Nothing for the notification and the blank line; the rest in order.
  assert.deepEqual(answers.map((a) => a.id), [1, 'a\u00e9', 12345678901234567890, 3, 4, 5, 6, 7, null]);
  assert.match(js.split('\n')[2], /^\{"jsonrpc":"2\.0","id":12345678901234567890,/);
  assert.equal(answers[3].result.content[0].text, 'h\u00e9 "q"\n');
  assert.equal(answers[4].result.content[0].text, '0.30000000000000004');
  assert.equal(answers[5].result.isError, true);
  assert.equal(answers[7].error.code, -32601);
  assert.equal(answers[8].error.code, -32700);
});

const PYTHON_HTTP = `
import asyncio, json, sys
import mcpping

async def one(url, action):
    try:
        async with mcpping.http.connect(url, keepalive=None) as p:
            if action == "ping-after-close":
                await p.close()
            await p.ping(0.2 if action == "ping-timeout" else None)
        return "ok"
    except Exception as e:
        return str(e)

async def main():
    cases = json.loads(sys.argv[1])
    print(json.dumps({name: await one(url, action) for name, url, action in cases}))

asyncio.run(main())
`;

/** Starts a fault server of tests/peers that prints its URL first. */
function urlServer(file, args) {
  const { command, args: argv } = h.peer(file, args);
  const child = spawn(command, argv, { stdio: ['ignore', 'pipe', 'ignore'] });
  return new Promise((resolve, reject) => {
    let out = '';
    child.stdout.on('data', (d) => {
      out += d;
      if (out.includes('\n')) resolve({ url: out.split('\n')[0].trim(), child });
    });
    child.on('exit', () => reject(new Error(`${file} exited`)));
  });
}

test('over Streamable HTTP too, each failure is said in the same words by both clients', { timeout: 120000 }, async () => {
  const frozen = await urlServer('http_fault.py', ['--mode', 'freeze']);
  const port = await h.freePort();
  const modernPeer = h.peer('http_modern.py', [String(port)]);
  const modern = spawn(modernPeer.command, modernPeer.args, { stdio: 'ignore' });
  const modernUrl = `http://127.0.0.1:${port}/mcp`;
  try {
    for (;;) { // readiness polling of a foreign process, as http_modern.test.js does
      const up = await new Promise((resolve) => {
        const sock = net.connect(port, '127.0.0.1', () => { sock.destroy(); resolve(true); });
        sock.on('error', () => resolve(false));
      });
      if (up) break;
      if (modern.exitCode !== null) throw new Error('http_modern.py exited');
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    // Nothing listens on `closed`: the client cannot reach the server.
    const closed = `http://127.0.0.1:${await h.freePort()}/mcp`;
    const cases = [['ping-timeout', frozen.url, 'ping-timeout'], ['ping-unsupported', modernUrl, 'ping'],
      ['ping-after-close', modernUrl, 'ping-after-close'], ['unreachable', closed, 'ping']];
    const js = {};
    for (const [name, url, action] of cases) {
      const s = new HttpSession(url, {});
      try {
        await s.initialize({}, 10000);
        if (action === 'ping-after-close') await s.close();
        await s.ping(action === 'ping-timeout' ? { timeoutMs: 200 } : {});
        js[name] = 'ok';
      } catch (err) {
        js[name] = err.message;
      } finally {
        await s.close();
      }
    }
    const r = await h.run('python3', ['-c', PYTHON_HTTP, JSON.stringify(cases)], { timeoutMs: 90000 });
    assert.equal(r.status, 0, r.stderr);
    assert.deepEqual(js, JSON.parse(r.stdout));
    assert.equal(js['ping-timeout'], format(binding.pingTimeoutFormat, 200));
    assert.equal(js['ping-unsupported'], binding.pingUnsupportedMessage);
    assert.equal(js['ping-after-close'], binding.connectionClosedText);
    assert.equal(js.unreachable, `cannot reach ${closed}: ECONNREFUSED`);
  } finally {
    frozen.child.kill();
    modern.kill();
  }
});
