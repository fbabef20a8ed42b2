meta:
  id: torch_t7_ascii
  title: Lua Torch7 serialized object stream (ascii mode)
  application: Lua Torch7 (torch.save(f, x, 'ascii'), File:ascii())
  file-extension: [t7, th, net, ascii]
  license: BSD-3-Clause
  ks-version: 0.11
doc: |
  The ascii mode of torch7's File writes the same object grammar as the binary mode (torch_t7.ksy),
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
doc-ref: spec/t7.md#t7-ascii
seq:
  - id: objects
    type: 't7_object(_index == 0 ? 0 : objects[_index - 1].last_index)'
    repeat: eos
    doc: The top-level objects in file order.
    doc-ref: spec/t7.md#t7-stream
types:
  t7_object:
    doc: One serialized object; `last_index` is the highest reference index after it.
    doc-ref: spec/t7.md#t7-type-codes
    params:
      - id: max_index
        type: s4
        doc: The highest reference index the stream used before this object (0 at the start).
    seq:
      - id: type_code_token
        type: str
        encoding: ASCII
        terminator: 10
        valid:
          any-of: ['"0"', '"1"', '"2"', '"3"', '"4"', '"5"', '"6"', '"7"', '"8"']
      - id: number
        type: token_line
        if: type_code == type_code::number
        doc: A double as text ("%.17g"; inf, -inf, nan or -nan spelled so).
        doc-ref: spec/t7.md#t7-number
      - id: lua_boolean
        type: int_line
        if: type_code == type_code::boolean
        doc-ref: spec/t7.md#t7-boolean
      - id: string
        type: lua_string
        if: type_code == type_code::string
        doc-ref: spec/t7.md#t7-string
      - id: lua_function
        type: function_body(max_index)
        if: type_code == type_code::lua_function
        doc-ref: spec/t7.md#t7-function
      - id: indexed
        type: indexed(type_code, max_index)
        if: |
          type_code == type_code::table or type_code == type_code::torch
          or type_code == type_code::recur_function or type_code == type_code::legacy_recur_function
        doc-ref: spec/t7.md#t7-reference-index
    instances:
      type_code:
        value: type_code_token.to_i
        enum: type_code
      last_index:
        value: |
          (
          type_code == type_code::lua_function ? lua_function.last_index
          : (type_code == type_code::table or type_code == type_code::torch
             or type_code == type_code::recur_function or type_code == type_code::legacy_recur_function)
            ? indexed.last_index : max_index
          ).as<s4>
  indexed:
    doc: A table, torch object or type 7/8 function (see torch_t7.ksy for the index rule).
    doc-ref: spec/t7.md#t7-reference-index
    params:
      - id: type_code
        type: s4
        enum: type_code
      - id: max_index
        type: s4
    seq:
      - id: index_line
        type: int_line
        valid:
          expr: _.value >= 1 and _.value <= max_index + 1
      - id: table
        type: table_body(index)
        if: is_new and type_code == type_code::table
        doc-ref: spec/t7.md#t7-table
      - id: torch
        type: torch_object(index)
        if: is_new and type_code == type_code::torch
        doc-ref: spec/t7.md#t7-torch-object
      - id: lua_function
        type: function_body(index)
        if: is_new and (type_code == type_code::recur_function or type_code == type_code::legacy_recur_function)
        doc-ref: spec/t7.md#t7-function
    instances:
      index:
        value: index_line.value.as<s4>
      is_new:
        value: index > max_index
      last_index:
        value: |
          (
          not is_new ? max_index
          : type_code == type_code::table ? table.last_index
          : type_code == type_code::torch ? torch.last_index
          : lua_function.last_index
          ).as<s4>
  token_line:
    doc: One token on its own line.
    doc-ref: spec/t7.md#t7-ascii
    seq:
      - id: text
        type: str
        encoding: ASCII
        terminator: 10
  int_line:
    doc: An integer token on its own line.
    doc-ref: spec/t7.md#t7-ascii
    seq:
      - id: text
        type: str
        encoding: ASCII
        terminator: 10
    instances:
      value:
        value: text.to_i
  token_array:
    doc: |
      num_items tokens on one line, separated by single spaces and ended by a newline; nothing at all
      when num_items is 0.
    doc-ref: spec/t7.md#t7-ascii
    params:
      - id: num_items
        type: s8
    seq:
      - id: leading
        type: str
        encoding: ASCII
        terminator: 32
        repeat: expr
        repeat-expr: num_items - 1
        if: num_items > 1
      - id: last_token
        type: str
        encoding: ASCII
        terminator: 10
        if: num_items > 0
  lua_string:
    doc: A string, its byte count token and the raw bytes, then a newline unless it is empty.
    doc-ref: spec/t7.md#t7-string
    seq:
      - id: len
        type: int_line
        valid:
          expr: _.value >= 0
      - id: value
        size: len.value
      - id: newline
        contents: [10]
        if: len.value > 0
  ascii_string:
    doc: A class name or version string (a string read as ASCII text).
    doc-ref: spec/t7.md#t7-class-version
    seq:
      - id: len
        type: int_line
        valid:
          expr: _.value >= 0
      - id: value
        type: str
        encoding: ASCII
        size: len.value
      - id: newline
        contents: [10]
        if: len.value > 0
  table_body:
    doc: A Lua table, the pair count and the pairs.
    doc-ref: spec/t7.md#t7-table
    params:
      - id: index
        type: s4
    seq:
      - id: num_pairs
        type: int_line
        valid:
          expr: _.value >= 0
      - id: pairs
        type: 'key_value(_index == 0 ? index : pairs[_index - 1].last_index)'
        repeat: expr
        repeat-expr: num_pairs.value
    instances:
      last_index:
        value: '(num_pairs.value == 0 ? index : pairs.last.last_index).as<s4>'
  key_value:
    doc: One key object and one value object.
    doc-ref: spec/t7.md#t7-table
    params:
      - id: max_index
        type: s4
    seq:
      - id: key
        type: t7_object(max_index)
      - id: value
        type: t7_object(key.last_index)
    instances:
      last_index:
        value: (value.last_index).as<s4>
  function_body:
    doc: A Lua function, its bytecode (raw bytes, like a string) and the upvalues object.
    doc-ref: spec/t7.md#t7-function
    params:
      - id: index
        type: s4
    seq:
      - id: bytecode
        type: lua_string
      - id: upvalues
        type: t7_object(index)
    instances:
      last_index:
        value: (upvalues.last_index).as<s4>
  torch_object:
    doc: A torch class instance, its version and class name, then the class payload.
    doc-ref: spec/t7.md#t7-torch-object
    params:
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
                '"torch.ByteTensor"': tensor(index)
                '"torch.CharTensor"': tensor(index)
                '"torch.ShortTensor"': tensor(index)
                '"torch.IntTensor"': tensor(index)
                '"torch.LongTensor"': tensor(index)
                '"torch.FloatTensor"': tensor(index)
                '"torch.DoubleTensor"': tensor(index)
                '"torch.HalfTensor"': tensor(index)
                '"torch.CudaByteTensor"': tensor(index)
                '"torch.CudaCharTensor"': tensor(index)
                '"torch.CudaShortTensor"': tensor(index)
                '"torch.CudaIntTensor"': tensor(index)
                '"torch.CudaLongTensor"': tensor(index)
                '"torch.CudaTensor"': tensor(index)
                '"torch.CudaDoubleTensor"': tensor(index)
                '"torch.CudaHalfTensor"': tensor(index)
                '"torch.ByteStorage"': storage(true)
                '"torch.CharStorage"': storage(true)
                '"torch.ShortStorage"': storage(false)
                '"torch.IntStorage"': storage(false)
                '"torch.LongStorage"': storage(false)
                '"torch.FloatStorage"': storage(false)
                '"torch.DoubleStorage"': storage(false)
                '"torch.HalfStorage"': storage(false)
                '"torch.CudaByteStorage"': storage(true)
                '"torch.CudaCharStorage"': storage(true)
                '"torch.CudaShortStorage"': storage(false)
                '"torch.CudaIntStorage"': storage(false)
                '"torch.CudaLongStorage"': storage(false)
                '"torch.CudaStorage"': storage(false)
                '"torch.CudaDoubleStorage"': storage(false)
                '"torch.CudaHalfStorage"': storage(false)
                '"tds.Hash"': tds_hash(index)
                '"tds.Vec"': tds_vec(index)
                _: t7_object(index)
    instances:
      has_version:
        value: version_or_class.value.length >= 2 and version_or_class.value.substring(0, 2) == "V "
      class_name:
        value: 'has_version ? class_after_version.value : version_or_class.value'
      version:
        value: 'has_version ? version_or_class.value.substring(2, version_or_class.value.length) : ""'
      is_tensor:
        value: class_name.substring(0, 6) == "torch." and class_name.length > 12 and class_name.substring(class_name.length - 6, class_name.length) == "Tensor"
      is_storage:
        value: class_name.substring(0, 6) == "torch." and class_name.length > 13 and class_name.substring(class_name.length - 7, class_name.length) == "Storage"
      last_index:
        value: |
          (
          is_tensor ? payload.as<tensor>.last_index
          : is_storage ? index
          : class_name == "tds.Hash" ? payload.as<tds_hash>.last_index
          : class_name == "tds.Vec" ? payload.as<tds_vec>.last_index
          : payload.as<t7_object>.last_index
          ).as<s4>
  tensor:
    doc: A tensor's dimension count, sizes, strides, 1-based storage offset and storage object.
    doc-ref: spec/t7.md#t7-tensor
    params:
      - id: index
        type: s4
    seq:
      - id: num_dims
        type: int_line
        valid:
          expr: _.value >= 0
      - id: sizes
        type: token_array(num_dims.value)
      - id: strides
        type: token_array(num_dims.value)
      - id: storage_offset
        type: int_line
        doc-ref: spec/t7.md#t7-tensor-offset
      - id: storage
        type: t7_object(index)
    instances:
      last_index:
        value: (storage.last_index).as<s4>
  storage:
    doc: |
      A storage's element count, then its elements: raw bytes and a newline for Byte and Char
      storages, one line of number tokens for the others.
    doc-ref: spec/t7.md#t7-storage
    params:
      - id: is_raw
        type: bool
        doc: True for Byte and Char storages, whose elements are written as raw bytes.
    seq:
      - id: num_elements
        type: int_line
        valid:
          expr: _.value >= 0
      - id: raw
        size: num_elements.value
        if: is_raw
      - id: raw_newline
        contents: [10]
        if: is_raw and num_elements.value > 0
      - id: tokens
        type: token_array(num_elements.value)
        if: not is_raw
  tds_hash:
    doc: tds.Hash's payload, a count and key/value objects.
    doc-ref: spec/t7.md#t7-tds
    params:
      - id: index
        type: s4
    seq:
      - id: num_pairs
        type: int_line
        valid:
          expr: _.value >= 0
        doc: The pair count; a negative count is malformed (and `pairs.last` would have no pair).
      - id: pairs
        type: 'key_value(_index == 0 ? index : pairs[_index - 1].last_index)'
        repeat: expr
        repeat-expr: num_pairs.value
    instances:
      last_index:
        value: '(num_pairs.value == 0 ? index : pairs.last.last_index).as<s4>'
  tds_vec:
    doc: tds.Vec's payload, a count and the element objects.
    doc-ref: spec/t7.md#t7-tds
    params:
      - id: index
        type: s4
    seq:
      - id: num_items
        type: int_line
        valid:
          expr: _.value >= 0
        doc: The item count; a negative count is malformed (and `items.last` would have no item).
      - id: items
        type: 't7_object(_index == 0 ? index : items[_index - 1].last_index)'
        repeat: expr
        repeat-expr: num_items.value
    instances:
      last_index:
        value: '(num_items.value == 0 ? index : items.last.last_index).as<s4>'
enums:
  type_code:
    0: lua_nil
    1: number
    2: string
    3: table
    4: torch
    5: boolean
    6: lua_function
    7: legacy_recur_function
    8: recur_function
