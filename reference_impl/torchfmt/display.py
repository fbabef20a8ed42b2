"""The Python ``repr`` of the tensors the reader makes (what ``print(torchfmt.load(path)["w"])`` shows).

Presentation for the Python API only: no part of a description or an error, so ``torchfmt dump`` never
runs it (spec/canonical.md#canonical-document is the output readers agree on).
"""

from __future__ import annotations

import reprlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .dtypes import DType

#: Values a tensor's ``repr`` shows.
REPR_VALUES = 6


def tensor_repr(kind: str, dtype: DType, shape: tuple[int, ...], values: Any, device: str,
                requires_grad: bool) -> str:
    """``Tensor(float32, shape=(4, 3), values=[0.1, 0.2, ...])``: a few values, never the storage."""
    parts = [str(dtype), f"shape={tuple(shape)}"]
    if device != "cpu":
        parts.append(f"device={device!r}")
    if requires_grad:
        parts.append("requires_grad=True")
    if values is not None:
        flat = values()
        shown = [str(x) for x in flat.reshape(-1)[:REPR_VALUES]] if flat.size else []
        more = ", ..." if flat.size > REPR_VALUES else ""
        parts.append(f"values=[{', '.join(shown)}{more}]")
    return f"{kind}({', '.join(parts)})"


#: Keys of a table or fields of a torch object a ``repr`` names before ``...``.
REPR_KEYS = 8
_SHORT = reprlib.Repr()
_SHORT.maxstring, _SHORT.maxother, _SHORT.maxlevel = 40, 40, 1


def keys_repr(keys: list[Any], total: int) -> str:
    """``'weight', 'bias', ... (12 in all)``: at most :data:`REPR_KEYS` keys, each shortened."""
    shown = ", ".join(_SHORT.repr(k) for k in keys[:REPR_KEYS])
    return shown + (f", ... ({total} in all)" if total > REPR_KEYS else "")


def table_repr(keys: list[Any]) -> str:
    """A Lua table's ``repr``: its size and first keys, never its values (a model's table nests the
    whole model: its ``repr`` was one 7,400-character line)."""
    return f"LuaTable({len(keys)} items: {keys_repr(keys, len(keys))})"


def torch_object_repr(class_name: str, keys: list[Any] | None) -> str:
    """A ``.t7`` torch object's ``repr``: its class and first field names."""
    fields = "" if keys is None else f", fields=[{keys_repr(keys, len(keys))}]"
    return f"TorchObject({_SHORT.repr(class_name)}{fields})"
