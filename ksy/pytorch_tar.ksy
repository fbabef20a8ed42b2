meta:
  id: pytorch_tar
  title: PyTorch 0.1.x tar checkpoint
  application: PyTorch 0.1.x (torch.save before the legacy stream format, early 2017)
  file-extension: [pt, pth, tar]
  license: BSD-3-Clause
  ks-version: 0.11
  endian: le
  imports:
    - python_pickle
doc: |
  The first PyTorch checkpoints (0.1.x, until early 2017) were POSIX tar archives (PAX format, as
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
doc-ref: spec/pt-tar.md#pt-tar-members
seq:
  - id: members
    type: member
    repeat: until
    repeat-until: _.is_end
    doc: The tar members, ending with the first all-zero header block.
types:
  member:
    doc: One 512-byte tar header and its body, padded to a multiple of 512 bytes.
    doc-ref: spec/pt-tar.md#pt-tar-members
    seq:
      - id: header
        type: header
        size: 512
      - id: body
        size: header.len_body
        if: not is_end
        type:
          switch-on: header.name
          cases:
            '"sys_info"': python_pickle
            '"pickle"': python_pickle
            '"tensors"': tensors_member
            '"storages"': storages_member
      - id: padding
        size: (512 - header.len_body % 512) % 512
        if: not is_end
    instances:
      is_end:
        value: header.first_byte == 0
        doc: An all-zero block ends the archive.
  header:
    doc: A ustar header block (POSIX.1-1988, with PAX extended headers of type 'x').
    doc-ref: spec/pt-tar.md#pt-tar-members
    seq:
      - id: name
        type: strz
        encoding: UTF-8
        size: 100
      - id: mode
        size: 8
      - id: uid
        size: 8
      - id: gid
        size: 8
      - id: size_octal
        type: strz
        encoding: ASCII
        size: 12
        doc: The body size, octal digits ended by NUL (or space).
      - id: mtime
        size: 12
      - id: checksum
        size: 8
      - id: type_flag
        type: u1
        doc: "'0' (or NUL) a file; 'x' a PAX header for the next member; 'g' a global PAX header."
      - id: link_name
        size: 100
      - id: magic
        size: 6
        doc: '"ustar\0" (POSIX), or "ustar " (GNU); all zero in the end-of-archive block.'
      - id: version
        size: 2
      - id: user_name
        size: 32
      - id: group_name
        size: 32
      - id: dev_major
        size: 8
      - id: dev_minor
        size: 8
      - id: prefix
        size: 155
      - id: reserved
        size: 12
    instances:
      first_byte:
        pos: 0
        type: u1
      len_body:
        value: 'size_octal.length == 0 ? 0 : size_octal.to_i(8)'
        doc: The body size in bytes.
  count_pickle:
    doc: |
      The integer pickle torch wrote before the tensor and storage records: PROTO 2, one BININT1,
      BININT2 or BININT opcode, STOP.
    doc-ref: spec/pt-tar.md#pt-tar-tensors
    seq:
      - id: proto
        contents: [0x80, 0x02]
      - id: opcode
        type: u1
        valid:
          any-of: [0x4b, 0x4d, 0x4a]
      - id: value
        type:
          switch-on: opcode
          cases:
            0x4b: u1
            0x4d: u2
            0x4a: s4
      - id: stop
        contents: [0x2e]
  tensors_member:
    doc: The tensors member, a count and that many tensor records.
    doc-ref: spec/pt-tar.md#pt-tar-tensors
    seq:
      - id: count
        type: count_pickle
      - id: tensors
        type: tensor_record
        repeat: expr
        repeat-expr: count.value
  tensor_record:
    doc: One tensor, its (key, storage key, class) pickle and its geometry in elements.
    doc-ref: spec/pt-tar.md#pt-tar-tensors
    seq:
      - id: record
        type: python_pickle
        doc: (key, storage key, tensor class), e.g. (9358416, 9358672, torch.FloatTensor).
      - id: num_dims
        type: s4
        valid:
          min: 0
      - id: num_dims_high
        size: 4
        doc: The high half of the old 8-byte ndim; garbage, ignored by every loader.
      - id: sizes
        type: s8
        repeat: expr
        repeat-expr: num_dims
      - id: strides
        type: s8
        repeat: expr
        repeat-expr: num_dims
      - id: storage_offset
        type: s8
        doc: 0-based, in elements.
  storages_member:
    doc: The storages member, a count, that many storage records and the storage views pickle.
    doc-ref: spec/pt-tar.md#pt-tar-storages
    seq:
      - id: count
        type: count_pickle
      - id: storages
        type: storage_record
        repeat: expr
        repeat-expr: count.value
      - id: storage_views
        type: python_pickle
        doc: A list of (view key, root key, offset, numel), empty in every known file.
  storage_record:
    doc: |
      One storage: its (key, location, class) pickle, an int64 element count and the raw elements,
      whose width follows from the class named by the record's GLOBAL opcode.
    doc-ref: spec/pt-tar.md#pt-tar-storages
    seq:
      - id: record
        type: python_pickle
      - id: num_elements
        type: s8
        valid:
          expr: _ >= 0 and (_ == 0 or element_size > 0)
        doc: The element count; a storage of an unknown class is rejected unless it is empty.
      - id: data
        size: num_elements * element_size
    instances:
      global_index:
        value: |
          record.ops.size > 3 and record.ops[3].code == python_pickle::opcode::global_opcode ? 3
          : record.ops.size > 4 and record.ops[4].code == python_pickle::opcode::global_opcode ? 4
          : record.ops.size > 5 and record.ops[5].code == python_pickle::opcode::global_opcode ? 5
          : record.ops.size > 6 and record.ops[6].code == python_pickle::opcode::global_opcode ? 6
          : -1
        doc: Which opcode of the record is the GLOBAL naming the storage class (-1 if none).
      storage_class:
        value: 'global_index < 0 ? "" : record.ops[global_index].arg.as<python_pickle::global_pair>.name'
        doc: The storage class, e.g. FloatStorage (module torch, or torch.cuda for CUDA storages).
      element_size:
        value: |
          storage_class == "DoubleStorage" ? 8
          : storage_class == "FloatStorage" ? 4
          : storage_class == "HalfStorage" ? 2
          : storage_class == "LongStorage" ? 8
          : storage_class == "IntStorage" ? 4
          : storage_class == "ShortStorage" ? 2
          : storage_class == "CharStorage" ? 1
          : storage_class == "ByteStorage" ? 1
          : 0
        doc: |
          Bytes per element for the class (0.1.x had these eight); 0 for anything else.
