# This is a generated file! Please edit source .ksy file and use kaitai-struct-compiler to rebuild
# type: ignore

import kaitaistruct
from kaitaistruct import KaitaiStruct, KaitaiStream, BytesIO
from enum import IntEnum


if getattr(kaitaistruct, 'API_VERSION', (0, 9)) < (0, 11):
    raise Exception("Incompatible Kaitai Struct Python API: 0.11 or later is required, but you have %s" % (kaitaistruct.__version__))

class TorchT7Ascii(KaitaiStruct):
    """The ascii mode of torch7's File writes the same object grammar as the binary mode (torch_t7.ksy),
    with every scalar as a decimal token on its own line, every array of numbers as one line of
    space-separated tokens (nothing at all for an empty array), and strings and char/byte storages as
    their raw bytes followed by a newline (none after an empty one); the byte count is the token
    before them.  The long size and byte order do not matter here.
    
    What Kaitai can express: the whole token structure as torch's writer lays it out, including the
    reference-index threading of torch_t7.ksy (`max_index` in, `last_index` out), integer tokens as
    numbers (`.to_i`), and the raw strings, whose length comes from the previous token.
    What it cannot: the numeric value of a double token ("0.5", "3.40282347e+38", "inf", "-nan" are kept
    as text; Kaitai has no string-to-float conversion), and the leniency of torch's reader, which
    reads tokens with fscanf and so accepts any whitespace between them; this grammar accepts exactly
    the single spaces and newlines the writer puts there.  Storage element values are kept as tokens.
    
    .. seealso::
       spec/t7.md#t7-ascii
    """

    class TypeCode(IntEnum):
        lua_nil = 0
        number = 1
        string = 2
        table = 3
        torch = 4
        boolean = 5
        lua_function = 6
        legacy_recur_function = 7
        recur_function = 8
    def __init__(self, _io, _parent=None, _root=None):
        super(TorchT7Ascii, self).__init__(_io)
        self._parent = _parent
        self._root = _root or self
        self._read()

    def _read(self):
        self.objects = []
        i = 0
        while not self._io.is_eof():
            self.objects.append(TorchT7Ascii.T7Object((0 if i == 0 else self.objects[i - 1].last_index), self._io, self, self._root))
            i += 1



    def _fetch_instances(self):
        pass
        for i in range(len(self.objects)):
            pass
            self.objects[i]._fetch_instances()


    class AsciiString(KaitaiStruct):
        """A class name or version string (a string read as ASCII text).
        
        .. seealso::
           spec/t7.md#t7-class-version
        """
        def __init__(self, _io, _parent=None, _root=None):
            super(TorchT7Ascii.AsciiString, self).__init__(_io)
            self._parent = _parent
            self._root = _root
            self._read()

        def _read(self):
            self.len = TorchT7Ascii.IntLine(self._io, self, self._root)
            _ = self.len
            if not _.value >= 0:
                raise kaitaistruct.ValidationExprError(self.len, self._io, u"/types/ascii_string/seq/0")
            self.value = (self._io.read_bytes(self.len.value)).decode(u"ASCII")
            if self.len.value > 0:
                pass
                self.newline = self._io.read_bytes(1)
                if not self.newline == b"\x0A":
                    raise kaitaistruct.ValidationNotEqualError(b"\x0A", self.newline, self._io, u"/types/ascii_string/seq/2")



        def _fetch_instances(self):
            pass
            self.len._fetch_instances()
            if self.len.value > 0:
                pass



    class FunctionBody(KaitaiStruct):
        """A Lua function, its bytecode (raw bytes, like a string) and the upvalues object.
        
        .. seealso::
           spec/t7.md#t7-function
        """
        def __init__(self, index, _io, _parent=None, _root=None):
            super(TorchT7Ascii.FunctionBody, self).__init__(_io)
            self._parent = _parent
            self._root = _root
            self.index = index
            self._read()

        def _read(self):
            self.bytecode = TorchT7Ascii.LuaString(self._io, self, self._root)
            self.upvalues = TorchT7Ascii.T7Object(self.index, self._io, self, self._root)


        def _fetch_instances(self):
            pass
            self.bytecode._fetch_instances()
            self.upvalues._fetch_instances()

        @property
        def last_index(self):
            if hasattr(self, '_m_last_index'):
                return self._m_last_index

            self._m_last_index = self.upvalues.last_index
            return getattr(self, '_m_last_index', None)


    class Indexed(KaitaiStruct):
        """A table, torch object or type 7/8 function (see torch_t7.ksy for the index rule).
        
        .. seealso::
           spec/t7.md#t7-reference-index
        """
        def __init__(self, type_code, max_index, _io, _parent=None, _root=None):
            super(TorchT7Ascii.Indexed, self).__init__(_io)
            self._parent = _parent
            self._root = _root
            self.type_code = type_code
            self.max_index = max_index
            self._read()

        def _read(self):
            self.index_line = TorchT7Ascii.IntLine(self._io, self, self._root)
            _ = self.index_line
            if not  ((_.value >= 1) and (_.value <= self.max_index + 1)) :
                raise kaitaistruct.ValidationExprError(self.index_line, self._io, u"/types/indexed/seq/0")
            if  ((self.is_new) and (self.type_code == TorchT7Ascii.TypeCode.table)) :
                pass
                self.table = TorchT7Ascii.TableBody(self.index, self._io, self, self._root)

            if  ((self.is_new) and (self.type_code == TorchT7Ascii.TypeCode.torch)) :
                pass
                self.torch = TorchT7Ascii.TorchObject(self.index, self._io, self, self._root)

            if  ((self.is_new) and ( ((self.type_code == TorchT7Ascii.TypeCode.recur_function) or (self.type_code == TorchT7Ascii.TypeCode.legacy_recur_function)) )) :
                pass
                self.lua_function = TorchT7Ascii.FunctionBody(self.index, self._io, self, self._root)



        def _fetch_instances(self):
            pass
            self.index_line._fetch_instances()
            if  ((self.is_new) and (self.type_code == TorchT7Ascii.TypeCode.table)) :
                pass
                self.table._fetch_instances()

            if  ((self.is_new) and (self.type_code == TorchT7Ascii.TypeCode.torch)) :
                pass
                self.torch._fetch_instances()

            if  ((self.is_new) and ( ((self.type_code == TorchT7Ascii.TypeCode.recur_function) or (self.type_code == TorchT7Ascii.TypeCode.legacy_recur_function)) )) :
                pass
                self.lua_function._fetch_instances()


        @property
        def index(self):
            if hasattr(self, '_m_index'):
                return self._m_index

            self._m_index = self.index_line.value
            return getattr(self, '_m_index', None)

        @property
        def is_new(self):
            if hasattr(self, '_m_is_new'):
                return self._m_is_new

            self._m_is_new = self.index > self.max_index
            return getattr(self, '_m_is_new', None)

        @property
        def last_index(self):
            if hasattr(self, '_m_last_index'):
                return self._m_last_index

            self._m_last_index = (self.max_index if (not (self.is_new)) else (self.table.last_index if self.type_code == TorchT7Ascii.TypeCode.table else (self.torch.last_index if self.type_code == TorchT7Ascii.TypeCode.torch else self.lua_function.last_index)))
            return getattr(self, '_m_last_index', None)


    class IntLine(KaitaiStruct):
        """An integer token on its own line.
        
        .. seealso::
           spec/t7.md#t7-ascii
        """
        def __init__(self, _io, _parent=None, _root=None):
            super(TorchT7Ascii.IntLine, self).__init__(_io)
            self._parent = _parent
            self._root = _root
            self._read()

        def _read(self):
            self.text = (self._io.read_bytes_term(10, False, True, True)).decode(u"ASCII")


        def _fetch_instances(self):
            pass

        @property
        def value(self):
            if hasattr(self, '_m_value'):
                return self._m_value

            self._m_value = int(self.text)
            return getattr(self, '_m_value', None)


    class KeyValue(KaitaiStruct):
        """One key object and one value object.
        
        .. seealso::
           spec/t7.md#t7-table
        """
        def __init__(self, max_index, _io, _parent=None, _root=None):
            super(TorchT7Ascii.KeyValue, self).__init__(_io)
            self._parent = _parent
            self._root = _root
            self.max_index = max_index
            self._read()

        def _read(self):
            self.key = TorchT7Ascii.T7Object(self.max_index, self._io, self, self._root)
            self.value = TorchT7Ascii.T7Object(self.key.last_index, self._io, self, self._root)


        def _fetch_instances(self):
            pass
            self.key._fetch_instances()
            self.value._fetch_instances()

        @property
        def last_index(self):
            if hasattr(self, '_m_last_index'):
                return self._m_last_index

            self._m_last_index = self.value.last_index
            return getattr(self, '_m_last_index', None)


    class LuaString(KaitaiStruct):
        """A string, its byte count token and the raw bytes, then a newline unless it is empty.
        
        .. seealso::
           spec/t7.md#t7-string
        """
        def __init__(self, _io, _parent=None, _root=None):
            super(TorchT7Ascii.LuaString, self).__init__(_io)
            self._parent = _parent
            self._root = _root
            self._read()

        def _read(self):
            self.len = TorchT7Ascii.IntLine(self._io, self, self._root)
            _ = self.len
            if not _.value >= 0:
                raise kaitaistruct.ValidationExprError(self.len, self._io, u"/types/lua_string/seq/0")
            self.value = self._io.read_bytes(self.len.value)
            if self.len.value > 0:
                pass
                self.newline = self._io.read_bytes(1)
                if not self.newline == b"\x0A":
                    raise kaitaistruct.ValidationNotEqualError(b"\x0A", self.newline, self._io, u"/types/lua_string/seq/2")



        def _fetch_instances(self):
            pass
            self.len._fetch_instances()
            if self.len.value > 0:
                pass



    class Storage(KaitaiStruct):
        """A storage's element count, then its elements: raw bytes and a newline for Byte and Char
        storages, one line of number tokens for the others.
        
        .. seealso::
           spec/t7.md#t7-storage
        """
        def __init__(self, is_raw, _io, _parent=None, _root=None):
            super(TorchT7Ascii.Storage, self).__init__(_io)
            self._parent = _parent
            self._root = _root
            self.is_raw = is_raw
            self._read()

        def _read(self):
            self.num_elements = TorchT7Ascii.IntLine(self._io, self, self._root)
            _ = self.num_elements
            if not _.value >= 0:
                raise kaitaistruct.ValidationExprError(self.num_elements, self._io, u"/types/storage/seq/0")
            if self.is_raw:
                pass
                self.raw = self._io.read_bytes(self.num_elements.value)

            if  ((self.is_raw) and (self.num_elements.value > 0)) :
                pass
                self.raw_newline = self._io.read_bytes(1)
                if not self.raw_newline == b"\x0A":
                    raise kaitaistruct.ValidationNotEqualError(b"\x0A", self.raw_newline, self._io, u"/types/storage/seq/2")

            if (not (self.is_raw)):
                pass
                self.tokens = TorchT7Ascii.TokenArray(self.num_elements.value, self._io, self, self._root)



        def _fetch_instances(self):
            pass
            self.num_elements._fetch_instances()
            if self.is_raw:
                pass

            if  ((self.is_raw) and (self.num_elements.value > 0)) :
                pass

            if (not (self.is_raw)):
                pass
                self.tokens._fetch_instances()



    class T7Object(KaitaiStruct):
        """One serialized object; `last_index` is the highest reference index after it.
        
        .. seealso::
           spec/t7.md#t7-type-codes
        """
        def __init__(self, max_index, _io, _parent=None, _root=None):
            super(TorchT7Ascii.T7Object, self).__init__(_io)
            self._parent = _parent
            self._root = _root
            self.max_index = max_index
            self._read()

        def _read(self):
            self.type_code_token = (self._io.read_bytes_term(10, False, True, True)).decode(u"ASCII")
            if not  ((self.type_code_token == u"0") or (self.type_code_token == u"1") or (self.type_code_token == u"2") or (self.type_code_token == u"3") or (self.type_code_token == u"4") or (self.type_code_token == u"5") or (self.type_code_token == u"6") or (self.type_code_token == u"7") or (self.type_code_token == u"8")) :
                raise kaitaistruct.ValidationNotAnyOfError(self.type_code_token, self._io, u"/types/t7_object/seq/0")
            if self.type_code == TorchT7Ascii.TypeCode.number:
                pass
                self.number = TorchT7Ascii.TokenLine(self._io, self, self._root)

            if self.type_code == TorchT7Ascii.TypeCode.boolean:
                pass
                self.lua_boolean = TorchT7Ascii.IntLine(self._io, self, self._root)

            if self.type_code == TorchT7Ascii.TypeCode.string:
                pass
                self.string = TorchT7Ascii.LuaString(self._io, self, self._root)

            if self.type_code == TorchT7Ascii.TypeCode.lua_function:
                pass
                self.lua_function = TorchT7Ascii.FunctionBody(self.max_index, self._io, self, self._root)

            if  ((self.type_code == TorchT7Ascii.TypeCode.table) or (self.type_code == TorchT7Ascii.TypeCode.torch) or (self.type_code == TorchT7Ascii.TypeCode.recur_function) or (self.type_code == TorchT7Ascii.TypeCode.legacy_recur_function)) :
                pass
                self.indexed = TorchT7Ascii.Indexed(self.type_code, self.max_index, self._io, self, self._root)



        def _fetch_instances(self):
            pass
            if self.type_code == TorchT7Ascii.TypeCode.number:
                pass
                self.number._fetch_instances()

            if self.type_code == TorchT7Ascii.TypeCode.boolean:
                pass
                self.lua_boolean._fetch_instances()

            if self.type_code == TorchT7Ascii.TypeCode.string:
                pass
                self.string._fetch_instances()

            if self.type_code == TorchT7Ascii.TypeCode.lua_function:
                pass
                self.lua_function._fetch_instances()

            if  ((self.type_code == TorchT7Ascii.TypeCode.table) or (self.type_code == TorchT7Ascii.TypeCode.torch) or (self.type_code == TorchT7Ascii.TypeCode.recur_function) or (self.type_code == TorchT7Ascii.TypeCode.legacy_recur_function)) :
                pass
                self.indexed._fetch_instances()


        @property
        def last_index(self):
            if hasattr(self, '_m_last_index'):
                return self._m_last_index

            self._m_last_index = (self.lua_function.last_index if self.type_code == TorchT7Ascii.TypeCode.lua_function else (self.indexed.last_index if  ((self.type_code == TorchT7Ascii.TypeCode.table) or (self.type_code == TorchT7Ascii.TypeCode.torch) or (self.type_code == TorchT7Ascii.TypeCode.recur_function) or (self.type_code == TorchT7Ascii.TypeCode.legacy_recur_function))  else self.max_index))
            return getattr(self, '_m_last_index', None)

        @property
        def type_code(self):
            if hasattr(self, '_m_type_code'):
                return self._m_type_code

            self._m_type_code = KaitaiStream.resolve_enum(TorchT7Ascii.TypeCode, int(self.type_code_token))
            return getattr(self, '_m_type_code', None)


    class TableBody(KaitaiStruct):
        """A Lua table, the pair count and the pairs.
        
        .. seealso::
           spec/t7.md#t7-table
        """
        def __init__(self, index, _io, _parent=None, _root=None):
            super(TorchT7Ascii.TableBody, self).__init__(_io)
            self._parent = _parent
            self._root = _root
            self.index = index
            self._read()

        def _read(self):
            self.num_pairs = TorchT7Ascii.IntLine(self._io, self, self._root)
            _ = self.num_pairs
            if not _.value >= 0:
                raise kaitaistruct.ValidationExprError(self.num_pairs, self._io, u"/types/table_body/seq/0")
            self.pairs = []
            for i in range(self.num_pairs.value):
                self.pairs.append(TorchT7Ascii.KeyValue((self.index if i == 0 else self.pairs[i - 1].last_index), self._io, self, self._root))



        def _fetch_instances(self):
            pass
            self.num_pairs._fetch_instances()
            for i in range(len(self.pairs)):
                pass
                self.pairs[i]._fetch_instances()


        @property
        def last_index(self):
            if hasattr(self, '_m_last_index'):
                return self._m_last_index

            self._m_last_index = (self.index if self.num_pairs.value == 0 else self.pairs[-1].last_index)
            return getattr(self, '_m_last_index', None)


    class TdsHash(KaitaiStruct):
        """tds.Hash's payload, a count and key/value objects.
        
        .. seealso::
           spec/t7.md#t7-tds
        """
        def __init__(self, index, _io, _parent=None, _root=None):
            super(TorchT7Ascii.TdsHash, self).__init__(_io)
            self._parent = _parent
            self._root = _root
            self.index = index
            self._read()

        def _read(self):
            self.num_pairs = TorchT7Ascii.IntLine(self._io, self, self._root)
            _ = self.num_pairs
            if not _.value >= 0:
                raise kaitaistruct.ValidationExprError(self.num_pairs, self._io, u"/types/tds_hash/seq/0")
            self.pairs = []
            for i in range(self.num_pairs.value):
                self.pairs.append(TorchT7Ascii.KeyValue((self.index if i == 0 else self.pairs[i - 1].last_index), self._io, self, self._root))



        def _fetch_instances(self):
            pass
            self.num_pairs._fetch_instances()
            for i in range(len(self.pairs)):
                pass
                self.pairs[i]._fetch_instances()


        @property
        def last_index(self):
            if hasattr(self, '_m_last_index'):
                return self._m_last_index

            self._m_last_index = (self.index if self.num_pairs.value == 0 else self.pairs[-1].last_index)
            return getattr(self, '_m_last_index', None)


    class TdsVec(KaitaiStruct):
        """tds.Vec's payload, a count and the element objects.
        
        .. seealso::
           spec/t7.md#t7-tds
        """
        def __init__(self, index, _io, _parent=None, _root=None):
            super(TorchT7Ascii.TdsVec, self).__init__(_io)
            self._parent = _parent
            self._root = _root
            self.index = index
            self._read()

        def _read(self):
            self.num_items = TorchT7Ascii.IntLine(self._io, self, self._root)
            _ = self.num_items
            if not _.value >= 0:
                raise kaitaistruct.ValidationExprError(self.num_items, self._io, u"/types/tds_vec/seq/0")
            self.items = []
            for i in range(self.num_items.value):
                self.items.append(TorchT7Ascii.T7Object((self.index if i == 0 else self.items[i - 1].last_index), self._io, self, self._root))



        def _fetch_instances(self):
            pass
            self.num_items._fetch_instances()
            for i in range(len(self.items)):
                pass
                self.items[i]._fetch_instances()


        @property
        def last_index(self):
            if hasattr(self, '_m_last_index'):
                return self._m_last_index

            self._m_last_index = (self.index if self.num_items.value == 0 else self.items[-1].last_index)
            return getattr(self, '_m_last_index', None)


    class Tensor(KaitaiStruct):
        """A tensor's dimension count, sizes, strides, 1-based storage offset and storage object.
        
        .. seealso::
           spec/t7.md#t7-tensor
        """
        def __init__(self, index, _io, _parent=None, _root=None):
            super(TorchT7Ascii.Tensor, self).__init__(_io)
            self._parent = _parent
            self._root = _root
            self.index = index
            self._read()

        def _read(self):
            self.num_dims = TorchT7Ascii.IntLine(self._io, self, self._root)
            _ = self.num_dims
            if not _.value >= 0:
                raise kaitaistruct.ValidationExprError(self.num_dims, self._io, u"/types/tensor/seq/0")
            self.sizes = TorchT7Ascii.TokenArray(self.num_dims.value, self._io, self, self._root)
            self.strides = TorchT7Ascii.TokenArray(self.num_dims.value, self._io, self, self._root)
            self.storage_offset = TorchT7Ascii.IntLine(self._io, self, self._root)
            self.storage = TorchT7Ascii.T7Object(self.index, self._io, self, self._root)


        def _fetch_instances(self):
            pass
            self.num_dims._fetch_instances()
            self.sizes._fetch_instances()
            self.strides._fetch_instances()
            self.storage_offset._fetch_instances()
            self.storage._fetch_instances()

        @property
        def last_index(self):
            if hasattr(self, '_m_last_index'):
                return self._m_last_index

            self._m_last_index = self.storage.last_index
            return getattr(self, '_m_last_index', None)


    class TokenArray(KaitaiStruct):
        """num_items tokens on one line, separated by single spaces and ended by a newline; nothing at all
        when num_items is 0.
        
        .. seealso::
           spec/t7.md#t7-ascii
        """
        def __init__(self, num_items, _io, _parent=None, _root=None):
            super(TorchT7Ascii.TokenArray, self).__init__(_io)
            self._parent = _parent
            self._root = _root
            self.num_items = num_items
            self._read()

        def _read(self):
            if self.num_items > 1:
                pass
                self.leading = []
                for i in range(self.num_items - 1):
                    self.leading.append((self._io.read_bytes_term(32, False, True, True)).decode(u"ASCII"))


            if self.num_items > 0:
                pass
                self.last_token = (self._io.read_bytes_term(10, False, True, True)).decode(u"ASCII")



        def _fetch_instances(self):
            pass
            if self.num_items > 1:
                pass
                for i in range(len(self.leading)):
                    pass


            if self.num_items > 0:
                pass



    class TokenLine(KaitaiStruct):
        """One token on its own line.
        
        .. seealso::
           spec/t7.md#t7-ascii
        """
        def __init__(self, _io, _parent=None, _root=None):
            super(TorchT7Ascii.TokenLine, self).__init__(_io)
            self._parent = _parent
            self._root = _root
            self._read()

        def _read(self):
            self.text = (self._io.read_bytes_term(10, False, True, True)).decode(u"ASCII")


        def _fetch_instances(self):
            pass


    class TorchObject(KaitaiStruct):
        """A torch class instance, its version and class name, then the class payload.
        
        .. seealso::
           spec/t7.md#t7-torch-object
        """
        def __init__(self, index, _io, _parent=None, _root=None):
            super(TorchT7Ascii.TorchObject, self).__init__(_io)
            self._parent = _parent
            self._root = _root
            self.index = index
            self._read()

        def _read(self):
            self.version_or_class = TorchT7Ascii.AsciiString(self._io, self, self._root)
            if self.has_version:
                pass
                self.class_after_version = TorchT7Ascii.AsciiString(self._io, self, self._root)

            _on = self.class_name
            if _on == u"tds.Hash":
                pass
                self.payload = TorchT7Ascii.TdsHash(self.index, self._io, self, self._root)
            elif _on == u"tds.Vec":
                pass
                self.payload = TorchT7Ascii.TdsVec(self.index, self._io, self, self._root)
            elif _on == u"torch.ByteStorage":
                pass
                self.payload = TorchT7Ascii.Storage(True, self._io, self, self._root)
            elif _on == u"torch.ByteTensor":
                pass
                self.payload = TorchT7Ascii.Tensor(self.index, self._io, self, self._root)
            elif _on == u"torch.CharStorage":
                pass
                self.payload = TorchT7Ascii.Storage(True, self._io, self, self._root)
            elif _on == u"torch.CharTensor":
                pass
                self.payload = TorchT7Ascii.Tensor(self.index, self._io, self, self._root)
            elif _on == u"torch.CudaByteStorage":
                pass
                self.payload = TorchT7Ascii.Storage(True, self._io, self, self._root)
            elif _on == u"torch.CudaByteTensor":
                pass
                self.payload = TorchT7Ascii.Tensor(self.index, self._io, self, self._root)
            elif _on == u"torch.CudaCharStorage":
                pass
                self.payload = TorchT7Ascii.Storage(True, self._io, self, self._root)
            elif _on == u"torch.CudaCharTensor":
                pass
                self.payload = TorchT7Ascii.Tensor(self.index, self._io, self, self._root)
            elif _on == u"torch.CudaDoubleStorage":
                pass
                self.payload = TorchT7Ascii.Storage(False, self._io, self, self._root)
            elif _on == u"torch.CudaDoubleTensor":
                pass
                self.payload = TorchT7Ascii.Tensor(self.index, self._io, self, self._root)
            elif _on == u"torch.CudaHalfStorage":
                pass
                self.payload = TorchT7Ascii.Storage(False, self._io, self, self._root)
            elif _on == u"torch.CudaHalfTensor":
                pass
                self.payload = TorchT7Ascii.Tensor(self.index, self._io, self, self._root)
            elif _on == u"torch.CudaIntStorage":
                pass
                self.payload = TorchT7Ascii.Storage(False, self._io, self, self._root)
            elif _on == u"torch.CudaIntTensor":
                pass
                self.payload = TorchT7Ascii.Tensor(self.index, self._io, self, self._root)
            elif _on == u"torch.CudaLongStorage":
                pass
                self.payload = TorchT7Ascii.Storage(False, self._io, self, self._root)
            elif _on == u"torch.CudaLongTensor":
                pass
                self.payload = TorchT7Ascii.Tensor(self.index, self._io, self, self._root)
            elif _on == u"torch.CudaShortStorage":
                pass
                self.payload = TorchT7Ascii.Storage(False, self._io, self, self._root)
            elif _on == u"torch.CudaShortTensor":
                pass
                self.payload = TorchT7Ascii.Tensor(self.index, self._io, self, self._root)
            elif _on == u"torch.CudaStorage":
                pass
                self.payload = TorchT7Ascii.Storage(False, self._io, self, self._root)
            elif _on == u"torch.CudaTensor":
                pass
                self.payload = TorchT7Ascii.Tensor(self.index, self._io, self, self._root)
            elif _on == u"torch.DoubleStorage":
                pass
                self.payload = TorchT7Ascii.Storage(False, self._io, self, self._root)
            elif _on == u"torch.DoubleTensor":
                pass
                self.payload = TorchT7Ascii.Tensor(self.index, self._io, self, self._root)
            elif _on == u"torch.FloatStorage":
                pass
                self.payload = TorchT7Ascii.Storage(False, self._io, self, self._root)
            elif _on == u"torch.FloatTensor":
                pass
                self.payload = TorchT7Ascii.Tensor(self.index, self._io, self, self._root)
            elif _on == u"torch.HalfStorage":
                pass
                self.payload = TorchT7Ascii.Storage(False, self._io, self, self._root)
            elif _on == u"torch.HalfTensor":
                pass
                self.payload = TorchT7Ascii.Tensor(self.index, self._io, self, self._root)
            elif _on == u"torch.IntStorage":
                pass
                self.payload = TorchT7Ascii.Storage(False, self._io, self, self._root)
            elif _on == u"torch.IntTensor":
                pass
                self.payload = TorchT7Ascii.Tensor(self.index, self._io, self, self._root)
            elif _on == u"torch.LongStorage":
                pass
                self.payload = TorchT7Ascii.Storage(False, self._io, self, self._root)
            elif _on == u"torch.LongTensor":
                pass
                self.payload = TorchT7Ascii.Tensor(self.index, self._io, self, self._root)
            elif _on == u"torch.ShortStorage":
                pass
                self.payload = TorchT7Ascii.Storage(False, self._io, self, self._root)
            elif _on == u"torch.ShortTensor":
                pass
                self.payload = TorchT7Ascii.Tensor(self.index, self._io, self, self._root)
            else:
                pass
                self.payload = TorchT7Ascii.T7Object(self.index, self._io, self, self._root)


        def _fetch_instances(self):
            pass
            self.version_or_class._fetch_instances()
            if self.has_version:
                pass
                self.class_after_version._fetch_instances()

            _on = self.class_name
            if _on == u"tds.Hash":
                pass
                self.payload._fetch_instances()
            elif _on == u"tds.Vec":
                pass
                self.payload._fetch_instances()
            elif _on == u"torch.ByteStorage":
                pass
                self.payload._fetch_instances()
            elif _on == u"torch.ByteTensor":
                pass
                self.payload._fetch_instances()
            elif _on == u"torch.CharStorage":
                pass
                self.payload._fetch_instances()
            elif _on == u"torch.CharTensor":
                pass
                self.payload._fetch_instances()
            elif _on == u"torch.CudaByteStorage":
                pass
                self.payload._fetch_instances()
            elif _on == u"torch.CudaByteTensor":
                pass
                self.payload._fetch_instances()
            elif _on == u"torch.CudaCharStorage":
                pass
                self.payload._fetch_instances()
            elif _on == u"torch.CudaCharTensor":
                pass
                self.payload._fetch_instances()
            elif _on == u"torch.CudaDoubleStorage":
                pass
                self.payload._fetch_instances()
            elif _on == u"torch.CudaDoubleTensor":
                pass
                self.payload._fetch_instances()
            elif _on == u"torch.CudaHalfStorage":
                pass
                self.payload._fetch_instances()
            elif _on == u"torch.CudaHalfTensor":
                pass
                self.payload._fetch_instances()
            elif _on == u"torch.CudaIntStorage":
                pass
                self.payload._fetch_instances()
            elif _on == u"torch.CudaIntTensor":
                pass
                self.payload._fetch_instances()
            elif _on == u"torch.CudaLongStorage":
                pass
                self.payload._fetch_instances()
            elif _on == u"torch.CudaLongTensor":
                pass
                self.payload._fetch_instances()
            elif _on == u"torch.CudaShortStorage":
                pass
                self.payload._fetch_instances()
            elif _on == u"torch.CudaShortTensor":
                pass
                self.payload._fetch_instances()
            elif _on == u"torch.CudaStorage":
                pass
                self.payload._fetch_instances()
            elif _on == u"torch.CudaTensor":
                pass
                self.payload._fetch_instances()
            elif _on == u"torch.DoubleStorage":
                pass
                self.payload._fetch_instances()
            elif _on == u"torch.DoubleTensor":
                pass
                self.payload._fetch_instances()
            elif _on == u"torch.FloatStorage":
                pass
                self.payload._fetch_instances()
            elif _on == u"torch.FloatTensor":
                pass
                self.payload._fetch_instances()
            elif _on == u"torch.HalfStorage":
                pass
                self.payload._fetch_instances()
            elif _on == u"torch.HalfTensor":
                pass
                self.payload._fetch_instances()
            elif _on == u"torch.IntStorage":
                pass
                self.payload._fetch_instances()
            elif _on == u"torch.IntTensor":
                pass
                self.payload._fetch_instances()
            elif _on == u"torch.LongStorage":
                pass
                self.payload._fetch_instances()
            elif _on == u"torch.LongTensor":
                pass
                self.payload._fetch_instances()
            elif _on == u"torch.ShortStorage":
                pass
                self.payload._fetch_instances()
            elif _on == u"torch.ShortTensor":
                pass
                self.payload._fetch_instances()
            else:
                pass
                self.payload._fetch_instances()

        @property
        def class_name(self):
            if hasattr(self, '_m_class_name'):
                return self._m_class_name

            self._m_class_name = (self.class_after_version.value if self.has_version else self.version_or_class.value)
            return getattr(self, '_m_class_name', None)

        @property
        def has_version(self):
            if hasattr(self, '_m_has_version'):
                return self._m_has_version

            self._m_has_version =  ((len(self.version_or_class.value) >= 2) and (self.version_or_class.value[0:2] == u"V ")) 
            return getattr(self, '_m_has_version', None)

        @property
        def is_storage(self):
            if hasattr(self, '_m_is_storage'):
                return self._m_is_storage

            self._m_is_storage =  ((self.class_name[0:6] == u"torch.") and (len(self.class_name) > 13) and (self.class_name[len(self.class_name) - 7:len(self.class_name)] == u"Storage")) 
            return getattr(self, '_m_is_storage', None)

        @property
        def is_tensor(self):
            if hasattr(self, '_m_is_tensor'):
                return self._m_is_tensor

            self._m_is_tensor =  ((self.class_name[0:6] == u"torch.") and (len(self.class_name) > 12) and (self.class_name[len(self.class_name) - 6:len(self.class_name)] == u"Tensor")) 
            return getattr(self, '_m_is_tensor', None)

        @property
        def last_index(self):
            if hasattr(self, '_m_last_index'):
                return self._m_last_index

            self._m_last_index = (self.payload.last_index if self.is_tensor else (self.index if self.is_storage else (self.payload.last_index if self.class_name == u"tds.Hash" else (self.payload.last_index if self.class_name == u"tds.Vec" else self.payload.last_index))))
            return getattr(self, '_m_last_index', None)

        @property
        def version(self):
            if hasattr(self, '_m_version'):
                return self._m_version

            self._m_version = (self.version_or_class.value[2:len(self.version_or_class.value)] if self.has_version else u"")
            return getattr(self, '_m_version', None)



