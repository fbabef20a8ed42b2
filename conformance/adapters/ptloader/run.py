"""ptloader 0.3.0 ``ptloader.load`` as a contract command (harness/readers.py).

Run by the suite's Python, it re-runs itself with the Python of ptloader's own venv (made by ``setup``
under ``$TORCHFMT_ADAPTERS_HOME/ptloader``).  ptloader reads zip checkpoints only (others are declined)
and returns each tensor as a numpy view of its storage's array: dtype, shape, stride (numpy's, in elements)
and the logical sha256 come from it; ``storage_offset``, ``storage``, ``storages``, ``requires_grad`` and
``parameter`` (both dropped by its rebuild functions) are left out (adapter.yaml ``unexpressed``).  A bare
storage comes back as that array itself, which says nothing a tensor would not: declined.  A TorchScript
archive (ptloader's own test: a ``constants.pkl``) is ``pt-torchscript``; its ``__torch__`` instances are
ptloader's stand-in objects, described as ``object`` nodes with their state.  No check of ours is added.
``run.py --batch`` answers file after file in one venv process (spec/canonical.md#canonical-reader-batch).
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
VENV = Path(os.environ.get("TORCHFMT_ADAPTERS_HOME") or Path.home() / ".cache/torchfmt/adapters") \
    / "ptloader" / "venv" / "bin" / "python"


def worker(path: str) -> int:
    sys.path.insert(0, str(HERE.parent))
    import json
    import zipfile

    import numpy as np
    import ptloader
    from ptloader import loader
    from pyobjects import Unsupported, array_fields, classify, describe  # type: ignore[import-not-found]

    if not zipfile.is_zipfile(path):
        print("unsupported: ptloader reads only zip checkpoints", file=sys.stderr)
        return 2

    def tensor(x: object) -> dict | None:
        if not isinstance(x, np.ndarray):
            return None
        if not isinstance(x.base, np.ndarray):  # a storage's own array (np.frombuffer), not a view of one
            raise Unsupported("bare storages: ptloader returns a storage as a plain array, like a tensor")
        node = {"type": "tensor", **array_fields(x), "device": "cpu"}
        node["stride"] = [int(s) // x.itemsize for s in x.strides] if x.itemsize else list(x.strides)
        return node

    def parts(x: object) -> tuple[str, list, dict] | None:
        if not isinstance(x, loader._TorchScriptUnknown):
            return None
        state = dict(vars(x))
        if "__torch_type__" in state:  # made through its __init__ (REDUCE): the name and args kept there
            return state.pop("__torch_type__"), list(state.pop("args", [])), state
        names = {cls: symbol for symbol, cls in loader._torchscript_object_types.items()}
        return names[type(x)], [], state  # made by NEWOBJ: the name is in ptloader's registry

    try:
        obj = ptloader.load(path)
        with zipfile.ZipFile(path) as archive:  # opened as ptloader just did; its is_torchscript_archive test
            names = archive.namelist()
        torchscript = any(n == "constants.pkl" or n.endswith("/constants.pkl") for n in names)
        doc = describe(obj, "pt-torchscript" if torchscript else "pt-zip", tensor, parts)
    except Unsupported as e:
        print(f"unsupported: {e}", file=sys.stderr)
        return 2
    except BaseException as e:  # noqa: BLE001 - every failure of the reader maps to a code
        text = " ".join(str(e).split())[:300]
        code = "unsafe-global" if "Unsupported pickle global" in text else classify(e)
        print(f"{code}: ptloader: {type(e).__name__}: {text}", file=sys.stderr)
        return 1
    sys.stdout.write(json.dumps(doc))
    return 0


def main(argv: list[str]) -> int:
    if argv and argv[0] == "--worker":
        return worker(argv[1])
    if argv == ["--serve"]:  # in the venv: every file in this process
        sys.path.insert(0, str(HERE.parents[2]))  # the repository root
        from conformance.adapters import batch_protocol

        return batch_protocol.serve(worker)
    if not VENV.is_file():
        print(f"ptloader is not installed ({VENV} missing); run conformance/adapters/ptloader/setup")
        return 1
    if argv == ["--batch"]:  # spec/canonical.md#canonical-reader-batch
        os.execv(VENV, [str(VENV), str(Path(__file__).resolve()), "--serve"])
    if argv == ["--probe"]:
        os.execv(VENV, [str(VENV), "-c", "from importlib.metadata import version; "
                        "import ptloader; print('ptloader', version('ptloader'))"])
    if len(argv) != 1:
        print("usage: run.py FILE | --probe", file=sys.stderr)
        return 2
    os.execv(VENV, [str(VENV), str(Path(__file__).resolve()), "--worker", argv[0]])
    return 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
