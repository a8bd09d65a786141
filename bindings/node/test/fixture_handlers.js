'use strict';
// The fixture corpus's handler kinds (fixtures/README.md), written with the Node API. Each
// returns only what it received: the typed, validated values the core handed over.
const crypto = require('node:crypto');
const path = require('node:path');
const { setTimeout: sleepMs } = require('node:timers/promises');
const { Response, sse } = require('ferrule');

/** Where the `file` kind's files are (fixtures/served). */
const SERVED = path.join(process.env.FERRULE_FIXTURES_DIR || path.resolve(__dirname, '../../../fixtures'), 'served');

function plain(value) {
  if (value && typeof value === 'object' && Buffer.isBuffer(value.data) && 'contentType' in value) {
    return {
      filename: value.filename,
      content_type: value.contentType,
      size: value.size,
      sha256: crypto.createHash('sha256').update(value.data).digest('hex'),
    };
  }
  if (Array.isArray(value)) return value.map(plain);
  if (value && typeof value === 'object' && !Buffer.isBuffer(value)) {
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, plain(v)]));
  }
  return value;
}

function* chunks(ctx) {
  for (let i = 0; i < ctx.query.n; i++) yield `${i}:${ctx.query.word}\n`;
}

function* events(ctx) {
  const start = Number(ctx.header('last-event-id') ?? 0);
  for (let i = 0; i < ctx.query.n; i++) yield { data: { i, word: ctx.query.word }, event: 'tick', id: start + i + 1 };
  yield ctx.query.word;
}

function* partialThenFail(item) {
  yield item;
  throw new Error('SECRET-TOKEN-42 database password');
}

/** The same items from an async generator (a later turn of the event loop for each). */
async function* later(items) {
  for (const item of items) {
    await null;
    yield item;
  }
}

function echo(ctx) {
  const out = {};
  for (const [key, values] of [['path', ctx.params], ['query', ctx.declaredQuery], ['headers', ctx.declaredHeaders], ['cookies', ctx.declaredCookies]]) {
    if (Object.keys(values).length > 0) out[key] = plain(values);
  }
  const body = ctx.declaredBody;
  if (Buffer.isBuffer(body)) out.body = body.toString('utf8');
  else if (body !== undefined) out.body = plain(body);
  return out;
}

const SYNC = {
  echo,
  status: (ctx) => {
    const code = ctx.params.code;
    return new Response(code === 204 || code === 304 ? null : { status: code }, { status: code });
  },
  fail: () => {
    throw new Error('SECRET-TOKEN-42 database password');
  },
  // JavaScript has no blocking sleep a handler would use: sleeping is always asynchronous.
  sleep: async (ctx) => {
    await sleepMs(ctx.query.ms);
    return echo(ctx);
  },
  repeat: (ctx) => ({ data: ctx.query.char.repeat(ctx.query.n) }),
  text: (ctx) => ctx.query.text,
  file: (ctx, reply) => reply.sendFile(ctx.query.name, SERVED),
  raw: (ctx) => ({
    n: ctx.query.n === undefined ? null : ctx.query.n,
    query: ctx.queryPairs,
    extra: ctx.header('x-extra') ?? null,
    cookies: ctx.cookiePairs,
    body: ctx.rawBody.toString('utf8'),
  }),
  origin: (ctx) => ({ client: ctx.ip ?? null, scheme: ctx.protocol, host: ctx.host ?? null }),
  part_headers: (ctx) => {
    const headers = (value) => (Array.isArray(value) ? value.map(headers) : value.headers);
    const isFile = (v) => v && typeof v === 'object' && Buffer.isBuffer(v.data);
    return Object.fromEntries(Object.entries(ctx.body || {})
      .filter(([, v]) => isFile(v) || (Array.isArray(v) && v.length > 0 && isFile(v[0])))
      .map(([k, v]) => [k, headers(v)]));
  },
  // The JSON body as the handler's result: the route's declared response schema decides what
  // of it is sent.
  result: (ctx) => (ctx.query.status == null ? ctx.body : new Response(ctx.body, { status: ctx.query.status })),
  // The JSON body as the text it arrived in, sent as JSON: the declared response schema still
  // decides what of it is sent.
  result_text: (ctx) => new Response(ctx.rawBody.toString('utf8'), { type: 'application/json' }),
  stream: (ctx) => chunks(ctx),
  events: (ctx) => sse(events(ctx)),
  stream_fail: () => partialThenFail('partial'),
  events_fail: () => sse(partialThenFail('partial')),
};

// The same handlers, answering from a later turn of the event loop (a resolved Promise).
const ASYNC = Object.fromEntries(
  Object.entries(SYNC).map(([name, handler]) => [
    name,
    async (ctx) => {
      await null;
      return handler(ctx);
    },
  ]),
);

// The async flavour streams from async generators.
Object.assign(ASYNC, {
  file: async (ctx, reply) => {
    await null;
    return reply.sendFile(ctx.query.name, SERVED);
  },
  stream: async (ctx) => later(chunks(ctx)),
  events: async (ctx) => sse(later(events(ctx))),
  stream_fail: async () => later(partialThenFail('partial')),
  events_fail: async () => sse(later(partialThenFail('partial'))),
});

// socket_echo: what the request carried and the subprotocol, then every message back in kind;
// `close CODE` closes with that code, `raise` fails as `fail` does. The plain flavour listens
// for events, the async one iterates.
function hello(socket, ctx) {
  socket.send(JSON.stringify({ ...echo(ctx), subprotocol: socket.protocol || null }));
}

function answerMessage(socket, data) {
  if (data === 'raise') throw new Error('SECRET-TOKEN-42 database password');
  if (typeof data === 'string' && data.startsWith('close ')) {
    socket.close(Number(data.slice(6)), 'requested');
    return false;
  }
  socket.send(data);
  return true;
}

SYNC.socket_echo = (socket, ctx) => {
  hello(socket, ctx);
  socket.on('message', (data) => answerMessage(socket, data));
};

ASYNC.socket_echo = async (socket, ctx) => {
  await null;
  hello(socket, ctx);
  for await (const data of socket) {
    if (!answerMessage(socket, data)) return;
  }
};

/**
 * The hook setups of fixtures/README.md ("Hooks"), in Fastify's idiom, registered in order;
 * `asynchronous` uses async hooks, else `done` callbacks.
 */
function installHooks(app, names, { asynchronous }) {
  // Fastify's two shapes of a request hook: async, or taking a `done` callback.
  const hook = (fn) => (asynchronous ? async (ctx, reply) => fn(ctx, reply) : (ctx, reply, done) => { fn(ctx, reply); done(); });
  for (const name of names) {
    if (name === 'trace') {
      app.decorateRequest('trace', null);
      app.addHook('onRequest', hook((ctx) => { ctx.trace = ['on_request']; }));
      app.addHook('preHandler', hook((ctx) => { ctx.trace.push('pre_handler'); }));
      app.addHook('onSend', async (ctx, reply, payload) => {
        reply.header('x-trace', [...(ctx.trace || []), 'on_send'].join(','));
        return payload;
      });
    } else if (name === 'key_required') {
      app.addHook('onRequest', hook((ctx, reply) => {
        if (ctx.header('x-key') === undefined) reply.code(401).send({ error: 'key required' });
      }));
    } else if (name === 'invalid_is_400') {
      app.setErrorHandler((error, ctx, reply) => (error.validation
        ? reply.code(400).send({ invalid: error.validation.map((issue) => issue.loc.join('.')) })
        : reply.send(error)));
    } else if (name === 'missing_is_404') {
      app.setNotFoundHandler((ctx, reply) => reply.code(404).send({ missing: ctx.path }));
    } else {
      throw new Error(`unknown hook setup ${name}`);
    }
  }
}

module.exports = { SYNC, ASYNC, installHooks };
