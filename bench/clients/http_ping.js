'use strict';
/**
 * Block-protocol worker (bench/method.py): pings over Streamable HTTP from Node.
 *
 *   node http_ping.js mcpping|sdk|raw URL
 *
 * mcpping: node/http_session.js's HttpSession (no GET listening stream),
 * initialize, then s.ping(); sdk: the official TS SDK's Client over its
 * StreamableHTTPClientTransport, client.ping(); raw (the floor):
 * initialize and notifications/initialized by hand, then each ping a POST
 * through a keep-alive node:http Agent with the session's headers, its
 * answer read whole and checked for the ping's id, nothing parsed. A command
 * {n} runs n sequential pings; one latency per ping.
 *
 * MCPPING_ROOT, if set, loads mcpping's Node package from that checkout
 * instead of this one (to compare an older build; the SDK still comes
 * from this checkout).
 */
const http = require('node:http');
const path = require('node:path');
const { serve, timed, run } = require('./worker');

const ROOT = path.resolve(__dirname, '..', '..');
const MCPPING = process.env.MCPPING_ROOT || ROOT;
const sdk = (p) => require(require.resolve(`@modelcontextprotocol/sdk/${p}`, { paths: [ROOT] }));
const VERSION = '2025-11-25'; // what the raw client asks for; the server's answer is used

async function runMcpping(url) {
  const { HttpSession } = require(path.join(MCPPING, 'node', 'http_session'));
  const s = new HttpSession(url, { listen: false });
  try {
    await s.initialize({}, 5000);
    await serve(async (cmd) => (await timed(() => s.ping({ timeoutMs: 5000 }), cmd.n))[0]);
  } finally {
    await s.close();
  }
}

async function runSdk(url) {
  const client = new (sdk('client/index.js').Client)({ name: 'bench', version: '0.1.0' });
  const transport = new (sdk('client/streamableHttp.js').StreamableHTTPClientTransport)(new URL(url));
  await client.connect(transport);
  try {
    await serve(async (cmd) => (await timed(() => client.ping(), cmd.n))[0]);
  } finally {
    await transport.terminateSession().catch(() => {});
    await client.close();
  }
}

/** The floor: the session's POSTs by hand through one keep-alive socket. */
function rawClient(url) {
  const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
  const headers = { 'content-type': 'application/json', accept: 'application/json, text/event-stream' };
  const send = (method, body) => new Promise((resolve, reject) => {
    const req = http.request(url, { method, agent, headers }, (res) => {
      const chunks = [];
      res.on('data', (c) => chunks.push(c));
      res.on('end', () => resolve({ res, body: Buffer.concat(chunks).toString() }));
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end(body);
  });
  let id = 0;
  return {
    agent,
    headers,
    send,
    async initialize() {
      const { res, body } = await send('POST', JSON.stringify({
        jsonrpc: '2.0', id: ++id, method: 'initialize',
        params: { protocolVersion: VERSION, capabilities: {}, clientInfo: { name: 'bench-raw', version: '0.1.0' } },
      }));
      if (res.statusCode !== 200) throw new Error(`initialize: HTTP ${res.statusCode}: ${body.slice(0, 200)}`);
      // JSON or one SSE event ("data: {...}").
      const line = body.split('\n').find((x) => /^\s*(\{|data:)/.test(x));
      const { result } = JSON.parse(line.replace(/^\s*data:/, ''));
      headers['mcp-session-id'] = res.headers['mcp-session-id'];
      headers['mcp-protocol-version'] = result.protocolVersion;
      const ack = await send('POST', '{"jsonrpc":"2.0","method":"notifications/initialized"}');
      if (ack.res.statusCode !== 202) throw new Error(`notifications/initialized: HTTP ${ack.res.statusCode}`);
    },
    async ping() {
      const n = ++id;
      const { res, body } = await send('POST', `{"jsonrpc":"2.0","id":${n},"method":"ping"}`);
      if (res.statusCode !== 200 || !body.includes(`"id":${n}`)) {
        throw new Error(`ping: HTTP ${res.statusCode}: ${body.slice(0, 200)}`);
      }
    },
  };
}

async function runRaw(url) {
  const raw = rawClient(url);
  await raw.initialize();
  try {
    await serve(async (cmd) => (await timed(raw.ping, cmd.n))[0]);
  } finally {
    await raw.send('DELETE').catch(() => {});
    raw.agent.destroy();
  }
}

const [mode, url] = process.argv.slice(2);
run(() => ({ mcpping: runMcpping, sdk: runSdk, raw: runRaw })[mode](url));
