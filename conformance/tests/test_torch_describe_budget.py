"""torch's describer (conformance/generators/torch_describe.py) keeps the canonical budgets
(spec/canonical.md#canonical-node-budget): a value torch loaded whose description would exceed them is
declined, quickly, and one exactly at them is described.  The torch adapters (torch, torch-full, torch113)
and every expected description the generators make go through it."""

from __future__ import annotations

from types import ModuleType

import pytest
from torchfmt import limits


@pytest.fixture(scope="module")
def td() -> ModuleType:
    """torch's describer, imported when a test of this module runs: collecting the suite (``-k ONE``)
    imports no torch."""
    pytest.importorskip("torch")
    from conformance.generators import torch_describe

    return torch_describe


def test_the_budgets_are_the_readers(td: ModuleType) -> None:
    assert (td.NODE_BUDGET, td.TEXT_BUDGET) == (limits.NODE_BUDGET.value, limits.TEXT_BUDGET.value)


def _nodes(doc: dict) -> int:
    """VALUE nodes of a description: the JSON objects with a ``type`` member."""
    todo, n = [doc["objects"]], 0
    while todo:
        v = todo.pop()
        if isinstance(v, dict):
            n += "type" in v
            todo.extend(v.values())
        elif isinstance(v, list):
            todo.extend(v)
    return n


def test_a_description_of_exactly_the_node_budget_is_written(td: ModuleType) -> None:
    value = [None] * (td.NODE_BUDGET - 1)
    assert _nodes(td.describe(value, "pt-zip")) == td.NODE_BUDGET


def test_one_node_more_is_declined(td: ModuleType) -> None:
    with pytest.raises(td.Declined, match="more than 500000 nodes"):
        td.describe([None] * td.NODE_BUDGET, "pt-zip")


def test_a_tuple_bomb_is_declined_before_it_is_walked_out(td: ModuleType) -> None:
    t = (None,) * 1000
    for _ in range(6):  # 1000**7 nodes: the walk stops at the budget
        t = (t,) * 1000
    with pytest.raises(td.Declined, match="nodes"):
        td.describe([t], "pt-zip")


def test_components_a_walk_does_not_reach_are_counted(td: ModuleType) -> None:
    import torch
    sparse = torch.sparse_coo_tensor(torch.tensor([[0, 1]]), torch.tensor([1.0, 2.0]), (2,),
                                     check_invariants=True)
    value = [sparse, *[None] * (td.NODE_BUDGET - 4)]  # list + sparse + indices + values + Nones
    assert _nodes(td.describe(value, "pt-zip")) == td.NODE_BUDGET
    with pytest.raises(td.Declined, match="nodes"):
        td.describe([*value, None], "pt-zip")


def test_text_is_counted_at_every_occurrence(td: ModuleType) -> None:
    s = "x" * (1 << 20)  # 1,048,578 bytes of JSON text each time it is written
    td.describe([s] * 255, "pt-zip")  # 267,387,390 bytes
    with pytest.raises(td.Declined, match="bytes of text"):
        td.describe([s] * 256, "pt-zip")  # 268,435,968 bytes
    with pytest.raises(td.Declined, match="bytes of text"):
        td.describe([b"\0" * (1 << 27)], "pt-zip")  # 2 hex digits a byte, quotes: 2**28 + 2
