# This is a generated file! Please edit source .ksy file and use kaitai-struct-compiler to rebuild
# type: ignore

import kaitaistruct
from kaitaistruct import KaitaiStruct, KaitaiStream, BytesIO
import python_pickle
from enum import IntEnum


if getattr(kaitaistruct, 'API_VERSION', (0, 9)) < (0, 11):
    raise Exception("Incompatible Kaitai Struct Python API: 0.11 or later is required, but you have %s" % (kaitaistruct.__version__))

class PytorchZip(KaitaiStruct):
    """A PyTorch zip checkpoint is a zip archive whose records all sit in one folder (`archive/`, or the
    file's stem in older writers): data.pkl (the object pickle), data/<key> (one record per storage, raw
    little-endian elements), byteorder, version or .data/version, .format_version,
    .storage_alignment, .data/serialization_id; TorchScript archives add code/, constants.pkl and more.
    
    Kaitai needs fixed positions, and a zip is read from its end: a general reader searches backwards
    for the end-of-central-directory record (EOCD) because a zip comment of up to 65535 bytes may follow
    it.  PyTorch's writer never writes a comment and always ends the archive with a zip64 end record,
    a zip64 locator and the EOCD, so this grammar takes the EOCD at `_io.size - 22`, the locator at
    `_io.size - 42`, and validates their signatures (and the empty comment): a file that does not end
    that way is rejected, not searched.  Every torch-written file seen (torch 1.5 to 2.13, and the wild
    corpus) ends that way.
    
    Everything is a lazy `pos` instance: parsing the structure reads the three end records, the central
    directory and, when asked, each record's 30-byte local header, name and padding; a record's body is
    read only when `body` (or `pickle` for *.pkl records) is accessed.  `ofs_body` gives where a reader
    maps a storage without reading it.
    
    What torch writes and the grammar accepts (spec/pt-zip.md#pt-zip-container): method 0 (stored; old
    torch.jit.save archives also deflate code records, method 8, which `is_stored` tells apart);
    flags 0x0808 (UTF-8 names, sizes in a data descriptor after the body), so the local header's CRC and
    sizes are zero and the central directory's are the true ones; zero DOS time and date; a local extra
    field "FB" of "Z" bytes that pads each body to a 64-byte boundary (pt-zip-alignment); zip64 extra
    fields in the central directory only for values that overflow 32 bits.
    Neutral across runtimes, except: record names are decoded as UTF-8 by the runtime (Python refuses
    bytes that are not UTF-8, JavaScript replaces them), so a reader checks their UTF-8 by hand
    (spec/pt-zip.md#pt-zip-records); sizes taken from the records are not checked against the file here
    (lazy instances read them only when asked), so a reader in a runtime whose byte counts are 32-bit
    checks them before it reads a body.
    Not expressed: the record name's folder being the same for all records, names being unique, records
    not overlapping, the CRC — those are a reader's checks (spec/pt-zip.md#pt-zip-consistency).
    
    .. seealso::
       spec/pt-zip.md#pt-zip-container
    """

    class Compression(IntEnum):
        stored = 0
        deflated = 8
    def __init__(self, _io, _parent=None, _root=None):
        super(PytorchZip, self).__init__(_io)
        self._parent = _parent
        self._root = _root or self
        self._read()

    def _read(self):
        pass


    def _fetch_instances(self):
        pass
        _ = self.central_dir
        if hasattr(self, '_m_central_dir'):
            pass
            self._m_central_dir._fetch_instances()

        _ = self.end_of_central_dir
        if hasattr(self, '_m_end_of_central_dir'):
            pass
            self._m_end_of_central_dir._fetch_instances()

        _ = self.zip64_end_of_central_dir
        if hasattr(self, '_m_zip64_end_of_central_dir'):
            pass
            self._m_zip64_end_of_central_dir._fetch_instances()

        _ = self.zip64_locator
        if hasattr(self, '_m_zip64_locator'):
            pass
            self._m_zip64_locator._fetch_instances()


    class CentralDir(KaitaiStruct):
        """The central directory's entries, in the order the writer wrote the records.
        
        .. seealso::
           spec/pt-zip.md#pt-zip-records
        """
        def __init__(self, num_entries, _io, _parent=None, _root=None):
            super(PytorchZip.CentralDir, self).__init__(_io)
            self._parent = _parent
            self._root = _root
            self.num_entries = num_entries
            self._read()

        def _read(self):
            self.entries = []
            for i in range(self.num_entries):
                self.entries.append(PytorchZip.CentralDirEntry(self._io, self, self._root))



        def _fetch_instances(self):
            pass
            for i in range(len(self.entries)):
                pass
                self.entries[i]._fetch_instances()



    class CentralDirEntry(KaitaiStruct):
        """One central directory entry: the record's true CRC and sizes, its name and where its local
        header starts; `local_file` reads that header (lazily) in the whole file.
        
        .. seealso::
           spec/pt-zip.md#pt-zip-records
        """
        def __init__(self, _io, _parent=None, _root=None):
            super(PytorchZip.CentralDirEntry, self).__init__(_io)
            self._parent = _parent
            self._root = _root
            self._read()

        def _read(self):
            self.magic = self._io.read_bytes(4)
            if not self.magic == b"\x50\x4B\x01\x02":
                raise kaitaistruct.ValidationNotEqualError(b"\x50\x4B\x01\x02", self.magic, self._io, u"/types/central_dir_entry/seq/0")
            self.version_made_by = self._io.read_u2le()
            self.version_needed = self._io.read_u2le()
            self.flags = self._io.read_u2le()
            self.compression_method = KaitaiStream.resolve_enum(PytorchZip.Compression, self._io.read_u2le())
            if not isinstance(self.compression_method, PytorchZip.Compression):
                raise kaitaistruct.ValidationNotInEnumError(self.compression_method, self._io, u"/types/central_dir_entry/seq/4")
            self.dos_time = self._io.read_u2le()
            self.dos_date = self._io.read_u2le()
            self.crc32 = self._io.read_u4le()
            self.len_compressed_32 = self._io.read_u4le()
            self.len_uncompressed_32 = self._io.read_u4le()
            self.len_file_name = self._io.read_u2le()
            self.len_extra = self._io.read_u2le()
            self.len_comment = self._io.read_u2le()
            self.disk_start_32 = self._io.read_u2le()
            self.internal_attrs = self._io.read_u2le()
            self.external_attrs = self._io.read_u4le()
            self.ofs_local_header_32 = self._io.read_u4le()
            self.file_name = (self._io.read_bytes(self.len_file_name)).decode(u"UTF-8")
            self._raw_extra = self._io.read_bytes(self.len_extra)
            _io__raw_extra = KaitaiStream(BytesIO(self._raw_extra))
            self.extra = PytorchZip.ExtraFields(self.len_uncompressed_32 == 4294967295, self.len_compressed_32 == 4294967295, self.ofs_local_header_32 == 4294967295, _io__raw_extra, self, self._root)
            self.comment = self._io.read_bytes(self.len_comment)


        def _fetch_instances(self):
            pass
            self.extra._fetch_instances()
            _ = self.local_file
            if hasattr(self, '_m_local_file'):
                pass
                self._m_local_file._fetch_instances()


        @property
        def has_zip64(self):
            """Whether the first extra field is the zip64 extended information (miniz writes it first)."""
            if hasattr(self, '_m_has_zip64'):
                return self._m_has_zip64

            self._m_has_zip64 =  ((len(self.extra.fields) > 0) and (self.extra.fields[0].tag == 1)) 
            return getattr(self, '_m_has_zip64', None)

        @property
        def is_stored(self):
            """An uncompressed record, as every record of a torch.save checkpoint is.  The sizes are compared
            by their difference: `==` between two computed 64-bit values compares boxed Longs by reference
            in the generated Java (false above 127).
            
            .. seealso::
               spec/pt-zip.md#pt-zip-container
            """
            if hasattr(self, '_m_is_stored'):
                return self._m_is_stored

            self._m_is_stored =  ((self.compression_method == PytorchZip.Compression.stored) and (self.len_body - self.len_uncompressed == 0)) 
            return getattr(self, '_m_is_stored', None)

        @property
        def len_body(self):
            """The record's size in bytes (stored, so compressed and uncompressed sizes are equal)."""
            if hasattr(self, '_m_len_body'):
                return self._m_len_body

            self._m_len_body = (self.extra.fields[0].zip64.len_compressed if  ((self.len_compressed_32 == 4294967295) and (self.has_zip64))  else self.len_compressed_32)
            return getattr(self, '_m_len_body', None)

        @property
        def len_uncompressed(self):
            if hasattr(self, '_m_len_uncompressed'):
                return self._m_len_uncompressed

            self._m_len_uncompressed = (self.extra.fields[0].zip64.len_uncompressed if  ((self.len_uncompressed_32 == 4294967295) and (self.has_zip64))  else self.len_uncompressed_32)
            return getattr(self, '_m_len_uncompressed', None)

        @property
        def local_file(self):
            """The record's local header and (lazily) its body."""
            if hasattr(self, '_m_local_file'):
                return self._m_local_file

            io = self._root._io
            _pos = io.pos()
            io.seek(self.ofs_local_header)
            self._m_local_file = PytorchZip.LocalFile(self.ofs_local_header, self.len_body, io, self, self._root)
            io.seek(_pos)
            return getattr(self, '_m_local_file', None)

        @property
        def ofs_local_header(self):
            if hasattr(self, '_m_ofs_local_header'):
                return self._m_ofs_local_header

            self._m_ofs_local_header = (self.extra.fields[0].zip64.ofs_local_header if  ((self.ofs_local_header_32 == 4294967295) and (self.has_zip64))  else self.ofs_local_header_32)
            return getattr(self, '_m_ofs_local_header', None)


    class DataDescriptor(KaitaiStruct):
        """The data descriptor after a body: signature, CRC-32 and the two sizes, 4 bytes each (8 bytes
        each when the record needed zip64; a reader compares the CRC with the central directory's).
        
        .. seealso::
           spec/pt-zip.md#pt-zip-records
        """
        def __init__(self, _io, _parent=None, _root=None):
            super(PytorchZip.DataDescriptor, self).__init__(_io)
            self._parent = _parent
            self._root = _root
            self._read()

        def _read(self):
            self.magic = self._io.read_bytes(4)
            if not self.magic == b"\x50\x4B\x07\x08":
                raise kaitaistruct.ValidationNotEqualError(b"\x50\x4B\x07\x08", self.magic, self._io, u"/types/data_descriptor/seq/0")
            self.crc32 = self._io.read_u4le()


        def _fetch_instances(self):
            pass


    class EndOfCentralDir(KaitaiStruct):
        """The end-of-central-directory record (EOCD), 22 bytes when there is no comment.
        
        .. seealso::
           spec/pt-zip.md#pt-zip-container
        """
        def __init__(self, _io, _parent=None, _root=None):
            super(PytorchZip.EndOfCentralDir, self).__init__(_io)
            self._parent = _parent
            self._root = _root
            self._read()

        def _read(self):
            self.magic = self._io.read_bytes(4)
            if not self.magic == b"\x50\x4B\x05\x06":
                raise kaitaistruct.ValidationNotEqualError(b"\x50\x4B\x05\x06", self.magic, self._io, u"/types/end_of_central_dir/seq/0")
            self.disk = self._io.read_u2le()
            if not self.disk == 0:
                raise kaitaistruct.ValidationNotEqualError(0, self.disk, self._io, u"/types/end_of_central_dir/seq/1")
            self.disk_of_central_dir = self._io.read_u2le()
            if not self.disk_of_central_dir == 0:
                raise kaitaistruct.ValidationNotEqualError(0, self.disk_of_central_dir, self._io, u"/types/end_of_central_dir/seq/2")
            self.num_entries_on_disk = self._io.read_u2le()
            self.num_entries_total = self._io.read_u2le()
            self.len_central_dir = self._io.read_u4le()
            self.ofs_central_dir = self._io.read_u4le()
            self.len_comment = self._io.read_u2le()
            if not self.len_comment == 0:
                raise kaitaistruct.ValidationNotEqualError(0, self.len_comment, self._io, u"/types/end_of_central_dir/seq/7")


        def _fetch_instances(self):
            pass


    class ExtraField(KaitaiStruct):
        """One extra field, a 2-byte tag and a 2-byte length; the zip64 extended information is parsed.
        
        .. seealso::
           spec/pt-zip.md#pt-zip-records
        """
        def __init__(self, has_len_uncompressed, has_len_compressed, has_ofs_local_header, _io, _parent=None, _root=None):
            super(PytorchZip.ExtraField, self).__init__(_io)
            self._parent = _parent
            self._root = _root
            self.has_len_uncompressed = has_len_uncompressed
            self.has_len_compressed = has_len_compressed
            self.has_ofs_local_header = has_ofs_local_header
            self._read()

        def _read(self):
            self.tag = self._io.read_u2le()
            self.len_body = self._io.read_u2le()
            if self.tag == 1:
                pass
                self._raw_zip64 = self._io.read_bytes(self.len_body)
                _io__raw_zip64 = KaitaiStream(BytesIO(self._raw_zip64))
                self.zip64 = PytorchZip.Zip64ExtendedInfo(self.has_len_uncompressed, self.has_len_compressed, self.has_ofs_local_header, _io__raw_zip64, self, self._root)

            if self.tag != 1:
                pass
                self.body = self._io.read_bytes(self.len_body)



        def _fetch_instances(self):
            pass
            if self.tag == 1:
                pass
                self.zip64._fetch_instances()

            if self.tag != 1:
                pass



    class ExtraFields(KaitaiStruct):
        """The extra fields of a central directory entry.
        
        .. seealso::
           spec/pt-zip.md#pt-zip-records
        """
        def __init__(self, has_len_uncompressed, has_len_compressed, has_ofs_local_header, _io, _parent=None, _root=None):
            super(PytorchZip.ExtraFields, self).__init__(_io)
            self._parent = _parent
            self._root = _root
            self.has_len_uncompressed = has_len_uncompressed
            self.has_len_compressed = has_len_compressed
            self.has_ofs_local_header = has_ofs_local_header
            self._read()

        def _read(self):
            self.fields = []
            i = 0
            while not self._io.is_eof():
                self.fields.append(PytorchZip.ExtraField(self.has_len_uncompressed, self.has_len_compressed, self.has_ofs_local_header, self._io, self, self._root))
                i += 1



        def _fetch_instances(self):
            pass
            for i in range(len(self.fields)):
                pass
                self.fields[i]._fetch_instances()



    class LocalFile(KaitaiStruct):
        """A record's local header, with the body after it.  torch writes the CRC and sizes as zero here
        (flag bit 3) and the true values in a data descriptor after the body and in the central
        directory; the body's size therefore comes from the central directory (`len_body`).
        
        .. seealso::
           spec/pt-zip.md#pt-zip-records
        """
        def __init__(self, ofs_header, len_body, _io, _parent=None, _root=None):
            super(PytorchZip.LocalFile, self).__init__(_io)
            self._parent = _parent
            self._root = _root
            self.ofs_header = ofs_header
            self.len_body = len_body
            self._read()

        def _read(self):
            self.magic = self._io.read_bytes(4)
            if not self.magic == b"\x50\x4B\x03\x04":
                raise kaitaistruct.ValidationNotEqualError(b"\x50\x4B\x03\x04", self.magic, self._io, u"/types/local_file/seq/0")
            self.version_needed = self._io.read_u2le()
            self.flags = self._io.read_u2le()
            self.compression_method = KaitaiStream.resolve_enum(PytorchZip.Compression, self._io.read_u2le())
            if not isinstance(self.compression_method, PytorchZip.Compression):
                raise kaitaistruct.ValidationNotInEnumError(self.compression_method, self._io, u"/types/local_file/seq/3")
            self.dos_time = self._io.read_u2le()
            self.dos_date = self._io.read_u2le()
            self.crc32 = self._io.read_u4le()
            self.len_compressed = self._io.read_u4le()
            self.len_uncompressed = self._io.read_u4le()
            self.len_file_name = self._io.read_u2le()
            self.len_extra = self._io.read_u2le()
            self.file_name = (self._io.read_bytes(self.len_file_name)).decode(u"UTF-8")
            self.extra = self._io.read_bytes(self.len_extra)


        def _fetch_instances(self):
            pass
            _ = self.body
            if hasattr(self, '_m_body'):
                pass

            _ = self.data_descriptor
            if hasattr(self, '_m_data_descriptor'):
                pass
                self._m_data_descriptor._fetch_instances()

            _ = self.pickle
            if hasattr(self, '_m_pickle'):
                pass
                self._m_pickle._fetch_instances()


        @property
        def body(self):
            """The record's bytes (read only when accessed)."""
            if hasattr(self, '_m_body'):
                return self._m_body

            _pos = self._io.pos()
            self._io.seek(self.ofs_body)
            self._m_body = self._io.read_bytes(self.len_body)
            self._io.seek(_pos)
            return getattr(self, '_m_body', None)

        @property
        def data_descriptor(self):
            """The CRC and sizes after the body (flag bit 3)."""
            if hasattr(self, '_m_data_descriptor'):
                return self._m_data_descriptor

            if self.has_data_descriptor:
                pass
                _pos = self._io.pos()
                self._io.seek(self.ofs_body + self.len_body)
                self._m_data_descriptor = PytorchZip.DataDescriptor(self._io, self, self._root)
                self._io.seek(_pos)

            return getattr(self, '_m_data_descriptor', None)

        @property
        def has_data_descriptor(self):
            if hasattr(self, '_m_has_data_descriptor'):
                return self._m_has_data_descriptor

            self._m_has_data_descriptor = self.flags & 8 != 0
            return getattr(self, '_m_has_data_descriptor', None)

        @property
        def is_aligned(self):
            """torch aligns every body to 64 bytes (spec/pt-zip.md#pt-zip-alignment).
            
            .. seealso::
               spec/pt-zip.md#pt-zip-alignment
            """
            if hasattr(self, '_m_is_aligned'):
                return self._m_is_aligned

            self._m_is_aligned = self.ofs_body % 64 == 0
            return getattr(self, '_m_is_aligned', None)

        @property
        def is_pickle(self):
            """data.pkl, and constants.pkl in TorchScript archives: a name ending in ".pkl" in any ASCII
            case, since torch (miniz) looks record names up ignoring ASCII case (a lone DATA.PKL is the
            object pickle).
            
            .. seealso::
               spec/pt-zip.md#pt-zip-data-pkl
            """
            if hasattr(self, '_m_is_pickle'):
                return self._m_is_pickle

            self._m_is_pickle =  ((len(self.file_name) >= 4) and (self.file_name[len(self.file_name) - 4:len(self.file_name) - 3] == u".") and ( ((self.file_name[len(self.file_name) - 3:len(self.file_name) - 2] == u"p") or (self.file_name[len(self.file_name) - 3:len(self.file_name) - 2] == u"P")) ) and ( ((self.file_name[len(self.file_name) - 2:len(self.file_name) - 1] == u"k") or (self.file_name[len(self.file_name) - 2:len(self.file_name) - 1] == u"K")) ) and ( ((self.file_name[len(self.file_name) - 1:len(self.file_name)] == u"l") or (self.file_name[len(self.file_name) - 1:len(self.file_name)] == u"L")) )) 
            return getattr(self, '_m_is_pickle', None)

        @property
        def ofs_body(self):
            """Where the body starts; a reader maps storages from here without reading them."""
            if hasattr(self, '_m_ofs_body'):
                return self._m_ofs_body

            self._m_ofs_body = ((self.ofs_header + 30) + self.len_file_name) + self.len_extra
            return getattr(self, '_m_ofs_body', None)

        @property
        def pickle(self):
            """A *.pkl record parsed as a pickle (read only when accessed).
            
            .. seealso::
               spec/pt-zip.md#pt-zip-data-pkl
            """
            if hasattr(self, '_m_pickle'):
                return self._m_pickle

            if  ((self.is_pickle) and (self.compression_method == PytorchZip.Compression.stored)) :
                pass
                _pos = self._io.pos()
                self._io.seek(self.ofs_body)
                self._raw__m_pickle = self._io.read_bytes(self.len_body)
                _io__raw__m_pickle = KaitaiStream(BytesIO(self._raw__m_pickle))
                self._m_pickle = python_pickle.PythonPickle(_io__raw__m_pickle)
                self._io.seek(_pos)

            return getattr(self, '_m_pickle', None)


    class Zip64EndOfCentralDir(KaitaiStruct):
        """The zip64 end-of-central-directory record.
        
        .. seealso::
           spec/pt-zip.md#pt-zip-container
        """
        def __init__(self, _io, _parent=None, _root=None):
            super(PytorchZip.Zip64EndOfCentralDir, self).__init__(_io)
            self._parent = _parent
            self._root = _root
            self._read()

        def _read(self):
            self.magic = self._io.read_bytes(4)
            if not self.magic == b"\x50\x4B\x06\x06":
                raise kaitaistruct.ValidationNotEqualError(b"\x50\x4B\x06\x06", self.magic, self._io, u"/types/zip64_end_of_central_dir/seq/0")
            self.len_record = self._io.read_u8le()
            if not self.len_record >= 44:
                raise kaitaistruct.ValidationLessThanError(44, self.len_record, self._io, u"/types/zip64_end_of_central_dir/seq/1")
            self.version_made_by = self._io.read_u2le()
            self.version_needed = self._io.read_u2le()
            self.disk = self._io.read_u4le()
            if not self.disk == 0:
                raise kaitaistruct.ValidationNotEqualError(0, self.disk, self._io, u"/types/zip64_end_of_central_dir/seq/4")
            self.disk_of_central_dir = self._io.read_u4le()
            if not self.disk_of_central_dir == 0:
                raise kaitaistruct.ValidationNotEqualError(0, self.disk_of_central_dir, self._io, u"/types/zip64_end_of_central_dir/seq/5")
            self.num_entries_on_disk = self._io.read_u8le()
            self.num_entries_total = self._io.read_u8le()
            _ = self.num_entries_total
            if not _ == self.num_entries_on_disk:
                raise kaitaistruct.ValidationExprError(self.num_entries_total, self._io, u"/types/zip64_end_of_central_dir/seq/7")
            self.len_central_dir = self._io.read_u8le()
            self.ofs_central_dir = self._io.read_u8le()
            self.extensible_data = self._io.read_bytes(self.len_record - 44)


        def _fetch_instances(self):
            pass


    class Zip64ExtendedInfo(KaitaiStruct):
        """The zip64 extra field (tag 0x0001): the 64-bit values of exactly those header fields that hold
        0xffffffff, in this order.
        
        .. seealso::
           spec/pt-zip.md#pt-zip-container
        """
        def __init__(self, has_len_uncompressed, has_len_compressed, has_ofs_local_header, _io, _parent=None, _root=None):
            super(PytorchZip.Zip64ExtendedInfo, self).__init__(_io)
            self._parent = _parent
            self._root = _root
            self.has_len_uncompressed = has_len_uncompressed
            self.has_len_compressed = has_len_compressed
            self.has_ofs_local_header = has_ofs_local_header
            self._read()

        def _read(self):
            if self.has_len_uncompressed:
                pass
                self.len_uncompressed = self._io.read_u8le()

            if self.has_len_compressed:
                pass
                self.len_compressed = self._io.read_u8le()

            if self.has_ofs_local_header:
                pass
                self.ofs_local_header = self._io.read_u8le()



        def _fetch_instances(self):
            pass
            if self.has_len_uncompressed:
                pass

            if self.has_len_compressed:
                pass

            if self.has_ofs_local_header:
                pass



    class Zip64Locator(KaitaiStruct):
        """The zip64 end-of-central-directory locator (20 bytes).
        
        .. seealso::
           spec/pt-zip.md#pt-zip-container
        """
        def __init__(self, _io, _parent=None, _root=None):
            super(PytorchZip.Zip64Locator, self).__init__(_io)
            self._parent = _parent
            self._root = _root
            self._read()

        def _read(self):
            self.magic = self._io.read_bytes(4)
            if not self.magic == b"\x50\x4B\x06\x07":
                raise kaitaistruct.ValidationNotEqualError(b"\x50\x4B\x06\x07", self.magic, self._io, u"/types/zip64_locator/seq/0")
            self.disk_of_zip64_end = self._io.read_u4le()
            if not self.disk_of_zip64_end == 0:
                raise kaitaistruct.ValidationNotEqualError(0, self.disk_of_zip64_end, self._io, u"/types/zip64_locator/seq/1")
            self.ofs_zip64_end_of_central_dir = self._io.read_u8le()
            self.num_disks = self._io.read_u4le()
            if not self.num_disks == 1:
                raise kaitaistruct.ValidationNotEqualError(1, self.num_disks, self._io, u"/types/zip64_locator/seq/3")


        def _fetch_instances(self):
            pass


    @property
    def central_dir(self):
        """The central directory, one entry per record.
        
        .. seealso::
           spec/pt-zip.md#pt-zip-records
        """
        if hasattr(self, '_m_central_dir'):
            return self._m_central_dir

        _pos = self._io.pos()
        self._io.seek(self.zip64_end_of_central_dir.ofs_central_dir)
        self._raw__m_central_dir = self._io.read_bytes(self.zip64_end_of_central_dir.len_central_dir)
        _io__raw__m_central_dir = KaitaiStream(BytesIO(self._raw__m_central_dir))
        self._m_central_dir = PytorchZip.CentralDir(self.zip64_end_of_central_dir.num_entries_total, _io__raw__m_central_dir, self, self._root)
        self._io.seek(_pos)
        return getattr(self, '_m_central_dir', None)

    @property
    def end_of_central_dir(self):
        """The EOCD record, at a fixed distance from the end because torch writes no zip comment.
        
        .. seealso::
           spec/pt-zip.md#pt-zip-container
        """
        if hasattr(self, '_m_end_of_central_dir'):
            return self._m_end_of_central_dir

        _pos = self._io.pos()
        self._io.seek(self._io.size() - 22)
        self._m_end_of_central_dir = PytorchZip.EndOfCentralDir(self._io, self, self._root)
        self._io.seek(_pos)
        return getattr(self, '_m_end_of_central_dir', None)

    @property
    def zip64_end_of_central_dir(self):
        """The zip64 end record, whose 64-bit counts and offsets are the ones a reader uses."""
        if hasattr(self, '_m_zip64_end_of_central_dir'):
            return self._m_zip64_end_of_central_dir

        _pos = self._io.pos()
        self._io.seek(self.zip64_locator.ofs_zip64_end_of_central_dir)
        self._m_zip64_end_of_central_dir = PytorchZip.Zip64EndOfCentralDir(self._io, self, self._root)
        self._io.seek(_pos)
        return getattr(self, '_m_zip64_end_of_central_dir', None)

    @property
    def zip64_locator(self):
        """The zip64 end-of-central-directory locator, which torch always writes just before the EOCD."""
        if hasattr(self, '_m_zip64_locator'):
            return self._m_zip64_locator

        _pos = self._io.pos()
        self._io.seek((self._io.size() - 22) - 20)
        self._m_zip64_locator = PytorchZip.Zip64Locator(self._io, self, self._root)
        self._io.seek(_pos)
        return getattr(self, '_m_zip64_locator', None)


