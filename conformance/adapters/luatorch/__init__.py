"""Real Lua Torch from Python, one way for the ``lua-torch`` adapter (``lua-torch/run.py``) and the suite's
own tools (conformance/lua_verdicts.py, conformance/differential/t7.py, conformance/generators/lua_torch.py,
the writer's Lua tests): :mod:`.prefix` says where setup built it and how to start its LuaJIT,
:mod:`.graph` turns what ``lua-torch/describe.lua`` printed into the canonical description
(spec/canonical.md#canonical-reader-cli), :mod:`.worker` keeps one ``lua-torch/serve.lua`` forking a child
per file.  A package beside the adapter's folder (whose name, the reader's, is no Python name), so that
each is imported by one name; the Lua scripts stay in ``lua-torch/``.
"""
