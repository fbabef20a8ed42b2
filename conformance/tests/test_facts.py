"""The suite reads each fact from its home (harness/facts.py: the spec's generated tables), never from a
literal of its own: a limit's value, a ``.t7`` hint's variable (issue 29, "every fact in one home").

The scan covers the suite's, the benchmarks' and the fuzzers' code (tests may restate a fact to check
it): JavaScript for the hint variables, Python for the hint variables and the limits distinct enough to
tell apart from other numbers (above 2,048, and not 1 MiB, which is a unit).  A literal equal to one for
another reason is named in :data:`NOT_A_LIMIT`, with why.
"""

from __future__ import annotations

import ast
import operator
import re
from pathlib import Path

from conformance.harness import facts, vocabulary
from conformance.harness.facts import ROOT

SCANNED = ("conformance", "benchmarks", "fuzz")
#: (file, expression) -> why that literal is not the limit it equals.
NOT_A_LIMIT = {
    ("conformance/generators/adversarial/containers.py", "256 << 20"):
        "the size of a compressed no-op pickle (a zip bomb's), not VIEW_BYTES",
    ("benchmarks/compiled_speed.py", "20000"): "a count of tensors, not WALK_FRAMES",
}


def _product(path: Path) -> bool:
    rel = path.relative_to(ROOT)
    return not (path.name.startswith("test_") or "tests" in rel.parts or "node_modules" in rel.parts
                or path == Path(facts.__file__).resolve())


def _sources(suffix: str) -> list[Path]:
    return [p for top in SCANNED for p in sorted((ROOT / top).rglob(f"*{suffix}")) if _product(p)]


_OPS = {ast.LShift: operator.lshift, ast.Mult: operator.mul, ast.Add: operator.add, ast.Sub: operator.sub}


def _value(node: ast.expr) -> object:
    """The value of a literal or of arithmetic on integer literals (``1 << 23``), else ``None``."""
    if isinstance(node, ast.Constant):
        return node.value
    if isinstance(node, ast.BinOp) and type(node.op) in _OPS:
        left, right = _value(node.left), _value(node.right)
        shift_ok = not isinstance(node.op, ast.LShift) or (type(right) is int and 0 <= right < 64)
        if type(left) is int and type(right) is int and shift_ok:
            return _OPS[type(node.op)](left, right)
    return None


def restated(rel: str, text: str) -> list[str]:
    """What the Python ``text`` of the file ``rel`` writes as a literal that facts.py holds:
    ``file:line: fact as expression``."""
    limits = {v: n for n, v in facts.limits().items() if v > 2048 and v != 1 << 20}
    limits[facts.walk_frames()] = "WALK_FRAMES"
    hints = set(facts.hint_variables())
    tree = ast.parse(text, filename=rel)
    inner = {id(c) for n in ast.walk(tree) if isinstance(n, ast.BinOp) for c in (n.left, n.right)}
    found = []
    for node in ast.walk(tree):
        if not isinstance(node, (ast.Constant, ast.BinOp)) or id(node) in inner:
            continue
        value = _value(node)
        if type(value) is int and value in limits and (rel, ast.unparse(node)) not in NOT_A_LIMIT:
            found.append(f"{rel}:{node.lineno}: {limits[value]} as {ast.unparse(node)}")
        elif isinstance(value, str) and value in hints:
            found.append(f"{rel}:{node.lineno}: the hint variable {value}")
    return sorted(found, key=lambda line: int(line.split(":")[1]))


def test_no_python_of_the_suite_restates_a_limit_or_a_hint() -> None:
    found = [line for p in _sources(".py")
             for line in restated(str(p.relative_to(ROOT)), p.read_text(encoding="utf-8"))]
    assert not found, "read these from conformance/harness/facts.py:\n" + "\n".join(found)


def test_no_javascript_of_the_suite_restates_a_hint() -> None:
    pattern = re.compile("|".join(map(re.escape, facts.hint_variables())))
    found = [f"{p.relative_to(ROOT)}:{n}" for p in _sources(".js")
             for n, line in enumerate(p.read_text(encoding="utf-8").splitlines(), 1) if pattern.search(line)]
    assert not found, "read these from the spec's t7-hints table (kaitai-js/facts.js):\n" + "\n".join(found)


def test_the_scan_sees_a_restated_limit_and_hint() -> None:
    var = facts.hint_variables()[0]
    text = f"CALL_WORK = 1 << 23\nDEPTH = {facts.walk_frames()}\nVAR = {var!r}\nMIB = 1 << 20\nN = 2 * 3\n"
    found = restated("conformance/generators/probe.py", text)
    assert [line.split(": ", 1)[1] for line in found] == [
        "CALL_WORK as 1 << 23", f"WALK_FRAMES as {facts.walk_frames()}", f"the hint variable {var}"]


def test_the_facts_are_the_readers() -> None:
    """What the spec's tables say is what the reader's homes hold (the tables are rendered from them;
    this checks the suite's reading of them)."""
    from torchfmt import limits
    from torchfmt.t7.encodings import HINT_ENV, HINT_VALUES

    assert facts.limits() == {lim.name: lim.value for lim in limits.LIMITS}
    assert facts.walk_frames() == limits.WALK_FRAMES
    assert facts.hint_env() == HINT_ENV
    assert vocabulary.HINT_VALUES == HINT_VALUES
