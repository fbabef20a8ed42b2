"""The Python ``repr`` of the tensors the reader makes (what ``print(torchfmt.load(path)["w"])`` shows).

Presentation for the Python API only: no part of a description or an error, so ``torchfmt dump`` never
runs it (spec/canonical.md#canonical-document is the output readers agree on).
"""

from __future__ import annotations

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
