'use strict';
// Values -> the canonical description (spec/canonical.md): hashes (#canonical-hash), float literals
// (#canonical-float), sharing (#canonical-sharing) and the budgets (#canonical-node-budget).  Two walks, as
// conformance/adapters/kaitai/describe.py: the first counts how often each shareable value is reached and
// enforces the budgets before anything is written or hashed; the second builds the document.  Ints are
// BigInts and written as JSON numbers digit for digit (toJson).
const crypto = require('node:crypto');
const { LIMITS } = require('./facts.js');
const V = require('./values.js');

const { NODE_BUDGET, TEXT_BUDGET, VALUE_DEPTH: MAX_DEPTH, VIEW_BYTES: MAX_EXPANDED, VIEW_FACTOR } = LIMITS;
const EMPTY_SHA256 = crypto.createHash('sha256').digest('hex');

function shareable(v) {
  return v instanceof V.PyList || v instanceof V.PyDict || v instanceof V.PySet || v instanceof V.LuaTable
    || v instanceof V.TorchObject || v instanceof V.LuaFunction || v instanceof V.Opaque || v instanceof V.Tensor
    || v instanceof V.SparseTensor || v instanceof V.MetaTensor;
}

/** A float literal (spec/canonical.md#canonical-float): JavaScript's shortest round-trip form; -0 keeps
 * its sign. */
function formatFloat(x) {
  if (Number.isNaN(x)) return 'nan';
  if (x === Infinity) return 'inf';
  if (x === -Infinity) return '-inf';
  if (Object.is(x, -0)) return '-0.0';
  return String(x);
}

/** The bytes of the ASCII JSON string Python's json.dumps writes for `s`, quotes included. */
function jsonTextSize(s) {
  let n = 2;
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c === 0x22 || c === 0x5c || c === 8 || c === 9 || c === 10 || c === 12 || c === 13) n += 2;
    else if (c >= 0x20 && c < 0x7f) n += 1;
    else n += 6;
  }
  return n;
}

/** A storage's elements as little-endian bytes, `numel * itemsize` of them (spec/canonical.md#canonical-hash). */
function storageBytes(s) {
  if (s._canonical) return s._canonical;
  const width = s.dtype.itemsize;
  const numel = Number(s.numel);
  let out;
  if (numel === 0 || s.raw === null) out = new Uint8Array(0);
  else if (s.storedWidth && s.storedWidth !== width) { // a narrower signed integer (t7 long4): sign-extend
    const sw = s.storedWidth;
    out = new Uint8Array(numel * width);
    const dv = new DataView(s.raw.buffer, s.raw.byteOffset, numel * sw);
    const odv = new DataView(out.buffer);
    for (let i = 0; i < numel; i++) {
      const v = sw === 4 ? dv.getInt32(i * 4, s.byteOrder !== 'big') : Number(dv.getBigInt64(i * 8, s.byteOrder !== 'big'));
      odv.setBigInt64(i * width, BigInt(v), true);
    }
  } else if (s.byteOrder === 'big' && s.dtype.swapUnit > 1) {
    const unit = s.dtype.swapUnit;
    const src = s.raw.subarray(0, numel * width);
    out = new Uint8Array(src.length);
    for (let i = 0; i < src.length; i += unit) for (let j = 0; j < unit; j++) out[i + j] = src[i + unit - 1 - j];
  } else out = s.raw.subarray(0, numel * width);
  s._canonical = out;
  return out;
}

function storageSha256(s) {
  return crypto.createHash('sha256').update(storageBytes(s)).digest('hex');
}

/** The values torch presents for a conjugate or negative view of one element at `buf[at]`
 * (spec/tensors.md#tensors-conj-neg): per part of swap-unit width, the sign flipped (`sign`, and a
 * flipped NaN made quiet for `sign-quiet`), or the integer negated (`twos`). */
function applyBits(t, buf, at) {
  const d = t.dtype;
  const unit = d.swapUnit;
  const parts = d.itemsize / unit;
  if (d.arith.negation === 'twos') {
    let carry = 1;
    for (let j = 0; j < d.itemsize; j++) {
      const v = (~buf[at + j] & 0xff) + carry;
      buf[at + j] = v & 0xff;
      carry = v >> 8;
    }
    return;
  }
  for (let p = 0; p < parts; p++) {
    let flip = t.neg;
    if (t.conj && p === parts - 1) flip = !flip;
    if (!flip) continue;
    const top = at + p * unit + unit - 1;
    buf[top] ^= 0x80;
    if (d.arith.negation === 'sign-quiet' && unit === 2) {
      const bits = buf[top - 1] | (buf[top] << 8);
      if ((bits & 0x7c00) === 0x7c00 && (bits & 0x03ff) !== 0) buf[top] |= 0x02;
    }
  }
}

/** A strided tensor's logical elements in row-major order, as torch presents them, fed to `sink`. */
function presentedBlocks(t, sink) {
  const numel = t.numel;
  // the bytes a hash reads are bounded (spec/canonical.md#canonical-node-budget), not a view's elements
  if (numel > BigInt(t.storage.numel) && numel * BigInt(t.dtype.itemsize) > BigInt(MAX_EXPANDED)) {
    throw new V.Reject('limit-exceeded', `a view of ${numel} elements over a storage of ${t.storage.numel}`);
  }
  const elems = storageBytes(t.storage);
  const width = t.dtype.itemsize;
  const dims = [];
  t.shape.forEach((n, i) => { if (n !== 1n) dims.push([Number(n), Number(t.stride[i])]); });
  const n = Number(numel);
  const base = Number(t.storageOffset) * width;
  let contiguous = true;
  for (let i = dims.length - 1, step = 1; i >= 0; step *= dims[i][0], i--) if (dims[i][1] !== step) contiguous = false;
  if (contiguous && !t.conj && !t.neg) {
    sink(elems.subarray(base, base + n * width));
    return;
  }
  const chunk = new Uint8Array(Math.max(width, Math.min(1 << 20, n * width) - (Math.min(1 << 20, n * width) % width)));
  let used = 0;
  const index = new Array(dims.length).fill(0);
  let offset = 0;
  const bits = t.conj || t.neg;
  for (let k = 0; k < n; k++) {
    const at = base + offset * width;
    for (let j = 0; j < width; j++) chunk[used + j] = elems[at + j];
    if (bits) applyBits(t, chunk, used);
    used += width;
    if (used + width > chunk.length) { sink(chunk.subarray(0, used)); used = 0; }
    for (let d = dims.length - 1; d >= 0; d--) {
      index[d]++;
      offset += dims[d][1];
      if (index[d] < dims[d][0]) break;
      offset -= dims[d][1] * index[d];
      index[d] = 0;
    }
  }
  if (used) sink(chunk.subarray(0, used));
}

function tensorSha256(t) {
  if (t.numel === 0n || t.storage === null) return EMPTY_SHA256;
  const h = crypto.createHash('sha256');
  if (t.dtype.perByte > 1) {
    const nbytes = Number((t.numel + BigInt(t.dtype.perByte) - 1n) / BigInt(t.dtype.perByte));
    const off = Number(t.storageOffset);
    return h.update(storageBytes(t.storage).subarray(off, off + nbytes)).digest('hex');
  }
  presentedBlocks(t, (b) => h.update(b));
  return h.digest('hex');
}

function children(v) {
  if (v instanceof V.PyList || v instanceof V.PyTuple) return v.items;
  if (v instanceof V.PySet || v instanceof V.PyFrozenSet) return [...v.values()];
  if (v instanceof V.PyDict) {
    const out = [];
    for (const [k, x] of v.entries()) out.push(k, x);
    if (v instanceof V.ODict) out.push(...v.attrs.values());
    return out;
  }
  if (v instanceof V.LuaTable) return v.items.flat();
  if (v instanceof V.TorchObject) return [v.value];
  if (v instanceof V.LuaFunction) return v.upvalues;
  if (v instanceof V.Opaque) return v.state === null ? v.args : [...v.args, v.state];
  if (v instanceof V.QuantizedTensor) return [v.scales, v.zeroPoints].filter((x) => x);
  if (v instanceof V.SparseTensor) return Object.values(v.parts);
  return [];
}

class Describer {
  constructor() {
    this.seen = new Map();
    this.ids = new Map();
    this.storageIds = new Map();
    this.storages = {};
    this.nodes = 0;
    this.text = 0;
    this.viewElements = 0n;
    this.storageElements = 0n;
    this.countedStorages = new Set();
  }

  count(root, depthLimit = MAX_DEPTH) {
    const stack = [[root, 1]];
    while (stack.length) {
      const [v, depth] = stack.pop();
      if (++this.nodes > NODE_BUDGET) {
        throw new V.Reject('limit-exceeded', `the description would hold more than ${NODE_BUDGET} values`);
      }
      if (typeof v === 'string' || v instanceof V.PyBytes || v instanceof V.PyByteArray) {
        this.text += typeof v === 'string' ? jsonTextSize(v) : 2 * v.b.length + 2;
        if (this.text > TEXT_BUDGET) {
          throw new V.Reject('limit-exceeded', `the description would write more than ${TEXT_BUDGET} bytes of JSON `
            + 'text for its str and bytes values');
        }
      }
      if (shareable(v)) {
        const n = (this.seen.get(v) || 0) + 1;
        this.seen.set(v, n);
        if (n > 1) continue;
        if (v instanceof V.Tensor) this.countView(v);
      }
      if (depthLimit !== null && depth > depthLimit) {
        throw new V.Reject('limit-exceeded', `values nest deeper than ${depthLimit}`);
      }
      const c = children(v);
      for (let i = c.length - 1; i >= 0; i--) stack.push([c[i], depth + 1]);
    }
  }

  countView(t) {
    if (t.storage === null) return;
    this.viewElements += t.numel * BigInt(t.dtype.itemsize);  // bytes, as the budget counts them
    if (!this.countedStorages.has(t.storage)) {
      this.countedStorages.add(t.storage);
      this.storageElements += BigInt(t.storage.numel) * BigInt(t.storage.dtype.itemsize);
    }
    if (this.viewElements > BigInt(VIEW_FACTOR) * this.storageElements + BigInt(MAX_EXPANDED)) {
      throw new V.Reject('limit-exceeded', `the tensors hold ${this.viewElements} bytes, more than `
        + `${VIEW_FACTOR} times their storages' ${this.storageElements} plus ${MAX_EXPANDED}`);
    }
  }

  emit(v) {
    if (shareable(v) && this.seen.get(v) > 1) {
      const known = this.ids.get(v);
      if (known !== undefined) return { type: 'ref', id: known };
      const id = `o${this.ids.size}`;
      this.ids.set(v, id);
      const out = this.value(v);
      out.id = id;
      return out;
    }
    return this.value(v);
  }

  pairs(entries) {
    const out = [];
    for (const [k, x] of entries) out.push([this.emit(k), this.emit(x)]);
    return out;
  }

  value(v) {
    if (v === null) return { type: 'none' };
    switch (typeof v) {
      case 'boolean': return { type: 'bool', value: v };
      case 'bigint': return { type: 'int', value: v.toString() };
      case 'number': return { type: 'float', value: formatFloat(v) };
      case 'string': return { type: 'str', value: v };
      default: break;
    }
    if (v instanceof V.PyNaN) return { type: 'float', value: 'nan' };
    if (v instanceof V.PyBytes || v instanceof V.PyByteArray) return { type: 'bytes', hex: Buffer.from(v.b).toString('hex') };
    if (v instanceof V.PyList) return { type: 'list', items: v.items.map((x) => this.emit(x)) };
    if (v instanceof V.PyTuple) return { type: 'tuple', items: v.items.map((x) => this.emit(x)) };
    if (v instanceof V.PySet || v instanceof V.PyFrozenSet) return { type: 'set', items: [...v.values()].map((x) => this.emit(x)) };
    if (v instanceof V.ODict) {
      const out = { type: 'ordered_dict', items: this.pairs(v.entries()) };
      if (v.attrs.size) {
        out.attrs = {};
        for (const [k, x] of v.attrs) out.attrs[k] = this.emit(x);
      }
      return out;
    }
    if (v instanceof V.PyDict) return { type: 'dict', items: this.pairs(v.entries()) };
    if (v instanceof V.LuaTable) return { type: 'table', items: this.pairs(v.items) };
    if (v instanceof V.Tensor) return this.tensor(v);
    if (v instanceof V.MetaTensor) {
      const out = { type: 'meta_tensor', dtype: v.dtype.name, shape: v.shape, stride: v.stride, requires_grad: v.requiresGrad };
      if (v.parameter) out.parameter = true;
      return out;
    }
    if (v instanceof V.SparseTensor) {
      const out = { type: 'sparse_tensor', layout: v.layout, dtype: v.dtype.name, shape: v.shape, requires_grad: v.requiresGrad };
      for (const [name, part] of Object.entries(v.parts)) out[name] = this.emit(part);
      if (v.layout === 'sparse_coo') out.is_coalesced = Boolean(v.isCoalesced);
      return out;
    }
    if (v instanceof V.Storage) return { type: 'storage', storage: this.storageId(v) };
    if (v instanceof V.TorchObject) return { type: 'torch_object', class: v.className, version: v.version, value: this.emit(v.value) };
    if (v instanceof V.LuaFunction) {
      return { type: 'function', kind: v.kind, bytecode_sha256: crypto.createHash('sha256').update(v.bytecode).digest('hex'),
        upvalues: v.upvalues.map((x) => this.emit(x)) };
    }
    if (v instanceof V.Global) return { type: 'global', module: v.module, name: v.name };
    if (v instanceof V.Opaque) {
      return { type: 'object', class: v.className, args: v.args.map((x) => this.emit(x)),
        state: v.state === null ? null : this.emit(v.state) };
    }
    throw new TypeError(`no canonical form for ${V.typeName(v)}`);
  }

  storageId(s) {
    let sid = this.storageIds.get(s);
    if (sid === undefined) {
      sid = `s${this.storageIds.size}`;
      this.storageIds.set(s, sid);
      this.storages[sid] = { dtype: s.dtype.name, numel: BigInt(s.numel), device: s.device, sha256: storageSha256(s) };
    }
    return sid;
  }

  tensor(t) {
    const q = t instanceof V.QuantizedTensor;
    const out = { type: q ? 'quantized_tensor' : 'tensor', dtype: t.dtype.name, shape: t.shape, stride: t.stride,
      storage_offset: t.storageOffset, storage: t.storage === null ? null : this.storageId(t.storage),
      device: t.device, requires_grad: t.requiresGrad, sha256: tensorSha256(t) };
    if (t.parameter) out.parameter = true;
    if (q) {
      out.qscheme = t.qscheme;
      if (t.scales === null || t.scales === undefined) {
        out.scale = formatFloat(t.scale === null ? NaN : t.scale);
        out.zero_point = t.zeroPoint;
      } else {
        out.scales = this.emit(t.scales);
        out.zero_points = this.emit(t.zeroPoints);
        out.axis = t.axis;
      }
    }
    return out;
  }
}

function describe(fmt, objects, depthLimit = MAX_DEPTH) {
  const d = new Describer();
  for (const obj of objects) d.count(obj, depthLimit);
  const out = objects.map((obj) => d.emit(obj));
  return { description_version: 0, format: fmt, objects: out, storages: d.storages };
}

/** JSON text with BigInts written as integers, in ASCII (non-ASCII as \u escapes, as Python's json). */
function toJson(v) {
  const parts = [];
  const walk = (x) => {
    if (x === null) parts.push('null');
    else if (typeof x === 'bigint') parts.push(x.toString());
    else if (typeof x === 'number') parts.push(String(x));
    else if (typeof x === 'boolean') parts.push(x ? 'true' : 'false');
    else if (typeof x === 'string') parts.push(asciiString(x));
    else if (Array.isArray(x)) {
      parts.push('[');
      x.forEach((y, i) => { if (i) parts.push(','); walk(y); });
      parts.push(']');
    } else {
      parts.push('{');
      let first = true;
      for (const k of Object.keys(x)) {
        if (!first) parts.push(',');
        first = false;
        parts.push(asciiString(k), ':');
        walk(x[k]);
      }
      parts.push('}');
    }
  };
  walk(v);
  return parts.join('');
}

function asciiString(s) {
  return JSON.stringify(s).replace(/[\u007f-\uffff]/g, (c) => '\\u' + c.charCodeAt(0).toString(16).padStart(4, '0'));
}

module.exports = { describe, toJson, formatFloat, presentedBlocks, storageBytes, MAX_EXPANDED, MAX_DEPTH };
