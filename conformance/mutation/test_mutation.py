"""The mutation driver itself (conformance/mutation/): its page is what its stored data make, its runner
judges as the suite does, it kills known mutants and lets a known equivalent one survive, and its
line coverage sees what the reader runs."""

from __future__ import annotations

import ast

import pytest
from torchfmt.limits import WALK_FRAMES
from torchfmt.recursion import recursion_limit

from conformance.harness.cases import committed_cases
from conformance.mutation import coverage, driver, operators, page, store
from conformance.mutation.run import Worker, Workspace
from conformance.mutation.scope import PACKAGE, TARGETS, module_source

pytestmark = pytest.mark.spec("canonical.md#canonical-reader-cli")

#: One case per format and category, and a few more: the runner's verdicts on the unmutated reader.
SAMPLE_IDS = ("pt-zip/state-dict-mlp", "pt-legacy/adv-not-html-after-whitespace", "t7-binary/table-nested")


def _mutant(module: str, operator: str, original: str, detail: str | None = None,
            line: int | None = None) -> operators.Mutant:
    found = [m for m in operators.mutants(module, module_source(module))
             if m.operator == operator and m.original == original and (detail is None or m.detail == detail)
             and (line is None or m.line == line)]
    assert len(found) == 1, f"{module} {operator} {original!r}: {len(found)} mutants"
    return found[0]


def test_page_is_generated() -> None:
    text = page.current()
    assert store.PAGE.read_text(encoding="utf-8") == text, \
        "conformance/MUTATION.md is stale: run python -m conformance.mutation --render"


def test_judgments_name_stored_mutants() -> None:
    """Every judgment names a sampled mutant and quotes its node as stored (else it judges nothing): the
    reader's in results.json, the judge's (``harness/...``) in judge_results.json's carried sample."""
    from conformance.mutation import judge

    doc = store.load_results()
    judged = (judge.load().get("carried") or {}).get("mutants", {})
    for j in store.load_judgments().values():
        mutants, where = (judged, "judge_results.json") if j.id.startswith("harness/") else \
            (doc["mutants"], "results.json")
        assert j.id in mutants, f"equivalent.yaml: {j.id} is not in {where}"
        assert j.original == mutants[j.id]["original"], f"equivalent.yaml: {j.id}: the code changed"


def test_mutants_have_unique_ids_and_compile() -> None:
    pop, sources = driver.population()
    ids = [m.id for m in pop]
    assert len(ids) == len(set(ids))
    assert {m.module for m in pop} == set(TARGETS)
    for m in driver.sample(pop, 40, 1):
        mutated = operators.apply(m, sources[m.module])
        assert mutated != ast.unparse(ast.parse(sources[m.module])), m.id
        compile(mutated, m.module, "exec")


def test_operators_make_what_they_say() -> None:
    src = ("def f(a, b):\n    if a < b and not a:\n        raise ValueError(f'{a + 1}')\n"
           "    return b[a:len(b)]\n")
    found = {(m.operator, m.detail): m.mutated for m in operators.mutants("x.py", src)}
    assert found[("compare-negate", "lt->ge")] == "a >= b"
    assert found[("compare-boundary", "lt->le")] == "a <= b"
    assert found[("raise-dropped", "pass")] == "pass"
    assert found[("clause-false", "1:false")] == "False"
    assert found[("boolop", "and->or")] == "a < b or not a"
    assert found[("not-dropped", "not")] == "a"
    assert found[("slice-bound", "upper-1")] == "len(b) - 1"
    assert ("constant", "1->2") not in found  # f-strings (message text) are left alone


def test_runner_judges_as_the_suite_and_kills_a_known_mutant() -> None:
    """On the unmutated copy every sampled case passes, as it does in the suite; a mutant that stops
    seeing HTML pages is killed by the HTML case, one writing another description_version by any accepted
    case; a mutant judged equivalent (records mapped or read: the same bytes) survives."""
    cases = {c.id: c for c in committed_cases()}
    sample = [cases[i] for i in SAMPLE_IDS]
    ws = Workspace()
    try:
        assert ws.run_cases(sample).status == "survived"
        html = _mutant("detect.py", "condition-false", "text.startswith(magic.lower())")
        out = ws.run_mutant(html, module_source("detect.py"), sample)
        assert (out.status, out.case) == ("killed", "pt-legacy/adv-not-html-after-whitespace"), out
        version = _mutant("describe.py", "constant", "0", "0->1", _line_of("DESCRIPTION_VERSION = 0"))
        assert version.function == "<module>"
        assert ws.run_mutant(version, module_source("describe.py"), sample[:1]).status == "killed"
        mapped = _mutant("windows.py", "compare-negate", "self.size <= self.READ_BELOW", "le->gt",
                         _line_of("        if self.size <= self.READ_BELOW:", "windows.py"))
        assert ws.run_mutant(mapped, module_source("windows.py"), sample[:1]).status == "survived"
        assert module_source("detect.py") == (ws.folder / "torchfmt" / "detect.py").read_text()
    finally:
        ws.close()


def test_in_process_runs_equal_the_suites() -> None:
    """The in-process worker (mutation/worker.py) gives what the suite's run gives, on every tenth case
    of each format and the truncation tier (the driver checks every case passes in-process before each
    run: ``driver.baseline``)."""
    cases = driver.suite_cases()
    by_format: dict[str, list] = {}
    for c in cases:
        by_format.setdefault(c.format if c.tier == "committed" else c.tier, []).append(c)
    sample = [c for group in by_format.values() for c in group[::25]]
    ws = Workspace()
    worker = Worker(ws.env)
    server = ws.server()
    try:
        for c in sample:
            mine, theirs = worker.run(c, 60.0), ws.harness_run(server, c, 60.0)
            with recursion_limit(WALK_FRAMES):  # descriptions of the 1,024-level .t7 cases nest 3,000 deep
                same = (mine.outcome, mine.code, mine.description) == \
                    (theirs.outcome, theirs.code, theirs.description)
            assert same, c.id
            assert mine.outcome in ("accepted", "rejected"), c.id
    finally:
        worker.close()
        server.close()
        ws.close()
    assert len(sample) > 30


def _line_of(text: str, module: str = "describe.py") -> int:
    return module_source(module).splitlines().index(text) + 1


def test_coverage_sees_what_a_case_runs() -> None:
    """A zip case runs the zip reader and never the .t7 reader; import-time lines are apart."""
    cases = {c.id: c for c in committed_cases()}
    cov = coverage.measure([cases["pt-zip/state-dict-mlp"]], PACKAGE.parent, jobs=1, progress=False)
    lines = cov.cases["pt-zip/state-dict-mlp"]
    assert lines is not None and "pt/zip.py" in lines and "t7/reader.py" not in lines
    assert cov.statuses["pt-zip/state-dict-mlp"] == 0
    version = _line_of("DESCRIPTION_VERSION = 0")
    assert version in cov.imports["describe.py"]
    assert cov.relevant("describe.py", range(version, version + 1), cov.index()) is None


def test_the_page_interval_is_wilsons() -> None:
    low, high = page.interval(242, 250)
    assert round(100 * low, 1) == 93.8 and round(100 * high, 1) == 98.4
    low, high = page.interval(50, 100)
    assert abs((0.5 - low) - (high - 0.5)) < 1e-12 and 0.40 < low < 0.41
    assert page.interval(0, 0) == (0.0, 1.0) and page.interval(10, 10)[1] == 1.0


def test_the_judge_population_is_the_judges_modules() -> None:
    from conformance.mutation import judge

    pop, _ = judge.population()
    assert {m.module for m in pop} == set(judge.TARGETS)
    draw = judge.sample(pop, 60, judge.DEFAULT_SEED)
    assert len(draw) == 60 and draw == judge.sample(pop, 60, judge.DEFAULT_SEED)
    assert {m.id for m in judge.sample(pop, 30, judge.DEFAULT_SEED)} <= {m.id for m in draw}
    assert "conformance/tests/test_harness_redteam.py" not in judge.self_tests(False)
    assert judge.self_tests(True) == ["conformance/tests/test_harness_redteam.py"]
