'use strict';
// .t7 streams through torch_t7.ksy (binary) and torch_t7_ascii.ksy (spec/t7.md), a port of
// conformance/adapters/kaitai/t7.py.  The grammars thread the reference index and reject what breaks it;
// this module gives the parsed objects their meaning: back-references, tensors over storages, tables,
// functions and torch objects (spec/t7.md#t7-reference-index, #t7-tensor, #t7-torch-object, #t7-function,
// #t7-tds).  The generated parsers keep no partial result and the JS runtime names no src_path, so every
// generated type's _read is wrapped to keep the objects still being read (`reading`): after a failure they
// say where it happened and what a reader would have met first, as the Python adapter finds them in the
// failure's frames.
const { BY_T7_CLASS, HINT_ENV, LIMITS } = require('./facts.js');
const V = require('./values.js');
const P = require('./parsers.js');
const T = require('./text.js');
const { describe } = require('./describe.js');

const K = P.KaitaiStream;
const ASCII_START = new Set([...' \t\n\v\f\r+-0123456789'].map((c) => c.charCodeAt(0)));
const FUNCTION_KINDS = { lua_function: 'function', legacy_recur_function: 'legacy_recursive', recur_function: 'recursive' };
const { T7_NDIM: MAX_NDIM, T7_DEPTH: MAX_NESTING, T7_OBJECTS: MAX_OBJECTS } = LIMITS;
const INT_TOKEN = /^[+-]?[0-9]+$/;
/** What LuaJIT 2.1's tonumber accepts (spec/t7.md#t7-class-version), anchored. */
const LUA_NUMBER = /^[+-]?(?:0[xX](?:[0-9a-fA-F]+(?:\.[0-9a-fA-F]*)?|\.[0-9a-fA-F]+)(?:[pP][+-]?[0-9]+)?|0[bB][01]+|(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:[eE][+-]?[0-9]+)?|[iI][nN][fF](?:[iI][nN][iI][tT][yY])?|[nN][aA][nN])$/;
const INT_RANGES = { uint8: [0n, 255n], int8: [-128n, 127n], int16: [-(1n << 15n), (1n << 15n) - 1n],
  int32: [-(1n << 31n), (1n << 31n) - 1n], int64: [-(1n << 63n), (1n << 63n) - 1n] };

// -- the objects still being read
const reading = [];
let wrapped = false;

/** A token of an ascii token array as text: torch_t7_ascii.ksy keeps tokens as bytes, checked ASCII by the
 * grammar (runtimes decode text differently). */
function tokenText(t) { return typeof t === 'string' ? t : Buffer.from(t).toString('latin1'); }

function wrapGrammars() {
  if (wrapped) return;
  wrapped = true;
  const types = [...Object.values(P.TorchT7.TorchT7.Stream), ...Object.values(P.TorchT7Ascii.TorchT7Ascii)]
    .filter((t) => typeof t === 'function' && t.prototype && t.prototype._read);
  // spec/t7.md#t7-class-version: a `V <x>` header is a version only when <x> is a Lua number, which no
  // Kaitai expression can say (the grammars take every `V ` header for one): once a torch object's first
  // string is read, its has_version is settled here (the grammar's instance keeps a value it finds set)
  for (const Type of types) {
    const read = Type.prototype._read;
    const header = Type.name === 'AsciiString';
    Type.prototype._read = function () {
      reading.push(this);
      read.call(this);
      reading.pop();
      const owner = this._parent;
      if (header && typeName(owner) === 'TorchObject' && owner.versionOrClass === undefined) {
        owner._m_hasVersion = this.value.startsWith('V ') && isLuaNumber(this.value.slice(2));
      }
    };
  }
}

const typeName = (o) => o && o.constructor && o.constructor.name;

function isLuaNumber(text) {
  return LUA_NUMBER.test(text.replace(/^[ \t\n\v\f\r]+|[ \t\n\v\f\r]+$/g, ''));
}

/** The code a failed `valid:` of a t7 grammar stands for, by the type that was being read. */
function t7Failure(e, what) {
  const inner = reading[reading.length - 1];
  const kind = typeName(inner);
  const validation = e instanceof K.ValidationNotInEnumError || e instanceof K.ValidationNotAnyOfError
    || e instanceof K.ValidationLessThanError || e instanceof K.ValidationGreaterThanError
    || e instanceof K.ValidationExprError || e instanceof K.ValidationNotEqualError;
  let code = null;
  if (validation && kind === 'T7Object' && !(e instanceof K.ValidationNotEqualError)) code = 'bad-type-code';
  else if (validation && kind === 'Indexed') code = 'bad-reference';
  else if (validation && ['LuaString', 'AsciiString', 'TableBody', 'FunctionBody', 'Tensor', 'Storage', 'TdsHash', 'TdsVec'].includes(kind)
    && !(e instanceof K.ValidationNotEqualError)
    && !(e instanceof K.ValidationExprError && e.actual instanceof Uint8Array)) code = 'bad-length';
  // (an expression over a text's bytes, its encoding, is bad-value: the default)
  return P.fromKaitai(e, 'torch_t7', what, code);
}

function hints() {
  const out = {};
  for (const [k, v] of Object.entries(HINT_ENV)) if (process.env[v]) out[k] = process.env[v];
  return out;
}

function classInfo(name) {
  for (const [kind, suffix] of [['tensor', 'Tensor'], ['storage', 'Storage']]) {
    if (name.startsWith('torch.') && name.endsWith(suffix) && name.length >= 6 + suffix.length) {
      let stem = name.slice(6, name.length - suffix.length);
      let device = 'cpu';
      if (stem.startsWith('Cuda')) { stem = stem.slice(4) || 'Float'; device = 'cuda'; }
      if (BY_T7_CLASS[stem]) return [kind, BY_T7_CLASS[stem], device];
    }
  }
  if (name === 'tds.Hash' || name === 'tds_hash') return ['tds_hash', null, 'cpu'];
  if (name === 'tds.Vec') return ['tds_vec', null, 'cpu'];
  if (name === 'torch.Generator') throw new V.Decline('t7 class torch.Generator (its write() dumps a C struct)');
  return ['generic', null, 'cpu'];
}

function hexFloat(body) {
  const m = /^0x([0-9a-f]*)(?:\.([0-9a-f]*))?(?:p([+-]?[0-9]+))?$/.exec(body);
  if (!m || (!m[1] && !m[2])) return null;
  const digits = (m[1] || '') + (m[2] || '');
  let v = 0;
  for (const c of digits) v = v * 16 + parseInt(c, 16);
  return v * 2 ** ((m[3] ? Number(m[3]) : 0) - 4 * (m[2] || '').length);
}

/** A double as C's strtod reads it (decimal, hexadecimal, inf, nan with a sign). */
function cDouble(token) {
  const t = token.trim().toLowerCase();
  const sign = t.startsWith('-') ? -1 : 1;
  const body = t.replace(/^[+-]+/, '');
  if (body === 'nan') return NaN;
  let value = null;
  if (body.startsWith('0x')) value = hexFloat(body);
  else if (body === 'inf' || body === 'infinity') value = Infinity;
  else if (/^(?:[0-9](?:_?[0-9])*(?:\.(?:[0-9](?:_?[0-9])*)?)?|\.[0-9](?:_?[0-9])*)(?:e[+-]?[0-9](?:_?[0-9])*)?$/.test(body)) value = Number(body.replace(/_/g, ''));
  if (value === null || Number.isNaN(value)) throw new V.Reject('bad-value', `${JSON.stringify(token.slice(0, 40))} is not a number`);
  return sign * value;
}

function intToken(token) {
  if (!INT_TOKEN.test(token)) throw new V.Reject('bad-value', `${JSON.stringify(token.slice(0, 40))} is not an integer token`);
  if (token.replace(/^[+-]/, '').replace(/^0+/, '').length > 19) throw new V.Reject('bad-value', `an integer token of ${token.length} characters is out of range`);
  return BigInt(token);
}

/** float32 bits -> float16 bits, rounding to nearest even (numpy's astype). */
function halfBits(f) {
  const buf = new DataView(new ArrayBuffer(4));
  buf.setFloat32(0, f);
  const x = buf.getUint32(0);
  const sign = (x >>> 16) & 0x8000;
  const exp = (x >>> 23) & 0xff;
  let mant = x & 0x7fffff;
  if (exp === 0xff) return sign | 0x7c00 | (mant ? 0x200 | (mant >>> 13) : 0);
  let e = exp - 127 + 15;
  if (e >= 0x1f) return sign | 0x7c00;
  if (e <= 0) {
    if (e < -10) return sign;
    mant |= 0x800000;
    const shift = 14 - e;
    let h = mant >>> shift;
    const rem = mant & ((1 << shift) - 1);
    const half = 1 << (shift - 1);
    if (rem > half || (rem === half && (h & 1))) h++;
    return sign | h;
  }
  let h = (e << 10) | (mant >>> 13);
  const rem = mant & 0x1fff;
  if (rem > 0x1000 || (rem === 0x1000 && (h & 1))) h++;
  return sign | h;
}

function keyIdentity(key) {
  if (key === null) throw new V.Reject('bad-value', 'a table key is nil');
  if (typeof key === 'number') {
    if (Number.isNaN(key)) throw new V.Reject('bad-value', 'a table key is NaN');
    return 'n' + String(key + 0);
  }
  if (typeof key === 'string') return 's' + key;
  if (key instanceof V.PyBytes) return 'b' + Buffer.from(key.b).toString('hex');
  if (typeof key === 'boolean') return 'B' + key;
  return V.pyKey(key);
}

function luaString(raw) {
  try { return T.utf8(raw); } catch (e) { return new V.PyBytes(Uint8Array.from(raw)); }
}

const PENDING = Symbol('pending');
const code = (o, TC) => TC[o.typeCode].toLowerCase();

class Builder {
  constructor(ascii, longSize, big, TC) { Object.assign(this, { ascii, longSize, big, TC, index: new Map(), longsRead: false, objects: 0 }); }

  int(x) { return x !== null && typeof x === 'object' ? BigInt(x.value) : BigInt(x); }
  tokens(arr) { return [...(arr.leading || []), ...(arr.lastToken !== undefined ? [arr.lastToken] : [])].map(tokenText); }
  ints(x) { return this.ascii ? this.tokens(x).map(intToken) : x.map((v) => BigInt(v.value)); }

  value(o) {
    if (++this.objects > MAX_OBJECTS) throw new V.Reject('limit-exceeded', `the stream holds more than ${MAX_OBJECTS} objects`);
    const tc = code(o, this.TC);
    if (tc === 'lua_nil') return null;
    if (tc === 'number') return this.ascii ? cDouble(o.number.text) : o.number;
    if (tc === 'boolean') {
      const flag = this.int(o.luaBoolean);
      if (flag !== 0n && flag !== 1n) throw new V.Reject('bad-value', `boolean ${flag} is neither 0 nor 1`);
      return flag === 1n;
    }
    if (tc === 'string') return luaString(o.string.value);
    if (tc === 'lua_function') return this.func(o.luaFunction, tc, null);
    const ix = o.indexed;
    const idx = ix.index;
    if (!ix.isNew) return this.reference(tc, idx);
    if (tc === 'table') return this.table(ix.table, idx);
    if (tc === 'torch') return this.torch(ix.torch, idx);
    return this.func(ix.luaFunction, tc, idx);
  }

  reference(tc, idx) {
    const obj = this.index.get(idx);
    if (obj === undefined || obj === PENDING) throw new V.Reject('bad-reference', `index ${idx} names an object still being read`);
    const kind = obj instanceof V.LuaTable ? 'table' : obj instanceof V.LuaFunction ? 'function' : 'torch';
    const want = tc === 'table' ? 'table' : tc === 'torch' ? 'torch' : 'function';
    if (kind !== want) throw new V.Reject('bad-reference', `a ${tc} reference to index ${idx}, which is a ${kind}`);
    return obj;
  }

  table(body, idx) {
    const t = new V.LuaTable();
    this.index.set(idx, t);
    this.pairs(t, body.pairs, 'table');
    return t;
  }

  pairs(t, pairs, what, tds = false) {
    const seen = new Set();
    for (const kv of pairs) {
      const key = this.value(kv.key);
      const val = this.value(kv.value);
      const ident = keyIdentity(key);
      if (tds && !'nsb'.includes(ident[0])) throw new V.Reject('bad-value', 'a tds.Hash key is neither a string nor a number');
      if (seen.has(ident)) throw new V.Reject('bad-value', `${what} key appears twice`);
      seen.add(ident);
      if (val !== null) t.items.push([key, val]);
    }
  }

  func(body, tc, idx) {
    const bytecode = this.ascii ? body.bytecode.value : body.bytecode;
    const f = new V.LuaFunction(FUNCTION_KINDS[tc], Uint8Array.from(bytecode));
    if (idx !== null) this.index.set(idx, f);
    const ups = this.value(body.upvalues);
    if (!(ups instanceof V.LuaTable)) throw new V.Reject('bad-value', "a function's upvalues are not a table");
    const byKey = new Map();
    for (const [k, v] of ups.items) {
      if (!(typeof k === 'number' && Number.isInteger(k) && k >= 1)) throw new V.Reject('bad-value', 'the upvalue table has a key that is no index');
      byKey.set(k, v);
    }
    const max = Math.max(0, ...byKey.keys());
    if (max !== byKey.size) throw new V.Reject('bad-value', "the upvalue table's keys are not 1..n");
    f.upvalues = [...Array(byKey.size).keys()].map((i) => byKey.get(i + 1));
    if (tc === 'recur_function' && !f.upvalues.every((v) => v instanceof V.LuaTable)) throw new V.Reject('bad-value', 'a type 8 upvalue is not a {name, value} table');
    return f;
  }

  torch(body, idx) {
    const name = body.className;
    const version = body.hasVersion ? body.version : null;
    if (!name) throw new V.Reject('bad-value', 'empty class name');
    const [kind, dtype, device] = classInfo(name);
    const payload = body.payload;
    if (kind === 'tensor') return this.tensor(payload, idx, dtype, device);
    if (kind === 'storage') {
      const s = this.storage(payload, dtype, device);
      this.index.set(idx, s);
      return s;
    }
    if (kind === 'tds_hash' || kind === 'tds_vec') this.longsRead = true;
    if (kind === 'tds_hash') {
      const obj = new V.TorchObject(name, version, new V.LuaTable());
      this.index.set(idx, obj);
      this.pairs(obj.value, payload.pairs, 'tds.Hash', true);
      return obj;
    }
    if (kind === 'tds_vec') {
      const obj = new V.TorchObject(name, version, new V.PyList());
      this.index.set(idx, obj);
      for (const item of payload.items) obj.value.items.push(this.value(item));
      return obj;
    }
    const obj = new V.TorchObject(name, version);
    this.index.set(idx, obj);
    if (code(payload, this.TC) !== 'table') {
      throw new V.Reject('bad-value', `the payload of torch class ${name} is not a table of fields (a class with its own write() is not readable generically)`);
    }
    obj.value = this.value(payload);
    return obj;
  }

  tensor(p, idx, dtype, device) {
    this.longsRead = true;
    this.index.set(idx, PENDING);
    const ndim = this.int(p.numDims);
    if (ndim > BigInt(MAX_NDIM)) throw new V.Reject('limit-exceeded', `a tensor of ${ndim} dimensions`);
    const sizes = this.ints(p.sizes);
    const strides = this.ints(p.strides);
    const offset = this.int(p.storageOffset) - 1n;
    if (sizes.some((s) => s < 0n) || strides.some((s) => s < 0n)) throw new V.Reject('bad-length', 'negative size or stride');
    if (offset < 0n) throw new V.Reject('out-of-bounds', `storage offset ${offset + 1n} is below 1`);
    const storage = this.value(p.storage);
    if (storage !== null && !(storage instanceof V.Storage && storage.dtype === dtype && storage.device === device)) {
      throw new V.Reject('bad-value', `a ${device} ${dtype.name} tensor's storage is ${V.typeName(storage)}, not a matching storage`);
    }
    const t = new V.Tensor(dtype, sizes, strides, offset, storage, device);
    t.lua = true;
    if (t.numel) {
      if (storage === null) throw new V.Reject('out-of-bounds', `a tensor of ${t.numel} elements has no storage`);
      let last = offset;
      sizes.forEach((n, i) => { last += (n - 1n) * strides[i]; });
      if (last >= BigInt(storage.numel)) throw new V.Reject('out-of-bounds', `the view reaches element ${last} of a storage of ${storage.numel}`);
    }
    this.index.set(idx, t);
    return t;
  }

  storage(p, dtype, device) {
    this.longsRead = true;
    const n = this.int(p.numElements);
    if (n < 0n) throw new V.Reject('bad-length', `negative storage size ${n}`);
    if (!this.ascii) {
      const s = new V.Storage(dtype, n, device, p.data, this.big ? 'big' : 'little');
      if (p.elementSize !== dtype.itemsize) s.storedWidth = p.elementSize;
      return s;
    }
    if (p.raw !== undefined) return new V.Storage(dtype, n, device, p.raw);
    const toks = this.tokens(p.tokens);
    const w = dtype.itemsize;
    const raw = new Uint8Array(toks.length * w);
    const dv = new DataView(raw.buffer);
    if (INT_RANGES[dtype.name]) {
      const [lo, hi] = INT_RANGES[dtype.name];
      toks.forEach((t, i) => {
        const v = intToken(t);
        if (v < lo || v > hi) throw new V.Reject('bad-value', `a ${dtype.name} storage value out of range`);
        if (w === 8) dv.setBigInt64(i * 8, v, true);
        else if (w === 4) dv.setInt32(i * 4, Number(v), true);
        else if (w === 2) dv.setInt16(i * 2, Number(v), true);
        else raw[i] = Number(BigInt.asUintN(8, v));
      });
    } else {
      toks.forEach((t, i) => {
        const d = cDouble(t);
        // a NaN's sign as C's strtod gives it, written as bits: V8 keeps or drops a NaN's sign bit as
        // it optimises, so -NaN is never left to a number
        const negNaN = Number.isNaN(d) && t.trim().startsWith('-');
        if (dtype.name === 'float64' && Number.isNaN(d)) dv.setBigUint64(i * 8, negNaN ? 0xfff8000000000000n : 0x7ff8000000000000n, true);
        else if (dtype.name === 'float32' && Number.isNaN(d)) dv.setUint32(i * 4, negNaN ? 0xffc00000 : 0x7fc00000, true);
        else if (dtype.name === 'float64') dv.setFloat64(i * 8, d, true);
        else if (dtype.name === 'float32') dv.setFloat32(i * 4, d, true);
        else dv.setUint16(i * 2, Number.isNaN(d) ? 0x7fff : halfBits(Math.fround(d)), true);
      });
    }
    return new V.Storage(dtype, n, device, raw);
  }
}

function sniffByteOrder(head) {
  for (let pos = 0; pos + 3 < head.length; pos += 4) {
    const w = head.subarray(pos, pos + 4);
    if (w.some((b) => b)) {
      if (w[0] > 0 && w[0] <= 8 && !w[1] && !w[2] && !w[3]) return 'little';
      if (w[3] > 0 && w[3] <= 8 && !w[0] && !w[1] && !w[2]) return 'big';
      throw new V.Reject('bad-type-code', `${Buffer.from(w).toString('hex')} at byte ${pos} is no type code in either byte order`);
    }
  }
  return null;
}

/** The first problem, in reading order, of the objects still being read when the parse failed (see
 * kaitai/t7.py _partial_error): outermost first. */
function partialError(TC) {
  let depth = 0;
  const seen = new Set();
  for (const obj of [...reading]) {
    const kind = typeName(obj);
    if (['TableBody', 'TorchObject', 'FunctionBody'].includes(kind) && !seen.has(obj)) {
      seen.add(obj);
      if (++depth > MAX_NESTING) return new V.Reject('limit-exceeded', `objects nest deeper than ${MAX_NESTING}`);
    }
    let found = null;
    try { found = frameError(obj, TC); } catch (e) { found = null; }
    if (found) return found;
  }
  return null;
}

function frameError(obj, TC) {
  const kind = typeName(obj);
  const parent = obj._parent;
  const pkind = typeName(parent);
  const tc = obj.typeCode !== undefined && Object.prototype.hasOwnProperty.call(TC, obj.typeCode) ? TC[obj.typeCode].toLowerCase() : null;
  if (kind === 'T7Object' && tc !== null) {
    if (pkind === 'TorchObject' && parent.payload === undefined && tc !== 'table' && classInfo(parent.className)[0] === 'generic') {
      return new V.Reject('bad-value', `the payload of torch class ${parent.className} starts with type code ${tc}, not a table of fields (a class with its own write() is not readable generically)`);
    }
    if (pkind === 'FunctionBody' && parent.upvalues === undefined && tc !== 'table') {
      return new V.Reject('bad-value', `a function's upvalues start with type code ${tc}, not a table`);
    }
    if (pkind === 'Tensor' && parent.storage === undefined && tc !== 'lua_nil' && tc !== 'torch') {
      return new V.Reject('bad-value', `a tensor's storage starts with type code ${tc}, not a storage`);
    }
  }
  if (kind === 'TorchObject' && obj.versionOrClass !== undefined && (!obj.hasVersion || obj.classAfterVersion !== undefined) && !obj.className) {
    return new V.Reject('bad-value', 'empty class name');
  }
  if ((kind === 'TableBody' || kind === 'TdsHash') && obj.pairs !== undefined) {
    const seen = new Set();
    for (const kv of obj.pairs) {
      const kc = TC[kv.key.typeCode].toLowerCase();
      let ident;
      if (kc === 'lua_nil') return new V.Reject('bad-value', 'a table key is nil');
      if (kc === 'number') {
        const n = kv.key.number;
        const value = typeof n === 'number' ? n : cDouble(n.text);
        if (Number.isNaN(value)) return new V.Reject('bad-value', 'a table key is NaN');
        ident = 'n' + String(value + 0);
      } else if (kc === 'string') ident = 's' + Buffer.from(kv.key.string.value).toString('hex');
      else continue;
      if (seen.has(ident)) return new V.Reject('bad-value', 'a table key appears twice');
      seen.add(ident);
    }
  }
  if (kind === 'Tensor' && obj.storageOffset !== undefined) {
    let longs;
    if (obj.sizes && obj.sizes.numItems !== undefined) {
      longs = [...(obj.sizes.leading || []), obj.sizes.lastToken ?? '0', ...(obj.strides.leading || []), obj.strides.lastToken ?? '0'].map((t) => BigInt(tokenText(t)));
    } else longs = [...obj.sizes, ...obj.strides].map((v) => BigInt(v.value));
    const offset = BigInt(obj.storageOffset.value);
    if (longs.some((v) => v < 0n)) return new V.Reject('bad-length', 'a tensor with negative sizes or strides');
    if (offset < 1n) return new V.Reject('out-of-bounds', `a tensor with storage offset ${offset} (below 1)`);
  }
  return null;
}

function onlyTail(buf, pos, ascii) {
  const rest = buf.subarray(pos, Math.min(buf.length, pos + 4096));
  if (rest.length === 4096) return false;
  if (ascii) {
    let r = rest;
    if (r.length && r[r.length - 1] === 0 && !(r.length > 1 && r[r.length - 2] === 0)) r = r.subarray(0, r.length - 1);
    return r.every((b) => [0x20, 0x09, 0x0a, 0x0b, 0x0c, 0x0d].includes(b));
  }
  return rest.length === 1 && rest[0] === 0;
}

function checkNesting(values) {
  const seen = new Set();
  const stack = values.map((v) => [v, 0]).reverse();
  while (stack.length) {
    const [v, depth] = stack.pop();
    let kids;
    if (v instanceof V.LuaTable) kids = v.items.flat();
    else if (v instanceof V.TorchObject) kids = [v.value];
    else if (v instanceof V.LuaFunction) kids = v.upvalues;
    else if (v instanceof V.PyList) kids = v.items;
    else continue;
    if (seen.has(v)) continue;
    seen.add(v);
    if (depth + 1 > MAX_NESTING) throw new V.Reject('limit-exceeded', `the description would nest objects deeper than ${MAX_NESTING}`);
    for (let i = kids.length - 1; i >= 0; i--) stack.push([kids[i], depth + 1]);
  }
}

/** One reading of the stream: its description, or the failure and how far it got. */
function attempt(buf, mode, longSize = 8, byteOrder = 'little') {
  const out = { description: null, error: null, reach: 0, longsRead: false };
  const io = new K(buf.buffer, buf.byteOffset);
  const ascii = mode === 'ascii';
  const TC = ascii ? P.TorchT7Ascii.TorchT7Ascii.TypeCode : P.TorchT7.TorchT7.TypeCode;
  let parseObject;
  if (ascii) parseObject = (maxIndex) => new P.TorchT7Ascii.TorchT7Ascii.T7Object(io, null, null, maxIndex);
  else {
    const root = new P.TorchT7.TorchT7(io);
    parseObject = (maxIndex) => new P.TorchT7.TorchT7.Stream.T7Object(io, null, root, byteOrder !== 'big', longSize, maxIndex);
  }
  const b = new Builder(ascii, longSize, byteOrder === 'big', TC);
  const values = [];
  let maxIndex = 0;
  const what = `${mode} t7 stream (long ${longSize}, ${byteOrder}-endian)`;
  try {
    while (!io.isEof() && !onlyTail(buf, io.pos, ascii)) {
      reading.length = 0;
      let o;
      try { o = parseObject(maxIndex); } catch (e) {
        if (e instanceof RangeError && /call stack/.test(e.message)) throw e;
        const partial = partialError(TC);
        if (!partial && ascii && e instanceof K.ValidationNotAnyOfError && typeof e.actual === 'string' && !INT_TOKEN.test(e.actual)) {
          out.error = new V.Reject('bad-value', `${JSON.stringify(e.actual.slice(0, 40))} is not an integer token`);
        } else out.error = partial || t7Failure(e, what);
        out.reach = io.pos;
        return out;
      }
      reading.length = 0;
      values.push(b.value(o));
      maxIndex = o.lastIndex;
    }
    if (!values.length) throw new V.Reject('truncated', 'the stream holds no object');
    out.longsRead = b.longsRead;
    checkNesting(values);
    out.description = describe(`t7-${mode}`, values, null);
  } catch (e) {
    if (!(e instanceof V.Reject || e instanceof V.Decline)) throw e;
    out.reach = io.pos;
    out.error = e;
  }
  return out;
}

function result(a) {
  if (a.error) throw a.error;
  return a.description;
}

function readT7(buf) {
  wrapGrammars();
  const h = hints();
  let mode = h.mode;
  if (mode === undefined) {
    if (buf[0] <= 8) mode = 'binary';
    else if (ASCII_START.has(buf[0])) mode = 'ascii';
    else throw new V.Reject('unknown-format', `first byte 0x${buf[0].toString(16).padStart(2, '0')} starts neither a binary nor an ascii .t7 stream`);
  }
  if (mode === 'ascii') return result(attempt(buf, 'ascii'));
  const order = h.byte_order || sniffByteOrder(buf.subarray(0, 512)) || 'little';
  const sizes = h.long_size ? [Number(h.long_size)] : [8, 4];
  const first = attempt(buf, 'binary', sizes[0], order);
  if (sizes.length === 1 || (first.description && !first.longsRead)) return result(first);
  const second = attempt(buf, 'binary', sizes[1], order);
  if (first.description && second.description) {
    const ones = [first, second].filter((a) => a.description.objects.length === 1);
    if (!ones.length) throw new V.Reject('ambiguous', 'the stream reads completely both with 8-byte and with 4-byte longs, neither as one object; give the long size as a hint');
    return ones[0].description;
  }
  if (first.description) return first.description;
  if (second.description) return second.description;
  return result(second.reach > first.reach ? second : first);
}

module.exports = { readT7 };
