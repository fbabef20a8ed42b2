// This is a generated file! Please edit source .ksy file and use kaitai-struct-compiler to rebuild

(function (root, factory) {
  if (typeof define === 'function' && define.amd) {
    define(['exports', 'kaitai-struct/KaitaiStream'], factory);
  } else if (typeof exports === 'object' && exports !== null && typeof exports.nodeType !== 'number') {
    factory(exports, require('kaitai-struct/KaitaiStream'));
  } else {
    factory(root.PythonPickle || (root.PythonPickle = {}), root.KaitaiStream);
  }
})(typeof self !== 'undefined' ? self : this, function (PythonPickle_, KaitaiStream) {
/**
 * A pickle is a program for a small stack machine: a sequence of opcodes, each one byte followed by an
 * argument whose layout the opcode fixes, ending with STOP.  This grammar reads the opcodes and their
 * arguments only; it runs nothing.  What the opcodes do to the stack and the memo (and which globals a
 * reader may honour) is spec/pickle.md's business, not the grammar's: a Kaitai parse of a pickle is
 * inert by construction.
 * 
 * The opcode values are the ones of CPython's Lib/pickletools.py; the project's single opcode table,
 * reference_impl/torchfmt/pickle/opcodes.py, is checked against this enum by a test
 * (reference_impl/tests/test_ksy_pickle_opcodes.py).
 * 
 * FRAME (protocol 4) is read as an ordinary opcode with its 8-byte length: frames only group opcodes
 * for buffering and do not change their meaning.  Protocol 5 out-of-band buffers (NEXT_BUFFER,
 * READONLY_BUFFER) take their data from outside the pickle and have no argument here.
 * 
 * Text arguments of protocol 0 (INT, LONG, FLOAT, STRING, UNICODE, GET, PUT, PERSID, GLOBAL, INST) are
 * newline-terminated lines; they are kept as the raw line (decoded as ASCII or UTF-8 where the pickle
 * format guarantees it) and their numeric or escaped value is left to the reader.  The length-prefixed
 * str arguments (SHORT_BINUNICODE, BINUNICODE, BINUNICODE8) are kept as bytes too: CPython writes a
 * lone surrogate with ``surrogatepass``, which Kaitai's strict UTF-8 would refuse, so the reader decodes
 * them (spec/pickle.md#pickle-protocols).
 * @see spec/pickle.md#pickle-opcodes
 */

var PythonPickle = (function() {
  PythonPickle.Opcode = Object.freeze({
    MARK: 40,
    EMPTY_TUPLE: 41,
    STOP: 46,
    POP: 48,
    POP_MARK: 49,
    DUP: 50,
    BINBYTES: 66,
    SHORT_BINBYTES: 67,
    FLOAT: 70,
    BINFLOAT: 71,
    INT: 73,
    BININT: 74,
    BININT1: 75,
    LONG: 76,
    BININT2: 77,
    NONE: 78,
    PERSID: 80,
    BINPERSID: 81,
    REDUCE: 82,
    STRING: 83,
    BINSTRING: 84,
    SHORT_BINSTRING: 85,
    UNICODE: 86,
    BINUNICODE: 88,
    EMPTY_LIST: 93,
    APPEND: 97,
    BUILD: 98,
    GLOBAL_OPCODE: 99,
    DICT: 100,
    APPENDS: 101,
    GET: 103,
    BINGET: 104,
    INST: 105,
    LONG_BINGET: 106,
    LIST: 108,
    OBJ: 111,
    PUT: 112,
    BINPUT: 113,
    LONG_BINPUT: 114,
    SETITEM: 115,
    TUPLE_OPCODE: 116,
    SETITEMS: 117,
    EMPTY_DICT: 125,
    PROTO: 128,
    NEWOBJ: 129,
    EXT1: 130,
    EXT2: 131,
    EXT4: 132,
    TUPLE1: 133,
    TUPLE2: 134,
    TUPLE3: 135,
    NEWTRUE: 136,
    NEWFALSE: 137,
    LONG1: 138,
    LONG4: 139,
    SHORT_BINUNICODE: 140,
    BINUNICODE8: 141,
    BINBYTES8: 142,
    EMPTY_SET: 143,
    ADDITEMS: 144,
    FROZENSET: 145,
    NEWOBJ_EX: 146,
    STACK_GLOBAL: 147,
    MEMOIZE: 148,
    FRAME: 149,
    BYTEARRAY8: 150,
    NEXT_BUFFER: 151,
    READONLY_BUFFER: 152,

    40: "MARK",
    41: "EMPTY_TUPLE",
    46: "STOP",
    48: "POP",
    49: "POP_MARK",
    50: "DUP",
    66: "BINBYTES",
    67: "SHORT_BINBYTES",
    70: "FLOAT",
    71: "BINFLOAT",
    73: "INT",
    74: "BININT",
    75: "BININT1",
    76: "LONG",
    77: "BININT2",
    78: "NONE",
    80: "PERSID",
    81: "BINPERSID",
    82: "REDUCE",
    83: "STRING",
    84: "BINSTRING",
    85: "SHORT_BINSTRING",
    86: "UNICODE",
    88: "BINUNICODE",
    93: "EMPTY_LIST",
    97: "APPEND",
    98: "BUILD",
    99: "GLOBAL_OPCODE",
    100: "DICT",
    101: "APPENDS",
    103: "GET",
    104: "BINGET",
    105: "INST",
    106: "LONG_BINGET",
    108: "LIST",
    111: "OBJ",
    112: "PUT",
    113: "BINPUT",
    114: "LONG_BINPUT",
    115: "SETITEM",
    116: "TUPLE_OPCODE",
    117: "SETITEMS",
    125: "EMPTY_DICT",
    128: "PROTO",
    129: "NEWOBJ",
    130: "EXT1",
    131: "EXT2",
    132: "EXT4",
    133: "TUPLE1",
    134: "TUPLE2",
    135: "TUPLE3",
    136: "NEWTRUE",
    137: "NEWFALSE",
    138: "LONG1",
    139: "LONG4",
    140: "SHORT_BINUNICODE",
    141: "BINUNICODE8",
    142: "BINBYTES8",
    143: "EMPTY_SET",
    144: "ADDITEMS",
    145: "FROZENSET",
    146: "NEWOBJ_EX",
    147: "STACK_GLOBAL",
    148: "MEMOIZE",
    149: "FRAME",
    150: "BYTEARRAY8",
    151: "NEXT_BUFFER",
    152: "READONLY_BUFFER",
  });

  function PythonPickle(_io, _parent, _root) {
    this._io = _io;
    this._parent = _parent;
    this._root = _root || this;

    this._read();
  }
  PythonPickle.prototype._read = function() {
    this.ops = [];
    var i = 0;
    do {
      var _ = new Op(this._io, this, this._root);
      this.ops.push(_);
      i++;
    } while (!(_.code == PythonPickle.Opcode.STOP));
  }

  /**
   * Bytes with a signed 4-byte length (BINSTRING, LONG4); a negative length is malformed.
   * @see spec/pickle.md#pickle-opcodes
   */

  var BytesS4 = PythonPickle.BytesS4 = (function() {
    function BytesS4(_io, _parent, _root) {
      this._io = _io;
      this._parent = _parent;
      this._root = _root;

      this._read();
    }
    BytesS4.prototype._read = function() {
      this.len = this._io.readS4le();
      if (!(this.len >= 0)) {
        throw new KaitaiStream.ValidationLessThanError(0, this.len, this._io, "/types/bytes_s4/seq/0");
      }
      this.value = this._io.readBytes(this.len);
    }

    return BytesS4;
  })();

  /**
   * Bytes with a 1-byte length (SHORT_BINSTRING, SHORT_BINBYTES, LONG1).
   * @see spec/pickle.md#pickle-opcodes
   */

  var BytesU1 = PythonPickle.BytesU1 = (function() {
    function BytesU1(_io, _parent, _root) {
      this._io = _io;
      this._parent = _parent;
      this._root = _root;

      this._read();
    }
    BytesU1.prototype._read = function() {
      this.len = this._io.readU1();
      this.value = this._io.readBytes(this.len);
    }

    return BytesU1;
  })();

  /**
   * Bytes with an unsigned 4-byte length (BINBYTES).
   * @see spec/pickle.md#pickle-opcodes
   */

  var BytesU4 = PythonPickle.BytesU4 = (function() {
    function BytesU4(_io, _parent, _root) {
      this._io = _io;
      this._parent = _parent;
      this._root = _root;

      this._read();
    }
    BytesU4.prototype._read = function() {
      this.len = this._io.readU4le();
      this.value = this._io.readBytes(this.len);
    }

    return BytesU4;
  })();

  /**
   * Bytes with an 8-byte length (BINBYTES8, BYTEARRAY8).
   * @see spec/pickle.md#pickle-opcodes
   */

  var BytesU8 = PythonPickle.BytesU8 = (function() {
    function BytesU8(_io, _parent, _root) {
      this._io = _io;
      this._parent = _parent;
      this._root = _root;

      this._read();
    }
    BytesU8.prototype._read = function() {
      this.len = this._io.readU8le();
      this.value = this._io.readBytes(this.len);
    }

    return BytesU8;
  })();

  /**
   * A protocol 0 decimal (INT, LONG with its trailing 'L', FLOAT, GET, PUT) ending in a newline.
   * @see spec/pickle.md#pickle-opcodes
   */

  var DecimalLine = PythonPickle.DecimalLine = (function() {
    function DecimalLine(_io, _parent, _root) {
      this._io = _io;
      this._parent = _parent;
      this._root = _root;

      this._read();
    }
    DecimalLine.prototype._read = function() {
      this.value = KaitaiStream.bytesToStr(this._io.readBytesTerm(10, false, true, true), "ASCII");
    }

    return DecimalLine;
  })();

  /**
   * GLOBAL's and INST's two newline-terminated lines, module then qualified name.
   * @see spec/pickle.md#pickle-globals
   */

  var GlobalPair = PythonPickle.GlobalPair = (function() {
    function GlobalPair(_io, _parent, _root) {
      this._io = _io;
      this._parent = _parent;
      this._root = _root;

      this._read();
    }
    GlobalPair.prototype._read = function() {
      this.moduleName = KaitaiStream.bytesToStr(this._io.readBytesTerm(10, false, true, true), "UTF-8");
      this.name = KaitaiStream.bytesToStr(this._io.readBytesTerm(10, false, true, true), "UTF-8");
    }

    return GlobalPair;
  })();

  /**
   * One opcode and its argument.
   * @see spec/pickle.md#pickle-opcodes
   */

  var Op = PythonPickle.Op = (function() {
    function Op(_io, _parent, _root) {
      this._io = _io;
      this._parent = _parent;
      this._root = _root;

      this._read();
    }
    Op.prototype._read = function() {
      this.code = this._io.readU1();
      if (!Object.prototype.hasOwnProperty.call(PythonPickle.Opcode, this.code)) {
        throw new KaitaiStream.ValidationNotInEnumError(this.code, this._io, "/types/op/seq/0");
      }
      switch (this.code) {
      case PythonPickle.Opcode.BINBYTES:
        this.arg = new BytesU4(this._io, this, this._root);
        break;
      case PythonPickle.Opcode.BINBYTES8:
        this.arg = new BytesU8(this._io, this, this._root);
        break;
      case PythonPickle.Opcode.BINSTRING:
        this.arg = new BytesS4(this._io, this, this._root);
        break;
      case PythonPickle.Opcode.BINUNICODE:
        this.arg = new UnicodeU4(this._io, this, this._root);
        break;
      case PythonPickle.Opcode.BINUNICODE8:
        this.arg = new UnicodeU8(this._io, this, this._root);
        break;
      case PythonPickle.Opcode.BYTEARRAY8:
        this.arg = new BytesU8(this._io, this, this._root);
        break;
      case PythonPickle.Opcode.FLOAT:
        this.arg = new DecimalLine(this._io, this, this._root);
        break;
      case PythonPickle.Opcode.GET:
        this.arg = new DecimalLine(this._io, this, this._root);
        break;
      case PythonPickle.Opcode.GLOBAL_OPCODE:
        this.arg = new GlobalPair(this._io, this, this._root);
        break;
      case PythonPickle.Opcode.INST:
        this.arg = new GlobalPair(this._io, this, this._root);
        break;
      case PythonPickle.Opcode.INT:
        this.arg = new DecimalLine(this._io, this, this._root);
        break;
      case PythonPickle.Opcode.LONG:
        this.arg = new DecimalLine(this._io, this, this._root);
        break;
      case PythonPickle.Opcode.LONG1:
        this.arg = new BytesU1(this._io, this, this._root);
        break;
      case PythonPickle.Opcode.LONG4:
        this.arg = new BytesS4(this._io, this, this._root);
        break;
      case PythonPickle.Opcode.PERSID:
        this.arg = new TextLine(this._io, this, this._root);
        break;
      case PythonPickle.Opcode.PUT:
        this.arg = new DecimalLine(this._io, this, this._root);
        break;
      case PythonPickle.Opcode.SHORT_BINBYTES:
        this.arg = new BytesU1(this._io, this, this._root);
        break;
      case PythonPickle.Opcode.SHORT_BINSTRING:
        this.arg = new BytesU1(this._io, this, this._root);
        break;
      case PythonPickle.Opcode.SHORT_BINUNICODE:
        this.arg = new UnicodeU1(this._io, this, this._root);
        break;
      case PythonPickle.Opcode.STRING:
        this.arg = new RawLine(this._io, this, this._root);
        break;
      case PythonPickle.Opcode.UNICODE:
        this.arg = new RawLine(this._io, this, this._root);
        break;
      }
      switch (this.code) {
      case PythonPickle.Opcode.BINGET:
        this.intArg = this._io.readU1();
        break;
      case PythonPickle.Opcode.BININT:
        this.intArg = this._io.readS4le();
        break;
      case PythonPickle.Opcode.BININT1:
        this.intArg = this._io.readU1();
        break;
      case PythonPickle.Opcode.BININT2:
        this.intArg = this._io.readU2le();
        break;
      case PythonPickle.Opcode.BINPUT:
        this.intArg = this._io.readU1();
        break;
      case PythonPickle.Opcode.EXT1:
        this.intArg = this._io.readU1();
        break;
      case PythonPickle.Opcode.EXT2:
        this.intArg = this._io.readU2le();
        break;
      case PythonPickle.Opcode.EXT4:
        this.intArg = this._io.readS4le();
        break;
      case PythonPickle.Opcode.PROTO:
        this.intArg = this._io.readU1();
        break;
      }
      if ( ((this.code == PythonPickle.Opcode.LONG_BINGET) || (this.code == PythonPickle.Opcode.LONG_BINPUT)) ) {
        this.u4Arg = this._io.readU4le();
      }
      if (this.code == PythonPickle.Opcode.FRAME) {
        this.u8Arg = this._io.readU8le();
      }
      if (this.code == PythonPickle.Opcode.BINFLOAT) {
        this.floatArg = this._io.readF8be();
      }
    }

    /**
     * The argument of the opcodes whose argument is a structure (lines, length-prefixed bytes); the
     * number arguments are `int_arg`, `u4_arg`, `u8_arg` and `float_arg`.  One switch mixing number and user types has
     * no common type in C++ (kaitai-struct-compiler 0.11's cpp_stl refuses it), so there are three.
     */

    /**
     * The integer argument that fits a signed 32-bit integer (memo keys of BINGET/BINPUT, BININT*,
     * EXT*, PROTO).  The wider ones are `u4_arg` and `u8_arg`: the compiler gives a switch over
     * integer types one type, int32 in C++ and Java, which would cut them.
     */

    /**
     * LONG_BINGET's and LONG_BINPUT's unsigned 4-byte memo key.
     */

    /**
     * FRAME's 8-byte length.
     */

    /**
     * BINFLOAT's 8-byte big-endian IEEE 754 double.
     */

    return Op;
  })();

  /**
   * A newline-terminated line kept as bytes: STRING's Python repr literal or UNICODE's
   * raw-unicode-escape text, whose unescaping is left to the reader.
   * @see spec/pickle.md#pickle-opcodes
   */

  var RawLine = PythonPickle.RawLine = (function() {
    function RawLine(_io, _parent, _root) {
      this._io = _io;
      this._parent = _parent;
      this._root = _root;

      this._read();
    }
    RawLine.prototype._read = function() {
      this.value = this._io.readBytesTerm(10, false, true, true);
    }

    return RawLine;
  })();

  /**
   * A newline-terminated line of UTF-8 text (PERSID's persistent id).
   * @see spec/pickle.md#pickle-opcodes
   */

  var TextLine = PythonPickle.TextLine = (function() {
    function TextLine(_io, _parent, _root) {
      this._io = _io;
      this._parent = _parent;
      this._root = _root;

      this._read();
    }
    TextLine.prototype._read = function() {
      this.value = KaitaiStream.bytesToStr(this._io.readBytesTerm(10, false, true, true), "UTF-8");
    }

    return TextLine;
  })();

  /**
   * SHORT_BINUNICODE's str: UTF-8 bytes with a 1-byte length, kept as bytes.  The reader decodes them as
   * UTF-8 allowing lone surrogates (Python's ``surrogatepass``), as CPython's unpickler does
   * (spec/pickle.md#pickle-protocols); Kaitai's UTF-8 strings are strict and would refuse them.
   * @see spec/pickle.md#pickle-protocols
   */

  var UnicodeU1 = PythonPickle.UnicodeU1 = (function() {
    function UnicodeU1(_io, _parent, _root) {
      this._io = _io;
      this._parent = _parent;
      this._root = _root;

      this._read();
    }
    UnicodeU1.prototype._read = function() {
      this.len = this._io.readU1();
      this.value = this._io.readBytes(this.len);
    }

    /**
     * The UTF-8 bytes, undecoded (surrogatepass, spec/pickle.md#pickle-protocols).
     */

    return UnicodeU1;
  })();

  /**
   * BINUNICODE's str: UTF-8 bytes with a 4-byte length, kept as bytes.  The reader decodes them as
   * UTF-8 allowing lone surrogates (Python's ``surrogatepass``), as CPython's unpickler does
   * (spec/pickle.md#pickle-protocols); Kaitai's UTF-8 strings are strict and would refuse them.
   * @see spec/pickle.md#pickle-protocols
   */

  var UnicodeU4 = PythonPickle.UnicodeU4 = (function() {
    function UnicodeU4(_io, _parent, _root) {
      this._io = _io;
      this._parent = _parent;
      this._root = _root;

      this._read();
    }
    UnicodeU4.prototype._read = function() {
      this.len = this._io.readU4le();
      this.value = this._io.readBytes(this.len);
    }

    /**
     * The UTF-8 bytes, undecoded (surrogatepass, spec/pickle.md#pickle-protocols).
     */

    return UnicodeU4;
  })();

  /**
   * BINUNICODE8's str: UTF-8 bytes with an 8-byte length, kept as bytes.  The reader decodes them as
   * UTF-8 allowing lone surrogates (Python's ``surrogatepass``), as CPython's unpickler does
   * (spec/pickle.md#pickle-protocols); Kaitai's UTF-8 strings are strict and would refuse them.
   * @see spec/pickle.md#pickle-protocols
   */

  var UnicodeU8 = PythonPickle.UnicodeU8 = (function() {
    function UnicodeU8(_io, _parent, _root) {
      this._io = _io;
      this._parent = _parent;
      this._root = _root;

      this._read();
    }
    UnicodeU8.prototype._read = function() {
      this.len = this._io.readU8le();
      this.value = this._io.readBytes(this.len);
    }

    /**
     * The UTF-8 bytes, undecoded (surrogatepass, spec/pickle.md#pickle-protocols).
     */

    return UnicodeU8;
  })();

  /**
   * The opcodes up to and including STOP.
   */

  return PythonPickle;
})();
PythonPickle_.PythonPickle = PythonPickle;
});
