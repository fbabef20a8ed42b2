"""The readers' adapters (harness/readers.py: one folder per reader, ``adapter.yaml`` and ``run.py``) and
the modules several of them share, importable as ``conformance.adapters.*``: the batch protocol's loop
(``batch_protocol``), the torch adapter (``torch_reader``), the Kaitai reader (``kaitai``, ``kaitai_reader``)
and the way to real Lua Torch (``luatorch``).  An adapter's script is a command the harness runs in a
sandbox: it puts the repository root on ``sys.path`` itself (the only such edits of the project, checked by
conformance/tests/test_imports.py).
"""
