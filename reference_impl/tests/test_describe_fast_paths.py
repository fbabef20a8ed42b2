"""The describer's shortcuts change nothing but speed (spec/canonical.md#canonical-hash).

``describe._file_bytes_sha256`` hashes a storage's or a tensor's bytes as they lie in the file, and
``describe._whole_storage`` reuses a storage's hash for a tensor that covers all of it; without them
every hash goes through numpy (``sha256_of_array``).  Every committed accept case describes the same with
and without them: so a mutant that only makes a shortcut decline (conformance/mutation/equivalent.yaml)
gives what the slow path gives.  The hash of an empty array and of a one-element one are the plain
SHA-256 of their bytes however the array is laid out.
"""

from __future__ import annotations

import hashlib
import importlib

import numpy as np
import pytest
from torchfmt import describe as describe_path
from torchfmt.describe import sha256_of_array
from torchfmt.limits import WALK_FRAMES
from torchfmt.recursion import recursion_limit
from torchfmt.t7.encodings import Hints

from conformance.harness.cases import committed_cases

#: The module (``torchfmt.describe`` the attribute is the function of the same name).
describe_module = importlib.import_module("torchfmt.describe")

ACCEPTS = [c for c in committed_cases() if c.category == "accept" and not c.problems]


def _describe(case) -> dict:  # noqa: ANN001
    return describe_path(case.path, Hints(**case.hints))


@pytest.mark.spec("canonical.md#canonical-hash")
def test_every_accept_case_describes_the_same_without_the_shortcuts(
        monkeypatch: pytest.MonkeyPatch) -> None:
    fast = {c.id: _describe(c) for c in ACCEPTS}
    monkeypatch.setattr(describe_module, "_file_bytes_sha256", lambda *a: None)
    monkeypatch.setattr(describe_module, "_whole_storage", lambda t: False)
    with recursion_limit(WALK_FRAMES):  # comparing the descriptions of the deep cases walks them
        differ = [c.id for c in ACCEPTS if _describe(c) != fast[c.id]]
    assert len(ACCEPTS) > 300
    assert differ == []


@pytest.mark.parametrize("dtype", ["<f4", ">f4", "<c8", "u1", "?", "<i8"])
@pytest.mark.parametrize("shape", [(0,), (0, 3), (3, 0), (1,), (1, 1), ()])
def test_empty_and_one_element_arrays_hash_their_bytes(dtype: str, shape: tuple[int, ...]) -> None:
    arr = np.arange(int(np.prod(shape)), dtype="<f8").astype(dtype).reshape(shape)
    little = arr.astype(np.dtype(dtype).newbyteorder("<"))
    assert sha256_of_array(arr) == hashlib.sha256(little.tobytes()).hexdigest()
    if arr.ndim:
        assert sha256_of_array(np.asfortranarray(arr)) == sha256_of_array(arr)
