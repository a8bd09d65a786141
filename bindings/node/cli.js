#!/usr/bin/env node
'use strict';
// `ferrule openapi <app.js>`: prints the OpenAPI document of the app that <app.js> declares,
// without serving it (for CI to diff, or a client generator to read). The file is loaded with
// FERRULE_PRINT_OPENAPI=1: an app that listens when loaded prints its document from listen()
// and exits there; one that only exports itself (`module.exports = app`, or `{ app }`) is
// printed here.
// `ferrule <app.js> --reload [--reload-dir DIR]…`: development: runs `node <app.js>` and runs it
// again when a .js, .mjs, .cjs or .json file changes (the core's supervisor, as Python's and
// Ruby's --reload).
const fs = require('node:fs');
const path = require('node:path');

const USAGE = 'usage: ferrule openapi <app.js> | ferrule <app.js> --reload [--reload-dir DIR]...';

function fail(message) {
  process.stderr.write(`ferrule: ${message}\n`);
  process.exit(1);
}

const args = process.argv.slice(2);
if (args.includes('--reload')) {
  const dirs = [];
  const rest = [];
  for (let i = 0; i < args.length; i++) {
    if (args[i] === '--reload') continue;
    if (args[i] === '--reload-dir') dirs.push(path.resolve(args[++i] ?? fail(USAGE)));
    else rest.push(args[i]);
  }
  if (rest.length !== 1) fail(USAGE);
  const native = require('./ferrule.node');
  // The supervisor handles SIGINT and SIGTERM. Node's own handlers for them restore the
  // terminal and re-raise, which the supervisor's handler chains to: listeners replace them
  // with libuv's, which only wake an event loop that the blocking call below never runs.
  for (const signal of ['SIGINT', 'SIGTERM']) process.on(signal, () => {});
  process.exitCode = native.reload([process.execPath, path.resolve(rest[0])], dirs.length ? dirs : [process.cwd()], ['.js', '.mjs', '.cjs', '.json'], 200);
  return;
}
const [command, file, ...rest] = args;
if (command !== 'openapi' || !file || rest.length > 0) fail(USAGE);
process.env.FERRULE_PRINT_OPENAPI = '1';
const { App } = require('./index.js');
// Loaded with import(), which takes CommonJS and ES modules alike: an ES module app (the
// README's) may await listen() at its top level, which require() cannot load.
import(require('node:url').pathToFileURL(path.resolve(file)).href).then((namespace) => {
  const exported = namespace.default ?? namespace;
  const app = [exported, exported?.app, namespace.app].find((candidate) => candidate instanceof App);
  if (app === undefined) fail(`${file} neither listens nor exports a ferrule App (module.exports = app, or { app }; export default app, or export { app })`);
  fs.writeSync(1, JSON.stringify(app.openapi(), null, 2) + '\n');
}, (error) => fail(`cannot load ${file}: ${error.message}`));
