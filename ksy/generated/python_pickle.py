# This is a generated file! Please edit source .ksy file and use kaitai-struct-compiler to rebuild
# type: ignore

import kaitaistruct
from kaitaistruct import KaitaiStruct, KaitaiStream, BytesIO
from enum import IntEnum


if getattr(kaitaistruct, 'API_VERSION', (0, 9)) < (0, 11):
    raise Exception("Incompatible Kaitai Struct Python API: 0.11 or later is required, but you have %s" % (kaitaistruct.__version__))

class PythonPickle(KaitaiStruct):
    """A pickle is a program for a small stack machine: a sequence of opcodes, each one byte followed by an
    argument whose layout the opcode fixes, ending with STOP.  This grammar reads the opcodes and their
    arguments only; it runs nothing.  What the opcodes do to the stack and the memo (and which globals a
    reader may honour) is spec/pickle.md's business, not the grammar's: a Kaitai parse of a pickle is
    inert by construction.
    
    The opcode values are the ones of CPython's Lib/pickletools.py; the project's single opcode table,
    reference_impl/torchfmt/pickle/opcodes.py, is checked against this enum by a test
    (reference_impl/tests/test_ksy_pickle_opcodes.py).
    
    FRAME (protocol 4) is read as an ordinary opcode with its 8-byte length: frames only group opcodes
    for buffering and do not change their meaning.  Protocol 5 out-of-band buffers (NEXT_BUFFER,
    READONLY_BUFFER) take their data from outside the pickle and have no argument here.
    
    Text arguments of protocol 0 (INT, LONG, FLOAT, STRING, UNICODE, GET, PUT, PERSID, GLOBAL, INST) are
    newline-terminated lines; they are kept as the raw line (decoded as ASCII or UTF-8 where the pickle
    format guarantees it) and their numeric or escaped value is left to the reader.  The length-prefixed
    str arguments (SHORT_BINUNICODE, BINUNICODE, BINUNICODE8) are kept as bytes too: CPython writes a
    lone surrogate with ``surrogatepass``, which Kaitai's strict UTF-8 would refuse, so the reader decodes
    them (spec/pickle.md#pickle-protocols).
    
    .. seealso::
       spec/pickle.md#pickle-opcodes
    """

    class Opcode(IntEnum):
        mark = 40
        empty_tuple = 41
        stop = 46
        pop = 48
        pop_mark = 49
        dup = 50
        binbytes = 66
        short_binbytes = 67
        float = 70
        binfloat = 71
        int = 73
        binint = 74
        binint1 = 75
        long = 76
        binint2 = 77
        none = 78
        persid = 80
        binpersid = 81
        reduce = 82
        string = 83
        binstring = 84
        short_binstring = 85
        unicode = 86
        binunicode = 88
        empty_list = 93
        append = 97
        build = 98
        global_opcode = 99
        dict = 100
        appends = 101
        get = 103
        binget = 104
        inst = 105
        long_binget = 106
        list = 108
        obj = 111
        put = 112
        binput = 113
        long_binput = 114
        setitem = 115
        tuple_opcode = 116
        setitems = 117
        empty_dict = 125
        proto = 128
        newobj = 129
        ext1 = 130
        ext2 = 131
        ext4 = 132
        tuple1 = 133
        tuple2 = 134
        tuple3 = 135
        newtrue = 136
        newfalse = 137
        long1 = 138
        long4 = 139
        short_binunicode = 140
        binunicode8 = 141
        binbytes8 = 142
        empty_set = 143
        additems = 144
        frozenset = 145
        newobj_ex = 146
        stack_global = 147
        memoize = 148
        frame = 149
        bytearray8 = 150
        next_buffer = 151
        readonly_buffer = 152
    def __init__(self, _io, _parent=None, _root=None):
        super(PythonPickle, self).__init__(_io)
        self._parent = _parent
        self._root = _root or self
        self._read()

    def _read(self):
        self.ops = []
        i = 0
        while True:
            _ = PythonPickle.Op(self._io, self, self._root)
            self.ops.append(_)
            if _.code == PythonPickle.Opcode.stop:
                break
            i += 1


    def _fetch_instances(self):
        pass
        for i in range(len(self.ops)):
            pass
            self.ops[i]._fetch_instances()


    class BytesS4(KaitaiStruct):
        """Bytes with a signed 4-byte length (BINSTRING, LONG4); a negative length is malformed.
        
        .. seealso::
           spec/pickle.md#pickle-opcodes
        """
        def __init__(self, _io, _parent=None, _root=None):
            super(PythonPickle.BytesS4, self).__init__(_io)
            self._parent = _parent
            self._root = _root
            self._read()

        def _read(self):
            self.len = self._io.read_s4le()
            if not self.len >= 0:
                raise kaitaistruct.ValidationLessThanError(0, self.len, self._io, u"/types/bytes_s4/seq/0")
            self.value = self._io.read_bytes(self.len)


        def _fetch_instances(self):
            pass


    class BytesU1(KaitaiStruct):
        """Bytes with a 1-byte length (SHORT_BINSTRING, SHORT_BINBYTES, LONG1).
        
        .. seealso::
           spec/pickle.md#pickle-opcodes
        """
        def __init__(self, _io, _parent=None, _root=None):
            super(PythonPickle.BytesU1, self).__init__(_io)
            self._parent = _parent
            self._root = _root
            self._read()

        def _read(self):
            self.len = self._io.read_u1()
            self.value = self._io.read_bytes(self.len)


        def _fetch_instances(self):
            pass


    class BytesU4(KaitaiStruct):
        """Bytes with an unsigned 4-byte length (BINBYTES).
        
        .. seealso::
           spec/pickle.md#pickle-opcodes
        """
        def __init__(self, _io, _parent=None, _root=None):
            super(PythonPickle.BytesU4, self).__init__(_io)
            self._parent = _parent
            self._root = _root
            self._read()

        def _read(self):
            self.len = self._io.read_u4le()
            self.value = self._io.read_bytes(self.len)


        def _fetch_instances(self):
            pass


    class BytesU8(KaitaiStruct):
        """Bytes with an 8-byte length (BINBYTES8, BYTEARRAY8).
        
        .. seealso::
           spec/pickle.md#pickle-opcodes
        """
        def __init__(self, _io, _parent=None, _root=None):
            super(PythonPickle.BytesU8, self).__init__(_io)
            self._parent = _parent
            self._root = _root
            self._read()

        def _read(self):
            self.len = self._io.read_u8le()
            self.value = self._io.read_bytes(self.len)


        def _fetch_instances(self):
            pass


    class DecimalLine(KaitaiStruct):
        """A protocol 0 decimal (INT, LONG with its trailing 'L', FLOAT, GET, PUT) ending in a newline.
        
        .. seealso::
           spec/pickle.md#pickle-opcodes
        """
        def __init__(self, _io, _parent=None, _root=None):
            super(PythonPickle.DecimalLine, self).__init__(_io)
            self._parent = _parent
            self._root = _root
            self._read()

        def _read(self):
            self.value = (self._io.read_bytes_term(10, False, True, True)).decode(u"ASCII")


        def _fetch_instances(self):
            pass


    class GlobalPair(KaitaiStruct):
        """GLOBAL's and INST's two newline-terminated lines, module then qualified name.
        
        .. seealso::
           spec/pickle.md#pickle-globals
        """
        def __init__(self, _io, _parent=None, _root=None):
            super(PythonPickle.GlobalPair, self).__init__(_io)
            self._parent = _parent
            self._root = _root
            self._read()

        def _read(self):
            self.module_name = (self._io.read_bytes_term(10, False, True, True)).decode(u"UTF-8")
            self.name = (self._io.read_bytes_term(10, False, True, True)).decode(u"UTF-8")


        def _fetch_instances(self):
            pass


    class Op(KaitaiStruct):
        """One opcode and its argument.
        
        .. seealso::
           spec/pickle.md#pickle-opcodes
        """
        def __init__(self, _io, _parent=None, _root=None):
            super(PythonPickle.Op, self).__init__(_io)
            self._parent = _parent
            self._root = _root
            self._read()

        def _read(self):
            self.code = KaitaiStream.resolve_enum(PythonPickle.Opcode, self._io.read_u1())
            if not isinstance(self.code, PythonPickle.Opcode):
                raise kaitaistruct.ValidationNotInEnumError(self.code, self._io, u"/types/op/seq/0")
            _on = self.code
            if _on == PythonPickle.Opcode.binbytes:
                pass
                self.arg = PythonPickle.BytesU4(self._io, self, self._root)
            elif _on == PythonPickle.Opcode.binbytes8:
                pass
                self.arg = PythonPickle.BytesU8(self._io, self, self._root)
            elif _on == PythonPickle.Opcode.binstring:
                pass
                self.arg = PythonPickle.BytesS4(self._io, self, self._root)
            elif _on == PythonPickle.Opcode.binunicode:
                pass
                self.arg = PythonPickle.UnicodeU4(self._io, self, self._root)
            elif _on == PythonPickle.Opcode.binunicode8:
                pass
                self.arg = PythonPickle.UnicodeU8(self._io, self, self._root)
            elif _on == PythonPickle.Opcode.bytearray8:
                pass
                self.arg = PythonPickle.BytesU8(self._io, self, self._root)
            elif _on == PythonPickle.Opcode.float:
                pass
                self.arg = PythonPickle.DecimalLine(self._io, self, self._root)
            elif _on == PythonPickle.Opcode.get:
                pass
                self.arg = PythonPickle.DecimalLine(self._io, self, self._root)
            elif _on == PythonPickle.Opcode.global_opcode:
                pass
                self.arg = PythonPickle.GlobalPair(self._io, self, self._root)
            elif _on == PythonPickle.Opcode.inst:
                pass
                self.arg = PythonPickle.GlobalPair(self._io, self, self._root)
            elif _on == PythonPickle.Opcode.int:
                pass
                self.arg = PythonPickle.DecimalLine(self._io, self, self._root)
            elif _on == PythonPickle.Opcode.long:
                pass
                self.arg = PythonPickle.DecimalLine(self._io, self, self._root)
            elif _on == PythonPickle.Opcode.long1:
                pass
                self.arg = PythonPickle.BytesU1(self._io, self, self._root)
            elif _on == PythonPickle.Opcode.long4:
                pass
                self.arg = PythonPickle.BytesS4(self._io, self, self._root)
            elif _on == PythonPickle.Opcode.persid:
                pass
                self.arg = PythonPickle.TextLine(self._io, self, self._root)
            elif _on == PythonPickle.Opcode.put:
                pass
                self.arg = PythonPickle.DecimalLine(self._io, self, self._root)
            elif _on == PythonPickle.Opcode.short_binbytes:
                pass
                self.arg = PythonPickle.BytesU1(self._io, self, self._root)
            elif _on == PythonPickle.Opcode.short_binstring:
                pass
                self.arg = PythonPickle.BytesU1(self._io, self, self._root)
            elif _on == PythonPickle.Opcode.short_binunicode:
                pass
                self.arg = PythonPickle.UnicodeU1(self._io, self, self._root)
            elif _on == PythonPickle.Opcode.string:
                pass
                self.arg = PythonPickle.RawLine(self._io, self, self._root)
            elif _on == PythonPickle.Opcode.unicode:
                pass
                self.arg = PythonPickle.RawLine(self._io, self, self._root)
            _on = self.code
            if _on == PythonPickle.Opcode.binget:
                pass
                self.int_arg = self._io.read_u1()
            elif _on == PythonPickle.Opcode.binint:
                pass
                self.int_arg = self._io.read_s4le()
            elif _on == PythonPickle.Opcode.binint1:
                pass
                self.int_arg = self._io.read_u1()
            elif _on == PythonPickle.Opcode.binint2:
                pass
                self.int_arg = self._io.read_u2le()
            elif _on == PythonPickle.Opcode.binput:
                pass
                self.int_arg = self._io.read_u1()
            elif _on == PythonPickle.Opcode.ext1:
                pass
                self.int_arg = self._io.read_u1()
            elif _on == PythonPickle.Opcode.ext2:
                pass
                self.int_arg = self._io.read_u2le()
            elif _on == PythonPickle.Opcode.ext4:
                pass
                self.int_arg = self._io.read_s4le()
            elif _on == PythonPickle.Opcode.proto:
                pass
                self.int_arg = self._io.read_u1()
            if  ((self.code == PythonPickle.Opcode.long_binget) or (self.code == PythonPickle.Opcode.long_binput)) :
                pass
                self.u4_arg = self._io.read_u4le()

            if self.code == PythonPickle.Opcode.frame:
                pass
                self.u8_arg = self._io.read_u8le()

            if self.code == PythonPickle.Opcode.binfloat:
                pass
                self.float_arg = self._io.read_f8be()



        def _fetch_instances(self):
            pass
            _on = self.code
            if _on == PythonPickle.Opcode.binbytes:
                pass
                self.arg._fetch_instances()
            elif _on == PythonPickle.Opcode.binbytes8:
                pass
                self.arg._fetch_instances()
            elif _on == PythonPickle.Opcode.binstring:
                pass
                self.arg._fetch_instances()
            elif _on == PythonPickle.Opcode.binunicode:
                pass
                self.arg._fetch_instances()
            elif _on == PythonPickle.Opcode.binunicode8:
                pass
                self.arg._fetch_instances()
            elif _on == PythonPickle.Opcode.bytearray8:
                pass
                self.arg._fetch_instances()
            elif _on == PythonPickle.Opcode.float:
                pass
                self.arg._fetch_instances()
            elif _on == PythonPickle.Opcode.get:
                pass
                self.arg._fetch_instances()
            elif _on == PythonPickle.Opcode.global_opcode:
                pass
                self.arg._fetch_instances()
            elif _on == PythonPickle.Opcode.inst:
                pass
                self.arg._fetch_instances()
            elif _on == PythonPickle.Opcode.int:
                pass
                self.arg._fetch_instances()
            elif _on == PythonPickle.Opcode.long:
                pass
                self.arg._fetch_instances()
            elif _on == PythonPickle.Opcode.long1:
                pass
                self.arg._fetch_instances()
            elif _on == PythonPickle.Opcode.long4:
                pass
                self.arg._fetch_instances()
            elif _on == PythonPickle.Opcode.persid:
                pass
                self.arg._fetch_instances()
            elif _on == PythonPickle.Opcode.put:
                pass
                self.arg._fetch_instances()
            elif _on == PythonPickle.Opcode.short_binbytes:
                pass
                self.arg._fetch_instances()
            elif _on == PythonPickle.Opcode.short_binstring:
                pass
                self.arg._fetch_instances()
            elif _on == PythonPickle.Opcode.short_binunicode:
                pass
                self.arg._fetch_instances()
            elif _on == PythonPickle.Opcode.string:
                pass
                self.arg._fetch_instances()
            elif _on == PythonPickle.Opcode.unicode:
                pass
                self.arg._fetch_instances()
            _on = self.code
            if _on == PythonPickle.Opcode.binget:
                pass
            elif _on == PythonPickle.Opcode.binint:
                pass
            elif _on == PythonPickle.Opcode.binint1:
                pass
            elif _on == PythonPickle.Opcode.binint2:
                pass
            elif _on == PythonPickle.Opcode.binput:
                pass
            elif _on == PythonPickle.Opcode.ext1:
                pass
            elif _on == PythonPickle.Opcode.ext2:
                pass
            elif _on == PythonPickle.Opcode.ext4:
                pass
            elif _on == PythonPickle.Opcode.proto:
                pass
            if  ((self.code == PythonPickle.Opcode.long_binget) or (self.code == PythonPickle.Opcode.long_binput)) :
                pass

            if self.code == PythonPickle.Opcode.frame:
                pass

            if self.code == PythonPickle.Opcode.binfloat:
                pass



    class RawLine(KaitaiStruct):
        """A newline-terminated line kept as bytes: STRING's Python repr literal or UNICODE's
        raw-unicode-escape text, whose unescaping is left to the reader.
        
        .. seealso::
           spec/pickle.md#pickle-opcodes
        """
        def __init__(self, _io, _parent=None, _root=None):
            super(PythonPickle.RawLine, self).__init__(_io)
            self._parent = _parent
            self._root = _root
            self._read()

        def _read(self):
            self.value = self._io.read_bytes_term(10, False, True, True)


        def _fetch_instances(self):
            pass


    class TextLine(KaitaiStruct):
        """A newline-terminated line of UTF-8 text (PERSID's persistent id).
        
        .. seealso::
           spec/pickle.md#pickle-opcodes
        """
        def __init__(self, _io, _parent=None, _root=None):
            super(PythonPickle.TextLine, self).__init__(_io)
            self._parent = _parent
            self._root = _root
            self._read()

        def _read(self):
            self.value = (self._io.read_bytes_term(10, False, True, True)).decode(u"UTF-8")


        def _fetch_instances(self):
            pass


    class UnicodeU1(KaitaiStruct):
        """SHORT_BINUNICODE's str: UTF-8 bytes with a 1-byte length, kept as bytes.  The reader decodes them as
        UTF-8 allowing lone surrogates (Python's ``surrogatepass``), as CPython's unpickler does
        (spec/pickle.md#pickle-protocols); Kaitai's UTF-8 strings are strict and would refuse them.
        
        .. seealso::
           spec/pickle.md#pickle-protocols
        """
        def __init__(self, _io, _parent=None, _root=None):
            super(PythonPickle.UnicodeU1, self).__init__(_io)
            self._parent = _parent
            self._root = _root
            self._read()

        def _read(self):
            self.len = self._io.read_u1()
            self.value = self._io.read_bytes(self.len)


        def _fetch_instances(self):
            pass


    class UnicodeU4(KaitaiStruct):
        """BINUNICODE's str: UTF-8 bytes with a 4-byte length, kept as bytes.  The reader decodes them as
        UTF-8 allowing lone surrogates (Python's ``surrogatepass``), as CPython's unpickler does
        (spec/pickle.md#pickle-protocols); Kaitai's UTF-8 strings are strict and would refuse them.
        
        .. seealso::
           spec/pickle.md#pickle-protocols
        """
        def __init__(self, _io, _parent=None, _root=None):
            super(PythonPickle.UnicodeU4, self).__init__(_io)
            self._parent = _parent
            self._root = _root
            self._read()

        def _read(self):
            self.len = self._io.read_u4le()
            self.value = self._io.read_bytes(self.len)


        def _fetch_instances(self):
            pass


    class UnicodeU8(KaitaiStruct):
        """BINUNICODE8's str: UTF-8 bytes with an 8-byte length, kept as bytes.  The reader decodes them as
        UTF-8 allowing lone surrogates (Python's ``surrogatepass``), as CPython's unpickler does
        (spec/pickle.md#pickle-protocols); Kaitai's UTF-8 strings are strict and would refuse them.
        
        .. seealso::
           spec/pickle.md#pickle-protocols
        """
        def __init__(self, _io, _parent=None, _root=None):
            super(PythonPickle.UnicodeU8, self).__init__(_io)
            self._parent = _parent
            self._root = _root
            self._read()

        def _read(self):
            self.len = self._io.read_u8le()
            self.value = self._io.read_bytes(self.len)


        def _fetch_instances(self):
            pass



