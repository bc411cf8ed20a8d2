'use strict';
/**
 * MCP client configs: the servers a Claude Desktop, Claude Code, Cursor or
 * VS Code config declares (docs/cli.md, "--config").
 *
 * load() reads one file into {path, servers} of plain server entries,
 * exactly as written; resolve() expands one entry's variables
 * (${workspaceFolder}, ${env:NAME}, ${NAME:-default}...) when it is about
 * to be started. A file that cannot be used throws ConfigError, naming the
 * file and the JSON path of the problem. The rules and every sentence are
 * C's (csrc/src/app/config_load.c, config_resolve.c); this module reads the
 * file and builds the objects.
 *
 * Secrets: env and headers values are kept for starting the server and never
 * shown: not by util.inspect, not in an error message.
 */
const fs = require('node:fs');
const { inspect } = require('node:util');
const native = require('./binding');

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

  /** @returns {string[]} what the commands never print of it: env and headers values, the URL */
  get secrets() {
    return [...Object.values(this.env), ...Object.values(this.headers), ...(this.url ? [this.url] : [])];
  }

  [inspect.custom]() {
    return `Server ${inspect({ ...this })}`;
  }
}

/** @param {string} parent @param {string|number} key @returns {string} $.a.b, $.a["b c"], $.a[3] */
function jsonPath(parent, key) {
  return native.configJsonPath(parent, key);
}

/** Comments and trailing commas (JSONC) blanked, every other character in place. */
function stripJsonc(text) {
  return native.configStripJsonc(text);
}

/** @param {string} text @returns {number} where strict JSON first goes wrong (code points), or -1 */
function syntaxErrorAt(text) {
  return native.configSyntaxErrorAt(text);
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
    throw new ConfigError(file, null, native.configReadProblem(err.code));
  }
  return parseBytes(data, file, requireServers, project);
}

/**
 * Parses a config's text (JSON or JSONC).
 * @param {string} text @param {string} file @param {boolean} [requireServers] @param {string} [project]
 * @returns {{path: string, workspace: string, servers: Server[]}}
 */
function parse(text, file, requireServers = true, project) {
  return parseBytes(Buffer.from(text, 'utf8'), file, requireServers, project);
}

function parseBytes(data, file, requireServers, project) {
  const r = native.configParse(data, requireServers, project ?? null);
  if (r.problem !== null) throw new ConfigError(file, r.jsonPath, r.problem);
  return { path: file, workspace: native.configWorkspace(file), servers: r.servers.map((f) => new Server({ ...f, file })) };
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
function resolve(s, workspace, environ = process.env, home) {
  const fields = { name: s.name, transport: s.transport, jsonPath: s.jsonPath, command: s.command, args: s.args, env: s.env, cwd: s.cwd, url: s.url, headers: s.headers };
  const filled = native.configResolve(fields, workspace, environ, home ?? null);
  if (typeof filled === 'string') throw new UnresolvedVariable(filled);
  return new Server({ ...filled, file: s.file, disabled: s.disabled });
}

/**
 * Where the usual clients keep their configs on this OS, project files
 * (under cwd) first; existing or not (--config auto reads those that exist).
 * @param {{cwd?: string, home?: string, platform?: string, environ?: Record<string,string|undefined>}} [where]
 * @returns {string[]}
 */
function autoPaths(where = {}) {
  return native.configAutoPaths(where.cwd || null, where.home || null, where.platform || process.platform, where.environ || process.env);
}

module.exports = { ConfigError, UnresolvedVariable, Server, load, parse, resolve, autoPaths, jsonPath, stripJsonc, syntaxErrorAt };
