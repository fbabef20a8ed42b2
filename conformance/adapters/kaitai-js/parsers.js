'use strict';
// The generated JavaScript parsers of ksy/*.ksy (parsersDir) on the pinned Kaitai runtime (package-lock.json: kaitai-struct 0.11.0,
// installed by ./setup and found through NODE_PATH), and the mapping of the runtime's exceptions to the
// closest code (spec/canonical.md#canonical-error-codes).  The JS runtime's validation errors carry no
// src_path, so the caller names what it was reading.
const path = require('node:path');
const { ROOT } = require('./facts.js');
const V = require('./values.js');

const fs = require('node:fs');
const os = require('node:os');

/** Where the parsers are: $TORCHFMT_KAITAI_JS_PARSERS, the committed ksy/generated/javascript/, or what
 * ./setup compiled from ksy/*.ksy with the pinned compiler while none are committed. */
function parsersDir() {
  if (process.env.TORCHFMT_KAITAI_JS_PARSERS) return process.env.TORCHFMT_KAITAI_JS_PARSERS;
  const committed = path.join(ROOT, 'ksy', 'generated', 'javascript');
  if (fs.existsSync(path.join(committed, 'PythonPickle.js'))) return committed;
  const home = process.env.TORCHFMT_ADAPTERS_HOME || path.join(os.homedir(), '.cache', 'torchfmt', 'adapters');
  return path.join(home, 'kaitai-js', 'parsers');
}
const DIR = parsersDir();
const KaitaiStream = require('kaitai-struct/KaitaiStream');
const load = (name) => require(path.join(DIR, `${name}.js`));
const cache = {};
const lazy = (name) => () => cache[name] || (cache[name] = load(name));

/** The code for an exception the generated parser `grammar` raised while reading `what`; `validation`:
 * the code a failed `valid:` stands for there (bad-value when not given). */
function fromKaitai(e, grammar, what, validation = null) {
  const K = KaitaiStream;
  if (e instanceof V.Reject || e instanceof V.Decline) return e;
  const text = `${what}: ${e && e.message}`;
  if (e instanceof K.ValidationNotInEnumError && grammar === 'python_pickle') return new V.Reject('bad-opcode', text);
  if (e instanceof K.ValidationLessThanError && grammar === 'python_pickle') return new V.Reject('bad-length', text);
  if (e instanceof K.ValidationNotEqualError || e instanceof K.ValidationLessThanError
    || e instanceof K.ValidationGreaterThanError || e instanceof K.ValidationNotAnyOfError
    || e instanceof K.ValidationNotInEnumError || e instanceof K.ValidationExprError) {
    return new V.Reject(validation || 'bad-value', text);
  }
  if (e instanceof K.EOFError || (e instanceof Error && /End of stream|Offset is outside|out of bounds/i.test(e.message))) {
    return new V.Reject('truncated', text);
  }
  if (e instanceof RangeError) return new V.Reject('truncated', text); // a length past the buffer
  throw e;
}

module.exports = {
  KaitaiStream,
  fromKaitai,
  get PythonPickle() { return lazy('PythonPickle')(); },
  get PytorchZip() { return lazy('PytorchZip')(); },
  get PytorchLegacy() { return lazy('PytorchLegacy')(); },
  get PytorchTar() { return lazy('PytorchTar')(); },
  get TorchT7() { return lazy('TorchT7')(); },
  get TorchT7Ascii() { return lazy('TorchT7Ascii')(); },
};
