"""The tools built on the reader (README "Tools"): ``inspect`` and its byte accounting (:mod:`.sizes`,
:mod:`.roles`, :mod:`.plot`), ``slim``, ``convert`` and the flat numpy view of :func:`torchfmt.load_file`
(:mod:`.flat`).

A layer of its own: the tools read files only through the reader's entry points
(:func:`torchfmt.open_document`, detect -> container -> object stream -> model), with its limits and
errors, and the reader never imports them (``tests/test_layering.py``).
"""
