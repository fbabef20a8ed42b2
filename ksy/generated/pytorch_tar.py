# This is a generated file! Please edit source .ksy file and use kaitai-struct-compiler to rebuild
# type: ignore

import kaitaistruct
from kaitaistruct import KaitaiStruct, KaitaiStream, BytesIO
import python_pickle


if getattr(kaitaistruct, 'API_VERSION', (0, 9)) < (0, 11):
    raise Exception("Incompatible Kaitai Struct Python API: 0.11 or later is required, but you have %s" % (kaitaistruct.__version__))

class PytorchTar(KaitaiStruct):
    """The first PyTorch checkpoints (0.1.x, until early 2017) were POSIX tar archives (PAX format, as
    Python's tarfile writes them) with four members, read by torch.load's tar branch to this day:
      sys_info  one pickle: {protocol_version: 1000, little_endian, type_sizes}
      pickle    the object pickle; tensors and storages are persistent ids (their numeric keys)
      tensors   a count pickle, then per tensor a record pickle (key, storage key, class) and the
                tensor's geometry: int32 ndim, 4 more bytes (the old writer wrote ndim as 8 bytes whose
                high half is garbage), int64 sizes[ndim], int64 strides[ndim], int64 storage offset
      storages  a count pickle, then per storage a record pickle (key, location, class), an int64
                element count and the raw elements; then a pickle listing storage views
                (view key, root key, offset, numel)
    Every integer outside the pickles is little-endian (sys_info says so; no big-endian file is known).
    
    What Kaitai expresses: the tar blocks, PAX headers, each member's body by name, and all of the
    inner layouts above, including each storage's element width, which follows from the storage class
    named in the record pickle.  Finding that class needs the position of the GLOBAL opcode in the
    record; torch 0.1.x's pickler (protocol 2) puts it among the first opcodes, and the grammar looks
    at opcodes 3 to 6 (`storage_record`), which covers the keys it writes (LONG1 or BININT*).  The
    member names are taken from the ustar header (torch's names are short; a PAX `path` would be
    needed only for names over 100 bytes).  The count pickles are read by a narrow grammar for the
    protocol 2 integer pickle torch wrote (`count_pickle`).
    
    .. seealso::
       spec/pt-tar.md#pt-tar-members
    """
    def __init__(self, _io, _parent=None, _root=None):
        super(PytorchTar, self).__init__(_io)
        self._parent = _parent
        self._root = _root or self
        self._read()

    def _read(self):
        self.members = []
        i = 0
        while True:
            _ = PytorchTar.Member(self._io, self, self._root)
            self.members.append(_)
            if _.is_end:
                break
            i += 1


    def _fetch_instances(self):
        pass
        for i in range(len(self.members)):
            pass
            self.members[i]._fetch_instances()


    class CountPickle(KaitaiStruct):
        """The integer pickle torch wrote before the tensor and storage records: PROTO 2, one BININT1,
        BININT2 or BININT opcode, STOP.
        
        .. seealso::
           spec/pt-tar.md#pt-tar-tensors
        """
        def __init__(self, _io, _parent=None, _root=None):
            super(PytorchTar.CountPickle, self).__init__(_io)
            self._parent = _parent
            self._root = _root
            self._read()

        def _read(self):
            self.proto = self._io.read_bytes(2)
            if not self.proto == b"\x80\x02":
                raise kaitaistruct.ValidationNotEqualError(b"\x80\x02", self.proto, self._io, u"/types/count_pickle/seq/0")
            self.opcode = self._io.read_u1()
            if not  ((self.opcode == 75) or (self.opcode == 77) or (self.opcode == 74)) :
                raise kaitaistruct.ValidationNotAnyOfError(self.opcode, self._io, u"/types/count_pickle/seq/1")
            _on = self.opcode
            if _on == 74:
                pass
                self.value = self._io.read_s4le()
            elif _on == 75:
                pass
                self.value = self._io.read_u1()
            elif _on == 77:
                pass
                self.value = self._io.read_u2le()
            self.stop = self._io.read_bytes(1)
            if not self.stop == b"\x2E":
                raise kaitaistruct.ValidationNotEqualError(b"\x2E", self.stop, self._io, u"/types/count_pickle/seq/3")


        def _fetch_instances(self):
            pass
            _on = self.opcode
            if _on == 74:
                pass
            elif _on == 75:
                pass
            elif _on == 77:
                pass


    class Header(KaitaiStruct):
        """A ustar header block (POSIX.1-1988, with PAX extended headers of type 'x').
        
        .. seealso::
           spec/pt-tar.md#pt-tar-members
        """
        def __init__(self, _io, _parent=None, _root=None):
            super(PytorchTar.Header, self).__init__(_io)
            self._parent = _parent
            self._root = _root
            self._read()

        def _read(self):
            self.name = (KaitaiStream.bytes_terminate(self._io.read_bytes(100), 0, False)).decode(u"UTF-8")
            self.mode = self._io.read_bytes(8)
            self.uid = self._io.read_bytes(8)
            self.gid = self._io.read_bytes(8)
            self.size_octal = (KaitaiStream.bytes_terminate(self._io.read_bytes(12), 0, False)).decode(u"ASCII")
            self.mtime = self._io.read_bytes(12)
            self.checksum = self._io.read_bytes(8)
            self.type_flag = self._io.read_u1()
            self.link_name = self._io.read_bytes(100)
            self.magic = self._io.read_bytes(6)
            self.version = self._io.read_bytes(2)
            self.user_name = self._io.read_bytes(32)
            self.group_name = self._io.read_bytes(32)
            self.dev_major = self._io.read_bytes(8)
            self.dev_minor = self._io.read_bytes(8)
            self.prefix = self._io.read_bytes(155)
            self.reserved = self._io.read_bytes(12)


        def _fetch_instances(self):
            pass
            _ = self.first_byte
            if hasattr(self, '_m_first_byte'):
                pass


        @property
        def first_byte(self):
            if hasattr(self, '_m_first_byte'):
                return self._m_first_byte

            _pos = self._io.pos()
            self._io.seek(0)
            self._m_first_byte = self._io.read_u1()
            self._io.seek(_pos)
            return getattr(self, '_m_first_byte', None)

        @property
        def len_body(self):
            """The body size in bytes."""
            if hasattr(self, '_m_len_body'):
                return self._m_len_body

            self._m_len_body = (0 if len(self.size_octal) == 0 else int(self.size_octal, 8))
            return getattr(self, '_m_len_body', None)


    class Member(KaitaiStruct):
        """One 512-byte tar header and its body, padded to a multiple of 512 bytes.
        
        .. seealso::
           spec/pt-tar.md#pt-tar-members
        """
        def __init__(self, _io, _parent=None, _root=None):
            super(PytorchTar.Member, self).__init__(_io)
            self._parent = _parent
            self._root = _root
            self._read()

        def _read(self):
            self._raw_header = self._io.read_bytes(512)
            _io__raw_header = KaitaiStream(BytesIO(self._raw_header))
            self.header = PytorchTar.Header(_io__raw_header, self, self._root)
            if (not (self.is_end)):
                pass
                _on = self.header.name
                if _on == u"pickle":
                    pass
                    self._raw_body = self._io.read_bytes(self.header.len_body)
                    _io__raw_body = KaitaiStream(BytesIO(self._raw_body))
                    self.body = python_pickle.PythonPickle(_io__raw_body)
                elif _on == u"storages":
                    pass
                    self._raw_body = self._io.read_bytes(self.header.len_body)
                    _io__raw_body = KaitaiStream(BytesIO(self._raw_body))
                    self.body = PytorchTar.StoragesMember(_io__raw_body, self, self._root)
                elif _on == u"sys_info":
                    pass
                    self._raw_body = self._io.read_bytes(self.header.len_body)
                    _io__raw_body = KaitaiStream(BytesIO(self._raw_body))
                    self.body = python_pickle.PythonPickle(_io__raw_body)
                elif _on == u"tensors":
                    pass
                    self._raw_body = self._io.read_bytes(self.header.len_body)
                    _io__raw_body = KaitaiStream(BytesIO(self._raw_body))
                    self.body = PytorchTar.TensorsMember(_io__raw_body, self, self._root)
                else:
                    pass
                    self.body = self._io.read_bytes(self.header.len_body)

            if (not (self.is_end)):
                pass
                self.padding = self._io.read_bytes((512 - self.header.len_body % 512) % 512)



        def _fetch_instances(self):
            pass
            self.header._fetch_instances()
            if (not (self.is_end)):
                pass
                _on = self.header.name
                if _on == u"pickle":
                    pass
                    self.body._fetch_instances()
                elif _on == u"storages":
                    pass
                    self.body._fetch_instances()
                elif _on == u"sys_info":
                    pass
                    self.body._fetch_instances()
                elif _on == u"tensors":
                    pass
                    self.body._fetch_instances()
                else:
                    pass

            if (not (self.is_end)):
                pass


        @property
        def is_end(self):
            """An all-zero block ends the archive."""
            if hasattr(self, '_m_is_end'):
                return self._m_is_end

            self._m_is_end = self.header.first_byte == 0
            return getattr(self, '_m_is_end', None)


    class StorageRecord(KaitaiStruct):
        """One storage: its (key, location, class) pickle, an int64 element count and the raw elements,
        whose width follows from the class named by the record's GLOBAL opcode.
        
        .. seealso::
           spec/pt-tar.md#pt-tar-storages
        """
        def __init__(self, _io, _parent=None, _root=None):
            super(PytorchTar.StorageRecord, self).__init__(_io)
            self._parent = _parent
            self._root = _root
            self._read()

        def _read(self):
            self.record = python_pickle.PythonPickle(self._io)
            self.num_elements = self._io.read_s8le()
            _ = self.num_elements
            if not  ((_ >= 0) and ( ((_ == 0) or (self.element_size > 0)) )) :
                raise kaitaistruct.ValidationExprError(self.num_elements, self._io, u"/types/storage_record/seq/1")
            self.data = self._io.read_bytes(self.num_elements * self.element_size)


        def _fetch_instances(self):
            pass
            self.record._fetch_instances()

        @property
        def element_size(self):
            """Bytes per element for the class (0.1.x had these eight); 0 for anything else.
            """
            if hasattr(self, '_m_element_size'):
                return self._m_element_size

            self._m_element_size = (8 if self.storage_class == u"DoubleStorage" else (4 if self.storage_class == u"FloatStorage" else (2 if self.storage_class == u"HalfStorage" else (8 if self.storage_class == u"LongStorage" else (4 if self.storage_class == u"IntStorage" else (2 if self.storage_class == u"ShortStorage" else (1 if self.storage_class == u"CharStorage" else (1 if self.storage_class == u"ByteStorage" else 0))))))))
            return getattr(self, '_m_element_size', None)

        @property
        def global_index(self):
            """Which opcode of the record is the GLOBAL naming the storage class (-1 if none)."""
            if hasattr(self, '_m_global_index'):
                return self._m_global_index

            self._m_global_index = (3 if  ((len(self.record.ops) > 3) and (self.record.ops[3].code == python_pickle.PythonPickle.Opcode.global_opcode))  else (4 if  ((len(self.record.ops) > 4) and (self.record.ops[4].code == python_pickle.PythonPickle.Opcode.global_opcode))  else (5 if  ((len(self.record.ops) > 5) and (self.record.ops[5].code == python_pickle.PythonPickle.Opcode.global_opcode))  else (6 if  ((len(self.record.ops) > 6) and (self.record.ops[6].code == python_pickle.PythonPickle.Opcode.global_opcode))  else -1))))
            return getattr(self, '_m_global_index', None)

        @property
        def storage_class(self):
            """The storage class, e.g. FloatStorage (module torch, or torch.cuda for CUDA storages)."""
            if hasattr(self, '_m_storage_class'):
                return self._m_storage_class

            self._m_storage_class = (u"" if self.global_index < 0 else self.record.ops[self.global_index].arg.name)
            return getattr(self, '_m_storage_class', None)


    class StoragesMember(KaitaiStruct):
        """The storages member, a count, that many storage records and the storage views pickle.
        
        .. seealso::
           spec/pt-tar.md#pt-tar-storages
        """
        def __init__(self, _io, _parent=None, _root=None):
            super(PytorchTar.StoragesMember, self).__init__(_io)
            self._parent = _parent
            self._root = _root
            self._read()

        def _read(self):
            self.count = PytorchTar.CountPickle(self._io, self, self._root)
            self.storages = []
            for i in range(self.count.value):
                self.storages.append(PytorchTar.StorageRecord(self._io, self, self._root))

            self.storage_views = python_pickle.PythonPickle(self._io)


        def _fetch_instances(self):
            pass
            self.count._fetch_instances()
            for i in range(len(self.storages)):
                pass
                self.storages[i]._fetch_instances()

            self.storage_views._fetch_instances()


    class TensorRecord(KaitaiStruct):
        """One tensor, its (key, storage key, class) pickle and its geometry in elements.
        
        .. seealso::
           spec/pt-tar.md#pt-tar-tensors
        """
        def __init__(self, _io, _parent=None, _root=None):
            super(PytorchTar.TensorRecord, self).__init__(_io)
            self._parent = _parent
            self._root = _root
            self._read()

        def _read(self):
            self.record = python_pickle.PythonPickle(self._io)
            self.num_dims = self._io.read_s4le()
            if not self.num_dims >= 0:
                raise kaitaistruct.ValidationLessThanError(0, self.num_dims, self._io, u"/types/tensor_record/seq/1")
            self.num_dims_high = self._io.read_bytes(4)
            self.sizes = []
            for i in range(self.num_dims):
                self.sizes.append(self._io.read_s8le())

            self.strides = []
            for i in range(self.num_dims):
                self.strides.append(self._io.read_s8le())

            self.storage_offset = self._io.read_s8le()


        def _fetch_instances(self):
            pass
            self.record._fetch_instances()
            for i in range(len(self.sizes)):
                pass

            for i in range(len(self.strides)):
                pass



    class TensorsMember(KaitaiStruct):
        """The tensors member, a count and that many tensor records.
        
        .. seealso::
           spec/pt-tar.md#pt-tar-tensors
        """
        def __init__(self, _io, _parent=None, _root=None):
            super(PytorchTar.TensorsMember, self).__init__(_io)
            self._parent = _parent
            self._root = _root
            self._read()

        def _read(self):
            self.count = PytorchTar.CountPickle(self._io, self, self._root)
            self.tensors = []
            for i in range(self.count.value):
                self.tensors.append(PytorchTar.TensorRecord(self._io, self, self._root))



        def _fetch_instances(self):
            pass
            self.count._fetch_instances()
            for i in range(len(self.tensors)):
                pass
                self.tensors[i]._fetch_instances()




