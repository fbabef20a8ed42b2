"""``torchfmt dump`` starts without numpy, and hashing a file's bytes as they lie changes nothing.

numpy (with its thread pools) and ml_dtypes are imported where elements must be rearranged: a strided or
big-endian view, a converted storage, ``Tensor.numpy``.  Describing a file whose tensors are row-major runs
of little-endian bytes hashes those bytes directly (torchfmt/describe.py, spec/canonical.md#canonical-hash).
Each description must be the same with that path and without it, on every case; the dtype table's widths,
written without numpy, must be numpy's.
"""

from __future__ import annotations

import importlib
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import torchfmt
from torchfmt.dtypes import DTYPES
from torchfmt.errors import FormatError, Unsupported
from torchfmt.recursion import recursion_limit
from torchfmt.t7.encodings import Hints

from conformance.harness.cases import committed_cases, corpus_cases

ROOT = Path(__file__).resolve().parents[2]


describe_module = importlib.import_module("torchfmt.describe")  # the package's `describe` is a function

#: Cases of each container whose dump must not import numpy: little-endian, row-major, nothing converted.
PLAIN = ("pt-zip/dtype-float32", "pt-legacy/dtype-float32", "pt-zip/many-tensors",
         "t7-binary/nn-sequential-float", "pt-zip/large-float32")


def test_every_width_is_numpys() -> None:
    for d in DTYPES:
        assert d.itemsize == d.numpy.itemsize, d.name
        assert d.numpy.byteorder in "<|=", d.name


def _case_path(case_id: str) -> Path:
    return next(c.path for c in committed_cases() if c.id == case_id)


@pytest.mark.parametrize("case_id", PLAIN)
def test_the_command_describes_plain_files_without_numpy(case_id: str) -> None:
    path = _case_path(case_id)
    script = ("import sys\nfrom torchfmt.cli import main\nstatus = main(['dump', sys.argv[1]])\n"
              "sys.stdout.flush()\n"
              "print([m for m in sys.modules if m.split('.')[0] in ('numpy', 'ml_dtypes')],\n"
              "      file=sys.stderr)\n"
              "sys.exit(status)\n")
    run = subprocess.run([sys.executable, "-c", script, str(path)], capture_output=True, text=True,
                         timeout=60)
    assert run.returncode == 0, run.stderr
    assert run.stderr.strip() == "[]"
    assert run.stdout.startswith('{"description_version"')


def test_a_strided_view_still_imports_numpy() -> None:
    """The other way round: the byte path does not swallow views that must be gathered."""
    path = ROOT / "conformance" / "cases" / "pt-zip" / "transposed" / "data.pt"
    script = ("import sys\nfrom torchfmt.cli import main\nmain(['dump', sys.argv[1]])\n"
              "print('numpy' in sys.modules, file=sys.stderr)\n")
    run = subprocess.run([sys.executable, "-c", script, str(path)], capture_output=True, text=True,
                         timeout=60)
    assert run.stderr.strip() == "True"


def _outcome(path: Path, hints: dict[str, Any]) -> tuple[Any, ...]:
    try:
        return ("read", torchfmt.describe(path, Hints(**hints)))
    except FormatError as e:
        return ("error", e.code, e.offset, str(e))
    except Unsupported as e:
        return ("unsupported", str(e))


def _files() -> Iterator[tuple[str, Path, dict[str, Any]]]:
    for case in committed_cases() + corpus_cases():
        if case.path.is_file():
            yield case.id, case.path, case.hints


def test_hashing_bytes_as_they_lie_changes_no_description(monkeypatch: pytest.MonkeyPatch) -> None:
    direct: dict[str, tuple[Any, ...]] = {}
    taken = 0
    for name, path, hints in _files():
        direct[name] = _outcome(path, hints)
        taken += direct[name][0] == "read"
    monkeypatch.setattr(describe_module, "_file_bytes_sha256", lambda *_: None)
    with recursion_limit(20_000):  # == on the 1,024-level .t7 cases' descriptions recurses that deep
        differ = [name for name, path, hints in _files() if _outcome(path, hints) != direct[name]]
    assert taken > 400
    assert differ == []


def test_the_byte_path_takes_what_it_can_and_declines_the_rest() -> None:
    """Bytes of a little-endian record are hashed as they lie; a range past them is left to numpy."""
    from torchfmt.model import Storage

    f32 = next(d for d in DTYPES if d.name == "float32")
    raw = np.arange(6, dtype="<f4").tobytes()
    s = Storage(f32, 6, buffer=memoryview(raw))
    assert describe_module._file_bytes_sha256(s, 4, 12) == describe_module.sha256_of_array(
        np.frombuffer(raw, "<f4")[1:3])
    assert describe_module._file_bytes_sha256(s, 0, 28) is None
    s.byte_order = "big"
    assert describe_module._file_bytes_sha256(s, 0, 24) is None
