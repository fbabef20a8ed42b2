"""Golden .pt cases written and described by real PyTorch (conformance/cases/pt-zip, pt-legacy,
pt-torchscript).

Each recipe builds one object with fixed seeds; the generator ``torch.save``s it (zip and, where torch
allows, the legacy stream), loads the written file back with the same torch and describes what torch
loaded (``torch_describe``: the ``torch`` adapter's describer).  The expected description therefore comes
from the writer's own loader, never from torchfmt, which this script does not import.

    python -m conformance.generators.torch_pt --out conformance/cases    # torch 2.13
    /usr/bin/python -m conformance.generators.torch_pt --out conformance/cases         # Debian torch 1.13
    python -m conformance.generators.torch_pt --check conformance/cases  # cross-check

Case ids carry no suffix for the primary torch (2.13) and ``-torch<major>.<minor>`` for any other.  A
recipe the running torch cannot write or read back is skipped and the reason printed.  Zip files are
byte-for-byte reproducible (torch derives ``.data/serialization_id`` from the content); legacy files
are not (their storage keys are ``str(storage._cdata)``, a memory address), nor are TorchScript archives
once this script is edited (their debug records hold its line numbers), so a legacy or TorchScript case
whose file still describes the same is left untouched on regeneration.
"""

from __future__ import annotations

import argparse
import collections
import json
import platform
import re
import shutil
import subprocess
import sys
import tempfile
import warnings
import zipfile
from collections.abc import Callable
from contextlib import ExitStack
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from unittest import mock

import torch
import yaml

from conformance.generators import torch_describe as td
from conformance.generators.case_folder import write_expected
from conformance.harness.expected import read_expected_bytes
from conformance.harness.facts import walk_frames

GENERATOR = "conformance/generators/torch_pt.py"
ROOT = Path(__file__).resolve().parents[2]
PRIMARY = (2, 13)
TORCH_VERSION = tuple(int(x) for x in re.findall(r"\d+", torch.__version__)[:2])
SUFFIX = "" if TORCH_VERSION == PRIMARY else f"-torch{TORCH_VERSION[0]}.{TORCH_VERSION[1]}"
FORMATS = ("pt-zip", "pt-legacy")


# -- recipes ---------------------------------------------------------------------------------------

@dataclass
class Recipe:
    """One object to save (an accept case per format).  ``features``/``spec`` add to what is derived
    from the description; ``save`` names how the file is written (see :func:`save_file`)."""

    name: str
    build: Callable[[], Any]
    features: tuple[str, ...] = ()
    spec: tuple[str, ...] = ()
    formats: tuple[str, ...] = FORMATS
    protocol: int = 2
    save: str = "file"
    min_torch: tuple[int, int] = (1, 0)
    requires: tuple[str, ...] = ()  # torch attributes the recipe needs (dtypes)
    notes: str = ""
    #: facts found by ``--check`` about the file one torch writes, keyed by the writer's (major, minor)
    version_notes: dict[tuple[int, int], str] = field(default_factory=dict)


RECIPES: list[Recipe] = []


def recipe(name: str, **kw: Any) -> Callable[[Callable[[], Any]], Callable[[], Any]]:
    def register(build: Callable[[], Any]) -> Callable[[], Any]:
        RECIPES.append(Recipe(name, build, **kw))
        return build
    return register


def untyped(t: torch.Tensor) -> Any:
    return td.untyped_of_tensor(t)


def typed(t: torch.Tensor) -> Any:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return t.storage()


# dtypes: one tensor [2, 3] each, values that use the type's range
def _ints(values: list[int], dtype: str, via: str | None = None) -> Callable[[], torch.Tensor]:
    def build() -> torch.Tensor:
        if via:  # unsigned types wider than uint8, bits and scale types: the bit pattern as another type
            return torch.tensor(values, dtype=getattr(torch, via)).view(getattr(torch, dtype)).reshape(2, 3)
        return torch.tensor(values, dtype=getattr(torch, dtype)).reshape(2, 3)
    return build


def _floats(dtype: str, scale: float = 1.0) -> Callable[[], torch.Tensor]:
    def build() -> torch.Tensor:
        x = torch.randn(2, 3, dtype=torch.float64) * scale
        x[0, 0] = 1.0
        return x.to(getattr(torch, dtype))
    return build


def _complex(dtype: str) -> Callable[[], torch.Tensor]:
    def build() -> torch.Tensor:
        x = torch.complex(torch.randn(2, 3), torch.randn(2, 3))
        x[0, 0] = complex(1.0, -2.0)
        return x.to(getattr(torch, dtype))
    return build


_DTYPE_BUILDS: dict[str, Callable[[], torch.Tensor]] = {
    "bool": lambda: torch.tensor([[True, False, True], [False, False, True]]),
    "uint8": _ints([0, 1, 127, 128, 254, 255], "uint8"),
    "int8": _ints([-128, -1, 0, 1, 126, 127], "int8"),
    "int16": _ints([-32768, -2, 0, 1, 300, 32767], "int16"),
    "int32": _ints([-2**31, -70000, 0, 1, 70000, 2**31 - 1], "int32"),
    "int64": _ints([-2**63, -2**40, 0, 1, 2**40, 2**63 - 1], "int64"),
    "uint16": _ints([0, 1, 255, 256, -32768, -1], "uint16", via="int16"),
    "uint32": _ints([0, 1, 65536, 2**31 - 1, -2**31, -1], "uint32", via="int32"),
    "uint64": _ints([0, 1, 2**32, 2**63 - 1, -2**63, -1], "uint64", via="int64"),
    "float16": _floats("float16", 100.0),
    "bfloat16": _floats("bfloat16", 1e20),
    "float32": _floats("float32"),
    "float64": _floats("float64"),
    "complex32": _complex("complex32"),
    "complex64": _complex("complex64"),
    "complex128": _complex("complex128"),
    "float8_e4m3fn": _floats("float8_e4m3fn", 50.0),
    "float8_e5m2": _floats("float8_e5m2", 1000.0),
    "float8_e4m3fnuz": _floats("float8_e4m3fnuz", 50.0),
    "float8_e5m2fnuz": _floats("float8_e5m2fnuz", 1000.0),
    # elements torch builds from bit patterns only (no conversion from numbers): every byte value class
    "float8_e8m0fnu": _ints([0, 1, 126, 127, 254, 255], "float8_e8m0fnu", via="uint8"),  # 255 is NaN
    "float4_e2m1fn_x2": _ints([0x00, 0x01, 0x10, 0x7f, 0x88, 0xff], "float4_e2m1fn_x2", via="uint8"),
    "bits1x8": _ints([0x00, 0x01, 0x55, 0x80, 0xaa, 0xff], "bits1x8", via="uint8"),
    "bits2x4": _ints([0x00, 0x03, 0x1b, 0xe4, 0xc0, 0xff], "bits2x4", via="uint8"),
    "bits4x2": _ints([0x00, 0x0f, 0xf0, 0x12, 0xed, 0xff], "bits4x2", via="uint8"),
    "bits8": _ints([0, 1, 127, 128, 254, 255], "bits8", via="uint8"),
    "bits16": _ints([0, 1, 255, 256, -32768, -1], "bits16", via="int16"),
}

for _name, _build in _DTYPE_BUILDS.items():
    recipe(f"dtype-{_name}", features=("contiguous",), requires=(_name,))(_build)


@recipe("dtype-bits-and-fp4-views", requires=("bits16", "bits8", "float4_e2m1fn_x2", "float8_e8m0fnu"),
        notes="strided views of dtypes torch holds as bit patterns: hashed as their bytes, one by one")
def _raw_views() -> dict[str, torch.Tensor]:
    b16 = torch.arange(-6, 6, dtype=torch.int16).mul(4099).view(torch.bits16).reshape(3, 4)
    b8 = torch.arange(0, 240, 20, dtype=torch.uint8).view(torch.bits8).reshape(3, 4)
    fp4 = torch.arange(7, 247, 20, dtype=torch.uint8).view(torch.float4_e2m1fn_x2).reshape(4, 3)
    e8m0 = torch.arange(100, 112, dtype=torch.uint8).view(torch.float8_e8m0fnu)
    return {"bits16_t": b16.t(), "bits16_row": b16[1], "bits8_cols": b8[:, 1::2], "fp4_t": fp4.t(),
            "e8m0_step": e8m0[2::3], "e8m0_expanded": e8m0[:1].expand(2, 3)}


@recipe("float-special-values", features=("contiguous",), spec=("canonical.md#canonical-float",))
def _float_special() -> dict[str, torch.Tensor]:
    vals = [float("nan"), float("inf"), float("-inf"), -0.0, 0.0, 1.0]
    return {"float32": torch.tensor(vals + [1e-45, 3.4028234663852886e38]),
            "float64": torch.tensor(vals + [5e-324, 1.7976931348623157e308], dtype=torch.float64),
            "float16": torch.tensor(vals + [6e-8, 65504.0], dtype=torch.float16),
            "bfloat16": torch.tensor(vals + [1e-40, 3e38], dtype=torch.bfloat16)}


# quantized
def _q(dtype: str, scale: float, zero_point: int, shape: tuple[int, ...] = (2, 3)) -> Callable[[], Any]:
    def build() -> torch.Tensor:
        return torch.quantize_per_tensor(torch.randn(*shape), scale, zero_point, getattr(torch, dtype))
    return build


recipe("quantized-qint8-per-tensor", requires=("qint8",))(_q("qint8", 0.05, -3))
recipe("quantized-quint8-per-tensor", requires=("quint8",))(_q("quint8", 0.02, 128))
recipe("quantized-qint32-per-tensor", requires=("qint32",))(_q("qint32", 0.001, 7))
recipe("quantized-quint4x2-per-tensor", requires=("quint4x2",), notes="packed: two elements a byte")(
    _q("quint4x2", 0.3, 1, (6,)))
recipe("quantized-quint2x4-per-tensor", requires=("quint2x4",), notes="packed: four elements a byte")(
    _q("quint2x4", 0.7, 1, (8,)))


@recipe("quantized-qint8-per-channel", requires=("qint8",))
def _q_per_channel() -> torch.Tensor:
    return torch.quantize_per_channel(torch.randn(3, 4), torch.tensor([0.1, 0.05, 0.2], dtype=torch.float64),
                                      torch.tensor([0, -2, 3]), 0, torch.qint8)


@recipe("quantized-quint8-per-channel-axis1", requires=("quint8",))
def _q_per_channel_axis1() -> torch.Tensor:
    scales = torch.tensor([0.1, 0.2, 0.3, 0.4], dtype=torch.float64)
    zero_points = torch.tensor([10, 20, 30, 40])
    return torch.quantize_per_channel(torch.randn(2, 4), scales, zero_points, 1, torch.quint8)


@recipe("quantized-quint8-per-channel-float-qparams", requires=("quint8",))
def _q_float_qparams() -> torch.Tensor:
    return torch.quantize_per_channel(torch.randn(3, 4), torch.tensor([0.1, 0.2, 0.3]),
                                      torch.tensor([0.5, -1.0, 0.0]), 0, torch.quint8)


@recipe("quantized-transposed-view", requires=("qint8",), features=("non-contiguous",))
def _q_view() -> torch.Tensor:
    return torch.quantize_per_tensor(torch.randn(3, 4), 0.1, 0, torch.qint8).t()


# meta tensors (spec/tensors.md#tensors-meta): geometry only, no storage
@recipe("meta-tensor", notes="torch.empty(2, 3, device='meta'): _rebuild_meta_tensor_no_storage, no storage")
def _meta() -> torch.Tensor:
    return torch.empty(2, 3, device="meta")


@recipe("meta-parameter", notes="the weight of nn.Linear(3, 4, device='meta'), a Parameter")
def _meta_parameter() -> torch.nn.Parameter:
    return torch.nn.Linear(3, 4, device="meta").weight


@recipe("meta-state-dict", features=("state-dict",),
        notes="state_dict() of Linear, BatchNorm1d, ReLU, Linear built with device='meta'")
def _meta_state_dict() -> Any:
    return torch.nn.Sequential(torch.nn.Linear(3, 4, device="meta"), torch.nn.BatchNorm1d(4, device="meta"),
                               torch.nn.ReLU(), torch.nn.Linear(4, 2, device="meta")).state_dict()


@recipe("meta-tensor-kinds",
        notes="meta tensors of other dtypes and geometries: a strided view (its storage offset is lost), "
              "0-d, empty, requires_grad, one tensor twice (memo), next to an ordinary tensor")
def _meta_kinds() -> dict[str, Any]:
    t = torch.empty(2, 3, device="meta")
    return {"plain": t, "again": t, "view": torch.empty(4, 6, device="meta")[1:, ::2].t(),
            "zero_dim": torch.empty((), dtype=torch.int64, device="meta"),
            "empty": torch.empty(0, 5, dtype=torch.float16, device="meta"),
            "requires_grad": torch.empty(3, dtype=torch.float64, device="meta", requires_grad=True),
            "bool": torch.empty(2, 2, dtype=torch.bool, device="meta"), "cpu": torch.arange(3)}


# layouts and views
@recipe("views-shared-storage", features=("partial-view",))
def _views() -> dict[str, torch.Tensor]:
    base = torch.arange(12, dtype=torch.float32).reshape(3, 4)
    return {"base": base, "row": base[1], "col": base[:, 2], "block": base[1:, 1:3], "flat": base.view(-1)}


@recipe("storage-offset", features=("partial-view",))
def _offset() -> torch.Tensor:
    return torch.arange(10, dtype=torch.float32)[3:7]


@recipe("transposed")
def _transposed() -> torch.Tensor:
    return torch.randn(3, 4).t()


@recipe("step-slice", features=("partial-view",))
def _step() -> torch.Tensor:
    return torch.arange(10, dtype=torch.int32)[1::3]


@recipe("channels-last")
def _channels_last() -> torch.Tensor:
    return torch.randn(2, 3, 4, 5).contiguous(memory_format=torch.channels_last)


@recipe("expanded-stride0")
def _expanded() -> dict[str, torch.Tensor]:
    return {"rows": torch.arange(3, dtype=torch.float32).expand(4, 3),
            "scalar": torch.tensor(7, dtype=torch.int16).expand(2, 3)}


@recipe("overlapping-unfold", features=("overlapping-view",))
def _overlapping() -> torch.Tensor:
    return torch.arange(8, dtype=torch.float64).unfold(0, 4, 2)


@recipe("zero-dim")
def _zero_dim() -> dict[str, torch.Tensor]:
    base = torch.arange(6, dtype=torch.float32).reshape(2, 3)
    return {"float": torch.tensor(3.25), "int": torch.tensor(-5), "bool": torch.tensor(True),
            "element-of-view": base[1, 2]}


@recipe("empty-tensors")
def _empty() -> dict[str, torch.Tensor]:
    return {"empty_0x3": torch.empty(0, 3), "empty_1d": torch.zeros(0, dtype=torch.int64),
            "empty_view_at_end": torch.arange(5, dtype=torch.float32)[5:],
            "empty_middle": torch.ones(2, 0, 4, dtype=torch.float16)}


@recipe("empty-storage-shared-key", spec=("tensors.md#tensors-storage-identity",),
        notes="an empty int16 storage named by three tensors (the tensor, its .t() and a column slice): "
              "every persistent id names one key, and torch loads a storage for each (it keeps no empty "
              "storage)")
def _empty_shared() -> dict[str, torch.Tensor]:
    z = torch.zeros(0, 4, dtype=torch.int16)
    return {"z": z, "t": z.t(), "cols": z[:, 1:3], "again": z}


@recipe("empty-storage-two-dtypes", spec=("tensors.md#tensors-storage-identity",
                                          "pt-legacy.md#pt-legacy-empty-storage"),
        notes="an empty float32 tensor, its .view(torch.int32) and a float64 TypedStorage wrapping its "
              "untyped storage: one key under three dtypes; torch's legacy loader makes a fresh empty "
              "storage of each id's dtype whenever the cached one is empty (issue 27)")
def _empty_two_dtypes() -> list[Any]:
    t = torch.empty(0)
    return [t, t.view(torch.int32),
            torch.storage.TypedStorage(wrap_storage=t.untyped_storage(), dtype=torch.float64, _internal=True)]


@recipe("large-float32", features=("contiguous",), notes="256 KiB of float32")
def _large() -> torch.Tensor:
    return torch.randn(256, 256)


@recipe("many-tensors", notes="120 tensors: storage keys past 9 and 99 (zip record order, legacy key order)")
def _many() -> list[torch.Tensor]:
    dtypes = [torch.float32, torch.int64, torch.float16, torch.uint8, torch.float64, torch.int32]
    return [torch.arange(i % 5 + 1).to(dtypes[i % len(dtypes)]) * i for i in range(120)]


@recipe("state-dict-layout-changes", features=("state-dict",),
        spec=("pickle.md#pickle-opcodes", "pickle.md#pickle-memo"),
        notes="an OrderedDict state_dict whose entries change how torch writes them after many alike: 140 "
              "float32 weights (the memo passes 255, so later GETs and PUTs are LONG_BINGET and "
              "LONG_BINPUT), then a new storage type first met late (int64, float16, bool), sizes and "
              "strides of one, two and four bytes, 0-d and 4-d tensors, views of one storage at offsets, a "
              "transposed view, keys of other lengths and a non-ASCII key, and runs of one layout broken at "
              "their second or a later entry")
def _state_dict_layout_changes() -> collections.OrderedDict[str, torch.Tensor]:
    g = torch.Generator().manual_seed(18)
    out: collections.OrderedDict[str, torch.Tensor] = collections.OrderedDict()
    for i in range(140):
        out[f"layer{i}.weight"] = torch.randn(2, 3, generator=g)
    for i in range(3):
        out[f"bn{i}.num_batches_tracked"] = torch.tensor(i + 7)
    out["half.a"] = torch.randn(4, generator=g).half()
    out["half.b"] = torch.randn(5, generator=g).half()
    out["mask"] = torch.tensor([True, False, True])
    out["wide"] = torch.arange(300, dtype=torch.int8)
    out["wider"] = torch.zeros(70_000, dtype=torch.int8)
    out["four_d"] = torch.randn(1, 2, 1, 3, generator=g)
    base = torch.randn(6, 4, generator=g)
    out["view.first"] = base[0]
    out["view.second"] = base[1]
    out["view.t"] = base.t()
    out["view.tail"] = base[2:, 1:]
    out["k" * 300] = torch.randn(2, generator=g)
    out["schlüssel"] = torch.randn(2, generator=g)
    out["after.0"] = torch.randn(2, 3, generator=g)
    out["after.1"] = torch.randn(2, 3, generator=g)
    out["after.2"] = torch.randn(3, 2, generator=g)
    return out


@recipe("parameter")
def _parameter() -> torch.nn.Parameter:
    return torch.nn.Parameter(torch.randn(2, 3))


@recipe("parameter-no-grad")
def _parameter_no_grad() -> torch.nn.Parameter:
    return torch.nn.Parameter(torch.randn(3), requires_grad=False)


@recipe("requires-grad")
def _requires_grad() -> dict[str, torch.Tensor]:
    return {"leaf": torch.randn(3).requires_grad_(), "plain": torch.randn(3)}


@recipe("tensor-python-attrs", features=("tensor-python-attrs",),
        notes="a tensor with Python attributes (pickled via torch._tensor._rebuild_from_type_v2)")
def _tensor_attrs() -> torch.Tensor:
    t = torch.arange(4, dtype=torch.float32)
    t.label = "weights"
    t.meta = {"k": 1}
    return t


@recipe("same-tensor-twice", features=("pickle-memo",))
def _same_tensor() -> dict[str, Any]:
    t = torch.randn(2, 2)
    return {"a": t, "b": t, "in_list": [t, t[0]]}


@recipe("conj-view", features=("conj-view",), spec=("tensors.md#tensors-conj-neg",))
def _conj() -> dict[str, torch.Tensor]:
    z = torch.complex(torch.randn(2, 3), torch.randn(2, 3))
    return {"conj": z.conj(), "conj_of_slice": z[1:].conj(), "plain": z}


@recipe("conj-neg-one-element", features=("conj-view", "neg-view"), spec=("tensors.md#tensors-conj-neg",),
        notes="one-element conjugate and negative views (and a 0-d one): their values are hashed from the "
              "resolved elements, not from the file's bytes (spec/canonical.md#canonical-hash)")
def _conj_neg_one() -> dict[str, torch.Tensor]:
    z = torch.complex(torch.tensor([1.5]), torch.tensor([-2.0]))
    w = torch.complex(torch.tensor([0.25]), torch.tensor([3.0]))
    return {"conj": z.conj(), "conj_0d": z[0].conj(), "neg_imag": w.conj().imag}


@recipe("neg-view", features=("neg-view",), spec=("tensors.md#tensors-conj-neg",))
def _neg() -> dict[str, torch.Tensor]:
    z = torch.complex(torch.randn(3), torch.randn(3))
    return {"neg_imag": z.conj().imag}


# sparse
@recipe("sparse-coo-coalesced")
def _coo() -> torch.Tensor:
    return torch.tensor([[0.0, 2.0, 0.0], [3.0, 0.0, 4.5]]).to_sparse()


@recipe("sparse-coo-uncoalesced")
def _coo_uncoalesced() -> torch.Tensor:
    indices = torch.tensor([[0, 0, 1], [1, 1, 0]])
    return torch.sparse_coo_tensor(indices, torch.tensor([1.0, 2.0, 3.0]), (2, 2))


@recipe("sparse-coo-hybrid")
def _coo_hybrid() -> torch.Tensor:
    return torch.sparse_coo_tensor(torch.tensor([[0, 2]]), torch.arange(6, dtype=torch.float64).reshape(2, 3),
                                   (4, 3))


def _compressed(layout: str) -> Callable[[], torch.Tensor]:
    def build() -> torch.Tensor:
        dense = torch.tensor([[1.0, 0, 0, 2], [0, 0, 3, 0], [0, 4, 0, 0], [5, 0, 0, 6]])
        method = getattr(dense, f"to_{layout}")
        return method((2, 2)) if layout in ("sparse_bsr", "sparse_bsc") else method()
    return build


_CSR_1_13 = ("torch 1.13 pickles CSR as torch._utils._rebuild_sparse_csr_tensor, which torch 2.13 no longer "
             "has: 2.13 cannot load this file at all")
for _layout in ("sparse_csr", "sparse_csc", "sparse_bsr", "sparse_bsc"):
    recipe(_layout.replace("_", "-"), features=("sparse-csr",), requires=(_layout,),
           version_notes={(1, 13): _CSR_1_13} if _layout == "sparse_csr" else {})(_compressed(_layout))


# storages
@recipe("bare-typed-storage", features=("bare-storage",))
def _typed_storage() -> Any:
    return typed(torch.arange(5, dtype=torch.float32))


@recipe("bare-typed-storages-mixed", features=("bare-storage",))
def _typed_storages() -> list[Any]:
    return [typed(torch.arange(3, dtype=torch.int64)), typed(torch.arange(3, dtype=torch.float64)),
            typed(torch.tensor([True, False])), typed(torch.arange(4, dtype=torch.int16))]


@recipe("bare-untyped-storage", features=("bare-storage", "untyped-storage"))
def _untyped_storage() -> Any:
    return untyped(torch.tensor([1, -2, 3], dtype=torch.int32))


@recipe("untyped-storage-beside-view", features=("bare-storage", "untyped-storage", "shared-storage",
                                                 "dtype-uint16"),
        spec=("tensors.md#tensors-untyped-storage",), formats=("pt-zip",), min_torch=(2, 3),
        requires=("uint16",),
        notes="a uint16 tensor (written through an untyped storage and _rebuild_tensor_v3) and that "
              "storage's untyped_storage() object, bare: torch loads the bare object as the same bytes read "
              "as uint8; the description names the one storage, with the view's dtype")
def _untyped_beside_view() -> dict[str, Any]:
    t = torch.tensor([1, 2, 65535], dtype=torch.uint16)
    return {"storage": t.untyped_storage(), "tensor": t}


@recipe("sparse-parameter", features=("sparse-coo", "parameter"), spec=("tensors.md#tensors-parameter",),
        formats=("pt-zip",), min_torch=(2, 0),
        notes="nn.Parameter around a sparse COO tensor: torch saves and loads it; version 0 describes the "
              "sparse tensor with the Parameter's requires_grad")
def _sparse_parameter() -> dict[str, Any]:
    coo = torch.tensor([[0.0, 2.0, 0.0], [3.0, 0.0, 4.5]]).to_sparse()
    return {"trainable": torch.nn.Parameter(coo),
            "frozen": torch.nn.Parameter(coo.clone(), requires_grad=False)}


@recipe("storage-and-tensor", features=("bare-storage", "shared-storage"))
def _storage_and_tensor() -> dict[str, Any]:
    t = torch.arange(6, dtype=torch.float32)
    return {"tensor": t[2:], "storage": typed(t)}


# modules
def _mlp() -> torch.nn.Module:
    return torch.nn.Sequential(torch.nn.Linear(3, 4), torch.nn.BatchNorm1d(4), torch.nn.ReLU(),
                               torch.nn.Linear(4, 2))


@recipe("state-dict-mlp", features=("state-dict",))
def _state_dict() -> Any:
    return _mlp().state_dict()


@recipe("state-dict-keep-vars", features=("state-dict", "parameter"))
def _state_dict_keep_vars() -> Any:
    return _mlp().state_dict(keep_vars=True)


@recipe("state-dict-conv", features=("state-dict",))
def _state_dict_conv() -> Any:
    net = torch.nn.Sequential(torch.nn.Conv2d(2, 3, 3), torch.nn.BatchNorm2d(3), torch.nn.Conv2d(3, 1, 1))
    return net.state_dict()


@recipe("state-dict-underscore-names", features=("state-dict", "pickle-ordered-dict-attrs"),
        spec=("canonical.md#canonical-comparison",),
        notes="names starting with _ that are data, not notes: a state_dict whose _metadata has a changed "
              "version (2 -> 7 for the BatchNorm1d) and an _-named entry in a module's record, a second "
              "OrderedDict attribute _private (a dict with a key _k), a dict key _private and a nested "
              "dict key _x; torch's weights_only loader keeps every one of them")
def _state_dict_underscore_names() -> dict[str, Any]:
    sd = _mlp().state_dict()
    sd._metadata["1"]["version"] = 7
    sd._metadata["0"]["_note"] = "kept"
    sd._private = {"_k": 1}
    return {"state_dict": sd, "_private": 3, "meta": {"_x": "y"}}


@recipe("checkpoint-adam", features=("state-dict",),
        notes="training checkpoint: model and Adam optimizer state after one step, epoch, loss")
def _checkpoint() -> dict[str, Any]:
    model = torch.nn.Linear(3, 2)
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    model(torch.randn(4, 3)).pow(2).sum().backward()
    opt.step()
    return {"epoch": 3, "model_state_dict": model.state_dict(), "optimizer_state_dict": opt.state_dict(),
            "loss": 0.125}


# plain Python values
@recipe("python-scalars", features=("pickle-int-large",))
def _scalars() -> dict[str, Any]:
    return {"none": None, "true": True, "false": False,
            "ints": [0, 1, -1, 255, 256, 65535, 65536, 2**31 - 1, -2**31, 2**31, 2**63 - 1, -2**63, 2**64,
                     2**200, -(2**200)],
            "floats": [0.0, -0.0, 0.1, -2.5, 1e308, 5e-324, float("nan"), float("inf"), float("-inf")],
            "str": "text", "empty_str": ""}


@recipe("python-huge-int-long4", features=("pickle-int-large",), notes="a 2100-bit int (LONG4 opcode)")
def _huge_int() -> list[int]:
    return [2**2100 + 12345, -(2**2100)]


@recipe("python-strings", features=("pickle-str",))
def _strings() -> list[str]:
    return ["", "ascii", "h\u00e9llo \u2603 \U0001F600", "x" * 300, "line\nbreak\ttab\x00nul", "\u00ff" * 3]


@recipe("python-str-lone-surrogate", features=("pickle-str",), notes="a lone surrogate (surrogatepass)")
def _surrogate() -> list[str]:
    return ["a\ud800b", "\udfff"]


@recipe("python-bytes", features=("pickle-bytes",))
def _bytes() -> dict[str, Any]:
    return {"empty": b"", "binary": bytes(range(256)), "short": b"\x00\xff", "bytearray": bytearray(b"abc")}


recipe("python-bytes-protocol-5", protocol=5, features=("pickle-bytes", "pickle-protocol-5"),
       spec=("pickle.md#pickle-protocols", "pickle.md#pickle-opcodes"),
       notes="protocol 5: the bytearray is one BYTEARRAY8 opcode (protocol 5), bytes SHORT_BINBYTES")(_bytes)


@recipe("python-containers")
def _containers() -> dict[Any, Any]:
    return {"tuple": (1, "two", 3.0), "empty_tuple": (), "list": [1, [2, [3, []]]], "empty_list": [],
            "set": {1, 2, 3}, "empty_dict": {}, "nested": {"a": {"b": {"c": (None, True)}}},
            1: "int key", 2.5: "float key", (1, 2): "tuple key", None: "none key",
            "bool_keys": {True: "true key", False: "false key"},
            "ordered": collections.OrderedDict([("z", 1), ("a", 2)])}


@recipe("python-frozenset", features=("pickle-set",))
def _frozenset() -> Any:
    return {"fs": frozenset({1, 2}), "empty": frozenset()}


@recipe("shared-containers", features=("pickle-memo",))
def _shared_containers() -> dict[str, Any]:
    shared_list, shared_dict, shared_set = [1, 2], {"k": "v"}, {3}
    return {"l1": shared_list, "l2": shared_list, "d1": shared_dict, "d2": shared_dict,
            "s1": shared_set, "s2": shared_set, "t1": (shared_list, shared_list)}


@recipe("cycles", features=("pickle-cycle", "pickle-memo"))
def _cycles() -> dict[str, Any]:
    loop: list[Any] = [1]
    loop.append(loop)
    selfref: dict[str, Any] = {"name": "d"}
    selfref["self"] = selfref
    return {"list": loop, "dict": selfref}


@recipe("deep-nesting-300", features=("pickle-deep-nesting", "pickle-list"))
def _deep() -> Any:
    x: Any = torch.tensor([1.0])
    for _ in range(300):
        x = [x]
    return x


@recipe("torch-globals", features=("pickle-global",))
def _globals() -> list[Any]:
    return [torch.float32, torch.int8, torch.bfloat16, torch.bool, torch.strided, torch.sparse_coo,
            torch.per_tensor_affine, torch.qint8, torch.complex64]


@recipe("torch-size-and-device", features=("pickle-reduce",), spec=("canonical.md#canonical-pt-values",))
def _size_device() -> dict[str, Any]:
    return {"size": torch.Size([2, 3]), "empty_size": torch.Size([]), "cpu": torch.device("cpu"),
            "cuda0": torch.device("cuda", 0), "cuda": torch.device("cuda")}


@recipe("python-complex", features=("pickle-reduce",), notes="Python complex numbers (builtins.complex)")
def _py_complex() -> list[complex]:
    return [1 + 2j, complex(-0.0, float("inf"))]


# protocols and container variants
def _mixed() -> dict[str, Any]:
    base = torch.arange(6, dtype=torch.float32).reshape(2, 3)
    return {"base": base, "view": base[1:], "ints": [1, 300, 70000, 2**40, 2**70], "float": 0.5,
            "str": "s", "bytes": b"by", "none": None, "flags": (True, False),
            "od": collections.OrderedDict([("w", torch.ones(2, dtype=torch.float64))])}


for _p in (1, 3, 4, 5):
    recipe(f"protocol-{_p}", protocol=_p, features=(f"pickle-protocol-{_p}",))(_mixed)


def _negative_ints() -> dict[str, Any]:
    """Negative ints of every width, beside positive ones and floats with exponents of both signs."""
    return {"minus_five": -5, "int32_min": -2**31, "below_int32": -2**31 - 1, "neg_2_40": -2**40,
            "neg_2_70": -2**70, "zero": 0, "list": [-1, -300, -70000], "five": 5, "pos_2_40": 2**40,
            "tiny": 1e-05, "huge": 1.5e+300, "neg_tiny": -2.5e-300, "half": 0.5}


recipe("negative-ints-protocol-0", protocol=0, features=("pickle-protocol-0", "pickle-int-large"),
       spec=("pickle.md#pickle-number-text",),
       notes="no tensor (torch 2.13 cannot load the text persistent ids of protocol 0): Python's pickler "
             "writes each int as text, INT '-5' and LONG '-1099511627776L' and so on, beside positive ones, "
             "and each float as FLOAT text ('1e-05', '1.5e+300')")(_negative_ints)


@recipe("negative-ints-protocol-1", protocol=1, features=("pickle-protocol-1", "pickle-int-large"),
        spec=("pickle.md#pickle-number-text",),
        notes="protocol 1 writes ints that fit 32 bits as BININT and the others as text LONG "
              "('-1099511627776L')")
def _negative_ints_1() -> dict[str, Any]:
    return {**_negative_ints(), "tensor": torch.tensor([-1, 2], dtype=torch.int64)}


@recipe("zip-root-name-from-path", formats=("pt-zip",), save="path",
        notes="saved to a path: torch names the archive's root folder after the file (data/)")
def _root_name() -> dict[str, Any]:
    return {"w": torch.arange(4, dtype=torch.float32)}


@recipe("zip-no-byteorder-record", formats=("pt-zip",), save="no-byteorder", min_torch=(2, 0),
        features=("zip-no-byteorder",))
def _no_byteorder() -> dict[str, Any]:
    return {"w": torch.arange(4, dtype=torch.float32), "i": torch.arange(3, dtype=torch.int64)}


def _endian_mix() -> dict[str, torch.Tensor]:
    return {"f32": torch.tensor([1.0, -2.5, 3e38]), "f64": torch.tensor([1.0, -0.0], dtype=torch.float64),
            "i16": torch.tensor([1, -2, 300], dtype=torch.int16), "i64": torch.tensor([1, -2**62]),
            "f16": torch.tensor([0.5, -65504.0], dtype=torch.float16),
            "bf16": torch.tensor([1.5, -3e38], dtype=torch.bfloat16),
            "c64": torch.tensor([1 + 2j, -3.5 - 0.25j]), "u8": torch.tensor([1, 255], dtype=torch.uint8),
            "b": torch.tensor([True, False]), "view": torch.arange(6, dtype=torch.int32)[2:5]}


recipe("zip-big-endian", formats=("pt-zip",), save="big-endian", min_torch=(2, 0),
       features=("zip-big-endian",),
       notes="simulated big-endian writer: each storage byteswapped with torch's own "
             "UntypedStorage.byteswap(dtype) and sys.byteorder patched to 'big' during torch.save, so "
             "torch writes byteorder=big; the expected is torch's own load, which swaps back "
             "(torch 1.13 ignores the byteorder record and reads the swapped bytes as little-endian)"
       )(_endian_mix)


@recipe("zip-crc32-zero", formats=("pt-zip",), save="no-crc32", min_torch=(2, 1),
        features=("zip-crc32-zero",),
        notes="torch.serialization.set_crc32_options(False): every record's CRC-32 field is 0")
def _no_crc() -> dict[str, Any]:
    return {"w": torch.arange(5, dtype=torch.float32)}


@recipe("zip-storage-alignment-4096", formats=("pt-zip",), save="align-4096", min_torch=(2, 5),
        spec=("pt-zip.md#pt-zip-alignment",),
        notes="torch.utils.serialization.config.save.storage_alignment = 4096 (.storage_alignment record)")
def _align() -> dict[str, Any]:
    return {"a": torch.arange(3, dtype=torch.float32), "b": torch.arange(5, dtype=torch.int64)}


# TorchScript
class _Tiny(torch.nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.lin = torch.nn.Linear(3, 2)
        self.register_buffer("steps", torch.arange(3))
        self.scale = 2

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.lin(x) * self.scale


recipe("torchscript-tiny", formats=("pt-torchscript",), save="jit", features=("torchscript-archive",),
       notes="torch.jit.script of a Linear + buffer + int attribute; expected from torch.jit.load")(_Tiny)


class _TypedAttributes(torch.nn.Module):
    """TorchScript attributes of container types, which data.pkl tags (torch.jit._pickle)."""

    def __init__(self) -> None:
        super().__init__()
        self.ints: list[int] = [1, -2, 3]
        self.floats: list[float] = [0.5, -1.5]
        self.names: dict[str, int] = {"a": 1, "b": 2}
        self.flags: list[bool] = [True, False]
        self.pair: tuple[int, str] = (7, "seven")

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x * self.ints[0] + self.names["a"] + self.floats[0]


recipe("torchscript-typed-attributes", formats=("pt-torchscript",), save="jit",
       features=("torchscript-archive",), spec=("torchscript.md#torchscript-records",),
       notes="torch.jit.script of a module whose attributes are typed lists, a dict and a tuple: data.pkl "
             "builds them with the torch.jit._pickle functions; expected from torch.jit.load",
       )(_TypedAttributes)


@recipe("torchscript-sequential", formats=("pt-torchscript",), save="jit", features=("torchscript-archive",),
        notes="torch.jit.script of nn.Sequential(Linear, ReLU, Linear); expected from torch.jit.load")
def _script_seq() -> torch.nn.Module:
    return torch.nn.Sequential(torch.nn.Linear(2, 3), torch.nn.ReLU(), torch.nn.Linear(3, 1))


# -- writing ---------------------------------------------------------------------------------------

def save_call(r: Recipe, fmt: str) -> str:
    """The exact save call, as provenance records it."""
    if fmt == "pt-torchscript":
        return 'torch.jit.save(torch.jit.script(obj), f) with f = open("data.pt", "wb")'
    args = [] if r.protocol == 2 else [f"pickle_protocol={r.protocol}"]
    if fmt == "pt-legacy":
        args.append("_use_new_zipfile_serialization=False")
    if r.save == "no-byteorder":
        args.append("_disable_byteorder_record=True")
    tail = "".join(f", {a}" for a in args)
    if r.save == "path":
        return f'torch.save(obj, "data.pt"{tail})'
    call = f'torch.save(obj, f{tail}) with f = open("data.pt", "wb")'
    if r.save == "no-crc32":
        call = f"torch.serialization.set_crc32_options(False); {call}"
    if r.save == "align-4096":
        call = f"torch.utils.serialization.config.save.storage_alignment = 4096; {call}"
    if r.save == "big-endian":
        call = f"each storage .byteswap(dtype); with mock.patch.object(sys, 'byteorder', 'big'): {call}"
    return call


def save_file(obj: Any, r: Recipe, fmt: str, path: Path) -> None:
    """Write ``obj`` to ``path`` as :func:`save_call` says."""
    if fmt == "pt-torchscript":
        with open(path, "wb") as f:
            torch.jit.save(torch.jit.script(obj), f)
        return
    kw: dict[str, Any] = {}
    if r.protocol != 2:
        kw["pickle_protocol"] = r.protocol
    if fmt == "pt-legacy":
        kw["_use_new_zipfile_serialization"] = False
    if r.save == "no-byteorder":
        kw["_disable_byteorder_record"] = True
    if r.save == "path":
        torch.save(obj, str(path), **kw)
        return
    with ExitStack() as stack:
        if r.save == "no-crc32":
            torch.serialization.set_crc32_options(False)
            stack.callback(torch.serialization.set_crc32_options, True)
        if r.save == "align-4096":
            from torch.utils.serialization import config
            stack.enter_context(mock.patch.object(config.save, "storage_alignment", 4096))
        if r.save == "big-endian":
            for t in obj.values():
                td.untyped_of_tensor(t).byteswap(t.dtype)
            stack.enter_context(mock.patch.object(sys, "byteorder", "big"))
        f = stack.enter_context(open(path, "wb"))
        torch.save(obj, f, **kw)


def writer_string() -> str:
    base = f"torch {torch.__version__}"
    if torch.__file__.startswith("/usr/lib/python3/"):
        try:
            deb = subprocess.run(["dpkg-query", "-W", "-f=${Version}", "python3-torch"], capture_output=True,
                                 text=True, check=True).stdout.strip()
            base += f" (Debian python3-torch {deb})"
        except (OSError, subprocess.CalledProcessError):
            pass
    return base


def describe_file(path: Path, fmt: str) -> dict[str, Any]:
    """What the running torch loads from ``path``, described; notes say how it was loaded."""
    if fmt == "pt-torchscript":
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            module = torch.jit.load(str(path), map_location="cpu")
        return td.describe_script_module(module, {
            "_loaded_with": "torch.jit.load(map_location='cpu')", "_torch_version": torch.__version__})
    loaded = td.load(path, allow_unsafe=True)  # our own freshly written file: trusted
    notes: dict[str, Any] = {"_loaded_with": loaded.how, "_torch_version": torch.__version__}
    if loaded.notes:
        notes["_notes"] = loaded.notes
    return td.describe(loaded.obj, fmt, notes, loaded.locations)


# -- features and anchors --------------------------------------------------------------------------

def vocabulary() -> set[str]:
    data = yaml.safe_load((ROOT / "conformance" / "features.yaml").read_text(encoding="utf-8"))
    return {k for section in data.values() if isinstance(section, dict) for k in section}


_ANCHORS: dict[str, tuple[str, ...]] = {
    "zip-archive": ("pt-zip.md#pt-zip-container", "pt-zip.md#pt-zip-records", "pt-zip.md#pt-zip-data-pkl",
                    "pt-zip.md#pt-zip-version"),
    "legacy-stream": ("pt-legacy.md#pt-legacy-magic", "pt-legacy.md#pt-legacy-protocol-version",
                      "pt-legacy.md#pt-legacy-sys-info", "pt-legacy.md#pt-legacy-object"),
    "torchscript-archive": ("torchscript.md#torchscript-detect", "torchscript.md#torchscript-records",
                            "torchscript.md#torchscript-constants"),
    "zip-big-endian": ("pt-zip.md#pt-zip-byteorder", "tensors.md#tensors-byte-order"),
    "zip-no-byteorder": ("pt-zip.md#pt-zip-byteorder",),
    "zip-root-name": ("pt-zip.md#pt-zip-root-name",),
    "zip-crc32-zero": ("pt-zip.md#pt-zip-container",),
    "storage-offset": ("tensors.md#tensors-storage-offset",),
    "non-contiguous": ("tensors.md#tensors-stride",),
    "expanded-stride0": ("tensors.md#tensors-stride",),
    "overlapping-view": ("tensors.md#tensors-stride",),
    "partial-view": ("tensors.md#tensors-view-bounds",),
    "zero-dim": ("tensors.md#tensors-zero-dim",),
    "empty-tensor": ("tensors.md#tensors-empty",),
    "shared-storage": ("tensors.md#tensors-storage", "canonical.md#canonical-sharing"),
    "bare-storage": ("tensors.md#tensors-storage", "canonical.md#canonical-pt-values"),
    "parameter": ("tensors.md#tensors-parameter", "canonical.md#canonical-pt-values"),
    "requires-grad": ("tensors.md#tensors-requires-grad",),
    "quantized-per-tensor": ("tensors.md#tensors-quantized", "canonical.md#canonical-quantized"),
    "quantized-per-channel": ("tensors.md#tensors-quantized", "canonical.md#canonical-quantized"),
    "sparse-coo": ("tensors.md#tensors-sparse", "canonical.md#canonical-sparse"),
    "sparse-csr": ("tensors.md#tensors-sparse", "canonical.md#canonical-sparse"),
    "conj-view": ("tensors.md#tensors-conj-neg",),
    "neg-view": ("tensors.md#tensors-conj-neg",),
    "pickle-memo": ("pickle.md#pickle-memo", "canonical.md#canonical-sharing"),
    "pickle-cycle": ("canonical.md#canonical-sharing",),
    "pickle-frame": ("pickle.md#pickle-opcodes",),
    "pickle-ordered-dict": ("pickle.md#pickle-ordered-dict", "canonical.md#canonical-pt-values"),
    "pickle-ordered-dict-attrs": ("pickle.md#pickle-ordered-dict", "canonical.md#canonical-pt-values"),
    "pickle-global": ("pickle.md#pickle-globals", "canonical.md#canonical-pt-values"),
    # the .pt forms of Python bytes/bytearray and set/frozenset (spec/canonical.md#canonical-pt-values)
    "pickle-bytes": ("canonical.md#canonical-pt-values",),
    "pickle-set": ("canonical.md#canonical-pt-values",),
    "pickle-reduce": ("pickle.md#pickle-globals", "pickle.md#pickle-rebuild"),
    "pickle-float-special": ("canonical.md#canonical-float",),
    "pickle-int-large": ("canonical.md#canonical-float",),
    "pickle-deep-nesting": ("canonical.md#canonical-node-budget",),
    "tensor-python-attrs": ("tensors.md#tensors-view",),
    "meta-tensor": ("tensors.md#tensors-meta", "canonical.md#canonical-meta"),
}


def _values(node: Any) -> Any:
    """Every VALUE node of a description (notes skipped)."""
    stack = [node]
    while stack:
        v = stack.pop()
        if isinstance(v, dict):
            if "type" in v:
                yield v
            stack.extend(x for k, x in v.items() if not k.startswith("_"))
        elif isinstance(v, list):
            stack.extend(v)


def _row_major(shape: list[int], stride: list[int]) -> bool:
    expect = 1
    for size, st in zip(reversed(shape), reversed(stride), strict=True):
        if size != 1 and st != expect:
            return False
        expect *= size
    return True


def derived_features(desc: dict[str, Any], fmt: str, r: Recipe, path: Path) -> set[str]:
    """Features read off the description and the written file itself."""
    f: set[str] = {f"pickle-protocol-{r.protocol}"} if fmt != "pt-torchscript" else set()
    if r.protocol >= 4:
        f.add("pickle-frame")
    if fmt == "pt-zip":
        f.add("zip-archive")
        with zipfile.ZipFile(path) as z:
            root = z.namelist()[0].split("/")[0]
        records = torch._C.PyTorchFileReader(str(path))  # torch's reader: no CRC check (zip-crc32-zero)
        if not records.has_record("byteorder"):
            f.add("zip-no-byteorder")
        elif bytes(records.get_record("byteorder")) == b"big":
            f.add("zip-big-endian")
        if root != "archive":
            f.add("zip-root-name")
    elif fmt == "pt-legacy":
        f.update(("legacy-stream", "legacy-magic"))
    else:
        f.add("torchscript-archive")
    for s in desc["storages"].values():
        f.add(f"dtype-{s['dtype']}")
        if s["device"].startswith("cuda"):
            f.add("cuda-location")
    uses: collections.Counter[str] = collections.Counter()
    for v in _values(desc["objects"]):
        kind = v["type"]
        if "id" in v or kind == "ref":
            f.add("pickle-memo")
        if kind in ("tensor", "quantized_tensor"):
            uses[v["storage"]] += 1
            store = desc["storages"][v["storage"]]
            shape, stride = v["shape"], v["stride"]
            numel = 1
            for n in shape:
                numel *= n
            if not shape:
                f.add("zero-dim")
            if numel == 0:
                f.add("empty-tensor")
            if v["storage_offset"]:
                f.add("storage-offset")
            if any(st == 0 and n > 1 for n, st in zip(shape, stride, strict=True)):
                f.add("expanded-stride0")
            elif numel and not _row_major(shape, stride):
                f.add("non-contiguous")
            if numel and _row_major(shape, stride) and not v["storage_offset"] and numel == store["numel"]:
                f.add("contiguous")
            elif numel and store["numel"] > numel:
                f.add("partial-view")
            if v.get("parameter"):
                f.add("parameter")
            if v["requires_grad"]:
                f.add("requires-grad")
            if kind == "quantized_tensor":
                f.add("quantized-per-tensor" if "scale" in v else "quantized-per-channel")
            f.add("pickle-reduce")
            f.add("pickle-persistent-id")
        elif kind == "storage":
            uses[v["storage"]] += 1
            f.add("pickle-persistent-id")
        elif kind == "meta_tensor":
            f.update(("meta-tensor", "pickle-reduce"))
            if v.get("parameter"):
                f.add("parameter")
            if v["requires_grad"]:
                f.add("requires-grad")
        elif kind == "sparse_tensor":
            f.add("sparse-coo" if v["layout"] == "sparse_coo" else "sparse-csr")
        elif kind in ("dict", "list", "tuple", "set"):
            f.add(f"pickle-{kind}")
        elif kind == "ordered_dict":
            f.add("pickle-ordered-dict")
            if v.get("attrs"):
                f.add("pickle-ordered-dict-attrs")
        elif kind == "bytes":
            f.add("pickle-bytes")
        elif kind == "str":
            f.add("pickle-str")
        elif kind == "global":
            f.add("pickle-global")
        elif kind == "object":
            f.add("pickle-reduce")
        elif kind == "float" and v["value"] in ("nan", "inf", "-inf", "-0.0"):
            f.add("pickle-float-special")
        elif kind == "int" and not -2**63 <= int(v["value"]) < 2**63:
            f.add("pickle-int-large")
    if any(n > 1 for n in uses.values()):
        f.add("shared-storage")
    return f


def anchors(features: set[str], fmt: str, r: Recipe) -> list[str]:
    out = {"canonical.md#canonical-document", "canonical.md#canonical-values", *r.spec}
    for feat in features:
        out.update(_ANCHORS.get(feat, ()))
        if feat.startswith("dtype-"):
            out.update(("tensors.md#tensors-dtype-table", "canonical.md#canonical-hash",
                        "tensors.md#tensors-view"))
        if feat.startswith("pickle-protocol-"):
            out.add("pickle.md#pickle-protocols")
    if "pickle-persistent-id" in features:
        if fmt == "pt-zip":
            out.update(("pt-zip.md#pt-zip-storage-records", "pickle.md#pickle-persistent-id"))
        elif fmt == "pt-legacy":
            out.update(("pt-legacy.md#pt-legacy-storage-keys", "pt-legacy.md#pt-legacy-storages",
                        "pt-legacy.md#pt-legacy-persistent-id", "pt-legacy.md#pt-legacy-rebuild-tensor"))
    return sorted(out)


# -- cases -----------------------------------------------------------------------------------------

def _strip_notes(x: Any) -> Any:
    if isinstance(x, dict):
        return {k: _strip_notes(v) for k, v in x.items() if not k.startswith("_")}
    if isinstance(x, list):
        return [_strip_notes(v) for v in x]
    return x


class Skip(Exception):
    """The running torch cannot write this case; the message says why."""


def write_case(r: Recipe, fmt: str, out: Path, vocab: set[str]) -> str:
    """Write one case folder; returns a status word for the summary."""
    case_name = r.name + SUFFIX
    folder = out / fmt / case_name
    with tempfile.TemporaryDirectory() as tmp:
        new = Path(tmp) / "data.pt"
        torch.manual_seed(0)
        try:
            save_file(r.build(), r, fmt, new)
        except Exception as e:
            raise Skip(f"torch.save fails: {type(e).__name__}: {td.last_line(e)}") from e
        try:
            desc = describe_file(new, fmt)
        except td.Declined as e:
            raise Skip(f"no canonical form: {e}") from e
        except Exception as e:
            raise Skip(f"torch {torch.__version__} writes the file but cannot load it: "
                       f"{type(e).__name__}: {td.last_line(e)}") from e
        old = folder / "data.pt"
        kept = False
        if old.is_file():
            try:
                kept = _strip_notes(describe_file(old, fmt)) == _strip_notes(desc) and \
                    (old.read_bytes() == new.read_bytes() or fmt != "pt-zip")
            except Exception:
                kept = False
        feats = derived_features(desc, fmt, r, new) | set(r.features)
        if fmt != "pt-zip":
            feats -= {"zip-no-byteorder", "zip-root-name"}
        unknown = sorted(feats - vocab)
        if unknown:
            raise SystemExit(f"{fmt}/{case_name}: features not in features.yaml: {unknown}")
        folder.mkdir(parents=True, exist_ok=True)
        if not kept:
            shutil.copyfile(new, old)
    how = desc.get("_loaded_with", "")
    notes = [f"recipe {r.name} ({GENERATOR}); python {platform.python_version()}",
             f"saved with: {save_call(r, fmt)}",
             f"expected: {how} by the writer's own torch {torch.__version__}"]
    notes += [str(n) for n in desc.get("_notes", [])]
    if r.notes:
        notes.append(r.notes)
    if TORCH_VERSION in r.version_notes:
        notes.append(r.version_notes[TORCH_VERSION])
    if fmt == "pt-legacy":
        notes.append("legacy storage keys are str(storage._cdata) addresses: the bytes differ between runs, "
                     "the description does not")
    if fmt == "pt-torchscript":
        notes.append("the archive's code/*.debug_pkl records the generator's path and line numbers: the "
                     "bytes change when the generator is edited, the description does not")
    case: dict[str, Any] = {
        "id": f"{fmt}/{case_name}",
        "category": "accept",
        "format": fmt,
        "file": "data.pt",
        "features": sorted(feats),
        "spec": anchors(feats, fmt, r),
        "provenance": {"writer": writer_string(), "generator": GENERATOR, "notes": "; ".join(notes)},
        "expect": {"description": write_expected(folder, desc)},
    }
    (folder / "case.yaml").write_text(yaml.safe_dump(case, sort_keys=False, width=110, allow_unicode=False),
                                      encoding="utf-8")
    return "kept" if kept else "written"


def skip_reason(r: Recipe, fmt: str) -> str | None:
    missing = [name for name in r.requires if not hasattr(torch, name)]
    if missing:
        return f"torch {torch.__version__} has no {', '.join(missing)}"
    if TORCH_VERSION < r.min_torch:
        return f"needs torch >= {r.min_torch[0]}.{r.min_torch[1]}"
    if fmt == "pt-legacy" and r.save == "jit":
        return "TorchScript has no legacy format"
    return None


def generate(out: Path, only: str | None) -> int:
    vocab = vocabulary()
    written: collections.Counter[str] = collections.Counter()
    skipped: list[str] = [
        f"protocol-0 (all formats): torch {torch.__version__} writes it but cannot load it "
        "(persistent ids must be tuples)",
    ]
    for r in RECIPES:
        if only and not re.search(only, r.name):
            continue
        for fmt in r.formats:
            reason = skip_reason(r, fmt)
            if reason is None:
                try:
                    status = write_case(r, fmt, out, vocab)
                except Skip as e:
                    reason = str(e)
                else:
                    written[fmt] += 1
                    print(f"{status:8} {fmt}/{r.name}{SUFFIX}")
            if reason is not None:
                shutil.rmtree(out / fmt / (r.name + SUFFIX), ignore_errors=True)
                skipped.append(f"{r.name} ({fmt}): {reason}")
    print(f"\ntorch {torch.__version__}: " + ", ".join(f"{n} {fmt}" for fmt, n in sorted(written.items())))
    print(f"skipped ({len(skipped)}):")
    for s in skipped:
        print(f"  {s}")
    return 0


# -- cross-check -----------------------------------------------------------------------------------

def _first_difference(a: Any, b: Any, path: str = "$") -> str | None:
    if type(a) is not type(b):
        return f"{path}: {json.dumps(a)[:120]} != {json.dumps(b)[:120]}"
    if isinstance(a, dict):
        for k in sorted(set(a) | set(b)):
            if k not in a or k not in b:
                return f"{path}.{k}: present on one side only"
            d = _first_difference(a[k], b[k], f"{path}.{k}")
            if d:
                return d
        return None
    if isinstance(a, list):
        if len(a) != len(b):
            return f"{path}: {len(a)} items != {len(b)}"
        for i, (x, y) in enumerate(zip(a, b, strict=True)):
            d = _first_difference(x, y, f"{path}[{i}]")
            if d:
                return d
        return None
    return None if a == b else f"{path}: {json.dumps(a)[:120]} != {json.dumps(b)[:120]}"


def check(cases: Path) -> int:
    """Load every case this generator wrote with the running torch and compare with its expected
    description."""
    agree, disagree = 0, []
    for case_yaml in sorted(cases.glob("pt-*/*/case.yaml")):
        meta = yaml.safe_load(case_yaml.read_text(encoding="utf-8"))
        if meta.get("provenance", {}).get("generator") != GENERATOR:
            continue
        folder = case_yaml.parent
        expected = json.loads(read_expected_bytes(folder / meta["expect"]["description"]))
        try:
            mine = describe_file(folder / meta["file"], meta["format"])
        except Exception as e:
            disagree.append(f"{meta['id']}: torch {torch.__version__} cannot load it: "
                            f"{type(e).__name__}: {td.last_line(e)}")
            continue
        diff = _first_difference(_strip_notes(expected), _strip_notes(mine))
        if diff:
            disagree.append(f"{meta['id']}: {diff}")
        else:
            agree += 1
    print(f"torch {torch.__version__}: {agree} cases agree, {len(disagree)} differ")
    for d in disagree:
        print(f"  {d}")
    return 1 if disagree else 0


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--out", type=Path, help="the cases folder to write (conformance/cases)")
    p.add_argument("--only", help="regular expression: only recipes whose name matches")
    p.add_argument("--check", type=Path, help="cross-check every case of this generator with this torch")
    args = p.parse_args(argv)
    warnings.simplefilter("ignore")
    sys.setrecursionlimit(max(sys.getrecursionlimit(), walk_frames()))  # deep-nesting cases, JSON included
    if args.check:
        return check(args.check)
    if not args.out:
        p.error("--out or --check is required")
    return generate(args.out, args.only)


if __name__ == "__main__":
    sys.exit(main())
