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
const { SYNC, ASYNC, installHooks } = require('./fixture_handlers');
const { serving } = require('./support');

const FIXTURES = process.env.FERRULE_FIXTURES_DIR || path.resolve(__dirname, '../../../fixtures');
const CHECKER = process.env.FERRULE_CONFORMANCE || 'ferrule-conformance';
// Node's JSON is labelled as Fastify and Express label it (fixtures/README.md, "Expectations").
const JSON_TYPE = ['--json-type', 'application/json; charset=utf-8'];
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
  installHooks(app, fixture.hooks || [], { asynchronous: handlers === ASYNC });
  return app;
}

function check(category, port) {
  return new Promise((resolve) => {
    execFile(CHECKER, ['check', '--fixtures', FIXTURES, '--category', category, '--base', `http://127.0.0.1:${port}`, ...JSON_TYPE], { timeout: 300000 }, (error, stdout, stderr) => {
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

// The same cases through `app.inject()`, no socket: the checker hands each request over a pipe
// (`--via stdio`) and judges the answer as it judges the server's.
function checkInjected(category, app) {
  const { spawn } = require('node:child_process');
  const readline = require('node:readline');
  return new Promise((resolve) => {
    const checker = spawn(CHECKER, ['check', '--via', 'stdio', '--fixtures', FIXTURES, '--category', category, ...JSON_TYPE], { stdio: ['pipe', 'pipe', 'pipe'] });
    let report = '';
    checker.stderr.on('data', (chunk) => { report += chunk; });
    const lines = readline.createInterface({ input: checker.stdout });
    (async () => {
      for await (const line of lines) {
        const request = JSON.parse(line);
        const headers = {};
        for (const [name, value] of request.headers) {
          const text = Buffer.from(value, 'base64').toString('latin1');
          headers[name] = name in headers ? [].concat(headers[name], text) : text;
        }
        const response = await app.inject({ method: request.method, url: request.path, headers, payload: Buffer.from(request.body, 'base64') });
        const flat = [];
        for (let i = 0; i < response.rawHeaders.length; i += 2) {
          flat.push([response.rawHeaders[i], Buffer.from(response.rawHeaders[i + 1], 'latin1').toString('base64')]);
        }
        checker.stdin.write(`${JSON.stringify({ status: response.statusCode, headers: flat, body: response.rawPayload.toString('base64'), cut_off: response.cutOff })}\n`);
      }
      checker.stdin.end();
    })();
    checker.on('close', (code) => resolve({ code, output: report }));
  });
}

for (const [mode, handlers] of [['values', SYNC], ['promises', ASYNC]]) {
  for (const category of CATEGORIES) {
    test(`${category} (${mode}, injected)`, async () => {
      const result = await checkInjected(category, build(category, handlers));
      assert.strictEqual(result.code, 0, result.output);
    });
  }
}
