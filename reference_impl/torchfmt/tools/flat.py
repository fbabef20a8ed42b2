"""The flat numpy view of a checkpoint: ``{dotted.name: ndarray}``, as ``safetensors.numpy.load_file``
gives (README "Python API").

Containers are followed from the file's first object: a dict's or Lua table's string and number keys,
list and tuple positions, a Lua torch object's fields; names are joined with ``.`` as PyTorch names the
entries of a nested state_dict (``model.fc.weight``; a Lua ``modules`` table gives ``modules.1.weight``).
A container reached twice is followed each time (``enc.w`` and ``dec.w`` of one dict), so a shared
(tied) tensor gets every name it is reached by; a container inside itself is not followed again (a cycle
ends).  Names are unique or nothing is returned: two different tensors that flatten to one name (a key
``"a.b"`` beside ``a`` -> ``b``, ``0`` beside ``"0"``, a Lua ``1`` beside ``"1"``) are a
:class:`NameClash` naming both paths (issue 20).  Dense tensors only (a quantized tensor gives its
integer representation); other values are left out.
"""

from __future__ import annotations

import math
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

from ..errors import FormatError
from ..limits import NODE_BUDGET
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


def _entries(v: Any) -> Iterator[tuple[str, Any, Any]]:
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
    return ((name, k, x) for k, x in pairs if (name := _key_name(k)) is not None)


def shown_path(keys: tuple[Any, ...], limit: int = 120) -> str:
    """A value's path from the root as its keys: ``$['a']['b']``, ``$['m'][0]`` (ASCII, cut at its
    start to ``limit`` characters)."""
    text = "$" + "".join(f"[{k!r}]" for k in keys)
    text = ascii(text)[1:-1]
    return text if len(text) <= limit else "..." + text[-limit:]


class NameClash(ValueError):
    """Two different tensors flatten to one name: a flat mapping would keep one and lose the other."""

    def __init__(self, name: str, paths: list[str]) -> None:
        self.name = name
        self.paths = paths
        super().__init__(f"the flat name {ascii(name)} is given to different tensors at "
                         + " and ".join(paths))


class Names:
    """Flat names handed out so far: each for one tensor (the same tensor may come again by it)."""

    def __init__(self) -> None:
        self.given: dict[str, tuple[Any, str]] = {}

    def add(self, name: str, value: Any, path: str) -> bool:
        """Record ``name`` for ``value`` found at ``path``; False if it already names that value,
        :class:`NameClash` if it names another."""
        had = self.given.get(name)
        if had is None:
            self.given[name] = (value, path)
            return True
        if had[0] is value:
            return False
        raise NameClash(name, [had[1], path])


def tensors(root: Any) -> Iterator[tuple[str, Tensor]]:
    """Every dense tensor reachable from ``root`` by every name, depth first in file order;
    :class:`NameClash` when one name would stand for two tensors."""
    names = Names()
    visits = 0
    # (name, keys from the root, value, ids of the containers it is inside)
    stack: list[tuple[str, tuple[Any, ...], Any, frozenset[int]]] = [("", (), root, frozenset())]
    while stack:
        name, keys, v, inside = stack.pop()
        if isinstance(v, Tensor):
            if names.add(name, v, shown_path(keys)):
                yield name, v
            continue
        if id(v) in inside:
            continue
        inner = inside | {id(v)}
        children = [(f"{name}.{part}" if keys else part, (*keys, k), x, inner) for part, k, x in _entries(v)]
        visits += len(children)
        if visits > NODE_BUDGET.value:  # containers reached many times multiply the names
            what = f"the flat view would name more than {NODE_BUDGET.value} values (containers reached twice)"
            raise FormatError("limit-exceeded", None, what)
        stack.extend(reversed(children))


def arrays(root: Any, *, copy: bool = False) -> dict[str, np.ndarray]:
    """``{name: ndarray}`` of :func:`tensors`; read-only views of the file unless ``copy``."""
    import numpy as np

    return {name: np.array(t, copy=True) if copy else np.asarray(t) for name, t in tensors(root)}
