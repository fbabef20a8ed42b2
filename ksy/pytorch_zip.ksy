meta:
  id: pytorch_zip
  title: PyTorch zip checkpoint (torch.save since 1.6, torch.jit.save archives)
  application: PyTorch (torch.save, torch.load, torch.jit.save; caffe2 PyTorchStreamWriter/Reader)
  file-extension: [pt, pth, th, ckpt, bin]
  license: BSD-3-Clause
  ks-version: 0.11
  endian: le
  imports:
    - python_pickle
doc: |
  A PyTorch zip checkpoint is a zip archive whose records all sit in one folder (`archive/`, or the
  file's stem in older writers): data.pkl (the object pickle), data/<key> (one record per storage, raw
  little-endian elements), byteorder, version or .data/version, .format_version,
  .storage_alignment, .data/serialization_id; TorchScript archives add code/, constants.pkl and more.

  Kaitai needs fixed positions, and a zip is read from its end: a general reader searches backwards
  for the end-of-central-directory record (EOCD) because a zip comment of up to 65535 bytes may follow
  it.  PyTorch's writer never writes a comment and always ends the archive with a zip64 end record,
  a zip64 locator and the EOCD, so this grammar takes the EOCD at `_io.size - 22`, the locator at
  `_io.size - 42`, and validates their signatures (and the empty comment): a file that does not end
  that way is rejected, not searched.  Every torch-written file seen (torch 1.5 to 2.13, and the wild
  corpus) ends that way.

  Everything is a lazy `pos` instance: parsing the structure reads the three end records, the central
  directory and, when asked, each record's 30-byte local header, name and padding; a record's body is
  read only when `body` (or `pickle` for *.pkl records) is accessed.  `ofs_body` gives where a reader
  maps a storage without reading it.

  What torch writes and the grammar accepts (spec/pt-zip.md#pt-zip-container): method 0 (stored; old
  torch.jit.save archives also deflate code records, method 8, which `is_stored` tells apart);
  flags 0x0808 (UTF-8 names, sizes in a data descriptor after the body), so the local header's CRC and
  sizes are zero and the central directory's are the true ones; zero DOS time and date; a local extra
  field "FB" of "Z" bytes that pads each body to a 64-byte boundary (pt-zip-alignment); zip64 extra
  fields in the central directory only for values that overflow 32 bits.
  Neutral across runtimes, except: record names are decoded as UTF-8 by the runtime (Python refuses
  bytes that are not UTF-8, JavaScript replaces them), so a reader checks their UTF-8 by hand
  (spec/pt-zip.md#pt-zip-records); sizes taken from the records are not checked against the file here
  (lazy instances read them only when asked), so a reader in a runtime whose byte counts are 32-bit
  checks them before it reads a body.
  Not expressed: the record name's folder being the same for all records, names being unique, records
  not overlapping, the CRC — those are a reader's checks (spec/pt-zip.md#pt-zip-consistency).
doc-ref: spec/pt-zip.md#pt-zip-container
instances:
  end_of_central_dir:
    pos: _io.size - 22
    type: end_of_central_dir
    doc: The EOCD record, at a fixed distance from the end because torch writes no zip comment.
    doc-ref: spec/pt-zip.md#pt-zip-container
  zip64_locator:
    pos: _io.size - 22 - 20
    type: zip64_locator
    doc: The zip64 end-of-central-directory locator, which torch always writes just before the EOCD.
  zip64_end_of_central_dir:
    pos: zip64_locator.ofs_zip64_end_of_central_dir
    type: zip64_end_of_central_dir
    doc: The zip64 end record, whose 64-bit counts and offsets are the ones a reader uses.
  central_dir:
    pos: zip64_end_of_central_dir.ofs_central_dir
    size: zip64_end_of_central_dir.len_central_dir
    type: central_dir(zip64_end_of_central_dir.num_entries_total)
    doc: The central directory, one entry per record.
    doc-ref: spec/pt-zip.md#pt-zip-records
types:
  end_of_central_dir:
    doc: The end-of-central-directory record (EOCD), 22 bytes when there is no comment.
    doc-ref: spec/pt-zip.md#pt-zip-container
    seq:
      - id: magic
        contents: [0x50, 0x4b, 0x05, 0x06]
      - id: disk
        type: u2
        valid: 0
      - id: disk_of_central_dir
        type: u2
        valid: 0
      - id: num_entries_on_disk
        type: u2
        doc: The entry count, or 0xffff when it overflows (then the zip64 record has it).
      - id: num_entries_total
        type: u2
      - id: len_central_dir
        type: u4
      - id: ofs_central_dir
        type: u4
        doc: The central directory's offset, or 0xffffffff when it overflows.
      - id: len_comment
        type: u2
        valid: 0
        doc: torch writes no comment; a file with one is not at this grammar's fixed position.
  zip64_locator:
    doc: The zip64 end-of-central-directory locator (20 bytes).
    doc-ref: spec/pt-zip.md#pt-zip-container
    seq:
      - id: magic
        contents: [0x50, 0x4b, 0x06, 0x07]
      - id: disk_of_zip64_end
        type: u4
        valid: 0
      - id: ofs_zip64_end_of_central_dir
        type: u8
      - id: num_disks
        type: u4
        valid: 1
  zip64_end_of_central_dir:
    doc: The zip64 end-of-central-directory record.
    doc-ref: spec/pt-zip.md#pt-zip-container
    seq:
      - id: magic
        contents: [0x50, 0x4b, 0x06, 0x06]
      - id: len_record
        type: u8
        valid:
          min: 44
        doc: Size of the rest of the record (44 when there is no extensible data).
      - id: version_made_by
        type: u2
      - id: version_needed
        type: u2
      - id: disk
        type: u4
        valid: 0
      - id: disk_of_central_dir
        type: u4
        valid: 0
      - id: num_entries_on_disk
        type: u8
      - id: num_entries_total
        type: u8
        valid:
          expr: _ == num_entries_on_disk
      - id: len_central_dir
        type: u8
      - id: ofs_central_dir
        type: u8
      - id: extensible_data
        size: len_record - 44
  central_dir:
    doc: The central directory's entries, in the order the writer wrote the records.
    doc-ref: spec/pt-zip.md#pt-zip-records
    params:
      - id: num_entries
        type: u8
    seq:
      - id: entries
        type: central_dir_entry
        repeat: expr
        repeat-expr: num_entries
  central_dir_entry:
    doc: |
      One central directory entry: the record's true CRC and sizes, its name and where its local
      header starts; `local_file` reads that header (lazily) in the whole file.
    doc-ref: spec/pt-zip.md#pt-zip-records
    seq:
      - id: magic
        contents: [0x50, 0x4b, 0x01, 0x02]
      - id: version_made_by
        type: u2
      - id: version_needed
        type: u2
      - id: flags
        type: u2
        doc: torch writes 0x0808 (bit 3, data descriptor; bit 11, UTF-8 name).
      - id: compression_method
        type: u2
        enum: compression
        valid:
          in-enum: true
        doc-ref: spec/pt-zip.md#pt-zip-container
        doc: |
          torch.save stores records uncompressed (0), so that storages can be mapped; old
          torch.jit.save archives deflate (8) their code and debug records.
      - id: dos_time
        type: u2
        doc: Zero in torch-written files.
      - id: dos_date
        type: u2
        doc: Zero in torch-written files.
      - id: crc32
        type: u4
      - id: len_compressed_32
        type: u4
      - id: len_uncompressed_32
        type: u4
      - id: len_file_name
        type: u2
      - id: len_extra
        type: u2
      - id: len_comment
        type: u2
      - id: disk_start_32
        type: u2
      - id: internal_attrs
        type: u2
      - id: external_attrs
        type: u4
      - id: ofs_local_header_32
        type: u4
      - id: file_name
        type: str
        encoding: UTF-8
        size: len_file_name
        doc: The record name, "<folder>/<name>".
      - id: extra
        type: extra_fields(len_uncompressed_32 == 0xffffffff, len_compressed_32 == 0xffffffff, ofs_local_header_32 == 0xffffffff)
        size: len_extra
      - id: comment
        size: len_comment
    instances:
      has_zip64:
        value: extra.fields.size > 0 and extra.fields[0].tag == 0x0001
        doc: Whether the first extra field is the zip64 extended information (miniz writes it first).
      len_body:
        value: 'len_compressed_32 == 0xffffffff and has_zip64 ? extra.fields[0].zip64.len_compressed : len_compressed_32'
        doc: The record's size in bytes (stored, so compressed and uncompressed sizes are equal).
      len_uncompressed:
        value: 'len_uncompressed_32 == 0xffffffff and has_zip64 ? extra.fields[0].zip64.len_uncompressed : len_uncompressed_32'
      ofs_local_header:
        value: 'ofs_local_header_32 == 0xffffffff and has_zip64 ? extra.fields[0].zip64.ofs_local_header : ofs_local_header_32'
      is_stored:
        value: compression_method == compression::stored and len_body - len_uncompressed == 0
        doc: |
          An uncompressed record, as every record of a torch.save checkpoint is.  The sizes are compared
          by their difference: `==` between two computed 64-bit values compares boxed Longs by reference
          in the generated Java (false above 127).
        doc-ref: spec/pt-zip.md#pt-zip-container
      local_file:
        io: _root._io
        pos: ofs_local_header
        type: local_file(ofs_local_header, len_body)
        doc: The record's local header and (lazily) its body.
  extra_fields:
    doc: The extra fields of a central directory entry.
    doc-ref: spec/pt-zip.md#pt-zip-records
    params:
      - id: has_len_uncompressed
        type: bool
      - id: has_len_compressed
        type: bool
      - id: has_ofs_local_header
        type: bool
    seq:
      - id: fields
        type: extra_field(has_len_uncompressed, has_len_compressed, has_ofs_local_header)
        repeat: eos
  extra_field:
    doc: One extra field, a 2-byte tag and a 2-byte length; the zip64 extended information is parsed.
    doc-ref: spec/pt-zip.md#pt-zip-records
    params:
      - id: has_len_uncompressed
        type: bool
      - id: has_len_compressed
        type: bool
      - id: has_ofs_local_header
        type: bool
    seq:
      - id: tag
        type: u2
      - id: len_body
        type: u2
      - id: zip64
        type: zip64_extended_info(has_len_uncompressed, has_len_compressed, has_ofs_local_header)
        size: len_body
        if: tag == 0x0001
      - id: body
        size: len_body
        if: tag != 0x0001
  zip64_extended_info:
    doc: |
      The zip64 extra field (tag 0x0001): the 64-bit values of exactly those header fields that hold
      0xffffffff, in this order.
    doc-ref: spec/pt-zip.md#pt-zip-container
    params:
      - id: has_len_uncompressed
        type: bool
      - id: has_len_compressed
        type: bool
      - id: has_ofs_local_header
        type: bool
    seq:
      - id: len_uncompressed
        type: u8
        if: has_len_uncompressed
      - id: len_compressed
        type: u8
        if: has_len_compressed
      - id: ofs_local_header
        type: u8
        if: has_ofs_local_header
  local_file:
    doc: |
      A record's local header, with the body after it.  torch writes the CRC and sizes as zero here
      (flag bit 3) and the true values in a data descriptor after the body and in the central
      directory; the body's size therefore comes from the central directory (`len_body`).
    doc-ref: spec/pt-zip.md#pt-zip-records
    params:
      - id: ofs_header
        type: u8
        doc: Where this header starts in the file.
      - id: len_body
        type: u8
        doc: The body's size, from the central directory.
    seq:
      - id: magic
        contents: [0x50, 0x4b, 0x03, 0x04]
      - id: version_needed
        type: u2
      - id: flags
        type: u2
      - id: compression_method
        type: u2
        enum: compression
        valid:
          in-enum: true
      - id: dos_time
        type: u2
      - id: dos_date
        type: u2
      - id: crc32
        type: u4
        doc: Zero when flag bit 3 is set (torch); the data descriptor has the CRC.
      - id: len_compressed
        type: u4
      - id: len_uncompressed
        type: u4
      - id: len_file_name
        type: u2
      - id: len_extra
        type: u2
      - id: file_name
        type: str
        encoding: UTF-8
        size: len_file_name
      - id: extra
        size: len_extra
        doc: torch's "FB" padding field (tag 0x4246) of "Z" bytes, which aligns the body.
        doc-ref: spec/pt-zip.md#pt-zip-alignment
    instances:
      ofs_body:
        value: ofs_header + 30 + len_file_name + len_extra
        doc: Where the body starts; a reader maps storages from here without reading them.
      is_aligned:
        value: ofs_body % 64 == 0
        doc: torch aligns every body to 64 bytes (spec/pt-zip.md#pt-zip-alignment).
        doc-ref: spec/pt-zip.md#pt-zip-alignment
      has_data_descriptor:
        value: (flags & 0x0008) != 0
      is_pickle:
        value: |
          file_name.length >= 4
          and file_name.substring(file_name.length - 4, file_name.length - 3) == "."
          and (file_name.substring(file_name.length - 3, file_name.length - 2) == "p"
               or file_name.substring(file_name.length - 3, file_name.length - 2) == "P")
          and (file_name.substring(file_name.length - 2, file_name.length - 1) == "k"
               or file_name.substring(file_name.length - 2, file_name.length - 1) == "K")
          and (file_name.substring(file_name.length - 1, file_name.length) == "l"
               or file_name.substring(file_name.length - 1, file_name.length) == "L")
        doc: |
          data.pkl, and constants.pkl in TorchScript archives: a name ending in ".pkl" in any ASCII
          case, since torch (miniz) looks record names up ignoring ASCII case (a lone DATA.PKL is the
          object pickle).
        doc-ref: spec/pt-zip.md#pt-zip-data-pkl
      body:
        pos: ofs_body
        size: len_body
        doc: The record's bytes (read only when accessed).
      pickle:
        pos: ofs_body
        size: len_body
        type: python_pickle
        if: is_pickle and compression_method == compression::stored
        doc: A *.pkl record parsed as a pickle (read only when accessed).
        doc-ref: spec/pt-zip.md#pt-zip-data-pkl
      data_descriptor:
        pos: ofs_body + len_body
        type: data_descriptor
        if: has_data_descriptor
        doc: The CRC and sizes after the body (flag bit 3).
  data_descriptor:
    doc: |
      The data descriptor after a body: signature, CRC-32 and the two sizes, 4 bytes each (8 bytes
      each when the record needed zip64; a reader compares the CRC with the central directory's).
    doc-ref: spec/pt-zip.md#pt-zip-records
    seq:
      - id: magic
        contents: [0x50, 0x4b, 0x07, 0x08]
      - id: crc32
        type: u4
enums:
  compression:
    0: stored
    8: deflated
