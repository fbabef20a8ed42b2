// This is a generated file! Please edit source .ksy file and use kaitai-struct-compiler to rebuild

(function (root, factory) {
  if (typeof define === 'function' && define.amd) {
    define(['exports', 'kaitai-struct/KaitaiStream'], factory);
  } else if (typeof exports === 'object' && exports !== null && typeof exports.nodeType !== 'number') {
    factory(exports, require('kaitai-struct/KaitaiStream'));
  } else {
    factory(root.TorchT7Ascii || (root.TorchT7Ascii = {}), root.KaitaiStream);
  }
})(typeof self !== 'undefined' ? self : this, function (TorchT7Ascii_, KaitaiStream) {
/**
 * The ascii mode of torch7's File writes the same object grammar as the binary mode (torch_t7.ksy),
 * with every scalar as a decimal token on its own line, every array of numbers as one line of
 * space-separated tokens (nothing at all for an empty array), and strings and char/byte storages as
 * their raw bytes followed by a newline (none after an empty one); the byte count is the token
 * before them.  The long size and byte order do not matter here.
 * 
 * What Kaitai can express: the whole token structure as torch's writer lays it out, including the
 * reference-index threading of torch_t7.ksy (`max_index` in, `last_index` out), integer tokens as
 * numbers (`.to_i`), and the raw strings, whose length comes from the previous token.
 * What it cannot: the numeric value of a double token ("0.5", "3.40282347e+38", "inf", "-nan" are kept
 * as text; Kaitai has no string-to-float conversion), and the leniency of torch's reader, which
 * reads tokens with fscanf and so accepts any whitespace between them; this grammar accepts exactly
 * the single spaces and newlines the writer puts there.  Storage element values are kept as tokens.
 * @see spec/t7.md#t7-ascii
 */

var TorchT7Ascii = (function() {
  TorchT7Ascii.TypeCode = Object.freeze({
    LUA_NIL: 0,
    NUMBER: 1,
    STRING: 2,
    TABLE: 3,
    TORCH: 4,
    BOOLEAN: 5,
    LUA_FUNCTION: 6,
    LEGACY_RECUR_FUNCTION: 7,
    RECUR_FUNCTION: 8,

    0: "LUA_NIL",
    1: "NUMBER",
    2: "STRING",
    3: "TABLE",
    4: "TORCH",
    5: "BOOLEAN",
    6: "LUA_FUNCTION",
    7: "LEGACY_RECUR_FUNCTION",
    8: "RECUR_FUNCTION",
  });

  function TorchT7Ascii(_io, _parent, _root) {
    this._io = _io;
    this._parent = _parent;
    this._root = _root || this;

    this._read();
  }
  TorchT7Ascii.prototype._read = function() {
    this.objects = [];
    var i = 0;
    while (!this._io.isEof()) {
      this.objects.push(new T7Object(this._io, this, this._root, (i == 0 ? 0 : this.objects[i - 1].lastIndex)));
      i++;
    }
  }

  /**
   * A class name or version string (a string read as ASCII text).
   * @see spec/t7.md#t7-class-version
   */

  var AsciiString = TorchT7Ascii.AsciiString = (function() {
    function AsciiString(_io, _parent, _root) {
      this._io = _io;
      this._parent = _parent;
      this._root = _root;

      this._read();
    }
    AsciiString.prototype._read = function() {
      this.len = new IntLine(this._io, this, this._root);
      var _ = this.len;
      if (!(_.value >= 0)) {
        throw new KaitaiStream.ValidationExprError(this.len, this._io, "/types/ascii_string/seq/0");
      }
      this.value = KaitaiStream.bytesToStr(this._io.readBytes(this.len.value), "ASCII");
      if (this.len.value > 0) {
        this.newline = this._io.readBytes(1);
        if (!((KaitaiStream.byteArrayCompare(this.newline, new Uint8Array([10])) == 0))) {
          throw new KaitaiStream.ValidationNotEqualError(new Uint8Array([10]), this.newline, this._io, "/types/ascii_string/seq/2");
        }
      }
    }

    return AsciiString;
  })();

  /**
   * A Lua function, its bytecode (raw bytes, like a string) and the upvalues object.
   * @see spec/t7.md#t7-function
   */

  var FunctionBody = TorchT7Ascii.FunctionBody = (function() {
    function FunctionBody(_io, _parent, _root, index) {
      this._io = _io;
      this._parent = _parent;
      this._root = _root;
      this.index = index;

      this._read();
    }
    FunctionBody.prototype._read = function() {
      this.bytecode = new LuaString(this._io, this, this._root);
      this.upvalues = new T7Object(this._io, this, this._root, this.index);
    }
    Object.defineProperty(FunctionBody.prototype, 'lastIndex', {
      get: function() {
        if (this._m_lastIndex !== undefined)
          return this._m_lastIndex;
        this._m_lastIndex = this.upvalues.lastIndex;
        return this._m_lastIndex;
      }
    });

    return FunctionBody;
  })();

  /**
   * A table, torch object or type 7/8 function (see torch_t7.ksy for the index rule).
   * @see spec/t7.md#t7-reference-index
   */

  var Indexed = TorchT7Ascii.Indexed = (function() {
    function Indexed(_io, _parent, _root, typeCode, maxIndex) {
      this._io = _io;
      this._parent = _parent;
      this._root = _root;
      this.typeCode = typeCode;
      this.maxIndex = maxIndex;

      this._read();
    }
    Indexed.prototype._read = function() {
      this.indexLine = new IntLine(this._io, this, this._root);
      var _ = this.indexLine;
      if (!( ((_.value >= 1) && (_.value <= this.maxIndex + 1)) )) {
        throw new KaitaiStream.ValidationExprError(this.indexLine, this._io, "/types/indexed/seq/0");
      }
      if ( ((this.isNew) && (this.typeCode == TorchT7Ascii.TypeCode.TABLE)) ) {
        this.table = new TableBody(this._io, this, this._root, this.index);
      }
      if ( ((this.isNew) && (this.typeCode == TorchT7Ascii.TypeCode.TORCH)) ) {
        this.torch = new TorchObject(this._io, this, this._root, this.index);
      }
      if ( ((this.isNew) && ( ((this.typeCode == TorchT7Ascii.TypeCode.RECUR_FUNCTION) || (this.typeCode == TorchT7Ascii.TypeCode.LEGACY_RECUR_FUNCTION)) )) ) {
        this.luaFunction = new FunctionBody(this._io, this, this._root, this.index);
      }
    }
    Object.defineProperty(Indexed.prototype, 'index', {
      get: function() {
        if (this._m_index !== undefined)
          return this._m_index;
        this._m_index = this.indexLine.value;
        return this._m_index;
      }
    });
    Object.defineProperty(Indexed.prototype, 'isNew', {
      get: function() {
        if (this._m_isNew !== undefined)
          return this._m_isNew;
        this._m_isNew = this.index > this.maxIndex;
        return this._m_isNew;
      }
    });
    Object.defineProperty(Indexed.prototype, 'lastIndex', {
      get: function() {
        if (this._m_lastIndex !== undefined)
          return this._m_lastIndex;
        this._m_lastIndex = (!(this.isNew) ? this.maxIndex : (this.typeCode == TorchT7Ascii.TypeCode.TABLE ? this.table.lastIndex : (this.typeCode == TorchT7Ascii.TypeCode.TORCH ? this.torch.lastIndex : this.luaFunction.lastIndex)));
        return this._m_lastIndex;
      }
    });

    /**
     * @see spec/t7.md#t7-table
     */

    /**
     * @see spec/t7.md#t7-torch-object
     */

    /**
     * @see spec/t7.md#t7-function
     */

    return Indexed;
  })();

  /**
   * An integer token on its own line.
   * @see spec/t7.md#t7-ascii
   */

  var IntLine = TorchT7Ascii.IntLine = (function() {
    function IntLine(_io, _parent, _root) {
      this._io = _io;
      this._parent = _parent;
      this._root = _root;

      this._read();
    }
    IntLine.prototype._read = function() {
      this.text = KaitaiStream.bytesToStr(this._io.readBytesTerm(10, false, true, true), "ASCII");
    }
    Object.defineProperty(IntLine.prototype, 'value', {
      get: function() {
        if (this._m_value !== undefined)
          return this._m_value;
        this._m_value = Number.parseInt(this.text, 10);
        return this._m_value;
      }
    });

    return IntLine;
  })();

  /**
   * One key object and one value object.
   * @see spec/t7.md#t7-table
   */

  var KeyValue = TorchT7Ascii.KeyValue = (function() {
    function KeyValue(_io, _parent, _root, maxIndex) {
      this._io = _io;
      this._parent = _parent;
      this._root = _root;
      this.maxIndex = maxIndex;

      this._read();
    }
    KeyValue.prototype._read = function() {
      this.key = new T7Object(this._io, this, this._root, this.maxIndex);
      this.value = new T7Object(this._io, this, this._root, this.key.lastIndex);
    }
    Object.defineProperty(KeyValue.prototype, 'lastIndex', {
      get: function() {
        if (this._m_lastIndex !== undefined)
          return this._m_lastIndex;
        this._m_lastIndex = this.value.lastIndex;
        return this._m_lastIndex;
      }
    });

    return KeyValue;
  })();

  /**
   * A string, its byte count token and the raw bytes, then a newline unless it is empty.
   * @see spec/t7.md#t7-string
   */

  var LuaString = TorchT7Ascii.LuaString = (function() {
    function LuaString(_io, _parent, _root) {
      this._io = _io;
      this._parent = _parent;
      this._root = _root;

      this._read();
    }
    LuaString.prototype._read = function() {
      this.len = new IntLine(this._io, this, this._root);
      var _ = this.len;
      if (!(_.value >= 0)) {
        throw new KaitaiStream.ValidationExprError(this.len, this._io, "/types/lua_string/seq/0");
      }
      this.value = this._io.readBytes(this.len.value);
      if (this.len.value > 0) {
        this.newline = this._io.readBytes(1);
        if (!((KaitaiStream.byteArrayCompare(this.newline, new Uint8Array([10])) == 0))) {
          throw new KaitaiStream.ValidationNotEqualError(new Uint8Array([10]), this.newline, this._io, "/types/lua_string/seq/2");
        }
      }
    }

    return LuaString;
  })();

  /**
   * A storage's element count, then its elements: raw bytes and a newline for Byte and Char
   * storages, one line of number tokens for the others.
   * @see spec/t7.md#t7-storage
   */

  var Storage = TorchT7Ascii.Storage = (function() {
    function Storage(_io, _parent, _root, isRaw) {
      this._io = _io;
      this._parent = _parent;
      this._root = _root;
      this.isRaw = isRaw;

      this._read();
    }
    Storage.prototype._read = function() {
      this.numElements = new IntLine(this._io, this, this._root);
      var _ = this.numElements;
      if (!(_.value >= 0)) {
        throw new KaitaiStream.ValidationExprError(this.numElements, this._io, "/types/storage/seq/0");
      }
      if (this.isRaw) {
        this.raw = this._io.readBytes(this.numElements.value);
      }
      if ( ((this.isRaw) && (this.numElements.value > 0)) ) {
        this.rawNewline = this._io.readBytes(1);
        if (!((KaitaiStream.byteArrayCompare(this.rawNewline, new Uint8Array([10])) == 0))) {
          throw new KaitaiStream.ValidationNotEqualError(new Uint8Array([10]), this.rawNewline, this._io, "/types/storage/seq/2");
        }
      }
      if (!(this.isRaw)) {
        this.tokens = new TokenArray(this._io, this, this._root, this.numElements.value);
      }
    }

    /**
     * True for Byte and Char storages, whose elements are written as raw bytes.
     */

    return Storage;
  })();

  /**
   * One serialized object; `last_index` is the highest reference index after it.
   * @see spec/t7.md#t7-type-codes
   */

  var T7Object = TorchT7Ascii.T7Object = (function() {
    function T7Object(_io, _parent, _root, maxIndex) {
      this._io = _io;
      this._parent = _parent;
      this._root = _root;
      this.maxIndex = maxIndex;

      this._read();
    }
    T7Object.prototype._read = function() {
      this.typeCodeToken = KaitaiStream.bytesToStr(this._io.readBytesTerm(10, false, true, true), "ASCII");
      if (!( ((this.typeCodeToken == "0") || (this.typeCodeToken == "1") || (this.typeCodeToken == "2") || (this.typeCodeToken == "3") || (this.typeCodeToken == "4") || (this.typeCodeToken == "5") || (this.typeCodeToken == "6") || (this.typeCodeToken == "7") || (this.typeCodeToken == "8")) )) {
        throw new KaitaiStream.ValidationNotAnyOfError(this.typeCodeToken, this._io, "/types/t7_object/seq/0");
      }
      if (this.typeCode == TorchT7Ascii.TypeCode.NUMBER) {
        this.number = new TokenLine(this._io, this, this._root);
      }
      if (this.typeCode == TorchT7Ascii.TypeCode.BOOLEAN) {
        this.luaBoolean = new IntLine(this._io, this, this._root);
      }
      if (this.typeCode == TorchT7Ascii.TypeCode.STRING) {
        this.string = new LuaString(this._io, this, this._root);
      }
      if (this.typeCode == TorchT7Ascii.TypeCode.LUA_FUNCTION) {
        this.luaFunction = new FunctionBody(this._io, this, this._root, this.maxIndex);
      }
      if ( ((this.typeCode == TorchT7Ascii.TypeCode.TABLE) || (this.typeCode == TorchT7Ascii.TypeCode.TORCH) || (this.typeCode == TorchT7Ascii.TypeCode.RECUR_FUNCTION) || (this.typeCode == TorchT7Ascii.TypeCode.LEGACY_RECUR_FUNCTION)) ) {
        this.indexed = new Indexed(this._io, this, this._root, this.typeCode, this.maxIndex);
      }
    }
    Object.defineProperty(T7Object.prototype, 'lastIndex', {
      get: function() {
        if (this._m_lastIndex !== undefined)
          return this._m_lastIndex;
        this._m_lastIndex = (this.typeCode == TorchT7Ascii.TypeCode.LUA_FUNCTION ? this.luaFunction.lastIndex : ( ((this.typeCode == TorchT7Ascii.TypeCode.TABLE) || (this.typeCode == TorchT7Ascii.TypeCode.TORCH) || (this.typeCode == TorchT7Ascii.TypeCode.RECUR_FUNCTION) || (this.typeCode == TorchT7Ascii.TypeCode.LEGACY_RECUR_FUNCTION))  ? this.indexed.lastIndex : this.maxIndex));
        return this._m_lastIndex;
      }
    });
    Object.defineProperty(T7Object.prototype, 'typeCode', {
      get: function() {
        if (this._m_typeCode !== undefined)
          return this._m_typeCode;
        this._m_typeCode = Number.parseInt(this.typeCodeToken, 10);
        return this._m_typeCode;
      }
    });

    /**
     * A double as text ("%.17g"; inf, -inf, nan or -nan spelled so).
     * @see spec/t7.md#t7-number
     */

    /**
     * @see spec/t7.md#t7-boolean
     */

    /**
     * @see spec/t7.md#t7-string
     */

    /**
     * @see spec/t7.md#t7-function
     */

    /**
     * @see spec/t7.md#t7-reference-index
     */

    /**
     * The highest reference index the stream used before this object (0 at the start).
     */

    return T7Object;
  })();

  /**
   * A Lua table, the pair count and the pairs.
   * @see spec/t7.md#t7-table
   */

  var TableBody = TorchT7Ascii.TableBody = (function() {
    function TableBody(_io, _parent, _root, index) {
      this._io = _io;
      this._parent = _parent;
      this._root = _root;
      this.index = index;

      this._read();
    }
    TableBody.prototype._read = function() {
      this.numPairs = new IntLine(this._io, this, this._root);
      var _ = this.numPairs;
      if (!(_.value >= 0)) {
        throw new KaitaiStream.ValidationExprError(this.numPairs, this._io, "/types/table_body/seq/0");
      }
      this.pairs = [];
      for (var i = 0; i < this.numPairs.value; i++) {
        this.pairs.push(new KeyValue(this._io, this, this._root, (i == 0 ? this.index : this.pairs[i - 1].lastIndex)));
      }
    }
    Object.defineProperty(TableBody.prototype, 'lastIndex', {
      get: function() {
        if (this._m_lastIndex !== undefined)
          return this._m_lastIndex;
        this._m_lastIndex = (this.numPairs.value == 0 ? this.index : this.pairs[this.pairs.length - 1].lastIndex);
        return this._m_lastIndex;
      }
    });

    return TableBody;
  })();

  /**
   * tds.Hash's payload, a count and key/value objects.
   * @see spec/t7.md#t7-tds
   */

  var TdsHash = TorchT7Ascii.TdsHash = (function() {
    function TdsHash(_io, _parent, _root, index) {
      this._io = _io;
      this._parent = _parent;
      this._root = _root;
      this.index = index;

      this._read();
    }
    TdsHash.prototype._read = function() {
      this.numPairs = new IntLine(this._io, this, this._root);
      var _ = this.numPairs;
      if (!(_.value >= 0)) {
        throw new KaitaiStream.ValidationExprError(this.numPairs, this._io, "/types/tds_hash/seq/0");
      }
      this.pairs = [];
      for (var i = 0; i < this.numPairs.value; i++) {
        this.pairs.push(new KeyValue(this._io, this, this._root, (i == 0 ? this.index : this.pairs[i - 1].lastIndex)));
      }
    }
    Object.defineProperty(TdsHash.prototype, 'lastIndex', {
      get: function() {
        if (this._m_lastIndex !== undefined)
          return this._m_lastIndex;
        this._m_lastIndex = (this.numPairs.value == 0 ? this.index : this.pairs[this.pairs.length - 1].lastIndex);
        return this._m_lastIndex;
      }
    });

    /**
     * The pair count; a negative count is malformed (and `pairs.last` would have no pair).
     */

    return TdsHash;
  })();

  /**
   * tds.Vec's payload, a count and the element objects.
   * @see spec/t7.md#t7-tds
   */

  var TdsVec = TorchT7Ascii.TdsVec = (function() {
    function TdsVec(_io, _parent, _root, index) {
      this._io = _io;
      this._parent = _parent;
      this._root = _root;
      this.index = index;

      this._read();
    }
    TdsVec.prototype._read = function() {
      this.numItems = new IntLine(this._io, this, this._root);
      var _ = this.numItems;
      if (!(_.value >= 0)) {
        throw new KaitaiStream.ValidationExprError(this.numItems, this._io, "/types/tds_vec/seq/0");
      }
      this.items = [];
      for (var i = 0; i < this.numItems.value; i++) {
        this.items.push(new T7Object(this._io, this, this._root, (i == 0 ? this.index : this.items[i - 1].lastIndex)));
      }
    }
    Object.defineProperty(TdsVec.prototype, 'lastIndex', {
      get: function() {
        if (this._m_lastIndex !== undefined)
          return this._m_lastIndex;
        this._m_lastIndex = (this.numItems.value == 0 ? this.index : this.items[this.items.length - 1].lastIndex);
        return this._m_lastIndex;
      }
    });

    /**
     * The item count; a negative count is malformed (and `items.last` would have no item).
     */

    return TdsVec;
  })();

  /**
   * A tensor's dimension count, sizes, strides, 1-based storage offset and storage object.
   * @see spec/t7.md#t7-tensor
   */

  var Tensor = TorchT7Ascii.Tensor = (function() {
    function Tensor(_io, _parent, _root, index) {
      this._io = _io;
      this._parent = _parent;
      this._root = _root;
      this.index = index;

      this._read();
    }
    Tensor.prototype._read = function() {
      this.numDims = new IntLine(this._io, this, this._root);
      var _ = this.numDims;
      if (!(_.value >= 0)) {
        throw new KaitaiStream.ValidationExprError(this.numDims, this._io, "/types/tensor/seq/0");
      }
      this.sizes = new TokenArray(this._io, this, this._root, this.numDims.value);
      this.strides = new TokenArray(this._io, this, this._root, this.numDims.value);
      this.storageOffset = new IntLine(this._io, this, this._root);
      this.storage = new T7Object(this._io, this, this._root, this.index);
    }
    Object.defineProperty(Tensor.prototype, 'lastIndex', {
      get: function() {
        if (this._m_lastIndex !== undefined)
          return this._m_lastIndex;
        this._m_lastIndex = this.storage.lastIndex;
        return this._m_lastIndex;
      }
    });

    /**
     * @see spec/t7.md#t7-tensor-offset
     */

    return Tensor;
  })();

  /**
   * num_items tokens on one line, separated by single spaces and ended by a newline; nothing at all
   * when num_items is 0.
   * @see spec/t7.md#t7-ascii
   */

  var TokenArray = TorchT7Ascii.TokenArray = (function() {
    function TokenArray(_io, _parent, _root, numItems) {
      this._io = _io;
      this._parent = _parent;
      this._root = _root;
      this.numItems = numItems;

      this._read();
    }
    TokenArray.prototype._read = function() {
      if (this.numItems > 1) {
        this.leading = [];
        for (var i = 0; i < this.numItems - 1; i++) {
          this.leading.push(KaitaiStream.bytesToStr(this._io.readBytesTerm(32, false, true, true), "ASCII"));
        }
      }
      if (this.numItems > 0) {
        this.lastToken = KaitaiStream.bytesToStr(this._io.readBytesTerm(10, false, true, true), "ASCII");
      }
    }

    return TokenArray;
  })();

  /**
   * One token on its own line.
   * @see spec/t7.md#t7-ascii
   */

  var TokenLine = TorchT7Ascii.TokenLine = (function() {
    function TokenLine(_io, _parent, _root) {
      this._io = _io;
      this._parent = _parent;
      this._root = _root;

      this._read();
    }
    TokenLine.prototype._read = function() {
      this.text = KaitaiStream.bytesToStr(this._io.readBytesTerm(10, false, true, true), "ASCII");
    }

    return TokenLine;
  })();

  /**
   * A torch class instance, its version and class name, then the class payload.
   * @see spec/t7.md#t7-torch-object
   */

  var TorchObject = TorchT7Ascii.TorchObject = (function() {
    function TorchObject(_io, _parent, _root, index) {
      this._io = _io;
      this._parent = _parent;
      this._root = _root;
      this.index = index;

      this._read();
    }
    TorchObject.prototype._read = function() {
      this.versionOrClass = new AsciiString(this._io, this, this._root);
      if (this.hasVersion) {
        this.classAfterVersion = new AsciiString(this._io, this, this._root);
      }
      switch (this.className) {
      case "tds.Hash":
        this.payload = new TdsHash(this._io, this, this._root, this.index);
        break;
      case "tds.Vec":
        this.payload = new TdsVec(this._io, this, this._root, this.index);
        break;
      case "torch.ByteStorage":
        this.payload = new Storage(this._io, this, this._root, true);
        break;
      case "torch.ByteTensor":
        this.payload = new Tensor(this._io, this, this._root, this.index);
        break;
      case "torch.CharStorage":
        this.payload = new Storage(this._io, this, this._root, true);
        break;
      case "torch.CharTensor":
        this.payload = new Tensor(this._io, this, this._root, this.index);
        break;
      case "torch.CudaByteStorage":
        this.payload = new Storage(this._io, this, this._root, true);
        break;
      case "torch.CudaByteTensor":
        this.payload = new Tensor(this._io, this, this._root, this.index);
        break;
      case "torch.CudaCharStorage":
        this.payload = new Storage(this._io, this, this._root, true);
        break;
      case "torch.CudaCharTensor":
        this.payload = new Tensor(this._io, this, this._root, this.index);
        break;
      case "torch.CudaDoubleStorage":
        this.payload = new Storage(this._io, this, this._root, false);
        break;
      case "torch.CudaDoubleTensor":
        this.payload = new Tensor(this._io, this, this._root, this.index);
        break;
      case "torch.CudaHalfStorage":
        this.payload = new Storage(this._io, this, this._root, false);
        break;
      case "torch.CudaHalfTensor":
        this.payload = new Tensor(this._io, this, this._root, this.index);
        break;
      case "torch.CudaIntStorage":
        this.payload = new Storage(this._io, this, this._root, false);
        break;
      case "torch.CudaIntTensor":
        this.payload = new Tensor(this._io, this, this._root, this.index);
        break;
      case "torch.CudaLongStorage":
        this.payload = new Storage(this._io, this, this._root, false);
        break;
      case "torch.CudaLongTensor":
        this.payload = new Tensor(this._io, this, this._root, this.index);
        break;
      case "torch.CudaShortStorage":
        this.payload = new Storage(this._io, this, this._root, false);
        break;
      case "torch.CudaShortTensor":
        this.payload = new Tensor(this._io, this, this._root, this.index);
        break;
      case "torch.CudaStorage":
        this.payload = new Storage(this._io, this, this._root, false);
        break;
      case "torch.CudaTensor":
        this.payload = new Tensor(this._io, this, this._root, this.index);
        break;
      case "torch.DoubleStorage":
        this.payload = new Storage(this._io, this, this._root, false);
        break;
      case "torch.DoubleTensor":
        this.payload = new Tensor(this._io, this, this._root, this.index);
        break;
      case "torch.FloatStorage":
        this.payload = new Storage(this._io, this, this._root, false);
        break;
      case "torch.FloatTensor":
        this.payload = new Tensor(this._io, this, this._root, this.index);
        break;
      case "torch.HalfStorage":
        this.payload = new Storage(this._io, this, this._root, false);
        break;
      case "torch.HalfTensor":
        this.payload = new Tensor(this._io, this, this._root, this.index);
        break;
      case "torch.IntStorage":
        this.payload = new Storage(this._io, this, this._root, false);
        break;
      case "torch.IntTensor":
        this.payload = new Tensor(this._io, this, this._root, this.index);
        break;
      case "torch.LongStorage":
        this.payload = new Storage(this._io, this, this._root, false);
        break;
      case "torch.LongTensor":
        this.payload = new Tensor(this._io, this, this._root, this.index);
        break;
      case "torch.ShortStorage":
        this.payload = new Storage(this._io, this, this._root, false);
        break;
      case "torch.ShortTensor":
        this.payload = new Tensor(this._io, this, this._root, this.index);
        break;
      default:
        this.payload = new T7Object(this._io, this, this._root, this.index);
        break;
      }
    }
    Object.defineProperty(TorchObject.prototype, 'className', {
      get: function() {
        if (this._m_className !== undefined)
          return this._m_className;
        this._m_className = (this.hasVersion ? this.classAfterVersion.value : this.versionOrClass.value);
        return this._m_className;
      }
    });
    Object.defineProperty(TorchObject.prototype, 'hasVersion', {
      get: function() {
        if (this._m_hasVersion !== undefined)
          return this._m_hasVersion;
        this._m_hasVersion =  ((this.versionOrClass.value.length >= 2) && (this.versionOrClass.value.substring(0, 2) == "V ")) ;
        return this._m_hasVersion;
      }
    });
    Object.defineProperty(TorchObject.prototype, 'isStorage', {
      get: function() {
        if (this._m_isStorage !== undefined)
          return this._m_isStorage;
        this._m_isStorage =  ((this.className.substring(0, 6) == "torch.") && (this.className.length > 13) && (this.className.substring(this.className.length - 7, this.className.length) == "Storage")) ;
        return this._m_isStorage;
      }
    });
    Object.defineProperty(TorchObject.prototype, 'isTensor', {
      get: function() {
        if (this._m_isTensor !== undefined)
          return this._m_isTensor;
        this._m_isTensor =  ((this.className.substring(0, 6) == "torch.") && (this.className.length > 12) && (this.className.substring(this.className.length - 6, this.className.length) == "Tensor")) ;
        return this._m_isTensor;
      }
    });
    Object.defineProperty(TorchObject.prototype, 'lastIndex', {
      get: function() {
        if (this._m_lastIndex !== undefined)
          return this._m_lastIndex;
        this._m_lastIndex = (this.isTensor ? this.payload.lastIndex : (this.isStorage ? this.index : (this.className == "tds.Hash" ? this.payload.lastIndex : (this.className == "tds.Vec" ? this.payload.lastIndex : this.payload.lastIndex))));
        return this._m_lastIndex;
      }
    });
    Object.defineProperty(TorchObject.prototype, 'version', {
      get: function() {
        if (this._m_version !== undefined)
          return this._m_version;
        this._m_version = (this.hasVersion ? this.versionOrClass.value.substring(2, this.versionOrClass.value.length) : "");
        return this._m_version;
      }
    });

    /**
     * @see spec/t7.md#t7-class-version
     */

    return TorchObject;
  })();

  /**
   * The top-level objects in file order.
   * @see spec/t7.md#t7-stream
   */

  return TorchT7Ascii;
})();
TorchT7Ascii_.TorchT7Ascii = TorchT7Ascii;
});
