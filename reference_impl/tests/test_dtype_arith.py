"""The per-dtype arithmetic facts of dtypes.py agree with torch 2.13 (spec/tensors.md#tensors-conj-neg,
#tensors-requires-grad), and so does the list of tensor properties a pickled state may not set
(#tensors-python-state): each fact is checked against what torch itself does, element bytes included."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
import torch
from torchfmt.dtypes import DTYPES, DType, resolve_bits
from torchfmt.pickle.rebuild import TENSOR_PROPERTIES

#: Bytes that include NaNs, zeros of both signs, the extremes of each width.
RAW = bytes([0x00, 0x80, 0x7F, 0xFF, 0x01, 0xFE, 0x7C, 0xFC, 0x3C, 0xBC, 0x00, 0x00, 0x7E, 0xC0, 0x12, 0x34]
            * 2)


def _tensor(d: DType) -> torch.Tensor:
    return torch.frombuffer(bytearray(RAW), dtype=torch.uint8).view(getattr(torch, d.name))


def _torch_bytes(t: torch.Tensor) -> bytes:
    return t.contiguous().view(torch.uint8).numpy().tobytes()


@pytest.mark.parametrize("d", [d for d in DTYPES if not d.quantized], ids=lambda d: d.name)
def test_negation_is_torchs(d: DType) -> None:
    t = _tensor(d)
    values = np.frombuffer(RAW, dtype=np.uint8).view(d.numpy)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        if d.negation is None:
            with pytest.raises(RuntimeError, match="not implemented"):
                torch._neg_view(t).resolve_neg()
            return
        negated = torch._neg_view(t).resolve_neg()
        assert resolve_bits(values, d, False, True).tobytes() == _torch_bytes(negated)
        if d.is_complex:
            conj = t.conj()
            assert resolve_bits(values, d, True, False).tobytes() == _torch_bytes(conj.resolve_conj())
            both = torch._neg_view(conj)
            if not d.neg_conj:
                with pytest.raises(NotImplementedError, match="not implemented"):
                    both.resolve_conj()
                return
            assert resolve_bits(values, d, True, True).tobytes() == _torch_bytes(
                both.resolve_conj().resolve_neg())


@pytest.mark.parametrize("d", DTYPES, ids=lambda d: d.name)
def test_differentiable_is_torchs(d: DType) -> None:
    t = torch.empty(0, dtype=getattr(torch, d.name))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        if d.differentiable:
            t.requires_grad_(True)
        else:
            with pytest.raises(RuntimeError, match="can require gradients"):
                t.requires_grad_(True)


def test_tensor_properties_are_torchs() -> None:
    """The data descriptors of torch.Tensor and nn.Parameter: what setattr of a state key would hit."""
    def descriptors(cls: type) -> set[str]:
        out = set()
        for name in dir(cls):
            owner = next((c for c in cls.__mro__ if name in c.__dict__), None)
            if owner is not None:
                kind = type(owner.__dict__[name])
                if hasattr(kind, "__set__") or hasattr(kind, "__delete__"):
                    out.add(name)
        return out

    assert descriptors(torch.Tensor) | descriptors(torch.nn.Parameter) == TENSOR_PROPERTIES
