'use strict';
// The shared fixture corpus, served by the Node API and checked by the same checker
// (ferrule-conformance, a real HTTP client) that checks the Rust API: once with handlers that
// return values, once with handlers that return Promises.
const { test } = require('node:test');
const assert = require('node:assert');
const fs = require('node:fs');
const path = require('node:path');
const { execFile } = require('node:child_process');
const { App } = require('ferrule');
const { SYNC, ASYNC } = require('./fixture_handlers');
const { serving } = require('./support');

const FIXTURES = process.env.FERRULE_FIXTURES_DIR || path.resolve(__dirname, '../../../fixtures');
const CHECKER = process.env.FERRULE_CONFORMANCE || 'ferrule-conformance';
const CATEGORIES = fs.readdirSync(path.join(FIXTURES, 'conformance')).filter((f) => f.endsWith('.json')).map((f) => f.slice(0, -5)).sort();

function build(category, handlers) {
  const fixture = JSON.parse(fs.readFileSync(path.join(FIXTURES, 'conformance', `${category}.json`), 'utf8'));
  const options = {};
  // The core's setting names in Node's spelling (camelCase, a duration's `_ms` left off).
  const nodeName = (core) => core.replace(/_ms$/, '').replace(/_([a-z0-9])/g, (_, c) => c.toUpperCase());
  for (const [key, value] of Object.entries(fixture.app || {})) options[nodeName(key)] = value;
  const app = new App(options);
  for (const route of fixture.routes) {
    const { handler, ...spec } = route;
    app.addRoute(spec, handlers[handler]);
  }
  return app;
}

function check(category, port) {
  return new Promise((resolve) => {
    execFile(CHECKER, ['check', '--fixtures', FIXTURES, '--category', category, '--base', `http://127.0.0.1:${port}`], { timeout: 300000 }, (error, stdout, stderr) => {
      resolve({ code: error ? error.code : 0, output: `${stdout}\n${stderr}` });
    });
  });
}

test('the corpus is there', () => {
  assert.ok(CATEGORIES.length >= 14, `only ${CATEGORIES} in ${FIXTURES}`);
});

for (const [mode, handlers] of [['values', SYNC], ['promises', ASYNC]]) {
  for (const category of CATEGORIES) {
    test(`${category} (${mode})`, async () => {
      const result = await serving(build(category, handlers), (port) => check(category, port));
      assert.strictEqual(result.code, 0, result.output);
    });
  }
}
