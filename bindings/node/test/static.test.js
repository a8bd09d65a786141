'use strict';
// app.static({ root, prefix }): files served by the core, as @fastify/static users expect.
const { test } = require('node:test');
const assert = require('node:assert');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { App } = require('ferrule');

function publicDir() {
  const base = fs.mkdtempSync(path.join(process.env.TEST_TMPDIR || os.tmpdir(), 'ferrule-static-'));
  fs.mkdirSync(path.join(base, 'public', 'js'), { recursive: true });
  fs.writeFileSync(path.join(base, 'public', 'js', 'app.js'), 'console.log(1);\n');
  fs.writeFileSync(path.join(base, 'public', 'index.html'), '<h1>home</h1>');
  fs.writeFileSync(path.join(base, 'public', '.env'), 'SECRET=1');
  fs.writeFileSync(path.join(base, 'secret.txt'), 'outside');
  fs.symlinkSync(path.join(base, 'secret.txt'), path.join(base, 'public', 'link.txt'));
  return path.join(base, 'public');
}

test('files are served with validators, ranges and caching', async () => {
  const app = new App().static({ root: publicDir(), prefix: '/assets', cacheControl: 'public, max-age=300' });
  const js = await app.inject('/assets/js/app.js');
  assert.deepStrictEqual([js.statusCode, js.body, js.headers['content-type']], [200, 'console.log(1);\n', 'text/javascript; charset=utf-8']);
  assert.strictEqual(js.headers['cache-control'], 'public, max-age=300');
  assert.strictEqual((await app.inject({ url: '/assets/js/app.js', headers: { 'if-none-match': js.headers.etag } })).statusCode, 304);
  const part = await app.inject({ url: '/assets/js/app.js', headers: { range: 'bytes=0-6' } });
  assert.deepStrictEqual([part.statusCode, part.body], [206, 'console']);
  assert.strictEqual((await app.inject('/assets/')).body, '<h1>home</h1>');
});

test('climbing out and hidden files are refused', async () => {
  const app = new App().static({ root: publicDir(), prefix: '/assets' });
  for (const url of ['/assets/../secret.txt', '/assets/%2e%2e/secret.txt', '/assets/..%5csecret.txt', '/assets/link.txt', '/assets/.env', '/assets/index.html%00.js']) {
    const response = await app.inject(url);
    assert.strictEqual(response.statusCode, 404, url);
    assert.ok(!response.body.includes('outside') && !response.body.includes('SECRET'), url);
  }
});

test('at the root the files answer what no route takes, and a missing one meets the not-found handler', async () => {
  const app = new App().static({ root: publicDir() });
  app.get('/api/ping', () => ({ pong: true }));
  app.setNotFoundHandler((ctx, reply) => reply.code(404).send({ missing: ctx.path }));
  assert.deepStrictEqual((await app.inject('/api/ping')).json(), { pong: true });
  assert.strictEqual((await app.inject('/js/app.js')).statusCode, 200);
  assert.deepStrictEqual((await app.inject('/nope.js')).json(), { missing: '/nope.js' });
});

test('a static mount that cannot work is refused at once', () => {
  assert.throws(() => new App().static({ root: '/nonexistent/ferrule', prefix: '/x' }), /cannot open directory/);
  assert.throws(() => new App().static({ root: publicDir(), prefix: '/x', cachecontrol: 'x' }), /unknown static option cachecontrol \(did you mean cacheControl\?\)/);
});

test('reply.sendFile answers with a file below the static root, ranges and validators included', async () => {
  const root = publicDir();
  const app = new App().static({ root, prefix: '/assets' });
  app.get('/page/:name', (ctx, reply) => reply.sendFile(`${ctx.params.name}.html`));
  app.get('/script', (ctx, reply) => reply.header('cache-control', 'no-cache').sendFile('app.js', path.join(root, 'js')));
  app.get('/save', (ctx, reply) => reply.download('js/app.js', 'script.js'));
  const page = await app.inject('/page/index');
  assert.deepStrictEqual([page.statusCode, page.body, page.headers['content-type']], [200, '<h1>home</h1>', 'text/html; charset=utf-8']);
  assert.strictEqual((await app.inject({ url: '/page/index', headers: { 'if-none-match': page.headers.etag } })).statusCode, 304);
  const part = await app.inject({ url: '/script', headers: { range: 'bytes=0-6' } });
  assert.deepStrictEqual([part.statusCode, part.body, part.headers['content-range'], part.headers['cache-control']], [206, 'console', 'bytes 0-6/16', 'no-cache']);
  const saved = await app.inject('/save');
  assert.deepStrictEqual([saved.statusCode, saved.body, saved.headers['content-disposition']], [200, 'console.log(1);\n', 'attachment; filename="script.js"']);
  // A name that climbs out of the root, and a file that is not there, are 404s.
  for (const url of ['/page/..%2fsecret', '/page/..%2f..%2fsecret', '/page/missing']) {
    const response = await app.inject(url);
    assert.strictEqual(response.statusCode, 404, url);
    assert.ok(!response.body.includes('outside'), url);
  }
  // A download that climbs out names no attachment on its 404.
  app.get('/fetch/:name', (ctx, reply) => reply.download(`../${ctx.params.name}`, 'secret.pdf'));
  const climbed = await app.inject('/fetch/secret');
  assert.deepStrictEqual([climbed.statusCode, climbed.headers['content-disposition']], [404, undefined]);
});

test('reply.sendFile without a root, or with an option it does not offer, is refused by name', async () => {
  const app = new App();
  const thrown = [];
  app.get('/file', (ctx, reply) => reply.sendFile('a.txt'));
  app.get('/aged', (ctx, reply) => reply.sendFile('a.txt', '/tmp', { maxAge: 1000 }));
  app.setErrorHandler((error, ctx, reply) => {
    thrown.push(error.message);
    reply.code(500).send({ failed: true });
  });
  for (const url of ['/file', '/aged']) assert.strictEqual((await app.inject(url)).statusCode, 500, url);
  assert.match(thrown[0], /reply\.sendFile needs a root/);
  assert.match(thrown[1], /reply\.sendFile option maxAge is not offered/);
});

// Found by a probe: reply.sendFile sent a symlink leading out of the root and a hidden file that
// the root's mount refuses, and answered a directory or a NUL with a 500.
test('sendFile keeps its root mount\'s rules, and a directory is its index', async () => {
  const root = publicDir();
  fs.mkdirSync(path.join(root, 'empty'));
  const app = new App({ logger: false }).static({ root, prefix: '/assets' });
  app.get('/file', (ctx, reply) => reply.sendFile(ctx.query.name));
  for (const name of ['link.txt', '.env', 'empty', 'index.html\0.js', '../secret.txt']) {
    const response = await app.inject({ url: `/file?name=${encodeURIComponent(name)}` });
    assert.strictEqual(response.statusCode, 404, JSON.stringify(name));
    assert.ok(!response.body.includes('outside') && !response.body.includes('SECRET'), name);
  }
  assert.strictEqual((await app.inject('/file?name=js%2Fapp.js')).body, 'console.log(1);\n');
  assert.strictEqual((await app.inject('/file?name=.')).body, '<h1>home</h1>', 'the root directory is its index');
  // A root given to sendFile has no mount: read as @fastify/static reads one, symlinks and all.
  const other = fs.mkdtempSync(path.join(path.dirname(root), 'other-'));
  fs.symlinkSync(path.join(root, '..', 'secret.txt'), path.join(other, 'link.txt'));
  app.get('/given', (ctx, reply) => reply.sendFile(ctx.query.name, other));
  assert.strictEqual((await app.inject('/given?name=link.txt')).body, 'outside');
  const open = new App({ logger: false }).static({ root, prefix: '/assets', dotfiles: true, followSymlinks: true });
  open.get('/file', (ctx, reply) => reply.sendFile(ctx.query.name));
  assert.strictEqual((await open.inject('/file?name=link.txt')).body, 'outside');
  assert.strictEqual((await open.inject('/file?name=.env')).body, 'SECRET=1');
});
