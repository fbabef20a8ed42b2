"""Inert stand-ins for ``torch._utils`` rebuild functions and the legacy tensor ``__setstate__``
(spec/pickle.md#pickle-globals, spec/tensors.md).

Each handler receives the already type-checked argument tuple of an allowed global (see
:mod:`torchfmt.pickle.globals`) and returns a :mod:`torchfmt.model` record.  Nothing here calls into
torch or anything from the file; every view is checked against its storage before it is built.
"""

from __future__ import annotations

import dataclasses
import math
import re
import sys
from typing import TYPE_CHECKING, Any

from ..dtypes import BY_NAME, DType
from ..errors import FormatError, Unsupported, quote
from ..limits import VIEW_BYTES
from ..model import (
    Global,
    KeyedObject,
    MetaTensor,
    OpaqueObject,
    QuantizedTensor,
    SparseTensor,
    Storage,
    Tensor,
)

if TYPE_CHECKING:

    from .call import Call

#: Tensor metadata keys torch writes (``torch._utils.get_tensor_metadata``): the lazy view bits.
METADATA_KEYS = ("conj", "neg")
QSCHEMES = ("per_tensor_affine", "per_tensor_symmetric", "per_channel_affine", "per_channel_symmetric",
            "per_channel_affine_float_qparams")
#: Zero point dtypes that make a per-channel quantizer per_channel_affine_float_qparams, as torch's
#: ``_empty_per_channel_affine_quantized`` decides from them.
FLOAT_ZERO_POINTS = ("float32", "float16")
LAYOUTS = ("strided", "sparse_coo", "sparse_csr", "sparse_csc", "sparse_bsr", "sparse_bsc", "_mkldnn",
           "jagged")
COMPRESSED_LAYOUTS = ("sparse_csr", "sparse_csc", "sparse_bsr", "sparse_bsc")
#: The data descriptors (properties, slots) of ``torch.Tensor`` in torch 2.13 (``nn.Parameter`` adds
#: none): ``_set_obj_state`` applies a tensor's pickled state with ``setattr``, so a state key among
#: these rewrites the tensor itself (``data``, ``real``, ``requires_grad``, ``__class__`` ...) or fails.
#: Real writers never write one (the state is the instance ``__dict__``), and a reader refuses it
#: (spec/tensors.md#tensors-python-state).  Computed as the names ``n`` of ``dir(torch.Tensor)`` whose
#: class attribute has ``__set__`` or ``__delete__``.
TENSOR_PROPERTIES = frozenset((
    "H", "T", "__class__", "__cuda_array_interface__", "__dict__", "__weakref__", "_backward_hooks", "_base",
    "_cdata", "_grad", "_grad_fn", "_has_symbolic_sizes_strides", "_post_accumulate_grad_hooks",
    "_python_dispatch", "_version", "data", "device", "dtype", "grad", "grad_dtype", "grad_fn", "imag",
    "is_cpu", "is_cuda", "is_ipu", "is_leaf", "is_maia", "is_meta", "is_mkldnn", "is_mps", "is_mtia",
    "is_nested", "is_quantized", "is_sparse", "is_sparse_csr", "is_vulkan", "is_xla", "is_xpu", "itemsize",
    "layout", "mH", "mT", "name", "nbytes", "ndim", "output_nr", "real", "requires_grad", "retains_grad",
    "shape", "volatile",
))
#: Device types ``torch.device`` parses in torch 2.13 (c10/core/DeviceType.cpp), and the largest index it
#: keeps (a ``DeviceIndex`` is 8 bits: torch wraps 128 to -128).
DEVICE_TYPES = ("cpu", "cuda", "ipu", "xpu", "mkldnn", "opengl", "opencl", "ideep", "hip", "ve", "fpga",
                "maia", "xla", "lazy", "vulkan", "mps", "meta", "hpu", "mtia", "privateuseone")
MAX_DEVICE_INDEX = 127
_DEVICE = re.compile(r"([a-z]+)(?::(0|[1-9][0-9]{0,3}))?")
INT64_LIMIT = 1 << 63


def ints(v: Any) -> tuple[int, ...]:
    """A size or stride: a tuple/list of ints, or a ``torch.Size`` object (spec/tensors.md#tensors-view)."""
    if isinstance(v, OpaqueObject) and v.class_name == "torch.Size" and len(v.args) == 1:
        v = v.args[0]
    return tuple(v)


def is_ints(v: Any) -> bool:
    """Whether ``v`` is acceptable to :func:`ints`."""
    if isinstance(v, OpaqueObject) and v.class_name == "torch.Size" and len(v.args) == 1:
        v = v.args[0]
    return isinstance(v, (tuple, list)) and all(type(x) is int for x in v)


def check_view(storage: Storage, offset: int, size: tuple[int, ...], stride: tuple[int, ...],
               where: int | None) -> None:
    """Check a strided view against its storage (spec/tensors.md#tensors-view-bounds)."""
    if len(size) != len(stride):
        raise FormatError("bad-length", where,
                          f"size {quote(size)} and stride {quote(stride)} differ in length")
    both = size + stride  # ints (is_ints): min and max compare them in C
    if offset < 0 or both and min(both) < 0:
        raise FormatError("bad-length", where,
                          f"negative offset, size or stride {offset}, {quote(size)}, {quote(stride)}")
    if offset >= INT64_LIMIT or both and max(both) >= INT64_LIMIT:
        raise FormatError("bad-length", where, "an offset, size or stride does not fit in 64 bits")
    if 0 in size:
        return
    last = offset + sum((n - 1) * s for n, s in zip(size, stride, strict=True))
    if last >= storage.numel:
        raise FormatError("out-of-bounds", where,
                          f"view (offset {offset}, size {quote(size)}, stride {quote(stride)}) reaches "
                          f"element {last} of a storage of {storage.numel}")
    numel = math.prod(size)
    # an expand/overlap: its hash reads every logical element (spec/pickle.md#pickle-limits)
    if numel > storage.numel and numel * storage.dtype.itemsize > VIEW_BYTES.value:
        raise FormatError("limit-exceeded", where, f"a view of {numel} elements over a storage of "
                                                   f"{storage.numel}: over {VIEW_BYTES.value} bytes to hash")


def _dense(storage: Storage, offset: int, size: Any, stride: Any, requires_grad: bool, where: int | None,
           dtype: DType | None = None) -> Tensor:
    size_t, stride_t = ints(size), ints(stride)
    if dtype is not None and dtype is not storage.dtype:
        retype(storage, dtype, where)
    if dtype is None and storage.retyped:  # torch views the untyped storage's bytes as uint8 here
        raise FormatError("bad-value", where, f"a uint8 view of a storage viewed as {storage.dtype.name}")
    check_view(storage, offset, size_t, stride_t, where)
    check_requires_grad(storage.dtype, requires_grad, where)
    storage.viewed = True
    return Tensor(storage.dtype, size_t, stride_t, offset, storage, device=storage.device,
                  requires_grad=requires_grad)


def check_requires_grad(dtype: DType, requires_grad: bool, where: int | None) -> None:
    """Only floating-point and complex tensors may require grad, as torch's setter insists
    (spec/tensors.md#tensors-requires-grad)."""
    if requires_grad and not dtype.differentiable:
        raise FormatError("bad-value", where, f"a {dtype.name} tensor cannot require grad")


def retype(storage: Storage, dtype: DType, where: int | None) -> None:
    """Give an untyped (byte) storage the element type a ``_rebuild_tensor_v3`` names
    (spec/pt-zip.md#pt-zip-storage-records)."""
    if storage.dtype.name != "uint8" or storage.data is not None or storage.viewed:
        raise FormatError("bad-value", where,
                          f"a {storage.dtype.name} storage cannot also hold {dtype.name} elements")
    if storage.numel % dtype.itemsize:
        raise FormatError("bad-length", where,
                          f"{storage.numel} bytes are not a whole number of {dtype.name} elements")
    storage.numel //= dtype.itemsize
    storage.dtype = dtype
    storage.retyped = True


def _metadata(t: Tensor, metadata: dict[Any, Any] | None, where: int | None) -> Tensor:
    """The lazy view bits of spec/tensors.md#tensors-conj-neg.  torch's ``_set_tensor_metadata`` sets a
    bit whenever its key is present (a ``str`` or ``bytes`` key), whatever the value; other keys change
    nothing.  Values other than bools, which torch converts or refuses, are refused."""
    for k, v in (metadata or {}).items():
        name = k.decode("latin-1") if isinstance(k, bytes) else k
        if not isinstance(name, str) or type(v) is not bool:
            raise FormatError("bad-value", where, "tensor metadata must map str keys to bools")
        if name in METADATA_KEYS:
            setattr(t, name, True)
    if t.conj and not t.dtype.is_complex:
        raise FormatError("bad-value", where, f"a conjugate bit on a {t.dtype.name} tensor")
    if (t.conj or t.neg) and t.dtype.negation is None:
        raise FormatError("bad-value", where, f"torch cannot negate {t.dtype.name} elements")
    if t.conj and t.neg and not t.dtype.neg_conj:
        raise FormatError("bad-value", where, f"torch cannot resolve both bits of a {t.dtype.name} tensor")
    return t


def rebuild_tensor(args: tuple[Any, ...], ctx: Call) -> Tensor:
    """``_rebuild_tensor(storage, storage_offset, size, stride)`` (torch < 0.4)."""
    storage, offset, size, stride = args
    return _dense(storage, offset, size, stride, False, ctx.offset)


def rebuild_tensor_v2(args: tuple[Any, ...], ctx: Call) -> Tensor:
    """``_rebuild_tensor_v2(storage, storage_offset, size, stride, requires_grad, backward_hooks[,
    metadata])``."""
    storage, offset, size, stride, requires_grad, _hooks, *metadata = args
    t = _dense(storage, offset, size, stride, requires_grad, ctx.offset)
    return _metadata(t, metadata[0] if metadata else None, ctx.offset)


def rebuild_tensor_v3(args: tuple[Any, ...], ctx: Call) -> Tensor:
    """``_rebuild_tensor_v3(storage, storage_offset, size, stride, requires_grad, backward_hooks, dtype[,
    metadata])``: an untyped storage viewed as ``dtype``."""
    storage, offset, size, stride, requires_grad, _hooks, dtype, *metadata = args
    if requires_grad is True:  # torch views the storage in place after setting the flag, and refuses
        raise FormatError("bad-value", ctx.offset, "a _rebuild_tensor_v3 tensor cannot require grad "
                                                   "(spec/tensors.md#tensors-requires-grad)")
    t = _dense(storage, offset, size, stride, requires_grad, ctx.offset, dtype=dtype_of(dtype))
    return _metadata(t, metadata[0] if metadata else None, ctx.offset)


def as_parameter(data: Tensor | MetaTensor | SparseTensor, requires_grad: bool,
                 where: int | None = None) -> Tensor | MetaTensor | SparseTensor:
    """``nn.Parameter(data, requires_grad)``: a new tensor record over the same storage (a meta tensor
    stays one; a sparse tensor stays one too, with the Parameter's flag: version 0 has no ``parameter``
    field for it, spec/tensors.md#tensors-parameter)."""
    check_requires_grad(data.dtype, requires_grad, where)
    if isinstance(data, SparseTensor):
        return dataclasses.replace(data, requires_grad=requires_grad)
    return dataclasses.replace(data, parameter=True, requires_grad=requires_grad, attrs=dict(data.attrs))


def rebuild_parameter(args: tuple[Any, ...], ctx: Call) -> Tensor:
    """``_rebuild_parameter(data, requires_grad, backward_hooks)``."""
    data, requires_grad, _hooks = args
    return as_parameter(data, requires_grad, ctx.offset)


def rebuild_parameter_with_state(args: tuple[Any, ...], ctx: Call) -> Tensor:
    """``_rebuild_parameter_with_state(data, requires_grad, backward_hooks, state)``: Python attributes
    set on the parameter are kept in ``attrs``."""
    data, requires_grad, _hooks, state = args
    return set_attrs(as_parameter(data, requires_grad, ctx.offset), state, ctx)


def set_attrs(t: Any, state: Any, ctx: Call) -> Any:
    """Apply a ``_set_obj_state`` state (a dict, or a (dict, slots) pair, either may be None)."""
    parts = state if isinstance(state, tuple) else (state,)
    if len(parts) not in (1, 2) or any(p is not None and not isinstance(p, dict) for p in parts):
        raise FormatError("bad-pickle", ctx.offset, f"tensor state must be a dict or a pair of dicts, "
                                                    f"not {type(state).__name__}")
    for part in parts:
        for k, v in (part or {}).items():
            if not isinstance(k, str):
                raise FormatError("bad-value", ctx.offset, f"attribute name {quote(k)} is not a str")
            if k in TENSOR_PROPERTIES and isinstance(t, (Tensor, MetaTensor, SparseTensor)):
                raise FormatError("bad-value", ctx.offset, f"tensor state sets the tensor's own {quote(k)}")
            if not isinstance(t, (Tensor, MetaTensor)):
                raise Unsupported(f"python attributes on a {type(t).__name__}")
            t.attrs[k] = v
    return t


def parameter(args: tuple[Any, ...], ctx: Call) -> Tensor:
    """``torch.nn.parameter.Parameter(data=None, requires_grad=True)`` by REDUCE, or ``Parameter()`` by
    NEWOBJ before a legacy BUILD (spec/pt-legacy.md#pt-legacy-rebuild-tensor)."""
    if not args:
        return empty_tensor(BY_NAME["float32"], "cpu", parameter=True)
    data = args[0]
    requires_grad = args[1] if len(args) > 1 else True
    return as_parameter(data, requires_grad, ctx.offset)


def empty_tensor(dtype: DType, device: str, parameter: bool = False) -> Tensor:
    """An empty tensor of ``dtype``: what ``torch.FloatTensor()`` makes before a legacy BUILD sets it."""
    return Tensor(dtype, (0,), (1,), 0, Storage(dtype, 0, device), device=device, parameter=parameter,
                  requires_grad=parameter)


def tensor_class(dtype: DType, device: str) -> Any:
    """The handler of a legacy tensor class such as ``torch.FloatTensor`` called with no arguments."""
    def make(args: tuple[Any, ...], ctx: Call) -> Tensor:
        return empty_tensor(dtype, device)
    return make


def build_tensor(t: Tensor, state: Any, ctx: Call) -> None:
    """BUILD on a tensor: the legacy ``Tensor.__setstate__`` (spec/pt-legacy.md#pt-legacy-rebuild-tensor).

    A 4-tuple ``(storage, storage_offset, size, stride)`` sets the view; a 5-tuple ``(data, grad,
    backward_hooks, requires_grad, volatile)`` (a pre-0.4 Variable) takes ``data``'s view and
    ``requires_grad``, dropping ``grad`` as torch does; a 3-tuple ``(requires_grad, volatile,
    backward_hooks)`` sets ``requires_grad``.
    """
    where = ctx.offset
    if not isinstance(state, tuple) or len(state) not in (3, 4, 5):
        raise FormatError("bad-pickle", where, "a tensor's BUILD state must be a 3-, 4- or 5-tuple")
    if len(state) == 4:
        storage, offset, size, stride = state
        if not (isinstance(storage, Storage) and type(offset) is int and is_ints(size) and is_ints(stride)):
            raise FormatError("bad-pickle", where, "tensor state must be (storage, int, ints, ints)")
        if storage.dtype is not t.dtype:
            raise FormatError("bad-value", where, f"a {t.dtype.name} tensor set to a "
                                                  f"{storage.dtype.name} storage")
        size_t, stride_t = ints(size), ints(stride)
        check_view(storage, offset, size_t, stride_t, where)
        t.storage, t.storage_offset, t.shape, t.stride = storage, offset, size_t, stride_t
        t.device = storage.device
        return
    if not t.parameter:  # torch applies a plain tensor's state with set_(*state)
        raise FormatError("bad-pickle", where, "a plain tensor's BUILD state must be a 4-tuple")
    if len(state) == 5:
        data, requires_grad = state[0], state[3]
        if not isinstance(data, Tensor) or type(requires_grad) is not bool:
            raise FormatError("bad-pickle", where, "variable state must be (tensor, grad, hooks, bool, bool)")
        for f in ("dtype", "shape", "stride", "storage_offset", "storage", "device", "conj", "neg"):
            setattr(t, f, getattr(data, f))
    else:
        requires_grad = state[0]
        if type(requires_grad) is not bool:
            raise FormatError("bad-pickle", where, "parameter state must start with requires_grad (bool)")
    check_requires_grad(t.dtype, requires_grad, where)
    t.requires_grad = requires_grad


def rebuild_meta_tensor(args: tuple[Any, ...], ctx: Call) -> MetaTensor:
    """``_rebuild_meta_tensor_no_storage(dtype, size, stride, requires_grad)``: a tensor on the meta
    device, geometry only (spec/tensors.md#tensors-meta).  Sizes and strides are checked as torch's
    ``empty_strided`` would (negative strides, which it silently replaces, are refused too)."""
    dtype_g, size, stride, requires_grad = args
    where = ctx.offset
    dtype = dtype_of(dtype_g)
    size_t, stride_t = ints(size), ints(stride)
    if len(size_t) != len(stride_t):
        raise FormatError("bad-length", where, f"size {size_t} and stride {stride_t} differ in length")
    if any(n < 0 for n in size_t) or any(s < 0 for s in stride_t):
        raise FormatError("bad-length", where, f"negative size or stride {size_t}, {stride_t}")
    if math.prod(n for n in size_t if n) >= 1 << 63 or any(s >= 1 << 63 for s in stride_t):
        raise FormatError("bad-length", where, f"size {size_t} or stride {stride_t} overflows 64 bits")
    if dtype.quantized:
        raise FormatError("bad-value", where, f"a meta tensor of quantized dtype {dtype.name}")
    check_requires_grad(dtype, requires_grad, where)
    return MetaTensor(dtype, size_t, stride_t, requires_grad)


def rebuild_qtensor(args: tuple[Any, ...], ctx: Call) -> QuantizedTensor:
    """``_rebuild_qtensor(storage, storage_offset, size, stride, quantizer_params, requires_grad,
    backward_hooks)`` (spec/tensors.md#tensors-quantized)."""
    storage, offset, size, stride, qparams, requires_grad, _hooks = args
    where = ctx.offset
    if not storage.dtype.quantized:
        raise FormatError("bad-value", where, f"a quantized tensor over a {storage.dtype.name} storage")
    dense = _packed(storage, offset, size, stride, False, where) if storage.dtype.per_byte > 1 \
        else _dense(storage, offset, size, stride, False, where)
    dense.requires_grad = requires_grad
    check_requires_grad(storage.dtype, requires_grad, where)
    fields = {f.name: getattr(dense, f.name) for f in dataclasses.fields(Tensor)}
    scheme = _qscheme(qparams[0] if qparams else None, where)
    if scheme == "per_tensor_affine":
        if len(qparams) != 3 or type(qparams[1]) not in (float, int) or type(qparams[2]) is not int:
            raise FormatError("bad-pickle", where, "per_tensor_affine params: (qscheme, scale, zero_point)")
        if not -INT64_LIMIT <= qparams[2] < INT64_LIMIT or (type(qparams[1]) is int
                                                             and abs(qparams[1]) > sys.float_info.max):
            raise FormatError("bad-value", where, "a zero_point outside int64 or a scale beyond a double "
                                                  "(spec/tensors.md#tensors-quantized)")
        return QuantizedTensor(**fields, qscheme=scheme, scale=float(qparams[1]), zero_point=qparams[2])
    if scheme in ("per_channel_affine", "per_channel_affine_float_qparams"):
        if len(qparams) != 4 or type(qparams[3]) is not int:
            raise FormatError("bad-pickle", where, "per-channel params: (qscheme, scales, zero_points, axis)")
        _, scales, zero_points, axis = qparams
        if not 0 <= axis < len(dense.shape):
            raise FormatError("bad-value", where, f"axis {axis} outside a {len(dense.shape)}-d tensor")
        float_q = scheme == "per_channel_affine_float_qparams"
        scales = _channel_values(scales, "float32" if float_q else "float64", where)
        zero_points = _channel_values(zero_points, "float32" if float_q else "int64", where)
        if zero_points.dtype.name in FLOAT_ZERO_POINTS:  # torch writes float_qparams as per_channel_affine
            scheme = "per_channel_affine_float_qparams"
        for name, v in (("scales", scales), ("zero_points", zero_points)):
            if math.prod(v.shape) != dense.shape[axis]:
                raise FormatError("bad-value", where, f"{name} has {math.prod(v.shape)} values for "
                                                       f"{dense.shape[axis]} channels")
        return QuantizedTensor(**fields, qscheme=scheme, scales=scales, zero_points=zero_points, axis=axis)
    raise FormatError("bad-value", where, f"quantization scheme {scheme} cannot be loaded")


def _packed(storage: Storage, offset: int, size: Any, stride: Any, requires_grad: bool,
            where: int | None) -> Tensor:
    """A packed quantized tensor (``quint4x2``, ``quint2x4``): torch makes them contiguous only; its
    elements fill ``ceil(numel / per_byte)`` bytes of the storage from ``offset``
    (spec/tensors.md#tensors-quantized)."""
    size_t, stride_t = ints(size), ints(stride)
    contiguous = tuple(math.prod(size_t[i + 1:]) for i in range(len(size_t)))
    if any(n != 1 and s != c for n, s, c in zip(size_t, stride_t, contiguous, strict=False)) \
            or len(size_t) != len(stride_t):
        raise Unsupported(f"a non-contiguous {storage.dtype.name} tensor")
    if offset < 0 or any(n < 0 for n in size_t):
        raise FormatError("bad-length", where, f"negative offset or size {offset}, {size_t}")
    nbytes = -(-math.prod(size_t) // storage.dtype.per_byte)
    if offset + nbytes > storage.numel:
        raise FormatError("out-of-bounds", where, f"{nbytes} packed bytes from {offset} in a storage of "
                                                  f"{storage.numel}")
    return Tensor(storage.dtype, size_t, stride_t, offset, storage, device=storage.device,
                  requires_grad=requires_grad)


def _qscheme(g: Any, where: int | None) -> str:
    if not (isinstance(g, Global) and g.module == "torch" and g.name in QSCHEMES):
        raise FormatError("bad-value", where, f"{quote(g)} is not a torch qscheme")
    return g.name


def _channel_values(v: Any, dtype_name: str, where: int | None) -> Tensor:
    """Per-channel scales or zero points: a tensor, or a list torch turns into one."""
    import numpy as np

    if isinstance(v, Tensor):
        return v
    if not (isinstance(v, list) and all(type(x) in (int, float) for x in v)):
        raise FormatError("bad-pickle", where, "per-channel scales/zero points must be a tensor or a list")
    dtype = BY_NAME[dtype_name]
    arr = np.asarray(v, dtype=dtype.numpy)
    return Tensor(dtype, (len(v),), (1,), 0, Storage(dtype, len(v), data=arr))


def layout_name(g: Any, where: int | None) -> str:
    """The layout a ``torch.<layout>`` global names."""
    if not (isinstance(g, Global) and g.module == "torch" and g.name in LAYOUTS):
        raise FormatError("bad-value", where, f"{quote(g)} is not a torch layout")
    return g.name


def rebuild_sparse_tensor(args: tuple[Any, ...], ctx: Call) -> SparseTensor:
    """``_rebuild_sparse_tensor(layout, data)`` (spec/tensors.md#tensors-sparse)."""
    layout, data = args
    where = ctx.offset
    name = layout_name(layout, where)
    if name == "sparse_coo":
        if len(data) not in (3, 4):
            raise FormatError("bad-pickle", where, "sparse_coo data: (indices, values, size[, coalesced])")
        indices, values, size = data[:3]
        coalesced = data[3] if len(data) == 4 else False
        _check_sparse_parts(where, (indices, values), size)
        if type(coalesced) is not bool:
            raise FormatError("bad-pickle", where, "sparse_coo is_coalesced must be a bool")
        if len(indices.shape) != 2 or not values.shape or indices.shape[1] != values.shape[0]:
            raise FormatError("bad-length", where, f"indices {indices.shape} vs values {values.shape}")
        if len(ints(size)) != indices.shape[0] + len(values.shape) - 1:
            raise FormatError("bad-length", where, f"a {len(ints(size))}-d size for {indices.shape[0]} "
                                                   f"sparse and {len(values.shape) - 1} dense dimensions")
        # torch builds the tensor from values with autograd; its ``_values()`` never requires grad
        shown = dataclasses.replace(resolved(values), requires_grad=False)
        return SparseTensor("sparse_coo", values.dtype, ints(size), shown,
                            indices=resolved(as_int64(indices, where)), is_coalesced=coalesced,
                            requires_grad=values.requires_grad)
    if name in COMPRESSED_LAYOUTS:
        if len(data) != 4:
            raise FormatError("bad-pickle", where, f"{name} data must be (compressed, plain, values, size)")
        compressed, plain, values, size = data
        _check_sparse_parts(where, (compressed, plain, values), size)
        return SparseTensor(name, values.dtype, ints(size), resolved(values),
                            compressed_indices=resolved(compressed), plain_indices=resolved(plain),
                            requires_grad=values.requires_grad)
    raise Unsupported(f"sparse layout {name}")


def resolved(t: Tensor) -> Tensor:
    """A sparse component as torch keeps it: one with a conjugate or negative bit becomes a new contiguous
    storage of the values it presents, on the file's device (spec/tensors.md#tensors-sparse)."""
    import numpy as np

    if not (t.conj or t.neg):
        return t
    arr = np.ascontiguousarray(t.numpy()).reshape(-1)
    shape = t.shape
    stride = tuple(math.prod(shape[i + 1:]) for i in range(len(shape)))
    return Tensor(t.dtype, shape, stride, 0, Storage(t.dtype, arr.size, t.device, data=arr, viewed=True),
                  device=t.device, requires_grad=t.requires_grad)


def as_int64(t: Tensor, where: int | None) -> Tensor:
    """COO indices as torch keeps them: ``int64`` (torch casts other integer indices into a new
    contiguous storage, spec/tensors.md#tensors-sparse)."""
    import numpy as np

    if t.dtype.name == "int64":
        return t
    if t.dtype.negation != "twos" or t.conj or t.neg:
        raise FormatError("bad-value", where, f"sparse indices of dtype {t.dtype.name}")
    int64 = BY_NAME["int64"]
    arr = np.ascontiguousarray(t.numpy(), dtype=int64.numpy).reshape(-1)
    shape = t.shape
    stride = tuple(math.prod(shape[i + 1:]) for i in range(len(shape)))
    return Tensor(int64, shape, stride, 0, Storage(int64, arr.size, t.device, data=arr, viewed=True),
                  device=t.device)


def _check_sparse_parts(where: int | None, tensors: tuple[Any, ...], size: Any) -> None:
    if not all(isinstance(t, Tensor) for t in tensors) or not is_ints(size):
        raise FormatError("bad-pickle", where, "sparse parts must be tensors and a size")
    if not sparse_numel_fits(ints(size)):
        raise FormatError("bad-length", where, f"a {len(ints(size))}-d sparse size whose element count "
                                               "overflows 64 bits (spec/tensors.md#tensors-sparse)")


def sparse_numel_fits(size: tuple[int, ...]) -> bool:
    """torch's ``numel`` check of a sparse size: each dimension an int64, multiplied in order as unsigned
    64-bit numbers (a negative one wraps), no step overflowing and the product at most 2**63 - 1."""
    prod = 1
    for n in size:
        if not -INT64_LIMIT <= n < INT64_LIMIT:
            return False
        prod *= n % (1 << 64)
        if prod >= 1 << 64:
            return False
    return prod < INT64_LIMIT


def dtype_of(g: Any) -> DType:
    """The dtype a ``torch.<dtype>`` global names (the global kind checks ``torch`` + table name)."""
    return BY_NAME[g.name]


def rebuild_device_tensor_from_cpu_tensor(args: tuple[Any, ...], ctx: Call) -> Tensor | MetaTensor:
    """``_rebuild_device_tensor_from_cpu_tensor(data, dtype, device, requires_grad)``: ``data.to(dtype,
    device)`` with ``requires_grad`` set.  On ``data``'s own device and dtype torch returns ``data``
    itself (the flag set on it); on ``meta`` a meta tensor with no values; any other device is a copy
    to a backend this reader cannot describe (spec/tensors.md#tensors-device-tensor)."""
    data, dtype_g, device, requires_grad = args
    where = ctx.offset
    dtype = dtype_of(dtype_g)
    if dtype is not data.dtype:
        raise Unsupported(f"dtype conversion {data.dtype.name} -> {dtype.name} on load")
    kind, index = parse_device(device, where)
    check_requires_grad(dtype, requires_grad, where)
    if kind == "meta":
        contiguous = tuple(math.prod(data.shape[i + 1:]) for i in range(len(data.shape)))
        if any(n != 1 and s != c for n, s, c in zip(data.shape, data.stride, contiguous, strict=True)):
            raise Unsupported("a non-contiguous tensor moved to the meta device")
        return MetaTensor(dtype, data.shape, data.stride, requires_grad)
    if device_text(kind, index) != data.device:
        raise Unsupported(f"a tensor copied from {data.device} to {device_text(kind, index)} on load")
    data.requires_grad = requires_grad
    return data


def parse_device(text: str, where: int | None) -> tuple[str, int | None]:
    """A device string as ``torch.device`` parses it: ``type`` or ``type:index``, the type one of
    :data:`DEVICE_TYPES`, the index a decimal without sign or leading zero, at most
    :data:`MAX_DEVICE_INDEX` (spec/tensors.md#tensors-device)."""
    m = _DEVICE.fullmatch(text)
    if m is None or m.group(1) not in DEVICE_TYPES:
        raise FormatError("bad-value", where, "not a torch device string")
    index = None if m.group(2) is None else int(m.group(2))
    return m.group(1), check_device_index(index, where)


def check_device_index(index: int | None, where: int | None) -> int | None:
    if index is not None and not 0 <= index <= MAX_DEVICE_INDEX:
        raise FormatError("bad-value", where, f"device index {index} outside 0-{MAX_DEVICE_INDEX}")
    return index


def device_text(kind: str, index: int | None) -> str:
    return kind if index is None else f"{kind}:{index}"


@dataclasses.dataclass(frozen=True)
class DeviceKey:
    """What a ``torch.device`` hashes and compares as: equal devices merge as dict keys and set items,
    and a device equals nothing else (spec/pickle.md#pickle-keys)."""

    kind: str
    index: int | None


def device(args: tuple[Any, ...], ctx: Call) -> KeyedObject:
    """``torch.device(type)`` or ``torch.device(type, index)``: the object in its normal form
    ``[type]`` or ``[type, index]``, whatever the pickle spelled (spec/canonical.md#canonical-pt-values)."""
    kind, index = parse_device(args[0], ctx.offset)
    if len(args) == 2:
        if index is not None:
            raise FormatError("bad-value", ctx.offset, "a device string with an index and an index")
        index = check_device_index(args[1], ctx.offset)
    return KeyedObject("torch.device", [kind] if index is None else [kind, index], DeviceKey(kind, index))


def rebuild_from_type(args: tuple[Any, ...], ctx: Call) -> Any:
    """``torch._tensor._rebuild_from_type_v2(func, new_type, args, state)`` (and ``_rebuild_from_type``,
    torch 1.7-1.8, with the same arguments): a tensor with Python state or of a subclass.  ``func`` must
    itself be an allowed rebuild function."""
    func, new_type, fargs, state = args
    t = ctx.call(func, fargs)
    name = f"{new_type.module}.{new_type.name}"
    if name == "torch.nn.parameter.Parameter" and isinstance(t, (Tensor, MetaTensor)):
        t = as_parameter(t, t.requires_grad, ctx.offset)
    elif name == "torch.Tensor" and isinstance(t, (Tensor, MetaTensor)) and t.parameter:
        t = dataclasses.replace(t, parameter=False, attrs=dict(t.attrs))  # as_subclass(torch.Tensor)
    elif name != "torch.Tensor":
        if not ctx.inert:
            raise FormatError("bad-value", ctx.offset, f"{name} is not a tensor type")
        return OpaqueObject(name, [t], state)
    return set_attrs(t, state, ctx)


def declined(feature: str) -> Any:
    """A handler for a rebuild function this reader knows but declines (exit status 2)."""
    def decline(args: tuple[Any, ...], ctx: Call) -> Any:
        raise Unsupported(feature)
    return decline
