"""Sparse components with a conjugate or negative bit become new storages of the presented values
(spec/tensors.md#tensors-sparse), for every dtype torch can negate: the same values, from a storage of their
own.  What torch builds is checked by the committed case pt-zip/adv-sparse-values-neg-bit (its expected
description is torch's)."""

from __future__ import annotations

import numpy as np
import pytest
from torchfmt.describe import describe_document
from torchfmt.dtypes import DTYPES
from torchfmt.model import Document, Storage, Tensor
from torchfmt.pickle.rebuild import resolved

NEGATABLE = [d for d in DTYPES if d.negation is not None and not d.quantized and d.numpy_type]


def _view(dtype, conj: bool, neg: bool) -> Tensor:
    rng = np.random.default_rng(7)
    raw = rng.integers(0, 256, size=6 * dtype.itemsize, dtype=np.uint8).tobytes()
    storage = Storage(dtype, 6, "cuda:1", buffer=memoryview(raw), viewed=True)
    return Tensor(dtype, (2, 2), (1, 2), 1, storage, device="cuda:1", conj=conj, neg=neg)


def _described(t: Tensor) -> dict:
    return describe_document(Document("pt-zip", [t]))


@pytest.mark.spec("tensors.md#tensors-sparse")
@pytest.mark.parametrize("dtype", NEGATABLE, ids=lambda d: d.name)
def test_a_resolved_component_presents_the_same_values_from_its_own_storage(dtype) -> None:
    bits = [(False, True)] + ([(True, False), (True, True)] if dtype.name.startswith("complex") else [])
    for conj, neg in bits:
        view = _view(dtype, conj, neg)
        new = resolved(view)
        before, after = _described(view), _described(new)
        (tensor,), (storage,) = after["objects"], after["storages"].values()
        assert (new.conj, new.neg, new.storage_offset, new.stride) == (False, False, 0, (2, 1))
        assert tensor["sha256"] == before["objects"][0]["sha256"] == storage["sha256"]
        assert (storage["numel"], storage["device"], tensor["device"]) == (4, "cuda:1", "cuda:1")


def test_a_component_without_bits_is_kept() -> None:
    view = _view(DTYPES[0], False, False)
    assert resolved(view) is view
