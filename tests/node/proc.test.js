'use strict';
// The server's stderr in a Node host (issue 23): Node marks its fds 0-2
// close-on-exec, so a server spawned with stderr 'inherit' (the default of
// connect(), the SDK transport and `mcpping wrap` under Node) gets fd 2
// only through an explicit dup2. A server that logs to stderr at start and
// on every request must keep working, and its lines reach the host's stderr.
const test = require('node:test');
const assert = require('node:assert/strict');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { spawn } = require('node:child_process');
const { once } = require('node:events');
const h = require('./helpers');

const ECHO = path.join(h.PEERS, 'echo.py');
const tmp = () => fs.mkdtempSync(path.join(os.tmpdir(), 'mcpping-proc-'));

/** Runs argv with stdin, stdout piped and stderr to a file; resolves when it exits. */
async function withStderrFile(argv, body) {
  const dir = tmp();
  const errPath = path.join(dir, 'stderr');
  const errFd = fs.openSync(errPath, 'w');
  const child = spawn(argv[0], argv.slice(1), { stdio: ['pipe', 'pipe', errFd] });
  fs.closeSync(errFd);
  const exited = once(child, 'exit');
  const out = await body(child);
  const [code] = await h.within(exited, 60000, 'the host to exit');
  return { code, out, stderr: fs.readFileSync(errPath, 'utf8') };
}

// The host checks that its own fd 2 is close-on-exec (the condition under
// test), then talks to the server through connect() with the default stderr.
// The same work runs in a CommonJS host, an ES module host and a
// worker_threads host (fd 2 is the process's, shared by the worker).
const MCPPING = JSON.stringify(path.join(h.ROOT, 'node', 'index.js'));
const CLOEXEC_CHECK = `
const flags = parseInt(fs.readFileSync('/proc/self/fdinfo/2', 'utf8').match(/flags:\\s*(\\d+)/)[1], 8);
if (!(flags & 0o2000000)) throw new Error('fd 2 is not close-on-exec here');
`;
const WORK = `
(async () => {
  const peer = await mcpping.connect({ command: 'python3', args: [${JSON.stringify(ECHO)}, '--stderr', 'started'] });
  for (let i = 0; i < 3; i++) await peer.request('test/stderr', { text: 'log ' + i + '\\n' }, { timeoutMs: 10000 });
  await peer.ping();
  await peer.close();
  console.log('host done');
})().catch((err) => { console.log('host failed: ' + err.message); process.exitCode = 1; });
`;
const HOSTS = {
  CommonJS: ['-e', `const fs = require('node:fs');\nconst mcpping = require(${MCPPING});\n${CLOEXEC_CHECK}${WORK}`],
  'ES module': ['--input-type=module', '-e',
    `import fs from 'node:fs';\nimport { createRequire } from 'node:module';\nconst mcpping = createRequire(import.meta.url)(${MCPPING});\n${CLOEXEC_CHECK}${WORK}`],
  worker_threads: ['-e', `const fs = require('node:fs');\nconst { Worker } = require('node:worker_threads');\n${CLOEXEC_CHECK}
const w = new Worker(${JSON.stringify(`const mcpping = require(${MCPPING});\n${WORK}`)}, { eval: true });
w.on('exit', (code) => { process.exitCode = code; });`],
};

for (const [kind, args] of Object.entries(HOSTS)) {
  test(`connect() with stderr 'inherit' in a Node ${kind} host: a server logging to stderr keeps working`, async () => {
    const { code, out, stderr } = await withStderrFile([process.execPath, ...args], async (child) => {
      child.stdin.end();
      let text = '';
      child.stdout.on('data', (d) => { text += d; });
      await once(child.stdout, 'end');
      return text;
    });
    assert.equal(out, 'host done\n', stderr);
    assert.equal(code, 0);
    assert.deepEqual(stderr.split('\n').slice(0, 4), ['started', 'log 0', 'log 1', 'log 2'], stderr);
  });
}

test("mcpping wrap under Node: a server logging to stderr starts once and answers through the wrap", async () => {
  const argv = [process.execPath, h.CLI, 'wrap', '--', 'python3', ECHO, '--stderr', 'started'];
  const { code, out, stderr } = await withStderrFile(argv, async (child) => {
    let text = '';
    const answers = [];
    const waiters = [];
    child.stdout.on('data', (d) => {
      text += d;
      let nl;
      while ((nl = text.indexOf('\n')) >= 0) {
        answers.push(JSON.parse(text.slice(0, nl)));
        text = text.slice(nl + 1);
        while (waiters.length && answers.length) waiters.shift()(answers.shift());
      }
    });
    const next = () => h.within(new Promise((resolve) => {
      if (answers.length) resolve(answers.shift());
      else waiters.push(resolve);
    }), 20000, 'an answer through the wrap');
    const got = [];
    child.stdin.write('{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}\n');
    got.push(await next());
    child.stdin.write('{"jsonrpc":"2.0","method":"notifications/initialized"}\n');
    for (let i = 0; i < 3; i++) {
      child.stdin.write(`{"jsonrpc":"2.0","id":${i + 2},"method":"test/stderr","params":{"text":"log ${i}\\n"}}\n`);
      got.push(await next());
    }
    child.stdin.end();
    return got;
  });
  assert.equal(out[0].id, 1);
  assert.ok(out[0].result, JSON.stringify(out[0]));
  assert.deepEqual(out.slice(1).map((m) => [m.id, m.result]), [[2, {}], [3, {}], [4, {}]]);
  assert.equal(code, 0, stderr);
  // Started once (no restart), and every line reached the host's stderr.
  assert.deepEqual(stderr.split('\n').filter((l) => !l.startsWith('mcpping')).slice(0, 4),
    ['started', 'log 0', 'log 1', 'log 2'], stderr);
});

// killGraceMs 0 is no grace (issue 23): SIGKILL at once, no SIGTERM, as in
// Python and C. The server notes a SIGTERM in a file, so the test sees
// whether one came; with a grace the same server gets it (how this fails).
const NOTES_TERM = [
  'import signal, sys, time',
  'def noted(*_):',
  "    open(sys.argv[1], 'w').close()",
  'signal.signal(signal.SIGTERM, noted)',
  'print(\'{"jsonrpc":"2.0","method":"ready"}\', flush=True)',
  'while True:',
  '    time.sleep(0.01)',
].join('\n');

test('killGraceMs 0 SIGKILLs the server at once, without a SIGTERM; a grace sends the SIGTERM first', async () => {
  const mcpping = require('../../node');
  const noted = path.join(tmp(), 'term');
  for (const [killGraceMs, termed] of [[0, false], [300, true]]) {
    const peer = await mcpping.connect({ command: 'python3', args: ['-c', NOTES_TERM, noted], killGraceMs },
      { initialize: false });
    const [msg] = await h.within(once(peer, 'message'), 20000, 'the server to be ready');
    assert.equal(msg.method, 'ready');
    const info = await peer.close();
    assert.equal(info.termSignal, 9, JSON.stringify(info));
    assert.equal(fs.existsSync(noted), termed, `killGraceMs ${killGraceMs}`);
  }
});
