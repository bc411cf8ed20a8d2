'use strict';
// docs/node.md stays true: every ```js run block runs as a script and exits 0.
// Each block is written to a directory inside the repository (so that
// require('mcpping') resolves to this package, as for an installed one, and
// the SDK resolves from node_modules) and run with this node, bounded. The
// blocks assert what the text around them says, so a wrong name, option or
// error code fails here.
const test = require('node:test');
const assert = require('node:assert/strict');
const fs = require('node:fs');
const path = require('node:path');
const h = require('./helpers');

const DOC = path.join(h.ROOT, 'docs', 'node.md');
const TIMEOUT_MS = 15000; // hard cap per block; they take well under 3 s

/**
 * Every fenced block: {line, info, body}; an unclosed fence throws.
 * @param {string} text
 */
function fencedBlocks(text) {
  const lines = text.split('\n');
  const out = [];
  for (let i = 0; i < lines.length; i++) {
    const m = /^```(.*)$/.exec(lines[i]);
    if (!m) continue;
    const start = i + 1;
    const body = [];
    for (i++; i < lines.length && lines[i] !== '```'; i++) body.push(lines[i]);
    if (i >= lines.length) throw new Error(`unclosed fence at line ${start}`);
    out.push({ line: start, info: m[1].trim(), body: `${body.join('\n')}\n` });
  }
  return out;
}

/** The blocks whose info string is exactly `<lang> run`. */
function runnable(text, lang) {
  return fencedBlocks(text).filter((b) => b.info.split(/\s+/).join(' ') === `${lang} run`);
}

/** Runs one snippet as a CommonJS script; resolves {status, stdout, stderr}. */
async function runSnippet(code) {
  const base = path.join(h.ROOT, 'build');
  fs.mkdirSync(base, { recursive: true });
  const dir = fs.mkdtempSync(path.join(base, 'docs-js-'));
  const file = path.join(dir, 'snippet.js');
  fs.writeFileSync(file, code);
  try {
    return await h.run(process.execPath, [file], { timeoutMs: TIMEOUT_MS, cwd: dir });
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

const TEXT = fs.readFileSync(DOC, 'utf8');
const BLOCKS = runnable(TEXT, 'js');

test('docs/node.md has its runnable blocks, and no unmarked js block', () => {
  // Losing the markers must not make the doc silently untested.
  assert.ok(BLOCKS.length >= 8, `only ${BLOCKS.length} runnable blocks`);
  const plain = fencedBlocks(TEXT).filter((b) => b.info === 'js').map((b) => b.line);
  assert.deepEqual(plain, [], 'mark ```js blocks "run", or use ```text');
});

for (const block of BLOCKS) {
  test(`docs/node.md line ${block.line} runs`, async () => {
    const r = await runSnippet(block.body);
    assert.equal(r.status, 0, `line ${block.line} exited ${r.status}\nstdout:\n${r.stdout}\nstderr:\n${r.stderr}`);
  });
}

// The README's "With your framework" snippets, the same way.
const README = fs.readFileSync(path.join(h.ROOT, 'README.md'), 'utf8');
const README_BLOCKS = runnable(README, 'js');

test('README has its framework snippets marked runnable', () => {
  assert.ok(README_BLOCKS.length >= 4, `only ${README_BLOCKS.length} runnable blocks`);
  for (const name of ['@ai-sdk/mcp', '@openai/agents', '@langchain/mcp-adapters']) {
    assert.ok(README_BLOCKS.some((b) => b.body.includes(`require('${name}')`)), name);
  }
});

for (const block of README_BLOCKS) {
  test(`README.md line ${block.line} runs`, async () => {
    const r = await runSnippet(block.body);
    assert.equal(r.status, 0, `line ${block.line} exited ${r.status}\nstdout:\n${r.stdout}\nstderr:\n${r.stderr}`);
    assert.ok(r.stdout.trim() !== '', 'a snippet prints what it got');
  });
}

test('a broken snippet fails', async () => {
  // The verdict can fail: a wrong name in a real block exits non-zero...
  const first = BLOCKS[0].body;
  assert.ok(first.includes('mcpping.connect('));
  let r = await runSnippet(first.replace('mcpping.connect(', 'mcpping.conect('));
  assert.notEqual(r.status, 0);
  assert.match(r.stderr, /TypeError/);
  // ...and so does a false assertion in a snippet.
  r = await runSnippet("const assert = require('node:assert/strict');\n"
    + "(async () => { assert.equal(require('mcpping').PROTOCOL_VERSION, 'nope'); })();\n");
  assert.notEqual(r.status, 0);
  assert.match(r.stderr, /AssertionError/);
});

test('the fence parser', () => {
  const text = 'a\n```js run\nx = 1\n```\n```js\ny\n```\n```python run\nz\n```\n';
  assert.deepEqual(runnable(text, 'js'), [{ line: 2, info: 'js run', body: 'x = 1\n' }]);
  assert.equal(runnable(text, 'python')[0].body, 'z\n');
  assert.throws(() => fencedBlocks('```js run\nx\n'), /unclosed/);
});

test('the KeepaliveOptions table says the defaults the C settings table applies', () => {
  // Its intervalMs row said 0 (the raw table default) where the library's
  // policy, which connect() applies, is 15000.
  const { binding } = require('../../node/runtime');
  const policy = new Map(binding.settingsTable().map((row) => [row.name, row.policy]));
  const text = fs.readFileSync(DOC, 'utf8');
  const table = text.slice(text.indexOf('`KeepaliveOptions` (all optional)'));
  const rows = table.split('\n').filter((line) => line.startsWith('| `')).slice(0, 12);
  const snake = (key) => key.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`);
  const units = { MiB: 2 ** 20 };
  let checked = 0;
  for (const line of rows) {
    const [, key, dflt] = /^\| `(\w+)` \| ([^|]+) \|/.exec(line);
    const name = { clampInterval: 'clamp_interval', onStale: 'on_stale' }[key] || snake(key);
    if (!policy.has(name) || /^`'/.test(dflt)) continue; // a choice, said by name
    const m = /^`?(\d+)`?(?: (MiB))?/.exec(dflt) || (/`(false|true)`/.exec(dflt) && [null, dflt.includes('true') ? '1' : '0']);
    assert.ok(m, `${key}: ${dflt}`);
    assert.equal(Number(m[1]) * (units[m[2]] || 1), policy.get(name), `${key}: the doc says ${dflt}`);
    checked++;
  }
  assert.ok(checked >= 9, `checked ${checked} rows`);
});

test('the ConnectOptions and KeepaliveOptions tables name every option connect() takes, and no other', async () => {
  // connect() refuses a key it does not know and lists the ones it takes.
  const mcpping = require('../../node');
  const text = fs.readFileSync(DOC, 'utf8');
  const keysOf = (heading) => {
    const rest = text.slice(text.indexOf(heading));
    const table = rest.slice(rest.indexOf('\n|'), rest.indexOf('\n\n', rest.indexOf('\n|')));
    return table.split('\n').map((line) => /^\| `(\w+)` \|/.exec(line)).filter(Boolean).map((m) => m[1]).sort();
  };
  const taken = async (options) => {
    const err = await mcpping.connect({ command: process.execPath }, options).catch((e) => e);
    return /the options are (.*)$/.exec(err.message)[1].split(', ').sort();
  };
  assert.deepEqual(keysOf('`options` (`ConnectOptions`)'), await taken({ bogus: 1 }));
  assert.deepEqual(keysOf('`KeepaliveOptions` (all optional)'), await taken({ keepalive: { bogus: 1 } }));
  assert.deepEqual(keysOf('`ReconnectOptions` (all optional'), await taken({ reconnect: { bogus: 1 } }));
});

test('the StdioClientTransport and SessionReaper signatures name every option they take', () => {
  const mcpping = require('../../node');
  const text = fs.readFileSync(DOC, 'utf8');
  const takes = (make) => {
    try {
      make();
    } catch (err) {
      return /the options are (.*)$/.exec(err.message)[1].split(', ').sort();
    }
    throw new Error('a bogus option was taken');
  };
  const transport = /new mcpping\.StdioClientTransport\(params, \{ (.*) \}\)/.exec(text)[1].split(', ').map((k) => k.replace('?', ''));
  assert.deepEqual(transport.sort(), takes(() => new mcpping.StdioClientTransport({ command: 'x' }, { bogus: 1 })));
  const reaper = text.slice(text.indexOf('new mcpping.SessionReaper({'), text.indexOf('reaper.watch(transport)'));
  const reaperKeys = [...reaper.matchAll(/^ {2}(\w+)\?:/gm)].map((m) => m[1]);
  assert.deepEqual(reaperKeys.sort(), takes(() => new mcpping.SessionReaper({ bogus: 1 })));
});
