'use strict';
/**
 * Argument checks at the public boundary. A bad value throws at once with a
 * message naming the parameter and its allowed range, never a silent clamp,
 * default or 32-bit wrap: TypeError for the wrong type, RangeError for a
 * number that is not finite, not an integer or out of range. Both carry
 * the stable code ERR_MCPPING_INVALID_ARG. The settings' defaults, ranges
 * and sentences come from the C settings table (mcpping/settings.h,
 * settingCheck), so the native check behind these never fires first.
 */
const native = require('./binding');

/** The C settings table, by name ("timeout_ms", "reconnect.jitter"); times in ms. */
const TABLE = new Map(native.settingsTable().map((row) => [row.name, row]));
/** The call arguments that are no setting ("kill_grace_ms", "retry_budget.burst", "rtt_window"), as rows. */
const ARGUMENTS = new Map(native.argumentsTable().map((row) => [row.name, row]));
/** Node's spelling of a setting: camelCase, without "reconnect.". */
const jsName = (name) => name.replace(/^reconnect\./, '').replace(/_([a-z])/g, (_, c) => c.toUpperCase());
/** The keepalive options and reconnect options, by Node name (the rest each call sets itself). */
const rows = (ok) => new Map([...TABLE.values()].filter((r) => ok(r.name)).map((r) => [jsName(r.name), r]));
// Backpressure is a connection's option (options.maxPendingBytes), not keepalive's.
const KEEPALIVE_ROWS = rows((n) => !n.includes('.')
  && !['role', 'transport', 'probe_method', 'forward_peer_pings', 'max_pending_bytes'].includes(n));
const RECONNECT_ROWS = rows((n) => n.startsWith('reconnect.') && n !== 'reconnect.enabled');
const KEEPALIVE_KEYS = [...KEEPALIVE_ROWS.keys()];
const RECONNECT_KEYS = [...RECONNECT_ROWS.keys()];
/** The keys of ping()'s and request()'s options. */
const PING_KEYS = ['timeoutMs', 'signal'];

const CODE = 'ERR_MCPPING_INVALID_ARG';

/** @param {unknown} value @returns {string} the value as an error shows it */
function shown(value) {
  if (typeof value === 'string') return JSON.stringify(value);
  if (typeof value === 'bigint') return `${value}n`;
  if (value === null || typeof value !== 'object') return String(value);
  return Array.isArray(value) ? 'an array' : 'an object';
}

/**
 * @param {ErrorConstructor} Kind TypeError or RangeError
 * @param {string} message
 */
function invalid(Kind, message) {
  const err = new Kind(message);
  err.code = CODE;
  return err;
}

/** @param {unknown} value @returns {boolean} undefined or null: not given */
function absent(value) {
  return value === undefined || value === null;
}

/**
 * A setting or call argument checked by its C row, if given: a duration
 * ('timeout_ms': a call's timeout; 'request_timeout_ms', 0 too: none;
 * 'kill_grace_ms', 0 too: SIGKILL at once) or a byte budget
 * ('max_pending_bytes', 'max_line_bytes', 0 too: the default).
 * @param {string} label as the caller wrote it
 * @param {string} name the row
 * @param {unknown} value
 * @param {number} [dflt] returned when the value is not given
 * @returns {number|undefined}
 */
function optional(label, name, value, dflt) {
  return absent(value) ? dflt : setting(label, name, value);
}

/**
 * @param {string} name
 * @param {unknown} value
 * @param {readonly string[]} choices
 * @returns {string|undefined}
 */
function oneOf(name, value, choices) {
  if (absent(value)) return undefined;
  if (!choices.includes(value)) {
    throw invalid(TypeError, `${name} must be ${choices.map((c) => `'${c}'`).join(' or ')}, not ${shown(value)}`);
  }
  return value;
}

/**
 * @param {string} name
 * @param {unknown} value
 * @param {string} type 'string', 'boolean', 'function' or 'object'
 */
function ofType(name, value, type) {
  if (absent(value)) return;
  const ok = type === 'object' ? typeof value === 'object' && !Array.isArray(value) : typeof value === type;
  if (!ok) throw invalid(TypeError, `${name} must be ${type === 'object' ? 'an object' : `a ${type}`}, not ${shown(value)}`);
}

/**
 * The options object of a call (undefined or null: none).
 * @param {string} name
 * @param {unknown} value
 * @returns {object}
 */
function options(name, value) {
  ofType(name, value, 'object');
  return value || {};
}

/** @param {string} name @param {unknown} signal an AbortSignal, if given */
function abortSignal(name, signal) {
  if (absent(signal)) return;
  if (typeof signal !== 'object' || typeof signal.aborted !== 'boolean' || typeof signal.addEventListener !== 'function') {
    throw invalid(TypeError, `${name} must be an AbortSignal, not ${shown(signal)}`);
  }
}

/**
 * Checks a ping's options: {timeoutMs?, signal?}.
 * @param {unknown} opts
 * @returns {{timeoutMs: number, signal: AbortSignal|undefined}} timeoutMs 0 for the default
 */
function pingOptions(opts) {
  if (absent(opts)) return { timeoutMs: 0, signal: undefined }; // peer.ping(): nothing to check
  const o = options('ping options', opts);
  knownKeys('options', o, PING_KEYS);
  abortSignal('signal', o.signal);
  return { timeoutMs: optional('timeoutMs', 'timeout_ms', o.timeoutMs, 0), signal: o.signal || undefined };
}

/** @param {string} name the C name @returns {number} the library's default (the table's policy), ms for a time */
const settingDefault = (name) => TABLE.get(name).policy;

/**
 * One setting's value checked by the C table, in the caller's unit (ms, or seconds with inSeconds);
 * returns C's (whole ms for times). RangeError with C's sentence, TypeError for the wrong type.
 * @param {string} label the name the caller wrote @param {string} name the C name @param {unknown} value
 * @param {{inSeconds?: boolean, low?: number, lowName?: string}} [opts] low: a floor another setting raised
 */
function setting(label, name, value, opts = {}) {
  const row = TABLE.get(name) || ARGUMENTS.get(name);
  const ok = row.unit === 'choice' ? row.choices.split('|').includes(value) : typeof value === (row.unit === 'flag' ? 'boolean' : 'number');
  if (!ok) {
    const wanted = row.unit === 'flag' ? 'a boolean' : native.settingRange(name, !!opts.inSeconds, opts.low, opts.lowName);
    throw invalid(TypeError, `${label} must be ${wanted}, not ${shown(value)}`);
  }
  if (row.unit === 'choice' || row.unit === 'flag') return value;
  return native.settingCheck(name, label, value, !!opts.inSeconds, opts.low, opts.lowName);
}

/**
 * Refuses a key that is not among `names` (a misspelt option would otherwise be ignored).
 * @param {string} what the object as the caller named it ('options', 'keepalive')
 * @param {object} given @param {readonly string[]} names the keys it takes
 */
function knownKeys(what, given, names) {
  const bad = Object.keys(given).find((key) => !names.includes(key));
  if (bad) throw invalid(TypeError, `${what}.${bad} is not an option; the options are ${names.join(', ')}`);
}

/**
 * The keepalive settings, each checked by the C table; intervalMs defaults
 * to the library's policy (keepalive on).
 * @param {unknown} keepalive the `keepalive` option
 * @returns {object} the keepalive settings given (others left out), in C's units
 */
function keepaliveOptions(keepalive) {
  const ka = options('keepalive', keepalive);
  knownKeys('keepalive', ka, KEEPALIVE_KEYS);
  // Below the floor is refused where it is written, unless clampInterval raises it.
  const minMs = setting('keepalive.minIntervalMs', 'min_interval_ms',
    absent(ka.minIntervalMs) ? settingDefault('min_interval_ms') : ka.minIntervalMs);
  const floor = ka.clampInterval === true ? {} : { low: minMs, lowName: 'minIntervalMs' };
  const out = {};
  for (const [key, row] of KEEPALIVE_ROWS) {
    if (absent(ka[key])) continue;
    try {
      out[key] = setting(`keepalive.${key}`, row.name, ka[key], key === 'intervalMs' ? floor : {});
    } catch (err) {
      // Below the floor but in range: the engine's name for this refusal.
      if (key === 'intervalMs' && ka[key] > 0 && ka[key] <= TABLE.get('timeout_ms').max) err.code = 'MCPP_ERR_INTERVAL_TOO_SHORT';
      throw err;
    }
  }
  if (out.intervalMs === undefined) out.intervalMs = settingDefault('interval_ms');
  return out;
}

/**
 * The `reconnect` option: undefined/null/false (off), true (the defaults)
 * or an object of the fields below (absent ones take their default).
 * @param {unknown} reconnect
 * @returns {{initialMs: number, maxDelayMs: number, multiplier: number, jitter: number, maxAttempts: number}|undefined}
 */
function reconnectOptions(reconnect) {
  if (absent(reconnect) || reconnect === false) return undefined;
  const given = reconnect === true ? {} : options('reconnect', reconnect);
  knownKeys('reconnect', given, RECONNECT_KEYS);
  const out = {};
  for (const [key, row] of RECONNECT_ROWS) {
    const value = absent(given[key]) ? row.policy : given[key];
    const floor = key === 'maxDelayMs' ? { low: out.initialMs, lowName: 'initialMs' } : {};
    out[key] = setting(`reconnect.${key}`, row.name, value, floor);
  }
  return out;
}

/** setRetryBudget's fields and their C rows. */
const BUDGET_ROWS = new Map([['burst', ARGUMENTS.get('retry_budget.burst')],
  ['perSecond', ARGUMENTS.get('retry_budget.per_second')]]);
const BUDGET_KEYS = [...BUDGET_ROWS.keys()];

/**
 * The process's retry budget (setRetryBudget): each field checked by its C
 * row, absent ones the row's default; a key it does not know is refused.
 * @param {unknown} budget
 * @returns {{burst: number, perSecond: number}}
 */
function retryBudget(budget) {
  const given = options('budget', budget);
  knownKeys('budget', given, BUDGET_KEYS);
  const out = {};
  for (const [key, row] of BUDGET_ROWS) out[key] = optional(`budget.${key}`, row.name, given[key], row.policy);
  return out;
}

/**
 * The keys of a stdio server's params (ServerParams, index.d.ts): Peer
 * refuses any other; StdioClientTransport, a drop-in for the SDK's, takes
 * its params as the SDK does (a framework may pass keys the SDK ignores).
 */
const SERVER_PARAMS = ['command', 'args', 'env', 'cwd', 'stderr', 'killGraceMs'];

/**
 * Checks the values of a stdio server's params (connect, Peer, StdioClientTransport).
 * @param {string} where the caller, for the message
 * @param {unknown} params
 */
function serverParams(where, params) {
  if (!params || typeof params !== 'object') throw invalid(TypeError, `${where}: params must be an object, not ${shown(params)}`);
  if (typeof params.command !== 'string' || params.command === '') {
    throw invalid(TypeError, `${where}: params.command must be a non-empty string, not ${shown(params.command)}`);
  }
  if (!absent(params.args) && (!Array.isArray(params.args) || !params.args.every((a) => typeof a === 'string'))) {
    throw invalid(TypeError, `${where}: params.args must be an array of strings, not ${shown(params.args)}`);
  }
  ofType('params.env', params.env, 'object');
  ofType('params.cwd', params.cwd, 'string');
  oneOf('params.stderr', params.stderr, ['inherit', 'pipe', 'ignore']);
  optional('params.killGraceMs', 'kill_grace_ms', params.killGraceMs, 0);
}

/**
 * The JSON text of a message the application sends. NaN and ±Infinity are
 * refused (a RangeError, as Python's json refuses them): JSON.stringify
 * would write null, altering the message. Only text holding a null is
 * looked at again, so the common message costs one stringify.
 * @param {unknown} message
 * @returns {string}
 */
function json(message) {
  const text = JSON.stringify(message);
  if (text !== undefined && text.includes('null')) {
    JSON.stringify(message, (key, value) => {
      if (typeof value === 'number' && !Number.isFinite(value)) {
        throw invalid(RangeError, `message is not JSON: ${key ? `"${key}" is ` : ''}${value}, which JSON has no number for`);
      }
      return value;
    });
  }
  return text;
}

module.exports = {
  CODE,
  json,
  TABLE,
  setting,
  settingDefault,
  invalid,
  shown,
  optional,
  abortSignal,
  oneOf,
  ofType,
  options,
  knownKeys,
  pingOptions,
  PING_KEYS,
  keepaliveOptions,
  reconnectOptions,
  retryBudget,
  serverParams,
  SERVER_PARAMS,
};
