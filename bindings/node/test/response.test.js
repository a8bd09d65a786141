'use strict';
// Response schemas in Fastify's shape, `response: { 200: schema }` (or inside `schema`): a JSON
// result keeps only what the schema for its status declares, at every depth, as
// fast-json-stringify writes it; `validateResponses` reports a result the schema forbids.
const { test } = require('node:test');
const assert = require('node:assert');
const { App, Response } = require('ferrule');

const userOut = {
  title: 'UserOut',
  type: 'object',
  properties: {
    id: { type: 'integer' },
    name: { type: 'string' },
    friends: { type: 'array', items: { type: 'object', properties: { name: { type: 'string' } } } },
  },
  required: ['id', 'name'],
};
const record = () => ({ id: 1, name: 'ada', password: 'hunter2', friends: [{ name: 'bob', token: 't-1' }], admin: true });

function users(options = {}) {
  const app = new App(options);
  app.get('/user', { response: { 200: userOut } }, () => record());
  app.get('/fastify', { schema: { response: { '2xx': userOut } } }, async () => record());
  app.post('/created', { response: { 201: userOut } }, () => new Response(record(), { status: 201 }));
  app.get('/other', { response: { 200: userOut } }, () => new Response(record(), { status: 202 }));
  app.get('/unicode', { response: { 200: userOut } }, () => ({ id: 2, name: 'Zoë "ü" 中', secret: 'é' }));
  app.get('/free', () => record());
  return app;
}

test('a response schema drops the password and everything else it does not declare', async () => {
  const app = users();
  for (const path of ['/user', '/fastify']) {
    const response = await app.inject(path);
    assert.strictEqual(response.statusCode, 200, path);
    assert.deepStrictEqual(response.json(), { id: 1, name: 'ada', friends: [{ name: 'bob' }] }, path);
    assert.ok(!response.body.includes('hunter2') && !response.body.includes('t-1'), path);
  }
  const created = await app.inject({ method: 'POST', url: '/created' });
  assert.deepStrictEqual([created.statusCode, created.json()], [201, { id: 1, name: 'ada', friends: [{ name: 'bob' }] }]);
  assert.strictEqual((await app.inject('/other')).json().password, 'hunter2', 'no schema for 202');
  assert.deepStrictEqual((await app.inject('/unicode')).json(), { id: 2, name: 'Zoë "ü" 中' });
  assert.strictEqual((await app.inject('/free')).json().password, 'hunter2');
});

test('a result of a kind the schema cannot filter is a 500 that sends nothing of it', async () => {
  // fast-json-stringify finds no required `id` in an array; FastAPI's validation refuses it.
  const app = new App();
  app.get('/list', { response: { 200: userOut } }, () => [record()]);
  app.get('/one', { response: { 200: { type: 'array', items: userOut } } }, () => record());
  app.get('/nested', { response: { 200: userOut } }, () => ({ id: 1, name: 'ada', friends: { name: 'bob', token: 't-1' } }));
  for (const path of ['/list', '/one', '/nested']) {
    const response = await app.inject(path);
    assert.strictEqual(response.statusCode, 500, path);
    assert.ok(!response.body.includes('hunter2') && !response.body.includes('t-1'), path);
  }
});

test('Response.json is the Fetch API\'s, filtered like a plain result', async () => {
  const app = new App();
  app.get('/user', { response: { 200: userOut } }, () => Response.json(record()));
  app.get('/created', { response: { 201: userOut } }, () => Response.json(record(), { status: 201, headers: { 'x-kind': 'user' } }));
  app.get('/text', () => Response.json('ok'));
  const user = await app.inject('/user');
  assert.deepStrictEqual([user.statusCode, user.json()], [200, { id: 1, name: 'ada', friends: [{ name: 'bob' }] }]);
  const created = await app.inject('/created');
  assert.deepStrictEqual([created.statusCode, created.headers['x-kind'], created.json().password], [201, 'user', undefined]);
  const text = await app.inject('/text');
  assert.deepStrictEqual([text.headers['content-type'], text.body], ['application/json; charset=utf-8', '"ok"']);
  assert.throws(() => Response.json(undefined), TypeError);
});

test('the response schema is the document\'s, named by its title', () => {
  const document = users().openapi();
  const ok = document.paths['/user'].get.responses['200'];
  assert.deepStrictEqual(ok.content['application/json'].schema, { $ref: '#/components/schemas/UserOut' });
  assert.ok(document.paths['/fastify'].get.responses['2XX']);
  assert.deepStrictEqual(Object.keys(document.components.schemas.UserOut.properties).sort(), ['friends', 'id', 'name']);
});

test('a default fills what the result lacks and a missing required field is a 500, as fast-json-stringify writes them', async () => {
  const part = { type: 'object', properties: { k: { type: 'integer', default: 7 } } };
  const itemOut = {
    type: 'object',
    required: ['id'],
    properties: { id: { type: 'integer' }, note: { type: ['string', 'null'], default: null }, tags: { type: 'array', default: [] }, parts: { type: 'array', items: part } },
  };
  const app = new App();
  app.get('/item', { schema: { response: { 200: itemOut } } }, () => ({ id: 3, note: undefined, parts: [{}, { k: 1 }], secret: 'x' }));
  app.get('/broken', { response: { 200: itemOut } }, () => ({ tags: ['private-tag'] }));
  const item = await app.inject('/item');
  assert.deepStrictEqual([item.statusCode, item.json()], [200, { id: 3, note: null, tags: [], parts: [{ k: 7 }, { k: 1 }] }]);
  const broken = await app.inject('/broken');
  assert.strictEqual(broken.statusCode, 500);
  assert.ok(!broken.body.includes('private-tag'), broken.body);
});

test('validateResponses turns a result the schema forbids into a 500 that says where', async () => {
  const app = new App({ validateResponses: true });
  app.get('/broken', { response: { 200: userOut } }, () => ({ id: 'one', password: 'hunter2' }));
  const response = await app.inject('/broken');
  assert.strictEqual(response.statusCode, 500);
  assert.deepStrictEqual(response.json().errors.map((e) => [e.type, e.loc]), [['int_type', ['response', 'id']], ['missing', ['response', 'name']]]);
  assert.ok(!response.body.includes('hunter2'));
});

test('a response option that is not a map of statuses is refused where it is declared', () => {
  const app = new App();
  assert.throws(() => app.get('/a', { response: 'UserOut' }, () => null), /response must map statuses to schemas/);
  assert.throws(() => app.get('/b', { response: { ok: userOut } }, () => null), /"ok" is not a status/);
});

test('a handler that returns nothing sends an empty body; null is JSON null', async () => {
  // Found by running Fastify's post-empty-body tests: undefined went out as the JSON text null.
  const app = new App();
  app.post('/nothing', { status: 202 }, async () => {});
  app.get('/null', () => null);
  const nothing = await app.inject({ method: 'POST', url: '/nothing' });
  assert.deepStrictEqual([nothing.statusCode, nothing.body, nothing.headers['content-type']], [202, '', undefined]);
  const nulled = await app.inject('/null');
  assert.deepStrictEqual([nulled.body, nulled.headers['content-type']], ['null', 'application/json; charset=utf-8']);
});
