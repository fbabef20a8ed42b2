"""The ``torch-full`` reader: torch 2.13's ``torch.load(weights_only=False)``, trusted files only.

``run.py PATH`` is ``torch_reader.main`` with ``weights_only=False``: the pickle's globals are imported and
called and TorchScript archives are compiled by ``torch.jit.load``, as ``torch.load`` itself does, so
``adapter.yaml`` marks it ``trusted_only`` and the harness gives it only the real writers' accept cases
(harness/verdict.py).  Descriptions come from torch_describe.py, as for ``--reader torch``.
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import torch_reader  # noqa: E402


def probe() -> int:
    try:
        import torch
    except ImportError as e:
        print(f"torch is not importable from {sys.executable}: {e}")
        return 1
    print(f"torch {torch.__version__} torch.load(weights_only=False)")
    return 0


if __name__ == "__main__":
    if sys.argv[1:] == ["--probe"]:
        sys.exit(probe())
    sys.exit(torch_reader.main(sys.argv, weights_only=False))
