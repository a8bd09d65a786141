'use strict';
// The README's hooks example, run as written through app.inject(): the onRequest hook refuses
// an unauthenticated request, the scope's preHandler and route see what it decorated, the error
// and not-found handlers answer, onReady runs before the first request, a route's own preHandler
// guards it, a reply decoration answers, `await app.register()` waits for the plugin, and a
// content-type parser reads its type.
const { test } = require('node:test');
const assert = require('node:assert');
const fs = require('node:fs');
const ferrule = require('ferrule');

function readmeBlock() {
  const text = fs.readFileSync(process.env.FERRULE_README, 'utf8');
  const start = text.indexOf("### Hooks, error handlers, groups and the app's life cycle");
  const section = text.slice(start, text.indexOf('\n### ', start + 1));
  const found = /```js\n([\s\S]*?)```/.exec(section);
  assert.ok(found, "no js block in the README's hooks section");
  return found[1];
}

test("the README's hooks example as written", async () => {
  const app = new ferrule.App();
  const db = { connected: false, connect() { this.connected = true; } };
  const mustBeAdmin = async (ctx, reply) => { if (ctx.header('x-role') !== 'admin') return reply.teapot(); };
  let loaded = false;
  const dbPlugin = async (scope) => { await new Promise((resolve) => setTimeout(resolve, 5)); loaded = true; };
  const AsyncFunction = (async () => {}).constructor;
  await new AsyncFunction('app', 'db', 'mustBeAdmin', 'dbPlugin', readmeBlock())(app, db, mustBeAdmin, dbPlugin);
  assert.ok(loaded, 'await app.register waited for the plugin');
  app.get('/items/{id:int}', ({ params }) => params);
  const refused = await app.inject('/admin/stats');
  assert.deepStrictEqual([refused.statusCode, refused.json()], [401, { error: 'who are you?' }]);
  assert.ok(db.connected, 'onReady ran before the first request');
  const auth = { authorization: 'Bearer x' };
  const allowed = await app.inject({ url: '/admin/stats', headers: auth });
  assert.deepStrictEqual([allowed.statusCode, allowed.json(), allowed.headers['x-served-by']], [200, { by: 'ada' }, 'ferrule']);
  const invalid = await app.inject({ url: '/items/seven', headers: auth });
  assert.deepStrictEqual([invalid.statusCode, invalid.json()], [400, { invalid: [['path', 'id']] }]);
  const teapot = await app.inject({ url: '/billing', headers: auth });
  assert.deepStrictEqual([teapot.statusCode, teapot.body], [418, 'short and stout']);
  const billing = await app.inject({ url: '/billing', headers: { ...auth, 'x-role': 'admin' } });
  assert.deepStrictEqual([billing.statusCode, billing.body], [200, 'billing']);
  app.post('/csv', (ctx) => ctx.body);
  const csv = await app.inject({ method: 'POST', url: '/csv', payload: 'a,b', headers: { ...auth, 'content-type': 'text/csv' } });
  assert.deepStrictEqual(csv.json(), ['a', 'b']);
  const missing = await app.inject({ url: '/nowhere', headers: auth });
  assert.deepStrictEqual([missing.statusCode, missing.json()], [404, { missing: '/nowhere' }]);
  await app.close();
});
