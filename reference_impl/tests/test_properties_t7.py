"""Property: a mutated real ``.t7`` file is read or rejected with FormatError/Unsupported, never another
exception (spec/canonical.md#canonical-error-codes); a real file cut at any structural point inside an
object is ``truncated`` (spec/t7.md#t7-binary)."""

from __future__ import annotations

import pytest
import torchfmt
from hypothesis import HealthCheck, given, settings
from properties_inputs import corpus_root, mutated, t7_binary_seeds, t7_fields, truncation_points
from torchfmt.describe import describe_document
from torchfmt.errors import FormatError, Unsupported
from torchfmt.t7.encodings import Hints

BINARY = Hints(mode="binary", long_size=8, byte_order="little")
SEEDS = t7_binary_seeds()
#: The seeds are the Lua Torch corpus's files (../shared/corpus, beside the project; CI has it).
needs_corpus = pytest.mark.skipif(not (corpus_root() / "t7" / "lua-torch").is_dir(),
                                  reason="../shared/corpus is not here")


def read(data: bytes, hints: Hints) -> None:
    try:
        describe_document(torchfmt.read_bytes(data, hints))
    except (FormatError, Unsupported):
        pass


@needs_corpus
def test_there_are_real_seeds() -> None:
    assert len(SEEDS) >= 20


@needs_corpus
@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(mutated(SEEDS, t7_fields))
def test_mutated_t7_binary_only_raises_format_errors(data: bytes) -> None:
    read(data, BINARY)


@needs_corpus
@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(mutated(SEEDS, t7_fields))
def test_mutated_t7_without_hints_only_raises_format_errors(data: bytes) -> None:
    read(data, Hints())


#: At most this many cuts per file (evenly spread), to keep the test within its time budget.
MAX_CUTS = 40


def cuts(data: bytes) -> list[int]:
    points = truncation_points(data)
    step = max(1, len(points) // MAX_CUTS)
    return points[::step]


@pytest.mark.parametrize("seed", range(len(SEEDS)))
def test_truncation_at_every_structural_point_is_truncated(seed: int) -> None:
    data = SEEDS[seed]
    wrong = []
    for cut in cuts(data):
        try:
            describe_document(torchfmt.read_bytes(data[:cut], BINARY))
        except FormatError as e:
            if e.code != "truncated":
                wrong.append(f"cut {cut}: {e.code}")
        except Unsupported as e:
            wrong.append(f"cut {cut}: declined ({e.feature})")
        else:
            wrong.append(f"cut {cut}: accepted")
    assert not wrong, f"{len(wrong)} of {len(cuts(data))} cuts: " + "; ".join(wrong[:5])
