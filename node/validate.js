'use strict';
/**
 * Argument checks at the public boundary. A bad value throws at once with a
 * message naming the parameter and its allowed range, never a silent clamp,
 * default or 32-bit wrap: TypeError for the wrong type, RangeError for a
 * number that is not finite, not an integer or out of range. Both carry
 * the stable code ERR_MCPPING_INVALID_ARG. The ranges are the C engine's
 * (mcpping.h), so the native check behind these never fires first.
 */

const CODE = 'ERR_MCPPING_INVALID_ARG';
/** mcpping.h MCPP_MAX_MS: also the longest delay setTimeout honours. */
const MAX_MS = 2147483647;

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
 * An integer in [min, max].
 * @param {string} name as the caller wrote it, e.g. 'keepalive.timeoutMs'
 * @param {unknown} value
 * @param {number} min
 * @param {number} max
 * @param {string} [range] how to say the range, when "between min and max" is not it
 * @returns {number}
 */
function integer(name, value, min, max, range) {
  const allowed = range || `between ${min} and ${max}`;
  if (typeof value !== 'number') {
    throw invalid(TypeError, `${name} must be a number, an integer ${allowed}; got ${shown(value)}`);
  }
  if (!Number.isInteger(value) || value < min || value > max) {
    throw invalid(RangeError, `${name} must be an integer ${allowed}; got ${shown(value)}`);
  }
  return value;
}

/**
 * A duration in ms, 1..MAX_MS, or 0 where `zero` says what 0 means.
 * @param {string} name
 * @param {unknown} value
 * @param {number} dflt returned when the value is not given
 * @param {string} [zero] e.g. 'none': 0 is allowed and means that
 * @returns {number}
 */
function durationMs(name, value, dflt, zero) {
  if (absent(value)) return dflt;
  const range = zero ? `0 (${zero}) or between 1 and ${MAX_MS} ms` : `between 1 and ${MAX_MS} ms`;
  return integer(name, value, zero ? 0 : 1, MAX_MS, range);
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
    throw invalid(TypeError, `${name} must be ${choices.map((c) => `'${c}'`).join(' or ')}; got ${shown(value)}`);
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
  if (!ok) throw invalid(TypeError, `${name} must be ${type === 'object' ? 'an object' : `a ${type}`}; got ${shown(value)}`);
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

/** The largest byte budget the engine takes (maxPendingBytes, maxLineBytes). */
const MAX_BYTES = 2 ** 48;

/**
 * A byte budget, 1..MAX_BYTES, if given.
 * @param {string} name
 * @param {unknown} value
 */
function byteCount(name, value) {
  if (absent(value)) return undefined;
  return integer(name, value, 1, MAX_BYTES, `between 1 and ${MAX_BYTES} bytes`);
}

/** @param {string} name @param {unknown} signal an AbortSignal, if given */
function abortSignal(name, signal) {
  if (absent(signal)) return;
  if (typeof signal !== 'object' || typeof signal.aborted !== 'boolean' || typeof signal.addEventListener !== 'function') {
    throw invalid(TypeError, `${name} must be an AbortSignal; got ${shown(signal)}`);
  }
}

/**
 * Checks a ping's options: {timeoutMs?, signal?}.
 * @param {unknown} opts
 * @returns {{timeoutMs: number, signal: AbortSignal|undefined}} timeoutMs 0 for the default
 */
function pingOptions(opts) {
  const o = options('ping options', opts);
  abortSignal('signal', o.signal);
  return { timeoutMs: durationMs('timeoutMs', o.timeoutMs, 0), signal: o.signal || undefined };
}

/**
 * The keepalive settings, each checked against the engine's range. Unknown
 * keys are refused too: a misspelt option would otherwise be ignored.
 */
const KEEPALIVE_RULES = {
  intervalMs: (n, v) => durationMs(n, v, 0, 'off; else at least minIntervalMs'),
  timeoutMs: (n, v) => durationMs(n, v, 0),
  failures: (n, v) => integer(n, v, 1, 1000),
  jitterPct: (n, v) => integer(n, v, 0, 100),
  minIntervalMs: (n, v) => integer(n, v, 0, MAX_MS, `between 0 and ${MAX_MS} ms`),
  clampInterval: (n, v) => ofType(n, v, 'boolean'),
  pauseThresholdMs: (n, v) => durationMs(n, v, 0),
  requestTimeoutMs: (n, v) => durationMs(n, v, 0, 'none'),
  onStale: (n, v) => oneOf(n, v, ['close', 'report']),
  maxOutstandingPings: (n, v) => integer(n, v, 1, 1048576),
  maxLineBytes: (n, v) => byteCount(n, v),
  maxPendingBytes: (n, v) => byteCount(n, v),
};

/**
 * @param {unknown} keepalive the `keepalive` option
 * @returns {object} the keepalive settings given (absent ones left out)
 */
function keepaliveOptions(keepalive) {
  const ka = options('keepalive', keepalive);
  const out = {};
  for (const [key, value] of Object.entries(ka)) {
    const rule = KEEPALIVE_RULES[key];
    if (!rule) {
      throw invalid(TypeError, `keepalive.${key} is not an option; the options are ${Object.keys(KEEPALIVE_RULES).join(', ')}`);
    }
    if (absent(value)) continue;
    rule(`keepalive.${key}`, value);
    out[key] = value;
  }
  return out;
}

/**
 * A finite number in [min, max].
 * @param {string} name
 * @param {unknown} value
 * @param {number} min
 * @param {number} max
 * @returns {number}
 */
function number(name, value, min, max) {
  if (typeof value !== 'number') {
    throw invalid(TypeError, `${name} must be a number between ${min} and ${max}; got ${shown(value)}`);
  }
  if (!Number.isFinite(value) || value < min || value > max) {
    throw invalid(RangeError, `${name} must be a number between ${min} and ${max}; got ${shown(value)}`);
  }
  return value;
}

/** mcpping.h MCPP_MAX_RECONNECT_ATTEMPTS and MCPP_MAX_RECONNECT_MULTIPLIER. */
const MAX_RECONNECT_ATTEMPTS = 1000000;
const MAX_RECONNECT_MULTIPLIER = 1000;
const RECONNECT_DEFAULTS = { initialMs: 1000, maxDelayMs: 30000, multiplier: 2, jitter: 0.2, maxAttempts: 10 };

/**
 * The `reconnect` option: undefined/null/false (off), true (the defaults)
 * or an object of the fields below (absent ones take their default).
 * @param {unknown} reconnect
 * @returns {{initialMs: number, maxDelayMs: number, multiplier: number, jitter: number, maxAttempts: number}|undefined}
 */
function reconnectOptions(reconnect) {
  if (absent(reconnect) || reconnect === false) return undefined;
  const given = reconnect === true ? {} : options('reconnect', reconnect);
  for (const key of Object.keys(given)) {
    if (!(key in RECONNECT_DEFAULTS)) {
      throw invalid(TypeError, `reconnect.${key} is not an option; the options are ${Object.keys(RECONNECT_DEFAULTS).join(', ')}`);
    }
  }
  const out = { ...RECONNECT_DEFAULTS };
  for (const [key, value] of Object.entries(given)) if (!absent(value)) out[key] = value;
  durationMs('reconnect.initialMs', out.initialMs, 0);
  integer('reconnect.maxDelayMs', out.maxDelayMs, out.initialMs, MAX_MS,
    `between initialMs (${out.initialMs}) and ${MAX_MS} ms`);
  number('reconnect.multiplier', out.multiplier, 1, MAX_RECONNECT_MULTIPLIER);
  number('reconnect.jitter', out.jitter, 0, 1);
  integer('reconnect.maxAttempts', out.maxAttempts, 1, MAX_RECONNECT_ATTEMPTS);
  return out;
}

/**
 * Checks a stdio server's params (connect, Peer, StdioClientTransport).
 * @param {string} where the caller, for the message
 * @param {unknown} params
 */
function serverParams(where, params) {
  if (!params || typeof params !== 'object') throw invalid(TypeError, `${where}: params must be an object; got ${shown(params)}`);
  if (typeof params.command !== 'string' || params.command === '') {
    throw invalid(TypeError, `${where}: params.command must be a non-empty string; got ${shown(params.command)}`);
  }
  if (!absent(params.args) && (!Array.isArray(params.args) || !params.args.every((a) => typeof a === 'string'))) {
    throw invalid(TypeError, `${where}: params.args must be an array of strings; got ${shown(params.args)}`);
  }
  ofType('params.env', params.env, 'object');
  ofType('params.cwd', params.cwd, 'string');
  oneOf('params.stderr', params.stderr, ['inherit', 'pipe', 'ignore']);
  durationMs('params.killGraceMs', params.killGraceMs, 0, 'SIGKILL at once');
}

module.exports = {
  CODE,
  MAX_MS,
  invalid,
  shown,
  integer,
  durationMs,
  byteCount,
  abortSignal,
  oneOf,
  ofType,
  options,
  pingOptions,
  keepaliveOptions,
  reconnectOptions,
  number,
  serverParams,
};
