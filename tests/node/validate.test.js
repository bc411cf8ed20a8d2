'use strict';
// Every numeric option and argument is checked at the boundary: finite, an
// integer, in the engine's range. A bad one throws a TypeError/RangeError
// with code ERR_MCPPING_INVALID_ARG naming the parameter and the range;
// nothing is clamped, defaulted or wrapped, and nothing is sent.
const test = require('node:test');
const assert = require('node:assert/strict');
const { InMemoryTransport } = require('@modelcontextprotocol/sdk/inMemory.js');
const mcpping = require('../../node');
const h = require('./helpers');

const MAX_MS = 2147483647;
const BAD_MS = [-1, 0, 0.5, NaN, Infinity, -Infinity, 2 ** 32, MAX_MS + 1];

/**
 * An assert.rejects/throws matcher.
 * @param {ErrorConstructor} Kind
 * @param {RegExp} names what the message must name (the parameter, the range)
 */
function invalid(Kind, names) {
  return (err) => {
    assert.ok(err instanceof Kind, `${err && err.name}: ${err && err.message}`);
    assert.equal(err.code, 'ERR_MCPPING_INVALID_ARG');
    assert.match(err.message, names);
    return true;
  };
}

/** @param {number} v @returns {ErrorConstructor} */
const kindOf = (v) => (typeof v === 'number' ? RangeError : TypeError);

test('ping({timeoutMs}) refuses what is not an integer between 1 and 2147483647 ms, sends nothing, and the peer stays usable', async () => {
  const peer = await mcpping.connect(h.peer('echo.py'));
  try {
    for (const timeoutMs of [...BAD_MS, '100', 10n]) {
      await assert.rejects(peer.ping({ timeoutMs }), invalid(kindOf(timeoutMs), /^timeoutMs must be between 1 and 2147483647 ms, not /));
    }
    await assert.rejects(peer.ping({ signal: 'soon' }), invalid(TypeError, /signal must be an AbortSignal/));
    await assert.rejects(peer.ping(5000), invalid(TypeError, /ping options must be an object/));
    assert.equal(peer.stats.pingsSent, 0);
    // The bounds themselves are accepted.
    assert.ok((await peer.ping({ timeoutMs: MAX_MS })) > 0);
    assert.ok((await peer.ping({ timeoutMs: 60000 })) > 0);
    assert.equal(peer.stats.pingsSent, 2);
  } finally {
    await peer.close();
  }
});

test('request(), notify() and initialize() check their arguments before anything is sent', async () => {
  const peer = await mcpping.connect(h.peer('echo.py'));
  try {
    // Sends are queued to the I/O thread: a round trip first, so the
    // handshake's last frame is counted before the figure is taken.
    await peer.ping();
    const framesOut = peer.stats.framesOut;
    for (const timeoutMs of [-1, 0.5, NaN, Infinity, MAX_MS + 1]) {
      await assert.rejects(peer.request('echo', {}, { timeoutMs }), invalid(RangeError, /^timeoutMs must be 0 \(none\) or between 1 and 2147483647 ms, not /));
      await assert.rejects(peer.initialize({ timeoutMs }), invalid(RangeError, /timeoutMs/));
    }
    await assert.rejects(peer.request(42), invalid(TypeError, /method must be a non-empty string, not 42/));
    await assert.rejects(peer.request('echo', 'text'), invalid(TypeError, /params must be an object or an array/));
    assert.throws(() => peer.notify('', {}), invalid(TypeError, /method/));
    assert.equal(peer.stats.framesOut, framesOut);
    assert.deepEqual(await peer.request('echo', { a: 1 }, { timeoutMs: 0 }), { a: 1 });
  } finally {
    await peer.close();
  }
});

test('connect() refuses bad keepalive settings, killGraceMs and its own options, naming each', async () => {
  const cases = [
    [{ keepalive: { intervalMs: NaN } }, RangeError, /^keepalive\.intervalMs must be 0 \(off\) or between 1000 \(minIntervalMs\) and 2147483647 ms, not nan$/],
    [{ keepalive: { intervalMs: -1 } }, RangeError, /keepalive\.intervalMs/],
    [{ keepalive: { timeoutMs: Infinity } }, RangeError, /^keepalive\.timeoutMs must be between 1 and 2147483647 ms, not inf$/],
    [{ keepalive: { timeoutMs: 0 } }, RangeError, /keepalive\.timeoutMs/],
    [{ keepalive: { jitterPct: 500 } }, RangeError, /^keepalive\.jitterPct must be an integer between 0 and 100, not 500$/],
    [{ keepalive: { failures: 1.5 } }, RangeError, /^keepalive\.failures must be an integer between 1 and 1000, not 1\.5$/],
    [{ keepalive: { failures: '3' } }, TypeError, /^keepalive\.failures must be an integer between 1 and 1000, not \"3\"$/],
    [{ keepalive: { pauseThresholdMs: 2 ** 32 } }, RangeError, /keepalive\.pauseThresholdMs/],
    [{ keepalive: { requestTimeoutMs: -5 } }, RangeError, /^keepalive\.requestTimeoutMs must be 0 \(none\) or between 1 and 2147483647 ms, not -5$/],
    [{ keepalive: { maxOutstandingPings: 0 } }, RangeError, /^keepalive\.maxOutstandingPings must be an integer between 1 and 1048576, not 0$/],
    [{ keepalive: { maxLineBytes: 0 } }, RangeError, /keepalive\.maxLineBytes/],
    [{ keepalive: { clampInterval: 'yes' } }, TypeError, /keepalive\.clampInterval must be a boolean/],
    [{ keepalive: { onStale: 'kill' } }, TypeError, /^keepalive\.onStale must be 'close' or 'report', not "kill"$/],
    [{ keepalive: { intervalMS: 1000 } }, TypeError, /keepalive\.intervalMS is not an option; the options are intervalMs, /],
    [{ keepalive: 1000 }, TypeError, /keepalive must be an object/],
    [{ initializeTimeoutMs: -1 }, RangeError, /options\.initializeTimeoutMs/],
    [{ initialize: 'no' }, TypeError, /options\.initialize must be a boolean/],
    [{ inheritEnv: 0 }, TypeError, /options\.inheritEnv must be a boolean/],
    [{ records: 42 }, TypeError, /records must be a file path, a function or a writable stream/],
    // A misspelt option throws rather than being ignored (here: a 30 s handshake wait).
    [{ initTimeoutMs: 2000 }, TypeError, /options\.initTimeoutMs is not an option; the options are keepalive, .*initializeTimeoutMs/],
  ];
  for (const [options, Kind, names] of cases) {
    await assert.rejects(mcpping.connect(h.peer('echo.py'), options), invalid(Kind, names), JSON.stringify(options));
  }
  for (const killGraceMs of [-1, NaN, 2 ** 32, 0.5]) {
    await assert.rejects(mcpping.connect({ ...h.peer('echo.py'), killGraceMs }),
      invalid(RangeError, /^params\.killGraceMs must be 0 \(SIGKILL at once\) or between 1 and 2147483647 ms, not /));
  }
  await assert.rejects(mcpping.connect({ command: '' }), invalid(TypeError, /params\.command must be a non-empty string/));
  await assert.rejects(mcpping.connect({ command: 'python3', args: 'x.py' }), invalid(TypeError, /params\.args must be an array of strings/));
  await assert.rejects(mcpping.connect({ ...h.peer('echo.py'), stderr: 'tty' }), invalid(TypeError, /params\.stderr must be 'inherit' or 'pipe' or 'ignore'/));
  // The values at the edges of the ranges are accepted.
  const peer = await mcpping.connect({ ...h.peer('echo.py'), killGraceMs: MAX_MS }, {
    keepalive: { intervalMs: MAX_MS, timeoutMs: MAX_MS, failures: 1000, jitterPct: 100, pauseThresholdMs: 1, requestTimeoutMs: 0, maxOutstandingPings: 1 },
    initializeTimeoutMs: 0,
  });
  assert.ok((await peer.ping({ timeoutMs: 1000 })) > 0);
  peer.unref();
  await peer.close();
});

test('StdioClientTransport and guard() check options when constructed, and ping options when pinging', async () => {
  assert.throws(() => new mcpping.StdioClientTransport(h.peer('echo.py'), { keepalive: { timeoutMs: -1 } }), invalid(RangeError, /keepalive\.timeoutMs/));
  assert.throws(() => new mcpping.StdioClientTransport({ ...h.peer('echo.py'), killGraceMs: -1 }), invalid(RangeError, /params\.killGraceMs/));
  assert.throws(() => new mcpping.StdioClientTransport({ command: 7 }), invalid(TypeError, /StdioClientTransport: params\.command/));

  const transport = new mcpping.StdioClientTransport(h.peer('echo.py'));
  await transport.start();
  try {
    await assert.rejects(transport.ping({ timeoutMs: NaN }), invalid(RangeError, /timeoutMs/));
    assert.ok((await transport.ping({ timeoutMs: 2000 })) > 0);
  } finally {
    await transport.close();
  }

  const [a] = InMemoryTransport.createLinkedPair();
  assert.throws(() => mcpping.guard(a, { keepalive: { jitterPct: -1 } }), invalid(RangeError, /keepalive\.jitterPct/));
  assert.throws(() => mcpping.guard(a, { role: 'peer' }), invalid(TypeError, /options\.role must be 'client' or 'server'/));
  assert.throws(() => mcpping.guard(a, { transport: 'tcp' }), invalid(TypeError, /options\.transport/));
  const guarded = mcpping.guard(a);
  await assert.rejects(guarded.ping({ timeoutMs: -1 }), invalid(RangeError, /timeoutMs/));
  await assert.rejects(guarded.ping({ timeoutMs: 2 ** 32 }), invalid(RangeError, /timeoutMs/));
  assert.equal(guarded.stats.pingsSent, 0);
  await guarded.close();
});

test('every options object refuses a key it does not take, naming the ones it does', async () => {
  // A misspelling was ignored everywhere but connect(): ping({ timeotMs })
  // waited the default, guard({ peerNmae }) kept its guess.
  const refused = (what) => invalid(TypeError, new RegExp(`^options\\.${what} is not an option; the options are `));
  const [a] = InMemoryTransport.createLinkedPair();
  assert.throws(() => new mcpping.StdioClientTransport(h.peer('echo.py'), { requestTimeotMs: 5 }), refused('requestTimeotMs'));
  assert.throws(() => mcpping.guard(a, { peerNmae: 'x' }), refused('peerNmae'));
  assert.throws(() => mcpping.instrument({ path: [] }), refused('path'));
  assert.throws(() => new mcpping.SessionReaper({ streamGrace: 5 }), refused('streamGrace'));
  assert.throws(() => new mcpping.Peer(h.peer('echo.py'), { initialise: false }), refused('initialise'));
  await assert.rejects(mcpping.connect({ ...h.peer('echo.py'), arg: ['-v'] }),
    invalid(TypeError, /^params\.arg is not an option; the options are command, args, env, cwd, stderr, killGraceMs$/));
  // StdioClientTransport is a drop-in for the SDK's: its params are the SDK's, keys it ignores included.
  assert.ok(new mcpping.StdioClientTransport({ ...h.peer('echo.py'), restart: true }));
  const peer = await mcpping.connect(h.peer('echo.py'), { initialize: false });
  try {
    await assert.rejects(peer.ping({ timeotMs: 5 }), refused('timeotMs'));
    await assert.rejects(peer.request('ping', {}, { timeotMs: 5 }), refused('timeotMs'));
    await assert.rejects(peer.initialize({ timeotMs: 5 }), refused('timeotMs'));
    assert.equal(peer.stats.pingsSent, 0);
    assert.deepEqual(await peer.request('ping', {}, { timeoutMs: 5000 }), {});
  } finally {
    await peer.close();
  }
  const guarded = mcpping.guard(a);
  await assert.rejects(guarded.ping({ timeot: 5 }), refused('timeot'));
  await guarded.close();
});

// The Node half of tests/fixtures/setting_sentences.json (the Python half is
// in tests/python/test_validation.py): each bad value is refused with C's
// sentence, shown in ms, so both bindings say the same thing.
test('a bad setting gets the sentence Python gives too (the C settings table)', () => {
  const { cases } = JSON.parse(require('node:fs').readFileSync(require('node:path').join(__dirname, '..', 'fixtures', 'setting_sentences.json'), 'utf8'));
  const FLOORS = { interval_ms: 'minIntervalMs', 'reconnect.max_delay_ms': 'initialMs' };
  for (const c of cases) {
    const reconnect = c.setting.startsWith('reconnect.');
    const key = c.setting.replace(/^reconnect\./, '').replace(/_([a-z])/g, (_, x) => x.toUpperCase());
    const options = reconnect ? { reconnect: { [key]: c.value } } : { keepalive: { [key]: c.value } };
    const wanted = c.sentence.replace(/\{(-?[\d.]+)\}/g, '$1')
      .replace('{name}', `${reconnect ? 'reconnect' : 'keepalive'}.${key}`)
      .replace('{floor}', FLOORS[c.setting] || '').replace('{unit}', 'ms');
    assert.throws(() => new mcpping.StdioClientTransport(h.peer('echo.py'), options),
      (err) => err instanceof RangeError && err.message === wanted &&
        err.code === (c.setting === 'interval_ms' && c.value > 0 ? 'MCPP_ERR_INTERVAL_TOO_SHORT' : 'ERR_MCPPING_INVALID_ARG'),
      `${JSON.stringify(options)}: ${wanted}`);
  }
});
