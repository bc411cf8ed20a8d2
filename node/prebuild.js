#!/usr/bin/env node
/**
 * npm's prepack script: compiles the addon from source (node/build.js) and
 * puts it where the loader looks for this platform's prebuild, so `npm pack`
 * in a clean clone (after `npm install`) ships it. The addon uses Node-API 8
 * only, so one binary serves every Node the package supports (engines).
 */
'use strict';
const { spawnSync } = require('node:child_process');
const fs = require('node:fs');
const path = require('node:path');
const { prebuildFile } = require('./prebuild_path.js');

const root = path.resolve(__dirname, '..');
// The build's output goes to stderr: `npm pack` prints the tarball's name on
// stdout, and scripts read it (npm install "$(npm pack)").
const res = spawnSync(process.execPath, [path.join(__dirname, 'build.js')], { stdio: ['inherit', 2, 2] });
if (res.status !== 0) process.exit(res.status === null ? 1 : res.status);
const target = prebuildFile();
fs.mkdirSync(path.dirname(target), { recursive: true });
fs.copyFileSync(path.join(root, 'build', 'Release', 'mcpping.node'), target);
console.error(`mcpping: prebuild ${path.relative(root, target)}`);
