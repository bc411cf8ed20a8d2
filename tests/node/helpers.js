'use strict';
/**
 * Shared helpers for the Node tests: where things are, and waiting on
 * events and promises with a bound (never sleeping to synchronise).
 */
const path = require('node:path');
const { once } = require('node:events');
const { spawn } = require('node:child_process');

const ROOT = path.resolve(__dirname, '..', '..');
const PEERS = path.join(ROOT, 'tests', 'peers');
const FIXTURES = path.join(__dirname, 'fixtures');
const CLI = path.join(ROOT, 'node', 'cli.js');
const EVERYTHING = path.join(ROOT, 'node_modules', '@modelcontextprotocol', 'server-everything', 'dist', 'index.js');

/**
 * Server params for a fault peer of tests/peers.
 * @param {string} name e.g. 'echo.py'
 * @param {string[]} [args]
 */
function peer(name, args = []) {
  return { command: 'python3', args: [path.join(PEERS, name), ...args] };
}

/** Server params for the SDK McpServer fixture. */
function sdkServer() {
  return { command: process.execPath, args: [path.join(FIXTURES, 'sdk_server.mjs')] };
}

/** Server params for a fixture with wrong pongs. @param {string} mode */
function badPong(mode, extra = []) {
  return { command: process.execPath, args: [path.join(FIXTURES, 'bad_pong_server.js'), '--mode', mode, ...extra] };
}

/**
 * Rejects if the promise does not settle within ms.
 * @template T
 * @param {Promise<T>} promise
 * @param {number} ms
 * @param {string} what
 * @returns {Promise<T>}
 */
function within(promise, ms, what) {
  let timer;
  const guard = new Promise((_, reject) => {
    timer = setTimeout(() => reject(new Error(`timed out after ${ms} ms waiting for ${what}`)), ms);
  });
  return Promise.race([promise, guard]).finally(() => clearTimeout(timer));
}

/**
 * Waits for one event with a bound.
 * @param {import('node:events').EventEmitter} emitter
 * @param {string} name
 * @param {number} ms
 */
async function nextEvent(emitter, name, ms) {
  const [value] = await within(once(emitter, name), ms, `event ${name}`);
  return value;
}

/** @param {number} pid @returns {boolean} whether the process (or group, if negative) exists */
function exists(pid) {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    if (err.code === 'ESRCH') return false;
    throw err;
  }
}

/**
 * Runs a command to completion with a bound; resolves {status, stdout, stderr}.
 * @param {string} cmd
 * @param {string[]} args
 * @param {{timeoutMs?: number, env?: object, cwd?: string}} [opts]
 */
function run(cmd, args, opts = {}) {
  return new Promise((resolve, reject) => {
    const child = spawn(cmd, args, { cwd: opts.cwd || ROOT, env: opts.env || process.env, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d) => (stdout += d));
    child.stderr.on('data', (d) => (stderr += d));
    const ms = opts.timeoutMs || 30000;
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`${cmd} ${args.join(' ')} did not finish in ${ms} ms; stderr: ${stderr}`));
    }, ms);
    child.on('error', (err) => {
      clearTimeout(timer);
      reject(err);
    });
    child.on('close', (status, signal) => {
      clearTimeout(timer);
      resolve({ status, signal, stdout, stderr });
    });
  });
}

/** @param {string} stdout @returns {object[]} the JSON lines */
function jsonLines(stdout) {
  return stdout.split('\n').filter((l) => l.trim()).map((l) => JSON.parse(l));
}

/** @returns {Promise<number>} a loopback port nothing listens on (now) */
function freePort() {
  const net = require('node:net');
  return new Promise((resolve) => {
    const srv = net.createServer().listen(0, '127.0.0.1', () => {
      const p = srv.address().port;
      srv.close(() => resolve(p));
    });
  });
}

/**
 * Starts server-everything over Streamable HTTP on `port` (default: a free
 * one); resolves {url, stop}.
 * @param {number} [port]
 */
async function startEverythingHttp(port) {
  port = port ?? (await freePort());
  const child = spawn(process.execPath, [EVERYTHING, 'streamableHttp'], {
    env: { ...process.env, PORT: String(port) },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  let stderr = '';
  const ready = new Promise((resolve, reject) => {
    child.stderr.on('data', (d) => {
      stderr += d;
      if (/listening on port/i.test(stderr)) resolve();
    });
    child.on('exit', (code) => reject(new Error(`server-everything exited ${code}: ${stderr}`)));
  });
  await within(ready, 20000, 'server-everything to listen');
  return {
    url: `http://127.0.0.1:${port}/mcp`,
    async stop() {
      if (child.exitCode !== null || child.signalCode !== null) return;
      child.kill('SIGTERM');
      await within(once(child, 'exit'), 5000, 'server-everything to exit');
    },
  };
}

module.exports = {
  ROOT,
  PEERS,
  FIXTURES,
  CLI,
  EVERYTHING,
  peer,
  sdkServer,
  badPong,
  within,
  nextEvent,
  exists,
  run,
  jsonLines,
  startEverythingHttp,
  freePort,
};

/**
 * Live (not zombie) processes of a process group, read from /proc: a dead
 * grandchild may wait as a zombie for its new parent, which is not ours.
 * @param {number} pgid
 * @returns {number[]}
 */
function groupMembers(pgid) {
  const fs = require('node:fs');
  const out = [];
  for (const entry of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    let stat;
    try {
      stat = fs.readFileSync(`/proc/${entry}/stat`, 'utf8');
    } catch {
      continue;
    }
    // pid (comm) state ppid pgrp ...; comm may hold spaces and parens.
    const rest = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    if (Number(rest[2]) === pgid && rest[0] !== 'Z') out.push(Number(entry));
  }
  return out;
}

/**
 * The members of a process group still running after `withinMs`, or []
 * as soon as there are none. SIGKILL is sent to the whole group at close,
 * but a grandchild is not ours to reap: it dies a moment later, reparented,
 * and no event tells us, so this looks again every 10 ms.
 * @param {number} pgid
 * @param {number} [withinMs]
 * @returns {Promise<number[]>}
 */
async function groupGone(pgid, withinMs = 2000) {
  const until = Date.now() + withinMs;
  for (;;) {
    const left = groupMembers(pgid);
    if (left.length === 0 || Date.now() >= until) return left;
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

module.exports.groupMembers = groupMembers;
module.exports.groupGone = groupGone;

/** The pid of a process's first child (a wrap's server), from /proc. */
function childOf(pid) {
  const fs = require('node:fs');
  for (const task of fs.readdirSync(`/proc/${pid}/task`)) {
    const kids = fs.readFileSync(`/proc/${pid}/task/${task}/children`, 'utf8').trim();
    if (kids) return Number(kids.split(/\s+/)[0]);
  }
  return 0;
}
module.exports.childOf = childOf;
