'use strict';
/**
 * Prints `mcpping --config`'s lines (docs/cli.md), every byte of which comes
 * from C (csrc/src/app/config_table.c);
 * results() returns the exit status.
 */
class ConfigReporter {
  /** @param {{json: boolean, quiet?: boolean, out?: NodeJS.WritableStream}} opts */
  constructor(opts) {
    this.json = opts.json;
    this.quiet = Boolean(opts.quiet); // -q: the summary without the table
    this.out = opts.out || process.stdout;
  }

  /** @param {Array<[string, number]>} files each file read and its number of servers */
  files(files) {
    this.out.write(require('./binding').configFormatFiles(files, this.json));
  }

  start(servers, count, intervalS, timeoutS, deadlineS) {
    this.out.write(require('./binding').configFormatStart(servers, count, intervalS, timeoutS, deadlineS, this.json));
  }

  /** @param {object[]} rows config_check's rows @param {number} timeMs @returns {number} the exit status */
  results(rows, timeMs) {
    const r = require('./binding').configFormatResults(rows, timeMs, this.json, this.quiet);
    this.out.write(r.text);
    return r.status;
  }
}

module.exports = { ConfigReporter };
