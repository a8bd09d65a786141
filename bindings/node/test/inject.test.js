'use strict';
// app.inject(): the whole core stack without a socket, with Fastify's call and response shape.
const { test } = require('node:test');
const assert = require('node:assert');
const { App, HttpError, Response } = require('ferrule');
const { serving, request, runScript } = require('./support');

/** `runScript` with `gc()` exposed. */
const withGc = (script) => runScript(script, ['--expose-gc']);

function makeApp() {
  const app = new App({ compression: { min_size: 10 } });
  app.get('/users/{id:int}', { query: { type: 'object', properties: { verbose: { type: 'boolean', default: false } } } },
    ({ params, query }) => ({ id: params.id, verbose: query.verbose }));
  app.post('/items', { body: { type: 'object', required: ['name'], properties: { name: { type: 'string' } } }, status: 201 },
    async ({ body }) => body);
  app.get('/seen', (ctx) => ({ host: ctx.header('host'), agent: ctx.header('user-agent'), token: ctx.header('x-token'), cookies: ctx.cookiePairs }));
  app.get('/login', () => new Response({ ok: true }, { headers: { 'set-cookie': ['session=abc; Path=/; HttpOnly', 'theme=dark; Max-Age=60'] } }));
  app.get('/teapot', () => { throw new HttpError(418, 'short and stout'); });
  app.get('/boom', () => { throw new Error('SECRET database password'); });
  app.get('/big', () => ({ data: 'x'.repeat(100) }));
  app.get('/rows', async function* rows() { for (let i = 0; i < 3; i++) yield `${i}\n`; });
  return app;
}

test('a request runs the route with typed parameters', async () => {
  const app = makeApp();
  const response = await app.inject({ method: 'GET', url: '/users/7', query: { verbose: true } });
  assert.strictEqual(response.statusCode, 200);
  assert.strictEqual(response.statusMessage, 'OK');
  assert.deepStrictEqual(response.json(), { id: 7, verbose: true });
  assert.strictEqual(response.headers['content-type'], 'application/json; charset=utf-8');
  assert.strictEqual(response.body, response.payload);
  assert.ok(Buffer.isBuffer(response.rawPayload));
});

test('validation and routing happen in the core, as on a socket', async () => {
  const app = makeApp();
  const invalid = await app.inject('/users/seven');
  assert.strictEqual(invalid.statusCode, 422);
  assert.strictEqual(invalid.headers['content-type'], 'application/problem+json');
  assert.deepStrictEqual(invalid.json().errors[0].loc, ['path', 'id']);
  assert.strictEqual((await app.inject({ url: '/nowhere' })).statusCode, 404);
  assert.strictEqual((await app.inject({ method: 'DELETE', url: '/users/1' })).statusCode, 405);
});

test('an object payload is sent as JSON', async () => {
  const app = makeApp();
  const created = await app.inject({ method: 'POST', url: '/items', payload: { name: 'pen' } });
  assert.strictEqual(created.statusCode, 201);
  assert.deepStrictEqual(created.json(), { name: 'pen' });
  const missing = await app.inject({ method: 'POST', url: '/items', body: {} });
  assert.strictEqual(missing.statusCode, 422);
});

test('headers, cookies and the default host reach the handler', async () => {
  const app = makeApp();
  const seen = (await app.inject({ url: '/seen', headers: { 'X-Token': 't1' }, cookies: { a: '1', b: '2' } })).json();
  assert.deepStrictEqual(seen, { host: 'localhost:80', agent: 'lightMyRequest', token: 't1', cookies: [['a', '1'], ['b', '2']] });
  const absolute = (await app.inject({ url: 'http://example.test/seen' })).json();
  assert.strictEqual(absolute.host, 'example.test');
});

test('set-cookie comes back as an array and as parsed cookies', async () => {
  const response = await makeApp().inject('/login');
  assert.deepStrictEqual(response.headers['set-cookie'], ['session=abc; Path=/; HttpOnly', 'theme=dark; Max-Age=60']);
  assert.deepStrictEqual(response.cookies, [
    { name: 'session', value: 'abc', path: '/', httpOnly: true },
    { name: 'theme', value: 'dark', maxAge: 60 },
  ]);
});

test('errors are problem responses and leak nothing', async () => {
  const app = makeApp();
  const teapot = await app.inject('/teapot');
  assert.strictEqual(teapot.statusCode, 418);
  assert.strictEqual(teapot.json().detail, 'short and stout');
  const boom = await app.inject('/boom');
  assert.strictEqual(boom.statusCode, 500);
  assert.ok(!boom.body.includes('SECRET'));
});

test('compression and streams go through the core', async () => {
  const app = makeApp();
  const compressed = await app.inject({ url: '/big', headers: { 'accept-encoding': 'gzip' } });
  assert.strictEqual(compressed.headers['content-encoding'], 'gzip');
  assert.deepStrictEqual(JSON.parse(require('node:zlib').gunzipSync(compressed.rawPayload)), { data: 'x'.repeat(100) });
  const rows = await app.inject('/rows');
  assert.strictEqual(rows.body, '0\n1\n2\n');
  assert.strictEqual(rows.cutOff, false);
});

test('the callback form', async () => {
  const app = makeApp();
  const response = await new Promise((resolve, reject) => {
    const returned = app.inject({ url: '/users/3' }, (error, res) => (error ? reject(error) : resolve(res)));
    assert.strictEqual(returned, undefined);
  });
  assert.deepStrictEqual(response.json(), { id: 3, verbose: false });
});

test('routes declared after an inject are served by the next one', async () => {
  const app = makeApp();
  assert.strictEqual((await app.inject('/later')).statusCode, 404);
  app.get('/later', () => 'here');
  assert.strictEqual((await app.inject('/later')).body, 'here');
});

test('inject works while the app listens, and both answer alike', async () => {
  const app = makeApp();
  await serving(app, async (port) => {
    const [injected, socket] = await Promise.all([app.inject('/users/5'), request(port, 'GET', '/users/5')]);
    assert.deepStrictEqual(injected.json(), socket.json());
  });
  // After close(), inject still works: it needs no socket.
  assert.strictEqual((await app.inject('/users/6')).statusCode, 200);
});

test('a misspelled option is refused by name', async () => {
  await assert.rejects(makeApp().inject({ url: '/users/1', querry: {} }), /unknown inject option querry \(did you mean query\?\)/);
});

test('an app that used inject() is collected once its program lets go of it', () => {
  // Its in-process router rang a callback the addon held strongly, and that callback holds the
  // app: a cycle through Node-API the collector could not see, each app kept with its thread.
  const script = `const { App } = require('ferrule');
    const collected = new Set();
    const registry = new FinalizationRegistry((name) => collected.add(name));
    async function used(name) {
      const app = new App({ logger: false });
      app.get('/', () => 'hi');
      registry.register(app, name);
      return (await app.inject('/')).body;
    }
    (async () => {
      const bodies = [];
      for (const name of ['a', 'b', 'c']) bodies.push(await used(name));
      for (let round = 0; round < 100 && collected.size < 3; round++) {
        gc();
        await new Promise((resolve) => setTimeout(resolve, 10));
      }
      console.log(bodies.join(','));
      console.log([...collected].sort().join(','));
    })();`;
  assert.deepStrictEqual(withGc(script), ['hi,hi,hi', 'a,b,c']);
});

test('an app let go of right after inject() still answers it', () => {
  // `await build().inject(…)`: only the pending request keeps the app while its handler waits.
  const script = `const { App } = require('ferrule');
    function build() {
      const app = new App({ logger: false });
      app.get('/slow', async () => { await new Promise((resolve) => setTimeout(resolve, 100)); return 'late'; });
      return app;
    }
    (async () => {
      const pending = build().inject('/slow');
      for (let round = 0; round < 5; round++) {
        gc();
        await new Promise((resolve) => setTimeout(resolve, 10));
      }
      console.log((await pending).body);
    })();`;
  assert.deepStrictEqual(withGc(script), ['late']);
});

test('close() lets go of the in-process router and its thread; inject() still works after it', () => {
  // In a process of its own: another test's app, collected meanwhile, would take its thread too.
  const script = `const { App } = require('ferrule');
    const threads = () => Number(require('node:fs').readFileSync('/proc/self/status', 'utf8').match(/Threads:\\s+(\\d+)/)[1]);
    (async () => {
      const app = new App({ logger: false });
      app.get('/', () => 'hi');
      const before = threads();
      const first = (await app.inject('/')).body;
      const injecting = threads();
      await app.close();
      const closed = threads();
      const again = (await app.inject('/')).body;
      console.log([first, again].join(','));
      console.log(injecting > before, closed === before);
    })();`;
  assert.deepStrictEqual(withGc(script), ['hi,hi', 'true true']);
});

// light-my-request takes a stream as the payload (a form-data body in a test); it was sent as
// the JSON of the stream object.
test('inject reads a stream payload whole', async () => {
  const { Readable } = require('node:stream');
  const app = new App({ logger: false });
  app.post('/echo', async (request) => ({ body: request.body }));
  const response = await app.inject({ method: 'POST', url: '/echo', headers: { 'content-type': 'application/json' }, payload: Readable.from(['{"a":', '1}']) });
  assert.deepStrictEqual(response.json(), { body: { a: 1 } });
  // A legacy stream (form-data's: pipe, no async iterator) too.
  const { Stream } = require('node:stream');
  const legacy = new Stream();
  legacy.pipe = (destination) => { destination.end(Buffer.from('{"b":2}')); return destination; };
  const piped = await app.inject({ method: 'POST', url: '/echo', headers: { 'content-type': 'application/json' }, payload: legacy });
  assert.deepStrictEqual(piped.json(), { body: { b: 2 } });
  await app.close();
});

// Found by a Fastify port: a URL with a space or non-ASCII was refused as "invalid uri
// character", where light-my-request encodes it.
test('inject() percent-encodes what a URL may not hold and drops a fragment', async () => {
  const app = new App();
  app.get('/x', (ctx) => ({ q: ctx.query.q, n: ctx.query.n, url: ctx.url }));
  const answer = await app.inject('/x?q=hello world&n=é#top');
  assert.strictEqual(answer.statusCode, 200, answer.body);
  assert.deepStrictEqual(answer.json(), { q: 'hello world', n: 'é', url: '/x?q=hello%20world&n=%C3%A9' });
});

test('allowedHosts: other hosts are a 400 before any hook, a www twin is redirected, and a bad pattern is refused', async () => {
  const app = new App({ allowedHosts: ['shop.example', '*.shop.example', 'localhost', 'www.brand.example'] });
  const hooked = [];
  app.addHook('onRequest', async (ctx) => { hooked.push(ctx.header('host')); });
  app.get('/where', (ctx) => ({ host: ctx.header('host') }));
  assert.deepStrictEqual((await app.inject('/where')).json(), { host: 'localhost:80' });
  assert.strictEqual((await app.inject('http://eu.shop.example:8080/where')).statusCode, 200);
  assert.strictEqual((await app.inject({ url: '/where', headers: { host: 'Shop.EXAMPLE:1' } })).statusCode, 200, 'any case');
  const refused = await app.inject({ url: '/where', headers: { host: 'evil.example' } });
  assert.strictEqual(refused.statusCode, 400);
  assert.strictEqual(refused.headers['content-type'], 'application/problem+json');
  assert.ok(!refused.body.includes('evil.example'), 'the host is not echoed');
  const moved = await app.inject({ url: '/where?x=1', headers: { host: 'brand.example' } });
  assert.deepStrictEqual([moved.statusCode, moved.headers.location], [307, 'http://www.brand.example/where?x=1']);
  assert.deepStrictEqual(hooked, ['localhost:80', 'eu.shop.example:8080', 'Shop.EXAMPLE:1'], 'a refused request meets no hook');
  assert.strictEqual((await new App({ allowedHosts: ['www.brand.example'], wwwRedirect: false }).inject({ url: '/', headers: { host: 'brand.example' } })).statusCode, 400);
  assert.throws(() => new App({ allowedHosts: ['*example.com'] }), /allowedHosts: `\*example\.com` is no pattern/);
});

// Found running find-my-way's tests: each of these paths was refused at declaration.
test("find-my-way's paths: parameters beside text, with an expression of their own, and the first declared route", async () => {
  const app = new App();
  app.get('/files/:name.:ext', ({ params }) => params);
  app.get('/near/:lat-:lng', { params: { type: 'object', properties: { lat: { type: 'number' }, lng: { type: 'number' } } } }, ({ params }) => params);
  app.get('/at/:hour(^\\d{2})h:minute(^\\d{2})m', ({ params }) => params);
  app.get('/items/:id', ({ params }) => ({ item: params.id }));
  app.delete('/items/:id.json', ({ params }) => ({ deleted: params.id }));
  assert.deepStrictEqual((await app.inject('/files/report.tar.gz')).json(), { name: 'report.tar', ext: 'gz' });
  assert.deepStrictEqual((await app.inject('/near/51.5-0.125')).json(), { lat: 51.5, lng: 0.125 });
  assert.strictEqual((await app.inject('/near/north-0.125')).statusCode, 422);
  assert.deepStrictEqual((await app.inject('/at/09h30m')).json(), { hour: '09', minute: '30' });
  assert.strictEqual((await app.inject('/at/9h30m')).statusCode, 404);
  assert.deepStrictEqual((await app.inject('/items/7.json')).json(), { item: '7.json' });
  assert.deepStrictEqual((await app.inject({ method: 'DELETE', url: '/items/7.json' })).json(), { deleted: '7' });
  const wrong = await app.inject({ method: 'POST', url: '/at/09h30m' });
  assert.deepStrictEqual([wrong.statusCode, wrong.headers.allow], [405, 'GET, HEAD']);
  // An optional last parameter: the route with it and without it, as find-my-way registers them.
  app.get('/posts/:id?', ({ params }) => ({ id: params.id ?? null }));
  assert.deepStrictEqual((await app.inject('/posts/3')).json(), { id: '3' });
  assert.deepStrictEqual((await app.inject('/posts')).json(), { id: null });
  assert.throws(() => app.get('/a/:id?/b', () => 'x'), /an optional part is two routes/);
  assert.throws(() => app.get('/bad/:id(\\d+(?=x))', () => 'x'), /`:id\(/);
});
