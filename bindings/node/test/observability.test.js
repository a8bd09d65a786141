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

test("the caller's trace reaches the handler", async () => {
  const app = new App();
  app.get('/traced', (ctx) => ({ traceId: ctx.traceId ?? null, traceparent: ctx.traceparent ?? null }));
  assert.deepStrictEqual((await app.inject({ url: '/traced', headers: { traceparent: TRACEPARENT } })).json(),
    { traceId: '4bf92f3577b34da6a3ce929d0e0e4736', traceparent: TRACEPARENT });
  assert.deepStrictEqual((await app.inject({ url: '/traced', headers: { traceparent: 'garbage' } })).json(), { traceId: null, traceparent: null });
});
