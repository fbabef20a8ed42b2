"""``torchfmt slim``: save only what matters of a checkpoint (spec/slim.md#slim-cli).

Small functions over the object model, written back with :func:`torchfmt.writer.write`:

- :func:`drop_pt`: trainer-checkpoint keys (optimizer state, gradients, EMA copies, named keys)
  (spec/slim.md#slim-pt-drop);
- :func:`empty_t7`: the fields dpnn's ``nn.Serial`` empties at its ``medium`` and ``light`` levels become
  empty tensors of the same type (spec/slim.md#slim-t7-levels);
- :func:`tie_equal_storages`: with ``--tie-equal`` only, storages with the same dtype, device and bytes
  become one (spec/slim.md#slim-tie-equal): equal bytes are not one storage, so by default each stays
  its own (spec/slim.md#slim-identity);
- :func:`trim_storages`: each storage becomes the smallest span its tensors use; every tensor keeps its
  shape and strides, its offset moves by the span's start, and tensors that shared a storage share the
  new one (spec/slim.md#slim-trim).

What each level leaves out is the one table of roles (:mod:`torchfmt.tools.roles`), and the byte figures are
the one byte accounting (:mod:`torchfmt.tools.sizes`): ``torchfmt inspect`` predicts, per level, the bytes
these steps save (spec/inspect.md#inspect-slim).
"""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ..errors import quote
from ..model import Document, LuaTable, Storage, Tensor, TorchObject
from ..t7.encodings import Hints
from ..walk import values
from ..writer import write
from ..writer.atomic import atomic_file
from .convert import ConvertError, check_extension, check_output, checked
from .progress import CountingFile, progress
from .reading import read
from .roles import GROUPS, LEVELS, is_module, kept, key_role, module_field_role, node_data, node_field_role
from .sizes import human_bytes, identical_groups, span, storage_bytes

#: ``--drop`` groups of ``.pt`` trainer checkpoints (each a role of :data:`torchfmt.tools.roles.ROLES`).
PT_GROUPS = tuple(GROUPS)


@dataclass
class SlimReport:
    """What ``slim`` did or, with ``dry_run``, would do (one line, or ``--json``)."""

    source: str
    output: str
    source_format: str
    output_format: str
    level: str
    dry_run: bool = False
    bytes_before: int = 0
    bytes_after: int | None = 0
    storage_bytes_before: int = 0
    storage_bytes_after: int = 0
    storages_trimmed: int = 0
    tie_equal: bool = False  # --tie-equal: equal storages made one (spec/slim.md#slim-tie-equal)
    storages_tied: int = 0
    dropped: list[str] = field(default_factory=list)
    written: bool = True  # False: nothing to save, no file written (spec/slim.md#slim-no-gain), or a dry run
    would_write: bool = True  # what ``written`` would have been without --dry-run (spec/slim.md#slim-report)

    def line(self) -> str:
        if not self.would_write:
            why = ("no storage to trim or tie and nothing to leave out" if self.bytes_after is None
                   else f"the rewrite would be {human_bytes(self.bytes_after)}, not smaller")
            size = human_bytes(self.bytes_before)
            return (f"slim {self.source} ({self.source_format}, {size}): nothing to save "
                    f"at level {self.level} ({why}); no file written (--force writes it anyway)")
        verb = "would write" if self.dry_run else "wrote"
        saved = self.bytes_before - (self.bytes_after or 0)
        share = f" ({100 * saved / self.bytes_before:.1f}% smaller)" if self.bytes_before else ""
        drop = ""
        if self.dropped:
            shown = ", ".join(self.dropped[:8]) + (f" and {len(self.dropped) - 8} more"
                                                  if len(self.dropped) > 8 else "")
            drop = f"; dropped {len(self.dropped)}: {shown}"
        tied = (f", {_storages(self.storages_tied)} with equal bytes tied to another (--tie-equal: they now "
                "share one storage)" if self.tie_equal else "")
        return (f"slim {self.source} ({self.source_format}, {human_bytes(self.bytes_before)}): {verb} "
                f"{self.output} ({self.output_format}, {human_bytes(self.bytes_after or 0)}){share}, "
                f"level {self.level}; {_storages(self.storages_trimmed)} trimmed{tied}{drop}")

    def json(self) -> dict[str, Any]:
        return dataclasses.asdict(self)


def _storages(n: int) -> str:
    """``1 storage``, ``2 storages``: the report's line says what a user reads aloud."""
    return f"{n} storage" if n == 1 else f"{n} storages"


# -- the object graph ----------------------------------------------------------------------------

def storage_users(obj: Any) -> tuple[dict[int, list[Tensor]], dict[int, Storage], set[int]]:
    """Storage id -> the dense tensors viewing it, id -> storage, and the ids of storages reached
    as values of their own (kept whole: nothing says which of their elements matter)."""
    users: dict[int, list[Tensor]] = {}
    storages: dict[int, Storage] = {}
    bare: set[int] = set()
    for v in values(obj):
        if isinstance(v, Tensor) and v.storage is not None:
            storages[id(v.storage)] = v.storage
            users.setdefault(id(v.storage), []).append(v)
        elif isinstance(v, Storage):
            storages[id(v)] = v
            bare.add(id(v))
    return users, storages, bare


# -- the steps -----------------------------------------------------------------------------------

def trim_storages(obj: Any) -> int:
    """Rewrite each storage to the span its tensors use (spec/slim.md#slim-trim); the number
    of storages made smaller.  Tensors are changed in place, so everything that held them still does."""
    users, storages, bare = storage_users(obj)
    trimmed = 0
    for sid in list(users):
        storage, tensors = storages[sid], users[sid]
        if sid in bare or storage.dtype.per_byte > 1 or any(t.dtype != storage.dtype for t in tensors):
            continue  # packed or reinterpreted elements: the span is not in the storage's elements
        spans = [s for s in map(span, tensors) if s is not None]
        lo = min((s[0] for s in spans), default=0)
        hi = max((s[1] for s in spans), default=0)
        if (lo, hi) == (0, storage.numel):
            continue
        data = np.array(storage.array()[lo:hi], copy=True)
        new = Storage(storage.dtype, hi - lo, storage.device, data=data, viewed=storage.viewed)
        for t, s in zip(tensors, map(span, tensors), strict=True):
            t.storage = new
            t.storage_offset = t.storage_offset - lo if s is not None else 0
        storage.release()
        trimmed += 1
    return trimmed


def tie_equal_storages(obj: Any) -> int:
    """Make storages of the same dtype, device and bytes one storage (``--tie-equal``,
    spec/slim.md#slim-tie-equal); the number of storages tied to another.  This changes what the file
    means (a write through one tensor then shows in the other), so only an explicit option asks for it.
    Only what tells storages apart is read (:func:`torchfmt.tools.sizes.identical_groups`)."""
    users, storages, bare = storage_users(obj)
    ids = [sid for sid in users if sid not in bare and storages[sid].numel]
    tied = 0
    for group in identical_groups([storages[sid] for sid in ids]):
        keep = storages[ids[group[0]]]
        for i in group[1:]:
            for t in users[ids[i]]:
                t.storage = keep
            tied += 1
    return tied


def _dropped_key(key: Any, value: Any, level: str, groups: Iterable[str]) -> bool:
    """Whether a ``.pt`` dict entry goes: its key's role (:func:`torchfmt.tools.roles.key_role`) is one
    ``level`` leaves out, or one of the ``--drop`` groups."""
    role = key_role(key, value)
    return role is not None and (not kept(role, level) or role.group in groups)


def drop_pt(obj: Any, level: str, drops: Iterable[str] = ()) -> list[str]:
    """Remove trainer-checkpoint keys (spec/slim.md#slim-pt-drop): every dict key, at any depth, of a role
    ``level`` leaves out or of a group of :data:`PT_GROUPS` in ``drops``; any other name in ``drops``
    the key of that name of the top-level dict, else the dotted path through nested dicts.  The dotted
    names removed."""
    dropped: list[str] = []
    groups = [d for d in drops if d in PT_GROUPS]
    for name in (d for d in drops if d not in PT_GROUPS):
        if not _drop_path(obj, name):
            keys = quote(list(obj)[:10]) if isinstance(obj, dict) else "none"
            raise ConvertError("drop-key", f"--drop {quote(name)}: no such key (top-level keys: {keys})")
        dropped.append(name)
    _drop_groups(obj, level, groups, "", dropped, set())
    return dropped


def _drop_path(obj: Any, name: str) -> bool:
    if isinstance(obj, dict) and name in obj:
        del obj[name]
        return True
    head, dot, rest = name.partition(".")
    return bool(dot) and isinstance(obj, dict) and head in obj and _drop_path(obj[head], rest)


def _drop_groups(obj: Any, level: str, groups: list[str], prefix: str, dropped: list[str],
                 seen: set[int]) -> None:
    if id(obj) in seen:
        return
    seen.add(id(obj))
    if isinstance(obj, dict):
        for key in list(obj):
            if _dropped_key(key, obj[key], level, groups):
                del obj[key]
                dropped.append(f"{prefix}{key}")
        for key, value in obj.items():
            _drop_groups(value, level, groups, f"{prefix}{key}.", dropped, seen)
    elif isinstance(obj, (list, tuple)):
        for i, value in enumerate(obj):
            _drop_groups(value, level, groups, f"{prefix}{i}.", dropped, seen)


def t7_emptied(name: Any, class_name: str, level: str, extra: Iterable[str] = ()) -> bool:
    """Whether ``level`` (or ``--drop``'s ``extra`` names) empties the field ``name`` of an ``nn`` module
    of ``class_name``: its role (:func:`torchfmt.tools.roles.module_field_role`) is one the level leaves
    out."""
    role = module_field_role(name, class_name)
    return (role is not None and not kept(role, level)) or name in extra


def _node_entry_removed(name: Any, level: str) -> bool:
    """Whether ``level`` removes the entry ``name`` of an ``nngraph.Node``'s data table (set to nil, as
    nngraph's ``gModule:clearState`` does)."""
    role = node_field_role(name)
    return role is not None and not kept(role, level)


def empty_like(v: Any) -> Any:
    """What ``clearState``/``nn.Serial`` leave: a tensor of the same type without dimensions or storage,
    an empty table."""
    if isinstance(v, Tensor):
        return Tensor(v.dtype, (), (), 0, None, v.device, lua=True)
    return LuaTable()


def empty_t7(obj: Any, level: str, extra: Iterable[str] = ()) -> list[str]:
    """Empty the fields ``level`` (and ``extra``) names in every ``nn`` module reachable from ``obj``
    (spec/slim.md#slim-t7-levels); a value emptied in several places becomes one empty value, so
    sharing stays sharing.  The names of the emptied fields (``<path>.<field>``)."""
    extra = tuple(extra)
    emptied: dict[int, Any] = {}
    nodes: set[int] = set()  # nngraph node data tables done (forward and backward nodes share them)
    dropped: list[str] = []
    seen: set[int] = set()
    stack: list[tuple[Any, str]] = [(obj, "")]
    while stack:
        v, path = stack.pop()
        if id(v) in seen:
            continue
        seen.add(id(v))
        if isinstance(v, TorchObject) and is_module(v):
            items = v.value.items
            for i, (k, x) in enumerate(items):
                if isinstance(x, (Tensor, LuaTable)) and t7_emptied(k, v.class_name, level, extra) \
                        and not _is_empty(x):
                    items[i] = (k, emptied.setdefault(id(x), empty_like(x)))
                    dropped.append(f"{path}{k}")
            v.value.__dict__.pop("_by_key", None)  # the table's index is stale
        data = node_data(v)
        if data is not None and id(data) not in nodes:
            nodes.add(id(data))
            kept_items = [(k, x) for k, x in data.items if not _node_entry_removed(k, level)]
            dropped += [f"{path}data.{k}" for k, x in data.items if _node_entry_removed(k, level)]
            data.items[:] = kept_items
            data.__dict__.pop("_by_key", None)
        if isinstance(v, TorchObject):
            stack.append((v.value, path))
        elif isinstance(v, LuaTable):
            for k, x in reversed(v.items):
                name = (str(int(k)) if isinstance(k, float) and k.is_integer() else
                        k if isinstance(k, str) else f"<{type(k).__name__}>")  # never a value's repr
                stack.append((x, f"{path}{name}."))
    return dropped


def _is_empty(v: Any) -> bool:
    if isinstance(v, Tensor):
        return v.storage is None and not v.shape
    return not v.items


# -- the command ---------------------------------------------------------------------------------

class _Count:
    """A file that only counts what is written to it (``--dry-run``)."""

    def __init__(self) -> None:
        self.size = 0

    def write(self, data: bytes | memoryview) -> int:
        n = memoryview(data).nbytes
        self.size += n
        return n


#: The variant ``slim`` writes for each input variant: the same one where the writer has it.
OUTPUT_FORMAT = {"pt-zip": "pt-zip", "pt-legacy": "pt-legacy", "pt-tar": "pt-zip",
                 "t7-binary": "t7-binary", "t7-ascii": "t7-ascii"}


def slim(source: str, output: str, level: str = "heavy", drop: Iterable[str] = (), *,
         dry_run: bool = False, force: bool = False, tie_equal: bool = False,
         hints: Hints | None = None) -> SlimReport:
    """Slim the file ``source`` into ``output`` (see the module docstring); ``dry_run`` writes nothing,
    ``tie_equal`` makes storages with equal bytes one (``--tie-equal``); ``hints`` are the ``.t7``
    reading hints."""
    if level not in LEVELS:
        raise ConvertError("slim-level", f"--level {quote(level)} is not one of {', '.join(LEVELS)}")
    check_output(source, output, force, "slim", dry_run=dry_run)
    doc = read(source, hints)
    if doc.format not in OUTPUT_FORMAT:
        raise ConvertError("torchscript-archive",
                           f"slim reads checkpoints; a {doc.format} file is not one the writer writes")
    if len(doc.objects) != 1:
        raise ConvertError("multi-object", f"the stream holds {len(doc.objects)} objects; slim writes one")
    obj = doc.objects[0]
    out_format = OUTPUT_FORMAT[doc.format]
    check_extension(output, out_format, f"slim writes the input's variant: {out_format}")
    report = SlimReport(source, output, doc.format, out_format, level, dry_run, tie_equal=tie_equal,
                        bytes_before=os.path.getsize(source), storage_bytes_before=storage_bytes(doc))
    drop = list(drop)
    if doc.format.startswith("t7"):
        report.dropped = empty_t7(obj, level, drop)
    else:
        report.dropped = drop_pt(obj, level, drop)
    report.storages_tied = tie_equal_storages(obj) if tie_equal else 0
    report.storages_trimmed = trim_storages(obj)
    report.storage_bytes_after = storage_bytes(Document(out_format, [obj]))
    fmt, mode = ("t7", out_format[3:]) if out_format.startswith("t7") else (out_format, "binary")
    if not force and not (report.dropped or report.storages_tied or report.storages_trimmed):
        report.written = report.would_write = False  # nothing to save: not even a rewrite
        report.bytes_after = None
        return report
    if dry_run:
        sink = _Count()
        write(obj, sink, fmt, t7_mode=mode, path=output)  # type: ignore[arg-type]
        report.bytes_after = sink.size
        report.would_write = force or sink.size < report.bytes_before
        report.written = False  # a dry run writes nothing
        return report
    try:
        with progress(report.storage_bytes_after, "slim: writing") as done, \
                atomic_file(output, check=lambda tmp: checked(tmp, obj, out_format)) as f:
            write(obj, CountingFile(f, done), fmt, t7_mode=mode, path=output)  # type: ignore[arg-type]
            if not force and f.tell() >= report.bytes_before:
                report.bytes_after = f.tell()
                raise _NoGain  # the temporary file goes, the output is never created
    except _NoGain:
        report.written = report.would_write = False
        return report
    report.bytes_after = os.path.getsize(output)
    return report


class _NoGain(Exception):
    """The rewrite is no smaller than the input: ``slim`` writes nothing (spec/slim.md#slim-no-gain)."""
