meta:
  id: python_pickle
  title: Python pickle program (protocols 0 to 5)
  file-extension: [pkl, pickle]
  license: BSD-3-Clause
  ks-version: 0.11
  endian: le
doc: |
  A pickle is a program for a small stack machine: a sequence of opcodes, each one byte followed by an
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
doc-ref: spec/pickle.md#pickle-opcodes
seq:
  - id: ops
    type: op
    repeat: until
    repeat-until: _.code == opcode::stop
    doc: The opcodes up to and including STOP.
types:
  op:
    doc: One opcode and its argument.
    doc-ref: spec/pickle.md#pickle-opcodes
    seq:
      - id: code
        type: u1
        enum: opcode
        valid:
          in-enum: true
      - id: arg
        doc: |
          The argument of the opcodes whose argument is a structure (lines, length-prefixed bytes); the
          number arguments are `int_arg`, `u4_arg`, `u8_arg` and `float_arg`.  One switch mixing number and user types has
          no common type in C++ (kaitai-struct-compiler 0.11's cpp_stl refuses it), so there are three.
        type:
          switch-on: code
          cases:
            # protocol 0 text arguments
            opcode::int: decimal_line
            opcode::long: decimal_line
            opcode::float: decimal_line
            opcode::get: decimal_line
            opcode::put: decimal_line
            opcode::string: raw_line
            opcode::unicode: raw_line
            opcode::persid: text_line
            opcode::global_opcode: global_pair
            opcode::inst: global_pair
            # length-prefixed integers (two's complement, little-endian)
            opcode::long1: bytes_u1
            opcode::long4: bytes_s4
            # length-prefixed byte strings
            opcode::short_binstring: bytes_u1
            opcode::binstring: bytes_s4
            opcode::short_binbytes: bytes_u1
            opcode::binbytes: bytes_u4
            opcode::binbytes8: bytes_u8
            opcode::bytearray8: bytes_u8
            # length-prefixed UTF-8 strings (kept as bytes; the reader decodes them)
            opcode::short_binunicode: unicode_u1
            opcode::binunicode: unicode_u4
            opcode::binunicode8: unicode_u8
      - id: int_arg
        doc: |
          The integer argument that fits a signed 32-bit integer (memo keys of BINGET/BINPUT, BININT*,
          EXT*, PROTO).  The wider ones are `u4_arg` and `u8_arg`: the compiler gives a switch over
          integer types one type, int32 in C++ and Java, which would cut them.
        type:
          switch-on: code
          cases:
            opcode::binint: s4
            opcode::binint1: u1
            opcode::binint2: u2
            opcode::binget: u1
            opcode::binput: u1
            opcode::ext1: u1
            opcode::ext2: u2
            opcode::ext4: s4
            opcode::proto: u1
      - id: u4_arg
        doc: LONG_BINGET's and LONG_BINPUT's unsigned 4-byte memo key.
        type: u4
        if: code == opcode::long_binget or code == opcode::long_binput
      - id: u8_arg
        doc: FRAME's 8-byte length.
        type: u8
        if: code == opcode::frame
      - id: float_arg
        doc: BINFLOAT's 8-byte big-endian IEEE 754 double.
        type: f8be
        if: code == opcode::binfloat
  decimal_line:
    doc: A protocol 0 decimal (INT, LONG with its trailing 'L', FLOAT, GET, PUT) ending in a newline.
    doc-ref: spec/pickle.md#pickle-opcodes
    seq:
      - id: value
        type: str
        encoding: ASCII
        terminator: 10
  text_line:
    doc: A newline-terminated line of UTF-8 text (PERSID's persistent id).
    doc-ref: spec/pickle.md#pickle-opcodes
    seq:
      - id: value
        type: str
        encoding: UTF-8
        terminator: 10
  raw_line:
    doc: |
      A newline-terminated line kept as bytes: STRING's Python repr literal or UNICODE's
      raw-unicode-escape text, whose unescaping is left to the reader.
    doc-ref: spec/pickle.md#pickle-opcodes
    seq:
      - id: value
        terminator: 10
  global_pair:
    doc: GLOBAL's and INST's two newline-terminated lines, module then qualified name.
    doc-ref: spec/pickle.md#pickle-globals
    seq:
      - id: module_name
        type: str
        encoding: UTF-8
        terminator: 10
      - id: name
        type: str
        encoding: UTF-8
        terminator: 10
  bytes_u1:
    doc: Bytes with a 1-byte length (SHORT_BINSTRING, SHORT_BINBYTES, LONG1).
    doc-ref: spec/pickle.md#pickle-opcodes
    seq:
      - id: len
        type: u1
      - id: value
        size: len
  bytes_s4:
    doc: Bytes with a signed 4-byte length (BINSTRING, LONG4); a negative length is malformed.
    doc-ref: spec/pickle.md#pickle-opcodes
    seq:
      - id: len
        type: s4
        valid:
          min: 0
      - id: value
        size: len
  bytes_u4:
    doc: Bytes with an unsigned 4-byte length (BINBYTES).
    doc-ref: spec/pickle.md#pickle-opcodes
    seq:
      - id: len
        type: u4
      - id: value
        size: len
  bytes_u8:
    doc: Bytes with an 8-byte length (BINBYTES8, BYTEARRAY8).
    doc-ref: spec/pickle.md#pickle-opcodes
    seq:
      - id: len
        type: u8
      - id: value
        size: len
  unicode_u1:
    doc: |
      SHORT_BINUNICODE's str: UTF-8 bytes with a 1-byte length, kept as bytes.  The reader decodes them as
      UTF-8 allowing lone surrogates (Python's ``surrogatepass``), as CPython's unpickler does
      (spec/pickle.md#pickle-protocols); Kaitai's UTF-8 strings are strict and would refuse them.
    doc-ref: spec/pickle.md#pickle-protocols
    seq:
      - id: len
        type: u1
      - id: value
        size: len
        doc: The UTF-8 bytes, undecoded (surrogatepass, spec/pickle.md#pickle-protocols).
  unicode_u4:
    doc: |
      BINUNICODE's str: UTF-8 bytes with a 4-byte length, kept as bytes.  The reader decodes them as
      UTF-8 allowing lone surrogates (Python's ``surrogatepass``), as CPython's unpickler does
      (spec/pickle.md#pickle-protocols); Kaitai's UTF-8 strings are strict and would refuse them.
    doc-ref: spec/pickle.md#pickle-protocols
    seq:
      - id: len
        type: u4
      - id: value
        size: len
        doc: The UTF-8 bytes, undecoded (surrogatepass, spec/pickle.md#pickle-protocols).
  unicode_u8:
    doc: |
      BINUNICODE8's str: UTF-8 bytes with an 8-byte length, kept as bytes.  The reader decodes them as
      UTF-8 allowing lone surrogates (Python's ``surrogatepass``), as CPython's unpickler does
      (spec/pickle.md#pickle-protocols); Kaitai's UTF-8 strings are strict and would refuse them.
    doc-ref: spec/pickle.md#pickle-protocols
    seq:
      - id: len
        type: u8
      - id: value
        size: len
        doc: The UTF-8 bytes, undecoded (surrogatepass, spec/pickle.md#pickle-protocols).
enums:
  opcode:
    0x28:
      id: mark
      doc: push the mark object
    0x29:
      id: empty_tuple
      doc: push ()
    0x2e:
      id: stop
      doc: end of the pickle; the top of the stack is the result
    0x30:
      id: pop
      doc: discard the top of the stack
    0x31:
      id: pop_mark
      doc: discard the stack down to and including the topmost mark
    0x32:
      id: dup
      doc: push the top of the stack again
    0x42:
      id: binbytes
      doc: push bytes, 4-byte length
    0x43:
      id: short_binbytes
      doc: push bytes, 1-byte length
    0x46:
      id: float
      doc: push a float written as a decimal line
    0x47:
      id: binfloat
      doc: push a float, 8-byte big-endian IEEE 754
    0x49:
      id: int
      doc: push an int (or bool as 00/01) written as a decimal line
    0x4a:
      id: binint
      doc: push a signed 4-byte int
    0x4b:
      id: binint1
      doc: push an unsigned 1-byte int
    0x4c:
      id: long
      doc: push an int written as a decimal line with a trailing L
    0x4d:
      id: binint2
      doc: push an unsigned 2-byte int
    0x4e:
      id: none
      doc: push None
    0x50:
      id: persid
      doc: push the persistent object named by a text line
    0x51:
      id: binpersid
      doc: push the persistent object named by the top of the stack
    0x52:
      id: reduce
      doc: call a callable with an argument tuple (never run by this grammar)
    0x53:
      id: string
      doc: push a str from a quoted repr line
    0x54:
      id: binstring
      doc: push a str from bytes, 4-byte length
    0x55:
      id: short_binstring
      doc: push a str from bytes, 1-byte length
    0x56:
      id: unicode
      doc: push a str from a raw-unicode-escape line
    0x58:
      id: binunicode
      doc: push a str, UTF-8 with a 4-byte length
    0x5d:
      id: empty_list
      doc: push []
    0x61:
      id: append
      doc: append the top of the stack to the list below it
    0x62:
      id: build
      doc: set an object's state
    0x63:
      id: global_opcode
      doc: push module.name given as two lines (spelled global_opcode since `global` is a Python keyword and the compiler escapes none)
    0x64:
      id: dict
      doc: build a dict from the items above the mark
    0x65:
      id: appends
      doc: extend a list with the items above the mark
    0x67:
      id: get
      doc: push a memo entry, key as a decimal line
    0x68:
      id: binget
      doc: push a memo entry, 1-byte key
    0x69:
      id: inst
      doc: build a class instance from module.name lines and the items above the mark
    0x6a:
      id: long_binget
      doc: push a memo entry, 4-byte key
    0x6c:
      id: list
      doc: build a list from the items above the mark
    0x6f:
      id: obj
      doc: build a class instance from the items above the mark
    0x70:
      id: put
      doc: store the top of the stack in the memo, key as a decimal line
    0x71:
      id: binput
      doc: store the top of the stack in the memo, 1-byte key
    0x72:
      id: long_binput
      doc: store the top of the stack in the memo, 4-byte key
    0x73:
      id: setitem
      doc: set one key in the dict below
    0x74:
      id: tuple_opcode
      doc: build a tuple from the items above the mark (spelled tuple_opcode since `tuple` is a Nim keyword)
    0x75:
      id: setitems
      doc: set the key/value pairs above the mark in the dict below
    0x7d:
      id: empty_dict
      doc: push {}
    0x80:
      id: proto
      doc: the protocol version, first opcode of protocols 2 and above
    0x81:
      id: newobj
      doc: cls.__new__(cls, *args)
    0x82:
      id: ext1
      doc: push an object from the extension registry, 1-byte code
    0x83:
      id: ext2
      doc: push an object from the extension registry, 2-byte code
    0x84:
      id: ext4
      doc: push an object from the extension registry, 4-byte code
    0x85:
      id: tuple1
      doc: build a 1-tuple from the top of the stack
    0x86:
      id: tuple2
      doc: build a 2-tuple from the top two items
    0x87:
      id: tuple3
      doc: build a 3-tuple from the top three items
    0x88:
      id: newtrue
      doc: push True
    0x89:
      id: newfalse
      doc: push False
    0x8a:
      id: long1
      doc: push an int, little-endian two's complement with a 1-byte length
    0x8b:
      id: long4
      doc: push an int, little-endian two's complement with a 4-byte length
    0x8c:
      id: short_binunicode
      doc: push a str, UTF-8 with a 1-byte length
    0x8d:
      id: binunicode8
      doc: push a str, UTF-8 with an 8-byte length
    0x8e:
      id: binbytes8
      doc: push bytes, 8-byte length
    0x8f:
      id: empty_set
      doc: push set()
    0x90:
      id: additems
      doc: add the items above the mark to the set below
    0x91:
      id: frozenset
      doc: build a frozenset from the items above the mark
    0x92:
      id: newobj_ex
      doc: cls.__new__(cls, *args, **kwargs)
    0x93:
      id: stack_global
      doc: push module.name taken from the top two strings of the stack
    0x94:
      id: memoize
      doc: store the top of the stack under the next memo key
    0x95:
      id: frame
      doc: start of a frame of the given 8-byte length (protocol 4 buffering)
    0x96:
      id: bytearray8
      doc: push a bytearray, 8-byte length
    0x97:
      id: next_buffer
      doc: push the next out-of-band buffer
    0x98:
      id: readonly_buffer
      doc: make the buffer on the top of the stack read-only
