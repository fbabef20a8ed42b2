#!/usr/bin/env node
// The parse tree the committed JavaScript parsers (ksy/generated/javascript/, npm runtime kaitai-struct
// 0.11.0) give each file, for the cross-language test (reference_impl/tests/test_ksy_js.py), which builds
// the same tree with the Python parsers and compares the two.
//
//   node --stack-size=N ksy/tree.js < JOBS     JOBS: one JSON [path, grammar] per line
//
// Prints one JSON line per job: {"path", "grammar", "tree"}.  A tree is, per struct, every field and
// every instance that has a value (an instance whose reading throws is "fails"), in name order, with
// "@io" [position, size] of the struct's stream when it is reached; structs are listed flat (below); numbers as tests/test_ksy_js.py encodes them
// (integers as decimal strings, non-finite floats by name); byte arrays as [length, sha256 prefix];
// a file whose parse throws is "fails".  Field names are folded (lower case, no underscores), the
// common form of Python's snake_case and JavaScript's camelCase.
"use strict";

const crypto = require("crypto");
const fs = require("fs");
const path = require("path");
const readline = require("readline");

const GENERATED = path.join(__dirname, "generated", "javascript");
const KaitaiStream = require("kaitai-struct/KaitaiStream");

const CLASSES = {
  python_pickle: "PythonPickle", torch_t7: "TorchT7", torch_t7_ascii: "TorchT7Ascii",
  pytorch_zip: "PytorchZip", pytorch_legacy: "PytorchLegacy", pytorch_tar: "PytorchTar",
};

function fold(name) {
  return name.replace(/_/g, "").toLowerCase();
}

function number(x) {
  if (Number.isNaN(x)) return "nan";
  if (x === Infinity) return "inf";
  if (x === -Infinity) return "-inf";
  if (Number.isInteger(x)) return BigInt(x).toString();
  return x;
}

// The tree as a flat list of structs in pre-order, a struct value being {"#": its index}: a 1,000-level
// tree nests no deeper than that in JSON (JSON.stringify recurses and would overflow).
function value(v, nodes) {
  if (v === undefined || v === null) return undefined;
  if (typeof v === "number") return number(v);
  if (typeof v === "bigint") return v.toString();
  if (typeof v === "boolean" || typeof v === "string") return v;
  if (v instanceof Uint8Array) {
    return [String(v.length), crypto.createHash("sha256").update(v).digest("hex").slice(0, 16)];
  }
  if (Array.isArray(v)) return v.map((x) => value(x, nodes));
  return struct(v, nodes);
}

function struct(obj, nodes) {
  const index = nodes.length;
  const fields = {};
  nodes.push(fields);
  const names = [];
  for (const key of Object.keys(obj)) if (!key.startsWith("_")) names.push([key, false]);
  const proto = Object.getPrototypeOf(obj);
  for (const key of Object.getOwnPropertyNames(proto)) {
    const d = Object.getOwnPropertyDescriptor(proto, key);
    if (d && typeof d.get === "function" && !key.startsWith("_")) names.push([key, true]);
  }
  names.sort((a, b) => (fold(a[0]) < fold(b[0]) ? -1 : fold(a[0]) > fold(b[0]) ? 1 : 0));
  if (obj._io) fields["@io"] = [number(obj._io.pos), number(obj._io.size)];
  for (const [key, isInstance] of names) {
    let v;
    const streams = [obj._io, obj._root && obj._root._io].filter(Boolean).map((io) => [io, io.pos]);
    try {
      v = value(obj[key], nodes);
    } catch (e) {
      if (!isInstance || (e instanceof RangeError && /call stack/.test(String(e.message)))) throw e;
      v = "fails";
      // where a failed read leaves its stream is the runtime's (Python's read_bytes consumes what is
      // left, JavaScript's does not): back to where it was, so later positions are the grammar's
      for (const [io, pos] of streams) io.seek(pos);
    }
    if (v !== undefined) fields[fold(key)] = v;
  }
  return { "#": index };
}

function tree(file, grammar) {
  const cls = require(path.join(GENERATED, CLASSES[grammar] + ".js"))[CLASSES[grammar]];
  const data = fs.readFileSync(file);
  let parsed;
  try {
    parsed = new cls(new KaitaiStream(data.buffer.slice(data.byteOffset, data.byteOffset + data.length)));
  } catch (e) {
    if (e instanceof RangeError && /call stack/.test(String(e.message))) throw e;
    return "fails";
  }
  const nodes = [];
  struct(parsed, nodes);
  return nodes;
}

async function main() {
  const lines = readline.createInterface({ input: process.stdin });
  for await (const line of lines) {
    if (!line.trim()) continue;
    const [file, grammar] = JSON.parse(line);
    process.stdout.write(JSON.stringify({ path: file, grammar, tree: tree(file, grammar) }) + "\n");
  }
}

main().catch((e) => {
  process.stderr.write(`tree.js: ${e && e.stack ? e.stack : e}\n`);
  process.exit(1);
});
