'use strict';
// The core's log records reach a pino-compatible `logger`: the startup line, the access log with
// its values as fields, a handler's error as pino's `err`; `logLevel` and `logger: false`.
const { test } = require('node:test');
const assert = require('node:assert');
const path = require('node:path');
const { spawnSync } = require('node:child_process');
const { App } = require('ferrule');
const { serving, request } = require('./support');

/** A logger with pino's shape that keeps every call: `{ level, fields, message }`. */
function recorder() {
  const calls = [];
  const logger = {};
  for (const level of ['debug', 'info', 'warn', 'error']) logger[level] = (fields, message) => calls.push({ level, fields, message });
  return { logger, calls };
}

async function until(condition) {
  const deadline = Date.now() + 5000;
  while (!condition() && Date.now() < deadline) await new Promise((r) => setTimeout(r, 10));
}

test('a pino-compatible logger gets the startup line, access records with fields, and handler errors', async () => {
  const { logger, calls } = recorder();
  const app = new App({ logger, accessLog: true });
  app.get('/n/{n:int}', ({ params }) => params);
  app.get('/boom', () => { throw new RangeError('secret-detail'); });
  let port;
  await serving(app, async (bound) => {
    port = bound;
    assert.strictEqual((await request(port, 'GET', '/n/3', { headers: { 'x-request-id': 'rid-9' } })).status, 200);
    const boom = await request(port, 'GET', '/boom');
    assert.strictEqual(boom.status, 500);
    assert.doesNotMatch(boom.text(), /secret-detail/);
    await until(() => calls.filter((c) => c.fields.target === 'ferrule::access').length === 2);
  });
  const startup = calls.find((c) => c.fields.target === 'ferrule::server');
  assert.strictEqual(startup.level, 'info');
  assert.strictEqual(startup.message, `serving on http://127.0.0.1:${port} (pid ${process.pid})`);
  assert.strictEqual(startup.fields.pid, process.pid);

  const access = calls.filter((c) => c.fields.target === 'ferrule::access');
  assert.strictEqual(access.length, 2, JSON.stringify(calls));
  assert.strictEqual(access[0].level, 'info');
  assert.match(access[0].message, /^GET \/n\/3 200 7B \d+\.\d\dms id=rid-9$/);
  const { method, path: p, status, bytes, request_id: requestId, duration_ms: ms } = access[0].fields;
  assert.deepStrictEqual([method, p, status, bytes, requestId], ['GET', '/n/3', 200, 7, 'rid-9']);
  assert.strictEqual(typeof ms, 'number');
  assert.strictEqual(access[1].fields.status, 500);

  const thrown = calls.find((c) => c.fields.target === 'ferrule::handler' && c.fields.err);
  assert.strictEqual(thrown.level, 'error');
  assert.strictEqual(thrown.message, 'GET /boom: the handler threw');
  assert.ok(thrown.fields.err instanceof RangeError);
  // One record per failure: the core writes no line of its own beside the glue's (each was
  // logged twice before, found by every probe).
  assert.strictEqual(calls.filter((c) => c.fields.target === 'ferrule::handler').length, 1, JSON.stringify(calls.map((c) => c.message)));
});

test('logLevel leaves out what is below it', async () => {
  const { logger, calls } = recorder();
  const app = new App({ logger, accessLog: true, logLevel: 'error' });
  app.get('/ok', () => 'ok');
  app.get('/boom', () => { throw new Error('x'); });
  await serving(app, async (port) => {
    await request(port, 'GET', '/ok');
    await request(port, 'GET', '/boom');
    await until(() => calls.some((c) => c.fields.route === 'GET /boom'));
  });
  assert.deepStrictEqual([...new Set(calls.map((c) => c.level))], ['error'], JSON.stringify(calls));
  assert.ok(!calls.some((c) => c.fields.target === 'ferrule::access' || c.fields.target === 'ferrule::server'));
});

test('logger: false logs nothing, not even the startup line; the default writes lines to stderr', () => {
  // A handler that throws too: its error once went to stderr whatever the logger said.
  const script = (options) => `const { App } = require('ferrule'); const app = new App(${options}); app.get('/', () => 'hi');
    app.get('/boom', () => { throw new Error('boom'); });
    const paths = ${options.includes('false') ? "['/', '/boom']" : "['/']"};
    app.listen({ port: 0 }).then(async ({ port }) => { for (const p of paths) await fetch('http://127.0.0.1:' + port + p).then((r) => r.text()); })
      .then(() => app.close());`;
  const run = (options) => spawnSync(process.execPath, ['-e', script(options)], { cwd: path.join(__dirname, '..'), encoding: 'utf8', timeout: 20000 });
  const quiet = run('{ logger: false, accessLog: true }');
  assert.strictEqual(quiet.status, 0, quiet.stderr);
  assert.strictEqual(quiet.stderr, '');
  const plain = run('{ accessLog: true }');
  assert.strictEqual(plain.status, 0, plain.stderr);
  const lines = plain.stderr.trim().split('\n');
  assert.match(lines[0], /^ferrule: serving on http:\/\/127\.0\.0\.1:\d+ \(pid \d+\)$/);
  assert.match(lines[1], /^ferrule: GET \/ 200 2B \d+\.\d\dms id=[0-9a-f-]{36}$/);
});

test('a logger without pino\'s methods, or an unknown level, is refused by name', () => {
  assert.throws(() => new App({ logger: { log() {} } }), { name: 'TypeError', message: /logger must be true, false or a pino-compatible logger/ });
  assert.throws(() => new App({ logLevel: 'loud' }), { name: 'TypeError', message: /logLevel: unknown variant `loud`/ });
  assert.throws(() => new App({ loger: true }), { name: 'TypeError', message: /unknown App option loger \(did you mean logger\?\)/ });
});
