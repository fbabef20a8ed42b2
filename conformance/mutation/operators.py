"""The mutants of a module, from its syntax tree (:mod:`ast`), each with a stable id.

A mutant replaces one node: ``ast.unparse`` of the changed tree is the mutated module (comments and
layout go, the code is the same).  Its id is ``<module>:<line>:<col>:<operator>:<detail>`` (with
``@<end line>:<end col>`` added where two nodes would share one), so that a judgment of the mutant in
``equivalent.yaml`` still names it after a rerun while the line is unchanged.

Operators (:data:`OPERATORS`):

- ``compare-negate``: a comparison replaced by its negation (``<`` by ``>=``, ``in`` by ``not in``, ...);
- ``compare-boundary``: ``<`` by ``<=``, ``>=`` by ``>`` and so on (an off-by-one bound);
- ``constant``: an integer literal one more or one less;
- ``raise-dropped``: a ``raise`` statement replaced by ``pass``;
- ``condition-true`` / ``condition-false``: the test of an ``if``, an ``elif``, a conditional expression
  or a comprehension's ``if`` forced (a ``while`` only to false: forced true it only hangs), and
  ``clause-true`` / ``clause-false`` each operand of an ``and``/``or`` such a test is made of;
- ``boolop``: ``and`` and ``or`` swapped;
- ``not-dropped``: ``not x`` replaced by ``x``;
- ``arith``: ``+``/``-``, ``*``/``//``, ``<<``/``>>``, ``&``/``|`` swapped (in augmented assignments too);
- ``slice-bound``: a slice's computed bound moved by one (literal bounds are ``constant``'s);
- ``loop-jump``: ``break`` and ``continue`` swapped.

Not mutated: annotations, f-strings (message text), and ``if TYPE_CHECKING:`` blocks: nothing there can
change what the reader does.
"""

from __future__ import annotations

import ast
import copy
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass

OPERATORS = ("compare-negate", "compare-boundary", "constant", "raise-dropped", "condition-true",
             "condition-false", "clause-true", "clause-false", "boolop", "not-dropped", "arith",
             "slice-bound", "loop-jump")

_CMP_NAME = {ast.Lt: "lt", ast.LtE: "le", ast.Gt: "gt", ast.GtE: "ge", ast.Eq: "eq", ast.NotEq: "ne",
             ast.In: "in", ast.NotIn: "notin", ast.Is: "is", ast.IsNot: "isnot"}
_NEGATE = {ast.Lt: ast.GtE, ast.GtE: ast.Lt, ast.Gt: ast.LtE, ast.LtE: ast.Gt, ast.Eq: ast.NotEq,
           ast.NotEq: ast.Eq, ast.In: ast.NotIn, ast.NotIn: ast.In, ast.Is: ast.IsNot, ast.IsNot: ast.Is}
_BOUNDARY = {ast.Lt: ast.LtE, ast.LtE: ast.Lt, ast.Gt: ast.GtE, ast.GtE: ast.Gt}
_ARITH = {ast.Add: ast.Sub, ast.Sub: ast.Add, ast.Mult: ast.FloorDiv, ast.FloorDiv: ast.Mult,
          ast.LShift: ast.RShift, ast.RShift: ast.LShift, ast.BitAnd: ast.BitOr, ast.BitOr: ast.BitAnd}
_ARITH_NAME = {ast.Add: "add", ast.Sub: "sub", ast.Mult: "mul", ast.FloorDiv: "floordiv",
               ast.LShift: "lshift", ast.RShift: "rshift", ast.BitAnd: "and", ast.BitOr: "or"}
#: Fields that hold annotations: never evaluated (``from __future__ import annotations``).
_ANNOTATIONS = frozenset({"annotation", "returns"})
SHOWN = 110


@dataclass(frozen=True)
class Mutant:
    module: str  # path under reference_impl/torchfmt/, e.g. "pt/zip.py"
    line: int
    col: int
    end_line: int
    end_col: int
    operator: str
    detail: str
    function: str  # the enclosing def's qualified name, or "<module>"
    original: str  # the node's source, shortened
    mutated: str  # what replaces it
    site: int  # index in the module's list of sites (never part of the id)
    #: The lines of the statement the node belongs to (a compound statement's header only): a case that
    #: executes none of them runs the same code with or without the mutant (mutation/coverage.py).
    stmt_lines: tuple[int, int] = (0, 0)
    suffix: str = ""  # "@<end line>:<end col>" where two mutants would share an id

    @property
    def id(self) -> str:
        return f"{self.module}:{self.line}:{self.col}:{self.operator}:{self.detail}{self.suffix}"


@dataclass
class _Site:
    node: ast.AST
    parent: ast.AST
    field: str
    index: int | None  # position in a list field
    operator: str
    detail: str
    replace: Callable[[ast.AST], ast.AST]
    function: str
    stmt_lines: tuple[int, int] = (0, 0)


def _set(node: ast.AST, **changes: object) -> Callable[[ast.AST], ast.AST]:
    def make(n: ast.AST) -> ast.AST:
        new = copy.deepcopy(n)
        for k, v in changes.items():
            setattr(new, k, v)
        return new
    return make


def _const(value: object) -> Callable[[ast.AST], ast.AST]:
    return lambda n: ast.copy_location(ast.Constant(value), n)


def _compare_ops(node: ast.Compare, i: int, op: type) -> Callable[[ast.AST], ast.AST]:
    def make(n: ast.AST) -> ast.AST:
        new = copy.deepcopy(n)
        new.ops[i] = op()  # type: ignore[attr-defined]
        return new
    return make


def _plus(delta: int) -> Callable[[ast.AST], ast.AST]:
    def make(n: ast.AST) -> ast.AST:
        op = ast.Add() if delta > 0 else ast.Sub()
        return ast.copy_location(ast.BinOp(copy.deepcopy(n), op, ast.Constant(abs(delta))), n)
    return make


def _is_type_checking(node: ast.AST) -> bool:
    return isinstance(node, ast.If) and isinstance(node.test, ast.Name) and node.test.id == "TYPE_CHECKING"


def _test_sites(test: ast.expr, parent: ast.AST, field: str, index: int | None, fn: str,
                true_too: bool = True) -> Iterator[_Site]:
    if true_too:
        yield _Site(test, parent, field, index, "condition-true", "true", _const(True), fn)
    yield _Site(test, parent, field, index, "condition-false", "false", _const(False), fn)
    if isinstance(test, ast.BoolOp):
        for k, operand in enumerate(test.values):
            yield _Site(operand, test, "values", k, "clause-true", f"{k}:true", _const(True), fn)
            yield _Site(operand, test, "values", k, "clause-false", f"{k}:false", _const(False), fn)


def _node_sites(node: ast.AST, parent: ast.AST, field: str, index: int | None, fn: str) -> Iterator[_Site]:
    """The mutations of ``node`` itself (its children's come from the walk)."""
    if isinstance(node, ast.Compare):
        for i, op in enumerate(node.ops):
            tag = "" if i == 0 else f"#{i}"
            name = _CMP_NAME[type(op)]
            neg = _NEGATE[type(op)]
            yield _Site(node, parent, field, index, "compare-negate", f"{name}->{_CMP_NAME[neg]}{tag}",
                        _compare_ops(node, i, neg), fn)
            if type(op) in _BOUNDARY:
                b = _BOUNDARY[type(op)]
                yield _Site(node, parent, field, index, "compare-boundary", f"{name}->{_CMP_NAME[b]}{tag}",
                            _compare_ops(node, i, b), fn)
    elif isinstance(node, ast.Constant) and type(node.value) is int:
        v = node.value
        yield _Site(node, parent, field, index, "constant", f"{v}->{v + 1}", _const(v + 1), fn)
        yield _Site(node, parent, field, index, "constant", f"{v}->{v - 1}", _const(v - 1), fn)
    elif isinstance(node, ast.Raise):
        yield _Site(node, parent, field, index, "raise-dropped", "pass",
                    lambda n: ast.copy_location(ast.Pass(), n), fn)
    elif isinstance(node, ast.BoolOp):
        other = ast.Or if isinstance(node.op, ast.And) else ast.And
        yield _Site(node, parent, field, index, "boolop", "and->or" if other is ast.Or else "or->and",
                    _set(node, op=other()), fn)
    elif isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.Not):
        yield _Site(node, parent, field, index, "not-dropped", "not",
                    lambda n: copy.deepcopy(n.operand), fn)  # type: ignore[attr-defined]
    elif isinstance(node, (ast.BinOp, ast.AugAssign)) and type(node.op) in _ARITH:
        new = _ARITH[type(node.op)]
        yield _Site(node, parent, field, index, "arith", f"{_ARITH_NAME[type(node.op)]}->{_ARITH_NAME[new]}",
                    _set(node, op=new()), fn)
    elif isinstance(node, (ast.Break, ast.Continue)):
        other = ast.Continue if isinstance(node, ast.Break) else ast.Break
        yield _Site(node, parent, field, index, "loop-jump",
                    "break->continue" if other is ast.Continue else "continue->break",
                    lambda n, o=other: ast.copy_location(o(), n), fn)
    if isinstance(node, (ast.If, ast.IfExp)):
        yield from _test_sites(node.test, node, "test", None, fn)
    elif isinstance(node, ast.While):
        yield from _test_sites(node.test, node, "test", None, fn, true_too=False)
    elif isinstance(node, ast.comprehension):
        for k, cond in enumerate(node.ifs):
            yield from _test_sites(cond, node, "ifs", k, fn)
    elif isinstance(node, ast.Slice):
        for bound in ("lower", "upper"):
            b = getattr(node, bound)
            if b is not None and not isinstance(b, ast.Constant) and \
                    not (isinstance(b, ast.UnaryOp) and isinstance(b.operand, ast.Constant)):
                yield _Site(b, node, bound, None, "slice-bound", f"{bound}+1", _plus(1), fn)
                yield _Site(b, node, bound, None, "slice-bound", f"{bound}-1", _plus(-1), fn)


def _header_end(node: ast.stmt) -> int:
    """The last line of a statement, or of a compound statement's header (up to its body)."""
    body = getattr(node, "body", None)
    if isinstance(body, list) and body and isinstance(body[0], ast.stmt):
        return max(node.lineno, body[0].lineno - 1)
    return node.end_lineno or node.lineno


def _sites(tree: ast.Module) -> list[_Site]:
    out: list[_Site] = []

    def walk(node: ast.AST, parent: ast.AST | None, field: str, index: int | None, fn: str,
             stmt: tuple[int, int]) -> None:
        if isinstance(node, ast.JoinedStr) or _is_type_checking(node):
            return
        if isinstance(node, ast.stmt):
            stmt = (node.lineno, _header_end(node))
        if parent is not None:
            for s in _node_sites(node, parent, field, index, fn):
                s.stmt_lines = stmt
                out.append(s)
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            fn = node.name if fn == "<module>" else f"{fn}.{node.name}"
        for name, value in ast.iter_fields(node):
            if name in _ANNOTATIONS:
                continue
            if isinstance(value, list):
                for k, item in enumerate(value):
                    if isinstance(item, ast.AST):
                        walk(item, node, name, k, fn, stmt)
            elif isinstance(value, ast.AST):
                walk(value, node, name, None, fn, stmt)

    walk(tree, None, "", None, "<module>", (0, 0))
    return out


def _short(text: str) -> str:
    text = " ".join(text.split())
    return text if len(text) <= SHOWN else text[:SHOWN - 3] + "..."


def _segment(lines: list[str], node: ast.AST) -> str:
    """The source of ``node`` (``ast.get_source_segment`` splits the whole source on every call)."""
    first, last = node.lineno - 1, (node.end_lineno or node.lineno) - 1
    start = node.col_offset  # offsets count UTF-8 bytes
    if first == last:
        return lines[first].encode()[start:node.end_col_offset].decode(errors="replace")
    head = lines[first].encode()[start:].decode(errors="replace")
    tail = lines[last].encode()[:node.end_col_offset].decode(errors="replace")
    return head + "".join(lines[first + 1:last]) + tail


def mutants(module: str, source: str) -> list[Mutant]:
    """Every mutant of ``source`` (the module at ``module``), in the order of the tree."""
    tree = ast.parse(source)
    lines = source.splitlines(keepends=True)
    found = []
    for k, s in enumerate(_sites(tree)):
        node = s.node
        original = _segment(lines, node)
        found.append(Mutant(module, node.lineno, node.col_offset, node.end_lineno or node.lineno,
                            node.end_col_offset or 0, s.operator, s.detail, s.function, _short(original),
                            _short(ast.unparse(s.replace(node))), k, s.stmt_lines))
    count: dict[str, int] = {}
    for m in found:
        count[m.id] = count.get(m.id, 0) + 1
    return [Mutant(**{**m.__dict__, "suffix": f"@{m.end_line}:{m.end_col}"}) if count[m.id] > 1 else m
            for m in found]


def apply(mutant: Mutant, source: str) -> str:
    """The source of the module with ``mutant`` applied (``source`` is the module the mutant came from)."""
    tree = ast.parse(source)
    sites = _sites(tree)
    s = sites[mutant.site]
    assert (s.node.lineno, s.node.col_offset, s.operator, s.detail) == \
        (mutant.line, mutant.col, mutant.operator, mutant.detail), f"{mutant.id}: the source changed"
    new = s.replace(s.node)
    if s.index is None:
        setattr(s.parent, s.field, new)
    else:
        getattr(s.parent, s.field)[s.index] = new
    return ast.unparse(ast.fix_missing_locations(tree))


#: Calls a module-level value may be made with and still be plain data (no effect but the value).
_PURE_CALLS = frozenset({"frozenset", "tuple", "set", "dict", "range", "len", "Struct", "compile", "bytes"})


def _plain_data(node: ast.AST) -> bool:
    for sub in ast.walk(node):
        if isinstance(sub, ast.Call):
            f = sub.func
            name = f.id if isinstance(f, ast.Name) else f.attr if isinstance(f, ast.Attribute) else ""
            if name not in _PURE_CALLS:
                return False
        elif isinstance(sub, (ast.Lambda, ast.NamedExpr, ast.Await, ast.Yield, ast.YieldFrom)):
            return False
    return True


def module_level_uses(source: str, elsewhere: str = "") -> dict[int, list[tuple[int, int]] | None]:
    """For each top-level assignment of plain data to names (``_TAR_NUMBERS = (...)``), by its first
    line: the statements inside functions that read those names (their line spans), or ``None`` when
    a name is also read at import time, or appears in ``elsewhere`` (the package's other modules).  A
    mutant of such an assignment changes only the value those statements read: a case that executes none
    of them runs the same code with or without it (mutation/coverage.py)."""
    tree = ast.parse(source)
    owners: dict[str, int] = {}
    for stmt in tree.body:
        targets = stmt.targets if isinstance(stmt, ast.Assign) else [stmt.target] \
            if isinstance(stmt, ast.AnnAssign) and stmt.value is not None else []
        value = getattr(stmt, "value", None)
        if targets and all(isinstance(t, ast.Name) for t in targets) and value is not None \
                and _plain_data(value):
            for t in targets:
                owners[t.id] = stmt.lineno  # type: ignore[union-attr]
    uses: dict[int, list[tuple[int, int]] | None] = {line: [] for line in owners.values()}

    def walk(node: ast.AST, in_function: bool, stmt: tuple[int, int]) -> None:
        if isinstance(node, ast.stmt):
            stmt = (node.lineno, _header_end(node))
        if isinstance(node, ast.Name) and node.id in owners and not isinstance(node.ctx, ast.Store):
            line = owners[node.id]
            found = uses[line]
            if not in_function:
                uses[line] = None
            elif found is not None:
                found.append(stmt)
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
            for name, value in ast.iter_fields(node):
                inner = name == "body"
                for child in value if isinstance(value, list) else [value]:
                    if isinstance(child, ast.AST):
                        walk(child, in_function or inner, stmt)
            return
        for child in ast.iter_child_nodes(node):
            walk(child, in_function, stmt)

    walk(tree, False, (0, 0))
    for name, line in owners.items():
        if re.search(rf"\b{re.escape(name)}\b", elsewhere):
            uses[line] = None
    return uses
