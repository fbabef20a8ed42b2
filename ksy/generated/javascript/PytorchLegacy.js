// This is a generated file! Please edit source .ksy file and use kaitai-struct-compiler to rebuild

(function (root, factory) {
  if (typeof define === 'function' && define.amd) {
    define(['exports', 'kaitai-struct/KaitaiStream', './PythonPickle'], factory);
  } else if (typeof exports === 'object' && exports !== null && typeof exports.nodeType !== 'number') {
    factory(exports, require('kaitai-struct/KaitaiStream'), require('./PythonPickle'));
  } else {
    factory(root.PytorchLegacy || (root.PytorchLegacy = {}), root.KaitaiStream, root.PythonPickle || (root.PythonPickle = {}));
  }
})(typeof self !== 'undefined' ? self : this, function (PytorchLegacy_, KaitaiStream, PythonPickle_) {
/**
 * The legacy format is five pickles back to back, then the raw storages:
 *   magic number   the int 0x1950a86a20f9469cfc6c (LONG1 in protocol 2 and above, a LONG text line
 *                  in protocols 0 and 1)
 *   protocol       the int 1001
 *   sys_info       {protocol_version, little_endian, type_sizes: {short, int, long}}
 *   object         the saved object; every storage is a persistent id
 *                  ('storage', <class>, <key>, <location>, <numel>, <view metadata>)
 *   storage keys   the storages' keys (strings), in the order their data follows
 * then, for each key, the storage's int64 element count and its raw elements, in the writer's byte
 * order (sys_info's little_endian; every known file is little-endian).
 * 
 * What Kaitai cannot express here: how many storages follow and how wide their elements are.  The
 * count is the length of the list in the keys pickle and each width comes from the storage class in
 * the object pickle's persistent id for that key; both need the pickle's stack machine (what a list
 * or a persistent id is), which a declarative grammar does not run.  So the grammar reads the five
 * pickles, records where the storages start (`storages.ofs_start`) and offers `storage(element_size)`
 * for a reader that knows the widths to parse each one (the Kaitai-based reader does exactly that).
 * @see spec/pt-legacy.md#pt-legacy-magic
 */

var PytorchLegacy = (function() {
  function PytorchLegacy(_io, _parent, _root) {
    this._io = _io;
    this._parent = _parent;
    this._root = _root || this;

    this._read();
  }
  PytorchLegacy.prototype._read = function() {
    this.magicNumber = new PythonPickle_.PythonPickle(this._io, null, null);
    var _ = this.magicNumber;
    if (!( ((_.ops.length >= 2) && ( (( ((_.ops[_.ops.length - 2].code == PythonPickle_.PythonPickle.Opcode.LONG1) && (_.ops[_.ops.length - 2].arg.value.length >= 10) && (_.ops[_.ops.length - 2].arg.value[0] == 108) && (_.ops[_.ops.length - 2].arg.value[1] == 252) && (_.ops[_.ops.length - 2].arg.value[2] == 156) && (_.ops[_.ops.length - 2].arg.value[3] == 70) && (_.ops[_.ops.length - 2].arg.value[4] == 249) && (_.ops[_.ops.length - 2].arg.value[5] == 32) && (_.ops[_.ops.length - 2].arg.value[6] == 106) && (_.ops[_.ops.length - 2].arg.value[7] == 168) && (_.ops[_.ops.length - 2].arg.value[8] == 80) && (_.ops[_.ops.length - 2].arg.value[9] == 25)) ) || ( ((_.ops[_.ops.length - 2].code == PythonPickle_.PythonPickle.Opcode.LONG4) && (_.ops[_.ops.length - 2].arg.value.length >= 10) && (_.ops[_.ops.length - 2].arg.value[0] == 108) && (_.ops[_.ops.length - 2].arg.value[1] == 252) && (_.ops[_.ops.length - 2].arg.value[2] == 156) && (_.ops[_.ops.length - 2].arg.value[3] == 70) && (_.ops[_.ops.length - 2].arg.value[4] == 249) && (_.ops[_.ops.length - 2].arg.value[5] == 32) && (_.ops[_.ops.length - 2].arg.value[6] == 106) && (_.ops[_.ops.length - 2].arg.value[7] == 168) && (_.ops[_.ops.length - 2].arg.value[8] == 80) && (_.ops[_.ops.length - 2].arg.value[9] == 25)) ) || ( ((_.ops[_.ops.length - 2].code == PythonPickle_.PythonPickle.Opcode.LONG) && (_.ops[_.ops.length - 2].arg.value == "119547037146038801333356L")) )) )) )) {
      throw new KaitaiStream.ValidationExprError(this.magicNumber, this._io, "/seq/0");
    }
    this.protocolVersion = new PythonPickle_.PythonPickle(this._io, null, null);
    this.sysInfo = new PythonPickle_.PythonPickle(this._io, null, null);
    this.object = new PythonPickle_.PythonPickle(this._io, null, null);
    this.storageKeys = new PythonPickle_.PythonPickle(this._io, null, null);
    this.storages = new StorageArea(this._io, this, this._root, this._io.pos);
  }

  /**
   * One storage: an int64 element count and the raw elements, element_size bytes each, in the
   * writer's byte order.  element_size comes from the storage class of the persistent id whose key
   * is this storage's (Float 4, Double 8, Half 2, BFloat16 2, Long 8, Int 4, Short 2, Char 1,
   * Byte 1, Bool 1, ComplexFloat 8, ComplexDouble 16, QInt8 1, QUInt8 1, QInt32 4).
   * @see spec/pt-legacy.md#pt-legacy-storages
   */

  var Storage = PytorchLegacy.Storage = (function() {
    function Storage(_io, _parent, _root, elementSize) {
      this._io = _io;
      this._parent = _parent;
      this._root = _root;
      this.elementSize = elementSize;

      this._read();
    }
    Storage.prototype._read = function() {
      this.numElements = this._io.readS8le();
      if (!(this.numElements >= 0)) {
        throw new KaitaiStream.ValidationLessThanError(0, this.numElements, this._io, "/types/storage/seq/0");
      }
      this.data = this._io.readBytes(this.numElements * this.elementSize);
    }

    return Storage;
  })();

  /**
   * The storages after the last pickle.  Nothing is read here: `ofs_start` is where the first
   * storage's element count sits, and `first_num_elements` peeks at it.
   * @see spec/pt-legacy.md#pt-legacy-storages
   */

  var StorageArea = PytorchLegacy.StorageArea = (function() {
    function StorageArea(_io, _parent, _root, ofsStart) {
      this._io = _io;
      this._parent = _parent;
      this._root = _root;
      this.ofsStart = ofsStart;

      this._read();
    }
    StorageArea.prototype._read = function() {
    }

    /**
     * The first storage's element count.
     */
    Object.defineProperty(StorageArea.prototype, 'firstNumElements', {
      get: function() {
        if (this._m_firstNumElements !== undefined)
          return this._m_firstNumElements;
        if (this.ofsStart + 8 <= this._io.size) {
          var _pos = this._io.pos;
          this._io.seek(this.ofsStart);
          this._m_firstNumElements = this._io.readS8le();
          this._io.seek(_pos);
        }
        return this._m_firstNumElements;
      }
    });

    /**
     * False when the file saved no storage.
     */
    Object.defineProperty(StorageArea.prototype, 'hasStorages', {
      get: function() {
        if (this._m_hasStorages !== undefined)
          return this._m_hasStorages;
        this._m_hasStorages = this.ofsStart < this._io.size;
        return this._m_hasStorages;
      }
    });

    /**
     * The offset of the first storage in the file.
     */

    return StorageArea;
  })();

  /**
   * The magic number pickle: the int pushed just before STOP by LONG1 (torch writes the ten bytes
   * 6c fc 9c 46 f9 20 6a a8 50 19), LONG4, or LONG ("119547037146038801333356L").  The same int may
   * be written with padding (zero bytes after the ten), which Python's unpickler and torch read as
   * the same number: the grammar checks the ten bytes, the reader the value.
   */

  /**
   * The int 1001.
   * @see spec/pt-legacy.md#pt-legacy-protocol-version
   */

  /**
   * The writer's byte order and C type sizes.
   * @see spec/pt-legacy.md#pt-legacy-sys-info
   */

  /**
   * The saved object, with storages as persistent ids.
   * @see spec/pt-legacy.md#pt-legacy-object
   */

  /**
   * The list of storage keys, in the order the storages follow.
   * @see spec/pt-legacy.md#pt-legacy-storage-keys
   */

  /**
   * Where the storages start; their number and widths come from the pickles.
   * @see spec/pt-legacy.md#pt-legacy-storages
   */

  return PytorchLegacy;
})();
PytorchLegacy_.PytorchLegacy = PytorchLegacy;
});
