'use strict';
/**
 * `mcpping --config FILE --wrap|--unwrap [--write] [--command PATH]`
 * (docs/cli.md). The rewrite itself is C's (csrc/src/app/config_rewrite.c):
 * every stdio server of a client config runs
 * behind `MCPPING wrap --name ENTRY --`, MCPPING being this node and its
 * cli.js by absolute path, or no longer does. The new config goes to stdout;
 * with --write the file is rewritten in place after a backup (FILE.bak, or
 * FILE.bak.N), once every wrapped entry has been seen to start as a desktop
 * client starts it (PATH=/usr/bin:/bin and the entry's env only). The
 * backup, the replacement and every line printed are C's
 * (csrc/src/app/config_write.c).
 */
const fs = require('node:fs');
const path = require('node:path');
const config = require('./config');
const native = require('./binding');


/** @returns {string[]} the running mcpping as an absolute command line */
function launcher() {
  return [process.execPath, path.join(__dirname, 'cli.js')];
}

/** The refusal line of each wrapped entry that does not answer initialize when started as a desktop client starts it. */
async function startProblems(file, text, launch) {
  const { checkAll } = require('./config_check');
  const startS = native.configStartTimeoutMs / 1000;
  const plan = { count: 0, intervalS: 0, timeoutS: startS, deadlineS: startS, log: null, environ: { PATH: native.configStartPath } };
  const cfg = config.parse(text, file);
  const servers = cfg.servers.filter((s) => s.transport === 'stdio' && !s.disabled && s.command === launch[0]);
  const results = await checkAll(servers.map((s) => [s, cfg.workspace]), plan, new AbortController().signal);
  return results.map((r) => native.configFormatRefusal(file, r)).join('');
}

/**
 * @param {{file: string, unwrap: boolean, write: boolean, command: string|null}} o
 * @returns {Promise<number>} 0; 2 with one line on stderr (a bad file);
 *   3 if a wrapped entry would not start (nothing written)
 */
async function runWrap(o) {
  let original;
  try {
    config.load(o.file); // every entry checked, with the parser's messages
    original = fs.readFileSync(o.file, 'utf8');
  } catch (err) {
    if (!(err instanceof config.ConfigError)) throw err;
    process.stderr.write(`mcpping: ${err.message}\n`);
    return 2;
  }
  const launch = o.command ? [path.resolve(o.command)] : launcher();
  const r = native.configRewrite(original, o.unwrap, launch);
  if (!o.write) {
    fs.writeSync(1, r.text);
    return 0;
  }
  if (r.changed && !o.unwrap) {
    const refusals = await startProblems(o.file, r.text, launch);
    if (refusals) {
      process.stderr.write(refusals);
      return 3;
    }
  }
  const { status, line } = native.configWrite(o.file, r.text, o.unwrap, r.changed, r.hadComments);
  process.stderr.write(line);
  return status;
}

module.exports = { launcher, runWrap };
