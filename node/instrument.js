'use strict';
/**
 * instrument(): every stdio client transport that the official SDK creates
 * in this process goes through mcpping, whichever framework creates it:
 * the StdioClientTransport export of the SDK's CommonJS modules
 * (`@modelcontextprotocol/sdk/client/stdio.js`, and the v2 client's
 * `@modelcontextprotocol/client/stdio`) is replaced by one that builds
 * mcpping's transport with the options given here.
 *
 * It reaches code that reads the export when it creates a transport, as
 * compiled CommonJS does (`stdio_js_1.StdioClientTransport`): LangChain's
 * MultiServerMCPClient and the OpenAI Agents SDK's MCPServerStdio from
 * require(), even when loaded before instrument(). It cannot reach ES
 * modules: an ESM namespace is immutable, and `import` loads the SDK's ESM
 * build, a different module. Those users pass a transport themselves
 * (docs/node.md).
 */
const path = require('node:path');
const { StdioClientTransport, TRANSPORT_OPTIONS } = require('./transport');
const check = require('./validate');

/** The SDK modules that export StdioClientTransport, CommonJS builds. */
const TARGETS = ['@modelcontextprotocol/sdk/client/stdio.js', '@modelcontextprotocol/client/stdio'];
const STDERR_MODES = ['inherit', 'pipe', 'ignore'];

const state = {
  /** @type {object|null} the transport options in force; null: not instrumented */
  options: null,
  /** @type {Array<{file: string, exports: object, original: Function}>} */
  patched: [],
  /** @type {Set<StdioClientTransport>} open transports made while instrumented */
  live: new Set(),
};

/** Checks instrument()'s options with the transport's own validators. */
function checkOptions(options) {
  const o = check.options('instrument options', options);
  check.knownKeys('options', o, [...TRANSPORT_OPTIONS, 'paths']);
  check.keepaliveOptions(o.keepalive);
  check.optional('options.requestTimeoutMs', 'request_timeout_ms', o.requestTimeoutMs, 0);
  check.optional('options.maxPendingBytes', 'max_pending_bytes', o.maxPendingBytes);
  check.reconnectOptions(o.reconnect);
  if (o.paths !== undefined && (!Array.isArray(o.paths) || !o.paths.every((p) => typeof p === 'string'))) {
    throw check.invalid(TypeError, `options.paths must be an array of directory names, not ${check.shown(o.paths)}`);
  }
  const { paths, ...transportOptions } = o;
  return { transportOptions, paths: paths || [] };
}

/**
 * The replacement for one SDK module's StdioClientTransport. Params that
 * mcpping cannot honour (stderr as a stream or a file descriptor) get the
 * SDK's own transport, unwatched, rather than a different behaviour.
 * @param {Function} Original the SDK's class
 */
function replacementFor(Original) {
  class InstrumentedStdioClientTransport extends StdioClientTransport {
    constructor(params, ...rest) {
      if (!state.options || (params && params.stderr !== undefined && !STDERR_MODES.includes(params.stderr))) {
        // A derived constructor may return another object instead of `this`.
        return new Original(params, ...rest);
      }
      super(params, state.options);
      this.once('closed', () => state.live.delete(this));
    }

    async start() {
      await super.start();
      state.live.add(this); // from start to close: an unstarted one holds nothing
    }
  }
  Object.defineProperty(InstrumentedStdioClientTransport, 'name', { value: 'StdioClientTransport' });
  return InstrumentedStdioClientTransport;
}

/**
 * Routes the SDK's stdio client transports through mcpping. Idempotent:
 * calling it again replaces the options (for transports created after).
 * @param {{keepalive?: object, records?: string|Function|object, probe?: string|null,
 *   requestTimeoutMs?: number, maxPendingBytes?: number, reconnect?: object|boolean,
 *   paths?: string[]}} [options]
 *   the StdioClientTransport options; paths: more directories to find the
 *   SDK from (default: the main module's, the current directory, mcpping's)
 * @returns {string[]} the SDK module files patched
 */
function instrument(options) {
  const { transportOptions, paths } = checkOptions(options);
  state.options = transportOptions;
  const bases = [...paths];
  if (require.main && require.main.filename) bases.push(path.dirname(require.main.filename));
  bases.push(process.cwd(), __dirname);
  for (const target of TARGETS) {
    for (const base of bases) {
      let file;
      try {
        file = require.resolve(target, { paths: [base] });
      } catch {
        continue; // not installed where this base looks
      }
      if (state.patched.some((p) => p.file === file)) continue;
      const exports = require(file);
      const original = exports.StdioClientTransport;
      if (typeof original !== 'function') continue;
      exports.StdioClientTransport = replacementFor(original);
      state.patched.push({ file, exports, original });
    }
  }
  return state.patched.map((p) => p.file);
}

/** Puts the SDK's own StdioClientTransport back; open transports stay as they are. */
function uninstrument() {
  for (const p of state.patched) p.exports.StdioClientTransport = p.original;
  state.patched = [];
  state.options = null;
}

/** @returns {StdioClientTransport[]} the open transports made while instrumented */
function instrumentedTransports() {
  return [...state.live];
}

module.exports = { instrument, uninstrument, instrumentedTransports };
