// Drive netron 9.3.3's own modules on one file the way its ModelFactories do (pytorch.js Reader.Zip /
// Reader.Pickle / Reader.Tar call torch.load of python.js; torch.js's T7Reader reads .t7), then walk
// the objects netron builds and print the canonical description (spec/canonical.md). No check of our
// own: what netron builds is what is described. Usage: node driver.mjs NETRON_DIR FILE
// Exit 0 with the JSON; exit 1 with "netron-error: <class>: <message>" (run.py maps it to a code);
// exit 2 with "unsupported: <feature>"; exit 3 when this driver itself breaks.
// node driver.mjs NETRON_DIR --batch: one path per line on stdin; per path one line {"status", "err",
// "bytes"} on stdout, then the `bytes` bytes the one-file run would have printed (run.py --batch's side
// of spec/canonical.md#canonical-reader-batch).
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { createInterface } from 'node:readline';
import { pathToFileURL } from 'node:url';
import path from 'node:path';

const [netronDir, argument] = process.argv.slice(2);
const load = (name) => import(pathToFileURL(path.join(netronDir, name)).href);

class Decline extends Error {}
let family = 'pt';  // which of netron's readers ran: pt (python.js) or t7 (torch.js)

const sha = (bytes) => createHash('sha256').update(bytes).digest('hex');
const EMPTY = sha(new Uint8Array(0));

function fmtFloat(x) {
    if (Number.isNaN(x)) return 'nan';
    if (x === Infinity) return 'inf';
    if (x === -Infinity) return '-inf';
    if (Object.is(x, -0)) return '-0.0';
    return String(x).replace('e+', 'e+');
}

function bytesOf(data) {
    // netron keeps storage data as a Uint8Array or as one of its lazy streams
    if (data === undefined || data === null) return null;
    if (data instanceof Uint8Array) return data;
    if (typeof data.peek === 'function') {
        const pos = data.position;
        if (typeof data.seek === 'function') data.seek(0);
        const out = data.peek();
        if (typeof data.seek === 'function' && pos !== undefined) data.seek(pos);
        return out;
    }
    // netron accepted the file but holds this storage's data as something else (a BUILD set it)
    throw new Decline(`a storage whose data netron holds as ${typeof data} ${data.constructor && data.constructor.name}, not bytes`);
}

class Describer {
    constructor(fmt) {
        this.fmt = fmt;
        this.ids = new Map();
        this.counts = new Map();
        this.storageIds = new Map();
        this.storages = {};
        this.depth = 0;
    }

    count(v) {
        const stack = [v];
        while (stack.length) {
            const x = stack.pop();
            if (x === null || typeof x !== 'object') continue;
            if (ArrayBuffer.isView(x)) continue;
            const n = (this.counts.get(x) || 0) + 1;
            this.counts.set(x, n);
            if (n > 1) continue;
            for (const c of this.children(x)) stack.push(c);
        }
    }

    children(x) {
        if (x instanceof Map) return [...x.keys(), ...x.values()];
        if (Array.isArray(x)) return x;
        if (this.isTensor(x)) return [];
        if (x.__class__ && this.t7 && x.dataType === undefined) return Object.values(x);
        if (x.__class__ && !this.t7) return Object.values(x);
        if (this.t7 && x.dumped !== undefined) return [x.upvalues];
        return Object.values(x);
    }

    isTensor(x) {
        if (this.t7) return x.dataType !== undefined && x.storage_offset !== undefined;
        return this.torch && x instanceof this.torch.Tensor;
    }

    emit(v) {
        // this writer (and JSON.stringify) recurses: values nested deeper than it can go are declined
        if (++this.depth > MAX_DEPTH) throw new Decline(`values nested deeper than ${MAX_DEPTH} (the adapter's writer)`);
        try {
            return this.emitAt(v);
        } finally {
            this.depth--;
        }
    }

    emitAt(v) {
        if (v !== null && typeof v === 'object' && !ArrayBuffer.isView(v) && this.counts.get(v) > 1) {
            if (this.ids.has(v)) return { type: 'ref', id: this.ids.get(v) };
            const id = `o${this.ids.size}`;
            this.ids.set(v, id);
            const out = this.value(v);
            out.id = id;
            return out;
        }
        return this.value(v);
    }

    number(v) {
        // netron's emulation holds Python ints and floats alike as JS numbers: an integral number is
        // shown as an int for .pt (a float 1.0 is then indistinguishable), every Lua number as a float.
        if (this.t7) return { type: 'float', value: fmtFloat(v) };
        if (Number.isInteger(v)) return { type: 'int', value: BigInt(v).toString() };
        return { type: 'float', value: fmtFloat(v) };
    }

    value(v) {
        if (v === null || v === undefined) return { type: 'none' };
        if (typeof v === 'boolean') return { type: 'bool', value: v };
        if (typeof v === 'number') return this.number(v);
        if (typeof v === 'bigint') return { type: 'int', value: v.toString() };
        if (typeof v === 'string') return { type: 'str', value: v };
        if (v instanceof Uint8Array) return { type: 'bytes', hex: this.hex(v) };
        return this.t7 ? this.t7value(v) : this.ptvalue(v);
    }

    hex(v) {
        // one string per byte array however often it is referenced: the description repeats it in full
        // (spec/canonical.md), and only JSON.stringify's single output string need hold the repeats
        if (!this.hexes) this.hexes = new Map();
        if (!this.hexes.has(v)) this.hexes.set(v, Buffer.from(v).toString('hex'));
        return this.hexes.get(v);
    }

    pairs(m) {
        return [...m].map(([k, x]) => [this.emit(k), this.emit(x)]);
    }

    // ---- .pt --------------------------------------------------------------------------------
    ptvalue(v) {
        const torch = this.torch;
        if (v instanceof torch.Tensor) return this.ptTensor(v);
        if (v instanceof torch.dtype) return { type: 'global', module: 'torch', name: this.dtypeName(v) };
        if (v instanceof torch.storage.TypedStorage || v instanceof torch.storage._StorageBase ||
            v instanceof torch.storage.UntypedStorage) {
            return { type: 'storage', storage: this.storageId(v) };
        }
        if (v instanceof this.OrderedDict) {
            const out = { type: 'ordered_dict', items: this.pairs(v) };
            const attrs = Object.entries(v);
            if (attrs.length) out.attrs = Object.fromEntries(attrs.map(([k, x]) => [k, this.emit(x)]));
            return out;
        }
        if (v instanceof Map) return { type: 'dict', items: this.pairs(v) };
        if (v instanceof this.List) return { type: 'list', items: v.map((x) => this.emit(x)) };
        if (Array.isArray(v)) return { type: 'tuple', items: v.map((x) => this.emit(x)) };
        const cls = v.__class__;
        const name = cls ? [cls.__module__, cls.__name__].filter(Boolean).join('.') : v.constructor.name;
        const state = Object.entries(v).filter(([k]) => k !== '__class__');
        return {
            type: 'object', class: name, args: [],
            state: state.length ? { type: 'dict', items: state.map(([k, x]) => [{ type: 'str', value: k }, this.emit(x)]) } : null,
        };
    }

    ptTensor(t) {
        if (t.is_sparse) throw new Decline('sparse tensors');
        const storage = t.storage();
        const dtype = t.dtype;
        // netron accepted the file and built a tensor without a dtype (an untyped storage met twice)
        if (!dtype || typeof dtype.itemsize !== 'function') throw new Decline('a tensor netron holds without a dtype');
        const itemsize = dtype.itemsize();
        const shape = t.size() || [];
        const stride = t.stride() || [];
        const offset = t.storage_offset() || 0;
        const data = storage ? bytesOf(storage.data) : null;
        const out = {
            type: t.is_quantized || t.quantizer_params ? 'quantized_tensor' : 'tensor',
            dtype: this.dtypeName(dtype), shape, stride, storage_offset: offset,
            storage: storage ? this.storageId(storage) : null,
            device: this.device(storage), requires_grad: Boolean(t.requires_grad),
            sha256: viewSha(data, itemsize, shape, stride, offset, false),
        };
        if (t instanceof this.torch.nn.parameter.Parameter) out.parameter = true;
        if (out.type === 'quantized_tensor') {
            const q = t.quantizer_params;
            if (!Array.isArray(q) || q.length !== 3) throw new Decline('quantized tensors other than per-tensor affine');
            out.qscheme = q[0] && q[0].__str__ ? q[0].__str__().replace('torch.', '') : String(q[0]);
            out.scale = fmtFloat(q[1]);
            out.zero_point = q[2];
        }
        return out;
    }

    dtypeName(dtype) {
        // the attribute of netron's torch module that holds this dtype object (its own _name differs
        // from torch's for some: 'complex<float32>' is torch.complex64, 'boolean' torch.bool)
        if (!this.dtypeNames) {
            this.dtypeNames = new Map();
            for (const [k, x] of Object.entries(this.torch)) {
                if (x instanceof this.torch.dtype && !this.dtypeNames.has(x)) this.dtypeNames.set(x, k);
            }
        }
        return this.dtypeNames.get(dtype) || (dtype && dtype._name) || String(dtype);
    }

    device(storage) {
        const d = storage && storage.device;
        if (d === null || d === undefined) return 'cpu';
        return d.__str__ ? d.__str__() : String(d);
    }

    storageId(s) {
        if (this.storageIds.has(s)) return this.storageIds.get(s);
        const id = `s${this.storageIds.size}`;
        this.storageIds.set(s, id);
        const untyped = s instanceof this.torch.storage.UntypedStorage;
        const data = bytesOf(s.data);
        this.storages[id] = {
            dtype: untyped ? 'uint8' : this.dtypeName(s.dtype),
            numel: s.size(), device: this.device(s), sha256: data ? sha(data) : EMPTY,
        };
        return id;
    }

    // ---- .t7 --------------------------------------------------------------------------------
    t7value(v) {
        if (Array.isArray(v)) {  // netron turns a table keyed 1..n into an array: still a Lua table
            return { type: 'table', items: v.map((x, i) => [{ type: 'float', value: fmtFloat(i + 1) }, this.emit(x)]) };
        }
        if (v instanceof Map) return { type: 'table', items: this.pairs(v) };
        const cls = v.__class__;
        const name = cls ? [cls.__module__, cls.__name__].filter(Boolean).join('.') : null;
        if (name === 'LuaFunction') {
            throw new Decline("functions: netron's T7Reader reads type codes 6, 7 and 8 alike and keeps no kind");
        }
        if (v.dataType !== undefined && v.storage_offset !== undefined) return this.t7Tensor(v, name);
        if (v.dataType !== undefined && v.itemSize !== undefined) {
            return { type: 'storage', storage: this.t7StorageId(v, name) };
        }
        const fields = Object.entries(v);
        return {
            type: 'torch_object', class: name, version: this.versions.get(v) ?? null,
            value: { type: 'table', items: fields.map(([k, x]) => [{ type: 'str', value: k }, this.emit(x)]) },
        };
    }

    t7Tensor(t, name) {
        const itemsize = ITEMSIZE[t.dataType];
        const data = t.storage ? this.t7Bytes(t.storage) : null;
        return {
            type: 'tensor', dtype: t.dataType, shape: t.size, stride: t.stride, storage_offset: t.storage_offset,
            storage: t.storage ? this.t7StorageId(t.storage) : null,
            device: name && name.startsWith('torch.Cuda') ? 'cuda' : 'cpu', requires_grad: false,
            sha256: t.size.length === 0 ? EMPTY : viewSha(data, itemsize, t.size, t.stride, t.storage_offset, true),
        };
    }

    t7Bytes(s) {
        // the elements as netron's Storage.data() decodes them (binary or ascii), written back as
        // little-endian bytes of the dtype (typed arrays are host-order; every CI host is little-endian)
        if (!this.t7data.has(s)) {
            let bytes = null;
            if (s.reader || s._data) {
                const text = Boolean(s.reader && '_separator' in s.reader);  // torch.js's TextReader: ascii
                const values = s.data();
                const Typed = TYPED[s.dataType];
                if (!Typed) throw new Decline(`${s.dataType} storages`);
                const arr = Typed === BigInt64Array ? BigInt64Array.from(values, (x) => BigInt(x)) : Typed.from(values);
                if (text && (Typed === Float32Array || Typed === Float64Array)) canonicalNaNs(arr, values);
                bytes = new Uint8Array(arr.buffer);
            }
            this.t7data.set(s, bytes);
        }
        return this.t7data.get(s);
    }

    t7StorageId(s) {
        if (this.storageIds.has(s)) return this.storageIds.get(s);
        const id = `s${this.storageIds.size}`;
        this.storageIds.set(s, id);
        const data = this.t7Bytes(s);
        const cls = s.__class__;
        this.storages[id] = { dtype: s.dataType, numel: s.size, device: cls && String(cls.__name__).startsWith('Cuda') ? 'cuda' : 'cpu',
                              sha256: data ? sha(data) : EMPTY };
        return id;
    }
}

function canonicalNaNs(arr, values) {
    // The NaNs netron parsed from an ascii storage's tokens.  JavaScript defines no NaN's sign (ECMAScript:
    // NaNs are indistinguishable), and V8 keeps it or not as it runs: netron's `-NaN` for a `-nan` token
    // (torch.js TextReader) came out with its sign bit while V8 interpreted netron's code and without it
    // once V8 had optimised that code (the same ascii file read 3,000 times by one node: the first 420 or
    // so answers kept -nan's sign, the rest lost it), so that a file's bytes depended on how many files
    // this node had read before.  Each is written as the one quiet NaN, whatever V8 did with it: a file
    // gets the same answer first or last, in its own process or in a batch
    // (spec/canonical.md#canonical-reader-batch).  A binary storage's NaNs come from DataView reads, which
    // keep their bits however warm node is (3,000 reads of t7-binary/storage-float: one answer).
    const view = new DataView(arr.buffer);
    for (let i = 0; i < arr.length; i++) {
        if (!Number.isNaN(values[i])) continue;
        if (arr instanceof Float32Array) view.setUint32(i * 4, 0x7fc00000, true);
        else view.setBigUint64(i * 8, 0x7ff8000000000000n, true);
    }
}

const MAX_DEPTH = 2000;
const TYPED = { uint8: Uint8Array, int8: Int8Array, int16: Int16Array, int32: Int32Array, int64: BigInt64Array,
                float32: Float32Array, float64: Float64Array };
//: a view presenting more elements than its storage holds is expanded up to this many (spec/canonical.md)
const MAX_EXPANDED = 1 << 24;
//: the bytes viewSha gathers before handing them to the hash
const VIEW_BUFFER = 1 << 20;
const ITEMSIZE = { uint8: 1, int8: 1, int16: 2, int32: 4, int64: 8, float32: 4, float64: 8, float16: 2 };

function viewSha(data, itemsize, shape, stride, offset) {
    // the logical elements in row-major order, read from the stored bytes as netron holds them
    if (!Array.isArray(shape) || !Array.isArray(stride) || !shape.every(Number.isInteger) ||
        !stride.every(Number.isInteger) || !Number.isInteger(offset)) {
        // netron accepted the file and built a tensor whose geometry is no list of integers
        throw new Decline(`a tensor whose shape/stride/offset netron holds as ${JSON.stringify([shape, stride, offset]).slice(0, 80)}`);
    }
    const numel = shape.reduce((a, b) => a * b, 1);
    if (numel === 0 || data === null) return EMPTY;
    if (numel > Math.max(MAX_EXPANDED, data.length / itemsize)) {
        throw new Decline(`a view of ${numel} elements over ${data.length / itemsize} stored (not expanded by the adapter)`);
    }
    const h = createHash('sha256');
    if (shape.every((n) => n > 0) && rowMajor(shape, stride) && offset >= 0 &&
        (offset + numel) * itemsize <= data.length) {
        // the elements are the stored bytes from the offset on, in order: hashed where they lie
        return h.update(data.subarray(offset * itemsize, (offset + numel) * itemsize)).digest('hex');
    }
    // else gathered element by element into a buffer hashed each time it fills (the same bytes in the same
    // order as hashing each element in turn); an element (partly) outside the data netron holds is read
    // as zeros where it is outside (JS reads would give undefined)
    const buffer = new Uint8Array(VIEW_BUFFER);
    const bytes = data.length;
    const idx = new Array(shape.length).fill(0);
    let size = 0;
    for (let n = 0; n < numel; n++) {
        let e = offset;
        for (let d = 0; d < shape.length; d++) e += idx[d] * stride[d];
        const start = e * itemsize;
        if (size + itemsize > VIEW_BUFFER) { h.update(buffer.subarray(0, size)); size = 0; }
        if (start >= 0 && start + itemsize <= bytes) {
            for (let b = 0; b < itemsize; b++) buffer[size + b] = data[start + b];
        } else {
            for (let b = 0; b < itemsize; b++) buffer[size + b] = start >= 0 && start + b < bytes ? data[start + b] : 0;
        }
        size += itemsize;
        for (let d = shape.length - 1; d >= 0; d--) {
            idx[d]++;
            if (idx[d] < shape[d]) break;
            idx[d] = 0;
        }
    }
    h.update(buffer.subarray(0, size));
    return h.digest('hex');
}

function rowMajor(shape, stride) {
    // whether the elements in row-major order are consecutive in storage (a dimension of one: any stride)
    let expected = 1;
    for (let d = shape.length - 1; d >= 0; d--) {
        if (shape[d] !== 1 && stride[d] !== expected) return false;
        expected *= shape[d];
    }
    return true;
}

let spare = null;  // a python.Execution built while the batch waited for its next request, not yet used

function freshExecution(python) {
    // A new python.Execution for each .pt file, as netron's ModelFactory makes one per model.  Building
    // one is most of netron's time on a small file (it registers some 2,400 types and functions), so the
    // batch loop builds the next file's while the suite judges the last answer: built earlier, but as new,
    // since nothing runs in it before this file (a .t7 file between the two runs torch.js, which shares
    // nothing with python.js).
    const execution = spare || new python.Execution();
    spare = null;
    return execution;
}

async function describeFile(file) {
    family = 'pt';
    const bytes = new Uint8Array(readFileSync(file));
    const base = await load('base.js');
    const zip = await load('zip.js');
    const tar = await load('tar.js');
    const python = await load('python.js');
    await zip.Archive.import();
    const stream = new base.BinaryStream(bytes);
    let fmt = null;
    let objects = null;
    let describer = null;
    const zipArchive = bytes.length > 4 && bytes[0] === 0x50 && bytes[1] === 0x4b ? zip.Archive.open(stream, 'zip') : null;
    stream.seek(0);
    const tarArchive = zipArchive ? null : tar.Archive.open(stream);
    stream.seek(0);
    const signature = [0x80, undefined, 0x8a, 0x0a, 0x6c, 0xfc, 0x9c, 0x46, 0xf9, 0x20, 0x6a, 0xa8, 0x50, 0x19];
    const isPickle = bytes.length >= signature.length && signature.every((b, i) => b === undefined || bytes[i] === b);
    if (zipArchive || tarArchive || isPickle) {
        const execution = freshExecution(python);
        const torch = execution.__import__('torch');
        let obj;
        if (zipArchive) {
            const entries = zipArchive.entries;
            const reader = new torch.PyTorchFileReader(entries);
            if (reader.has_record('constants.pkl')) throw new Decline('pt-torchscript');
            fmt = 'pt-zip';
            obj = torch.load(new Map(reader.get_all_records().map((k) => [k, reader.get_record(k)])));
        } else if (tarArchive) {
            fmt = 'pt-tar';
            obj = torch.load(tarArchive.entries);
        } else {
            fmt = 'pt-legacy';
            obj = torch.load(bytes);
        }
        describer = new Describer(fmt);
        describer.torch = torch;
        describer.List = execution.__import__('builtins').list;
        describer.OrderedDict = execution.__import__('collections').OrderedDict;
        objects = [obj];
    } else {
        family = 't7';
        const t7 = await load('torch.js');
        const context = { stream, set(type, value) { this.type = type; this.value = value; return type; } };
        const matched = await new t7.ModelFactory().match(context);
        if (!matched) throw new NetronRefused('torch.js ModelFactory does not match the file');
        const reader = context.value;
        const versions = new WeakMap();
        reader.callback = () => null;  // as torch.js open() does, minus the UI's error report
        const text = '_separator' in reader._reader;  // torch.js's TextReader, else its BinaryReader
        fmt = text ? 't7-ascii' : 't7-binary';
        objects = [];
        const src = text ? reader._reader : reader._reader._reader;
        const at = () => (text ? src._position : src.position);
        const end = text ? src._buffer.length : src.length;
        while (at() < end) objects.push(reader.read());
        describer = new Describer(fmt);
        describer.t7 = true;
        describer.versions = versions;
        describer.t7data = new Map();
    }
    for (const o of objects) describer.count(o);
    const out = objects.map((o) => describer.emit(o));
    return JSON.stringify({ description_version: 0, format: fmt, objects: out, storages: describer.storages });
}

async function write(text) {
    // in 1 MiB pieces, each taken by the pipe before the next (one write of a description of hundreds of
    // MB copies it whole outside V8's heap, past the harness's address-space limit); exit only once the
    // pipe has taken all of it (process.exit would cut a long write short)
    for (let at = 0; at < text.length; at += 1 << 20) {
        await new Promise((resolve) => process.stdout.write(text.slice(at, at + (1 << 20)), resolve));
    }
}

class NetronRefused extends Error {}

function failure(e) {
    // [exit status, stderr line] of a run that threw e
    if (e instanceof Decline) return [2, `unsupported: ${e.message}`];
    const kind = e && e.constructor ? e.constructor.name : typeof e;
    const msg = String(e && e.message !== undefined ? e.message : e).replace(/\s+/g, ' ').slice(0, 300);
    // netron's own error classes and the JS engine's errors raised inside netron's code: the reader's
    // failure; anything raised in this file (driver.mjs) is the adapter's own bug (exit 3).
    const stack = String(e && e.stack || '');
    const frame = stack.split('\n').find((l) => l.includes('.js:') || l.includes('.mjs:')) || '';
    if (frame.includes('driver.mjs') && !(e instanceof NetronRefused)) {
        return [3, `adapter error: ${kind}: ${msg} ${frame.trim()}`];
    }
    return [1, `netron-error: ${family}: ${kind}: ${msg}`];
}

async function batch() {
    for await (const line of createInterface({ input: process.stdin, crlfDelay: Infinity })) {
        if (!line.trim()) continue;
        let status = 0, err = '', text = '';
        try {
            text = await describeFile(line);
        } catch (e) {
            [status, err] = failure(e);
        }
        const head = JSON.stringify({ status, err, bytes: Buffer.byteLength(text) });
        await write(head + '\n' + text);
        text = '';
        if (!spare) spare = new (await load('python.js')).Execution();
    }
}

if (argument === '--batch') {
    batch().then(() => process.exit(0));
} else {
    describeFile(argument).then(write).then(() => process.exit(0), (e) => {
        const [status, err] = failure(e);
        process.stderr.write(err + '\n');
        process.exit(status);
    });
}
