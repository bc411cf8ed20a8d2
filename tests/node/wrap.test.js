'use strict';
// `mcpping wrap` (issue 13) under the official TS SDK's Client and its
// unmodified StdioClientTransport, against server-everything and
// mcp-server-time: bytes unchanged both ways, a stopped server answered
// for and restarted (with list_changed sent), and no server outliving its
// client. The Python and Node commands are compared in wrap_parity.test.js.
const test = require('node:test');
const assert = require('node:assert/strict');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { spawn, execFileSync } = require('node:child_process');
const { once } = require('node:events');
const { Client } = require('@modelcontextprotocol/sdk/client/index.js');
const { StdioClientTransport } = require('@modelcontextprotocol/sdk/client/stdio.js');
const { ToolListChangedNotificationSchema } = require('@modelcontextprotocol/sdk/types.js');
const h = require('./helpers');

const WRAP = [h.CLI, 'wrap'];
const PYTHON = process.env.MCPPING_TEST_PYTHON || 'python3';
const TEE = path.join(h.PEERS, 'tee.py');

/** The mcp-server-time console script beside the Python that runs the tests. */
function timeServer() {
  const bin = execFileSync(PYTHON, ['-c', 'import sys, os; print(os.path.dirname(sys.executable))']).toString().trim();
  return [path.join(bin, 'mcp-server-time')];
}

const tmp = () => fs.mkdtempSync(path.join(os.tmpdir(), 'mcpping-wrap-'));
const tee = (prefix, argv) => [PYTHON, TEE, prefix, '--', ...argv];
const wrapped = (argv, opts = []) => [process.execPath, ...WRAP, ...opts, '--', ...argv];
const lines = (file) => fs.readFileSync(file, 'latin1').split(/(?<=\n)/).filter(Boolean);
/** mcpping's own keepalive lines (our ids), which only the server sees. */
const ours = (line) => line.includes('"mcpp-');

async function session(argv, body) {
  const transport = new StdioClientTransport({ command: argv[0], args: argv.slice(1), stderr: 'inherit' });
  const client = new Client({ name: 'wrap-test', version: '1.0.0' });
  await client.connect(transport);
  try {
    return await body(client, transport);
  } finally {
    await client.close();
  }
}

const SERVERS = {
  'server-everything': {
    argv: () => [process.execPath, h.EVERYTHING, 'stdio'],
    async run(client) {
      const tools = await client.listTools();
      assert.ok(tools.tools.some((t) => t.name === 'echo'));
      const res = await client.callTool({ name: 'echo', arguments: { message: 'through the wrap' } });
      return res.content[0].text;
    },
  },
  'mcp-server-time': {
    argv: timeServer,
    async run(client) {
      const tools = await client.listTools();
      assert.deepEqual(tools.tools.map((t) => t.name).sort(), ['convert_time', 'get_current_time']);
      const res = await client.callTool({
        name: 'convert_time',
        arguments: { source_timezone: 'Etc/UTC', time: '12:00', target_timezone: 'Etc/GMT-9' },
      });
      return res.content[0].text;
    },
  },
};

for (const [name, server] of Object.entries(SERVERS)) {
  test(`TS SDK Client through mcpping wrap sees the bytes of a direct run (${name})`, async () => {
    const dir = tmp();
    const direct = path.join(dir, 'direct');
    const client = path.join(dir, 'client');
    const srv = path.join(dir, 'server');
    const plain = await session(tee(direct, server.argv()), server.run);
    const through = await session(tee(client, wrapped(tee(srv, server.argv()))), server.run);
    assert.equal(through, plain);
    // What the client sent is what the server got, and the reverse, in
    // order and byte for byte (our keepalive lines aside)...
    assert.deepEqual(lines(`${client}.up`), lines(`${srv}.up`).filter((l) => !ours(l)));
    assert.deepEqual(lines(`${client}.down`), lines(`${srv}.down`));
    // ...and the same bytes as without the wrap.
    assert.deepEqual(lines(`${client}.up`), lines(`${direct}.up`));
    assert.deepEqual(lines(`${client}.down`), lines(`${direct}.down`));
    assert.ok(lines(`${client}.up`).length >= 4);
  });
}

test('SIGSTOP during a tools/call: the call fails with the wrap error in time, the next works on a new server-everything', async () => {
  const dir = tmp();
  const log = path.join(dir, 'records.jsonl');
  const [interval, timeout, failures] = [1, 1, 2];
  const argv = wrapped([process.execPath, h.EVERYTHING, 'stdio'], ['--interval', '1', '--timeout', '1', '--failures', '2', '--log', log]);
  await session(argv, async (client, transport) => {
    let changed = 0;
    let gotChanged = () => {};
    client.setNotificationHandler(ToolListChangedNotificationSchema, () => {
      changed++;
      gotChanged();
    });
    assert.equal((await client.callTool({ name: 'echo', arguments: { message: 'a' } })).content[0].text, 'Echo: a');
    const before = changed;
    const listChanged = new Promise((resolve) => (gotChanged = resolve));
    const first = h.childOf(transport.pid);
    assert.ok(first > 0);
    process.kill(first, 'SIGSTOP');
    const started = Date.now();
    await assert.rejects(client.callTool({ name: 'echo', arguments: { message: 'never' } }), /server stopped responding; restarted/);
    const took = (Date.now() - started) / 1000;
    assert.ok(took <= interval + timeout * failures + 1, `took ${took} s`);
    // The next call reaches a new server: the wrap replayed the handshake.
    assert.equal((await client.callTool({ name: 'echo', arguments: { message: 'b' } })).content[0].text, 'Echo: b');
    // The client is told to refresh its lists (server-everything says
    // listChanged: true; test_wrap.py pins that the wrap sends it).
    if (changed === before) await h.within(listChanged, 5000, 'notifications/tools/list_changed');
    assert.ok(changed > before);
    const second = h.childOf(transport.pid);
    assert.ok(second > 0 && second !== first);
    assert.equal(h.exists(first), false);
  });
  const records = fs.readFileSync(log, 'utf8').trim().split('\n').map((l) => JSON.parse(l));
  assert.ok(records.some((r) => r.event === 'stale'));
  assert.deepEqual(records.filter((r) => r.event === 'reconnect').map((r) => r.reconnect_attempt), [1]);
});

test('SIGKILL of the client: a server ignoring SIGTERM and stdin EOF is gone within 2 s', async () => {
  const dir = tmp();
  const pidfile = path.join(dir, 'server.pid');
  // The client: a process that launches the wrap with pipes and waits.
  const client = spawn(process.execPath, ['-e', `
    const { spawn } = require('node:child_process');
    spawn(process.argv[1], process.argv.slice(2), { stdio: ['pipe', 'pipe', 'inherit'] });
    setInterval(() => {}, 1000);`, ...wrapped(['python3', path.join(h.PEERS, 'stubborn.py'), '--pidfile', pidfile])], { stdio: 'inherit' });
  const deadline = Date.now() + 20000;
  while (!fs.existsSync(pidfile)) {
    assert.ok(Date.now() < deadline, 'the server never started');
    await new Promise((r) => setTimeout(r, 20)); // a foreign process's readiness: nothing to await
  }
  const server = Number(fs.readFileSync(pidfile, 'utf8'));
  client.kill('SIGKILL');
  await once(client, 'exit');
  const killed = Date.now();
  while (h.exists(server) && Date.now() - killed < 5000) await new Promise((r) => setTimeout(r, 20));
  const gone = (Date.now() - killed) / 1000;
  assert.equal(h.exists(server), false);
  assert.ok(gone <= 2, `gone after ${gone} s`);
});
