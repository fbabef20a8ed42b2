# This is a generated file! Please edit source .ksy file and use kaitai-struct-compiler to rebuild
# type: ignore

import kaitaistruct
from kaitaistruct import KaitaiStruct, KaitaiStream, BytesIO
from enum import IntEnum


if getattr(kaitaistruct, 'API_VERSION', (0, 9)) < (0, 11):
    raise Exception("Incompatible Kaitai Struct Python API: 0.11 or later is required, but you have %s" % (kaitaistruct.__version__))

class TorchT7(KaitaiStruct):
    """A .t7 file is the byte stream that torch7's File:writeObject wrote: one or more objects, each a
    4-byte type code and a payload (File.lua).  The file has no header: whether it is binary or ascii,
    how wide a C `long` was (4 or 8 bytes) and the byte order are facts of the machine that wrote it.
    This grammar reads the binary mode; the four binary encodings are the four lazy instances below
    (little/big endian x 8/4-byte long), so a tool (or the Web IDE) opens whichever one fits and nothing
    is parsed until then.  torch.save on 64-bit Linux or macOS writes `le_long8`.
    
    The ascii mode (torch.save(f, x, 'ascii')) writes the same object grammar as decimal tokens, one
    scalar or one space-separated array per line, with strings and char/byte storages written raw
    (their length is the token before them).  Kaitai can express that too; it is the separate grammar
    torch_t7_ascii.ksy.
    
    Reference indexes.  Tables, torch objects and functions of types 7/8 carry an index.  The first
    time the writer meets an object it gives it the next index (1, 2, 3, ... across the whole stream,
    even across several writeObject calls on one File) and writes it in full; later occurrences write
    only the index.  Kaitai keeps no state between fields, so the grammar threads the highest index
    seen so far through every object as a parameter (`max_index` in, `last_index` out): an index at
    most `max_index` is a back-reference with no payload, an index of exactly `max_index + 1` starts a
    new object, and anything else is invalid.  This is exactly torch's own rule for files its writer
    produced (File.lua numbers new objects consecutively); a hand-made file that numbers objects
    otherwise is outside what the grammar accepts.
    
    Torch classes.  A torch object is a version string "V <n>" (absent in files older than torch7's
    versioning: then the first string is already the class name), the class name and the class's
    payload.  Tensor and Storage classes (CPU and cutorch's Cuda*) and tds.Hash/tds.Vec have their own
    binary layouts, chosen here by class name.  Every other class is read the way File:readObject
    reads a class without a `read` method: one object, normally the table of its fields (nn modules,
    nngraph nodes).  A class with its own `write`/`read` methods writes whatever it likes; no grammar
    can know it, and the index check above usually rejects the misparse (class_custom_write.t7).
    
    Not expressible in Kaitai: which binary encoding a file uses (the reader's detection, spec/t7.md#t7-detect);
    what a back-reference points to (the index is exposed, the lookup is the reader's); storage
    element values (kept as raw bytes, in the file's byte order; the element type follows from the
    class name, and a Long element is as wide as the encoding's long).
    
    .. seealso::
       spec/t7.md#t7-binary
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
        super(TorchT7, self).__init__(_io)
        self._parent = _parent
        self._root = _root or self
        self._read()

    def _read(self):
        pass


    def _fetch_instances(self):
        pass
        _ = self.be_long4
        if hasattr(self, '_m_be_long4'):
            pass
            self._m_be_long4._fetch_instances()

        _ = self.be_long8
        if hasattr(self, '_m_be_long8'):
            pass
            self._m_be_long8._fetch_instances()

        _ = self.le_long4
        if hasattr(self, '_m_le_long4'):
            pass
            self._m_le_long4._fetch_instances()

        _ = self.le_long8
        if hasattr(self, '_m_le_long8'):
            pass
            self._m_le_long8._fetch_instances()


    class Stream(KaitaiStruct):
        """The objects of one binary encoding, to the end of the file.  Several objects follow each other
        when the writer called writeObject more than once on one File; they share one index space.
        
        .. seealso::
           spec/t7.md#t7-stream
        """
        def __init__(self, long_size, is_big_endian, _io, _parent=None, _root=None):
            super(TorchT7.Stream, self).__init__(_io)
            self._parent = _parent
            self._root = _root
            self.long_size = long_size
            self.is_big_endian = is_big_endian
            self._read()

        def _read(self):
            _on = self.is_big_endian
            if _on == True:
                pass
                self._is_le = False
            elif _on == False:
                pass
                self._is_le = True
            if not hasattr(self, '_is_le'):
                raise kaitaistruct.UndecidedEndiannessError("/types/stream")
            elif self._is_le == True:
                self._read_le()
            elif self._is_le == False:
                self._read_be()

        def _read_le(self):
            self.objects = []
            i = 0
            while not self._io.is_eof():
                self.objects.append(TorchT7.Stream.T7Object(self.long_size, (0 if i == 0 else self.objects[i - 1].last_index), self._io, self, self._root, self._is_le))
                i += 1


        def _read_be(self):
            self.objects = []
            i = 0
            while not self._io.is_eof():
                self.objects.append(TorchT7.Stream.T7Object(self.long_size, (0 if i == 0 else self.objects[i - 1].last_index), self._io, self, self._root, self._is_le))
                i += 1



        def _fetch_instances(self):
            pass
            for i in range(len(self.objects)):
                pass
                self.objects[i]._fetch_instances()


        class AsciiString(KaitaiStruct):
            """A class name or version string, an int32 length and ASCII text.
            
            .. seealso::
               spec/t7.md#t7-class-version
            """
            def __init__(self, _io, _parent=None, _root=None, _is_le=None):
                super(TorchT7.Stream.AsciiString, self).__init__(_io)
                self._parent = _parent
                self._root = _root
                self._is_le = _is_le
                self._read()

            def _read(self):
                if not hasattr(self, '_is_le'):
                    raise kaitaistruct.UndecidedEndiannessError("/types/stream/types/ascii_string")
                elif self._is_le == True:
                    self._read_le()
                elif self._is_le == False:
                    self._read_be()

            def _read_le(self):
                self.len = self._io.read_s4le()
                if not self.len >= 0:
                    raise kaitaistruct.ValidationLessThanError(0, self.len, self._io, u"/types/stream/types/ascii_string/seq/0")
                self.value = (self._io.read_bytes(self.len)).decode(u"ASCII")

            def _read_be(self):
                self.len = self._io.read_s4be()
                if not self.len >= 0:
                    raise kaitaistruct.ValidationLessThanError(0, self.len, self._io, u"/types/stream/types/ascii_string/seq/0")
                self.value = (self._io.read_bytes(self.len)).decode(u"ASCII")


            def _fetch_instances(self):
                pass


        class CLong(KaitaiStruct):
            """A C long of the encoding's width.
            
            .. seealso::
               spec/t7.md#t7-long-size
            """
            def __init__(self, long_size, _io, _parent=None, _root=None, _is_le=None):
                super(TorchT7.Stream.CLong, self).__init__(_io)
                self._parent = _parent
                self._root = _root
                self._is_le = _is_le
                self.long_size = long_size
                self._read()

            def _read(self):
                if not hasattr(self, '_is_le'):
                    raise kaitaistruct.UndecidedEndiannessError("/types/stream/types/c_long")
                elif self._is_le == True:
                    self._read_le()
                elif self._is_le == False:
                    self._read_be()

            def _read_le(self):
                _on = self.long_size
                if _on == 4:
                    pass
                    self.value = self._io.read_s4le()
                elif _on == 8:
                    pass
                    self.value = self._io.read_s8le()

            def _read_be(self):
                _on = self.long_size
                if _on == 4:
                    pass
                    self.value = self._io.read_s4be()
                elif _on == 8:
                    pass
                    self.value = self._io.read_s8be()


            def _fetch_instances(self):
                pass
                _on = self.long_size
                if _on == 4:
                    pass
                elif _on == 8:
                    pass


        class FunctionBody(KaitaiStruct):
            """A Lua function: its string.dump bytecode (VM-specific: LuaJIT or PUC Lua; opaque, never run) and
            one object holding the upvalues: for type 8 a list of {name=, value=[, id=]} tables, for types
            6 and 7 the bare values.
            
            .. seealso::
               spec/t7.md#t7-function
            """
            def __init__(self, long_size, index, _io, _parent=None, _root=None, _is_le=None):
                super(TorchT7.Stream.FunctionBody, self).__init__(_io)
                self._parent = _parent
                self._root = _root
                self._is_le = _is_le
                self.long_size = long_size
                self.index = index
                self._read()

            def _read(self):
                if not hasattr(self, '_is_le'):
                    raise kaitaistruct.UndecidedEndiannessError("/types/stream/types/function_body")
                elif self._is_le == True:
                    self._read_le()
                elif self._is_le == False:
                    self._read_be()

            def _read_le(self):
                self.len_bytecode = self._io.read_s4le()
                if not self.len_bytecode >= 0:
                    raise kaitaistruct.ValidationLessThanError(0, self.len_bytecode, self._io, u"/types/stream/types/function_body/seq/0")
                self.bytecode = self._io.read_bytes(self.len_bytecode)
                self.upvalues = TorchT7.Stream.T7Object(self.long_size, self.index, self._io, self, self._root, self._is_le)

            def _read_be(self):
                self.len_bytecode = self._io.read_s4be()
                if not self.len_bytecode >= 0:
                    raise kaitaistruct.ValidationLessThanError(0, self.len_bytecode, self._io, u"/types/stream/types/function_body/seq/0")
                self.bytecode = self._io.read_bytes(self.len_bytecode)
                self.upvalues = TorchT7.Stream.T7Object(self.long_size, self.index, self._io, self, self._root, self._is_le)


            def _fetch_instances(self):
                pass
                self.upvalues._fetch_instances()

            @property
            def last_index(self):
                if hasattr(self, '_m_last_index'):
                    return self._m_last_index

                self._m_last_index = self.upvalues.last_index
                return getattr(self, '_m_last_index', None)


        class Indexed(KaitaiStruct):
            """A table, torch object or type 7/8 function: the reference index, then the payload the first
            time the object occurs, nothing for a back-reference.
            
            .. seealso::
               spec/t7.md#t7-reference-index
            """
            def __init__(self, type_code, long_size, max_index, _io, _parent=None, _root=None, _is_le=None):
                super(TorchT7.Stream.Indexed, self).__init__(_io)
                self._parent = _parent
                self._root = _root
                self._is_le = _is_le
                self.type_code = type_code
                self.long_size = long_size
                self.max_index = max_index
                self._read()

            def _read(self):
                if not hasattr(self, '_is_le'):
                    raise kaitaistruct.UndecidedEndiannessError("/types/stream/types/indexed")
                elif self._is_le == True:
                    self._read_le()
                elif self._is_le == False:
                    self._read_be()

            def _read_le(self):
                self.index = self._io.read_s4le()
                if not self.index >= 1:
                    raise kaitaistruct.ValidationLessThanError(1, self.index, self._io, u"/types/stream/types/indexed/seq/0")
                if not self.index <= self.max_index + 1:
                    raise kaitaistruct.ValidationGreaterThanError(self.max_index + 1, self.index, self._io, u"/types/stream/types/indexed/seq/0")
                if  ((self.is_new) and (self.type_code == TorchT7.TypeCode.table)) :
                    pass
                    self.table = TorchT7.Stream.TableBody(self.long_size, self.index, self._io, self, self._root, self._is_le)

                if  ((self.is_new) and (self.type_code == TorchT7.TypeCode.torch)) :
                    pass
                    self.torch = TorchT7.Stream.TorchObject(self.long_size, self.index, self._io, self, self._root, self._is_le)

                if  ((self.is_new) and ( ((self.type_code == TorchT7.TypeCode.recur_function) or (self.type_code == TorchT7.TypeCode.legacy_recur_function)) )) :
                    pass
                    self.lua_function = TorchT7.Stream.FunctionBody(self.long_size, self.index, self._io, self, self._root, self._is_le)


            def _read_be(self):
                self.index = self._io.read_s4be()
                if not self.index >= 1:
                    raise kaitaistruct.ValidationLessThanError(1, self.index, self._io, u"/types/stream/types/indexed/seq/0")
                if not self.index <= self.max_index + 1:
                    raise kaitaistruct.ValidationGreaterThanError(self.max_index + 1, self.index, self._io, u"/types/stream/types/indexed/seq/0")
                if  ((self.is_new) and (self.type_code == TorchT7.TypeCode.table)) :
                    pass
                    self.table = TorchT7.Stream.TableBody(self.long_size, self.index, self._io, self, self._root, self._is_le)

                if  ((self.is_new) and (self.type_code == TorchT7.TypeCode.torch)) :
                    pass
                    self.torch = TorchT7.Stream.TorchObject(self.long_size, self.index, self._io, self, self._root, self._is_le)

                if  ((self.is_new) and ( ((self.type_code == TorchT7.TypeCode.recur_function) or (self.type_code == TorchT7.TypeCode.legacy_recur_function)) )) :
                    pass
                    self.lua_function = TorchT7.Stream.FunctionBody(self.long_size, self.index, self._io, self, self._root, self._is_le)



            def _fetch_instances(self):
                pass
                if  ((self.is_new) and (self.type_code == TorchT7.TypeCode.table)) :
                    pass
                    self.table._fetch_instances()

                if  ((self.is_new) and (self.type_code == TorchT7.TypeCode.torch)) :
                    pass
                    self.torch._fetch_instances()

                if  ((self.is_new) and ( ((self.type_code == TorchT7.TypeCode.recur_function) or (self.type_code == TorchT7.TypeCode.legacy_recur_function)) )) :
                    pass
                    self.lua_function._fetch_instances()


            @property
            def is_new(self):
                """False for a back-reference to an object read earlier in the stream."""
                if hasattr(self, '_m_is_new'):
                    return self._m_is_new

                self._m_is_new = self.index > self.max_index
                return getattr(self, '_m_is_new', None)

            @property
            def last_index(self):
                if hasattr(self, '_m_last_index'):
                    return self._m_last_index

                self._m_last_index = (self.max_index if (not (self.is_new)) else (self.table.last_index if self.type_code == TorchT7.TypeCode.table else (self.torch.last_index if self.type_code == TorchT7.TypeCode.torch else self.lua_function.last_index)))
                return getattr(self, '_m_last_index', None)


        class KeyValue(KaitaiStruct):
            """One key object and one value object.
            
            .. seealso::
               spec/t7.md#t7-table
            """
            def __init__(self, long_size, max_index, _io, _parent=None, _root=None, _is_le=None):
                super(TorchT7.Stream.KeyValue, self).__init__(_io)
                self._parent = _parent
                self._root = _root
                self._is_le = _is_le
                self.long_size = long_size
                self.max_index = max_index
                self._read()

            def _read(self):
                if not hasattr(self, '_is_le'):
                    raise kaitaistruct.UndecidedEndiannessError("/types/stream/types/key_value")
                elif self._is_le == True:
                    self._read_le()
                elif self._is_le == False:
                    self._read_be()

            def _read_le(self):
                self.key = TorchT7.Stream.T7Object(self.long_size, self.max_index, self._io, self, self._root, self._is_le)
                self.value = TorchT7.Stream.T7Object(self.long_size, self.key.last_index, self._io, self, self._root, self._is_le)

            def _read_be(self):
                self.key = TorchT7.Stream.T7Object(self.long_size, self.max_index, self._io, self, self._root, self._is_le)
                self.value = TorchT7.Stream.T7Object(self.long_size, self.key.last_index, self._io, self, self._root, self._is_le)


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
            """A Lua string, an int32 length and the bytes (any bytes; not necessarily UTF-8).
            
            .. seealso::
               spec/t7.md#t7-string
            """
            def __init__(self, _io, _parent=None, _root=None, _is_le=None):
                super(TorchT7.Stream.LuaString, self).__init__(_io)
                self._parent = _parent
                self._root = _root
                self._is_le = _is_le
                self._read()

            def _read(self):
                if not hasattr(self, '_is_le'):
                    raise kaitaistruct.UndecidedEndiannessError("/types/stream/types/lua_string")
                elif self._is_le == True:
                    self._read_le()
                elif self._is_le == False:
                    self._read_be()

            def _read_le(self):
                self.len = self._io.read_s4le()
                if not self.len >= 0:
                    raise kaitaistruct.ValidationLessThanError(0, self.len, self._io, u"/types/stream/types/lua_string/seq/0")
                self.value = self._io.read_bytes(self.len)

            def _read_be(self):
                self.len = self._io.read_s4be()
                if not self.len >= 0:
                    raise kaitaistruct.ValidationLessThanError(0, self.len, self._io, u"/types/stream/types/lua_string/seq/0")
                self.value = self._io.read_bytes(self.len)


            def _fetch_instances(self):
                pass


        class Storage(KaitaiStruct):
            """torch.*Storage's payload (Storage.c write): the element count as a long and the raw elements,
            in the encoding's byte order.  LongStorage elements are as wide as the encoding's long.
            
            .. seealso::
               spec/t7.md#t7-storage
            """
            def __init__(self, long_size, element_size, _io, _parent=None, _root=None, _is_le=None):
                super(TorchT7.Stream.Storage, self).__init__(_io)
                self._parent = _parent
                self._root = _root
                self._is_le = _is_le
                self.long_size = long_size
                self.element_size = element_size
                self._read()

            def _read(self):
                if not hasattr(self, '_is_le'):
                    raise kaitaistruct.UndecidedEndiannessError("/types/stream/types/storage")
                elif self._is_le == True:
                    self._read_le()
                elif self._is_le == False:
                    self._read_be()

            def _read_le(self):
                self.num_elements = TorchT7.Stream.CLong(self.long_size, self._io, self, self._root, self._is_le)
                _ = self.num_elements
                if not _.value >= 0:
                    raise kaitaistruct.ValidationExprError(self.num_elements, self._io, u"/types/stream/types/storage/seq/0")
                self.data = self._io.read_bytes(self.num_elements.value * self.element_size)

            def _read_be(self):
                self.num_elements = TorchT7.Stream.CLong(self.long_size, self._io, self, self._root, self._is_le)
                _ = self.num_elements
                if not _.value >= 0:
                    raise kaitaistruct.ValidationExprError(self.num_elements, self._io, u"/types/stream/types/storage/seq/0")
                self.data = self._io.read_bytes(self.num_elements.value * self.element_size)


            def _fetch_instances(self):
                pass
                self.num_elements._fetch_instances()


        class T7Object(KaitaiStruct):
            """One serialized object, File:writeObject's unit; `last_index` is the highest reference index after it.
            
            .. seealso::
               spec/t7.md#t7-type-codes
            """
            def __init__(self, long_size, max_index, _io, _parent=None, _root=None, _is_le=None):
                super(TorchT7.Stream.T7Object, self).__init__(_io)
                self._parent = _parent
                self._root = _root
                self._is_le = _is_le
                self.long_size = long_size
                self.max_index = max_index
                self._read()

            def _read(self):
                if not hasattr(self, '_is_le'):
                    raise kaitaistruct.UndecidedEndiannessError("/types/stream/types/t7_object")
                elif self._is_le == True:
                    self._read_le()
                elif self._is_le == False:
                    self._read_be()

            def _read_le(self):
                self.type_code = KaitaiStream.resolve_enum(TorchT7.TypeCode, self._io.read_s4le())
                if not isinstance(self.type_code, TorchT7.TypeCode):
                    raise kaitaistruct.ValidationNotInEnumError(self.type_code, self._io, u"/types/stream/types/t7_object/seq/0")
                if self.type_code == TorchT7.TypeCode.number:
                    pass
                    self.number = self._io.read_f8le()

                if self.type_code == TorchT7.TypeCode.boolean:
                    pass
                    self.lua_boolean = self._io.read_s4le()

                if self.type_code == TorchT7.TypeCode.string:
                    pass
                    self.string = TorchT7.Stream.LuaString(self._io, self, self._root, self._is_le)

                if self.type_code == TorchT7.TypeCode.lua_function:
                    pass
                    self.lua_function = TorchT7.Stream.FunctionBody(self.long_size, self.max_index, self._io, self, self._root, self._is_le)

                if  ((self.type_code == TorchT7.TypeCode.table) or (self.type_code == TorchT7.TypeCode.torch) or (self.type_code == TorchT7.TypeCode.recur_function) or (self.type_code == TorchT7.TypeCode.legacy_recur_function)) :
                    pass
                    self.indexed = TorchT7.Stream.Indexed(self.type_code, self.long_size, self.max_index, self._io, self, self._root, self._is_le)


            def _read_be(self):
                self.type_code = KaitaiStream.resolve_enum(TorchT7.TypeCode, self._io.read_s4be())
                if not isinstance(self.type_code, TorchT7.TypeCode):
                    raise kaitaistruct.ValidationNotInEnumError(self.type_code, self._io, u"/types/stream/types/t7_object/seq/0")
                if self.type_code == TorchT7.TypeCode.number:
                    pass
                    self.number = self._io.read_f8be()

                if self.type_code == TorchT7.TypeCode.boolean:
                    pass
                    self.lua_boolean = self._io.read_s4be()

                if self.type_code == TorchT7.TypeCode.string:
                    pass
                    self.string = TorchT7.Stream.LuaString(self._io, self, self._root, self._is_le)

                if self.type_code == TorchT7.TypeCode.lua_function:
                    pass
                    self.lua_function = TorchT7.Stream.FunctionBody(self.long_size, self.max_index, self._io, self, self._root, self._is_le)

                if  ((self.type_code == TorchT7.TypeCode.table) or (self.type_code == TorchT7.TypeCode.torch) or (self.type_code == TorchT7.TypeCode.recur_function) or (self.type_code == TorchT7.TypeCode.legacy_recur_function)) :
                    pass
                    self.indexed = TorchT7.Stream.Indexed(self.type_code, self.long_size, self.max_index, self._io, self, self._root, self._is_le)



            def _fetch_instances(self):
                pass
                if self.type_code == TorchT7.TypeCode.number:
                    pass

                if self.type_code == TorchT7.TypeCode.boolean:
                    pass

                if self.type_code == TorchT7.TypeCode.string:
                    pass
                    self.string._fetch_instances()

                if self.type_code == TorchT7.TypeCode.lua_function:
                    pass
                    self.lua_function._fetch_instances()

                if  ((self.type_code == TorchT7.TypeCode.table) or (self.type_code == TorchT7.TypeCode.torch) or (self.type_code == TorchT7.TypeCode.recur_function) or (self.type_code == TorchT7.TypeCode.legacy_recur_function)) :
                    pass
                    self.indexed._fetch_instances()


            @property
            def last_index(self):
                """The highest reference index used once this object has been read."""
                if hasattr(self, '_m_last_index'):
                    return self._m_last_index

                self._m_last_index = (self.lua_function.last_index if self.type_code == TorchT7.TypeCode.lua_function else (self.indexed.last_index if  ((self.type_code == TorchT7.TypeCode.table) or (self.type_code == TorchT7.TypeCode.torch) or (self.type_code == TorchT7.TypeCode.recur_function) or (self.type_code == TorchT7.TypeCode.legacy_recur_function))  else self.max_index))
                return getattr(self, '_m_last_index', None)


        class TableBody(KaitaiStruct):
            """A Lua table, an int32 count of key/value pairs and the pairs (in the writer's `pairs` order).
            
            .. seealso::
               spec/t7.md#t7-table
            """
            def __init__(self, long_size, index, _io, _parent=None, _root=None, _is_le=None):
                super(TorchT7.Stream.TableBody, self).__init__(_io)
                self._parent = _parent
                self._root = _root
                self._is_le = _is_le
                self.long_size = long_size
                self.index = index
                self._read()

            def _read(self):
                if not hasattr(self, '_is_le'):
                    raise kaitaistruct.UndecidedEndiannessError("/types/stream/types/table_body")
                elif self._is_le == True:
                    self._read_le()
                elif self._is_le == False:
                    self._read_be()

            def _read_le(self):
                self.num_pairs = self._io.read_s4le()
                if not self.num_pairs >= 0:
                    raise kaitaistruct.ValidationLessThanError(0, self.num_pairs, self._io, u"/types/stream/types/table_body/seq/0")
                self.pairs = []
                for i in range(self.num_pairs):
                    self.pairs.append(TorchT7.Stream.KeyValue(self.long_size, (self.index if i == 0 else self.pairs[i - 1].last_index), self._io, self, self._root, self._is_le))


            def _read_be(self):
                self.num_pairs = self._io.read_s4be()
                if not self.num_pairs >= 0:
                    raise kaitaistruct.ValidationLessThanError(0, self.num_pairs, self._io, u"/types/stream/types/table_body/seq/0")
                self.pairs = []
                for i in range(self.num_pairs):
                    self.pairs.append(TorchT7.Stream.KeyValue(self.long_size, (self.index if i == 0 else self.pairs[i - 1].last_index), self._io, self, self._root, self._is_le))



            def _fetch_instances(self):
                pass
                for i in range(len(self.pairs)):
                    pass
                    self.pairs[i]._fetch_instances()


            @property
            def last_index(self):
                if hasattr(self, '_m_last_index'):
                    return self._m_last_index

                self._m_last_index = (self.index if self.num_pairs == 0 else self.pairs[-1].last_index)
                return getattr(self, '_m_last_index', None)


        class TdsHash(KaitaiStruct):
            """tds.Hash payload (tds hash.lua __write): a long count, then key and value objects.
            
            .. seealso::
               spec/t7.md#t7-tds
            """
            def __init__(self, long_size, index, _io, _parent=None, _root=None, _is_le=None):
                super(TorchT7.Stream.TdsHash, self).__init__(_io)
                self._parent = _parent
                self._root = _root
                self._is_le = _is_le
                self.long_size = long_size
                self.index = index
                self._read()

            def _read(self):
                if not hasattr(self, '_is_le'):
                    raise kaitaistruct.UndecidedEndiannessError("/types/stream/types/tds_hash")
                elif self._is_le == True:
                    self._read_le()
                elif self._is_le == False:
                    self._read_be()

            def _read_le(self):
                self.num_pairs = TorchT7.Stream.CLong(self.long_size, self._io, self, self._root, self._is_le)
                _ = self.num_pairs
                if not _.value >= 0:
                    raise kaitaistruct.ValidationExprError(self.num_pairs, self._io, u"/types/stream/types/tds_hash/seq/0")
                self.pairs = []
                for i in range(self.num_pairs.value):
                    self.pairs.append(TorchT7.Stream.KeyValue(self.long_size, (self.index if i == 0 else self.pairs[i - 1].last_index), self._io, self, self._root, self._is_le))


            def _read_be(self):
                self.num_pairs = TorchT7.Stream.CLong(self.long_size, self._io, self, self._root, self._is_le)
                _ = self.num_pairs
                if not _.value >= 0:
                    raise kaitaistruct.ValidationExprError(self.num_pairs, self._io, u"/types/stream/types/tds_hash/seq/0")
                self.pairs = []
                for i in range(self.num_pairs.value):
                    self.pairs.append(TorchT7.Stream.KeyValue(self.long_size, (self.index if i == 0 else self.pairs[i - 1].last_index), self._io, self, self._root, self._is_le))



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
            """tds.Vec payload (tds vec.lua __write): a long count, then the element objects in order.
            
            .. seealso::
               spec/t7.md#t7-tds
            """
            def __init__(self, long_size, index, _io, _parent=None, _root=None, _is_le=None):
                super(TorchT7.Stream.TdsVec, self).__init__(_io)
                self._parent = _parent
                self._root = _root
                self._is_le = _is_le
                self.long_size = long_size
                self.index = index
                self._read()

            def _read(self):
                if not hasattr(self, '_is_le'):
                    raise kaitaistruct.UndecidedEndiannessError("/types/stream/types/tds_vec")
                elif self._is_le == True:
                    self._read_le()
                elif self._is_le == False:
                    self._read_be()

            def _read_le(self):
                self.num_items = TorchT7.Stream.CLong(self.long_size, self._io, self, self._root, self._is_le)
                _ = self.num_items
                if not _.value >= 0:
                    raise kaitaistruct.ValidationExprError(self.num_items, self._io, u"/types/stream/types/tds_vec/seq/0")
                self.items = []
                for i in range(self.num_items.value):
                    self.items.append(TorchT7.Stream.T7Object(self.long_size, (self.index if i == 0 else self.items[i - 1].last_index), self._io, self, self._root, self._is_le))


            def _read_be(self):
                self.num_items = TorchT7.Stream.CLong(self.long_size, self._io, self, self._root, self._is_le)
                _ = self.num_items
                if not _.value >= 0:
                    raise kaitaistruct.ValidationExprError(self.num_items, self._io, u"/types/stream/types/tds_vec/seq/0")
                self.items = []
                for i in range(self.num_items.value):
                    self.items.append(TorchT7.Stream.T7Object(self.long_size, (self.index if i == 0 else self.items[i - 1].last_index), self._io, self, self._root, self._is_le))



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
            """torch.*Tensor's payload (Tensor.c write): the number of dimensions, the sizes and strides as
            longs, the 1-based storage offset as a long, then the storage as one object (a Storage
            torch object, a back-reference to one, or nil for a tensor without storage).
            
            .. seealso::
               spec/t7.md#t7-tensor
            """
            def __init__(self, long_size, index, _io, _parent=None, _root=None, _is_le=None):
                super(TorchT7.Stream.Tensor, self).__init__(_io)
                self._parent = _parent
                self._root = _root
                self._is_le = _is_le
                self.long_size = long_size
                self.index = index
                self._read()

            def _read(self):
                if not hasattr(self, '_is_le'):
                    raise kaitaistruct.UndecidedEndiannessError("/types/stream/types/tensor")
                elif self._is_le == True:
                    self._read_le()
                elif self._is_le == False:
                    self._read_be()

            def _read_le(self):
                self.num_dims = self._io.read_s4le()
                if not self.num_dims >= 0:
                    raise kaitaistruct.ValidationLessThanError(0, self.num_dims, self._io, u"/types/stream/types/tensor/seq/0")
                self.sizes = []
                for i in range(self.num_dims):
                    self.sizes.append(TorchT7.Stream.CLong(self.long_size, self._io, self, self._root, self._is_le))

                self.strides = []
                for i in range(self.num_dims):
                    self.strides.append(TorchT7.Stream.CLong(self.long_size, self._io, self, self._root, self._is_le))

                self.storage_offset = TorchT7.Stream.CLong(self.long_size, self._io, self, self._root, self._is_le)
                self.storage = TorchT7.Stream.T7Object(self.long_size, self.index, self._io, self, self._root, self._is_le)

            def _read_be(self):
                self.num_dims = self._io.read_s4be()
                if not self.num_dims >= 0:
                    raise kaitaistruct.ValidationLessThanError(0, self.num_dims, self._io, u"/types/stream/types/tensor/seq/0")
                self.sizes = []
                for i in range(self.num_dims):
                    self.sizes.append(TorchT7.Stream.CLong(self.long_size, self._io, self, self._root, self._is_le))

                self.strides = []
                for i in range(self.num_dims):
                    self.strides.append(TorchT7.Stream.CLong(self.long_size, self._io, self, self._root, self._is_le))

                self.storage_offset = TorchT7.Stream.CLong(self.long_size, self._io, self, self._root, self._is_le)
                self.storage = TorchT7.Stream.T7Object(self.long_size, self.index, self._io, self, self._root, self._is_le)


            def _fetch_instances(self):
                pass
                for i in range(len(self.sizes)):
                    pass
                    self.sizes[i]._fetch_instances()

                for i in range(len(self.strides)):
                    pass
                    self.strides[i]._fetch_instances()

                self.storage_offset._fetch_instances()
                self.storage._fetch_instances()

            @property
            def last_index(self):
                if hasattr(self, '_m_last_index'):
                    return self._m_last_index

                self._m_last_index = self.storage.last_index
                return getattr(self, '_m_last_index', None)


        class TorchObject(KaitaiStruct):
            """A torch class instance: "V <version>" and the class name (or, in files older than versioning,
            only the class name), then the class's payload.
            
            .. seealso::
               spec/t7.md#t7-torch-object
            """
            def __init__(self, long_size, index, _io, _parent=None, _root=None, _is_le=None):
                super(TorchT7.Stream.TorchObject, self).__init__(_io)
                self._parent = _parent
                self._root = _root
                self._is_le = _is_le
                self.long_size = long_size
                self.index = index
                self._read()

            def _read(self):
                if not hasattr(self, '_is_le'):
                    raise kaitaistruct.UndecidedEndiannessError("/types/stream/types/torch_object")
                elif self._is_le == True:
                    self._read_le()
                elif self._is_le == False:
                    self._read_be()

            def _read_le(self):
                self.version_or_class = TorchT7.Stream.AsciiString(self._io, self, self._root, self._is_le)
                if self.has_version:
                    pass
                    self.class_after_version = TorchT7.Stream.AsciiString(self._io, self, self._root, self._is_le)

                _on = self.class_name
                if _on == u"tds.Hash":
                    pass
                    self.payload = TorchT7.Stream.TdsHash(self.long_size, self.index, self._io, self, self._root, self._is_le)
                elif _on == u"tds.Vec":
                    pass
                    self.payload = TorchT7.Stream.TdsVec(self.long_size, self.index, self._io, self, self._root, self._is_le)
                elif _on == u"torch.ByteStorage":
                    pass
                    self.payload = TorchT7.Stream.Storage(self.long_size, 1, self._io, self, self._root, self._is_le)
                elif _on == u"torch.ByteTensor":
                    pass
                    self.payload = TorchT7.Stream.Tensor(self.long_size, self.index, self._io, self, self._root, self._is_le)
                elif _on == u"torch.CharStorage":
                    pass
                    self.payload = TorchT7.Stream.Storage(self.long_size, 1, self._io, self, self._root, self._is_le)
                elif _on == u"torch.CharTensor":
                    pass
                    self.payload = TorchT7.Stream.Tensor(self.long_size, self.index, self._io, self, self._root, self._is_le)
                elif _on == u"torch.CudaByteStorage":
                    pass
                    self.payload = TorchT7.Stream.Storage(self.long_size, 1, self._io, self, self._root, self._is_le)
                elif _on == u"torch.CudaByteTensor":
                    pass
                    self.payload = TorchT7.Stream.Tensor(self.long_size, self.index, self._io, self, self._root, self._is_le)
                elif _on == u"torch.CudaCharStorage":
                    pass
                    self.payload = TorchT7.Stream.Storage(self.long_size, 1, self._io, self, self._root, self._is_le)
                elif _on == u"torch.CudaCharTensor":
                    pass
                    self.payload = TorchT7.Stream.Tensor(self.long_size, self.index, self._io, self, self._root, self._is_le)
                elif _on == u"torch.CudaDoubleStorage":
                    pass
                    self.payload = TorchT7.Stream.Storage(self.long_size, 8, self._io, self, self._root, self._is_le)
                elif _on == u"torch.CudaDoubleTensor":
                    pass
                    self.payload = TorchT7.Stream.Tensor(self.long_size, self.index, self._io, self, self._root, self._is_le)
                elif _on == u"torch.CudaHalfStorage":
                    pass
                    self.payload = TorchT7.Stream.Storage(self.long_size, 2, self._io, self, self._root, self._is_le)
                elif _on == u"torch.CudaHalfTensor":
                    pass
                    self.payload = TorchT7.Stream.Tensor(self.long_size, self.index, self._io, self, self._root, self._is_le)
                elif _on == u"torch.CudaIntStorage":
                    pass
                    self.payload = TorchT7.Stream.Storage(self.long_size, 4, self._io, self, self._root, self._is_le)
                elif _on == u"torch.CudaIntTensor":
                    pass
                    self.payload = TorchT7.Stream.Tensor(self.long_size, self.index, self._io, self, self._root, self._is_le)
                elif _on == u"torch.CudaLongStorage":
                    pass
                    self.payload = TorchT7.Stream.Storage(self.long_size, self.long_size, self._io, self, self._root, self._is_le)
                elif _on == u"torch.CudaLongTensor":
                    pass
                    self.payload = TorchT7.Stream.Tensor(self.long_size, self.index, self._io, self, self._root, self._is_le)
                elif _on == u"torch.CudaShortStorage":
                    pass
                    self.payload = TorchT7.Stream.Storage(self.long_size, 2, self._io, self, self._root, self._is_le)
                elif _on == u"torch.CudaShortTensor":
                    pass
                    self.payload = TorchT7.Stream.Tensor(self.long_size, self.index, self._io, self, self._root, self._is_le)
                elif _on == u"torch.CudaStorage":
                    pass
                    self.payload = TorchT7.Stream.Storage(self.long_size, 4, self._io, self, self._root, self._is_le)
                elif _on == u"torch.CudaTensor":
                    pass
                    self.payload = TorchT7.Stream.Tensor(self.long_size, self.index, self._io, self, self._root, self._is_le)
                elif _on == u"torch.DoubleStorage":
                    pass
                    self.payload = TorchT7.Stream.Storage(self.long_size, 8, self._io, self, self._root, self._is_le)
                elif _on == u"torch.DoubleTensor":
                    pass
                    self.payload = TorchT7.Stream.Tensor(self.long_size, self.index, self._io, self, self._root, self._is_le)
                elif _on == u"torch.FloatStorage":
                    pass
                    self.payload = TorchT7.Stream.Storage(self.long_size, 4, self._io, self, self._root, self._is_le)
                elif _on == u"torch.FloatTensor":
                    pass
                    self.payload = TorchT7.Stream.Tensor(self.long_size, self.index, self._io, self, self._root, self._is_le)
                elif _on == u"torch.HalfStorage":
                    pass
                    self.payload = TorchT7.Stream.Storage(self.long_size, 2, self._io, self, self._root, self._is_le)
                elif _on == u"torch.HalfTensor":
                    pass
                    self.payload = TorchT7.Stream.Tensor(self.long_size, self.index, self._io, self, self._root, self._is_le)
                elif _on == u"torch.IntStorage":
                    pass
                    self.payload = TorchT7.Stream.Storage(self.long_size, 4, self._io, self, self._root, self._is_le)
                elif _on == u"torch.IntTensor":
                    pass
                    self.payload = TorchT7.Stream.Tensor(self.long_size, self.index, self._io, self, self._root, self._is_le)
                elif _on == u"torch.LongStorage":
                    pass
                    self.payload = TorchT7.Stream.Storage(self.long_size, self.long_size, self._io, self, self._root, self._is_le)
                elif _on == u"torch.LongTensor":
                    pass
                    self.payload = TorchT7.Stream.Tensor(self.long_size, self.index, self._io, self, self._root, self._is_le)
                elif _on == u"torch.ShortStorage":
                    pass
                    self.payload = TorchT7.Stream.Storage(self.long_size, 2, self._io, self, self._root, self._is_le)
                elif _on == u"torch.ShortTensor":
                    pass
                    self.payload = TorchT7.Stream.Tensor(self.long_size, self.index, self._io, self, self._root, self._is_le)
                else:
                    pass
                    self.payload = TorchT7.Stream.T7Object(self.long_size, self.index, self._io, self, self._root, self._is_le)

            def _read_be(self):
                self.version_or_class = TorchT7.Stream.AsciiString(self._io, self, self._root, self._is_le)
                if self.has_version:
                    pass
                    self.class_after_version = TorchT7.Stream.AsciiString(self._io, self, self._root, self._is_le)

                _on = self.class_name
                if _on == u"tds.Hash":
                    pass
                    self.payload = TorchT7.Stream.TdsHash(self.long_size, self.index, self._io, self, self._root, self._is_le)
                elif _on == u"tds.Vec":
                    pass
                    self.payload = TorchT7.Stream.TdsVec(self.long_size, self.index, self._io, self, self._root, self._is_le)
                elif _on == u"torch.ByteStorage":
                    pass
                    self.payload = TorchT7.Stream.Storage(self.long_size, 1, self._io, self, self._root, self._is_le)
                elif _on == u"torch.ByteTensor":
                    pass
                    self.payload = TorchT7.Stream.Tensor(self.long_size, self.index, self._io, self, self._root, self._is_le)
                elif _on == u"torch.CharStorage":
                    pass
                    self.payload = TorchT7.Stream.Storage(self.long_size, 1, self._io, self, self._root, self._is_le)
                elif _on == u"torch.CharTensor":
                    pass
                    self.payload = TorchT7.Stream.Tensor(self.long_size, self.index, self._io, self, self._root, self._is_le)
                elif _on == u"torch.CudaByteStorage":
                    pass
                    self.payload = TorchT7.Stream.Storage(self.long_size, 1, self._io, self, self._root, self._is_le)
                elif _on == u"torch.CudaByteTensor":
                    pass
                    self.payload = TorchT7.Stream.Tensor(self.long_size, self.index, self._io, self, self._root, self._is_le)
                elif _on == u"torch.CudaCharStorage":
                    pass
                    self.payload = TorchT7.Stream.Storage(self.long_size, 1, self._io, self, self._root, self._is_le)
                elif _on == u"torch.CudaCharTensor":
                    pass
                    self.payload = TorchT7.Stream.Tensor(self.long_size, self.index, self._io, self, self._root, self._is_le)
                elif _on == u"torch.CudaDoubleStorage":
                    pass
                    self.payload = TorchT7.Stream.Storage(self.long_size, 8, self._io, self, self._root, self._is_le)
                elif _on == u"torch.CudaDoubleTensor":
                    pass
                    self.payload = TorchT7.Stream.Tensor(self.long_size, self.index, self._io, self, self._root, self._is_le)
                elif _on == u"torch.CudaHalfStorage":
                    pass
                    self.payload = TorchT7.Stream.Storage(self.long_size, 2, self._io, self, self._root, self._is_le)
                elif _on == u"torch.CudaHalfTensor":
                    pass
                    self.payload = TorchT7.Stream.Tensor(self.long_size, self.index, self._io, self, self._root, self._is_le)
                elif _on == u"torch.CudaIntStorage":
                    pass
                    self.payload = TorchT7.Stream.Storage(self.long_size, 4, self._io, self, self._root, self._is_le)
                elif _on == u"torch.CudaIntTensor":
                    pass
                    self.payload = TorchT7.Stream.Tensor(self.long_size, self.index, self._io, self, self._root, self._is_le)
                elif _on == u"torch.CudaLongStorage":
                    pass
                    self.payload = TorchT7.Stream.Storage(self.long_size, self.long_size, self._io, self, self._root, self._is_le)
                elif _on == u"torch.CudaLongTensor":
                    pass
                    self.payload = TorchT7.Stream.Tensor(self.long_size, self.index, self._io, self, self._root, self._is_le)
                elif _on == u"torch.CudaShortStorage":
                    pass
                    self.payload = TorchT7.Stream.Storage(self.long_size, 2, self._io, self, self._root, self._is_le)
                elif _on == u"torch.CudaShortTensor":
                    pass
                    self.payload = TorchT7.Stream.Tensor(self.long_size, self.index, self._io, self, self._root, self._is_le)
                elif _on == u"torch.CudaStorage":
                    pass
                    self.payload = TorchT7.Stream.Storage(self.long_size, 4, self._io, self, self._root, self._is_le)
                elif _on == u"torch.CudaTensor":
                    pass
                    self.payload = TorchT7.Stream.Tensor(self.long_size, self.index, self._io, self, self._root, self._is_le)
                elif _on == u"torch.DoubleStorage":
                    pass
                    self.payload = TorchT7.Stream.Storage(self.long_size, 8, self._io, self, self._root, self._is_le)
                elif _on == u"torch.DoubleTensor":
                    pass
                    self.payload = TorchT7.Stream.Tensor(self.long_size, self.index, self._io, self, self._root, self._is_le)
                elif _on == u"torch.FloatStorage":
                    pass
                    self.payload = TorchT7.Stream.Storage(self.long_size, 4, self._io, self, self._root, self._is_le)
                elif _on == u"torch.FloatTensor":
                    pass
                    self.payload = TorchT7.Stream.Tensor(self.long_size, self.index, self._io, self, self._root, self._is_le)
                elif _on == u"torch.HalfStorage":
                    pass
                    self.payload = TorchT7.Stream.Storage(self.long_size, 2, self._io, self, self._root, self._is_le)
                elif _on == u"torch.HalfTensor":
                    pass
                    self.payload = TorchT7.Stream.Tensor(self.long_size, self.index, self._io, self, self._root, self._is_le)
                elif _on == u"torch.IntStorage":
                    pass
                    self.payload = TorchT7.Stream.Storage(self.long_size, 4, self._io, self, self._root, self._is_le)
                elif _on == u"torch.IntTensor":
                    pass
                    self.payload = TorchT7.Stream.Tensor(self.long_size, self.index, self._io, self, self._root, self._is_le)
                elif _on == u"torch.LongStorage":
                    pass
                    self.payload = TorchT7.Stream.Storage(self.long_size, self.long_size, self._io, self, self._root, self._is_le)
                elif _on == u"torch.LongTensor":
                    pass
                    self.payload = TorchT7.Stream.Tensor(self.long_size, self.index, self._io, self, self._root, self._is_le)
                elif _on == u"torch.ShortStorage":
                    pass
                    self.payload = TorchT7.Stream.Storage(self.long_size, 2, self._io, self, self._root, self._is_le)
                elif _on == u"torch.ShortTensor":
                    pass
                    self.payload = TorchT7.Stream.Tensor(self.long_size, self.index, self._io, self, self._root, self._is_le)
                else:
                    pass
                    self.payload = TorchT7.Stream.T7Object(self.long_size, self.index, self._io, self, self._root, self._is_le)


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
                """The torch class name, e.g. torch.FloatTensor or nn.Linear."""
                if hasattr(self, '_m_class_name'):
                    return self._m_class_name

                self._m_class_name = (self.class_after_version.value if self.has_version else self.version_or_class.value)
                return getattr(self, '_m_class_name', None)

            @property
            def has_version(self):
                """False in files written before torch7 versioned classes (the version is then 0).
                
                .. seealso::
                   spec/t7.md#t7-class-version
                """
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
            def is_tds(self):
                if hasattr(self, '_m_is_tds'):
                    return self._m_is_tds

                self._m_is_tds =  ((self.class_name == u"tds.Hash") or (self.class_name == u"tds.Vec")) 
                return getattr(self, '_m_is_tds', None)

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
                """The text after "V " ("1", "1.0" under Lua 5.3), empty when the file has none.
                
                .. seealso::
                   spec/t7.md#t7-class-version
                """
                if hasattr(self, '_m_version'):
                    return self._m_version

                self._m_version = (self.version_or_class.value[2:len(self.version_or_class.value)] if self.has_version else u"")
                return getattr(self, '_m_version', None)



    @property
    def be_long4(self):
        """The stream read as big-endian with 4-byte longs.
        
        .. seealso::
           spec/t7.md#t7-byte-order
        """
        if hasattr(self, '_m_be_long4'):
            return self._m_be_long4

        _pos = self._io.pos()
        self._io.seek(0)
        self._m_be_long4 = TorchT7.Stream(4, True, self._io, self, self._root)
        self._io.seek(_pos)
        return getattr(self, '_m_be_long4', None)

    @property
    def be_long8(self):
        """The stream read as big-endian with 8-byte longs (DiskFile:bigEndianEncoding()).
        
        .. seealso::
           spec/t7.md#t7-byte-order
        """
        if hasattr(self, '_m_be_long8'):
            return self._m_be_long8

        _pos = self._io.pos()
        self._io.seek(0)
        self._m_be_long8 = TorchT7.Stream(8, True, self._io, self, self._root)
        self._io.seek(_pos)
        return getattr(self, '_m_be_long8', None)

    @property
    def le_long4(self):
        """The stream read as little-endian with 4-byte longs (32-bit builds, Windows, DiskFile:longSize(4)).
        
        .. seealso::
           spec/t7.md#t7-long-size
        """
        if hasattr(self, '_m_le_long4'):
            return self._m_le_long4

        _pos = self._io.pos()
        self._io.seek(0)
        self._m_le_long4 = TorchT7.Stream(4, False, self._io, self, self._root)
        self._io.seek(_pos)
        return getattr(self, '_m_le_long4', None)

    @property
    def le_long8(self):
        """The stream read as little-endian with 8-byte longs (torch.save on 64-bit Linux/macOS).
        
        .. seealso::
           spec/t7.md#t7-encodings
        """
        if hasattr(self, '_m_le_long8'):
            return self._m_le_long8

        _pos = self._io.pos()
        self._io.seek(0)
        self._m_le_long8 = TorchT7.Stream(8, False, self._io, self, self._root)
        self._io.seek(_pos)
        return getattr(self, '_m_le_long8', None)


