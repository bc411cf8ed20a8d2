'use strict';
/**
 * The frozen-peer row, Node: how long until a frozen (SIGSTOPped) server is noticed.
 *
 *   node frozen.js api|sdk RESPONDER PIDFILE LIMIT_S
 *
 * api: mcpping.connect with keepalive interval 1 s, timeout 1 s, failures 2,
 * measured to the 'stale' event. sdk: the official SDK's Client over its
 * StdioClientTransport with defaults, one client.ping() in flight from the
 * freeze on; noticed when the ping rejects or onerror/onclose fires. The
 * server is always SIGCONTed and SIGKILLed at the end. Prints one JSON object.
 */
const fs = require('node:fs');
const path = require('node:path');

const ROOT = path.resolve(__dirname, '..', '..');
const sdkPath = (p) => require.resolve(`@modelcontextprotocol/sdk/${p}`, { paths: [ROOT] });
const now = () => Number(process.hrtime.bigint()) / 1e9;
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

async function readPid(file) {
  for (let i = 0; i < 200; i++) {
    try {
      const pid = parseInt(fs.readFileSync(file, 'utf8'), 10);
      if (pid > 0) return pid;
    } catch {
      // Not written yet.
    }
    await sleep(10);
  }
  throw new Error('no pidfile');
}

function finish(pid) {
  for (const sig of ['SIGCONT', 'SIGKILL']) {
    try {
      process.kill(pid, sig);
    } catch {
      // Already gone.
    }
  }
}

function within(promise, limitS) {
  let timer;
  const limit = new Promise((resolve) => {
    timer = setTimeout(() => resolve(null), limitS * 1000);
  });
  return Promise.race([promise, limit]).finally(() => clearTimeout(timer));
}

async function runApi(responder, pidfile, limitS) {
  const mcpping = require(ROOT);
  const peer = await mcpping.connect(
    { command: responder, args: ['--pidfile', pidfile] },
    { keepalive: { intervalMs: 1000, timeoutMs: 1000, failures: 2 } },
  );
  const pid = await readPid(pidfile);
  let out;
  try {
    const marks = {};
    peer.on('suspect', () => {
      if (!marks.suspect) marks.suspect = now();
    });
    const closed = new Promise((resolve) => peer.once('closed', (info) => resolve(info)));
    const stale = new Promise((resolve) => peer.once('stale', () => resolve(now())));
    process.kill(pid, 'SIGSTOP');
    const t0 = now();
    const t = await within(stale, limitS);
    if (t === null) {
      out = { noticed_s: null, how: `nothing within ${limitS} s` };
    } else {
      out = { noticed_s: t - t0, how: 'stale event' };
      if (marks.suspect) out.suspect_s = marks.suspect - t0;
      const info = await within(closed, 10);
      out.closed_s = now() - t0;
      if (info) out.closed_reason = info.reason;
    }
  } finally {
    finish(pid);
    await peer.close().catch(() => {});
  }
  return out;
}

async function runSdk(responder, pidfile, limitS) {
  const { Client } = require(sdkPath('client/index.js'));
  const { StdioClientTransport } = require(sdkPath('client/stdio.js'));
  const client = new Client({ name: 'bench', version: '0.1.0' });
  let surfaced;
  const noticed = new Promise((resolve) => {
    surfaced = resolve;
  });
  client.onerror = (err) => surfaced(`onerror: ${err.message}`);
  client.onclose = () => surfaced('onclose');
  await client.connect(new StdioClientTransport({ command: responder, args: ['--pidfile', pidfile] }));
  const pid = await readPid(pidfile);
  let out;
  try {
    process.kill(pid, 'SIGSTOP');
    const t0 = now();
    client.ping().then(
      () => surfaced('ping answered?'),
      (err) => surfaced(`in-flight ping rejected: ${err.message}`),
    );
    const how = await within(noticed, limitS);
    out = how === null ? { noticed_s: null, how: `nothing within ${limitS} s` } : { noticed_s: now() - t0, how };
  } finally {
    finish(pid);
    client.onerror = undefined;
    client.onclose = undefined;
    await client.close().catch(() => {});
  }
  return out;
}

async function main() {
  const [mode, responder, pidfile, limit] = process.argv.slice(2);
  const fn = { api: runApi, sdk: runSdk }[mode];
  const out = await fn(responder, pidfile, parseFloat(limit));
  process.stdout.write(JSON.stringify(out) + '\n');
  process.exit(0);
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
