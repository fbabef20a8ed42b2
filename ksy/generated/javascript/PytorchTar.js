// This is a generated file! Please edit source .ksy file and use kaitai-struct-compiler to rebuild

(function (root, factory) {
  if (typeof define === 'function' && define.amd) {
    define(['exports', 'kaitai-struct/KaitaiStream', './PythonPickle'], factory);
  } else if (typeof exports === 'object' && exports !== null && typeof exports.nodeType !== 'number') {
    factory(exports, require('kaitai-struct/KaitaiStream'), require('./PythonPickle'));
  } else {
    factory(root.PytorchTar || (root.PytorchTar = {}), root.KaitaiStream, root.PythonPickle || (root.PythonPickle = {}));
  }
})(typeof self !== 'undefined' ? self : this, function (PytorchTar_, KaitaiStream, PythonPickle_) {
/**
 * The first PyTorch checkpoints (0.1.x, until early 2017) were POSIX tar archives (PAX format, as
 * Python's tarfile writes them) with four members, read by torch.load's tar branch to this day:
 *   sys_info  one pickle: {protocol_version: 1000, little_endian, type_sizes}
 *   pickle    the object pickle; tensors and storages are persistent ids (their numeric keys)
 *   tensors   a count pickle, then per tensor a record pickle (key, storage key, class) and the
 *             tensor's geometry: int32 ndim, 4 more bytes (the old writer wrote ndim as 8 bytes whose
 *             high half is garbage), int64 sizes[ndim], int64 strides[ndim], int64 storage offset
 *   storages  a count pickle, then per storage a record pickle (key, location, class), an int64
 *             element count and the raw elements; then a pickle listing storage views
 *             (view key, root key, offset, numel)
 * Every integer outside the pickles is little-endian (sys_info says so; no big-endian file is known).
 * 
 * What Kaitai expresses: the tar blocks, PAX headers, each member's body by name, and all of the
 * inner layouts above, including each storage's element width, which follows from the storage class
 * named in the record pickle.  Finding that class needs the position of the GLOBAL opcode in the
 * record; torch 0.1.x's pickler (protocol 2) puts it among the first opcodes, and the grammar looks
 * at opcodes 3 to 6 (`storage_record`), which covers the keys it writes (LONG1 or BININT*).  The
 * member names are taken from the ustar header (torch's names are short; a PAX `path` would be
 * needed only for names over 100 bytes).  The count pickles are read by a narrow grammar for the
 * protocol 2 integer pickle torch wrote (`count_pickle`).
 * @see spec/pt-tar.md#pt-tar-members
 */

var PytorchTar = (function() {
  function PytorchTar(_io, _parent, _root) {
    this._io = _io;
    this._parent = _parent;
    this._root = _root || this;

    this._read();
  }
  PytorchTar.prototype._read = function() {
    this.members = [];
    var i = 0;
    do {
      var _ = new Member(this._io, this, this._root);
      this.members.push(_);
      i++;
    } while (!(_.isEnd));
  }

  /**
   * The integer pickle torch wrote before the tensor and storage records: PROTO 2, one BININT1,
   * BININT2 or BININT opcode, STOP.
   * @see spec/pt-tar.md#pt-tar-tensors
   */

  var CountPickle = PytorchTar.CountPickle = (function() {
    function CountPickle(_io, _parent, _root) {
      this._io = _io;
      this._parent = _parent;
      this._root = _root;

      this._read();
    }
    CountPickle.prototype._read = function() {
      this.proto = this._io.readBytes(2);
      if (!((KaitaiStream.byteArrayCompare(this.proto, new Uint8Array([128, 2])) == 0))) {
        throw new KaitaiStream.ValidationNotEqualError(new Uint8Array([128, 2]), this.proto, this._io, "/types/count_pickle/seq/0");
      }
      this.opcode = this._io.readU1();
      if (!( ((this.opcode == 75) || (this.opcode == 77) || (this.opcode == 74)) )) {
        throw new KaitaiStream.ValidationNotAnyOfError(this.opcode, this._io, "/types/count_pickle/seq/1");
      }
      switch (this.opcode) {
      case 74:
        this.value = this._io.readS4le();
        break;
      case 75:
        this.value = this._io.readU1();
        break;
      case 77:
        this.value = this._io.readU2le();
        break;
      }
      this.stop = this._io.readBytes(1);
      if (!((KaitaiStream.byteArrayCompare(this.stop, new Uint8Array([46])) == 0))) {
        throw new KaitaiStream.ValidationNotEqualError(new Uint8Array([46]), this.stop, this._io, "/types/count_pickle/seq/3");
      }
    }

    return CountPickle;
  })();

  /**
   * A ustar header block (POSIX.1-1988, with PAX extended headers of type 'x').
   * @see spec/pt-tar.md#pt-tar-members
   */

  var Header = PytorchTar.Header = (function() {
    function Header(_io, _parent, _root) {
      this._io = _io;
      this._parent = _parent;
      this._root = _root;

      this._read();
    }
    Header.prototype._read = function() {
      this.name = KaitaiStream.bytesToStr(KaitaiStream.bytesTerminate(this._io.readBytes(100), 0, false), "UTF-8");
      this.mode = this._io.readBytes(8);
      this.uid = this._io.readBytes(8);
      this.gid = this._io.readBytes(8);
      this.sizeOctal = KaitaiStream.bytesToStr(KaitaiStream.bytesTerminate(this._io.readBytes(12), 0, false), "ASCII");
      this.mtime = this._io.readBytes(12);
      this.checksum = this._io.readBytes(8);
      this.typeFlag = this._io.readU1();
      this.linkName = this._io.readBytes(100);
      this.magic = this._io.readBytes(6);
      this.version = this._io.readBytes(2);
      this.userName = this._io.readBytes(32);
      this.groupName = this._io.readBytes(32);
      this.devMajor = this._io.readBytes(8);
      this.devMinor = this._io.readBytes(8);
      this.prefix = this._io.readBytes(155);
      this.reserved = this._io.readBytes(12);
    }
    Object.defineProperty(Header.prototype, 'firstByte', {
      get: function() {
        if (this._m_firstByte !== undefined)
          return this._m_firstByte;
        var _pos = this._io.pos;
        this._io.seek(0);
        this._m_firstByte = this._io.readU1();
        this._io.seek(_pos);
        return this._m_firstByte;
      }
    });

    /**
     * The body size in bytes.
     */
    Object.defineProperty(Header.prototype, 'lenBody', {
      get: function() {
        if (this._m_lenBody !== undefined)
          return this._m_lenBody;
        this._m_lenBody = (this.sizeOctal.length == 0 ? 0 : Number.parseInt(this.sizeOctal, 8));
        return this._m_lenBody;
      }
    });

    /**
     * The body size, octal digits ended by NUL (or space).
     */

    /**
     * '0' (or NUL) a file; 'x' a PAX header for the next member; 'g' a global PAX header.
     */

    /**
     * "ustar\0" (POSIX), or "ustar " (GNU); all zero in the end-of-archive block.
     */

    return Header;
  })();

  /**
   * One 512-byte tar header and its body, padded to a multiple of 512 bytes.
   * @see spec/pt-tar.md#pt-tar-members
   */

  var Member = PytorchTar.Member = (function() {
    function Member(_io, _parent, _root) {
      this._io = _io;
      this._parent = _parent;
      this._root = _root;

      this._read();
    }
    Member.prototype._read = function() {
      this._raw_header = this._io.readBytes(512);
      var _io__raw_header = new KaitaiStream(this._raw_header);
      this.header = new Header(_io__raw_header, this, this._root);
      if (!(this.isEnd)) {
        switch (this.header.name) {
        case "pickle":
          this._raw_body = this._io.readBytes(this.header.lenBody);
          var _io__raw_body = new KaitaiStream(this._raw_body);
          this.body = new PythonPickle_.PythonPickle(_io__raw_body, null, null);
          break;
        case "storages":
          this._raw_body = this._io.readBytes(this.header.lenBody);
          var _io__raw_body = new KaitaiStream(this._raw_body);
          this.body = new StoragesMember(_io__raw_body, this, this._root);
          break;
        case "sys_info":
          this._raw_body = this._io.readBytes(this.header.lenBody);
          var _io__raw_body = new KaitaiStream(this._raw_body);
          this.body = new PythonPickle_.PythonPickle(_io__raw_body, null, null);
          break;
        case "tensors":
          this._raw_body = this._io.readBytes(this.header.lenBody);
          var _io__raw_body = new KaitaiStream(this._raw_body);
          this.body = new TensorsMember(_io__raw_body, this, this._root);
          break;
        default:
          this.body = this._io.readBytes(this.header.lenBody);
          break;
        }
      }
      if (!(this.isEnd)) {
        this.padding = this._io.readBytes(KaitaiStream.mod(512 - KaitaiStream.mod(this.header.lenBody, 512), 512));
      }
    }

    /**
     * An all-zero block ends the archive.
     */
    Object.defineProperty(Member.prototype, 'isEnd', {
      get: function() {
        if (this._m_isEnd !== undefined)
          return this._m_isEnd;
        this._m_isEnd = this.header.firstByte == 0;
        return this._m_isEnd;
      }
    });

    return Member;
  })();

  /**
   * One storage: its (key, location, class) pickle, an int64 element count and the raw elements,
   * whose width follows from the class named by the record's GLOBAL opcode.
   * @see spec/pt-tar.md#pt-tar-storages
   */

  var StorageRecord = PytorchTar.StorageRecord = (function() {
    function StorageRecord(_io, _parent, _root) {
      this._io = _io;
      this._parent = _parent;
      this._root = _root;

      this._read();
    }
    StorageRecord.prototype._read = function() {
      this.record = new PythonPickle_.PythonPickle(this._io, null, null);
      this.numElements = this._io.readS8le();
      var _ = this.numElements;
      if (!( ((_ >= 0) && ( ((_ == 0) || (this.elementSize > 0)) )) )) {
        throw new KaitaiStream.ValidationExprError(this.numElements, this._io, "/types/storage_record/seq/1");
      }
      this.data = this._io.readBytes(this.numElements * this.elementSize);
    }

    /**
     * Bytes per element for the class (0.1.x had these eight); 0 for anything else.
     */
    Object.defineProperty(StorageRecord.prototype, 'elementSize', {
      get: function() {
        if (this._m_elementSize !== undefined)
          return this._m_elementSize;
        this._m_elementSize = (this.storageClass == "DoubleStorage" ? 8 : (this.storageClass == "FloatStorage" ? 4 : (this.storageClass == "HalfStorage" ? 2 : (this.storageClass == "LongStorage" ? 8 : (this.storageClass == "IntStorage" ? 4 : (this.storageClass == "ShortStorage" ? 2 : (this.storageClass == "CharStorage" ? 1 : (this.storageClass == "ByteStorage" ? 1 : 0))))))));
        return this._m_elementSize;
      }
    });

    /**
     * Which opcode of the record is the GLOBAL naming the storage class (-1 if none).
     */
    Object.defineProperty(StorageRecord.prototype, 'globalIndex', {
      get: function() {
        if (this._m_globalIndex !== undefined)
          return this._m_globalIndex;
        this._m_globalIndex = ( ((this.record.ops.length > 3) && (this.record.ops[3].code == PythonPickle_.PythonPickle.Opcode.GLOBAL_OPCODE))  ? 3 : ( ((this.record.ops.length > 4) && (this.record.ops[4].code == PythonPickle_.PythonPickle.Opcode.GLOBAL_OPCODE))  ? 4 : ( ((this.record.ops.length > 5) && (this.record.ops[5].code == PythonPickle_.PythonPickle.Opcode.GLOBAL_OPCODE))  ? 5 : ( ((this.record.ops.length > 6) && (this.record.ops[6].code == PythonPickle_.PythonPickle.Opcode.GLOBAL_OPCODE))  ? 6 : -1))));
        return this._m_globalIndex;
      }
    });

    /**
     * The storage class, e.g. FloatStorage (module torch, or torch.cuda for CUDA storages).
     */
    Object.defineProperty(StorageRecord.prototype, 'storageClass', {
      get: function() {
        if (this._m_storageClass !== undefined)
          return this._m_storageClass;
        this._m_storageClass = (this.globalIndex < 0 ? "" : this.record.ops[this.globalIndex].arg.name);
        return this._m_storageClass;
      }
    });

    /**
     * The element count; a storage of an unknown class is rejected unless it is empty.
     */

    return StorageRecord;
  })();

  /**
   * The storages member, a count, that many storage records and the storage views pickle.
   * @see spec/pt-tar.md#pt-tar-storages
   */

  var StoragesMember = PytorchTar.StoragesMember = (function() {
    function StoragesMember(_io, _parent, _root) {
      this._io = _io;
      this._parent = _parent;
      this._root = _root;

      this._read();
    }
    StoragesMember.prototype._read = function() {
      this.count = new CountPickle(this._io, this, this._root);
      this.storages = [];
      for (var i = 0; i < this.count.value; i++) {
        this.storages.push(new StorageRecord(this._io, this, this._root));
      }
      this.storageViews = new PythonPickle_.PythonPickle(this._io, null, null);
    }

    /**
     * A list of (view key, root key, offset, numel), empty in every known file.
     */

    return StoragesMember;
  })();

  /**
   * One tensor, its (key, storage key, class) pickle and its geometry in elements.
   * @see spec/pt-tar.md#pt-tar-tensors
   */

  var TensorRecord = PytorchTar.TensorRecord = (function() {
    function TensorRecord(_io, _parent, _root) {
      this._io = _io;
      this._parent = _parent;
      this._root = _root;

      this._read();
    }
    TensorRecord.prototype._read = function() {
      this.record = new PythonPickle_.PythonPickle(this._io, null, null);
      this.numDims = this._io.readS4le();
      if (!(this.numDims >= 0)) {
        throw new KaitaiStream.ValidationLessThanError(0, this.numDims, this._io, "/types/tensor_record/seq/1");
      }
      this.numDimsHigh = this._io.readBytes(4);
      this.sizes = [];
      for (var i = 0; i < this.numDims; i++) {
        this.sizes.push(this._io.readS8le());
      }
      this.strides = [];
      for (var i = 0; i < this.numDims; i++) {
        this.strides.push(this._io.readS8le());
      }
      this.storageOffset = this._io.readS8le();
    }

    /**
     * (key, storage key, tensor class), e.g. (9358416, 9358672, torch.FloatTensor).
     */

    /**
     * The high half of the old 8-byte ndim; garbage, ignored by every loader.
     */

    /**
     * 0-based, in elements.
     */

    return TensorRecord;
  })();

  /**
   * The tensors member, a count and that many tensor records.
   * @see spec/pt-tar.md#pt-tar-tensors
   */

  var TensorsMember = PytorchTar.TensorsMember = (function() {
    function TensorsMember(_io, _parent, _root) {
      this._io = _io;
      this._parent = _parent;
      this._root = _root;

      this._read();
    }
    TensorsMember.prototype._read = function() {
      this.count = new CountPickle(this._io, this, this._root);
      this.tensors = [];
      for (var i = 0; i < this.count.value; i++) {
        this.tensors.push(new TensorRecord(this._io, this, this._root));
      }
    }

    return TensorsMember;
  })();

  /**
   * The tar members, ending with the first all-zero header block.
   */

  return PytorchTar;
})();
PytorchTar_.PytorchTar = PytorchTar;
});
