"""Compare an expected description with a reader's (spec/canonical.md#canonical-comparison).

The rules of the contract, applied while walking both documents together:

- ``dict``, ``ordered_dict``, ``list``, ``tuple`` items are compared in order; ``table`` and ``set``
  items as multisets (see :meth:`_Comparator.unordered`);
- a ``float`` is a string naming a double (decimal or hexadecimal literal, ``nan``, ``inf``, ``-inf``):
  equal when the doubles are bit-identical, except that any NaN equals any NaN; an ``int`` is a
  decimal string, compared as an integer (spec/canonical.md#canonical-float);
- ids are the reader's choice: object ids and storage ids are each matched by a bijection built while
  walking; a ``ref`` and the node that defines its id denote the same object, so where the full copy
  is written does not matter, but a shared object against an unshared copy is a difference
  (spec/canonical.md#canonical-sharing);
- members starting with ``_`` are notes and ignored only where the spec defines notes: members of the
  document and fields of a VALUE node; elsewhere (names of ``attrs``, a STORAGE record's members) a
  name is data and is compared, ``_metadata`` as any other; ``description_version`` may be absent but
  if present must be the integer 0 (the version these rules compare), an optional field at
  its default (``parameter: false``, ``attrs: {}``) equals its absence, any other one-sided field is a
  difference;
- a partial comparison (a reader whose adapter.yaml lists ``unexpressed`` fields, harness/readers.py)
  skips exactly those fields: a node field of that name wherever it occurs, and a top-level key of that
  name (``storages``: then storages are not matched either); everything else is compared as above.

:func:`compare` returns the differences, each with a JSON path into the expected document.
"""

from __future__ import annotations

import json
import math
import re
import struct
from dataclasses import dataclass
from typing import Any

from torchfmt.recursion import recursion_limit

#: Optional fields and the default that equals their absence.
DEFAULTS: dict[str, Any] = {"parameter": False, "attrs": {}}
UNORDERED = frozenset({"table", "set"})
#: (node type, field) pairs holding a float literal / an integer literal.
FLOAT_FIELDS = frozenset({("float", "value"), ("quantized_tensor", "scale")})
INT_FIELDS = frozenset({("int", "value")})
#: Node types whose ``storage`` field is a storage id.
STORAGE_HOLDERS = frozenset({"tensor", "quantized_tensor", "storage"})
#: The top-level member naming the description's version: absent, or the one version these rules compare.
VERSION_KEY, VERSION = "description_version", 0

_DECIMAL = re.compile(r"[+-]?(\d+(\.\d*)?|\.\d+)([eE][+-]?\d+)?")
_HEX = re.compile(r"[+-]?0[xX]([0-9a-fA-F]+(\.[0-9a-fA-F]*)?|\.[0-9a-fA-F]+)([pP][+-]?\d+)?")
_SPECIAL = {"nan": math.nan, "+nan": math.nan, "-nan": math.nan, "inf": math.inf, "+inf": math.inf,
            "-inf": -math.inf, "infinity": math.inf, "+infinity": math.inf, "-infinity": -math.inf}
_INT = re.compile(r"[+-]?\d+")


@dataclass(frozen=True)
class Difference:
    """One difference: where (a JSON path into the expected document) and what."""

    path: str
    message: str

    def __str__(self) -> str:
        return f"{self.path}: {self.message}"


def parse_float(text: object) -> float | None:
    """The double a contract float literal names, or ``None`` when ``text`` is not one."""
    if not isinstance(text, str):
        return None
    s = text.strip()
    if s.lower() in _SPECIAL:
        return _SPECIAL[s.lower()]
    if _DECIMAL.fullmatch(s):
        return float(s)
    if _HEX.fullmatch(s):
        return float.fromhex(s)
    return None


def float_key(x: float) -> str:
    """Bits of a double as hex, with every NaN folded into ``nan``."""
    return "nan" if math.isnan(x) else struct.pack("<d", x).hex()


def parse_int(text: object) -> int | None:
    if isinstance(text, str) and _INT.fullmatch(text.strip()):
        return int(text.strip())
    return None


def is_value(node: object) -> bool:
    """A VALUE node: a JSON object with a string ``type``."""
    return isinstance(node, dict) and isinstance(node.get("type"), str)


def _identity(node: dict[str, Any]) -> str | None:
    if node["type"] == "ref":
        ident = node.get("id")
        return ident if isinstance(ident, str) else "<bad ref>"
    ident = node.get("id")
    return ident if isinstance(ident, str) else None


def _short(value: Any, limit: int = 100) -> str:
    text = json.dumps(value, sort_keys=True, separators=(",", ":"))
    return text if len(text) <= limit else text[: limit - 3] + "..."


#: Key types whose value names a [key, value] item in a difference's path.
_NAMED_KEYS = ("str", "int", "float", "bool")


def item_path(path: str, i: int, item: Any) -> str:
    """``path[i]``, with the item's key when it is a [key, value] pair of a dict, ordered dict or table
    (``$.objects[0].items[3 'fc.weight'][1].shape``): the position alone says little on a real model."""
    if isinstance(item, list) and len(item) == 2 and isinstance(item[0], dict) \
            and item[0].get("type") in _NAMED_KEYS and "value" in item[0]:
        key = item[0]["value"]
        label = repr(key) if isinstance(key, str) else str(key)
        return f"{path}[{i} {label if len(label) <= 60 else label[:57] + '...'}]"
    return f"{path}[{i}]"


class _Side:
    """One document's id index: object id -> defining node, and its storages."""

    def __init__(self, doc: dict[str, Any], name: str, diffs: list[Difference], keys: _Keys,
                 ignore: frozenset[str] = frozenset()) -> None:
        self.name = name
        self.keys = keys
        self.ignore = ignore
        self.defs: dict[str, dict[str, Any]] = {}
        self.refs: list[tuple[str, str]] = []
        storages = doc.get("storages")
        self.storages: dict[str, Any] = storages if isinstance(storages, dict) else {}
        self.norms: dict[int, int] = {}
        stack: list[tuple[Any, str]] = [(doc.get("objects"), "$.objects")]
        while stack:
            node, path = stack.pop()
            if isinstance(node, list):
                stack.extend((x, f"{path}[{i}]") for i, x in enumerate(node))
                continue
            if not isinstance(node, dict):
                continue
            if is_value(node):
                if node["type"] == "ref":
                    self.refs.append((str(node.get("id")), path))
                elif isinstance(node.get("id"), str):
                    if node["id"] in self.defs:
                        diffs.append(Difference(path, f"{name} defines id {node['id']!r} twice"))
                    else:
                        self.defs[node["id"]] = node
                elif "id" in node:  # value ids are strings (spec/canonical.md#canonical-sharing)
                    diffs.append(Difference(path, f"{name} gives a {node['type']} the id "
                                                  f"{_short(node['id'])}, not a string"))
            notes = is_value(node)  # a VALUE's fields may be notes; any other object's members are data
            stack.extend((x, f"{path}.{k}") for k, x in node.items() if not (notes and k.startswith("_")))
        for ident, path in self.refs:
            if ident not in self.defs:
                diffs.append(Difference(path, f"{name} has a ref to id {ident!r} that nothing defines"))

    def definition(self, node: dict[str, Any]) -> dict[str, Any] | None:
        if node["type"] != "ref":
            return node
        return self.defs.get(str(node.get("id")))

    # -- canonical keys, ids erased (for matching unordered items) ---------------------------------
    def key(self, v: Any) -> int:
        """A key equal for any two values the comparison calls equal, with ids erased (a shared node, a
        ref or a node carrying an id, stands for its type alone): the number the comparison's
        :class:`_Keys` gives that canonical form.  Each node's key is built from its children's, once
        (a key spelled out as text would copy every subtree at each level above it: quadratic time in
        the depth, seconds for a 1,024-level .t7 table)."""
        if isinstance(v, list):
            return self.keys.of(("list", tuple(self.key(x) for x in v)))
        if not isinstance(v, dict):
            return self.keys.leaf(v)
        cached = self.norms.get(id(v))
        if cached is not None:
            return cached
        if is_value(v):
            out = self._value_key(v)
        else:
            out = self.keys.of(("dict", tuple(sorted((k, self.key(x)) for k, x in v.items()))))
        self.norms[id(v)] = out
        return out

    def _value_key(self, v: dict[str, Any]) -> int:
        keys = self.keys
        if _identity(v) is not None:
            d = self.definition(v)
            return keys.pair("shared", keys.leaf(d["type"] if d is not None else "?"))
        t = v["type"]
        out: list[tuple[str, int]] = []
        for k, x in v.items():
            if k.startswith("_") or k == "id" or k in self.ignore or (k in DEFAULTS and x == DEFAULTS[k]):
                continue
            if (t, k) in FLOAT_FIELDS:
                f = parse_float(x)
                out.append((k, keys.pair("float", keys.leaf(float_key(f))) if f is not None
                            else keys.pair("bad", keys.leaf(x))))
            elif (t, k) in INT_FIELDS:
                i = parse_int(x)
                out.append((k, keys.pair("int", keys.leaf(str(i))) if i is not None
                            else keys.pair("bad", keys.leaf(x))))
            elif k == "storage" and t in STORAGE_HOLDERS and isinstance(x, str):
                out.append((k, keys.pair("storage", self.key(self.storages.get(x)))))
            elif k == "items" and t in UNORDERED and isinstance(x, list):
                # a multiset: the items' keys in any fixed order (equal keys are equal numbers)
                out.append((k, keys.of(("list", tuple(sorted(self.key(i) for i in x))))))
            else:
                out.append((k, self.key(x)))
        return keys.of(("dict", tuple(sorted(out))))


class _Keys:
    """Canonical forms, numbered: one table for both sides of a comparison, so that two values have the
    same key exactly when their canonical forms (JSON values with ids erased) are equal.  A form is a
    leaf (its JSON text), a list of keys, or a dict's sorted (name, key) pairs."""

    def __init__(self) -> None:
        self.table: dict[tuple[str, Any], int] = {}

    def of(self, form: tuple[str, Any]) -> int:
        return self.table.setdefault(form, len(self.table))

    def leaf(self, value: Any) -> int:
        return self.of(("leaf", json.dumps(value, sort_keys=True, separators=(",", ":"))))

    def pair(self, tag: str, key: int) -> int:
        """The key of the list ``[tag, <the value of key>]``."""
        return self.of(("list", (self.leaf(tag), key)))


class _Comparator:
    def __init__(self, expected: dict[str, Any], actual: dict[str, Any],
                 ignore: frozenset[str] = frozenset()) -> None:
        self.ignore = ignore
        self.diffs: list[Difference] = []
        keys = _Keys()
        self.exp = _Side(expected, "expected", self.diffs, keys, ignore)
        self.act = _Side(actual, "actual", self.diffs, keys, ignore)
        self.obj_map: dict[str, str] = {}
        self.obj_rev: dict[str, str] = {}
        self.sto_map: dict[str, str] = {}
        self.sto_rev: dict[str, str] = {}
        self.journal: list[tuple[str, str, str]] = []

    def diff(self, path: str, message: str) -> None:
        self.diffs.append(Difference(path, message))

    # -- trial matching: every mapping is journaled so a failed trial can be undone ----------------
    def mark(self) -> tuple[int, int]:
        return len(self.journal), len(self.diffs)

    def rollback(self, mark: tuple[int, int]) -> None:
        n_journal, n_diffs = mark
        while len(self.journal) > n_journal:
            kind, a, b = self.journal.pop()
            fwd, rev = (self.obj_map, self.obj_rev) if kind == "obj" else (self.sto_map, self.sto_rev)
            del fwd[a], rev[b]
        del self.diffs[n_diffs:]

    def _bind(self, kind: str, a: str, b: str) -> None:
        fwd, rev = (self.obj_map, self.obj_rev) if kind == "obj" else (self.sto_map, self.sto_rev)
        fwd[a], rev[b] = b, a
        self.journal.append((kind, a, b))

    # -- the walk ---------------------------------------------------------------------------------
    def document(self, expected: dict[str, Any], actual: dict[str, Any]) -> None:
        for k in sorted(set(expected) | set(actual)):
            if k == VERSION_KEY:
                for side, doc in (("expected", expected), ("actual", actual)):
                    v = doc.get(k, VERSION)
                    if type(v) is not int or v != VERSION:
                        self.diff(f"$.{k}", f"the {side} description is version {json.dumps(v)}, "
                                            f"not {VERSION}")
                continue
            if k.startswith("_") or k in self.ignore:
                continue
            if k not in actual:
                self.diff(f"$.{k}", "missing from the actual description")
            elif k not in expected:
                self.diff(f"$.{k}", "present only in the actual description")
            elif k == "objects":
                self.sequence(expected[k], actual[k], "$.objects")
            elif k == "storages":
                if not isinstance(actual[k], dict):
                    self.diff("$.storages", "not a JSON object")
            else:
                self.json(expected[k], actual[k], f"$.{k}")
        if "storages" in self.ignore or "storage" in self.ignore:
            return
        for sid in self.exp.storages:
            if sid not in self.sto_map:
                self.diff(f"$.storages.{sid}", "expected storage matched to no storage of the actual")
        for sid in self.act.storages:
            if sid not in self.sto_rev:
                self.diff(f"$.storages.{sid}", f"actual storage {sid!r} matches no expected storage")

    def value(self, a: Any, b: Any, path: str) -> None:
        if not is_value(b):
            self.diff(path, f"expected a {a.get('type')} node, got {_short(b)}")
            return
        ia, ib = _identity(a), _identity(b)
        if ia is None and ib is None:
            self.node(a, b, path)
            return
        if ia is None or ib is None:
            what_a = f"the shared object {ia!r}" if ia else f"an unshared {a['type']}"
            what_b = f"the shared object {ib!r}" if ib else f"an unshared {b['type']}"
            self.diff(path, f"sharing differs: expected {what_a}, got {what_b}")
            return
        if ia in self.obj_map:
            if self.obj_map[ia] != ib:
                self.diff(path, f"sharing differs: expected object {ia!r} (matched to actual "
                                f"{self.obj_map[ia]!r}), got actual {ib!r}")
            return
        if ib in self.obj_rev:
            self.diff(path, f"sharing differs: actual object {ib!r} already stands for expected "
                            f"{self.obj_rev[ib]!r}, here for {ia!r}")
            return
        self._bind("obj", ia, ib)
        da, db = self.exp.definition(a), self.act.definition(b)
        if da is not None and db is not None:  # dangling refs were reported by _Side
            self.node(da, db, path)

    def node(self, a: dict[str, Any], b: dict[str, Any], path: str) -> None:
        t = a["type"]
        if b["type"] != t:
            self.diff(path, f"type: expected {t!r}, got {b['type']!r}")
            return
        for k in sorted(set(a) | set(b)):
            if k.startswith("_") or k in ("type", "id") or k in self.ignore:
                continue
            va, vb = a.get(k, DEFAULTS.get(k, _ABSENT)), b.get(k, DEFAULTS.get(k, _ABSENT))
            p = f"{path}.{k}"
            if va is _ABSENT or vb is _ABSENT:
                side = "expected" if vb is _ABSENT else "actual"
                self.diff(p, f"field present only in the {side} description")
            elif (t, k) in FLOAT_FIELDS:
                self.float(va, vb, p)
            elif (t, k) in INT_FIELDS:
                ia, ib = parse_int(va), parse_int(vb)
                if ia is None or ib is None or ia != ib:
                    self.diff(p, f"expected {_short(va)}, got {_short(vb)}")
            elif k == "storage" and t in STORAGE_HOLDERS:
                self.storage(va, vb, p)
            elif k == "items" and t in UNORDERED:
                self.unordered(va, vb, p)
            else:
                self.json(va, vb, p)

    def float(self, a: Any, b: Any, path: str) -> None:
        fa, fb = parse_float(a), parse_float(b)
        if fb is None:
            self.diff(path, f"not a float literal: {_short(b)}")
        elif fa is None or float_key(fa) != float_key(fb):
            self.diff(path, f"expected {a!r}, got {b!r}")

    def storage(self, a: Any, b: Any, path: str) -> None:
        if a is None or b is None or not isinstance(a, str) or not isinstance(b, str):
            if a != b:
                self.diff(path, f"expected storage {_short(a)}, got {_short(b)}")
            return
        if a in self.sto_map:
            if self.sto_map[a] != b:
                self.diff(path, f"storage sharing differs: expected storage {a!r} (matched to actual "
                                f"{self.sto_map[a]!r}), got {b!r}")
            return
        if b in self.sto_rev:
            self.diff(path, f"storage sharing differs: actual storage {b!r} already stands for "
                            f"expected {self.sto_rev[b]!r}, here for {a!r}")
            return
        self._bind("sto", a, b)
        if a not in self.exp.storages:
            self.diff(path, f"expected storage id {a!r} is not in expected storages")
        elif b not in self.act.storages:
            self.diff(path, f"actual storage id {b!r} is not in actual storages")
        else:
            self.json(self.exp.storages[a], self.act.storages[b], f"$.storages.{a}")

    def sequence(self, a: Any, b: Any, path: str) -> None:
        if not isinstance(a, list) or not isinstance(b, list):
            self.json(a, b, path)
            return
        if len(a) != len(b):
            self.diff(path, f"expected {len(a)} items, got {len(b)}")
        for i, (x, y) in enumerate(zip(a, b, strict=False)):
            self.json(x, y, item_path(path, i, x))

    def json(self, a: Any, b: Any, path: str) -> None:
        if is_value(a):
            self.value(a, b, path)
        elif isinstance(a, list) and isinstance(b, list):
            self.sequence(a, b, path)
        elif isinstance(a, dict) and isinstance(b, dict):  # attrs, a STORAGE record: no notes here
            for k in sorted(set(a) | set(b)):
                if k not in b:
                    self.diff(f"{path}.{k}", "field present only in the expected description")
                elif k not in a:
                    self.diff(f"{path}.{k}", "field present only in the actual description")
                else:
                    self.json(a[k], b[k], f"{path}.{k}")
        elif type(a) is not type(b) or a != b:
            self.diff(path, f"expected {_short(a)}, got {_short(b)}")

    def unordered(self, a: Any, b: Any, path: str) -> None:
        """Match items as multisets: group both sides by a canonical key with ids erased, pair equal
        keys (unique keys first, so their id bindings are fixed before ties are tried), and within a
        group of equal keys pair each expected item with the first actual one that compares clean
        under the bindings so far (a trial that fails is rolled back)."""
        if not isinstance(a, list) or not isinstance(b, list):
            self.json(a, b, path)
            return
        if len(a) != len(b):
            self.diff(path, f"expected {len(a)} items, got {len(b)} (unordered)")
        groups_a: dict[int, list[int]] = {}
        groups_b: dict[int, list[int]] = {}
        for i, x in enumerate(a):
            groups_a.setdefault(self.exp.key(x), []).append(i)
        for j, y in enumerate(b):
            groups_b.setdefault(self.act.key(y), []).append(j)
        ties = []
        left_a: list[int] = []
        left_b: list[int] = [j for key, idx in groups_b.items() if key not in groups_a for j in idx]
        for key, idx_a in groups_a.items():
            idx_b = groups_b.get(key, [])
            if len(idx_a) == 1 and len(idx_b) == 1:
                self.json(a[idx_a[0]], b[idx_b[0]], item_path(path, idx_a[0], a[idx_a[0]]))
            else:
                ties.append((idx_a, idx_b))
        for idx_a, idx_b in ties:
            free = list(idx_b)
            for i in idx_a:
                for j in free:
                    mark = self.mark()
                    self.json(a[i], b[j], item_path(path, i, a[i]))
                    if len(self.diffs) == mark[1]:
                        free.remove(j)
                        break
                    self.rollback(mark)
                else:
                    if free:  # equal keys but not equal: keep the differences of one pair
                        self.json(a[i], b[free.pop(0)], item_path(path, i, a[i]))
                    else:
                        left_a.append(i)
            left_b.extend(free)
        self.leftovers(a, b, sorted(left_a), sorted(left_b), path)

    def leftovers(self, a: list[Any], b: list[Any], left_a: list[int], left_b: list[int],
                  path: str) -> None:
        """Report unmatched items; [key, value] pairs whose keys match are compared field by field, so
        that a table entry with a wrong value names the wrong field."""
        def pair_key(side: _Side, item: Any) -> int | None:
            return side.key(item[0]) if isinstance(item, list) and len(item) == 2 else None

        by_key: dict[int, list[int]] = {}
        for j in left_b:
            k = pair_key(self.act, b[j])
            if k is not None:
                by_key.setdefault(k, []).append(j)
        used: set[int] = set()
        for i in left_a:
            k = pair_key(self.exp, a[i])
            candidates = by_key.get(k, []) if k is not None else []
            if candidates:
                j = candidates.pop(0)
                used.add(j)
                self.json(a[i], b[j], item_path(path, i, a[i]))
            else:
                self.diff(item_path(path, i, a[i]), f"no actual item matches {_short(a[i])}")
        for j in left_b:
            if j not in used:
                self.diff(f"{path}[actual {j}]", f"actual item matches no expected item: {_short(b[j])}")


_ABSENT = object()


def same_text(expected: dict[str, Any], actual: dict[str, Any]) -> bool:
    """Whether two description documents are the same JSON text but for the document's notes (its
    members named ``_...``, which the comparison ignores): members in the same order, and ``1``, ``1.0``
    and ``true`` different, as they are in JSON; ``False`` for what the C encoder cannot write (nested
    past its recursion guard).  A case's expected description has no difference from itself
    (conformance/tests/test_harness_compare.py walks every one), so a reader's document that is the same
    text has none either: the verdict skips :func:`compare`'s walk (5.4 s of CPU over the suite)."""
    def text(d: dict[str, Any]) -> str:
        return json.dumps({k: v for k, v in d.items() if not k.startswith("_")}, ensure_ascii=False)

    try:
        return text(expected) == text(actual)
    except (RecursionError, ValueError, TypeError):
        return False


def compare(expected: dict[str, Any], actual: Any,
            ignore: frozenset[str] = frozenset()) -> list[Difference]:
    """Every difference between the expected description and ``actual`` (empty: they are equal),
    skipping the fields named in ``ignore`` (a partial comparison)."""
    if not isinstance(actual, dict):
        return [Difference("$", f"the description is not a JSON object: {_short(actual)}")]
    c = _Comparator(expected, actual, ignore)
    try:
        with recursion_limit(50_000):
            c.document(expected, actual)
    except RecursionError:
        c.diff("$", "nested too deeply to compare")
    return c.diffs
