'use strict';
// The .pt variants through their grammars, a port of conformance/adapters/kaitai/pt.py: pytorch_zip.ksy
// (zip checkpoints and TorchScript archives), pytorch_legacy.ksy (the legacy stream), pytorch_tar.ksy
// (torch 0.1.x), each pickle through python_pickle.ksy's `op` and pickle.js.  What the grammars leave to a
// reader is here: what a persistent id names, which records must exist and agree, how many storages follow.
const { BY_STORAGE_CLASS, DTYPES } = require('./facts.js');
const V = require('./values.js');
const P = require('./parsers.js');
const { Machine, opsFrom } = require('./pickle.js');

const K = P.KaitaiStream;
const LEGACY_MAGIC = 0x1950A86A20F9469CFC6Cn;
const LEGACY_PROTOCOL = 1001n;
const TYPE_SIZES = { short: [2n], int: [4n], long: [4n, 8n] };
const UNTYPED = ['torch.storage.UntypedStorage'];
const DECIMAL = /^[0-9]{1,20}\n?$/;
const lower = (s) => s.replace(/[A-Z]/g, (c) => c.toLowerCase());
const latin1 = (b) => { let s = ''; for (const c of b) s += String.fromCharCode(c); return s; };
const eq = (a, b) => a.length === b.length && a.every((x, i) => x === b[i]);

function parse(grammar, what, make, validation = null) {
  try { return make(); } catch (e) { throw P.fromKaitai(e, grammar, what, validation); }
}

/** An object of a generated type read at `io`'s position whose fields survive a failure (the JS version
 * of kaitai/failure.py's half_read): [object, error or null]. */
function halfRead(Type, io, parent, root, params = {}) {
  const obj = Object.create(Type.prototype);
  Object.assign(obj, { _io: io, _parent: parent, _root: root }, params);
  try { obj._read(); return [obj, null]; } catch (e) { return [obj, e]; }
}

function storageType(stype) {
  if (stype instanceof V.Global) {
    if (UNTYPED.includes(stype.qualname)) return [DTYPES.uint8, false];
    if ((stype.module === 'torch' || stype.module === 'torch.cuda') && BY_STORAGE_CLASS[stype.name]) return [BY_STORAGE_CLASS[stype.name], true];
  }
  throw new V.Reject('bad-reference', `persistent id names ${V.typeName(stype)}, not a storage type`);
}

function location(loc) {
  if (loc instanceof V.PyBytes) loc = latin1(loc.b).replace(/[\x80-\xff]/g, '\ufffd');
  if (typeof loc !== 'string' || !loc) throw new V.Reject('bad-value', 'storage location is not a device string');
  return loc;
}

/** Run a pickle from `io` opcode by opcode; `record`: it is a record of its own, which must end at STOP. */
function runPickle(io, what, machine, { record, limit = null }) {
  const value = machine.run(opsFrom(io, record), what, record ? io.size : limit);
  if (record && io.pos !== io.size) throw new V.Reject('bad-pickle', `${what}: ${io.size - io.pos} bytes after STOP`);
  return value;
}

// -- zip (spec/pt-zip.md)

const EOCD_SIG = [0x50, 0x4b, 0x05, 0x06];
const LOCATOR_SIG = [0x50, 0x4b, 0x06, 0x07];
const MAX_COMMENT = 0xffff;
const TORCH_RECORDS = new Set(['data.pkl', 'version', 'constants.pkl', 'model.json']);

function at(buf, pos, make) {
  const io = new K(buf.buffer, buf.byteOffset);
  io.seek(pos);
  return make(io);
}

function lastIndexOf(buf, sig, from, lo) {
  for (let i = Math.min(from, buf.length - 4); i >= lo; i--) {
    if (buf[i] === sig[0] && buf[i + 1] === sig[1] && buf[i + 2] === sig[2] && buf[i + 3] === sig[3]) return i;
  }
  return -1;
}

class ZipArchive {
  constructor(buf) {
    const Z = P.PytorchZip.PytorchZip;
    this.buf = buf;
    this.size = buf.length;
    const z = this.root = new Z(new K(buf.buffer, buf.byteOffset));
    const eocdAt = this.findEocd();
    const eocd = parse('pytorch_zip', 'end of central directory', () => at(buf, eocdAt, (io) => new Z.EndOfCentralDir(io, z, z)), 'bad-container');
    let [count, cdLen, cdOfs, endsAt] = [eocd.numEntriesTotal, eocd.lenCentralDir, eocd.ofsCentralDir, eocdAt];
    if (eocd.numEntriesOnDisk !== eocd.numEntriesTotal) throw new V.Reject('bad-container', 'the entry counts of this disk and of the archive differ');
    if (eocdAt >= 20 && eq([...buf.subarray(eocdAt - 20, eocdAt - 16)], LOCATOR_SIG)) {
      const loc = parse('pytorch_zip', 'zip64 locator', () => at(buf, eocdAt - 20, (io) => new Z.Zip64Locator(io, z, z)), 'bad-container');
      const z64At = loc.ofsZip64EndOfCentralDir;
      if (z64At + 56 > eocdAt - 20) throw new V.Reject('out-of-bounds', 'the zip64 end record does not lie before its locator');
      const z64 = parse('pytorch_zip', 'zip64 end record', () => at(buf, z64At, (io) => new Z.Zip64EndOfCentralDir(io, z, z)), 'bad-container');
      for (const [v32, v64, see] of [[eocd.numEntriesTotal, z64.numEntriesTotal, 0xffff],
        [eocd.lenCentralDir, z64.lenCentralDir, 0xffffffff], [eocd.ofsCentralDir, z64.ofsCentralDir, 0xffffffff]]) {
        if (v32 !== v64 && v32 !== see) throw new V.Reject('bad-container', 'the end record and the zip64 end record disagree');
      }
      [count, cdLen, cdOfs, endsAt] = [z64.numEntriesTotal, z64.lenCentralDir, z64.ofsCentralDir, z64At];
    }
    if (cdOfs + cdLen > endsAt) throw new V.Reject('out-of-bounds', 'the central directory does not lie before the end records');
    const raw = Uint8Array.from(buf.subarray(cdOfs, cdOfs + cdLen));
    const cdIo = new K(raw.buffer);
    let cd;
    try { cd = new Z.CentralDir(cdIo, z, z, count); } catch (e) {
      const r = P.fromKaitai(e, 'pytorch_zip', 'central directory', 'bad-container');
      if (r.code === 'truncated') throw new V.Reject('bad-container', `the central directory does not hold ${count} entries`);
      throw r;
    }
    if (cdIo.pos !== cdLen) throw new V.Reject('bad-container', `${cdLen - cdIo.pos} bytes of the central directory after its entries`);
    const names = cd.entries.map((e) => e.fileName);
    const last = names.map((n) => lower(n.replace(/\\/g, '/').split('/').pop()));
    if (names.length && !last.some((n) => TORCH_RECORDS.has(n))) {
      throw new V.Reject('unknown-format', 'a zip archive, not a torch checkpoint (no data.pkl, version or constants.pkl record)');
    }
    this.records = new Map(); // folded name -> entry
    this.exact = new Set();
    const spans = [];
    let root = null;
    for (const e of cd.entries) {
      const name = e.fileName;
      checkEntry(e, name);
      if (name.endsWith('/')) {
        if (e.lenBody || e.lenUncompressed) throw new V.Reject('bad-container', `directory entry ${JSON.stringify(name)} holds data`);
        continue;
      }
      const cut = name.indexOf('/');
      if (cut < 0) throw new V.Reject('bad-container', `record ${JSON.stringify(name)} is not inside a root folder`);
      const folder = name.slice(0, cut);
      const rel = name.slice(cut + 1);
      if (root === null) root = folder;
      else if (folder !== root) throw new V.Reject('bad-container', `records in two root folders, ${JSON.stringify(root)} and ${JSON.stringify(folder)}`);
      const folded = lower(rel);
      if (this.records.has(folded)) throw new V.Reject('bad-container', `record ${JSON.stringify(name)} appears twice (names equal up to ASCII case)`);
      const lf = this.localHeader(e, name, cdOfs);
      if (lf.fileName !== name || lf.compressionMethod !== e.compressionMethod || ((lf.flags ^ e.flags) & 0x49)) {
        throw new V.Reject('bad-container', `the local header of ${JSON.stringify(name)} disagrees with its central entry`);
      }
      if (!(e.flags & 0x08) && lf.lenCompressed !== 0xffffffff && lf.lenUncompressed !== 0xffffffff
        && (lf.lenCompressed !== e.lenBody || lf.lenUncompressed !== e.lenUncompressed)) {
        throw new V.Reject('bad-container', `the local sizes of ${JSON.stringify(name)} disagree with its central entry`);
      }
      if (lf.ofsBody + e.lenBody > cdOfs) throw new V.Reject('out-of-bounds', `record ${JSON.stringify(name)} reaches past the start of the central directory`);
      spans.push([e.ofsLocalHeader, lf.ofsBody + e.lenBody, name]);
      this.records.set(folded, e);
      this.exact.add(rel);
    }
    spans.sort((a, b) => a[0] - b[0] || a[1] - b[1]);
    for (let i = 0; i + 1 < spans.length; i++) {
      if (spans[i][1] > spans[i + 1][0]) throw new V.Reject('bad-container', `record ${JSON.stringify(spans[i][2])} overlaps the next one`);
    }
    if (root === null) throw new V.Reject('bad-container', 'the archive holds no record');
  }

  has(name) { return this.records.has(lower(name)); }

  localHeader(e, name, cdOfs) {
    const ofs = e.ofsLocalHeader;
    const extent = (n, inFile = true) => {
      if (inFile && ofs + n > this.size) throw new V.Reject('truncated', `the local header of ${JSON.stringify(name)} reaches past the end of the file`);
      if (ofs + n > cdOfs) throw new V.Reject('out-of-bounds', `the local header of ${JSON.stringify(name)} reaches the central directory`);
    };
    extent(30);
    const Z = P.PytorchZip.PytorchZip;
    const io = this.root._io;
    io.seek(ofs);
    const [lf, err] = halfRead(Z.LocalFile, io, e, this.root, { ofsHeader: ofs, lenBody: e.lenBody });
    if (err) {
      if (lf.lenExtra !== undefined) extent(30 + lf.lenFileName + lf.lenExtra, false);
      throw P.fromKaitai(err, 'pytorch_zip', `local header of ${JSON.stringify(name)}`, 'bad-container');
    }
    e._m_localFile = lf;
    return lf;
  }

  findEocd() {
    const buf = this.buf;
    const lo = Math.max(0, this.size - 22 - MAX_COMMENT);
    const found = [];
    let seen = false;
    const u16 = (p) => buf[p] | (buf[p + 1] << 8);
    for (let i = lastIndexOf(buf, EOCD_SIG, this.size - 4, lo); i >= 0; i = lastIndexOf(buf, EOCD_SIG, i - 1, lo)) {
      seen = true;
      if (i + 22 <= this.size && i + 22 + u16(i + 20) === this.size) found.push(i);
    }
    if (found.length > 1) throw new V.Reject('ambiguous', 'two end records end at the end of the file (a comment holds an archive)');
    const lastFull = lastIndexOf(buf, EOCD_SIG, this.size - 22, lo);
    if (found.length && lastFull !== found[0]) throw new V.Reject('ambiguous', 'an end record inside the comment of the one that ends the file');
    if (!found.length) {
      if (seen) {
        const last = lastIndexOf(buf, EOCD_SIG, this.size - 4, lo);
        if (last + 22 > this.size || last + 22 + u16(last + 20) > this.size) {
          throw new V.Reject('truncated', 'the file ends inside the end-of-central-directory record or its comment');
        }
        throw new V.Reject('bad-container', 'bytes follow the end-of-central-directory record');
      }
      throw new V.Reject('truncated', 'no end-of-central-directory record at the end of the file');
    }
    return found[0];
  }

  stored(name) {
    const e = this.records.get(lower(name));
    if (!e.isStored) throw new V.Reject('bad-container', `record ${JSON.stringify(name)} is compressed (method ${e.compressionMethod})`);
    return e;
  }

  body(name) {
    const e = this.stored(name);
    return parse('pytorch_zip', `record ${JSON.stringify(name)}`, () => e.localFile.body);
  }

  view(name) {
    const e = this.stored(name);
    const start = e.localFile.ofsBody;
    return this.buf.subarray(start, start + e.lenBody);
  }

  decimal(name, code = 'bad-value') {
    const raw = latin1(this.body(name));
    if (!DECIMAL.test(raw)) throw new V.Reject(code, `record ${JSON.stringify(name)} holds ${JSON.stringify(raw.slice(0, 20))}, not a decimal`);
    return BigInt(raw.trim());
  }
}

function checkEntry(e, name) {
  const q = JSON.stringify(name);
  if (e.diskStart32 !== 0) throw new V.Reject('bad-container', `record ${q} starts on disk ${e.diskStart32}`);
  if ((e.externalAttrs & 0x10) && !name.endsWith('/')) throw new V.Reject('bad-container', `record ${q} has the MS-DOS directory attribute`);
  if (e.flags & 0x2041) throw new V.Reject('bad-container', `record ${q} is encrypted`);
  const stored = e.compressionMethod === P.PytorchZip.PytorchZip.Compression.STORED;
  if (stored && e.lenBody !== e.lenUncompressed) throw new V.Reject('bad-container', `stored record ${q} has two sizes`);
  const wide = [e.lenCompressed32, e.lenUncompressed32, e.ofsLocalHeader32].includes(0xffffffff);
  if (wide && !e.hasZip64) throw new V.Reject('bad-container', `record ${q} lacks its zip64 extra field`);
  const parts = name.endsWith('/') ? name.replace(/\/+$/, '').split('/') : name.split('/');
  if (!name || name.startsWith('/') || name.includes('\\') || name.includes('\0') || parts.some((p) => ['', '.', '..'].includes(p))) {
    throw new V.Reject('bad-container', `record name ${q} is not a key`);
  }
}

class ZipStorages {
  constructor(archive, prefix, byteOrder) { Object.assign(this, { archive, prefix, byteOrder, loaded: new Map() }); }

  load(pid) {
    const items = pid instanceof V.PyTuple ? pid.items : null;
    if (!(items && items.length === 5 && (items[0] === 'storage' || (items[0] instanceof V.PyBytes && latin1(items[0].b) === 'storage')))) {
      throw new V.Reject('bad-reference', "a persistent id must be ('storage', type, key, location, numel)");
    }
    const [, stype, rawKey, loc, numel] = items;
    const [dtype, typed] = storageType(stype);
    if (!(typeof rawKey === 'string' || typeof rawKey === 'bigint') || typeof numel !== 'bigint') {
      throw new V.Reject('bad-reference', "a persistent id's key must be a str and its numel an int");
    }
    const key = String(rawKey);
    const id = `${typeof rawKey}:${key}`; // spec/tensors.md#tensors-storage-identity
    const signature = [dtype.name, typed, location(loc), numel].join('\0');
    const known = this.loaded.get(id);
    if (known) {
      if (known[0] !== signature) throw new V.Reject('bad-reference', `storage ${JSON.stringify(key)} named twice with different type, location or size`);
      return known[1];
    }
    if (numel < 0n) throw new V.Reject('bad-length', `storage ${JSON.stringify(key)} of ${numel} elements`);
    const name = this.prefix + key;
    if (!this.archive.has(name)) throw new V.Reject('bad-reference', `no record ${JSON.stringify(name)} for storage ${JSON.stringify(key)}`);
    const e = this.archive.stored(name);
    if (BigInt(e.lenBody) !== numel * BigInt(dtype.itemsize)) {
      throw new V.Reject('bad-value', `record ${JSON.stringify(name)} holds ${e.lenBody} bytes, not ${numel} x ${dtype.itemsize}`);
    }
    const storage = new V.Storage(dtype, numel, location(loc), this.archive.view(name), this.byteOrder, typed);
    if (numel) this.loaded.set(id, [signature, storage]);
    return storage;
  }
}

function readZip(buf) {
  const a = new ZipArchive(buf);
  const torchscript = a.exact.has('constants.pkl');
  if (torchscript && !a.has('data.pkl') && a.has('model.json')) throw new V.Decline('TorchScript archive of the model.json era');
  const versionName = a.has('.data/version') ? '.data/version' : 'version';
  if (!a.has(versionName)) throw new V.Reject('bad-container', 'the archive has no version record');
  const version = a.decimal(versionName);
  if (!(version >= 1n && version <= 10n)) throw new V.Reject('bad-magic', `format version ${version}`);
  let byteOrder = 'little';
  if (a.has('byteorder')) {
    byteOrder = latin1(a.body('byteorder'));
    if (byteOrder !== 'little' && byteOrder !== 'big') throw new V.Reject('bad-value', `byteorder record ${JSON.stringify(byteOrder.slice(0, 20))}`);
  }
  if (a.has('.storage_alignment') && a.decimal('.storage_alignment') === 0n) throw new V.Reject('bad-value', 'storage alignment 0');
  if (a.has('.format_version')) a.decimal('.format_version');
  const scopes = new Set(torchscript ? ['torch', 'torchscript'] : ['torch']);
  const opaqueModules = torchscript ? ['__torch__'] : [];
  const unpickle = (name, prefix) => {
    if (!a.has(name)) throw new V.Reject('bad-container', `the archive has no ${name} record`);
    a.stored(name);
    const view = a.view(name);
    const storages = new ZipStorages(a, prefix, byteOrder);
    const m = new Machine((pid) => storages.load(pid), { scopes, opaqueModules });
    return runPickle(subStream(view), name, m, { record: true });
  };
  const obj = unpickle('data.pkl', 'data/');
  if (a.has('.data/serialization_id')) {
    try { new TextDecoder('utf-8', { fatal: true }).decode(a.body('.data/serialization_id')); } catch (e) {
      if (e instanceof V.Reject) throw e;
      throw new V.Reject('bad-value', 'the .data/serialization_id record is not UTF-8');
    }
  }
  if (torchscript) {
    if (a.has('constants.pkl')) unpickle('constants.pkl', 'constants/');
    return ['pt-torchscript', [obj]];
  }
  return ['pt-zip', [obj]];
}

/** A stream over exactly `bytes` (a record), as the grammar's substream of its body. */
function subStream(bytes) {
  const copy = Uint8Array.from(bytes);
  return new K(copy.buffer);
}

// -- the legacy stream (spec/pt-legacy.md)

function checkSysInfo(sysInfo, protocol) {
  const get = (k) => (sysInfo instanceof V.PyDict ? sysInfo.get(k) : undefined);
  const pv = get('protocol_version');
  if (!(sysInfo instanceof V.PyDict && (pv === protocol || (typeof pv === 'boolean' && BigInt(pv) === protocol)
    || (typeof pv === 'number' && pv === Number(protocol))) && typeof get('little_endian') === 'boolean' && get('type_sizes') instanceof V.PyDict)) {
    throw new V.Reject('bad-value', `sys_info must hold protocol_version ${protocol}, little_endian and type_sizes`);
  }
  const sizes = get('type_sizes');
  for (const [name, allowed] of Object.entries(TYPE_SIZES)) {
    const v = sizes.get(name);
    const n = typeof v === 'bigint' ? v : typeof v === 'boolean' ? BigInt(v) : (typeof v === 'number' && Number.isInteger(v)) ? BigInt(v) : null;
    if (n === null || !allowed.includes(n)) throw new V.Decline(`legacy type_sizes ${name}=${v === undefined ? 'None' : String(v)}`);
  }
}

class LegacyStorages {
  constructor() { this.roots = new Map(); this.views = new Map(); }

  load(pid) {
    const items = pid instanceof V.PyTuple ? pid.items : null;
    if (!items || !items.length) throw new V.Reject('bad-reference', 'a persistent id must be a non-empty tuple');
    const kind = items[0] instanceof V.PyBytes ? latin1(items[0].b) : items[0];
    if (kind === 'module' && items.length === 4 && items[1] instanceof V.Global) return items[1];
    if (kind !== 'storage' || items.length !== 6) throw new V.Reject('bad-reference', "a persistent id must be ('storage', type, key, location, numel, view)");
    const [, stype, key, loc, numel, view] = items;
    const [dtype, typed] = storageType(stype);
    if (typeof numel !== 'bigint' || !(typeof key === 'string' || typeof key === 'bigint' || key instanceof V.PyBytes)) {
      throw new V.Reject('bad-reference', "a persistent id's key must be a str and its numel an int");
    }
    if (numel < 0n) throw new V.Reject('bad-length', `storage of ${numel} elements`);
    const k = V.pyKey(key);
    const signature = [dtype.name, location(loc), numel].join('\0');
    if (this.views.has(k)) throw new V.Reject('bad-reference', 'a key names both a storage and a view');
    let root;
    if (this.roots.has(k)) {
      const known = this.roots.get(k);
      if (known.signature !== signature) throw new V.Reject('bad-reference', 'a storage named twice with different type, location or size');
      root = known.storage;
    } else {
      root = new V.Storage(dtype, numel, location(loc), null, 'little', typed);
      this.roots.set(k, { signature, storage: root, dtype, numel });
    }
    if (view === null) return root;
    const vi = view instanceof V.PyTuple ? view.items : null;
    if (!(vi && vi.length === 3 && typeof vi[1] === 'bigint' && typeof vi[2] === 'bigint')) {
      throw new V.Reject('bad-reference', 'view metadata must be (view_key, offset, size)');
    }
    const [viewKey, start, n] = vi;
    const vk = V.pyKey(viewKey);
    if (this.roots.has(vk)) throw new V.Reject('bad-reference', 'a key names both a storage and a view');
    if (this.views.has(vk)) {
      const known = this.views.get(vk);
      if (known.rootKey !== k || known.start !== start || known.storage.numel !== n) throw new V.Reject('bad-reference', 'a view named twice differently');
      return known.storage;
    }
    if (start < 0n || n < 0n || start + n > numel) throw new V.Reject('out-of-bounds', `view [${start}, ${start + n}) of a storage of ${numel} elements`);
    const storage = new V.Storage(dtype, n, root.device);
    this.views.set(vk, { rootKey: k, start, storage });
    return storage;
  }
}

const LEGACY_PICKLES = ['magic number', 'protocol version', 'sys_info', 'object pickle', 'storage keys'];

function readLegacy(buf) {
  const size = buf.length;
  const io = new K(buf.buffer, buf.byteOffset);
  const run = (k, m) => m.run(opsFrom(io), LEGACY_PICKLES[k], size - io.pos);
  const header = new Machine();
  const magic = run(0, header);
  if (magic !== LEGACY_MAGIC) throw new V.Reject('bad-magic', 'magic number');
  const version = run(1, header);
  if (version !== LEGACY_PROTOCOL) throw new V.Reject('bad-magic', `protocol version ${version}`);
  const sysInfo = run(2, header);
  checkSysInfo(sysInfo, LEGACY_PROTOCOL);
  const storages = new LegacyStorages();
  const obj = run(3, new Machine((pid) => storages.load(pid)));
  const keys = run(4, header);
  if (!(keys instanceof V.PyList) || !keys.items.every((k) => typeof k === 'string' || typeof k === 'bigint' || k instanceof V.PyBytes)) {
    throw new V.Reject('bad-value', 'the storage key list is not a list of keys');
  }
  const names = keys.items.map((k) => V.pyKey(k));
  if (new Set(names).size !== names.length || names.some((k) => !storages.roots.has(k)) || names.length !== storages.roots.size) {
    throw new V.Reject('bad-reference', 'the storage key list does not name each storage once');
  }
  const little = sysInfo.get('little_endian');
  const L = P.PytorchLegacy.PytorchLegacy;
  for (const k of names) {
    const { storage: root, dtype, numel } = storages.roots.get(k);
    const [rec, err] = halfRead(L.Storage, io, null, null, { elementSize: dtype.itemsize });
    const count = rec.numElements;
    if (count !== undefined && BigInt(count) !== numel) {
      if (!little) throw new V.Decline('a legacy storage count in big-endian order (the grammar reads it little-endian)');
      throw new V.Reject('bad-value', `a storage holds ${count} elements, its persistent id says ${numel}`);
    }
    if (err) throw P.fromKaitai(err, 'pytorch_legacy', 'storage', 'bad-length');
    root.raw = rec.data;
  }
  if (io.pos !== size) throw new V.Reject('bad-container', `${size - io.pos} bytes after the last storage`);
  for (const { rootKey, start, storage } of storages.views.values()) {
    const root = storages.roots.get(rootKey).storage;
    const w = BigInt(root.dtype.itemsize);
    storage.raw = root.raw.subarray(Number(start * w), Number((start + storage.numel) * w));
  }
  return ['pt-legacy', [obj]];
}

module.exports = { readZip, readLegacy, checkSysInfo, storageType, location, runPickle, parse, halfRead, subStream };
