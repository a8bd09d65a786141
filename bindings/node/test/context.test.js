'use strict';
// Each request runs in an async context of its own (index.js, inOwnContext): what
// AsyncLocalStorage holds for one request is never what another reads, as with Node's own
// HTTP server, however the requests interleave; a WebSocket's messages arrive in its own.
const { test } = require('node:test');
const assert = require('node:assert');
const { AsyncLocalStorage } = require('node:async_hooks');
const { once } = require('node:events');
const WebSocketClient = require('ws');
const { App } = require('ferrule');
const { serving, request } = require('./support');

const user = new AsyncLocalStorage();

function makeApp() {
  const app = new App();
  app.addHook('onRequest', (ctx) => {
    if (ctx.header('x-user')) user.enterWith(ctx.header('x-user'));
  });
  app.get('/set', () => {
    const before = user.getStore() ?? null;
    user.enterWith('set by a handler');
    return { before };
  });
  app.get('/read', () => ({ user: user.getStore() ?? null }));
  app.ws('/chat/{who}', (socket, ctx) => {
    user.enterWith(ctx.params.who);
    socket.on('message', (message) => {
      const seen = user.getStore();
      user.enterWith(`${message} from ${ctx.params.who}`);
      socket.send(JSON.stringify({ seen }));
    });
  });
  // Listens only after a wait, so what the client sent first is already waiting for it.
  app.ws('/late-chat/{who}', async (socket, ctx) => {
    user.enterWith(ctx.params.who);
    await new Promise((resolve) => setTimeout(resolve, 50));
    socket.on('message', (message) => {
      const seen = user.getStore();
      user.enterWith(`${message} from ${ctx.params.who}`);
      socket.send(JSON.stringify({ seen }));
    });
  });
  app.get('/read-later/{ms:int}', async ({ params }) => {
    await new Promise((resolve) => setTimeout(resolve, params.ms));
    return { user: user.getStore() ?? null };
  });
  return app;
}

test('a store one handler enters is gone by the next request', async () => {
  const app = makeApp();
  await serving(app, async (port) => {
    assert.deepStrictEqual((await request(port, 'GET', '/set')).json(), { before: null });
    assert.deepStrictEqual((await request(port, 'GET', '/set')).json(), { before: null });
    assert.deepStrictEqual((await request(port, 'GET', '/read')).json(), { user: null });
  });
  assert.deepStrictEqual((await app.inject('/set')).json(), { before: null });
  assert.deepStrictEqual((await app.inject('/read')).json(), { user: null });
});

test("a hook's store is its own request's, through the handler's awaits, whatever runs between", async () => {
  await serving(makeApp(), async (port) => {
    // The first waits while the second and third run: each reads the user its own hook entered.
    const answers = await Promise.all([
      request(port, 'GET', '/read-later/100', { headers: { 'x-user': 'ada' } }),
      request(port, 'GET', '/read-later/1', { headers: { 'x-user': 'grace' } }),
      request(port, 'GET', '/read'),
    ]);
    assert.deepStrictEqual(answers.map((a) => a.json()), [{ user: 'ada' }, { user: 'grace' }, { user: null }]);
    assert.deepStrictEqual((await request(port, 'GET', '/read')).json(), { user: null });
  });
});

test("a WebSocket's messages arrive in its own context, and nothing of it reaches requests", async () => {
  await serving(makeApp(), async (port) => {
    const exchange = async (client, text) => {
      client.send(text);
      const [data] = await once(client, 'message');
      return JSON.parse(data.toString());
    };
    const ada = new WebSocketClient(`ws://127.0.0.1:${port}/chat/ada`);
    const grace = new WebSocketClient(`ws://127.0.0.1:${port}/chat/grace`);
    await Promise.all([once(ada, 'open'), once(grace, 'open')]);
    assert.deepStrictEqual(await exchange(ada, 'hi'), { seen: 'ada' });
    assert.deepStrictEqual(await exchange(grace, 'hello'), { seen: 'grace' });
    assert.deepStrictEqual(await exchange(ada, 'again'), { seen: 'hi from ada' });
    assert.deepStrictEqual((await request(port, 'GET', '/read')).json(), { user: null });
    ada.close();
    grace.close();
    await Promise.all([once(ada, 'close'), once(grace, 'close')]);
  });
});

test('a message that waited for its listener is delivered in the socket\'s context too', async () => {
  await serving(makeApp(), async (port) => {
    const client = new WebSocketClient(`ws://127.0.0.1:${port}/late-chat/ada`);
    await once(client, 'open');
    client.send('hi');
    const first = once(client, 'message');
    assert.deepStrictEqual(JSON.parse((await first)[0].toString()), { seen: 'ada' });
    // Taken by the listener's arrival, not a batch: what it entered is the socket's store.
    client.send('again');
    assert.deepStrictEqual(JSON.parse((await once(client, 'message'))[0].toString()), { seen: 'hi from ada' });
    client.close();
    await once(client, 'close');
  });
});
