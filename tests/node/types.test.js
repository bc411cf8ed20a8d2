'use strict';
// node/index.d.ts compiles under strict TypeScript, describes the API as
// used in tests/node/types/usage.ts (CommonJS) and types/esm/usage.mts (an
// ES module under NodeNext), and mcpping's transports are assignable to the
// official SDK's Transport interface.
const test = require('node:test');
const assert = require('node:assert/strict');
const path = require('node:path');
const h = require('./helpers');

const TSC = path.join(h.ROOT, 'node_modules', 'typescript', 'bin', 'tsc');

for (const [what, project] of [
  ['CommonJS (Node16)', path.join(__dirname, 'types', 'tsconfig.json')],
  ['an ES module (NodeNext)', path.join(__dirname, 'types', 'esm', 'tsconfig.json')],
]) {
  test(`index.d.ts type-checks from ${what} against the SDK's Transport interface`, async () => {
    const res = await h.run(process.execPath, [TSC, '-p', project], { timeoutMs: 60000 });
    assert.equal(res.status, 0, res.stdout + res.stderr);
  });
}

test('every runtime export is declared in index.d.ts', () => {
  const fs = require('node:fs');
  const dts = fs.readFileSync(path.join(h.ROOT, 'node', 'index.d.ts'), 'utf8');
  for (const name of Object.keys(require('../../node'))) {
    assert.match(dts, new RegExp(`export (declare )?(const|function|class) ${name}\\b`), name);
  }
});
