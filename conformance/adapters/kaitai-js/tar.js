'use strict';
// tar checkpoints (spec/pt-tar.md).
const V = require('./values.js');

function isTarHeader() { return false; }
function readTar() { throw new V.Decline('pt-tar'); }

module.exports = { isTarHeader, readTar };
