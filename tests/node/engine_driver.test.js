'use strict';
// EngineDriver: the sans-I/O engine driven on the JavaScript thread. Calls
// nest when a synchronous transport feeds the engine from inside one of its
// callbacks; nothing the outer call emits afterwards may be lost.
const test = require('node:test');
const assert = require('node:assert/strict');
const { EngineDriver, nowUs, SINK_SEND, SINK_EVENT } = require('../../node/engine_driver');
const { binding } = require('../../node/runtime');
const { toNativeSettings } = require('../../node/settings');

/** A driver whose transport answers each ping at once, inside the write. */
function syncPeer(opts = {}) {
  const seen = [];
  const driver = new EngineDriver({
    role: 'client',
    transport: 'custom',
    keepalive: null,
    records: (r) => seen.push(`record:${r.event}`),
    ...opts,
    write: (frame) => {
      const msg = JSON.parse(frame);
      if (msg.method === 'ping') driver.recv(JSON.stringify({ jsonrpc: '2.0', id: msg.id, result: {} }));
    },
  });
  for (const name of ['ping', 'pong']) driver.on(name, () => seen.push(name));
  return { driver, seen };
}

test('a pong fed back inside engine.ping settles the ping and loses none of the outer call\'s events', async () => {
  const { driver, seen } = syncPeer();
  try {
    const rtt = await driver.ping({ timeoutMs: 1000 });
    assert.ok(rtt >= 0 && rtt < 1000);
    // The ping event is emitted by the outer call after its write returned:
    // it reached the outer sink although an inner call ran meanwhile.
    assert.deepEqual([...seen].sort(), ['ping', 'pong', 'record:ping_ok']);
    assert.equal(driver.stats.pingsSent, 1);
    assert.equal(driver.stats.pongsReceived, 1);
    // The same again: the sink is not left in a state from the nesting.
    await driver.ping({ timeoutMs: 1000 });
    assert.equal(seen.filter((n) => n === 'ping').length, 2);
    assert.equal(seen.filter((n) => n === 'pong').length, 2);
  } finally {
    driver.close();
  }
});

test('the Engine binding: a nested call has its own sink, and the outer call\'s comes back after it', () => {
  const settings = toNativeSettings(null, { role: 'client', transport: 'custom' });
  const engine = new binding.Engine(settings, nowUs(), () => {});
  const outer = [];
  let innerError = null;
  const innerSink = (kind, ev) => {
    if (kind === SINK_EVENT && ev.type === 'pong') throw new Error('thrown by the inner sink');
  };
  const outerSink = (kind, a, b) => {
    outer.push(kind === SINK_EVENT ? a.type : kind);
    if (kind !== SINK_SEND) return;
    const pong = JSON.stringify({ jsonrpc: '2.0', id: JSON.parse(b).id, result: {} });
    try {
      engine.recv(pong, nowUs(), innerSink);
    } catch (err) {
      innerError = err;
    }
  };
  try {
    engine.ping(1000, nowUs(), outerSink);
    // The inner call's sink threw: its own caller got it, the outer call did not.
    assert.match(innerError && innerError.message, /thrown by the inner sink/);
    // The pong went to the inner sink; the ping event, emitted by the outer
    // call after its send returned, to the outer one.
    assert.deepEqual(outer, [SINK_SEND, 'ping']);
  } finally {
    engine.free();
  }
});
