'use strict';
/**
 * `mcpping --config FILE --wrap|--unwrap [--write] [--command PATH]`
 * (docs/cli.md). The rewrite itself is C's (csrc/src/app/config_rewrite.c,
 * the same bytes as Python's): every stdio server of a client config runs
 * behind `MCPPING wrap --name ENTRY --`, MCPPING being this node and its
 * cli.js by absolute path, or no longer does. The new config goes to stdout;
 * with --write the file is rewritten in place after a backup (FILE.bak, or
 * FILE.bak.N), once every wrapped entry has been seen to start as a desktop
 * client starts it (PATH=/usr/bin:/bin and the entry's env only).
 */
const fs = require('node:fs');
const path = require('node:path');
const config = require('./config');
const native = require('./binding');

/** The environment a desktop client gives a server: hardly any PATH. */
const MINIMAL_PATH = '/usr/bin:/bin';
/** How long a wrapped entry has to answer initialize before --write refuses. */
const START_TIMEOUT_S = 10;


/** @returns {string[]} the running mcpping as an absolute command line */
function launcher() {
  return [process.execPath, path.join(__dirname, 'cli.js')];
}

function backupName(file) {
  let name = `${file}.bak`;
  for (let n = 1; fs.existsSync(name); n++) name = `${file}.bak.${n}`;
  return name;
}

/** The refusal line of each wrapped entry that does not answer initialize when started as a desktop client starts it. */
async function startProblems(file, text, launch) {
  const { checkAll } = require('./config_check');
  const plan = { count: 0, intervalS: 0, timeoutS: START_TIMEOUT_S, deadlineS: START_TIMEOUT_S, log: null, environ: { PATH: MINIMAL_PATH } };
  const cfg = config.parse(text, file);
  const servers = cfg.servers.filter((s) => s.transport === 'stdio' && !s.disabled && s.command === launch[0]);
  const results = await checkAll(servers.map((s) => [s, cfg.workspace]), plan, new AbortController().signal);
  return results.filter((r) => !['ok', 'unsupported', 'not started'].includes(r.status)).map((r) => native.configFormatRefusal(file, r));
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
  if (r.changed === 0) {
    process.stderr.write(`mcpping: ${o.file}: no server to ${o.unwrap ? 'unwrap' : 'wrap'}; left as it is\n`);
    return 0;
  }
  if (!o.unwrap) {
    const refusals = await startProblems(o.file, r.text, launch);
    process.stderr.write(refusals.join(''));
    if (refusals.length) return 3;
  }
  const backup = backupName(o.file);
  try {
    fs.copyFileSync(o.file, backup, fs.constants.COPYFILE_EXCL);
    const tmp = `${o.file}.mcpping-tmp`;
    fs.writeFileSync(tmp, r.text);
    fs.chmodSync(tmp, fs.statSync(o.file).mode & 0o7777);
    fs.renameSync(tmp, o.file);
  } catch (err) {
    process.stderr.write(`mcpping: cannot write ${o.file}: ${err.message}\n`);
    return 2;
  }
  const note = r.hadComments ? ' (its comments and trailing commas were not kept)' : '';
  const verb = o.unwrap ? 'unwrapped' : 'wrapped';
  process.stderr.write(`mcpping: ${verb} ${r.changed} server${r.changed === 1 ? '' : 's'} in ${o.file}${note}; the original is in ${backup}\n`);
  return 0;
}

module.exports = { launcher, runWrap };
