'use strict';
// Streamed responses and Server-Sent Events with real clients (node:http, fetch): a Readable,
// an async generator and a Web ReadableStream stream chunk by chunk; a client that leaves
// closes the generator; a generator that throws is logged and the response cut off; sse()
// events are framed by the core.
const { test } = require('node:test');
const assert = require('node:assert');
const http = require('node:http');
const { Readable } = require('node:stream');
const { App, Response, sse } = require('ferrule');
const { serving, request } = require('./support');

/** Opens `path` and resolves with the response once its head is in (the body not read). */
function open(port, path, headers = {}) {
  return new Promise((resolve, reject) => {
    const req = http.get({ host: '127.0.0.1', port, path, headers, agent: false }, resolve);
    req.on('error', reject);
  });
}

/** The next `data` chunk of a response, as text. */
function nextChunk(res) {
  return new Promise((resolve) => res.once('data', (c) => resolve(c.toString())));
}

test('an async generator is sent chunk by chunk as it yields', async () => {
  const app = new App();
  let release;
  const gate = new Promise((r) => { release = r; });
  app.get('/count/{n:int}', async function* count({ params }) {
    yield 'first\n';
    await gate; // the client must have the first chunk before the rest is made
    for (let i = 0; i < params.n; i++) yield `${i}\n`;
  });
  await serving(app, async (port) => {
    const res = await open(port, '/count/3');
    assert.strictEqual(res.statusCode, 200);
    assert.strictEqual(res.headers['transfer-encoding'], 'chunked');
    assert.strictEqual(await nextChunk(res), 'first\n');
    release();
    let rest = '';
    for await (const chunk of res) rest += chunk;
    assert.strictEqual(rest, '0\n1\n2\n');
  });
});

test('a Readable, a Web ReadableStream and a Response around one stream', async () => {
  const app = new App();
  app.get('/readable', () => Readable.from(['a', Buffer.from('b'), new Uint8Array([99])]));
  app.get('/web', () => new ReadableStream({
    start(controller) { controller.enqueue(new TextEncoder().encode('web')); controller.close(); },
  }));
  app.get('/csv', () => new Response(Readable.from(['id\n', '1\n']), { status: 201, type: 'text/csv' }));
  await serving(app, async (port) => {
    const readable = await request(port, 'GET', '/readable');
    // A stream that names no type is bytes, as Fastify sends one (the corpus leaves the type
    // of an untyped stream to each language: Ruby's are text, as Sinatra's are).
    assert.deepStrictEqual([readable.text(), readable.headers['content-type']], ['abc', 'application/octet-stream']);
    assert.strictEqual((await request(port, 'GET', '/web')).text(), 'web');
    const csv = await request(port, 'GET', '/csv');
    assert.deepStrictEqual([csv.status, csv.headers['content-type'], csv.text()], [201, 'text/csv', 'id\n1\n']);
  });
});

test('a client that leaves closes the generator, which was held back while unread', async () => {
  const app = new App();
  let made = 0;
  let closed;
  const finished = new Promise((r) => { closed = r; });
  app.get('/endless', async function* endless() {
    try {
      for (;;) {
        made += 1;
        yield Buffer.alloc(65536, 120);
      }
    } finally {
      closed();
    }
  });
  await serving(app, async (port) => {
    const res = await open(port, '/endless');
    res.pause();
    await new Promise((r) => setTimeout(r, 300));
    assert.ok(made * 65536 < 64 * 1024 * 1024, `${made} chunks made for a client that read none`);
    res.destroy();
    await finished;
  });
});

test('a generator that throws is logged and the response cut off', async () => {
  const calls = [];
  const logger = {};
  for (const level of ['debug', 'info', 'warn', 'error']) logger[level] = (fields, message) => calls.push({ level, fields, message });
  const app = new App({ logger });
  app.get('/broken', async function* broken() {
    yield 'partial';
    throw new RangeError('secret-detail');
  });
  await serving(app, async (port) => {
    const res = await open(port, '/broken');
    let body = '';
    const ended = await new Promise((resolve) => {
      res.on('data', (c) => { body += c; });
      res.on('end', () => resolve('complete'));
      res.on('aborted', () => resolve('cut off'));
      res.on('error', () => resolve('cut off'));
    });
    assert.deepStrictEqual([ended, body], ['cut off', 'partial']);
  });
  const thrown = calls.find((c) => c.fields.err instanceof RangeError);
  assert.ok(thrown, JSON.stringify(calls.map((c) => c.message)));
  assert.strictEqual(thrown.message, 'GET /broken: the stream threw');
});

test('sse() events are framed by the core and resume from Last-Event-ID', async () => {
  const app = new App();
  app.get('/feed', (ctx) => {
    const start = Number(ctx.header('last-event-id') || 0) + 1;
    return sse((async function* events() {
      yield { data: { n: start }, event: 'tick', id: start, retry: 1500 };
      yield { data: 'two\nlines', id: start + 1 };
      yield 'plain';
    })());
  });
  await serving(app, async (port) => {
    const reply = await fetch(`http://127.0.0.1:${port}/feed`, { headers: { 'last-event-id': '41' } });
    assert.strictEqual(reply.headers.get('content-type'), 'text/event-stream');
    assert.strictEqual(reply.headers.get('cache-control'), 'no-cache');
    assert.strictEqual(await reply.text(),
      'event: tick\nid: 42\nretry: 1500\ndata: {"n":42}\n\n'
      + 'id: 43\ndata: two\ndata: lines\n\n'
      + 'data: plain\n\n');
  });
});

test('an event object with a key that is no event field ends the stream and is logged', async () => {
  // Before: { d: 1 } was sent as an empty event, its value lost without a word.
  const calls = [];
  const logger = {};
  for (const level of ['debug', 'info', 'warn', 'error']) logger[level] = (fields, message) => calls.push({ level, fields, message });
  const app = new App({ logger });
  app.get('/feed', () => sse((function* events() {
    yield { data: 'first' };
    yield { d: 1 };
    yield 'never sent';
  })()));
  await serving(app, async (port) => {
    assert.strictEqual(await (await fetch(`http://127.0.0.1:${port}/feed`)).text(), 'data: first\n\n');
  });
  const refused = calls.find((c) => c.fields.err instanceof TypeError);
  assert.ok(refused, JSON.stringify(calls.map((c) => c.message)));
  assert.match(refused.fields.err.message, /an event has no field "d"/);
});

test('a quiet event stream is kept alive and ends at close()', async () => {
  const app = new App({ sseKeepAlive: 50, shutdownTimeout: 20000 });
  app.get('/quiet', () => sse((async function* events() {
    yield 'hello';
    await new Promise(() => {}); // never another event
  })()));
  const { port } = await app.listen({ host: '127.0.0.1', port: 0, handleSignals: false, threads: 2 });
  const res = await open(port, '/quiet');
  let text = '';
  res.on('data', (c) => { text += c; });
  const ended = new Promise((resolve) => res.on('end', resolve));
  while (!text.includes(':\n\n')) await new Promise((r) => setTimeout(r, 10));
  assert.ok(text.startsWith('data: hello\n\n'), text);
  const started = Date.now();
  await app.close();
  await ended; // the stream ended with its last chunk: 'end', not 'aborted'
  assert.ok(Date.now() - started < 15000, 'the drain did not wait for its deadline');
});

// Found by a Fastify port: `reply.code(201)` before `return sse(…)` was ignored.
test("sse() without a status of its own answers with the reply's", async () => {
  const app = new App();
  app.get('/made', (ctx, reply) => {
    reply.code(201).header('x-kind', 'feed');
    return sse([{ data: 'one' }]);
  });
  app.get('/own', (ctx, reply) => {
    reply.code(201);
    return sse([{ data: 'one' }], { status: 202 });
  });
  const made = await app.inject('/made');
  assert.deepStrictEqual([made.statusCode, made.headers['x-kind'], made.body], [201, 'feed', 'data: one\n\n']);
  assert.strictEqual((await app.inject('/own')).statusCode, 202);
});

// Found by a Fastify port: a content-length set on a streamed reply was dropped and the body
// sent chunked, so a download showed no progress. It is sent, and the stream held to it.
test('a stream sent with a content-length keeps it, and one that falls short is cut off', async () => {
  const app = new App();
  app.get('/file', (ctx, reply) => {
    reply.header('content-length', 4).type('application/octet-stream');
    return Readable.from([Buffer.from('ab'), Buffer.from('cd')]);
  });
  app.get('/short', (ctx, reply) => {
    reply.header('content-length', 10);
    return Readable.from([Buffer.from('abcd')]);
  });
  const fetched = (port, path) => new Promise((resolve) => {
    http.get({ host: '127.0.0.1', port, path }, (res) => {
      let body = '';
      res.on('data', (chunk) => { body += chunk; });
      res.on('end', () => resolve({ complete: res.complete, headers: res.headers, body }));
      res.on('error', () => resolve({ complete: false, headers: res.headers, body }));
    });
  });
  await serving(app, async (port) => {
    const file = await fetched(port, '/file');
    assert.deepStrictEqual([file.complete, file.headers['content-length'], file.headers['transfer-encoding'], file.body], [true, '4', undefined, 'abcd']);
    const short = await fetched(port, '/short');
    assert.deepStrictEqual([short.complete, short.headers['content-length']], [false, '10']);
  });
  assert.strictEqual((await app.inject('/file')).headers['content-length'], '4');
});

// Found on review: a fetched response's content-length is the compressed size, and fetch()
// hands its body over decoded: held to that length, a gzipped upstream's answer was cut off.
test('a fetched gzip response is passed on whole, without the length fetch() decoded away', async () => {
  const zlib = require('node:zlib');
  const text = 'all of it '.repeat(500);
  const gzipped = zlib.gzipSync(Buffer.from(text));
  const upstream = http.createServer((req, res) => {
    res.writeHead(200, { 'content-type': 'text/plain', 'content-encoding': 'gzip', 'content-length': gzipped.length });
    res.end(gzipped);
  });
  await new Promise((resolve) => upstream.listen(0, '127.0.0.1', resolve));
  const app = new App();
  app.get('/proxied', async () => fetch(`http://127.0.0.1:${upstream.address().port}/`));
  try {
    await serving(app, async (port) => {
      const answer = await request(port, 'GET', '/proxied');
      assert.strictEqual(answer.status, 200);
      assert.strictEqual(answer.text(), text);
    });
  } finally {
    upstream.close();
  }
});

// Found on review: `ctx.signal` read in a stream's producer, after the answer, watched the id
// the addon had since given to another request.
test("ctx.signal read in a stream's producer aborts when that stream's client leaves", async () => {
  const net = require('node:net');
  const app = new App();
  let reason = null;
  let started;
  const producing = new Promise((resolve) => (started = resolve));
  app.get('/feed', (ctx) => sse((async function* feed() {
    yield { data: 'first' };
    const signal = ctx.signal; // read after the answer went out
    started();
    await new Promise((resolve) => signal.addEventListener('abort', () => { reason = signal.reason; resolve(); }));
  })()));
  app.get('/other', (ctx) => new Promise((resolve) => setTimeout(() => resolve({ aborted: ctx.signal.aborted }), 50)));
  await serving(app, async (port) => {
    const client = net.connect(port, '127.0.0.1');
    client.on('error', () => {});
    client.write('GET /feed HTTP/1.1\r\nhost: x\r\n\r\n');
    await producing;
    // Another request takes the freed id meanwhile; its signal stays its own.
    const other = await request(port, 'GET', '/other');
    assert.deepStrictEqual(JSON.parse(other.body), { aborted: false });
    assert.strictEqual(reason, null, 'the stream\'s signal aborted while its client was still there');
    client.destroy();
    for (let waited = 0; reason === null && waited < 3000; waited += 10) await new Promise((resolve) => setTimeout(resolve, 10));
    assert.ok(reason !== null && reason.name === 'AbortError', `${reason}`);
  });
});

// Found by a Fastify port: a stream that failed before its first chunk was a 200 cut off;
// Fastify sends the head with the first chunk, so such a failure is the handler's, a 500.
test('a byte stream that fails before its first chunk is a 500; one that fails later is cut off', async () => {
  const app = new App();
  app.get('/early', () => (async function* early() {
    throw new Error('the upstream refused');
  })());
  app.get('/late', () => (async function* late() {
    yield 'partial';
    throw new Error('the upstream broke');
  })());
  app.get('/fine', () => Readable.from(['a', 'b']));
  // A first chunk that cannot be sent is such a failure too (found by a README probe).
  let closed = false;
  app.get('/object', () => (async function* objects() {
    try {
      yield { a: 1 };
    } finally {
      closed = true;
    }
  })());
  const object = await app.inject('/object');
  assert.deepStrictEqual([object.statusCode, object.headers['content-type'], closed], [500, 'application/problem+json', true]);
  const early = await app.inject('/early');
  assert.deepStrictEqual([early.statusCode, early.headers['content-type']], [500, 'application/problem+json']);
  assert.ok(!early.body.includes('upstream'), early.body);
  const late = await app.inject('/late');
  assert.deepStrictEqual([late.statusCode, late.body, late.cutOff], [200, 'partial', true]);
  const fine = await app.inject('/fine');
  assert.deepStrictEqual([fine.statusCode, fine.body], [200, 'ab']);
});

// Named in the last note: such a failure skipped setErrorHandler, which Fastify runs for a
// stream's error (its reply's onErrorHook), so an app's own error shape (and reporting) was lost.
test('a byte stream that fails before its first chunk goes through the error handler and onError', async () => {
  const app = new App({ logger: false });
  const seen = [];
  app.addHook('onError', (ctx, reply, error, done) => { seen.push(`onError ${error.message}`); done(); });
  app.setErrorHandler((error, ctx, reply) => {
    seen.push(`handler ${error.message}`);
    reply.code(502).send({ failed: error.message });
  });
  app.get('/early', () => (async function* early() {
    throw new Error('the upstream refused');
  })());
  app.get('/late', () => (async function* late() {
    yield 'partial';
    throw new Error('the upstream broke');
  })());
  app.register(async (scope) => {
    scope.setErrorHandler((error, ctx, reply) => reply.code(503).send(`scope: ${error.message}`));
    scope.get('/scoped', (ctx, reply) => reply.send(Readable.from((function* failing() { throw new Error('no rows'); })())));
  });
  const early = await app.inject('/early');
  assert.deepStrictEqual([early.statusCode, JSON.parse(early.body)], [502, { failed: 'the upstream refused' }]);
  assert.deepStrictEqual(seen, ['onError the upstream refused', 'handler the upstream refused']);
  const scoped = await app.inject('/scoped');
  assert.deepStrictEqual([scoped.statusCode, scoped.body], [503, 'scope: no rows']);
  // Once its first chunk has gone, the head has too: it is cut off, as before.
  const late = await app.inject('/late');
  assert.deepStrictEqual([late.statusCode, late.body, late.cutOff], [200, 'partial', true]);
  // One that fails after its deadline's 504 reaches no error handler: it has its answer.
  app.get('/overdue', { timeout: 100 }, () => (async function* overdue() {
    await new Promise((resolve) => setTimeout(resolve, 300));
    throw new Error('too late');
  })());
  await serving(app, async (port) => {
    const reply = await request(port, 'GET', '/early');
    assert.deepStrictEqual([reply.status, JSON.parse(reply.body)], [502, { failed: 'the upstream refused' }]);
    seen.length = 0;
    assert.strictEqual((await request(port, 'GET', '/overdue')).status, 504);
    await new Promise((resolve) => setTimeout(resolve, 400));
    assert.deepStrictEqual(seen, []);
  });
});

// sse()'s own keep-alive period, in place of the app's (sse_starlette's ping=, in Node's words).
test("sse(source, { keepAlive }) sends its keep-alive comment on its own period", async () => {
  const app = new App({ sseKeepAlive: 3_600_000 });
  app.get('/events', () => sse((async function* quiet() {
    yield { data: 'hello' };
    await new Promise((resolve) => setTimeout(resolve, 3000).unref());
  })(), { keepAlive: 50 }));
  assert.throws(() => sse([], { keepAlive: -1 }), /keepAlive is milliseconds/);
  await serving(app, async (port) => {
    const seen = await new Promise((resolve, reject) => {
      const req = http.get({ host: '127.0.0.1', port, path: '/events' }, (res) => {
        let text = '';
        res.on('data', (chunk) => {
          text += chunk;
          if (text.includes(':\n\n')) {
            req.destroy();
            resolve(text);
          }
        });
      });
      req.on('error', () => {});
      setTimeout(() => reject(new Error('no keep-alive comment within 5 s')), 5000).unref();
    });
    assert.ok(seen.startsWith('data: hello\n\n'), seen);
  });
});
