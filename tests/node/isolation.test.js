'use strict';
// What user code throws (a listener, a record sink, a record file on a full
// disk, an SDK callback) goes to the 'error' event, or is an
// uncaughtException without one; it never loses the other listeners, the
// connection's outcomes, another connection's items or a close.
const test = require('node:test');
const assert = require('node:assert/strict');
const { Client } = require('@modelcontextprotocol/sdk/client/index.js');
const sdkStdio = require('@modelcontextprotocol/sdk/client/stdio.js');
const mcpping = require('../../node');
const h = require('./helpers');

test('throwing listeners and record sinks are reported on error; pings, the other listeners, another peer and both closes still happen', async () => {
  const errors = [];
  const sinkRecords = [];
  const a = await mcpping.connect(h.peer('echo.py'), {
    records: (r) => {
      sinkRecords.push(r.event);
      throw new Error(`sink ${r.event}`);
    },
  });
  const b = await mcpping.connect(h.peer('echo.py'));
  a.on('error', (err) => errors.push(err.message));
  const seen = [];
  a.on('pong', () => {
    throw new Error('pong listener');
  });
  a.on('pong', () => seen.push('second pong listener'));
  a.once('record', () => {
    throw new Error('record listener');
  });
  a.on('pong', async () => {
    throw new Error('async pong listener');
  });
  a.on('closed', () => {
    throw new Error('closed listener');
  });
  const [rttA, rttB] = await h.within(Promise.all([a.ping(), b.ping()]), 5000, 'both pings');
  assert.ok(rttA > 0 && rttB > 0);
  assert.deepEqual(seen, ['second pong listener']);
  const closed = await h.within(Promise.all([a.close(), b.close()]), 5000, 'both closes');
  assert.equal(closed[0].error, null);
  assert.equal(closed[1].error, null);
  // The async listener's rejection arrives a tick later.
  while (!errors.includes('async pong listener')) await new Promise(setImmediate);
  assert.deepEqual(sinkRecords, ['ping_ok', 'closed']);
  assert.deepEqual([...errors].sort(), [
    'async pong listener', 'closed listener', 'pong listener', 'record listener', 'sink closed', 'sink ping_ok',
  ]);
  assert.equal(a.state, 'closed');
});

test('a record file that cannot be written (/dev/full) is reported on error, and the connection works on', async () => {
  const peer = await mcpping.connect(h.peer('echo.py'), { records: '/dev/full' });
  const errors = [];
  peer.on('error', (err) => errors.push(err.code));
  assert.ok((await peer.ping()) > 0);
  assert.deepEqual(await peer.request('echo', { n: 1 }), { n: 1 });
  await h.within(peer.close(), 5000, 'close');
  assert.deepEqual(errors, ['ENOSPC', 'ENOSPC']);
});

test('without an error listener, a throwing listener is an uncaughtException after delivery: the ping and the close still settle', async () => {
  const source = `
    const mcpping = require(${JSON.stringify(h.ROOT)} + '/node');
    const uncaught = [];
    process.on('uncaughtException', (err) => uncaught.push(err.message));
    (async () => {
      const peer = await mcpping.connect(${JSON.stringify(h.peer('echo.py'))});
      peer.on('pong', () => { throw new Error('pong listener'); });
      const rtt = await peer.ping();
      const info = await peer.close();
      console.log(JSON.stringify({ rtt, reason: info.reason, uncaught }));
    })();
  `;
  const res = await h.run(process.execPath, ['-e', source], { timeoutMs: 20000 });
  assert.equal(res.status, 0, res.stderr);
  const out = JSON.parse(res.stdout);
  assert.ok(out.rtt > 0);
  assert.deepEqual(out.uncaught, ['pong listener']);
});

test('StdioClientTransport: an onmessage that throws goes to onerror (as in the SDK\'s transports) and the next messages still arrive', async () => {
  const transport = new mcpping.StdioClientTransport(h.peer('echo.py'));
  const client = new Client({ name: 'mcpping-test', version: '1.0.0' });
  const errors = [];
  client.onerror = (err) => errors.push(err.message);
  await client.connect(transport);
  try {
    const sdkOnMessage = transport.onmessage;
    let thrown = 0;
    transport.onmessage = (message) => {
      if (thrown++ === 0) throw new Error('onmessage');
      sdkOnMessage(message);
    };
    // The first answer is lost to the throwing handler (the application's
    // own doing); the connection, its pings and the next answer are not.
    const first = client.request({ method: 'tools/list' }, require('@modelcontextprotocol/sdk/types.js').ListToolsResultSchema, { timeout: 300 });
    await assert.rejects(first, /timed out/i);
    assert.deepEqual(errors.filter((e) => e === 'onmessage'), ['onmessage']);
    assert.ok((await transport.ping()) > 0);
    const { tools } = await client.listTools();
    assert.ok(Array.isArray(tools));
  } finally {
    await client.close();
  }
});

test('guard(): a throwing listener and record sink run inside the engine\'s callbacks; they are reported and the SDK session goes on', async () => {
  const inner = new sdkStdio.StdioClientTransport(h.sdkServer());
  const guarded = mcpping.guard(inner, {
    records: () => {
      throw new Error('sink');
    },
  });
  const errors = [];
  guarded.on('error', (err) => errors.push(err.message));
  guarded.on('pong', () => {
    throw new Error('pong listener');
  });
  const client = new Client({ name: 'mcpping-test', version: '1.0.0' });
  await client.connect(guarded);
  try {
    assert.ok((await guarded.ping({ timeoutMs: 2000 })) >= 0);
    const res = await client.callTool({ name: 'echo', arguments: { text: 'still here' } });
    assert.equal(res.content[0].text, 'still here');
    assert.deepEqual(errors.sort(), ['pong listener', 'sink']);
  } finally {
    await client.close();
  }
});
