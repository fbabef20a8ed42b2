"""Rebuild calls whose arguments make torch build something other than what a reader sees at first
glance: metadata bits set by a key whatever its value, conjugate or negative bits on dtypes torch cannot
negate, ``requires_grad`` on integer tensors, Python state that rewrites the tensor itself, legacy BUILD
states on plain tensors, device strings, sparse ranks, 64-bit limits, one untyped storage viewed with two
dtypes, and globals torch's allowlist does not have (spec/tensors.md, spec/pickle.md#pickle-globals).

Each file is torch's zip container (its own members) with ``data.pkl`` replaced by an assembled pickle
of the calls torch writes, with one argument changed, and storage records of the case's own.
"""

from __future__ import annotations

import pickle
import struct
from collections.abc import Callable
from dataclasses import dataclass

from . import assemble as a
from . import rawzip, sources
from .record import AdvCase

GEN = "rebuild_semantics.py"
BASE = ["zip-archive", "pickle-protocol-2", "pickle-persistent-id", "pickle-reduce", "adv-rebuild-semantics"]
T, F = pickle.NEWTRUE, pickle.NEWFALSE
G = a.global_
F32 = struct.pack("<3f", 1.0, -2.0, 0.0)


def in_zip(pkl: bytes, storages: dict[str, bytes]) -> bytes:
    """torch's zip members with ``data.pkl`` replaced and ``data/<key>`` records of ``storages``."""
    members = [m for m in sources.zip_members() if "/data/" not in m.name]
    root = members[0].name.split("/")[0]
    for m in members:
        if m.name.endswith("/data.pkl"):
            m.data = pkl
    members += [rawzip.Member(f"{root}/data/{k}", v) for k, v in storages.items()]
    return rawzip.build(members)


def zip_cases(out: list[AdvCase], gen: str) -> Callable[..., None]:
    """The ``case(name, pkl, storages, errors, feats, spec, how, why="")`` of a family of pickles in torch's
    zip (:func:`in_zip`): it appends ``pt-zip/adv-<name>`` to ``out``, a reject case when ``errors`` name
    codes, stricter than torch for ``why``."""

    def case(name: str, pkl: bytes, storages: dict[str, bytes], errors: list[str], feats: list[str],
             spec: list[str], how: str, why: str = "") -> None:
        out.append(AdvCase(f"pt-zip/adv-{name}", in_zip(pkl, storages), errors, BASE + feats, spec, how,
                           sources.zip_source(), gen, category="reject" if errors else "accept",
                           why_stricter=why))

    return case


def pid(cls: str, key: str, numel: int, module: str | None = None, location: str = "cpu") -> bytes:
    module = module or ("torch.storage" if cls == "UntypedStorage" else "torch")
    return (
        a.tuple_(
            a.binunicode("storage"), G(module, cls), a.binunicode(key), a.binunicode(location),
            a.integer(numel),
        )
        + pickle.BINPERSID
    )


def ints(values: tuple[int, ...]) -> bytes:
    return a.tuple_(*(a.integer(v) for v in values))


def v2_args(
    storage: bytes,
    offset: int,
    size: tuple[int, ...],
    stride: tuple[int, ...],
    grad: bool = False,
    metadata: bytes | None = None,
) -> list[bytes]:
    out = [storage, a.integer(offset), ints(size), ints(stride), T if grad else F, a.ordered_dict()]
    return out + ([metadata] if metadata is not None else [])


def v2(*args: object, **kw: object) -> bytes:
    return a.call(G("torch._utils", "_rebuild_tensor_v2"), *v2_args(*args, **kw))  # type: ignore[arg-type]


def v3(
    storage: bytes, size: tuple[int, ...], dtype: str, grad: bool = False, metadata: bytes | None = None
) -> bytes:
    stride = tuple(1 for _ in size)[:-1] + (1,) if size else ()
    args = [
        storage,
        a.integer(0),
        ints(size),
        ints(stride),
        T if grad else F,
        a.ordered_dict(),
        G("torch", dtype),
    ]
    return a.call(
        G("torch._utils", "_rebuild_tensor_v3"), *args, *([metadata] if metadata is not None else [])
    )


def doc(*items: tuple[str, bytes]) -> bytes:
    return a.program(a.dict_(*((a.binunicode(k), v) for k, v in items)))


def meta(key: bytes, value: bytes) -> bytes:
    return a.dict_((key, value))


def from_type(new_type: bytes, state: bytes) -> bytes:
    args = a.tuple_(*v2_args(pid("FloatStorage", "0", 3), 0, (3,), (1,)))
    return a.call(
        G("torch._tensor", "_rebuild_from_type_v2"),
        G("torch._utils", "_rebuild_tensor_v2"),
        new_type,
        args,
        state,
    )


def device(*args: bytes) -> bytes:
    return a.call(G("torch", "device"), *args)


def rebuild_cases() -> list[AdvCase]:
    out: list[AdvCase] = []

    case = zip_cases(out, GEN)

    f3 = {"0": F32}
    cn = ["tensors.md#tensors-conj-neg"]
    # -- metadata bits
    case(
        "conj-bit-on-real",
        doc(("x", v2(pid("FloatStorage", "0", 3), 0, (3,), (1,), metadata=meta(a.binunicode("conj"), T)))),
        f3,
        ["bad-value"],
        ["conj-view", "dtype-float32"],
        cn,
        "a float32 _rebuild_tensor_v2 whose metadata sets conj: True (torch's loader fails on it)",
    )
    neg_true = meta(a.binunicode("neg"), T)
    case(
        "neg-bit-on-bool",
        doc(("x", v2(pid("BoolStorage", "0", 3), 0, (3,), (1,), metadata=neg_true))),
        {"0": b"\x00\x01\x01"},
        ["bad-value"],
        ["neg-view", "dtype-bool"],
        cn,
        "a bool tensor whose metadata sets neg: True",
        why="torch sets the negative bit but has no negation for bool (neg is not implemented): the values "
        "it would present cannot be computed, by torch or a reader",
    )
    for dtype, raw in (
        ("uint16", b"\x01\x00\x02\x00"),
        ("float8_e8m0fnu", b"\x7f\x80"),
        ("float4_e2m1fn_x2", b"\x12\x34"),
        ("bits8", b"\x01\x02"),
    ):
        n = len(raw) // (2 if dtype == "uint16" else 1)
        case(
            f"neg-bit-on-{dtype.replace('_', '-')}",
            doc(("x", v3(pid("UntypedStorage", "0", len(raw)), (n,), dtype, metadata=neg_true))),
            {"0": raw},
            ["bad-value"],
            ["neg-view", "untyped-storage"],
            cn,
            f"a {dtype} tensor (_rebuild_tensor_v3 over an untyped storage) whose metadata sets neg: True",
            why=f"torch sets the negative bit but cannot negate {dtype} (neg is not implemented for it): "
            "the values it would present cannot be computed",
        )
    both = a.dict_((a.binunicode("conj"), T), (a.binunicode("neg"), T))
    case(
        "conj-and-neg-on-complex32",
        doc(("x", v3(pid("UntypedStorage", "0", 8), (2,), "complex32", metadata=both))),
        {"0": struct.pack("<4e", 1.0, 2.0, -3.0, 0.5)},
        ["bad-value"],
        ["conj-view", "neg-view", "untyped-storage"],
        cn,
        "a complex32 tensor whose metadata sets both conj and neg",
        why="torch sets both bits but has no kernel to resolve them together for complex32 (neg_conj is "
        "not implemented): the values it would present cannot be computed",
    )
    case(
        "metadata-int-value",
        doc(
            (
                "x",
                v2(
                    pid("FloatStorage", "0", 3),
                    0,
                    (3,),
                    (1,),
                    metadata=meta(a.binunicode("neg"), a.integer(1)),
                ),
            )
        ),
        f3,
        ["bad-value"],
        ["neg-view", "dtype-float32"],
        cn,
        "a float32 tensor whose metadata is {'neg': 1} (an int, not a bool)",
        why="torch converts the int to a bool and sets the bit; no writer makes a non-bool value, and the "
        "spec keeps metadata values to bools",
    )
    case(
        "metadata-str-value",
        doc(
            (
                "x",
                v2(
                    pid("FloatStorage", "0", 3),
                    0,
                    (3,),
                    (1,),
                    metadata=meta(a.binunicode("neg"), a.binunicode("no")),
                ),
            )
        ),
        f3,
        ["bad-value"],
        ["neg-view", "dtype-float32"],
        cn,
        "a float32 tensor whose metadata is {'neg': 'no'}",
    )
    # -- requires_grad on integer tensors
    rg = ["tensors.md#tensors-requires-grad"]
    case(
        "requires-grad-int64",
        doc(("x", v2(pid("LongStorage", "0", 1), 0, (1,), (1,), grad=True))),
        {"0": bytes(8)},
        ["bad-value"],
        ["requires-grad", "dtype-int64"],
        rg,
        "an int64 _rebuild_tensor_v2 with requires_grad True (torch: only floating point and complex "
        "tensors can require gradients)",
    )
    case(
        "requires-grad-uint16-v3",
        doc(("x", v3(pid("UntypedStorage", "0", 4), (2,), "uint16", grad=True))),
        {"0": bytes(4)},
        ["bad-value"],
        ["requires-grad", "dtype-uint16", "untyped-storage"],
        rg,
        "a uint16 _rebuild_tensor_v3 with requires_grad True",
    )
    case(
        "requires-grad-float8-v3",
        doc(("x", v3(pid("UntypedStorage", "0", 2), (2,), "float8_e5m2", grad=True))),
        {"0": bytes(2)},
        ["bad-value"],
        ["requires-grad", "dtype-float8_e5m2", "untyped-storage"],
        rg + ["pickle.md#pickle-rebuild"],
        "a float8_e5m2 (differentiable) _rebuild_tensor_v3 with requires_grad True: torch 2.13 makes the "
        "tensor require grad, then calls set_ on it in place and refuses (found by the differential harness)",
    )
    case(
        "requires-grad-meta-int64",
        doc(
            (
                "m",
                a.call(
                    G("torch._utils", "_rebuild_meta_tensor_no_storage"),
                    G("torch", "int64"),
                    ints((2,)),
                    ints((1,)),
                    T,
                ),
            )
        ),
        {},
        ["bad-value"],
        ["requires-grad", "meta-tensor", "dtype-int64"],
        rg + ["tensors.md#tensors-meta"],
        "an int64 meta tensor with requires_grad True",
    )
    # -- Python state that rewrites the tensor
    ps = ["tensors.md#tensors-python-state"]
    other = v2(pid("FloatStorage", "1", 3), 0, (3,), (1,))
    two = {"0": F32, "1": struct.pack("<3f", 7.0, 8.0, 9.0)}
    for key, value, storages, what in (
        ("data", other, two, "the tensor takes the other tensor's storage and values"),
        ("real", other, two, "torch copies the other tensor's values into this one"),
        ("requires_grad", T, f3, "torch sets the flag the rebuild call left false"),
        ("__class__", G("torch.nn.parameter", "Parameter"), f3, "torch turns the tensor into a Parameter"),
    ):
        case(
            f"state-sets-{key.strip('_').replace('_', '-')}",
            doc(("x", from_type(G("torch", "Tensor"), a.dict_((a.binunicode(key), value))))),
            storages,
            ["bad-value"],
            ["tensor-python-attrs", "dtype-float32"],
            ps,
            "_rebuild_from_type_v2(_rebuild_tensor_v2, torch.Tensor, ..., state) with state "
            f"{{{key!r}: ...}}: {what}",
            why=f"torch applies the state with setattr, so {key!r} rewrites the tensor after it was built; "
            "torch "
            "never writes a property name in a state (it writes the instance __dict__), and describing the "
            "result would mean emulating torch's property setters",
        )
    case(
        "parameter-state-sets-data",
        doc(
            (
                "x",
                a.call(
                    G("torch._utils", "_rebuild_parameter_with_state"),
                    v2(pid("FloatStorage", "0", 3), 0, (3,), (1,)),
                    T,
                    a.ordered_dict(),
                    a.dict_((a.binunicode("data"), other)),
                ),
            )
        ),
        two,
        ["bad-value"],
        ["tensor-python-attrs", "parameter", "dtype-float32"],
        ps,
        "_rebuild_parameter_with_state whose state sets 'data' to another tensor: torch's Parameter takes "
        "that tensor's values",
        why="torch applies the state with setattr and the Parameter takes the other tensor's storage; torch "
        "never writes a property name in a state",
    )
    # -- legacy BUILD on a plain tensor
    lb = ["tensors.md#tensors-legacy-build", "pt-legacy.md#pt-legacy-rebuild-tensor"]
    plain = a.call(G("torch", "FloatTensor"))
    case(
        "build-3-tuple-on-plain-tensor",
        a.program(a.dict_((a.binunicode("x"), plain + a.tuple_(T, F, a.ordered_dict()) + pickle.BUILD))),
        {},
        ["bad-pickle"],
        ["adv-type-confusion"],
        lb,
        "torch.FloatTensor() then BUILD with the Parameter state (requires_grad, volatile, hooks): torch "
        "calls set_(True, False, OrderedDict()) on a plain tensor and fails",
    )
    case(
        "build-5-tuple-on-plain-tensor",
        a.program(
            a.dict_(
                (
                    a.binunicode("x"),
                    plain
                    + a.tuple_(
                        v2(pid("FloatStorage", "0", 3), 0, (3,), (1,)), pickle.NONE, a.ordered_dict(), T, F
                    )
                    + pickle.BUILD,
                )
            )
        ),
        f3,
        ["bad-pickle"],
        ["adv-type-confusion"],
        lb,
        "torch.FloatTensor() then BUILD with a pre-0.4 Variable state (data, grad, hooks, requires_grad, "
        "volatile): torch calls set_ with five arguments and fails",
    )
    # -- devices
    dv = ["tensors.md#tensors-device"]
    for name, args, how, why in (
        ("device-invalid-type", (a.binunicode("nonsense"),), "torch.device('nonsense')", ""),
        ("device-index-leading-zero", (a.binunicode("cuda:01"),), "torch.device('cuda:01')", ""),
        ("device-negative-index", (a.binunicode("cuda"), a.binint(-1)), "torch.device('cuda', -1)", ""),
        ("device-index-twice", (a.binunicode("cuda:0"), a.integer(2)), "torch.device('cuda:0', 2)", ""),
        (
            "device-index-128",
            (a.binunicode("cuda:128"),),
            "torch.device('cuda:128')",
            "torch keeps a device index in 8 bits and loads cuda:128 as cuda:-128",
        ),
    ):
        case(
            name,
            doc(("d", device(*args))),
            {},
            ["bad-value"],
            [],
            dv,
            f"{how} as a value beside nothing else",
            why=why,
        )
    # -- sparse ranks, 64-bit limits
    lay = a.call(G("torch.serialization", "_get_layout"), a.binunicode("torch.sparse_coo"))
    sparse = a.call(
        G("torch._utils", "_rebuild_sparse_tensor"),
        lay,
        a.tuple_(
            v2(pid("LongStorage", "0", 2), 0, (1, 2), (2, 1)),
            v2(pid("FloatStorage", "1", 2), 0, (2,), (1,)),
            ints((3, 4)),
            F,
        ),
    )
    case(
        "sparse-size-rank-mismatch",
        doc(("s", sparse)),
        {"0": struct.pack("<2q", 0, 2), "1": struct.pack("<2f", 1.5, 2.5)},
        ["bad-length"],
        ["sparse-coo"],
        ["tensors.md#tensors-sparse"],
        "a sparse COO tensor with 1 sparse and 0 dense dimensions (indices [1, 2], values [2]) and a 2-d "
        "size (3, 4): torch checks len(size) == sparse_dim + dense_dim",
    )
    overflow = a.call(
        G("torch._utils", "_rebuild_sparse_tensor"),
        lay,
        a.tuple_(
            v2(pid("LongStorage", "0", 4), 0, (2, 2), (2, 1)),
            v2(pid("FloatStorage", "1", 2), 0, (2,), (1,)),
            ints((1 << 62, 4)),
            F,
        ),
    )
    found = " (found by the differential harness)"
    case(
        "sparse-size-numel-overflow",
        doc(("s", overflow)),
        {"0": struct.pack("<4q", 0, 1, 0, 1), "1": struct.pack("<2f", 1.5, 2.5)},
        ["bad-length"],
        ["sparse-coo", "adv-huge-count"],
        ["tensors.md#tensors-sparse"],
        "a sparse COO tensor of size (2**62, 4): torch multiplies the dimensions in 64 bits and refuses "
        "the overflowing element count" + found,
    )
    qparams = a.tuple_(G("torch", "per_tensor_affine"), pickle.BINFLOAT + struct.pack(">d", 0.5),
                       a.integer(1 << 64))
    qt = a.call(G("torch._utils", "_rebuild_qtensor"), pid("QInt8Storage", "0", 2), a.integer(0), ints((2,)),
                ints((1,)), qparams, F, a.ordered_dict())
    case(
        "qtensor-zero-point-2-64",
        doc(("q", qt)),
        {"0": bytes(2)},
        ["bad-value"],
        ["quantized-per-tensor", "dtype-qint8", "adv-huge-count"],
        ["tensors.md#tensors-quantized"],
        "a per-tensor quantized qint8 tensor whose zero_point is 2**64: torch cannot hold it in an int64"
        + found,
    )
    layout_call = a.call(a.call(G("torch.serialization", "_get_layout"), a.binunicode("torch.strided")),
                         a.binunicode("torch.sparse_coo"))
    case(
        "reduce-on-layout",
        doc(("l", layout_call)),
        {},
        ["bad-pickle"],
        [],
        ["pickle.md#pickle-globals"],
        "REDUCE applied to the layout torch.serialization._get_layout('torch.strided') returns: a layout "
        "is a value, not a callable (torch: unrecognized function)" + found,
    )
    case(
        "empty-tensor-stride-2-63",
        doc(("t", v2(pid("FloatStorage", "0", 3), 0, (0, 2), (1 << 63, 1)))),
        f3,
        ["bad-length"],
        ["empty-tensor", "adv-huge-count"],
        ["tensors.md#tensors-view", "tensors.md#tensors-empty"],
        "an empty tensor (size (0, 2)) with stride 2^63: torch cannot take it as a 64-bit integer",
    )
    case(
        "empty-tensor-offset-2-63",
        doc(("t", v2(pid("FloatStorage", "0", 3), 1 << 63, (0,), (1,)))),
        f3,
        ["bad-length"],
        ["empty-tensor", "adv-huge-count"],
        ["tensors.md#tensors-view", "tensors.md#tensors-empty"],
        "an empty tensor with storage offset 2^63",
    )
    # -- one untyped storage, two dtypes
    ut = ["tensors.md#tensors-untyped-storage"]
    u8 = v2(pid("UntypedStorage", "0", 4), 0, (4,), (1,))
    u16 = v3(pid("UntypedStorage", "0", 4), (2,), "uint16")
    raw = {"0": struct.pack("<2H", 1, 2)}
    why2 = (
        "torch loads both views over one set of bytes (uint8 through _rebuild_tensor_v2, uint16 through "
        "_rebuild_tensor_v3); no writer makes it, and one storage record has one dtype"
    )
    case(
        "untyped-v2-then-v3",
        doc(("a", u8), ("b", u16)),
        raw,
        ["bad-value"],
        ["untyped-storage", "dtype-uint16"],
        ut,
        "an untyped storage viewed by _rebuild_tensor_v2 (as uint8) and then by _rebuild_tensor_v3 as uint16",
        why=why2,
    )
    case(
        "untyped-v3-then-v2",
        doc(("b", u16), ("a", u8)),
        raw,
        ["bad-value"],
        ["untyped-storage", "dtype-uint16"],
        ut,
        "an untyped storage viewed by _rebuild_tensor_v3 as uint16 and then by _rebuild_tensor_v2 (as uint8)",
        why=why2,
    )
    # -- globals torch's allowlist does not have
    gl = ["pickle.md#pickle-globals", "canonical.md#canonical-pt-values"]
    case(
        "global-contiguous-format",
        doc(("m", G("torch", "contiguous_format"))),
        {},
        ["unsafe-global"],
        ["adv-unsafe-global"],
        gl,
        "torch.contiguous_format as a value: torch's weights_only allowlist has no memory format",
    )
    case(
        "global-torch-untypedstorage",
        doc(("u", pid("UntypedStorage", "0", 4, module="torch"))),
        {"0": bytes(4)},
        ["unsafe-global", "bad-reference"],
        ["adv-unsafe-global", "untyped-storage"],
        gl,
        "a persistent id naming torch.UntypedStorage (torch writes torch.storage.UntypedStorage; its "
        "allowlist has only that spelling)",
    )
    for acc in accept_files():
        out.append(
            AdvCase(
                f"pt-zip/adv-{acc.name}",
                acc.data,
                [],
                BASE + list(acc.features),
                list(acc.spec),
                acc.how,
                sources.zip_source(),
                GEN,
                category="accept",
            )
        )
    return out


# -- the accept side: hostile files torch 2.13 loads, which a reader describes as torch loads them ----

#: float16 values: a signaling NaN of each sign, a quiet NaN, -0.0 (and, as complex32, two elements).
HALVES = struct.pack("<4H", 0xFC7C, 0x7C01, 0x7E00, 0x8000)
C2 = struct.pack("<4f", 1.0, 2.0, float("nan"), -4.0)


@dataclass(frozen=True)
class Accept:
    """A hostile file torch loads: its pickle and storage records, and what it exercises."""

    name: str
    pkl: bytes
    storages: dict[str, bytes]
    features: tuple[str, ...]
    spec: tuple[str, ...]
    how: str

    @property
    def data(self) -> bytes:
        return in_zip(self.pkl, self.storages)


def _float3(key: str = "0", metadata: bytes | None = None) -> bytes:
    return v2(pid("FloatStorage", key, 3), 0, (3,), (1,), metadata=metadata)


def accept_files() -> list[Accept]:
    """The accept side of this family: each file is one torch 2.13 loads with ``weights_only=True``,
    written as an accept case whose expected description is torch's (record.py, torchcheck.py)."""
    f3 = {"0": F32}
    cn, st = ("tensors.md#tensors-conj-neg",), ("tensors.md#tensors-storage-identity",)
    neg = meta(a.binunicode("neg"), T)
    conj_t = meta(a.binunicode("conj"), T)
    both = a.dict_((a.binunicode("conj"), T), (a.binunicode("neg"), T))
    b_neg = a.call(G("_codecs", "encode"), a.binunicode("neg"), a.binunicode("latin1"))  # b"neg"
    key_int = (
        a.tuple_(
            a.binunicode("storage"),
            G("torch", "FloatStorage"),
            a.integer(0),
            a.binunicode("cpu"),
            a.integer(3),
        )
        + pickle.BINPERSID
    )
    layout = a.call(G("torch.serialization", "_get_layout"), a.binunicode("torch.sparse_coo"))

    def sparse_int32_indices(location: str) -> bytes:
        return a.call(
            G("torch._utils", "_rebuild_sparse_tensor"),
            layout,
            a.tuple_(
                v2(pid("IntStorage", "0", 2, location=location), 0, (1, 2), (2, 1)),
                v2(pid("FloatStorage", "1", 2, location=location), 0, (2,), (1,)),
                ints((3,)),
                F,
            ),
        )

    sparse32, sparse32_cuda = sparse_int32_indices("cpu"), sparse_int32_indices("cuda:0")
    sparse_neg = a.call(
        G("torch._utils", "_rebuild_sparse_tensor"),
        layout,
        a.tuple_(
            v2(pid("LongStorage", "0", 2, location="cuda:0"), 0, (1, 2), (2, 1)),
            v2(pid("FloatStorage", "1", 3, location="cuda:0"), 1, (2,), (1,),
               metadata=meta(a.binunicode("neg"), T)),
            ints((3,)),
            F,
        ),
    )
    sparse_grad = a.call(
        G("torch._utils", "_rebuild_sparse_tensor"),
        layout,
        a.tuple_(
            v2(pid("LongStorage", "0", 2), 0, (1, 2), (2, 1)),
            v2(pid("FloatStorage", "1", 2), 0, (2,), (1,), grad=True),
            ints((3,)),
            F,
        ),
    )
    devt = a.call(
        G("torch._utils", "_rebuild_device_tensor_from_cpu_tensor"),
        _float3(),
        G("torch", "float32"),
        a.binunicode("meta"),
        F,
    )
    empty = v2(pid("FloatStorage", "0", 0), 0, (0,), (1,))
    c32 = pid("UntypedStorage", "0", 8)
    return [
        Accept(
            "conj-key-false",
            doc(
                (
                    "x",
                    v2(
                        pid("ComplexFloatStorage", "0", 2),
                        0,
                        (2,),
                        (1,),
                        metadata=meta(a.binunicode("conj"), F),
                    ),
                )
            ),
            {"0": C2},
            ("conj-view", "dtype-complex64"),
            cn,
            "a complex64 tensor whose metadata is {'conj': False}: torch sets the bit because the key "
            "is there",
        ),
        Accept(
            "neg-bytes-key",
            doc(("x", _float3(metadata=meta(b_neg, T)))),
            f3,
            ("neg-view", "dtype-float32"),
            cn,
            "a float32 tensor whose metadata key is the bytes b'neg' (via _codecs.encode): torch takes it "
            "as the name",
        ),
        Accept(
            "neg-float16-signaling-nan",
            doc(("x", v2(pid("HalfStorage", "0", 4), 0, (4,), (1,), metadata=neg))),
            {"0": HALVES},
            ("neg-view", "dtype-float16"),
            cn,
            "a float16 negative view over two signaling NaNs, a quiet NaN and -0.0: torch quiets the "
            "signaling NaNs as it flips their signs",
        ),
        Accept(
            "neg-complex32",
            doc(("x", v3(c32, (2,), "complex32", metadata=neg))),
            {"0": HALVES},
            ("neg-view", "untyped-storage"),
            cn,
            "a complex32 negative view (float16 halves, NaNs included)",
        ),
        Accept(
            "conj-complex32",
            doc(("x", v3(c32, (2,), "complex32", metadata=conj_t))),
            {"0": HALVES},
            ("conj-view", "untyped-storage"),
            cn,
            "a complex32 conjugate view: only the imaginary halves flip",
        ),
        Accept(
            "conj-neg-complex64",
            doc(("x", v2(pid("ComplexFloatStorage", "0", 2), 0, (2,), (1,), metadata=both))),
            {"0": C2},
            ("conj-view", "neg-view", "dtype-complex64"),
            cn,
            "a complex64 view with both bits: only the real parts flip",
        ),
        Accept(
            "neg-uint8-int8",
            doc(
                ("u", v2(pid("ByteStorage", "0", 3), 0, (3,), (1,), metadata=neg)),
                ("i", v2(pid("CharStorage", "1", 3), 0, (3,), (1,), metadata=neg)),
            ),
            {"0": b"\x00\x01\xc8", "1": b"\x80\x7f\x01"},
            ("neg-view", "dtype-uint8", "dtype-int8"),
            cn,
            "uint8 and int8 negative views: two's complement modulo 256 (-128 stays -128)",
        ),
        Accept(
            "from-type-parameter",
            doc(("x", from_type(G("torch.nn.parameter", "Parameter"), pickle.NONE))),
            f3,
            ("parameter", "tensor-python-attrs"),
            ("tensors.md#tensors-parameter",),
            "_rebuild_from_type_v2(_rebuild_tensor_v2, Parameter, ...): as_subclass makes a Parameter that "
            "keeps requires_grad False",
        ),
        Accept(
            "storage-key-int-and-str",
            doc(("a", _float3()), ("b", v2(key_int, 0, (3,), (1,)))),
            f3,
            ("shared-storage",),
            st,
            "two persistent ids of the record data/0, with the key '0' and the key 0: "
            "torch's cache keeps them apart, two storages",
        ),
        Accept(
            "empty-storage-twice",
            doc(("a", empty), ("b", empty)),
            {"0": b""},
            ("empty-tensor",),
            st,
            "two references to one empty storage: torch caches no empty storage, so they are two",
        ),
        Accept(
            "sparse-int32-indices",
            doc(("s", sparse32)),
            {"0": struct.pack("<2i", 0, 2), "1": struct.pack("<2f", 1.5, 2.5)},
            ("sparse-coo", "dtype-int32"),
            ("tensors.md#tensors-sparse",),
            "a sparse COO tensor with int32 indices: torch keeps them as a new int64 tensor",
        ),
        Accept(
            "sparse-int32-indices-on-cuda",
            doc(("s", sparse32_cuda)),
            {"0": struct.pack("<2i", 0, 2), "1": struct.pack("<2f", 1.5, 2.5)},
            ("sparse-coo", "dtype-int32", "cuda-location"),
            ("tensors.md#tensors-sparse",),
            "a sparse COO tensor of a GPU with int32 indices: torch casts them on their device, so the new "
            "int64 storage has the file's location (found by the differential harness)",
        ),
        Accept(
            "sparse-values-neg-bit",
            doc(("s", sparse_neg)),
            {"0": struct.pack("<2q", 0, 2), "1": struct.pack("<3f", 0.5, 1.5, 2.5)},
            ("sparse-coo", "cuda-location"),
            ("tensors.md#tensors-sparse", "tensors.md#tensors-conj-neg"),
            "a sparse COO tensor of a GPU whose values are a view (offset 1) with the negative bit: torch "
            "resolves them into a new storage of the negated values on their device (found by the "
            "differential harness)",
        ),
        Accept(
            "torch-size-no-args",
            doc(("s", a.call(G("torch", "Size")))),
            {},
            ("adv-rebuild-semantics",),
            ("pickle.md#pickle-globals", "canonical.md#canonical-pt-values"),
            "torch.Size() called with no argument: torch loads the empty size, whose normal form is "
            "[()] (found by the differential harness)",
        ),
        Accept(
            "sparse-values-require-grad",
            doc(("s", sparse_grad)),
            {"0": struct.pack("<2q", 0, 2), "1": struct.pack("<2f", 1.5, 2.5)},
            ("sparse-coo", "requires-grad"),
            ("tensors.md#tensors-sparse",),
            "a sparse COO tensor whose values require grad: torch builds it from them with autograd, and "
            "the sparse tensor requires grad (found by the differential harness)",
        ),
        Accept(
            "empty-size-product-2-64",
            doc(("t", v2(pid("FloatStorage", "0", 3), 0, (0, 1 << 62, 4), (1, 1, 1)))),
            f3,
            ("empty-tensor", "adv-huge-count"),
            ("tensors.md#tensors-empty",),
            "an empty tensor of size (0, 2^62, 4): legal, no element",
        ),
        Accept(
            "dims-65",
            doc(("t", v2(pid("FloatStorage", "0", 3), 1, (1,) * 64 + (2,), (1,) * 65))),
            f3,
            ("partial-view",),
            ("tensors.md#tensors-view",),
            "a 65-dimensional tensor (numpy allows 64)",
        ),
        Accept(
            "device-string-index",
            doc(("d", device(a.binunicode("cuda:1"))), ("e", device(a.binunicode("xla"), a.integer(3)))),
            {},
            (),
            ("tensors.md#tensors-device", "canonical.md#canonical-pt-values"),
            "torch.device('cuda:1') and torch.device('xla', 3): both in the normal form [type, index]",
        ),
        Accept(
            "device-tensor-meta",
            doc(("m", devt)),
            f3,
            ("meta-tensor",),
            ("tensors.md#tensors-device-tensor",),
            "_rebuild_device_tensor_from_cpu_tensor(tensor, float32, 'meta', False): a meta tensor, no data",
        ),
    ]
