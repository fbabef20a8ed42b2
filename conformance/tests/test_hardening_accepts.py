"""Dict keys and set items merge as in Python (spec/pickle.md#pickle-keys), checked against real torch.

The hostile but valid pickles of the pickle-hardening family
(:data:`generators.adversarial.pickle_hardening.ACCEPTS`) are loaded by torch 2.13 with
``weights_only=True`` in a subprocess and described by ``torch_describe``; what torch builds must be what
the requirement says (which key object stays, which value, how many items), and the reference reader
must describe the same (spec/canonical.md#canonical-comparison).
"""

from __future__ import annotations

import atexit
import contextlib
import importlib.util
import io
import json
import os
import shutil
import subprocess
import sys
import tempfile
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest

from conformance.generators.adversarial import pickle_hardening
from conformance.harness.compare import compare

pytestmark = pytest.mark.spec("pickle.md#pickle-keys")  # counted by spec/traceability.py

CONFORMANCE = Path(__file__).resolve().parents[1]

#: What the requirement says torch builds: (items, the kept key's type, the first item's value).
SAID: dict[str, tuple[int, str, str | None]] = {
    "key-tuple-then-size": (1, "tuple", "b"),
    "key-size-then-tuple": (1, "object", "b"),
    "key-numbers-merge": (1, "int", "13"),
    "key-true-first": (1, "bool", "2"),
    "key-nan-twice": (2, "float", "1"),
    "key-nan-memo": (1, "float", "2"),
    "set-numbers-merge": (2, "int", None),
}

_TORCH = """
import json, sys
from pathlib import Path
from conformance.generators import torch_describe as td
from conformance.generators.adversarial import assemble, pickle_hardening, wrap
out = {{}}
for name, body, *_ in pickle_hardening.ACCEPTS:
    path = Path(sys.argv[1]) / f"{{name}}.pt"
    path.write_bytes(wrap.in_zip(assemble.program(body), drop=pickle_hardening.NO_STORAGE))
    out[name] = td.describe(td.load(str(path), allow_unsafe=False).obj, "pt-zip")
print(json.dumps(out))
"""


#: The folder of the files and torch's descriptions of them (its run, started by :func:`start_runs`).
STARTED: dict[str, Any] = {}


def _by_torch(folder: Path) -> dict[str, Any]:
    """In one subprocess (the files start from a torch-written zip: this process never imports torch):
    write the family's accept files into ``folder`` and describe each as ``torch.load(weights_only=True)``
    loads it, with torch_describe."""
    script = _TORCH.format()
    # the suite's package from this checkout (the script runs in ``folder``)
    path = os.pathsep.join([str(CONFORMANCE.parent), os.environ.get("PYTHONPATH", "")])
    r = subprocess.run([sys.executable, "-c", script, str(folder)], capture_output=True, text=True,
                       timeout=300, cwd=folder, env={**os.environ, "PYTHONPATH": path})
    assert r.returncode == 0, r.stderr[-2000:]
    return json.loads(r.stdout.strip().splitlines()[-1])


def start_runs(selected: list[pytest.Item] | None = None) -> None:
    """Run torch on the files, in a thread (conftest.py calls this when collection ends: torch takes
    seconds to import, so the tests start meanwhile)."""
    if STARTED or importlib.util.find_spec("torch") is None:  # the files start from a torch-written zip
        return
    folder = STARTED["folder"] = Path(tempfile.mkdtemp(prefix="torchfmt-hardening-accepts-"))
    atexit.register(shutil.rmtree, folder, ignore_errors=True)
    pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="hardening")
    STARTED["by_torch"] = pool.submit(_by_torch, folder)
    pool.shutdown(wait=False)


@pytest.fixture(scope="module")
def by_torch(needs_torch: None) -> dict[str, Any]:
    start_runs()
    return STARTED["by_torch"].result()


@pytest.fixture(scope="module")
def files(by_torch: dict[str, Any]) -> dict[str, Path]:
    return {name: STARTED["folder"] / f"{name}.pt" for name, *_ in pickle_hardening.ACCEPTS}


@pytest.mark.parametrize("name", sorted(SAID))
def test_torch_merges_keys_as_the_requirement_says(by_torch: dict[str, Any], name: str) -> None:
    count, key_type, value = SAID[name]
    top = by_torch[name]["objects"][0]
    assert len(top["items"]) == count
    first = top["items"][0]
    key, got = (first if top["type"] != "set" else (first, None))
    assert key["type"] == key_type
    if value is not None:
        assert got.get("value") == value


@pytest.mark.parametrize("name", [n for n, *_ in pickle_hardening.ACCEPTS])
def test_reference_reader_describes_what_torch_loads(files: dict[str, Path], by_torch: dict[str, Any],
                                                     name: str) -> None:
    """What ``torchfmt dump`` prints, from its ``main`` in this process (the command itself runs every
    committed case; this test is about the description, not the process)."""
    from torchfmt.cli import main

    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        status = main(["dump", str(files[name])])
    assert status == 0, err.getvalue()
    assert compare(by_torch[name], json.loads(out.getvalue())) == []
