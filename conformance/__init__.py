"""torchfmt's conformance suite, one package: ``conformance.harness`` (the judge), ``conformance.generators``
(the committed cases' writers), ``conformance.differential``, ``conformance.mutation`` and the adapters'
shared modules (``conformance.adapters``), each imported by one name (issue 29).

Deliberately empty: a reader's sandbox (harness/sandbox.py) shows only ``adapters/``, ``harness/`` and
``generators/`` of this folder, so an adapter's script imports ``conformance`` there as a namespace
package; nothing may depend on code here.  Commands run from the repository root (``python -m
conformance.matrix``); the tests outside this folder find it by pytest's ``pythonpath`` (pyproject.toml).
"""
