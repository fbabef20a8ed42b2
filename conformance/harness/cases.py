"""Discover and validate the cases: committed ones and the corpus tier.

Committed cases live in ``conformance/cases/<format>/<id>/case.yaml`` (schema in conformance/README.md; it
is validated strictly: unknown keys, missing fields, bad values, features outside features.yaml and
error codes outside the closed set are problems, and a case with problems fails).  The corpus tier
reads ``../shared/corpus`` (or ``$TORCHFMT_CORPUS``) in place, never copying a file: each file with a
``*.expected.json`` beside it is a case; ``{"error": ...}`` means it must be rejected.  The committed
``conformance/corpus.yaml`` adds features, spec anchors and notes to corpus files
(spec/README.md#traceability).
"""

from __future__ import annotations

import json
import os
import re
from dataclasses import dataclass, field, fields, replace
from pathlib import Path
from typing import Any

import yaml

from . import strict_json
from .expected import ExpectedError, load_expected
from .vocabulary import (
    ANCHOR_RE,
    CATEGORIES,
    CONFORMANCE,
    ERRORS_FILE,
    FEATURES_FILE,
    FORMATS,
    HINT_VALUES,
    ROOT,
    error_codes,
    features,
    load_yaml,
)

CASES_DIR = CONFORMANCE / "cases"
#: Corpus folders read as the corpus tier (t7/lua-torch is imported as committed cases instead).
CORPUS_TIERS = ("t7/torchfile", "t7/wild", "pt/wild")
#: Per corpus file (path under the corpus root): extra features, spec anchors and notes.
CORPUS_METADATA = CONFORMANCE / "corpus.yaml"
CORPUS_METADATA_KEYS = ("features", "spec", "notes")
TOP_REQUIRED = ("id", "category", "format", "file", "features", "spec", "provenance", "expect")
TOP_OPTIONAL = ("hints", "canary", "lua")
#: case.yaml ``lua``: what real Lua Torch did with a .t7 case's file, written by conformance/lua_verdicts.py
#: (never by hand): ``verdict`` reading every object of the stream with the case's hints, ``torch_load``
#: reading the first only (as torch.load does) when that differs, ``detail`` (torch7's message or what it
#: loaded), ``sha256`` (the file judged), ``expected`` (accept cases: ``same`` or the differences from
#: expected.json), ``stricter`` (why the spec rejects what Lua loads; the case then has stricter-than-lua).
LUA_VERDICTS = ("loads", "refuses", "crashes", "timeout", "declined")
LUA_KEYS = {"verdict": True, "detail": True, "sha256": True, "torch_load": False, "expected": False,
            "stricter": False}
#: A case's canary: a file its payload would create if a reader ran code from it (runner.CANARY is the
#: harness's own); committed pickles name it literally, so it lives directly under /tmp.
CANARY_RE = re.compile(r"^/tmp/torchfmt-canary-[a-z0-9][a-z0-9._-]*$")
PROVENANCE_REQUIRED = ("writer", "generator")
PROVENANCE_OPTIONAL = ("notes",)


@dataclass
class Case:
    """One case, committed or from the corpus.

    ``accept_ok``/``reject_ok`` say which outcomes can pass: accept = (True, False), reject = (False,
    True), impl = both.  ``description`` is the expected description (``None``: any well-formed one);
    ``errors`` the acceptable codes (empty: any code of the closed set).
    """

    id: str
    tier: str  # "committed" | "corpus"
    category: str
    format: str
    path: Path
    features: list[str] = field(default_factory=list)
    spec: list[str] = field(default_factory=list)
    hints: dict[str, Any] = field(default_factory=dict)
    description: dict[str, Any] | None = None
    errors: tuple[str, ...] = ()
    provenance: dict[str, Any] = field(default_factory=dict)
    problems: list[str] = field(default_factory=list)
    canaries: tuple[Path, ...] = ()
    #: The case folder not read yet (``committed_cases(lazy=True)``: only its id, format and tier are
    #: known, so that selecting one case reads one): :meth:`loaded` reads it.
    pending: Path | None = field(default=None, repr=False, compare=False)

    def loaded(self) -> Case:
        """This case read and checked, its problems recorded (once; a no-op for a case read already)."""
        if self.pending is not None:
            folder, self.pending = self.pending, None
            read = _remembered(folder, self.id) or _load_committed(folder)
            for f in fields(self):
                if f.name not in ("id", "tier", "format", "pending"):  # what the listing knew
                    setattr(self, f.name, getattr(read, f.name))
        return self

    @property
    def accept_ok(self) -> bool:
        return self.category in ("accept", "impl")

    @property
    def reject_ok(self) -> bool:
        return self.category in ("reject", "impl")

    @property
    def trusted(self) -> bool:
        """A committed accept case written by a real writer: the only kind a reader that runs code from
        files (an adapter with ``trusted_only``, harness/readers.py) is ever given."""
        writer = str(self.provenance.get("writer", ""))
        return self.tier == "committed" and self.category == "accept" and not writer.startswith("generated")

    @property
    def column(self) -> str:
        """The results-matrix column: the category, or ``corpus`` for the corpus tier."""
        return "corpus" if self.tier == "corpus" else self.category


# -- committed cases -------------------------------------------------------------------------------

def _check_description_doc(doc: object, fmt: str) -> list[str]:
    if not isinstance(doc, dict):
        return ["the expected description is not a JSON object"]
    if "error" in doc:
        return ["the expected description is an error document; use category reject"]
    problems = []
    if doc.get("format") != fmt:
        problems.append(f"expected description has format {doc.get('format')!r}, case says {fmt!r}")
    if not isinstance(doc.get("objects"), list):
        problems.append("expected description has no objects list")
    if not isinstance(doc.get("storages"), dict):
        problems.append("expected description has no storages object")
    return problems


def _str_list(value: object, what: str, problems: list[str]) -> list[str]:
    if not isinstance(value, list) or not value or not all(isinstance(x, str) and x for x in value):
        problems.append(f"{what} must be a non-empty list of strings")
        return []
    if len(set(value)) != len(value):
        problems.append(f"{what} has duplicates")
    return list(value)


def _codes(expect: dict[str, Any], problems: list[str]) -> tuple[str, ...]:
    closed = error_codes()
    if "error" in expect and "errors" in expect:
        problems.append("expect: give error or errors, not both")
    if "error" in expect:
        codes = [expect["error"]] if isinstance(expect["error"], str) else None
        if codes is None:
            problems.append("expect.error must be one error code")
            return ()
    elif "errors" in expect:
        codes = _str_list(expect["errors"], "expect.errors", problems)
    else:
        return ()
    bad = [c for c in codes if c not in closed]
    if bad:
        problems.append(f"error codes not in the closed set (errors.py): {bad}")
    return tuple(codes)


def _hints(value: object, fmt: str, problems: list[str]) -> dict[str, Any]:
    if not fmt.startswith("t7-"):
        problems.append("hints are for .t7 cases only")
        return {}
    if not isinstance(value, dict) or not value:
        problems.append("hints must be a non-empty mapping")
        return {}
    out = {}
    for k, v in value.items():
        if k not in HINT_VALUES:
            problems.append(f"unknown hint {k!r} (allowed: {sorted(HINT_VALUES)})")
        elif v not in HINT_VALUES[k] or isinstance(v, bool):
            problems.append(f"hint {k}={v!r} not one of {HINT_VALUES[k]}")
        else:
            out[k] = v
    mode = out.get("mode")
    if mode is not None and f"t7-{mode}" != fmt:
        problems.append(f"hint mode={mode} contradicts format {fmt}")
    return out


def load_case(folder: Path) -> Case:
    """Read and validate ``folder/case.yaml``; problems are recorded on the case, never raised."""
    fmt_dir, name = folder.parent.name, folder.name
    case = Case(id=f"{fmt_dir}/{name}", tier="committed", category="?", format=fmt_dir, path=folder)
    p = case.problems
    try:
        data = load_yaml(folder / "case.yaml")
    except FileNotFoundError:
        p.append("case folder without case.yaml")
        return case
    except (OSError, yaml.YAMLError) as e:
        p.append(f"case.yaml does not parse: {e}")
        return case
    if not isinstance(data, dict):
        p.append("case.yaml is not a mapping")
        return case
    missing = [k for k in TOP_REQUIRED if k not in data]
    unknown = [k for k in data if k not in TOP_REQUIRED + TOP_OPTIONAL]
    if missing:
        p.append(f"missing fields: {missing}")
    if unknown:
        p.append(f"unknown fields: {unknown}")

    if data.get("id") != case.id:
        p.append(f"id {data.get('id')!r} must be {case.id!r} (\"<format>/<folder name>\")")
    fmt = data.get("format")
    if fmt not in FORMATS:
        p.append(f"format {fmt!r} not one of {FORMATS}")
    elif fmt != fmt_dir:
        p.append(f"format {fmt!r} but the case lives under cases/{fmt_dir}/")
    category = data.get("category")
    if category not in CATEGORIES:
        p.append(f"category {category!r} not one of {CATEGORIES}")
    else:
        case.category = category

    file = data.get("file")
    if not isinstance(file, str) or not file or "/" in file or "\\" in file or file.startswith("."):
        p.append(f"file {file!r} must be a plain file name inside the case folder")
    elif not (folder / file).is_file():
        p.append(f"file {file!r} does not exist in the case folder")
    else:
        case.path = folder / file

    vocab = features()
    case.features = _str_list(data.get("features"), "features", p)
    unknown_features = [f for f in case.features if f not in vocab]
    if unknown_features:
        p.append(f"features not in conformance/features.yaml: {unknown_features}")
    case.spec = _str_list(data.get("spec"), "spec", p)
    bad_anchors = [a for a in case.spec if not ANCHOR_RE.match(a)]
    if bad_anchors:
        p.append(f"spec anchors must look like file.md#anchor: {bad_anchors}")

    prov = data.get("provenance")
    if not isinstance(prov, dict):
        p.append("provenance must be a mapping")
    else:
        for k in PROVENANCE_REQUIRED:
            if not isinstance(prov.get(k), str) or not prov[k].strip():
                p.append(f"provenance.{k} must be a non-empty string")
        extra = [k for k in prov if k not in PROVENANCE_REQUIRED + PROVENANCE_OPTIONAL]
        if extra:
            p.append(f"unknown provenance fields: {extra}")
        if "notes" in prov and not isinstance(prov["notes"], str):
            p.append("provenance.notes must be a string")
        case.provenance = prov

    expect = data.get("expect")
    if not isinstance(expect, dict):
        p.append("expect must be a mapping")
        expect = {}
    extra = [k for k in expect if k not in ("description", "error", "errors")]
    if extra:
        p.append(f"unknown expect fields: {extra}")
    case.errors = _codes(expect, p)
    has_errors = "error" in expect or "errors" in expect
    if category == "accept" and (has_errors or "description" not in expect):
        p.append("an accept case expects a description and no error")
    if category == "reject" and ("description" in expect or not has_errors):
        p.append("a reject case expects error (or errors) and no description")
    if category == "impl" and "description" not in expect and not has_errors:
        p.append("an impl case expects a description, errors, or both")
    if "description" in expect:
        desc = expect["description"]
        if not isinstance(desc, str) or "/" in desc or not (folder / desc).is_file():
            p.append(f"expect.description {desc!r} must name a file in the case folder")
        else:
            try:
                doc = load_expected(folder / desc)
            except (ExpectedError, strict_json.JSONError) as e:
                p.append(f"{desc}: {e}")
            else:
                more = _check_description_doc(doc, str(fmt))
                p.extend(f"{desc}: {m}" for m in more)
                if not more:
                    case.description = doc
    if "hints" in data:
        case.hints = _hints(data["hints"], str(fmt), p)
    if "lua" in data:
        _check_lua(data["lua"], case, p)
    if "canary" in data:
        canary = data["canary"]
        if not isinstance(canary, str) or not CANARY_RE.match(canary):
            p.append(f"canary {canary!r} must be a path /tmp/torchfmt-canary-<name>")
        else:
            case.canaries = (Path(canary),)
    return case


def _check_lua(lua: object, case: Case, problems: list[str]) -> None:
    """case.yaml ``lua`` (see :data:`LUA_KEYS`): well formed, for a .t7 case, and ``stricter`` exactly when
    the case has the feature ``stricter-than-lua``."""
    if not case.format.startswith("t7-"):
        problems.append("lua: only .t7 cases record Lua Torch's verdict")
    if not isinstance(lua, dict):
        problems.append("lua must be a mapping")
        return
    missing = [k for k, required in LUA_KEYS.items() if required and k not in lua]
    unknown = [k for k in lua if k not in LUA_KEYS]
    if missing or unknown:
        problems.append(f"lua: missing {missing}, unknown {unknown}")
    for key in ("verdict", "torch_load"):
        if key in lua and lua[key] not in LUA_VERDICTS:
            problems.append(f"lua.{key} {lua[key]!r} not one of {LUA_VERDICTS}")
    if not all(isinstance(v, str) and v for k, v in lua.items() if k != "expected"):
        problems.append("lua: every field but expected is a non-empty string")
    if ("stricter" in lua) != ("stricter-than-lua" in case.features):
        problems.append("lua.stricter and the feature stricter-than-lua go together")


#: Per cases folder: the fingerprint of its files and the cases read from them (one read per session
#: while nothing changes: the suite's test modules each ask for every case at collection).
_READ: dict[Path, tuple[tuple[tuple[str, int, int], ...], dict[str, Case]]] = {}
#: The same for the corpus tier, per corpus root (with conformance/corpus.yaml in the fingerprint).
_READ_CORPUS: dict[Path, tuple[tuple[tuple[str, int, int], ...], list[Case]]] = {}


def _fingerprint(folder_read: Path, also: tuple[Path, ...] = (ERRORS_FILE,)
                 ) -> tuple[tuple[str, int, int], ...]:
    """(path, size, mtime_ns) of every file under ``folder_read``, of features.yaml and of ``also`` (the
    other files validation reads; -1 for one that is missing)."""
    out = []
    for folder, dirs, files in os.walk(folder_read):
        dirs.sort()
        for name in sorted(files):
            st = os.stat(os.path.join(folder, name))
            out.append((os.path.join(folder, name), st.st_size, st.st_mtime_ns))
    for extra in (*also, FEATURES_FILE):
        st = extra.stat() if extra.exists() else None
        out.append((str(extra), st.st_size if st else -1, st.st_mtime_ns if st else -1))
    return tuple(out)


def _copy(case: Case) -> Case:
    """A case a caller may change without changing the remembered one (descriptions are shared: nothing
    changes an expected description in place)."""
    return replace(case, features=list(case.features), spec=list(case.spec), hints=dict(case.hints),
                   provenance=dict(case.provenance), problems=list(case.problems))


def committed_cases(cases_dir: Path = CASES_DIR, lazy: bool = False) -> list[Case]:
    """Every case folder ``cases/<format>/<id>/``, validated, sorted by id.

    A ``case.yaml`` at any other depth, or a format folder that is not a known format, is reported as a
    case with a problem rather than ignored.  The folder is read again only when a file under it (or
    features.yaml, errors.py) changed since the last read.  ``lazy``: each case is read when it is first
    :meth:`Case.loaded` (the suite's collection: ``-k ONE_CASE`` reads one case), from what the last
    read remembers where it holds the case.
    """
    if not cases_dir.is_dir():
        return []
    if lazy:
        return _read_committed(cases_dir, lazy=True)
    key = cases_dir.resolve()
    fingerprint = _fingerprint(cases_dir)
    seen = _READ.get(key)
    if seen is None or seen[0] != fingerprint:
        seen = _READ[key] = (fingerprint, {c.id: c for c in _read_committed(cases_dir)})
    return [_copy(c) for c in seen[1].values()]


def _load_committed(folder: Path) -> Case:
    """The case in ``folder`` of a cases folder, checked as discovery checks it."""
    case = load_case(folder)
    if folder.parent.name not in FORMATS:
        case.problems.append(f"cases/{folder.parent.name}/ is not a format folder {FORMATS}")
    return case


def _remembered(folder: Path, case_id: str) -> Case | None:
    """A copy of case ``case_id`` (in ``folder``) as the last full read of its cases folder holds it."""
    seen = _READ.get(folder.parent.parent.resolve())
    found = seen[1].get(case_id) if seen else None
    return _copy(found) if found is not None else None


def _read_committed(cases_dir: Path, lazy: bool = False) -> list[Case]:
    out: list[Case] = []
    for fmt_dir in sorted(cases_dir.iterdir()):
        if not fmt_dir.is_dir():
            continue
        for folder in sorted(fmt_dir.iterdir()):
            if folder.is_dir() and not folder.name.startswith((".", "__")):
                if lazy:
                    out.append(Case(id=f"{fmt_dir.name}/{folder.name}", tier="committed", category="?",
                                    format=fmt_dir.name, path=folder, pending=folder))
                    continue
                out.append(_load_committed(folder))
    known = {c.path.parent if c.path.is_file() else c.path for c in out}
    for stray in cases_dir.rglob("case.yaml"):
        if stray.parent not in known and stray.parent.parent.parent != cases_dir:
            rel = stray.relative_to(cases_dir).as_posix()
            out.append(Case(id=f"stray/{rel}", tier="committed", category="?", format="?",
                            path=stray, problems=[f"case.yaml at the wrong depth: cases/{rel}"]))
    return sorted(out, key=lambda c: c.id)


# -- the corpus tier -------------------------------------------------------------------------------

def corpus_root() -> Path:
    """``$TORCHFMT_CORPUS``, else ``../shared/corpus`` from the project root."""
    env = os.environ.get("TORCHFMT_CORPUS")
    return Path(env) if env else (ROOT.parent / "shared" / "corpus").resolve()


def _provenance_hints(tier_dir: Path, filename: str) -> dict[str, Any]:
    """What PROVENANCE.txt says of a .t7 file's encoding: a per-file format column (binary/ascii) or a
    folder-wide statement such as "(binary mode, little-endian, 8-byte long)"."""
    prov = tier_dir / "PROVENANCE.txt"
    if not prov.is_file():
        return {}
    text = prov.read_text(encoding="utf-8", errors="replace")
    hints: dict[str, Any] = {}
    for line in text.splitlines():
        cols = [c.strip().lower() for c in line.split("|")]
        if len(cols) > 2 and cols[0] == filename.lower():
            modes = [c for c in cols[1:] if c in ("binary", "ascii")]
            if modes:
                hints["mode"] = modes[0]
            break
    folder_wide = re.search(r"\((binary|ascii) mode, (little|big)-endian, ([48])-byte long\)", text)
    if folder_wide and hints.get("mode", folder_wide.group(1)) == folder_wide.group(1):
        hints = {"mode": folder_wide.group(1), "byte_order": folder_wide.group(2),
                 "long_size": int(folder_wide.group(3))}
    binary_is = re.search(r"binary = native (little|big)-endian, int32 \+ int(64|32) longs", text)
    if hints.get("mode") == "binary" and binary_is:
        hints.setdefault("byte_order", binary_is.group(1))
        hints.setdefault("long_size", int(binary_is.group(2)) // 8)
    return hints


def _loaded_with_hints(doc: dict[str, Any]) -> dict[str, Any]:
    """Fallback: the real Lua Torch load settings noted in an expected file's ``_loaded_with``."""
    note = doc.get("_loaded_with")
    if not isinstance(note, str):
        return {}
    m = re.search(r"DiskFile (binary|ascii), longSize=([48]), (little|big)-endian", note)
    if not m:
        return {}
    hints: dict[str, Any] = {"mode": m.group(1)}
    if m.group(1) == "binary":
        hints.update(long_size=int(m.group(2)), byte_order=m.group(3))
    return hints


_PT_PREFIX = {"zip_": "pt-zip", "legacy_": "pt-legacy", "tar_": "pt-tar", "torchscript_": "pt-torchscript"}
_FORMAT_FEATURE = {"pt-zip": "zip-archive", "pt-legacy": "legacy-stream", "pt-tar": "tar-archive",
                   "pt-torchscript": "torchscript-archive", "t7-binary": "t7-binary", "t7-ascii": "t7-ascii"}


def _walk_values(node: Any):
    stack = [node]
    while stack:
        v = stack.pop()
        if isinstance(v, dict):
            yield v
            stack.extend(x for k, x in v.items() if not k.startswith("_"))
        elif isinstance(v, list):
            stack.extend(v)


def _derived_features(doc: dict[str, Any] | None, fmt: str, hints: dict[str, Any]) -> list[str]:
    feats = {_FORMAT_FEATURE[fmt]} if fmt in _FORMAT_FEATURE else set()
    if hints.get("long_size") == 4:
        feats.add("t7-long4")
    if hints.get("byte_order") == "big":
        feats.add("t7-big-endian")
    if doc is not None:
        for s in doc.get("storages", {}).values():
            if isinstance(s, dict) and isinstance(s.get("dtype"), str):
                feats.add(f"dtype-{s['dtype']}")
                if str(s.get("device", "cpu")).startswith("cuda"):
                    feats.add("cuda-location")
        for v in _walk_values(doc.get("objects", [])):
            if v.get("type") == "object":
                feats.add("whole-module")
            elif v.get("type") == "function":
                feats.add("t7-function")
            elif v.get("type") == "torch_object":
                feats.add("t7-torch-object")
        if len(doc.get("objects", [])) > 1:
            feats.add("multi-object")
    return sorted(f for f in feats if f in features())


def corpus_metadata(path: Path = CORPUS_METADATA) -> dict[str, Any]:
    """``files`` of conformance/corpus.yaml: corpus path -> ``{features, spec, notes}`` (unchecked)."""
    if not path.is_file():
        return {}
    data = load_yaml(path)
    files = data.get("files") if isinstance(data, dict) else None
    if not isinstance(files, dict):
        raise ValueError(f"{path}: expected a mapping with a 'files' mapping")
    return files


def _apply_metadata(case: Case, meta: object) -> None:
    """Add a corpus.yaml entry to its corpus case; whatever is wrong with the entry is a problem."""
    p = case.problems
    if not isinstance(meta, dict):
        p.append("corpus.yaml: the entry is not a mapping")
        return
    unknown = [k for k in meta if k not in CORPUS_METADATA_KEYS]
    if unknown:
        p.append(f"corpus.yaml: unknown fields {unknown}")
    if "features" in meta:
        extra = _str_list(meta["features"], "corpus.yaml features", p)
        unknown_features = [f for f in extra if f not in features()]
        if unknown_features:
            p.append(f"corpus.yaml: features not in conformance/features.yaml: {unknown_features}")
        case.features = sorted(set(case.features) | set(extra))
    if "spec" in meta:
        case.spec = _str_list(meta["spec"], "corpus.yaml spec", p)
        bad_anchors = [a for a in case.spec if not ANCHOR_RE.match(a)]
        if bad_anchors:
            p.append(f"corpus.yaml: spec anchors must look like file.md#anchor: {bad_anchors}")
    if "notes" in meta:
        if isinstance(meta["notes"], str):
            case.provenance["notes"] = meta["notes"]
        else:
            p.append("corpus.yaml: notes must be a string")


def _has_opaque_object(doc: dict[str, Any]) -> bool:
    return any(v.get("type") == "object" for v in _walk_values(doc.get("objects", [])))


def corpus_cases(root: Path | None = None, metadata: dict[str, Any] | None = None) -> list[Case]:
    """The corpus tier: every ``<file>.expected.json`` under the tiers of :data:`CORPUS_TIERS`.

    An expected ``{"error": ...}`` makes a reject case (any code).  A ``.pt`` file that real torch could
    load only with ``weights_only=False`` and whose expected description holds opaque ``object`` nodes
    (a pickled module, in the contract's inert form) is an impl case: a strict reader passes it by
    rejecting it with ``unsafe-global`` (spec/canonical.md#canonical-inert).  ``metadata`` (default:
    :func:`corpus_metadata`) adds features, spec anchors and notes to the files it names.
    """
    root = corpus_root() if root is None else root
    if metadata is not None:
        return _read_corpus(root, metadata)
    key = root.resolve()
    fingerprint = _fingerprint(root, (CORPUS_METADATA,)) if root.is_dir() else ()
    seen = _READ_CORPUS.get(key)
    if seen is None or seen[0] != fingerprint or not fingerprint:
        seen = _READ_CORPUS[key] = (fingerprint, _read_corpus(root, corpus_metadata()))
    return [_copy(c) for c in seen[1]]


def _read_corpus(root: Path, metadata: dict[str, Any]) -> list[Case]:
    out: list[Case] = []
    for tier in CORPUS_TIERS:
        tier_dir = root / tier
        if not tier_dir.is_dir():
            continue
        manifest: dict[str, Any] = {}
        if (tier_dir / "manifest.json").is_file():
            manifest = json.loads((tier_dir / "manifest.json").read_text(encoding="utf-8"))
        for expected in sorted(tier_dir.glob("*.expected.json")):
            name = expected.name[: -len(".expected.json")]
            case = Case(id=f"corpus/{tier}/{name}", tier="corpus", category="accept", format="?",
                        path=tier_dir / name,
                        provenance={"writer": f"see {tier}/PROVENANCE.txt",
                                    "generator": f"../shared/corpus/{tier}/{name}"})
            out.append(case)
            if not case.path.is_file():
                case.problems.append(f"{expected.name} has no file {name} beside it")
                continue
            try:
                doc = load_expected(expected)
            except (ExpectedError, strict_json.JSONError) as e:
                case.problems.append(f"{expected.name}: {e}")
                continue
            if not isinstance(doc, dict):
                case.problems.append(f"{expected.name} is not a JSON object")
                continue
            if tier.startswith("t7/"):
                case.hints = _provenance_hints(tier_dir, name) or _loaded_with_hints(doc)
            fmt = doc.get("format")
            if fmt is None and tier.startswith("t7/"):
                fmt = f"t7-{case.hints.get('mode', 'binary')}"
            if fmt is None:
                fmt = next((f for pre, f in _PT_PREFIX.items() if name.startswith(pre)), None)
            if fmt not in FORMATS:
                case.problems.append(f"cannot tell the format of {name}")
                continue
            case.format = fmt
            if "error" in doc:
                case.category = "reject"
                case.features = _derived_features(None, fmt, case.hints)
                continue
            problems = _check_description_doc(doc, fmt)
            if problems:
                case.problems.extend(f"{expected.name}: {m}" for m in problems)
                continue
            case.description = doc
            case.features = _derived_features(doc, fmt, case.hints)
            load = str(manifest.get(name, {}).get("load", ""))
            if "weights_only=False" in load and _has_opaque_object(doc):
                case.category = "impl"
                case.errors = ("unsafe-global",)
    for case in out:
        rel = case.id.removeprefix("corpus/")
        if rel in metadata:
            _apply_metadata(case, metadata[rel])
    return out
