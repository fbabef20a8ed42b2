"""The generated torch_t7 parser (ksy/torch_t7.ksy) against files real Lua Torch wrote (spec/t7.md#t7-binary).

Expectations come from each file's ``*.expected.json`` (real Lua Torch's own reader), never from our reader.
"""

from __future__ import annotations

import io
import json
import struct
from pathlib import Path
from typing import Any

import pytest
from torchfmt.recursion import recursion_limit

ROOT = Path(__file__).resolve().parents[2]

from kaitaistruct import KaitaiStructError  # noqa: E402
from torch_t7 import TorchT7  # noqa: E402

CORPUS = ROOT.parent / "shared" / "corpus" / "t7"
LUA_TORCH = CORPUS / "lua-torch"
#: Tests of the Lua Torch corpus files themselves (../shared/corpus, beside the project; CI has it).
needs_corpus = pytest.mark.skipif(not LUA_TORCH.is_dir(), reason="../shared/corpus is not here")

# Top-level type code the canonical description's value type implies (spec/t7.md#t7-type-codes).
CODE_FOR_TYPE = {
    "none": {"lua_nil"},
    "float": {"number"},
    "bool": {"boolean"},
    "str": {"string"},
    "bytes": {"string"},
    "table": {"table"},
    "torch_object": {"torch"},
    "tensor": {"torch"},
    "storage": {"torch"},
    "function": {"lua_function", "legacy_recur_function", "recur_function"},
}


def _expected(path: Path) -> dict[str, Any]:
    return json.loads(path.with_name(path.name + ".expected.json").read_text())


def _variant(name: str) -> str:
    """The binary encoding a lua-torch corpus file was written with (EXPECTED.md names it by prefix)."""
    if name.startswith("long4_"):
        return "le_long4"
    if name.startswith("bigendian_"):
        return "be_long8"
    return "le_long8"


def _binary_files(folder: Path) -> list[Path]:
    out = []
    for p in sorted(folder.glob("*.t7")):
        exp = _expected(p)
        if exp.get("format") == "t7-binary" and "error" not in exp:
            out.append(p)
    return out


def _error_files(folder: Path) -> list[Path]:
    return [p for p in sorted(folder.glob("*.t7")) if "error" in _expected(p)]


def _parse(path: Path, variant: str) -> list[Any]:
    with recursion_limit(20_000):
        return getattr(TorchT7.from_file(str(path)), variant).objects


def _check_value(obj: Any, exp: dict[str, Any]) -> None:
    """The parsed object agrees with the expected canonical value at the top level."""
    code = obj.type_code.name
    if exp["type"] == "ref":  # a second occurrence: an index-only back-reference
        assert obj.indexed is not None and not obj.indexed.is_new
        return
    assert code in CODE_FOR_TYPE[exp["type"]], (code, exp["type"])
    if exp["type"] == "float" and exp["value"] not in ("nan", "inf", "-inf", "-0.0"):
        want = float.fromhex(exp["value"]) if "0x" in exp["value"] else float(exp["value"])
        assert obj.number == want
    if exp["type"] in ("str", "bytes"):
        raw = obj.string.value
        assert raw == (exp["value"].encode() if exp["type"] == "str" else bytes.fromhex(exp["hex"]))
    if exp["type"] == "table":
        assert obj.indexed.is_new
        assert obj.indexed.table.num_pairs == len(exp["items"])
    if exp["type"] in ("torch_object", "tensor", "storage"):
        torch_obj = obj.indexed.torch
        name = torch_obj.class_name
        if exp["type"] == "torch_object":
            assert name == exp["class"]
            assert torch_obj.version == (exp["version"] or "")
        elif exp["type"] == "tensor":
            assert name.endswith("Tensor")
            t = torch_obj.payload
            assert [s.value for s in t.sizes] == exp["shape"]
            if exp["shape"]:
                assert [s.value for s in t.strides] == exp["stride"]
                assert t.storage_offset.value - 1 == exp["storage_offset"]
        else:
            assert name.endswith("Storage")


@pytest.mark.parametrize("path", _binary_files(LUA_TORCH), ids=lambda p: p.name)
def test_lua_torch_binary_files_parse(path: Path) -> None:
    exp = _expected(path)
    objects = _parse(path, _variant(path.name))
    assert len(objects) == len(exp["objects"])
    for obj, want in zip(objects, exp["objects"], strict=True):
        _check_value(obj, want)


@needs_corpus
def test_corpus_has_the_binary_files() -> None:
    """The parametrised test above really covers the corpus (80 files, most of them binary)."""
    assert len(_binary_files(LUA_TORCH)) >= 60


@pytest.mark.parametrize("path", _error_files(LUA_TORCH), ids=lambda p: p.name)
def test_files_lua_torch_could_not_read_are_not_misparsed(path: Path) -> None:
    """A class with its own write method, or raw File calls, must fail the parse, not yield objects."""
    with pytest.raises((KaitaiStructError, EOFError, ValueError)):
        _parse(path, "le_long8")


@needs_corpus
def test_a_wrong_encoding_is_rejected() -> None:
    """Reading a long4 file as long8 (or a big-endian one as little-endian) fails validation."""
    with pytest.raises((KaitaiStructError, EOFError)):
        _parse(LUA_TORCH / "long4_tensor_double_t.t7", "le_long8")
    with pytest.raises((KaitaiStructError, EOFError)):
        _parse(LUA_TORCH / "bigendian_table.t7", "le_long8")


@needs_corpus
def test_back_references_carry_no_payload() -> None:
    """table_self_cycle.t7: t.self = t and t[1] = t are index-only back-references to the root."""
    (root,) = _parse(LUA_TORCH / "table_self_cycle.t7", "le_long8")
    assert root.indexed.index == 1 and root.indexed.is_new
    values = [pair.value for pair in root.indexed.table.pairs]
    assert [v.indexed.index for v in values] == [1, 1]
    assert not any(v.indexed.is_new for v in values)


@needs_corpus
def test_shared_index_space_across_write_calls() -> None:
    """multi_object_stream.t7: the later objects refer back into the first one (EXPECTED.md)."""
    objects = _parse(LUA_TORCH / "multi_object_stream.t7", "le_long8")
    later = [o for o in objects[1:] if o.type_code.name == "table"]
    assert later and all(not o.indexed.is_new for o in later)


@needs_corpus
def test_storage_bytes_match_the_expected_hash() -> None:
    """storage_double.t7: the raw elements hash to the expected storage sha256 (little-endian file)."""
    import hashlib

    exp = _expected(LUA_TORCH / "storage_double.t7")
    (obj,) = _parse(LUA_TORCH / "storage_double.t7", "le_long8")
    storage = obj.indexed.torch.payload
    (want,) = exp["storages"].values()
    assert storage.num_elements.value == want["numel"]
    assert hashlib.sha256(storage.data).hexdigest() == want["sha256"]


@pytest.mark.parametrize("folder", ["torchfile", "wild"])
def test_other_corpora_binary_files_parse(folder: str) -> None:
    """The torchfile test files and the wild models (when ../shared is present) parse as le_long8."""
    where = CORPUS / folder
    if not where.is_dir():
        pytest.skip("../shared/corpus not present")
    files = _binary_files(where)
    assert files
    for path in files:
        exp = _expected(path)
        objects = _parse(path, "le_long8")
        assert len(objects) == len(exp["objects"]), path.name
        _check_value(objects[0], exp["objects"][0])


def _ascii_files() -> list[Path]:
    out = []
    for folder in (LUA_TORCH, CORPUS / "torchfile", CORPUS / "wild"):
        for p in sorted(folder.glob("*.t7")) if folder.is_dir() else []:
            exp = _expected(p)
            if exp.get("format") == "t7-ascii" and "error" not in exp:
                out.append(p)
    return out


def _tokens(array: Any) -> list[int]:
    """The integers of a token_array (a field whose `if` is false is absent from the parsed object)."""
    tokens = [*getattr(array, "leading", []), getattr(array, "last_token", None)]
    return [int(x) for x in tokens if x is not None]


@pytest.mark.parametrize("path", _ascii_files(), ids=lambda p: p.name)
def test_ascii_files_parse(path: Path) -> None:
    """ksy/torch_t7_ascii.ksy reads the ascii-mode files (spec/t7.md#t7-ascii) to what Lua Torch loaded."""
    from torch_t7_ascii import TorchT7Ascii

    exp = _expected(path)
    with recursion_limit(20_000):
        objects = TorchT7Ascii.from_file(str(path)).objects
    assert len(objects) == len(exp["objects"])
    obj, want = objects[0], exp["objects"][0]
    assert obj.type_code.name in CODE_FOR_TYPE[want["type"]]
    if want["type"] == "torch_object":
        assert obj.indexed.torch.class_name == want["class"]
    if want["type"] == "tensor":
        t = obj.indexed.torch.payload
        assert _tokens(t.sizes) == want["shape"]
        if want["shape"]:
            assert _tokens(t.strides) == want["stride"]
            assert t.storage_offset.value - 1 == want["storage_offset"]


@needs_corpus
def test_lua_torch_ascii_files_are_covered() -> None:
    assert len([p for p in _ascii_files() if p.parent == LUA_TORCH]) >= 15


def _binary(fmt: str, *values: int | bytes, long_size: int = 8, big: bool = False) -> bytes:
    """A hand-made binary stream: ``fmt`` has one letter per value, i an int, l a long, s a string
    (int length and bytes) (spec/t7.md#t7-binary)."""
    order = ">" if big else "<"
    out = b""
    for kind, v in zip(fmt, values, strict=True):
        if kind == "s":
            assert isinstance(v, bytes)
            out += struct.pack(order + "i", len(v)) + v
        else:
            out += struct.pack(order + ("i" if kind == "i" or long_size == 4 else "q"), v)
    return out


# Every count the grammars read, made negative: field -> (binary layout, values, ascii tokens).  The grammar
# must reject it with a validation error at that field (spec/t7.md: t7-string, t7-table, t7-function,
# t7-tensor, t7-storage, t7-tds say bad-length), never fail later in one of its own expressions.
NEGATIVE_COUNTS = {
    "lua_string": ("ii", (2, -1), ["2", "-1"]),
    "table_body": ("iii", (3, 1, -1), ["3", "1", "-1"]),
    "function_body": ("ii", (6, -3), ["6", "-3"]),
    "ascii_string": ("iii", (4, 1, -2), ["4", "1", "-2"]),
    "tensor": ("iissi", (4, 1, b"V 1", b"torch.FloatTensor", -1),
               ["4", "1", "3", "V 1", "17", "torch.FloatTensor", "-1"]),
    "storage": ("iissl", (4, 1, b"V 1", b"torch.FloatStorage", -5),
                ["4", "1", "3", "V 1", "18", "torch.FloatStorage", "-5"]),
    "tds_hash": ("iissl", (4, 1, b"V 0", b"tds.Hash", -1), ["4", "1", "3", "V 0", "8", "tds.Hash", "-1"]),
    "tds_vec": ("iissl", (4, 1, b"V 0", b"tds.Vec", -1), ["4", "1", "3", "V 0", "7", "tds.Vec", "-1"]),
}


@pytest.mark.parametrize("field", NEGATIVE_COUNTS)
@pytest.mark.parametrize("variant", ["le_long8", "le_long4", "be_long8", "be_long4"])
def test_negative_counts_fail_validation_at_their_field(field: str, variant: str) -> None:
    from kaitaistruct import KaitaiStream, ValidationFailedError

    fmt, values, _ = NEGATIVE_COUNTS[field]
    data = _binary(fmt, *values, long_size=4 if variant.endswith("4") else 8, big=variant.startswith("be"))
    with pytest.raises(ValidationFailedError) as e:
        getattr(TorchT7(KaitaiStream(io.BytesIO(data))), variant)  # the lazy instance parses
    assert e.value.src_path == f"/types/stream/types/{field}/seq/0"


ASCII_FIELD = {"function_body": "lua_string"}


@pytest.mark.parametrize("field", NEGATIVE_COUNTS)
def test_negative_ascii_counts_fail_validation_at_their_field(field: str) -> None:
    from kaitaistruct import ValidationFailedError
    from torch_t7_ascii import TorchT7Ascii

    *_, tokens = NEGATIVE_COUNTS[field]
    with pytest.raises(ValidationFailedError) as e:
        TorchT7Ascii.from_bytes("".join(t + "\n" for t in tokens).encode() + b"0\n")
    # ascii bytecode is written as a string (torch_t7_ascii.ksy's function_body reads a lua_string)
    assert e.value.src_path == f"/types/{ASCII_FIELD.get(field, field)}/seq/0"
