"""Inert stand-ins for ``torch._utils`` rebuild functions and the legacy tensor ``__setstate__``
(spec/pickle.md#pickle-globals, spec/tensors.md).

Each handler receives the already type-checked argument tuple of an allowed global (see
:mod:`torchfmt.pickle.globals`) and returns a :mod:`torchfmt.model` record.  Nothing here calls into
torch or anything from the file; every view is checked against its storage before it is built.
"""

from __future__ import annotations

import dataclasses
import math
from typing import TYPE_CHECKING, Any

import numpy as np

from ..dtypes import BY_NAME, DType
from ..errors import FormatError, Unsupported
from ..limits import VIEW_ELEMENTS
from ..model import Global, MetaTensor, OpaqueObject, QuantizedTensor, SparseTensor, Storage, Tensor

if TYPE_CHECKING:
    from ..pickle.globals import Call

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
        raise FormatError("bad-length", where, f"size {size} and stride {stride} differ in length")
    if offset < 0 or any(s < 0 for s in size) or any(s < 0 for s in stride):
        raise FormatError("bad-length", where, f"negative offset, size or stride {offset}, {size}, {stride}")
    if 0 in size:
        return
    last = offset + sum((n - 1) * s for n, s in zip(size, stride, strict=True))
    if last >= storage.numel:
        raise FormatError("out-of-bounds", where,
                          f"view (offset {offset}, size {size}, stride {stride}) reaches element {last} "
                          f"of a storage of {storage.numel}")
    numel = math.prod(size)
    if numel > max(storage.numel, VIEW_ELEMENTS.value):  # an expand/overlap whose hash would never end
        raise FormatError("limit-exceeded", where, f"a view of {numel} elements over a storage of "
                                                   f"{storage.numel}")


def _dense(storage: Storage, offset: int, size: Any, stride: Any, requires_grad: bool, where: int | None,
           dtype: DType | None = None) -> Tensor:
    size_t, stride_t = ints(size), ints(stride)
    if dtype is not None and dtype is not storage.dtype:
        retype(storage, dtype, where)
    check_view(storage, offset, size_t, stride_t, where)
    return Tensor(storage.dtype, size_t, stride_t, offset, storage, device=storage.device,
                  requires_grad=requires_grad)


def retype(storage: Storage, dtype: DType, where: int | None) -> None:
    """Give an untyped (byte) storage the element type a ``_rebuild_tensor_v3`` names
    (spec/pt-zip.md#pt-zip-storage-records)."""
    if storage.dtype.name != "uint8" or storage.data is not None:
        raise FormatError("bad-value", where,
                          f"a {storage.dtype.name} storage cannot also hold {dtype.name} elements")
    if storage.numel % dtype.itemsize:
        raise FormatError("bad-length", where,
                          f"{storage.numel} bytes are not a whole number of {dtype.name} elements")
    storage.numel //= dtype.itemsize
    storage.dtype = dtype


def _metadata(t: Tensor, metadata: dict[Any, Any] | None, where: int | None) -> Tensor:
    """The lazy view bits of spec/tensors.md#tensors-conj-neg; other metadata keys change nothing."""
    for k in METADATA_KEYS:
        v = (metadata or {}).get(k, False)
        if type(v) is not bool:
            raise FormatError("bad-value", where, f"tensor metadata {k!r} is {v!r}, not a bool")
        setattr(t, k, v)
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
    t = _dense(storage, offset, size, stride, requires_grad, ctx.offset, dtype=dtype_of(dtype))
    return _metadata(t, metadata[0] if metadata else None, ctx.offset)


def as_parameter(data: Tensor | MetaTensor, requires_grad: bool) -> Tensor | MetaTensor:
    """``nn.Parameter(data, requires_grad)``: a new tensor record over the same storage (a meta tensor
    stays one)."""
    return dataclasses.replace(data, parameter=True, requires_grad=requires_grad, attrs=dict(data.attrs))


def rebuild_parameter(args: tuple[Any, ...], ctx: Call) -> Tensor:
    """``_rebuild_parameter(data, requires_grad, backward_hooks)``."""
    data, requires_grad, _hooks = args
    return as_parameter(data, requires_grad)


def rebuild_parameter_with_state(args: tuple[Any, ...], ctx: Call) -> Tensor:
    """``_rebuild_parameter_with_state(data, requires_grad, backward_hooks, state)``: Python attributes
    set on the parameter are kept in ``attrs``."""
    data, requires_grad, _hooks, state = args
    return set_attrs(as_parameter(data, requires_grad), state, ctx)


def set_attrs(t: Any, state: Any, ctx: Call) -> Any:
    """Apply a ``_set_obj_state`` state (a dict, or a (dict, slots) pair, either may be None)."""
    parts = state if isinstance(state, tuple) else (state,)
    if len(parts) not in (1, 2) or any(p is not None and not isinstance(p, dict) for p in parts):
        raise FormatError("bad-pickle", ctx.offset, f"tensor state must be a dict or a pair of dicts, "
                                                    f"not {type(state).__name__}")
    for part in parts:
        for k, v in (part or {}).items():
            if not isinstance(k, str):
                raise FormatError("bad-value", ctx.offset, f"attribute name {k!r} is not a str")
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
    return as_parameter(data, requires_grad)


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
    return MetaTensor(dtype, size_t, stride_t, requires_grad)


def rebuild_qtensor(args: tuple[Any, ...], ctx: Call) -> QuantizedTensor:
    """``_rebuild_qtensor(storage, storage_offset, size, stride, quantizer_params, requires_grad,
    backward_hooks)`` (spec/tensors.md#tensors-quantized)."""
    storage, offset, size, stride, qparams, requires_grad, _hooks = args
    where = ctx.offset
    if not storage.dtype.quantized:
        raise FormatError("bad-value", where, f"a quantized tensor over a {storage.dtype.name} storage")
    dense = _packed(storage, offset, size, stride, requires_grad, where) if storage.dtype.per_byte > 1 \
        else _dense(storage, offset, size, stride, requires_grad, where)
    fields = {f.name: getattr(dense, f.name) for f in dataclasses.fields(Tensor)}
    scheme = _qscheme(qparams[0] if qparams else None, where)
    if scheme == "per_tensor_affine":
        if len(qparams) != 3 or type(qparams[1]) not in (float, int) or type(qparams[2]) is not int:
            raise FormatError("bad-pickle", where, "per_tensor_affine params: (qscheme, scale, zero_point)")
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
        raise FormatError("bad-value", where, f"{g!r} is not a torch qscheme")
    return g.name


def _channel_values(v: Any, dtype_name: str, where: int | None) -> Tensor:
    """Per-channel scales or zero points: a tensor, or a list torch turns into one."""
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
        raise FormatError("bad-value", where, f"{g!r} is not a torch layout")
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
        return SparseTensor("sparse_coo", values.dtype, ints(size), values, indices=indices,
                            is_coalesced=coalesced)
    if name in COMPRESSED_LAYOUTS:
        if len(data) != 4:
            raise FormatError("bad-pickle", where, f"{name} data must be (compressed, plain, values, size)")
        compressed, plain, values, size = data
        _check_sparse_parts(where, (compressed, plain, values), size)
        return SparseTensor(name, values.dtype, ints(size), values, compressed_indices=compressed,
                            plain_indices=plain)
    raise Unsupported(f"sparse layout {name}")


def _check_sparse_parts(where: int | None, tensors: tuple[Any, ...], size: Any) -> None:
    if not all(isinstance(t, Tensor) for t in tensors) or not is_ints(size):
        raise FormatError("bad-pickle", where, "sparse parts must be tensors and a size")


def dtype_of(g: Any) -> DType:
    """The dtype a ``torch.<dtype>`` global names (the global kind checks ``torch`` + table name)."""
    return BY_NAME[g.name]


def rebuild_device_tensor_from_cpu_tensor(args: tuple[Any, ...], ctx: Call) -> Tensor:
    """``_rebuild_device_tensor_from_cpu_tensor(data, dtype, device, requires_grad)``: a CPU copy of a
    tensor of a storage-less backend (XLA, MTIA, ...)."""
    data, dtype, device, requires_grad = args
    if dtype_of(dtype) is not data.dtype:
        raise Unsupported(f"dtype conversion {data.dtype.name} -> {dtype.name} on load")
    return dataclasses.replace(data, device=device, requires_grad=requires_grad, attrs=dict(data.attrs))


def rebuild_from_type(args: tuple[Any, ...], ctx: Call) -> Any:
    """``torch._tensor._rebuild_from_type_v2(func, new_type, args, state)`` (and ``_rebuild_from_type``,
    torch 1.7-1.8, with the same arguments): a tensor with Python state or of a subclass.  ``func`` must
    itself be an allowed rebuild function."""
    func, new_type, fargs, state = args
    t = ctx.call(func, fargs)
    name = f"{new_type.module}.{new_type.name}"
    if name == "torch.nn.parameter.Parameter" and isinstance(t, (Tensor, MetaTensor)):
        t = as_parameter(t, t.requires_grad)
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
