"""Candidate case folders from the differential mode against any reader (differential/campaign.py).

Each disagreement becomes ``OUT/candidates/<format>/<name>/`` in the suite's case format
(conformance/README.md), written by generators/case_folder.py as every generated case is: the file,
``case.yaml`` whose expectation is the reference's answer (``accept`` with its description, or ``reject``
with its code), ``reader.json`` and ``reference.json`` (both runs: outcome, code, message, description),
and ``truth.json``: what torch 2.13 (``.pt``) or real Lua Torch (``.t7``) did with the file, where they
are installed.  The reference's answer is not the truth: an implementer reads torch's or Lua's verdict
first, and where it differs from the reference the candidate is a reference bug (or a documented stricter
rule) before it is a case.  Copied under ``conformance/cases/<format>/`` (truth checked, features and spec
anchors reviewed), it is a case.
"""

from __future__ import annotations

import importlib.util
import json
import re
import shutil
import tempfile
from pathlib import Path
from typing import Any

from conformance.generators.case_folder import write_case_folder
from conformance.harness.cases import Case
from conformance.harness.runner import Run

from .campaign import Pair
from .run import TORCH_SECONDS, as_run

GENERATOR = "conformance/differential/candidates.py"
#: Features a mutator's edit gives a file (conformance/features.yaml), beside its base case's.
MUTATOR_FEATURES = {"truncate": ["adv-truncated"], "float-text": ["adv-number-text"]}


def run_json(run: Run) -> dict[str, Any]:
    return {"outcome": run.outcome, "status": run.status, "code": run.code, "message": run.message[:2000],
            "problems": run.problems[:5],
            "description": run.description if run.outcome == "accepted" else None}


def name_of(pair: Pair) -> str:
    """``diff-<class>-<base case>-<sha8>``, a folder name the suite accepts."""
    base = pair.variant.origin.split("/", 1)[-1]
    stem = re.sub(r"[^a-z0-9.-]+", "-", f"diff-{pair.finding.klass}-{base}".lower())[:90].strip("-")
    return f"{stem}-{pair.variant.sha256[:8]}"


def write(pair: Pair, out: Path, base: Case, seed: int) -> Path:
    """Write ``pair`` as a candidate under ``out``; its folder."""
    v, ref = pair.variant, pair.reference
    folder = out / "candidates" / v.format / name_of(pair)
    file = "data.t7" if v.format.startswith("t7-") else "data.pt"
    accept = ref.outcome == "accepted"
    case: dict[str, Any] = {
        "id": f"{v.format}/{folder.name}", "category": "accept" if accept else "reject", "format": v.format,
        "file": file, "features": sorted({*base.features, *MUTATOR_FEATURES.get(v.group, [])}),
        "spec": list(base.spec),
        "provenance": {
            "writer": f"generated: the differential mode's {v.group} mutation of {v.origin} "
                      f"(seed {seed}), minimized",
            "generator": GENERATOR,
            "notes": (f"candidate: {pair.finding.klass}: {pair.finding.detail[:300]}; the expectation is the "
                      f"reference's answer, check truth.json before committing"
                      + (f"; shrunk from {pair.shrunk_from} bytes" if pair.shrunk_from else "")),
        },
    }
    if v.hints:
        case["hints"] = dict(v.hints)
    case["expect"] = {} if accept else {"error": ref.code}
    write_case_folder(folder, file, v.data, case, ref.description if accept else None)
    for name, run in (("reader", pair.reader), ("reference", ref)):
        (folder / f"{name}.json").write_text(json.dumps(run_json(run), indent=1) + "\n", encoding="utf-8")
    if pair.truth:
        (folder / "truth.json").write_text(json.dumps(pair.truth, indent=1) + "\n", encoding="utf-8")
    return folder


class Truth:
    """torch's and Lua's verdicts on candidates, from their workers where installed (started on first
    use, stopped by :meth:`close`)."""

    def __init__(self) -> None:
        self.torch: Any = None
        self.lua: Any = None
        self.folder = Path(tempfile.mkdtemp(prefix="torchfmt-truth-"))

    def of(self, data: bytes, fmt: str, hints: dict[str, Any]) -> dict[str, Any]:
        path = self.folder / ("data.t7" if fmt.startswith("t7-") else "data.pt")
        path.write_bytes(data)
        if fmt.startswith("t7-"):
            return self._lua(path, hints)
        return self._torch(path)

    def _torch(self, path: Path) -> dict[str, Any]:
        if importlib.util.find_spec("torch") is None:
            return {"torch": "not installed"}
        from .forkserver import Worker

        if self.torch is None:
            self.torch = Worker("torch", TORCH_SECONDS)
            self.torch.start()
        run = as_run(self.torch.run(path), ["torch_reader.py"])
        return {"torch 2.13 torch.load(weights_only=True)": run_json(run)}

    def _lua(self, path: Path, hints: dict[str, Any]) -> dict[str, Any]:
        from . import t7

        if not t7.installed():
            return {"lua": "not installed"}
        if self.lua is None:
            self.lua = t7.LuaWorker()
            self.lua.__enter__()
        lua_path = Path(self.lua.folder) / path.name
        shutil.copyfile(path, lua_path)
        run = t7.as_lua_run(self.lua.run(lua_path, hints))
        lua_path.unlink()
        return {"real Lua Torch File:readObject": run_json(run)}

    def close(self) -> None:
        if self.torch is not None:
            self.torch.stop()
        if self.lua is not None:
            self.lua.__exit__(None, None, None)
        shutil.rmtree(self.folder, ignore_errors=True)
