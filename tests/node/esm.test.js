'use strict';
// ES modules: every value index.d.ts declares is importable by name from
// 'mcpping' (Node's cjs-module-lexer sees the CommonJS exports), and the
// named imports are the very objects require('mcpping') gives.
const test = require('node:test');
const assert = require('node:assert/strict');
const fs = require('node:fs');
const path = require('node:path');
const h = require('./helpers');

/** @returns {string[]} the value exports index.d.ts declares */
function declaredValues() {
  const dts = fs.readFileSync(path.join(h.ROOT, 'node', 'index.d.ts'), 'utf8');
  return [...dts.matchAll(/^export (?:declare )?(?:const|function|class) (\w+)/gm)].map((m) => m[1]);
}

test('every value index.d.ts declares is importable by name from ESM, identical to require()', async () => {
  const names = [...new Set(declaredValues())];
  assert.ok(names.includes('connect') && names.includes('ClosedError') && names.length >= 14, names.join());
  // A static named import: a name the lexer does not detect is a SyntaxError.
  const source = [
    `import { ${names.join(', ')} } from 'mcpping';`,
    "import pkg from 'mcpping';",
    "import { createRequire } from 'node:module';",
    "const cjs = createRequire(process.cwd() + '/')('mcpping');",
    `const named = { ${names.join(', ')} };`,
    'const report = {};',
    'for (const [k, v] of Object.entries(named)) report[k] = { type: typeof v, same: v === cjs[k] && v === pkg[k] };',
    'console.log(JSON.stringify(report));',
  ].join('\n');
  const res = await h.run(process.execPath, ['--input-type=module', '-e', source], { timeoutMs: 20000 });
  assert.equal(res.status, 0, res.stderr);
  const report = JSON.parse(res.stdout);
  assert.deepEqual(Object.keys(report).sort(), [...names].sort());
  for (const [name, { type, same }] of Object.entries(report)) {
    assert.notEqual(type, 'undefined', name);
    assert.equal(same, true, `${name} from ESM is not require('mcpping').${name}`);
  }
});
