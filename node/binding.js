'use strict';
/**
 * Loads the native addon once per JavaScript environment (main thread or
 * worker): each environment gets its own runtime (hosted by its own loop)
 * and native thread.
 *
 * A source build wins over the prebuild: `npm install` compiles only where
 * no prebuild fits, and a developer's fresh build must be the one tested.
 */
const fs = require('node:fs');
const path = require('node:path');
const { prebuildFile } = require('./prebuild_path.js');

const root = path.resolve(__dirname, '..');

/** @param {string} file @returns {number} its mtime in ms, 0 if missing */
function mtimeOf(file) {
  try {
    return fs.statSync(file).mtimeMs;
  } catch {
    return 0;
  }
}

/** @returns {string[]} the addon files to try, in order */
function candidates() {
  // node/build.js leaves a copy beside this file; build/ may have been cleaned.
  // The newest one wins, so a direct `node-gyp build` is picked up too.
  const built = [path.join(__dirname, 'mcpping.node'), ...['Release', 'Debug'].map((d) => path.join(root, 'build', d, 'mcpping.node'))]
    .map((file) => ({ file, mtime: mtimeOf(file) }))
    .filter((c) => c.mtime > 0)
    .sort((a, b) => b.mtime - a.mtime)
    .map((c) => c.file);
  return [...built, prebuildFile()];
}

/** @returns {object} the addon's exports */
function load() {
  const tried = [];
  for (const file of candidates()) {
    try {
      return require(file);
    } catch (err) {
      // A prebuild for another libc or a truncated file: say why, try the next.
      tried.push(err.code === 'MODULE_NOT_FOUND' ? `${file} (missing)` : `${file} (${err.message.split('\n')[0]})`);
    }
  }
  throw new Error(`mcpping: no usable native addon (tried ${tried.join('; ')}); run \`npm rebuild mcpping\` to compile one`);
}

module.exports = load();
