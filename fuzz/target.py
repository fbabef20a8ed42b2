"""What every fuzz target does with one input: read it with the reference reader and describe it; the
only exceptions allowed are FormatError and Unsupported (spec/canonical.md#canonical-error-codes).
Anything else (IndexError, RecursionError, MemoryError, a hang) is a reader bug that atheris reports."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import atheris

#: Only the reader is instrumented: instrumenting what it imports (numpy, hashlib, pickle, zipfile...)
#: made every execution several times slower and steered the fuzzer into library code.
with atheris.instrument_imports(include=["torchfmt"]):
    import torchfmt
    from torchfmt.describe import describe_document
    from torchfmt.errors import FormatError, Unsupported
    from torchfmt.pickle.machine import Machine
    from torchfmt.pt.legacy import read_legacy
    from torchfmt.pt.tar import read_tar
    from torchfmt.pt.zip import read_zip
    from torchfmt.t7.encodings import Hints

#: Inputs larger than this are skipped: the fuzzer looks for logic bugs, not for slow big inputs.
MAX_INPUT = 1 << 20
#: libFuzzer's ``-max_len`` unless one is given (``-max_len=0``: libFuzzer's own default, the longest
#: seed: 430 KB for the pickle seeds, 1 MB for pt-zip; every mutant was then as large, and the targets ran
#: at 17-25 executions/s, benchmarks/fuzz_speed.py).  Large inputs are the hostile benchmarks' business.
DEFAULT_MAX_LEN = 1 << 16
#: The pickle target's: a pickle program's structure lies in its first kilobytes (its seeds' records of
#: more are bombs and big lists), and each byte costs instrumented opcode work.
PICKLE_MAX_LEN = 1 << 14


def libfuzzer_args(argv: list[str], max_len: int = DEFAULT_MAX_LEN) -> list[str]:
    """``argv`` with ``-max_len=max_len`` added when it sets none."""
    if any(a.startswith("-max_len=") for a in argv):
        return argv
    return [*argv, f"-max_len={max_len}"]


def _t7(mode: str) -> Callable[[bytes], Any]:
    hints = Hints(mode=mode, long_size=8, byte_order="little") if mode == "binary" else Hints(mode=mode)
    return lambda data: describe_document(torchfmt.read_bytes(data, hints))


def _pickle(data: bytes) -> Any:
    value, _ = Machine(memoryview(data)).load(0)
    return value


READERS: dict[str, Callable[[bytes], Any]] = {
    "t7_binary": _t7("binary"),
    "t7_ascii": _t7("ascii"),
    "pt_zip": lambda data: describe_document(read_zip(memoryview(data))),
    "pt_legacy": lambda data: describe_document(read_legacy(memoryview(data))),
    "pt_tar": lambda data: describe_document(read_tar(memoryview(data), inert=True)),  # reaches the storages
    "pickle": _pickle,
}


def one_input(kind: str, data: bytes) -> None:
    if len(data) > MAX_INPUT:
        return
    try:
        READERS[kind](data)
    except (FormatError, Unsupported):
        pass
