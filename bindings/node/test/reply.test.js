'use strict';
// What a Fastify user writes first, found by a README-driven probe: a `(request, reply)`
// handler, `listen(…, callback)`, a `null` answer with a hook in the chain, `Response.json()`
// under a response schema, and `ws`'s `send(text, { binary: true })`.
const { test } = require('node:test');
const assert = require('node:assert');
const { once } = require('node:events');
const WebSocketClient = require('ws');
const { App, Response } = require('ferrule');
const { serving, request } = require('./support');

test("a handler that takes a reply answers through it, as Fastify's does", async () => {
  const app = new App();
  app.post('/items', { body: { type: 'object' } }, (ctx, reply) => reply.code(201).header('x-made', 'yes').send(ctx.body));
  app.get('/async', async (ctx, reply) => {
    reply.status(202).type('text/plain');
    return 'accepted';
  });
  app.get('/sent-later', async (ctx, reply) => {
    await new Promise((resolve) => setTimeout(resolve, 5));
    reply.send({ late: true });
  });
  app.get('/empty', (ctx, reply) => reply.code(204));
  app.get('/old', (ctx, reply) => reply.redirect('/new'));
  app.get('/moved', (ctx, reply) => reply.redirect('/new', 301));
  app.get('/v4', (ctx, reply) => reply.redirect(308, '/new'));
  app.get('/throws', (ctx, reply) => {
    reply.header('x-lost', 'yes');
    throw Object.assign(new Error('gone'), { statusCode: 410 });
  });
  app.get('/plain', (ctx) => ({ one: ctx.path }));
  // Fastify's callback style: nothing returned, sent later (before, an empty 200 at once, then
  // the late send() threw from the timer and ended the process).
  app.get('/callback', (ctx, reply) => { setTimeout(() => reply.code(201).send({ later: true }), 20); });

  const made = await app.inject({ method: 'POST', url: '/items', payload: { name: 'pen' } });
  assert.deepStrictEqual([made.statusCode, made.headers['x-made'], made.json()], [201, 'yes', { name: 'pen' }]);
  const accepted = await app.inject('/async');
  assert.deepStrictEqual([accepted.statusCode, accepted.headers['content-type'], accepted.body], [202, 'text/plain', 'accepted']);
  assert.deepStrictEqual((await app.inject('/sent-later')).json(), { late: true });
  const empty = await app.inject('/empty');
  assert.deepStrictEqual([empty.statusCode, empty.body], [204, '']);
  for (const [url, status] of [['/old', 302], ['/moved', 301], ['/v4', 308]]) {
    const moved = await app.inject(url);
    assert.deepStrictEqual([moved.statusCode, moved.headers.location], [status, '/new'], url);
  }
  const gone = await app.inject('/throws');
  assert.strictEqual(gone.statusCode, 410);
  assert.strictEqual(gone.json().detail, 'gone');
  assert.deepStrictEqual((await app.inject('/plain')).json(), { one: '/plain' });
  const later = await app.inject('/callback');
  assert.deepStrictEqual([later.statusCode, later.json()], [201, { later: true }]);
  // Over a socket too.
  await serving(app, async (port) => {
    const reply = await request(port, 'POST', '/items', { json: { name: 'cup' } });
    assert.deepStrictEqual([reply.status, reply.headers['x-made'], reply.json()], [201, 'yes', { name: 'cup' }]);
  });
});

test('JSON is labelled application/json; charset=utf-8, as Fastify 5 labels it on the same routes', async () => {
  // Fastify 5's answers to these routes, checked beside it (Node's JSON carried no charset, so
  // a test comparing the whole header, as Fastify's own tests do, failed).
  const app = new App();
  app.get('/object', async () => ({ a: 1 }));
  app.get('/typed', (ctx, reply) => { reply.type('application/json').send('{"a":1}'); });
  app.get('/header', (ctx, reply) => { reply.header('content-type', 'application/json').send({ a: 1 }); });
  app.get('/schema', { schema: { response: { 200: { type: 'object', properties: { a: { type: 'integer' } } } } } }, async () => ({ a: 1, b: 2 }));
  app.get('/created', async (ctx, reply) => { reply.code(201); return { a: 1 }; });
  app.get('/fetch-json', () => Response.json([1]));
  app.get('/latin1', (ctx, reply) => { reply.type('application/json; charset=latin1').send('{}'); });
  app.get('/problem', (ctx, reply) => { reply.type('application/problem+json').send('{}'); });
  app.get('/text', () => 'text');
  const expected = {
    '/object': [200, 'application/json; charset=utf-8', '{"a":1}'],
    '/typed': [200, 'application/json; charset=utf-8', '{"a":1}'],
    '/header': [200, 'application/json; charset=utf-8', '{"a":1}'],
    '/schema': [200, 'application/json; charset=utf-8', '{"a":1}'],
    '/created': [201, 'application/json; charset=utf-8', '{"a":1}'],
    '/fetch-json': [200, 'application/json; charset=utf-8', '[1]'],
    '/latin1': [200, 'application/json; charset=latin1', '{}'],
    '/problem': [200, 'application/problem+json', '{}'],
    '/text': [200, 'text/plain; charset=utf-8', 'text'],
  };
  await serving(app, async (port) => {
    for (const [path, want] of Object.entries(expected)) {
      const reply = await request(port, 'GET', path);
      assert.deepStrictEqual([reply.status, reply.headers['content-type'], reply.text()], want, path);
    }
  });
});

test('null is JSON null whether or not a hook set a header', async () => {
  const app = new App();
  app.get('/none', () => null);
  app.register((scope) => {
    scope.addHook('onSend', async (ctx, reply) => { reply.header('x-served-by', 'ferrule'); });
    scope.get('/none', () => null);
  }, { prefix: '/hooked' });
  for (const url of ['/none', '/hooked/none']) {
    const reply = await app.inject(url);
    assert.deepStrictEqual([reply.statusCode, reply.headers['content-type'], reply.body], [200, 'application/json; charset=utf-8', 'null'], url);
  }
});

test("a Response.json() the handler made is filtered by the response schema; a fetched one is passed through", async () => {
  const app = new App();
  const user = { type: 'object', properties: { id: { type: 'integer' }, name: { type: 'string' } } };
  const record = { id: 1, name: 'ada', password: 'hunter2' };
  app.get('/made', { response: { 200: user } }, () => Response.json(record));
  app.get('/made-hooked', { response: { 200: user } }, (ctx, reply) => { reply.header('x-a', '1'); return Response.json(record); });
  app.get('/record', () => record);
  app.get('/proxied', { response: { 200: user } }, async () => fetch(`http://127.0.0.1:${app.port}/record`));
  await serving(app, async (port) => {
    assert.deepStrictEqual((await request(port, 'GET', '/made')).json(), { id: 1, name: 'ada' });
    const hooked = await request(port, 'GET', '/made-hooked');
    assert.deepStrictEqual([hooked.headers['x-a'], hooked.json()], ['1', { id: 1, name: 'ada' }]);
    // As the README says: a fetch() passed through streams as it is, unfiltered.
    assert.deepStrictEqual((await request(port, 'GET', '/proxied')).json(), record);
  });
});

// A callback never called fails the test instead of hanging it.
function calledBack(start) {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error('not called back within 10 s')), 10000);
    start((...args) => { clearTimeout(timer); resolve(args); });
  });
}

test("listen() calls back as Fastify's (error, address) and Express's () do", async () => {
  const app = new App();
  app.get('/', () => 'up');
  const [failure, address] = await calledBack((done) => {
    app.listen({ host: '127.0.0.1', port: 0, handleSignals: false, log: false }, done).catch(() => {});
  });
  assert.strictEqual(failure, null);
  try {
    assert.match(address, /^http:\/\/127\.0\.0\.1:\d+$/);
    assert.strictEqual(address, `http://127.0.0.1:${app.port}`);
    assert.strictEqual((await fetch(address)).status, 200);
    // The second listen fails (one server per app): its callback gets the error.
    const [error] = await calledBack((done) => { app.listen({ host: '127.0.0.1', port: 0, log: false }, done).catch(() => {}); });
    assert.ok(error instanceof Error, String(error));
  } finally {
    await app.close();
  }
  const express = new App();
  await calledBack((done) => { express.listen(0, '127.0.0.1', done).catch(() => {}); });
  try {
    assert.ok(express.port > 0);
  } finally {
    await express.close();
  }
});

test("a socket's send(text, { binary: true }) is a binary frame, as ws's", async () => {
  const app = new App();
  app.ws('/echo', (socket) => {
    socket.on('message', (data) => {
      socket.send(String(data), { binary: true });
      socket.send(String(data));
    });
  });
  await serving(app, async (port) => {
    const client = new WebSocketClient(`ws://127.0.0.1:${port}/echo`);
    await once(client, 'open');
    const frames = [];
    const both = new Promise((resolve) => client.on('message', (data, isBinary) => {
      frames.push([data.toString(), isBinary]);
      if (frames.length === 2) resolve();
    }));
    client.send('hi');
    await both;
    assert.deepStrictEqual(frames, [['hi', true], ['hi', false]]);
    client.close();
    await once(client, 'close');
  });
});

// Found by a second probe: a second `set-cookie` replaced the first, a second `send()` (a
// missing `return`) turned a right answer into a 500, `reply.send(error)` went out as `{}`
// with 200, and `reply.statusCode = 201` was ignored.
test("reply's cookies add up, the first send stands, an Error sent is a failure, statusCode is settable", async () => {
  const app = new App({ logger: false });
  const warnings = [];
  const onWarning = (warning) => { if (warning.code === 'FERRULE_REPLY_ALREADY_SENT') warnings.push(warning.message); };
  process.on('warning', onWarning);
  app.get('/login', (ctx, reply) => {
    reply.header('set-cookie', 'session=abc; Path=/');
    reply.header('set-cookie', 'csrf=xyz; Path=/');
    reply.send({ ok: true });
  });
  app.get('/twice', (ctx, reply) => {
    if (!ctx.headers['x-ok']) reply.code(400).send({ error: 'missing x-ok' });
    reply.send({ ok: true });
  });
  app.get('/error', async (ctx, reply) => reply.send(Object.assign(new Error('gone'), { statusCode: 410 })));
  app.get('/plain-error', (ctx, reply) => { reply.send(new Error('secret detail')); });
  app.get('/created', async (ctx, reply) => {
    reply.statusCode = 201;
    return { created: true };
  });
  try {
    const login = await app.inject('/login');
    assert.deepStrictEqual(login.headers['set-cookie'], ['session=abc; Path=/', 'csrf=xyz; Path=/']);
    const twice = await app.inject('/twice');
    assert.deepStrictEqual([twice.statusCode, twice.json()], [400, { error: 'missing x-ok' }]);
    const gone = await app.inject('/error');
    assert.deepStrictEqual([gone.statusCode, gone.headers['content-type'], gone.json().detail], [410, 'application/problem+json', 'gone']);
    const plain = await app.inject('/plain-error');
    assert.strictEqual(plain.statusCode, 500);
    assert.ok(!plain.payload.includes('secret detail'), plain.payload);
    const created = await app.inject('/created');
    assert.deepStrictEqual([created.statusCode, created.json()], [201, { created: true }]);
    await new Promise((resolve) => setImmediate(resolve));
    assert.strictEqual(warnings.length, 1, warnings.join('\n'));
  } finally {
    process.off('warning', onWarning);
    await app.close();
  }
});

// Found by a Fastify port: `reply.send(); await work()` answered only when the work ended, and
// a throw after the send turned the answer into a 500; `reply.code(404); throw …` was a 500.
test("reply.send() answers at once; a failure after it is logged; a reply's error status stands", async () => {
  const app = new App();
  let finished = null;
  app.get('/queued', async (ctx, reply) => {
    reply.send({ queued: true });
    await new Promise((resolve) => setTimeout(resolve, 2000));
    finished = Date.now();
    throw new Error('the work failed after the answer');
  });
  app.get('/later', async (ctx, reply) => {
    await new Promise((resolve) => setTimeout(resolve, 5));
    reply.code(202).send({ accepted: true });
    await new Promise((resolve) => setTimeout(resolve, 600));
  });
  app.addHook('preHandler', async (ctx, reply) => {
    if (ctx.path === '/guarded') {
      reply.code(403).send({ denied: true });
      throw new Error('thrown after the refusal');
    }
  });
  app.get('/guarded', () => 'never reached');
  app.get('/coded', async (ctx, reply) => {
    reply.code(404);
    throw new Error('no such thing');
  });
  app.get('/sent-error', (ctx, reply) => reply.code(409).send(new Error('taken')));
  app.get('/plain-object', async () => { throw { statusCode: 400, message: 'bad input' }; });
  app.get('/success-code', async (ctx, reply) => {
    reply.code(201);
    throw new Error('secret detail');
  });
  const started = Date.now();
  const queued = await app.inject('/queued');
  assert.deepStrictEqual([queued.statusCode, queued.json()], [200, { queued: true }]);
  assert.ok(Date.now() - started < 1500, `answered after ${Date.now() - started} ms, on the handler's end`);
  assert.strictEqual(finished, null, 'the handler was still working when the answer came');
  const later = await app.inject('/later');
  assert.deepStrictEqual([later.statusCode, later.json()], [202, { accepted: true }]);
  const guarded = await app.inject('/guarded');
  assert.deepStrictEqual([guarded.statusCode, guarded.json()], [403, { denied: true }]);
  const expected = [['/coded', 404, 'no such thing'], ['/sent-error', 409, 'taken']];
  for (const [url, status, detail] of expected) {
    const answer = await app.inject(url);
    assert.deepStrictEqual([answer.statusCode, answer.json().detail], [status, detail], url);
  }
  // A thrown object that is no Error is the body, as Fastify 5 sends it.
  const plain = await app.inject('/plain-object');
  assert.deepStrictEqual([plain.statusCode, plain.json()], [400, { statusCode: 400, message: 'bad input' }]);
  // A success status set before a throw is no error status: a bare 500, its message kept back.
  const failed = await app.inject('/success-code');
  assert.deepStrictEqual([failed.statusCode, failed.body.includes('secret')], [500, false]);
  for (let waited = 0; finished === null && waited < 5000; waited += 50) await new Promise((resolve) => setTimeout(resolve, 50));
  assert.ok(finished !== null);
});

// Found by a Fastify port: `this.db` after `decorate('db', …)` was a TypeError, `this` being
// the addon's handler table.
test("a function handler, hook or error handler has its app or scope as this, as in Fastify", async () => {
  const app = new App();
  app.decorate('db', { query: () => 'rows' });
  const seen = {};
  app.addHook('onRequest', async function (ctx) { seen.hook = this.db.query(); });
  app.get('/rows', async function () { return { rows: this.db.query() }; });
  app.register(async function (scope) {
    scope.decorate('cache', 'scoped');
    scope.setErrorHandler(function (error, ctx, reply) { reply.code(418).send({ from: this.cache, db: this.db.query() }); });
    scope.get('/inner', function () { return { cache: this.cache }; });
    scope.get('/fails', async function () { throw new Error('boom'); });
  }, { prefix: '/s' });
  assert.deepStrictEqual((await app.inject('/rows')).json(), { rows: 'rows' });
  assert.strictEqual(seen.hook, 'rows');
  assert.deepStrictEqual((await app.inject('/s/inner')).json(), { cache: 'scoped' });
  const failed = await app.inject('/s/fails');
  assert.deepStrictEqual([failed.statusCode, failed.json()], [418, { from: 'scoped', db: 'rows' }]);
});

// Found by a Fastify port: a route declared after listen() was served by inject() and not by
// the socket, so its tests passed while production answered 404.
test('a route or hook declared while the app listens is refused, and accepted again once it closed', async () => {
  const app = new App();
  app.get('/early', () => 'early');
  await serving(app, async () => {
    assert.throws(() => app.get('/late', () => 'late'), /GET \/late is declared after listen\(\)/);
    assert.throws(() => app.addHook('onRequest', async () => {}), /hook is declared after listen\(\)/);
    assert.throws(() => app.setErrorHandler(() => {}), /an error handler is declared after listen\(\)/);
    assert.throws(() => app.register(async (scope) => scope.get('/in', () => 'x')), /a plugin is declared after listen\(\)/);
  });
  app.get('/late', () => 'late');
  assert.strictEqual((await app.inject('/late')).body, 'late');
});

// Found by a Fastify port: reply.callNotFound() was a TypeError (a 500).
test("reply.callNotFound() answers as a request no route took, the scope's not-found handler first", async () => {
  const app = new App();
  app.get('/plain', (ctx, reply) => reply.callNotFound());
  app.addHook('onSend', async (ctx, reply, payload) => {
    reply.header('x-sent-through', 'onSend');
    return payload;
  });
  app.register(async (scope) => {
    scope.setNotFoundHandler((ctx, reply) => reply.code(404).send({ missing: ctx.path }));
    scope.get('/item', async (ctx, reply) => { reply.callNotFound(); });
  }, { prefix: '/scope' });
  const plain = await app.inject('/plain');
  assert.deepStrictEqual([plain.statusCode, plain.headers['content-type'], plain.json().detail], [404, 'application/problem+json', 'No route matches this path.']);
  assert.strictEqual(plain.headers['x-sent-through'], 'onSend');
  const scoped = await app.inject('/scope/item');
  assert.deepStrictEqual([scoped.statusCode, scoped.json()], [404, { missing: '/scope/item' }]);
});

// Found on review: a refused request's reply starts at the refusal's status, which an error
// took as one the app had set: a hook's crash on a 404 was a 404 showing the crash's message.
test("a hook that crashes on a refused request is a bare 500, not the refusal's status", async () => {
  const app = new App();
  app.addHook('onRequest', async (ctx) => {
    if (ctx.path.startsWith('/nowhere')) throw new TypeError('secret internal detail');
  });
  app.get('/here', () => 'here');
  const answer = await app.inject('/nowhere');
  assert.strictEqual(answer.statusCode, 500);
  assert.ok(!answer.body.includes('secret internal detail'), answer.body);
});

// Found by a Fastify port: `listening at ${await app.listen()}` printed [object Object];
// Fastify's listen() resolves to the URL.
test("listen() resolves to { host, port }, which reads as its URL where a string is wanted", async () => {
  const app = new App();
  app.get('/', () => 'ok');
  const address = await app.listen({ host: '127.0.0.1', port: 0, handleSignals: false, log: false });
  try {
    assert.strictEqual(`${address}`, `http://127.0.0.1:${address.port}`);
    assert.strictEqual(address.url, `http://127.0.0.1:${address.port}`);
    assert.deepStrictEqual({ ...address }, { host: '127.0.0.1', port: address.port });
  } finally {
    await app.close();
  }
});

// Found by a README probe: `reply.header('x-u', undefined)` sent the text `undefined`.
test("a header given no value is empty, as Fastify's default makes it", async () => {
  const app = new App();
  app.get('/blank', (ctx, reply) => reply.header('x-blank').header('x-undefined', undefined).send('ok'));
  const reply = await app.inject('/blank');
  assert.deepStrictEqual([reply.statusCode, reply.headers['x-blank'], reply.headers['x-undefined']], [200, '', '']);
});
