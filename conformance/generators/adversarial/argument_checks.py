"""Calls of allowlisted globals whose arguments break one check of the spec, each beside the call that
passes it: the number of arguments (spec/pickle.md#pickle-globals), a quantized tensor's quantizer
parameters (spec/tensors.md#tensors-quantized) and the byte count of an untyped storage that
``_rebuild_tensor_v3`` gives a dtype (spec/tensors.md#tensors-untyped-storage).

Each file is torch's zip container with ``data.pkl`` replaced by an assembled pickle of the calls torch
writes (:mod:`.rebuild_semantics`), one argument list changed.
"""

from __future__ import annotations

import pickle
import struct

from . import assemble as a
from . import sources
from .rebuild_semantics import G, doc, ints, pid, v2_args, zip_cases
from .record import AdvCase

GEN = "argument_checks.py"
F = pickle.NEWFALSE
GLOBALS = ["pickle.md#pickle-globals"]
QUANT = ["tensors.md#tensors-quantized"]


def _float(x: float) -> bytes:
    return pickle.BINFLOAT + struct.pack(">d", x)


def _qtensor(storage: bytes, size: tuple[int, ...], qparams: bytes) -> bytes:
    stride = tuple(1 for _ in size)
    return a.call(G("torch._utils", "_rebuild_qtensor"), storage, a.integer(0), ints(size), ints(stride),
                  qparams, F, a.ordered_dict())


def _per_tensor(scale: bytes, zero_point: bytes, *extra: bytes) -> bytes:
    return a.tuple_(G("torch", "per_tensor_affine"), scale, zero_point, *extra)


def _channel_tensor(key: str, cls: str, n: int) -> bytes:
    """A 1-d tensor over storage ``key`` (a per-channel quantizer's scales or zero points)."""
    return a.call(G("torch._utils", "_rebuild_tensor_v2"), *v2_args(pid(cls, key, n), 0, (n,), (1,)))


def _per_channel(axis: bytes, n_scales: int = 2, *extra: bytes) -> bytes:
    return a.tuple_(G("torch", "per_channel_affine"), _channel_tensor("1", "DoubleStorage", n_scales),
                    _channel_tensor("2", "LongStorage", n_scales), axis, *extra)


def argument_cases() -> list[AdvCase]:
    out: list[AdvCase] = []

    case = zip_cases(out, GEN)

    f3 = {"0": struct.pack("<3f", 1.0, -2.0, 0.0)}
    v2 = G("torch._utils", "_rebuild_tensor_v2")
    base = v2_args(pid("FloatStorage", "0", 3), 0, (3,), (1,))  # the six arguments torch writes
    # -- the number of arguments: one past each end of an argument list
    case("arity-rebuild-v2-five", doc(("t", a.call(v2, *base[:5]))), f3, ["bad-pickle"], ["dtype-float32"],
         GLOBALS, "_rebuild_tensor_v2 with five arguments (backward_hooks left out): it takes six or seven")
    case("arity-rebuild-v2-eight", doc(("t", a.call(v2, *base, a.dict_(), a.integer(0)))), f3,
         ["bad-pickle"], ["dtype-float32"], GLOBALS,
         "_rebuild_tensor_v2 with eight arguments (metadata {} and one more): it takes six or seven")
    case("arity-rebuild-v2-seven", doc(("t", a.call(v2, *base, a.dict_()))), f3, [], ["dtype-float32"],
         GLOBALS, "_rebuild_tensor_v2 with all seven arguments (an empty metadata dict): accepted")
    param = G("torch._utils", "_rebuild_parameter")
    tensor = a.call(v2, *base)
    case("arity-rebuild-parameter-two", doc(("p", a.call(param, tensor, pickle.NEWTRUE))), f3,
         ["bad-pickle"], ["dtype-float32", "parameter"], GLOBALS,
         "_rebuild_parameter(data, requires_grad) without backward_hooks: it takes three")
    case("arity-ordered-dict-two",
         doc(("d", a.call(G("collections", "OrderedDict"), a.list_(), a.list_()))), {}, ["bad-pickle"],
         ["pickle-ordered-dict"], GLOBALS, "collections.OrderedDict([], []): it takes at most one argument")
    case("arity-device-three",
         doc(("d", a.call(G("torch", "device"), a.binunicode("cuda"), a.integer(0), a.integer(1)))), {},
         ["bad-pickle"], [], GLOBALS, "torch.device('cuda', 0, 1): it takes one or two arguments")
    case("arity-size-two", doc(("s", a.call(G("torch", "Size"), ints((2,)), ints((3,))))), {},
         ["bad-pickle"], [], GLOBALS, "torch.Size((2,), (3,)): it takes at most one argument")
    case("arity-qtensor-six",
         doc(("q", a.call(G("torch._utils", "_rebuild_qtensor"), pid("QInt8Storage", "0", 2), a.integer(0),
                          ints((2,)), ints((1,)), _per_tensor(_float(0.5), a.integer(1)), F))),
         {"0": bytes([1, 2])}, ["bad-pickle"], ["quantized-per-tensor", "dtype-qint8"], GLOBALS + QUANT,
         "_rebuild_qtensor without backward_hooks (six arguments): it takes seven")
    od = G("collections", "OrderedDict")
    case("arity-reduce-args-list", doc(("d", od + a.list_() + pickle.REDUCE)), {}, ["bad-pickle"],
         ["pickle-ordered-dict"], GLOBALS,
         "collections.OrderedDict REDUCE'd with an empty list where the argument tuple goes",
         why="CPython's unpickler, and so torch's, calls the callable with *args, so any iterable passes; "
         "no pickler writes anything but a tuple, and a reader should not guess what iterating a list, "
         "dict or set as arguments means (spec: REDUCE arguments MUST be a tuple)")
    zip_pkl = next(m.data for m in sources.zip_members() if m.name.endswith("/data.pkl"))
    param_cls = G("torch.nn.parameter", "Parameter")
    for name, args, kwargs, how in (
            ("newobj-ex-kwargs-list", pickle.EMPTY_TUPLE, a.list_(), "keyword arguments an empty list"),
            ("newobj-ex-args-list", a.list_(), a.dict_(), "arguments an empty list")):
        pkl = a.proto(4) + zip_pkl[2:-2] + a.binunicode("p") + param_cls + args + kwargs + pickle.NEWOBJ_EX \
            + b"u."
        case(f"arity-{name}", pkl, {"0": struct.pack("<6f", *range(6)), "1": struct.pack("<2f", 0.5, -1.0)},
             ["bad-pickle"], ["parameter", "pickle-protocol-4"], GLOBALS + ["pickle.md#pickle-opcodes"],
             f"torch's data.pkl (PROTO 4) with one more key whose value is NEWOBJ_EX of "
             f"torch.nn.parameter.Parameter with its {how}")
    str_pid = a.tuple_(a.binunicode("storage"), a.binunicode("FloatStorage"), a.binunicode("0"),
                       a.binunicode("cpu"), a.integer(3)) + pickle.BINPERSID
    case("pid-storage-type-str", doc(("t", a.call(v2, *v2_args(str_pid, 0, (3,), (1,))))), f3,
         ["bad-reference"], ["dtype-float32"], ["pt-zip.md#pt-zip-storage-records"],
         "a persistent id whose storage type is the str 'FloatStorage', not the global torch.FloatStorage")
    # -- quantizer parameters
    q2 = {"0": bytes([1, 254])}
    q8 = pid("QInt8Storage", "0", 2)
    feats = ["quantized-per-tensor", "dtype-qint8"]
    case("qparams-int-scale", doc(("q", _qtensor(q8, (2,), _per_tensor(a.integer(2), a.integer(-3))))), q2,
         [], feats, QUANT, "a per-tensor qint8 tensor whose scale is the int 2 (torch takes it as 2.0)")
    case("qparams-per-tensor-two", doc(("q", _qtensor(q8, (2,), a.tuple_(G("torch", "per_tensor_affine"),
                                                                         _float(0.5))))),
         q2, ["bad-pickle"], feats, QUANT, "per_tensor_affine quantizer params without the zero_point")
    case("qparams-per-tensor-four",
         doc(("q", _qtensor(q8, (2,), _per_tensor(_float(0.5), a.integer(1), a.integer(0))))), q2,
         ["bad-pickle"], feats, QUANT, "per_tensor_affine quantizer params with a fourth item")
    case("qparams-str-scale", doc(("q", _qtensor(q8, (2,), _per_tensor(a.binunicode("0.5"), a.integer(1))))),
         q2, ["bad-pickle"], feats, QUANT, "a per-tensor scale given as the str '0.5'")
    case("qparams-float-zero-point", doc(("q", _qtensor(q8, (2,), _per_tensor(_float(0.5), _float(1.0))))),
         q2, ["bad-pickle"], feats, QUANT, "a per-tensor zero_point given as the float 1.0")
    case("qparams-int-scale-beyond-double",
         doc(("q", _qtensor(q8, (2,), _per_tensor(a.integer(10**309), a.integer(0))))), q2, ["bad-value"],
         feats, QUANT, "a per-tensor scale given as the int 10**309, which no double holds")
    case("qparams-zero-point-int64-min",
         doc(("q", _qtensor(q8, (2,), _per_tensor(_float(0.5), a.integer(-(1 << 63)))))), q2, [], feats,
         QUANT, "a per-tensor zero_point of -2**63, the least int64: accepted")
    case("qparams-zero-point-int64-max",
         doc(("q", _qtensor(q8, (2,), _per_tensor(_float(0.5), a.integer((1 << 63) - 1))))), q2, [], feats,
         QUANT, "a per-tensor zero_point of 2**63 - 1, the greatest int64: accepted")
    case("qparams-zero-point-2-63",
         doc(("q", _qtensor(q8, (2,), _per_tensor(_float(0.5), a.integer(1 << 63))))), q2, ["bad-value"],
         feats, QUANT, "a per-tensor zero_point of 2**63, one past int64")
    case("qtensor-over-float-storage",
         doc(("q", _qtensor(pid("FloatStorage", "0", 3), (3,), _per_tensor(_float(0.5), a.integer(0))))),
         f3, ["bad-value"], ["quantized-per-tensor", "dtype-float32"], QUANT,
         "_rebuild_qtensor over a FloatStorage: a quantized tensor needs a quantized storage")
    chan = {"0": bytes([1, 2, 3, 4]), "1": struct.pack("<2d", 0.5, 0.25), "2": struct.pack("<2q", 0, 1)}
    q4 = pid("QInt8Storage", "0", 4)
    cfeats = ["quantized-per-channel", "dtype-qint8", "dtype-float64", "dtype-int64"]
    case("qparams-per-channel-axis-1", doc(("q", _qtensor(q4, (2, 2), _per_channel(a.integer(1))))), chan, [],
         cfeats, QUANT, "a per-channel qint8 2x2 tensor along axis 1 (two scales and zero points)")
    case("qparams-per-channel-axis-2", doc(("q", _qtensor(q4, (2, 2), _per_channel(a.integer(2))))), chan,
         ["bad-value"], cfeats, QUANT, "a per-channel qint8 2x2 tensor whose axis is 2 (it has two "
         "dimensions)")
    case("qparams-per-channel-axis-minus-1", doc(("q", _qtensor(q4, (2, 2), _per_channel(a.integer(-1))))),
         chan, ["bad-value"], cfeats, QUANT, "a per-channel qint8 2x2 tensor whose axis is -1")
    case("qparams-per-channel-three-scales",
         doc(("q", _qtensor(pid("QInt8Storage", "0", 4), (2, 2), _per_channel(a.integer(0), 3)))),
         {**chan, "1": struct.pack("<3d", 0.5, 0.25, 1.0), "2": struct.pack("<3q", 0, 1, 2)}, ["bad-value"],
         cfeats, QUANT, "a per-channel qint8 2x2 tensor along axis 0 with three scales and zero points")
    case("qparams-per-channel-three-items",
         doc(("q", _qtensor(q4, (2, 2), a.tuple_(G("torch", "per_channel_affine"),
                                                  _channel_tensor("1", "DoubleStorage", 2),
                                                  _channel_tensor("2", "LongStorage", 2))))),
         chan, ["bad-pickle"], cfeats, QUANT, "per_channel_affine quantizer params without the axis")
    case("qparams-per-channel-float-axis", doc(("q", _qtensor(q4, (2, 2), _per_channel(_float(0.0))))), chan,
         ["bad-pickle"], cfeats, QUANT, "a per-channel axis given as the float 0.0")
    # -- an untyped storage given a dtype by _rebuild_tensor_v3
    ut = ["tensors.md#tensors-untyped-storage", "pt-zip.md#pt-zip-storage-records"]
    v3 = G("torch._utils", "_rebuild_tensor_v3")

    def v3_call(nbytes: int, size: int, dtype: str) -> bytes:
        return a.call(v3, pid("UntypedStorage", "0", nbytes), a.integer(0), ints((size,)), ints((1,)), F,
                      a.ordered_dict(), G("torch", dtype))

    raw = {"0": bytes([1, 0, 2, 0, 3, 0, 4])}
    case("v3-untyped-7-bytes-as-uint16", doc(("t", v3_call(7, 3, "uint16"))), raw, ["bad-length"],
         ["untyped-storage", "dtype-uint16"], ut,
         "_rebuild_tensor_v3 viewing an untyped storage of 7 bytes as 3 uint16 elements: 7 bytes are no "
         "whole number of 2-byte elements",
         why="one storage record holds whole elements of the one dtype its tensors give it (a writer "
         "writes numel x width bytes); torch views the first 6 bytes and leaves the 7th out of reach, so "
         "the storage has no element count to describe")
    case("v3-untyped-8-bytes-as-uint16", doc(("t", v3_call(8, 4, "uint16"))),
         {"0": bytes([1, 0, 2, 0, 3, 0, 4, 0])}, [], ["untyped-storage", "dtype-uint16"], ut,
         "_rebuild_tensor_v3 viewing an untyped storage of 8 bytes as 4 uint16 elements: accepted")
    case("v3-untyped-6-bytes-as-uint32", doc(("t", v3_call(6, 1, "uint32"))), {"0": bytes(6)},
         ["bad-length"], ["untyped-storage", "dtype-uint32"], ut,
         "_rebuild_tensor_v3 viewing an untyped storage of 6 bytes as one uint32 element: 6 bytes are no "
         "whole number of 4-byte elements",
         why="one storage record holds whole elements of the one dtype its tensors give it (a writer "
         "writes numel x width bytes); torch views the first 4 bytes and leaves 2 out of reach, so the "
         "storage has no element count to describe")
    return out
