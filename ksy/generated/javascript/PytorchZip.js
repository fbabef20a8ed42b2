// This is a generated file! Please edit source .ksy file and use kaitai-struct-compiler to rebuild

(function (root, factory) {
  if (typeof define === 'function' && define.amd) {
    define(['exports', 'kaitai-struct/KaitaiStream', './PythonPickle'], factory);
  } else if (typeof exports === 'object' && exports !== null && typeof exports.nodeType !== 'number') {
    factory(exports, require('kaitai-struct/KaitaiStream'), require('./PythonPickle'));
  } else {
    factory(root.PytorchZip || (root.PytorchZip = {}), root.KaitaiStream, root.PythonPickle || (root.PythonPickle = {}));
  }
})(typeof self !== 'undefined' ? self : this, function (PytorchZip_, KaitaiStream, PythonPickle_) {
/**
 * A PyTorch zip checkpoint is a zip archive whose records all sit in one folder (`archive/`, or the
 * file's stem in older writers): data.pkl (the object pickle), data/<key> (one record per storage, raw
 * little-endian elements), byteorder, version or .data/version, .format_version,
 * .storage_alignment, .data/serialization_id; TorchScript archives add code/, constants.pkl and more.
 * 
 * Kaitai needs fixed positions, and a zip is read from its end: a general reader searches backwards
 * for the end-of-central-directory record (EOCD) because a zip comment of up to 65535 bytes may follow
 * it.  PyTorch's writer never writes a comment and always ends the archive with a zip64 end record,
 * a zip64 locator and the EOCD, so this grammar takes the EOCD at `_io.size - 22`, the locator at
 * `_io.size - 42`, and validates their signatures (and the empty comment): a file that does not end
 * that way is rejected, not searched.  Every torch-written file seen (torch 1.5 to 2.13, and the wild
 * corpus) ends that way.
 * 
 * Everything is a lazy `pos` instance: parsing the structure reads the three end records, the central
 * directory and, when asked, each record's 30-byte local header, name and padding; a record's body is
 * read only when `body` (or `pickle` for *.pkl records) is accessed.  `ofs_body` gives where a reader
 * maps a storage without reading it.
 * 
 * What torch writes and the grammar accepts (spec/pt-zip.md#pt-zip-container): method 0 (stored; old
 * torch.jit.save archives also deflate code records, method 8, which `is_stored` tells apart);
 * flags 0x0808 (UTF-8 names, sizes in a data descriptor after the body), so the local header's CRC and
 * sizes are zero and the central directory's are the true ones; zero DOS time and date; a local extra
 * field "FB" of "Z" bytes that pads each body to a 64-byte boundary (pt-zip-alignment); zip64 extra
 * fields in the central directory only for values that overflow 32 bits.
 * Not expressed: the record name's folder being the same for all records, names being unique, records
 * not overlapping, the CRC — those are a reader's checks (spec/pt-zip.md#pt-zip-consistency).
 * @see spec/pt-zip.md#pt-zip-container
 */

var PytorchZip = (function() {
  PytorchZip.Compression = Object.freeze({
    STORED: 0,
    DEFLATED: 8,

    0: "STORED",
    8: "DEFLATED",
  });

  function PytorchZip(_io, _parent, _root) {
    this._io = _io;
    this._parent = _parent;
    this._root = _root || this;

    this._read();
  }
  PytorchZip.prototype._read = function() {
  }

  /**
   * The central directory's entries, in the order the writer wrote the records.
   * @see spec/pt-zip.md#pt-zip-records
   */

  var CentralDir = PytorchZip.CentralDir = (function() {
    function CentralDir(_io, _parent, _root, numEntries) {
      this._io = _io;
      this._parent = _parent;
      this._root = _root;
      this.numEntries = numEntries;

      this._read();
    }
    CentralDir.prototype._read = function() {
      this.entries = [];
      for (var i = 0; i < this.numEntries; i++) {
        this.entries.push(new CentralDirEntry(this._io, this, this._root));
      }
    }

    return CentralDir;
  })();

  /**
   * One central directory entry: the record's true CRC and sizes, its name and where its local
   * header starts; `local_file` reads that header (lazily) in the whole file.
   * @see spec/pt-zip.md#pt-zip-records
   */

  var CentralDirEntry = PytorchZip.CentralDirEntry = (function() {
    function CentralDirEntry(_io, _parent, _root) {
      this._io = _io;
      this._parent = _parent;
      this._root = _root;

      this._read();
    }
    CentralDirEntry.prototype._read = function() {
      this.magic = this._io.readBytes(4);
      if (!((KaitaiStream.byteArrayCompare(this.magic, new Uint8Array([80, 75, 1, 2])) == 0))) {
        throw new KaitaiStream.ValidationNotEqualError(new Uint8Array([80, 75, 1, 2]), this.magic, this._io, "/types/central_dir_entry/seq/0");
      }
      this.versionMadeBy = this._io.readU2le();
      this.versionNeeded = this._io.readU2le();
      this.flags = this._io.readU2le();
      this.compressionMethod = this._io.readU2le();
      if (!Object.prototype.hasOwnProperty.call(PytorchZip.Compression, this.compressionMethod)) {
        throw new KaitaiStream.ValidationNotInEnumError(this.compressionMethod, this._io, "/types/central_dir_entry/seq/4");
      }
      this.dosTime = this._io.readU2le();
      this.dosDate = this._io.readU2le();
      this.crc32 = this._io.readU4le();
      this.lenCompressed32 = this._io.readU4le();
      this.lenUncompressed32 = this._io.readU4le();
      this.lenFileName = this._io.readU2le();
      this.lenExtra = this._io.readU2le();
      this.lenComment = this._io.readU2le();
      this.diskStart32 = this._io.readU2le();
      this.internalAttrs = this._io.readU2le();
      this.externalAttrs = this._io.readU4le();
      this.ofsLocalHeader32 = this._io.readU4le();
      this.fileName = KaitaiStream.bytesToStr(this._io.readBytes(this.lenFileName), "UTF-8");
      this._raw_extra = this._io.readBytes(this.lenExtra);
      var _io__raw_extra = new KaitaiStream(this._raw_extra);
      this.extra = new ExtraFields(_io__raw_extra, this, this._root, this.lenUncompressed32 == 4294967295, this.lenCompressed32 == 4294967295, this.ofsLocalHeader32 == 4294967295);
      this.comment = this._io.readBytes(this.lenComment);
    }

    /**
     * Whether the first extra field is the zip64 extended information (miniz writes it first).
     */
    Object.defineProperty(CentralDirEntry.prototype, 'hasZip64', {
      get: function() {
        if (this._m_hasZip64 !== undefined)
          return this._m_hasZip64;
        this._m_hasZip64 =  ((this.extra.fields.length > 0) && (this.extra.fields[0].tag == 1)) ;
        return this._m_hasZip64;
      }
    });

    /**
     * An uncompressed record, as every record of a torch.save checkpoint is.
     * @see spec/pt-zip.md#pt-zip-container
     */
    Object.defineProperty(CentralDirEntry.prototype, 'isStored', {
      get: function() {
        if (this._m_isStored !== undefined)
          return this._m_isStored;
        this._m_isStored =  ((this.compressionMethod == PytorchZip.Compression.STORED) && (this.lenBody == this.lenUncompressed)) ;
        return this._m_isStored;
      }
    });

    /**
     * The record's size in bytes (stored, so compressed and uncompressed sizes are equal).
     */
    Object.defineProperty(CentralDirEntry.prototype, 'lenBody', {
      get: function() {
        if (this._m_lenBody !== undefined)
          return this._m_lenBody;
        this._m_lenBody = ( ((this.lenCompressed32 == 4294967295) && (this.hasZip64))  ? this.extra.fields[0].zip64.lenCompressed : this.lenCompressed32);
        return this._m_lenBody;
      }
    });
    Object.defineProperty(CentralDirEntry.prototype, 'lenUncompressed', {
      get: function() {
        if (this._m_lenUncompressed !== undefined)
          return this._m_lenUncompressed;
        this._m_lenUncompressed = ( ((this.lenUncompressed32 == 4294967295) && (this.hasZip64))  ? this.extra.fields[0].zip64.lenUncompressed : this.lenUncompressed32);
        return this._m_lenUncompressed;
      }
    });

    /**
     * The record's local header and (lazily) its body.
     */
    Object.defineProperty(CentralDirEntry.prototype, 'localFile', {
      get: function() {
        if (this._m_localFile !== undefined)
          return this._m_localFile;
        var io = this._root._io;
        var _pos = io.pos;
        io.seek(this.ofsLocalHeader);
        this._m_localFile = new LocalFile(io, this, this._root, this.ofsLocalHeader, this.lenBody);
        io.seek(_pos);
        return this._m_localFile;
      }
    });
    Object.defineProperty(CentralDirEntry.prototype, 'ofsLocalHeader', {
      get: function() {
        if (this._m_ofsLocalHeader !== undefined)
          return this._m_ofsLocalHeader;
        this._m_ofsLocalHeader = ( ((this.ofsLocalHeader32 == 4294967295) && (this.hasZip64))  ? this.extra.fields[0].zip64.ofsLocalHeader : this.ofsLocalHeader32);
        return this._m_ofsLocalHeader;
      }
    });

    /**
     * torch writes 0x0808 (bit 3, data descriptor; bit 11, UTF-8 name).
     */

    /**
     * torch.save stores records uncompressed (0), so that storages can be mapped; old
     * torch.jit.save archives deflate (8) their code and debug records.
     * @see spec/pt-zip.md#pt-zip-container
     */

    /**
     * Zero in torch-written files.
     */

    /**
     * Zero in torch-written files.
     */

    /**
     * The record name, "<folder>/<name>".
     */

    return CentralDirEntry;
  })();

  /**
   * The data descriptor after a body: signature, CRC-32 and the two sizes, 4 bytes each (8 bytes
   * each when the record needed zip64; a reader compares the CRC with the central directory's).
   * @see spec/pt-zip.md#pt-zip-records
   */

  var DataDescriptor = PytorchZip.DataDescriptor = (function() {
    function DataDescriptor(_io, _parent, _root) {
      this._io = _io;
      this._parent = _parent;
      this._root = _root;

      this._read();
    }
    DataDescriptor.prototype._read = function() {
      this.magic = this._io.readBytes(4);
      if (!((KaitaiStream.byteArrayCompare(this.magic, new Uint8Array([80, 75, 7, 8])) == 0))) {
        throw new KaitaiStream.ValidationNotEqualError(new Uint8Array([80, 75, 7, 8]), this.magic, this._io, "/types/data_descriptor/seq/0");
      }
      this.crc32 = this._io.readU4le();
    }

    return DataDescriptor;
  })();

  /**
   * The end-of-central-directory record (EOCD), 22 bytes when there is no comment.
   * @see spec/pt-zip.md#pt-zip-container
   */

  var EndOfCentralDir = PytorchZip.EndOfCentralDir = (function() {
    function EndOfCentralDir(_io, _parent, _root) {
      this._io = _io;
      this._parent = _parent;
      this._root = _root;

      this._read();
    }
    EndOfCentralDir.prototype._read = function() {
      this.magic = this._io.readBytes(4);
      if (!((KaitaiStream.byteArrayCompare(this.magic, new Uint8Array([80, 75, 5, 6])) == 0))) {
        throw new KaitaiStream.ValidationNotEqualError(new Uint8Array([80, 75, 5, 6]), this.magic, this._io, "/types/end_of_central_dir/seq/0");
      }
      this.disk = this._io.readU2le();
      if (!(this.disk == 0)) {
        throw new KaitaiStream.ValidationNotEqualError(0, this.disk, this._io, "/types/end_of_central_dir/seq/1");
      }
      this.diskOfCentralDir = this._io.readU2le();
      if (!(this.diskOfCentralDir == 0)) {
        throw new KaitaiStream.ValidationNotEqualError(0, this.diskOfCentralDir, this._io, "/types/end_of_central_dir/seq/2");
      }
      this.numEntriesOnDisk = this._io.readU2le();
      this.numEntriesTotal = this._io.readU2le();
      this.lenCentralDir = this._io.readU4le();
      this.ofsCentralDir = this._io.readU4le();
      this.lenComment = this._io.readU2le();
      if (!(this.lenComment == 0)) {
        throw new KaitaiStream.ValidationNotEqualError(0, this.lenComment, this._io, "/types/end_of_central_dir/seq/7");
      }
    }

    /**
     * The entry count, or 0xffff when it overflows (then the zip64 record has it).
     */

    /**
     * The central directory's offset, or 0xffffffff when it overflows.
     */

    /**
     * torch writes no comment; a file with one is not at this grammar's fixed position.
     */

    return EndOfCentralDir;
  })();

  /**
   * One extra field, a 2-byte tag and a 2-byte length; the zip64 extended information is parsed.
   * @see spec/pt-zip.md#pt-zip-records
   */

  var ExtraField = PytorchZip.ExtraField = (function() {
    function ExtraField(_io, _parent, _root, hasLenUncompressed, hasLenCompressed, hasOfsLocalHeader) {
      this._io = _io;
      this._parent = _parent;
      this._root = _root;
      this.hasLenUncompressed = hasLenUncompressed;
      this.hasLenCompressed = hasLenCompressed;
      this.hasOfsLocalHeader = hasOfsLocalHeader;

      this._read();
    }
    ExtraField.prototype._read = function() {
      this.tag = this._io.readU2le();
      this.lenBody = this._io.readU2le();
      if (this.tag == 1) {
        this._raw_zip64 = this._io.readBytes(this.lenBody);
        var _io__raw_zip64 = new KaitaiStream(this._raw_zip64);
        this.zip64 = new Zip64ExtendedInfo(_io__raw_zip64, this, this._root, this.hasLenUncompressed, this.hasLenCompressed, this.hasOfsLocalHeader);
      }
      if (this.tag != 1) {
        this.body = this._io.readBytes(this.lenBody);
      }
    }

    return ExtraField;
  })();

  /**
   * The extra fields of a central directory entry.
   * @see spec/pt-zip.md#pt-zip-records
   */

  var ExtraFields = PytorchZip.ExtraFields = (function() {
    function ExtraFields(_io, _parent, _root, hasLenUncompressed, hasLenCompressed, hasOfsLocalHeader) {
      this._io = _io;
      this._parent = _parent;
      this._root = _root;
      this.hasLenUncompressed = hasLenUncompressed;
      this.hasLenCompressed = hasLenCompressed;
      this.hasOfsLocalHeader = hasOfsLocalHeader;

      this._read();
    }
    ExtraFields.prototype._read = function() {
      this.fields = [];
      var i = 0;
      while (!this._io.isEof()) {
        this.fields.push(new ExtraField(this._io, this, this._root, this.hasLenUncompressed, this.hasLenCompressed, this.hasOfsLocalHeader));
        i++;
      }
    }

    return ExtraFields;
  })();

  /**
   * A record's local header, with the body after it.  torch writes the CRC and sizes as zero here
   * (flag bit 3) and the true values in a data descriptor after the body and in the central
   * directory; the body's size therefore comes from the central directory (`len_body`).
   * @see spec/pt-zip.md#pt-zip-records
   */

  var LocalFile = PytorchZip.LocalFile = (function() {
    function LocalFile(_io, _parent, _root, ofsHeader, lenBody) {
      this._io = _io;
      this._parent = _parent;
      this._root = _root;
      this.ofsHeader = ofsHeader;
      this.lenBody = lenBody;

      this._read();
    }
    LocalFile.prototype._read = function() {
      this.magic = this._io.readBytes(4);
      if (!((KaitaiStream.byteArrayCompare(this.magic, new Uint8Array([80, 75, 3, 4])) == 0))) {
        throw new KaitaiStream.ValidationNotEqualError(new Uint8Array([80, 75, 3, 4]), this.magic, this._io, "/types/local_file/seq/0");
      }
      this.versionNeeded = this._io.readU2le();
      this.flags = this._io.readU2le();
      this.compressionMethod = this._io.readU2le();
      if (!Object.prototype.hasOwnProperty.call(PytorchZip.Compression, this.compressionMethod)) {
        throw new KaitaiStream.ValidationNotInEnumError(this.compressionMethod, this._io, "/types/local_file/seq/3");
      }
      this.dosTime = this._io.readU2le();
      this.dosDate = this._io.readU2le();
      this.crc32 = this._io.readU4le();
      this.lenCompressed = this._io.readU4le();
      this.lenUncompressed = this._io.readU4le();
      this.lenFileName = this._io.readU2le();
      this.lenExtra = this._io.readU2le();
      this.fileName = KaitaiStream.bytesToStr(this._io.readBytes(this.lenFileName), "UTF-8");
      this.extra = this._io.readBytes(this.lenExtra);
    }

    /**
     * The record's bytes (read only when accessed).
     */
    Object.defineProperty(LocalFile.prototype, 'body', {
      get: function() {
        if (this._m_body !== undefined)
          return this._m_body;
        var _pos = this._io.pos;
        this._io.seek(this.ofsBody);
        this._m_body = this._io.readBytes(this.lenBody);
        this._io.seek(_pos);
        return this._m_body;
      }
    });

    /**
     * The CRC and sizes after the body (flag bit 3).
     */
    Object.defineProperty(LocalFile.prototype, 'dataDescriptor', {
      get: function() {
        if (this._m_dataDescriptor !== undefined)
          return this._m_dataDescriptor;
        if (this.hasDataDescriptor) {
          var _pos = this._io.pos;
          this._io.seek(this.ofsBody + this.lenBody);
          this._m_dataDescriptor = new DataDescriptor(this._io, this, this._root);
          this._io.seek(_pos);
        }
        return this._m_dataDescriptor;
      }
    });
    Object.defineProperty(LocalFile.prototype, 'hasDataDescriptor', {
      get: function() {
        if (this._m_hasDataDescriptor !== undefined)
          return this._m_hasDataDescriptor;
        this._m_hasDataDescriptor = (this.flags & 8) != 0;
        return this._m_hasDataDescriptor;
      }
    });

    /**
     * torch aligns every body to 64 bytes (spec/pt-zip.md#pt-zip-alignment).
     * @see spec/pt-zip.md#pt-zip-alignment
     */
    Object.defineProperty(LocalFile.prototype, 'isAligned', {
      get: function() {
        if (this._m_isAligned !== undefined)
          return this._m_isAligned;
        this._m_isAligned = KaitaiStream.mod(this.ofsBody, 64) == 0;
        return this._m_isAligned;
      }
    });

    /**
     * data.pkl, and constants.pkl in TorchScript archives: a name ending in ".pkl" in any ASCII
     * case, since torch (miniz) looks record names up ignoring ASCII case (a lone DATA.PKL is the
     * object pickle).
     * @see spec/pt-zip.md#pt-zip-data-pkl
     */
    Object.defineProperty(LocalFile.prototype, 'isPickle', {
      get: function() {
        if (this._m_isPickle !== undefined)
          return this._m_isPickle;
        this._m_isPickle =  ((this.fileName.length >= 4) && (this.fileName.substring(this.fileName.length - 4, this.fileName.length - 3) == ".") && ( ((this.fileName.substring(this.fileName.length - 3, this.fileName.length - 2) == "p") || (this.fileName.substring(this.fileName.length - 3, this.fileName.length - 2) == "P")) ) && ( ((this.fileName.substring(this.fileName.length - 2, this.fileName.length - 1) == "k") || (this.fileName.substring(this.fileName.length - 2, this.fileName.length - 1) == "K")) ) && ( ((this.fileName.substring(this.fileName.length - 1, this.fileName.length) == "l") || (this.fileName.substring(this.fileName.length - 1, this.fileName.length) == "L")) )) ;
        return this._m_isPickle;
      }
    });

    /**
     * Where the body starts; a reader maps storages from here without reading them.
     */
    Object.defineProperty(LocalFile.prototype, 'ofsBody', {
      get: function() {
        if (this._m_ofsBody !== undefined)
          return this._m_ofsBody;
        this._m_ofsBody = ((this.ofsHeader + 30) + this.lenFileName) + this.lenExtra;
        return this._m_ofsBody;
      }
    });

    /**
     * A *.pkl record parsed as a pickle (read only when accessed).
     * @see spec/pt-zip.md#pt-zip-data-pkl
     */
    Object.defineProperty(LocalFile.prototype, 'pickle', {
      get: function() {
        if (this._m_pickle !== undefined)
          return this._m_pickle;
        if ( ((this.isPickle) && (this.compressionMethod == PytorchZip.Compression.STORED)) ) {
          var _pos = this._io.pos;
          this._io.seek(this.ofsBody);
          this._raw__m_pickle = this._io.readBytes(this.lenBody);
          var _io__raw__m_pickle = new KaitaiStream(this._raw__m_pickle);
          this._m_pickle = new PythonPickle_.PythonPickle(_io__raw__m_pickle, null, null);
          this._io.seek(_pos);
        }
        return this._m_pickle;
      }
    });

    /**
     * Zero when flag bit 3 is set (torch); the data descriptor has the CRC.
     */

    /**
     * torch's "FB" padding field (tag 0x4246) of "Z" bytes, which aligns the body.
     * @see spec/pt-zip.md#pt-zip-alignment
     */

    /**
     * Where this header starts in the file.
     */

    /**
     * The body's size, from the central directory.
     */

    return LocalFile;
  })();

  /**
   * The zip64 end-of-central-directory record.
   * @see spec/pt-zip.md#pt-zip-container
   */

  var Zip64EndOfCentralDir = PytorchZip.Zip64EndOfCentralDir = (function() {
    function Zip64EndOfCentralDir(_io, _parent, _root) {
      this._io = _io;
      this._parent = _parent;
      this._root = _root;

      this._read();
    }
    Zip64EndOfCentralDir.prototype._read = function() {
      this.magic = this._io.readBytes(4);
      if (!((KaitaiStream.byteArrayCompare(this.magic, new Uint8Array([80, 75, 6, 6])) == 0))) {
        throw new KaitaiStream.ValidationNotEqualError(new Uint8Array([80, 75, 6, 6]), this.magic, this._io, "/types/zip64_end_of_central_dir/seq/0");
      }
      this.lenRecord = this._io.readU8le();
      if (!(this.lenRecord >= 44)) {
        throw new KaitaiStream.ValidationLessThanError(44, this.lenRecord, this._io, "/types/zip64_end_of_central_dir/seq/1");
      }
      this.versionMadeBy = this._io.readU2le();
      this.versionNeeded = this._io.readU2le();
      this.disk = this._io.readU4le();
      if (!(this.disk == 0)) {
        throw new KaitaiStream.ValidationNotEqualError(0, this.disk, this._io, "/types/zip64_end_of_central_dir/seq/4");
      }
      this.diskOfCentralDir = this._io.readU4le();
      if (!(this.diskOfCentralDir == 0)) {
        throw new KaitaiStream.ValidationNotEqualError(0, this.diskOfCentralDir, this._io, "/types/zip64_end_of_central_dir/seq/5");
      }
      this.numEntriesOnDisk = this._io.readU8le();
      this.numEntriesTotal = this._io.readU8le();
      var _ = this.numEntriesTotal;
      if (!(_ == this.numEntriesOnDisk)) {
        throw new KaitaiStream.ValidationExprError(this.numEntriesTotal, this._io, "/types/zip64_end_of_central_dir/seq/7");
      }
      this.lenCentralDir = this._io.readU8le();
      this.ofsCentralDir = this._io.readU8le();
      this.extensibleData = this._io.readBytes(this.lenRecord - 44);
    }

    /**
     * Size of the rest of the record (44 when there is no extensible data).
     */

    return Zip64EndOfCentralDir;
  })();

  /**
   * The zip64 extra field (tag 0x0001): the 64-bit values of exactly those header fields that hold
   * 0xffffffff, in this order.
   * @see spec/pt-zip.md#pt-zip-container
   */

  var Zip64ExtendedInfo = PytorchZip.Zip64ExtendedInfo = (function() {
    function Zip64ExtendedInfo(_io, _parent, _root, hasLenUncompressed, hasLenCompressed, hasOfsLocalHeader) {
      this._io = _io;
      this._parent = _parent;
      this._root = _root;
      this.hasLenUncompressed = hasLenUncompressed;
      this.hasLenCompressed = hasLenCompressed;
      this.hasOfsLocalHeader = hasOfsLocalHeader;

      this._read();
    }
    Zip64ExtendedInfo.prototype._read = function() {
      if (this.hasLenUncompressed) {
        this.lenUncompressed = this._io.readU8le();
      }
      if (this.hasLenCompressed) {
        this.lenCompressed = this._io.readU8le();
      }
      if (this.hasOfsLocalHeader) {
        this.ofsLocalHeader = this._io.readU8le();
      }
    }

    return Zip64ExtendedInfo;
  })();

  /**
   * The zip64 end-of-central-directory locator (20 bytes).
   * @see spec/pt-zip.md#pt-zip-container
   */

  var Zip64Locator = PytorchZip.Zip64Locator = (function() {
    function Zip64Locator(_io, _parent, _root) {
      this._io = _io;
      this._parent = _parent;
      this._root = _root;

      this._read();
    }
    Zip64Locator.prototype._read = function() {
      this.magic = this._io.readBytes(4);
      if (!((KaitaiStream.byteArrayCompare(this.magic, new Uint8Array([80, 75, 6, 7])) == 0))) {
        throw new KaitaiStream.ValidationNotEqualError(new Uint8Array([80, 75, 6, 7]), this.magic, this._io, "/types/zip64_locator/seq/0");
      }
      this.diskOfZip64End = this._io.readU4le();
      if (!(this.diskOfZip64End == 0)) {
        throw new KaitaiStream.ValidationNotEqualError(0, this.diskOfZip64End, this._io, "/types/zip64_locator/seq/1");
      }
      this.ofsZip64EndOfCentralDir = this._io.readU8le();
      this.numDisks = this._io.readU4le();
      if (!(this.numDisks == 1)) {
        throw new KaitaiStream.ValidationNotEqualError(1, this.numDisks, this._io, "/types/zip64_locator/seq/3");
      }
    }

    return Zip64Locator;
  })();

  /**
   * The central directory, one entry per record.
   * @see spec/pt-zip.md#pt-zip-records
   */
  Object.defineProperty(PytorchZip.prototype, 'centralDir', {
    get: function() {
      if (this._m_centralDir !== undefined)
        return this._m_centralDir;
      var _pos = this._io.pos;
      this._io.seek(this.zip64EndOfCentralDir.ofsCentralDir);
      this._raw__m_centralDir = this._io.readBytes(this.zip64EndOfCentralDir.lenCentralDir);
      var _io__raw__m_centralDir = new KaitaiStream(this._raw__m_centralDir);
      this._m_centralDir = new CentralDir(_io__raw__m_centralDir, this, this._root, this.zip64EndOfCentralDir.numEntriesTotal);
      this._io.seek(_pos);
      return this._m_centralDir;
    }
  });

  /**
   * The EOCD record, at a fixed distance from the end because torch writes no zip comment.
   * @see spec/pt-zip.md#pt-zip-container
   */
  Object.defineProperty(PytorchZip.prototype, 'endOfCentralDir', {
    get: function() {
      if (this._m_endOfCentralDir !== undefined)
        return this._m_endOfCentralDir;
      var _pos = this._io.pos;
      this._io.seek(this._io.size - 22);
      this._m_endOfCentralDir = new EndOfCentralDir(this._io, this, this._root);
      this._io.seek(_pos);
      return this._m_endOfCentralDir;
    }
  });

  /**
   * The zip64 end record, whose 64-bit counts and offsets are the ones a reader uses.
   */
  Object.defineProperty(PytorchZip.prototype, 'zip64EndOfCentralDir', {
    get: function() {
      if (this._m_zip64EndOfCentralDir !== undefined)
        return this._m_zip64EndOfCentralDir;
      var _pos = this._io.pos;
      this._io.seek(this.zip64Locator.ofsZip64EndOfCentralDir);
      this._m_zip64EndOfCentralDir = new Zip64EndOfCentralDir(this._io, this, this._root);
      this._io.seek(_pos);
      return this._m_zip64EndOfCentralDir;
    }
  });

  /**
   * The zip64 end-of-central-directory locator, which torch always writes just before the EOCD.
   */
  Object.defineProperty(PytorchZip.prototype, 'zip64Locator', {
    get: function() {
      if (this._m_zip64Locator !== undefined)
        return this._m_zip64Locator;
      var _pos = this._io.pos;
      this._io.seek((this._io.size - 22) - 20);
      this._m_zip64Locator = new Zip64Locator(this._io, this, this._root);
      this._io.seek(_pos);
      return this._m_zip64Locator;
    }
  });

  return PytorchZip;
})();
PytorchZip_.PytorchZip = PytorchZip;
});
