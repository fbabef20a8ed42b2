'use strict';
// A stack machine over the opcodes python_pickle.ksy parses (spec/pickle.md), a port of
// conformance/adapters/kaitai/pickle_vm.py: the grammar's `op` type reads each opcode and its argument,
// one at a time, and this module gives them their meaning without running anything.  Globals are looked
// up in the allowlist (spec/pickle.md#pickle-globals, read by facts.js); an allowed callable is applied by
// rebuild.js.
const { ALLOWLIST, LIMITS, OPCODES } = require('./facts.js');
const V = require('./values.js');
const T = require('./text.js');
const parsers = require('./parsers.js');

const MODULE_RENAMES = { __builtin__: 'builtins', copy_reg: 'copyreg', 'torch.tensor': 'torch._tensor' };
const { OPEN_MARKS: MAX_MARKS, INT_BYTES: MAX_INT_BYTES, INT_DIGITS: MAX_DIGITS, PICKLE_OPCODES: MAX_OPCODES,
  CALL_WORK: MAX_CALL_WORK, VALUE_DEPTH: MAX_DEPTH } = LIMITS;
const TEXT_PER_WORK = 64;
/** spec/pickle.md#pickle-number-text: the anchored grammars of the text number arguments. */
const NUMBER_TEXT = {
  INT: /^(?:0|-?[1-9][0-9]*)$/,
  LONG: /^(?:0|-?[1-9][0-9]*)L?$/,
  GET: /^-?[0-9]+$/,
  PUT: /^-?[0-9]+$/,
  FLOAT: /^[+-]?(?:(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?|inf|infinity|nan)$/i,
};
/** Opcode bytes by name, from the spec's table. */
const CODE = Object.fromEntries([...OPCODES].map(([byte, op]) => [op.name, byte]));

/** An opcode's argument: python_pickle.ksy keeps structures in `arg` and numbers in `int_arg`, `u4_arg`
 * (LONG_BINGET/PUT), `u8_arg` (FRAME) and `float_arg` (BINFLOAT); absent for opcodes that take none. */
function argOf(op) {
  for (const v of [op.arg, op.intArg, op.u4Arg, op.u8Arg, op.floatArg]) if (v !== undefined) return v;
  return undefined;
}

function decimal(text, what) {
  if (!NUMBER_TEXT[what].test(text)) {
    throw new V.Reject('bad-value', `${what} argument ${JSON.stringify(text.slice(0, 40))} is not a decimal of its grammar`);
  }
  const body = text.replace(/^-/, '').replace(/L$/, '');
  if (body.length > MAX_DIGITS) throw new V.Reject('limit-exceeded', `${what} argument of ${body.length} digits (limit ${MAX_DIGITS})`);
  return BigInt(body) * (text.startsWith('-') ? -1n : 1n);
}

/** A signed little-endian integer of any width (LONG1, LONG4). */
function longBytes(b) {
  if (!b.length) return 0n;
  let v = 0n;
  for (let i = b.length - 1; i >= 0; i--) v = (v << 8n) | BigInt(b[i]);
  if (b[b.length - 1] & 0x80) v -= 1n << BigInt(8 * b.length);
  return v;
}

/** A Python float() of a FLOAT argument that passed its grammar. */
function pyFloat(text) {
  const t = text.toLowerCase().replace(/^\+/, '');
  const neg = t.startsWith('-');
  const body = neg ? t.slice(1) : t;
  if (body === 'inf' || body === 'infinity') return neg ? -Infinity : Infinity;
  if (body === 'nan') return NaN;
  return Number(t);
}

/** The opcodes of the pickle at `io`'s position, parsed one at a time with python_pickle.ksy's `op`
 * type; `record`: the pickle is a record of its own, which ending between two opcodes leaves without STOP
 * (`bad-pickle`, where a stream's pickle running into the end of the file is `truncated`). */
function* opsFrom(io, record = false) {
  for (;;) {
    if (record && io.isEof()) throw new V.Reject('bad-pickle', 'the pickle ends without STOP');
    const start = io.pos;
    let op;
    try {
      op = new parsers.PythonPickle.PythonPickle.Op(io, null, null);
    } catch (e) {
      throw opFailure(e, io, start);
    }
    op.size = io.pos - start;
    yield op;
    if (op.code === CODE.STOP) return;
  }
}

/** The code for a failure of the grammar inside one opcode (the JS runtime names no src_path: the
 * opcode and the exception's class say where it failed). */
function opFailure(e, io, start) {
  const K = parsers.KaitaiStream;
  if (e instanceof K.ValidationNotInEnumError) return new V.Reject('bad-opcode', `opcode 0x${e.actual.toString(16).padStart(2, '0')} is not in the table`);
  const code = io.size > start ? new Uint8Array(io.buffer, io.byteOffset + start, 1)[0] : -1;
  if (code === CODE.LONG4 && io.size >= start + 5) {
    const len = new DataView(io.buffer, io.byteOffset + start + 1, 4).getInt32(0, true);
    if (len > MAX_INT_BYTES) return new V.Reject('limit-exceeded', `LONG4: an integer of ${len} bytes (limit ${MAX_INT_BYTES})`);
  }
  return parsers.fromKaitai(e, 'python_pickle', 'pickle opcode');
}

class Machine {
  constructor(persistentLoad = null, { scopes = new Set(['torch']), opaqueModules = [] } = {}) {
    this.persistentLoad = persistentLoad;
    this.scopes = scopes;
    this.opaqueModules = opaqueModules;
  }

  run(ops, what, limit = null) {
    this.what = what;
    this.stack = [];
    this.metastack = [];
    this.memo = new Map();
    this.protocol = 1;
    this.work = 0;
    this.depths = new WeakMap();
    let pos = 0;
    let i = 0;
    for (const op of ops) {
      if (i >= MAX_OPCODES) throw new V.Reject('limit-exceeded', `${what}: more than ${MAX_OPCODES} opcodes`);
      const info = OPCODES.get(op.code);
      const arg = argOf(op);
      if (info === undefined) throw new V.Reject('bad-opcode', `${what}: opcode 0x${op.code.toString(16)} is not in the table`);
      this.name = info.name;
      pos += op.size;
      if (info.rejected) throw new V.Reject('bad-opcode', `${what}: ${info.name} cannot appear in a checkpoint`);
      if (info.name === 'PROTO') {
        if (i !== 0) throw new V.Reject('bad-pickle', `${what}: PROTO is not the first opcode`);
        if (arg > 5) throw new V.Reject('bad-magic', `${what}: pickle protocol ${arg}`);
        this.protocol = arg;
        i++;
        continue;
      }
      i++;
      if (info.protocol > this.protocol) {
        throw new V.Reject('bad-opcode', `${what}: ${info.name} (protocol ${info.protocol}) in a protocol ${this.protocol} pickle`);
      }
      if (info.name === 'FRAME' && limit !== null && pos + Number(arg) > limit) {
        throw new V.Reject('truncated', `${what}: a FRAME of ${arg} bytes reaches past the end of the pickle`);
      }
      if (info.name === 'STOP') {
        if (this.metastack.length || this.stack.length !== 1) {
          throw new V.Reject('bad-pickle', `${what}: STOP with ${this.stack.length} items and ${this.metastack.length} open marks`);
        }
        return this.stack[0];
      }
      const handler = this['op_' + info.name];
      if (!handler) throw new V.Decline(`pickle opcode ${info.name}`);
      handler.call(this, arg);
    }
    throw new V.Reject('bad-pickle', `${what}: no STOP`);
  }

  fail(message, code = 'bad-pickle') { return new V.Reject(code, `${this.what}: ${this.name}: ${message}`); }
  pop() { if (!this.stack.length) throw this.fail('stack underflow'); return this.stack.pop(); }
  top() { if (!this.stack.length) throw this.fail('stack underflow'); return this.stack[this.stack.length - 1]; }
  popMark() {
    if (!this.metastack.length) throw this.fail('no MARK');
    const items = this.stack;
    this.stack = this.metastack.pop();
    return items;
  }
  push(v) { this.stack.push(v); }

  utf8(raw, opts) {
    try { return T.utf8(raw, opts); } catch (e) {
      if (!(e instanceof T.TextError)) throw e;
      if (e.message === 'a surrogate pair') {
        throw this.fail('a str holding a surrogate pair, which its JSON form would name as another (astral) character', 'bad-value');
      }
      throw this.fail('bytes that are not UTF-8', 'bad-value');
    }
  }

  // -- constants
  op_INT(arg) { const t = arg.value; this.push(t === '00' || t === '01' ? t === '01' : decimal(t, 'INT')); }
  op_LONG(arg) { const t = arg.value; this.push(decimal(t.endsWith('L') ? t.slice(0, -1) : t, 'LONG')); }
  op_BININT(arg) { this.push(BigInt(arg)); }
  op_BININT1(arg) { this.push(BigInt(arg)); }
  op_BININT2(arg) { this.push(BigInt(arg)); }
  op_LONG1(arg) {
    if (arg.value.length > MAX_INT_BYTES) throw this.fail(`an integer of ${arg.value.length} bytes`, 'limit-exceeded');
    this.push(longBytes(arg.value));
  }
  op_LONG4(arg) { this.op_LONG1(arg); }
  op_FLOAT(arg) {
    const text = arg.value;
    if (!NUMBER_TEXT.FLOAT.test(text)) throw this.fail(`${JSON.stringify(text.slice(0, 40))} is not a float of its grammar`, 'bad-value');
    const value = pyFloat(text);
    if (!Number.isFinite(value) && !Number.isNaN(value) && !text.toLowerCase().includes('inf')) {
      throw this.fail(`${JSON.stringify(text.slice(0, 40))} does not fit a double`, 'bad-value');
    }
    this.push(Number.isNaN(value) ? new V.PyNaN() : value);
  }
  op_BINFLOAT(arg) { this.push(Number.isNaN(arg) ? new V.PyNaN() : arg); }
  op_STRING(arg) {
    const raw = arg.value;
    if (raw.length < 2 || raw[0] !== raw[raw.length - 1] || (raw[0] !== 0x27 && raw[0] !== 0x22)) {
      throw new V.Reject('bad-value', 'STRING argument is not a quoted literal');
    }
    let body;
    try { body = T.escapeDecode(raw.subarray(1, raw.length - 1)); } catch (e) {
      throw new V.Reject('bad-value', `STRING argument: ${e.message}`);
    }
    try { this.push(T.utf8(body)); } catch (e) { throw new V.Reject('bad-value', 'STRING: bytes that are not UTF-8'); }
  }
  op_BINSTRING(arg) { this.push(this.utf8(arg.value)); }
  op_SHORT_BINSTRING(arg) { this.op_BINSTRING(arg); }
  op_BINBYTES(arg) { this.push(new V.PyBytes(arg.value)); }
  op_SHORT_BINBYTES(arg) { this.op_BINBYTES(arg); }
  op_BINBYTES8(arg) { this.op_BINBYTES(arg); }
  op_BYTEARRAY8(arg) { this.push(new V.PyByteArray(Uint8Array.from(arg.value))); }
  op_UNICODE(arg) {
    try { this.push(T.rawUnicodeEscape(arg.value)); } catch (e) {
      if (e.message === 'a surrogate pair') throw this.fail('a str holding a surrogate pair, which its JSON form would name as another (astral) character', 'bad-value');
      throw this.fail('text that is not raw-unicode-escape', 'bad-value');
    }
  }
  op_BINUNICODE(arg) { this.push(this.utf8(arg.value, { surrogatepass: true, pairs: false })); }
  op_SHORT_BINUNICODE(arg) { this.op_BINUNICODE(arg); }
  op_BINUNICODE8(arg) { this.op_BINUNICODE(arg); }
  op_NONE() { this.push(null); }
  op_NEWTRUE() { this.push(true); }
  op_NEWFALSE() { this.push(false); }
  op_FRAME() {}

  // -- containers
  op_EMPTY_LIST() { this.push(new V.PyList()); }
  op_EMPTY_TUPLE() { this.push(new V.PyTuple()); }
  op_EMPTY_DICT() { this.push(new V.PyDict()); }
  op_EMPTY_SET() { this.push(new V.PySet()); }
  op_MARK() {
    if (this.metastack.length >= MAX_MARKS) throw this.fail(`more than ${MAX_MARKS} open MARKs`, 'limit-exceeded');
    this.metastack.push(this.stack);
    this.stack = [];
  }
  op_POP_MARK() { this.popMark(); }
  op_POP() {
    if (this.stack.length) this.stack.pop();
    else if (this.metastack.length) this.stack = this.metastack.pop();
    else throw this.fail('stack underflow');
  }
  op_DUP() { this.push(this.top()); }

  /** The nesting of a tuple or frozenset this machine built (spec/pickle.md#pickle-nesting). */
  depth(v) {
    if (v instanceof V.PyTuple || v instanceof V.PyFrozenSet) {
      const known = this.depths.get(v);
      if (known !== undefined) return known;
      return v instanceof V.PyTuple ? (v.items.length ? 2 : 1) : (v.size ? 2 : 1);
    }
    return 1;
  }
  nested(v, items) {
    let d = 1;
    for (const x of items) { const e = 1 + this.depth(x); if (e > d) d = e; }
    if (d > MAX_DEPTH) throw this.fail(`a ${V.typeName(v)} nested deeper than ${MAX_DEPTH}`, 'limit-exceeded');
    if (d > 2) this.depths.set(v, d);
    return v;
  }
  tuple(items) { const t = new V.PyTuple(items); return this.nested(t, items); }
  op_TUPLE() { this.push(this.tuple(this.popMark())); }
  tupleN(n) {
    if (this.stack.length < n) throw this.fail('stack underflow');
    this.push(this.tuple(this.stack.splice(this.stack.length - n, n)));
  }
  op_TUPLE1() { this.tupleN(1); }
  op_TUPLE2() { this.tupleN(2); }
  op_TUPLE3() { this.tupleN(3); }
  op_LIST() { this.push(new V.PyList(this.popMark())); }
  op_DICT() {
    const items = this.popMark();
    if (items.length % 2) throw this.fail('an odd number of items');
    const d = new V.PyDict();
    this.setItems(d, items);
    this.push(d);
  }
  op_FROZENSET() { this.push(this.frozenset(this.popMark())); }
  op_APPEND() {
    const item = this.pop();
    const target = this.top();
    if (!(target instanceof V.PyList)) throw this.fail(`APPEND to a ${V.typeName(target)}`);
    target.items.push(item);
  }
  op_APPENDS() {
    const items = this.popMark();
    const target = this.top();
    if (!(target instanceof V.PyList)) throw this.fail(`APPENDS to a ${V.typeName(target)}`);
    for (const x of items) target.items.push(x);
  }
  op_SETITEM() {
    const value = this.pop();
    const key = this.pop();
    this.setItems(this.dictBelow(), [key, value]);
  }
  op_SETITEMS() {
    const items = this.popMark();
    if (items.length % 2) throw this.fail('an odd number of items');
    this.setItems(this.dictBelow(), items);
  }
  op_ADDITEMS() {
    const items = this.popMark();
    const target = this.top();
    if (!(target instanceof V.PySet)) throw this.fail(`ADDITEMS to a ${V.typeName(target)}`);
    this.fill(target, items);
  }
  dictBelow() {
    const target = this.top();
    if (!(target instanceof V.PyDict)) throw this.fail(`${this.name} on a ${V.typeName(target)}`);
    return target;
  }
  fill(target, items) {
    try { for (const x of items) target.add(x); } catch (e) {
      if (e instanceof V.Unhashable) throw this.fail('an unhashable item (a list, dict or set) in a set', 'bad-value');
      throw e;
    }
    return target;
  }
  set(items) { return this.fill(new V.PySet(), items); }
  frozenset(items) {
    items = [...items];
    let d = 1;
    for (const x of items) { const e = 1 + this.depth(x); if (e > d) d = e; }
    if (d > MAX_DEPTH) throw this.fail(`a frozenset nested deeper than ${MAX_DEPTH}`, 'limit-exceeded');
    const v = this.fill(new V.PyFrozenSet(), items);
    if (d > 2) this.depths.set(v, d);
    return v;
  }
  hashable(key) {
    try { V.pyKey(key); } catch (e) {
      if (e instanceof V.Unhashable) throw this.fail(`an unhashable ${e.message} as a key or set item`, 'bad-value');
      throw e;
    }
    return key;
  }
  setItems(d, items) {
    for (let i = 0; i < items.length; i += 2) d.set(this.hashable(items[i]), items[i + 1]);
  }

  // -- the memo
  put(key) {
    if (key < 0n) throw this.fail(`negative memo key ${key}`, 'bad-reference');
    if (!this.stack.length) throw this.fail('nothing to memoize');
    this.memo.set(BigInt(key), this.stack[this.stack.length - 1]);
  }
  get(key) {
    key = BigInt(key);
    if (!this.memo.has(key)) throw this.fail(`memo key ${key} was never stored`, 'bad-reference');
    this.push(this.memo.get(key));
  }
  op_PUT(arg) { this.put(decimal(arg.value, 'PUT')); }
  op_BINPUT(arg) { this.put(BigInt(arg)); }
  op_LONG_BINPUT(arg) { this.put(BigInt(arg)); }
  op_MEMOIZE() { this.put(BigInt(this.memo.size)); }
  op_GET(arg) { this.get(decimal(arg.value, 'GET')); }
  op_BINGET(arg) { this.get(arg); }
  op_LONG_BINGET(arg) { this.get(arg); }

  // -- persistent ids
  persistent(pid) {
    if (this.persistentLoad === null) throw this.fail('a persistent id where the container gives them no meaning', 'bad-reference');
    this.push(this.persistentLoad(pid));
  }
  op_PERSID(arg) {
    if (!/^[\x00-\x7f]*$/.test(arg.value)) throw this.fail('PERSID text is not ASCII', 'bad-value');
    this.persistent(arg.value);
  }
  op_BINPERSID() { this.persistent(this.pop()); }

  // -- globals and calls
  opaque(module) { return this.opaqueModules.some((m) => module === m || module.startsWith(m + '.')); }
  global(module, name) {
    module = MODULE_RENAMES[module] || module;
    const qualname = `${module}.${name}`;
    if (this.opaque(module)) return new V.Global(module, name);
    const entry = ALLOWLIST.get(qualname);
    if (entry === undefined || !this.scopes.has(entry.scope)) throw this.fail(`${qualname} is not in the allowlist`, 'unsafe-global');
    return new V.Global(module, name);
  }
  op_GLOBAL(arg) { this.push(this.global(arg.moduleName, arg.name)); }
  op_STACK_GLOBAL() {
    const name = this.pop();
    const module = this.pop();
    if (typeof module !== 'string' || typeof name !== 'string') throw this.fail('STACK_GLOBAL needs two str items');
    this.push(this.global(module, name));
  }
  entry(g) {
    if (!(g instanceof V.Global)) throw this.fail(`calling a ${V.typeName(g)}, not a global`);
    if (this.opaque(g.module)) return null;
    const entry = ALLOWLIST.get(g.qualname);
    if (entry === undefined || entry.role === 'value') throw this.fail(`${g.qualname} is a value, not a callable`);
    if (entry.role === 'declined') throw new V.Decline(`${g.qualname} (${this.what})`);
    return entry;
  }

  /** Count the items handed to a call or BUILD against CALL_WORK (spec/pickle.md#pickle-limits). */
  charge(value) {
    const seen = new Set();
    const todo = [value];
    while (todo.length) {
      const v = todo.pop();
      if (typeof v === 'string') this.work += Math.floor((v.length < TEXT_PER_WORK ? v.length : T.codePoints(v)) / TEXT_PER_WORK);
      else if (v instanceof V.PyBytes || v instanceof V.PyByteArray) this.work += Math.floor(v.b.length / TEXT_PER_WORK);
      else if (v instanceof V.PyList || v instanceof V.PyTuple || v instanceof V.PySet || v instanceof V.PyFrozenSet
        || v instanceof V.PyDict || v instanceof V.Opaque) {
        if (seen.has(v)) continue;
        seen.add(v);
        let items;
        if (v instanceof V.PyDict) {
          items = [];
          for (const [k, x] of v.entries()) items.push(k, x);
          if (v instanceof V.ODict) items.push(...v.attrs.values());
          this.work += v.size;
        } else if (v instanceof V.Opaque) items = [...v.args, v.state];
        else {
          items = v instanceof V.PyList || v instanceof V.PyTuple ? v.items : [...v.values()];
          this.work += items.length;
        }
        for (const x of items) {
          if (typeof x === 'string' || (x !== null && typeof x === 'object' && (x instanceof V.PyBytes
            || x instanceof V.PyByteArray || x instanceof V.PyList || x instanceof V.PyTuple || x instanceof V.PySet
            || x instanceof V.PyFrozenSet || x instanceof V.PyDict || x instanceof V.Opaque))) todo.push(x);
        }
      }
      if (this.work > MAX_CALL_WORK) {
        throw this.fail(`the calls and BUILDs of this pickle are handed more than ${MAX_CALL_WORK} items`, 'limit-exceeded');
      }
    }
  }

  call(g, args, { newobj = false } = {}) {
    const rebuild = require('./rebuild.js');
    if (!(args instanceof V.PyTuple)) throw this.fail(`arguments must be a tuple, not ${V.typeName(args)}`);
    this.charge(args);
    const entry = this.entry(g);
    if (entry === null) return new V.Opaque(g.qualname, [...args.items]);
    if (newobj && !entry.newobj) throw this.fail(`${g.qualname} cannot be made by NEWOBJ`);
    const a = args.items;
    const required = entry.params.filter((p) => !p.optional).length;
    if (!(required <= a.length && a.length <= entry.params.length)) {
      throw this.fail(`${g.qualname} takes ${entry.signature}, got ${a.length} arguments`);
    }
    entry.params.forEach((p, k) => {
      if (k < a.length && !rebuild.isKind(p.kind, a[k])) {
        throw this.fail(`${g.qualname}: argument ${p.name} must be of kind ${p.kind}, not ${V.typeName(a[k])}`);
      }
    });
    const handler = rebuild.HANDLERS[g.qualname];
    if (handler === undefined) throw new V.Decline(`${g.qualname} (no rebuild function in this reader)`);
    return handler(a, this);
  }

  op_REDUCE() { const args = this.pop(); const func = this.pop(); this.push(this.call(func, args)); }
  op_NEWOBJ() { const args = this.pop(); const cls = this.pop(); this.push(this.call(cls, args, { newobj: true })); }
  op_NEWOBJ_EX() {
    const kwargs = this.pop();
    const args = this.pop();
    const cls = this.pop();
    if (!(kwargs instanceof V.PyDict) || kwargs.size) throw this.fail('NEWOBJ_EX with keyword arguments');
    this.push(this.call(cls, args, { newobj: true }));
  }
  op_INST(arg) {
    const g = this.global(arg.moduleName, arg.name);
    this.push(this.call(g, new V.PyTuple(this.popMark())));
  }
  op_OBJ() {
    const items = this.popMark();
    if (!items.length) throw this.fail('OBJ without a callable');
    this.push(this.call(items[0], new V.PyTuple(items.slice(1))));
  }
  op_BUILD() {
    const rebuild = require('./rebuild.js');
    const state = this.pop();
    const obj = this.top();
    this.charge(state);
    if (obj instanceof V.ODict) {
      if (!(state instanceof V.PyDict) || ![...state.entries()].every(([k]) => typeof k === 'string')) {
        throw this.fail("an OrderedDict's state must be a dict of str keys");
      }
      for (const [k, x] of state.entries()) obj.attrs.set(k, x);
    } else if (obj instanceof V.Tensor) rebuild.buildTensor(obj, state, this);
    else if (obj instanceof V.Opaque && obj.state === null && this.opaqueModules.some((m) => obj.className.startsWith(m + '.'))) {
      obj.state = state;
    } else throw this.fail(`BUILD on a ${V.typeName(obj)}`);
  }
}

module.exports = { Machine, opsFrom };
