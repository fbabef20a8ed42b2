"""Where every byte of a checkpoint goes (spec/inspect.md#inspect-bytes): a pure function of the model.

One walk over the :class:`~torchfmt.model.Document` finds every storage, the tensors that view it and
the path (keys from the top-level object down) each was first reached by.  From that:

- a storage's *file bytes* are its elements as the file holds them (a ``.t7`` LongStorage written with
  4-byte longs holds 4 bytes an element; ``.t7`` ascii files hold text, and the figure is then the
  binary size);
- its *reachable* bytes are those inside the element span of at least one view (first to last element
  a view can address); the rest are saved but unreachable (spec/inspect.md#inspect-unreachable);
- storages with the same dtype, device and identical bytes are *equal bytes* (``duplicates``, the only
  payloads read): separate storages, as torch loads them, never advised against (they are not one
  tensor saved twice, spec/inspect.md#inspect-equal-bytes);
- a storage's bytes go to one top-level key (where it was first reached) and to one role and field
  (the most needed role among its views, :mod:`torchfmt.tools.roles`);
- per ``slim`` level, the bytes ``slim`` leaves and saves (:func:`slim_level`,
  spec/inspect.md#inspect-slim): each view carries the lightest level keeping it, from the roles of the
  entries on its paths.  ``slim`` reports its own figures with :func:`storage_bytes`.
"""

from __future__ import annotations

import collections
import hashlib
import math
from dataclasses import dataclass, field
from typing import Any

from ..model import Document, LuaTable, OpaqueObject, QuantizedTensor, Storage, Tensor, TorchObject
from ..walk import SHAREABLE, children, values
from .progress import progress
from .roles import (
    BY_NAME,
    LEVEL_RANK,
    LEVELS,
    OTHER,
    RANK,
    Role,
    field_name,
    is_module,
    key_role,
    module_field_role,
    node_data,
    node_field_role,
    role_of,
)

#: Bytes hashed at once when looking for duplicate storages.
_CHUNK = 1 << 24
#: Bytes of each end of a storage compared before any storage is hashed whole (spec/inspect.md#inspect-bytes).
_ENDS = 1 << 12
#: What a storage that tensors of several fields view is named, by its role.
FLAT_BUFFER = {"weights": "(flat parameter buffer)", "gradients": "(flat gradient buffer)"}
#: Tensor paths listed per storage in the JSON report.
TENSORS_LISTED = 20


@dataclass
class View:
    """A tensor viewing a storage, where it was first found, its role there, and the lightest ``slim``
    level keeping it (the lightest over every path reaching it: a value stays while one path keeps it)."""

    tensor: Tensor
    path: list[str]
    role: Role
    rank: int = 0  # LEVEL_RANK of the lightest level keeping the tensor


@dataclass
class StorageUse:
    """One storage: where it was first reached, its views, and the spans they cover."""

    storage: Storage
    path: list[str]
    views: list[View] = field(default_factory=list)
    bare: bool = False  # reached as a value itself (all of it is the value)
    bare_rank: int | None = None  # as a value itself: the lightest level keeping it

    def file_bytes(self, long_size: int | None) -> int:
        return self.storage.numel * width(self.storage, long_size)

    def reachable_elements(self) -> int:
        """Elements inside the union of the views' spans (all of them for a bare storage)."""
        if self.bare:
            return self.storage.numel
        spans = sorted(sp for v in self.views if (sp := span(v.tensor)) is not None)
        total, end = 0, 0
        for a, b in spans:
            a = max(a, end)
            if b > a:
                total += b - a
                end = b
        return min(total, self.storage.numel)

    def role(self) -> Role:
        """The most needed role among the views (by name for a bare storage)."""
        if self.bare or not self.views:
            return role_of(self.path)
        return min((v.role for v in self.views), key=lambda r: RANK[r.name])

    def field(self) -> str:
        """The field of the views with :meth:`role` (or the storage's own path); a storage that views of
        several fields share (the flat storage Lua's ``getParameters`` makes of every weight and bias, or
        of every gradient) is named as the buffer it is, never billed to one of its fields
        (spec/inspect.md#inspect-bytes)."""
        role = self.role()
        names = list(dict.fromkeys(field_name(v.path) or "(root)" for v in self.views if v.role is role))
        if len(names) > 1:
            return FLAT_BUFFER.get(role.name, "(shared buffer)")
        return names[0] if names else field_name(self.path) or "(root)"

    def tensors(self) -> list[list[str]]:
        """The paths of the tensors viewing the storage (each first reached there), at most
        :data:`TENSORS_LISTED`."""
        return [v.path for v in self.views[:TENSORS_LISTED]]


def width(s: Storage, long_size: int | None = None) -> int:
    """Bytes an element of ``s`` takes in the file: ``long_size`` for a ``.t7`` binary LongStorage
    (4 or 8), else the dtype's width."""
    return long_size if long_size and s.dtype.name == "int64" else s.dtype.itemsize


def span(t: Tensor) -> tuple[int, int] | None:
    """The half-open element range ``[first, last + 1)`` of the storage ``t`` can address, or None for
    a tensor with no element (spec/inspect.md#inspect-unreachable)."""
    if t.storage is None or (t.lua and not t.shape) or any(n == 0 for n in t.shape):
        return None
    if t.dtype.per_byte > 1:  # packed sub-byte dtypes are contiguous: the bytes that hold the elements
        return t.storage_offset, t.storage_offset + -(-math.prod(t.shape) // t.dtype.per_byte)
    last = sum((n - 1) * s for n, s in zip(t.shape, t.stride, strict=True) if s > 0)
    first = t.storage_offset + sum((n - 1) * s for n, s in zip(t.shape, t.stride, strict=True) if s < 0)
    return first, t.storage_offset + last + 1


def labelled_children(v: Any) -> list[tuple[str, Any]]:
    """``v``'s children with the key each sits under (the key values themselves are not children here:
    a tensor used as a dict key is rare and is reached with the label ``(key)``)."""
    if isinstance(v, dict):
        out = [(key_label(k), x) for k, x in v.items()]
        out += [(f"(key {key_label(k)})", k) for k in v if isinstance(k, SHAREABLE)]
        if isinstance(v, collections.OrderedDict):
            out += [(f"({name})", x) for name, x in vars(v).items()]
        return out
    if isinstance(v, LuaTable):
        items = sorted(v.items, key=_lua_order)
        return [(key_label(k), x) for k, x in items] + [
            (f"(key {key_label(k)})", k) for k, _ in items if isinstance(k, SHAREABLE)]
    if isinstance(v, (list, tuple)):
        return [(str(i), x) for i, x in enumerate(v)]
    if isinstance(v, TorchObject):
        return labelled_children(v.value) if isinstance(v.value, LuaTable) else [("(value)", v.value)]
    if isinstance(v, OpaqueObject):
        out = [(f"(arg {i})", a) for i, a in enumerate(v.args)]
        if isinstance(v.state, dict) and all(isinstance(k, str) for k in v.state):
            out += _module_children(v.state)
        elif v.state is not None:
            out.append(("(state)", v.state))
        return out
    if isinstance(v, QuantizedTensor):
        pairs = (("(scales)", v.scales), ("(zero_points)", v.zero_points))
        return [(n, t) for n, t in pairs if t is not None]
    return [("", x) for x in children(v)]


def _lua_order(item: tuple[Any, Any]) -> tuple[int, float, str]:
    """A Lua table's entries in a stable order (a file holds them in its hash order): numbers ascending,
    then strings alphabetically, then booleans and other keys by type."""
    k = item[0]
    if isinstance(k, bool):
        return (2, 0.0, str(k))
    if isinstance(k, (int, float)):
        return (0, float(k) if k == k else math.inf, "")
    if isinstance(k, str):
        return (1, 0.0, k)
    return (3, 0.0, type(k).__name__)


#: The attributes of a pickled ``nn.Module`` whose items are shown as the module's own children, under
#: the names a state_dict gives them (spec/inspect.md#inspect-tree).
MODULE_ITEMS = ("_parameters", "_buffers", "_modules")


def _module_children(state: dict[str, Any]) -> list[tuple[str, Any]]:
    """An object's attributes; for an ``nn.Module`` (its state has ``_modules`` and ``_parameters``
    dicts) its parameters, buffers and submodules first, by name, then the public attributes, then the
    private ones that hold something (empty hook dicts and ``None`` say nothing)."""
    if not all(isinstance(state.get(k), dict) for k in ("_modules", "_parameters")):
        return [(k, x) for k, x in state.items()]
    out = [(key_label(k), x) for name in MODULE_ITEMS if isinstance(state.get(name), dict)
           for k, x in state[name].items()]
    out += [(k, x) for k, x in state.items() if not k.startswith("_")]
    out += [(k, x) for k, x in state.items() if k.startswith("_") and k not in MODULE_ITEMS
            and x is not None and not (isinstance(x, (dict, list, set, tuple)) and not x)]
    return out


def key_label(k: Any) -> str:
    """A key as a path component: text as is, numbers in decimal, anything else by its type."""
    if isinstance(k, str):
        return k
    if isinstance(k, bool) or k is None:
        return repr(k)
    if isinstance(k, (int, float)):
        return f"{k:g}" if isinstance(k, float) and k.is_integer() and abs(k) < 1e15 else str(k)
    if isinstance(k, bytes):
        return k.decode("latin-1")
    return f"<{type(k).__name__}>"


#: Top-level objects whose entries are the document's top-level keys.
CONTAINERS = (dict, LuaTable, TorchObject, OpaqueObject, list, tuple)


def roots(doc: Document) -> list[tuple[str, Any]]:
    """The document's top-level entries: the keys of its one object when that is a mapping, table,
    module or sequence; else each object.  TorchScript constants come last."""
    out: list[tuple[str, Any]]
    if len(doc.objects) == 1:
        obj = doc.objects[0]
        if isinstance(obj, CONTAINERS):
            out = labelled_children(obj)
        else:
            out = [("(root)", obj)]
    else:
        out = [(f"(object {i + 1})", o) for i, o in enumerate(doc.objects)]
    if doc.extra.get("constants") is not None:
        out.append(("(constants.pkl)", doc.extra["constants"]))
    return out


def _unit(doc_t7: bool, parent: Any, label: str, child: Any, node_tables: set[int]) -> Role | None:
    """The role the entry ``label`` of ``parent`` gives its subtree, if it is one ``slim`` leaves out as a
    whole: a field of a ``.t7`` ``nn`` module or an entry of an ``nngraph.Node``'s data table (their ids
    in ``node_tables``), a ``.pt`` dict key (spec/inspect.md#inspect-roles)."""
    if doc_t7:
        if is_module(parent):
            return module_field_role(label, parent.class_name)
        return node_field_role(label) if id(parent) in node_tables else None
    return key_role(label, child) if isinstance(parent, dict) else None


def collect(doc: Document) -> list[StorageUse]:
    """Every storage of the document with its views, in the order first reached.  A value reached again
    by a path a lighter level keeps is walked again, so every view's ``rank`` is the lightest over all
    its paths (ranks only fall, so this ends)."""
    doc_t7 = doc.format.startswith("t7")
    uses: dict[int, StorageUse] = {}
    views: dict[int, View] = {}
    best: dict[int, int] = {}
    stack: list[tuple[Any, list[str], int, Role | None]] = []
    # nngraph node data tables, found first: another node's mapindex holds them as keys
    node_tables = {id(d) for obj in doc.objects for v in values(obj) if (d := node_data(v)) is not None} \
        if doc_t7 else set()

    def push(parent: Any, items: list[tuple[str, Any]], path: list[str], rank: int,
             unit: Role | None) -> None:
        for k, x in reversed(items):
            r = _unit(doc_t7, parent, k, x, node_tables) if parent is not None else None
            stack.append((x, [*path, k] if k else path, max(rank, r.rank) if r else rank, unit or r))

    one = doc.objects[0] if len(doc.objects) == 1 and isinstance(doc.objects[0], CONTAINERS) else None
    push(one, roots(doc), [], 0, None)
    while stack:
        v, path, rank, unit = stack.pop()
        if isinstance(v, (*SHAREABLE, Storage)):
            if best.get(id(v), LEVEL_RANK["heavy"] + 1) <= rank:
                continue
            again = id(v) in best
            best[id(v)] = rank
            if isinstance(v, Tensor) and again and id(v) in views:
                views[id(v)].rank = min(views[id(v)].rank, rank)
        if isinstance(v, Storage):
            use = uses.setdefault(id(v), StorageUse(v, path))
            use.bare = True
            use.bare_rank = rank if use.bare_rank is None else min(use.bare_rank, rank)
            continue
        if isinstance(v, Tensor) and v.storage is not None and id(v) not in views:
            use = uses.setdefault(id(v.storage), StorageUse(v.storage, path))
            views[id(v)] = View(v, path, unit or role_of(path), rank)
            use.views.append(views[id(v)])
        push(v, labelled_children(v), path, rank, unit)
    return list(uses.values())


def _ends(s: Storage, size: int) -> bytes:
    """The first and last :data:`_ENDS` bytes of the storage's ``size`` bytes (all of a small one)."""
    raw = s.array().view("u1")
    out = bytes(raw[:size]) if size <= 2 * _ENDS else bytes(raw[:_ENDS]) + bytes(raw[size - _ENDS:size])
    s.release()
    return out


def _digest(s: Storage, size: int) -> bytes:
    raw = s.array().view("u1")
    h = hashlib.sha256()
    for i in range(0, size, _CHUNK):
        h.update(raw[i:min(i + _CHUNK, size)])
    s.release()
    return h.digest()


def identical_groups(storages: list[Storage]) -> list[list[int]]:
    """Groups (indices into ``storages``) of two or more storages with one dtype and device and identical
    bytes (spec/inspect.md#inspect-bytes).  Only what tells them apart is read: a storage is compared
    only with others of its dtype, device and size, first by its two ends (a few KB), and hashed whole
    only when those agree with another's."""
    by_shape: dict[tuple[str, str, int], list[int]] = collections.defaultdict(list)
    for i, s in enumerate(storages):
        if s.numel:
            by_shape[(s.dtype.name, s.device, s.numel)].append(i)
    groups: list[list[int]] = []
    to_hash: list[tuple[list[int], int]] = []
    for candidates in by_shape.values():
        if len(candidates) < 2:
            continue
        size = storages[candidates[0]].numel * storages[candidates[0]].dtype.itemsize
        by_ends: dict[bytes, list[int]] = collections.defaultdict(list)
        for i in candidates:
            by_ends[_ends(storages[i], size)].append(i)
        for same_ends in by_ends.values():
            if len(same_ends) < 2:
                continue
            if size <= 2 * _ENDS:  # the ends are the whole storage
                groups.append(same_ends)
            else:
                to_hash.append((same_ends, size))
    with progress(sum(len(g) * n for g, n in to_hash), "comparing storages") as done:
        for same_ends, size in to_hash:
            by_hash: dict[bytes, list[int]] = collections.defaultdict(list)
            for i in same_ends:
                by_hash[_digest(storages[i], size)].append(i)
                done(size)
            groups += [g for g in by_hash.values() if len(g) > 1]
    return sorted(groups)


def duplicates(uses: list[StorageUse], long_size: int | None) -> list[list[int]]:
    """Groups (indices into ``uses``) of storages with one dtype and device and identical bytes, two or
    more each (:func:`identical_groups`)."""
    return identical_groups([u.storage for u in uses])


def account(doc: Document, file_size: int) -> dict[str, Any]:
    """The byte accounting of ``doc`` read from a file of ``file_size`` bytes, as the JSON report's
    ``bytes`` member (spec/inspect.md#inspect-json)."""
    t7 = doc.extra.get("t7") or {}
    long_size = t7.get("long_size") if t7.get("mode") == "binary" else None
    uses = collect(doc)
    sizes = [u.file_bytes(long_size) for u in uses]
    item = [width(u.storage, long_size) for u in uses]

    def share(n: int) -> float:
        return round(n / file_size, 6) if file_size else 0.0

    storage_total = sum(sizes)
    storages = []
    for i, u in enumerate(uses):
        reach = u.reachable_elements() * item[i]
        storages.append({
            "id": f"s{i}", "path": u.path, "dtype": u.storage.dtype.name, "numel": u.storage.numel,
            "device": u.storage.device, "bytes": sizes[i], "share": share(sizes[i]),
            "views": len(u.views), "tensors": u.tensors(), "reachable_bytes": reach,
            "unreachable_bytes": sizes[i] - reach, "role": u.role().name, "field": u.field(),
        })
    top: dict[str, int] = {}
    for i, u in enumerate(uses):
        top[u.path[0]] = top.get(u.path[0], 0) + sizes[i]
    own: dict[str, str | None] = {}
    for k, v in roots(doc):
        if k not in own:
            r = key_role(k, v)
            own[k] = r.name if r is not None else None
    top_keys = [{"key": k, "bytes": top.get(k, 0), "share": share(top.get(k, 0)), "role": r}
                for k, r in own.items()]
    by_role: dict[str, dict[str, Any]] = {}
    by_field: dict[tuple[str, str], int] = collections.Counter()
    for i, u in enumerate(uses):
        r = u.role().name
        entry = by_role.setdefault(r, {"role": r, "bytes": 0, "storages": 0, "fields": []})
        entry["bytes"] += sizes[i]
        entry["storages"] += 1
        by_field[(r, u.field())] += sizes[i]
    for (r, f), n in sorted(by_field.items(), key=lambda kv: -kv[1]):
        by_role[r]["fields"].append({"field": f, "bytes": n, "share": share(n)})
    roles = sorted(by_role.values(), key=lambda e: RANK[e["role"]])
    for e in roles:
        e["share"] = share(e["bytes"])
    dup_groups = duplicates(uses, long_size)
    slim_levels = [slim_level(uses, dup_groups, long_size, level) for level in LEVELS]
    unreachable = sum(s["unreachable_bytes"] for s in storages)
    dup_bytes = sum(sizes[g[0]] * (len(g) - 1) for g in dup_groups)
    return {
        "headline": headline(file_size, storages, roles, unreachable, dup_bytes),
        "advice": advice(doc.format, file_size, unreachable, slim_levels),
        "file_bytes": file_size,
        "storage_bytes": storage_total,
        "other_bytes": max(file_size - storage_total, 0),
        "estimated": t7.get("mode") == "ascii",
        "unreachable_bytes": unreachable,
        "unreachable_share": share(unreachable),
        "duplicate_bytes": dup_bytes,
        "duplicates": [{"storages": [f"s{i}" for i in g], "bytes_each": sizes[g[0]],
                        "paths": [uses[i].path for i in g]} for g in dup_groups],
        "top_level": top_keys,
        "roles": roles,
        "slim": slim_levels,
        "storages": storages,
    }


def trimmable(use: StorageUse, kept: list[View]) -> bool:
    """Whether ``slim`` may rewrite the storage to its kept views' span (spec/slim.md#slim-trim): not when
    it holds packed elements or is viewed as another dtype (nor, checked by the caller, when it is kept
    as a value of its own)."""
    s = use.storage
    return s.dtype.per_byte == 1 and all(v.tensor.dtype == s.dtype for v in kept)


def slim_level(uses: list[StorageUse], groups: list[list[int]], long_size: int | None,
               level: str) -> dict[str, Any]:
    """What ``slim --level LEVEL`` leaves of the storages (spec/inspect.md#inspect-slim): the bytes of
    storages no kept value reaches (``dropped_bytes``), outside the span the kept views use
    (``trimmed_bytes``), less those a ``.t7`` file of 4-byte longs gains written with 8-byte ones
    (``widened_bytes``); and under ``tie_equal`` the same figures for ``slim --tie-equal``, which also
    makes the storages of each group of equal bytes one (``tied_bytes``, spec/slim.md#slim-tie-equal)."""
    out = _level(uses, [], long_size, level)
    del out["tied_bytes"]
    tie = _level(uses, groups, long_size, level)
    out["tie_equal"] = {k: tie[k] for k in ("storage_bytes_after", "saved_bytes", "tied_bytes")}
    return out


def _level(uses: list[StorageUse], groups: list[list[int]], long_size: int | None,
           level: str) -> dict[str, Any]:
    rank = LEVEL_RANK[level]
    kept = [[v for v in u.views if v.rank <= rank] for u in uses]
    bare = [u.bare_rank is not None and u.bare_rank <= rank for u in uses]
    alive = [bool(k) or b for k, b in zip(kept, bare, strict=True)]
    dropped = sum(u.file_bytes(long_size) for u, a in zip(uses, alive, strict=True) if not a)
    tied, into = 0, list(range(len(uses)))
    for g in groups:
        members = [i for i in g if kept[i] and not bare[i]]
        for i in members[1:]:
            into[i] = members[0]
            tied += uses[i].file_bytes(long_size)
            kept[members[0]] = kept[members[0]] + kept[i]
    trimmed = widened = after = 0
    for i, u in enumerate(uses):
        if not alive[i] or into[i] != i:
            continue
        numel = u.storage.numel
        if not bare[i] and trimmable(u, kept[i]):
            spans = [sp for v in kept[i] if (sp := span(v.tensor)) is not None]
            numel = max((b for _, b in spans), default=0) - min((a for a, _ in spans), default=0)
        w = width(u.storage, long_size)
        trimmed += (u.storage.numel - numel) * w
        widened += numel * (u.storage.dtype.itemsize - w)
        after += numel * u.storage.dtype.itemsize
    return {"level": level, "storage_bytes_after": after, "saved_bytes": dropped + tied + trimmed - widened,
            "dropped_bytes": dropped, "tied_bytes": tied, "trimmed_bytes": trimmed,
            "widened_bytes": widened}


def storage_bytes(doc: Document) -> int:
    """The bytes of every storage of ``doc`` as its file holds them, each counted once."""
    t7 = doc.extra.get("t7") or {}
    long_size = t7.get("long_size") if t7.get("mode") == "binary" else None
    return sum(u.file_bytes(long_size) for u in collect(doc))


#: A share of the file at least this large is named in the headline (spec/inspect.md#inspect-bytes).
HEADLINE_SHARE = 0.25


def headline(file_size: int, storages: list[dict[str, Any]], roles: list[dict[str, Any]], unreachable: int,
             dup_bytes: int) -> str | None:
    """One sentence naming what takes most of the file when it is not what the model computes with:
    bytes no view reaches (counted per storage holding them), storages whose bytes merely equal another's,
    or a role other than weights and running statistics."""
    if not file_size:
        return None
    pct = lambda n: f"{100 * n / file_size:.1f}%"  # noqa: E731
    if unreachable >= HEADLINE_SHARE * file_size:
        holders = sorted((x for x in storages if x["unreachable_bytes"]),
                         key=lambda x: -x["unreachable_bytes"])
        worst = holders[0]
        view = (f"{'.'.join(worst['path'])} is a view of {worst['reachable_bytes']:,} bytes into a storage "
                f"of {worst['bytes']:,} bytes ({worst['numel']:,} {worst['dtype']} elements), saved whole")
        if len(holders) == 1:
            return f"{pct(unreachable)} of the file is saved but unreachable: {view}"
        return (f"{pct(unreachable)} of the file ({unreachable:,} bytes) is saved but unreachable, in "
                f"{len(holders)} storages; the most, {pct(worst['unreachable_bytes'])} of the file "
                f"({worst['unreachable_bytes']:,} bytes), where {view}")
    if dup_bytes >= HEADLINE_SHARE * file_size:
        return (f"{pct(dup_bytes)} of the file is storages whose bytes equal another storage's: separate "
                "tensors, as torch loads them (not one tensor saved twice; slim --tie-equal makes them one "
                "only when asked)")
    spare = [r for r in roles if not BY_NAME[r["role"]].module_state and r["role"] != OTHER.name]
    if spare:
        top = max(spare, key=lambda r: r["bytes"])
        if top["bytes"] >= HEADLINE_SHARE * file_size:
            fields = ", ".join(f["field"].strip("()") for f in top["fields"][:4])
            return (f"{pct(top['bytes'])} of the file is {top['role']} ({fields}), which inference does "
                    "not need")
    return None


#: The share of the file a waste must reach for :func:`advice` to name how to avoid it.
ADVICE_SHARE = 0.01


def advice(fmt: str, file_size: int, unreachable: int,
           levels: list[dict[str, Any]]) -> str | None:
    """One sentence on how to save the file without its waste next time (spec/inspect.md#inspect-bytes),
    for the larger of: bytes no view reaches, what ``slim --level light`` leaves out; None when neither
    reaches :data:`ADVICE_SHARE` of the file.  Storages with equal bytes get none: they are separate
    tensors (a fresh BatchNorm's ``weight`` and ``running_var`` both hold ones), not waste
    (spec/inspect.md#inspect-equal-bytes)."""
    light = next((lv for lv in levels if lv["level"] == "light"), None)
    left_out = light["dropped_bytes"] if light else 0
    waste = max((unreachable, "unreachable"), (left_out, "left_out"))
    if not file_size or waste[0] < ADVICE_SHARE * file_size:
        return None
    lua = fmt.startswith("t7")
    if waste[1] == "unreachable" and not lua:
        return ("next time, save a copy of each slice, not the view (torch.save(x[10:15].clone()) writes 5 "
                "elements, x[10:15] all of x's storage); torchfmt slim trims this file")
    if lua:
        return ("next time, call model:clearState() before torch.save (it empties output, gradInput and the "
                "other buffers; dpnn's nn.Serial(model):lightSerial() also leaves out gradWeight and "
                "gradBias); torchfmt slim --level light empties them here")
    return ("next time, save model.state_dict() alone for inference, apart from the optimizer state and "
            "gradients; torchfmt slim --level light leaves them out here")


def human_bytes(n: int) -> str:
    """``n`` bytes in B, kB, MB, GB or TB: decimal units (powers of 1000, as file managers show them),
    the SI prefixes saying so (``kB``; a binary size would say ``KiB``); spec/inspect.md#inspect-text."""
    for unit, scale in (("TB", 10**12), ("GB", 10**9), ("MB", 10**6), ("kB", 10**3)):
        if n >= scale:
            return f"{n / scale:.1f} {unit}"
    return f"{n} B"
