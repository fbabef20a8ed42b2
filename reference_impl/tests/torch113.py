"""Debian's torch 1.13 (``/usr/bin/python3`` with ``python3-torch``) as a second real reader for the
writer's and convert's tests: whether it is here, and its descriptions of many files from one process."""

from __future__ import annotations

import functools
import importlib
import json
import os
import subprocess
import textwrap
from pathlib import Path
from typing import Any

import pytest
from torchfmt.model import Global, MetaTensor, OpaqueObject, QuantizedTensor, SparseTensor, Tensor

PYTHON = "/usr/bin/python3"
#: The repository root: Debian's Python imports the suite's torch_describe from it (its PYTHONPATH alone).
ROOT = Path(__file__).resolve().parents[2]

_DESCRIBE_MANY = textwrap.dedent("""
    import json, sys
    from conformance.generators import torch_describe as td
    for line in sys.stdin:
        path = line.strip()
        try:
            loaded = td.torch_load(path, True)
            out = td.describe(loaded.obj, "pt", locations=loaded.locations)
        except Exception as e:
            out = {"error": type(e).__name__ + ": " + td.last_line(e)}
        print(json.dumps(out), flush=True)
""")


def clean_env() -> dict[str, str]:
    """This environment without the venv's Python paths (Debian's Python imports its own packages)."""
    return {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PYTHONHOME")}


@functools.cache
def installed() -> bool:
    try:
        proc = subprocess.run([PYTHON, "-c", "import torch; print(torch.__version__)"], capture_output=True,
                              text=True, timeout=120, env=clean_env())
    except (OSError, subprocess.TimeoutExpired):
        return False
    return proc.returncode == 0 and proc.stdout.startswith("1.13")


#: Skips without torch 1.13, unless TORCHFMT_REQUIRE_ADAPTERS is set (CI, after
#: conformance/adapters/torch113/setup): then the test runs and fails on its first use of torch 1.13.
needs_torch113 = pytest.mark.skipif(not installed() and not os.environ.get("TORCHFMT_REQUIRE_ADAPTERS"),
                                    reason="no Debian python3-torch 1.13 (adapters/torch113/setup)")


def describe_many(paths: list[Path]) -> list[dict[str, Any]]:
    """torch 1.13's description of each file (``torch.load(weights_only=True)``), or ``{"error": ...}``."""
    assert installed(), f"{PYTHON} has no torch 1.13 (conformance/adapters/torch113/setup)"
    listing = "".join(f"{p}\n" for p in paths)
    proc = subprocess.run([PYTHON, "-c", _DESCRIBE_MANY], input=listing, capture_output=True, text=True,
                          env={**clean_env(), "PYTHONPATH": str(ROOT)}, timeout=3000)
    lines = [json.loads(x) for x in proc.stdout.splitlines()]
    assert len(lines) == len(paths), proc.stderr[-2000:]
    return lines


# -- what torch 1.13 can represent, measured -------------------------------------------------------

def features(obj: Any) -> dict[tuple[str, ...], Any]:
    """What a written object needs of a reader beyond strings, ints and containers, each feature with
    one example: each dense dtype, lazy conjugate and negative views, Parameters, tensor attributes,
    each sparse layout, each quantized dtype and scheme, meta tensors, floats, bytes, complex numbers,
    sets, huge ints, each class and global."""
    out: dict[tuple[str, ...], Any] = {}
    seen: set[int] = set()
    stack = [obj]
    while stack:
        v = stack.pop()
        if id(v) in seen:
            continue
        seen.add(id(v))
        if isinstance(v, QuantizedTensor):
            out.setdefault(("quantized_tensor", v.dtype.name, v.qscheme), v)
        elif isinstance(v, Tensor):
            out.setdefault(("tensor", v.dtype.name), v)
            for flag, name in ((v.conj, "conj-view"), (v.neg, "neg-view"), (v.parameter, "parameter"),
                               (bool(v.attrs), "tensor-attributes")):
                if flag:
                    out.setdefault((name,), v)
        elif isinstance(v, SparseTensor):
            out.setdefault(("sparse_tensor", v.layout), v)
            stack.append(v.values)
        elif isinstance(v, MetaTensor):
            out.setdefault(("meta_tensor", v.dtype.name), v)
        elif isinstance(v, OpaqueObject):
            out.setdefault(("object", v.class_name), v)
        elif isinstance(v, Global):
            out.setdefault(("global", f"{v.module}.{v.name}"), v)
        elif isinstance(v, (float, bytes, complex, set, frozenset)):
            out.setdefault((type(v).__name__,), v)
        elif type(v) is int and v.bit_length() >= 8 * 255:
            out.setdefault(("int of more than 255 bytes",), v)
        if isinstance(v, dict):
            stack.extend(v.keys())
            stack.extend(v.values())
            stack.extend(getattr(v, "__dict__", {}).values())
        elif isinstance(v, (list, tuple, set, frozenset)):
            stack.extend(v)
    return out


def probe(feature: tuple[str, ...], example: Any) -> Any:
    """The smallest object with ``feature`` and nothing else of note, for torch 2.13 to save."""
    import torch

    kind = feature[0]
    if kind == "tensor":
        return torch.empty(2, dtype=getattr(torch, feature[1]))
    if kind == "conj-view":
        return torch.zeros(2, dtype=torch.complex64).conj()
    if kind == "neg-view":
        return torch.zeros(2, dtype=torch.complex64).conj().imag
    if kind == "parameter":
        return torch.nn.Parameter(torch.zeros(2))
    if kind == "tensor-attributes":
        t = torch.zeros(2)
        t.label = "weights"
        return t
    if kind == "sparse_tensor":
        block = (1, 1) if feature[1] in ("sparse_bsr", "sparse_bsc") else None
        return torch.eye(2).to_sparse(layout=getattr(torch, feature[1]), blocksize=block)
    if kind == "quantized_tensor":
        dtype, scheme = getattr(torch, feature[1]), feature[2]
        if scheme == "per_tensor_affine":
            return torch.quantize_per_tensor(torch.zeros(2), 0.5, 0, dtype)
        scales = torch.tensor([0.5, 0.25], dtype=torch.float64)
        zeros = torch.zeros(2) if scheme.endswith("float_qparams") else torch.zeros(2, dtype=torch.int64)
        return torch.quantize_per_channel(torch.zeros(2, 2), scales, zeros, 0, dtype)
    if kind == "meta_tensor":
        return torch.empty(2, dtype=getattr(torch, feature[1]), device="meta")
    if kind in ("object", "global"):
        module, _, name = feature[1].rpartition(".")
        found = getattr(importlib.import_module(module), name)
        if kind == "global":
            return found
        return found(*example.args)
    return example  # a float, bytes, a complex number, a set, a huge int: the value itself


def unrepresentable(examples: dict[tuple[str, ...], Any], folder: Path) -> dict[tuple[str, ...], str]:
    """Feature -> torch 1.13's error, for each feature (with an example, from :func:`features`) whose
    probe, saved alone by torch 2.13's own ``torch.save``, torch 1.13 does not load with
    ``weights_only=True``: what 1.13 cannot represent, measured rather than listed."""
    import torch

    keys = sorted(examples)
    probes = [folder / f"probe-{k}.pt" for k in range(len(keys))]
    for feature, path in zip(keys, probes, strict=True):
        torch.save(probe(feature, examples[feature]), path)
    return {f: d["error"] for f, d in zip(keys, describe_many(probes), strict=True) if "error" in d}
