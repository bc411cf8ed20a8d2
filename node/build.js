#!/usr/bin/env node
/**
 * Builds the addon with node-gyp against the running Node's own headers, so
 * nothing is downloaded: npm_config_nodedir if set, else the prefix of this
 * node binary when it ships include/node/node.h (e.g. /usr for /usr/bin/node).
 */
'use strict';
const { spawnSync } = require('node:child_process');
const fs = require('node:fs');
const path = require('node:path');

/** @returns {string|undefined} a directory whose include/node has node.h */
function findNodeDir() {
  const configured = process.env.npm_config_nodedir;
  if (configured) return configured;
  const prefix = path.resolve(path.dirname(process.execPath), '..');
  if (fs.existsSync(path.join(prefix, 'include', 'node', 'node.h'))) return prefix;
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
  const res = spawnSync(cmd, args, { cwd: root, stdio: 'inherit' });
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
