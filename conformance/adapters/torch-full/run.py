"""The ``torch-full`` reader: torch 2.13's ``torch.load(weights_only=False)``, trusted files only.

``run.py PATH`` is ``torch_reader.main`` with ``weights_only=False``: the pickle's globals are imported and
called and TorchScript archives are compiled by ``torch.jit.load``, as ``torch.load`` itself does, so
``adapter.yaml`` marks it ``trusted_only`` and the harness gives it only the real writers' accept cases
(harness/verdict.py).  Descriptions come from torch_describe.py, as for ``--reader torch``.
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[3]))  # the repository root: the suite's package

from conformance.adapters import torch_reader  # noqa: E402


def probe() -> int:
    """The installed torch's version, found without importing it (a second of the suite's)."""
    import importlib.metadata
    import importlib.util

    try:
        found, version = importlib.util.find_spec("torch"), importlib.metadata.version("torch")
    except (ImportError, ValueError) as e:  # PackageNotFoundError is an ImportError
        found, version = None, str(e)
    if found is None:
        print(f"torch is not installed for {sys.executable}: {version}")
        return 1
    print(f"torch {version} torch.load(weights_only=False)")
    return 0


if __name__ == "__main__":
    if sys.argv[1:] == ["--probe"]:
        sys.exit(probe())
    if sys.argv[1:] == ["--batch"]:  # spec/canonical.md#canonical-reader-batch
        sys.exit(torch_reader.batch(weights_only=False))
    sys.exit(torch_reader.main(sys.argv, weights_only=False))
