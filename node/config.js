'use strict';
/**
 * MCP client configs: the servers a Claude Desktop, Claude Code, Cursor or
 * VS Code config declares (docs/cli.md, "--config").
 *
 * load() reads one file into {path, servers} of plain server entries,
 * exactly as written; resolve() expands one entry's variables
 * (${workspaceFolder}, ${env:NAME}, ${NAME:-default}...) when it is about
 * to be started. A file that cannot be used throws ConfigError, naming the
 * file and the JSON path of the problem. python/mcpping/config.py reads the
 * same files into the same model with the same messages.
 *
 * Secrets: env and headers values are kept for starting the server and never
 * shown: not by util.inspect, not in an error message.
 */
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { inspect } = require('node:util');

/** `type` values and the transport each one means. */
const TRANSPORTS = {
  stdio: 'stdio',
  http: 'streamable-http',
  'streamable-http': 'streamable-http',
  streamableHttp: 'streamable-http',
  sse: 'sse',
};

const ERRNO_TEXT = {
  ENOENT: 'No such file or directory',
  EACCES: 'Permission denied',
  EISDIR: 'Is a directory',
  ENOTDIR: 'Not a directory',
};

/** A config file that cannot be used: `FILE: JSON-PATH: problem`. */
class ConfigError extends Error {
  /** @param {string} file @param {string|null} jsonPath @param {string} problem */
  constructor(file, jsonPath, problem) {
    super(`${jsonPath ? `${file}: ${jsonPath}` : file}: ${problem}`);
    this.name = 'ConfigError';
    this.file = file;
    this.jsonPath = jsonPath;
    this.problem = problem;
  }
}

/** A ${...} in an entry that mcpping cannot fill in. */
class UnresolvedVariable extends Error {}

/**
 * One server entry as written. env, url and headers are not enumerable, so
 * that inspecting or serialising an entry shows no secret.
 */
class Server {
  /**
   * @param {{name: string, transport: string, file: string, jsonPath: string,
   *   command?: string|null, args?: string[], env?: Record<string,string>, cwd?: string|null,
   *   url?: string|null, headers?: Record<string,string>, disabled?: boolean}} f
   */
  constructor(f) {
    this.name = f.name;
    /** 'stdio', 'streamable-http' or 'sse' (legacy HTTP+SSE, not pinged) */
    this.transport = f.transport;
    this.file = f.file;
    /** where the entry is in its file, e.g. $.mcpServers.time */
    this.jsonPath = f.jsonPath;
    this.command = f.command ?? null;
    this.args = f.args ?? [];
    this.cwd = f.cwd ?? null;
    /** "disabled": true in the entry (Cline, Windsurf, Claude Code) */
    this.disabled = f.disabled ?? false;
    for (const key of ['env', 'url', 'headers']) {
      const value = f[key] ?? (key === 'url' ? null : {});
      Object.defineProperty(this, key, { value, enumerable: false });
    }
    Object.freeze(this);
  }

  [inspect.custom]() {
    return `Server ${inspect({ ...this })}`;
  }
}

/** @param {string} parent @param {string|number} key @returns {string} $.a.b, $.a["b c"], $.a[3] */
function jsonPath(parent, key) {
  if (typeof key === 'number') return `${parent}[${key}]`;
  if (/^[A-Za-z_$][A-Za-z0-9_$]*$/.test(key)) return `${parent}.${key}`;
  return `${parent}[${JSON.stringify(key)}]`;
}

/** The JSON type name of a parsed value, for messages (never the value itself). */
function kind(value) {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'array';
  return typeof value === 'object' ? 'object' : typeof value;
}

/**
 * Blanks out // and block comments and trailing commas (VS Code's files are
 * JSONC), keeping every other character where it was so that a parse
 * error's line and column still point into the file.
 * @param {string} text @returns {string}
 */
function stripJsonc(text) {
  const out = text.split('');
  const n = text.length;
  let lastComma = -1;
  let i = 0;
  while (i < n) {
    const c = text[i];
    if (c === '"') {
      lastComma = -1;
      i++;
      while (i < n && text[i] !== '"') i += text[i] === '\\' ? 2 : 1;
    } else if (c === '/' && text.startsWith('//', i)) {
      for (; i < n && text[i] !== '\n'; i++) out[i] = ' ';
      continue;
    } else if (c === '/' && text.startsWith('/*', i)) {
      const close = text.indexOf('*/', i + 2);
      const end = close < 0 ? n : close + 2;
      for (let j = i; j < end; j++) if (out[j] !== '\n') out[j] = ' ';
      i = end;
      continue;
    } else if (c === ',') {
      lastComma = i;
    } else if (c === '}' || c === ']') {
      if (lastComma >= 0) out[lastComma] = ' ';
      lastComma = -1;
    } else if (!/\s/.test(c)) {
      lastComma = -1;
    }
    i++;
  }
  return out.join('');
}

/** Deeper nesting than this is refused (no client config comes close). */
const MAX_DEPTH = 64;

/**
 * Where strict JSON first goes wrong in text (an index), or -1. Both
 * languages scan with this same grammar before parsing, so a bad file gets
 * the same line and column from each command, whatever its own JSON parser
 * would say (Python's accepts NaN; their messages differ).
 * @param {string} text @returns {number}
 */
function syntaxErrorAt(text) {
  const n = text.length;
  let i = 0;
  const fail = (at) => {
    throw Object.assign(new Error('syntax'), { at });
  };
  const isDigit = (c) => c >= '0' && c <= '9';
  const ws = () => {
    while (i < n && ' \t\n\r'.includes(text[i])) i++;
  };
  const digits = () => {
    if (i >= n || !isDigit(text[i])) fail(i);
    while (i < n && isDigit(text[i])) i++;
  };
  const string = () => {
    i++;
    while (i < n) {
      const c = text[i];
      if (c === '"') {
        i++;
        return;
      }
      if (c === '\\') {
        const next = text[i + 1];
        if (next !== undefined && '"\\/bfnrt'.includes(next)) i += 2;
        else if (next === 'u' && /^[0-9A-Fa-f]{4}$/.test(text.slice(i + 2, i + 6))) i += 6;
        else fail(i + 1);
      } else if (c < ' ') {
        fail(i);
      } else {
        i++;
      }
    }
    fail(n);
  };
  const value = (depth) => {
    if (i >= n) fail(n);
    const c = text[i];
    if (c === '{' || c === '[') {
      if (depth >= MAX_DEPTH) fail(i);
      const close = c === '{' ? '}' : ']';
      i++;
      ws();
      if (text[i] === close) {
        i++;
        return;
      }
      for (;;) {
        if (c === '{') {
          if (text[i] !== '"') fail(i);
          string();
          ws();
          if (text[i] !== ':') fail(i);
          i++;
          ws();
        }
        value(depth + 1);
        ws();
        if (text[i] === ',') {
          i++;
          ws();
        } else if (text[i] === close) {
          i++;
          return;
        } else {
          fail(i);
        }
      }
    } else if (c === '"') {
      string();
    } else if (c === '-' || isDigit(c)) {
      if (c === '-') i++;
      if (text[i] === '0') i++;
      else digits();
      if (text[i] === '.') {
        i++;
        digits();
      }
      if (text[i] === 'e' || text[i] === 'E') {
        i++;
        if (text[i] === '+' || text[i] === '-') i++;
        digits();
      }
    } else {
      const word = ['true', 'false', 'null'].find((w) => text.startsWith(w, i));
      if (!word) fail(i);
      i += word.length;
    }
  };
  try {
    ws();
    value(0);
    ws();
    if (i < n) fail(i);
  } catch (err) {
    if (err.at === undefined) throw err;
    return err.at;
  }
  return -1;
}

/**
 * Reads one config file.
 * @param {string} file
 * @param {boolean} [requireServers] false: a file without a servers object
 *   has no servers (--config auto, ~/.claude.json)
 * @param {string} [project] default the current directory: picks Claude
 *   Code's per-project servers in ~/.claude.json, projects[project].mcpServers
 * @returns {{path: string, workspace: string, servers: Server[]}}
 */
function load(file, requireServers = true, project) {
  let data;
  try {
    data = fs.readFileSync(file);
  } catch (err) {
    throw new ConfigError(file, null, `cannot read: ${ERRNO_TEXT[err.code] || err.code}`);
  }
  let text;
  try {
    text = new TextDecoder('utf-8', { fatal: true }).decode(data);
  } catch {
    throw new ConfigError(file, null, 'not UTF-8 text');
  }
  return parse(text, file, requireServers, project);
}

/** @param {string} text @param {number} pos UTF-16 index @returns {string} "line L column C", code points */
function lineColumn(text, pos) {
  const before = Array.from(text.slice(0, pos));
  const nl = before.lastIndexOf('\n');
  const line = before.filter((ch) => ch === '\n').length + 1;
  return `line ${line} column ${before.length - nl}`;
}

/**
 * Parses a config's text (JSON or JSONC).
 * @param {string} text @param {string} file @param {boolean} [requireServers] @param {string} [project]
 * @returns {{path: string, workspace: string, servers: Server[]}}
 */
function parse(text, file, requireServers = true, project = process.cwd()) {
  // A BOM is not part of the text (TextDecoder drops it already).
  if (text.startsWith('\ufeff')) text = text.slice(1);
  const plain = stripJsonc(text);
  const bad = syntaxErrorAt(plain);
  if (bad >= 0) throw new ConfigError(file, null, `invalid JSON at ${lineColumn(text, bad)}`);
  const doc = JSON.parse(plain);
  if (kind(doc) !== 'object') throw new ConfigError(file, '$', `must be an object, got ${kind(doc)}`);
  const tables = [];
  if (Object.hasOwn(doc, 'mcpServers')) tables.push(['$.mcpServers', doc.mcpServers]);
  if (Object.hasOwn(doc, 'servers')) tables.push(['$.servers', doc.servers]);
  if (tables.length === 0 && kind(doc.mcp) === 'object' && Object.hasOwn(doc.mcp, 'servers')) {
    tables.push(['$.mcp.servers', doc.mcp.servers]); // VS Code settings.json
  }
  const local = kind(doc.projects) === 'object' && Object.hasOwn(doc.projects, project) ? doc.projects[project] : null;
  if (kind(local) === 'object' && Object.hasOwn(local, 'mcpServers')) {
    // Claude Code's "local" scope: ~/.claude.json, per project folder.
    tables.push([jsonPath(jsonPath('$.projects', project), 'mcpServers'), local.mcpServers]);
  }
  const result = { path: file, workspace: workspaceOf(file), servers: [] };
  if (tables.length === 0 && !requireServers) return result;
  if (tables.length === 0) throw new ConfigError(file, '$', 'has no "mcpServers" or "servers" object');
  for (const [where, table] of tables) {
    if (kind(table) !== 'object') throw new ConfigError(file, where, `must be an object, got ${kind(table)}`);
    for (const [name, entry] of Object.entries(table)) {
      result.servers.push(server(file, jsonPath(where, name), name, entry));
    }
  }
  return result;
}

/** @param {string} file @returns {string} the folder ${workspaceFolder} means */
function workspaceOf(file) {
  let folder = path.dirname(path.resolve(file));
  if (['.vscode', '.cursor'].includes(path.basename(folder))) folder = path.dirname(folder);
  return folder;
}

function server(file, at, name, entry) {
  if (kind(entry) !== 'object') throw new ConfigError(file, at, `must be an object, got ${kind(entry)}`);
  const fail = (key, problem) => new ConfigError(file, jsonPath(at, key), problem);
  // No OS passes a NUL in an argument, a variable or a header.
  const noNul = (text, where) => {
    if (text.includes('\0')) throw new ConfigError(file, where, 'contains a NUL character');
  };
  const string = (key, required = false) => {
    const v = entry[key];
    if ((v === undefined || v === null) && !required) return null;
    if (!Object.hasOwn(entry, key)) throw fail(key, 'is missing');
    if (typeof v !== 'string') throw fail(key, `must be a string, got ${kind(v)}`);
    if (required && !v) throw fail(key, 'must not be empty');
    noNul(v, jsonPath(at, key));
    return v;
  };
  const strings = (key) => {
    const v = entry[key];
    if (v === undefined || v === null) return [];
    if (!Array.isArray(v)) throw fail(key, `must be an array of strings, got ${kind(v)}`);
    v.forEach((item, i) => {
      if (typeof item !== 'string') {
        throw new ConfigError(file, jsonPath(jsonPath(at, key), i), `must be a string, got ${kind(item)}`);
      }
      noNul(item, jsonPath(jsonPath(at, key), i));
    });
    return [...v];
  };
  const table = (key, names = false) => {
    const v = entry[key];
    if (v === undefined || v === null) return {};
    if (kind(v) !== 'object') throw fail(key, `must be an object of strings, got ${kind(v)}`);
    for (const [k, item] of Object.entries(v)) {
      if (names && (!k || k.includes('=') || k.includes('\0'))) {
        throw new ConfigError(file, jsonPath(jsonPath(at, key), k), 'is not a variable name (empty, or with = or NUL)');
      }
      if (typeof item !== 'string') {
        throw new ConfigError(file, jsonPath(jsonPath(at, key), k), `must be a string, got ${kind(item)}`);
      }
      noNul(item, jsonPath(jsonPath(at, key), k));
    }
    return { ...v };
  };
  let type = entry.type ?? null;
  if (type !== null && (typeof type !== 'string' || !Object.hasOwn(TRANSPORTS, type))) {
    const shown = typeof type === 'string' ? JSON.stringify(type) : kind(type);
    throw fail('type', `unknown transport ${shown} (expected stdio, http or sse)`);
  }
  if (type === null) {
    if (Object.hasOwn(entry, 'command')) type = 'stdio';
    else if (Object.hasOwn(entry, 'url')) type = 'http';
    else throw new ConfigError(file, at, 'needs "command" (stdio) or "url" (HTTP)');
  }
  const disabled = entry.disabled ?? false;
  if (typeof disabled !== 'boolean') throw fail('disabled', `must be a boolean, got ${kind(disabled)}`);
  const common = { name, transport: TRANSPORTS[type], file, jsonPath: at, disabled };
  if (type === 'stdio') {
    return new Server({ ...common, command: string('command', true), args: strings('args'), env: table('env', true), cwd: string('cwd') });
  }
  const url = string('url', true);
  if (!/^https?:\/\//i.test(url)) throw fail('url', 'must be an http:// or https:// URL');
  return new Server({ ...common, url, headers: table('headers') });
}

/**
 * The entry with its ${...} variables filled in, its cwd absolute.
 * Understood: ${workspaceFolder}, ${userHome}, ${env:NAME} (VS Code,
 * Cursor), ${NAME} and ${NAME:-default} (Claude Code). Anything else,
 * ${input:...} included (VS Code asks the user for it), throws
 * UnresolvedVariable, whose message names the field and the variable,
 * never a value.
 * @param {Server} s @param {string} workspace
 * @param {Record<string,string|undefined>} [environ] @param {string} [home]
 * @returns {Server}
 */
function resolve(s, workspace, environ = process.env, home = os.homedir()) {
  const has = (name) => Object.hasOwn(environ, name) && environ[name] !== undefined;
  const fill = (text, at) => text.replace(/\$\{([^}]*)\}/g, (_, v) => {
    if (v === 'workspaceFolder') return workspace;
    if (v === 'userHome') return home;
    if (v.startsWith('env:') && has(v.slice(4))) return environ[v.slice(4)];
    const sep = v.indexOf(':-');
    const [name, fallback] = sep < 0 ? [v, null] : [v.slice(0, sep), v.slice(sep + 2)];
    if (/^[A-Za-z_][A-Za-z0-9_]*$/.test(name)) {
      if (has(name)) return environ[name];
      if (fallback !== null) return fallback;
    }
    if (v.startsWith('input:')) throw new UnresolvedVariable(`${at}: \${${v}} is asked of the user by the editor`);
    throw new UnresolvedVariable(`${at}: \${${v}} is not set`);
  });
  const at = s.jsonPath;
  const each = (obj, key) => Object.fromEntries(Object.entries(obj).map(([k, v]) => [k, fill(v, jsonPath(jsonPath(at, key), k))]));
  const base = { name: s.name, transport: s.transport, file: s.file, jsonPath: s.jsonPath, disabled: s.disabled };
  if (s.transport === 'stdio') {
    return new Server({
      ...base,
      command: fill(s.command, jsonPath(at, 'command')),
      args: s.args.map((a, i) => fill(a, jsonPath(jsonPath(at, 'args'), i))),
      env: each(s.env, 'env'),
      cwd: s.cwd === null ? null : path.resolve(workspace, fill(s.cwd, jsonPath(at, 'cwd'))),
    });
  }
  return new Server({ ...base, url: fill(s.url, jsonPath(at, 'url')), headers: each(s.headers, 'headers') });
}

/**
 * Where the usual clients keep their configs on this OS, project files
 * (under cwd) first; existing or not (--config auto reads those that exist).
 * @param {{cwd?: string, home?: string, platform?: string, environ?: Record<string,string|undefined>}} [where]
 * @returns {string[]}
 */
function autoPaths(where = {}) {
  const env = where.environ || process.env;
  const cwd = where.cwd || process.cwd();
  const home = where.home || env.HOME || os.homedir();
  const platform = where.platform || process.platform;
  let app;
  if (platform === 'darwin') app = path.join(home, 'Library', 'Application Support');
  else if (platform === 'win32') app = env.APPDATA || path.join(home, 'AppData', 'Roaming');
  else app = env.XDG_CONFIG_HOME || path.join(home, '.config');
  return [
    path.join(cwd, '.mcp.json'), // Claude Code, project
    path.join(cwd, '.cursor', 'mcp.json'), // Cursor, project
    path.join(cwd, '.vscode', 'mcp.json'), // VS Code, workspace
    path.join(app, 'Claude', 'claude_desktop_config.json'), // Claude Desktop
    path.join(home, '.claude.json'), // Claude Code, user
    path.join(home, '.cursor', 'mcp.json'), // Cursor, user
    path.join(app, 'Code', 'User', 'mcp.json'), // VS Code, user
  ];
}

module.exports = { ConfigError, UnresolvedVariable, Server, TRANSPORTS, load, parse, resolve, autoPaths, jsonPath, stripJsonc, syntaxErrorAt };
