"""Every committed ``.t7`` case records what real Lua Torch does with its file (case.yaml ``lua``, written by
conformance/lua_verdicts.py; spec/t7.md#where-this-spec-is-stricter), and the record is current.

The first test needs no Lua: each verdict names the file it judged by its hash, so a case added or
regenerated without rerunning ``python -m conformance.lua_verdicts`` fails here.  The second reruns the
script's judgement with ``--check`` where Lua Torch is built (CI), and fails instead of skipping under
TORCHFMT_REQUIRE_ADAPTERS.
"""

from __future__ import annotations

import hashlib
import os
from pathlib import Path

import pytest

from conformance.adapters.luatorch.worker import installed
from conformance.harness.cases import committed_cases

ROOT = Path(__file__).resolve().parents[2]

pytestmark = pytest.mark.spec("t7.md#t7-stream", "canonical.md#canonical-reader-cli")
T7 = [c for c in committed_cases() if c.format.startswith("t7-")]


def _lua(case_dir: Path) -> dict:
    import yaml

    return yaml.safe_load((case_dir / "case.yaml").read_text(encoding="utf-8")).get("lua") or {}


def test_every_t7_case_records_lua_s_verdict_on_its_bytes() -> None:
    missing = [c.id for c in T7 if not _lua(c.path.parent)]
    stale = [c.id for c in T7 if _lua(c.path.parent).get("sha256") not in (
        None, hashlib.sha256(c.path.read_bytes()).hexdigest())]
    assert not missing and not stale, f"rerun conformance/lua_verdicts.py: missing {missing}, stale {stale}"
    # a reject case Lua loads is stricter than Lua and says why; an impl case may be read by a reader (the
    # reference reads spec-nesting-tensor-storage-1025), and lua_verdicts.py marks it only where it refuses
    refused = [c.id for c in T7 if c.category == "reject" and _lua(c.path.parent)["verdict"] == "loads"]
    assert refused and all("stricter-than-lua" in c.features for c in T7 if c.id in refused)


@pytest.mark.skipif(not installed() and not os.environ.get("TORCHFMT_REQUIRE_ADAPTERS"),
                    reason="Lua Torch is not built here (conformance/adapters/lua-torch/setup)")
def test_recorded_verdicts_are_what_lua_does_now() -> None:
    from conformance import lua_verdicts

    assert lua_verdicts.main(["--check"]) == 0


def test_a_regenerated_case_keeps_the_verdict_on_its_own_bytes_only(tmp_path: Path) -> None:
    """The generators rewrite case.yaml (generators/case_folder.py): the Lua verdict stays while the file's
    bytes are the ones it judged, and goes (with stricter-than-lua) when they change."""
    from conformance.generators.case_folder import write_case_folder

    data = b"\x00\x00\x00\x00"
    lua = {"verdict": "loads", "detail": "1 object: nil", "stricter": "why",
           "sha256": hashlib.sha256(data).hexdigest()}
    case = {"id": "t7-binary/x", "features": ["t7-nil"], "lua": lua}
    folder = tmp_path / "t7-binary" / "x"
    write_case_folder(folder, "data.t7", data, case)
    write_case_folder(folder, "data.t7", data, {"id": "t7-binary/x", "features": ["t7-nil"]})
    assert _lua(folder) == lua and "stricter-than-lua" in (folder / "case.yaml").read_text(encoding="utf-8")
    write_case_folder(folder, "data.t7", data + b"\x00", {"id": "t7-binary/x", "features": ["t7-nil"]})
    assert _lua(folder) == {}
    assert "stricter-than-lua" not in (folder / "case.yaml").read_text(encoding="utf-8")
