'use strict';
// The project's facts, read as data from the spec's generated tables (never restated here): error codes
// (spec/canonical.md#canonical-error-codes), reader limits (#canonical-node-budget), pickle opcodes and
// the allowlist (spec/pickle.md#pickle-opcodes, #pickle-globals), dtypes, their arithmetic and the tensor
// properties (spec/tensors.md#tensors-dtype-table, #tensors-conj-neg, #tensors-python-state), the .t7 hints'
// variables (spec/canonical.md#canonical-t7-hints).  The same
// tables conformance/adapters/kaitai/facts.py reads.
const fs = require('node:fs');
const path = require('node:path');

const ROOT = path.resolve(__dirname, '..', '..', '..');
const SPEC = (name) => fs.readFileSync(path.join(ROOT, 'spec', name), 'utf8');

/** The body rows of the table between `<!-- generated: NAME ...-->` and its end marker, cells stripped
 * of spaces and backticks. */
function generatedTable(text, name) {
  const start = text.indexOf(`<!-- generated: ${name};`);
  const end = text.indexOf(`<!-- end generated: ${name} -->`);
  if (start < 0 || end < start) throw new Error(`no generated table ${name}`);
  const rows = text.slice(text.indexOf('-->', start) + 3, end).split('\n').filter((l) => l.startsWith('|'));
  return rows.slice(2).map((row) => row.trim().replace(/^\||\|$/g, '').split('|')
    .map((c) => c.trim().replace(/^`+|`+$/g, '')));
}

const canonical = SPEC('canonical.md');
const pickle = SPEC('pickle.md');
const tensors = SPEC('tensors.md');

const ERROR_CODES = new Set(generatedTable(canonical, 'error-codes').map((r) => r[0]));
const LIMITS = Object.fromEntries(generatedTable(canonical, 'reader-limits')
  .map((r) => [r[0], Number(r[1].replace(/,/g, ''))]));

/** Opcode byte -> {name, protocol, rejected, width}. */
const OPCODES = new Map();
for (const [name, byte, arg, protocol, , , reader] of generatedTable(pickle, 'pickle-opcodes')) {
  const fixed = /^\w+ \((\d+) bytes?\)$/.exec(arg);
  OPCODES.set(parseInt(byte, 16), { name, protocol: Number(protocol), rejected: reader.startsWith('MUST reject'),
    width: fixed ? Number(fixed[1]) : null });
}

/** `module.name` -> {qualname, role, params [{name, kind, optional}], newobj, scope}. */
const ALLOWLIST = new Map();
for (const [qualname, role, args, scope] of generatedTable(pickle, 'pickle-globals')) {
  const params = [...args.split(')')[0].matchAll(/(\w+): (\w+)(\?)?/g)]
    .map((m) => ({ name: m[1], kind: m[2], optional: Boolean(m[3]) }));
  ALLOWLIST.set(qualname, { qualname, role, params, newobj: args.includes('also NEWOBJ'), scope,
    signature: '(' + params.map((p) => `${p.name}: ${p.kind}${p.optional ? '?' : ''}`).join(', ') + ')' });
}

/** Values one byte packs, for the packed quantized dtypes (the text under spec/tensors.md's dtype table). */
const PACKED = { quint4x2: 2, quint2x4: 4 };
const ARITH = {};
for (const [name, negation, conj, both, differentiable] of generatedTable(tensors, 'dtype-arith')) {
  ARITH[name] = { negation: negation === 'none' ? null : negation, conj: conj === 'yes', both: both === 'yes',
    differentiable: differentiable === 'yes' };
}
const DTYPES = {};
for (const [name, width, swap, storageClass, t7Class, quantized] of generatedTable(tensors, 'dtype-table')) {
  DTYPES[name] = { name, itemsize: Number(width), swapUnit: Number(swap), storageClass: storageClass || null,
    t7Class: t7Class || null, quantized: quantized === 'yes', perByte: PACKED[name] || 1, arith: ARITH[name] };
}
const BY_STORAGE_CLASS = Object.fromEntries(Object.values(DTYPES).filter((d) => d.storageClass)
  .map((d) => [d.storageClass, d]));
const BY_T7_CLASS = Object.fromEntries(Object.values(DTYPES).filter((d) => d.t7Class).map((d) => [d.t7Class, d]));
const TENSOR_PROPERTIES = new Set(generatedTable(tensors, 'tensor-properties').map((r) => r[0]));
/** `case.yaml` key -> the environment variable that hands the .t7 hint over (spec/canonical.md#canonical-t7-hints). */
const HINT_ENV = Object.fromEntries(generatedTable(canonical, 't7-hints').map((r) => [r[0], r[1]]));

module.exports = { ROOT, generatedTable, ERROR_CODES, LIMITS, OPCODES, ALLOWLIST, DTYPES, BY_STORAGE_CLASS,
  BY_T7_CLASS, TENSOR_PROPERTIES, HINT_ENV };
