"""What real torch does with a derived ``.pt`` file, asked in a sandboxed subprocess.

``torch.load(f, weights_only=True)`` and ``weights_only=False`` are each run in a forked child of one
worker process that imports torch once.  The worker runs in a throwaway temporary folder (cwd, HOME and
TMPDIR), each child under an address-space limit and an alarm, so that a gadget file that does run its
payload only touches its canary, and a bomb only kills its child.  The generator never loads a file in
its own process.

For an accept case (``describe`` names its format) the ``weights_only=True`` child also describes what
torch loaded with ``generators/torch_describe.py`` (which never imports torchfmt): that description is
the case's expectation.  A tar checkpoint (spec/pt-tar.md), which torch 2.13 reads only with
``weights_only=False``, is judged and described by that load instead (``judge``).

Run as a script, this module is the worker: ``torchcheck.py MANIFEST.json`` (a list of
``{"name", "path", "canaries", "describe"}``) prints one JSON list of verdicts.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

PYTHON = os.environ.get("TORCHFMT_TORCH_PYTHON", sys.executable)
CHILD_SECONDS = 30
CHILD_MEMORY = 4 << 30


@dataclass(frozen=True)
class Verdict:
    """torch's answer for one mode: ``loads`` or an exception summary; ``ran`` when a canary was created
    or touched; ``description`` what it loaded (asked for accept cases, ``weights_only=True`` only) or,
    as a string, why torch_describe has no form for it."""

    loads: bool
    detail: str
    ran: bool = False
    description: dict[str, Any] | str | None = None

    def text(self, mode: str) -> str:
        what = "loads it" if self.loads else f"refuses it ({self.detail})"
        return f"torch.load(weights_only={mode}) {what}" + ("; the canary was touched" if self.ran else "")


def check(
    files: dict[str, bytes],
    canaries: dict[str, list[str]] | None = None,
    describe: dict[str, str] | None = None,
    judge: dict[str, str] | None = None,
) -> dict[str, dict[str, Verdict]]:
    """{name: {"True": Verdict, "False": Verdict}} for each file of ``files`` (name -> bytes); the files
    named in ``describe`` (name -> format) are described as loaded by ``weights_only=True``, or by the
    mode ``judge`` gives them (name -> ``"False"``)."""
    canaries = canaries or {}
    describe = describe or {}
    judge = judge or {}
    with tempfile.TemporaryDirectory(prefix="torchfmt-torchcheck-") as tmp:
        manifest = []
        for i, (name, data) in enumerate(files.items()):
            p = Path(tmp) / f"f{i}.pt"
            p.write_bytes(data)
            item = {"name": name, "path": str(p), "canaries": canaries.get(name, [])}
            manifest.append(item | {"describe": describe.get(name), "judge": judge.get(name, "True")})
        (Path(tmp) / "manifest.json").write_text(json.dumps(manifest))
        work = Path(tmp) / "work"
        work.mkdir()
        env = {
            "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
            "HOME": str(work),
            "TMPDIR": str(work),
            "OMP_NUM_THREADS": "1",
            "PYTHONDONTWRITEBYTECODE": "1",
            # the worker is this module, run by name: the suite's package from this checkout
            "PYTHONPATH": str(Path(__file__).resolve().parents[3]),
        }
        out = subprocess.run(
            [PYTHON, "-m", "conformance.generators.adversarial.torchcheck", str(Path(tmp) / "manifest.json")],
            cwd=work,
            env=env,
            capture_output=True,
            timeout=60 + 2 * CHILD_SECONDS * len(files),
            stdin=subprocess.DEVNULL,
        )
        if out.returncode != 0:
            raise RuntimeError(f"torchcheck worker failed: {out.stderr.decode(errors='replace')[-2000:]}")
        rows = json.loads(out.stdout.decode().strip().splitlines()[-1])
    return {r["name"]: {mode: Verdict(**r[mode]) for mode in ("True", "False")} for r in rows}


# -- the worker ------------------------------------------------------------------------------------


def _child(
    path: str, weights_only: bool, folder: str, write_fd: int, fmt: str | None
) -> None:  # pragma: no cover
    import resource
    import signal

    os.chdir(folder)
    resource.setrlimit(resource.RLIMIT_AS, (CHILD_MEMORY, CHILD_MEMORY))
    signal.alarm(CHILD_SECONDS)
    import torch

    result: dict[str, Any]
    try:
        if fmt is None:
            obj = torch.load(path, weights_only=weights_only, map_location="cpu")
            result = {"loads": True, "detail": type(obj).__name__}
        else:
            from conformance.generators import torch_describe as td

            loaded = td.torch_load(path, weights_only)
            result = {"loads": True, "detail": type(loaded.obj).__name__}
            notes = {"_loaded_with": loaded.how, "_torch_version": torch.__version__}
            try:
                result["description"] = td.describe(loaded.obj, fmt, notes, loaded.locations)
            except td.Declined as e:
                result["description"] = f"no canonical form: {e}"
    except BaseException as e:  # noqa: BLE001 - whatever torch raises is the answer sought
        first = _reason(str(e))[:150]
        result = {"loads": False, "detail": f"{type(e).__name__}: {first}".rstrip(": ")}
    os.write(write_fd, json.dumps(result).encode())
    os._exit(0)


def _mtime(path: str) -> int | None:
    """A canary's modification time in ns, None when absent (a payload's ``touch`` moves it)."""
    try:
        return os.stat(path).st_mtime_ns
    except OSError:
        return None


def _reason(text: str) -> str:
    """The first line of the reason in torch's message, past the preamble and the advice torch wraps
    around a weights_only refusal ("Weights only load failed. ... Do it only if you got the file from a
    trusted source.", "Check the documentation ...")."""
    text = text.strip()
    if "WeightsUnpickler error:" in text:  # torch 2.0-2.5
        text = text.split("WeightsUnpickler error:", 1)[1].strip()
    paragraphs = [p.strip() for p in text.split("\n\n") if p.strip()]
    kept = [p for p in paragraphs
            if not p.startswith(("Weights only load failed.", "Check the documentation of torch.load"))]
    return ((kept or paragraphs or [""])[0].splitlines() or [""])[0]


def _run_one(
    path: str, weights_only: bool, canaries: list[str], fmt: str | None
) -> dict[str, object]:  # pragma: no cover
    folder = tempfile.mkdtemp(prefix="load-")
    marks = {c: _mtime(c) for c in canaries}  # one left from elsewhere counts only when touched again
    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:
        os.close(r)
        try:
            _child(path, weights_only, folder, w, fmt)
        finally:
            os._exit(3)
    os.close(w)
    chunks = []
    while True:
        chunk = os.read(r, 65536)
        if not chunk:
            break
        chunks.append(chunk)
    os.close(r)
    _, status = os.waitpid(pid, 0)
    shutil.rmtree(folder, ignore_errors=True)
    if chunks:
        result = json.loads(b"".join(chunks))
    elif os.WIFSIGNALED(status):
        result = {"loads": False, "detail": f"the loading process died (signal {os.WTERMSIG(status)})"}
    else:
        result = {"loads": False, "detail": f"the loading process died (status {os.WEXITSTATUS(status)})"}
    touched = [c for c, before in marks.items() if _mtime(c) not in (None, before)]
    for c in touched:
        if marks[c] is None:  # made by this load: gone before the next one
            os.unlink(c)
    result["ran"] = bool(touched)
    return result


def main(manifest_path: str) -> None:  # pragma: no cover
    import torch  # noqa: F401 - imported once, before the forks

    from conformance.generators import torch_describe  # noqa: F401

    rows = []
    for item in json.loads(Path(manifest_path).read_text()):
        row = {"name": item["name"]}
        for mode in (True, False):
            fmt = item.get("describe") if str(mode) == item.get("judge", "True") else None
            row[str(mode)] = _run_one(item["path"], mode, item["canaries"], fmt)
        rows.append(row)
    print(json.dumps(rows))


if __name__ == "__main__":
    main(sys.argv[1])
