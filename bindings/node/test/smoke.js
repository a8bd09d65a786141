'use strict';
// Loaded from the installed tarball: the CommonJS and ES module entry points agree.
const assert = require('node:assert');
const ferrule = require('ferrule');

assert.strictEqual(ferrule.version(), require('ferrule/package.json').version);
assert.strictEqual(ferrule.problemJson(), 'application/problem+json');
assert.strictEqual(typeof ferrule.App, 'function');
import('ferrule').then((esm) => {
  assert.strictEqual(esm.App, ferrule.App);
  assert.strictEqual(esm.default.Response, ferrule.Response);
  console.log('ferrule', ferrule.version(), 'loaded from', require.resolve('ferrule'), '(CommonJS and ESM)');
});
