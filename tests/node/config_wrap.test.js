'use strict';
// `mcpping --config FILE --wrap --write` from the Node command (issue 24):
// the written config starts as a desktop client starts it (PATH=/usr/bin:/bin
// and nothing else), and a config whose wrapped entry would not start is not
// written at all.
const test = require('node:test');
const assert = require('node:assert/strict');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const h = require('./helpers');

const MINIMAL_ENV = { PATH: '/usr/bin:/bin' };
const ECHO = [process.env.MCPPING_TEST_PYTHON || 'python3', path.join(h.PEERS, 'echo.py')];

function configFile(servers) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'mcpping-cwn-'));
  const file = path.join(dir, 'claude_desktop_config.json');
  const text = JSON.stringify({ mcpServers: servers });
  fs.writeFileSync(file, text);
  return { file, text };
}

test('--wrap --write: the written config starts under env -i PATH=/usr/bin:/bin', async () => {
  const python = require('node:child_process').execFileSync('sh', ['-c', `command -v ${ECHO[0]}`]).toString().trim();
  const { file } = configFile({ echo: { command: python, args: ECHO.slice(1) } });
  const w = await h.run(process.execPath, [h.CLI, '--config', file, '--wrap', '--write']);
  assert.equal(w.status, 0, w.stderr);
  const entry = JSON.parse(fs.readFileSync(file, 'utf8')).mcpServers.echo;
  assert.deepEqual([entry.command, ...entry.args], [process.execPath, h.CLI, 'wrap', '--name', 'echo', '--', python, ...ECHO.slice(1)]);
  // The check spawns each server with its own environment: the minimal one.
  const check = await h.run(process.execPath, [h.CLI, '--config', file, '--json', '-c', '2', '-w', '20'], { env: MINIMAL_ENV });
  const rows = h.jsonLines(check.stdout).filter((r) => r.event === 'server' && r.name === 'echo');
  assert.equal(rows.length, 1, check.stdout + check.stderr);
  assert.deepEqual([rows[0].status, rows[0].sent, rows[0].received], ['ok', 2, 2]);
});

test('--wrap --write refuses, exit 3 and one line, a config whose wrapped entry would not start', async () => {
  const { file, text } = configFile({ ghost: { command: '/nonexistent/mcp-server' } });
  const r = await h.run(process.execPath, [h.CLI, '--config', file, '--wrap', '--write']);
  assert.equal(r.status, 3, r.stderr);
  assert.match(r.stderr, /^mcpping: [^\n]*: not written: server 'ghost' would not start wrapped \([^\n]+\)\n$/);
  assert.match(r.stderr, /cannot start \/nonexistent\/mcp-server: no such file or directory \(ENOENT\)\)\n$/);
  assert.equal(fs.readFileSync(file, 'utf8'), text);
  assert.equal(fs.existsSync(`${file}.bak`), false);
});

test('--command PATH overrides the launcher, and a launcher that does not exist is refused', async () => {
  const { file, text } = configFile({ echo: { command: ECHO[0], args: ECHO.slice(1) } });
  const p = await h.run(process.execPath, [h.CLI, '--config', file, '--wrap', '--command', '/opt/bin/mcpping']);
  assert.equal(p.status, 0, p.stderr);
  assert.deepEqual(JSON.parse(p.stdout).mcpServers.echo.args.slice(0, 4), ['wrap', '--name', 'echo', '--']);
  assert.equal(JSON.parse(p.stdout).mcpServers.echo.command, '/opt/bin/mcpping');
  const r = await h.run(process.execPath, [h.CLI, '--config', file, '--wrap', '--write', '--command', '/nonexistent/mcpping']);
  assert.equal(r.status, 3, r.stderr);
  assert.equal(fs.readFileSync(file, 'utf8'), text);
});
