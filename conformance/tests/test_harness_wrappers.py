"""Readers that wrap the reference reader and break one rule are judged wrong, in both modes, on the
committed cases they would have passed (issue 25's tricks, spec/canonical.md#canonical-comparison,
#canonical-document, #canonical-json-numbers, #canonical-reader-batch).

Each trick is one edit of the reference reader's output: a state_dict's ``_metadata`` dropped or
garbled (the comparator skipped every ``_`` member at any depth), a number without a form in a note
(a 5,000-digit integer made the harness raise; ``1e999`` parsed as infinity), an id written as ``1.0``,
and ``{}`` accepted for every file (an impl case that fixes no description took it).  The honest
wrapper passes the same cases, so each failure is the trick's.
"""

from __future__ import annotations

import re
import sys
import textwrap

import pytest

from conformance.harness import readers
from conformance.harness.batch import BatchSession
from conformance.harness.cases import Case, committed_cases
from conformance.harness.runner import run_reader
from conformance.harness.verdict import Verdict, judge

pytestmark = pytest.mark.spec("canonical.md#canonical-comparison", "canonical.md#canonical-document",
                              "canonical.md#canonical-json-numbers", "canonical.md#canonical-reader-batch")

#: ``wrapper.py TRICK PATH`` or ``wrapper.py TRICK --batch``: the reference reader, one edit made.
WRAPPER = textwrap.dedent('''
    import json, subprocess, sys

    TRICK = sys.argv[1]
    REFERENCE = [sys.executable, "-m", "torchfmt", "dump"]

    def attrs(node):
        stack = [node]
        while stack:
            n = stack.pop()
            if isinstance(n, list):
                stack.extend(n)
            elif isinstance(n, dict):
                if isinstance(n.get("attrs"), dict):
                    yield n["attrs"]
                stack.extend(n.values())

    def containers(node):
        stack = [node]
        while stack:
            n = stack.pop()
            if isinstance(n, list):
                stack.extend(n)
            elif isinstance(n, dict):
                if n.get("type") in ("dict", "ordered_dict", "table") and isinstance(n.get("items"), list):
                    yield n
                stack.extend(n.values())

    def edit(doc):
        """The description as the trick writes it (JSON text)."""
        if TRICK == "empty":
            return "{}"
        if TRICK == "drop-underscore-keys":  # items of dicts and tables whose key is a str "_..."
            for n in containers(doc.get("objects")):
                n["items"] = [kv for kv in n["items"] if not (kv[0].get("type") == "str"
                                                             and kv[0]["value"].startswith("_"))]
        for a in attrs(doc.get("objects")):
            if "_metadata" in a and TRICK == "drop-metadata":
                del a["_metadata"]
            elif "_metadata" in a and TRICK == "garble-metadata":
                a["_metadata"] = {"type": "none"}
        text = json.dumps(doc)
        if TRICK == "huge-int":
            return text[:-1] + ', "_n": ' + "7" * 5000 + "}"
        if TRICK == "inf":
            return text[:-1] + ', "_x": 1e999}'
        return text

    if sys.argv[2] == "--batch":
        child = None if TRICK == "empty" else subprocess.Popen(
            [*REFERENCE, "--batch"], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
        for line in sys.stdin:
            if child is None:
                request_id = json.loads(line)["id"]
                answer = {"id": request_id, "status": 0, "description": {}}
            else:
                child.stdin.write(line)
                child.stdin.flush()
                answer = json.loads(child.stdout.readline())
            desc = edit(answer.pop("description")) if answer["status"] == 0 else None
            head = json.dumps(answer)[:-1]
            if TRICK == "float-id":
                head = head.replace('"id": %d' % answer["id"], '"id": %d.0' % answer["id"])
            print(head + (', "description": ' + desc if desc is not None else "") + "}", flush=True)
    else:
        if TRICK == "empty":
            print("{}")
            sys.exit(0)
        run = subprocess.run([*REFERENCE, sys.argv[2]], capture_output=True, text=True)
        sys.stderr.write(run.stderr)
        if run.returncode == 0:
            sys.stdout.write(edit(json.loads(run.stdout)))
        sys.exit(run.returncode)
''')

CASES = {c.id: c for c in committed_cases()}


def nodes(case: Case):
    stack = [case.description.get("objects") if case.description else None]
    while stack:
        node = stack.pop()
        if isinstance(node, list):
            stack.extend(node)
        elif isinstance(node, dict):
            yield node
            stack.extend(node.values())


def carries_metadata(case: Case) -> bool:
    return any("_metadata" in (n.get("attrs") or {}) for n in nodes(case))


def underscore_key(case: Case) -> bool:
    """A dict, ordered dict or table item whose key is a str starting with ``_`` (Lua nn's ``_type``)."""
    return any(n.get("type") in ("dict", "ordered_dict", "table") and any(
        isinstance(k, dict) and k.get("type") == "str" and str(k.get("value")).startswith("_")
        for k, *_ in n.get("items") or ()) for n in nodes(case))


#: Every accept case whose expectation holds a state_dict's ``_metadata`` (20 before the two
#: ``state-dict-underscore-names`` cases).
METADATA = sorted((c for c in CASES.values() if carries_metadata(c)), key=lambda c: c.id)
#: Every accept case with a dict or table key named ``_...``: real Lua Torch's nn modules (``_type``),
#: ``pt-*/state-dict-underscore-names``.
KEYED = sorted((c for c in CASES.values() if c.category == "accept" and underscore_key(c)),
               key=lambda c: c.id)
#: Every impl case that fixes no description: a reader accepting it is judged by the document alone.
OPEN = sorted((c for c in CASES.values() if c.category == "impl" and c.description is None),
              key=lambda c: c.id)
#: A few accept cases for the tricks that break any description.
PLAIN = [CASES[i] for i in ("pt-zip/dtype-float32", "pt-legacy/state-dict-mlp", "t7-binary/tensor-float-2x3")
         if i in CASES]


@pytest.fixture(scope="module")
def wrapper(tmp_path_factory: pytest.TempPathFactory) -> list[str]:
    script = tmp_path_factory.mktemp("wrapper") / "wrapper.py"
    script.write_text(WRAPPER)
    return [sys.executable, str(script)]


def verdicts_batch(wrapper: list[str], trick: str, cases: list[Case]) -> dict[str, Verdict]:
    session = BatchSession([*wrapper, trick, "--batch"], extra_env=readers.resolve("reference").env)
    try:
        return {c.id: judge(c, session.run(c.path, c.hints), declined_fails=True) for c in cases}
    finally:
        session.close()


def verdicts_alone(wrapper: list[str], trick: str, cases: list[Case]) -> dict[str, Verdict]:
    env = readers.resolve("reference").env
    return {c.id: judge(c, run_reader([*wrapper, trick], c.path, c.hints, extra_env=env),
                        declined_fails=True) for c in cases}


def test_the_case_lists_are_what_the_tricks_need() -> None:
    assert len(METADATA) >= 22 and len(OPEN) >= 17 and len(PLAIN) == 3
    assert {c.category for c in METADATA} == {"accept"}
    assert {"pt-zip/state-dict-underscore-names", "pt-legacy/state-dict-underscore-names"} <= \
        {c.id for c in METADATA} & {c.id for c in KEYED}
    assert any(c.format == "t7-binary" and c.provenance.get("writer", "").startswith("Lua Torch")
               for c in KEYED), [c.id for c in KEYED]


def test_the_honest_wrapper_passes_every_case_the_tricks_fail(wrapper: list[str]) -> None:
    every = {c.id: c for c in (*METADATA, *KEYED, *PLAIN)}
    verdicts = verdicts_batch(wrapper, "none", [every[k] for k in sorted(every)])
    verdicts |= verdicts_alone(wrapper, "none", [METADATA[0], PLAIN[-1]])
    assert {k: v.detail for k, v in verdicts.items() if v.outcome != "pass"} == {}


@pytest.mark.parametrize("trick", ["drop-metadata", "garble-metadata"])
def test_a_reader_that_drops_or_changes_metadata_fails_every_case_that_carries_it(
        wrapper: list[str], trick: str) -> None:
    verdicts = verdicts_batch(wrapper, trick, METADATA)
    verdicts |= {f"{k} (one process)": v for k, v in verdicts_alone(wrapper, trick, METADATA[:2]).items()}
    wrong = {k: (v.kind, v.detail) for k, v in verdicts.items() if v.kind != "wrong-description"}
    assert wrong == {}
    assert all("_metadata" in v.detail for v in verdicts.values())


def test_a_reader_that_drops_underscore_keys_fails_every_case_that_has_one(wrapper: list[str]) -> None:
    """A key is a VALUE: ``_type`` in a Lua nn module's table, ``_private`` in a dict, compared."""
    verdicts = verdicts_batch(wrapper, "drop-underscore-keys", KEYED)
    assert {k: (v.kind, v.detail) for k, v in verdicts.items() if v.kind != "wrong-description"} == {}


@pytest.mark.parametrize("trick", ["huge-int", "inf"])
def test_a_number_without_a_form_is_an_output_failure_not_a_harness_error(
        wrapper: list[str], trick: str) -> None:
    verdicts = verdicts_batch(wrapper, trick, PLAIN)
    verdicts |= {f"{k} (one process)": v for k, v in verdicts_alone(wrapper, trick, PLAIN[:1]).items()}
    assert {k: v.kind for k, v in verdicts.items()} == dict.fromkeys(verdicts, "output")


def test_an_id_written_as_a_float_is_refused(wrapper: list[str]) -> None:
    verdicts = verdicts_batch(wrapper, "float-id", PLAIN[:2])
    assert {k: v.kind for k, v in verdicts.items()} == dict.fromkeys(verdicts, "output")
    # the request's own number, written as a float (request ids grow by a random step, harness/batch.py)
    assert all(re.search(r"id is (\d+)\.0, not the request's \1\b", v.detail) for v in verdicts.values()), \
        verdicts


def test_a_reader_that_accepts_everything_with_an_empty_document_fails_the_open_impl_cases(
        wrapper: list[str]) -> None:
    verdicts = verdicts_batch(wrapper, "empty", OPEN)
    verdicts |= {f"{k} (one process)": v for k, v in verdicts_alone(wrapper, "empty", OPEN[:2]).items()}
    assert {k: v.kind for k, v in verdicts.items()} == dict.fromkeys(verdicts, "output")
    assert all("not a description document" in v.detail for v in verdicts.values())
