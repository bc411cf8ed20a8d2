#!/usr/bin/env node
/**
 * Builds the addon with node-gyp against the running Node's own headers, so
 * nothing is downloaded (see findNodeDir).
 */
'use strict';
const { spawnSync } = require('node:child_process');
const fs = require('node:fs');
const path = require('node:path');

/** @param {string} dir @returns {boolean} whether dir/include/node has node.h and uv.h */
function hasHeaders(dir) {
  return ['node.h', 'uv.h'].every((f) => fs.existsSync(path.join(dir, 'include', 'node', f)));
}

/**
 * @returns {string|undefined} a directory whose include/node has Node's
 * headers: npm_config_nodedir (the repo's .npmrc says /usr) if it has them,
 * else the prefix of the running node; undefined lets node-gyp fetch them.
 */
function findNodeDir() {
  const configured = process.env.npm_config_nodedir;
  if (configured && hasHeaders(configured)) return configured;
  const prefix = path.resolve(path.dirname(process.execPath), '..');
  if (hasHeaders(prefix)) return prefix;
  if (configured) console.warn(`mcpping: no Node headers under ${configured}; node-gyp will look for them`);
  return undefined;
}

/** @returns {string[]} the command that runs node-gyp */
function nodeGypCommand() {
  // npm sets npm_config_node_gyp to its bundled node-gyp for lifecycle scripts.
  const bundled = process.env.npm_config_node_gyp;
  if (bundled && fs.existsSync(bundled)) return [process.execPath, bundled];
  const npmDir = path.resolve(path.dirname(process.execPath), '..', 'lib', 'node_modules', 'npm');
  const candidate = path.join(npmDir, 'node_modules', 'node-gyp', 'bin', 'node-gyp.js');
  if (fs.existsSync(candidate)) return [process.execPath, candidate];
  return ['node-gyp'];
}

const root = path.resolve(__dirname, '..');
const nodedir = findNodeDir();
const [cmd, ...pre] = nodeGypCommand();

/** Runs one node-gyp step; exits on failure. @param {string} step */
function gyp(step) {
  const args = [...pre, step];
  if (nodedir) args.push(`--nodedir=${nodedir}`);
  // node-gyp also reads npm_config_nodedir itself: make it agree.
  const env = { ...process.env };
  if (nodedir) env.npm_config_nodedir = nodedir;
  else delete env.npm_config_nodedir;
  const res = spawnSync(cmd, args, { cwd: root, stdio: 'inherit', env });
  if (res.error) {
    console.error(`mcpping: cannot run node-gyp: ${res.error.message}`);
    process.exit(1);
  }
  if (res.status !== 0) process.exit(res.status === null ? 1 : res.status);
}

// configure + build, never `rebuild`: rebuild deletes build/, which the C
// Makefile and the Python build share with us.
gyp('configure');
gyp('build');
// A copy beside the JavaScript survives `make clean` (rm -rf build).
fs.copyFileSync(path.join(root, 'build', 'Release', 'mcpping.node'), path.join(__dirname, 'mcpping.node'));
