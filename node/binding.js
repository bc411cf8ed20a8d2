'use strict';
/**
 * Loads the native addon once per JavaScript environment (main thread or
 * worker): each environment gets its own runtime and I/O thread.
 */
const path = require('node:path');

const root = path.resolve(__dirname, '..');

/** @returns {object} the addon's exports */
function load() {
  const tried = [];
  for (const dir of ['Release', 'Debug']) {
    const file = path.join(root, 'build', dir, 'mcpping.node');
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
