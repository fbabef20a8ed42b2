"""Where the Lua Torch prefix is and how its LuaJIT starts: read by the adapter's ``run.py`` and by the Lua
worker (:mod:`.worker`) alike, so neither imports the other (spec/canonical.md#canonical-reader-cli).

``setup`` (../shared/tools/lua-torch/build.sh) builds the prefix under the adapters' home, or links one;
``$TORCHFMT_LUA_TORCH`` names another.
"""

from __future__ import annotations

import os
from pathlib import Path

#: The ``lua-torch`` adapter's folder: describe.lua, serve.lua and forward.lua.
ADAPTER = Path(__file__).resolve().parents[1] / "lua-torch"
#: The adapters' home (harness/readers.py ``adapters_home``: ``$TORCHFMT_ADAPTERS_HOME`` or the cache).
HOME = os.environ.get("TORCHFMT_ADAPTERS_HOME") or Path.home() / ".cache/torchfmt/adapters"
#: The Lua Torch prefix: built (or linked) by setup; $TORCHFMT_LUA_TORCH names another.
PREFIX = Path(os.environ.get("TORCHFMT_LUA_TORCH") or Path(HOME) / "lua-torch" / "prefix")


def lua_command(*args: str) -> list[str]:
    """``luajit ARGS`` in the prefix's environment (the env.sh build.sh wrote)."""
    return ["/bin/sh", "-c", '. "$0/env.sh" && exec luajit "$@"', str(PREFIX), *args]
