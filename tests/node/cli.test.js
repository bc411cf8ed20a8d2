'use strict';
// The Node `mcpping` command against the demo, the fault peers and a
// Streamable HTTP server: output lines, JSON keys and exit codes
// (docs/cli.md).
const test = require('node:test');
const assert = require('node:assert/strict');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const h = require('./helpers');

const cli = (args, opts) => h.run(process.execPath, [h.CLI, ...args], opts);
const peerArgs = (name, extra = []) => ['--', 'python3', path.join(h.PEERS, name), ...extra];

test('the default target is the bundled demo: 5 pings, ping(8) output, exit 0', async () => {
  const res = await cli(['-i', '0.05']);
  assert.equal(res.status, 0, res.stderr);
  const lines = res.stdout.trimEnd().split('\n');
  assert.match(lines[0], /^MCPPING mcpping-demo \(stdio, protocol 2025-11-25\): method ping, timeout 5\.0 s, interval 0\.1 s$/);
  for (let i = 1; i <= 5; i++) assert.match(lines[i], new RegExp(`^ping reply from mcpping-demo: seq=${i} time=\\d+\\.\\d{3} ms$`));
  assert.equal(lines[6], '');
  assert.equal(lines[7], '--- mcpping-demo mcpping statistics ---');
  assert.match(lines[8], /^5 sent, 5 received, 0% loss, time \d+ ms$/);
  assert.match(lines[9], /^rtt min\/avg\/max\/mdev = \d+\.\d{3}\/\d+\.\d{3}\/\d+\.\d{3}\/\d+\.\d{3} ms$/);
  assert.equal(lines.length, 10);
});

test('--json prints connected, reply events naming the method and DESIGN.md\'s summary object', async () => {
  const res = await cli(['--json', '-c', '3', '-i', '0', ...peerArgs('echo.py')]);
  assert.equal(res.status, 0, res.stderr);
  const events = h.jsonLines(res.stdout);
  assert.deepEqual(events[0], { event: 'connected', peer: 'echo', transport: 'stdio', protocol_version: '2025-11-25', session_id: null, method: 'ping' });
  assert.deepEqual(events.slice(1, 4).map((e) => [e.event, e.seq, e.method]), [['reply', 1, 'ping'], ['reply', 2, 'ping'], ['reply', 3, 'ping']]);
  const summary = events[4];
  assert.deepEqual(Object.keys(summary), ['event', 'sent', 'received', 'loss_pct', 'rtt_ms']);
  assert.deepEqual(Object.keys(summary.rtt_ms), ['min', 'avg', 'max', 'mdev', 'p50', 'p99']);
  assert.equal(summary.sent, 3);
  assert.equal(summary.received, 3);
  assert.equal(summary.loss_pct, 0);
  assert.match(res.stdout, /"loss_pct":0\.0,/);
  assert.ok(summary.rtt_ms.min <= summary.rtt_ms.p50 && summary.rtt_ms.p50 <= summary.rtt_ms.max);
});

test('-q prints only the header and the summary', async () => {
  const res = await cli(['-q', '-c', '2', '-i', '0', ...peerArgs('echo.py')]);
  assert.equal(res.status, 0);
  assert.doesNotMatch(res.stdout, /reply from/);
  assert.match(res.stdout, /^MCPPING echo /);
  assert.match(res.stdout, /2 sent, 2 received, 0% loss/);
});

test('unanswered pings: timeout lines, 100% loss, no rtt line, exit 1', async () => {
  const res = await cli(['-c', '2', '-i', '0', '-W', '0.2', ...peerArgs('drop_pings.py')]);
  assert.equal(res.status, 1);
  assert.match(res.stdout, /ping timeout from drop_pings: seq=1 no answer after 200 ms/);
  assert.match(res.stdout, /2 sent, 0 received, 100% loss/);
  assert.equal(res.stderr, 'mcpping: 2 of 2 replies missing\n');
  assert.doesNotMatch(res.stdout, /rtt min/);
});

test('error and invalid pongs are reported and exit 1', async () => {
  const err = await cli(['--json', '-c', '1', '--', process.execPath, path.join(h.FIXTURES, 'bad_pong_server.js'), '--mode', 'error']);
  assert.equal(err.status, 1);
  assert.deepEqual(h.jsonLines(err.stdout)[1], { event: 'error', seq: 1, method: 'ping', code: -32603, message: 'Internal error' });
  const inv = await cli(['-c', '1', '--', process.execPath, path.join(h.FIXTURES, 'bad_pong_server.js'), '--mode', 'invalid']);
  assert.equal(inv.status, 1);
  assert.match(inv.stdout, /ping invalid reply from bad-pong-invalid: seq=1 /);
});

test('a server refusing ping is alive by tools/list under auto (0); --method ping exits 4', async () => {
  const auto = await cli(['-c', '2', '-i', '0', ...peerArgs('unsupported.py')]);
  assert.equal(auto.status, 0, auto.stderr);
  const lines = auto.stdout.split('\n');
  assert.equal(lines[1], 'ping refused from unsupported: seq=1 code=-32601 Method not found');
  assert.match(lines[2], /^tools\/list reply from unsupported: seq=1 time=\d+\.\d{3} ms$/);
  const res = await cli(['--json', '--method', 'ping', '-c', '3', ...peerArgs('unsupported.py')]);
  assert.equal(res.status, 4);
  assert.equal(res.stderr, 'mcpping: ping unsupported: code=-32601 Method not found\n');
  assert.deepEqual(h.jsonLines(res.stdout).at(-1), { event: 'unsupported', seq: 1, method: 'ping', code: -32601, message: 'Method not found' });
});

test('a stdio 2026-07-28 server is alive by server/discover and never pinged (0)', async () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'mcpping-modern-'));
  const log = path.join(dir, 'r.jsonl');
  const res = await cli(['-c', '2', '-i', '0', '--log', log, ...peerArgs('modern.py')]);
  assert.equal(res.status, 0, res.stderr);
  assert.equal(res.stdout.split('\n')[0], 'MCPPING modern (stdio, protocol 2026-07-28): method server/discover, timeout 5.0 s, interval 0.0 s');
  assert.match(res.stdout, /^server\/discover reply from modern: seq=2 /m);
  const recs = fs.readFileSync(log, 'utf8').trim().split('\n').map((l) => JSON.parse(l));
  // The engine notes once that the version has no ping; no ping has an id.
  assert.deepEqual(recs.filter((r) => r.event.startsWith('ping')).map((r) => r.ping_id), [null]);
  fs.rmSync(dir, { recursive: true });
});

test('a frozen server exits 1 with one reason line', async () => {
  const res = await cli(['-c', '1', '-W', '0.3', ...peerArgs('freeze.py', ['--after', '2'])]);
  assert.equal(res.status, 1, res.stderr);
  assert.equal(res.stderr, 'mcpping: 1 of 1 replies missing\n');
});

test('--expect-tool: present exits 0, missing exits 4', async () => {
  const ok = await cli(['-c', '1', '--expect-tool', 'echo', '--expect-tool', 'add']);
  assert.equal(ok.status, 0, ok.stderr);
  const missing = await cli(['-c', '1', '--expect-tool', 'echo', '--expect-tool', 'nope']);
  assert.equal(missing.status, 4);
  assert.equal(missing.stderr, "mcpping: mcpping-demo does not list the tool 'nope' (--expect-tool)\n");
});

test('--env reaches the server', async () => {
  const script = 'test "$MCPPING_TEST_ENV" = yes && exec "$0" "$1"';
  const echo = ['python3', path.join(h.PEERS, 'echo.py')];
  assert.equal((await cli(['-c', '1', '--', 'sh', '-c', script, ...echo])).status, 3);
  const res = await cli(['-c', '1', '--env', 'MCPPING_TEST_ENV=yes', '--', 'sh', '-c', script, ...echo]);
  assert.equal(res.status, 0, res.stderr);
});

test('--connect-timeout 1 bounds a handshake that never ends (exit 3)', async () => {
  const { spawn } = require('node:child_process');
  const srv = spawn('python3', [path.join(h.PEERS, 'http_fault.py'), '--mode', 'silent'], { stdio: ['ignore', 'pipe', 'ignore'] });
  try {
    const url = await h.within(new Promise((resolve) => srv.stdout.once('data', (d) => resolve(String(d).trim()))), 10000, 'url');
    // The bound is the work: a 30 s handshake wait would hit this timeout.
    const res = await h.run(process.execPath, [h.CLI, '--connect-timeout', '1', '-c', '1', url], { timeoutMs: 15000 });
    assert.equal(res.status, 3);
    assert.equal(res.stderr, 'mcpping: no connection and handshake within 1.0 s (--connect-timeout)\n');
  } finally {
    srv.kill();
  }
});

test('spawn failure and handshake failure exit 3, bad usage 2, with one line on stderr', async () => {
  const spawnFail = await cli(['--', 'mcpping-no-such-program']);
  assert.equal(spawnFail.status, 3);
  assert.equal(spawnFail.stderr, 'mcpping: cannot start mcpping-no-such-program: no such file or directory (ENOENT)\n');
  assert.equal(spawnFail.stdout, '');
  const dies = await cli(peerArgs('dies.py', ['--after', '0']));
  assert.equal(dies.status, 3);
  assert.match(dies.stderr, /^mcpping: handshake failed: .+\n$/);
  for (const bad of [['-c', 'x'], ['--bogus'], ['-W', '0'], ['--'], ['not-a-url'], ['--method', 'pong'], ['-H', 'x', 'http://h/'], ['--env', 'X', '--', 'x']]) {
    const res = await cli(bad);
    assert.equal(res.status, 2, bad.join(' '));
    assert.match(res.stderr, /^mcpping: .+\n$/);
  }
  // Times past what a timer can wait are refused, never wrapped to ~1 ms.
  for (const flag of ['-W', '-i', '-w', '--connect-timeout']) {
    const res = await cli([flag, '100000000', '-c', '1']);
    assert.equal(res.status, 2, flag);
    const low = flag === '-i' ? '0' : '0\\.001';
    assert.match(res.stderr, new RegExp(`^mcpping: ${flag} must be between ${low} and 2147483\\.647 seconds, not 100000000\\.0\n$`));
  }
});

test('--no-init pings before any handshake', async () => {
  const res = await cli(['--json', '--no-init', '-c', '1', ...peerArgs('echo.py')]);
  assert.equal(res.status, 0, res.stderr);
  const events = h.jsonLines(res.stdout);
  assert.equal(events[0].protocol_version, null);
  assert.equal(events[0].peer, 'python3');
  assert.equal(events[1].event, 'reply');
});

test('-w stops a run at the deadline with a summary', async () => {
  const t0 = Date.now();
  // The deadline covers the server's start-up too: 2 s leaves a loaded
  // machine time to start Python and still ping at least 3 times.
  const res = await cli(['--json', '-i', '0.1', '-w', '2', ...peerArgs('echo.py')]);
  const elapsed = Date.now() - t0;
  assert.equal(res.status, 0, res.stderr);
  const summary = h.jsonLines(res.stdout).at(-1);
  assert.equal(summary.event, 'summary');
  assert.ok(summary.sent >= 3 && summary.sent <= 21, `sent ${summary.sent}`);
  assert.ok(elapsed >= 2000 && elapsed < 6000, `took ${elapsed} ms`);
});

test('--log appends governance records without arguments or payloads', async () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'mcpping-'));
  const log = path.join(dir, 'records.jsonl');
  const res = await cli(['--log', log, '-c', '2', '-i', '0', ...peerArgs('echo.py', ['--name', 'named-echo'])]);
  assert.equal(res.status, 0, res.stderr);
  const records = h.jsonLines(fs.readFileSync(log, 'utf8'));
  const keys = ['ts', 'event', 'direction', 'sender', 'receiver', 'peer', 'session_id', 'protocol_version', 'transport', 'ping_id', 'timeout_ms', 'latency_ms', 'failure_count', 'reconnect_attempt', 'in_flight', 'proof'];
  const pings = records.filter((r) => r.event === 'ping_ok');
  assert.equal(pings.length, 2);
  for (const r of records) assert.deepEqual(Object.keys(r).sort(), [...keys].sort());
  assert.equal(pings[0].peer, 'named-echo');
  assert.match(pings[0].ts, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z$/);
  assert.ok(!fs.readFileSync(log, 'utf8').includes('--name'));
  assert.equal(records.at(-1).event, 'closed');
});

test('Streamable HTTP: pings server-everything by URL, exit 0; refused connection exits 3', async () => {
  const server = await h.startEverythingHttp();
  try {
    const res = await cli(['--json', '-c', '3', '-i', '0', server.url]);
    assert.equal(res.status, 0, res.stderr);
    const events = h.jsonLines(res.stdout);
    assert.equal(events[0].transport, 'streamable-http');
    assert.equal(events[0].protocol_version, '2025-11-25');
    assert.ok(events[0].session_id, 'session id kept');
    assert.equal(events.at(-1).received, 3);
  } finally {
    await server.stop();
  }
  const url = `http://127.0.0.1:${await h.freePort()}/mcp`;
  const refused = await cli(['-c', '1', url]);
  assert.equal(refused.status, 3);
  assert.equal(refused.stderr, `mcpping: cannot connect to ${url}: ECONNREFUSED\n`);
  assert.equal(refused.stdout, '');
});

/** @returns {Promise<number|null>} a port fetch() refuses (WHATWG "bad ports") that is free here */
async function freeBadPort() {
  const net = require('node:net');
  for (const port of [6666, 6667, 6668, 6669, 6665, 10080, 6000, 6697]) {
    const free = await new Promise((resolve) => {
      const srv = net.createServer().once('error', () => resolve(false));
      srv.listen(port, '127.0.0.1', () => srv.close(() => resolve(true)));
    });
    if (free) return port;
  }
  return null;
}

test('Streamable HTTP: a server on a port fetch() refuses (6666, 10080...) is pinged', async (t) => {
  const port = await freeBadPort();
  if (port === null) return t.skip('every candidate port is in use here');
  const server = await h.startEverythingHttp(port);
  try {
    const res = await cli(['--json', '-c', '1', server.url]);
    assert.equal(res.status, 0, res.stderr);
    assert.equal(h.jsonLines(res.stdout).at(-1).received, 1);
  } finally {
    await server.stop();
  }
});

test('-h and -V exit 0', async () => {
  const help = await cli(['-h']);
  assert.equal(help.status, 0);
  assert.match(help.stdout, /^usage: mcpping/);
  const ver = await cli(['-V']);
  assert.equal(ver.status, 0);
  assert.equal(ver.stdout, `mcpping ${require('../../package.json').version}\n`);
});

test('Ctrl-C (SIGINT) stops pinging, prints the summary and exits by the answers so far', async () => {
  const { spawn } = require('node:child_process');
  const child = spawn(process.execPath, [h.CLI, '-i', '0.05', ...peerArgs('echo.py')], { stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  const twoPongs = new Promise((resolve) => {
    child.stdout.on('data', (d) => {
      out += d;
      if ((out.match(/^ping reply from/gm) || []).length >= 2) resolve();
    });
  });
  await h.within(twoPongs, 10000, 'two pongs');
  const exited = h.within(new Promise((resolve) => child.on('close', (code) => resolve(code))), 10000, 'exit after SIGINT');
  child.kill('SIGINT');
  const status = await exited;
  const m = /--- echo mcpping statistics ---\n(\d+) sent, (\d+) received, \d+(\.\d)?% loss, time \d+ ms\nrtt min/.exec(out);
  assert.ok(m, out);
  assert.ok(Number(m[2]) >= 2);
  // A check cut short by Ctrl-C is neither sent nor lost.
  assert.equal(status, m[1] === m[2] ? 0 : 1);
});

test('Streamable HTTP: a 404 answer to ping means unsupported (exit 4 with --method ping); session and -H headers are sent', async () => {
  const http = require('node:http');
  const seen = [];
  const server = http.createServer((req, res) => {
    let body = '';
    req.on('data', (d) => (body += d));
    req.on('end', () => {
      if (req.method !== 'POST') {
        res.writeHead(405).end();
        return;
      }
      const msg = JSON.parse(body);
      seen.push({ method: msg.method, test: req.headers['x-test'] || null, session: req.headers['mcp-session-id'] || null, version: req.headers['mcp-protocol-version'] || null, accept: req.headers.accept });
      if (msg.method === 'initialize') {
        res.writeHead(200, { 'content-type': 'application/json', 'mcp-session-id': 'sess-42' });
        res.end(JSON.stringify({ jsonrpc: '2.0', id: msg.id, result: { protocolVersion: '2025-11-25', capabilities: {}, serverInfo: { name: 'http-404', version: '1' } } }));
      } else if (msg.method === 'ping') {
        res.writeHead(404, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ jsonrpc: '2.0', id: null, error: { code: -32601, message: 'Method not found' } }));
      } else {
        res.writeHead(202).end();
      }
    });
  });
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  try {
    const url = `http://127.0.0.1:${server.address().port}/mcp`;
    const res = await cli(['--json', '--method', 'ping', '-H', 'X-Test: yes', '-c', '3', url]);
    assert.equal(res.status, 4, res.stderr);
    assert.equal(res.stderr, 'mcpping: ping unsupported: code=-32601 Method not found\n');
    const events = h.jsonLines(res.stdout);
    assert.deepEqual(events[0], { event: 'connected', peer: 'http-404', transport: 'streamable-http', protocol_version: '2025-11-25', session_id: 'sess-42', method: 'ping' });
    assert.equal(events.at(-1).event, 'unsupported');
    assert.deepEqual(seen.map((s) => s.method), ['initialize', 'notifications/initialized', 'ping']);
    assert.equal(seen[0].session, null);
    assert.ok(seen.every((x) => x.test === 'yes'));
    assert.deepEqual(seen.slice(1).map((s) => [s.session, s.version]), [['sess-42', '2025-11-25'], ['sess-42', '2025-11-25']]);
    assert.ok(seen.every((s) => s.accept === 'application/json, text/event-stream'));
  } finally {
    await new Promise((resolve) => server.close(resolve));
  }
});


test('Streamable HTTP on 2026-07-28 only: alive by server/discover, never pinged', async () => {
  const http = require('node:http');
  const methods = [];
  const server = http.createServer((req, res) => {
    let body = '';
    req.on('data', (d) => (body += d));
    req.on('end', () => {
      if (req.method !== 'POST') return res.writeHead(405).end();
      const msg = JSON.parse(body);
      methods.push(msg.method);
      if (msg.id === undefined) return res.writeHead(202).end();
      const answer = msg.method === 'server/discover'
        ? { result: { supportedVersions: ['2026-07-28'], capabilities: {}, _meta: { 'io.modelcontextprotocol/serverInfo': { name: 'modern-http', version: '0' } } } }
        : { error: { code: -32601, message: 'Method not found' } };
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ jsonrpc: '2.0', id: msg.id, ...answer }));
    });
  });
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  try {
    const res = await cli(['-c', '2', '-i', '0', `http://127.0.0.1:${server.address().port}/mcp`]);
    assert.equal(res.status, 0, res.stderr);
    assert.match(res.stdout.split('\n')[0], /method server\/discover/);
    assert.ok(!methods.includes('ping'), methods.join(' '));
  } finally {
    await new Promise((resolve) => server.close(resolve));
  }
});
