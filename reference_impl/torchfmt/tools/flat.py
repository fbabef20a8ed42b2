"""The flat numpy view of a checkpoint: ``{dotted.name: ndarray}``, as ``safetensors.numpy.load_file``
gives (README "Python API").

Containers are followed from the file's first object: a dict's or Lua table's string and number keys,
list and tuple positions, a Lua torch object's fields; names are joined with ``.`` as PyTorch names the
entries of a nested state_dict (``model.fc.weight``; a Lua ``modules`` table gives ``modules.1.weight``).
Each container is followed once, so a shared (tied) tensor gets every name a followed container gives it
and a cycle ends.  Dense tensors only (a quantized tensor gives its integer representation); other values
are left out.
"""

from __future__ import annotations

import math
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

from ..model import LuaTable, Tensor, TorchObject

if TYPE_CHECKING:
    import numpy as np


def _key_name(key: Any) -> str | None:
    """A key as a name part: strings as they are, integral numbers (Lua's 1.0) as integers."""
    if isinstance(key, str):
        return key
    if isinstance(key, bool):
        return None
    if isinstance(key, int):
        return str(key)
    if isinstance(key, float) and math.isfinite(key) and key == int(key):
        return str(int(key))
    return None


def _entries(v: Any) -> Iterator[tuple[str, Any]]:
    if isinstance(v, dict):
        pairs: Any = v.items()
    elif isinstance(v, LuaTable):
        pairs = v.items
    elif isinstance(v, TorchObject):
        return _entries(v.value)
    elif isinstance(v, (list, tuple)):
        pairs = enumerate(v)
    else:
        return iter(())
    return ((name, x) for k, x in pairs if (name := _key_name(k)) is not None)


def tensors(root: Any) -> Iterator[tuple[str, Tensor]]:
    """Every dense tensor reachable from ``root`` with its dotted name, depth first in file order."""
    seen: set[int] = set()
    stack: list[tuple[str, Any]] = [("", root)]
    while stack:
        name, v = stack.pop()
        if isinstance(v, Tensor):
            yield name, v
            continue
        if id(v) in seen:
            continue
        seen.add(id(v))
        children = [(f"{name}.{k}" if name else k, x) for k, x in _entries(v)]
        stack.extend(reversed(children))


def arrays(root: Any, *, copy: bool = False) -> dict[str, np.ndarray]:
    """``{name: ndarray}`` of :func:`tensors`; read-only views of the file unless ``copy``."""
    import numpy as np

    return {name: np.array(t, copy=True) if copy else np.asarray(t) for name, t in tensors(root)}
