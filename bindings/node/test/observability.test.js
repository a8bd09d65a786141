'use strict';
// Prometheus metrics (metricsUrl) and the caller's W3C trace (traceparent).
const { test } = require('node:test');
const assert = require('node:assert');
const { App } = require('ferrule');

const TRACEPARENT = '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01';

test('metrics count requests by route and show the interpreter queue', async () => {
  const app = new App({ metricsUrl: '/metrics' });
  app.get('/users/{id:int}', ({ params }) => params);
  await app.inject('/users/1');
  await app.inject('/users/x');
  const scraped = await app.inject('/metrics');
  assert.match(scraped.headers['content-type'], /^application\/openmetrics-text/);
  assert.ok(scraped.body.includes('ferrule_requests_total{route="/users/{id:int}",method="GET",status="200"} 1'), scraped.body);
  assert.ok(scraped.body.includes('ferrule_requests_total{route="/users/{id:int}",method="GET",status="422"} 1'), scraped.body);
  assert.ok(scraped.body.includes('ferrule_interpreter_queue_depth 0'), scraped.body);
});

test('hooks and the built-in layers add no call into JavaScript', async () => {
  const app = new App({ metricsUrl: '/metrics', cors: { allow_origins: ['*'] }, compression: { min_size: 10 }, requestId: true });
  const seen = [];
  app.addHook('preHandler', async (ctx) => { seen.push(ctx.path); });
  app.get('/users/{id:int}', ({ params }) => ({ id: params.id, padding: 'x'.repeat(100) }));
  for (const id of [0, 1, 2]) {
    const served = await app.inject({ url: `/users/${id}`, headers: { origin: 'https://a.example', 'accept-encoding': 'gzip' } });
    assert.strictEqual(served.headers['content-encoding'], 'gzip');
    assert.strictEqual(served.headers['access-control-allow-origin'], '*');
  }
  const preflight = await app.inject({ method: 'OPTIONS', url: '/users/1', headers: { origin: 'https://a.example', 'access-control-request-method': 'GET' } });
  assert.strictEqual(preflight.statusCode, 200);
  assert.strictEqual((await app.inject('/users/x')).statusCode, 422);
  const scraped = await app.inject('/metrics');
  assert.deepStrictEqual(seen, ['/users/0', '/users/1', '/users/2']);
  // One call per handled request, the preHandler hook within it; the preflight, the refusal and
  // the scrape were the core's alone.
  assert.ok(scraped.body.includes('ferrule_interpreter_calls_total 3\n'), scraped.body);
});

test("the caller's trace reaches the handler", async () => {
  const app = new App();
  app.get('/traced', (ctx) => ({ traceId: ctx.traceId ?? null, traceparent: ctx.traceparent ?? null }));
  assert.deepStrictEqual((await app.inject({ url: '/traced', headers: { traceparent: TRACEPARENT } })).json(),
    { traceId: '4bf92f3577b34da6a3ce929d0e0e4736', traceparent: TRACEPARENT });
  assert.deepStrictEqual((await app.inject({ url: '/traced', headers: { traceparent: 'garbage' } })).json(), { traceId: null, traceparent: null });
});
