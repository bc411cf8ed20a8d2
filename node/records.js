'use strict';
/**
 * Governance record sinks: where the JSONL records of a connection go.
 */
const fs = require('node:fs');
const { invalid } = require('./validate');

/**
 * @typedef {object} RecordSink
 * @property {(json: string) => void} write one record, no newline
 * @property {() => void} close
 */

/**
 * Builds a sink from the `records` option: a file path (appended to, one
 * record per line), a function (called with each record parsed), or a
 * writable stream. Undefined gives a sink that drops records.
 * @param {string|((record: object) => void)|{write: Function}|undefined} target
 * @returns {RecordSink}
 */
function makeRecordSink(target) {
  if (target === undefined || target === null) return { write() {}, close() {} };
  if (typeof target === 'function') {
    return {
      write(json) {
        target(JSON.parse(json));
      },
      close() {},
    };
  }
  if (typeof target === 'string') {
    // Synchronous appends: records land in order and survive a crash right
    // after the event they describe.
    let fd = fs.openSync(target, 'a');
    return {
      write(json) {
        if (fd !== null) fs.writeSync(fd, `${json}\n`);
      },
      close() {
        if (fd !== null) fs.closeSync(fd);
        fd = null;
      },
    };
  }
  if (typeof target.write === 'function') {
    return {
      write(json) {
        target.write(`${json}\n`);
      },
      close() {},
    };
  }
  throw invalid(TypeError, 'records must be a file path, a function or a writable stream');
}

module.exports = { makeRecordSink };
