'use strict';
// Served by test/workers.test.js with 1 or 2 worker processes (argv: port workers).
const { setTimeout: sleep } = require('node:timers/promises');
const { App } = require('ferrule');

const app = new App();
app.get('/pid', () => ({ pid: process.pid }));
// A test waits for this file to name a worker before it signals: then the request is in flight.
const started = process.env.FERRULE_TEST_STARTED;
app.get('/slow', { query: { type: 'object', properties: { ms: { type: 'integer', default: 500 } } } }, async ({ query }) => {
  if (started) require('node:fs').appendFileSync(started, `${process.pid}\n`);
  await sleep(query.ms);
  return { pid: process.pid, slept: query.ms };
});
// A child that inherits the worker's IPC channel (descriptor 3) and outlives it, as a
// subprocess a worker started may: the primary sees the worker exit long before its channel
// closes. Its pid goes to the file the test names, which kills it.
const holders = process.env.FERRULE_TEST_CHANNEL_HOLDERS;
if (holders && require('node:cluster').isWorker) {
  const holder = require('node:child_process').spawn('sleep', ['20'], { stdio: ['ignore', 'ignore', 'ignore', 3] });
  require('node:fs').appendFileSync(holders, `${holder.pid}\n`);
  holder.unref();
}
app.listen({ host: '127.0.0.1', port: Number(process.argv[2]), workers: Number(process.argv[3] || 1), threads: 1 }).then((info) => {
  if (info.port) console.error(`ferrule: serving on ${info.port} (pid ${process.pid})`);
});
