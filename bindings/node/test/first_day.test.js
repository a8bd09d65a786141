'use strict';
// What a Fastify or Express user tries on the first day, each of which once went wrong:
// listen(port), unknown options, Fastify's schema shape, :id segments, duplicate routes,
// busy ports, statuses and headers that cannot be sent, and values that are not responses.
const { test } = require('node:test');
const assert = require('node:assert');
const net = require('node:net');
const path = require('node:path');
const { spawn } = require('node:child_process');
const { App, Response, HttpError } = require('ferrule');
const { serving, request } = require('./support');

function busyPort() {
  return new Promise((resolve) => {
    const server = net.createServer();
    server.listen(0, '127.0.0.1', () => resolve({ port: server.address().port, release: () => new Promise((r) => server.close(r)) }));
  });
}

/** Runs `script` in a Node process of its own; resolves once it printed `bound <port>`. */
async function spawnApp(script) {
  const child = spawn(process.execPath, ['-e', script], { cwd: path.join(__dirname, '..'), stdio: ['ignore', 'pipe', 'pipe'] });
  const out = { stdout: '', stderr: '' };
  child.stdout.on('data', (d) => { out.stdout += d; });
  child.stderr.on('data', (d) => { out.stderr += d; });
  const deadline = Date.now() + 20000;
  while (!out.stdout.includes('bound') && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
  const stop = async () => {
    child.kill('SIGTERM');
    await new Promise((r) => (child.exitCode !== null || child.signalCode !== null ? r() : child.on('exit', r)));
  };
  return { child, out, port: Number(out.stdout.trim().split(' ')[1]), stop };
}

test('listen(port) listens on that port and prints the startup line', async () => {
  const { port, release } = await busyPort();
  await release();
  const script = `const { App } = require('ferrule'); const app = new App(); app.get('/', () => 'hi');
    app.listen(${port}).then(({ port }) => console.log('bound ' + port));`;
  const app = await spawnApp(script);
  try {
    assert.strictEqual(app.out.stdout.trim(), `bound ${port}`, app.out.stderr);
    assert.match(app.out.stderr, new RegExp(`^ferrule: serving on http://127\\.0\\.0\\.1:${port} \\(pid ${app.child.pid}\\)$`, 'm'));
    assert.strictEqual((await request(port, 'GET', '/')).text(), 'hi');
  } finally {
    await app.stop();
  }
});

test('accessLog writes a line per request', async () => {
  const script = `const { App } = require('ferrule'); const app = new App({ accessLog: true }); app.get('/n/{n:int}', ({ params }) => params);
    app.listen({ port: 0, log: false }).then(({ port }) => console.log('bound ' + port));`;
  const app = await spawnApp(script);
  try {
    assert.strictEqual((await request(app.port, 'GET', '/n/3', { headers: { 'x-request-id': 'rid-9' } })).status, 200);
    const until = Date.now() + 5000;
    while (!app.out.stderr.includes('rid-9') && Date.now() < until) await new Promise((r) => setTimeout(r, 20));
    assert.match(app.out.stderr, /^ferrule: GET \/n\/3 200 7B \d+\.\d\dms id=rid-9$/m);
    assert.doesNotMatch(app.out.stderr, /serving on/, 'log: false leaves the startup line out');
  } finally {
    await app.stop();
  }
});

test('a port in use is refused with EADDRINUSE, with or without workers', async () => {
  const { port, release } = await busyPort();
  try {
    const app = new App();
    app.get('/', () => 'x');
    await assert.rejects(app.listen({ port, handleSignals: false, log: false }), { code: 'EADDRINUSE', message: /port is in use/ });
    await assert.rejects(app.listen({ port, workers: 2, handleSignals: false }), { code: 'EADDRINUSE' });
  } finally {
    await release();
  }
});

test('unknown options are refused, naming the nearest one', () => {
  const app = new App();
  const schema = { type: 'object', properties: { name: { type: 'string' } } };
  assert.throws(() => app.post('/a', { bodyy: schema }, () => 'x'), { name: 'TypeError', message: /unknown route option for POST \/a: bodyy \(did you mean body\?\)/ });
  assert.throws(() => app.get('/ws', { websocket: true }, () => 'x'), { name: 'TypeError', message: /unknown route option .*websocket/ });
  assert.throws(() => app.post('/b', { schema: { bdy: schema } }, () => 'x'), /unknown schema part .*bdy \(did you mean body\?\)/);
  assert.throws(() => new App({ bodyLimt: 5 }), /unknown App option bodyLimt \(did you mean bodyLimit\?\)/);
});

test('listen refuses a misspelled option', async () => {
  await assert.rejects(new App().listen({ prot: 8000 }), /unknown listen option prot \(did you mean port\?\)/);
});

test('routes: Fastify schemas validate, :id is {id}, a duplicate fails where it is declared', async () => {
  const app = new App();
  const item = { type: 'object', required: ['name'], properties: { name: { type: 'string' } } };
  app.post('/items', { schema: { body: item, querystring: { type: 'object', properties: { n: { type: 'integer' } } } } }, ({ body, query }) => ({ body, query }));
  app.get('/users/:id/posts/:post', ({ params }) => params);
  assert.throws(() => app.get('/users/{id}/posts/{post}', () => 'x'), { name: 'TypeError', message: /already declared as GET \/users\/:id\/posts\/:post/ });
  assert.throws(() => app.delete('/users/{name}/posts/{post}', () => 'x'), /matches the same paths as \/users\/:id\/posts\/:post/);
  // Fastify's trailing `*` is the rest of the path, `params['*']` (it was refused: api.test.js).
  assert.throws(() => app.get('/files/*/x', () => 'x'), /write `\{rest:path\}`/);
  await serving(app, async (port) => {
    assert.strictEqual((await request(port, 'POST', '/items', { json: {} })).status, 422);
    const ok = await request(port, 'POST', '/items?n=3', { json: { name: 'tea' } });
    assert.deepStrictEqual(ok.json(), { body: { name: 'tea' }, query: { n: 3 } });
    assert.deepStrictEqual((await request(port, 'GET', '/users/7/posts/hello')).json(), { id: '7', post: 'hello' });
  });
});

test('what cannot be sent is a 500 with a log line, never a 200', async () => {
  const app = new App();
  app.get('/status-wraps', () => { throw new HttpError(65736, 'wraps to 200 as a u16'); });
  app.get('/response-status', () => new Response('x', { status: 65736 }));
  app.get('/bad-header', () => { throw new HttpError(401, 'who?', { headers: { 'www-authenticate': 'a\nb' } }); });
  app.get('/function', () => () => 'x');
  app.get('/cookies', () => new Response('ok', { headers: { 'set-cookie': ['a=1; Path=/', 'b=2; Path=/'] } }));
  app.get('/teapot', () => { throw new HttpError(418, 'short and stout', { headers: { 'retry-after': '5' } }); });
  await serving(app, async (port) => {
    for (const url of ['/status-wraps', '/response-status', '/bad-header', '/function']) {
      const reply = await request(port, 'GET', url);
      assert.strictEqual(reply.status, 500, url);
      assert.ok(!reply.text().includes('_events') && !reply.text().includes('wraps'), url);
    }
    const cookies = await request(port, 'GET', '/cookies');
    assert.deepStrictEqual(cookies.headers['set-cookie'], ['a=1; Path=/', 'b=2; Path=/']);
    const teapot = await request(port, 'GET', '/teapot');
    assert.strictEqual(teapot.status, 418);
    assert.strictEqual(teapot.headers['retry-after'], '5');
    assert.strictEqual(teapot.json().detail, 'short and stout');
  });
});

// A Fastify hook reads `request.headers.authorization` without declaring it, and handlers log
// `request.url` and `request.hostname`: headers held only the declared ones, the rest undefined.
test('request.headers, cookies, url and hostname are Fastify\'s: everything sent', async () => {
  const app = new App({ logger: false });
  app.addHook('onRequest', async (request, reply) => {
    if (request.headers.authorization !== 'Bearer ok') reply.code(401).send({ error: 'who?' });
  });
  app.get('/who/:id', { schema: { headers: { type: 'object', properties: { 'x-count': { type: 'integer' } } } } }, (request) => ({
    agent: request.headers['user-agent'],
    count: request.headers['x-count'],
    declared: request.declaredHeaders,
    tags: request.headers['x-tag'],
    cookies: request.cookies,
    url: request.url,
    host: [request.host, request.hostname, request.protocol],
    id: request.id === request.requestId,
  }));
  await serving(app, async (port) => {
    const refused = await request(port, 'GET', '/who/1', { headers: { 'user-agent': 'probe/1' } });
    assert.strictEqual(refused.status, 401);
    const seen = await request(port, 'GET', '/who/7?a=1&b=%20', {
      headers: { authorization: 'Bearer ok', 'user-agent': 'probe/1', 'x-count': '5', 'x-tag': ['a', 'b'], cookie: 'session=abc; theme=dark; theme=light' },
    });
    assert.strictEqual(seen.status, 200, seen.text());
    assert.deepStrictEqual(seen.json(), {
      agent: 'probe/1',
      count: 5,
      declared: { 'x-count': 5 },
      tags: 'a, b',
      cookies: { session: 'abc', theme: 'dark' },
      url: '/who/7?a=1&b=%20',
      host: [`127.0.0.1:${port}`, '127.0.0.1', 'http'],
      id: true,
    });
  });
  // A header named __proto__ is an own property of request.headers, never its prototype.
  const sent = Object.defineProperty({ authorization: 'Bearer ok' }, '__proto__', { value: 'x', enumerable: true });
  app.get('/proto', (request) => ({ own: Object.hasOwn(request.headers, '__proto__'), value: request.headers.__proto__, object: Object.getPrototypeOf(request.headers) === Object.prototype }));
  const proto = await app.inject({ url: '/proto', headers: sent });
  assert.deepStrictEqual(proto.json(), { own: true, value: 'x', object: true }, proto.payload);
});

// A Fastify route without a schema reads `request.body` and `request.query`: they were
// undefined and {}, so `const { user } = request.body` was a 500.
test('without a schema, body and query are parsed as Fastify\'s default parsers parse them', async () => {
  const app = new App({ logger: false });
  app.post('/echo', async (request) => ({ body: request.body ?? null, query: request.query }));
  app.post('/declared', { body: { type: ['object', 'null'] } }, async (request) => ({ body: request.body ?? 'none' }));
  const cases = [
    [{ url: '/echo?limit=5&t=a&t=b', payload: { user: 'ada' } }, 200, { body: { user: 'ada' }, query: { limit: '5', t: ['a', 'b'] } }],
    [{ url: '/echo', payload: 'hi', headers: { 'content-type': 'text/plain' } }, 200, { body: 'hi', query: {} }],
    [{ url: '/echo', payload: 'a=1&a=2&b=x', headers: { 'content-type': 'application/x-www-form-urlencoded' } }, 200, { body: { a: ['1', '2'], b: 'x' }, query: {} }],
    [{ url: '/echo' }, 200, { body: null, query: {} }],
    [{ url: '/declared', payload: 'null', headers: { 'content-type': 'application/json' } }, 200, { body: 'none' }],
  ];
  for (const [request, status, json] of cases) {
    const response = await app.inject({ method: 'POST', ...request });
    assert.deepStrictEqual([response.statusCode, response.json()], [status, json], JSON.stringify(request));
  }
  await serving(app, async (port) => {
    const broken = await request(port, 'POST', '/echo', { body: Buffer.from('{"a":'), headers: { 'content-type': 'application/json' } });
    assert.strictEqual(broken.status, 400, broken.text());
    assert.match(broken.json().detail, /^The body is not valid JSON/);
    // As a declared body, one that could change a prototype is refused (Fastify's onProtoPoisoning).
    const poisoned = await request(port, 'POST', '/echo', { body: Buffer.from('{"__proto__": {"isAdmin": true}}'), headers: { 'content-type': 'application/json' } });
    assert.strictEqual(poisoned.status, 400, poisoned.text());
  });
});

// Fastify's prefixTrailingSlash ('both', its default) serves a plugin's '/' at '/notes' and
// '/notes/': the second was a 404.
test("a prefixed scope's '/' answers with and without the trailing slash", async () => {
  const app = new App({ logger: false });
  app.register(async (scope) => { scope.get('/', async () => ['note']); }, { prefix: '/notes' });
  for (const url of ['/notes', '/notes/']) {
    const response = await app.inject(url);
    assert.deepStrictEqual([response.statusCode, response.json()], [200, ['note']], url);
  }
  assert.deepStrictEqual(Object.keys(app.openapi().paths), ['/notes']);
  await app.close();
});

// @fastify/cors's options (`cors: true`, `{ origin: true, credentials: true }`) were refused at
// construction; the core's own shape is still taken as it is.
test("cors takes @fastify/cors's options and defaults", async () => {
  const app = new App({ logger: false, cors: { origin: true, credentials: true, maxAge: 600 } });
  app.post('/items', async (request) => request.body);
  const preflight = await app.inject({
    method: 'OPTIONS', url: '/items',
    headers: { origin: 'https://a.example', 'access-control-request-method': 'POST', 'access-control-request-headers': 'content-type,x-token' },
  });
  assert.deepStrictEqual(
    ['access-control-allow-origin', 'access-control-allow-headers', 'access-control-allow-credentials', 'access-control-max-age'].map((name) => preflight.headers[name]),
    ['https://a.example', 'content-type,x-token', 'true', '600'],
  );
  // @fastify/cors answers a preflight 204 (its optionsSuccessStatus); it was 200.
  assert.strictEqual(preflight.statusCode, 204);
  const legacy = new App({ logger: false, cors: { optionsSuccessStatus: 200 } });
  legacy.get('/', () => 'x');
  const answered = await legacy.inject({ method: 'OPTIONS', url: '/', headers: { origin: 'https://a.example', 'access-control-request-method': 'GET' } });
  assert.strictEqual(answered.statusCode, 200);
  assert.throws(() => new App({ cors: { optionsSuccessStatus: 404 } }), /preflight_status 404 is not a success status/);
  await legacy.close();
  const open = new App({ logger: false, cors: true });
  open.get('/', () => 'x');
  assert.strictEqual((await open.inject({ url: '/', headers: { origin: 'https://b.example' } })).headers['access-control-allow-origin'], '*');
  assert.throws(() => new App({ cors: { origin: () => true } }), /cors origin as a function is not offered/);
  // A misspelt option is named against @fastify/cors's names, the ones the README gives.
  assert.throws(() => new App({ cors: { orign: '*' } }), /unknown cors option orign \(did you mean origin\?\)/);
  assert.throws(() => new App({ cors: { allow_origin: ['*'] } }), /allow_origins/);
  await app.close();
  await open.close();
});

// `await app.register(require('@fastify/cors'), …)` is how Fastify apps turn CORS and
// compression on; with Ferrule's stand-ins the same lines set the core's settings.
test('register(cors) and register(compress) set what the Fastify plugins would, done by the core', async () => {
  const { cors, compress } = require('ferrule');
  const app = new App({ logger: false });
  app.get('/items', () => ({ items: Array(400).fill('pen') }));
  app.get('/small', () => ({ n: 1 }));
  app.register(cors, { origin: ['https://shop.example', /\.preview\.example$/], credentials: true });
  app.register(compress, { threshold: 100, encodings: ['gzip'], zlibOptions: { level: 1 } });
  const get = (url) => app.inject({ url, headers: { origin: 'https://pr-1.preview.example', 'accept-encoding': 'br, gzip' } });
  const items = await get('/items');
  assert.deepStrictEqual(
    [items.headers['access-control-allow-origin'], items.headers['access-control-allow-credentials'], items.headers['content-encoding']],
    ['https://pr-1.preview.example', 'true', 'gzip'],
  );
  assert.strictEqual((await get('/small')).headers['content-encoding'], undefined, 'below the threshold');
  assert.throws(() => app.register(cors, {}), /register\(cors\): cors is already set/);
  assert.throws(() => new App({ logger: false, compression: { min_size: 10 } }).register(compress), /compression is already set/);
  assert.throws(() => new App({ logger: false }).register(compress, { level: 9 }), /compress option/);
  assert.throws(() => new App({ logger: false }).register(compress, { global: false }), /global: false is not offered/);
  await app.close();
});

// @fastify/cors tests each RegExp among the origins against the request's: they were refused.
test("cors origins may be RegExps, tested as @fastify/cors tests them", async () => {
  const app = new App({ logger: false, cors: { origin: ['https://listed.test', /\.example\.com$/i] } });
  app.get('/', () => 'x');
  const allowed = async (origin) => (await app.inject({ url: '/', headers: { origin } })).headers['access-control-allow-origin'];
  assert.strictEqual(await allowed('https://App.Example.com'), 'https://App.Example.com');
  assert.strictEqual(await allowed('https://listed.test'), 'https://listed.test');
  assert.strictEqual(await allowed('https://app.example.com.evil.test'), undefined);
  assert.strictEqual(await allowed('https://other.test'), undefined);
  // Syntax the core's engine lacks is refused when the app is made, naming the expression.
  assert.throws(() => new App({ cors: { origin: /(?<=a)b/ } }), /allow_origin_regex .* is not a regular expression/);
  await app.close();
});
