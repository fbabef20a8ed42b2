'use strict';
// Text as CPython's unpickler decodes it (spec/pickle.md#pickle-protocols): UTF-8 strict or with lone
// surrogates (`surrogatepass`), raw-unicode-escape, Python 2 string literals (codecs.escape_decode); and
// the rule that a str holding a high surrogate followed by a low one is refused, since its JSON form
// would name another, astral, character (spec/canonical.md#canonical-surrogates).  JavaScript strings are
// UTF-16, so a surrogate decoded from its own three bytes is told apart from half of an astral character
// while decoding.
class TextError extends Error {}

/** UTF-8 -> string; `surrogatepass` lets ED A0..BF xx through as a lone surrogate.  Throws TextError for
 * bytes that are not UTF-8, or (`pairs: false`) for an encoded high surrogate followed by an encoded low one. */
function utf8(b, { surrogatepass = false, pairs = true } = {}) {
  const units = [];
  let prevHigh = false;
  let out = '';
  for (let i = 0; i < b.length;) {
    const c = b[i];
    let cp;
    let n;
    if (c < 0x80) { cp = c; n = 1; } else if (c >= 0xc2 && c < 0xe0) { cp = c & 0x1f; n = 2; } else if (c >= 0xe0 && c < 0xf0) { cp = c & 0x0f; n = 3; } else if (c >= 0xf0 && c < 0xf5) { cp = c & 0x07; n = 4; } else throw new TextError('invalid start byte');
    if (i + n > b.length) throw new TextError('unexpected end of data');
    for (let j = 1; j < n; j++) {
      const x = b[i + j];
      if ((x & 0xc0) !== 0x80) throw new TextError('invalid continuation byte');
      cp = (cp << 6) | (x & 0x3f);
    }
    if ((n === 3 && cp < 0x800) || (n === 4 && (cp < 0x10000 || cp > 0x10ffff))) throw new TextError('overlong or out of range');
    const surrogate = cp >= 0xd800 && cp < 0xe000;
    if (surrogate && !surrogatepass) throw new TextError('a surrogate');
    if (surrogate && cp >= 0xdc00 && prevHigh && !pairs) throw new TextError('a surrogate pair');
    prevHigh = surrogate && cp < 0xdc00;
    if (cp >= 0x10000) {
      const v = cp - 0x10000;
      units.push(0xd800 + (v >> 10), 0xdc00 + (v & 0x3ff));
    } else units.push(cp);
    i += n;
    if (units.length > 8192) { out += String.fromCharCode(...units); units.length = 0; }
  }
  return out + String.fromCharCode(...units);
}

/** Python's raw-unicode-escape decoder; throws TextError where Python raises, and (as the machine's
 * `_str`) for a \\uD8xx escape followed by a \\uDCxx one. */
function rawUnicodeEscape(b) {
  const cps = [];
  for (let i = 0; i < b.length;) {
    if (b[i] !== 0x5c) { cps.push(b[i++]); continue; }
    const start = i;
    while (i < b.length && b[i] === 0x5c) cps.push(b[i++]);
    if (((i - start) & 1) === 0 || i >= b.length || (b[i] !== 0x75 && b[i] !== 0x55)) continue;
    cps.pop();
    let count = b[i] === 0x75 ? 4 : 8;
    i++;
    let ch = 0;
    for (; count; i++, count--) {
      if (i >= b.length) throw new TextError('truncated \\uXXXX escape');
      const h = String.fromCharCode(b[i]);
      if (!/[0-9a-fA-F]/.test(h)) throw new TextError('truncated \\uXXXX escape');
      ch = ch * 16 + parseInt(h, 16);
    }
    if (ch > 0x10ffff) throw new TextError('\\Uxxxxxxxx out of range');
    cps.push(ch);
  }
  let out = '';
  for (let k = 0; k < cps.length; k++) {
    const cp = cps[k];
    if (cp >= 0xd800 && cp < 0xdc00 && k + 1 < cps.length && cps[k + 1] >= 0xdc00 && cps[k + 1] < 0xe000) {
      throw new TextError('a surrogate pair');
    }
    out += String.fromCodePoint(cp);
  }
  return out;
}

/** codecs.escape_decode of a Python 2 string literal's body. */
function escapeDecode(b) {
  const out = [];
  for (let i = 0; i < b.length;) {
    const c = b[i++];
    if (c !== 0x5c) { out.push(c); continue; }
    if (i >= b.length) throw new TextError('Trailing \\ in string');
    const e = b[i++];
    const simple = { 0x0a: null, 0x5c: 0x5c, 0x27: 0x27, 0x22: 0x22, 0x62: 8, 0x66: 12, 0x74: 9, 0x6e: 10, 0x72: 13, 0x76: 11, 0x61: 7 };
    if (e in simple) { if (simple[e] !== null) out.push(simple[e]); continue; }
    if (e >= 0x30 && e <= 0x37) {
      let v = e - 0x30;
      for (let k = 0; k < 2 && i < b.length && b[i] >= 0x30 && b[i] <= 0x37; k++) v = v * 8 + (b[i++] - 0x30);
      out.push(v & 0xff);
      continue;
    }
    if (e === 0x78) {
      const hex = String.fromCharCode(b[i] ?? 0, b[i + 1] ?? 0);
      if (i + 2 > b.length || !/^[0-9a-fA-F]{2}$/.test(hex)) throw new TextError('invalid \\x escape');
      out.push(parseInt(hex, 16));
      i += 2;
      continue;
    }
    out.push(0x5c, e);
  }
  return Uint8Array.from(out);
}

/** Code points of a string whose surrogates are all paired or lone (Python's len). */
function codePoints(s) {
  let n = s.length;
  for (let i = 0; i + 1 < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c >= 0xd800 && c < 0xdc00) {
      const d = s.charCodeAt(i + 1);
      if (d >= 0xdc00 && d < 0xe000) { n--; i++; }
    }
  }
  return n;
}

module.exports = { TextError, utf8, rawUnicodeEscape, escapeDecode, codePoints };
