'use strict';
/**
 * Where the prebuilt addon for this platform lives in the package:
 * prebuilds/<platform>-<arch>[-musl]/mcpping.node (prebuildify's directory
 * names). Shared by the loader, the install script and the prepack script.
 */
const path = require('node:path');

/** @returns {string} e.g. "linux-x64" (glibc) or "linux-x64-musl" */
function platformTag() {
  let tag = `${process.platform}-${process.arch}`;
  if (process.platform === 'linux') {
    // glibcVersionRuntime is only set when Node runs on glibc.
    const header = process.report ? process.report.getReport().header : {};
    if (!header.glibcVersionRuntime) tag += '-musl';
  }
  return tag;
}

/** @returns {string} the prebuild this platform would use (it may not exist) */
function prebuildFile() {
  return path.join(__dirname, '..', 'prebuilds', platformTag(), 'mcpping.node');
}

module.exports = { platformTag, prebuildFile };
