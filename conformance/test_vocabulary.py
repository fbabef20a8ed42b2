"""The suite's closed vocabularies are well-formed and agree with their one home.

features.yaml: sections, sorted, one-line meanings, dtype-* exactly the dtypes of dtypes.py (read as
data).  Spec anchors cited by committed cases exist in spec/ (spec/README.md: every case cites the
requirements it exercises).
"""

from __future__ import annotations

from collections import defaultdict

from conformance.harness import vocabulary
from conformance.harness.cases import committed_cases


def test_features_file_is_well_formed() -> None:
    assert vocabulary.features_problems() == []


def test_dtype_features_are_the_dtype_table() -> None:
    listed = {n for n, f in vocabulary.features().items() if f.section == "dtype"}
    assert listed == {f"dtype-{name}" for name in vocabulary.dtype_names()}


def test_cited_spec_anchors_exist() -> None:
    cited: dict[str, dict[str, list[str]]] = defaultdict(lambda: defaultdict(list))
    for case in committed_cases():
        for ref in case.spec:
            m = vocabulary.ANCHOR_RE.match(ref)
            if m:
                cited[m.group(1)][m.group(2)].append(case.id)
    missing = []
    for name, anchors in sorted(cited.items()):
        path = vocabulary.SPEC_DIR / name
        defined = vocabulary.spec_anchors(path) if path.is_file() else set()
        for anchor, ids in sorted(anchors.items()):
            if anchor not in defined:
                missing.append(f"spec/{name}#{anchor} (cited by {ids[0]}"
                               + (f" and {len(ids) - 1} more)" if len(ids) > 1 else ")"))
    assert not missing, f"{len(missing)} cited anchors are not defined:\n" + "\n".join(missing)
