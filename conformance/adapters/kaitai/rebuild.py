"""What each allowed callable builds, from its arguments alone
(spec/pickle.md#what-the-allowed-callables-build), and the argument kinds of the allowlist
(spec/pickle.md#pickle-globals).  Nothing here calls torch or anything a file names.
"""

from __future__ import annotations

import dataclasses
import itertools
import math
import re
from collections.abc import Callable
from typing import Any

import numpy as np

from .describe import MAX_EXPANDED, presented_blocks
from .facts import DTYPES, DType, dtype_arith, tensor_properties
from .failure import Decline, Reject
from .machine import Machine
from .values import Global, MetaTensor, ODict, Opaque, QuantizedTensor, SparseTensor, Storage, Tensor

LAYOUTS = ("strided", "sparse_coo", "sparse_csr", "sparse_csc", "sparse_bsr", "sparse_bsc", "_mkldnn",
           "jagged")
COMPRESSED = ("sparse_csr", "sparse_csc", "sparse_bsr", "sparse_bsc")
QSCHEMES = ("per_tensor_affine", "per_tensor_symmetric", "per_channel_affine", "per_channel_symmetric",
            "per_channel_affine_float_qparams")
TENSOR_TYPES = {f"{prefix}{d.storage_class[:-len('Storage')]}Tensor": d
                for prefix in ("torch.", "torch.cuda.")
                for d in DTYPES.values() if d.storage_class and not d.quantized}


# -- argument kinds (spec/pickle.md, the kinds table) ------------------------------------------------

def _size_items(v: Any) -> Any:
    if isinstance(v, Opaque) and v.class_name == "torch.Size" and len(v.args) == 1:
        return v.args[0]
    return v


def is_ints(v: Any) -> bool:
    v = _size_items(v)
    return isinstance(v, (tuple, list)) and all(type(x) is int for x in v)


def _torch_global(names: Any) -> Callable[[Any], bool]:
    return lambda v: isinstance(v, Global) and v.module == "torch" and v.name in names


KINDS: dict[str, Callable[[Any], bool]] = {
    "any": lambda v: True,
    "int": lambda v: type(v) is int,
    "bool": lambda v: type(v) is bool,
    "number": lambda v: type(v) in (int, float),
    "str": lambda v: type(v) is str,
    "ints": is_ints,
    "size_items": lambda v: is_ints(v) or isinstance(v, (tuple, list)) and all(
        type(x) in (int, bool) for x in v),
    "tuple": lambda v: type(v) is tuple,
    "list": lambda v: type(v) is list,
    "dict": lambda v: isinstance(v, dict),
    "hooks": lambda v: v is None or isinstance(v, dict),
    "pairs": lambda v: isinstance(v, dict) or isinstance(v, (list, tuple)) and all(
        isinstance(p, (list, tuple)) and len(p) == 2 for p in v),
    "iterable": lambda v: isinstance(v, (list, tuple, set, frozenset)),
    "bytes_or_str": lambda v: isinstance(v, (bytes, str)),
    "storage": lambda v: isinstance(v, Storage),
    "tensor": lambda v: isinstance(v, Tensor),
    "param_data": lambda v: isinstance(v, (Tensor, MetaTensor, SparseTensor)),
    "global": lambda v: isinstance(v, Global),
    "dtype": _torch_global(DTYPES),
    "layout": _torch_global(LAYOUTS),
}


def is_kind(kind: str, v: Any) -> bool:
    return KINDS[kind](v)


# -- dense tensors (spec/tensors.md#tensors-view) -------------------------------------------------------

def check_view(storage: Storage, offset: int, size: tuple[int, ...], stride: tuple[int, ...],
               what: str) -> None:
    """A view's elements must lie inside its storage (spec/tensors.md#tensors-view-bounds)."""
    if len(size) != len(stride):
        raise Reject("bad-length", f"{what}: size {size} and stride {stride} differ in length")
    if offset < 0 or any(x < 0 for x in size) or any(x < 0 for x in stride):
        raise Reject("bad-length", f"{what}: negative offset, size or stride: {offset}, {size}, {stride}")
    if any(x >= 1 << 63 for x in (offset, *size, *stride)):
        raise Reject("bad-length", f"{what}: an offset, size or stride of 2^63 or more")
    if 0 in size:
        return
    last = offset + sum((n - 1) * s for n, s in zip(size, stride, strict=True))
    if last >= storage.numel:
        raise Reject("out-of-bounds", f"{what}: the view (offset {offset}, size {size}, stride {stride}) "
                                      f"reaches element {last} of a storage of {storage.numel}")


#: spec/tensors.md#tensors-requires-grad / #tensors-conj-neg: per dtype (negation, conjugate bit allowed,
#: differentiable), and #tensors-python-state: the names a tensor state may not set.
ARITH = dtype_arith()
TENSOR_PROPERTIES = tensor_properties()
#: spec/tensors.md#tensors-device: the device types and the string's grammar.
DEVICE_TYPES = ("cpu", "cuda", "ipu", "xpu", "mkldnn", "opengl", "opencl", "ideep", "hip", "ve", "fpga",
                "maia", "xla", "lazy", "vulkan", "mps", "meta", "hpu", "mtia", "privateuseone")
_DEVICE = re.compile(r"([a-z]+)(?::(0|[1-9][0-9]{0,3}))?")


def _grad(m: Machine, dtype_name: str, requires_grad: bool) -> None:
    if requires_grad and not ARITH[dtype_name][3]:
        raise m.fail(f"a {dtype_name} tensor cannot require grad", "bad-value")


def _dense(m: Machine, storage: Storage, offset: int, size: Any, stride: Any, requires_grad: bool) -> Tensor:
    _grad(m, storage.dtype.name, requires_grad)
    size_t, stride_t = tuple(_size_items(size)), tuple(_size_items(stride))
    if storage.dtype.per_byte > 1:
        _check_packed(m, storage, offset, size_t, stride_t)
    else:
        check_view(storage, offset, size_t, stride_t, m.what)
        numel = math.prod(size_t)
        if numel > max(storage.numel, MAX_EXPANDED):
            raise m.fail(f"a view of {numel} elements over a storage of {storage.numel}", "limit-exceeded")
    return Tensor(storage.dtype, size_t, stride_t, offset, storage, storage.device, requires_grad)


def _check_packed(m: Machine, storage: Storage, offset: int, size: tuple[int, ...],
                  stride: tuple[int, ...]) -> None:
    """A packed quantized tensor (quint4x2, quint2x4): contiguous, its values fill ceil(numel / per_byte)
    bytes from ``offset`` (spec/pickle.md#pickle-rebuild)."""
    if len(size) != len(stride) or offset < 0 or any(x < 0 for x in size):
        raise m.fail(f"packed tensor geometry {offset}, {size}, {stride}", "bad-length")
    expect, step = [], 1
    for n in reversed(size):
        expect.append(step)
        step *= n
    if any(n > 1 and s != e for n, s, e in zip(size, stride, reversed(expect), strict=True)):
        raise Decline(f"a packed {storage.dtype.name} tensor that is not contiguous")
    nbytes = -(-math.prod(size) // storage.dtype.per_byte)
    if nbytes and offset + nbytes > storage.numel:
        raise m.fail(f"a packed tensor of {nbytes} bytes from {offset} in a storage of {storage.numel}",
                     "out-of-bounds")


def _metadata(m: Machine, t: Tensor, metadata: Any) -> Tensor:
    """The lazy view bits of a metadata dict; other keys change nothing (spec/tensors.md#tensors-conj-neg)."""
    if metadata is None:
        return t
    if not isinstance(metadata, dict):
        raise m.fail("tensor metadata is not a dict", "bad-value")
    for k, v in metadata.items():  # a present key sets its bit, whatever the (bool) value
        name = k.decode("latin-1") if isinstance(k, bytes) else k
        if not isinstance(name, str) or type(v) is not bool:
            raise m.fail("tensor metadata must map str keys to bools", "bad-value")
        if name in ("conj", "neg"):
            setattr(t, name, True)
    if t.conj and not ARITH[t.dtype.name][1]:
        raise m.fail(f"a conjugate bit on a {t.dtype.name} tensor", "bad-value")
    if t.conj and t.neg and not ARITH[t.dtype.name][2]:
        raise m.fail(f"both bits on a {t.dtype.name} tensor", "bad-value")
    if (t.conj or t.neg) and ARITH[t.dtype.name][0] is None:
        raise m.fail(f"torch cannot negate {t.dtype.name}", "bad-value")
    return t


def rebuild_tensor(args: tuple[Any, ...], m: Machine) -> Tensor:
    storage, offset, size, stride = args
    return _dense(m, storage, offset, size, stride, False)


def _as_uint8(m: Machine, storage: Storage) -> None:
    """A _rebuild_tensor(_v2) view reads an untyped storage as uint8, which fixes its dtype
    (spec/tensors.md#tensors-untyped-storage)."""
    if storage.retyped:
        raise m.fail(f"a uint8 view of an untyped storage viewed as {storage.dtype.name}", "bad-value")
    storage.typed = True


def rebuild_tensor_v2(args: tuple[Any, ...], m: Machine) -> Tensor:
    storage, offset, size, stride, requires_grad, _hooks, *metadata = args
    _as_uint8(m, storage)
    t = _dense(m, storage, offset, size, stride, requires_grad)
    return _metadata(m, t, metadata[0] if metadata else None)


def rebuild_tensor_v3(args: tuple[Any, ...], m: Machine) -> Tensor:
    """A v3 call whose ``requires_grad`` is true is refused whatever its dtype: torch makes the tensor
    require grad before it views the storage in place (spec/tensors.md#tensors-requires-grad)."""
    storage, offset, size, stride, requires_grad, _hooks, dtype_g, *metadata = args
    if requires_grad:
        raise m.fail("_rebuild_tensor_v3 with requires_grad true (no torch loads it)", "bad-value")
    dtype = DTYPES[dtype_g.name]
    if storage.dtype is not dtype:
        if storage.dtype.name != "uint8" or storage.typed:
            raise m.fail(f"a {storage.dtype.name} storage viewed as {dtype.name}", "bad-value")
        if storage.numel % dtype.itemsize:
            raise m.fail(f"{storage.numel} bytes are not whole {dtype.name} elements", "bad-length")
        storage.numel //= dtype.itemsize
        storage.dtype = dtype
        storage.retyped = True
    storage.typed = True
    t = _dense(m, storage, offset, size, stride, requires_grad)
    return _metadata(m, t, metadata[0] if metadata else None)


def rebuild_meta_tensor_no_storage(args: tuple[Any, ...], m: Machine) -> MetaTensor:
    """``_rebuild_meta_tensor_no_storage(dtype, size, stride, requires_grad)``: a geometry PyTorch can
    make, of a dtype that is not quantized (spec/tensors.md#tensors-meta)."""
    dtype_g, size, stride, requires_grad = args
    dtype = DTYPES[dtype_g.name]
    size_t, stride_t = tuple(_size_items(size)), tuple(_size_items(stride))
    if len(size_t) != len(stride_t) or any(x < 0 for x in (*size_t, *stride_t)) \
            or any(x >= 1 << 63 for x in stride_t) or math.prod(x for x in size_t if x) >= 1 << 63:
        raise m.fail(f"meta tensor geometry {size_t} / {stride_t}", "bad-length")
    if dtype.quantized:
        raise m.fail(f"a quantized ({dtype.name}) meta tensor", "bad-value")
    _grad(m, dtype.name, requires_grad)
    return MetaTensor(dtype, size_t, stride_t, requires_grad)


def as_parameter(t: Any, requires_grad: bool, m: Machine | None = None) -> Any:
    """``nn.Parameter(t, requires_grad)``; a sparse tensor stays a sparse tensor with the Parameter's
    flag (spec/tensors.md#tensors-parameter)."""
    if m is not None:
        _grad(m, t.dtype.name, requires_grad)
    if isinstance(t, SparseTensor):
        return dataclasses.replace(t, requires_grad=requires_grad)
    return dataclasses.replace(t, parameter=True, requires_grad=requires_grad)


def rebuild_parameter(args: tuple[Any, ...], m: Machine) -> Tensor:
    data, requires_grad, _hooks = args
    return as_parameter(data, requires_grad, m)


def _check_state(m: Machine, state: Any) -> None:
    """A ``_set_obj_state`` state: a dict, or a pair of dicts (either may be None) of str keys."""
    parts = state if isinstance(state, tuple) else (state,)
    if len(parts) not in (1, 2) or any(p is not None and not isinstance(p, dict) for p in parts):
        raise m.fail(f"a tensor's state must be a dict or a pair of dicts, not {type(state).__name__}")
    for part in parts:
        if part and not all(type(k) is str for k in part):
            raise m.fail("a tensor attribute name is not a str", "bad-value")
        if part and any(k in TENSOR_PROPERTIES for k in part):
            raise m.fail("a tensor state names one of the tensor's own properties", "bad-value")


def rebuild_parameter_with_state(args: tuple[Any, ...], m: Machine) -> Tensor:
    data, requires_grad, _hooks, state = args
    _check_state(m, state)
    return as_parameter(data, requires_grad, m)


def parameter(args: tuple[Any, ...], m: Machine) -> Tensor:
    """``nn.Parameter(data=None, requires_grad=True)``; with no argument (NEWOBJ) an empty float32
    Parameter that a legacy BUILD then sets."""
    if not args:
        return _empty(DTYPES["float32"], "cpu", parameter=True)
    return as_parameter(args[0], args[1] if len(args) > 1 else True, m)


def _empty(dtype: DType, device: str, parameter: bool = False) -> Tensor:
    return Tensor(dtype, (0,), (1,), 0, Storage(dtype, 0, device), device, requires_grad=parameter,
                  parameter=parameter)


def _tensor_type(qualname: str) -> Callable[[tuple[Any, ...], Machine], Tensor]:
    dtype = TENSOR_TYPES[qualname]
    device = "cuda" if qualname.startswith("torch.cuda.") else "cpu"
    return lambda args, m: _empty(dtype, device)


def build_tensor(t: Tensor, state: Any, m: Machine) -> None:
    """BUILD on a tensor, the legacy ``__setstate__`` (spec/pt-legacy.md#pt-legacy-rebuild-tensor):
    ``(storage, offset, size, stride)`` sets the view, ``(data, grad, hooks, requires_grad, volatile)``
    takes a Variable's data and flag, ``(requires_grad, volatile, hooks)`` sets the flag."""
    if not isinstance(state, tuple) or len(state) not in (3, 4, 5):
        raise m.fail("a tensor's BUILD state must be a 3-, 4- or 5-tuple")
    if len(state) == 4:
        storage, offset, size, stride = state
        if not (isinstance(storage, Storage) and type(offset) is int and is_ints(size) and is_ints(stride)):
            raise m.fail("a tensor's state must be (storage, int, ints, ints)")
        if storage.dtype is not t.dtype:
            raise m.fail(f"a {t.dtype.name} tensor set to a {storage.dtype.name} storage", "bad-value")
        v = _dense(m, storage, offset, size, stride, t.requires_grad)
        t.storage, t.storage_offset, t.device = v.storage, offset, v.device
        t.shape, t.stride = v.shape, v.stride
        return
    if not t.parameter:  # spec/tensors.md#tensors-legacy-build: a plain tensor takes set_(*state)
        raise m.fail("a plain tensor's BUILD state must be a 4-tuple")
    if len(state) == 5:
        data, requires_grad = state[0], state[3]
        if not isinstance(data, Tensor) or type(requires_grad) is not bool:
            raise m.fail("a Variable's state must be (tensor, grad, hooks, bool, bool)")
        for f in ("dtype", "shape", "stride", "storage_offset", "storage", "device", "conj", "neg"):
            setattr(t, f, getattr(data, f))
    else:
        requires_grad = state[0]
        if type(requires_grad) is not bool:
            raise m.fail("a Parameter's state must start with requires_grad (bool)")
    _grad(m, t.dtype.name, requires_grad)
    t.requires_grad = requires_grad


# -- quantized and sparse tensors (spec/tensors.md#tensors-quantized, #tensors-sparse) ------------------

def _channel_values(m: Machine, v: Any, dtype_name: str) -> Tensor:
    if isinstance(v, Tensor):
        return v
    if not (isinstance(v, list) and all(type(x) in (int, float) for x in v)):
        raise m.fail("per-channel scales/zero points must be a tensor or a list")
    dtype = DTYPES[dtype_name]
    arr = np.asarray(v, dtype=dtype.numpy).astype(dtype.numpy.newbyteorder("<")).view(np.uint8)
    return Tensor(dtype, (len(v),), (1,), 0, Storage(dtype, len(v), "cpu", arr.reshape(len(v), -1)), "cpu")


def rebuild_qtensor(args: tuple[Any, ...], m: Machine) -> QuantizedTensor:
    storage, offset, size, stride, qparams, requires_grad, _hooks = args
    if not storage.dtype.quantized:
        raise m.fail(f"a quantized tensor over a {storage.dtype.name} storage", "bad-value")
    dense = _dense(m, storage, offset, size, stride, requires_grad)
    fields = {f.name: getattr(dense, f.name) for f in dataclasses.fields(Tensor)}
    g = qparams[0] if qparams else None
    if not (isinstance(g, Global) and g.module == "torch" and g.name in QSCHEMES):
        raise m.fail(f"{g!r} is not a torch qscheme", "bad-value")
    scheme = g.name
    if scheme == "per_tensor_affine":
        if len(qparams) != 3 or type(qparams[1]) not in (float, int) or type(qparams[2]) is not int:
            raise m.fail("per_tensor_affine parameters must be (qscheme, scale, zero_point)")
        if not -(1 << 63) <= qparams[2] < 1 << 63:
            raise m.fail("a zero point that does not fit an int64", "bad-value")
        try:
            scale = float(qparams[1])
        except OverflowError:
            raise m.fail("a scale that does not fit a double", "bad-value") from None
        return QuantizedTensor(**fields, qscheme=scheme, scale=scale, zero_point=qparams[2])
    if scheme in ("per_channel_affine", "per_channel_affine_float_qparams"):
        if len(qparams) != 4 or type(qparams[3]) is not int:
            raise m.fail("per-channel parameters must be (qscheme, scales, zero_points, axis)")
        _, scales, zero_points, axis = qparams
        if not 0 <= axis < len(dense.shape):
            raise m.fail(f"axis {axis} of a {len(dense.shape)}-d tensor", "bad-value")
        fq = scheme == "per_channel_affine_float_qparams"
        scales_t = _channel_values(m, scales, "float32" if fq else "float64")
        zeros_t = _channel_values(m, zero_points, "float32" if fq else "int64")
        if zeros_t.dtype.name in ("float32", "float16"):  # how torch's loader tells float_qparams apart
            scheme = "per_channel_affine_float_qparams"
        for name, t in (("scales", scales_t), ("zero_points", zeros_t)):
            if math.prod(t.shape) != dense.shape[axis]:
                raise m.fail(f"{name} has {math.prod(t.shape)} values for {dense.shape[axis]} channels",
                             "bad-value")
        return QuantizedTensor(**fields, qscheme=scheme, scales=scales_t, zero_points=zeros_t, axis=axis)
    raise m.fail(f"quantization scheme {scheme} (torch cannot load it)", "bad-value")


def _check_numel(m: Machine, size: tuple[int, ...]) -> None:
    """PyTorch's ``numel`` check of a sparse size: each dimension an int64, multiplied in order as
    unsigned 64-bit numbers, no step nor the product past 2^63 - 1 (spec/tensors.md#tensors-sparse)."""
    product = 1
    for n in size:
        if not -(1 << 63) <= n < 1 << 63:
            raise m.fail(f"a sparse dimension {n} that does not fit an int64", "bad-length")
        product *= n % (1 << 64)
        if product >= 1 << 63:
            raise m.fail(f"a sparse size {size} whose element count overflows", "bad-length")


def rebuild_sparse_tensor(args: tuple[Any, ...], m: Machine) -> SparseTensor:
    layout, data = args
    name = layout.name
    if name == "sparse_coo":
        if len(data) not in (3, 4):
            raise m.fail("sparse_coo data must be (indices, values, size[, is_coalesced])")
        indices, values, size = data[:3]
        coalesced = data[3] if len(data) == 4 else False
        if not (isinstance(indices, Tensor) and isinstance(values, Tensor) and is_ints(size)
                and type(coalesced) is bool):
            raise m.fail("sparse_coo data must be (tensor, tensor, ints[, bool])")
        if len(indices.shape) != 2 or not values.shape or indices.shape[1] != values.shape[0]:
            raise m.fail(f"indices {indices.shape} do not fit values {values.shape}", "bad-length")
        shape = tuple(_size_items(size))
        _check_numel(m, shape)
        if len(shape) != indices.shape[0] + len(values.shape) - 1:
            raise m.fail(f"a {len(shape)}-d size for {indices.shape[0]} sparse and {len(values.shape) - 1} "
                         "dense dimensions", "bad-length")
        shown = dataclasses.replace(_resolved(values), requires_grad=False)  # _values() never requires grad
        return SparseTensor(name, values.dtype, shape, values.requires_grad,  # built from values by autograd
                            {"indices": _resolved(_int64(m, indices)), "values": shown}, coalesced)
    if name in COMPRESSED:
        if len(data) != 4:
            raise m.fail(f"{name} data must be (compressed_indices, plain_indices, values, size)")
        compressed, plain, values, size = data
        if not (all(isinstance(t, Tensor) for t in (compressed, plain, values)) and is_ints(size)):
            raise m.fail(f"{name} data must be three tensors and a size")
        _check_numel(m, tuple(_size_items(size)))
        return SparseTensor(name, values.dtype, tuple(_size_items(size)), values.requires_grad,
                            {"compressed_indices": _resolved(compressed), "plain_indices": _resolved(plain),
                             "values": _resolved(values)})
    raise Decline(f"sparse layout {name}")


def rebuild_sparse_csr_tensor(args: tuple[Any, ...], m: Machine) -> SparseTensor:
    """``_rebuild_sparse_csr_tensor(layout, data)`` (torch 1.10-1.13): a ``sparse_csr`` tensor."""
    if args[0].name != "sparse_csr":
        raise m.fail(f"_rebuild_sparse_csr_tensor of layout {args[0].name}", "bad-value")
    return rebuild_sparse_tensor(args, m)


def _resolved(t: Tensor) -> Tensor:
    """A sparse component with a conjugate or negative bit as torch keeps it: a new contiguous storage of
    the values it presents, on the file's device (spec/tensors.md#tensors-sparse)."""
    if not (t.conj or t.neg):
        return t
    raw = np.frombuffer(b"".join(bytes(b) for b in presented_blocks(t)) if t.numel else b"", np.uint8)
    stride = tuple(math.prod(t.shape[i + 1:]) for i in range(len(t.shape)))
    return dataclasses.replace(t, stride=stride, storage_offset=0, conj=False, neg=False,
                               storage=Storage(t.dtype, t.numel, t.device, raw))


def _int64(m: Machine, t: Tensor) -> Tensor:
    """COO indices as torch keeps them: a new contiguous int64 tensor (spec/tensors.md#tensors-sparse)."""
    if t.dtype.name == "int64":
        return t
    if t.dtype.name not in ("uint8", "int8", "int16", "int32") or t.conj or t.neg:
        raise m.fail(f"sparse indices of dtype {t.dtype.name}", "bad-value")
    elems = t.storage.array() if t.storage is not None else np.zeros((0, t.dtype.itemsize), np.uint8)
    width = t.dtype.itemsize
    values = [int.from_bytes(bytes(elems[t.storage_offset + sum(i * s for i, s in zip(idx, t.stride,
                                                                                       strict=True))]),
                             "little", signed=t.dtype.name != "uint8")
              for idx in itertools.product(*(range(n) for n in t.shape))] if width else []
    raw = np.array(values, dtype="<i8").view(np.uint8)
    int64 = DTYPES["int64"]
    stride = tuple(math.prod(t.shape[i + 1:]) for i in range(len(t.shape)))
    return Tensor(int64, t.shape, stride, 0, Storage(int64, len(values), t.device, raw), t.device)


def parse_device(m: Machine, text: Any, index: Any = None) -> tuple[str, int | None]:
    """A device as torch.device parses it (spec/tensors.md#tensors-device)."""
    match = _DEVICE.fullmatch(text) if isinstance(text, str) else None
    if match is None or match.group(1) not in DEVICE_TYPES:
        raise m.fail(f"{text!r} is not a device string", "bad-value")
    parsed = None if match.group(2) is None else int(match.group(2))
    if index is not None:
        if parsed is not None:
            raise m.fail("a device string with an index, and an index", "bad-value")
        parsed = index
    if parsed is not None and not 0 <= parsed <= 127:
        raise m.fail(f"device index {parsed}", "bad-value")
    return match.group(1), parsed


def device(args: tuple[Any, ...], m: Machine) -> Opaque:
    kind, index = parse_device(m, args[0], args[1] if len(args) > 1 else None)
    return Opaque("torch.device", [kind] if index is None else [kind, index])


def rebuild_device_tensor_from_cpu_tensor(args: tuple[Any, ...], m: Machine) -> Tensor | MetaTensor:
    """``data.to(dtype, device)`` (spec/tensors.md#tensors-device-tensor)."""
    data, dtype_g, device_text, requires_grad = args
    if DTYPES[dtype_g.name] is not data.dtype:
        raise Decline(f"dtype conversion {data.dtype.name} -> {dtype_g.name} on load")
    kind, index = parse_device(m, device_text)
    _grad(m, data.dtype.name, requires_grad)
    if kind == "meta":
        contiguous = tuple(math.prod(data.shape[i + 1:]) for i in range(len(data.shape)))
        if any(n != 1 and s != c for n, s, c in zip(data.shape, data.stride, contiguous, strict=True)):
            raise Decline("a non-contiguous tensor moved to the meta device")
        return MetaTensor(data.dtype, data.shape, data.stride, requires_grad)
    if (kind if index is None else f"{kind}:{index}") != data.device:
        raise Decline(f"a tensor copied from {data.device} to {device_text} on load")
    data.requires_grad = requires_grad
    return data


def rebuild_from_type_v2(args: tuple[Any, ...], m: Machine) -> Any:
    """``_rebuild_from_type_v2(func, new_type, args, state)`` (and ``_rebuild_from_type``)."""
    func, new_type, fargs, state = args
    t = m.call(func, fargs)
    if new_type.qualname == "torch.nn.parameter.Parameter" and isinstance(t, (Tensor, MetaTensor)):
        t = as_parameter(t, t.requires_grad)
    elif new_type.qualname == "torch.Tensor" and isinstance(t, (Tensor, MetaTensor)) and t.parameter:
        t = dataclasses.replace(t, parameter=False)  # as_subclass(torch.Tensor)
    elif new_type.qualname != "torch.Tensor":
        raise m.fail(f"{new_type.qualname} is not a tensor type", "bad-value")
    _check_state(m, state)
    return t


# -- other values (spec/canonical.md#canonical-pt-values) ----------------------------------------------

def ordered_dict(args: tuple[Any, ...], m: Machine) -> ODict:
    d = ODict()
    items = args[0] if args else []
    for k, v in items.items() if isinstance(items, dict) else items:  # a dict: a copy of its items
        d[m._hashable(k)] = v
    return d


def bytearray_(args: tuple[Any, ...], m: Machine) -> bytearray:
    if not args:
        return bytearray()
    source = args[0]
    if isinstance(source, bytes):
        if len(args) > 1:
            raise m.fail("bytearray(bytes) takes no encoding")
        return bytearray(source)
    return bytearray(_latin1(m, source, args[1] if len(args) > 1 else None))


def _latin1(m: Machine, text: str, encoding: Any) -> bytes:
    if encoding not in ("latin1", "latin-1"):
        raise m.fail(f"encoding {encoding!r} (only latin-1)", "bad-value")
    try:
        return text.encode("latin-1")
    except UnicodeEncodeError:
        raise m.fail("a code point above 255 in latin-1 text", "bad-value") from None


def codecs_encode(args: tuple[Any, ...], m: Machine) -> bytes:
    return _latin1(m, args[0], args[1])


def get_layout(args: tuple[Any, ...], m: Machine) -> Global:
    name = args[0]
    if not (name.startswith("torch.") and name[6:] in LAYOUTS):
        raise m.fail(f"{name!r} names no layout", "bad-value")
    return Global("torch", name[6:])


def complex_(args: tuple[Any, ...], m: Machine) -> Opaque:
    """``complex(real, imag)`` in its normal form: both parts as floats (spec/pickle.md#pickle-rebuild)."""
    parts = [*args, 0.0, 0.0][:2]
    try:
        return Opaque("builtins.complex", [float(x) for x in parts])
    except OverflowError:
        raise m.fail("a complex part that does not fit a double", "bad-value") from None


def torch_size(args: tuple[Any, ...], m: Machine) -> Opaque:
    """``torch.Size(sizes)`` in its normal form: one tuple of ints (spec/pickle.md#pickle-rebuild)."""
    return Opaque("torch.Size", [m.nested(tuple(int(x) for x in _size_items(args[0])) if args else ())])


def build_tensor_from_id(args: tuple[Any, ...], m: Machine) -> Any:
    return args[0] if type(args[0]) is int else None


HANDLERS: dict[str, Callable[[tuple[Any, ...], Machine], Any]] = {
    "collections.OrderedDict": ordered_dict,
    "builtins.set": lambda args, m: m.hashed(set, args[0] if args else ()),
    "builtins.frozenset": lambda args, m: m.frozenset_(args[0] if args else ()),
    "builtins.bytearray": bytearray_,
    "builtins.bytes": lambda args, m: b"",
    "_codecs.encode": codecs_encode,
    "builtins.complex": complex_,
    "torch.Size": torch_size,
    "torch.device": device,
    "torch.serialization._get_layout": get_layout,
    "torch._utils._rebuild_tensor": rebuild_tensor,
    "torch._utils._rebuild_tensor_v2": rebuild_tensor_v2,
    "torch._utils._rebuild_tensor_v3": rebuild_tensor_v3,
    "torch._utils._rebuild_parameter": rebuild_parameter,
    "torch._utils._rebuild_parameter_with_state": rebuild_parameter_with_state,
    "torch._utils._rebuild_qtensor": rebuild_qtensor,
    "torch._utils._rebuild_sparse_tensor": rebuild_sparse_tensor,
    "torch._utils._rebuild_meta_tensor_no_storage": rebuild_meta_tensor_no_storage,
    "torch._utils._rebuild_sparse_csr_tensor": rebuild_sparse_csr_tensor,
    "torch._utils._rebuild_device_tensor_from_cpu_tensor": rebuild_device_tensor_from_cpu_tensor,
    "torch._tensor._rebuild_from_type_v2": rebuild_from_type_v2,
    "torch._tensor._rebuild_from_type": rebuild_from_type_v2,
    "torch.nn.parameter.Parameter": parameter,
    "torch.jit._pickle.build_intlist": lambda args, m: args[0],
    "torch.jit._pickle.build_tensorlist": lambda args, m: args[0],
    "torch.jit._pickle.build_doublelist": lambda args, m: args[0],
    "torch.jit._pickle.build_boollist": lambda args, m: args[0],
    "torch.jit._pickle.build_tensor_from_id": build_tensor_from_id,
    "torch.jit._pickle.restore_type_tag": lambda args, m: args[0],
    **{name: _tensor_type(name) for name in TENSOR_TYPES},
}
