'use strict';
/**
 * `mcpping watch` (issue 24 item 6) end to end in Node: three real servers
 * (mcp-server-time from PyPI, @modelcontextprotocol/server-everything from
 * npm, an official-SDK MCPServer over HTTP) and one that freezes, watched by
 * the command, /metrics and /status read with fetch, the frozen one
 * convicted within its bound and restarted, no secret of the config in any
 * output, nothing left behind after SIGTERM. The bytes are C's
 * (tests/c/test_app_watch.c); tests/python/test_watch.py is the twin.
 */
const test = require('node:test');
const assert = require('node:assert');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const net = require('node:net');
const { spawn } = require('node:child_process');
const { once } = require('node:events');
const { CLI, EVERYTHING, PEERS, ROOT, within, freePort, run, groupGone } = require('./helpers');

const ENV_SECRET = 'watch-env-secret-7Q';
const HEADER_SECRET = 'watch-header-secret-4K';
const URL_SECRET = 'watch-url-secret-9Z';
// Keepalive of the watch under test: ping after 0.5 s idle, 1 s each, two
// failures make a server stale.
const INTERVAL = 0.5, TIMEOUT = 1, FAILURES = 2;
// docs/python.md: a silent, idle server is stale within interval + timeout
// × failures + timeout (the corroborating probe).
const STALE_BOUND_MS = (INTERVAL + TIMEOUT * FAILURES + TIMEOUT) * 1000;
// Allowance for scheduling on a busy machine and the log line's trip through a pipe.
const LINE_SLACK_MS = 1500;
const POLLS = 300; // /status reads while waiting for a state (each 0.1 s apart)

const pause = (ms) => new Promise((r) => setTimeout(r, ms));

/** Resolves once something accepts on 127.0.0.1:port (bounded attempts). */
async function listening(port, child) {
  for (let k = 0; k < 200; k++) {
    if (child.exitCode !== null) throw new Error(`server exited ${child.exitCode}`);
    const ok = await new Promise((r) => {
      const s = net.connect(port, '127.0.0.1', () => { s.destroy(); r(true); });
      s.on('error', () => r(false));
    });
    if (ok) return;
    await pause(100);
  }
  throw new Error(`nothing listens on ${port}`);
}

/** A running `mcpping watch` and its stderr lines as they come. */
class Watch {
  constructor(args, env = process.env) {
    this.child = spawn(process.execPath, [CLI, 'watch', ...args], { stdio: ['ignore', 'pipe', 'pipe'], env });
    this.err = '';
    this.out = '';
    this.waiters = [];
    this.child.stdout.on('data', (d) => { this.out += d; });
    this.child.stderr.on('data', (d) => {
      this.err += d;
      for (const w of [...this.waiters]) w();
    });
    this.base = '';
  }

  /** The first stderr line matching re after offset `from`, and when it came. */
  line(re, ms, from = 0) {
    return within(new Promise((resolve) => {
      const look = () => {
        const lines = this.err.slice(from).split('\n');
        const hit = lines.slice(0, -1).find((l) => re.test(l));
        if (hit !== undefined) {
          this.waiters = this.waiters.filter((w) => w !== look);
          resolve([performance.now(), hit]);
        }
      };
      this.waiters.push(look);
      look();
    }), ms, `a line matching ${re} (${this.err})`);
  }

  async get(p, method = 'GET') {
    const r = await fetch(this.base + p, { method });
    return [r.status, r.headers, await r.text()];
  }

  async status() {
    const [code, , body] = await this.get('/status');
    assert.strictEqual(code, 200);
    return Object.fromEntries(JSON.parse(body).servers.map((s) => [s.name, s]));
  }

  async until(what, ok) {
    let servers;
    for (let k = 0; k < POLLS; k++) {
      servers = await this.status();
      if (ok(servers)) return servers;
      await pause(100);
    }
    throw new Error(`/status never showed ${what}: ${JSON.stringify(servers)}; ${this.err}`);
  }

  async stop() {
    if (this.child.exitCode === null) this.child.kill('SIGTERM');
    const [code] = this.child.exitCode === null ? await within(once(this.child, 'exit'), 30000, 'watch to exit') : [this.child.exitCode];
    return code;
  }
}

function metric(text, name, server, extra = '') {
  const re = new RegExp(`^${name}\\{server="${server}",[^}]*${extra}[^}]*\\} (\\S+)$`, 'm');
  const m = re.exec(text);
  assert.ok(m, `no ${name} for ${server} in /metrics`);
  return Number(m[1]);
}

test('watch keeps three real servers and restarts the frozen one within its bound', { skip: !fs.existsSync(EVERYTHING) }, async () => {
  const port = await freePort();
  const sdk = spawn('python3', [path.join(ROOT, 'tests', 'python', 'servers', 'sdk_server.py'), 'http', String(port)], { stdio: 'ignore', detached: true });
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'mcpping-watch-'));
  let w;
  const pids = [];
  let metrics = '';
  let statusBody = '';
  try {
    await listening(port, sdk);
    const config = path.join(dir, 'claude_desktop_config.json');
    fs.writeFileSync(config, JSON.stringify({ mcpServers: {
      time: { command: 'python3', args: ['-m', 'mcp_server_time'], env: { TIME_API_TOKEN: ENV_SECRET } },
      everything: { command: process.execPath, args: [EVERYTHING, 'stdio'] },
      sdk: { type: 'http', url: `http://127.0.0.1:${port}/mcp?key=${URL_SECRET}`, headers: { Authorization: `Bearer ${HEADER_SECRET}` } },
      // A server that names itself with its own secret: the peer label
      // would carry it into /metrics, /status and the log.
      frozen: { command: 'python3', args: [path.join(PEERS, 'freeze.py'), '--on-usr1', '--name', `frozen-${ENV_SECRET}`], env: { FROZEN_TOKEN: ENV_SECRET } },
    } }));
    w = new Watch(['--config', config, '--listen', '127.0.0.1:0', '-i', String(INTERVAL), '-W', String(TIMEOUT), '--failures', String(FAILURES)]);
    const [, first] = await w.line(/watching 4 servers/, 30000);
    w.base = /metrics on (http:\/\/127\.0\.0\.1:\d+)\/metrics/.exec(first)[1];
    let servers = await w.until('every server alive', (s) => Object.values(s).every((x) => x.state === 'alive'));
    assert.strictEqual(servers.sdk.transport, 'streamable-http');
    assert.strictEqual(servers.time.peer, 'mcp-time');
    const frozenPid = servers.frozen.pid;
    for (const s of Object.values(servers)) if (s.pid) pids.push(s.pid);

    // Freeze it: alive, idle, answering nothing.
    const from = w.err.length;
    process.kill(frozenPid, 'SIGUSR1');
    const t0 = performance.now();
    const [at, line] = await w.line(/^mcpping watch: frozen: stale /, STALE_BOUND_MS + LINE_SLACK_MS + 5000, from);
    console.log(`frozen: stale ${Math.round(at - t0)} ms after the freeze (bound ${STALE_BOUND_MS} ms)`);
    assert.ok(at - t0 <= STALE_BOUND_MS + LINE_SLACK_MS, `${at - t0} ms: ${line}`);
    await w.line(new RegExp(`^mcpping watch: frozen: restarting \\(attempt 1\\): the server went stale: ${FAILURES} keepalive pings failed$`), 30000, from);
    await w.line(/^mcpping watch: frozen: restarted \(pid \d+\)/, 30000, from);
    servers = await w.until('the restarted server answering',
      (s) => s.frozen.state === 'alive' && s.frozen.pid !== frozenPid && s.frozen.pongs_received > 0);
    const pongs = servers.frozen.pongs_received;
    servers = await w.until('a pong from the restarted server', (s) => s.frozen.pongs_received > pongs);
    pids.push(servers.frozen.pid);

    const [code, headers, text] = await w.get('/metrics');
    assert.strictEqual(code, 200);
    assert.match(headers.get('content-type'), /^text\/plain; version=0\.0\.4/);
    metrics = text;
    assert.ok(metrics.includes('peer="frozen-***"'));
    assert.ok(metric(metrics, 'mcpping_stale_total', 'frozen') >= 1);
    assert.ok(metric(metrics, 'mcpping_reconnects_total', 'frozen') >= 1);
    for (const name of ['time', 'everything', 'sdk']) {
      assert.strictEqual(metric(metrics, 'mcpping_peer_state', name, 'state="alive"'), 1);
      assert.strictEqual(metric(metrics, 'mcpping_stale_total', name), 0);
      assert.strictEqual(metric(metrics, 'mcpping_reconnects_total', name), 0);
      assert.ok(metric(metrics, 'mcpping_pongs_received_total', name) >= 1);
      assert.ok(metric(metrics, 'mcpping_ping_rtt_seconds_count', name) >= 1);
    }
    assert.strictEqual((await w.get('/nothing'))[0], 404);
    assert.strictEqual((await w.get('/metrics', 'POST'))[0], 405);
    statusBody = (await w.get('/status'))[2];
  } finally {
    const code = w ? await w.stop() : 0;
    try {
      process.kill(-sdk.pid, 'SIGTERM');
    } catch {}
    fs.rmSync(dir, { recursive: true, force: true });
    assert.strictEqual(code, 0, w && w.err);
  }
  assert.ok(w.err.endsWith('mcpping watch: stopped\n'), w.err);
  for (const pid of pids) assert.deepStrictEqual(await groupGone(pid, 0), [], `server group ${pid} outlived the watch`);
  const everything = w.err + w.out + metrics + statusBody;
  for (const secret of [ENV_SECRET, HEADER_SECRET, URL_SECRET]) assert.ok(!everything.includes(secret), secret);
});

test('watch refuses a non-loopback --listen and a busy port, as Python does', async () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'mcpping-watch-'));
  const config = path.join(dir, 'c.json');
  fs.writeFileSync(config, JSON.stringify({ mcpServers: { a: { command: 'true' } } }));
  try {
    let r = await run(process.execPath, [CLI, 'watch', '--config', config, '--listen', '0.0.0.0:9464']);
    assert.strictEqual(r.status, 2);
    assert.strictEqual(r.stderr, 'mcpping: --listen 0.0.0.0 is not a loopback address: /metrics and /status would be open to the network (add --listen-any to mean it)\n');
    const srv = net.createServer().listen(0, '127.0.0.1');
    await once(srv, 'listening');
    const port = srv.address().port;
    r = await run(process.execPath, [CLI, 'watch', '--config', config, '--listen', `127.0.0.1:${port}`]);
    srv.close();
    assert.strictEqual(r.status, 2);
    assert.strictEqual(r.stderr, `mcpping watch: cannot listen on 127.0.0.1:${port}: EADDRINUSE\n`);
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
});

test('watch says how a server that cannot open died and its last words, redacted, as Python does', async () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'mcpping-watch-'));
  const config = path.join(dir, 'c.json');
  const talk = 'echo starting >&2; echo "Error: key $TOKEN refused" >&2; exit 1';
  fs.writeFileSync(config, JSON.stringify({ mcpServers: { db: { command: 'sh', args: ['-c', talk], env: { TOKEN: ENV_SECRET } } } }));
  const w = new Watch(['--config', config, '--listen', '127.0.0.1:0']);
  let code;
  try {
    const [, first] = await w.line(/watching 1 server;/, 30000);
    w.base = /metrics on (http:\/\/127\.0\.0\.1:\d+)\/metrics/.exec(first)[1];
    // The exit reason quotes the stderr itself (so no "(last stderr: ...)").
    await w.line(/^mcpping watch: db: cannot open: the server ended before answering initialize: server exited with status 1: starting Error: key \*\*\* refused; retrying in 1 s$/, 30000);
    const status = JSON.parse((await w.get('/status'))[2]);
    assert.strictEqual(status.servers[0].last_stderr, 'Error: key *** refused');
  } finally {
    code = await w.stop();
    fs.rmSync(dir, { recursive: true, force: true });
  }
  assert.strictEqual(code, 0);
  assert.ok(!w.err.includes(ENV_SECRET));
});

test('watch names what a server wrote instead of its initialize answer, as Python does', async () => {
  // An answer without its newline: it waited out the connect timeout
  // (10 s) and said only "no initialize result".
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'mcpping-watch-'));
  const config = path.join(dir, 'c.json');
  fs.writeFileSync(config, JSON.stringify({ mcpServers: { unended: { command: 'python3', args: [path.join(PEERS, 'misframed.py'), '--frame', 'unended'] } } }));
  const w = new Watch(['--config', config, '--listen', '127.0.0.1:0']);
  let code;
  try {
    await w.line(/^mcpping watch: unended: cannot open: no initialize result; the server wrote \d+ bytes that no newline ends: "\{\\"jsonrpc\\":\\"2\.0\\",.*\.\.\."; retrying in 1 s$/, 40000);
  } finally {
    code = await w.stop();
    fs.rmSync(dir, { recursive: true, force: true });
  }
  assert.strictEqual(code, 0);
});

test('watch words a value it cannot use and never quotes it, as Python does', async () => {
  // The header passes the config's checks and becomes unsendable (a line
  // break) only once ${env:...} is filled in: the session refuses it.
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'mcpping-watch-'));
  const config = path.join(dir, 'c.json');
  fs.writeFileSync(config, JSON.stringify({ mcpServers: {
    api: { type: 'http', url: 'http://127.0.0.1:9/mcp', headers: { Authorization: 'Bearer ${env:WATCH_BAD_HEADER}' } },
  } }));
  const w = new Watch(['--config', config, '--listen', '127.0.0.1:0'], { ...process.env, WATCH_BAD_HEADER: `${HEADER_SECRET}\r\nX-Injected: 1` });
  let code;
  try {
    await w.line(/^mcpping watch: api: cannot open: invalid command line or environment; retrying in 1 s$/, 30000);
  } finally {
    code = await w.stop();
    fs.rmSync(dir, { recursive: true, force: true });
  }
  assert.strictEqual(code, 0);
  assert.ok(!w.err.includes(HEADER_SECRET));
  assert.ok(!w.err.includes('Authorization'), w.err);
});

test("watch names a server without serverInfo.name by its program's basename, as Python does", async () => {
  // Answers every request with an empty result, initialize with a nameless serverInfo.
  const nameless = `require('node:readline').createInterface({ input: process.stdin }).on('line', (line) => {
    const m = JSON.parse(line);
    if (m.id === undefined) return;
    const result = m.method === 'initialize'
      ? { protocolVersion: m.params.protocolVersion, capabilities: {}, serverInfo: { name: '', version: '1' } } : {};
    console.log(JSON.stringify({ jsonrpc: '2.0', id: m.id, result }));
  });`;
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'mcpping-watch-'));
  const config = path.join(dir, 'c.json');
  fs.writeFileSync(config, JSON.stringify({ mcpServers: { anon: { command: process.execPath, args: ['-e', nameless] } } }));
  const w = new Watch(['--config', config, '--listen', '127.0.0.1:0']);
  let code;
  try {
    const name = path.basename(process.execPath).replace(/[.+]/g, '\\$&');
    await w.line(new RegExp(`^mcpping watch: anon: up \\(${name}, stdio, protocol `), 30000);
  } finally {
    code = await w.stop();
    fs.rmSync(dir, { recursive: true, force: true });
  }
  assert.strictEqual(code, 0);
});

test('watch re-opens an HTTP server that went away, with backoff, as Python does', async () => {
  const port = await freePort();
  const start = async () => {
    const child = spawn('python3', [path.join(ROOT, 'tests', 'python', 'servers', 'sdk_server.py'), 'http', String(port)], { stdio: 'ignore' });
    await listening(port, child);
    return child;
  };
  const stopServer = async (child) => {
    if (child.exitCode !== null || child.signalCode !== null) return;
    child.kill('SIGTERM');
    await within(once(child, 'exit'), 10000, 'the SDK server to exit');
  };
  let server = await start();
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'mcpping-watch-'));
  const config = path.join(dir, 'c.json');
  fs.writeFileSync(config, JSON.stringify({ servers: { api: { type: 'http', url: `http://127.0.0.1:${port}/mcp?key=${URL_SECRET}` } } }));
  const w = new Watch(['--config', config, '--listen', '127.0.0.1:0', '-i', String(INTERVAL), '-W', String(TIMEOUT), '--failures', String(FAILURES)]);
  let code;
  try {
    const [, first] = await w.line(/watching 1 server;/, 30000);
    w.base = /metrics on (http:\/\/127\.0\.0\.1:\d+)\/metrics/.exec(first)[1];
    await w.line(/^mcpping watch: api: up \(sdk-server, streamable-http/, 30000);
    const from = w.err.length;
    await stopServer(server);
    // The server's going away shows as a refused connection or, when a
    // keepalive ping was on the wire as it shut down, a reset one.
    await w.line(/^mcpping watch: api: closed: cannot connect: (ECONNREFUSED|ECONNRESET); retrying in 1 s$/, 30000, from);
    server = await start();
    await w.line(/^mcpping watch: api: up \(sdk-server, streamable-http/, 60000, from);
    const metrics = (await w.get('/metrics'))[2];
    assert.strictEqual(metric(metrics, 'mcpping_reconnects_total', 'api'), 1);
    assert.strictEqual(metric(metrics, 'mcpping_peer_state', 'api', 'state="alive"'), 1);
  } finally {
    code = await w.stop();
    await stopServer(server);
    fs.rmSync(dir, { recursive: true, force: true });
  }
  assert.strictEqual(code, 0);
  assert.ok(!w.err.includes(URL_SECRET));
});

test('watch counts the probes of a server without ping', async () => {
  // A 2026-07-28 server has no ping: keepalive probes it, and /metrics
  // counts each answered probe under mcpping_probes_total{result="ok"}.
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'mcpping-watch-'));
  const config = path.join(dir, 'c.json');
  fs.writeFileSync(config, JSON.stringify({ mcpServers: { modern: { command: 'python3', args: [path.join(PEERS, 'modern.py')] } } }));
  const w = new Watch(['--config', config, '--listen', '127.0.0.1:0', '-i', String(INTERVAL), '-W', String(TIMEOUT), '--failures', String(FAILURES)]);
  let code;
  try {
    const [, first] = await w.line(/watching 1 server;/, 30000);
    w.base = /metrics on (http:\/\/127\.0\.0\.1:\d+)\/metrics/.exec(first)[1];
    await w.line(/^mcpping watch: modern: up \(modern, stdio/, 30000);
    // No pong comes on 2026-07-28, so an RTT in /status is a probe's
    // answer, fed to the counters by the same event.
    await w.until("modern's first probe answered", (s) => s.modern.last_rtt_ms !== null);
    const metrics = (await w.get('/metrics'))[2];
    assert.ok(metric(metrics, 'mcpping_probes_total', 'modern', 'result="ok"') >= 1);
    assert.strictEqual(metric(metrics, 'mcpping_probes_total', 'modern', 'result="timeout"'), 0);
    assert.strictEqual(metric(metrics, 'mcpping_pings_sent_total', 'modern'), 0);
  } finally {
    code = await w.stop();
    fs.rmSync(dir, { recursive: true, force: true });
  }
  assert.strictEqual(code, 0);
});

// Both commands print C's bytes: the same help, usage error and log lines
// (python3 -m mcpping is the package `make test-python` installed, as in
// cli_parity.test.js).
test('watch prints the same bytes in Node and Python', async () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'mcpping-watch-'));
  const config = path.join(dir, 'c.json');
  fs.writeFileSync(config, JSON.stringify({ mcpServers: {
    gone: { command: path.join(dir, 'no-such-server'), env: { TOKEN: ENV_SECRET } },
    off: { command: 'true', disabled: true },
    later: { command: 'true', args: ['${NO_SUCH_VARIABLE_FOR_WATCH}'] },
  } }));
  const runWatch = (cmd, args) => new Promise((resolve) => {
    const child = spawn(cmd[0], [...cmd.slice(1), 'watch', '--config', config, '--listen', '127.0.0.1:0', ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
    let err = '';
    let out = '';
    let stopping = false;
    child.stdout.on('data', (d) => { out += d; });
    child.stderr.on('data', (d) => {
      err += d;
      // The second attempt's line: the backoff doubled; enough to compare.
      if (!stopping && /retrying in 2 s\n/.test(err)) {
        stopping = true;
        child.kill('SIGTERM');
      }
    });
    child.on('close', (status) => resolve({ status, out, err: err.replace(/127\.0\.0\.1:\d+/g, '127.0.0.1:PORT') }));
  });
  try {
    const [js, py] = await within(Promise.all([runWatch([process.execPath, CLI], []), runWatch(['python3', '-m', 'mcpping'], [])]), 60000, 'both watches');
    assert.strictEqual(py.status, 0, py.err);
    assert.strictEqual(js.status, 0, js.err);
    assert.strictEqual(js.err, py.err);
    assert.strictEqual(js.out + py.out, '');
    assert.match(js.err, /^mcpping watch: watching 1 server; metrics on http:\/\/127\.0\.0\.1:PORT\/metrics, status on http:\/\/127\.0\.0\.1:PORT\/status\nmcpping watch: off: not watched \(disabled\)\nmcpping watch: later: not watched \(.*NO_SUCH_VARIABLE_FOR_WATCH.*\)\nmcpping watch: gone: cannot open: cannot start .*no-such-server: no such file or directory \(ENOENT\); retrying in 1 s\n/);
    assert.ok(!js.err.includes(ENV_SECRET));
    for (const args of [['--help'], ['--listen', '0.0.0.0:1'], ['--failures', '0'], ['-c', '3']]) {
      const [a, b] = await Promise.all([
        run(process.execPath, [CLI, 'watch', '--config', config, ...args]),
        run('python3', ['-m', 'mcpping', 'watch', '--config', config, ...args]),
      ]);
      assert.deepStrictEqual([a.status, a.stdout, a.stderr], [b.status, b.stdout, b.stderr], args.join(' '));
    }
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
});
