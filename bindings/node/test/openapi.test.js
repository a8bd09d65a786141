'use strict';
// The OpenAPI document the core builds from the routes: served at /openapi.json to a real
// client, the same as app.openapi(), with @fastify/swagger's route fields (summary,
// description, tags, operationId, deprecated, hide) as options or in a Fastify-style schema.
const { test } = require('node:test');
const assert = require('node:assert');
const { App } = require('ferrule');
const { serving, request } = require('./support');

function shop() {
  const app = new App({ title: 'Shop', version: '2.1', openapiTags: [{ name: 'users' }] });
  const user = { $id: 'https://example.com/schemas/User', type: 'object', properties: { name: { type: 'string' } }, required: ['name'] };
  app.get('/users/{id:int}', { summary: 'One user', tags: ['users'], query: { type: 'object', properties: { verbose: { type: 'boolean' } } } }, ({ params }) => ({ id: params.id }));
  app.post('/users', { schema: { body: user, description: 'Creates a user.', operationId: 'createUser', deprecated: true } }, ({ body }) => body);
  app.get('/internal', { schema: { hide: true } }, () => 'hidden');
  return app;
}

test('the served document is app.openapi() and describes each route', async () => {
  const app = shop();
  const document = app.openapi();
  const reply = await serving(app, (port) => request(port, 'GET', '/openapi.json'));
  assert.strictEqual(reply.status, 200);
  assert.strictEqual(reply.headers['content-type'], 'application/json');
  assert.deepStrictEqual(reply.json(), document);

  assert.deepStrictEqual(document.info, { title: 'Shop', version: '2.1' });
  assert.deepStrictEqual(Object.keys(document.paths).sort(), ['/users', '/users/{id}'], 'hide: true is left out');
  const read = document.paths['/users/{id}'].get;
  assert.strictEqual(read.summary, 'One user');
  assert.deepStrictEqual(read.tags, ['users']);
  assert.deepStrictEqual(read.parameters, [
    { name: 'id', in: 'path', required: true, schema: { type: 'integer' } },
    { name: 'verbose', in: 'query', required: false, schema: { type: 'boolean' } },
  ]);
  const create = document.paths['/users'].post;
  assert.deepStrictEqual([create.description, create.operationId, create.deprecated], ['Creates a user.', 'createUser', true]);
  assert.deepStrictEqual(create.requestBody.content['application/json'].schema, { $ref: '#/components/schemas/User' }, 'named by its $id');
  assert.deepStrictEqual(document.components.schemas.User.required, ['name']);
  assert.strictEqual(create.responses['422'].content['application/problem+json'].schema.$ref, '#/components/schemas/Problem');
});

test('a schema keeps the order it was written in: in the document and in the errors', async () => {
  // As Fastify keeps it: the core held schemas in sorted maps, so the docs page listed
  // `amount, item, zone` and a 422 reported `amount` first.
  const app = new App();
  const order = { type: 'object', properties: { zone: { type: 'string' }, item: { type: 'string', minLength: 3 }, amount: { type: 'integer', minimum: 1 } }, required: ['zone', 'item'] };
  app.post('/orders', { body: order }, ({ body }) => body);
  app.get('/a-status', { query: { type: 'object', properties: { zeta: { type: 'integer' }, alpha: { type: 'integer', minimum: 5 } } } }, () => 'ok');
  const document = app.openapi();
  assert.deepStrictEqual(Object.keys(document.paths), ['/orders', '/a-status']);
  assert.deepStrictEqual(Object.keys(document.paths['/orders'].post.requestBody.content['application/json'].schema.properties), ['zone', 'item', 'amount']);
  assert.deepStrictEqual(document.paths['/a-status'].get.parameters.map((p) => p.name), ['zeta', 'alpha']);
  const refused = await app.inject({ method: 'POST', url: '/orders', payload: { amount: 0, item: 'x' } });
  assert.deepStrictEqual(refused.json().errors.map((e) => [e.type, e.loc.join('.')]), [['missing', 'body.zone'], ['string_too_short', 'body.item'], ['greater_than_equal', 'body.amount']]);
  const query = await app.inject({ method: 'GET', url: '/a-status?alpha=1&zeta=z' });
  assert.deepStrictEqual(query.json().errors.map((e) => [e.type, e.loc.join('.')]), [['int_parsing', 'query.zeta'], ['greater_than_equal', 'query.alpha']]);
});

// @fastify/swagger's `security` (as an option or in the schema) naming the app's schemes, so the
// docs page's Authorize button sends a token; a hook checks it, as with @fastify/auth.
test('security requirements name the app\'s securitySchemes; an unknown or malformed one is refused', () => {
  const app = new App({ securitySchemes: { bearerAuth: { type: 'http', scheme: 'bearer', bearerFormat: 'JWT' }, key: { type: 'apiKey', in: 'header', name: 'x-key' } } });
  app.get('/me', { security: [{ bearerAuth: [] }] }, () => ({}));
  app.get('/either', { schema: { security: [{ bearerAuth: [] }, { key: [] }] } }, () => ({}));
  app.get('/health', { security: [] }, () => 'ok');
  const document = app.openapi();
  assert.deepStrictEqual(document.components.securitySchemes.bearerAuth, { type: 'http', scheme: 'bearer', bearerFormat: 'JWT' });
  assert.deepStrictEqual(document.paths['/me'].get.security, [{ bearerAuth: [] }]);
  assert.deepStrictEqual(document.paths['/either'].get.security, [{ bearerAuth: [] }, { key: [] }]);
  assert.deepStrictEqual(document.paths['/health'].get.security, []);
  assert.throws(() => app.get('/x', { security: [{ oauth: ['read'] }] }, () => ({})), /GET \/x: security names the scheme oauth, which no security scheme of the app or the route defines \(defined: bearerAuth, key\)/);
  assert.throws(() => new App({ securitySchemes: { basic: { type: 'http' } } }), /securitySchemes\.basic: an http scheme needs "scheme"/);
});

test('openapiUrl moves the document or, null, switches it off', async () => {
  const moved = new App({ openapiUrl: '/api/schema.json' });
  const off = new App({ openapiUrl: null });
  assert.strictEqual((await serving(moved, (port) => request(port, 'GET', '/api/schema.json'))).status, 200);
  assert.strictEqual((await serving(off, (port) => request(port, 'GET', '/openapi.json'))).status, 404);
  assert.throws(() => new App({ openapiUrl: 'schema.json' }), /openapiUrl must be a path starting with `\/`/);
  assert.throws(() => new App().get('/x', { summery: 'typo' }, () => 1), /summery.*did you mean summary/);
});

test('docsUrl serves the docs page, moves it or, null, switches it off (as does openapiUrl: null)', async () => {
  const page = await serving(new App({ title: 'Shop' }), (port) => request(port, 'GET', '/docs'));
  assert.strictEqual(page.status, 200);
  assert.strictEqual(page.headers['content-type'], 'text/html; charset=utf-8');
  assert.match(page.text(), /<title>Shop - Swagger UI<\/title>/);
  for (const [options, path, status] of [[{ docsUrl: '/api/docs' }, '/api/docs', 200], [{ docsUrl: null }, '/docs', 404], [{ openapiUrl: null }, '/docs', 404]]) {
    assert.strictEqual((await serving(new App(options), (port) => request(port, 'GET', path))).status, status, JSON.stringify(options));
  }
  assert.throws(() => new App({ docsUrl: 'docs' }), /docsUrl must be a path starting with `\/`/);
});

test("an array's OpenAPI style rides in its property: read that way and documented", async () => {
  const app = new App();
  const query = { type: 'object', properties: { ids: { type: 'array', items: { type: 'integer' }, style: 'pipeDelimited' }, tags: { type: 'array', items: { type: 'string' } } } };
  app.get('/find', { query }, ({ query }) => query);
  const reply = await serving(app, (port) => request(port, 'GET', '/find?ids=1|2&tags[]=a&tags[]=b'));
  assert.deepStrictEqual(reply.json(), { ids: [1, 2], tags: ['a', 'b'] });
  const [ids] = app.openapi().paths['/find'].get.parameters;
  assert.deepStrictEqual(ids, { name: 'ids', in: 'query', required: false, style: 'pipeDelimited', schema: { type: 'array', items: { type: 'integer' } } });
});

test('`ferrule openapi app.js` prints the document of an app that listens, or exports itself, without serving', async () => {
  const fs = require('node:fs');
  const os = require('node:os');
  const path = require('node:path');
  const { execFileSync, spawnSync } = require('node:child_process');
  const cli = path.join(path.dirname(require.resolve('ferrule/package.json')), 'cli.js');
  const dir = fs.mkdtempSync(path.join(process.env.TEST_TMPDIR || os.tmpdir(), 'ferrule-openapi-'));
  const declare = "const { App } = require('ferrule'); const app = new App({ title: 'Shop' }); app.get('/items/{id:int}', () => ({}));";
  fs.writeFileSync(path.join(dir, 'listens.js'), `${declare}\napp.listen(1);`); // port 1: it would fail to bind
  fs.writeFileSync(path.join(dir, 'exports.js'), `${declare}\nmodule.exports = app;`);
  fs.writeFileSync(path.join(dir, 'nothing.js'), 'module.exports = 42;');
  // The README's shape: an ES module awaiting listen() at its top level (require() cannot load
  // one). ES modules do not read NODE_PATH, so it imports the package by its file.
  const esm = require('node:url').pathToFileURL(path.join(path.dirname(require.resolve('ferrule/package.json')), 'index.mjs')).href;
  fs.writeFileSync(path.join(dir, 'awaits.mjs'), `import { App } from '${esm}';\n${declare.replace(/^const \{ App \} = require\('ferrule'\); /, '')}\nawait app.listen(1);`);
  fs.writeFileSync(path.join(dir, 'default.mjs'), `import { App } from '${esm}';\n${declare.replace(/^const \{ App \} = require\('ferrule'\); /, '')}\nexport default app;`);
  // The apps live outside the test's project: they find `ferrule` where this test does.
  const nodeModules = path.dirname(path.dirname(require.resolve('ferrule/package.json')));
  const env = { ...process.env, NODE_PATH: [nodeModules, process.env.NODE_PATH].filter(Boolean).join(path.delimiter) };
  for (const file of ['listens.js', 'exports.js', 'awaits.mjs', 'default.mjs']) {
    const document = JSON.parse(execFileSync(process.execPath, [cli, 'openapi', path.join(dir, file)], { env, timeout: 30000 }));
    assert.deepStrictEqual([document.info.title, Object.keys(document.paths)], ['Shop', ['/items/{id}']], file);
  }
  const refused = spawnSync(process.execPath, [cli, 'openapi', path.join(dir, 'nothing.js')], { env, timeout: 30000 });
  assert.strictEqual(refused.status, 1);
  assert.match(refused.stderr.toString(), /^ferrule: .*nothing\.js neither listens nor exports a ferrule App/);
});
