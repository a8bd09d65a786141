'use strict';
// Worker processes share one port (SO_REUSEPORT), and SIGTERM/SIGINT drain in-flight requests
// before a clean exit.
const { test } = require('node:test');
const assert = require('node:assert');
const net = require('node:net');
const path = require('node:path');
const { spawn } = require('node:child_process');
const { request } = require('./support');

function freePort() {
  return new Promise((resolve) => {
    const server = net.createServer();
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address();
      server.close(() => resolve(port));
    });
  });
}

async function start(workers) {
  const port = await freePort();
  const child = spawn(process.execPath, [path.join(__dirname, 'workers_app.js'), String(port), String(workers)], { stdio: ['ignore', 'inherit', 'inherit'] });
  const exited = new Promise((resolve) => child.on('exit', (code, signal) => resolve({ code, signal })));
  const deadline = Date.now() + 30000;
  while (Date.now() < deadline) {
    try {
      if ((await request(port, 'GET', '/pid')).status === 200) return { child, port, exited };
    } catch {
      await new Promise((r) => setTimeout(r, 50));
    }
  }
  child.kill('SIGKILL');
  throw new Error('the server did not answer within 30 s');
}

for (const signal of ['SIGTERM', 'SIGINT']) {
  test(`two workers share the port and drain on ${signal}`, async () => {
    const { child, port, exited } = await start(2);
    try {
      const pids = new Set();
      const deadline = Date.now() + 20000;
      while (pids.size < 2 && Date.now() < deadline) pids.add((await request(port, 'GET', '/pid')).json().pid);
      assert.strictEqual(pids.size, 2, `only ${[...pids]} answered`);
      assert.ok(!pids.has(child.pid), 'the primary itself must not serve');
      const inFlight = request(port, 'GET', '/slow?ms=800');
      await new Promise((r) => setTimeout(r, 300));
      child.kill(signal);
      const slow = await inFlight;
      assert.strictEqual(slow.status, 200, 'the in-flight request was cut off instead of drained');
      assert.deepStrictEqual(await exited, { code: 0, signal: null });
      await assert.rejects(request(port, 'GET', '/pid'));
    } finally {
      child.kill('SIGKILL');
    }
  });
}

test('a single process drains on SIGTERM', async () => {
  const { child, port, exited } = await start(1);
  try {
    const inFlight = request(port, 'GET', '/slow?ms=600');
    await new Promise((r) => setTimeout(r, 200));
    child.kill('SIGTERM');
    assert.strictEqual((await inFlight).json().slept, 600);
    assert.deepStrictEqual(await exited, { code: 0, signal: null });
  } finally {
    child.kill('SIGKILL');
  }
});
