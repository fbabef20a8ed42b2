# This is a generated file! Please edit source .ksy file and use kaitai-struct-compiler to rebuild
# type: ignore

import kaitaistruct
from kaitaistruct import KaitaiStruct, KaitaiStream, BytesIO
import python_pickle


if getattr(kaitaistruct, 'API_VERSION', (0, 9)) < (0, 11):
    raise Exception("Incompatible Kaitai Struct Python API: 0.11 or later is required, but you have %s" % (kaitaistruct.__version__))

class PytorchLegacy(KaitaiStruct):
    """The legacy format is five pickles back to back, then the raw storages:
      magic number   the int 0x1950a86a20f9469cfc6c (LONG1 in protocol 2 and above, a LONG text line
                     in protocols 0 and 1)
      protocol       the int 1001
      sys_info       {protocol_version, little_endian, type_sizes: {short, int, long}}
      object         the saved object; every storage is a persistent id
                     ('storage', <class>, <key>, <location>, <numel>, <view metadata>)
      storage keys   the storages' keys (strings), in the order their data follows
    then, for each key, the storage's int64 element count and its raw elements, in the writer's byte
    order (sys_info's little_endian; every known file is little-endian).
    
    What Kaitai cannot express here: how many storages follow and how wide their elements are.  The
    count is the length of the list in the keys pickle and each width comes from the storage class in
    the object pickle's persistent id for that key; both need the pickle's stack machine (what a list
    or a persistent id is), which a declarative grammar does not run.  So the grammar reads the five
    pickles, records where the storages start (`storages.ofs_start`) and offers `storage(element_size)`
    for a reader that knows the widths to parse each one (the Kaitai-based reader does exactly that).
    
    .. seealso::
       spec/pt-legacy.md#pt-legacy-magic
    """
    def __init__(self, _io, _parent=None, _root=None):
        super(PytorchLegacy, self).__init__(_io)
        self._parent = _parent
        self._root = _root or self
        self._read()

    def _read(self):
        self.magic_number = python_pickle.PythonPickle(self._io)
        _ = self.magic_number
        if not  ((len(_.ops) >= 2) and ( (( ((_.ops[len(_.ops) - 2].code == python_pickle.PythonPickle.Opcode.long1) and (len(_.ops[len(_.ops) - 2].arg.value) >= 10) and (KaitaiStream.byte_array_index(_.ops[len(_.ops) - 2].arg.value, 0) == 108) and (KaitaiStream.byte_array_index(_.ops[len(_.ops) - 2].arg.value, 1) == 252) and (KaitaiStream.byte_array_index(_.ops[len(_.ops) - 2].arg.value, 2) == 156) and (KaitaiStream.byte_array_index(_.ops[len(_.ops) - 2].arg.value, 3) == 70) and (KaitaiStream.byte_array_index(_.ops[len(_.ops) - 2].arg.value, 4) == 249) and (KaitaiStream.byte_array_index(_.ops[len(_.ops) - 2].arg.value, 5) == 32) and (KaitaiStream.byte_array_index(_.ops[len(_.ops) - 2].arg.value, 6) == 106) and (KaitaiStream.byte_array_index(_.ops[len(_.ops) - 2].arg.value, 7) == 168) and (KaitaiStream.byte_array_index(_.ops[len(_.ops) - 2].arg.value, 8) == 80) and (KaitaiStream.byte_array_index(_.ops[len(_.ops) - 2].arg.value, 9) == 25)) ) or ( ((_.ops[len(_.ops) - 2].code == python_pickle.PythonPickle.Opcode.long4) and (len(_.ops[len(_.ops) - 2].arg.value) >= 10) and (KaitaiStream.byte_array_index(_.ops[len(_.ops) - 2].arg.value, 0) == 108) and (KaitaiStream.byte_array_index(_.ops[len(_.ops) - 2].arg.value, 1) == 252) and (KaitaiStream.byte_array_index(_.ops[len(_.ops) - 2].arg.value, 2) == 156) and (KaitaiStream.byte_array_index(_.ops[len(_.ops) - 2].arg.value, 3) == 70) and (KaitaiStream.byte_array_index(_.ops[len(_.ops) - 2].arg.value, 4) == 249) and (KaitaiStream.byte_array_index(_.ops[len(_.ops) - 2].arg.value, 5) == 32) and (KaitaiStream.byte_array_index(_.ops[len(_.ops) - 2].arg.value, 6) == 106) and (KaitaiStream.byte_array_index(_.ops[len(_.ops) - 2].arg.value, 7) == 168) and (KaitaiStream.byte_array_index(_.ops[len(_.ops) - 2].arg.value, 8) == 80) and (KaitaiStream.byte_array_index(_.ops[len(_.ops) - 2].arg.value, 9) == 25)) ) or ( ((_.ops[len(_.ops) - 2].code == python_pickle.PythonPickle.Opcode.long) and (_.ops[len(_.ops) - 2].arg.value == u"119547037146038801333356L")) )) )) :
            raise kaitaistruct.ValidationExprError(self.magic_number, self._io, u"/seq/0")
        self.protocol_version = python_pickle.PythonPickle(self._io)
        self.sys_info = python_pickle.PythonPickle(self._io)
        self.object = python_pickle.PythonPickle(self._io)
        self.storage_keys = python_pickle.PythonPickle(self._io)
        self.storages = PytorchLegacy.StorageArea(self._io.pos(), self._io, self, self._root)


    def _fetch_instances(self):
        pass
        self.magic_number._fetch_instances()
        self.protocol_version._fetch_instances()
        self.sys_info._fetch_instances()
        self.object._fetch_instances()
        self.storage_keys._fetch_instances()
        self.storages._fetch_instances()

    class Storage(KaitaiStruct):
        """One storage: an int64 element count and the raw elements, element_size bytes each, in the
        writer's byte order.  element_size comes from the storage class of the persistent id whose key
        is this storage's (Float 4, Double 8, Half 2, BFloat16 2, Long 8, Int 4, Short 2, Char 1,
        Byte 1, Bool 1, ComplexFloat 8, ComplexDouble 16, QInt8 1, QUInt8 1, QInt32 4).
        
        .. seealso::
           spec/pt-legacy.md#pt-legacy-storages
        """
        def __init__(self, element_size, _io, _parent=None, _root=None):
            super(PytorchLegacy.Storage, self).__init__(_io)
            self._parent = _parent
            self._root = _root
            self.element_size = element_size
            self._read()

        def _read(self):
            self.num_elements = self._io.read_s8le()
            if not self.num_elements >= 0:
                raise kaitaistruct.ValidationLessThanError(0, self.num_elements, self._io, u"/types/storage/seq/0")
            self.data_fits = self._io.read_bytes(0)
            _ = self.data_fits
            if not self.num_elements <= (self._io.size() - self._io.pos()) // self.element_size:
                raise kaitaistruct.ValidationExprError(self.data_fits, self._io, u"/types/storage/seq/1")
            self.data = self._io.read_bytes(self.num_elements * self.element_size)


        def _fetch_instances(self):
            pass


    class StorageArea(KaitaiStruct):
        """The storages after the last pickle.  Nothing is read here: `ofs_start` is where the first
        storage's element count sits, and `first_num_elements` peeks at it.
        
        .. seealso::
           spec/pt-legacy.md#pt-legacy-storages
        """
        def __init__(self, ofs_start, _io, _parent=None, _root=None):
            super(PytorchLegacy.StorageArea, self).__init__(_io)
            self._parent = _parent
            self._root = _root
            self.ofs_start = ofs_start
            self._read()

        def _read(self):
            pass


        def _fetch_instances(self):
            pass
            _ = self.first_num_elements
            if hasattr(self, '_m_first_num_elements'):
                pass


        @property
        def first_num_elements(self):
            """The first storage's element count."""
            if hasattr(self, '_m_first_num_elements'):
                return self._m_first_num_elements

            if self.ofs_start + 8 <= self._io.size():
                pass
                _pos = self._io.pos()
                self._io.seek(self.ofs_start)
                self._m_first_num_elements = self._io.read_s8le()
                self._io.seek(_pos)

            return getattr(self, '_m_first_num_elements', None)

        @property
        def has_storages(self):
            """False when the file saved no storage."""
            if hasattr(self, '_m_has_storages'):
                return self._m_has_storages

            self._m_has_storages = self.ofs_start < self._io.size()
            return getattr(self, '_m_has_storages', None)



