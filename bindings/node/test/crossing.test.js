'use strict';
// The request path's crossing between the glue and the addon, which has shortcuts: a plain
// object or array result is flattened by the glue and written by the addon (`replyTape`), any
// other result crosses as it is (`reply`); a standard method crosses as a number and empty
// parts as nothing, and the context object is completed in JavaScript. Each shortcut must give
// exactly what the long way gives.
const { test } = require('node:test');
const assert = require('node:assert');
const { App } = require('ferrule');
const { serving, request } = require('./support');

test('every kind of plain result is sent as JSON.stringify (or bytes, or text) would send it', async () => {
  const app = new App({ logger: false });
  const results = {
    '/object': () => ({ id: 1, name: 'tea', tags: ['a', 'b'], nested: { ok: true, none: null } }),
    '/array': () => [1, 'a', null, undefined, () => 1, { x: 2 }],
    '/date': () => ({ at: new Date(0) }),
    '/unicode': () => ({ text: 'é — 東京 😀', 'ключ': 'значение' }),
    '/bigint': () => ({ big: 2n ** 70n }),
    '/tojson-undefined': () => ({ toJSON() { return undefined; } }),
    // Own enumerable string keys only, integer-like ones first, as JSON.stringify takes them.
    '/own-keys': () => {
      const value = Object.assign(Object.create({ inherited: 1 }), { own: 2, 10: 'b', 2: 'a' });
      Object.defineProperty(value, 'hidden', { value: 3, enumerable: false });
      value[Symbol('s')] = 4;
      return value;
    },
    '/null-prototype': () => Object.assign(Object.create(null), { a: 1 }),
    '/instance': () => new (class { x = 1; get y() { return 2; } })(),
    '/boxed': () => new String('hi'),
    '/number': () => 42,
    '/null': () => null,
    '/text': () => 'plain',
    '/u8': () => new Uint8Array([104, 105]),
    '/view': () => new DataView(new Uint8Array([65, 66]).buffer),
  };
  for (const [path, handler] of Object.entries(results)) app.get(path, handler);
  app.get('/shaped', { response: { 200: { type: 'object', properties: { a: { type: 'integer' } } } } }, () => ({ a: 1, secret: 2 }));
  const expected = {
    '/object': ['application/json', '{"id":1,"name":"tea","tags":["a","b"],"nested":{"ok":true,"none":null}}'],
    '/array': ['application/json', '[1,"a",null,null,null,{"x":2}]'],
    '/date': ['application/json', '{"at":"1970-01-01T00:00:00.000Z"}'],
    '/unicode': ['application/json', JSON.stringify({ text: 'é — 東京 😀', 'ключ': 'значение' })],
    '/bigint': ['application/json', '{"big":1180591620717411303424}'],
    '/tojson-undefined': ['application/json', 'null'],
    '/own-keys': ['application/json', '{"2":"a","10":"b","own":2}'],
    '/null-prototype': ['application/json', '{"a":1}'],
    '/instance': ['application/json', '{"x":1}'],
    '/boxed': ['application/json', '"hi"'],
    '/number': ['application/json', '42'],
    '/null': ['application/json', 'null'],
    '/text': ['text/plain', 'plain'],
    '/u8': ['application/octet-stream', 'hi'],
    '/view': ['application/octet-stream', 'AB'],
    '/shaped': ['application/json', '{"a":1}'],
  };
  for (const [path, [type, body]] of Object.entries(expected)) {
    const response = await app.inject(path);
    assert.strictEqual(response.statusCode, 200, path);
    assert.ok(response.headers['content-type'].startsWith(type), `${path}: ${response.headers['content-type']}`);
    assert.strictEqual(response.body, body, path);
  }
});

test('a result that cannot be flattened is a 500 that names why in the log, and the app goes on', async () => {
  const calls = [];
  const logger = {};
  for (const level of ['debug', 'info', 'warn', 'error']) logger[level] = (fields, message) => calls.push(`${level} ${message} ${JSON.stringify(fields)}`);
  const app = new App({ logger });
  app.get('/throws', () => ({ toJSON() { throw new Error('no JSON for you'); } }));
  app.get('/cycle', () => { const a = {}; a.self = a; return a; });
  app.get('/fine', () => ({ ok: true }));
  await serving(app, async (port) => {
    for (const path of ['/throws', '/cycle']) {
      const response = await request(port, 'GET', path);
      assert.strictEqual(response.status, 500, path);
      assert.ok(!response.text().includes('no JSON for you'), path);
    }
    assert.deepStrictEqual((await request(port, 'GET', '/fine')).json(), { ok: true });
  });
  const said = (words) => calls.some((line) => line.startsWith('error') && line.includes('cannot be sent') && line.includes(words));
  assert.ok(said('no JSON for you'), calls.join('\n'));
  assert.ok(said('nested too deeply'), calls.join('\n'));
});

test('the context has its method and fresh empty objects for what the request did not bring', async () => {
  const app = new App({ logger: false });
  const seen = [];
  const handler = (ctx) => {
    seen.push(ctx);
    ctx.query.touched = true; // must not show up in the next request's context
    return { method: ctx.method, params: ctx.params, query: ctx.query, headers: ctx.declaredHeaders, cookies: ctx.declaredCookies };
  };
  for (const method of ['get', 'post', 'put', 'delete', 'patch', 'options']) app[method]('/echo', handler);
  for (const method of ['GET', 'POST', 'PUT', 'DELETE', 'PATCH', 'OPTIONS']) {
    const response = await app.inject({ method, url: '/echo' });
    assert.deepStrictEqual(response.json(), { method, params: {}, query: { touched: true }, headers: {}, cookies: {} }, method);
  }
  assert.strictEqual(new Set(seen.map((ctx) => ctx.query)).size, seen.length);
  assert.strictEqual(new Set(seen.map((ctx) => ctx.params)).size, seen.length);
});
