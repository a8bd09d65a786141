'use strict';
// Worker processes share one port (a socket the primary binds and they inherit), SIGTERM/SIGINT drain in-flight requests
// before a clean exit, and close() ends even when the drain deadline cuts requests off.
const { test } = require('node:test');
const assert = require('node:assert');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { spawn } = require('node:child_process');
const { Worker } = require('node:worker_threads');
const { App } = require('ferrule');
const { request } = require('./support');

// The port in the server's startup line (its stderr is passed on). It binds port 0 itself: a
// port picked here and closed again could be taken by another program before it binds it.
function reportedPort(child) {
  return new Promise((resolve, reject) => {
    let text = '';
    const timer = setTimeout(() => reject(new Error('the server did not report its port within 30 s')), 30000);
    child.stderr.on('data', (chunk) => {
      process.stderr.write(chunk);
      text += chunk;
      const match = /serving on http:\/\/127\.0\.0\.1:(\d+) /.exec(text);
      if (match) {
        clearTimeout(timer);
        resolve(Number(match[1]));
      }
    });
    child.on('exit', (code, signal) => {
      clearTimeout(timer);
      reject(new Error(`the server exited (${signal || code}) before it listened`));
    });
  });
}

// `started`: a file each /slow request appends its worker's pid to when its handler runs.
async function start(workers, extraEnv = {}) {
  const started = path.join(fs.mkdtempSync(path.join(process.env.TEST_TMPDIR || os.tmpdir(), 'ferrule-workers-')), 'started');
  const env = { ...process.env, FERRULE_TEST_STARTED: started, ...extraEnv };
  const child = spawn(process.execPath, [path.join(__dirname, 'workers_app.js'), '0', String(workers)], { stdio: ['ignore', 'inherit', 'pipe'], env });
  const exited = new Promise((resolve) => child.on('exit', (code, signal) => resolve({ code, signal })));
  let port;
  try {
    port = await reportedPort(child);
  } catch (error) {
    child.kill('SIGKILL');
    throw error;
  }
  const deadline = Date.now() + 30000;
  while (Date.now() < deadline) {
    try {
      if ((await request(port, 'GET', '/pid')).status === 200) return { child, port, exited, started };
    } catch {
      await new Promise((r) => setTimeout(r, 50));
    }
  }
  child.kill('SIGKILL');
  throw new Error('the server did not answer within 30 s');
}

// Resolves once a /slow request is in its handler: a signal sent before a request was read
// would find nothing in flight, however long a guessed sleep was.
async function untilStarted(started) {
  const deadline = Date.now() + 10000;
  while (Date.now() < deadline) {
    if (fs.existsSync(started) && fs.readFileSync(started, 'utf8').trim() !== '') return;
    await new Promise((r) => setTimeout(r, 10));
  }
  throw new Error('the slow request never reached its handler');
}

for (const signal of ['SIGTERM', 'SIGINT']) {
  test(`two workers share the port and drain on ${signal}`, async () => {
    const { child, port, exited, started } = await start(2);
    try {
      const pids = new Set();
      const deadline = Date.now() + 20000;
      while (pids.size < 2 && Date.now() < deadline) pids.add((await request(port, 'GET', '/pid')).json().pid);
      assert.strictEqual(pids.size, 2, `only ${[...pids]} answered`);
      assert.ok(!pids.has(child.pid), 'the primary itself must not serve');
      const inFlight = request(port, 'GET', '/slow?ms=800');
      await untilStarted(started);
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
  const { child, port, exited, started } = await start(1);
  try {
    const inFlight = request(port, 'GET', '/slow?ms=600');
    await untilStarted(started);
    child.kill('SIGTERM');
    assert.strictEqual((await inFlight).json().slept, 600);
    assert.deepStrictEqual(await exited, { code: 0, signal: null });
  } finally {
    child.kill('SIGKILL');
  }
});

// \`timeout\` and process managers signal a whole process group: the primary, then its workers
// too, or the same process twice. Before, the second signal found Node's default handler back
// (listen() took each signal once) and killed the process with the request in flight.
for (const workers of [1, 2]) {
  test(`a second SIGTERM does not cut the drain short (${workers} worker(s))`, async () => {
    const { child, port, exited, started } = await start(workers);
    try {
      const inFlight = request(port, 'GET', '/slow?ms=800');
      await untilStarted(started);
      child.kill('SIGTERM');
      await new Promise((r) => setTimeout(r, 50));
      child.kill('SIGTERM');
      assert.strictEqual((await inFlight).json().slept, 800);
      assert.deepStrictEqual(await exited, { code: 0, signal: null });
    } finally {
      child.kill('SIGKILL');
    }
  });
}

// Before, the primary waited until no worker was listed in `cluster.workers`, which drops a
// worker only once its IPC channel closes too: with a child of the worker holding the channel
// (or, 1 time in 100 under load, the channel closing after the exit), the primary never ended.
test('the primary ends once its workers have exited, though a child of theirs holds their IPC channel', async () => {
  const holders = path.join(fs.mkdtempSync(path.join(process.env.TEST_TMPDIR || os.tmpdir(), 'ferrule-workers-')), 'holders');
  const { child, exited } = await start(2, { FERRULE_TEST_CHANNEL_HOLDERS: holders });
  try {
    child.kill('SIGTERM');
    const ended = await Promise.race([exited, new Promise((resolve) => setTimeout(() => resolve('still running'), 10000))]);
    assert.deepStrictEqual(ended, { code: 0, signal: null });
  } finally {
    child.kill('SIGKILL');
    const started = fs.existsSync(holders) ? fs.readFileSync(holders, 'utf8') : '';
    for (const pid of started.split('\n').filter(Boolean)) {
      try { process.kill(Number(pid), 'SIGKILL'); } catch { /* already gone */ }
    }
  }
});

// A client on a thread of its own (the test's thread is kept busy below): opens a request
// whose body arrives late, then asks for /busy, then sends the late body after `lateMs`.
const LATE_CLIENT = `
const net = require('node:net');
const { workerData: { port, lateMs } } = require('node:worker_threads');
const late = net.connect(port, '127.0.0.1', () => {
  late.write('POST /late HTTP/1.1\\r\\nhost: x\\r\\ncontent-type: application/json\\r\\ncontent-length: 2\\r\\n\\r\\n');
  const busy = net.connect(port, '127.0.0.1', () => busy.write('GET /busy HTTP/1.1\\r\\nhost: x\\r\\n\\r\\n'));
  busy.on('error', () => {});
  setTimeout(() => late.end('{}'), lateMs);
});
late.on('error', () => {});
`;

test('close() ends when the drain deadline passes with a request still queued for JavaScript', async () => {
  // /busy starts the drain (deadline 300 ms) and holds the JavaScript thread for 900 ms. The
  // late request reaches the queue at ~150 ms, the deadline stops the server at ~300 ms, and
  // the JavaScript side finds both the queued request and the end of the server in one batch.
  const app = new App({ shutdownTimeout: 300 });
  let closed = null;
  app.get('/busy', () => {
    closed = app.close();
    const until = Date.now() + 900;
    while (Date.now() < until);
    return 'done';
  });
  app.post('/late', { body: { type: 'object' } }, ({ body }) => body);
  const { port } = await app.listen({ host: '127.0.0.1', port: 0, handleSignals: false, threads: 1 });
  const client = new Worker(LATE_CLIENT, { eval: true, workerData: { port, lateMs: 150 } });
  try {
    while (closed === null) await new Promise((r) => setTimeout(r, 10));
    const deadline = new Promise((_, reject) => setTimeout(() => reject(new Error('close() did not end')), 5000).unref());
    await Promise.race([closed, deadline]);
    assert.strictEqual(app.port, null);
  } finally {
    await client.terminate();
  }
});

// Found by a README-driven probe: with workers, an onReady that threw made each worker exit
// and the primary fork another, every second, forever; and a worker that caught the error
// stayed, holding the port and answering nothing (found when the fix was checked again).
test('a worker that fails to start stops listen({ workers }) instead of being forked again', async () => {
  const dir = fs.mkdtempSync(path.join(process.env.TEST_TMPDIR || os.tmpdir(), 'ferrule-workers-'));
  const script = path.join(dir, 'fails.js');
  fs.writeFileSync(script, `const { App } = require(${JSON.stringify(require.resolve('ferrule'))});
    const app = new App({ logger: false });
    app.addHook('onReady', () => { throw new Error('no database'); });
    const cluster = require('node:cluster');
    // The worker catches the error and stays: the primary must still stop it.
    app.listen({ host: '127.0.0.1', port: 0, workers: 2, log: false }).then(() => process.exit(0), (error) => { if (cluster.isPrimary) { console.error(error.message); process.exit(3); } });`);
  const child = spawn(process.execPath, [script], { stdio: ['ignore', 'ignore', 'pipe'] });
  let stderr = '';
  child.stderr.on('data', (chunk) => { stderr += chunk; });
  const exited = await Promise.race([
    new Promise((resolve) => child.on('exit', (code) => resolve(code))),
    new Promise((resolve) => setTimeout(() => resolve('still running'), 20000)),
  ]);
  child.kill('SIGKILL');
  assert.strictEqual(exited, 3, stderr);
  assert.match(stderr, /ferrule: startup failed \(an onReady hook threw\): no database \(worker \d+\); stopping every worker/);
  assert.ok(!stderr.includes('starting another'), stderr);
});
