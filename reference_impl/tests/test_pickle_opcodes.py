"""The opcode table against CPython's pickletools, the machine against the table, and the spec's generated
tables against the code (spec/pickle.md#pickle-opcodes, spec/pickle.md#pickle-globals)."""

from __future__ import annotations

import importlib.util
import pickletools
from pathlib import Path

from torchfmt.pickle import machine, opcodes

ROOT = Path(__file__).resolve().parents[2]


def test_every_pickletools_opcode_is_in_the_table_with_the_same_facts() -> None:
    theirs = {op.name: op for op in pickletools.opcodes}
    assert set(theirs) == set(opcodes.BY_NAME)
    for ours in opcodes.OPCODES:
        op = theirs[ours.name]
        assert ours.char == op.code, ours.name
        assert ours.proto == op.proto, ours.name
        assert ours.stack_before == tuple(s.name for s in op.stack_before), ours.name
        assert ours.stack_after == tuple(s.name for s in op.stack_after), ours.name
        if op.arg is None:
            assert ours.arg is None, ours.name
        else:
            assert ours.arg is not None, ours.name
            assert (ours.arg.name, ours.arg.size) == (op.arg.name, op.arg.n), ours.name


def test_table_is_in_pickletools_order_and_codes_are_unique() -> None:
    assert [op.name for op in opcodes.OPCODES] == [op.name for op in pickletools.opcodes]
    assert len(opcodes.BY_CODE) == len(opcodes.OPCODES)
    assert opcodes.HIGHEST_PROTOCOL == 5


def test_every_argument_kind_pickletools_uses_is_declared() -> None:
    used = {op.arg.name for op in pickletools.opcodes if op.arg is not None}
    assert used == {k.name for k in opcodes.ARG_KINDS}


def test_every_opcode_a_file_may_use_has_a_meaning_in_the_machine() -> None:
    assert set(machine._MEANINGS) == {op.name for op in opcodes.OPCODES if not op.refused}


def test_only_buffer_and_extension_opcodes_are_refused() -> None:
    refused = {op.name for op in opcodes.OPCODES if op.refused}
    assert refused == {"NEXT_BUFFER", "READONLY_BUFFER", "EXT1", "EXT2", "EXT4"}


def test_spec_tables_are_generated_from_the_code() -> None:
    script = ROOT / "spec" / "tools" / "pickle_tables.py"
    spec = importlib.util.spec_from_file_location("pickle_tables", script)
    assert spec is not None and spec.loader is not None
    tables = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(tables)
    text = (ROOT / "spec" / "pickle.md").read_text(encoding="utf-8")
    assert tables.render(text) == text, "spec/pickle.md is stale: run python spec/tools/pickle_tables.py"
    for op in opcodes.OPCODES:
        assert f"| {op.name} | `0x{op.code:02x}` |" in text
