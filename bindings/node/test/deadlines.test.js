'use strict';
// Handler deadlines free the JavaScript thread: requests given up while they waited behind a
// blocking handler are never started, a deadline is a 504, and a full queue is a 503 at once.
const { test } = require('node:test');
const assert = require('node:assert');
const { App } = require('ferrule');
const { serving, request } = require('./support');

function block(ms) {
  const until = Date.now() + ms;
  while (Date.now() < until) { /* a synchronous handler that holds the thread */ }
}

test('overruns of a blocking handler cost one run, not one each', async () => {
  const app = new App({ timeout: 200 });
  let runs = 0;
  app.get('/block', () => { runs += 1; block(600); return { done: true }; });
  app.get('/health', () => 'ok');
  await serving(app, async (port) => {
    const statuses = await Promise.all(Array.from({ length: 4 }, () => request(port, 'GET', '/block').then((r) => r.status)));
    const started = Date.now();
    assert.strictEqual((await request(port, 'GET', '/health')).status, 200);
    const waited = Date.now() - started;
    assert.deepStrictEqual(statuses, [504, 504, 504, 504]);
    // Before: every abandoned call still ran, one after another (4 × 0.6 s).
    assert.strictEqual(runs, 1, `${runs} handler runs for requests nobody waited for`);
    // One run leaves /health about 0.4 s to wait; the abandoned runs would add 0.6 s each.
    assert.ok(waited < 1500, `/health waited ${waited} ms behind abandoned handlers`);
  });
});

test('beyond the queue limit a request gets 503 at once', async () => {
  const app = new App({ maxQueuedRequests: 1 });
  let release;
  app.get('/wait', () => new Promise((resolve) => { release = resolve; }));
  await serving(app, async (port) => {
    const holder = request(port, 'GET', '/wait');
    // Once the holder's request is in its handler, the next one is beyond the queue.
    for (let waited = 0; release === undefined && waited < 10000; waited += 10) {
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
    assert.ok(release !== undefined, 'the first request never reached its handler');
    const refused = await request(port, 'GET', '/wait');
    release('released');
    assert.strictEqual(refused.status, 503);
    assert.strictEqual(refused.headers['retry-after'], '1');
    assert.strictEqual((await holder).status, 200);
  });
});

test('an unknown option is refused with the valid ones named', () => {
  assert.throws(() => new App({ keepAliveTimeot: 5 }), /unknown App option keepAliveTimeot/);
  assert.doesNotThrow(() => new App({ keepAliveTimeout: 5000, headerReadTimeout: 1000, sendTimeout: 1000, maxConnections: 100 }));
});

test('ctx.signal aborts an async handler at its deadline, and never without one', async () => {
  const app = new App({ timeout: 300 });
  let abortedAt = null;
  app.get('/slow', (ctx) => new Promise((resolve, reject) => {
    const work = setTimeout(() => resolve('late'), 5000);
    ctx.signal.addEventListener('abort', () => {
      abortedAt = Date.now();
      reason = ctx.signal.reason;
      clearTimeout(work);
      reject(ctx.signal.reason);
    });
  }));
  let reason = null;
  app.get('/open', { timeout: 0 }, (ctx) => ({ aborted: ctx.signal.aborted }));
  await serving(app, async (port) => {
    // The deadline runs from the request's arrival, so it is measured from before it is sent:
    // from the handler's start, a handler started late would see an early abort.
    const sent = Date.now();
    assert.strictEqual((await request(port, 'GET', '/slow')).status, 504);
    // The abort reaches JavaScript on a turn of its own, not necessarily before the 504 does:
    // wait for it, well inside the 5 s after which the handler's own timer would have ended it.
    for (let waited = 0; abortedAt === null && waited < 3000; waited += 10) {
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
    assert.ok(abortedAt !== null, 'the signal never aborted: the timer would have run 5 s');
    const abortedAfter = abortedAt - sent;
    assert.ok(abortedAfter >= 290 && abortedAfter < 2000, `aborted ${abortedAfter} ms after the request was sent, the deadline is 300 ms`);
    // The core's 504 also lets go of the request, which reads as a departure: still the timeout.
    assert.strictEqual(reason.name, 'TimeoutError');
    const open = await request(port, 'GET', '/open');
    assert.strictEqual(open.status, 200);
    assert.deepStrictEqual(JSON.parse(open.body), { aborted: false });
  });
});

// Found by a Fastify port: a handler waiting on a slow upstream went on after its client hung
// up, as `ctx.signal` aborted only at a deadline.
test('ctx.signal aborts when the client closes the connection before the answer', async () => {
  const net = require('node:net');
  const app = new App();
  let seen = null;
  let started;
  const inHandler = new Promise((resolve) => (started = resolve));
  app.get('/wait', (ctx) => new Promise((resolve, reject) => {
    const work = setTimeout(() => resolve('late'), 5000);
    ctx.signal.addEventListener('abort', () => {
      seen = ctx.signal.reason;
      clearTimeout(work);
      reject(ctx.signal.reason);
    });
    started();
  }));
  app.get('/after', (ctx) => ({ aborted: ctx.signal.aborted }));
  await serving(app, async (port) => {
    const client = net.connect(port, '127.0.0.1');
    client.on('error', () => {});
    client.write('GET /wait HTTP/1.1\r\nhost: x\r\n\r\n');
    await inHandler;
    client.destroy();
    for (let waited = 0; seen === null && waited < 3000; waited += 10) {
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
    assert.ok(seen !== null, 'the signal did not abort within 3 s of the client leaving');
    assert.strictEqual(seen.name, 'AbortError');
    // The server goes on; a request that stays gets its answer with its signal untouched.
    const after = await request(port, 'GET', '/after');
    assert.deepStrictEqual(JSON.parse(after.body), { aborted: false });
  });
});
