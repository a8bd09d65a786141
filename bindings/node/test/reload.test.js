'use strict';
// `ferrule app.js --reload`: the app is served again when its source changes, and the
// supervisor stops cleanly on SIGTERM.
const { test } = require('node:test');
const assert = require('node:assert');
const fs = require('node:fs');
const net = require('node:net');
const path = require('node:path');
const { spawn } = require('node:child_process');

const source = (port, version) => `console.log('stdout of ${version}'); console.error('stderr of ${version}');
const { App } = require('ferrule');
const app = new App();
app.get('/version', () => '${version}');
app.listen({ port: ${port}, log: false });
`;

function freePort() {
  return new Promise((resolve) => {
    const probe = net.createServer().listen(0, '127.0.0.1', () => { const { port } = probe.address(); probe.close(() => resolve(port)); });
  });
}

async function answer(port) {
  try {
    return await (await fetch(`http://127.0.0.1:${port}/version`, { signal: AbortSignal.timeout(2000) })).text();
  } catch {
    return '';
  }
}

async function waitFor(port, wanted) {
  const until = Date.now() + 20000;
  while (Date.now() < until) {
    if (await answer(port) === wanted) return true;
    await new Promise((r) => setTimeout(r, 100));
  }
  return false;
}

test('a changed source is served again', async () => {
  // Inside the test project, so require('ferrule') finds the installed package.
  const dir = fs.mkdtempSync(path.join(process.cwd(), 'reload-'));
  const file = path.join(dir, 'app.js');
  const port = await freePort();
  fs.writeFileSync(file, source(port, 'one'));
  const cli = path.join(path.dirname(require.resolve('ferrule/package.json')), 'cli.js');
  const supervisor = spawn(process.execPath, [cli, file, '--reload', '--reload-dir', dir], { stdio: ['ignore', 'pipe', 'pipe'] });
  let [stdout, stderr] = ['', ''];
  supervisor.stdout.on('data', (chunk) => { stdout += chunk; });
  supervisor.stderr.on('data', (chunk) => { stderr += chunk; });
  const exited = new Promise((resolve) => supervisor.on('exit', (code) => resolve(code)));
  try {
    assert.ok(await waitFor(port, 'one'), 'the app started');
    fs.writeFileSync(file, source(port, 'two'));
    assert.ok(await waitFor(port, 'two'), `the changed app is served; ${stderr}`);
  } finally {
    supervisor.kill('SIGTERM');
  }
  assert.strictEqual(await exited, 0, stderr);
  assert.match(stderr, /app\.js changed; restarting/);
  // What the app prints reaches the supervisor's own streams (before: Node's app had none).
  assert.match(stdout, /stdout of one\n[^]*stdout of two\n/);
  assert.match(stderr, /stderr of one\n[^]*stderr of two\n/);
  assert.strictEqual(await answer(port), '', 'the app stopped with its supervisor');
  fs.rmSync(dir, { recursive: true });
});
