"""Strict JSON parsing for descriptions (spec/canonical.md#canonical-document).

A description is one standard JSON document: no ``NaN``/``Infinity`` literals (floats are strings in
the contract), no duplicate object keys, nothing after the document but whitespace.  Its JSON numbers
are bounded (spec/canonical.md#canonical-json-numbers): an integer outside the signed 64-bit range and a
number that overflows a double (``1e999``) are refused, anywhere in the document, notes included.  Any
failure is a :class:`JSONError`: nothing a reader writes makes another exception escape (Python's
``int`` refuses more than 4,300 digits with a ``ValueError`` of its own).
"""

from __future__ import annotations

import itertools
import json
import math
import re
from typing import Any

from torchfmt.recursion import recursion_limit

from .facts import walk_frames

#: The recursion limit while parsing: a description of values nested 1,000 deep (the depth every reader
#: must accept, spec/canonical.md#canonical-node-budget) nests about three JSON containers per level, and
#: the standard limit (1,000) would call such a document unparsable (found by the differential fuzzer).
DEPTH = walk_frames()


_STRING = re.compile(r'"(?:[^"\\]|\\.)*"', re.DOTALL)
_BRACKETS = re.compile(r"[\[\]{}]")
_STEP = {"[": 1, "{": 1, "]": -1, "}": -1}


def _too_deep(text: str, depth: int = DEPTH) -> bool:
    """Whether the text's arrays and objects nest more than DEPTH deep (as far as the parser would go).

    The parser recurses in C once per level and Python's recursion limit is its only brake; that limit
    is one per process, so while another thread holds it raised (torchfmt.recursion) a document nested
    past it could run the C stack out and crash the harness.  Counting first makes the text's own depth
    the bound.  Strings are skipped as the parser's left-to-right scan skips them."""
    if text.count("[") + text.count("{") <= depth:
        return False  # cannot nest deeper: the common case, two C scans
    levels = [_STEP[b] for b in _BRACKETS.findall(_STRING.sub("", text))]
    return max(itertools.accumulate(levels)) > depth


class JSONError(ValueError):
    """The text is not exactly one strict JSON document."""


def _no_constants(name: str) -> Any:
    raise JSONError(f"non-standard JSON literal {name}")


#: The range of a JSON integer (spec/canonical.md#canonical-json-numbers): a signed 64-bit integer.
INT_MIN, INT_MAX = -(1 << 63), (1 << 63) - 1
#: Digits past which a JSON integer is out of range whatever they are (``-9223372036854775808``: 19).
_INT_DIGITS = 19


def _int(text: str) -> int:
    """A JSON integer, refused outside :data:`INT_MIN`..:data:`INT_MAX` before any long conversion."""
    if len(text) - text.startswith("-") > _INT_DIGITS:
        raise JSONError(f"JSON integer of {len(text) - text.startswith('-'):,} digits, outside the signed "
                        "64-bit range (an int value is a decimal string, spec/canonical.md#canonical-float)")
    value = int(text)
    if not INT_MIN <= value <= INT_MAX:
        raise JSONError(f"JSON integer {text} outside the signed 64-bit range")
    return value


def _float(text: str) -> float:
    """A JSON number with a fraction or an exponent, refused when it overflows a double."""
    value = float(text)
    if math.isinf(value):
        raise JSONError(f"JSON number {text[:40]}{'...' if len(text) > 40 else ''} overflows a double "
                        "(to infinity)")
    return value


def _unique_pairs(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for k, v in pairs:
        if k in out:
            raise JSONError(f"duplicate key {k!r} in a JSON object")
        out[k] = v
    return out


def loads(text: str | bytes, wrapped: int = 0) -> Any:
    """Parse ``text`` as exactly one JSON document, or raise :class:`JSONError`.  ``wrapped``: levels the
    text adds around a description (a batch answer holds it in one object, harness/batch.py), allowed on
    top of :data:`DEPTH`."""
    if isinstance(text, bytes):
        try:
            text = text.decode("utf-8")
        except UnicodeDecodeError as e:
            raise JSONError(f"not UTF-8: {e}") from None
    if _too_deep(text, DEPTH + wrapped):
        raise JSONError(f"JSON nested too deeply to parse (more than {DEPTH} levels)")
    try:
        with recursion_limit(DEPTH + wrapped + 1_000):
            return json.loads(text, parse_constant=_no_constants, object_pairs_hook=_unique_pairs,
                              parse_int=_int, parse_float=_float)
    except JSONError:
        raise
    except RecursionError:
        raise JSONError("JSON nested too deeply to parse") from None
    except json.JSONDecodeError as e:
        raise JSONError(f"not one JSON document: {e}") from None
    except (ValueError, OverflowError, MemoryError) as e:  # none is known; a reader's text is hostile
        raise JSONError(f"not one JSON document: {type(e).__name__}: {str(e)[:200]}") from None
