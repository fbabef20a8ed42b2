meta:
  id: torch_t7
  title: Lua Torch7 serialized object stream (binary mode)
  application: Lua Torch7 (torch.save, torch.load, File:writeObject, File:readObject)
  file-extension: [t7, th, net, dat]
  license: BSD-3-Clause
  ks-version: 0.11
doc: |
  A .t7 file is the byte stream that torch7's File:writeObject wrote: one or more objects, each a
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
doc-ref: spec/t7.md#t7-binary
instances:
  le_long8:
    doc: The stream read as little-endian with 8-byte longs (torch.save on 64-bit Linux/macOS).
    doc-ref: spec/t7.md#t7-encodings
    pos: 0
    type: stream(8, false)
  le_long4:
    doc: The stream read as little-endian with 4-byte longs (32-bit builds, Windows, DiskFile:longSize(4)).
    doc-ref: spec/t7.md#t7-long-size
    pos: 0
    type: stream(4, false)
  be_long8:
    doc: The stream read as big-endian with 8-byte longs (DiskFile:bigEndianEncoding()).
    doc-ref: spec/t7.md#t7-byte-order
    pos: 0
    type: stream(8, true)
  be_long4:
    doc: The stream read as big-endian with 4-byte longs.
    doc-ref: spec/t7.md#t7-byte-order
    pos: 0
    type: stream(4, true)
types:
  stream:
    doc: |
      The objects of one binary encoding, to the end of the file.  Several objects follow each other
      when the writer called writeObject more than once on one File; they share one index space.
    doc-ref: spec/t7.md#t7-stream
    params:
      - id: long_size
        type: u1
        doc: Width of a C long in bytes, 4 or 8.
      - id: is_big_endian
        type: bool
        doc: True for DiskFile:bigEndianEncoding(); every multi-byte scalar is then byte-swapped.
    meta:
      endian:
        switch-on: is_big_endian
        cases:
          true: be
          false: le
    seq:
      - id: objects
        type: 't7_object(long_size, _index == 0 ? 0 : objects[_index - 1].last_index)'
        repeat: eos
        doc: The top-level objects in file order.
    types:
      t7_object:
        doc: One serialized object, File:writeObject's unit; `last_index` is the highest reference index after it.
        doc-ref: spec/t7.md#t7-type-codes
        params:
          - id: long_size
            type: u1
          - id: max_index
            type: s4
            doc: The highest reference index the stream used before this object (0 at the start).
        seq:
          - id: type_code
            type: s4
            enum: type_code
            valid:
              in-enum: true
          - id: number
            type: f8
            if: type_code == type_code::number
            doc-ref: spec/t7.md#t7-number
            doc: A Lua number, always a double.
          - id: lua_boolean
            type: s4
            if: type_code == type_code::boolean
            doc-ref: spec/t7.md#t7-boolean
            doc: 1 is true; torch reads anything else as false, and writes only 0 or 1.
          - id: string
            type: lua_string
            if: type_code == type_code::string
            doc-ref: spec/t7.md#t7-string
          - id: lua_function
            type: function_body(long_size, max_index)
            if: type_code == type_code::lua_function
            doc-ref: spec/t7.md#t7-function
            doc: Type 6, the oldest function encoding, has no reference index.
          - id: indexed
            type: indexed(type_code, long_size, max_index)
            if: |
              type_code == type_code::table or type_code == type_code::torch
              or type_code == type_code::recur_function or type_code == type_code::legacy_recur_function
            doc-ref: spec/t7.md#t7-reference-index
        instances:
          last_index:
            value: |
              (
              type_code == type_code::lua_function ? lua_function.last_index
              : (type_code == type_code::table or type_code == type_code::torch
                 or type_code == type_code::recur_function or type_code == type_code::legacy_recur_function)
                ? indexed.last_index : max_index
              ).as<s4>
            doc: The highest reference index used once this object has been read.
      indexed:
        doc: |
          A table, torch object or type 7/8 function: the reference index, then the payload the first
          time the object occurs, nothing for a back-reference.
        doc-ref: spec/t7.md#t7-reference-index
        params:
          - id: type_code
            type: s4
            enum: type_code
          - id: long_size
            type: u1
          - id: max_index
            type: s4
        seq:
          - id: index
            type: s4
            valid:
              min: 1
              max: max_index + 1
            doc: 1-based; at most max_index names an object already read, max_index + 1 starts a new one.
          - id: table
            type: table_body(long_size, index)
            if: is_new and type_code == type_code::table
            doc-ref: spec/t7.md#t7-table
          - id: torch
            type: torch_object(long_size, index)
            if: is_new and type_code == type_code::torch
            doc-ref: spec/t7.md#t7-torch-object
          - id: lua_function
            type: function_body(long_size, index)
            if: is_new and (type_code == type_code::recur_function or type_code == type_code::legacy_recur_function)
            doc-ref: spec/t7.md#t7-function
        instances:
          is_new:
            value: index > max_index
            doc: False for a back-reference to an object read earlier in the stream.
          last_index:
            value: |
              (
              not is_new ? max_index
              : type_code == type_code::table ? table.last_index
              : type_code == type_code::torch ? torch.last_index
              : lua_function.last_index
              ).as<s4>
      lua_string:
        doc: A Lua string, an int32 length and the bytes (any bytes; not necessarily UTF-8).
        doc-ref: spec/t7.md#t7-string
        seq:
          - id: len
            type: s4
            valid:
              min: 0
          - id: value
            size: len
      table_body:
        doc: A Lua table, an int32 count of key/value pairs and the pairs (in the writer's `pairs` order).
        doc-ref: spec/t7.md#t7-table
        params:
          - id: long_size
            type: u1
          - id: index
            type: s4
            doc: The table's own reference index.
        seq:
          - id: num_pairs
            type: s4
            valid:
              min: 0
          - id: pairs
            type: 'key_value(long_size, _index == 0 ? index : pairs[_index - 1].last_index)'
            repeat: expr
            repeat-expr: num_pairs
        instances:
          last_index:
            value: '(num_pairs == 0 ? index : pairs.last.last_index).as<s4>'
      key_value:
        doc: One key object and one value object.
        doc-ref: spec/t7.md#t7-table
        params:
          - id: long_size
            type: u1
          - id: max_index
            type: s4
        seq:
          - id: key
            type: t7_object(long_size, max_index)
          - id: value
            type: t7_object(long_size, key.last_index)
        instances:
          last_index:
            value: '(value.last_index).as<s4>'
      function_body:
        doc: |
          A Lua function: its string.dump bytecode (VM-specific: LuaJIT or PUC Lua; opaque, never run) and
          one object holding the upvalues: for type 8 a list of {name=, value=[, id=]} tables, for types
          6 and 7 the bare values.
        doc-ref: spec/t7.md#t7-function
        params:
          - id: long_size
            type: u1
          - id: index
            type: s4
        seq:
          - id: len_bytecode
            type: s4
            valid:
              min: 0
          - id: bytecode
            size: len_bytecode
          - id: upvalues
            type: t7_object(long_size, index)
        instances:
          last_index:
            value: '(upvalues.last_index).as<s4>'
      torch_object:
        doc: |
          A torch class instance: "V <version>" and the class name (or, in files older than versioning,
          only the class name), then the class's payload.
        doc-ref: spec/t7.md#t7-torch-object
        params:
          - id: long_size
            type: u1
          - id: index
            type: s4
        seq:
          - id: version_or_class
            type: ascii_string
            doc-ref: spec/t7.md#t7-class-version
          - id: class_after_version
            type: ascii_string
            if: has_version
          - id: payload
            type:
              switch-on: class_name
              cases:
                '"torch.ByteTensor"': tensor(long_size, index)
                '"torch.CharTensor"': tensor(long_size, index)
                '"torch.ShortTensor"': tensor(long_size, index)
                '"torch.IntTensor"': tensor(long_size, index)
                '"torch.LongTensor"': tensor(long_size, index)
                '"torch.FloatTensor"': tensor(long_size, index)
                '"torch.DoubleTensor"': tensor(long_size, index)
                '"torch.HalfTensor"': tensor(long_size, index)
                '"torch.CudaByteTensor"': tensor(long_size, index)
                '"torch.CudaCharTensor"': tensor(long_size, index)
                '"torch.CudaShortTensor"': tensor(long_size, index)
                '"torch.CudaIntTensor"': tensor(long_size, index)
                '"torch.CudaLongTensor"': tensor(long_size, index)
                '"torch.CudaTensor"': tensor(long_size, index)
                '"torch.CudaDoubleTensor"': tensor(long_size, index)
                '"torch.CudaHalfTensor"': tensor(long_size, index)
                '"torch.ByteStorage"': storage(long_size, 1)
                '"torch.CharStorage"': storage(long_size, 1)
                '"torch.ShortStorage"': storage(long_size, 2)
                '"torch.IntStorage"': storage(long_size, 4)
                '"torch.LongStorage"': storage(long_size, long_size)
                '"torch.FloatStorage"': storage(long_size, 4)
                '"torch.DoubleStorage"': storage(long_size, 8)
                '"torch.HalfStorage"': storage(long_size, 2)
                '"torch.CudaByteStorage"': storage(long_size, 1)
                '"torch.CudaCharStorage"': storage(long_size, 1)
                '"torch.CudaShortStorage"': storage(long_size, 2)
                '"torch.CudaIntStorage"': storage(long_size, 4)
                '"torch.CudaLongStorage"': storage(long_size, long_size)
                '"torch.CudaStorage"': storage(long_size, 4)
                '"torch.CudaDoubleStorage"': storage(long_size, 8)
                '"torch.CudaHalfStorage"': storage(long_size, 2)
                '"tds.Hash"': tds_hash(long_size, index)
                '"tds.Vec"': tds_vec(long_size, index)
                _: t7_object(long_size, index)
            doc: |
              Tensor and Storage classes have their own layouts; tds.Hash and tds.Vec too; every other
              class is one object, normally the table of its fields.
        instances:
          has_version:
            value: version_or_class.value.length >= 2 and version_or_class.value.substring(0, 2) == "V "
            doc: False in files written before torch7 versioned classes (the version is then 0).
            doc-ref: spec/t7.md#t7-class-version
          class_name:
            value: 'has_version ? class_after_version.value : version_or_class.value'
            doc: The torch class name, e.g. torch.FloatTensor or nn.Linear.
          version:
            value: 'has_version ? version_or_class.value.substring(2, version_or_class.value.length) : ""'
            doc: The text after "V " ("1", "1.0" under Lua 5.3), empty when the file has none.
            doc-ref: spec/t7.md#t7-class-version
          is_tensor:
            value: class_name.substring(0, 6) == "torch." and class_name.length > 12 and class_name.substring(class_name.length - 6, class_name.length) == "Tensor"
          is_storage:
            value: class_name.substring(0, 6) == "torch." and class_name.length > 13 and class_name.substring(class_name.length - 7, class_name.length) == "Storage"
          is_tds:
            value: class_name == "tds.Hash" or class_name == "tds.Vec"
          last_index:
            value: |
              (
              is_tensor ? payload.as<tensor>.last_index
              : is_storage ? index
              : class_name == "tds.Hash" ? payload.as<tds_hash>.last_index
              : class_name == "tds.Vec" ? payload.as<tds_vec>.last_index
              : payload.as<t7_object>.last_index
              ).as<s4>
      ascii_string:
        doc: A class name or version string, an int32 length and ASCII text.
        doc-ref: spec/t7.md#t7-class-version
        seq:
          - id: len
            type: s4
            valid:
              min: 0
          - id: value
            type: str
            encoding: ASCII
            size: len
      c_long:
        doc: A C long of the encoding's width.
        doc-ref: spec/t7.md#t7-long-size
        params:
          - id: long_size
            type: u1
        seq:
          - id: value
            type:
              switch-on: long_size
              cases:
                4: s4
                8: s8
      tensor:
        doc: |
          torch.*Tensor's payload (Tensor.c write): the number of dimensions, the sizes and strides as
          longs, the 1-based storage offset as a long, then the storage as one object (a Storage
          torch object, a back-reference to one, or nil for a tensor without storage).
        doc-ref: spec/t7.md#t7-tensor
        params:
          - id: long_size
            type: u1
          - id: index
            type: s4
        seq:
          - id: num_dims
            type: s4
            valid:
              min: 0
          - id: sizes
            type: c_long(long_size)
            repeat: expr
            repeat-expr: num_dims
          - id: strides
            type: c_long(long_size)
            repeat: expr
            repeat-expr: num_dims
          - id: storage_offset
            type: c_long(long_size)
            doc: 1-based, as Lua counts; the element offset is this minus one.
            doc-ref: spec/t7.md#t7-tensor-offset
          - id: storage
            type: t7_object(long_size, index)
        instances:
          last_index:
            value: '(storage.last_index).as<s4>'
      storage:
        doc: |
          torch.*Storage's payload (Storage.c write): the element count as a long and the raw elements,
          in the encoding's byte order.  LongStorage elements are as wide as the encoding's long.
        doc-ref: spec/t7.md#t7-storage
        params:
          - id: long_size
            type: u1
          - id: element_size
            type: u1
        seq:
          - id: num_elements
            type: c_long(long_size)
            valid:
              expr: _.value >= 0
            doc: The element count; a negative count is malformed.
            doc-ref: spec/t7.md#t7-storage
          - id: data
            size: num_elements.value * element_size
            doc: The raw elements; a 64-bit reader maps them, it does not copy.
      tds_hash:
        doc: "tds.Hash payload (tds hash.lua __write): a long count, then key and value objects."
        doc-ref: spec/t7.md#t7-tds
        params:
          - id: long_size
            type: u1
          - id: index
            type: s4
        seq:
          - id: num_pairs
            type: c_long(long_size)
            valid:
              expr: _.value >= 0
            doc: The pair count; a negative count is malformed (and `pairs.last` would have no pair).
          - id: pairs
            type: 'key_value(long_size, _index == 0 ? index : pairs[_index - 1].last_index)'
            repeat: expr
            repeat-expr: num_pairs.value
        instances:
          last_index:
            value: '(num_pairs.value == 0 ? index : pairs.last.last_index).as<s4>'
      tds_vec:
        doc: "tds.Vec payload (tds vec.lua __write): a long count, then the element objects in order."
        doc-ref: spec/t7.md#t7-tds
        params:
          - id: long_size
            type: u1
          - id: index
            type: s4
        seq:
          - id: num_items
            type: c_long(long_size)
            valid:
              expr: _.value >= 0
            doc: The item count; a negative count is malformed (and `items.last` would have no item).
          - id: items
            type: 't7_object(long_size, _index == 0 ? index : items[_index - 1].last_index)'
            repeat: expr
            repeat-expr: num_items.value
        instances:
          last_index:
            value: '(num_items.value == 0 ? index : items.last.last_index).as<s4>'
enums:
  type_code:
    0:
      id: lua_nil
      doc: Lua nil; no payload
      doc-ref: spec/t7.md#t7-nil
    1:
      id: number
      doc: a double
      doc-ref: spec/t7.md#t7-number
    2:
      id: string
      doc: int32 length and bytes
      doc-ref: spec/t7.md#t7-string
    3:
      id: table
      doc: index, then int32 count and key/value object pairs
      doc-ref: spec/t7.md#t7-table
    4:
      id: torch
      doc: index, then version, class name and the class payload
      doc-ref: spec/t7.md#t7-torch-object
    5:
      id: boolean
      doc: int32, 1 for true
      doc-ref: spec/t7.md#t7-boolean
    6:
      id: lua_function
      doc: legacy function without index; bytecode and upvalue values
      doc-ref: spec/t7.md#t7-function
    7:
      id: legacy_recur_function
      doc: legacy function with index; bytecode and upvalue values
      doc-ref: spec/t7.md#t7-function
    8:
      id: recur_function
      doc: index, bytecode and a list of {name, value} upvalue records
      doc-ref: spec/t7.md#t7-function
