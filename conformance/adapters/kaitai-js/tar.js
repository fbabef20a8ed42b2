'use strict';
// tar checkpoints (spec/pt-tar.md) through pytorch_tar.ksy, a port of the tar part of
// conformance/adapters/kaitai/pt.py: the grammar reads the members, their pickles and records; this module
// checks what it leaves to a reader (PAX records, which members exist, what records name).
const { LIMITS, OPCODES } = require('./facts.js');
const V = require('./values.js');
const P = require('./parsers.js');
const { Machine } = require('./pickle.js');
const rebuild = require('./rebuild.js');
const { checkSysInfo, storageType, location } = require('./pt.js');

const K = P.KaitaiStream;
const TAR_PROTOCOL = 1000n;
const MAX_PAX_BYTES = LIMITS.TAR_PAX_BYTES;
const latin1 = (b) => { let s = ''; for (const c of b) s += String.fromCharCode(c); return s; };
const utf8Length = (s) => Buffer.byteLength(s, 'utf8');

/** The code for a failure of pytorch_tar.ksy: its valid: checks are the count pickles' layout
 * (bad-container), a record's element or dimension count (bad-length) and an opcode (bad-opcode). */
function tarFailure(e, what) {
  if (e instanceof K.ValidationNotEqualError || e instanceof K.ValidationNotAnyOfError) return P.fromKaitai(e, 'pytorch_tar', what, 'bad-container');
  if (e instanceof K.ValidationExprError || e instanceof K.ValidationLessThanError) return P.fromKaitai(e, 'pytorch_tar', what, 'bad-length');
  if (e instanceof K.ValidationNotInEnumError) return P.fromKaitai(e, 'pytorch_tar', what, 'bad-opcode');
  return P.fromKaitai(e, 'pytorch_tar', what, 'bad-container');
}

const LENGTH_FIELD = { BytesU1: 1, BytesS4: 4, BytesU4: 4, BytesU8: 8, UnicodeU1: 1, UnicodeU4: 4, UnicodeU8: 8 };

/** How many bytes a parsed opcode took (the grammar keeps no offsets). */
function opSize(op) {
  const info = OPCODES.get(op.code);
  if (op.arg === undefined) return 1 + ((info && info.width) || 0);
  const kind = op.arg && op.arg.constructor ? op.arg.constructor.name : '';
  if (kind in LENGTH_FIELD) return 1 + LENGTH_FIELD[kind] + Number(op.arg.len);
  if (kind === 'GlobalPair') return 1 + utf8Length(op.arg.moduleName) + utf8Length(op.arg.name) + 2;
  if (kind === 'DecimalLine') return 1 + op.arg.value.length + 1;
  if (kind === 'TextLine') return 1 + utf8Length(op.arg.value) + 1;
  if (kind === 'RawLine') return 1 + op.arg.value.length + 1;
  return 1 + ((info && info.width) || 0);
}

/** The value of a python_pickle the grammar parsed whole; `exact`: it is a member of its own, ending at STOP. */
function runParsed(pickle, what, machine, exact) {
  for (const op of pickle.ops) op.size = opSize(op);
  const value = machine.run(pickle.ops, what, exact ? pickle._io.size : null);
  if (exact && pickle._io.pos !== pickle._io.size) throw new V.Reject('bad-pickle', `${what}: ${pickle._io.size - pickle._io.pos} bytes after STOP`);
  return value;
}

function paxRecords(body, fileSize) {
  if (body.length > MAX_PAX_BYTES) throw new V.Reject('limit-exceeded', `a PAX extended header of ${body.length} bytes (limit ${MAX_PAX_BYTES})`);
  const text = latin1(body);
  const out = new Map();
  let i = 0;
  while (i < text.length) {
    const m = /^([0-9]+) /.exec(text.slice(i, i + 32));
    const digits = m ? m[1].replace(/^0+/, '') : '';
    const n = m && digits.length > 0 && digits.length <= String(text.length).length ? Number(digits) : 0;
    if (!m || n <= m[0].length || i + n > text.length || text[i + n - 1] !== '\n') throw new V.Reject('bad-container', 'malformed PAX record');
    const record = text.slice(i + m[0].length, i + n - 1);
    const eq = record.indexOf('=');
    if (eq < 0) throw new V.Reject('bad-container', "PAX record without '='");
    out.set(record.slice(0, eq), record.slice(eq + 1));
    i += n;
  }
  const size = out.get('size');
  if (size !== undefined) {
    if (!/^[0-9]+$/.test(size)) throw new V.Reject('bad-container', 'a PAX size that is not ASCII digits');
    if (size.replace(/^0+/, '').length > String(fileSize).length || BigInt(size) > BigInt(fileSize)) {
      throw new V.Reject('truncated', 'a PAX size past the end of the file');
    }
  }
  return out;
}

const TAR_NUMBERS = [[100, 108], [108, 116], [116, 124], [124, 136], [136, 148], [329, 337], [337, 345]];

/** A tar header number as Python's tarfile reads it: base-256 after 0x80 or 0xff, else ASCII octal up to
 * the first NUL, spaces around it ignored; null when it is neither. */
function tarNumber(field) {
  if (field[0] === 0o200 || field[0] === 0o377) {
    let n = 0n;
    for (const b of field.subarray(1)) n = (n << 8n) | BigInt(b);
    return field[0] === 0o377 ? n - (1n << BigInt(8 * (field.length - 1))) : n;
  }
  const cut = field.indexOf(0);
  const raw = cut < 0 ? field : field.subarray(0, cut);
  if (raw.some((c) => c > 127)) return null;
  const text = latin1(raw).trim() || '0';
  return /^[+-]?[0-7]+(_[0-7]+)*$/.test(text) ? BigInt((text.startsWith('-') ? '-' : '') + '0o' + text.replace(/^[+-]/, '').replace(/_/g, '')) : null;
}

/** Whether the first 512 bytes are a tar header Python's tarfile accepts (spec/canonical.md#canonical-detect). */
function isTarHeader(head) {
  const block = head.subarray(0, 512);
  if (block.length < 512 || block.every((b) => b === 0)) return false;
  const checksum = tarNumber(block.subarray(148, 156));
  if (checksum === null || TAR_NUMBERS.some(([s, e]) => tarNumber(block.subarray(s, e)) === null)) return false;
  let unsigned = 0;
  let signed = 0;
  block.forEach((b, i) => {
    const c = i >= 148 && i < 156 ? 0x20 : b;
    unsigned += c;
    signed += c > 127 ? c - 256 : c;
  });
  return checksum === BigInt(unsigned) || checksum === BigInt(signed);
}

function readTar(buf) {
  const T = P.PytorchTar.PytorchTar;
  let tar;
  try { tar = new T(new K(buf.buffer, buf.byteOffset)); } catch (e) { throw tarFailure(e, 'tar archive'); }
  const members = new Map();
  let pax = new Map();
  for (const m of tar.members) {
    if (m.isEnd) break;
    const flag = String.fromCharCode(m.header.typeFlag);
    if (flag === 'x') { pax = paxRecords(m.body instanceof Uint8Array ? m.body : new Uint8Array(0), buf.length); continue; }
    if (flag === 'g') continue;
    const overrides = pax;
    pax = new Map();
    if (overrides.has('size') && Number(overrides.get('size')) !== m.header.lenBody) {
      throw new V.Decline('a PAX size record that overrides the ustar size (pytorch_tar.ksy sizes members by the ustar header)');
    }
    let name;  // pytorch_tar.ksy keeps the name as bytes (runtimes decode UTF-8 differently)
    try {
      name = new TextDecoder('utf-8', { fatal: true }).decode(Uint8Array.from(m.header.nameBytes));
    } catch (e) {
      throw new V.Reject('bad-container', 'tar archive: a header field that is not UTF-8');
    }
    if (overrides.has('path') && overrides.get('path') !== name) {
      throw new V.Decline('a PAX path record that renames a member (pytorch_tar.ksy names members by the ustar header)');
    }
    if (members.has(name)) throw new V.Reject('bad-container', `tar member ${JSON.stringify(name)} twice`);
    members.set(name, m.body);
  }
  for (const name of ['sys_info', 'pickle', 'tensors', 'storages']) {
    if (!members.has(name)) throw new V.Reject('bad-container', `the archive has no ${JSON.stringify(name)} member`);
  }
  const header = new Machine();
  checkSysInfo(runParsed(members.get('sys_info'), 'sys_info', header, true), TAR_PROTOCOL);
  const objects = new Map();
  const st = members.get('storages');
  for (const rec of st.storages) {
    const record = runParsed(rec.record, 'storage record', header, false);
    const r = record instanceof V.PyTuple ? record.items : null;
    if (!(r && r.length === 3 && typeof r[0] === 'bigint')) throw new V.Reject('bad-pickle', 'a storage record must be (key, location, type)');
    const [key, loc, stype] = r;
    const [dtype] = storageType(stype);
    if (dtype.itemsize !== rec.elementSize || objects.has(key)) throw new V.Reject('bad-reference', `storage ${key}: its type or a key seen before`);
    objects.set(key, new V.Storage(dtype, BigInt(rec.numElements), location(loc), rec.data));
  }
  const views = runParsed(st.storageViews, 'storage views', header, false);
  if (st._io.pos !== st._io.size) throw new V.Reject('bad-length', 'bytes after the storage views');
  if (!(views instanceof V.PyList)) throw new V.Reject('bad-pickle', 'storage views must be a list');
  for (const v of views.items) {
    const x = v instanceof V.PyTuple ? v.items : null;
    if (!(x && x.length === 4 && x.every((y) => typeof y === 'bigint'))) throw new V.Reject('bad-pickle', 'a storage view must be (key, root_key, offset, numel)');
    const [key, rootKey, start, n] = x;
    const root = objects.get(rootKey);
    if (!(root instanceof V.Storage) || objects.has(key)) throw new V.Reject('bad-reference', `view ${key} of unknown storage ${rootKey}`);
    if (start < 0n || n < 0n || start + n > root.numel) throw new V.Reject('out-of-bounds', `view [${start}, ${start + n}) of ${root.numel}`);
    const w = BigInt(root.dtype.itemsize);
    objects.set(key, new V.Storage(root.dtype, n, root.device, root.raw.subarray(Number(start * w), Number((start + n) * w))));
  }
  const tm = members.get('tensors');
  for (const rec of tm.tensors) {
    const record = runParsed(rec.record, 'tensor record', header, false);
    const r = record instanceof V.PyTuple ? record.items : null;
    if (!(r && r.length === 3 && typeof r[0] === 'bigint' && typeof r[1] === 'bigint')) {
      throw new V.Reject('bad-pickle', 'a tensor record must be (key, storage_key, type)');
    }
    const [key, storageKey] = r;
    const storage = objects.get(storageKey);
    if (!(storage instanceof V.Storage) || objects.has(key)) throw new V.Reject('bad-reference', `tensor ${key} of unknown storage ${storageKey}`);
    const size = rec.sizes.map(BigInt);
    const stride = rec.strides.map(BigInt);
    const offset = BigInt(rec.storageOffset);
    rebuild.checkView(storage, offset, size, stride, `tensor ${key}`);
    objects.set(key, new V.Tensor(storage.dtype, size, stride, offset, storage, storage.device));
  }
  if (tm._io.pos !== tm._io.size) throw new V.Reject('bad-length', 'bytes after the last tensor record');
  const persistentLoad = (pid) => {
    if (pid instanceof V.PyTuple && pid.items.length === 3 && pid.items[0] instanceof V.Global) return pid.items[0];
    if (!(typeof pid === 'string' && /^[0-9]+$/.test(pid) && objects.has(BigInt(pid)))) {
      throw new V.Reject('bad-reference', `persistent id ${JSON.stringify(String(pid))} names no tensor or storage`);
    }
    return objects.get(BigInt(pid));
  };
  return ['pt-tar', [runParsed(members.get('pickle'), 'pickle', new Machine(persistentLoad), true)]];
}

module.exports = { isTarHeader, readTar };
