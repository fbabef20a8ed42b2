"""The closed sets a case may use: formats, categories, error codes, features, spec anchors.

Error codes and dtype names have one home in the reference implementation
(``reference_impl/torchfmt/errors.py``, ``dtypes.py``).  They are read here *as data*, by parsing those
files with :mod:`ast` (nothing is imported or executed), so that the suite can measure a third-party
reader on a machine where torchfmt is not installed, and so that the codes cannot drift from the
reader's (spec/canonical.md#canonical-error-codes).
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass
from functools import cache
from pathlib import Path

import yaml

from .facts import hint_env, t7_hints

ROOT = Path(__file__).resolve().parents[2]
CONFORMANCE = ROOT / "conformance"
FEATURES_FILE = CONFORMANCE / "features.yaml"
ERRORS_FILE = ROOT / "reference_impl" / "torchfmt" / "errors.py"
DTYPES_FILE = ROOT / "reference_impl" / "torchfmt" / "dtypes.py"
SPEC_DIR = ROOT / "spec"

FORMATS = ("pt-zip", "pt-legacy", "pt-tar", "pt-torchscript", "t7-binary", "t7-ascii")
CATEGORIES = ("accept", "reject", "impl")
#: The values each ``.t7`` hint may take, and the environment variable per hint
#: (spec/canonical.md#canonical-t7-hints, its generated table: harness/facts.py).
HINT_VALUES: dict[str, tuple[object, ...]] = {h.key: h.values for h in t7_hints().values()}
HINT_ENV: dict[str, str] = hint_env()
FEATURE_SECTIONS = ("dtype", "layout", "container", "t7", "pickle", "adversarial")
ANCHOR_RE = re.compile(r"^([a-z0-9-]+\.md)#([a-z0-9][a-z0-9-]*)$")
_FEATURE_RE = re.compile(r"^[a-z0-9][a-z0-9_-]*$")


def _module_constant(path: Path, name: str) -> ast.expr:
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    for node in tree.body:
        if isinstance(node, ast.Assign) and any(isinstance(t, ast.Name) and t.id == name
                                                for t in node.targets):
            return node.value
        if isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name) \
                and node.target.id == name and node.value is not None:
            return node.value
    raise LookupError(f"{path}: no module-level assignment to {name}")


@cache
def error_codes() -> frozenset[str]:
    """The closed set of error codes, read from errors.py's ``ERROR_CODES`` literal."""
    codes = ast.literal_eval(_module_constant(ERRORS_FILE, "ERROR_CODES"))
    if not isinstance(codes, dict) or not codes:
        raise LookupError(f"{ERRORS_FILE}: ERROR_CODES is not a non-empty dict literal")
    return frozenset(codes)


def dtype_names() -> list[str]:
    """Dtype names in the order of dtypes.py's ``DTYPES`` table (each entry is ``_d("name", ...)``)."""
    value = _module_constant(DTYPES_FILE, "DTYPES")
    if not isinstance(value, ast.Tuple):
        raise LookupError(f"{DTYPES_FILE}: DTYPES is not a tuple literal")
    names = []
    for elt in value.elts:
        if not (isinstance(elt, ast.Call) and elt.args and isinstance(elt.args[0], ast.Constant)
                and isinstance(elt.args[0].value, str)):
            raise LookupError(f"{DTYPES_FILE}: a DTYPES entry does not start with a name literal")
        names.append(elt.args[0].value)
    return names


@dataclass(frozen=True)
class Feature:
    name: str
    section: str
    meaning: str


#: libyaml's parser where PyYAML was built with it (five times faster over the ~750 case files read at
#: every collection), else the pure-Python one; both build the same documents with the same constructors.
SAFE_LOADER: type[yaml.SafeLoader] = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


def _unique_key_loader() -> type[yaml.SafeLoader]:
    class Loader(SAFE_LOADER):  # type: ignore[valid-type,misc]
        pass

    def construct_mapping(loader: yaml.SafeLoader, node: yaml.MappingNode, deep: bool = False) -> dict:
        seen = set()
        for key_node, _ in node.value:
            key = loader.construct_object(key_node, deep=deep)
            if key in seen:
                raise yaml.constructor.ConstructorError(
                    None, None, f"duplicate key {key!r}", key_node.start_mark)
            seen.add(key)
        return SAFE_LOADER.construct_mapping(loader, node, deep=deep)

    Loader.add_constructor(yaml.resolver.BaseResolver.DEFAULT_MAPPING_TAG, construct_mapping)
    return Loader


YAML_LOADER = _unique_key_loader()


def load_yaml(path: Path) -> object:
    """Parse a YAML file strictly (duplicate keys are an error)."""
    with open(path, encoding="utf-8") as f:
        return yaml.load(f, Loader=YAML_LOADER)  # noqa: S506 - a (C)SafeLoader subclass


def features_problems(path: Path = FEATURES_FILE) -> list[str]:
    """Everything wrong with features.yaml (empty when it is well-formed)."""
    try:
        data = load_yaml(path)
    except (OSError, yaml.YAMLError) as e:
        return [f"{path}: {e}"]
    if not isinstance(data, dict):
        return [f"{path}: not a mapping of sections"]
    problems = []
    if list(data) != [s for s in FEATURE_SECTIONS if s in data] or set(data) != set(FEATURE_SECTIONS):
        problems.append(f"sections must be exactly {list(FEATURE_SECTIONS)} in that order, got {list(data)}")
    seen: dict[str, str] = {}
    for section, entries in data.items():
        if not isinstance(entries, dict) or not entries:
            problems.append(f"section {section!r} is not a non-empty mapping")
            continue
        names = list(entries)
        if names != sorted(names):
            problems.append(f"section {section!r} is not sorted")
        for name, meaning in entries.items():
            if not isinstance(name, str) or not _FEATURE_RE.match(name):
                problems.append(f"{section}: bad feature name {name!r}")
                continue
            if not isinstance(meaning, str) or not meaning.strip() or "\n" in meaning.strip():
                problems.append(f"{section}: {name} needs a one-line meaning")
            if name in seen:
                problems.append(f"{name} is in both {seen[name]!r} and {section!r}")
            seen[name] = section
            if (section == "dtype") != name.startswith("dtype-"):
                problems.append(f"{name}: dtype-* features live in the dtype section, and only they")
    return problems


@cache
def features(path: Path = FEATURES_FILE) -> dict[str, Feature]:
    """The vocabulary: feature name -> :class:`Feature`."""
    data = load_yaml(path)
    out: dict[str, Feature] = {}
    if isinstance(data, dict):
        for section, entries in data.items():
            if isinstance(entries, dict):
                for name, meaning in entries.items():
                    out[str(name)] = Feature(str(name), str(section), str(meaning))
    return out


def spec_anchors(spec_file: Path) -> set[str]:
    """Anchor ids a spec file defines with ``<a id="..."></a>``."""
    return set(re.findall(r'<a\s+id="([^"]+)"\s*>\s*</a>', spec_file.read_text(encoding="utf-8")))
