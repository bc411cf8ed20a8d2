'use strict';
// `mcpping wrap` as people deploy it (issue 24 item 5), Node's command:
// the server's stderr passes through; a command that cannot start is reported with the OS error, to
// the client too; the config entry's name (--name) is `server` in records.
const test = require('node:test');
const assert = require('node:assert/strict');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { spawnSync } = require('node:child_process');
const h = require('./helpers');

const wrapped = (argv, opts = []) => [process.execPath, h.CLI, 'wrap', ...opts, '--', ...argv];
const tmp = () => fs.mkdtempSync(path.join(os.tmpdir(), 'mcpping-wrapfield-'));
const records = (log) => fs.readFileSync(log, 'utf8').trim().split('\n').map((l) => JSON.parse(l));
const INITIALIZE = '{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":' +
  '"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}\n';
const echoPeer = (...args) => ['python3', path.join(h.PEERS, 'echo.py'), ...args];
const run = (argv) => spawnSync(argv[0], argv.slice(1), { input: INITIALIZE, timeout: 30000 });

test('a missing command is answered with the OS error and said on stderr', () => {
  const p = run(wrapped(['/nonexistent/mcp-server', '--port', '1']));
  assert.equal(p.status, 2);
  const answer = JSON.parse(p.stdout.toString());
  const reason = 'cannot start /nonexistent/mcp-server: no such file or directory (ENOENT)';
  assert.equal(answer.id, 0);
  assert.equal(answer.error.message, 'server could not start');
  assert.deepEqual(answer.error.data, { mcpping: 'cancelled', reason });
  assert.equal(p.stderr.toString(), `mcpping wrap: ${reason}\n`);
});

test("the server's stderr passes through Node's wrap", () => {
  const p = run(wrapped(echoPeer('--stderr', 'hello from the server')));
  assert.equal(p.status, 0);
  assert.ok(p.stderr.toString().includes('hello from the server\n'), p.stderr.toString());
  assert.equal(JSON.parse(p.stdout.toString()).result.serverInfo.name, 'echo');
});

for (const name of [null, 'time-entry']) {
  test(`--name ${name} is the server field of records and peer stays the server's`, () => {
    const log = path.join(tmp(), 'records.jsonl');
    const p = run(wrapped(echoPeer('--name', 'srv'), [...(name ? ['--name', name] : []), '--log', log]));
    assert.equal(p.status, 0, p.stderr.toString());
    const rs = records(log);
    assert.equal(rs[rs.length - 1].event, 'closed');
    assert.deepEqual([...new Set(rs.map((r) => r.peer))], ['srv']);
    assert.deepEqual([...new Set(rs.map((r) => r.server))], [name || 'srv']);
  });
}
