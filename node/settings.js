'use strict';
/**
 * Maps the public option names to the native settings object.
 */
const { keepaliveOptions } = require('./validate');

/**
 * @param {object} [keepalive] public keepalive options (checked here)
 * @param {object} fixed role, transport, peerName
 * @returns {object} settings for the native layer
 */
function toNativeSettings(keepalive, fixed) {
  const out = { ...fixed, ...keepaliveOptions(keepalive) };
  if (out.intervalMs === undefined) out.intervalMs = 0;
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

module.exports = { toNativeSettings, childEnvironment };
