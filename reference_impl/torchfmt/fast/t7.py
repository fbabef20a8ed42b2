"""The binary ``.t7`` reader's fast paths: a state_dict-like table's entries read in one go (issue 12).

A state_dict-like table is a string or number key and a tensor with its storage per entry
(spec/t7.md#t7-table, #t7-tensor, #t7-storage).  :class:`Entries` reads exactly such an entry in one go
in a binary stream, and a run of entries laid out alike in one loop; on anything else, and on anything
the checked path (:mod:`torchfmt.t7.reader`: ``ObjectReader._begin`` and its composite readers) would
reject, it leaves the reader as it was and returns :data:`SLOW`, so that the checked path reads the
same bytes and raises its own error.  The reader takes these paths only when
:data:`torchfmt.fast.ENABLED`.

What they know of the grammar they are handed (:class:`Grammar`: the type codes, the classes, the view
check, each kept in its one home in ``t7/``), and what they see of the reader is :class:`Reading`: this
module imports neither, so that ``t7/`` imports ``fast/`` and never the reverse.
``reference_impl/tests/test_t7_fast_path.py`` reads every case, cut and mutation both ways.
"""

from __future__ import annotations

import math
import operator
import os
import struct
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Protocol

from ..dtypes import DType
from ..errors import FormatError
from ..limits import T7_NDIM
from ..model import Storage, Tensor


class _Slow:
    """What a fast path returns when the checked path must read the object (spec/t7.md#t7-tensor)."""


SLOW = _Slow()


class _New:
    """A new storage (its size follows) in a :data:`_Head`."""


_NEW = _New()


class ClassInfo(Protocol):
    """A tensor or storage class as :mod:`torchfmt.t7.classes` knows it: its elements and device."""

    @property
    def dtype(self) -> DType | None: ...

    @property
    def device(self) -> str: ...


class Binary(Protocol):
    """What the fast paths read and move of a binary stream (:class:`torchfmt.t7.encodings.BinaryEncoding`,
    spec/t7.md#t7-binary)."""

    buf: memoryview
    size: int
    pos: int
    byte_order: str
    long_size: int
    longs_read: bool

    def read_storage(self, dtype: DType, n: int, device: str) -> Storage: ...


class Reading(Protocol):
    """What the fast paths see of the running ``ObjectReader``: its stream, the objects begun (the count a
    limit sees), the reference table, the composite readers open and its limits (spec/t7.md#t7-limits)."""

    enc: Binary
    count: int
    objects: list[Any]
    stack: list[Any]
    max_depth: int
    max_objects: int


@dataclass(frozen=True, slots=True)
class Grammar:
    """What the fast paths take from the checked grammar (``t7/reader.py``, ``t7/classes.py``): the type
    codes of spec/t7.md#t7-type-codes they meet, the tensor and storage classes by name, and the view check
    of spec/t7.md#t7-tensor-offset (a view the fast test does not settle is checked by it)."""

    nil: int
    number: int
    string: int
    torch: int
    tensors: dict[bytes, ClassInfo]
    storages: dict[bytes, ClassInfo]
    check_view: Callable[[tuple[int, ...], tuple[int, ...], int, Storage | None, int], None]


class Entries:
    """The fast paths of one reading of a binary stream, and what they keep from entry to entry: the
    structs of its byte order and long size, the layouts of the tensors met and the views read."""

    def __init__(self, enc: Binary, grammar: Grammar, fd: int | None = None) -> None:
        self.grammar = grammar
        #: The open file ``enc.buf`` maps, if any: :meth:`run` reads headers after big storages from it.
        self.fd = fd if _PREAD is not None else None
        e = "<" if enc.byte_order == "little" else ">"
        self._int = struct.Struct(e + "i").unpack_from
        self._int2 = struct.Struct(e + "ii").unpack_from
        self._double = struct.Struct(e + "d").unpack_from
        self._long = struct.Struct(e + ("q" if enc.long_size == 8 else "i")).unpack_from
        #: The header of every tensor and storage torch7 writes: the length 3 and ``V 1``.
        self._version_header = struct.pack(e + "i", 3) + b"V 1"
        #: The layout of the last tensor read with a new storage: the next is likely the same.
        self.layout: _Layout | None = None
        #: Every layout met, by tensor class block and dimension count (up to :data:`_LAYOUTS`): a
        #: state_dict's tensors take turns among a few (a weight, then its bias).
        self.layouts: dict[tuple[bytes, int], _Layout] = {}
        #: The views :meth:`run` has read, by element width, then sizes and strides (see
        #: :func:`_run_view`).
        self._views: dict[int, dict[tuple[int, ...], Any]] = {}
        #: ``unpack_from`` of a tensor's sizes, strides and offset, by dimension count.
        self._geometry = _GeometryStructs(e + ("q" if enc.long_size == 8 else "i"))

    def key(self, r: Reading) -> Any:
        """A table key as ``_begin(None)`` reads it, or :data:`SLOW`: a string read here (it is most keys
        of a state_dict), anything else by :meth:`simple`."""
        enc = r.enc
        pos, size = enc.pos, enc.size
        if pos + 8 <= size and r.count < r.max_objects:
            code, length = self._int2(enc.buf, pos)
            end = pos + 8 + length
            if code == self.grammar.string and 0 <= length and end <= size:
                raw = bytes(enc.buf[pos + 8:end])
                try:
                    key: Any = raw.decode("utf-8")
                except UnicodeDecodeError:
                    key = raw
                r.count += 1
                enc.pos = end
                return key
        return self.simple(r)

    def run(self, r: Reading, items: list[tuple[Any, Any]], seen_strings: set[str], left: int) -> int:
        """Read into a table's ``items`` up to ``left`` entries in a row that are a new UTF-8 string key
        and a tensor laid out as the last one (see :class:`_Layout`) over a new storage whose elements
        hold its view; stop before the first entry that is anything else (the per-entry path reads it,
        and raises any error).  The number of entries read.  After a storage of :data:`_PEEK_AFTER`
        bytes or more, the next entry is read with ``pread`` from the file when there is one: its page of
        the map is not touched (a page fault costs some four times a small ``pread``), and its bytes are
        the map's."""
        layout = self.layout
        assert layout is not None
        if len(r.stack) >= r.max_depth:
            return 0
        enc = r.enc
        buf, size, pos, fd = enc.buf, enc.size, enc.pos, self.fd
        objects = r.objects
        # each entry is three objects: the key, the tensor and its storage
        left = min(left, (r.max_objects - r.count) // 3)
        unpack_int2, layouts, byte_order = self._int2, self.layouts, enc.byte_order
        string = self.grammar.string
        new, storage_init, tensor_init = object.__new__, Storage.__init__, Tensor.__init__
        index = len(objects) + 1  # the tensor's reference index (its storage's is the next)
        peek, pread = fd is not None, _PREAD
        read_at = -1  # where the bytes read with pread begin
        done = 0
        switch = True  # to the layout's values
        while done < left:
            if switch:
                switch = False
                keyed, lsize, ndim, fixed = layout.keyed, layout.size, layout.ndim, layout.fixed
                dtype, device = layout.info.dtype, layout.info.device
                if dtype is None or (dtype.name == "int64" and enc.long_size != dtype.itemsize):
                    break  # widened: the encoding's own reading
                width = dtype.itemsize
                last_geometry = 5 + 2 * ndim  # the offset in the unpacked key and layout
                views = self._views.setdefault(width, {})
                # a storage of peek_n elements or more has _PEEK_AFTER bytes or more
                peek_n = -(-_PEEK_AFTER // width) if fd is not None else size + 1
                geometry = view = None
            if not peek:
                src, base = buf, 0
            elif read_at != pos:  # the entry from bytes read at pos, rather than from the map
                src, base = pread(fd, _PEEK, pos), pos
                read_at = pos
            q = pos - base
            try:
                code, length = unpack_int2(src, q)
                if code != string or length < 0:
                    break
                kq = q + 8 + length  # the tensor, in src
                unpack = keyed.get(length) or layout.with_key(length)
                f = unpack(src, q + 8)  # the key's bytes, then the layout's fields
                if _KEYED_FIXED_FIELDS(f) != fixed:
                    # laid out as another tensor read before?  (A guess the next unpack checks.)
                    nlen = unpack_int2(src, kq + 15)[0]  # the class name's length (and one int more)
                    block = bytes(src[kq + 8:kq + 19 + nlen])
                    other = layouts.get((block, unpack_int2(src, kq + 19 + nlen)[0]))
                    if other is None or other is layout:
                        break
                    layout = self.layout = other
                    switch = True
                    continue  # the same entry, from the same src
            except struct.error:  # past the end of src
                if peek:  # of what was read: read the entry from the map
                    peek = False
                    continue
                break
            if f[2] != index or f[-3] != index + 1:
                break
            n = f[-1]
            p = base + kq + lsize
            end = p + n * width
            if n < 0 or end > size:
                break
            if f[5:last_geometry] != geometry:
                geometry = f[5:last_geometry]
                view = views.get(geometry) or _run_view(views, geometry, ndim, width)
            if view is SLOW:
                break
            sizes, strides, numel, reach = view
            offset = f[last_geometry] - 1
            # the view's elements lie inside the storage (_check_view's test)
            if offset < 0 or numel > n or offset + reach >= n:
                break
            try:
                key = f[0].decode("utf-8")
            except UnicodeDecodeError:
                break
            if key in seen_strings:
                break
            # Storage(dtype, n, device, buf[p:end], byte_order) and Tensor(dtype, sizes, strides, offset,
            # storage, device=device, lua=True), as the class calls do them (new, then __init__) with
            # every field given in order: a plain call of a Python function is much faster (the test
            # compares every field with the checked path's objects)
            storage = new(Storage)
            storage_init(storage, dtype, n, device, buf[p:end], byte_order, None, None, False, False)
            tensor = new(Tensor)
            tensor_init(tensor, dtype, sizes, strides, offset, storage, device,
                        False, False, False, False, {}, True)
            objects.append(tensor)
            objects.append(storage)
            seen_strings.add(key)
            items.append((key, tensor))
            index += 2
            pos = end
            peek = n >= peek_n
            done += 1
        if done:
            r.count += 3 * done
            enc.pos = pos
            enc.longs_read = True
        return done

    def simple(self, r: Reading) -> Any:
        """A string or number, as ``_begin(None)`` reads it, or ``SLOW``."""
        enc = r.enc
        pos = enc.pos
        size = enc.size
        if r.count >= r.max_objects or pos + 8 > size:
            return SLOW
        g = self.grammar
        code, n = self._int2(enc.buf, pos)
        if code == g.string:
            end = pos + 8 + n
            if n < 0 or end > size:
                return SLOW
            raw = bytes(enc.buf[pos + 8:end])
            try:
                value: Any = raw.decode("utf-8")
            except UnicodeDecodeError:
                value = raw
        elif code == g.number:
            end = pos + 12
            if end > size:
                return SLOW
            value = self._double(enc.buf, pos + 4)[0]
        else:
            return SLOW
        r.count += 1
        enc.pos = end
        return value

    def _class(self, enc: Binary, p: int, known: dict[bytes, ClassInfo]) -> tuple[ClassInfo, int] | None:
        """The class at ``p`` (a ``V 1`` header and a name in ``known``) and where it ends, or None."""
        buf = enc.buf
        if p + 11 > enc.size or buf[p:p + 7] != self._version_header:
            return None
        nlen = self._int(buf, p + 7)[0]
        p += 11
        if nlen < 0 or p + nlen > enc.size:
            return None
        info = known.get(bytes(buf[p:p + nlen]))
        return None if info is None else (info, p + nlen)

    def tensor(self, r: Reading) -> Any:
        """A tensor whose storage is new, a back-reference or nil, as ``_begin(None)`` and the tensor and
        storage readers read it, or ``SLOW`` with the reader unchanged."""
        enc = r.enc
        pos = enc.pos
        nobj = len(r.objects)
        if r.count + 2 > r.max_objects or len(r.stack) >= r.max_depth:
            return SLOW
        layout = self.layout
        f = None
        if layout is not None and pos + layout.size <= enc.size:
            f = layout.unpack(enc.buf, pos)
            torch = self.grammar.torch
            if (f[1] != nobj + 1 or f[-3] != nobj + 2 or f[0] != torch or f[-4] != torch
                    or f[3] != layout.ndim or f[2] != layout.tensor_block or f[-2] != layout.storage_block):
                f = None
        if f is not None:  # laid out as the last tensor: one unpack read it (see _Layout)
            info, ndim, geometry, b, storage, n = layout.info, layout.ndim, f, 4, _NEW, f[-1]
            p = pos + layout.size
            at = p - layout.tail
        else:
            head = self._head(r, pos, nobj)
            if head is None:
                return SLOW
            info, ndim, geometry, at, p, storage, n = head
            b = 0
        # sizes, strides and offset are geometry[b:b + 2 * ndim + 1]
        dtype = info.dtype
        assert dtype is not None
        sizes = geometry[b:b + ndim]
        strides = geometry[b + ndim:b + 2 * ndim]
        offset = geometry[b + 2 * ndim] - 1
        if offset < 0 or (ndim and (min(sizes) < 0 or min(strides) < 0)):
            return SLOW
        if storage is _NEW:
            if dtype.name == "int64":  # a 4-byte-long file widens it: the encoding's own reading
                if n < 0 or p + n * enc.long_size > enc.size:
                    return SLOW
                enc.pos = p
                storage = enc.read_storage(dtype, n, info.device)
                p = enc.pos
            else:  # as BinaryEncoding.read_storage: a zero-copy slice of the file
                end = p + n * dtype.itemsize
                if n < 0 or end > enc.size:
                    return SLOW
                storage = Storage(dtype, n, info.device, enc.buf[p:end], enc.byte_order)
                p = end
            new = True
        else:
            new = False
        # A one- or two-dimensional view whose elements lie inside its storage passes _check_view (a
        # storage's bytes fit the file, so its elements fit 64-bit byte offsets); any other view is
        # checked by it.
        numel = 0
        if ndim == 1:
            numel, top = sizes[0], strides[0]
            last = offset + (numel - 1) * top
        elif ndim == 2:
            (n0, n1), (s0, s1) = sizes, strides
            numel, top = n0 * n1, max(s0, s1)
            last = offset + (n0 - 1) * s0 + (n1 - 1) * s1
        if not (numel and storage is not None and numel <= storage.numel and last < storage.numel
                and dtype.itemsize * top < 1 << 63):
            try:
                self.grammar.check_view(sizes, strides, offset, storage, at)
            except FormatError:
                enc.pos = pos
                return SLOW
        tensor = Tensor(dtype, sizes, strides, offset, storage, device=info.device, lua=True)
        r.objects.append(tensor)
        if new:
            r.objects.append(storage)
        enc.pos = p
        enc.longs_read = True
        r.count += 2
        return tensor

    def _head(self, r: Reading, pos: int, nobj: int) -> _Head | None:
        """The class and geometry of a tensor at ``pos`` with a nil, known or new storage of its class
        (:data:`_NEW`: its size follows); None for anything else.  A tensor with a new storage makes the
        reader's :class:`_Layout`."""
        enc = r.enc
        buf = enc.buf
        size = enc.size
        if pos + 8 > size:
            return None
        torch = self.grammar.torch
        code, index = self._int2(buf, pos)
        if code != torch or index != nobj + 1:
            return None
        found = self._class(enc, pos + 8, self.grammar.tensors)
        if found is None:
            return None
        info, p = found
        tensor_block = bytes(buf[pos + 8:p])
        if p + 4 > size:
            return None
        ndim = self._int(buf, p)[0]
        p += 4
        long_size = enc.long_size
        if not 0 <= ndim <= T7_NDIM.value or p + (2 * ndim + 1) * long_size > size:
            return None
        geometry = self._geometry[ndim](buf, p)
        p += (2 * ndim + 1) * long_size
        at = p
        if p + 8 > size:
            return None
        scode, sindex = self._int2(buf, p)
        if scode == self.grammar.nil:
            return info, ndim, geometry, at, p + 4, None, 0
        if scode != torch:
            return None
        p += 8
        if 1 <= sindex <= nobj:
            storage = r.objects[sindex - 1]
            if (type(storage) is not Storage or storage.dtype is not info.dtype
                    or storage.device != info.device):
                return None
            return info, ndim, geometry, at, p, storage, 0
        if sindex != nobj + 2:
            return None
        found = self._class(enc, p, self.grammar.storages)
        if found is None:
            return None
        sinfo, end = found
        if sinfo.dtype is not info.dtype or sinfo.device != info.device or end + long_size > size:
            return None
        storage_block = bytes(buf[p:end])
        n = self._long(buf, end)[0]
        known = self.layouts.get((tensor_block, ndim))
        if known is None or known.storage_block != storage_block or known.info is not info:
            known = _Layout(self._geometry.code, tensor_block, ndim, storage_block, info, torch)
            if len(self.layouts) < _LAYOUTS:
                self.layouts[tensor_block, ndim] = known
        self.layout = known
        return info, ndim, geometry, at, end + long_size, _NEW, n


#: ``os.pread`` where the platform has it.
_PREAD = getattr(os, "pread", None)
#: Bytes of a storage after which :meth:`Entries.run` reads the next entry with ``pread``
#: (the kernel maps a file's pages 64 KiB around each fault: past that, the next page is not mapped yet).
_PEEK_AFTER = 1 << 16
#: Bytes it reads: a key, a tensor and a storage header of a few dimensions.
_PEEK = 1024
#: Distinct views it keeps (:func:`_run_view`).
_VIEWS = 4096

#: A tensor's class, dimension count, sizes-strides-offset, where its storage begins, where the storage
#: ends (a new one: where its elements begin), the storage (None, a known one or _NEW) and a new one's size.
_Head = tuple[ClassInfo, int, tuple[int, ...], int, int, Any, int]


#: The fields of a :class:`_Layout` unpacked after its key's bytes (:meth:`_Layout.with_key`) every
#: tensor laid out so repeats: the two type codes, the class blocks and the dimension count.
_KEYED_FIXED_FIELDS = operator.itemgetter(1, 3, 4, -4, -2)
#: Key lengths a layout keeps a struct for (:meth:`_Layout.with_key`).
_KEY_LENGTHS = 256
#: Layouts a reader keeps.
_LAYOUTS = 64


class _Layout:
    """The bytes of a tensor with a new storage (code, index, class header and name, dimension count,
    geometry, code, index, storage class header and name, size), as one struct; a tensor laid out the
    same way (the same classes and dimension count) is read with one unpack (spec/t7.md#t7-tensor)."""

    def __init__(self, code: str, tensor_block: bytes, ndim: int, storage_block: bytes,
                 info: ClassInfo, torch: int) -> None:
        order, long_code = code
        self.order = order
        #: The struct's format without its byte order.
        self.format = (f"ii{len(tensor_block)}si{2 * ndim + 1}{long_code}ii"
                       f"{len(storage_block)}s{long_code}")
        layout = struct.Struct(order + self.format)
        self.unpack = layout.unpack_from
        #: ``unpack_from`` of a key's bytes then the layout, by key length (see :meth:`with_key`).
        self.keyed: dict[int, Any] = {}
        self.size = layout.size
        self.tensor_block = tensor_block
        self.storage_block = storage_block
        self.ndim = ndim
        self.info = info
        #: Bytes from the end of the geometry to the end of the layout.
        self.tail = 8 + len(storage_block) + struct.calcsize(order + long_code)
        #: The fields every tensor laid out so repeats (see :data:`_KEYED_FIXED_FIELDS`).
        self.fixed = (torch, tensor_block, ndim, torch, storage_block)

    def with_key(self, length: int) -> Any:
        """``unpack_from`` of a table entry's key of ``length`` bytes followed by this layout (the key's
        bytes come first), kept for up to :data:`_KEY_LENGTHS` lengths."""
        unpack = struct.Struct(f"{self.order}{length}s{self.format}").unpack_from
        if len(self.keyed) < _KEY_LENGTHS:
            self.keyed[length] = unpack
        return unpack



class _GeometryStructs(dict[int, Any]):
    """``unpack_from`` of ``2 * ndim + 1`` longs (``code``: byte order and long), made when first asked."""

    def __init__(self, code: str) -> None:
        super().__init__()
        self.code = code

    def __missing__(self, ndim: int) -> Any:
        unpack = self[ndim] = struct.Struct(f"{self.code[0]}{2 * ndim + 1}{self.code[1]}").unpack_from
        return unpack


def _run_view(views: dict[tuple[int, ...], Any], geometry: tuple[int, ...], ndim: int, width: int) -> Any:
    """For :meth:`Entries.run`: the sizes and strides ``geometry`` holds (each tuple made once
    and shared by every tensor of that geometry: fewer objects for the collector), its element count and
    the distance from its first element to its last; :data:`SLOW` for a geometry the per-entry path must read
    (no dimension or no element, a negative size or stride, a stride whose bytes (``width`` each)
    overflow 64 bits).  Kept in ``views``, up to :data:`_VIEWS` of them (spec/t7.md#t7-tensor)."""
    sizes, strides = geometry[:ndim], geometry[ndim:]
    view: Any = SLOW
    if ndim and min(sizes) > 0 and min(strides) >= 0 and width * max(strides) < 1 << 63:
        reach = sum((n - 1) * s for n, s in zip(sizes, strides, strict=True))
        view = (sizes, strides, math.prod(sizes), reach)
    if len(views) < _VIEWS:
        views[geometry] = view
    return view
