'use strict';
// WebSockets with a real client (the `ws` package): the README's chat room, parameters validated
// before the upgrade, text and binary both ways, the close a handler sends or its exception
// causes, the client leaving, subprotocols, and async iteration.
const { test } = require('node:test');
const assert = require('node:assert');
const fs = require('node:fs');
const { once } = require('node:events');
const WebSocketClient = require('ws');
const ferrule = require('ferrule');
const { serving } = require('./support');

/** A connected client, with every message it receives queued for `next()`. */
async function connect(port, path, protocols) {
  const client = new WebSocketClient(`ws://127.0.0.1:${port}${path}`, protocols);
  const queued = [];
  const waiting = [];
  client.on('message', (data, isBinary) => {
    const message = isBinary ? data : data.toString();
    if (waiting.length > 0) waiting.shift()(message);
    else queued.push(message);
  });
  client.next = () => (queued.length > 0 ? Promise.resolve(queued.shift()) : new Promise((resolve) => waiting.push(resolve)));
  client.closed = once(client, 'close').then(([code, reason]) => [code, reason.toString()]);
  await once(client, 'open');
  return client;
}

/** The status of a refused handshake. */
function refusal(port, path) {
  const client = new WebSocketClient(`ws://127.0.0.1:${port}${path}`);
  client.on('error', () => {});
  return once(client, 'unexpected-response').then(([, response]) => response.statusCode);
}

test("the README's chat room relays between the members of a room", async () => {
  const text = fs.readFileSync(process.env.FERRULE_README, 'utf8');
  const start = text.indexOf('### WebSockets');
  const block = /```js\n([\s\S]*?)```/.exec(text.slice(start, text.indexOf('\n## ', start)));
  assert.ok(block, "no js block in the README's WebSockets section");
  const app = new ferrule.App();
  new Function('app', block[1])(app);
  await serving(app, async (port) => {
    assert.strictEqual(await refusal(port, '/chat/lobby'), 422, 'no ?name=');
    const ann = await connect(port, '/chat/lobby?name=ann');
    const bob = await connect(port, '/chat/lobby?name=bob');
    const eve = await connect(port, '/chat/other?name=eve');
    bob.send('hi all');
    assert.strictEqual(await ann.next(), 'bob: hi all');
    assert.strictEqual(await bob.next(), 'bob: hi all');
    eve.send('alone');
    assert.strictEqual(await eve.next(), 'eve: alone');
    for (const client of [ann, bob, eve]) client.close();
    await Promise.all([ann.closed, bob.closed, eve.closed]);
  });
});

test('text and binary come back in kind, and the close a handler sends arrives', async () => {
  const app = new ferrule.App();
  app.ws('/echo', async (socket) => {
    for await (const data of socket) {
      if (data === 'bye') {
        // As with `ws`, a close no server may send throws (a TypeError for the code, a
        // RangeError for the reason) and leaves the socket open.
        assert.throws(() => socket.close(1005), { name: 'TypeError', message: /1005 is not a close code a server may send/ });
        assert.throws(() => socket.close(1000.5), { name: 'TypeError', message: /1000.5 is not a close code/ });
        assert.throws(() => socket.close(4000, 'x'.repeat(124)), RangeError);
        assert.throws(() => socket.close('4000'), TypeError);
        return socket.close(4000, 'done');
      }
      socket.send(data);
    }
  });
  await serving(app, async (port) => {
    const client = await connect(port, '/echo');
    client.send('héllo');
    assert.strictEqual(await client.next(), 'héllo');
    client.send(Buffer.from([0, 255, 7]));
    assert.deepStrictEqual(await client.next(), Buffer.from([0, 255, 7]));
    client.send('bye');
    assert.deepStrictEqual(await client.closed, [4000, 'done']);
  });
});

// Found by a README-driven probe: a WebSocket handler's ctx read no undeclared header, query
// pair or cookie (its raw parts were empty).
test("a WebSocket handler's ctx reads what the handshake carried, declared or not", async () => {
  const app = new ferrule.App();
  app.ws('/raw', (socket, ctx) => {
    socket.send(JSON.stringify({ auth: ctx.header('authorization'), rawQuery: ctx.rawQuery, pairs: ctx.queryPairs, cookies: ctx.cookiePairs }));
  });
  await serving(app, async (port) => {
    const client = new WebSocketClient(`ws://127.0.0.1:${port}/raw?q=1&q=2`, { headers: { authorization: 'Bearer t', cookie: 'a=1; b=2' } });
    const [message] = await once(client, 'message');
    assert.deepStrictEqual(JSON.parse(message.toString()), { auth: 'Bearer t', rawQuery: 'q=1&q=2', pairs: [['q', '1'], ['q', '2']], cookies: [['a', '1'], ['b', '2']] });
    client.close();
  });
});

test('a listener that throws closes with 1011 and the handler hears the client leave', async () => {
  const app = new ferrule.App({ logger: false });
  const left = [];
  app.ws('/boom', (socket) => {
    socket.on('message', () => { throw new Error('SECRET-TOKEN-42'); });
  });
  app.ws('/listen', { subprotocols: ['chat.v2', 'chat.v1'] }, (socket) => {
    socket.send(socket.protocol);
    socket.on('close', (code, reason) => left.push([code, reason]));
  });
  await serving(app, async (port) => {
    const boom = await connect(port, '/boom');
    boom.send('go');
    const [code, reason] = await boom.closed;
    assert.strictEqual(code, 1011);
    assert.ok(!reason.includes('SECRET'));
    const listen = await connect(port, '/listen', ['chat.v1']);
    assert.strictEqual(listen.protocol, 'chat.v1');
    assert.strictEqual(await listen.next(), 'chat.v1');
    listen.close(4100, 'bye');
    await listen.closed;
    for (let i = 0; i < 100 && left.length === 0; i++) await new Promise((r) => setTimeout(r, 20));
    assert.deepStrictEqual(left, [[4100, 'bye']]);
  });
});

test('a WebSocket route needs a handler and known options', () => {
  const app = new ferrule.App();
  assert.throws(() => app.ws('/x'), TypeError);
  assert.throws(() => app.ws('/x', { bodyLimit: 5 }, () => {}), /unknown WebSocket option/);
});

// Found by a README walk: a handler's 'close' listener never heard of the drain's 1001 when
// app.close() stopped the server (the end arrived after the last batch was taken).
test("app.close() closes open sockets with 1001 and their handlers' close listeners hear it", async () => {
  const app = new ferrule.App({ logger: false });
  const heard = [];
  app.ws('/stay', (socket) => {
    socket.on('close', (code) => { heard.push(code); throw new Error('a listener that fails stops no other'); });
    socket.send('hi');
  });
  const { port } = await app.listen({ host: '127.0.0.1', port: 0, handleSignals: false, threads: 2 });
  const clients = [await connect(port, '/stay'), await connect(port, '/stay')];
  await Promise.all(clients.map((client) => client.next()));
  await app.close();
  assert.deepStrictEqual(heard, [1001, 1001]);
  assert.deepStrictEqual((await Promise.all(clients.map((client) => client.closed))).map(([code]) => code), [1001, 1001]);
});

// `ws`'s heartbeat, as its README writes it: ping every interval, mark the socket alive on
// 'pong', terminate() one that did not answer. 'pong' never fired and terminate() was a
// TypeError thrown from a timer, which ended the process.
test("ws's heartbeat works: a ping's answer is a 'pong' event, and terminate() closes", async () => {
  const app = new ferrule.App({ logger: false });
  const seen = [];
  app.ws('/beat', (socket) => {
    socket.isAlive = false;
    socket.on('pong', (data) => {
      socket.isAlive = true;
      seen.push(data.toString());
    });
    socket.on('message', (data) => {
      if (data.toString() === 'ping me') socket.ping('beat');
      else if (data.toString() === 'check') socket.send(String(socket.isAlive));
      else if (data.toString() === 'terminate') socket.terminate();
    });
  });
  await serving(app, async (port) => {
    const client = await connect(port, '/beat');
    client.send('ping me');
    await once(client, 'ping'); // the ws client answers with a pong by itself
    for (let i = 0; i < 100 && seen.length === 0; i++) await new Promise((resolve) => setTimeout(resolve, 10));
    client.send('check');
    assert.strictEqual(await client.next(), 'true');
    assert.deepStrictEqual(seen, ['beat']);
    client.send('terminate');
    assert.strictEqual((await client.closed)[0], 1001);
  });
});

// Found by a Fastify port: send({ type: 'hello' }) sent the text "[object Object]".
test("send() takes what ws's send() takes: a number as text, bytes as binary, an object is a TypeError", async () => {
  const app = new ferrule.App();
  let thrown = null;
  app.ws('/kinds', (socket) => {
    socket.send(42);
    socket.send([1, 2, 3]);
    try {
      socket.send({ type: 'hello' });
    } catch (error) {
      thrown = error;
    }
    socket.send('end');
  });
  await serving(app, async (port) => {
    const client = await connect(port, '/kinds');
    assert.strictEqual(await client.next(), '42');
    assert.deepStrictEqual([...(await client.next())], [1, 2, 3]);
    assert.strictEqual(await client.next(), 'end');
    assert.ok(thrown instanceof TypeError, `${thrown}`);
    client.close();
    await client.closed;
  });
});

test("the app's onRequest and preHandler hooks see a WebSocket's handshake, and one that answers refuses the upgrade", async () => {
  const app = new ferrule.App();
  const seen = [];
  app.decorateRequest('role', 'guest');
  app.addHook('onRequest', async (ctx, reply) => {
    seen.push(`onRequest ${ctx.path}`);
    if (ctx.header('authorization') !== 'Bearer good') return reply.code(401).header('www-authenticate', 'Bearer').send({ error: 'who are you?' });
    ctx.user = { name: 'ann' }; // as @fastify/websocket's handler, the socket's sees it
  });
  app.addHook('preHandler', (ctx, reply, done) => {
    seen.push('preHandler');
    ctx.role = 'member';
    setTimeout(done, 5);
  });
  app.addHook('onSend', async (ctx, reply, payload) => {
    seen.push(`onSend ${reply.statusCode}`);
    return payload;
  });
  app.ws('/guarded/{room}', (socket, ctx) => {
    seen.push(`handler ${ctx.params.room}`);
    socket.on('message', (text) => socket.send(`${ctx.user.name} (${ctx.role}) in ${ctx.params.room}: ${text}`));
  });
  await serving(app, async (port) => {
    const stranger = new WebSocketClient(`ws://127.0.0.1:${port}/guarded/lobby`);
    stranger.on('error', () => {});
    const [, response] = await once(stranger, 'unexpected-response');
    let body = '';
    for await (const chunk of response) body += chunk;
    assert.strictEqual(response.statusCode, 401);
    assert.strictEqual(response.headers['www-authenticate'], 'Bearer');
    assert.deepStrictEqual(JSON.parse(body), { error: 'who are you?' });
    assert.deepStrictEqual(seen.splice(0), ['onRequest /guarded/lobby', 'onSend 401'], 'refused: no preHandler, no handler');

    const member = new WebSocketClient(`ws://127.0.0.1:${port}/guarded/lobby`, { headers: { authorization: 'Bearer good' } });
    await once(member, 'open');
    member.send('hi');
    const [message] = await once(member, 'message');
    assert.strictEqual(message.toString(), 'ann (member) in lobby: hi', "what the hooks set on the handshake's ctx");
    assert.deepStrictEqual(seen.splice(0), ['onRequest /guarded/lobby', 'preHandler', 'handler lobby'], 'admitted: no onSend (no reply was sent)');
    member.close();
    await once(member, 'close');
    assert.strictEqual(app._dispatcher.admitted.size, 0, 'the opened handshake took back its ctx');
  });
});

test("a handshake its hooks let through whose client left before the upgrade is forgotten", async () => {
  const app = new ferrule.App();
  let admitted = 0;
  let opened = 0;
  let started;
  const handshakeSeen = new Promise((resolve) => { started = resolve; });
  app.addHook('onRequest', async (ctx) => {
    started();
    await new Promise((resolve) => setTimeout(resolve, 50)); // the client leaves meanwhile
    ctx.user = 'ann';
  });
  app.addHook('preHandler', async () => { admitted += 1; });
  app.ws('/live', () => { opened += 1; });
  await serving(app, async (port) => {
    const client = require('node:net').connect(port, '127.0.0.1');
    await once(client, 'connect');
    client.write('GET /live HTTP/1.1\r\nhost: x\r\nconnection: Upgrade\r\nupgrade: websocket\r\nsec-websocket-version: 13\r\nsec-websocket-key: dGhlIHNhbXBsZSBub25jZQ==\r\n\r\n');
    await handshakeSeen;
    client.destroy();
    const dispatcher = app._dispatcher;
    for (let waited = 0; (admitted === 0 || dispatcher.admitted.size > 0) && waited < 5000; waited += 10) {
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
    assert.deepStrictEqual([admitted, opened, dispatcher.admitted.size], [1, 0, 0], 'admitted, never opened, and its ctx let go');
  });
});

test("the README's hook refuses a WebSocket handshake without its key", async () => {
  const text = fs.readFileSync(process.env.FERRULE_README, 'utf8');
  const start = text.indexOf('### WebSockets');
  const section = text.slice(start, text.indexOf('\n## ', start));
  const block = [...section.matchAll(/```js\n([\s\S]*?)```/g)].map((m) => m[1]).find((b) => b.includes('key required'));
  assert.ok(block, "no hook in the README's WebSockets section");
  const app = new ferrule.App();
  new Function('app', block)(app);
  app.ws('/echo', (socket, ctx) => socket.on('message', (text) => socket.send(`${ctx.key}: ${text}`)));
  await serving(app, async (port) => {
    const stranger = new WebSocketClient(`ws://127.0.0.1:${port}/echo`);
    stranger.on('error', () => {});
    const [, response] = await once(stranger, 'unexpected-response');
    let body = '';
    for await (const chunk of response) body += chunk;
    assert.strictEqual(response.statusCode, 401);
    assert.deepStrictEqual(JSON.parse(body), { error: 'key required' });
    const member = new WebSocketClient(`ws://127.0.0.1:${port}/echo`, { headers: { 'x-key': 'k' } });
    await once(member, 'open');
    member.send('hi');
    const [message] = await once(member, 'message');
    assert.strictEqual(message.toString(), 'k: hi', 'the key the hook kept on ctx');
    member.close();
    await once(member, 'close');
  });
});

// Found by a probe: a handler that awaited before reading kept the last 1,024 of 3,000 messages
// and dropped the oldest, silently. Past its backlog the rest now wait in the core, which stops
// reading from the client; none is lost. A message larger than ws_send_buffer_bytes goes out
// (every one over 1 MiB closed the connection with 1008 before a byte of it was sent).
test('a late reader loses no message, and a message over the send buffer goes out', async () => {
  const app = new ferrule.App();
  app.ws('/late', async (socket) => {
    await new Promise((resolve) => setTimeout(resolve, 300));
    for await (const message of socket) socket.send(String(message));
  });
  app.ws('/big', (socket) => { socket.send(Buffer.alloc(3 * 1024 * 1024, 7)); });
  await serving(app, async (port) => {
    const late = await connect(port, '/late');
    const count = 3000;
    for (let i = 0; i < count; i++) late.send(`m${i}`);
    const echoed = [];
    for (let i = 0; i < count; i++) echoed.push(await late.next());
    assert.deepStrictEqual(echoed, Array.from({ length: count }, (_, i) => `m${i}`));
    late.close();
    await late.closed;
    const big = await connect(port, '/big');
    const received = await big.next();
    assert.strictEqual(received.length, 3 * 1024 * 1024);
    big.close();
    await big.closed;
  });
});
