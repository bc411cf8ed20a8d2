'use strict';
// The Node and Python `mcpping` commands against the same servers: the
// same JSON keys, the same events, the same exit codes, and the same human
// lines once numbers are masked. Both print what the C application layer
// (csrc/src/app) gives them, so this is a guard, not the mechanism. The Python command is installed by
// `make test-python`, which runs before this suite.
const test = require('node:test');
const assert = require('node:assert/strict');
const path = require('node:path');
const h = require('./helpers');

const node = (args) => h.run(process.execPath, [h.CLI, ...args], { timeoutMs: 60000 });
const python = (args) => h.run('python3', ['-m', 'mcpping', ...args], { timeoutMs: 60000 });

/** @returns {Array<[string, string[]]>} each JSON line as [event, keys], nested keys included */
function shape(stdout) {
  return h.jsonLines(stdout).map((o) => {
    const keys = Object.keys(o).flatMap((k) => (o[k] && typeof o[k] === 'object' ? [k, ...Object.keys(o[k]).map((s) => `${k}.${s}`)] : [k]));
    return [o.event, keys];
  });
}

/** Masks numbers (RTTs, times) so that two runs' lines compare. */
function mask(text) {
  return text.replace(/\d+(\.\d+)?/g, 'N');
}

/**
 * Runs both commands with the same arguments and compares them.
 * @param {string[]} args
 * @param {{status: number, human?: boolean, aligned?: boolean}} expect
 *   aligned: the output is a table whose column widths follow the masked
 *   numbers, so runs of spaces are compared as one
 */
async function same(args, expect) {
  const [js, py] = await Promise.all([node(args), python(args)]);
  assert.equal(py.status, expect.status, `python: ${py.stderr}`);
  assert.equal(js.status, expect.status, `node: ${js.stderr}`);
  if (args.includes('--json')) assert.deepEqual(shape(js.stdout), shape(py.stdout));
  else if (expect.aligned) assert.equal(mask(js.stdout).replace(/ +/g, ' '), mask(py.stdout).replace(/ +/g, ' '));
  else assert.equal(mask(js.stdout), mask(py.stdout));
  // One reason line on stderr for exit 2, nothing otherwise.
  assert.equal(js.stderr.split('\n').filter(Boolean).length, py.stderr.split('\n').filter(Boolean).length, `${js.stderr} | ${py.stderr}`);
  return { js, py };
}

const peerArgs = (name, extra = []) => ['--', 'python3', path.join(h.PEERS, name), ...extra];

test('the Python command is installed for the parity tests', async () => {
  const res = await python(['-V']);
  assert.equal(res.status, 0, `python3 -m mcpping is not installed (run make test-python first): ${res.stderr}`);
  assert.match(res.stdout, /^mcpping \d+\.\d+\.\d+/);
});

test('parity: all pings answered (--json): same keys, exit 0', async () => {
  const { js, py } = await same(['--json', '-c', '3', '-i', '0', ...peerArgs('echo.py')], { status: 0 });
  const [jsSummary, pySummary] = [h.jsonLines(js.stdout).at(-1), h.jsonLines(py.stdout).at(-1)];
  assert.deepEqual(Object.keys(jsSummary), Object.keys(pySummary));
  assert.deepEqual(Object.keys(jsSummary.rtt_ms), Object.keys(pySummary.rtt_ms));
  assert.equal(jsSummary.sent, pySummary.sent);
  assert.equal(jsSummary.received, pySummary.received);
});

test('parity: human output lines match once numbers are masked', async () => {
  await same(['-c', '3', '-i', '0', ...peerArgs('echo.py')], { status: 0 });
  await same(['-q', '-c', '2', '-i', '0', ...peerArgs('echo.py')], { status: 0 });
});

test('parity: the demo servers report the same name and the same lines', async () => {
  const { js, py } = await same(['--json', '-c', '2', '-i', '0'], { status: 0 });
  assert.equal(h.jsonLines(js.stdout)[0].peer, 'mcpping-demo');
  assert.deepEqual(h.jsonLines(js.stdout)[0], h.jsonLines(py.stdout)[0]);
});

test('parity: unanswered pings exit 1 with timeout events', async () => {
  await same(['--json', '-c', '2', '-i', '0', '-W', '0.2', ...peerArgs('drop_pings.py')], { status: 1 });
  await same(['-c', '1', '-W', '0.2', ...peerArgs('drop_pings.py')], { status: 1 });
});

test('parity: a server refusing ping: alive by tools/list (0), refused with --method ping (4)', async () => {
  await same(['-c', '2', '-i', '0', ...peerArgs('unsupported.py')], { status: 0 });
  const { js, py } = await same(['--json', '--method', 'ping', '-c', '2', ...peerArgs('unsupported.py')], { status: 4 });
  assert.equal(js.stderr, py.stderr);
});

test('parity: a 2026-07-28-only server is checked by server/discover (exit 0)', async () => {
  const { js, py } = await same(['-c', '1', ...peerArgs('modern.py')], { status: 0 });
  assert.match(py.stdout, /^MCPPING modern \(stdio, protocol 2026-07-28\): method server\/discover, /);
  assert.equal(js.stderr, py.stderr);
  const forced = await same(['-c', '1', '--method', 'ping', ...peerArgs('modern.py')], { status: 4 });
  assert.equal(forced.js.stderr, forced.py.stderr);
  // One that lists no version mcpping speaks: both refusals, named.
  const none = await same(['-c', '1', ...peerArgs('modern.py', ['--versions', '2027-01-01'])], { status: 3 });
  assert.equal(none.py.stderr, 'mcpping: handshake failed: initialize failed: -32601 Method not found; '
    + 'server/discover lists protocol versions ["2027-01-01"], and mcpping speaks 2025-11-25 and 2026-07-28\n');
  assert.equal(none.js.stderr, none.py.stderr);
});

test('parity: spawn and handshake failures exit 3, bad usage and an unwritable log 2', async () => {
  const spawn = await same(['--json', '--', 'mcpping-no-such-program'], { status: 3 });
  assert.equal(spawn.js.stderr, spawn.py.stderr);
  await same(['--json', ...peerArgs('dies.py', ['--after', '0'])], { status: 3 });
  // Its stderr is not shown, but its last words are the reason's, as
  // --config's rows give them (the field trial: a failing server said nothing).
  const said = await same(['-c', '1', ...peerArgs('dies.py', ['--after', '0', '--stderr', 'fatal: port in use'])], { status: 3 });
  assert.equal(said.js.stderr, said.py.stderr);
  assert.match(said.py.stderr, /^mcpping: handshake failed: .*server exited with status 3: fatal: port in use\n$/);
  await same(['-c', 'x'], { status: 2 });
  await same(['--bogus'], { status: 2 });
  await same(['--log', '/nonexistent-dir/records.jsonl', '-c', '1', ...peerArgs('echo.py')], { status: 2 });
});

test('parity: bad usage prints the same reason line in both commands', async () => {
  // docs/cli.md: both commands print the same lines. Numeric options are
  // checked before any server starts, so each of these exits 2 at once.
  const cases = [
    ['-c'], ['-c', 'x'], ['-c', '0'], ['-c', '-3'], ['-c', '1.5'],
    ['-i', 'abc'], ['-i', '-1'], ['-i', '3000000'],
    ['-W', '0'], ['-W', '-1'], ['-W', '0.0001'], ['-W', '1e20'],
    ['-w', '0'], ['-w', '-2.5'], ['--config', 'x', '-w', '0'],
    ['--bogus'], ['--'], ['not-a-url'], ['http://a/', 'http://b/'], ['--demo', '--', 'true'],
    ['-c0'], ['-ix'], ['-W0'], ['-w-1'], ['--log='], ['--log'],
    ['-i', 'inf'], ['-W', '-Infinity'], ['-w', 'nan'], ['-W', '0x10'], ['-i', '1e400'], ['-c', '0x5'],
    ['--method', 'pong'], ['--connect-timeout', '0'], ['-H', 'x', 'http://h/'], ['--env', '=x', '--', 'x'],
    ['-H', 'A: b', '--', 'x'], ['--write'], ['--config', 'x', '--wrap', '--unwrap'],
    ['http://'], ['https:///mcp'],
    // URLs either host used to take its own way (Python crashed on these
    // with a traceback, Node said "Invalid URL"): C's mcpp_http_url_parse.
    ['http://[::1'], ['http://h:99999/mcp'], ['http://h:abc/mcp'], ['http://h:-1/mcp'], ['http://[zz]:1/'],
    ['http://h :1/mcp'], ['http://h/m cp'], ['ftp://h/mcp'], ['http://h/%zz'],
  ];
  for (const args of cases) {
    const [js, py] = await Promise.all([node(args), python(args)]);
    assert.equal(py.status, 2, `python ${args.join(' ')}: ${py.stderr}`);
    assert.equal(js.status, 2, `node ${args.join(' ')}: ${js.stderr}`);
    assert.match(py.stderr, /^mcpping: [^\n]+\n$/, args.join(' '));
    assert.equal(js.stderr, py.stderr, args.join(' '));
  }
});

/**
 * Runs a command whose stdout's reader leaves after the first line (as
 * `| head -1` does). @returns {Promise<{status: number, stderr: string}>}
 */
function headOne(cmd, args, env) {
  const { spawn } = require('node:child_process');
  return new Promise((resolve, reject) => {
    const child = spawn(cmd, args, { cwd: h.ROOT, env, stdio: ['ignore', 'pipe', 'pipe'] });
    let stderr = '';
    child.stderr.on('data', (d) => (stderr += d));
    child.stdout.once('data', () => child.stdout.destroy());
    const timer = setTimeout(() => child.kill('SIGKILL'), 30000);
    child.on('error', reject);
    child.on('close', (status) => {
      clearTimeout(timer);
      resolve({ status, stderr });
    });
  });
}

/** @returns {number[]} pids of processes whose environment has `mark` */
function marked(mark) {
  const fs = require('node:fs');
  return fs.readdirSync('/proc').filter((d) => /^\d+$/.test(d)).filter((pid) => {
    try {
      return fs.readFileSync(`/proc/${pid}/environ`, 'latin1').split('\0').includes(mark);
    } catch {
      return false;
    }
  }).map(Number);
}

test('parity: stdout closed by its reader (| head -1): quiet exit 141, the server closed', async () => {
  for (const [cmd, pre] of [[process.execPath, [h.CLI]], ['python3', ['-m', 'mcpping']]]) {
    const mark = `MCPPING_HEAD_MARK=${cmd.length}-${process.pid}-${Date.now()}`;
    const args = [...pre, '-c', '1000', '-i', '0.1', '--env', mark, '--', 'python3', '-m', 'mcpping.demo'];
    const res = await headOne(cmd, args, process.env);
    assert.equal(res.status, 141, `${cmd}: ${res.stderr}`);
    assert.equal(res.stderr, '', cmd); // no traceback, no unhandled 'error'
    assert.deepEqual(marked(mark), [], `${cmd} left its server running`);
  }
});

test('parity: attached values (-c1, -i0, --log=FILE) are taken by both commands', async () => {
  const dir = require('node:fs').mkdtempSync(path.join(require('node:os').tmpdir(), 'mcpping-attached-'));
  const { js, py } = await same(['--json', '-c1', '-i0', '-W2', '-w20', `--log=${path.join(dir, 'r.jsonl')}`, ...peerArgs('echo.py')], { status: 0 });
  assert.equal(h.jsonLines(js.stdout).at(-1).sent, 1);
  assert.equal(h.jsonLines(py.stdout).at(-1).sent, 1);
  assert.ok(require('node:fs').statSync(path.join(dir, 'r.jsonl')).size > 0);
  require('node:fs').rmSync(dir, { recursive: true });
});

test('parity: a server that exits or a refused connection: the same reason line', async () => {
  const net = require('node:net');
  const closed = await new Promise((resolve) => {
    const srv = net.createServer().listen(0, '127.0.0.1', () => {
      const { port } = srv.address();
      srv.close(() => resolve(port));
    });
  });
  for (const args of [
    ['-c', '1', ...peerArgs('dies.py', ['--after', '0'])],
    ['-c', '1', '--', 'sh', '-c', 'exit 3'],
    ['-c', '1', '--', 'sh', '-c', 'kill -9 $$'],
    ['-c', '1', `http://127.0.0.1:${closed}/mcp`],
  ]) {
    const [js, py] = await Promise.all([node(args), python(args)]);
    assert.equal(py.status, 3, py.stderr);
    assert.equal(js.status, 3, js.stderr);
    assert.equal(js.stderr, py.stderr, args.join(' '));
  }
});

/** A loopback TCP server that reads each request's head (and body) and then does what `answer` says. */
async function rawHttpServer(answer) {
  const net = require('node:net');
  const srv = net.createServer((sock) => {
    let buf = Buffer.alloc(0);
    sock.on('data', (chunk) => {
      buf = Buffer.concat([buf, chunk]);
      const end = buf.indexOf('\r\n\r\n');
      if (end < 0) return;
      const length = /content-length: *(\d+)/i.exec(buf.subarray(0, end).toString());
      if (buf.length < end + 4 + (length ? Number(length[1]) : 0)) return;
      buf = Buffer.alloc(0);
      answer(sock);
    });
    sock.on('error', () => {});
  });
  await new Promise((resolve) => srv.listen(0, '127.0.0.1', resolve));
  return { url: `http://127.0.0.1:${srv.address().port}/mcp`, stop: () => new Promise((resolve) => srv.close(resolve)) };
}

/** Starts a tests/peers/*.py server that prints its URL first. */
async function urlPeer(name, args = []) {
  const { spawn } = require('node:child_process');
  const child = spawn('python3', [path.join(h.PEERS, name), ...args], { stdio: ['ignore', 'pipe', 'inherit'] });
  const url = await new Promise((resolve, reject) => {
    child.stdout.once('data', (d) => resolve(d.toString().split('\n')[0].trim()));
    child.once('exit', (code) => reject(new Error(`${name} exited ${code}`)));
  });
  return { url, stop: () => { child.kill(); } };
}

test('parity: a server that answers in a form no client reads: both say what it wrote, byte for byte', async () => {
  for (const frame of ['bom', 'batch']) {
    const { js, py } = await same(['-c', '1', '--connect-timeout', '1', ...peerArgs('misframed.py', ['--frame', frame])], { status: 3 });
    assert.equal(js.stderr, py.stderr);
    assert.match(js.stderr, /^mcpping: no connection and handshake within 1\.0 s \(--connect-timeout\); the server wrote a line that is not JSON-RPC \((it starts with a byte order mark|a JSON-RPC batch: MCP has had none since 2025-06-18)\): "/);
  }
});

test('parity: a check whose answer breaks off, and a handshake whose answer does, are said the same', async () => {
  // The engine answers a request whose answer can no longer come (in
  // doubt): both commands print that answer as the check's error (Node
  // threw, Python raised a traceback, once the HTTP clients raised it as
  // their stdio peers do); an initialize whose answer breaks is a close.
  const breaks = await urlPeer('http_fault.py', ['--mode', 'json-breaks']);
  const initBreaks = await urlPeer('http_fault.py', ['--mode', 'init-breaks']);
  try {
    const { js, py } = await same(['-c', '2', '-i', '0.1', '--method', 'tools/list', breaks.url], { status: 1 });
    assert.equal(mask(js.stdout), mask(py.stdout));
    assert.match(js.stdout, /^tools\/list error from http-fault: seq=1 code=-32003 Request cancelled \(mcpping: the server failed before answering; it is not replayed\)$/m);
    const args = ['-c', '1', initBreaks.url];
    const [jsInit, pyInit] = await Promise.all([node(args), python(args)]);
    assert.equal(pyInit.stderr, 'mcpping: handshake failed: the connection closed during initialize\n');
    assert.equal(jsInit.stderr, pyInit.stderr);
    assert.equal(pyInit.status, 3);
    assert.equal(jsInit.status, 3);
  } finally {
    breaks.stop();
    initBreaks.stop();
  }
});

test('parity: why a server could not be reached is named the same in both commands', async () => {
  // Python's POST thread died on a non-HTTP answer (traceback, then the
  // 10 s handshake timeout) and said EPERM for TLS to a plain server,
  // "Remote end closed connection without response" for a reset; Node
  // met a reset on the kept-alive socket of a server that closes after
  // each answer, where Python (a connection per request) read the answer.
  const notHttp = await rawHttpServer((sock) => sock.end('hello there\r\n\r\n'));
  // Lines ended by LF alone: llhttp refuses them, and now C's parser too
  // (Python's client waited for a CRLF that never came, then said ECONNRESET).
  const bareLf = await rawHttpServer((sock) => sock.end('HTTP/1.1 200 OK\nContent-Length: 2\n\n{}'));
  const hangUp = await rawHttpServer((sock) => sock.destroy());
  const closesEach = await rawHttpServer((sock) => sock.end('HTTP/1.1 500 Internal Server Error\r\nContent-Length: 5\r\n\r\noops!'));
  // A URL that is a web page: both waited out the handshake's 10 s, then said "no initialize result".
  const webPage = await rawHttpServer((sock) => sock.write('HTTP/1.1 200 OK\r\nContent-Type: text/html; charset=utf-8\r\nContent-Length: 13\r\n\r\n<html></html>'));
  const selfSigned = await urlPeer('tls_server.py');
  const plain = await urlPeer('http_fault.py', ['--mode', 'strict']);
  try {
    for (const [url, line, status] of [
      [notHttp.url, `mcpping: cannot connect to ${notHttp.url}: the answer is not HTTP/1.1\n`, 3],
      [bareLf.url, `mcpping: cannot connect to ${bareLf.url}: the answer is not HTTP/1.1\n`, 3],
      [hangUp.url, `mcpping: cannot connect to ${hangUp.url}: ECONNRESET\n`, 3],
      [closesEach.url, 'mcpping: handshake failed: initialize failed: -32000 HTTP 500 Internal Server Error; ' +
        'server/discover failed: -32000 HTTP 500 Internal Server Error\n', 3],
      [webPage.url, 'mcpping: handshake failed: initialize failed: -32000 the server answered HTTP 200 with text/html, ' +
        'not JSON; server/discover failed: -32000 the server answered HTTP 200 with text/html, not JSON\n', 3],
      [selfSigned.url, `mcpping: cannot connect to ${selfSigned.url}: DEPTH_ZERO_SELF_SIGNED_CERT\n`, 3],
      [plain.url.replace('http:', 'https:'), `mcpping: cannot connect to ${plain.url.replace('http:', 'https:')}: EPROTO\n`, 3],
    ]) {
      const args = ['-c', '1', '--connect-timeout', '20', url];
      const [js, py] = await Promise.all([node(args), python(args)]);
      assert.equal(py.stderr, line, `python ${url}`);
      assert.equal(js.stderr, line, `node ${url}`);
      assert.equal(py.status, status);
      assert.equal(js.status, status);
    }
    // Whatever this machine's resolver says of a name that cannot exist
    // (ENOTFOUND, or EAI_AGAIN without DNS), both commands say it alike.
    const args = ['-c', '1', 'http://mcpping-test.invalid/mcp'];
    const [js, py] = await Promise.all([node(args), python(args)]);
    assert.match(py.stderr, /^mcpping: cannot connect to http:\/\/mcpping-test\.invalid\/mcp: E[A-Z_]+\n$/);
    assert.equal(js.stderr, py.stderr);
  } finally {
    await Promise.all([notHttp.stop(), bareLf.stop(), hangUp.stop(), closesEach.stop(), webPage.stop()]);
    selfSigned.stop();
    plain.stop();
  }
});

test('parity: the official Python SDK\'s server by a URL that redirects (/mcp/ to /mcp, 307): checked, exit 0', async () => {
  // Both commands failed with "initialize failed: -32000 HTTP 307" where
  // the SDKs' own clients follow it (C's mcpp_http_redirect_url).
  const { spawn } = require('node:child_process');
  const port = await h.freePort();
  const server = spawn('python3', [path.join(h.ROOT, 'tests', 'python', 'servers', 'sdk_server.py'), 'http', String(port)],
    { stdio: ['ignore', 'ignore', 'pipe'] });
  let stderr = '';
  await new Promise((resolve, reject) => {
    server.stderr.on('data', (d) => {
      stderr += d;
      if (/Uvicorn running on/.test(stderr)) resolve();
    });
    server.once('exit', (code) => reject(new Error(`sdk_server.py exited ${code}: ${stderr}`)));
  });
  try {
    const { js, py } = await same(['--json', '-c', '2', '-i', '0', `http://127.0.0.1:${port}/mcp/`], { status: 0 });
    for (const r of [js, py]) assert.equal(h.jsonLines(r.stdout).at(-1).received, 2);
  } finally {
    server.kill();
  }
});

test('parity: pings whose event streams end unanswered are lost, exit 1 (Node exited 0 mid-run)', async () => {
  // The ping's timer did not hold Node's process once an earlier timer was
  // armed, so with no socket left open the run ended at once with exit 0
  // and nothing but its header line.
  const server = await urlPeer('http_fault.py', ['--mode', 'sse-ends']);
  try {
    for (const method of ['ping', 'tools/list']) {
      const { js, py } = await same(['--json', '-c', '2', '-i', '0', '-W', '1', '--method', method, server.url], { status: 1 });
      for (const r of [js, py]) {
        assert.deepEqual(h.jsonLines(r.stdout).map((e) => e.event), ['connected', 'timeout', 'timeout', 'summary']);
        assert.equal(r.stderr, 'mcpping: 2 of 2 replies missing\n');
      }
    }
  } finally {
    server.stop();
  }
});

test('parity: HTTP_PROXY in the environment is not used by either command', async () => {
  // Python's urllib sent every POST (even to 127.0.0.1) to the proxy while
  // its own GET stream and Node went straight: with a proxy that is not
  // there, Python said "cannot connect: ECONNREFUSED" of a server that was.
  const server = await urlPeer('http_fault.py', ['--mode', 'strict']);
  const dead = `http://127.0.0.1:${await h.freePort()}`;
  const env = { ...process.env, HTTP_PROXY: dead, http_proxy: dead, HTTPS_PROXY: dead, https_proxy: dead };
  try {
    const args = ['-c', '1', '-H', 'Authorization: Bearer t', server.url];
    const [js, py] = await Promise.all([
      h.run(process.execPath, [h.CLI, ...args], { env, timeoutMs: 60000 }),
      h.run('python3', ['-m', 'mcpping', ...args], { env, timeoutMs: 60000 }),
    ]);
    assert.equal(py.status, 0, py.stderr);
    assert.equal(js.status, 0, js.stderr);
  } finally {
    server.stop();
  }
});

test('parity: what a server sends unasked is not kept, and not warned about, by either command', async () => {
  // Two 5 MiB notifications after the handshake: the Python command queued
  // them for a messages() it never reads (8 MiB kept) and warned
  // "messages dropped so far: 1" on stderr; Node's never kept them.
  const script = [
    'import json, sys',
    'pad = "x" * (5 << 20)',
    'for line in sys.stdin:',
    '    m = json.loads(line)',
    '    if m.get("method") == "initialize":',
    '        print(json.dumps({"jsonrpc": "2.0", "id": m["id"], "result": {"protocolVersion": "2025-06-18", "capabilities": {}, "serverInfo": {"name": "chatty", "version": "1"}}}), flush=True)',
    '    elif m.get("method") == "ping":',
    '        for _ in range(2): print(json.dumps({"jsonrpc": "2.0", "method": "notifications/message", "params": {"level": "info", "data": pad}}), flush=True)',
    '        print(json.dumps({"jsonrpc": "2.0", "id": m["id"], "result": {}}), flush=True)',
  ].join('\n');
  const { js, py } = await same(['-c', '2', '-i', '0', '--', 'python3', '-c', script], { status: 0 });
  assert.equal(py.stderr, '');
  assert.equal(js.stderr, '');
});

test("parity: a server that asks its client roots/list before it serves is told -32601, and answers (exit 0)", async () => {
  // asks.py holds every message until its roots/list is answered: the
  // Python command kept the request unanswered, so every ping timed out.
  const { js, py } = await same(['-c', '2', '-i', '0', '-W', '2', ...peerArgs('asks.py')], { status: 0 });
  for (const r of [js, py]) assert.match(r.stdout, /^2 sent, 2 received, 0% loss/m);
});

test('parity: a server that dies after answering ends the run with its reason and exit 1', async () => {
  // initialize, initialized and two pings answered; the third check meets
  // the exit: it is lost, not "never sent", and the run is no "alive".
  const args = ['-c', '5', '-i', '0.2', ...peerArgs('dies.py', ['--after', '4'])];
  const [js, py] = await Promise.all([node(args), python(args)]);
  for (const r of [js, py]) {
    assert.equal(r.status, 1, r.stderr);
    assert.equal(r.stderr, 'mcpping: connection closed: server exited with status 3; 1 of 3 replies missing\n');
    assert.match(r.stdout, /^3 sent, 2 received, 33\.3% loss, time \d+ ms$/m);
  }
});

test('parity: --no-init', async () => {
  const { js, py } = await same(['--json', '--no-init', '-c', '1', ...peerArgs('echo.py')], { status: 0 });
  assert.deepEqual(h.jsonLines(js.stdout)[0], h.jsonLines(py.stdout)[0]);
  // The header says no protocol was negotiated, in both.
  const human = await same(['--no-init', '-c', '1', ...peerArgs('echo.py')], { status: 0, human: true });
  assert.match(human.js.stdout.split('\n')[0], /^MCPPING python3 \(stdio, no handshake\): method ping, timeout 5\.0 s, interval 1\.0 s$/);
});

test('parity: Streamable HTTP against server-everything', async () => {
  const server = await h.startEverythingHttp();
  try {
    const args = ['--json', '-c', '2', '-i', '0', server.url];
    const js = await node(args);
    const py = await python(args);
    assert.equal(js.status, 0, js.stderr);
    assert.equal(py.status, 0, py.stderr);
    assert.deepEqual(shape(js.stdout), shape(py.stdout));
  } finally {
    await server.stop();
  }
});

// ---- --config: the same file through both commands.

const configDir = require('node:fs').mkdtempSync(path.join(require('node:os').tmpdir(), 'mcpping-parity-config-'));
test.after(() => require('node:fs').rmSync(configDir, { recursive: true, force: true }));

/** Writes doc (or text) as configDir/rel; returns its path. */
function configFile(rel, doc) {
  const fs = require('node:fs');
  const file = path.join(configDir, rel);
  fs.mkdirSync(path.dirname(file), { recursive: true });
  fs.writeFileSync(file, typeof doc === 'string' ? doc : JSON.stringify(doc));
  return file;
}

const peerEntry = (name, args = []) => ({ command: 'python3', args: [path.join(h.PEERS, name), ...args] });

test('parity: --config rows, statuses and reasons are the same in both commands', async () => {
  const file = configFile('.vscode/mcp.json', {
    servers: {
      echo: { type: 'stdio', ...peerEntry('echo.py') },
      'line\nbreak': peerEntry('echo.py'),
      drops: peerEntry('drop_pings.py', ['--answer-every', '2']),
      frozen: peerEntry('freeze.py', ['--after', '1']),
      'refuses ping': peerEntry('unsupported.py'),
      'asks roots': peerEntry('asks.py'), // answers nothing until told -32601 (Python never told it)
      missing: { command: 'mcpping-no-such-program' },
      dies: peerEntry('dies.py', ['--after', '0', '--code', '5']),
      'dies-after': peerEntry('dies.py', ['--after', '2']),
      asks: { type: 'stdio', command: 'python3', env: { KEY: '${input:key}' } },
      legacy: { type: 'sse', url: 'http://127.0.0.1:1/sse' },
      off: { command: 'x', disabled: true },
    },
  });
  const args = ['--config', file, '-c', '4', '-i', '0', '-W', '0.3'];
  // Exit 3: some servers never started or finished the handshake.
  const { js } = await same(args, { status: 3, aligned: true });
  assert.match(js.stdout, /^line\?break {2,}stdio /m); // a control character cannot break the table
  assert.match(js.stdout, /^echo {10}stdio {6}2025-11-25 {2}\d+\.\d{3}\/\d+\.\d{3}\/\d+\.\d{3} ms {2,}ok {2,}-$/m);
  const quiet = await same([...args, '-q'], { status: 3, aligned: true });
  assert.doesNotMatch(quiet.js.stdout, /^NAME /m); // -q: the summary without the table
  assert.match(quiet.js.stdout, /^12 servers, 3 ok, 1 unsupported, 2 skipped, 6 failed, time \d+ ms$/m);
  const both = await same([...args, '--json'], { status: 3 });
  const verdicts = (out) => h.jsonLines(out).filter((o) => o.event === 'server').map((o) => [o.name, o.status, o.reason, o.sent, o.received, o.json_path]);
  assert.deepEqual(verdicts(both.js.stdout), verdicts(both.py.stdout));
  assert.deepEqual(verdicts(both.js.stdout).map((v) => v.slice(0, 2)), [
    ['echo', 'ok'], ['line\nbreak', 'ok'], ['drops', 'loss'], ['frozen', 'loss'], ['refuses ping', 'unsupported'], ['asks roots', 'ok'], ['missing', 'spawn failed'],
    ['dies', 'handshake failed'], ['dies-after', 'closed'], ['asks', 'not started'], ['legacy', 'skipped'], ['off', 'skipped'],
  ]);
  const summary = (out) => { const s = h.jsonLines(out).at(-1); delete s.time_ms; return s; };
  assert.deepEqual(summary(both.js.stdout), summary(both.py.stdout));
});

test('parity: a bad config gives the same one-line reason and exit 2 in both', async () => {
  const cases = [
    ['top.json', '[]', '$: must be an object, got array'],
    ['none.json', { other: 1 }, '$: has no "mcpServers" or "servers" object'],
    ['table.json', { mcpServers: [] }, '$.mcpServers: must be an object, got array'],
    ['entry.json', { servers: { a: 'npx' } }, '$.servers.a: must be an object, got string'],
    ['neither.json', { mcpServers: { a: {} } }, '$.mcpServers.a: needs "command" (stdio) or "url" (HTTP)'],
    ['missing.json', { mcpServers: { a: { type: 'stdio' } } }, '$.mcpServers.a.command: is missing'],
    ['empty.json', { mcpServers: { a: { command: '' } } }, '$.mcpServers.a.command: must not be empty'],
    ['args.json', { mcpServers: { 'my server': { command: 'x', args: ['y', 2] } } }, '$.mcpServers["my server"].args[1]: must be a string, got number'],
    ['env.json', { mcpServers: { a: { command: 'x', env: { PORT: 3000 } } } }, '$.mcpServers.a.env.PORT: must be a string, got number'],
    ['envname.json', { mcpServers: { a: { command: 'x', env: { '': 'v' } } } }, '$.mcpServers.a.env[""]: is not a variable name (empty, or with = or NUL)'],
    ['nul.json', '{"mcpServers": {"a": {"command": "x", "args": ["a\\u0000b"]}}}', '$.mcpServers.a.args[0]: contains a NUL character'],
    ['envlist.json', { mcpServers: { a: { command: 'x', env: ['A=1'] } } }, '$.mcpServers.a.env: must be an object of strings, got array'],
    ['type.json', { servers: { a: { type: 'ws', url: 'ws://h' } } }, '$.servers.a.type: unknown transport "ws" (expected stdio, http or sse)'],
    ['url.json', { servers: { a: { url: 'ftp://h/x' } } }, '$.servers.a.url: is not an http:// or https:// URL'],
    ['v6.json', { servers: { a: { url: 'http://[::1/mcp' } } }, '$.servers.a.url: has an IPv6 address without its closing ]'],
    ['port.json', { servers: { a: { url: 'http://h:70000/mcp' } } }, '$.servers.a.url: has a port that is not a number from 1 to 65535'],
    ['header.json', { servers: { a: { url: 'http://h', headers: { K: null } } } }, '$.servers.a.headers.K: must be a string, got null'],
    ['disabled.json', { mcpServers: { a: { command: 'x', disabled: 'yes' } } }, '$.mcpServers.a.disabled: must be a boolean, got string'],
    ['syntax.json', '{\n  "mcpServers": {\n    "a": {"command": "x"}\n    "b": {}\n}', 'invalid JSON at line 4 column 5'],
    ['truncated.json', '{"mcpServers": {"a": ', 'invalid JSON at line 1 column 22'],
    // Python's json takes NaN and the two parsers word errors differently:
    // both commands scan with one grammar first (config syntaxErrorAt).
    ['nan.json', '{"mcpServers": {"a": {"command": "x", "args": [NaN]}}}', 'invalid JSON at line 1 column 48'],
    ['literal.json', '{"mcpServers": {"a": {"command": tru}}}', 'invalid JSON at line 1 column 34'],
    ['escape.json', '{"mcpServers": {"a": {"command": "\\q"}}}', 'invalid JSON at line 1 column 36'],
    ['deep.json', `{"mcpServers": {}, "deep": ${'['.repeat(70)}${']'.repeat(70)}}`, 'invalid JSON at line 1 column 91'],
  ];
  for (const [name, doc, problem] of cases) {
    const file = configFile(name, doc);
    const { js } = await same(['--config', file], { status: 2 });
    assert.equal(js.stderr, `mcpping: ${file}: ${problem}\n`);
  }
  const absent = path.join(configDir, 'absent.json');
  for (const args of [['--config', absent], [`--config=${absent}`]]) {
    const { js, py } = await same(args, { status: 2 });
    assert.equal(js.stderr, `mcpping: ${absent}: cannot read: No such file or directory\n`);
    assert.equal(py.stderr, js.stderr);
  }
});

test('parity: --config auto with no config anywhere says where it looked, exit 2', async () => {
  const empty = configFile('empty-home/.keep', '');
  const home = path.dirname(empty);
  const env = { ...process.env, HOME: home, XDG_CONFIG_HOME: path.join(home, '.config') };
  const [js, py] = await Promise.all([
    h.run(process.execPath, [h.CLI, '--config', 'auto'], { cwd: home, env }),
    h.run('python3', ['-m', 'mcpping', '--config', 'auto'], { cwd: home, env }),
  ]);
  assert.equal(js.status, 2);
  assert.equal(py.status, 2);
  assert.equal(js.stderr, py.stderr);
  assert.match(js.stderr, /^mcpping: --config auto: no client config found in .*\.mcp\.json, .*claude_desktop_config\.json, /);
});
