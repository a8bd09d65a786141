'use strict';
const assert = require('node:assert');
const ferrule = require('ferrule');

assert.strictEqual(ferrule.version(), require('ferrule/package.json').version);
assert.strictEqual(ferrule.problemJson(), 'application/problem+json');
console.log('ferrule', ferrule.version(), 'loaded from', require.resolve('ferrule'));
