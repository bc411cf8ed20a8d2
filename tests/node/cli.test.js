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
  assert.match(lines[0], /^MCPPING mcpping-demo \(stdio, protocol 2025-11-25\): timeout 5\.0 s, interval 0\.1 s$/);
  for (let i = 1; i <= 5; i++) assert.match(lines[i], new RegExp(`^pong from mcpping-demo: seq=${i} time=\\d+\\.\\d{3} ms$`));
  assert.equal(lines[6], '');
  assert.equal(lines[7], '--- mcpping-demo mcpping statistics ---');
  assert.match(lines[8], /^5 pings sent, 5 pongs received, 0% loss, time \d+ ms$/);
  assert.match(lines[9], /^rtt min\/avg\/max\/mdev = \d+\.\d{3}\/\d+\.\d{3}\/\d+\.\d{3}\/\d+\.\d{3} ms$/);
  assert.equal(lines.length, 10);
});

test('--json prints connected, pong events and a summary with fixed keys', async () => {
  const res = await cli(['--json', '-c', '3', '-i', '0', ...peerArgs('echo.py')]);
  assert.equal(res.status, 0, res.stderr);
  const events = h.jsonLines(res.stdout);
  assert.deepEqual(events[0], { event: 'connected', peer: 'echo', transport: 'stdio', protocol_version: '2025-11-25', session_id: null });
  assert.deepEqual(events.slice(1, 4).map((e) => [e.event, e.seq]), [['pong', 1], ['pong', 2], ['pong', 3]]);
  const summary = events[4];
  assert.deepEqual(Object.keys(summary), ['event', 'sent', 'received', 'loss_pct', 'time_ms', 'rtt_ms']);
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
  assert.doesNotMatch(res.stdout, /pong from/);
  assert.match(res.stdout, /^MCPPING echo /);
  assert.match(res.stdout, /2 pings sent, 2 pongs received, 0% loss/);
});

test('unanswered pings: timeout lines, 100% loss, no rtt line, exit 1', async () => {
  const res = await cli(['-c', '2', '-i', '0', '-W', '0.2', ...peerArgs('drop_pings.py')]);
  assert.equal(res.status, 1);
  assert.match(res.stdout, /timeout from drop_pings: seq=1 no answer after 200 ms/);
  assert.match(res.stdout, /2 pings sent, 0 pongs received, 100% loss/);
  assert.doesNotMatch(res.stdout, /rtt min/);
});

test('error and invalid pongs are reported and exit 1', async () => {
  const err = await cli(['--json', '-c', '1', '--', process.execPath, path.join(h.FIXTURES, 'bad_pong_server.js'), '--mode', 'error']);
  assert.equal(err.status, 1);
  assert.deepEqual(h.jsonLines(err.stdout)[1], { event: 'ping_error', seq: 1, code: -32603, message: 'Internal error' });
  const inv = await cli(['-c', '1', '--', process.execPath, path.join(h.FIXTURES, 'bad_pong_server.js'), '--mode', 'invalid']);
  assert.equal(inv.status, 1);
  assert.match(inv.stdout, /invalid pong from bad-pong-invalid: seq=1 /);
});

test('ping unsupported exits 2 with a one-line reason', async () => {
  const res = await cli(['--json', '-c', '3', ...peerArgs('unsupported.py')]);
  assert.equal(res.status, 2);
  assert.equal(res.stderr, 'mcpping: ping unsupported: code=-32601 Method not found\n');
  const events = h.jsonLines(res.stdout);
  assert.deepEqual(events.at(-1), { event: 'unsupported', seq: 1, code: -32601, message: 'Method not found' });
});

test('spawn failure, handshake failure and bad usage exit 2 with one line on stderr', async () => {
  const spawnFail = await cli(['--', 'mcpping-no-such-program']);
  assert.equal(spawnFail.status, 2);
  assert.match(spawnFail.stderr, /^mcpping: cannot start mcpping-no-such-program: .+\n$/);
  assert.equal(spawnFail.stdout, '');
  const dies = await cli(peerArgs('dies.py', ['--after', '0']));
  assert.equal(dies.status, 2);
  assert.match(dies.stderr, /^mcpping: handshake failed: .+\n$/);
  for (const bad of [['-c', 'x'], ['--bogus'], ['-W', '0'], ['--'], ['not-a-url']]) {
    const res = await cli(bad);
    assert.equal(res.status, 2, bad.join(' '));
    assert.match(res.stderr, /^mcpping: .+\n$/);
  }
  // Times past what a timer can wait are refused, never wrapped to ~1 ms.
  for (const flag of ['-W', '-i', '-w']) {
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
  assert.equal(events[1].event, 'pong');
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

test('Streamable HTTP: pings server-everything by URL, exit 0; refused connection exits 2', async () => {
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
  assert.equal(refused.status, 2);
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
      if ((out.match(/^pong from/gm) || []).length >= 2) resolve();
    });
  });
  await h.within(twoPongs, 10000, 'two pongs');
  const exited = h.within(new Promise((resolve) => child.on('close', (code) => resolve(code))), 10000, 'exit after SIGINT');
  child.kill('SIGINT');
  const status = await exited;
  const m = /--- echo mcpping statistics ---\n(\d+) pings sent, (\d+) pongs received, \d+(\.\d)?% loss, time \d+ ms\nrtt min/.exec(out);
  assert.ok(m, out);
  assert.ok(Number(m[2]) >= 2);
  // A ping cut short by Ctrl-C counts as unanswered, as in ping(8).
  assert.equal(status, m[1] === m[2] ? 0 : 1);
});

test('Streamable HTTP: a 404 answer to ping means unsupported (exit 2); session headers are sent', async () => {
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
      seen.push({ method: msg.method, session: req.headers['mcp-session-id'] || null, version: req.headers['mcp-protocol-version'] || null, accept: req.headers.accept });
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
    const res = await cli(['--json', '-c', '3', url]);
    assert.equal(res.status, 2, res.stderr);
    assert.equal(res.stderr, 'mcpping: ping unsupported: code=-32601 Method not found\n');
    const events = h.jsonLines(res.stdout);
    assert.deepEqual(events[0], { event: 'connected', peer: 'http-404', transport: 'streamable-http', protocol_version: '2025-11-25', session_id: 'sess-42' });
    assert.equal(events.at(-1).event, 'unsupported');
    assert.deepEqual(seen.map((s) => s.method), ['initialize', 'notifications/initialized', 'ping']);
    assert.equal(seen[0].session, null);
    assert.deepEqual(seen.slice(1).map((s) => [s.session, s.version]), [['sess-42', '2025-11-25'], ['sess-42', '2025-11-25']]);
    assert.ok(seen.every((s) => s.accept === 'application/json, text/event-stream'));
  } finally {
    await new Promise((resolve) => server.close(resolve));
  }
});

// The summary's statistics, unit level: the Reporter keeps them in a bounded
// RttStats, not an array of every RTT (docs/cli.md).
const { Reporter } = require('../../node/cli_report');
const { RttStats } = require('../../node/rtt_stats');

/** Feeds RTTs (ms) to a quiet --json Reporter; returns it and its summary object. */
function reportSummary(rtts, sent = rtts.length) {
  let text = '';
  const report = new Reporter({ json: true, quiet: true, out: { write: (s) => { text += s; } } });
  rtts.forEach((rtt, i) => report.pong(i + 1, rtt));
  report.summary({ sent, received: rtts.length, timeMs: 1000 });
  const lines = text.trimEnd().split('\n');
  assert.equal(lines.length, 1); // -q: the pongs printed nothing
  return { report, summary: JSON.parse(lines[0]) };
}

test('the report keeps a bounded RttStats: p50/p99 over the last 10,000 pongs, the rest over the run', () => {
  const rtts = Array.from({ length: 20000 }, (_, i) => i + 1); // 1 .. 20000 ms
  const { report, summary } = reportSummary(rtts);
  assert.ok(report.stats instanceof RttStats);
  assert.equal(report.stats.recent().length, 10000); // only the window is kept
  assert.ok(!Object.values(report).some((v) => Array.isArray(v) && v.length > 10000));
  const r = summary.rtt_ms;
  // p50/p99 over the last 10,000 (10001..20000); the whole run would give 10000/19800.
  assert.equal(r.p50, 15000);
  assert.equal(r.p99, 19900);
  // min/avg/max/mdev over the whole run; the window alone would give min 10001.
  assert.equal(r.min, 1);
  assert.equal(r.max, 20000);
  assert.equal(r.avg, 10000.5);
  assert.equal(r.mdev, Math.round(Math.sqrt((20000 ** 2 - 1) / 12) * 1000) / 1000);
  assert.deepEqual([summary.sent, summary.received], [20000, 20000]);
});

test('the report\'s mdev is the population standard deviation', () => {
  const { summary } = reportSummary([1, 3]);
  assert.equal(summary.rtt_ms.mdev, 1); // the sample deviation would be 1.414
  assert.equal(summary.rtt_ms.avg, 2);
});

test('the report\'s loss is unanswered of sent, from the counts', () => {
  // 3 pongs of 4 sent, one still unanswered at the end: RttStats.lossPct would say 0.
  const { report, summary } = reportSummary([1, 2, 3], 4);
  assert.equal(report.stats.lossPct, 0);
  assert.equal(summary.loss_pct, 25);
});

test('the report without pongs has null figures and no rtt line', () => {
  let text = '';
  const report = new Reporter({ json: false, quiet: false, out: { write: (s) => { text += s; } } });
  report.summary({ sent: 2, received: 0, timeMs: 10 });
  assert.equal(text.trimEnd().split('\n').at(-1), '2 pings sent, 0 pongs received, 100% loss, time 10 ms');
  const { summary } = reportSummary([], 2);
  assert.deepEqual(summary.rtt_ms, { min: null, avg: null, max: null, mdev: null, p50: null, p99: null });
});
