"""The ``lua-torch`` adapter (spec/canonical.md#canonical-reader-cli): real Lua Torch's own reader.

``run.py PATH`` runs ``describe.lua`` under the LuaJIT of the Lua Torch prefix that ``setup`` built (or
linked): ``torch.DiskFile`` in the hinted mode, ``longSize`` and byte order
(spec/canonical.md#canonical-t7-hints; ``torch.load``'s defaults, binary with 8-byte longs, little-endian,
for a hint not given), then ``File:readObject`` until the end of the stream.  luatorch/graph.py turns what Lua
returned into the canonical description, maps a Lua error onto the closed set of codes by torch7's message
and declines a class Lua Torch has not loaded; a signal that kills LuaJIT kills this process too (the
reader's crash, as the harness sees it).  No check of its own: a file Lua reads is described, whatever
the spec says of it.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[3]))  # the repository root: the suite's package

from conformance.adapters.luatorch.graph import answer, one_line  # noqa: E402
from conformance.adapters.luatorch.prefix import PREFIX, lua_command  # noqa: E402
from conformance.harness.facts import hint_env  # noqa: E402

#: ``case.yaml`` key -> the variable that hands it over (spec/canonical.md#canonical-t7-hints).
HINT_ENV = hint_env()

HERE = Path(__file__).resolve().parent
DESCRIBE = HERE / "describe.lua"
#: zip, pickle protocol 2+, and the legacy magic number pickled at protocol 0/1 (as the torchfile adapter).
PT_MAGIC = (b"PK\x03\x04", b"\x80\x02\x8a", b"\x80", b"L119547037146038801333356L")


def settings(env: dict[str, str]) -> list[str]:
    """describe.lua's options from the case's hints (a hint not given: torch.load's default)."""
    out = [f"mode={env.get(HINT_ENV['mode'], 'binary')}"]
    if env.get(HINT_ENV["long_size"]):
        out.append(f"long={env[HINT_ENV['long_size']]}")
    if env.get(HINT_ENV["byte_order"]):
        out.append(f"order={env[HINT_ENV['byte_order']]}")
    return out


def probe() -> int:
    if not (PREFIX / "env.sh").is_file():
        print(f"Lua Torch is not built under {PREFIX} (run conformance/adapters/lua-torch/setup)")
        return 1
    proc = subprocess.run(
        lua_command(
            "-e", "require 'torch'; require 'nn'; require 'nngraph'; require 'tds'; print(jit.version)"
        ),
        capture_output=True,
        text=True,
        stdin=subprocess.DEVNULL,
        timeout=100,
    )
    if proc.returncode:
        print(
            f"Lua Torch under {PREFIX} does not load: {(proc.stderr.strip() or 'no output').splitlines()[-1]}"
        )
        return 1
    print(f"Lua Torch7 @814ea4a with nn, nngraph, tds ({proc.stdout.strip()})")
    return 0


def is_pt(path: str) -> bool:
    """Whether the file is a .pt one (declined: Lua Torch reads only .t7)."""
    with open(path, "rb") as f:
        head = f.read(512)
    return head.startswith(PT_MAGIC) or head[257:262] == b"ustar"


def main(path: str) -> int:
    sys.setrecursionlimit(100_000)  # the description's walk: Lua read that nesting already
    if is_pt(path):
        print("unsupported: pt files (Lua Torch reads only .t7)", file=sys.stderr)
        return 2
    with tempfile.TemporaryDirectory(prefix="lua-torch-") as tmp:
        blobs = Path(tmp) / "blobs.bin"
        proc = subprocess.run(
            lua_command(str(DESCRIBE), str(Path(path).resolve()), str(blobs), *settings(dict(os.environ))),
            capture_output=True,
            stdin=subprocess.DEVNULL,
            cwd=tmp,
        )
        if proc.returncode < 0:  # LuaJIT died by a signal: so does this process, as the reader did
            sys.stderr.write(proc.stderr.decode("utf-8", "replace")[-500:])
            sys.stderr.flush()
            signal.signal(-proc.returncode, signal.SIG_DFL)
            os.kill(os.getpid(), -proc.returncode)
        if proc.returncode != 0:
            last = proc.stderr.decode("utf-8", "replace").strip() or f"exit status {proc.returncode}"
            print(f"adapter error: luajit: {one_line(last.splitlines()[-1])}", file=sys.stderr)
            return 3
        status, out, err = answer(
            proc.stdout.decode("utf-8", "replace").splitlines(),
            blobs.read_bytes() if blobs.exists() else b"",
            os.environ.get(HINT_ENV["mode"], "binary"),
        )
    if out:
        sys.stdout.write(out)
    if err:
        print(err, file=sys.stderr)
    return status


def batch() -> int:
    """``run.py --batch`` (spec/canonical.md#canonical-reader-batch): one serve.lua (luatorch/worker.py) loads
    torch, nn, nngraph and tds once and forks a child per request, which runs describe.lua's reading as
    ``run.py PATH``'s LuaJIT would, in this process's group and environment, under its address-space limit,
    without an alarm of its own (the harness's time limit ends the whole batch process, as it ends
    ``run.py PATH``).  Each answer is what ``run.py PATH`` would print; a child killed by a signal kills
    this process with it, as it kills ``run.py PATH``: the harness sees the reader crash."""
    import resource

    from conformance.adapters import batch_protocol
    from conformance.adapters.luatorch.worker import MEMORY, LuaWorker

    limit = resource.getrlimit(resource.RLIMIT_AS)[0]
    memory = limit if limit != resource.RLIM_INFINITY else MEMORY
    hint_names = {var: key for key, var in HINT_ENV.items()}
    with LuaWorker(0, memory, env=dict(os.environ), own_session=False, stderr=None) as worker:

        def one(path: str) -> int:
            sys.setrecursionlimit(100_000)  # as main(); the batch loop restores its own after each request
            if is_pt(path):
                print("unsupported: pt files (Lua Torch reads only .t7)", file=sys.stderr)
                return 2
            hints = {key: os.environ[name] for name, key in hint_names.items() if os.environ.get(name)}
            got = worker.run(Path(path), hints)
            if got.ended == "signal":  # LuaJIT died by a signal: so does this process, as main() does
                sys.stderr.flush()
                signal.signal(got.code, signal.SIG_DFL)
                os.kill(os.getpid(), got.code)
            if got.ended != "exit" or got.code != 0 or got.status is None:
                print(f"adapter error: luajit: {got.ended} {got.code}", file=sys.stderr)
                return 3
            if got.stdout:
                sys.stdout.write(got.stdout)
            if got.stderr:
                print(got.stderr, file=sys.stderr)
            return got.status

        return batch_protocol.serve(one)


if __name__ == "__main__":
    if sys.argv[1:] == ["--probe"]:
        sys.exit(probe())
    if sys.argv[1:] == ["--batch"]:
        sys.exit(batch())
    sys.exit(main(sys.argv[1]))
