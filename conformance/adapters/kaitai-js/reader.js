'use strict';
// The kaitai-js reader (spec/canonical.md#canonical-reader-cli): `node reader.js PATH` prints PATH's
// canonical description; exit 1 with one stderr line `<code>: <message>` when the file is malformed, exit 2
// `unsupported: <feature>` for what it declines; `node reader.js --batch` answers file after file
// (spec/canonical.md#canonical-reader-batch).  A port of conformance/adapters/kaitai_reader.py: every byte
// layout is read by the generated JavaScript parsers of ksy/ (parsers.js); this folder holds only what a
// grammar cannot say.  Its own bugs keep the contract: an unexpected exception is exit 2
// `unsupported: internal-error (...; a reader bug)`, a RangeError for the call stack or memory exit 1
// `limit-exceeded`.
const fs = require('node:fs');
const readline = require('node:readline');
const V = require('./values.js');
const { describe, toJson } = require('./describe.js');

const ZIP_MAGIC = [0x50, 0x4b, 0x03, 0x04];
/** Bytes an ascii .t7 stream starts with (spec/t7.md#t7-detect): never the first byte of a tar torch wrote. */
const T7_ASCII_START = new Set([...' \t\n\v\f\r+-0123456789'].map((c) => c.charCodeAt(0)));
/** The variables a request's hints set (spec/canonical.md#canonical-t7-hints, its generated table). */
const HINTS = Object.values(require('./facts.js').HINT_ENV);

const startsWith = (b, sig, at = 0) => sig.every((x, i) => b[at + i] === x);
const ascii = (s) => [...s].map((c) => c.charCodeAt(0));

/** What the first bytes plainly are when they are no checkpoint (spec/canonical.md#canonical-detect). */
function notACheckpoint(head) {
  let i = 0;
  while (i < head.length && [0x20, 0x09, 0x0d, 0x0a, 0x0b, 0x0c].includes(head[i])) i++;
  const text = Uint8Array.from(head.subarray(i, i + 64), (c) => (c >= 0x41 && c <= 0x5a ? c + 32 : c));
  for (const [magic, what] of [['version https://git-lfs', 'a git LFS pointer'], ['\x1f\x8b', 'a gzip stream'],
    ['<!doctype', 'an HTML page'], ['<html', 'an HTML page'], ['<?xml', 'an XML document'], ['<error>', 'an XML error body'],
    ['entry not found', "an 'Entry not found' error text"], ['\x93numpy', 'a numpy .npy file']]) {
    if (startsWith(text, ascii(magic))) return what;
  }
  if ((text[0] === 0x7b || text[0] === 0x5b) && [0x22, 0x7b, 0x5b, 0x5d, 0x7d].includes(text[1])) return 'a JSON document';
  if (safetensors(head)) return 'a safetensors file';
  return '';
}

function safetensors(head) {
  if (head.length < 10) return false;
  const n = Number(new DataView(head.buffer, head.byteOffset, 8).getBigUint64(0, true));
  if (head[8] !== 0x7b || head[9] !== 0x22 || !(n > 0 && n <= 100000000) || 8 + n > head.length) return false;
  try {
    const v = JSON.parse(new TextDecoder('utf-8', { fatal: true }).decode(head.subarray(8, 8 + n)));
    return v !== null && typeof v === 'object' && !Array.isArray(v);
  } catch (e) { return false; }
}

function read(path) {
  V.resetKeys();
  const buf = new Uint8Array(fs.readFileSync(path));
  if (!buf.length) throw new V.Reject('truncated', 'empty file');
  const what = notACheckpoint(buf);
  if (what) throw new V.Reject('unknown-format', `this is ${what}`);
  const pt = require('./pt.js');
  let fmt;
  let objects;
  if (startsWith(buf, ZIP_MAGIC)) [fmt, objects] = pt.readZip(buf);
  else if (buf[0] > 8 && !T7_ASCII_START.has(buf[0]) && require('./tar.js').isTarHeader(buf)) [fmt, objects] = require('./tar.js').readTar(buf);
  else if (buf[0] === 0x80 || buf[0] === 0x4c || buf[0] === 0x8a) [fmt, objects] = pt.readLegacy(buf);
  else return require('./t7.js').readT7(buf);
  return describe(fmt, objects);
}

function quote(e) {
  return String((e && e.message) || '').split(/\s+/).join(' ').slice(0, 120);
}

/** [status, stdout text, stderr line] of the command on one file. */
function answer(path) {
  try {
    return [0, toJson(read(path)), ''];
  } catch (e) {
    if (e instanceof V.Reject) return [1, '', `${e.code}: ${e.detail}`];
    if (e instanceof V.Decline) return [2, '', `unsupported: ${e.feature}`];
    if (e instanceof RangeError && /call stack|allocation|Array buffer|Invalid string length|Invalid array length/i.test(e.message)) {
      return [1, '', `limit-exceeded: JavaScript ${e.message} while reading (the reader's own limits did not stop it first: a reader bug)`];
    }
    if (e && (e.code === 'ENOENT' || e.code === 'EACCES' || e.code === 'EISDIR')) return [2, '', `unsupported: unreadable-path (${e.code})`];
    return [2, '', `unsupported: internal-error (${e && e.name}: ${quote(e)}; a reader bug)`];
  }
}

const oneLine = (s) => s.split(/\s+/).join(' ');

/** All of `text` on file descriptor `fd`, however the pipe takes it (a full pipe may refuse a write). */
function writeAll(fd, text) {
  const buf = Buffer.from(text, 'utf8');
  for (let at = 0; at < buf.length;) {
    try { at += fs.writeSync(fd, buf, at); } catch (e) {
      if (e.code !== 'EAGAIN') throw e;
      Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 5);
    }
  }
}

async function batch() {
  console.log = console.error; // answers only on stdout
  const rl = readline.createInterface({ input: process.stdin, crlfDelay: Infinity });
  for await (const line of rl) {
    if (!line.trim()) continue;
    const request = JSON.parse(line);
    for (const name of HINTS) delete process.env[name];
    for (const [k, v] of Object.entries(request.hints || {})) if (HINTS.includes(k)) process.env[k] = String(v);
    const [status, text, err] = answer(request.path);
    const head = `{"id": ${JSON.stringify(request.id)}, "status": ${status}`;
    const body = status === 0 ? `, "description": ${text}}\n` : `, "error": ${JSON.stringify(oneLine(err))}}\n`;
    writeAll(1, head + body);
  }
}

function main(argv) {
  if (argv.length === 1 && argv[0] === '--batch') return batch();
  if (argv.length !== 1) {
    process.stderr.write('unsupported: usage: reader.js PATH\n');
    process.exitCode = 2;
    return null;
  }
  const [status, text, err] = answer(argv[0]);
  if (status === 0) writeAll(1, text + '\n');
  else writeAll(2, oneLine(err) + '\n');
  process.exitCode = status;
  return null;
}

main(process.argv.slice(2));
