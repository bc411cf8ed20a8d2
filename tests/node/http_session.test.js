'use strict';
// The CLI's Streamable HTTP session (node/http_session.js) against a fault
// server on loopback (tests/peers/http_fault.py): issue 8 item 11, a 404 is
// not always "unsupported".
const test = require('node:test');
const assert = require('node:assert/strict');
const { spawn } = require('node:child_process');
const path = require('node:path');
const readline = require('node:readline');
const { HttpSession } = require('../../node/http_session');
const { binding } = require('../../node/runtime');
const errors = require('../../node/errors');
const h = require('./helpers');

const INIT = { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'mcpping-test', version: '1' } };

/** Starts http_fault.py in `mode`; resolves with {url, stop}. */
async function faultServer(mode) {
  const child = spawn('python3', [path.join(h.ROOT, 'tests', 'peers', 'http_fault.py'), '--mode', mode], { stdio: ['ignore', 'pipe', 'inherit'] });
  const rl = readline.createInterface({ input: child.stdout });
  const [url] = await Promise.race([
    new Promise((resolve) => rl.once('line', (line) => resolve([line.trim()]))),
    new Promise((_, reject) => child.once('exit', (code) => reject(new Error(`http_fault.py exited ${code}`)))),
  ]);
  const exited = new Promise((resolve) => child.once('exit', resolve));
  return { url, stop: () => { rl.close(); child.kill(); return exited; } };
}

test('an answer without end is cut at the line bound and the request told, as Python does', async () => {
  // res.text() read it whole until the memory ran out.
  const server = await faultServer('endless');
  const s = new HttpSession(server.url);
  try {
    await s.initialize(INIT, 5000);
    await assert.rejects(s.request('tools/call', { name: 'x' }, 60000), (err) =>
      err.code === -32000 && err.message === "the server's answer is longer than 67108864 bytes (max_line_bytes)");
    assert.ok((await s.ping({ timeoutMs: 5000 })) > 0);
  } finally {
    await s.close();
    await server.stop();
  }
});

test('an expired session is initialized again and the ping answered', async () => {
  const server = await faultServer('expire');
  const records = [];
  const s = new HttpSession(server.url, { records: (r) => records.push(r) });
  try {
    await s.initialize(INIT, 5000);
    assert.equal(s.sessionId, 'session-1');
    const rtt = await s.ping({ timeoutMs: 5000 }); // meets the 404, re-initializes
    assert.ok(rtt > 0);
    assert.equal(s.sessionId, 'session-2');
    assert.ok((await s.ping({ timeoutMs: 5000 })) > 0);
    assert.equal(s.driver.stats.lossPct, 0);
  } finally {
    await s.close();
    await server.stop();
  }
  const events = records.map((r) => r.event);
  assert.ok(events.includes('reconnect'), events.join(','));
  assert.ok(!events.includes('ping_unsupported'), events.join(','));
  assert.equal(events.filter((e) => e === 'ping_ok').length, 2);
});

test('a 404 with -32601 is unsupported, and the session is kept', async () => {
  const server = await faultServer('unsupported');
  const s = new HttpSession(server.url);
  try {
    await s.initialize(INIT, 5000);
    await assert.rejects(s.ping({ timeoutMs: 5000 }), errors.PingUnsupportedError);
    assert.equal(s.sessionId, 'session-1');
  } finally {
    await s.close();
    await server.stop();
  }
});

test('the session machine is C\'s: its requests carry C\'s headers, a 404 renews the session, what waits goes in order', () => {
  const m = new binding.HttpSession('http://127.0.0.1:9/mcp', { Authorization: 'Bearer t', ACCEPT: 'text/html' }, 0, false);
  const init = '{"jsonrpc":"2.0","id":1,"method":"initialize"}';
  const [start, ...rest] = m.post(init, 1, true);
  assert.deepEqual(rest, []);
  assert.equal(start.do, 'start');
  assert.equal(start.method, 'POST');
  assert.equal(start.target, '/mcp');
  assert.equal(start.body, init);
  assert.equal(start.connectTimeoutMs, 60000);
  assert.deepEqual(Object.entries(start.headers), [
    ['Authorization', 'Bearer t'],
    ['Content-Type', 'application/json'],
    ['Accept', 'application/json, text/event-stream'],
  ]);
  assert.deepEqual(m.response(start.exchange, 200, 'application/json', 's1', null), [{ do: 'session', id: 's1' }]);
  assert.deepEqual(m.body(start.exchange, Buffer.from(' {"jsonrpc":"2.0","id":1,"result":{}}')), []);
  assert.deepEqual(m.end(start.exchange, false), [{ do: 'receive', data: '{"jsonrpc":"2.0","id":1,"result":{}}' }]);
  m.setVersion('2025-11-25');
  const ping = '{"jsonrpc":"2.0","id":"mcpping-ka-1","method":"ping"}';
  const call = '{"jsonrpc":"2.0","id":2,"method":"tools/call"}';
  const [p] = m.post(ping, 2, false);
  assert.equal(p.headers['Mcp-Session-Id'], 's1');
  assert.equal(p.headers['MCP-Protocol-Version'], '2025-11-25');
  m.response(p.exchange, 404, 'text/plain', null, null);
  assert.deepEqual(m.end(p.exchange, false), [{ do: 'session', id: null }, { do: 'renew' }]);
  assert.deepEqual(m.post(call, 3, false), []); // waits for the new session
  const again = m.renewed(true, null);
  assert.deepEqual(again.map((a) => [a.do, a.body]), [['start', ping], ['start', call]]);
  assert.equal(m.sessionId, null);
  assert.throws(() => m.post(1, 0, false), TypeError);
  assert.throws(() => m.settled(-1), RangeError);
  assert.throws(() => new binding.HttpSession('ftp://x/', {}, 0, false), { name: 'TypeError', message: 'is not an http:// or https:// URL' });
});

test('a header that cannot be sent is refused at construction', () => {
  assert.throws(() => new HttpSession('http://127.0.0.1:9/', { headers: { A: 1 } }), TypeError);
  // C's rule (mcpp_http_header_problem), at construction: no token name, or a CR/LF that would inject.
  assert.throws(() => new HttpSession('http://127.0.0.1:9/', { headers: { 'Bad Name': 'x' } }),
    { name: 'RangeError', message: /^headers: "Bad Name" is not an HTTP header name/ });
  assert.throws(() => new HttpSession('http://127.0.0.1:9/', { headers: { X: 'a\r\nInjected: 1' } }),
    { name: 'RangeError', message: /^headers: "X" has a control character in its value/ });
  // Past Latin-1: node:http threw ERR_INVALID_CHAR at each request, deep in the session.
  assert.throws(() => new HttpSession('http://127.0.0.1:9/', { headers: { X: '5 €' } }),
    { name: 'RangeError', message: /^headers: "X" has a character past Latin-1 in its value/ });
  assert.equal(binding.httpHeaderProblem('X', 'café'), null);
  assert.equal(binding.httpHeaderProblem('Authorization', 'Bearer t\tx'), null);
});

test('the caller\'s headers are sent but never replace the protocol\'s', async () => {
  // http_fault.py --mode strict answers 400 "bad header" unless each of
  // mcpping's headers comes once, as mcpping writes it, with the caller's
  // Authorization beside them.
  const server = await faultServer('strict');
  const forged = { Authorization: 'Bearer t', accept: 'text/html', 'MCP-SESSION-ID': 'forged', 'content-type': 'text/plain' };
  const s = new HttpSession(server.url, { headers: forged, listen: false });
  try {
    await s.initialize(INIT, 5000);
    assert.equal(s.sessionId, 'session-1');
    assert.ok((await s.ping({ timeoutMs: 5000 })) > 0);
    await assert.rejects(s.request('tools/list', {}, 5000), { code: -32601, message: 'Method not found' }); // not -32600 "bad header"
  } finally {
    await s.close();
    await server.stop();
  }
});

test('a URL mcpping would not open is refused at construction with C\'s sentence', () => {
  for (const [url, problem] of [
    ['ftp://h/mcp', 'is not an http:// or https:// URL'],
    ['http://[::1', 'has an IPv6 address without its closing ]'],
    ['http://127.0.0.1:99999/mcp', 'has a port that is not a number from 1 to 65535'],
    ['http://h/m cp', 'has a space, a control character'], // Node percent-encoded it; Python's POST thread died on it
  ]) {
    assert.throws(() => new HttpSession(url), (err) => err instanceof TypeError && err.code === 'ERR_INVALID_URL' &&
      err.message.startsWith(`url ${JSON.stringify(url)} ${problem}`));
  }
  assert.throws(() => new HttpSession(42), { name: 'TypeError', message: /^url must be a string/ });
  // A host WHATWG's parser refuses but a resolver may take is C's to judge, as in Python.
  assert.equal(new HttpSession('http://1.2.3.4.5:9/mcp').address, '1.2.3.4.5:9');
  assert.equal(new HttpSession('http://[::1]/mcp').address, '[::1]:80');
});

test('a URL\'s user and password go as Basic credentials; the caller\'s Authorization wins', async () => {
  // http_fault.py --mode strict takes Bearer t or Basic dTpwQA== (u:p@) only.
  const server = await faultServer('strict');
  try {
    const withCredentials = server.url.replace('http://', 'http://u:p%40@');
    const s = new HttpSession(withCredentials, { listen: false });
    try {
      await s.initialize(INIT, 5000);
      assert.equal(s.sessionId, 'session-1');
      assert.ok((await s.ping({ timeoutMs: 5000 })) > 0);
      assert.equal(s.address, new URL(server.url).host); // no credentials in the name
    } finally {
      await s.close();
    }
    const other = server.url.replace('http://', 'http://x:y@');
    const own = new HttpSession(other, { listen: false, headers: { authorization: 'Bearer t' } });
    try {
      await own.initialize(INIT, 5000);
      assert.ok((await own.ping({ timeoutMs: 5000 })) > 0);
    } finally {
      await own.close();
    }
    const refused = new HttpSession(other, { listen: false });
    try {
      await assert.rejects(refused.initialize(INIT, 5000), /bad header Authorization/);
    } finally {
      await refused.close();
    }
  } finally {
    await server.stop();
  }
});

test('close() cuts the POSTs still waiting on a frozen server, so the process can end', async () => {
  // A POST nobody answers held its socket (and the process) for good after
  // close(); Python's threads waited 60 s. The child must exit by itself.
  const server = await faultServer('freeze');
  try {
    const script = `
      const { HttpSession } = require(${JSON.stringify(path.join(h.ROOT, 'node', 'http_session'))});
      (async () => {
        const s = new HttpSession(process.argv[1], { listen: false });
        await s.initialize(${JSON.stringify(INIT)}, 5000);
        const waiting = s.request('tools/list', {}, 60000).catch((err) => err.name);
        await new Promise((resolve) => setImmediate(resolve));
        await s.close();
        console.log(await waiting);
      })();`;
    const r = await h.run(process.execPath, ['-e', script, server.url], { timeoutMs: 30000 });
    assert.equal(r.status, 0, r.stderr);
    assert.equal(r.stdout.trim(), 'ClosedError');
  } finally {
    await server.stop();
  }
});

test('a stale server\'s session is closed with the engine\'s reason, as in Python', async () => {
  const server = await faultServer('freeze');
  const keepalive = { intervalMs: 300, timeoutMs: 300, failures: 2, jitterPct: 0, minIntervalMs: 100 };
  const s = new HttpSession(server.url, { keepalive, listen: false });
  try {
    await s.initialize(INIT, 5000);
    const closed = new Promise((resolve) => s.driver.once('closed', resolve));
    const waiting = s.request('tools/list', {}, 60000);
    const ev = await closed;
    assert.equal(ev.message, 'the server went stale: 2 keepalive pings failed');
    assert.equal(ev.error, binding.errorCodes.MCPP_ERR_STALE);
    await assert.rejects(waiting, { name: 'ClosedError', message: 'the server went stale: 2 keepalive pings failed' });
    assert.equal(s.closed, true);
  } finally {
    await s.close();
    await server.stop();
  }
});

test('a server gone mid-session ends it with the reason Python gives too', async () => {
  const server = await faultServer('expire');
  // Credentials and a query (where secrets go) are never quoted: the reason
  // reaches the closed event and the governance records.
  const s = new HttpSession(`${server.url.replace('http://', 'http://u:sekrit@')}?token=sekrit`, { listen: false });
  try {
    await s.initialize(INIT, 5000);
    await server.stop();
    const closed = new Promise((resolve) => s.driver.once('closed', resolve));
    // The cause as the host names it: a pooled keep-alive socket is reset, a new one refused.
    const shown = `${server.url.replace('http://', 'http://***@')}?***`.replace(/[*?.]/g, '\\$&');
    const want = new RegExp(`^cannot reach ${shown}: (ECONNREFUSED|ECONNRESET)$`);
    // The ping in flight says so as on stdio; the session's close says why.
    await assert.rejects(s.ping({ timeoutMs: 5000 }), { name: 'ClosedError', message: binding.pingClosedMessage });
    assert.match((await closed).message, want);
    assert.equal(s.closed, true);
  } finally {
    await s.close();
  }
});

/** Starts the TS SDK's McpServer over Streamable HTTP; resolves with {url, stop}. */
async function sdkHttpServer(...args) {
  const child = spawn(process.execPath, [path.join(h.FIXTURES, 'sdk_http_server.mjs'), ...args], { stdio: ['ignore', 'pipe', 'inherit'] });
  const rl = readline.createInterface({ input: child.stdout });
  const url = await Promise.race([
    new Promise((resolve) => rl.once('line', (line) => resolve(line.trim()))),
    new Promise((_, reject) => child.once('exit', (code) => reject(new Error(`sdk_http_server.mjs exited ${code}`)))),
  ]);
  const exited = new Promise((resolve) => child.once('exit', resolve));
  return { url, stop: () => { rl.close(); child.kill(); return exited; } };
}

/** POSTs a ping on `session` by hand; resolves with the HTTP status. */
async function rawPing(url, session) {
  const res = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', 'mcp-session-id': session, 'mcp-protocol-version': '2025-11-25' },
    body: '{"jsonrpc":"2.0","id":1,"method":"ping"}',
  });
  await res.arrayBuffer();
  return res.status;
}

test('the TS SDK server pings on the GET listening stream and every ping is answered', async () => {
  const server = await sdkHttpServer();
  const records = [];
  const s = new HttpSession(server.url, { records: (r) => records.push(r) });
  try {
    await s.initialize(INIT, 5000);
    assert.equal(s.listening, true); // initialize returns once the GET stream is open
    const result = await s.request('tools/call', { name: 'ping_listener', arguments: { count: 3 } }, 20000);
    assert.equal(result.content[0].text, '3');
  } finally {
    await s.close();
    await server.stop();
  }
  const answered = records.filter((r) => r.event === 'ping_answered');
  assert.equal(answered.length, 3);
  assert.ok(answered.every((r) => r.session_id === s.sessionId && r.sender === 'server'));
});

test("a server's request is refused at once (-32601): the TS SDK server's tool is not left waiting", async () => {
  const server = await sdkHttpServer();
  const s = new HttpSession(server.url);
  try {
    await s.initialize(INIT, 5000);
    // The tool asks roots/list on its request's stream and waits at most 5 s.
    const result = await s.request('tools/call', { name: 'ask_roots', arguments: {} }, 20000);
    assert.equal(result.content[0].text, 'refused: -32601 Method not found');
  } finally {
    await s.close();
    await server.stop();
  }
});

test('close sends DELETE: the TS SDK server forgets the session', async () => {
  const server = await sdkHttpServer();
  const s = new HttpSession(server.url);
  try {
    await s.initialize(INIT, 5000);
    const sid = s.sessionId;
    assert.equal(await rawPing(server.url, sid), 200);
    await s.close();
    assert.equal(s.listening, false);
    assert.equal(await rawPing(server.url, sid), 404);
  } finally {
    await s.close();
    await server.stop();
  }
});

test('sequential requests share one kept-alive connection, as Python\'s do', async () => {
  // http_fault.py --mode keep-alive answers each ping on an event stream
  // that ends with its event (as the TS SDK's server does).
  const server = await faultServer('keep-alive');
  const s = new HttpSession(server.url, { listen: false });
  try {
    await s.initialize(INIT, 5000);
    for (let i = 0; i < 20; i++) assert.ok((await s.ping({ timeoutMs: 5000 })) >= 0);
    const figures = await s.request('tools/call', { name: 'figures', arguments: {} }, 10000);
    assert.deepEqual(figures.answered, { initialize: 1, ping: 20, 'tools/call': 1 });
    assert.deepEqual(figures.arrived, ['initialize', 'notifications/initialized', 'ping']);
    // One: each answer's last bytes reach the session once its socket is
    // back in the agent's pool (the next ping went on a second one before).
    assert.equal(figures.connections, 1, JSON.stringify(figures));
  } finally {
    await s.close();
    await server.stop();
  }
});

test('a kept-alive connection its server dropped sends the request again on a new one, as Python does', async () => {
  // http_fault.py --mode drop-idle reads the second request on a
  // connection and closes it with no answer: the request never ran.
  const server = await faultServer('drop-idle');
  const s = new HttpSession(server.url, { listen: false });
  try {
    await s.initialize(INIT, 5000);
    for (let i = 0; i < 10; i++) assert.ok((await s.ping({ timeoutMs: 5000 })) >= 0);
    const figures = await s.request('tools/call', { name: 'figures', arguments: {} }, 10000);
    assert.deepEqual(figures.answered, { initialize: 1, ping: 10, 'tools/call': 1 });
    assert.ok(figures.dropped >= 1, JSON.stringify(figures)); // the retries' own connections are not kept
  } finally {
    await s.close();
    await server.stop();
  }
});

test('a notification POST never answered holds the handshake no longer than its timeout, as in Python', async () => {
  // http_fault.py --mode mute-notifications never answers a notification's POST.
  const server = await faultServer('mute-notifications');
  const s = new HttpSession(server.url, { listen: false });
  try {
    await h.within(s.initialize(INIT, 1000), 10000, 'the handshake'); // not held for good (the bound is 1 s)
    assert.equal(s.protocolVersion, '2025-11-25');
    assert.ok((await s.ping({ timeoutMs: 5000 })) >= 0);
  } finally {
    await s.close();
    await server.stop();
  }
});

test('a server without GET (http_fault.py answers 501) is not asked again', async () => {
  const server = await faultServer('unsupported');
  const s = new HttpSession(server.url);
  try {
    await s.initialize(INIT, 5000);
    assert.equal(s.listening, false);
    assert.equal(s.listenWanted, false);
  } finally {
    await s.close();
    await server.stop();
  }
});

test('a listening stream that fails or is told to try later is opened again (C\'s rule, as Python follows it)', async () => {
  // http_fault.py --mode listen-later: the first GET is closed with no
  // answer, the second is a 503, the third opens, carries a ping and ends;
  // the fourth resumes it with Last-Event-ID after its retry. A 503 ended
  // listening for good.
  const server = await faultServer('listen-later');
  const s = new HttpSession(server.url);
  try {
    await s.initialize(INIT, 5000);
    const result = await s.request('tools/call', { name: 'gets' }, 30000);
    // The stream asked for a retry of 600 ms: it is not reopened sooner.
    assert.ok(result.reopened_after_ms >= 590, `reopened after ${result.reopened_after_ms} ms`);
    delete result.reopened_after_ms;
    assert.deepEqual(result, { gets: ['no answer', 503, 'stream', 'stream'], last_event_ids: [null, null, null, 'ev-1'], pong: true });
    assert.equal(s.listening, true);
  } finally {
    await s.close();
    await server.stop();
  }
});

test('a listening stream whose server never answers is given up after C\'s short timeout and opened again, as in Python', async () => {
  // http_fault.py --mode listen-held: the first GET is taken and never
  // answered (not even a status line); the second opens and carries a ping.
  // The first held the session's listening for good: no ping on it came.
  const server = await faultServer('listen-held');
  const s = new HttpSession(server.url);
  try {
    await s.initialize(INIT, 5000);
    const result = await s.request('tools/call', { name: 'gets' }, 30000);
    assert.deepEqual(result, { gets: ['held', 'stream'], pong: true });
    assert.equal(s.listening, true);
  } finally {
    await s.close();
    await server.stop();
  }
});

test('an answer ends its stream even when the server keeps it open, as in Python', async () => {
  // http_fault.py --mode sse-lingers: each answer's event stream is held
  // open after the answer until the client leaves; it held a socket per
  // request (the engine's pings included) for good.
  const server = await faultServer('sse-lingers');
  const s = new HttpSession(server.url);
  try {
    await s.initialize(INIT, 5000);
    for (let i = 0; i < 20; i++) await s.ping({ timeoutMs: 5000 });
    assert.deepEqual(await s.request('tools/list', {}, 5000), {});
    assert.deepEqual(await s.request('tools/call', { name: 'streams' }, 30000), { open_streams: 0 });
  } finally {
    await s.close();
    await server.stop();
  }
});

test('a POST whose answer the engine no longer awaits is cut (C\'s mcpp_engine_awaits), as in Python', async () => {
  // http_fault.py --mode deaf: pings (and calls asked to) hang until the
  // client leaves. A timed-out ping's or call's POST held its socket for good.
  const server = await faultServer('deaf');
  const s = new HttpSession(server.url, { listen: false });
  try {
    await s.initialize(INIT, 5000);
    for (let i = 0; i < 5; i++) await assert.rejects(s.ping({ timeoutMs: 100 }), /no answer to ping/);
    for (let i = 0; i < 3; i++) {
      await assert.rejects(s.request('tools/call', { name: 'x', arguments: { hang: true } }, 100), (err) => err.answerKind === 'timeout');
    }
    assert.deepEqual(await s.request('tools/call', { name: 'hung' }, 30000), { hung: 0 });
  } finally {
    await s.close();
    await server.stop();
  }
});

test('a connect the host never completes is bounded, as Python\'s socket timeout bounds it', async () => {
  // A listener that never accepts, its one-place backlog taken: the kernel
  // drops every further SYN, as a black-holed host does. A POST waited out
  // the kernel's retries (about two minutes); HttpSession gives each POST
  // C's MCPP_HTTP_POST_CONNECT_TIMEOUT_MS (60 s) through connectTimeoutMs.
  const { request } = require('../../node/http_request');
  const net = require('node:net');
  const child = spawn('python3', ['-c', 'import socket, time\ns = socket.socket()\ns.bind(("127.0.0.1", 0))\ns.listen(0)\n'
    + 'print(s.getsockname()[1], flush=True)\ntime.sleep(600)'], { stdio: ['ignore', 'pipe', 'inherit'] });
  const [line] = await Promise.race([
    new Promise((resolve) => readline.createInterface({ input: child.stdout }).once('line', (l) => resolve([l]))),
    new Promise((_, reject) => child.once('exit', (code) => reject(new Error(`listener exited ${code}`)))),
  ]);
  const port = Number(line);
  const filler = net.connect(port, '127.0.0.1');
  try {
    await new Promise((resolve, reject) => filler.once('connect', resolve).once('error', reject));
    const url = { https: false, host: '127.0.0.1', port, target: '/mcp' };
    await assert.rejects(request(url, { method: 'POST', body: '{}', connectTimeoutMs: 300 }),
      { code: 'ETIMEDOUT', message: 'no connection after 300 ms' });
  } finally {
    filler.destroy();
    child.kill();
  }
});

test('a stream the TS SDK server closes before the answer is resumed with Last-Event-ID (SEP-1699), as Python does', async () => {
  // The answer waited out the request's timeout; the priming events (an id,
  // no data) are proof of life, not messages.
  const server = await sdkHttpServer('--resumable');
  const s = new HttpSession(server.url);
  try {
    await s.initialize(INIT, 5000);
    const frames = s.driver.info().framesIn;
    const result = await s.request('tools/call', { name: 'close_stream', arguments: {} }, 10000);
    assert.equal(result.content[0].text, 'done');
    assert.equal(s.driver.info().framesIn, frames + 1);
    // Its deadline passes while the stream is resumed: the GET is cut, so
    // the session's close is not held by a request that has no answer left.
    await assert.rejects(s.request('tools/call', { name: 'close_stream', arguments: { ms: 60000 } }, 1000),
      (err) => err.answerKind === 'timeout' && err.code === -32001);
    // The engine timed it, as in Python: it left the in-flight ledger (and
    // notifications/cancelled went to the server); a JS timer left it there.
    assert.equal(s.driver.info().inFlight, 0);
    assert.equal(s.driver.info().appTimeouts, 1);
    assert.ok((await s.ping({ timeoutMs: 5000 })) > 0);
  } finally {
    await s.close();
    await server.stop();
  }
});

test('a request that meets its ended session is answered, and the next waits for a new one, as in Python', async () => {
  // The TS SDK server ends the session (a DELETE by hand; an idle timeout or
  // a restart does the same). The request that meets the 404 did not run:
  // it gets the server's answer now (it waited out its deadline), and the
  // handshake runs again; what is sent meanwhile waits for the new session
  // (it went without one, and met a 400). No listening stream: its
  // reopening after the DELETE meets the 404 too and can renew the session
  // first, as it did once in Python under load.
  const server = await sdkHttpServer();
  const records = [];
  const s = new HttpSession(server.url, { records: (r) => records.push(r), listen: false });
  try {
    await s.initialize(INIT, 5000);
    const first = s.sessionId;
    const res = await fetch(server.url, { method: 'DELETE', headers: { 'mcp-session-id': first, 'mcp-protocol-version': s.protocolVersion } });
    assert.equal(res.status, 200);
    await assert.rejects(s.request('tools/list', {}, 20000), (err) => err.message === 'Session not found' && err.answerKind === null);
    assert.equal(s.sessionId, null); // the handshake is running again
    const again = await s.request('tools/list', {}, 20000);
    assert.ok(again.tools.some((t) => t.name === 'close_stream'));
    assert.ok(s.sessionId !== null && s.sessionId !== first);
    assert.equal(s.driver.info().inFlight, 0);
    assert.equal(records.filter((r) => r.event === 'reconnect').length, 1);
  } finally {
    await s.close();
    await server.stop();
  }
});

test('a stream whose session ends before it is resumed is answered in doubt now, as in Python', async () => {
  // SEP-1699: the answer's stream ended after an event ID and the GET that
  // resumes it meets a 404 (the session is gone): the answer cannot come,
  // so the request rejects in doubt now, as a stdio Peer's does when its
  // server fails (it waited out its deadline), and the session is opened again.
  const server = await faultServer('expire-resume');
  const s = new HttpSession(server.url);
  try {
    await s.initialize(INIT, 5000);
    assert.equal(s.sessionId, 'session-1');
    await assert.rejects(s.request('tools/call', { name: 'work' }, 20000), (err) => err instanceof errors.RequestInDoubtError
      && err.disposition === 'in_doubt' && err.rpcCode === -32003 && err.rpcMessage.startsWith('Request in doubt (mcpping: ')
      && err.message === `tools/call: ${err.rpcMessage}`);
    assert.deepEqual(await s.request('tools/call', { name: 'work' }, 20000), { session: 'session-2' });
    assert.equal(s.driver.info().inFlight, 0);
  } finally {
    await s.close();
    await server.stop();
  }
});

for (const mode of ['sse-breaks', 'json-breaks']) test(`a request whose answer breaks without an event ID is in doubt at once, as in Python (${mode})`, async () => {
  // A server that dies mid-call, or a proxy that cuts a long call's
  // stream, breaks the answer (an SSE stream, or a JSON body) before its
  // end; with no event ID it cannot be resumed, so the answer has nowhere
  // left to come: the engine answers in doubt now (it waited out its
  // whole deadline), and the session goes on.
  const server = await faultServer(mode);
  const s = new HttpSession(server.url);
  try {
    await s.initialize(INIT, 5000);
    await assert.rejects(s.request('tools/call', { name: 'work' }, 60000),
      (err) => err instanceof errors.RequestInDoubtError && err.disposition === 'in_doubt');
    assert.equal(s.driver.info().inFlight, 0);
    assert.ok((await s.ping({ timeoutMs: 5000 })) > 0);
  } finally {
    await s.close();
    await server.stop();
  }
});

test('an initialize whose answer breaks is a closed connection, not a refusal, as in Python', async () => {
  // No server/discover after it: the handshake says the connection closed,
  // as it does for a stdio server that dies under it.
  const server = await faultServer('init-breaks');
  const s = new HttpSession(server.url);
  try {
    await assert.rejects(s.initialize(INIT, 5000),
      (err) => err.code === 'HANDSHAKE' && err.kind === 'closed' && err.message === 'the connection closed during initialize');
  } finally {
    await s.close();
    await server.stop();
  }
});

test('a restarted server-everything gets a new session at the next ping, as in Python', async () => {
  // The reference server forgets its sessions when it restarts and answers
  // the old one 400 "No valid session ID provided" (as every server built
  // on the TS SDK's examples), not 404: the ping failed, and every one
  // after it. A 400 to a ping on a session is the session's end (C's rule).
  let server = await h.startEverythingHttp();
  const port = Number(new URL(server.url).port);
  const s = new HttpSession(server.url);
  try {
    await s.initialize(INIT, 10000);
    const first = s.sessionId;
    assert.ok((await s.ping({ timeoutMs: 5000 })) > 0);
    await server.stop();
    server = await h.startEverythingHttp(port);
    assert.ok((await s.ping({ timeoutMs: 10000 })) > 0);
    assert.ok(s.sessionId !== null && s.sessionId !== first);
  } finally {
    await s.close();
    await server.stop();
  }
});

test('a server that refuses every session costs one handshake per ping, as in Python', async () => {
  // Each ping meets "Session not found" on every session: it is sent again
  // once, on a new session, then fails; no endless round of handshakes.
  const server = await faultServer('refuse-sessions');
  const s = new HttpSession(server.url);
  try {
    await s.initialize(INIT, 5000);
    await assert.rejects(s.ping({ timeoutMs: 5000 }), (err) => err instanceof errors.PingError && /Session not found/.test(err.message));
    // The first, the one the ping was sent again on, and the one its second
    // refusal opened (this request waited for it).
    assert.deepEqual(await s.request('tools/call', { name: 'sessions' }, 20000), { sessions: 3 });
  } finally {
    await s.close();
    await server.stop();
  }
});

test('the CLI ends its session with DELETE', async () => {
  const server = await sdkHttpServer();
  try {
    const res = await h.run(process.execPath, [h.CLI, '--json', '-c', '1', server.url]);
    assert.equal(res.status, 0, res.stderr);
    const [connected] = h.jsonLines(res.stdout);
    assert.ok(connected.session_id, 'session id printed');
    assert.equal(await rawPing(server.url, connected.session_id), 404);
  } finally {
    await server.stop();
  }
});

// A refused POST answers its request with the JSON-RPC error C makes of it
// (mcpp_http_error_answer): the server's own, or the status in words. Python
// says the same sentences (tests/python/test_http.py).
for (const [mode, why] of [
  ['unauthorized', '-32000 HTTP 401 Unauthorized'],
  ['refuse', '-32000 Bad Request: Server not initialized'],
]) {
  test(`a handshake refused by HTTP (${mode}) says why in the server's or HTTP's words`, async () => {
    const server = await faultServer(mode);
    const s = new HttpSession(server.url);
    try {
      await assert.rejects(s.initialize(INIT, 5000), {
        message: `initialize failed: ${why}; server/discover failed: ${why}`,
      });
    } finally {
      await s.close();
      await server.stop();
    }
  });
}

test('a byte order mark before an answer is refused as Python refuses it, and named', async () => {
  // A JSON body after a byte order mark: trim() dropped the mark and took
  // the body, where C and Python say it is not JSON.
  for (const [mode, timeoutMs, message] of [
    ['json-bom', 5000, 'initialize failed: -32000 the server answered HTTP 200 with application/json, not JSON; '
      + 'server/discover failed: -32000 the server answered HTTP 200 with application/json, not JSON'],
    ['sse-bom', 500, 'no initialize result after 0.5 s; the server sent a message that is not JSON-RPC (it starts with a byte order mark): '
      + '"\\ufeff{\\"jsonrpc\\": \\"2.0\\", \\"id\\": \\"mcpping-1\\", \\"result\\": {\\"protocolVer..."'],
  ]) {
    const server = await faultServer(mode);
    const s = new HttpSession(server.url);
    try {
      await assert.rejects(s.initialize(INIT, timeoutMs), (err) => {
        assert.equal(err.message, message);
        return true;
      });
    } finally {
      await s.close();
      await server.stop();
    }
  }
});
