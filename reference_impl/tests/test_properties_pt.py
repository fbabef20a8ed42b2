"""Property: mutated real ``.pt`` files (zip and legacy) and pickle programs are read or rejected with
FormatError/Unsupported, never another exception (spec/canonical.md#canonical-error-codes)."""

from __future__ import annotations

import torchfmt
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from properties_inputs import mutated, pickle_int_args, pt_seeds, zip_fields
from torchfmt.describe import describe_document
from torchfmt.errors import FormatError, Unsupported

ZIP = pt_seeds("zip_", "pt-zip")
LEGACY = pt_seeds("legacy_", "pt-legacy")
SETTINGS = settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def read(data: bytes) -> None:
    try:
        describe_document(torchfmt.read_bytes(data))
    except (FormatError, Unsupported):
        pass


def test_there_are_real_seeds() -> None:
    assert len(ZIP) >= 3 and len(LEGACY) >= 3


@SETTINGS
@given(mutated(ZIP, zip_fields))
def test_mutated_zip_only_raises_format_errors(data: bytes) -> None:
    read(data)


@SETTINGS
@given(mutated(LEGACY, lambda d: pickle_int_args(d)))
def test_mutated_legacy_only_raises_format_errors(data: bytes) -> None:
    read(data)


@SETTINGS
@given(st.sampled_from(ZIP + LEGACY), st.data())
def test_truncated_pt_only_raises_format_errors(seed: bytes, data: st.DataObject) -> None:
    cut = data.draw(st.integers(0, len(seed) - 1))
    try:
        describe_document(torchfmt.read_bytes(seed[:cut]))
    except (FormatError, Unsupported):
        return
    raise AssertionError(f"a file cut to {cut} of {len(seed)} bytes was accepted")
