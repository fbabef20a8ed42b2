'use strict';
// The inert values this reader builds (spec/canonical.md#canonical-values), with Python's semantics where
// the file's meaning depends on them: a Python int is a BigInt, a float a number, a bool a boolean, None
// null, a str a string (UTF-16, lone surrogates kept); every other value is one of the classes below.
// Dict keys and set items merge as Python's do (spec/pickle.md#pickle-keys): pyKey gives equal keys the
// same string (True, 1 and 1.0 alike; a torch.Size as its tuple; complex(1, 0) as 1).
const { ERROR_CODES } = require('./facts.js');

class Reject extends Error {
  constructor(code, message) {
    if (!ERROR_CODES.has(code)) throw new Error(`${code} is not in the closed set of error codes`);
    super(`${code}: ${message}`);
    this.code = code;
    this.detail = message;
  }
}

class Decline extends Error {
  constructor(feature) {
    super(`unsupported: ${feature}`);
    this.feature = feature;
  }
}

class Unhashable extends Error {}

/** A NaN float: Python finds a NaN key by identity only (the same object, from the memo or DUP), which a
 * JavaScript number has not; every NaN the machine makes is one of these (spec/pickle.md#pickle-keys). */
class PyNaN { valueOf() { return NaN; } }
const isFloat = (v) => typeof v === 'number' || v instanceof PyNaN;

class PyBytes { constructor(b) { this.b = b; } }
class PyByteArray { constructor(b) { this.b = b; } }
class PyList { constructor(items = []) { this.items = items; } }
class PyTuple { constructor(items = []) { this.items = items; } }

class PyDict {
  constructor() { this.map = new Map(); }
  set(k, v) {
    const key = pyKey(k);
    const known = this.map.get(key);
    if (known) known[1] = v; else this.map.set(key, [k, v]);
  }
  get size() { return this.map.size; }
  has(k) { return this.map.has(pyKey(k)); }
  get(k) { const e = this.map.get(pyKey(k)); return e ? e[1] : undefined; }
  entries() { return this.map.values(); }
}

class ODict extends PyDict {
  constructor() { super(); this.attrs = new Map(); }
}

class PySet {
  constructor() { this.map = new Map(); }
  add(v) { const key = pyKey(v); if (!this.map.has(key)) this.map.set(key, v); }
  values() { return this.map.values(); }
  get size() { return this.map.size; }
}
class PyFrozenSet {
  constructor() { this.map = new Map(); }
  add(v) { const key = pyKey(v); if (!this.map.has(key)) this.map.set(key, v); }
  values() { return this.map.values(); }
  get size() { return this.map.size; }
}

class Global {
  constructor(module, name) { this.module = module; this.name = name; }
  get qualname() { return `${this.module}.${this.name}`; }
}

class Opaque {
  constructor(className, args, state = null) { this.className = className; this.args = args; this.state = state; }
}

class Storage {
  constructor(dtype, numel, device, raw = null, byteOrder = 'little', typed = true) {
    Object.assign(this, { dtype, numel, device, raw, byteOrder, typed, retyped: false, storedWidth: null });
  }
}

class Tensor {
  constructor(dtype, shape, stride, storageOffset, storage, device, requiresGrad = false, parameter = false) {
    Object.assign(this, { dtype, shape, stride, storageOffset, storage, device, requiresGrad, parameter,
      conj: false, neg: false, lua: false });
  }
  get numel() {
    if (this.lua && !this.shape.length) return 0n;
    return this.shape.reduce((a, b) => a * b, 1n);
  }
}

class QuantizedTensor extends Tensor {}

class MetaTensor {
  constructor(dtype, shape, stride, requiresGrad, parameter = false) {
    Object.assign(this, { dtype, shape, stride, requiresGrad, parameter });
  }
}

class SparseTensor {
  constructor(layout, dtype, shape, requiresGrad, parts, isCoalesced = null) {
    Object.assign(this, { layout, dtype, shape, requiresGrad, parts, isCoalesced });
  }
}

class LuaTable { constructor(items = []) { this.items = items; } }
class TorchObject { constructor(className, version, value = null) { Object.assign(this, { className, version, value }); } }
class LuaFunction { constructor(kind, bytecode, upvalues = []) { Object.assign(this, { kind, bytecode, upvalues }); } }

/** A shallow copy of a record (dataclasses.replace). */
function replace(v, fields) {
  return Object.assign(Object.create(Object.getPrototypeOf(v)), v, fields);
}

const identities = new WeakMap();
let nextIdentity = 0;
const keyCache = new WeakMap();

function numberKey(x) {
  if (Number.isNaN(x)) return `nan${nextIdentity++}`; // a NaN equals no other value (PyNaN: by identity)
  if (Number.isInteger(x)) return 'i' + BigInt(x).toString();
  return 'f' + String(x);
}

/** Composite keys name their parts' keys by number: a key of nested tuples grows with its items, not
 * with its depth. */
const interned = new Map();
function intern(key) {
  let n = interned.get(key);
  if (n === undefined) interned.set(key, n = interned.size);
  return n;
}

/** Forget the numbers of the last file's keys (each file is read afresh). */
function resetKeys() { interned.clear(); }

/** The string equal Python keys share; Unhashable for a list, dict, set or bytearray. */
function pyKey(v) {
  if (v === null) return 'N';
  switch (typeof v) {
    case 'boolean': return v ? 'i1' : 'i0';
    case 'bigint': return 'i' + v.toString();
    case 'number': return numberKey(v);
    case 'string': return 's' + v;
    default: break;
  }
  const cached = keyCache.get(v);
  if (cached !== undefined) return cached;
  let key;
  if (v instanceof PyBytes) key = 'b' + Buffer.from(v.b).toString('hex');
  else if (v instanceof PyTuple) key = 't' + v.items.map((x) => intern(pyKey(x))).join(',');
  else if (v instanceof PyFrozenSet) key = 'F' + [...v.map.keys()].map(intern).sort((a, b) => a - b).join(',');
  else if (v instanceof Global) key = 'g' + JSON.stringify([v.module, v.name]);
  else if (v instanceof Opaque && v.className === 'torch.Size' && v.args.length === 1 && v.args[0] instanceof PyTuple) {
    key = pyKey(v.args[0]);
  } else if (v instanceof Opaque && v.className === 'builtins.complex' && v.args.length === 2) {
    key = v.args[1] === 0 ? numberKey(v.args[0]) : 'c' + JSON.stringify(v.args.map(numberKey));
  } else if (v instanceof Opaque && v.className === 'torch.device') {
    key = 'd' + v.args.map((x) => intern(pyKey(x))).join(',');
  } else if (v instanceof PyList || v instanceof PyDict || v instanceof PySet || v instanceof PyByteArray) {
    throw new Unhashable(typeName(v));
  } else {
    let id = identities.get(v);
    if (id === undefined) identities.set(v, id = nextIdentity++);
    key = 'o' + id;
  }
  keyCache.set(v, key);
  return key;
}

/** The Python type name of a value, for messages. */
function typeName(v) {
  if (v === null) return 'NoneType';
  switch (typeof v) {
    case 'boolean': return 'bool';
    case 'bigint': return 'int';
    case 'number': return 'float';
    case 'string': return 'str';
    default: break;
  }
  if (v instanceof PyNaN) return 'float';
  const names = [[PyBytes, 'bytes'], [PyByteArray, 'bytearray'], [PyList, 'list'], [PyTuple, 'tuple'],
    [ODict, 'ODict'], [PyDict, 'dict'], [PyFrozenSet, 'frozenset'], [PySet, 'set'], [Storage, 'Storage'],
    [Tensor, 'Tensor'], [Global, 'Global'], [Opaque, 'Opaque']];
  for (const [cls, name] of names) if (v instanceof cls) return name;
  return v.constructor ? v.constructor.name : 'object';
}

module.exports = { resetKeys, PyNaN, isFloat, Reject, Decline, Unhashable, PyBytes, PyByteArray, PyList, PyTuple, PyDict, ODict, PySet,
  PyFrozenSet, Global, Opaque, Storage, Tensor, QuantizedTensor, MetaTensor, SparseTensor, LuaTable, TorchObject,
  LuaFunction, replace, pyKey, typeName };
