'use strict';
// The Node `mcpping --config` against real servers: server-everything (its
// installed bin, over stdio and Streamable HTTP), the demo, mcp-server-time
// from PyPI, fault peers, a missing program, a loopback HTTP server that
// checks a header (docs/cli.md).
const test = require('node:test');
const assert = require('node:assert/strict');
const crypto = require('node:crypto');
const fs = require('node:fs');
const http = require('node:http');
const os = require('node:os');
const path = require('node:path');
const h = require('./helpers');

const cli = (args, opts) => h.run(process.execPath, [h.CLI, ...args], { timeoutMs: 60000, ...opts });
const EVERYTHING_BIN = path.join(h.ROOT, 'node_modules', '.bin', 'mcp-server-everything');
const DEMO = { command: process.execPath, args: [path.join(h.ROOT, 'node', 'demo-server.js')] };
const peer = (name, args = []) => ({ command: 'python3', args: [path.join(h.PEERS, name), ...args] });

const SECRET = 'sekrit-5b1e0d';
const DIGEST = crypto.createHash('sha256').update(SECRET).digest('hex');
// Starts the demo server only if TOKEN reached it: proof the env is passed.
const NEEDS_TOKEN = `const c = require('node:crypto');
if (c.createHash('sha256').update(process.env.TOKEN || '').digest('hex') !== '${DIGEST}') process.exit(4);
require(${JSON.stringify(DEMO.args[0])});`;

const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'mcpping-cli-config-'));
test.after(() => fs.rmSync(tmp, { recursive: true, force: true }));

function write(rel, doc) {
  const file = path.join(tmp, rel);
  fs.mkdirSync(path.dirname(file), { recursive: true });
  fs.writeFileSync(file, JSON.stringify(doc));
  return file;
}

/** @returns {Record<string, string[]>} the table's rows by name */
function rows(stdout) {
  const lines = stdout.split('\n');
  const head = lines.findIndex((l) => l.startsWith('NAME '));
  const out = {};
  for (const line of lines.slice(head + 1)) {
    if (!line) break;
    const cells = line.split(/\s{2,}/);
    out[cells[0]] = [...cells.slice(0, 5), cells.slice(5).join('  ')];
  }
  return out;
}

/** A loopback Streamable HTTP server answering JSON; notes each POST's Authorization. */
async function recorder() {
  const seen = [];
  const server = http.createServer((req, res) => {
    if (req.method !== 'POST') return res.writeHead(405).end();
    seen.push(req.headers.authorization);
    let body = '';
    req.on('data', (d) => (body += d));
    req.on('end', () => {
      const msg = JSON.parse(body);
      if (msg.id === undefined) return res.writeHead(202).end();
      const result = msg.method === 'initialize'
        ? { protocolVersion: '2025-06-18', capabilities: {}, serverInfo: { name: 'recorder', version: '1' } }
        : {};
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ jsonrpc: '2.0', id: msg.id, result }));
    });
  });
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { url: `http://127.0.0.1:${server.address().port}/mcp`, seen, stop: () => new Promise((r) => server.close(r)) };
}

test('every kind of server gets one aligned row with a reason; a server not up exits 3', async () => {
  const everything = await h.startEverythingHttp();
  const port = await h.freePort();
  try {
    const file = write('mixed/.mcp.json', {
      mcpServers: {
        'everything-stdio': { command: EVERYTHING_BIN, args: ['stdio'] },
        'everything-http': { type: 'http', url: everything.url },
        demo: DEMO,
        time: { command: 'python3', args: ['-m', 'mcp_server_time'] },
        frozen: peer('freeze.py', ['--after', '1']),
        'refuses-ping': peer('unsupported.py'),
        missing: { command: 'mcpping-no-such-program' },
        'dies-at-once': peer('dies.py', ['--after', '0', '--stderr', 'Error: no API key']),
        refused: { url: `http://127.0.0.1:${port}/mcp` },
      },
    });
    const res = await cli(['--config', file, '-i', '0.1', '-W', '0.5', '-w', '15']);
    assert.equal(res.status, 3, res.stderr);
    assert.equal(res.stderr, '');
    const lines = res.stdout.trimEnd().split('\n');
    assert.equal(lines[0], `config ${file}: 9 servers`);
    assert.equal(lines[1], 'MCPPING 9 servers: 3 pings each, interval 0.1 s, timeout 0.5 s, deadline 15.0 s');
    const got = rows(res.stdout);
    assert.deepEqual(Object.keys(got), ['everything-stdio', 'everything-http', 'demo', 'time', 'frozen', 'refuses-ping', 'missing', 'dies-at-once', 'refused']);
    for (const [name, transport] of [['everything-stdio', 'stdio'], ['everything-http', 'streamable-http'], ['demo', 'stdio'], ['time', 'stdio']]) {
      assert.equal(got[name][1], transport, name);
      assert.match(got[name][2], /^20\d\d-\d\d-\d\d$/, name);
      assert.match(got[name][3], /^\d+\.\d{3}\/\d+\.\d{3}\/\d+\.\d{3} ms$/, name);
      assert.equal(got[name][4], 'ok', name);
    }
    assert.deepEqual(got.frozen.slice(3), ['-', 'loss 100%', '-']);
    assert.equal(got['refuses-ping'][4], 'unsupported');
    assert.deepEqual(got.missing.slice(4), ['spawn failed', 'cannot start mcpping-no-such-program: no such file or directory (ENOENT)']);
    assert.deepEqual(got['dies-at-once'].slice(4), ['handshake failed', 'server exited with status 3; stderr: Error: no API key']);
    assert.deepEqual(got.refused.slice(4), ['handshake failed', 'cannot connect: ECONNREFUSED']);
    // Aligned: every row's columns start where the header's do.
    const header = lines.find((l) => l.startsWith('NAME '));
    const starts = [...header.matchAll(/(?<= {2})\S/g)].map((m) => m.index);
    for (const line of lines.filter((l) => Object.hasOwn(got, l.split(' ')[0]))) {
      for (const s of starts) assert.ok(line.slice(s - 2, s) === '  ' && line[s] !== ' ', `${line} at ${s}`);
    }
    assert.equal(lines.at(-2), '--- mcpping config statistics ---');
    assert.match(lines.at(-1), /^9 servers, 4 ok, 1 unsupported, 0 skipped, 4 failed, time \d+ ms$/);
  } finally {
    await everything.stop();
  }
});

test('--json: one object per server and a summary; servers run at once within their deadlines', async () => {
  const marker = `mcpping-silent-${process.pid}-${Date.now()}`;
  const silent = { command: process.execPath, args: ['-e', 'setTimeout(() => {}, 60000)', marker] };
  // An HTTP server that takes each request and never answers it.
  const mute = http.createServer(() => {});
  await new Promise((resolve) => mute.listen(0, '127.0.0.1', resolve));
  const file = write('json.json', {
    mcpServers: { demo: DEMO, drops: peer('drop_pings.py', ['--answer-every', '2']), s1: silent, s2: silent, s3: { url: `http://127.0.0.1:${mute.address().port}/mcp` } },
  });
  const t0 = Date.now();
  const res = await cli(['--config', file, '--json', '-c', '4', '-i', '0', '-W', '0.3', '-w', '1.5']);
  const took = Date.now() - t0;
  mute.closeAllConnections();
  await new Promise((resolve) => mute.close(resolve));
  const objs = h.jsonLines(res.stdout);
  assert.deepEqual(objs[0], { event: 'config', file, servers: 5 });
  const [demo, drops, ...silents] = objs.slice(1, -1);
  assert.deepEqual(Object.keys(demo), ['event', 'name', 'transport', 'protocol_version', 'status', 'reason', 'sent', 'received', 'loss_pct', 'rtt_ms', 'non_json_lines', 'file', 'json_path']);
  assert.deepEqual([demo.status, demo.sent, demo.received, demo.loss_pct, demo.json_path], ['ok', 4, 4, 0, '$.mcpServers.demo']);
  assert.deepEqual([drops.status, drops.sent, drops.received, drops.loss_pct], ['loss', 4, 2, 50]);
  assert.deepEqual(silents.map((o) => [o.status, o.reason]), Array(3).fill(['timeout', 'no initialize result']));
  assert.deepEqual(objs.at(-1).servers, 5);
  assert.deepEqual([objs.at(-1).ok, objs.at(-1).failed], [1, 4]);
  assert.equal(res.status, 3); // three servers never finished the handshake
  assert.ok(took < 4500, `three 1.5 s deadlines took ${took} ms: not in parallel`);
  const left = fs.readdirSync('/proc').filter((p) => /^\d+$/.test(p)).filter((p) => {
    try {
      return fs.readFileSync(`/proc/${p}/cmdline`, 'utf8').includes(marker)
        && !/^\S+ \(.*\) [ZX]/.test(fs.readFileSync(`/proc/${p}/stat`, 'utf8'));
    } catch {
      return false;
    }
  });
  assert.deepEqual(left, [], 'a timed-out server outlived the command');
});

test('many servers at once: every one pinged, nothing on stderr', async () => {
  const servers = Object.fromEntries(Array.from({ length: 16 }, (_, i) => [`demo${i}`, DEMO]));
  const res = await cli(['--config', write('many.json', { mcpServers: servers }), '--json', '-c', '3', '-i', '0.05']);
  assert.equal(res.status, 0, res.stderr);
  assert.equal(res.stderr, '');
  const rows_ = h.jsonLines(res.stdout).filter((o) => o.event === 'server');
  assert.deepEqual(rows_.map((o) => [o.name, o.status, o.received]), Object.keys(servers).map((n) => [n, 'ok', 3]));
});

test('secrets in env and headers reach the servers and nothing else', async () => {
  const web = await recorder();
  const log = path.join(tmp, 'records.jsonl');
  try {
    const file = write('secrets.json', {
      mcpServers: {
        'needs-token': { command: process.execPath, args: ['-e', NEEDS_TOKEN], env: { TOKEN: SECRET } },
        web: { type: 'http', url: web.url, headers: { Authorization: `Bearer ${SECRET}` } },
      },
    });
    for (const mode of [[], ['--json']]) {
      const res = await cli(['--config', file, '-c', '2', '-i', '0', '--log', log, ...mode]);
      assert.equal(res.status, 0, res.stdout + res.stderr);
      assert.ok(!(res.stdout + res.stderr).includes(SECRET));
    }
    assert.deepEqual([...new Set(web.seen)], [`Bearer ${SECRET}`]); // on every POST
    const text = fs.readFileSync(log, 'utf8');
    assert.ok(!text.includes(SECRET));
    const seen = new Set(h.jsonLines(text).map((r) => `${r.peer} ${r.event}`));
    assert.ok(seen.has('mcpping-demo ping_ok') && seen.has('recorder ping_ok'), [...seen].join(', '));
    const bad = write('wrong.json', { mcpServers: { 'needs-token': { command: process.execPath, args: ['-e', NEEDS_TOKEN], env: { TOKEN: 'wrong' } } } });
    assert.deepEqual(rows((await cli(['--config', bad])).stdout)['needs-token'].slice(4), ['handshake failed', 'server exited with status 4']);
  } finally {
    await web.stop();
  }
});

test('a server that says its secret on stderr shows stars, as watch masks it', async () => {
  const leaky = "process.stderr.write('token=' + process.env.TOKEN + '\\n'); process.exit(1)";
  const file = write('leaky.json', { mcpServers: { leaky: { command: process.execPath, args: ['-e', leaky], env: { TOKEN: SECRET, DEBUG: '1' } } } });
  for (const mode of [[], ['--json']]) {
    const res = await cli(['--config', file, '-c', '1', ...mode]);
    assert.equal(res.status, 3, res.stdout + res.stderr);
    assert.ok(!(res.stdout + res.stderr).includes(SECRET), res.stdout);
    assert.ok(res.stdout.includes('server exited with status 1; stderr: token=***'), res.stdout);
  }
});

test('--config auto reads the usual places and says which', async () => {
  const home = path.join(tmp, 'auto-home');
  const project = path.join(tmp, 'auto-project');
  const files = [
    write('auto-project/.mcp.json', { mcpServers: { 'project-demo': DEMO } }),
    write('auto-project/.vscode/mcp.json', { servers: { 'vscode-demo': { type: 'stdio', ...DEMO } } }),
    write('auto-home/.cursor/mcp.json', { mcpServers: { 'cursor-demo': DEMO } }),
    // Claude Code's user file: servers of this project ("local" scope) only.
    write('auto-home/.claude.json', { numStartups: 12, projects: { [project]: { mcpServers: { 'local-demo': DEMO } }, [path.join(tmp, 'elsewhere')]: { mcpServers: { other: DEMO } } } }),
  ];
  const env = { ...process.env, HOME: home };
  delete env.XDG_CONFIG_HOME;
  const res = await cli(['--config', 'auto', '-c', '1'], { cwd: project, env });
  assert.equal(res.status, 0, res.stdout + res.stderr);
  assert.deepEqual(res.stdout.split('\n').slice(0, 4), [
    `config ${files[0]}: 1 server`, `config ${files[1]}: 1 server`, `config ${files[3]}: 1 server`, `config ${files[2]}: 1 server`,
  ]);
  assert.deepEqual(Object.keys(rows(res.stdout)), ['project-demo', 'vscode-demo', 'local-demo', 'cursor-demo']);
  const local = h.jsonLines((await cli(['--config', files[3], '--json', '-c', '1'], { cwd: project, env })).stdout)[1];
  assert.equal(local.json_path, `$.projects[${JSON.stringify(project)}].mcpServers["local-demo"]`);
  const empty = path.join(tmp, 'auto-empty');
  fs.mkdirSync(empty);
  const none = await cli(['--config', 'auto'], { cwd: empty, env: { ...env, HOME: empty } });
  assert.equal(none.status, 2);
  assert.ok(none.stderr.startsWith(`mcpping: --config auto: no client config found in ${empty}/.mcp.json, `), none.stderr);
});

test('a bad config exits 2 naming the file and the JSON path', async () => {
  const file = write('.vscode/mcp.json', { servers: { ok: { type: 'stdio', command: 'x' }, bad: { type: 'stdio', command: 'x', args: ['--port', 8080] } } });
  const res = await cli(['--config', file]);
  assert.equal(res.status, 2);
  assert.equal(res.stdout, '');
  assert.equal(res.stderr, `mcpping: ${file}: $.servers.bad.args[1]: must be a string, got number\n`);
});

test('the reason column says timeout, ENOENT and the last stderr line; stdout noise is warned about', async () => {
  const file = write('reasons/c.json', {
    mcpServers: {
      frozen: { command: 'python3', args: ['-c', 'import time; time.sleep(30)'] }, // never answers
      missing: { command: '/nonexistent/mcp-server' },
      dies: peer('dies.py', ['--after', '0', '--stderr', 'fatal: port in use']),
      noisy: peer('garbage.py'),
      lsp: peer('misframed.py', ['--frame', 'lsp']),
    },
  });
  const res = await cli(['--config', file, '-c', '1', '-w', '3']);
  assert.equal(res.status, 3, res.stdout + res.stderr);
  const got = rows(res.stdout);
  assert.deepEqual(got.frozen.slice(4), ['timeout', 'no initialize result']);
  assert.equal(got.missing[4], 'spawn failed');
  assert.match(got.missing[5], /\(ENOENT\)$/);
  assert.deepEqual(got.dies.slice(4), ['handshake failed', 'server exited with status 3; stderr: fatal: port in use']);
  assert.deepEqual(got.noisy.slice(4), ['ok', '-']);
  assert.deepEqual(got.lsp.slice(4), ['timeout', 'no initialize result; the server wrote a line that is not JSON-RPC: "Content-Length: 146", '
    + 'then 146 bytes that no newline ends: "{\\"jsonrpc\\":\\"2.0\\",\\"id\\":\\"mcpping-1\\",\\"result\\":{\\"protocolVersion\\":\\"2..."']);
  // garbage.py: a line that is not JSON, one that is not UTF-8, and three
  // JSON objects that are no JSON-RPC message ({"a":1}): clients refuse all.
  assert.deepEqual(res.stdout.split('\n').filter((l) => l.startsWith('warning: noisy ')),
    ['warning: noisy printed 5 lines on stdout that are not JSON-RPC (a client may fail on them)']);
});
