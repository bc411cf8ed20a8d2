'use strict';
/**
 * Maps the public option names to the native settings object.
 */
const { keepaliveOptions } = require('./validate');

const MAX_PROBE_METHOD = 128;

/**
 * The engine's probeMethod for a public `probe` option: undefined
 * (automatic: server/discover on 2026-07-28, tools/list where ping is
 * refused), '' (no probe) or the method name.
 * @param {string|null|undefined} probe 'auto' (default), a method name, or null/'' for none
 * @returns {string|undefined}
 */
function probeMethod(probe) {
  if (probe === undefined || probe === 'auto') return undefined;
  if (probe === null || probe === '') return '';
  const problem = `probe must be a method name of 1 to ${MAX_PROBE_METHOD} bytes without control characters, 'auto' or null`;
  if (typeof probe !== 'string') {
    throw Object.assign(new TypeError(`${problem}, not ${typeof probe}`), { code: 'ERR_MCPPING_INVALID_ARG' });
  }
  // eslint-disable-next-line no-control-regex
  if (Buffer.byteLength(probe) > MAX_PROBE_METHOD || /[\x00-\x1f\x7f]/.test(probe)) {
    throw Object.assign(new RangeError(problem), { code: 'ERR_MCPPING_INVALID_ARG' });
  }
  return probe;
}

/**
 * @param {object} [keepalive] public keepalive options (checked here)
 * @param {object} fixed role, transport, peerName, probe (the public option)
 * @returns {object} settings for the native layer
 */
function toNativeSettings(keepalive, fixed) {
  const { probe, ...rest } = fixed;
  const out = { ...rest, ...keepaliveOptions(keepalive) };
  const method = probeMethod(probe);
  if (method !== undefined) out.probeMethod = method;
  return out;
}

/**
 * The environment a spawned server gets, as the SDK's StdioClientTransport
 * does: a safe subset of ours (getDefaultEnvironment) plus `env`.
 * @param {Record<string,string>|undefined} env
 * @param {boolean} inheritAll pass our whole environment instead of the subset
 * @returns {string[]} KEY=VALUE entries
 */
function childEnvironment(env, inheritAll) {
  const keys = ['HOME', 'LOGNAME', 'PATH', 'SHELL', 'TERM', 'USER'];
  const base = {};
  if (inheritAll) {
    Object.assign(base, process.env);
  } else {
    for (const key of keys) {
      const value = process.env[key];
      if (value !== undefined && !value.startsWith('()')) base[key] = value;
    }
  }
  const merged = { ...base, ...(env || {}) };
  return Object.entries(merged)
    .filter(([, v]) => v !== undefined && v !== null)
    .map(([k, v]) => `${k}=${v}`);
}

module.exports = { toNativeSettings, childEnvironment, probeMethod };
