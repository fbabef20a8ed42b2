"""The one walk over model values, as the description writes them (spec/canonical.md#canonical-sharing).

:data:`SHAREABLE` are the values written once with an ``id`` when reached twice; :func:`children` the
values a value holds, in the order the description writes them.  :mod:`torchfmt.describe` counts and
emits with them, and the pickle machine measures a finished value with them
(spec/pickle.md#pickle-limits), so both count the same nodes; :func:`values` (every value reachable
once) serves the tools (``inspect``'s byte accounting, ``slim``).
"""

from __future__ import annotations

import collections
from collections.abc import Iterator
from json.encoder import encode_basestring_ascii  # the C escaper json.dumps uses
from typing import Any

from .model import (
    LuaFunction,
    LuaTable,
    MetaTensor,
    OpaqueObject,
    QuantizedTensor,
    SparseTensor,
    Tensor,
    TorchObject,
)

#: Values a file may reach more than once and that the description then writes once with an ``id``.
SHAREABLE = (list, dict, set, LuaTable, TorchObject, LuaFunction, Tensor, SparseTensor, MetaTensor,
             OpaqueObject)


def children(v: Any) -> list[Any]:
    """The VALUEs ``v``'s description holds directly (none for scalars, globals, storages)."""
    if isinstance(v, (list, tuple, set, frozenset)):
        return list(v)
    if isinstance(v, dict):
        out = [x for kv in v.items() for x in kv]
        if isinstance(v, collections.OrderedDict):
            out.extend(vars(v).values())
        return out
    if isinstance(v, LuaTable):
        return [x for kv in v.items for x in kv]
    if isinstance(v, TorchObject):
        return [v.value]
    if isinstance(v, LuaFunction):
        return list(v.upvalues)
    if isinstance(v, OpaqueObject):
        return [*v.args, v.state]
    if isinstance(v, QuantizedTensor):
        return [t for t in (v.scales, v.zero_points) if t is not None]
    if isinstance(v, SparseTensor):
        return [t for t in (v.indices, v.values, v.compressed_indices, v.plain_indices) if t is not None]
    return []


def values(obj: Any) -> Iterator[Any]:
    """Every value reachable from ``obj``, each once (a tensor's Python attributes included)."""
    seen: set[int] = set()
    stack = [obj]
    while stack:
        v = stack.pop()
        if id(v) in seen:
            continue
        seen.add(id(v))
        yield v
        stack.extend(children(v))
        if isinstance(v, Tensor):
            stack.extend(v.attrs.values())


def json_text_size(s: str) -> int:
    """Bytes of ``s`` as an ASCII JSON string, quotes included (spec/canonical.md#canonical-node-budget):
    a non-ASCII code point is a 6-byte escape, one outside the BMP two of them."""
    return len(encode_basestring_ascii(s))
