'use strict';
// node/config.js: every client format read into the model, bad files named
// with their JSON path, variables, auto paths, secrets kept out of sight.
// The same bad files go through both commands in cli_parity.test.js.
const test = require('node:test');
const assert = require('node:assert/strict');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { inspect } = require('node:util');
const { load, parse, resolve, autoPaths, ConfigError, UnresolvedVariable } = require('../../node/config');

const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'mcpping-config-'));
test.after(() => fs.rmSync(tmp, { recursive: true, force: true }));

/** @returns {string} the path written */
function write(rel, doc) {
  const file = path.join(tmp, rel);
  fs.mkdirSync(path.dirname(file), { recursive: true });
  fs.writeFileSync(file, typeof doc === 'string' ? doc : JSON.stringify(doc));
  return file;
}

test('Claude Desktop: stdio entries keep command, args and env, in file order', () => {
  const file = write('claude_desktop_config.json', {
    globalShortcut: 'Ctrl+Space',
    mcpServers: {
      time: { command: 'uvx', args: ['mcp-server-time'], env: { TZ: 'UTC' } },
      fs: { command: 'npx', args: ['-y', '@modelcontextprotocol/server-filesystem', '/tmp'] },
    },
  });
  const cfg = load(file);
  assert.deepEqual(cfg.servers.map((s) => s.name), ['time', 'fs']);
  const [time] = cfg.servers;
  assert.deepEqual([time.transport, time.command, time.args, time.env], ['stdio', 'uvx', ['mcp-server-time'], { TZ: 'UTC' }]);
  assert.equal(time.jsonPath, '$.mcpServers.time');
  assert.equal(time.file, file);
  assert.ok(Object.isFrozen(time));
});

test('Claude Code .mcp.json and Cursor: typed and untyped stdio, http and sse entries', () => {
  const file = write('.cursor/mcp.json', {
    mcpServers: {
      local: { type: 'stdio', command: 'python3', args: ['s.py'], cwd: 'srv' },
      remote: { type: 'http', url: 'https://mcp.example.com/mcp', headers: { Authorization: 'Bearer t' } },
      plain: { url: 'http://127.0.0.1:8000/mcp' },
      legacy: { type: 'sse', url: 'https://mcp.example.com/sse' },
    },
  });
  const cfg = load(file);
  assert.deepEqual(cfg.servers.map((s) => s.transport), ['stdio', 'streamable-http', 'streamable-http', 'sse']);
  assert.deepEqual(cfg.servers[1].headers, { Authorization: 'Bearer t' });
  assert.equal(cfg.workspace, tmp); // the folder holding .cursor
});

test('VS Code: servers with type, JSONC comments and trailing commas', () => {
  const file = write('.vscode/mcp.json', `{
  // VS Code writes JSONC
  "inputs": [{"type": "promptString", "id": "key", "password": true}],
  "servers": {
    "py": {"type": "stdio", "command": "python3", "args": ["\${workspaceFolder}/s.py",],},
    /* an HTTP one */
    "gh": {"type": "http", "url": "https://api.example.com/mcp/", "headers": {"X": "a,} // not a comment"}},
  },
}`);
  const cfg = load(file);
  assert.deepEqual(cfg.servers.map((s) => [s.name, s.transport, s.jsonPath]), [['py', 'stdio', '$.servers.py'], ['gh', 'streamable-http', '$.servers.gh']]);
  assert.deepEqual(cfg.servers[1].headers, { X: 'a,} // not a comment' });
  assert.equal(cfg.workspace, tmp);
});

test('bad files name the file and the JSON path; invalid JSON its line and column', () => {
  const bad = write('bad.json', { mcpServers: { 'my server': { command: 'x', env: { PORT: 3000 } } } });
  assert.throws(() => load(bad), (err) => err instanceof ConfigError && err.jsonPath === '$.mcpServers["my server"].env.PORT'
    && err.message === `${bad}: $.mcpServers["my server"].env.PORT: must be a string, got number`);
  const broken = write('broken.json', '{\n  "mcpServers": {\n    "a": {"command": "x"}\n    "b": {}\n}');
  assert.throws(() => load(broken), { message: `${broken}: invalid JSON at line 4 column 5` });
  assert.throws(() => load(path.join(tmp, 'nope.json')), { message: `${path.join(tmp, 'nope.json')}: cannot read: No such file or directory` });
  const latin1 = path.join(tmp, 'latin1.json');
  fs.writeFileSync(latin1, Buffer.from('{"mcpServers": {"caf\xe9": {"command": "x"}}}', 'latin1'));
  assert.throws(() => load(latin1), { message: `${latin1}: not UTF-8 text` });
});

test('inspect, JSON.stringify and error messages never show env, header or URL values', () => {
  const file = write('secrets.json', {
    mcpServers: {
      a: { command: 'x', env: { TOKEN: 'sekrit-env-1' } },
      b: { url: 'https://h/mcp?key=sekrit-url-2', headers: { Authorization: 'sekrit-hdr-3' } },
    },
  });
  const cfg = load(file);
  for (const shown of [inspect(cfg, { depth: 5 }), JSON.stringify(cfg), inspect(cfg.servers[1], { showHidden: false })]) {
    assert.doesNotMatch(shown, /sekrit|TOKEN/);
  }
  assert.equal(cfg.servers[0].env.TOKEN, 'sekrit-env-1'); // still there to start the server
  const bad = write('bad_url.json', { servers: { a: { url: 'sekrit-url-4' } } });
  assert.throws(() => load(bad), (err) => !/sekrit/.test(err.message));
});

test('resolve fills the variables each client knows and leaves the entry as written', () => {
  const cfg = parse(JSON.stringify({
    servers: {
      a: {
        command: '${workspaceFolder}/bin/srv',
        args: ['--home', '${userHome}', '--t', '${env:TZ}', '${TZ}', '${MISSING:-fallback}'],
        env: { K: '${API_KEY}' },
        cwd: 'sub',
      },
    },
  }), path.join(tmp, '.vscode', 'mcp.json'));
  const live = resolve(cfg.servers[0], cfg.workspace, { TZ: 'UTC', API_KEY: 'k1' }, '/h');
  assert.equal(live.command, `${tmp}/bin/srv`);
  assert.deepEqual(live.args, ['--home', '/h', '--t', 'UTC', 'UTC', 'fallback']);
  assert.deepEqual(live.env, { K: 'k1' });
  assert.equal(live.cwd, path.join(tmp, 'sub'));
  assert.equal(cfg.servers[0].command, '${workspaceFolder}/bin/srv');
});

test('resolve refuses ${input:...} and unset variables, naming the field, not the value', () => {
  const cfg = parse(JSON.stringify({
    servers: {
      gh: { url: 'https://h/mcp', headers: { Authorization: 'Bearer ${input:token}' } },
      x: { command: 'srv', env: { K: '${NOT_SET_ANYWHERE}' } },
    },
  }), 'mcp.json');
  assert.throws(() => resolve(cfg.servers[0], '.', {}), (err) => err instanceof UnresolvedVariable
    && err.message === '$.servers.gh.headers.Authorization: ${input:token} is asked of the user by the editor');
  assert.throws(() => resolve(cfg.servers[1], '.', {}), { message: '$.servers.x.env.K: ${NOT_SET_ANYWHERE} is not set' });
});

test('autoPaths: the usual places per OS, project files first', () => {
  assert.deepEqual(autoPaths({ cwd: '/p', home: '/home/u', platform: 'linux', environ: {} }), [
    '/p/.mcp.json', '/p/.cursor/mcp.json', '/p/.vscode/mcp.json',
    '/home/u/.config/Claude/claude_desktop_config.json', '/home/u/.claude.json',
    '/home/u/.cursor/mcp.json', '/home/u/.config/Code/User/mcp.json',
  ]);
  const mac = autoPaths({ cwd: '/p', home: '/Users/u', platform: 'darwin', environ: {} });
  assert.ok(mac.includes('/Users/u/Library/Application Support/Claude/claude_desktop_config.json'));
  const xdg = autoPaths({ cwd: '/p', home: '/home/u', platform: 'linux', environ: { XDG_CONFIG_HOME: '/x' } });
  assert.ok(xdg.includes('/x/Claude/claude_desktop_config.json'));
});

test('a file without servers is empty when not required (~/.claude.json under auto)', () => {
  const file = write('.claude.json', { numStartups: 3 });
  assert.deepEqual(load(file, false).servers, []);
  assert.throws(() => load(file), { message: `${file}: $: has no "mcpServers" or "servers" object` });
});
