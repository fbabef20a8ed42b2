"""The canonical description (spec/canonical.md#canonical-values) of what a Python reader returned:
plain Python values, and arrays given as numpy arrays by the adapter.  Run inside the reader's own venv
(no torchfmt, no torch).  Fields the reader cannot express are left out, never guessed
(harness/readers.py ``unexpressed``); sharing is what the returned objects share (``id``/``ref``)."""

from __future__ import annotations

import collections
import hashlib
import math
import re
import sys
from collections.abc import Callable
from typing import Any

import numpy as np

DTYPES = {"float16": "float16", "float32": "float32", "float64": "float64", "int8": "int8", "int16": "int16",
          "int32": "int32", "int64": "int64", "uint8": "uint8", "bool": "bool", "complex64": "complex64",
          "complex128": "complex128", "uint16": "uint16", "uint32": "uint32", "uint64": "uint64"}

#: Exception text -> error code (errors.py's closed set), first match wins; anything else is bad-value.
RULES = (
    (r"[Tt]runcated|EOFError|[Uu]nexpected end|ran out of input|end of (file|data)", "truncated"),
    (r"BadZipFile|[Bb]ad magic|not a zip|CRC|zip", "bad-container"),
    (r"unsupported pickle protocol|invalid load key", "bad-magic"),
    (r"Could not locate checkpoint payload|is encrypted|compression method is not supported",
     "bad-container"),
    (r"out of (bounds|range)|exceeds|larger than|cannot reshape|shape mismatch|buffer is too small|"
     r"incompatible with shape of requested array and size of buffer", "out-of-bounds"),
    (r"persistent|Memo value not found|KeyError|Missing storage blob", "bad-reference"),
    (r"RecursionError|MemoryError|maximum recursion", "limit-exceeded"),
    (r"UnicodeDecodeError|codec can't decode", "bad-value"),
    (r"UnpicklingError|IndexError|pop from empty|MARK|STOP|opcode", "bad-pickle"),
)


class Unsupported(Exception):
    """A value the reader returned that the description cannot hold without guessing (exit 2)."""


def classify(e: BaseException) -> str:
    text = f"{type(e).__name__}: {e}"
    for pattern, code in RULES:
        if re.search(pattern, text):
            return code
    return "bad-value"


def float_text(x: float) -> str:
    return "nan" if math.isnan(x) else ("inf" if x > 0 else "-inf") if math.isinf(x) else repr(float(x))


def array_fields(a: np.ndarray) -> dict[str, Any]:
    """dtype, shape and the logical sha256 (spec/canonical.md#canonical-hash) of an array's values."""
    name = DTYPES.get(a.dtype.name)
    if name is None:
        raise Unsupported(f"dtype {a.dtype}")
    data = np.ascontiguousarray(a).astype(a.dtype.newbyteorder("<"), copy=False)
    return {"dtype": name, "shape": [int(n) for n in a.shape],
            "sha256": hashlib.sha256(data.tobytes()).hexdigest()}


#: A reader's own stand-in for a pickled class instance, as (class name, args, state attributes), or None.
ObjectParts = Callable[[Any], "tuple[str, list[Any], dict[str, Any]] | None"]


class Describer:
    """Walks a returned object; ``tensor`` maps the reader's own tensor type to a node (or None), ``parts``
    takes the reader's own object type apart (an ``object`` node, spec/canonical.md#canonical-values)."""

    def __init__(self, tensor: Callable[[Any], dict[str, Any] | None],
                 parts: ObjectParts | None = None) -> None:
        self.tensor = tensor
        self.parts = parts or (lambda x: None)
        self.seen: collections.Counter[int] = collections.Counter()
        self.named: dict[int, str] = {}
        self.keep: list[Any] = []

    def count(self, root: Any) -> None:
        stack = [root]
        while stack:
            x = stack.pop()
            if isinstance(x, (list, dict, set, frozenset, tuple)) or self.tensor(x) is not None:
                if not isinstance(x, tuple):
                    self.seen[id(x)] += 1
                    self.keep.append(x)
                    if self.seen[id(x)] > 1:
                        continue
                if isinstance(x, dict):
                    stack.extend(k for k in x)
                    stack.extend(x.values())
                    stack.extend(getattr(x, "__dict__", {}).values())
                elif isinstance(x, (list, set, frozenset, tuple)):
                    stack.extend(x)
            elif (parts := self.parts(x)) is not None:
                self.seen[id(x)] += 1
                self.keep.append(x)
                if self.seen[id(x)] == 1:
                    stack.extend(parts[1])
                    stack.extend(parts[2].values())

    def value(self, x: Any) -> dict[str, Any]:
        shared = not isinstance(x, tuple) and self.seen.get(id(x), 0) > 1
        if shared and id(x) in self.named:
            return {"type": "ref", "id": self.named[id(x)]}
        name = None
        if shared:
            name = self.named[id(x)] = f"o{len(self.named)}"
        node = self._node(x)
        if name is not None and node["type"] in ("list", "set", "dict", "ordered_dict", "tensor", "object"):
            node["id"] = name
        return node

    def _node(self, x: Any) -> dict[str, Any]:
        if x is None:
            return {"type": "none"}
        if isinstance(x, bool):
            return {"type": "bool", "value": x}
        if isinstance(x, int):
            return {"type": "int", "value": str(x)}
        if isinstance(x, float):
            return {"type": "float", "value": float_text(x)}
        if isinstance(x, str):
            return {"type": "str", "value": x}
        if isinstance(x, (bytes, bytearray)):
            return {"type": "bytes", "hex": bytes(x).hex()}
        t = self.tensor(x)
        if t is not None:
            return t
        if isinstance(x, collections.OrderedDict):
            node = {"type": "ordered_dict", "items": [[self.value(k), self.value(v)] for k, v in x.items()]}
            attrs = {k: self.value(v) for k, v in vars(x).items()} if hasattr(x, "__dict__") else {}
            if attrs:
                node["attrs"] = attrs
            return node
        if isinstance(x, dict):
            return {"type": "dict", "items": [[self.value(k), self.value(v)] for k, v in x.items()]}
        if isinstance(x, list):
            return {"type": "list", "items": [self.value(v) for v in x]}
        if isinstance(x, tuple):
            return {"type": "tuple", "items": [self.value(v) for v in x]}
        if isinstance(x, (set, frozenset)):
            return {"type": "set", "items": [self.value(v) for v in x]}
        if isinstance(x, complex):
            raise Unsupported("a Python complex")
        parts = self.parts(x)
        if parts is not None:
            cls, args, state = parts
            items = [[self.value(k), self.value(v)] for k, v in state.items()]
            return {"type": "object", "class": cls, "args": [self.value(a) for a in args],
                    "state": {"type": "dict", "items": items} if state else None}
        cls = x if isinstance(x, type) else type(x)
        return {"type": "object", "class": f"{cls.__module__}.{cls.__qualname__}", "args": [], "state": None}


def describe(obj: Any, fmt: str, tensor: Callable[[Any], dict[str, Any] | None],
             parts: ObjectParts | None = None) -> dict[str, Any]:
    """The description document, without ``storages`` (which these readers cannot express)."""
    d = Describer(tensor, parts)
    sys.setrecursionlimit(100_000)
    d.count(obj)
    return {"description_version": 0, "format": fmt, "objects": [d.value(obj)]}
