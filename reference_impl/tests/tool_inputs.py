"""The files that showed issue 20's problems with the tools, made by torch (``.pt``) or by the byte
builders of ``t7_bytes`` (``.t7``): flattened names that collide, None in lists, a NaN key, deep lists,
view amplification, a TorchScript archive.  Each is named for what it holds; :func:`make` writes them
into a folder (the big ones only when asked: they take seconds to save).
"""

from __future__ import annotations

import struct
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import t7_bytes as t


def _t(*values: float) -> Any:
    import torch

    return torch.tensor(values, dtype=torch.float32)


def _deep(n: int) -> Any:
    v: Any = [_t(1.0)]
    for _ in range(n - 1):
        v = [v]
    return v


def _views(n: int, distinct: bool) -> Any:
    import torch

    base = torch.zeros(1 << 18)  # 1 MB
    return [base[i:i + 1] if distinct else base[:] for i in range(n)]


def _torchscript() -> Any:
    import torch

    return torch.jit.script(torch.nn.Linear(2, 2))


#: name -> the object torch.save writes (``.pt``).
PT: dict[str, Callable[[], Any]] = {
    "collide-dotted-key": lambda: {"a.b": _t(1), "a": {"b": _t(2)}},
    "collide-int-key": lambda: {0: _t(1), "0": _t(2)},
    "collide-list-index": lambda: {"m": [_t(1)], "m.0": _t(2)},
    "collide-empty-prefix": lambda: {"": {"a": _t(1)}, "a": _t(2)},
    "collide-float-key": lambda: {2.0: _t(1), "2": _t(2)},
    "container-twice": lambda: (lambda d: {"enc": d, "dec": d})({"w": _t(1, 2)}),
    "none-values": lambda: {"n": None, "l": [1, None, 3], "w": _t(1)},
    "nan-key": lambda: {float("nan"): _t(1)},
    "dims-70": lambda: {"w": _t(1).reshape([1] * 70)},
    "dims-1025": lambda: {"w": _t(1).reshape([1] * 1025)},
    "empty-dim-2p62": lambda: {"w": __import__("torch").empty(0, 1 << 62)},
    "deep-list-990": lambda: _deep(990),
    "torchscript": _torchscript,
}
#: Files of several megabytes whose torch.save takes seconds: view amplification.
BIG: dict[str, Callable[[], Any]] = {
    "views-60000-full": lambda: _views(60_000, False),
    "views-100000-distinct": lambda: _views(100_000, True),
}


def _t7_tensor(index: int, values: tuple[float, ...]) -> bytes:
    raw = b"".join(struct.pack("<f", v) for v in values)
    st = t.storage(index + 1, b"torch.FloatStorage", len(values), raw)
    return t.tensor(index, b"torch.FloatTensor", [len(values)], [1], 1, st)


#: name -> the bytes of a little-endian binary ``.t7`` file (long size 8).
T7: dict[str, Callable[[], bytes]] = {
    "t7-keys-1-and-str-1": lambda: t.table(1, t.number(1), _t7_tensor(2, (1.0,)),
                                           t.string(b"1"), _t7_tensor(4, (2.0,))),
}


def make(folder: Path, big: bool = False) -> dict[str, Path]:
    """Write every file into ``folder``; name -> path."""
    import torch

    folder.mkdir(parents=True, exist_ok=True)
    out: dict[str, Path] = {}
    limit = sys.getrecursionlimit()
    sys.setrecursionlimit(max(limit, 5_000))  # pickling a 990-deep list recurses once a level
    try:
        for name, build in {**PT, **(BIG if big else {})}.items():
            path = out[name] = folder / f"{name}.pt"
            if not path.exists():
                obj = build()
                if name == "torchscript":
                    torch.jit.save(obj, str(path))
                else:
                    torch.save(obj, path)
    finally:
        sys.setrecursionlimit(limit)
    for name, build_bytes in T7.items():
        path = out[name] = folder / f"{name}.t7"
        path.write_bytes(build_bytes())
    return out
