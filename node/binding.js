'use strict';
/**
 * Loads the native addon once per JavaScript environment (main thread or
 * worker): each environment gets its own runtime and I/O thread.
 */
const fs = require('node:fs');
const path = require('node:path');

const root = path.resolve(__dirname, '..');

/** @param {string} file @returns {number} its mtime in ms, 0 if missing */
function mtimeOf(file) {
  try {
    return fs.statSync(file).mtimeMs;
  } catch {
    return 0;
  }
}

/** @returns {object} the addon's exports */
function load() {
  const tried = [];
  // node/build.js leaves a copy beside this file; build/ may have been cleaned.
  // The newest one wins, so a direct `node-gyp build` is picked up too.
  const candidates = [path.join(__dirname, 'mcpping.node'), ...['Release', 'Debug'].map((d) => path.join(root, 'build', d, 'mcpping.node'))]
    .map((file) => ({ file, mtime: mtimeOf(file) }))
    .sort((a, b) => b.mtime - a.mtime)
    .map((c) => c.file);
  for (const file of candidates) {
    try {
      return require(file);
    } catch (err) {
      if (err.code !== 'MODULE_NOT_FOUND') throw err;
      tried.push(file);
    }
  }
  throw new Error(`mcpping: native addon not built (tried ${tried.join(', ')}); run \`npm install\``);
}

module.exports = load();
