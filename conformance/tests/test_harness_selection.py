"""``pytest conformance`` is the reader's verdict: the harness's self-tests are collected only when asked
(``--self-tests``) or named (conformance/conftest.py ``pytest_ignore_collect``), and a case chosen by
``-k`` reads that case alone (harness/cases.py ``committed_cases(lazy=True)``)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
READER_MODULES = ("conformance/test_cases.py", "conformance/test_truncations.py",
                  "conformance/test_unsafe_pickle.py")


def collected(*args: str) -> list[str]:
    out = subprocess.run([sys.executable, "-m", "pytest", "--collect-only", "-q", *args], cwd=ROOT,
                         capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stdout[-2000:] + out.stderr[-2000:]
    return [line for line in out.stdout.splitlines() if "::" in line]


def test_the_suite_alone_collects_the_readers_tests_only() -> None:
    nodes = collected("conformance")
    assert nodes and all(n.startswith(READER_MODULES) for n in nodes), \
        sorted({n.split("::")[0] for n in nodes} - set(READER_MODULES))
    assert any(n.startswith("conformance/test_cases.py::test_case[") for n in nodes)


@pytest.mark.parametrize("args", [("conformance", "--self-tests"),
                                  ("conformance/tests/test_harness_gate.py",), ("conformance/tests",),
                                  ("conformance/test_cases.py", "conformance/tests")])
def test_self_tests_are_collected_when_asked_or_named(args: tuple[str, ...]) -> None:
    nodes = collected(*args)
    assert any(n.startswith("conformance/tests/test_harness_gate.py::") for n in nodes)
    if "--self-tests" in args:
        assert any(n.startswith("conformance/test_readme.py::") for n in nodes)
    else:
        assert not any(n.startswith("conformance/test_readme.py::") for n in nodes)


PLUGIN = """
read = []

def pytest_configure(config):
    import conformance.harness.cases as cases  # the suite's package, importable from the repository root

    original = cases.load_case

    def load_case(folder, *args, **kwargs):
        read.append(folder.name)
        return original(folder, *args, **kwargs)

    cases.load_case = load_case

def pytest_sessionfinish(session):
    print("READ", sorted(read))
"""


def test_a_case_selected_by_id_is_the_only_case_read(tmp_path: Path) -> None:
    """Collection reads no case folder: the one chosen is read when its run starts."""
    (tmp_path / "count_reads.py").write_text(PLUGIN)
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(tmp_path), os.environ.get("PYTHONPATH", "")])}
    out = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "count_reads",
                          "conformance/test_cases.py::test_case[pt-zip/dtype-float32]"], cwd=ROOT,
                         capture_output=True, text=True, timeout=300, env=env)
    assert out.returncode == 0, out.stdout[-2000:]
    assert "READ ['dtype-float32']" in out.stdout, out.stdout[-2000:]


SEEN = """
import sys

def pytest_unconfigure(config):
    print("HYPOTHESIS", "hypothesis" in sys.modules, config.pluginmanager.has_plugin("hypothesispytest"))
"""


ONE = ("-k", "pt-zip/dtype-float32")


@pytest.mark.parametrize("args, kept", [(("conformance", *ONE), False),
                                        (("conformance", "--self-tests", *ONE), True)])
def test_a_run_of_the_readers_tests_leaves_hypothesis_out(tmp_path: Path, args: tuple[str, ...],
                                                          kept: bool) -> None:
    """No reader's test uses hypothesis, whose plugin imports it at the end of every run (conftest.py
    ``UNUSED_BY_READER_TESTS``); the self-tests keep it."""
    (tmp_path / "seen.py").write_text(SEEN)
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(tmp_path), os.environ.get("PYTHONPATH", "")])}
    out = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "seen", "--collect-only", *args],
                         cwd=ROOT, capture_output=True, text=True, timeout=300, env=env)
    assert out.returncode == 0, out.stdout[-2000:]
    assert f"HYPOTHESIS {kept} {kept}" in out.stdout, out.stdout[-2000:]
