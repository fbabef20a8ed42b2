"""spec/canonical.md agrees with the code that implements it and with what the real writers' loaders wrote.

- the `.t7` hint table (canonical-t7-hints) with ``torchfmt.t7.encodings`` and the harness;
- the budgets (canonical-node-budget) and every reader limit with ``torchfmt.limits``, in each
  requirement that states one; the run limits and the formats (canonical-reader-cli,
  canonical-document) with the harness;
- the number grammars (canonical-float) with ``describe.format_float`` and with every number in the
  expected descriptions (shared corpus and committed cases), which real PyTorch or Lua Torch produced;
- the value table (canonical-values) with the fields those expected descriptions use.
"""

from __future__ import annotations

import json
import math
import re
import struct
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st
from torchfmt.describe import format_float
from torchfmt.dtypes import BY_NAME
from torchfmt.limits import LIMITS, NODE_BUDGET, TEXT_BUDGET, Limit
from torchfmt.recursion import recursion_limit
from torchfmt.t7 import encodings

from conformance.harness import runner, vocabulary
from conformance.harness.expected import read_expected_bytes

ROOT = Path(__file__).resolve().parents[2]
SPEC = ROOT / "spec"
CANONICAL = (SPEC / "canonical.md").read_text(encoding="utf-8")
CORPUS = ROOT.parent / "shared" / "corpus"



def _requirement(anchor: str, text: str = CANONICAL) -> str:
    """The text of one requirement: from its anchor to the next anchor or heading."""
    start = text.index(f'<a id="{anchor}"></a>')
    ends = [i for i in (text.find("<a id=", start + 1), text.find("\n#", start)) if i != -1]
    return text[start:min(ends) if ends else len(text)]


def _table(text: str, header_start: str) -> list[list[str]]:
    """Body rows of the markdown table whose header line starts with ``header_start``."""
    lines = text[text.index(header_start):].splitlines()
    rows = []
    for line in lines[2:]:
        if not line.startswith("|"):
            break
        rows.append([c.strip() for c in line.strip().strip("|").split("|")])
    return rows


def _code_words(cell: str) -> list[str]:
    return re.findall(r"`([^`]+)`", cell)


def _regex_block(info: str) -> re.Pattern[str]:
    m = re.search(rf"^```regex {info}\n(.+?)\n```$", CANONICAL, re.M)
    assert m, f"canonical.md has no ```regex {info} block"
    return re.compile(m.group(1))


FLOAT = _regex_block("float-literal")
INT = _regex_block("int-literal")


# -- hints, budgets, limits, formats ---------------------------------------------------------------

def test_hint_table_is_the_hint_environment() -> None:
    rows = _table(_requirement("canonical-t7-hints"), "| hint")
    assert [_code_words(r[0])[0] for r in rows] == list(encodings.HINT_ENV)
    assert {_code_words(r[0])[0]: _code_words(r[1])[0] for r in rows} == encodings.HINT_ENV
    assert vocabulary.HINT_ENV == encodings.HINT_ENV  # the harness's copy, read without torchfmt
    for row in rows:
        key = _code_words(row[0])[0]
        assert _code_words(row[2]) == [str(v) for v in encodings.HINT_VALUES[key]], key
        assert tuple(vocabulary.HINT_VALUES[key]) == tuple(encodings.HINT_VALUES[key]), key


def test_hints_are_read_from_the_variables_the_spec_names() -> None:
    env = {_code_words(r[1])[0]: _code_words(r[2])[-1] for r in _table(_requirement("canonical-t7-hints"),
                                                                      "| hint")}
    hints = encodings.Hints.from_env(env)
    assert (hints.mode, hints.long_size, hints.byte_order) == ("ascii", 8, "big")


def _numbers(text: str) -> list[int]:
    return [int(n.replace(",", "")) for n in re.findall(r"\b\d{1,3}(?:,\d{3})+\b", text)]


def test_budgets_are_the_reader_limits() -> None:
    assert _numbers(_requirement("canonical-node-budget"))[:2] == [NODE_BUDGET.value, TEXT_BUDGET.value]


_SUPERSCRIPT = str.maketrans("0123456789", "⁰¹²³⁴⁵⁶⁷⁸⁹")


def _stated(value: int, text: str) -> bool:
    """Whether ``text`` writes ``value`` as a number: ``1,024``, ``64``, ``2^24`` or ``2²⁴``."""
    forms = [f"{value:,}", str(value)]
    if value > 1 and value & (value - 1) == 0:
        k = value.bit_length() - 1
        forms += [f"2^{k}", "2" + str(k).translate(_SUPERSCRIPT)]
    return any(re.search(rf"(?<![\d,^⁰¹²³⁴⁵⁶⁷⁸⁹]){re.escape(f)}(?![\d,⁰¹²³⁴⁵⁶⁷⁸⁹])", text) for f in forms)


@pytest.mark.parametrize("limit", LIMITS, ids=lambda lim: lim.name)
def test_every_limit_is_stated_where_its_anchors_say(limit: Limit) -> None:
    assert limit.anchors and limit.value > 0
    for anchor in limit.anchors:
        file, name = anchor.split("#")
        text = _requirement(name, (SPEC / file).read_text(encoding="utf-8"))
        assert _stated(limit.value, text), f"{anchor} does not state {limit.name} = {limit.value:,}"


def test_a_stated_number_is_a_whole_number() -> None:
    assert _stated(1024, "allows 1,024 and") and _stated(2**24, "more than 2^24 elements")
    assert _stated(2**24, "16,777,216 (2²⁴)") and _stated(64, "an ndim above 64 that")
    assert not _stated(64, "1,064 and 640")
    assert not _stated(1000, "1,000,000") and not _stated(2**24, "2^245")


def test_the_limits_table_sits_in_the_budget_section() -> None:
    section = CANONICAL[CANONICAL.index("## Budgets"):CANONICAL.index("## Strict and inert")]
    assert "<!-- generated: reader-limits;" in section
    assert len({lim.name for lim in LIMITS}) == len(LIMITS)


def test_run_limits_are_the_runners() -> None:
    text = _requirement("canonical-reader-cli")
    seconds = re.search(r"by default (\d+) seconds of wall-clock time and (\d+) GiB", text)
    assert seconds, "canonical-reader-cli no longer states the default limits"
    assert float(seconds.group(1)) == runner.DEFAULT_TIME_LIMIT
    assert int(seconds.group(2)) << 30 == runner.DEFAULT_MEMORY_LIMIT


def test_formats_are_the_harness_formats() -> None:
    row = next(r for r in _table(_requirement("canonical-document"), "| member") if r[0] == "`format`")
    assert tuple(_code_words(row[1])) == vocabulary.FORMATS


# -- numbers ---------------------------------------------------------------------------------------

def _bits(x: float) -> bytes:
    return struct.pack("<d", x)


def _parse(literal: str) -> float:
    return float.fromhex(literal) if "x" in literal.lower() else float(literal)


@given(st.floats(allow_nan=True, allow_infinity=True))
def test_format_float_writes_the_grammar_and_names_the_exact_double(x: float) -> None:
    text = format_float(x)
    assert FLOAT.match(text), text
    if math.isnan(x):
        assert text == "nan"
    else:
        assert _bits(_parse(text)) == _bits(x)


@given(st.integers(min_value=-(2**200), max_value=2**200))
def test_int_grammar_accepts_every_decimal_string(n: int) -> None:
    assert INT.match(str(n))


@pytest.mark.parametrize("text", ["1", "-1", "0.5", "-0.0", "-0", "1e+16", "5e-324", "0.10000000000000001",
                                  "9.2233720368547758e+18", "1.", ".5", "0x1.8p+1", "-0x0.0p+0", "0X1P-1074",
                                  "nan", "inf", "-inf"])
def test_float_grammar_accepts(text: str) -> None:
    assert FLOAT.match(text)


@pytest.mark.parametrize("text", ["", " 1", "1 ", "+1", "+inf", "-nan", "NaN", "Infinity", "1e", "e5", ".",
                                  "0x1.8", "0x", "1_000", "١"])
def test_float_grammar_rejects(text: str) -> None:
    assert not FLOAT.match(text)


@pytest.mark.parametrize("text", ["-0", "007", "+1", "1.0", "", "1e3", " 1"])
def test_int_grammar_rejects(text: str) -> None:
    assert not INT.match(text)


# -- the expected descriptions of the real writers -------------------------------------------------

def _expected_documents() -> list[Path]:
    """Every expected description: the corpus's where it is here (../shared/corpus), and the cases'."""
    paths = sorted(CORPUS.rglob("*.expected.json")) if CORPUS.is_dir() else []
    cases = ROOT / "conformance" / "cases"
    for case in sorted(cases.rglob("case.yaml")):
        paths.extend(sorted(p for p in case.parent.iterdir() if p.name.endswith((".json", ".json.gz"))))
    return paths


with recursion_limit(20_000):  # the spec-nesting-* cases nest 1,024 levels (spec/t7.md#t7-limits)
    EXPECTED = [(p, json.loads(read_expected_bytes(p))) for p in _expected_documents()]
DESCRIPTIONS = [(p, d) for p, d in EXPECTED if isinstance(d, dict) and "error" not in d]


def _values(node: Any) -> Iterator[dict[str, Any]]:
    stack = [node]
    while stack:
        v = stack.pop()
        if isinstance(v, dict):
            if isinstance(v.get("type"), str):
                yield v
            stack.extend(x for k, x in v.items() if not k.startswith("_"))
        elif isinstance(v, list):
            stack.extend(v)


def _value_table() -> dict[str, tuple[set[str], set[str]]]:
    """type -> (required fields, optional fields), read from the canonical-values table."""
    out: dict[str, tuple[set[str], set[str]]] = {}
    for row in _table(_requirement("canonical-values"), "| `type`"):
        out[_code_words(row[0])[0]] = (set(_code_words(row[1])), set(_code_words(row[2])))
    for name, (required, optional) in out.items():
        if "tensor" in required and name != "tensor":  # "every `tensor` field"
            out[name] = ((required - {"tensor"}) | out["tensor"][0], optional)
    return out


def test_the_corpus_and_the_cases_have_descriptions_to_check() -> None:
    assert len(DESCRIPTIONS) >= 100


def test_every_expected_description_keeps_to_the_node_budget_and_one_fills_it() -> None:
    """canonical-node-budget: every description of the suite holds at most NODE_BUDGET VALUE nodes (every
    object with a ``type``, component tensors included), and pt-zip/adv-edge-nodes-500000-sparse holds
    exactly that many, with a sparse COO tensor among them (a reader that counted its absent compressed
    parts would reject it)."""
    sizes = {path: sum(1 for _ in _values(doc.get("objects"))) for path, doc in DESCRIPTIONS}
    assert max(sizes.values()) == NODE_BUDGET.value
    at_budget = [p for p, n in sizes.items() if n == NODE_BUDGET.value]
    assert [p.parent.name for p in at_budget] == ["adv-edge-nodes-500000-sparse"], at_budget
    doc = dict(DESCRIPTIONS)[at_budget[0]]
    assert [v["layout"] for v in _values(doc["objects"]) if v["type"] == "sparse_tensor"] == ["sparse_coo"]


def test_every_expected_value_has_the_fields_the_value_table_gives() -> None:
    table = _value_table()
    problems = set()
    for path, doc in DESCRIPTIONS:
        for v in _values(doc.get("objects")):
            kind = v["type"]
            if kind not in table:
                problems.add(f"{path.name}: type {kind!r} is not in the table")
                continue
            required, optional = table[kind]
            fields = {k for k in v if not k.startswith("_")} - {"type"}
            if required - fields:
                problems.add(f"{path.name}: {kind} lacks {sorted(required - fields)}")
            if fields - required - optional:
                problems.add(f"{path.name}: {kind} has {sorted(fields - required - optional)}")
    assert not problems, sorted(problems)[:20]


def test_every_expected_document_and_storage_has_the_documented_members() -> None:
    formats = set(vocabulary.FORMATS)
    for path, doc in DESCRIPTIONS:
        members = {k for k in doc if not k.startswith("_")}
        assert {"format", "objects", "storages"} <= members <= {"format", "objects", "storages",
                                                                 "description_version"}, path
        assert doc["format"] in formats, path
        for sid, s in doc["storages"].items():
            assert set(s) == {"dtype", "numel", "device", "sha256"}, (path, sid)
            assert s["dtype"] in BY_NAME and isinstance(s["numel"], int) and s["numel"] >= 0, (path, sid)
            assert re.fullmatch(r"[0-9a-f]{64}", s["sha256"]), (path, sid)


def test_every_expected_number_is_written_as_the_grammar_says() -> None:
    bad = set()
    for path, doc in DESCRIPTIONS:
        for v in _values(doc.get("objects")):
            if v["type"] == "float" and not FLOAT.match(v["value"]):
                bad.add((path.name, v["value"]))
            if v["type"] == "int" and not INT.match(v["value"]):
                bad.add((path.name, v["value"]))
            if v["type"] == "quantized_tensor" and "scale" in v and not FLOAT.match(v["scale"]):
                bad.add((path.name, v["scale"]))
            if v["type"] == "bytes" and not re.fullmatch(r"(?:[0-9a-f]{2})*", v["hex"]):
                bad.add((path.name, v["hex"][:20]))
    assert not bad, sorted(bad)[:20]


def test_every_expected_id_is_shared() -> None:
    """canonical-sharing: an id marks a value written once in full and referred to elsewhere."""
    for path, doc in DESCRIPTIONS:
        defined, referred = [], set()
        for v in _values(doc.get("objects")):
            if v["type"] == "ref":
                referred.add(v["id"])
            elif "id" in v:
                defined.append(v["id"])
        assert len(defined) == len(set(defined)), path
        assert set(defined) == referred, path
