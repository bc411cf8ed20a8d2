'use strict';
/**
 * The npm tarball carries a prebuilt addon that installs and runs with no
 * compiler, on every Node the package supports. Run by `make test-prebuild`.
 *
 * - a clean copy of the tree (git's tracked and unignored files, so no
 *   build output), `npm install`, then `npm pack`: the prepack script puts
 *   prebuilds/linux-x64/mcpping.node into the tarball;
 * - the addon needs no libcjson and no libuv of the system (cJSON is
 *   compiled in, libuv comes from node itself);
 * - `npm install --ignore-scripts <tarball>` in a fresh directory, with a
 *   PATH holding only node and npm; then the demo on Node 18, 20, 22 and 24
 *   (the `node` package from npm, kept in build/node-versions), each in a
 *   mount namespace where the system's libcjson and libuv are empty files
 *   and gcc's files are gone (checked before the run);
 * - the install script with scripts on keeps the prebuild (compiles
 *   nothing), and where no prebuild fits says that it compiles.
 */
const { test, before } = require('node:test');
const assert = require('node:assert/strict');
const { execFileSync, spawnSync } = require('node:child_process');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');

const ROOT = path.resolve(__dirname, '..', '..');
const NODE_VERSIONS = ['18', '20', '22', '24'];
const work = fs.mkdtempSync(path.join(os.tmpdir(), 'mcpping-prebuild-'));
let tarball;
let installed; // node_modules/mcpping of the --ignore-scripts install
let minimalPath; // a directory with node and npm, and nothing else

/** Runs a command, failing the test with its output when it fails. */
function run(cmd, args, opts = {}) {
  const res = spawnSync(cmd, args, { encoding: 'utf8', timeout: 600_000, ...opts });
  const out = `${res.stdout || ''}${res.stderr || ''}`;
  assert.equal(res.status, 0, `${cmd} ${args.join(' ')} failed:\n${out}`);
  return out;
}

/** Copies what a clean clone would hold: tracked and unignored files. */
function cleanCopy(dest) {
  const files = execFileSync('git', ['ls-files', '-z', '--cached', '--others', '--exclude-standard'], { cwd: ROOT, encoding: 'utf8' })
    .split('\0')
    .filter(Boolean);
  for (const f of files) {
    const from = path.join(ROOT, f);
    if (!fs.existsSync(from)) continue; // deleted in the work tree
    fs.mkdirSync(path.dirname(path.join(dest, f)), { recursive: true });
    fs.copyFileSync(from, path.join(dest, f));
  }
}

/** @returns {string} the node binary of the `node` npm package, major version v */
function nodeBinary(v) {
  const dir = path.join(ROOT, 'build', 'node-versions', v);
  const bin = path.join(dir, 'node_modules', '.bin', 'node');
  if (!fs.existsSync(bin)) {
    fs.mkdirSync(dir, { recursive: true });
    run('npm', ['install', '--no-audit', '--no-fund', '--loglevel=error', '--prefix', dir, `node@${v}`]);
  }
  return fs.realpathSync(bin);
}

/** The real files behind the system's libcjson and libuv. */
function systemCopies() {
  const files = new Set();
  for (const dir of ['/usr/lib/x86_64-linux-gnu', '/lib/x86_64-linux-gnu', '/usr/lib', '/usr/local/lib']) {
    if (!fs.existsSync(dir)) continue;
    for (const f of fs.readdirSync(dir)) {
      if (/^lib(uv|cjson)\.so/.test(f)) files.add(fs.realpathSync(path.join(dir, f)));
    }
  }
  return [...files];
}

before(() => {
  const clone = path.join(work, 'clone');
  cleanCopy(clone);
  // npm install builds from source here (a clean clone has no prebuilds/);
  // npm pack's prepack then leaves the prebuild for the tarball.
  run('npm', ['install', '--no-audit', '--no-fund', '--loglevel=error'], { cwd: clone, env: { ...process.env, npm_config_nodedir: '/usr' } });
  const pack = spawnSync('npm', ['pack', '--silent', '--pack-destination', work],
    { cwd: clone, encoding: 'utf8', timeout: 600_000, env: { ...process.env, npm_config_nodedir: '/usr' } });
  assert.equal(pack.status, 0, `npm pack failed:\n${pack.stdout}${pack.stderr}`);
  [tarball] = fs.readdirSync(work).filter((f) => /^mcpping-.*\.tgz$/.test(f)).map((f) => path.join(work, f));
  assert.ok(tarball, 'npm pack wrote no tarball');
  // `npm install "$(npm pack --silent)"` is how scripts install a packed
  // tarball: the prepack script's build output must not reach stdout.
  assert.equal(pack.stdout, `${path.basename(tarball)}\n`);

  minimalPath = path.join(work, 'bin');
  fs.mkdirSync(minimalPath);
  fs.symlinkSync(process.execPath, path.join(minimalPath, 'node'));
  fs.symlinkSync(execFileSync('sh', ['-c', 'command -v npm'], { encoding: 'utf8' }).trim(), path.join(minimalPath, 'npm'));
  const app = path.join(work, 'app');
  fs.mkdirSync(app);
  fs.writeFileSync(path.join(app, 'package.json'), '{"name":"app","version":"1.0.0","private":true}\n');
  run('npm', ['install', '--ignore-scripts', '--no-audit', '--no-fund', '--loglevel=error', tarball], {
    cwd: app,
    env: { PATH: minimalPath, HOME: process.env.HOME },
  });
  installed = path.join(app, 'node_modules', 'mcpping');
});

test('the tarball carries the linux-x64 prebuild and no local build', () => {
  const list = execFileSync('tar', ['tzf', tarball], { encoding: 'utf8' }).split('\n');
  assert.ok(list.includes('package/prebuilds/linux-x64/mcpping.node'), list.join('\n'));
  assert.ok(!list.some((f) => f.startsWith('package/build/') || f === 'package/node/mcpping.node'), 'a local build was packed');
});

test('the prebuild needs no system libcjson or libuv', () => {
  const dyn = execFileSync('readelf', ['-d', path.join(installed, 'prebuilds', 'linux-x64', 'mcpping.node')], { encoding: 'utf8' });
  const needed = [...dyn.matchAll(/\(NEEDED\)\s+Shared library: \[(.+?)\]/g)].map((m) => m[1]);
  assert.ok(needed.length > 0, dyn);
  assert.deepEqual(needed.filter((n) => /cjson|libuv/.test(n)), [], `needs ${needed.join(', ')}`);
});

test('the --ignore-scripts install compiled nothing', () => {
  assert.ok(!fs.existsSync(path.join(installed, 'node', 'mcpping.node')));
  assert.ok(!fs.existsSync(path.join(installed, 'build')));
});

// Hides the system copies and the compilers, checks that they are hidden,
// then runs the demo with the prebuild.
const HIDDEN_RUN = String.raw`
set -eu
for f in $HIDE_FILES; do mount --bind /dev/null "$f"; done
for d in /usr/lib/gcc /usr/lib/llvm-*; do [ -d "$d" ] && mount -t tmpfs none "$d"; done
if echo 'int main(void){return 0;}' | /usr/bin/gcc -x c -o /dev/null - 2>/dev/null; then
  echo "CONTROL FAILED: gcc still compiles"; exit 90; fi
for lib in libcjson.so.1 libuv.so.1; do
  if python3 -c 'import ctypes, sys; ctypes.CDLL(sys.argv[1])' "$lib" 2>/dev/null; then
    echo "CONTROL FAILED: the system $lib still loads"; exit 90; fi
done
exec env -i PATH="$MIN_PATH" HOME="$HOME_DIR" "$NODE" -e '
require("mcpping");
const m = Object.keys(require.cache).find((f) => f.endsWith(".node"));
if (!m.endsWith("prebuilds/linux-x64/mcpping.node")) throw new Error("loaded " + m);
const { run } = require(require("path").join(require.resolve("mcpping/package.json"), "..", "node", "cli.js"));
run(["--demo", "-c", "3", "-i", "0.2"]).then((status) => { process.exitCode = status; });
'
`;

for (const v of NODE_VERSIONS) {
  test(`the prebuild runs the demo on Node ${v} without a compiler or the system libraries`, () => {
    if (process.getuid() !== 0) assert.fail('needs root and unshare(1) to hide the system libraries');
    const node = nodeBinary(v);
    assert.equal(execFileSync(node, ['-p', 'process.versions.node.split(".")[0]'], { encoding: 'utf8' }).trim(), v);
    const hide = systemCopies();
    assert.ok(hide.some((f) => f.includes('libcjson.so')) && hide.some((f) => f.includes('libuv.so')), `system copies not where expected: ${hide}`);
    const res = spawnSync('unshare', ['--mount', '--propagation', 'private', 'sh', '-c', HIDDEN_RUN], {
      cwd: path.dirname(path.dirname(installed)),
      encoding: 'utf8',
      timeout: 120_000,
      env: { PATH: process.env.PATH, HIDE_FILES: hide.join(' '), NODE: node, MIN_PATH: path.dirname(node), HOME_DIR: work },
    });
    const out = `${res.stdout}${res.stderr}`;
    assert.equal(res.status, 0, out);
    assert.match(out, /3 sent, 3 received, 0% loss/);
    assert.match(out, /rtt min\/avg\/max\/mdev = [\d.]+\/[\d.]+\/[\d.]+\/[\d.]+ ms/);
  });
}

test('the install script keeps a fitting prebuild and compiles nothing', () => {
  const out = run(process.execPath, [path.join(installed, 'node', 'install.js')], { env: { PATH: minimalPath, HOME: process.env.HOME } });
  assert.doesNotMatch(out, /compiling/);
  assert.ok(!fs.existsSync(path.join(installed, 'node', 'mcpping.node')));
});

test('without a fitting prebuild the install script says it compiles', () => {
  const copy = path.join(work, 'noprebuild');
  fs.cpSync(installed, copy, { recursive: true });
  fs.rmSync(path.join(copy, 'prebuilds'), { recursive: true });
  // No compiler on this PATH: the build fails, after saying what it does.
  const res = spawnSync(process.execPath, [path.join(copy, 'node', 'install.js')], {
    encoding: 'utf8',
    env: { PATH: minimalPath, HOME: process.env.HOME },
    timeout: 120_000,
  });
  assert.match(res.stderr, /mcpping: no prebuilt addon for linux-x64 \(none is shipped for it\); compiling from source/);
  assert.notEqual(res.status, 0);
});
