#!/usr/bin/env node
'use strict';
// `ferrule openapi <app.js>`: prints the OpenAPI document of the app that <app.js> declares,
// without serving it (for CI to diff, or a client generator to read). The file is loaded with
// FERRULE_PRINT_OPENAPI=1: an app that listens when loaded prints its document from listen()
// and exits there; one that only exports itself (`module.exports = app`, or `{ app }`) is
// printed here.
const fs = require('node:fs');
const path = require('node:path');

function fail(message) {
  process.stderr.write(`ferrule: ${message}\n`);
  process.exit(1);
}

const [command, file, ...rest] = process.argv.slice(2);
if (command !== 'openapi' || !file || rest.length > 0) fail('usage: ferrule openapi <app.js>');
process.env.FERRULE_PRINT_OPENAPI = '1';
const { App } = require('./index.js');
let exported;
try {
  exported = require(path.resolve(file));
} catch (error) {
  fail(`cannot load ${file}: ${error.message}`);
}
const app = exported instanceof App ? exported : exported?.app instanceof App ? exported.app : null;
if (app === null) fail(`${file} neither listens nor exports a ferrule App (module.exports = app, or { app })`);
fs.writeSync(1, JSON.stringify(app.openapi(), null, 2) + '\n');
