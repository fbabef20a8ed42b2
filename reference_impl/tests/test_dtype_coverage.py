"""The dtype table is complete (spec/tensors.md#tensors-dtype-table): every dtype torch 2.13 has is in it
exactly when ``torch.save`` writes it and ``torch.load(weights_only=True)`` reads it back, and the reader
gives each element the bytes torch holds."""

from __future__ import annotations

import io
import warnings

import numpy as np
import pytest
import torch
from torchfmt import read_bytes
from torchfmt.dtypes import BY_NAME
from torchfmt.model import Tensor

TORCH_DTYPES: dict[str, torch.dtype] = {
    str(d).removeprefix("torch."): d for d in map(vars(torch).get, dir(torch)) if isinstance(d, torch.dtype)}


def sample(dtype: torch.dtype) -> torch.Tensor:
    """A [2, 3] tensor of ``dtype`` viewed from varied bytes (bool: 0 and 1, the bytes torch makes)."""
    raw = torch.arange(6 * dtype.itemsize, dtype=torch.uint8).mul(37)
    return (raw % 2 if dtype is torch.bool else raw).view(dtype).reshape(2, 3)


def round_trips(t: torch.Tensor) -> bytes | None:
    """The file torch writes for ``t`` if torch can also read it back, else None."""
    f = io.BytesIO()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            torch.save(t, f)
            f.seek(0)
            back = torch.load(f, weights_only=True)
        except (KeyError, RuntimeError, AttributeError):
            return None
    assert back.dtype == t.dtype
    return f.getvalue()


@pytest.mark.parametrize("name", sorted(TORCH_DTYPES))
def test_a_dtype_is_in_the_table_iff_torch_writes_and_reads_it(name: str) -> None:
    dtype = TORCH_DTYPES[name]
    data = round_trips(sample(dtype))
    assert (data is not None) == (name in BY_NAME), name
    if data is None:
        return
    assert BY_NAME[name].itemsize == dtype.itemsize
    if BY_NAME[name].quantized:  # a raw view has no quantizer worth comparing: tests of quantized tensors do
        return
    for view in (sample(dtype), sample(dtype).t(), sample(dtype)[:, 1:]):
        ours = read_bytes(round_trips(view) or b"").objects[0]
        assert isinstance(ours, Tensor) and ours.dtype is BY_NAME[name]
        assert (ours.shape, ours.stride) == (tuple(view.shape), view.stride())
        theirs = view.contiguous().view(torch.uint8).numpy().tobytes()
        assert np.ascontiguousarray(ours.numpy()).tobytes() == theirs, name


def test_the_sub_byte_integers_are_not_element_types() -> None:
    """torch 2.13 has int1-int7 and uint1-uint7 but cannot save them (spec/tensors.md)."""
    for bits in range(1, 8):
        for name in (f"int{bits}", f"uint{bits}"):
            assert name in TORCH_DTYPES and name not in BY_NAME
            assert round_trips(sample(TORCH_DTYPES[name])) is None
