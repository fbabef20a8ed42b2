"""The Kaitai-based second reader (conformance/adapters/kaitai_reader.py, issue 4).

Its descriptions are checked against committed cases whose expected.json came from the real writer's own
loader (torch, Lua Torch), with the suite's comparator (spec/canonical.md#canonical-comparison); its
rejections against the cases' codes; its command line against the contract
(spec/canonical.md#canonical-reader-cli).  It must never import torchfmt, and its own tables (dtypes,
rebuild handlers) must agree with the project's one table of each fact.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
from pathlib import Path
from typing import Any

import pytest
import yaml

from conformance.adapters import kaitai_reader
from conformance.adapters.kaitai import facts, rebuild
from conformance.adapters.kaitai.failure import Decline, Reject
from conformance.harness.compare import compare
from conformance.harness.expected import load_expected
from conformance.harness.readers import resolve

ROOT = Path(__file__).resolve().parents[2]
ADAPTER = ROOT / "conformance" / "adapters" / "kaitai_reader.py"
CASES = ROOT / "conformance" / "cases"

from torchfmt import dtypes as project_dtypes  # noqa: E402
from torchfmt.errors import ERROR_CODES  # noqa: E402

HINT_ENV = {"mode": "TORCHFMT_T7_MODE", "long_size": "TORCHFMT_T7_LONG_SIZE",
            "byte_order": "TORCHFMT_T7_BYTE_ORDER"}


def _case(case_id: str) -> tuple[Path, dict[str, Any]]:
    folder = CASES / case_id
    spec = yaml.safe_load((folder / "case.yaml").read_text(encoding="utf-8"))
    return folder / spec["file"], spec


def _read(path: Path, hints: dict[str, Any], monkeypatch: pytest.MonkeyPatch) -> dict[str, Any]:
    """The adapter's description of ``path``, in this process (on a thread with the adapter's stack)."""
    for key, var in HINT_ENV.items():
        if key in hints:
            monkeypatch.setenv(var, str(hints[key]))
        else:
            monkeypatch.delenv(var, raising=False)
    out: dict[str, Any] = {}

    def work() -> None:
        try:
            out["doc"] = kaitai_reader.read(str(path))
        except (Reject, Decline) as e:
            out["error"] = e

    threading.stack_size(kaitai_reader.STACK_SIZE)
    t = threading.Thread(target=work)
    t.start()
    t.join()
    threading.stack_size(0)
    if "error" in out:
        raise out["error"]
    return out["doc"]


ACCEPT = [
    "t7-binary/nn-sequential-trained",  # torch objects, shared tensors and storages
    "t7-binary/long4-tensor-double-t",  # 4-byte longs
    "t7-binary/bigendian-table",
    "t7-binary/tds-hash-vec",
    "t7-binary/func-shared-upvalue",
    "t7-ascii/ascii-tensor-float-2x3",  # inf, -nan, denormals as ascii tokens
    "t7-ascii/ascii-tensor-half-2x3",
    "pt-zip/python-str-lone-surrogate",  # BINUNICODE bytes decoded with surrogatepass
    "pt-legacy/python-str-lone-surrogate-torch1.13",
    "pt-zip/adv-hard-key-size-then-tuple",  # keys merge as Python's: torch.Size equals its tuple
    "pt-zip/adv-hard-key-numbers-merge",  # 1, 1.0, True and complex(1, 0) are one key
    "pt-zip/adv-hard-complex-of-an-int",  # normal forms
    "pt-zip/adv-hard-size-of-a-list",
    "pt-zip/adv-zip-name-upper-case-data-pkl",  # pytorch_zip.ksy: a .PKL record is a pickle too
    "pt-legacy/adv-legacy-padded-head-pickles",  # pytorch_legacy.ksy: padding after the magic's ten bytes
]


def _present(ids: list[str]) -> list[str]:
    return [i for i in ids if (CASES / i / "case.yaml").is_file()]


def _accept_cases(fmt: str, limit: int) -> list[str]:
    """The first ``limit`` accept cases of a format folder written by real torch (expected from its
    loader; the adversarial ``adv-*`` accept cases are the suite's, run by the matrix)."""
    out = []
    for folder in sorted((CASES / fmt).iterdir()) if (CASES / fmt).is_dir() else []:
        if folder.name.startswith("adv-"):
            continue
        spec_file = folder / "case.yaml"
        if spec_file.is_file() and "category: accept" in spec_file.read_text(encoding="utf-8"):
            out.append(f"{fmt}/{folder.name}")
        if len(out) == limit:
            break
    return out


@pytest.mark.parametrize("case_id", _present(ACCEPT) + _accept_cases("pt-zip", 6)
                         + _accept_cases("pt-legacy", 4) + _accept_cases("pt-torchscript", 2))
def test_description_equals_the_writers(case_id: str, monkeypatch: pytest.MonkeyPatch) -> None:
    path, spec = _case(case_id)
    expected = load_expected(path.parent / spec["expect"]["description"])
    got = _read(path, spec.get("hints", {}), monkeypatch)
    assert compare(expected, got) == []


REJECT = [
    "t7-binary/reject-negative-ndim",
    "t7-binary/reject-truncated-in-storage-data",
    "t7-binary/reject-view-offset-outside-storage",
    "t7-binary/class-custom-write",  # the grammar trips on the index; the payload's type code comes first
    "pt-zip/reject-view-size-outside-storage",
    "pt-zip/adv-gadget-os-system",  # a zip without zip64 records: the end record is searched for
    "pt-zip/adv-pickle-frame-beyond-record",
    "pt-legacy/reject-bad-magic",
    "pt-legacy/adv-storage-count-below-pid",
    "pt-tar/adv-tar-v7-header-over-legacy-stream",  # a V7 tar header: the tar path, as torch's tarfile
    "pt-zip/adv-hard-deep-frozenset",  # nesting refused when FROZENSET runs, before hashing
    "pt-zip/adv-hard-long4-over-limit-past-end",  # the limit wins over the bytes
    "pt-zip/adv-hard-node-bomb-tuples",
    "pt-zip/adv-hard-escape-bomb",  # JSON text bytes, escapes counted
    "pt-zip/adv-hard-view-hash-bomb",
    "pt-zip/adv-hard-surrogate-pair-str",
    "pt-zip/adv-hard-int-leading-zero",
    "t7-binary/adv-t7-class-header-30k-digits",  # 'V <no number>' is a class name (lua_versions)
    "t7-ascii/adv-t7-ascii-class-header-30k-digits",
]


@pytest.mark.parametrize("case_id", _present(REJECT))
def test_rejects_with_a_code_the_case_lists(case_id: str, monkeypatch: pytest.MonkeyPatch) -> None:
    path, spec = _case(case_id)
    codes = spec["expect"].get("errors") or [spec["expect"]["error"]]
    with pytest.raises(Reject) as e:
        _read(path, spec.get("hints", {}), monkeypatch)
    assert e.value.code in codes


@pytest.mark.parametrize("cls", [b"tds.Hash", b"tds.Vec"])
def test_a_negative_tds_count_is_bad_length(cls: bytes, tmp_path: Path,
                                          monkeypatch: pytest.MonkeyPatch) -> None:
    """Lua Torch's tds file with the count after one class name made -1: the grammar's own validation
    fails at the count (spec/t7.md#t7-tds), which the reader reports as ``bad-length``."""
    path, spec = _case("t7-binary/tds-hash-vec")
    data = bytearray(path.read_bytes())
    at = data.index(cls) + len(cls)  # the class name string ends where the payload's long count starts
    assert int.from_bytes(data[at:at + 8], "little", signed=True) >= 0
    data[at:at + 8] = (-1).to_bytes(8, "little", signed=True)
    bad = tmp_path / "negative.t7"
    bad.write_bytes(bytes(data))
    with pytest.raises(Reject) as e:
        _read(bad, spec["hints"], monkeypatch)
    assert e.value.code == "bad-length"
    assert f"tds_{cls[4:].decode().lower()}/seq/0" in e.value.message


def _run(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, str(ADAPTER), *args], capture_output=True, text=True,
                          env={**os.environ, "PYTHONDONTWRITEBYTECODE": "1", **(env or {})}, timeout=120)


def test_command_line_contract(tmp_path: Path) -> None:
    """Exit 0 + one JSON document; exit 1 + one ``<code>: ...`` line; exit 2 + one ``unsupported: ...``
    line for what is not a file format problem (spec/canonical.md#canonical-reader-cli): never another
    status, even for its own failures."""
    path, _ = _case("t7-binary/table-nested")
    ok = _run(str(path))
    assert ok.returncode == 0 and json.loads(ok.stdout)["format"] == "t7-binary"
    empty = tmp_path / "empty.t7"
    empty.write_bytes(b"")
    lfs = tmp_path / "model.pt"
    lfs.write_bytes(b"version https://git-lfs.github.com/spec/v1\noid sha256:00\nsize 12\n")
    for f, code in ((empty, "truncated"), (lfs, "unknown-format")):
        r = _run(str(f))
        assert (r.returncode, r.stdout) == (1, "")
        assert r.stderr.count("\n") == 1 and r.stderr.startswith(f"{code}: ")
    folder = _run(str(tmp_path))  # a folder: not a file format problem
    assert folder.returncode == 2 and folder.stdout == ""
    assert folder.stderr.count("\n") == 1 and folder.stderr.startswith("unsupported: unreadable-path (")
    usage = _run()
    assert usage.returncode == 2 and usage.stderr.startswith("unsupported: ")


def test_a_reader_bug_keeps_the_contract(monkeypatch: pytest.MonkeyPatch,
                                        capsys: pytest.CaptureFixture[str]) -> None:
    """An unexpected exception is exit 2 ``unsupported: internal-error (...)``, a RecursionError or
    MemoryError exit 1 ``limit-exceeded``: one line, never a traceback, never exit 3."""
    path, _ = _case("t7-binary/table-nested")
    bug = "unsupported: internal-error (KeyError: torch.strided"
    for exc, status, start in ((KeyError("torch.strided"), 2, bug),
                               (RecursionError("deep"), 1, "limit-exceeded: "),
                               (MemoryError(), 1, "limit-exceeded: ")):
        def boom(_path: str, exc: BaseException = exc) -> dict[str, Any]:
            raise exc
        monkeypatch.setattr(kaitai_reader, "read", boom)
        assert kaitai_reader.main(["kaitai_reader.py", str(path)]) == status
        err = capsys.readouterr().err
        assert err.count("\n") == 1 and err.startswith(start), err


def test_never_imports_torchfmt() -> None:
    """An independent reader: reading a .t7 and a .pt file loads no torchfmt module."""
    files = [str(_case(c)[0]) for c in _present(["t7-binary/tensor-float-2x3", "pt-legacy/reject-bad-magic"])]
    files += [str(_case(c)[0]) for c in _accept_cases("pt-zip", 1)]
    script = (
        "import sys\n"
        "from conformance.adapters import kaitai_reader\n"
        "from conformance.adapters.kaitai.failure import Reject, Decline\n"
        f"for f in {files!r}:\n"
        "    try:\n"
        "        kaitai_reader.read(f)\n"
        "    except (Reject, Decline):\n"
        "        pass\n"
        "print(sorted(m for m in sys.modules if m.split('.')[0] == 'torchfmt'))\n"
    )
    # the suite's package and the generated parsers, as pyproject.toml's pythonpath gives them to the tests
    path = os.pathsep.join([str(ROOT), str(ROOT / "ksy" / "generated"), os.environ.get("PYTHONPATH", "")])
    env = {**os.environ, "PYTHONDONTWRITEBYTECODE": "1", "PYTHONPATH": path}
    r = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120,
                       cwd=str(ROOT.parent), env=env)
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip() == "[]"


def test_suite_runs_this_adapter_as_kaitai() -> None:
    assert resolve("kaitai").command == [sys.executable, str(ADAPTER)]


def test_dtype_table_agrees_with_the_project() -> None:
    """The adapter's dtypes against reference_impl/torchfmt/dtypes.py, the one table (names, widths,
    byte-swap units, storage and t7 classes, quantized, packing)."""
    def row(d: Any) -> tuple[Any, ...]:
        return (d.name, d.itemsize, d.swap_unit, d.storage_class, d.t7_class, d.quantized, d.per_byte)

    assert [row(d) for d in facts.DTYPES.values()] == [row(d) for d in project_dtypes.DTYPES]


def test_every_reader_limit_is_read_from_the_table() -> None:
    """Each limit of spec/canonical.md's reader-limits table is the project's (torchfmt/limits.py) and
    is used by this reader by its name, never as a copied number."""
    from torchfmt import limits as project_limits

    table = facts.limits()
    assert table == {lim.name: lim.value for lim in project_limits.LIMITS}
    sources = "".join(p.read_text(encoding="utf-8") for p in (ADAPTER.parent / "kaitai").glob("*.py"))
    assert [name for name in table if f'"{name}"' not in sources] == []


def test_error_codes_are_read_from_errors_py() -> None:
    assert facts.error_codes() == frozenset(ERROR_CODES)
    with pytest.raises(ValueError):
        Reject("no-such-code", "x")


def test_every_allowed_callable_has_a_rebuild() -> None:
    """Every callable of spec/pickle.md's allowlist that a strict reader may meet has a handler here
    (an entry added to the allowlist without one would make this reader decline such files)."""
    missing = [name for name, entry in facts.allowlist().items()
               if entry.role == "callable" and entry.scope != "inert" and name not in rebuild.HANDLERS]
    assert missing == []
    kinds = {p.kind for entry in facts.allowlist().values() for p in entry.params}
    assert kinds <= set(rebuild.KINDS)
