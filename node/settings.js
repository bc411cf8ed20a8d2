'use strict';
/**
 * Maps the public option names to the native settings object.
 */
const { keepaliveOptions, invalid } = require('./validate');
const native = require('./binding');

/**
 * The engine's probeMethod for a public `probe` option ('auto' (default), a method name, or null/''):
 * undefined (automatic: server/discover on 2026-07-28, tools/list where ping is refused), '' (none) or the method.
 */
function probeMethod(probe) {
  if (probe === undefined || probe === native.probeAuto) return undefined;
  if (probe === null || probe === '') return '';
  if (typeof probe !== 'string') throw invalid(TypeError, `probe must be a method name (string), 'auto' or null, not ${typeof probe}`);
  native.settingCheckText('probe_method', 'probe', probe); // C's rule and sentence
  return probe;
}

/**
 * @param {object} [keepalive] public keepalive options (checked here)
 * @param {object} fixed role, transport, peerName, probe (the public option), maxPendingBytes
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
 * The environment a spawned server gets (C's rule, mcpp_env_safe, as in
 * Python): ours, or the SDKs' safe subset of it (getDefaultEnvironment),
 * with `env` on top.
 * @param {Record<string,string>|undefined} env
 * @param {boolean} inheritAll pass our whole environment instead of the subset
 * @returns {string[]} KEY=VALUE entries
 */
function childEnvironment(env, inheritAll) {
  const base = {};
  for (const [key, value] of Object.entries(process.env)) {
    if (inheritAll || native.envSafe(key, value)) base[key] = value;
  }
  const merged = { ...base, ...(env || {}) };
  return Object.entries(merged)
    .filter(([, v]) => v !== undefined && v !== null)
    .map(([k, v]) => `${k}=${v}`);
}

module.exports = { toNativeSettings, childEnvironment, probeMethod };
