'use strict';
// How the server's runtime wakes the JavaScript thread (src/raw/doorbell.rs): requests that
// arrive while JavaScript is busy are dispatched once it is free, a listening server keeps the
// program alive, and a closed one lets it end.
const { test } = require('node:test');
const assert = require('node:assert');
const { App } = require('ferrule');
const { serving, request, runScript } = require('./support');

test('requests that arrive while JavaScript is busy are all dispatched when it is free', async () => {
  const app = new App();
  let busyUntil = 0;
  app.get('/busy', () => {
    // Holds the JavaScript thread: the requests below ring while a dispatch is running.
    busyUntil = Date.now() + 300;
    while (Date.now() < busyUntil);
    return 'done';
  });
  app.get('/n/{n:int}', ({ params }) => ({ n: params.n }));
  await serving(app, async (port) => {
    const busy = request(port, 'GET', '/busy');
    await new Promise((resolve) => setTimeout(resolve, 50));
    const quick = await Promise.all(Array.from({ length: 40 }, (_, n) => request(port, 'GET', `/n/${n}`)));
    assert.strictEqual((await busy).text(), 'done');
    quick.forEach((reply, n) => assert.deepStrictEqual(reply.json(), { n }));
    // And again, one by one: a ring after the last dispatch still reaches JavaScript.
    for (let n = 0; n < 5; n++) assert.deepStrictEqual((await request(port, 'GET', `/n/${n}`)).json(), { n });
  });
});

test('a listening server keeps the program alive; closing it lets the program end', () => {
  // Nothing else holds the event loop: the timer is unref'd.
  const script = `const { App } = require('ferrule'); const app = new App({ logger: false }); app.get('/', () => 'hi');
    app.listen({ port: 0, handleSignals: false }).then(({ port }) => {
      setTimeout(() => fetch('http://127.0.0.1:' + port + '/').then((r) => r.text()).then((text) => { console.log(text); return app.close(); }).then(() => console.log('closed')), 300).unref();
    });`;
  assert.deepStrictEqual(runScript(script), ['hi', 'closed']);
});

test('a server that cannot start leaves nothing to keep the program alive, with a logger too', () => {
  // The port is taken by a plain socket; the app's listen() is refused. Before, the logs'
  // waker stayed registered and the program never ended, and close() waited for a server
  // that never started.
  const script = `const net = require('node:net'); const { App } = require('ferrule');
    const taken = net.createServer().listen(0, '127.0.0.1', async () => {
      const logger = { debug() {}, info() {}, warn() {}, error() {}, child() { return this; } };
      const app = new App({ logger, accessLog: true }); app.get('/', () => 'hi');
      try { await app.listen({ port: taken.address().port, handleSignals: false }); } catch (error) { console.log(error.code); }
      await app.close();
      console.log('closed');
      taken.close();
    });`;
  assert.deepStrictEqual(runScript(script), ['EADDRINUSE', 'closed']);
});

test('a second listen() while serving is refused and leaves the first server and its logs as they were', async () => {
  const records = [];
  const logger = { debug() {}, info(fields, message) { records.push(message); }, warn() {}, error() {}, child() { return this; } };
  const app = new App({ logger, accessLog: true });
  app.get('/', () => 'hi');
  await serving(app, async (port) => {
    await assert.rejects(app.listen({ host: '127.0.0.1', port: 0, handleSignals: false }), /this app is already serving/);
    assert.strictEqual((await request(port, 'GET', '/')).text(), 'hi');
    const deadline = Date.now() + 5000;
    while (!records.some((m) => /^GET \/ 200/.test(m)) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
    assert.ok(records.some((m) => /^GET \/ 200/.test(m)), JSON.stringify(records));
  });
});
