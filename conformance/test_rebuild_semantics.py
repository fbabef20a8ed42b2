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
import subprocess
import sys
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from generators.adversarial import rebuild_semantics as rs  # noqa: E402
from harness.compare import compare  # noqa: E402

FILES = {f.name: f for f in rs.accept_files()}
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
    for name, f in FILES.items():
        p = folder / f"{name}.pt"
        p.write_bytes(f.data)
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
