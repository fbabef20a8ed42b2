// This is a generated file! Please edit source .ksy file and use kaitai-struct-compiler to rebuild

(function (root, factory) {
  if (typeof define === 'function' && define.amd) {
    define(['exports', 'kaitai-struct/KaitaiStream'], factory);
  } else if (typeof exports === 'object' && exports !== null && typeof exports.nodeType !== 'number') {
    factory(exports, require('kaitai-struct/KaitaiStream'));
  } else {
    factory(root.TorchT7 || (root.TorchT7 = {}), root.KaitaiStream);
  }
})(typeof self !== 'undefined' ? self : this, function (TorchT7_, KaitaiStream) {
/**
 * A .t7 file is the byte stream that torch7's File:writeObject wrote: one or more objects, each a
 * 4-byte type code and a payload (File.lua).  The file has no header: whether it is binary or ascii,
 * how wide a C `long` was (4 or 8 bytes) and the byte order are facts of the machine that wrote it.
 * This grammar reads the binary mode; the four binary encodings are the four lazy instances below
 * (little/big endian x 8/4-byte long), so a tool (or the Web IDE) opens whichever one fits and nothing
 * is parsed until then.  torch.save on 64-bit Linux or macOS writes `le_long8`.
 * 
 * The ascii mode (torch.save(f, x, 'ascii')) writes the same object grammar as decimal tokens, one
 * scalar or one space-separated array per line, with strings and char/byte storages written raw
 * (their length is the token before them).  Kaitai can express that too; it is the separate grammar
 * torch_t7_ascii.ksy.
 * 
 * Reference indexes.  Tables, torch objects and functions of types 7/8 carry an index.  The first
 * time the writer meets an object it gives it the next index (1, 2, 3, ... across the whole stream,
 * even across several writeObject calls on one File) and writes it in full; later occurrences write
 * only the index.  Kaitai keeps no state between fields, so the grammar threads the highest index
 * seen so far through every object as a parameter (`max_index` in, `last_index` out): an index at
 * most `max_index` is a back-reference with no payload, an index of exactly `max_index + 1` starts a
 * new object, and anything else is invalid.  This is exactly torch's own rule for files its writer
 * produced (File.lua numbers new objects consecutively); a hand-made file that numbers objects
 * otherwise is outside what the grammar accepts.
 * 
 * Torch classes.  A torch object is a version string "V <n>" (absent in files older than torch7's
 * versioning: then the first string is already the class name), the class name and the class's
 * payload.  Tensor and Storage classes (CPU and cutorch's Cuda*) and tds.Hash/tds.Vec have their own
 * binary layouts, chosen here by class name.  Every other class is read the way File:readObject
 * reads a class without a `read` method: one object, normally the table of its fields (nn modules,
 * nngraph nodes).  A class with its own `write`/`read` methods writes whatever it likes; no grammar
 * can know it, and the index check above usually rejects the misparse (class_custom_write.t7).
 * 
 * Not expressible in Kaitai: which binary encoding a file uses (the reader's detection, spec/t7.md#t7-detect);
 * what a back-reference points to (the index is exposed, the lookup is the reader's); storage
 * element values (kept as raw bytes, in the file's byte order; the element type follows from the
 * class name, and a Long element is as wide as the encoding's long).
 * @see spec/t7.md#t7-binary
 */

var TorchT7 = (function() {
  TorchT7.TypeCode = Object.freeze({
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

  function TorchT7(_io, _parent, _root) {
    this._io = _io;
    this._parent = _parent;
    this._root = _root || this;

    this._read();
  }
  TorchT7.prototype._read = function() {
  }

  /**
   * The objects of one binary encoding, to the end of the file.  Several objects follow each other
   * when the writer called writeObject more than once on one File; they share one index space.
   * @see spec/t7.md#t7-stream
   */

  var Stream = TorchT7.Stream = (function() {
    function Stream(_io, _parent, _root, longSize, isBigEndian) {
      this._io = _io;
      this._parent = _parent;
      this._root = _root;
      this.longSize = longSize;
      this.isBigEndian = isBigEndian;

      this._read();
    }
    Stream.prototype._read = function() {
      switch (this.isBigEndian) {
      case true:
        this._is_le = false;
        break;
      case false:
        this._is_le = true;
        break;
      }

      if (this._is_le === true) {
        this._readLE();
      } else if (this._is_le === false) {
        this._readBE();
      } else {
        throw new KaitaiStream.UndecidedEndiannessError();
      }
    }
    Stream.prototype._readLE = function() {
      this.objects = [];
      var i = 0;
      while (!this._io.isEof()) {
        this.objects.push(new T7Object(this._io, this, this._root, this._is_le, this.longSize, (i == 0 ? 0 : this.objects[i - 1].lastIndex)));
        i++;
      }
    }
    Stream.prototype._readBE = function() {
      this.objects = [];
      var i = 0;
      while (!this._io.isEof()) {
        this.objects.push(new T7Object(this._io, this, this._root, this._is_le, this.longSize, (i == 0 ? 0 : this.objects[i - 1].lastIndex)));
        i++;
      }
    }

    /**
     * A class name or version string, an int32 length and ASCII text.
     * @see spec/t7.md#t7-class-version
     */

    var AsciiString = Stream.AsciiString = (function() {
      function AsciiString(_io, _parent, _root, _is_le) {
        this._io = _io;
        this._parent = _parent;
        this._root = _root;
        this._is_le = _is_le;

        this._read();
      }
      AsciiString.prototype._read = function() {

        if (this._is_le === true) {
          this._readLE();
        } else if (this._is_le === false) {
          this._readBE();
        } else {
          throw new KaitaiStream.UndecidedEndiannessError();
        }
      }
      AsciiString.prototype._readLE = function() {
        this.len = this._io.readS4le();
        if (!(this.len >= 0)) {
          throw new KaitaiStream.ValidationLessThanError(0, this.len, this._io, "/types/stream/types/ascii_string/seq/0");
        }
        this.value = KaitaiStream.bytesToStr(this._io.readBytes(this.len), "ASCII");
      }
      AsciiString.prototype._readBE = function() {
        this.len = this._io.readS4be();
        if (!(this.len >= 0)) {
          throw new KaitaiStream.ValidationLessThanError(0, this.len, this._io, "/types/stream/types/ascii_string/seq/0");
        }
        this.value = KaitaiStream.bytesToStr(this._io.readBytes(this.len), "ASCII");
      }

      return AsciiString;
    })();

    /**
     * A C long of the encoding's width.
     * @see spec/t7.md#t7-long-size
     */

    var CLong = Stream.CLong = (function() {
      function CLong(_io, _parent, _root, _is_le, longSize) {
        this._io = _io;
        this._parent = _parent;
        this._root = _root;
        this._is_le = _is_le;
        this.longSize = longSize;

        this._read();
      }
      CLong.prototype._read = function() {

        if (this._is_le === true) {
          this._readLE();
        } else if (this._is_le === false) {
          this._readBE();
        } else {
          throw new KaitaiStream.UndecidedEndiannessError();
        }
      }
      CLong.prototype._readLE = function() {
        switch (this.longSize) {
        case 4:
          this.value = this._io.readS4le();
          break;
        case 8:
          this.value = this._io.readS8le();
          break;
        }
      }
      CLong.prototype._readBE = function() {
        switch (this.longSize) {
        case 4:
          this.value = this._io.readS4be();
          break;
        case 8:
          this.value = this._io.readS8be();
          break;
        }
      }

      return CLong;
    })();

    /**
     * A Lua function: its string.dump bytecode (VM-specific: LuaJIT or PUC Lua; opaque, never run) and
     * one object holding the upvalues: for type 8 a list of {name=, value=[, id=]} tables, for types
     * 6 and 7 the bare values.
     * @see spec/t7.md#t7-function
     */

    var FunctionBody = Stream.FunctionBody = (function() {
      function FunctionBody(_io, _parent, _root, _is_le, longSize, index) {
        this._io = _io;
        this._parent = _parent;
        this._root = _root;
        this._is_le = _is_le;
        this.longSize = longSize;
        this.index = index;

        this._read();
      }
      FunctionBody.prototype._read = function() {

        if (this._is_le === true) {
          this._readLE();
        } else if (this._is_le === false) {
          this._readBE();
        } else {
          throw new KaitaiStream.UndecidedEndiannessError();
        }
      }
      FunctionBody.prototype._readLE = function() {
        this.lenBytecode = this._io.readS4le();
        if (!(this.lenBytecode >= 0)) {
          throw new KaitaiStream.ValidationLessThanError(0, this.lenBytecode, this._io, "/types/stream/types/function_body/seq/0");
        }
        this.bytecode = this._io.readBytes(this.lenBytecode);
        this.upvalues = new T7Object(this._io, this, this._root, this._is_le, this.longSize, this.index);
      }
      FunctionBody.prototype._readBE = function() {
        this.lenBytecode = this._io.readS4be();
        if (!(this.lenBytecode >= 0)) {
          throw new KaitaiStream.ValidationLessThanError(0, this.lenBytecode, this._io, "/types/stream/types/function_body/seq/0");
        }
        this.bytecode = this._io.readBytes(this.lenBytecode);
        this.upvalues = new T7Object(this._io, this, this._root, this._is_le, this.longSize, this.index);
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
     * A table, torch object or type 7/8 function: the reference index, then the payload the first
     * time the object occurs, nothing for a back-reference.
     * @see spec/t7.md#t7-reference-index
     */

    var Indexed = Stream.Indexed = (function() {
      function Indexed(_io, _parent, _root, _is_le, typeCode, longSize, maxIndex) {
        this._io = _io;
        this._parent = _parent;
        this._root = _root;
        this._is_le = _is_le;
        this.typeCode = typeCode;
        this.longSize = longSize;
        this.maxIndex = maxIndex;

        this._read();
      }
      Indexed.prototype._read = function() {

        if (this._is_le === true) {
          this._readLE();
        } else if (this._is_le === false) {
          this._readBE();
        } else {
          throw new KaitaiStream.UndecidedEndiannessError();
        }
      }
      Indexed.prototype._readLE = function() {
        this.index = this._io.readS4le();
        if (!(this.index >= 1)) {
          throw new KaitaiStream.ValidationLessThanError(1, this.index, this._io, "/types/stream/types/indexed/seq/0");
        }
        if (!(this.index <= this.maxIndex + 1)) {
          throw new KaitaiStream.ValidationGreaterThanError(this.maxIndex + 1, this.index, this._io, "/types/stream/types/indexed/seq/0");
        }
        if ( ((this.isNew) && (this.typeCode == TorchT7.TypeCode.TABLE)) ) {
          this.table = new TableBody(this._io, this, this._root, this._is_le, this.longSize, this.index);
        }
        if ( ((this.isNew) && (this.typeCode == TorchT7.TypeCode.TORCH)) ) {
          this.torch = new TorchObject(this._io, this, this._root, this._is_le, this.longSize, this.index);
        }
        if ( ((this.isNew) && ( ((this.typeCode == TorchT7.TypeCode.RECUR_FUNCTION) || (this.typeCode == TorchT7.TypeCode.LEGACY_RECUR_FUNCTION)) )) ) {
          this.luaFunction = new FunctionBody(this._io, this, this._root, this._is_le, this.longSize, this.index);
        }
      }
      Indexed.prototype._readBE = function() {
        this.index = this._io.readS4be();
        if (!(this.index >= 1)) {
          throw new KaitaiStream.ValidationLessThanError(1, this.index, this._io, "/types/stream/types/indexed/seq/0");
        }
        if (!(this.index <= this.maxIndex + 1)) {
          throw new KaitaiStream.ValidationGreaterThanError(this.maxIndex + 1, this.index, this._io, "/types/stream/types/indexed/seq/0");
        }
        if ( ((this.isNew) && (this.typeCode == TorchT7.TypeCode.TABLE)) ) {
          this.table = new TableBody(this._io, this, this._root, this._is_le, this.longSize, this.index);
        }
        if ( ((this.isNew) && (this.typeCode == TorchT7.TypeCode.TORCH)) ) {
          this.torch = new TorchObject(this._io, this, this._root, this._is_le, this.longSize, this.index);
        }
        if ( ((this.isNew) && ( ((this.typeCode == TorchT7.TypeCode.RECUR_FUNCTION) || (this.typeCode == TorchT7.TypeCode.LEGACY_RECUR_FUNCTION)) )) ) {
          this.luaFunction = new FunctionBody(this._io, this, this._root, this._is_le, this.longSize, this.index);
        }
      }

      /**
       * False for a back-reference to an object read earlier in the stream.
       */
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
          this._m_lastIndex = (!(this.isNew) ? this.maxIndex : (this.typeCode == TorchT7.TypeCode.TABLE ? this.table.lastIndex : (this.typeCode == TorchT7.TypeCode.TORCH ? this.torch.lastIndex : this.luaFunction.lastIndex)));
          return this._m_lastIndex;
        }
      });

      /**
       * 1-based; at most max_index names an object already read, max_index + 1 starts a new one.
       */

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
     * One key object and one value object.
     * @see spec/t7.md#t7-table
     */

    var KeyValue = Stream.KeyValue = (function() {
      function KeyValue(_io, _parent, _root, _is_le, longSize, maxIndex) {
        this._io = _io;
        this._parent = _parent;
        this._root = _root;
        this._is_le = _is_le;
        this.longSize = longSize;
        this.maxIndex = maxIndex;

        this._read();
      }
      KeyValue.prototype._read = function() {

        if (this._is_le === true) {
          this._readLE();
        } else if (this._is_le === false) {
          this._readBE();
        } else {
          throw new KaitaiStream.UndecidedEndiannessError();
        }
      }
      KeyValue.prototype._readLE = function() {
        this.key = new T7Object(this._io, this, this._root, this._is_le, this.longSize, this.maxIndex);
        this.value = new T7Object(this._io, this, this._root, this._is_le, this.longSize, this.key.lastIndex);
      }
      KeyValue.prototype._readBE = function() {
        this.key = new T7Object(this._io, this, this._root, this._is_le, this.longSize, this.maxIndex);
        this.value = new T7Object(this._io, this, this._root, this._is_le, this.longSize, this.key.lastIndex);
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
     * A Lua string, an int32 length and the bytes (any bytes; not necessarily UTF-8).
     * @see spec/t7.md#t7-string
     */

    var LuaString = Stream.LuaString = (function() {
      function LuaString(_io, _parent, _root, _is_le) {
        this._io = _io;
        this._parent = _parent;
        this._root = _root;
        this._is_le = _is_le;

        this._read();
      }
      LuaString.prototype._read = function() {

        if (this._is_le === true) {
          this._readLE();
        } else if (this._is_le === false) {
          this._readBE();
        } else {
          throw new KaitaiStream.UndecidedEndiannessError();
        }
      }
      LuaString.prototype._readLE = function() {
        this.len = this._io.readS4le();
        if (!(this.len >= 0)) {
          throw new KaitaiStream.ValidationLessThanError(0, this.len, this._io, "/types/stream/types/lua_string/seq/0");
        }
        this.value = this._io.readBytes(this.len);
      }
      LuaString.prototype._readBE = function() {
        this.len = this._io.readS4be();
        if (!(this.len >= 0)) {
          throw new KaitaiStream.ValidationLessThanError(0, this.len, this._io, "/types/stream/types/lua_string/seq/0");
        }
        this.value = this._io.readBytes(this.len);
      }

      return LuaString;
    })();

    /**
     * torch.*Storage's payload (Storage.c write): the element count as a long and the raw elements,
     * in the encoding's byte order.  LongStorage elements are as wide as the encoding's long.
     * @see spec/t7.md#t7-storage
     */

    var Storage = Stream.Storage = (function() {
      function Storage(_io, _parent, _root, _is_le, longSize, elementSize) {
        this._io = _io;
        this._parent = _parent;
        this._root = _root;
        this._is_le = _is_le;
        this.longSize = longSize;
        this.elementSize = elementSize;

        this._read();
      }
      Storage.prototype._read = function() {

        if (this._is_le === true) {
          this._readLE();
        } else if (this._is_le === false) {
          this._readBE();
        } else {
          throw new KaitaiStream.UndecidedEndiannessError();
        }
      }
      Storage.prototype._readLE = function() {
        this.numElements = new CLong(this._io, this, this._root, this._is_le, this.longSize);
        var _ = this.numElements;
        if (!(_.value >= 0)) {
          throw new KaitaiStream.ValidationExprError(this.numElements, this._io, "/types/stream/types/storage/seq/0");
        }
        this.data = this._io.readBytes(this.numElements.value * this.elementSize);
      }
      Storage.prototype._readBE = function() {
        this.numElements = new CLong(this._io, this, this._root, this._is_le, this.longSize);
        var _ = this.numElements;
        if (!(_.value >= 0)) {
          throw new KaitaiStream.ValidationExprError(this.numElements, this._io, "/types/stream/types/storage/seq/0");
        }
        this.data = this._io.readBytes(this.numElements.value * this.elementSize);
      }

      /**
       * The element count; a negative count is malformed.
       * @see spec/t7.md#t7-storage
       */

      /**
       * The raw elements; a 64-bit reader maps them, it does not copy.
       */

      return Storage;
    })();

    /**
     * One serialized object, File:writeObject's unit; `last_index` is the highest reference index after it.
     * @see spec/t7.md#t7-type-codes
     */

    var T7Object = Stream.T7Object = (function() {
      function T7Object(_io, _parent, _root, _is_le, longSize, maxIndex) {
        this._io = _io;
        this._parent = _parent;
        this._root = _root;
        this._is_le = _is_le;
        this.longSize = longSize;
        this.maxIndex = maxIndex;

        this._read();
      }
      T7Object.prototype._read = function() {

        if (this._is_le === true) {
          this._readLE();
        } else if (this._is_le === false) {
          this._readBE();
        } else {
          throw new KaitaiStream.UndecidedEndiannessError();
        }
      }
      T7Object.prototype._readLE = function() {
        this.typeCode = this._io.readS4le();
        if (!Object.prototype.hasOwnProperty.call(TorchT7.TypeCode, this.typeCode)) {
          throw new KaitaiStream.ValidationNotInEnumError(this.typeCode, this._io, "/types/stream/types/t7_object/seq/0");
        }
        if (this.typeCode == TorchT7.TypeCode.NUMBER) {
          this.number = this._io.readF8le();
        }
        if (this.typeCode == TorchT7.TypeCode.BOOLEAN) {
          this.luaBoolean = this._io.readS4le();
        }
        if (this.typeCode == TorchT7.TypeCode.STRING) {
          this.string = new LuaString(this._io, this, this._root, this._is_le);
        }
        if (this.typeCode == TorchT7.TypeCode.LUA_FUNCTION) {
          this.luaFunction = new FunctionBody(this._io, this, this._root, this._is_le, this.longSize, this.maxIndex);
        }
        if ( ((this.typeCode == TorchT7.TypeCode.TABLE) || (this.typeCode == TorchT7.TypeCode.TORCH) || (this.typeCode == TorchT7.TypeCode.RECUR_FUNCTION) || (this.typeCode == TorchT7.TypeCode.LEGACY_RECUR_FUNCTION)) ) {
          this.indexed = new Indexed(this._io, this, this._root, this._is_le, this.typeCode, this.longSize, this.maxIndex);
        }
      }
      T7Object.prototype._readBE = function() {
        this.typeCode = this._io.readS4be();
        if (!Object.prototype.hasOwnProperty.call(TorchT7.TypeCode, this.typeCode)) {
          throw new KaitaiStream.ValidationNotInEnumError(this.typeCode, this._io, "/types/stream/types/t7_object/seq/0");
        }
        if (this.typeCode == TorchT7.TypeCode.NUMBER) {
          this.number = this._io.readF8be();
        }
        if (this.typeCode == TorchT7.TypeCode.BOOLEAN) {
          this.luaBoolean = this._io.readS4be();
        }
        if (this.typeCode == TorchT7.TypeCode.STRING) {
          this.string = new LuaString(this._io, this, this._root, this._is_le);
        }
        if (this.typeCode == TorchT7.TypeCode.LUA_FUNCTION) {
          this.luaFunction = new FunctionBody(this._io, this, this._root, this._is_le, this.longSize, this.maxIndex);
        }
        if ( ((this.typeCode == TorchT7.TypeCode.TABLE) || (this.typeCode == TorchT7.TypeCode.TORCH) || (this.typeCode == TorchT7.TypeCode.RECUR_FUNCTION) || (this.typeCode == TorchT7.TypeCode.LEGACY_RECUR_FUNCTION)) ) {
          this.indexed = new Indexed(this._io, this, this._root, this._is_le, this.typeCode, this.longSize, this.maxIndex);
        }
      }

      /**
       * The highest reference index used once this object has been read.
       */
      Object.defineProperty(T7Object.prototype, 'lastIndex', {
        get: function() {
          if (this._m_lastIndex !== undefined)
            return this._m_lastIndex;
          this._m_lastIndex = (this.typeCode == TorchT7.TypeCode.LUA_FUNCTION ? this.luaFunction.lastIndex : ( ((this.typeCode == TorchT7.TypeCode.TABLE) || (this.typeCode == TorchT7.TypeCode.TORCH) || (this.typeCode == TorchT7.TypeCode.RECUR_FUNCTION) || (this.typeCode == TorchT7.TypeCode.LEGACY_RECUR_FUNCTION))  ? this.indexed.lastIndex : this.maxIndex));
          return this._m_lastIndex;
        }
      });

      /**
       * A Lua number, always a double.
       * @see spec/t7.md#t7-number
       */

      /**
       * 1 is true; torch reads anything else as false, and writes only 0 or 1.
       * @see spec/t7.md#t7-boolean
       */

      /**
       * @see spec/t7.md#t7-string
       */

      /**
       * Type 6, the oldest function encoding, has no reference index.
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
     * A Lua table, an int32 count of key/value pairs and the pairs (in the writer's `pairs` order).
     * @see spec/t7.md#t7-table
     */

    var TableBody = Stream.TableBody = (function() {
      function TableBody(_io, _parent, _root, _is_le, longSize, index) {
        this._io = _io;
        this._parent = _parent;
        this._root = _root;
        this._is_le = _is_le;
        this.longSize = longSize;
        this.index = index;

        this._read();
      }
      TableBody.prototype._read = function() {

        if (this._is_le === true) {
          this._readLE();
        } else if (this._is_le === false) {
          this._readBE();
        } else {
          throw new KaitaiStream.UndecidedEndiannessError();
        }
      }
      TableBody.prototype._readLE = function() {
        this.numPairs = this._io.readS4le();
        if (!(this.numPairs >= 0)) {
          throw new KaitaiStream.ValidationLessThanError(0, this.numPairs, this._io, "/types/stream/types/table_body/seq/0");
        }
        this.pairs = [];
        for (var i = 0; i < this.numPairs; i++) {
          this.pairs.push(new KeyValue(this._io, this, this._root, this._is_le, this.longSize, (i == 0 ? this.index : this.pairs[i - 1].lastIndex)));
        }
      }
      TableBody.prototype._readBE = function() {
        this.numPairs = this._io.readS4be();
        if (!(this.numPairs >= 0)) {
          throw new KaitaiStream.ValidationLessThanError(0, this.numPairs, this._io, "/types/stream/types/table_body/seq/0");
        }
        this.pairs = [];
        for (var i = 0; i < this.numPairs; i++) {
          this.pairs.push(new KeyValue(this._io, this, this._root, this._is_le, this.longSize, (i == 0 ? this.index : this.pairs[i - 1].lastIndex)));
        }
      }
      Object.defineProperty(TableBody.prototype, 'lastIndex', {
        get: function() {
          if (this._m_lastIndex !== undefined)
            return this._m_lastIndex;
          this._m_lastIndex = (this.numPairs == 0 ? this.index : this.pairs[this.pairs.length - 1].lastIndex);
          return this._m_lastIndex;
        }
      });

      /**
       * The table's own reference index.
       */

      return TableBody;
    })();

    /**
     * tds.Hash payload (tds hash.lua __write): a long count, then key and value objects.
     * @see spec/t7.md#t7-tds
     */

    var TdsHash = Stream.TdsHash = (function() {
      function TdsHash(_io, _parent, _root, _is_le, longSize, index) {
        this._io = _io;
        this._parent = _parent;
        this._root = _root;
        this._is_le = _is_le;
        this.longSize = longSize;
        this.index = index;

        this._read();
      }
      TdsHash.prototype._read = function() {

        if (this._is_le === true) {
          this._readLE();
        } else if (this._is_le === false) {
          this._readBE();
        } else {
          throw new KaitaiStream.UndecidedEndiannessError();
        }
      }
      TdsHash.prototype._readLE = function() {
        this.numPairs = new CLong(this._io, this, this._root, this._is_le, this.longSize);
        var _ = this.numPairs;
        if (!(_.value >= 0)) {
          throw new KaitaiStream.ValidationExprError(this.numPairs, this._io, "/types/stream/types/tds_hash/seq/0");
        }
        this.pairs = [];
        for (var i = 0; i < this.numPairs.value; i++) {
          this.pairs.push(new KeyValue(this._io, this, this._root, this._is_le, this.longSize, (i == 0 ? this.index : this.pairs[i - 1].lastIndex)));
        }
      }
      TdsHash.prototype._readBE = function() {
        this.numPairs = new CLong(this._io, this, this._root, this._is_le, this.longSize);
        var _ = this.numPairs;
        if (!(_.value >= 0)) {
          throw new KaitaiStream.ValidationExprError(this.numPairs, this._io, "/types/stream/types/tds_hash/seq/0");
        }
        this.pairs = [];
        for (var i = 0; i < this.numPairs.value; i++) {
          this.pairs.push(new KeyValue(this._io, this, this._root, this._is_le, this.longSize, (i == 0 ? this.index : this.pairs[i - 1].lastIndex)));
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
     * tds.Vec payload (tds vec.lua __write): a long count, then the element objects in order.
     * @see spec/t7.md#t7-tds
     */

    var TdsVec = Stream.TdsVec = (function() {
      function TdsVec(_io, _parent, _root, _is_le, longSize, index) {
        this._io = _io;
        this._parent = _parent;
        this._root = _root;
        this._is_le = _is_le;
        this.longSize = longSize;
        this.index = index;

        this._read();
      }
      TdsVec.prototype._read = function() {

        if (this._is_le === true) {
          this._readLE();
        } else if (this._is_le === false) {
          this._readBE();
        } else {
          throw new KaitaiStream.UndecidedEndiannessError();
        }
      }
      TdsVec.prototype._readLE = function() {
        this.numItems = new CLong(this._io, this, this._root, this._is_le, this.longSize);
        var _ = this.numItems;
        if (!(_.value >= 0)) {
          throw new KaitaiStream.ValidationExprError(this.numItems, this._io, "/types/stream/types/tds_vec/seq/0");
        }
        this.items = [];
        for (var i = 0; i < this.numItems.value; i++) {
          this.items.push(new T7Object(this._io, this, this._root, this._is_le, this.longSize, (i == 0 ? this.index : this.items[i - 1].lastIndex)));
        }
      }
      TdsVec.prototype._readBE = function() {
        this.numItems = new CLong(this._io, this, this._root, this._is_le, this.longSize);
        var _ = this.numItems;
        if (!(_.value >= 0)) {
          throw new KaitaiStream.ValidationExprError(this.numItems, this._io, "/types/stream/types/tds_vec/seq/0");
        }
        this.items = [];
        for (var i = 0; i < this.numItems.value; i++) {
          this.items.push(new T7Object(this._io, this, this._root, this._is_le, this.longSize, (i == 0 ? this.index : this.items[i - 1].lastIndex)));
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
     * torch.*Tensor's payload (Tensor.c write): the number of dimensions, the sizes and strides as
     * longs, the 1-based storage offset as a long, then the storage as one object (a Storage
     * torch object, a back-reference to one, or nil for a tensor without storage).
     * @see spec/t7.md#t7-tensor
     */

    var Tensor = Stream.Tensor = (function() {
      function Tensor(_io, _parent, _root, _is_le, longSize, index) {
        this._io = _io;
        this._parent = _parent;
        this._root = _root;
        this._is_le = _is_le;
        this.longSize = longSize;
        this.index = index;

        this._read();
      }
      Tensor.prototype._read = function() {

        if (this._is_le === true) {
          this._readLE();
        } else if (this._is_le === false) {
          this._readBE();
        } else {
          throw new KaitaiStream.UndecidedEndiannessError();
        }
      }
      Tensor.prototype._readLE = function() {
        this.numDims = this._io.readS4le();
        if (!(this.numDims >= 0)) {
          throw new KaitaiStream.ValidationLessThanError(0, this.numDims, this._io, "/types/stream/types/tensor/seq/0");
        }
        this.sizes = [];
        for (var i = 0; i < this.numDims; i++) {
          this.sizes.push(new CLong(this._io, this, this._root, this._is_le, this.longSize));
        }
        this.strides = [];
        for (var i = 0; i < this.numDims; i++) {
          this.strides.push(new CLong(this._io, this, this._root, this._is_le, this.longSize));
        }
        this.storageOffset = new CLong(this._io, this, this._root, this._is_le, this.longSize);
        this.storage = new T7Object(this._io, this, this._root, this._is_le, this.longSize, this.index);
      }
      Tensor.prototype._readBE = function() {
        this.numDims = this._io.readS4be();
        if (!(this.numDims >= 0)) {
          throw new KaitaiStream.ValidationLessThanError(0, this.numDims, this._io, "/types/stream/types/tensor/seq/0");
        }
        this.sizes = [];
        for (var i = 0; i < this.numDims; i++) {
          this.sizes.push(new CLong(this._io, this, this._root, this._is_le, this.longSize));
        }
        this.strides = [];
        for (var i = 0; i < this.numDims; i++) {
          this.strides.push(new CLong(this._io, this, this._root, this._is_le, this.longSize));
        }
        this.storageOffset = new CLong(this._io, this, this._root, this._is_le, this.longSize);
        this.storage = new T7Object(this._io, this, this._root, this._is_le, this.longSize, this.index);
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
       * 1-based, as Lua counts; the element offset is this minus one.
       * @see spec/t7.md#t7-tensor-offset
       */

      return Tensor;
    })();

    /**
     * A torch class instance: "V <version>" and the class name (or, in files older than versioning,
     * only the class name), then the class's payload.
     * @see spec/t7.md#t7-torch-object
     */

    var TorchObject = Stream.TorchObject = (function() {
      function TorchObject(_io, _parent, _root, _is_le, longSize, index) {
        this._io = _io;
        this._parent = _parent;
        this._root = _root;
        this._is_le = _is_le;
        this.longSize = longSize;
        this.index = index;

        this._read();
      }
      TorchObject.prototype._read = function() {

        if (this._is_le === true) {
          this._readLE();
        } else if (this._is_le === false) {
          this._readBE();
        } else {
          throw new KaitaiStream.UndecidedEndiannessError();
        }
      }
      TorchObject.prototype._readLE = function() {
        this.versionOrClass = new AsciiString(this._io, this, this._root, this._is_le);
        if (this.hasVersion) {
          this.classAfterVersion = new AsciiString(this._io, this, this._root, this._is_le);
        }
        switch (this.className) {
        case "tds.Hash":
          this.payload = new TdsHash(this._io, this, this._root, this._is_le, this.longSize, this.index);
          break;
        case "tds.Vec":
          this.payload = new TdsVec(this._io, this, this._root, this._is_le, this.longSize, this.index);
          break;
        case "torch.ByteStorage":
          this.payload = new Storage(this._io, this, this._root, this._is_le, this.longSize, 1);
          break;
        case "torch.ByteTensor":
          this.payload = new Tensor(this._io, this, this._root, this._is_le, this.longSize, this.index);
          break;
        case "torch.CharStorage":
          this.payload = new Storage(this._io, this, this._root, this._is_le, this.longSize, 1);
          break;
        case "torch.CharTensor":
          this.payload = new Tensor(this._io, this, this._root, this._is_le, this.longSize, this.index);
          break;
        case "torch.CudaByteStorage":
          this.payload = new Storage(this._io, this, this._root, this._is_le, this.longSize, 1);
          break;
        case "torch.CudaByteTensor":
          this.payload = new Tensor(this._io, this, this._root, this._is_le, this.longSize, this.index);
          break;
        case "torch.CudaCharStorage":
          this.payload = new Storage(this._io, this, this._root, this._is_le, this.longSize, 1);
          break;
        case "torch.CudaCharTensor":
          this.payload = new Tensor(this._io, this, this._root, this._is_le, this.longSize, this.index);
          break;
        case "torch.CudaDoubleStorage":
          this.payload = new Storage(this._io, this, this._root, this._is_le, this.longSize, 8);
          break;
        case "torch.CudaDoubleTensor":
          this.payload = new Tensor(this._io, this, this._root, this._is_le, this.longSize, this.index);
          break;
        case "torch.CudaHalfStorage":
          this.payload = new Storage(this._io, this, this._root, this._is_le, this.longSize, 2);
          break;
        case "torch.CudaHalfTensor":
          this.payload = new Tensor(this._io, this, this._root, this._is_le, this.longSize, this.index);
          break;
        case "torch.CudaIntStorage":
          this.payload = new Storage(this._io, this, this._root, this._is_le, this.longSize, 4);
          break;
        case "torch.CudaIntTensor":
          this.payload = new Tensor(this._io, this, this._root, this._is_le, this.longSize, this.index);
          break;
        case "torch.CudaLongStorage":
          this.payload = new Storage(this._io, this, this._root, this._is_le, this.longSize, this.longSize);
          break;
        case "torch.CudaLongTensor":
          this.payload = new Tensor(this._io, this, this._root, this._is_le, this.longSize, this.index);
          break;
        case "torch.CudaShortStorage":
          this.payload = new Storage(this._io, this, this._root, this._is_le, this.longSize, 2);
          break;
        case "torch.CudaShortTensor":
          this.payload = new Tensor(this._io, this, this._root, this._is_le, this.longSize, this.index);
          break;
        case "torch.CudaStorage":
          this.payload = new Storage(this._io, this, this._root, this._is_le, this.longSize, 4);
          break;
        case "torch.CudaTensor":
          this.payload = new Tensor(this._io, this, this._root, this._is_le, this.longSize, this.index);
          break;
        case "torch.DoubleStorage":
          this.payload = new Storage(this._io, this, this._root, this._is_le, this.longSize, 8);
          break;
        case "torch.DoubleTensor":
          this.payload = new Tensor(this._io, this, this._root, this._is_le, this.longSize, this.index);
          break;
        case "torch.FloatStorage":
          this.payload = new Storage(this._io, this, this._root, this._is_le, this.longSize, 4);
          break;
        case "torch.FloatTensor":
          this.payload = new Tensor(this._io, this, this._root, this._is_le, this.longSize, this.index);
          break;
        case "torch.HalfStorage":
          this.payload = new Storage(this._io, this, this._root, this._is_le, this.longSize, 2);
          break;
        case "torch.HalfTensor":
          this.payload = new Tensor(this._io, this, this._root, this._is_le, this.longSize, this.index);
          break;
        case "torch.IntStorage":
          this.payload = new Storage(this._io, this, this._root, this._is_le, this.longSize, 4);
          break;
        case "torch.IntTensor":
          this.payload = new Tensor(this._io, this, this._root, this._is_le, this.longSize, this.index);
          break;
        case "torch.LongStorage":
          this.payload = new Storage(this._io, this, this._root, this._is_le, this.longSize, this.longSize);
          break;
        case "torch.LongTensor":
          this.payload = new Tensor(this._io, this, this._root, this._is_le, this.longSize, this.index);
          break;
        case "torch.ShortStorage":
          this.payload = new Storage(this._io, this, this._root, this._is_le, this.longSize, 2);
          break;
        case "torch.ShortTensor":
          this.payload = new Tensor(this._io, this, this._root, this._is_le, this.longSize, this.index);
          break;
        default:
          this.payload = new T7Object(this._io, this, this._root, this._is_le, this.longSize, this.index);
          break;
        }
      }
      TorchObject.prototype._readBE = function() {
        this.versionOrClass = new AsciiString(this._io, this, this._root, this._is_le);
        if (this.hasVersion) {
          this.classAfterVersion = new AsciiString(this._io, this, this._root, this._is_le);
        }
        switch (this.className) {
        case "tds.Hash":
          this.payload = new TdsHash(this._io, this, this._root, this._is_le, this.longSize, this.index);
          break;
        case "tds.Vec":
          this.payload = new TdsVec(this._io, this, this._root, this._is_le, this.longSize, this.index);
          break;
        case "torch.ByteStorage":
          this.payload = new Storage(this._io, this, this._root, this._is_le, this.longSize, 1);
          break;
        case "torch.ByteTensor":
          this.payload = new Tensor(this._io, this, this._root, this._is_le, this.longSize, this.index);
          break;
        case "torch.CharStorage":
          this.payload = new Storage(this._io, this, this._root, this._is_le, this.longSize, 1);
          break;
        case "torch.CharTensor":
          this.payload = new Tensor(this._io, this, this._root, this._is_le, this.longSize, this.index);
          break;
        case "torch.CudaByteStorage":
          this.payload = new Storage(this._io, this, this._root, this._is_le, this.longSize, 1);
          break;
        case "torch.CudaByteTensor":
          this.payload = new Tensor(this._io, this, this._root, this._is_le, this.longSize, this.index);
          break;
        case "torch.CudaCharStorage":
          this.payload = new Storage(this._io, this, this._root, this._is_le, this.longSize, 1);
          break;
        case "torch.CudaCharTensor":
          this.payload = new Tensor(this._io, this, this._root, this._is_le, this.longSize, this.index);
          break;
        case "torch.CudaDoubleStorage":
          this.payload = new Storage(this._io, this, this._root, this._is_le, this.longSize, 8);
          break;
        case "torch.CudaDoubleTensor":
          this.payload = new Tensor(this._io, this, this._root, this._is_le, this.longSize, this.index);
          break;
        case "torch.CudaHalfStorage":
          this.payload = new Storage(this._io, this, this._root, this._is_le, this.longSize, 2);
          break;
        case "torch.CudaHalfTensor":
          this.payload = new Tensor(this._io, this, this._root, this._is_le, this.longSize, this.index);
          break;
        case "torch.CudaIntStorage":
          this.payload = new Storage(this._io, this, this._root, this._is_le, this.longSize, 4);
          break;
        case "torch.CudaIntTensor":
          this.payload = new Tensor(this._io, this, this._root, this._is_le, this.longSize, this.index);
          break;
        case "torch.CudaLongStorage":
          this.payload = new Storage(this._io, this, this._root, this._is_le, this.longSize, this.longSize);
          break;
        case "torch.CudaLongTensor":
          this.payload = new Tensor(this._io, this, this._root, this._is_le, this.longSize, this.index);
          break;
        case "torch.CudaShortStorage":
          this.payload = new Storage(this._io, this, this._root, this._is_le, this.longSize, 2);
          break;
        case "torch.CudaShortTensor":
          this.payload = new Tensor(this._io, this, this._root, this._is_le, this.longSize, this.index);
          break;
        case "torch.CudaStorage":
          this.payload = new Storage(this._io, this, this._root, this._is_le, this.longSize, 4);
          break;
        case "torch.CudaTensor":
          this.payload = new Tensor(this._io, this, this._root, this._is_le, this.longSize, this.index);
          break;
        case "torch.DoubleStorage":
          this.payload = new Storage(this._io, this, this._root, this._is_le, this.longSize, 8);
          break;
        case "torch.DoubleTensor":
          this.payload = new Tensor(this._io, this, this._root, this._is_le, this.longSize, this.index);
          break;
        case "torch.FloatStorage":
          this.payload = new Storage(this._io, this, this._root, this._is_le, this.longSize, 4);
          break;
        case "torch.FloatTensor":
          this.payload = new Tensor(this._io, this, this._root, this._is_le, this.longSize, this.index);
          break;
        case "torch.HalfStorage":
          this.payload = new Storage(this._io, this, this._root, this._is_le, this.longSize, 2);
          break;
        case "torch.HalfTensor":
          this.payload = new Tensor(this._io, this, this._root, this._is_le, this.longSize, this.index);
          break;
        case "torch.IntStorage":
          this.payload = new Storage(this._io, this, this._root, this._is_le, this.longSize, 4);
          break;
        case "torch.IntTensor":
          this.payload = new Tensor(this._io, this, this._root, this._is_le, this.longSize, this.index);
          break;
        case "torch.LongStorage":
          this.payload = new Storage(this._io, this, this._root, this._is_le, this.longSize, this.longSize);
          break;
        case "torch.LongTensor":
          this.payload = new Tensor(this._io, this, this._root, this._is_le, this.longSize, this.index);
          break;
        case "torch.ShortStorage":
          this.payload = new Storage(this._io, this, this._root, this._is_le, this.longSize, 2);
          break;
        case "torch.ShortTensor":
          this.payload = new Tensor(this._io, this, this._root, this._is_le, this.longSize, this.index);
          break;
        default:
          this.payload = new T7Object(this._io, this, this._root, this._is_le, this.longSize, this.index);
          break;
        }
      }

      /**
       * The torch class name, e.g. torch.FloatTensor or nn.Linear.
       */
      Object.defineProperty(TorchObject.prototype, 'className', {
        get: function() {
          if (this._m_className !== undefined)
            return this._m_className;
          this._m_className = (this.hasVersion ? this.classAfterVersion.value : this.versionOrClass.value);
          return this._m_className;
        }
      });

      /**
       * False in files written before torch7 versioned classes (the version is then 0).
       * @see spec/t7.md#t7-class-version
       */
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
      Object.defineProperty(TorchObject.prototype, 'isTds', {
        get: function() {
          if (this._m_isTds !== undefined)
            return this._m_isTds;
          this._m_isTds =  ((this.className == "tds.Hash") || (this.className == "tds.Vec")) ;
          return this._m_isTds;
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

      /**
       * The text after "V " ("1", "1.0" under Lua 5.3), empty when the file has none.
       * @see spec/t7.md#t7-class-version
       */
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

      /**
       * Tensor and Storage classes have their own layouts; tds.Hash and tds.Vec too; every other
       * class is one object, normally the table of its fields.
       */

      return TorchObject;
    })();

    /**
     * The top-level objects in file order.
     */

    /**
     * Width of a C long in bytes, 4 or 8.
     */

    /**
     * True for DiskFile:bigEndianEncoding(); every multi-byte scalar is then byte-swapped.
     */

    return Stream;
  })();

  /**
   * The stream read as big-endian with 4-byte longs.
   * @see spec/t7.md#t7-byte-order
   */
  Object.defineProperty(TorchT7.prototype, 'beLong4', {
    get: function() {
      if (this._m_beLong4 !== undefined)
        return this._m_beLong4;
      var _pos = this._io.pos;
      this._io.seek(0);
      this._m_beLong4 = new Stream(this._io, this, this._root, 4, true);
      this._io.seek(_pos);
      return this._m_beLong4;
    }
  });

  /**
   * The stream read as big-endian with 8-byte longs (DiskFile:bigEndianEncoding()).
   * @see spec/t7.md#t7-byte-order
   */
  Object.defineProperty(TorchT7.prototype, 'beLong8', {
    get: function() {
      if (this._m_beLong8 !== undefined)
        return this._m_beLong8;
      var _pos = this._io.pos;
      this._io.seek(0);
      this._m_beLong8 = new Stream(this._io, this, this._root, 8, true);
      this._io.seek(_pos);
      return this._m_beLong8;
    }
  });

  /**
   * The stream read as little-endian with 4-byte longs (32-bit builds, Windows, DiskFile:longSize(4)).
   * @see spec/t7.md#t7-long-size
   */
  Object.defineProperty(TorchT7.prototype, 'leLong4', {
    get: function() {
      if (this._m_leLong4 !== undefined)
        return this._m_leLong4;
      var _pos = this._io.pos;
      this._io.seek(0);
      this._m_leLong4 = new Stream(this._io, this, this._root, 4, false);
      this._io.seek(_pos);
      return this._m_leLong4;
    }
  });

  /**
   * The stream read as little-endian with 8-byte longs (torch.save on 64-bit Linux/macOS).
   * @see spec/t7.md#t7-encodings
   */
  Object.defineProperty(TorchT7.prototype, 'leLong8', {
    get: function() {
      if (this._m_leLong8 !== undefined)
        return this._m_leLong8;
      var _pos = this._io.pos;
      this._io.seek(0);
      this._m_leLong8 = new Stream(this._io, this, this._root, 8, false);
      this._io.seek(_pos);
      return this._m_leLong8;
    }
  });

  return TorchT7;
})();
TorchT7_.TorchT7 = TorchT7;
});
