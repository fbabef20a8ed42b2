'use strict';
// .t7 streams (spec/t7.md): not read by this reader yet; declined.
const V = require('./values.js');

function readT7() {
  throw new V.Decline('t7 (the kaitai-js reader reads .pt files only)');
}

module.exports = { readT7 };
