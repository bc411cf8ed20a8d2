#!/usr/bin/env node
/**
 * npm's install script: uses the prebuilt addon when one fits this platform
 * and loads, and compiles from source (node/build.js) only otherwise, saying
 * so. A source checkout without prebuilds/ compiles, as before.
 */
'use strict';
const { spawnSync } = require('node:child_process');
const fs = require('node:fs');
const path = require('node:path');
const { platformTag, prebuildFile } = require('./prebuild_path.js');

/** @param {string} file @returns {string|null} why it does not load, null if it does */
function loadProblem(file) {
  if (!fs.existsSync(file)) return 'none is shipped for it';
  // In a child: a failed dlopen must not leave this process half-loaded.
  const res = spawnSync(process.execPath, ['-e', 'require(process.argv[1])', file], { encoding: 'utf8' });
  return res.status === 0 ? null : (res.stderr.trim().split('\n').find((l) => l.includes('Error')) || 'it does not load');
}

const problem = loadProblem(prebuildFile());
if (problem === null) process.exit(0);
console.warn(`mcpping: no prebuilt addon for ${platformTag()} (${problem}); compiling from source (needs a C/C++ compiler, make and Python)`);
const res = spawnSync(process.execPath, [path.join(__dirname, 'build.js')], { stdio: 'inherit' });
process.exit(res.status === null ? 1 : res.status);
