'use strict';
/**
 * `mcpping --config FILE --wrap|--unwrap [--write]` (docs/cli.md): puts
 * `mcpping wrap --` in front of every stdio server of a client config (the
 * files node/config.js reads), or takes it away. URL servers are left as
 * they are, and a server already wrapped is not wrapped twice. The new
 * config goes to stdout; with --write the file is rewritten in place after
 * a backup (FILE.bak, or FILE.bak.N if that exists). Python's
 * mcpping/config_wrap.py writes the same bytes.
 */
const fs = require('node:fs');
const path = require('node:path');
const config = require('./config');

const USAGE_LINE = 'usage: mcpping --config FILE --wrap|--unwrap [--write]';

class WrapConfigUsage extends Error {}

/** @param {object} entry @returns {boolean} it already runs through `mcpping wrap` */
function isWrapped(entry) {
  const args = Array.isArray(entry.args) ? entry.args : [];
  return typeof entry.command === 'string' && path.basename(entry.command) === 'mcpping' &&
    args[0] === 'wrap' && args.includes('--');
}

/** Wraps a stdio entry in place; false if it was wrapped already. */
function wrapEntry(entry) {
  if (isWrapped(entry)) return false;
  entry.args = ['wrap', '--', entry.command, ...(entry.args || [])];
  entry.command = 'mcpping';
  return true;
}

/** Unwraps a wrapped entry in place (its wrap options go too). */
function unwrapEntry(entry) {
  if (!isWrapped(entry)) return false;
  const rest = entry.args.slice(entry.args.indexOf('--') + 1);
  if (rest.length === 0) return false;
  entry.command = rest[0];
  // No arguments: no "args" (as most entries without any are written).
  if (rest.length > 1) entry.args = rest.slice(1);
  else delete entry.args;
  return true;
}

const isTable = (v) => v !== null && typeof v === 'object' && !Array.isArray(v);

/** The server tables, as config.parse finds them. */
function tables(doc) {
  const out = ['mcpServers', 'servers'].filter((k) => isTable(doc[k])).map((k) => doc[k]);
  if (out.length === 0 && isTable(doc.mcp) && isTable(doc.mcp.servers)) out.push(doc.mcp.servers);
  return out;
}

/**
 * @param {string} file
 * @param {boolean} unwrap
 * @returns {{text: string, changed: number, hadComments: boolean}} throws config.ConfigError
 */
function rewrite(file, unwrap) {
  const cfg = config.load(file); // every entry checked, with the parser's messages
  let text = fs.readFileSync(file, 'utf8');
  if (text.startsWith('\ufeff')) text = text.slice(1);
  const stripped = config.stripJsonc(text);
  const doc = JSON.parse(stripped);
  const stdio = new Set(cfg.servers.filter((s) => s.transport === 'stdio').map((s) => s.name));
  let changed = 0;
  for (const table of tables(doc)) {
    for (const [name, entry] of Object.entries(table)) {
      if (!stdio.has(name) || !isTable(entry) || !('command' in entry)) continue;
      changed += (unwrap ? unwrapEntry(entry) : wrapEntry(entry)) ? 1 : 0;
    }
  }
  return { text: `${JSON.stringify(doc, null, 2)}\n`, changed, hadComments: stripped !== text };
}

function backupName(file) {
  let name = `${file}.bak`;
  for (let n = 1; fs.existsSync(name); n++) name = `${file}.bak.${n}`;
  return name;
}

function parse(argv) {
  const files = [];
  const modes = new Set();
  let write = false;
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    if (a === '--config') {
      if (i + 1 >= argv.length || !argv[i + 1]) throw new WrapConfigUsage('--config needs a FILE');
      files.push(argv[++i]);
    } else if (a === '--wrap' || a === '--unwrap') {
      modes.add(a);
    } else if (a === '--write') {
      write = true;
    } else {
      throw new WrapConfigUsage(`${a} does not go with --wrap/--unwrap (${USAGE_LINE})`);
    }
  }
  if (modes.size !== 1) throw new WrapConfigUsage(`give one of --wrap and --unwrap (${USAGE_LINE})`);
  if (files.length !== 1 || files[0] === 'auto') {
    throw new WrapConfigUsage(`--wrap and --unwrap edit one --config FILE (${USAGE_LINE})`);
  }
  return { file: files[0], unwrap: modes.has('--unwrap'), write };
}

/** @param {string[]} argv @returns {number} the exit status: 0, or 2 with one line on stderr */
function main(argv) {
  let o;
  let r;
  try {
    o = parse(argv);
    r = rewrite(o.file, o.unwrap);
  } catch (err) {
    if (!(err instanceof WrapConfigUsage || err instanceof config.ConfigError)) throw err;
    process.stderr.write(`mcpping: ${err.message}\n`);
    return 2;
  }
  if (!o.write) {
    fs.writeSync(1, r.text);
    return 0;
  }
  if (r.changed === 0) {
    process.stderr.write(`mcpping: ${o.file}: no server to ${o.unwrap ? 'unwrap' : 'wrap'}; left as it is\n`);
    return 0;
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

module.exports = { isWrapped, wrapEntry, unwrapEntry, rewrite, main };
