"""tinygrad 0.14.0 ``tinygrad.nn.state.torch_load`` as a contract command (harness/readers.py).

Run by the suite's Python, it re-runs itself with the Python of tinygrad's own venv (made by ``setup``
under ``$TORCHFMT_ADAPTERS_HOME/tinygrad``).  tinygrad returns realized tensors, values only: ``stride``,
``storage_offset``, ``storage``, ``storages`` and ``requires_grad`` (its Tensor has none) are left out
(adapter.yaml ``unexpressed``); each
tensor's dtype, shape and logical sha256 come from ``Tensor.numpy()``.  No check of ours is added.
``run.py --batch`` answers file after file in one venv process (spec/canonical.md#canonical-reader-batch).
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
VENV = Path(os.environ.get("TORCHFMT_ADAPTERS_HOME") or Path.home() / ".cache/torchfmt/adapters") \
    / "tinygrad" / "venv" / "bin" / "python"


def worker(path: str) -> int:
    os.environ.update(CACHELEVEL="0", DEV="CPU", DEBUG="0")
    sys.path.insert(0, str(HERE.parent))
    import tarfile
    import zipfile

    from pyobjects import Unsupported, array_fields, classify, describe  # type: ignore[import-not-found]
    from tinygrad import Tensor
    from tinygrad.nn.state import torch_load

    with open(path, "rb") as f:
        head = f.read(1)
    try:  # the checks torch_load makes, in its order; if one raises, torch_load raises the same below
        fmt = "pt-zip" if zipfile.is_zipfile(path) else "pt-tar" if tarfile.is_tarfile(path) else "pt-legacy"
    except Exception:  # noqa: BLE001
        fmt = "pt-tar"
    if fmt == "pt-legacy" and head not in (b"\x80", b"L", b"\x8a"):
        print("unsupported: tinygrad reads only .pt (zip, tar or legacy pickle stream)", file=sys.stderr)
        return 2

    def tensor(x: object) -> dict | None:
        parameter = False
        if type(x).__name__ == "Parameter" and isinstance(getattr(x, "tensor", None), Tensor):
            x, parameter = x.tensor, True  # type: ignore[attr-defined]
        if not isinstance(x, Tensor):
            return None
        node = {"type": "tensor", **array_fields(x.numpy()), "device": "cpu"}
        if parameter:
            node["parameter"] = True
        return node

    try:
        obj = torch_load(path)
        doc = describe(obj, fmt, tensor)
    except Unsupported as e:
        print(f"unsupported: {e}", file=sys.stderr)
        return 2
    except BaseException as e:  # noqa: BLE001 - every failure of the reader maps to a code
        text = " ".join(str(e).split())[:300]
        tb, where = e.__traceback__, ""
        while tb is not None:
            tb, where = tb.tb_next, tb.tb_frame.f_code.co_name
        # tinygrad stands a Dummy class in for every global outside its roots (calling it is its refusal),
        # and looks every torch global up in its own table (a KeyError in find_class: a global it refuses)
        refused = "Dummy" in text or (isinstance(e, KeyError) and where == "find_class")
        code = "unsafe-global" if refused else classify(e)
        print(f"{code}: tinygrad: {type(e).__name__}: {text}", file=sys.stderr)
        return 1
    import json
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
        print(f"tinygrad is not installed ({VENV} missing); run conformance/adapters/tinygrad/setup")
        return 1
    if argv == ["--batch"]:  # spec/canonical.md#canonical-reader-batch
        os.execv(VENV, [str(VENV), str(Path(__file__).resolve()), "--serve"])
    if argv == ["--probe"]:
        os.execv(VENV, [str(VENV), "-c", "from importlib.metadata import version; "
                        "import tinygrad.nn.state; print('tinygrad', version('tinygrad'))"])
    if len(argv) != 1:
        print("usage: run.py FILE | --probe", file=sys.stderr)
        return 2
    os.execv(VENV, [str(VENV), str(Path(__file__).resolve()), "--worker", argv[0]])
    return 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
