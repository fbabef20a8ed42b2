'use strict';
// What each allowed callable builds, from its arguments alone (spec/pickle.md#what-the-allowed-callables-build),
// and the argument kinds of the allowlist (spec/pickle.md#pickle-kinds); a port of
// conformance/adapters/kaitai/rebuild.py.  Geometry is BigInt, as Python's ints.
const { DTYPES, TENSOR_PROPERTIES } = require('./facts.js');
const V = require('./values.js');
const { MAX_EXPANDED, presentedBlocks, storageBytes } = require('./describe.js');

const LAYOUTS = ['strided', 'sparse_coo', 'sparse_csr', 'sparse_csc', 'sparse_bsr', 'sparse_bsc', '_mkldnn', 'jagged'];
const COMPRESSED = ['sparse_csr', 'sparse_csc', 'sparse_bsr', 'sparse_bsc'];
const QSCHEMES = ['per_tensor_affine', 'per_tensor_symmetric', 'per_channel_affine', 'per_channel_symmetric',
  'per_channel_affine_float_qparams'];
const TENSOR_TYPES = {};
for (const prefix of ['torch.', 'torch.cuda.']) {
  for (const d of Object.values(DTYPES)) {
    if (d.storageClass && !d.quantized) TENSOR_TYPES[`${prefix}${d.storageClass.slice(0, -'Storage'.length)}Tensor`] = d;
  }
}
/** spec/tensors.md#tensors-device: the device types and the string's grammar. */
const DEVICE_TYPES = ['cpu', 'cuda', 'ipu', 'xpu', 'mkldnn', 'opengl', 'opencl', 'ideep', 'hip', 've', 'fpga',
  'maia', 'xla', 'lazy', 'vulkan', 'mps', 'meta', 'hpu', 'mtia', 'privateuseone'];
const DEVICE = /^([a-z]+)(?::(0|[1-9][0-9]{0,3}))?$/;
const I63 = 1n << 63n;
const prod = (xs) => xs.reduce((a, b) => a * b, 1n);

function sizeItems(v) {
  if (v instanceof V.Opaque && v.className === 'torch.Size' && v.args.length === 1) return v.args[0];
  return v;
}
const seq = (v) => (v instanceof V.PyTuple || v instanceof V.PyList ? v.items : null);
function isInts(v) {
  const items = seq(sizeItems(v));
  return items !== null && items.every((x) => typeof x === 'bigint');
}
const torchGlobal = (names) => (v) => v instanceof V.Global && v.module === 'torch' && names.includes(v.name);
const isDict = (v) => v instanceof V.PyDict;

const KINDS = {
  any: () => true,
  int: (v) => typeof v === 'bigint',
  bool: (v) => typeof v === 'boolean',
  number: (v) => typeof v === 'bigint' || V.isFloat(v),
  str: (v) => typeof v === 'string',
  ints: isInts,
  size_items: (v) => isInts(v) || (seq(v) !== null && seq(v).every((x) => typeof x === 'bigint' || typeof x === 'boolean')),
  tuple: (v) => v instanceof V.PyTuple,
  list: (v) => v instanceof V.PyList,
  dict: isDict,
  hooks: (v) => v === null || isDict(v),
  pairs: (v) => isDict(v) || (seq(v) !== null && seq(v).every((p) => seq(p) !== null && seq(p).length === 2)),
  iterable: (v) => v instanceof V.PyList || v instanceof V.PyTuple || v instanceof V.PySet || v instanceof V.PyFrozenSet,
  bytes_or_str: (v) => v instanceof V.PyBytes || typeof v === 'string',
  storage: (v) => v instanceof V.Storage,
  tensor: (v) => v instanceof V.Tensor,
  param_data: (v) => v instanceof V.Tensor || v instanceof V.MetaTensor || v instanceof V.SparseTensor,
  global: (v) => v instanceof V.Global,
  dtype: torchGlobal(Object.keys(DTYPES)),
  layout: torchGlobal(LAYOUTS),
};
const isKind = (kind, v) => KINDS[kind](v);

const shapeText = (xs) => `(${xs.join(', ')}${xs.length === 1 ? ',' : ''})`;

/** A view's elements must lie inside its storage (spec/tensors.md#tensors-view-bounds). */
function checkView(storage, offset, size, stride, what) {
  if (size.length !== stride.length) throw new V.Reject('bad-length', `${what}: size ${shapeText(size)} and stride ${shapeText(stride)} differ in length`);
  if (offset < 0n || size.some((x) => x < 0n) || stride.some((x) => x < 0n)) {
    throw new V.Reject('bad-length', `${what}: negative offset, size or stride: ${offset}, ${shapeText(size)}, ${shapeText(stride)}`);
  }
  if ([offset, ...size, ...stride].some((x) => x >= I63)) throw new V.Reject('bad-length', `${what}: an offset, size or stride of 2^63 or more`);
  if (size.includes(0n)) return;
  let last = offset;
  size.forEach((n, i) => { last += (n - 1n) * stride[i]; });
  if (last >= BigInt(storage.numel)) {
    throw new V.Reject('out-of-bounds', `${what}: the view (offset ${offset}, size ${shapeText(size)}, stride ${shapeText(stride)}) reaches element ${last} of a storage of ${storage.numel}`);
  }
}

function grad(m, name, requiresGrad) {
  if (requiresGrad && !DTYPES[name].arith.differentiable) throw m.fail(`a ${name} tensor cannot require grad`, 'bad-value');
}

function dense(m, storage, offset, size, stride, requiresGrad) {
  grad(m, storage.dtype.name, requiresGrad);
  const sizeT = [...seq(sizeItems(size))];
  const strideT = [...seq(sizeItems(stride))];
  if (storage.dtype.perByte > 1) checkPacked(m, storage, offset, sizeT, strideT);
  else {
    checkView(storage, offset, sizeT, strideT, m.what);
    const numel = prod(sizeT);
    if (numel > BigInt(Math.max(Number(storage.numel), MAX_EXPANDED))) {
      throw m.fail(`a view of ${numel} elements over a storage of ${storage.numel}`, 'limit-exceeded');
    }
  }
  return new V.Tensor(storage.dtype, sizeT, strideT, offset, storage, storage.device, requiresGrad);
}

function checkPacked(m, storage, offset, size, stride) {
  if (size.length !== stride.length || offset < 0n || size.some((x) => x < 0n)) {
    throw m.fail(`packed tensor geometry ${offset}, ${shapeText(size)}, ${shapeText(stride)}`, 'bad-length');
  }
  const expect = [];
  let step = 1n;
  for (let i = size.length - 1; i >= 0; i--) { expect[i] = step; step *= size[i]; }
  if (size.some((n, i) => n > 1n && stride[i] !== expect[i])) throw new V.Decline(`a packed ${storage.dtype.name} tensor that is not contiguous`);
  const per = BigInt(storage.dtype.perByte);
  const nbytes = (prod(size) + per - 1n) / per;
  if (nbytes && offset + nbytes > BigInt(storage.numel)) {
    throw m.fail(`a packed tensor of ${nbytes} bytes from ${offset} in a storage of ${storage.numel}`, 'out-of-bounds');
  }
}

function metadata(m, t, md) {
  if (md === null || md === undefined) return t;
  if (!(md instanceof V.PyDict)) throw m.fail('tensor metadata is not a dict', 'bad-value');
  for (const [k, v] of md.entries()) {
    const name = k instanceof V.PyBytes ? String.fromCharCode(...k.b) : k;
    if (typeof name !== 'string' || typeof v !== 'boolean') throw m.fail('tensor metadata must map str keys to bools', 'bad-value');
    if (name === 'conj' || name === 'neg') t[name] = true;
  }
  const a = t.dtype.arith;
  if (t.conj && !a.conj) throw m.fail(`a conjugate bit on a ${t.dtype.name} tensor`, 'bad-value');
  if (t.conj && t.neg && !a.both) throw m.fail(`both bits on a ${t.dtype.name} tensor`, 'bad-value');
  if ((t.conj || t.neg) && a.negation === null) throw m.fail(`torch cannot negate ${t.dtype.name}`, 'bad-value');
  return t;
}

function rebuildTensor(a, m) { return dense(m, a[0], a[1], a[2], a[3], false); }

function asUint8(m, storage) {
  if (storage.retyped) throw m.fail(`a uint8 view of an untyped storage viewed as ${storage.dtype.name}`, 'bad-value');
  storage.typed = true;
}

function rebuildTensorV2(a, m) {
  const [storage, offset, size, stride, requiresGrad] = a;
  asUint8(m, storage);
  const t = dense(m, storage, offset, size, stride, requiresGrad);
  return metadata(m, t, a.length > 6 ? a[6] : null);
}

function rebuildTensorV3(a, m) {
  const [storage, offset, size, stride, requiresGrad, , dtypeG] = a;
  if (requiresGrad) throw m.fail('_rebuild_tensor_v3 with requires_grad true (no torch loads it)', 'bad-value');
  const dtype = DTYPES[dtypeG.name];
  if (storage.dtype !== dtype) {
    if (storage.dtype.name !== 'uint8' || storage.typed) throw m.fail(`a ${storage.dtype.name} storage viewed as ${dtype.name}`, 'bad-value');
    if (BigInt(storage.numel) % BigInt(dtype.itemsize)) throw m.fail(`${storage.numel} bytes are not whole ${dtype.name} elements`, 'bad-length');
    storage.numel = BigInt(storage.numel) / BigInt(dtype.itemsize);
    storage.dtype = dtype;
    storage.retyped = true;
    storage._canonical = undefined;
  }
  storage.typed = true;
  const t = dense(m, storage, offset, size, stride, requiresGrad);
  return metadata(m, t, a.length > 7 ? a[7] : null);
}

function rebuildMetaTensorNoStorage(a, m) {
  const [dtypeG, size, stride, requiresGrad] = a;
  const dtype = DTYPES[dtypeG.name];
  const sizeT = [...seq(sizeItems(size))];
  const strideT = [...seq(sizeItems(stride))];
  if (sizeT.length !== strideT.length || [...sizeT, ...strideT].some((x) => x < 0n) || strideT.some((x) => x >= I63)
    || prod(sizeT.filter((x) => x)) >= I63) {
    throw m.fail(`meta tensor geometry ${shapeText(sizeT)} / ${shapeText(strideT)}`, 'bad-length');
  }
  if (dtype.quantized) throw m.fail(`a quantized (${dtype.name}) meta tensor`, 'bad-value');
  grad(m, dtype.name, requiresGrad);
  return new V.MetaTensor(dtype, sizeT, strideT, requiresGrad);
}

function asParameter(t, requiresGrad, m = null) {
  if (m !== null) grad(m, t.dtype.name, requiresGrad);
  if (t instanceof V.SparseTensor) return V.replace(t, { requiresGrad });
  return V.replace(t, { parameter: true, requiresGrad });
}

function checkState(m, state) {
  const parts = state instanceof V.PyTuple ? state.items : [state];
  if (![1, 2].includes(parts.length) || parts.some((p) => p !== null && !(p instanceof V.PyDict))) {
    throw m.fail(`a tensor's state must be a dict or a pair of dicts, not ${V.typeName(state)}`);
  }
  for (const part of parts) {
    if (!part || !part.size) continue;
    const keys = [...part.entries()].map(([k]) => k);
    if (!keys.every((k) => typeof k === 'string')) throw m.fail('a tensor attribute name is not a str', 'bad-value');
    if (keys.some((k) => TENSOR_PROPERTIES.has(k))) throw m.fail("a tensor state names one of the tensor's own properties", 'bad-value');
  }
}

function emptyTensor(dtype, device, parameter = false) {
  return new V.Tensor(dtype, [0n], [1n], 0n, new V.Storage(dtype, 0n, device), device, parameter, parameter);
}

function parameter(a, m) {
  if (!a.length) return emptyTensor(DTYPES.float32, 'cpu', true);
  return asParameter(a[0], a.length > 1 ? a[1] : true, m);
}

/** BUILD on a tensor, the legacy __setstate__ (spec/pt-legacy.md#pt-legacy-rebuild-tensor). */
function buildTensor(t, state, m) {
  const s = state instanceof V.PyTuple ? state.items : null;
  if (s === null || ![3, 4, 5].includes(s.length)) throw m.fail("a tensor's BUILD state must be a 3-, 4- or 5-tuple");
  if (s.length === 4) {
    const [storage, offset, size, stride] = s;
    if (!(storage instanceof V.Storage && typeof offset === 'bigint' && isInts(size) && isInts(stride))) {
      throw m.fail("a tensor's state must be (storage, int, ints, ints)");
    }
    if (storage.dtype !== t.dtype) throw m.fail(`a ${t.dtype.name} tensor set to a ${storage.dtype.name} storage`, 'bad-value');
    const v = dense(m, storage, offset, size, stride, t.requiresGrad);
    Object.assign(t, { storage: v.storage, storageOffset: offset, device: v.device, shape: v.shape, stride: v.stride });
    return;
  }
  if (!t.parameter) throw m.fail("a plain tensor's BUILD state must be a 4-tuple");
  let requiresGrad;
  if (s.length === 5) {
    const data = s[0];
    requiresGrad = s[3];
    if (!(data instanceof V.Tensor) || typeof requiresGrad !== 'boolean') throw m.fail("a Variable's state must be (tensor, grad, hooks, bool, bool)");
    for (const f of ['dtype', 'shape', 'stride', 'storageOffset', 'storage', 'device', 'conj', 'neg']) t[f] = data[f];
  } else {
    requiresGrad = s[0];
    if (typeof requiresGrad !== 'boolean') throw m.fail("a Parameter's state must start with requires_grad (bool)");
  }
  grad(m, t.dtype.name, requiresGrad);
  t.requiresGrad = requiresGrad;
}

// -- quantized and sparse tensors (spec/tensors.md#tensors-quantized, #tensors-sparse)

function channelValues(m, v, dtypeName) {
  if (v instanceof V.Tensor) return v;
  if (!(v instanceof V.PyList && v.items.every((x) => typeof x === 'bigint' || V.isFloat(x)))) {
    throw m.fail('per-channel scales/zero points must be a tensor or a list');
  }
  const dtype = DTYPES[dtypeName];
  const n = v.items.length;
  const raw = new Uint8Array(n * dtype.itemsize);
  const dv = new DataView(raw.buffer);
  v.items.forEach((x, i) => {
    if (dtypeName === 'float64') dv.setFloat64(i * 8, Number(x), true);
    else if (dtypeName === 'float32') dv.setFloat32(i * 4, Number(x), true);
    else dv.setBigInt64(i * 8, BigInt.asIntN(64, typeof x === 'bigint' ? x : BigInt(Math.trunc(x))), true);
  });
  return new V.Tensor(dtype, [BigInt(n)], [1n], 0n, new V.Storage(dtype, BigInt(n), 'cpu', raw), 'cpu');
}

function rebuildQtensor(a, m) {
  const [storage, offset, size, stride, qparams, requiresGrad] = a;
  if (!storage.dtype.quantized) throw m.fail(`a quantized tensor over a ${storage.dtype.name} storage`, 'bad-value');
  const d = dense(m, storage, offset, size, stride, requiresGrad);
  const q = Object.assign(Object.create(V.QuantizedTensor.prototype), d);
  const qp = qparams.items;
  const g = qp.length ? qp[0] : null;
  if (!(g instanceof V.Global && g.module === 'torch' && QSCHEMES.includes(g.name))) throw m.fail(`${V.typeName(g)} is not a torch qscheme`, 'bad-value');
  let scheme = g.name;
  if (scheme === 'per_tensor_affine') {
    if (qp.length !== 3 || !(typeof qp[1] === 'bigint' || V.isFloat(qp[1])) || typeof qp[2] !== 'bigint') {
      throw m.fail('per_tensor_affine parameters must be (qscheme, scale, zero_point)');
    }
    if (!(-I63 <= qp[2] && qp[2] < I63)) throw m.fail('a zero point that does not fit an int64', 'bad-value');
    const scale = Number(qp[1]);
    if (typeof qp[1] === 'bigint' && !Number.isFinite(scale)) throw m.fail('a scale that does not fit a double', 'bad-value');
    return Object.assign(q, { qscheme: scheme, scale, zeroPoint: qp[2], scales: null, zeroPoints: null, axis: null });
  }
  if (scheme === 'per_channel_affine' || scheme === 'per_channel_affine_float_qparams') {
    if (qp.length !== 4 || typeof qp[3] !== 'bigint') throw m.fail('per-channel parameters must be (qscheme, scales, zero_points, axis)');
    const [, scales, zeroPoints, axis] = qp;
    if (!(axis >= 0n && axis < BigInt(d.shape.length))) throw m.fail(`axis ${axis} of a ${d.shape.length}-d tensor`, 'bad-value');
    const fq = scheme === 'per_channel_affine_float_qparams';
    const scalesT = channelValues(m, scales, fq ? 'float32' : 'float64');
    const zerosT = channelValues(m, zeroPoints, fq ? 'float32' : 'int64');
    if (zerosT.dtype.name === 'float32' || zerosT.dtype.name === 'float16') scheme = 'per_channel_affine_float_qparams';
    for (const [name, t] of [['scales', scalesT], ['zero_points', zerosT]]) {
      if (prod(t.shape) !== d.shape[Number(axis)]) throw m.fail(`${name} has ${prod(t.shape)} values for ${d.shape[Number(axis)]} channels`, 'bad-value');
    }
    return Object.assign(q, { qscheme: scheme, scale: null, zeroPoint: null, scales: scalesT, zeroPoints: zerosT, axis });
  }
  throw m.fail(`quantization scheme ${scheme} (torch cannot load it)`, 'bad-value');
}

function checkNumel(m, size) {
  let product = 1n;
  for (const n of size) {
    if (!(-I63 <= n && n < I63)) throw m.fail(`a sparse dimension ${n} that does not fit an int64`, 'bad-length');
    product *= BigInt.asUintN(64, n);
    if (product >= I63) throw m.fail(`a sparse size ${shapeText(size)} whose element count overflows`, 'bad-length');
  }
}

const contiguousStride = (shape) => shape.map((_, i) => prod(shape.slice(i + 1)));

function resolved(t) {
  if (!(t.conj || t.neg)) return t;
  const pieces = [];
  if (t.numel) presentedBlocks(t, (b) => pieces.push(Uint8Array.from(b)));
  const raw = new Uint8Array(Buffer.concat(pieces));
  return V.replace(t, { stride: contiguousStride(t.shape), storageOffset: 0n, conj: false, neg: false,
    storage: new V.Storage(t.dtype, t.numel, t.device, raw) });
}

function int64(m, t) {
  if (t.dtype.name === 'int64') return t;
  if (!['uint8', 'int8', 'int16', 'int32'].includes(t.dtype.name) || t.conj || t.neg) throw m.fail(`sparse indices of dtype ${t.dtype.name}`, 'bad-value');
  const int64d = DTYPES.int64;
  const values = [];
  if (t.storage !== null) {
    const signed = t.dtype.name !== 'uint8';
    const w = t.dtype.itemsize;
    const elems = storageBytes(t.storage);
    const dv = new DataView(elems.buffer, elems.byteOffset, elems.byteLength);
    const shape = t.shape.map(Number);
    const stride = t.stride.map(Number);
    const total = shape.reduce((a, b) => a * b, 1);
    const idx = new Array(shape.length).fill(0);
    for (let k = 0; k < total; k++) {
      let at = Number(t.storageOffset);
      idx.forEach((x, i) => { at += x * stride[i]; });
      const o = at * w;
      values.push(w === 1 ? (signed ? dv.getInt8(o) : dv.getUint8(o)) : w === 2 ? dv.getInt16(o, true) : dv.getInt32(o, true));
      for (let d = shape.length - 1; d >= 0; d--) { if (++idx[d] < shape[d]) break; idx[d] = 0; }
    }
  }
  const raw = new Uint8Array(values.length * 8);
  const out = new DataView(raw.buffer);
  values.forEach((v, i) => out.setBigInt64(i * 8, BigInt(v), true));
  return new V.Tensor(int64d, t.shape, contiguousStride(t.shape), 0n, new V.Storage(int64d, BigInt(values.length), t.device, raw), t.device);
}

function rebuildSparseTensor(a, m) {
  const [layout, data] = a;
  const name = layout.name;
  const items = seq(data) || [];
  if (name === 'sparse_coo') {
    if (![3, 4].includes(items.length)) throw m.fail('sparse_coo data must be (indices, values, size[, is_coalesced])');
    const [indices, values, size] = items;
    const coalesced = items.length === 4 ? items[3] : false;
    if (!(indices instanceof V.Tensor && values instanceof V.Tensor && isInts(size) && typeof coalesced === 'boolean')) {
      throw m.fail('sparse_coo data must be (tensor, tensor, ints[, bool])');
    }
    if (indices.shape.length !== 2 || !values.shape.length || indices.shape[1] !== values.shape[0]) {
      throw m.fail(`indices ${shapeText(indices.shape)} do not fit values ${shapeText(values.shape)}`, 'bad-length');
    }
    const shape = [...seq(sizeItems(size))];
    checkNumel(m, shape);
    if (BigInt(shape.length) !== indices.shape[0] + BigInt(values.shape.length - 1)) {
      throw m.fail(`a ${shape.length}-d size for ${indices.shape[0]} sparse and ${values.shape.length - 1} dense dimensions`, 'bad-length');
    }
    const shown = V.replace(resolved(values), { requiresGrad: false });
    return new V.SparseTensor(name, values.dtype, shape, values.requiresGrad, { indices: resolved(int64(m, indices)), values: shown }, coalesced);
  }
  if (COMPRESSED.includes(name)) {
    if (items.length !== 4) throw m.fail(`${name} data must be (compressed_indices, plain_indices, values, size)`);
    const [compressed, plain, values, size] = items;
    if (!([compressed, plain, values].every((t) => t instanceof V.Tensor) && isInts(size))) throw m.fail(`${name} data must be three tensors and a size`);
    const shape = [...seq(sizeItems(size))];
    checkNumel(m, shape);
    return new V.SparseTensor(name, values.dtype, shape, values.requiresGrad,
      { compressed_indices: resolved(compressed), plain_indices: resolved(plain), values: resolved(values) });
  }
  throw new V.Decline(`sparse layout ${name}`);
}

function rebuildSparseCsrTensor(a, m) {
  if (a[0].name !== 'sparse_csr') throw m.fail(`_rebuild_sparse_csr_tensor of layout ${a[0].name}`, 'bad-value');
  return rebuildSparseTensor(a, m);
}

function parseDevice(m, text, index = null) {
  const match = typeof text === 'string' ? DEVICE.exec(text) : null;
  if (match === null || !DEVICE_TYPES.includes(match[1])) throw m.fail(`${JSON.stringify(text)} is not a device string`, 'bad-value');
  let parsed = match[2] === undefined ? null : BigInt(match[2]);
  if (index !== null) {
    if (parsed !== null) throw m.fail('a device string with an index, and an index', 'bad-value');
    parsed = index;
  }
  if (parsed !== null && !(parsed >= 0n && parsed <= 127n)) throw m.fail(`device index ${parsed}`, 'bad-value');
  return [match[1], parsed];
}

function device(a, m) {
  const [kind, index] = parseDevice(m, a[0], a.length > 1 ? a[1] : null);
  return new V.Opaque('torch.device', index === null ? [kind] : [kind, index]);
}

function rebuildDeviceTensorFromCpuTensor(a, m) {
  const [data, dtypeG, deviceText, requiresGrad] = a;
  if (DTYPES[dtypeG.name] !== data.dtype) throw new V.Decline(`dtype conversion ${data.dtype.name} -> ${dtypeG.name} on load`);
  const [kind, index] = parseDevice(m, deviceText);
  grad(m, data.dtype.name, requiresGrad);
  if (kind === 'meta') {
    const c = contiguousStride(data.shape);
    if (data.shape.some((n, i) => n !== 1n && data.stride[i] !== c[i])) throw new V.Decline('a non-contiguous tensor moved to the meta device');
    return new V.MetaTensor(data.dtype, data.shape, data.stride, requiresGrad);
  }
  if ((index === null ? kind : `${kind}:${index}`) !== data.device) throw new V.Decline(`a tensor copied from ${data.device} to ${deviceText} on load`);
  data.requiresGrad = requiresGrad;
  return data;
}

function rebuildFromTypeV2(a, m) {
  const [func, newType, fargs, state] = a;
  let t = m.call(func, fargs);
  const isT = t instanceof V.Tensor || t instanceof V.MetaTensor;
  if (newType.qualname === 'torch.nn.parameter.Parameter' && isT) t = asParameter(t, t.requiresGrad);
  else if (newType.qualname === 'torch.Tensor' && isT && t.parameter) t = V.replace(t, { parameter: false });
  else if (newType.qualname !== 'torch.Tensor') throw m.fail(`${newType.qualname} is not a tensor type`, 'bad-value');
  checkState(m, state);
  return t;
}

// -- other values (spec/canonical.md#canonical-pt-values)

function orderedDict(a, m) {
  const d = new V.ODict();
  const items = a.length ? a[0] : new V.PyList();
  if (items instanceof V.PyDict) for (const [k, v] of items.entries()) d.set(m.hashable(k), v);
  else for (const p of seq(items)) { const [k, v] = seq(p); d.set(m.hashable(k), v); }
  return d;
}

function latin1(m, text, encoding) {
  if (encoding !== 'latin1' && encoding !== 'latin-1') throw m.fail(`encoding ${JSON.stringify(encoding)} (only latin-1)`, 'bad-value');
  const out = new Uint8Array(text.length);
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c > 255) throw m.fail('a code point above 255 in latin-1 text', 'bad-value');
    out[i] = c;
  }
  return out;
}

function bytearray(a, m) {
  if (!a.length) return new V.PyByteArray(new Uint8Array(0));
  const source = a[0];
  if (source instanceof V.PyBytes) {
    if (a.length > 1) throw m.fail('bytearray(bytes) takes no encoding');
    return new V.PyByteArray(Uint8Array.from(source.b));
  }
  return new V.PyByteArray(latin1(m, source, a.length > 1 ? a[1] : null));
}

function getLayout(a, m) {
  const name = a[0];
  if (!(name.startsWith('torch.') && LAYOUTS.includes(name.slice(6)))) throw m.fail(`${JSON.stringify(name)} names no layout`, 'bad-value');
  return new V.Global('torch', name.slice(6));
}

function complex(a, m) {
  const parts = [...a, 0.0, 0.0].slice(0, 2).map(Number);
  if (parts.some((x, i) => typeof a[i] === 'bigint' && !Number.isFinite(x))) throw m.fail('a complex part that does not fit a double', 'bad-value');
  return new V.Opaque('builtins.complex', parts);
}

function torchSize(a, m) {
  const items = a.length ? seq(sizeItems(a[0])).map((x) => (typeof x === 'boolean' ? BigInt(x) : x)) : [];
  return new V.Opaque('torch.Size', [m.tuple(items)]);
}

const first = (a) => a[0];
const HANDLERS = {
  'collections.OrderedDict': orderedDict,
  'builtins.set': (a, m) => m.set(a.length ? (seq(a[0]) || [...a[0].values()]) : []),
  'builtins.frozenset': (a, m) => m.frozenset(a.length ? (seq(a[0]) || [...a[0].values()]) : []),
  'builtins.bytearray': bytearray,
  'builtins.bytes': () => new V.PyBytes(new Uint8Array(0)),
  '_codecs.encode': (a, m) => new V.PyBytes(latin1(m, a[0], a[1])),
  'builtins.complex': complex,
  'torch.Size': torchSize,
  'torch.device': device,
  'torch.serialization._get_layout': getLayout,
  'torch._utils._rebuild_tensor': rebuildTensor,
  'torch._utils._rebuild_tensor_v2': rebuildTensorV2,
  'torch._utils._rebuild_tensor_v3': rebuildTensorV3,
  'torch._utils._rebuild_parameter': (a, m) => asParameter(a[0], a[1], m),
  'torch._utils._rebuild_parameter_with_state': (a, m) => { checkState(m, a[3]); return asParameter(a[0], a[1], m); },
  'torch._utils._rebuild_qtensor': rebuildQtensor,
  'torch._utils._rebuild_sparse_tensor': rebuildSparseTensor,
  'torch._utils._rebuild_meta_tensor_no_storage': rebuildMetaTensorNoStorage,
  'torch._utils._rebuild_sparse_csr_tensor': rebuildSparseCsrTensor,
  'torch._utils._rebuild_device_tensor_from_cpu_tensor': rebuildDeviceTensorFromCpuTensor,
  'torch._tensor._rebuild_from_type_v2': rebuildFromTypeV2,
  'torch._tensor._rebuild_from_type': rebuildFromTypeV2,
  'torch.nn.parameter.Parameter': parameter,
  'torch.jit._pickle.build_intlist': first,
  'torch.jit._pickle.build_tensorlist': first,
  'torch.jit._pickle.build_doublelist': first,
  'torch.jit._pickle.build_boollist': first,
  'torch.jit._pickle.build_tensor_from_id': (a) => (typeof a[0] === 'bigint' ? a[0] : null),
  'torch.jit._pickle.restore_type_tag': first,
};
for (const name of Object.keys(TENSOR_TYPES)) {
  HANDLERS[name] = () => emptyTensor(TENSOR_TYPES[name], name.startsWith('torch.cuda.') ? 'cuda' : 'cpu');
}

module.exports = { HANDLERS, isKind, isInts, checkView, buildTensor };
