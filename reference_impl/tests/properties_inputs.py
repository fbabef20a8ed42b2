"""Real files and structure-aware mutations for the property tests (test_properties_*.py).

Seeds are real writers' files: the Lua Torch corpus (``../shared/corpus/t7/lua-torch``) and the
torch-written ``.pt`` files of ``../shared/corpus/pt/wild``, plus every committed conformance case file
of the format (so the tests still have inputs on a machine without shared/).  Mutations know the
layouts: field offsets of a binary t7 file (the adversarial generator's walker), zip header fields,
pickle opcode arguments.
"""

from __future__ import annotations

import io
import os
import pickletools
import struct
from functools import cache
from pathlib import Path

import yaml
from hypothesis import strategies as st

from conformance.generators.adversarial.t7 import Walk, WalkError, truncation_points

ROOT = Path(__file__).resolve().parents[2]


CASES = ROOT / "conformance" / "cases"
__all__ = ["mutated", "pickle_int_args", "pt_seeds", "t7_binary_seeds", "t7_fields", "truncation_points",
           "zip_fields"]
MAX_SEED = 64 << 10
INTERESTING = (0, 1, -1, 2, 255, 0x7FFF, 0x7FFFFFFF, -0x80000000, 1 << 32, 1 << 40, (1 << 63) - 1, -(1 << 63))


def corpus_root() -> Path:
    env = os.environ.get("TORCHFMT_CORPUS")
    return Path(env) if env else (ROOT.parent / "shared" / "corpus").resolve()


def _case_files(fmt: str) -> list[bytes]:
    out = []
    for yml in sorted((CASES / fmt).glob("*/case.yaml")):
        meta = yaml.safe_load(yml.read_text(encoding="utf-8")) or {}
        p = yml.parent / str(meta.get("file", ""))
        if p.is_file() and p.stat().st_size <= MAX_SEED:
            out.append(p.read_bytes())
    return out


@cache
def t7_binary_seeds() -> tuple[bytes, ...]:
    """Binary little-endian 8-byte-long Lua Torch files the walker follows to their end."""
    files = [p.read_bytes() for p in sorted((corpus_root() / "t7" / "lua-torch").glob("*.t7"))
             if not p.name.startswith(("ascii", "long4", "bigendian", "lua53", "serialize"))]
    out = []
    for data in files:
        try:
            w = Walk.of(data)
        except (WalkError, struct.error, RecursionError):
            continue
        if w.pos == len(data) and len(data) <= MAX_SEED:
            out.append(data)
    return tuple(dict.fromkeys(out))


@cache
def pt_seeds(prefix: str, fmt: str) -> tuple[bytes, ...]:
    wild = corpus_root() / "pt" / "wild"
    files = [p.read_bytes() for p in sorted(wild.glob(prefix + "*")) if not p.name.endswith(".json")
             and p.stat().st_size <= MAX_SEED]
    return tuple(dict.fromkeys(files + _case_files(fmt)))


def pickle_int_args(data: bytes, start: int = 0) -> list[tuple[int, int]]:
    """(offset, width) of the binary integer and length arguments of the pickle at ``start``."""
    out = []
    widths = {"BININT1": 1, "BININT2": 2, "BININT": 4, "BINUNICODE": 4, "BINBYTES": 4, "SHORT_BINUNICODE": 1,
              "BINPUT": 1, "BINGET": 1, "LONG_BINPUT": 4, "LONG_BINGET": 4, "SHORT_BINBYTES": 1,
              "BINUNICODE8": 8, "BINBYTES8": 8, "FRAME": 8, "LONG1": 1}
    try:
        for op, _arg, pos in pickletools.genops(io.BytesIO(data[start:])):
            if op.name in widths:
                out.append((start + pos + 1, widths[op.name]))
    except Exception:  # noqa: BLE001 - listing stops at the first malformed opcode
        pass
    return out


def zip_fields(data: bytes) -> list[tuple[int, int]]:
    """(offset, width) of the size, offset, count and length fields of every zip header."""
    out = []
    for sig, fields in ((b"PK\x03\x04", ((18, 4), (22, 4), (26, 2), (28, 2), (6, 2), (8, 2))),
                        (b"PK\x01\x02", ((20, 4), (24, 4), (28, 2), (30, 2), (42, 4), (8, 2), (10, 2))),
                        (b"PK\x05\x06", ((8, 2), (10, 2), (12, 4), (16, 4), (20, 2)))):
        at = data.find(sig)
        while at >= 0:
            out += [(at + off, w) for off, w in fields if at + off + w <= len(data)]
            at = data.find(sig, at + 1)
    data_pkl = data.find(b"data.pkl")
    if data_pkl >= 0:
        proto = data.find(b"\x80", data_pkl)
        if proto >= 0:
            out += pickle_int_args(data, proto)
    return out


def t7_fields(data: bytes) -> list[tuple[int, int]]:
    return [(off, w) for _, off, w in Walk.of(data).fields if w in (4, 8)]


def _put(data: bytes, offset: int, width: int, value: int) -> bytes:
    raw = (value % (1 << (8 * width))).to_bytes(width, "little")
    return data[:offset] + raw + data[offset + width:]


@st.composite
def mutated(draw: st.DrawFn, seeds: tuple[bytes, ...], fields) -> bytes:  # noqa: ANN001
    """One seed with one to three edits: a field set to an interesting or random value (the field list
    from ``fields(seed)``), a byte flipped, or a truncation."""
    data = draw(st.sampled_from(seeds))
    spots = fields(data)
    for _ in range(draw(st.integers(1, 3))):
        kind = draw(st.sampled_from(["field", "field", "flip", "cut"] if spots else ["flip", "cut"]))
        if not data:
            break
        if kind == "field":
            off, width = draw(st.sampled_from(spots))
            value = draw(st.one_of(st.sampled_from(INTERESTING), st.integers(-(1 << 63), (1 << 64) - 1)))
            if off + width <= len(data):
                data = _put(data, off, width, value)
        elif kind == "flip":
            i = draw(st.integers(0, len(data) - 1))
            data = data[:i] + bytes([data[i] ^ draw(st.integers(1, 255))]) + data[i + 1:]
        else:
            data = data[:draw(st.integers(0, len(data) - 1))]
    return data
