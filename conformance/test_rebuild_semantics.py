"""Hostile files torch 2.13 loads, described as torch loads them (spec/tensors.md): the reference reader's
description of each is compared with torch's own view of what ``torch.load(weights_only=True)`` returns
(``generators/torch_describe.py``, run in a subprocess that never imports torchfmt).

These are the accept side of ``generators/adversarial/rebuild_semantics.py``: metadata bits set by a key
whatever its value, ``_rebuild_from_type_v2`` with the Parameter type, raw storage keys, empty storages,
cast sparse indices, empty tensors whose sizes overflow, more than 64 dimensions, device normal forms and
a tensor moved to the meta device.
"""

from __future__ import annotations

import json
import os
import pickle
import struct
import subprocess
import sys
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from generators.adversarial import assemble as a  # noqa: E402
from generators.adversarial import rebuild_semantics as rs  # noqa: E402
from harness.compare import compare  # noqa: E402

G, T, F = a.global_, pickle.NEWTRUE, pickle.NEWFALSE
F3 = {"0": struct.pack("<3f", 1.0, -2.0, 0.0)}
C2 = {"0": struct.pack("<4f", 1.0, 2.0, float("nan"), -4.0)}
LAYOUT = a.call(G("torch.serialization", "_get_layout"), a.binunicode("torch.sparse_coo"))


def _float3(key: str = "0", **kw: object) -> bytes:
    return rs.v2(rs.pid("FloatStorage", key, 3), 0, (3,), (1,), **kw)


#: float16 values: a signaling NaN of each sign, a quiet NaN, -0.0 (and, as complex32, two elements).
HALVES = struct.pack("<4H", 0xFC7C, 0x7C01, 0x7E00, 0x8000)


def _files() -> dict[str, tuple[bytes, dict[str, bytes]]]:
    neg = rs.meta(a.binunicode("neg"), T)
    conj = rs.meta(a.binunicode("conj"), F)
    latin1_neg = a.call(G("_codecs", "encode"), a.binunicode("neg"), a.binunicode("latin1"))  # b"neg"
    neg_bytes = rs.meta(latin1_neg, T)
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
    sparse32 = a.call(
        G("torch._utils", "_rebuild_sparse_tensor"),
        LAYOUT,
        a.tuple_(
            rs.v2(rs.pid("IntStorage", "0", 2), 0, (1, 2), (2, 1)),
            rs.v2(rs.pid("FloatStorage", "1", 2), 0, (2,), (1,)),
            rs.ints((3,)),
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
    return {
        "conj-key-false": (
            rs.doc(("x", rs.v2(rs.pid("ComplexFloatStorage", "0", 2), 0, (2,), (1,), metadata=conj))),
            C2,
        ),
        "neg-bytes-key": (rs.doc(("x", _float3(metadata=neg_bytes))), F3),
        "from-type-parameter": (
            rs.doc(("x", rs.from_type(G("torch.nn.parameter", "Parameter"), pickle.NONE))),
            F3,
        ),
        "storage-key-int-and-str": (rs.doc(("a", _float3()), ("b", rs.v2(key_int, 0, (3,), (1,)))), F3),
        "empty-storage-twice": (
            rs.doc(
                ("a", rs.v2(rs.pid("FloatStorage", "0", 0), 0, (0,), (1,))),
                ("b", rs.v2(rs.pid("FloatStorage", "0", 0), 0, (0,), (1,))),
            ),
            {"0": b""},
        ),
        "sparse-int32-indices": (
            rs.doc(("s", sparse32)),
            {"0": struct.pack("<2i", 0, 2), "1": struct.pack("<2f", 1.5, 2.5)},
        ),
        "empty-size-product-2-64": (
            rs.doc(("t", rs.v2(rs.pid("FloatStorage", "0", 3), 0, (0, 1 << 62, 4), (1, 1, 1)))),
            F3,
        ),
        "dims-65": (rs.doc(("t", rs.v2(rs.pid("FloatStorage", "0", 3), 1, (1,) * 64 + (2,), (1,) * 65))), F3),
        "device-string-index": (
            rs.doc(
                ("d", rs.device(a.binunicode("cuda:1"))), ("e", rs.device(a.binunicode("xla"), a.integer(3)))
            ),
            {},
        ),
        "device-tensor-meta": (rs.doc(("m", devt)), F3),
        "neg-float16-signaling-nan": (
            rs.doc(("x", rs.v2(rs.pid("HalfStorage", "0", 4), 0, (4,), (1,), metadata=neg))),
            {"0": HALVES},
        ),
        "neg-complex32": (
            rs.doc(("x", rs.v3(rs.pid("UntypedStorage", "0", 8), (2,), "complex32", metadata=neg))),
            {"0": HALVES},
        ),
        "conj-complex32": (
            rs.doc(
                (
                    "x",
                    rs.v3(
                        rs.pid("UntypedStorage", "0", 8),
                        (2,),
                        "complex32",
                        metadata=rs.meta(a.binunicode("conj"), T),
                    ),
                )
            ),
            {"0": HALVES},
        ),
        "conj-neg-complex64": (
            rs.doc(
                (
                    "x",
                    rs.v2(
                        rs.pid("ComplexFloatStorage", "0", 2),
                        0,
                        (2,),
                        (1,),
                        metadata=a.dict_((a.binunicode("conj"), T), (a.binunicode("neg"), T)),
                    ),
                )
            ),
            C2,
        ),
        "neg-uint8-int8": (
            rs.doc(
                ("u", rs.v2(rs.pid("ByteStorage", "0", 3), 0, (3,), (1,), metadata=neg)),
                ("i", rs.v2(rs.pid("CharStorage", "1", 3), 0, (3,), (1,), metadata=neg)),
            ),
            {"0": b"\x00\x01\xc8", "1": b"\x80\x7f\x01"},
        ),
    }


FILES = _files()
READERS = {
    "reference": [sys.executable, "-m", "torchfmt", "dump"],
    "kaitai": [sys.executable, str(HERE / "adapters" / "kaitai_reader.py")],
}

TORCH_SIDE = r"""
import json, sys, warnings
sys.path.insert(0, sys.argv[1])
from generators import torch_describe as td
import torch
warnings.simplefilter("ignore")
out = {}
for path in sys.argv[2:]:
    obj = torch.load(path, weights_only=True)
    out[path] = td.describe(obj, "pt-zip")
print(json.dumps(out))
"""


@pytest.fixture(scope="module")
def torch_views(tmp_path_factory: pytest.TempPathFactory) -> dict[str, dict]:
    folder = tmp_path_factory.mktemp("rebuild")
    paths = {}
    for name, (pkl, storages) in FILES.items():
        p = folder / f"{name}.pt"
        p.write_bytes(rs.in_zip(pkl, storages))
        paths[name] = str(p)
    env = {"PATH": os.environ.get("PATH", ""), "HOME": str(folder), "TMPDIR": str(folder)}
    run = subprocess.run(
        [sys.executable, "-c", TORCH_SIDE, str(HERE), *paths.values()],
        capture_output=True,
        text=True,
        cwd=folder,
        env=env,
        timeout=300,
        check=True,
    )
    views = json.loads(run.stdout.strip().splitlines()[-1])
    return {name: {"path": p, "torch": views[p]} for name, p in paths.items()}


@pytest.mark.spec(
    "tensors.md#tensors-conj-neg",
    "tensors.md#tensors-parameter",
    "tensors.md#tensors-storage-identity",
    "tensors.md#tensors-sparse",
    "tensors.md#tensors-empty",
    "tensors.md#tensors-view",
    "tensors.md#tensors-device",
    "tensors.md#tensors-device-tensor",
)
@pytest.mark.parametrize("reader", sorted(READERS))
@pytest.mark.parametrize("name", sorted(FILES))
def test_readers_describe_what_torch_loads(name: str, reader: str, torch_views: dict[str, dict]) -> None:
    """The reference reader and the Kaitai-based second reader (written from the spec) both describe
    exactly what torch loads."""
    view = torch_views[name]
    env = dict(os.environ, PYTHONPATH=str(HERE.parent / "reference_impl"))
    run = subprocess.run(
        [*READERS[reader], view["path"]], capture_output=True, text=True, env=env, timeout=60
    )
    assert run.returncode == 0, run.stderr
    assert compare(view["torch"], json.loads(run.stdout)) == []
