"""The kaitai-js adapter, the second Kaitai reader (conformance/adapters/kaitai-js/, issue 28): node over the
generated JavaScript parsers of ksy/ and the hand-written port of the Python kaitai adapter.  Checked on
committed cases of every variant whenever its setup has run (CI runs it; with TORCHFMT_REQUIRE_ADAPTERS
set, a missing or broken install fails, never skips)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys

import pytest

from conformance.harness.cases import CASES_DIR, load_case
from conformance.harness.compare import compare
from conformance.harness.readers import ADAPTERS_DIR, adapters_home
from conformance.harness.runner import hint_env
from conformance.harness.vocabulary import error_codes

FOLDER = ADAPTERS_DIR / "kaitai-js"
RUN = FOLDER / "run.py"
ENV = {**os.environ, "TORCHFMT_ADAPTERS_HOME": str(adapters_home())}


def _probe() -> subprocess.CompletedProcess[str] | None:
    if shutil.which("node") is None:
        return None
    return subprocess.run([sys.executable, str(RUN), "--probe"], capture_output=True, text=True, timeout=120,
                          env=ENV)


PROBE = _probe()
INSTALLED = PROBE is not None and PROBE.returncode == 0
pytestmark = pytest.mark.skipif(not INSTALLED and not os.environ.get("TORCHFMT_REQUIRE_ADAPTERS"),
                                reason="node or conformance/adapters/kaitai-js/setup is missing here")


def run(case_id: str) -> subprocess.CompletedProcess[str]:
    case = load_case(CASES_DIR / case_id)
    return subprocess.run([sys.executable, str(RUN), str(case.path)], capture_output=True, text=True,
                          timeout=120, env={**ENV, **hint_env(case.hints)})


def node_json(script: str) -> object:
    """What a node snippet run in the adapter's folder prints, as JSON."""
    proc = subprocess.run(["node", "-e", script], capture_output=True, text=True, timeout=60, cwd=FOLDER,
                          env={**ENV, "NODE_PATH": str(adapters_home() / "kaitai-js" / "node_modules")})
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout)


def test_probe_finds_the_runtime_and_the_parsers() -> None:
    assert PROBE is not None and PROBE.returncode == 0, PROBE and PROBE.stdout
    assert "kaitai-struct 0.11.0" in PROBE.stdout


def test_its_facts_are_the_spec_tables() -> None:
    """Error codes, limits, opcodes and dtypes are read from the spec's generated tables, which are
    generated from the reference's data: the JS reader's reading of them is the reference's."""
    from torchfmt.dtypes import DTYPES
    from torchfmt.limits import LIMITS
    from torchfmt.pickle.opcodes import OPCODES

    facts = node_json("const f = require('./facts.js'); "
                      "console.log(JSON.stringify({codes: [...f.ERROR_CODES], limits: f.LIMITS, "
                      "opcodes: [...f.OPCODES].map(([b, o]) => [b, o.name]), "
                      "dtypes: Object.values(f.DTYPES).map((d) => [d.name, d.itemsize])}))")
    assert isinstance(facts, dict)
    assert set(facts["codes"]) == set(error_codes())
    assert facts["limits"] == {limit.name: limit.value for limit in LIMITS}
    assert sorted(map(tuple, facts["opcodes"])) == sorted((o.code, o.name) for o in OPCODES)
    assert [tuple(d) for d in facts["dtypes"]] == [(d.name, d.itemsize) for d in DTYPES]


@pytest.mark.parametrize("case_id", ["pt-zip/dtype-float32", "pt-zip/conj-view", "pt-zip/zip-big-endian",
                                     "pt-legacy/channels-last", "pt-tar/adv-tar-state-dict",
                                     "t7-binary/bigendian-table", "t7-binary/class-self-ref",
                                     "t7-ascii/ascii-shared-storage-views"])
def test_an_accept_case_is_described_as_its_writer_loads_it(case_id: str) -> None:
    case = load_case(CASES_DIR / case_id)
    proc = run(case_id)
    assert proc.returncode == 0, proc.stderr
    assert compare(case.description, json.loads(proc.stdout)) == []


@pytest.mark.parametrize(("case_id", "code"), [("pt-zip/adv-pickle-stack-underflow-pop", "bad-pickle"),
                                               ("t7-binary/adv-t7-offset-negative", "out-of-bounds")])
def test_a_reject_case_is_refused_with_its_code(case_id: str, code: str) -> None:
    proc = run(case_id)
    assert proc.returncode == 1, proc.stdout
    assert proc.stderr.startswith(f"{code}: "), proc.stderr
    assert len(proc.stderr.splitlines()) == 1


def test_batch_answers_are_the_per_process_ones() -> None:
    """run.py --batch becomes node reader.js --batch (spec/canonical.md#canonical-reader-batch): one line
    per request, the status and description or error line the per-process run gives, hints applied."""
    ids = ["pt-zip/dtype-float32", "pt-zip/adv-pickle-stack-underflow-pop", "t7-binary/bigendian-table"]
    cases = [load_case(CASES_DIR / i) for i in ids]
    requests = "".join(json.dumps({"id": n, "path": str(c.path), "hints": hint_env(c.hints)}) + "\n"
                       for n, c in enumerate(cases))
    proc = subprocess.run([sys.executable, str(RUN), "--batch"], input=requests, capture_output=True,
                          text=True, timeout=120, env=ENV)
    answers = [json.loads(line) for line in proc.stdout.splitlines()]
    assert [a["id"] for a in answers] == [0, 1, 2]
    for case_id, answer in zip(ids, answers, strict=True):
        single = run(case_id)
        assert answer["status"] == single.returncode
        if single.returncode == 0:
            assert answer["description"] == json.loads(single.stdout)
        else:
            assert answer["error"] == single.stderr.strip()


def test_the_adapter_and_the_generated_parsers_share_one_runtime() -> None:
    """The adapter tells a grammar's failed ``valid:`` by the runtime's error classes: with a second copy
    of the runtime (ksy/node_modules, which the grammars' compiler brings, beside the adapter's own on
    NODE_PATH) none matched, and every such case was an internal error (declined)."""
    loaded = node_json("const P = require('./parsers.js'); for (const k of Object.keys(P)) P[k]; "
                       "console.log(JSON.stringify(Object.keys(require.cache)"
                       ".filter((k) => k.endsWith('KaitaiStream.js'))))")
    assert isinstance(loaded, list) and len(loaded) == 1, loaded
    out = run("t7-ascii/adv-t7-ascii-number-garbage")
    assert out.returncode == 1 and out.stderr.startswith("bad-value:"), out.stderr
