'use strict';
// `mcpping wrap` from the Node and the Python command: the same proxy (C),
// so the same bytes out, the same messages, the same exit statuses. The
// Python command is installed by `make test-python`, which runs first.
const test = require('node:test');
const assert = require('node:assert/strict');
const { spawn } = require('node:child_process');
const path = require('node:path');
const h = require('./helpers');

const PYTHON = process.env.MCPPING_TEST_PYTHON || 'python3';
const COMMANDS = {
  node: [process.execPath, h.CLI, 'wrap'],
  python: [PYTHON, '-m', 'mcpping', 'wrap'],
};

/** Runs one command with `input` on stdin; resolves {status, stdout, stderr}. */
function wrapRun(cmd, args, input) {
  return new Promise((resolve, reject) => {
    const child = spawn(cmd[0], [...cmd.slice(1), ...args], { cwd: h.ROOT, stdio: ['pipe', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d) => (stdout += d));
    child.stderr.on('data', (d) => (stderr += d));
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`${cmd.join(' ')} ${args.join(' ')} did not finish; stderr: ${stderr}`));
    }, 30000);
    child.on('error', reject);
    child.on('close', (status) => {
      clearTimeout(timer);
      resolve({ status, stdout, stderr });
    });
    child.stdin.end(input);
  });
}

async function both(args, input = '') {
  const [js, py] = await Promise.all([wrapRun(COMMANDS.node, args, input), wrapRun(COMMANDS.python, args, input)]);
  return { js, py };
}

const echo = ['--', 'python3', path.join(h.PEERS, 'echo.py')];
const SESSION = [
  '{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}',
  '{"jsonrpc":"2.0","method":"notifications/initialized"}',
  '{"jsonrpc":"2.0","id":"big","method":"echo","params":{"n":12345678901234567890,"s":"caf\\u00e9 \u00e9"}}',
  '{"jsonrpc":"2.0","id":2,"method":"ping"}',
  '{ "jsonrpc" : "2.0", "id" : 3, "method" : "tools/call", "params" : { "name" : "x" } }',
].join('\n') + '\n';

test('the same session through both commands gives the same bytes', async () => {
  const { js, py } = await both(echo, SESSION);
  assert.equal(js.status, 0, js.stderr);
  assert.equal(py.status, 0, py.stderr);
  assert.equal(js.stdout, py.stdout);
  const answers = h.jsonLines(js.stdout).filter((m) => 'id' in m);
  assert.deepEqual(answers.map((m) => m.id), [1, 'big', 2, 3]);
});

test('the same help text', async () => {
  const { js, py } = await both(['--help']);
  assert.equal(js.status, 0);
  assert.equal(py.status, 0);
  assert.equal(js.stdout, py.stdout);
  assert.match(js.stdout, /--no-restart/);
});

test('--no-restart: the same answer, message and status when the server exits', async () => {
  const args = ['--no-restart', '--', 'python3', path.join(h.PEERS, 'dies.py'), '--after', '1'];
  // Keep stdin open until the answer is read: a client that closed its
  // input is gone, and nothing would be restarted anyway.
  const run = (cmd) => new Promise((resolve, reject) => {
    const child = spawn(cmd[0], [...cmd.slice(1), ...args], { cwd: h.ROOT, stdio: ['pipe', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d) => (stdout += d));
    child.stderr.on('data', (d) => (stderr += d));
    child.on('error', reject);
    child.on('close', (status) => resolve({ status, stdout, stderr }));
    child.stdin.write('{"jsonrpc":"2.0","id":9,"method":"tools/call","params":{"name":"x"}}\n');
  });
  const [js, py] = await h.within(Promise.all([run(COMMANDS.node), run(COMMANDS.python)]), 30000, 'both wraps to exit');
  assert.equal(js.status, 1);
  assert.equal(py.status, 1);
  assert.equal(js.stdout, py.stdout);
  assert.equal(js.stderr, py.stderr);
  assert.equal(JSON.parse(js.stdout).error.message, 'server exited');
  assert.match(js.stderr, /^mcpping wrap: server exited with status 3; not restarting \(--no-restart\)\n$/);
});

for (const args of [
  ['--interval', 'x', '--', 'true'],
  ['--timeout', '0', '--', 'true'],
  ['--timeout', '-1', '--', 'true'],
  ['--failures', '0', '--', 'true'],
  ['--failures', '1001', '--', 'true'],
  ['--interval', '0.5', '--', 'true'],
  ['--bogus', '--', 'true'],
  [],
  ['--', '/nonexistent/server'],
  ['--metrics', '10.1.2.3:9', '--', 'true'],
  ['--log', '/nonexistent/dir/log', '--', 'true'],
]) {
  test(`bad command line ${JSON.stringify(args)}: exit 2 and one line from both`, async () => {
    const { js, py } = await both(args);
    assert.equal(js.status, 2, js.stderr);
    assert.equal(py.status, 2, py.stderr);
    for (const err of [js.stderr, py.stderr]) assert.match(err, /^mcpping wrap: [^\n]+\n$/);
    // The checks that live in C say it in the same words (the settings' too:
    // the C settings table); only a bad token is quoted in each language's way.
    if (!args.some((a) => a === '--bogus' || a === 'x')) assert.equal(js.stderr, py.stderr);
  });
}

// --config FILE --wrap/--unwrap: the same bytes printed and written.
const fs = require('node:fs');
const os = require('node:os');
const CONFIGS = {
  'claude_desktop_config.json': JSON.stringify({ mcpServers: { time: { command: 'uvx', args: ['mcp-server-time'], env: { TZ: 'UTC' } }, 'a b': { command: 'x' } } }, null, 2),
  '.mcp.json': JSON.stringify({ mcpServers: { echo: { type: 'stdio', command: 'python3', args: ['echo.py'] }, remote: { type: 'http', url: 'https://example.com/mcp' } } }),
  '.cursor/mcp.json': JSON.stringify({ mcpServers: { web: { url: 'https://example.com/mcp' }, bare: { command: 'only' }, done: { command: 'mcpping', args: ['wrap', '--log', 'l', '--', 'srv', '-v'] } } }),
  '.vscode/mcp.json': '{\n  // jsonc\n  "servers": {"t": {"type": "stdio", "command": "caf\u00e9", "args": ["\u00e9", "1.0"],},},\n}\n',
  'settings.json': JSON.stringify({ 'editor.fontSize': 12, mcp: { servers: { e: { command: 'e', args: [] } } } }),
};

// Each command writes its own launcher (issue 24), so --command names one for
// both where bytes are compared; --write refuses these entries (their
// launcher does not exist), the same lines from both.
const LAUNCHER = '/opt/mcpping/bin/mcpping';

for (const [name, text] of Object.entries(CONFIGS)) {
  test(`--config ${name} --wrap, --unwrap and --write: the same bytes from both commands`, async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'mcpping-cw-'));
    const file = path.join(dir, name);
    fs.mkdirSync(path.dirname(file), { recursive: true });
    fs.writeFileSync(file, text);
    const run = (cmd, args) => h.run(cmd[0], [...cmd.slice(1), ...args], { timeoutMs: 30000 });
    const cli = { node: [process.execPath, h.CLI], python: [PYTHON, '-m', 'mcpping'] };
    for (const mode of ['--wrap', '--unwrap']) {
      const args = ['--config', file, mode, ...(mode === '--wrap' ? ['--command', LAUNCHER] : [])];
      const [js, py] = await Promise.all([run(cli.node, args), run(cli.python, args)]);
      assert.equal(js.status, 0, js.stderr);
      assert.equal(py.status, 0, py.stderr);
      assert.equal(js.stdout, py.stdout);
      assert.equal(js.stderr, py.stderr);
    }
    const args = ['--config', file, '--wrap', '--write', '--command', LAUNCHER];
    const [js, py] = await Promise.all([run(cli.node, args), run(cli.python, args)]);
    assert.equal(js.status, 3, js.stderr);
    assert.equal(py.status, 3, py.stderr);
    assert.equal(js.stderr, py.stderr); // C's refusal lines, the same reasons
    assert.equal(fs.readFileSync(file, 'utf8'), text);
    assert.equal(fs.existsSync(`${file}.bak`), false);
  });
}

test('--config --wrap --write: both commands write the same file but for their own launcher', async () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'mcpping-cw-'));
  const text = JSON.stringify({ mcpServers: { echo: { command: 'python3', args: [path.join(h.PEERS, 'echo.py')] } } });
  const file = path.join(dir, 'a.json');
  const copy = path.join(dir, 'b.json');
  fs.writeFileSync(file, text);
  fs.writeFileSync(copy, text);
  const run = (cmd, args) => h.run(cmd[0], [...cmd.slice(1), ...args], { timeoutMs: 30000 });
  const js = await run([process.execPath, h.CLI], ['--config', file, '--wrap', '--write']);
  const py = await run([PYTHON, '-m', 'mcpping'], ['--config', copy, '--wrap', '--write']);
  assert.equal(js.status, 0, js.stderr);
  assert.equal(py.status, 0, py.stderr);
  // Each launcher is absolute; past it, the same entry.
  const entry = (f) => JSON.parse(fs.readFileSync(f, 'utf8')).mcpServers.echo;
  const [je, pe] = [entry(file), entry(copy)];
  assert.deepEqual([je.command, ...je.args.slice(0, je.args.indexOf('wrap'))], [process.execPath, h.CLI]);
  assert.ok(path.isAbsolute(pe.command), pe.command);
  assert.deepEqual(je.args.slice(je.args.indexOf('wrap')), pe.args.slice(pe.args.indexOf('wrap')));
  assert.deepEqual(je.args.slice(je.args.indexOf('wrap'), 4 + je.args.indexOf('wrap')), ['wrap', '--name', 'echo', '--']);
  assert.equal(js.stderr.replaceAll(file, 'F'), py.stderr.replaceAll(copy, 'F'));
});
