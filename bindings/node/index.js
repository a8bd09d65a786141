'use strict';
// Loads the native addon built from bindings/node (ferrule.node sits beside this file).
const native = require('./ferrule.node');

module.exports = {
  version: native.version,
  problemJson: native.problemJson,
};
