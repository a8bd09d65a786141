'use strict';
// Test helpers: serve an app on 127.0.0.1 (a free port), a real HTTP client (node:http), and a
// script run in a Node process of its own.
const assert = require('node:assert');
const http = require('node:http');
const path = require('node:path');
const { spawnSync } = require('node:child_process');

async function serving(app, run) {
  const { port } = await app.listen({ host: '127.0.0.1', port: 0, handleSignals: false, threads: 2 });
  try {
    return await run(port);
  } finally {
    await app.close();
  }
}

function request(port, method, path, { json, body, headers = {} } = {}) {
  if (json !== undefined) {
    body = Buffer.from(JSON.stringify(json));
    headers = { 'content-type': 'application/json', ...headers };
  }
  return new Promise((resolve, reject) => {
    const req = http.request({ host: '127.0.0.1', port, method, path, headers, agent: false }, (res) => {
      const chunks = [];
      res.on('data', (c) => chunks.push(c));
      res.on('end', () => {
        const data = Buffer.concat(chunks);
        resolve({
          status: res.statusCode,
          headers: res.headers,
          body: data,
          text: () => data.toString('utf8'),
          json: () => JSON.parse(data.toString('utf8')),
        });
      });
    });
    req.on('error', reject);
    req.setTimeout(30000, () => req.destroy(new Error('request timed out')));
    if (body) req.write(body);
    req.end();
  });
}

/** Runs `script` in a Node process of its own (with `flags`, e.g. `--expose-gc`), from the
 * package's directory; asserts that it ended by itself with status 0 and returns what it
 * printed, line by line. */
function runScript(script, flags = []) {
  const run = spawnSync(process.execPath, [...flags, '-e', script], { cwd: path.join(__dirname, '..'), encoding: 'utf8', timeout: 20000 });
  assert.strictEqual(run.error, undefined, 'the program did not end by itself');
  assert.strictEqual(run.status, 0, run.stderr);
  return run.stdout.trim().split('\n');
}

module.exports = { serving, request, runScript };
