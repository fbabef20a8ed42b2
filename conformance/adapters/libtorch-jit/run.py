"""The ``libtorch-jit`` reader: C++ ``torch::jit::load`` on TorchScript archives, trusted files only.

``torch::jit::load`` compiles and runs the archive's code (its ``code/`` records define the classes), so
``adapter.yaml`` marks it ``trusted_only``: the harness gives it only the real writers' accept cases
(harness/verdict.py).  ``run.py PATH`` runs the program the ``libtorch`` setup builds with ``--jit`` and
describes the loaded module as its archive's data.pkl holds it (spec/torchscript.md#torchscript-records):
its class and its attributes in slot order, like torch_describe.py's ``describe_script_module``.  Every
other file is declined: the ``libtorch`` reader reads zip archives with ``torch::pickle_load``.
"""

from __future__ import annotations

import importlib.util
import sys
import zipfile
from pathlib import Path

_spec = importlib.util.spec_from_file_location(
    "libtorch_run", Path(__file__).resolve().parents[1] / "libtorch" / "run.py")
libtorch = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(libtorch)


def is_torchscript(path: str) -> bool:
    """A zip archive with a ``constants.pkl`` record, as torch.load tells TorchScript archives apart."""
    try:
        with zipfile.ZipFile(path) as z:
            return any(n == "constants.pkl" or n.endswith("/constants.pkl") for n in z.namelist())
    except (zipfile.BadZipFile, OSError, ValueError):
        return False


def main(argv: list[str]) -> int:
    if argv[1:] == ["--probe"]:
        return libtorch.probe()
    if argv[1:] == ["--batch"]:  # spec/canonical.md#canonical-reader-batch
        # the repository root is on the path: libtorch/run.py put it there
        from conformance.adapters import batch_protocol

        return batch_protocol.serve(lambda path: main([argv[0], path]))
    if len(argv) != 2:
        print("usage: run.py PATH | --probe", file=sys.stderr)
        return 3
    if not is_torchscript(argv[1]):
        print("unsupported: not a TorchScript archive (the libtorch reader reads the others with "
              "torch::pickle_load)", file=sys.stderr)
        return 2
    return libtorch.run(argv[1], jit=True)


if __name__ == "__main__":
    sys.exit(main(sys.argv))
