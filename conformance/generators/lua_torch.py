"""Running real Lua Torch for the generators: the prefix the ``lua-torch`` adapter's setup builds (torch7
@814ea4a on LuaJIT 2.1 with nn, nngraph and tds, by ``../shared/tools/lua-torch/build.sh``) or the one
``$TORCHFMT_LUA_TORCH`` names, as the adapter's ``run.PREFIX`` says: one place for it.

:func:`read` loads a file with ``lua_describe.lua`` (``File:readObject`` with given settings, every object
until the end of the file) and returns what Lua loaded, or why it refused; :func:`run` evaluates a Lua
chunk that writes bytes to standard output (``torch.serialize``, ``string.dump``).
"""

from __future__ import annotations

import json
import re
import subprocess
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from conformance.adapters.luatorch.prefix import PREFIX, lua_command

ROOT = Path(__file__).resolve().parents[2]
# the adapter's: where setup built Lua Torch (or $TORCHFMT_LUA_TORCH), and luajit in the env.sh build.sh wrote

DESCRIBE = Path(__file__).resolve().parent / "lua_describe.lua"
#: lua_describe.lua as Lua names it, wherever the checkout lies (LuaJIT shortens a long chunk name to
#: ``...`` and its tail): one spelling, so a case's note does not depend on the checkout's path.
_DESCRIBE_NAMED = re.compile(r"\S*lua_describe\.lua")
#: A chunk name LuaJIT shortened (``...x/prefix/share/lua/5.1/torch/File.lua``): the part before ``/share``.
_SHORTENED_PREFIX = re.compile(r"\.\.\.\S*?(/share/lua/5\.1/)")
WRITER = "Lua Torch7 @814ea4a (LuaJIT 2.1.0-beta3, x86_64 Linux)"


def run(chunk: str) -> bytes:
    """What the Lua chunk writes to standard output (``require 'torch'`` done first)."""
    proc = subprocess.run(
        lua_command("-e", "require 'torch'; " + chunk), capture_output=True, timeout=120
    )
    if proc.returncode:
        raise SystemExit(f"Lua failed: {proc.stderr.decode('utf-8', 'replace')[:300]}")
    return proc.stdout


@dataclass
class Reading:
    loads: bool
    said: str  # one line: what Lua Torch said of the file
    raw: dict[str, Any] | None  # lua_describe.lua's JSON when it loaded and described the file


def read(data: bytes, mode: str, long_size: int, byte_order: str) -> Reading:
    """Lua Torch's reading of ``data`` (spec/t7.md: mode ``ascii`` or ``binary``, long size, byte order)."""
    with tempfile.NamedTemporaryFile(suffix=".t7") as f:
        f.write(data)
        f.flush()
        proc = subprocess.run(
            lua_command(str(DESCRIBE), f.name, mode, str(long_size), byte_order),
            capture_output=True,
            timeout=600,
        )
    out = proc.stdout.decode("utf-8", "replace").strip()
    err = proc.stderr.decode("utf-8", "replace")
    if proc.returncode == 0 and out.startswith("{"):
        return Reading(True, "Lua Torch loads it", json.loads(out))
    said = (out or err or f"exit status {proc.returncode}").replace(str(PREFIX), "")
    said = _DESCRIBE_NAMED.sub("conformance/generators/lua_describe.lua", said)
    # LuaJIT shortens a long chunk name to "...<its end>": that end of the prefix goes too
    said = " ".join(_SHORTENED_PREFIX.sub(r"\1", said).split())[:160]
    if "LOADED" in err:  # readObject took every object; describing them failed (a view outside its storage)
        return Reading(True, f"Lua Torch loads it (and then fails to use it: {said})", None)
    return Reading(False, f"Lua Torch refuses it ({said})", None)
