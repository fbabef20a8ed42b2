meta:
  id: pytorch_legacy
  title: PyTorch legacy stream checkpoint (torch.save 0.1.10 to 1.5, and _use_new_zipfile_serialization=False)
  application: PyTorch (torch.save, torch.load)
  file-extension: [pt, pth, th, pkl, bin]
  license: BSD-3-Clause
  ks-version: 0.11
  endian: le
  imports:
    - python_pickle
doc: |
  The legacy format is five pickles back to back, then the raw storages:
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
doc-ref: spec/pt-legacy.md#pt-legacy-magic
seq:
  - id: magic_number
    type: python_pickle
    doc: |
      The magic number pickle: the int pushed just before STOP by LONG1 (torch writes the ten bytes
      6c fc 9c 46 f9 20 6a a8 50 19), LONG4, or LONG ("119547037146038801333356L").  The same int may
      be written with padding (zero bytes after the ten), which Python's unpickler and torch read as
      the same number: the grammar checks the ten bytes, the reader the value.
    valid:
      expr: |
        _.ops.size >= 2 and (
          (_.ops[_.ops.size - 2].code == python_pickle::opcode::long1
           and _.ops[_.ops.size - 2].arg.as<python_pickle::bytes_u1>.value.length >= 10
           and _.ops[_.ops.size - 2].arg.as<python_pickle::bytes_u1>.value[0] == 0x6c
           and _.ops[_.ops.size - 2].arg.as<python_pickle::bytes_u1>.value[1] == 0xfc
           and _.ops[_.ops.size - 2].arg.as<python_pickle::bytes_u1>.value[2] == 0x9c
           and _.ops[_.ops.size - 2].arg.as<python_pickle::bytes_u1>.value[3] == 0x46
           and _.ops[_.ops.size - 2].arg.as<python_pickle::bytes_u1>.value[4] == 0xf9
           and _.ops[_.ops.size - 2].arg.as<python_pickle::bytes_u1>.value[5] == 0x20
           and _.ops[_.ops.size - 2].arg.as<python_pickle::bytes_u1>.value[6] == 0x6a
           and _.ops[_.ops.size - 2].arg.as<python_pickle::bytes_u1>.value[7] == 0xa8
           and _.ops[_.ops.size - 2].arg.as<python_pickle::bytes_u1>.value[8] == 0x50
           and _.ops[_.ops.size - 2].arg.as<python_pickle::bytes_u1>.value[9] == 0x19)
          or (_.ops[_.ops.size - 2].code == python_pickle::opcode::long4
              and _.ops[_.ops.size - 2].arg.as<python_pickle::bytes_s4>.value.length >= 10
              and _.ops[_.ops.size - 2].arg.as<python_pickle::bytes_s4>.value[0] == 0x6c
              and _.ops[_.ops.size - 2].arg.as<python_pickle::bytes_s4>.value[1] == 0xfc
              and _.ops[_.ops.size - 2].arg.as<python_pickle::bytes_s4>.value[2] == 0x9c
              and _.ops[_.ops.size - 2].arg.as<python_pickle::bytes_s4>.value[3] == 0x46
              and _.ops[_.ops.size - 2].arg.as<python_pickle::bytes_s4>.value[4] == 0xf9
              and _.ops[_.ops.size - 2].arg.as<python_pickle::bytes_s4>.value[5] == 0x20
              and _.ops[_.ops.size - 2].arg.as<python_pickle::bytes_s4>.value[6] == 0x6a
              and _.ops[_.ops.size - 2].arg.as<python_pickle::bytes_s4>.value[7] == 0xa8
              and _.ops[_.ops.size - 2].arg.as<python_pickle::bytes_s4>.value[8] == 0x50
              and _.ops[_.ops.size - 2].arg.as<python_pickle::bytes_s4>.value[9] == 0x19)
          or (_.ops[_.ops.size - 2].code == python_pickle::opcode::long
              and _.ops[_.ops.size - 2].arg.as<python_pickle::decimal_line>.value
                  == "119547037146038801333356L"))
  - id: protocol_version
    type: python_pickle
    doc: The int 1001.
    doc-ref: spec/pt-legacy.md#pt-legacy-protocol-version
  - id: sys_info
    type: python_pickle
    doc: The writer's byte order and C type sizes.
    doc-ref: spec/pt-legacy.md#pt-legacy-sys-info
  - id: object
    type: python_pickle
    doc: The saved object, with storages as persistent ids.
    doc-ref: spec/pt-legacy.md#pt-legacy-object
  - id: storage_keys
    type: python_pickle
    doc: The list of storage keys, in the order the storages follow.
    doc-ref: spec/pt-legacy.md#pt-legacy-storage-keys
  - id: storages
    type: storage_area(_io.pos)
    doc: Where the storages start; their number and widths come from the pickles.
    doc-ref: spec/pt-legacy.md#pt-legacy-storages
types:
  storage_area:
    doc: |
      The storages after the last pickle.  Nothing is read here: `ofs_start` is where the first
      storage's element count sits, and `first_num_elements` peeks at it.
    doc-ref: spec/pt-legacy.md#pt-legacy-storages
    params:
      - id: ofs_start
        type: u8
        doc: The offset of the first storage in the file.
    instances:
      has_storages:
        value: ofs_start < _io.size
        doc: False when the file saved no storage.
      first_num_elements:
        pos: ofs_start
        type: s8
        if: ofs_start + 8 <= _io.size
        doc: The first storage's element count.
  storage:
    doc: |
      One storage: an int64 element count and the raw elements, element_size bytes each, in the
      writer's byte order.  element_size comes from the storage class of the persistent id whose key
      is this storage's (Float 4, Double 8, Half 2, BFloat16 2, Long 8, Int 4, Short 2, Char 1,
      Byte 1, Bool 1, ComplexFloat 8, ComplexDouble 16, QInt8 1, QUInt8 1, QInt32 4).
    doc-ref: spec/pt-legacy.md#pt-legacy-storages
    params:
      - id: element_size
        type: u1
    seq:
      - id: num_elements
        type: s8
        valid:
          min: 0
      - id: data_fits
        size: 0
        valid:
          expr: 'num_elements <= (_io.size - _io.pos) / element_size'
        doc: The elements fit in the rest of the file, checked before they are read (JavaScript wraps counts above 2^32).
      - id: data
        size: num_elements * element_size
