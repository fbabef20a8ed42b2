"""Mutation testing of the reference reader against the suite's cases (issue 18).

``python -m conformance.mutation`` injects one small plausible bug at a time (a *mutant*: a comparison
flipped, a constant off by one, a ``raise`` dropped, a condition forced, a slice bound moved, ...) into
one module of the reader's parsing and describing code (:data:`mutation.scope.TARGETS`), runs the
suite's cases against it as ``pytest conformance --reader reference`` runs and judges them, and records
whether some case failed (the mutant is *killed*) or none did (it *survived*).  A survivor is either an
open gap of the suite or *equivalent* (no input can tell it from the real reader), judged by a person
with a reason in ``equivalent.yaml``.  ``conformance/MUTATION.md`` is rendered from the stored results
(``results.json``) and the judgments alone (``--render``).

Why a driver of its own rather than mutmut or cosmic-ray: both mutate the package in place and run a
test command per mutant.  Here the harness (``conformance/harness``: the runs' sandbox, the contract's
checks, the verdicts) must import the *unmutated* package while only the reader's runs see the mutant;
each mutant must stop at its first failing case, be limited in time, be drawn in a seeded sample from
all modules and be shardable by module; and a new interpreter per case per mutant (mutmut's and
cosmic-ray's unit) would cost minutes per mutant on a 2-core machine.  So:

- :mod:`mutation.operators` lists the mutants of a module from its syntax tree (:mod:`ast`); each has a
  stable id, ``<module>:<line>:<col>:<operator>:<detail>``, so judgments survive a rerun;
- :mod:`mutation.coverage` runs every case once on the unmutated reader with a line tracer (a forked
  child per case) and keeps which lines each case executes: a mutant is run only against the cases that
  execute its line, because a case that never reaches the line runs the same code mutated or not (a
  mutant no case reaches survives without a run: *uncovered*);
- :mod:`mutation.run` writes the mutant into a copy of the package, starts the harness's own warm
  server (``harness/warm.py``, the same fork-per-run start ``pytest conformance`` uses for the reference
  reader) on that copy, and runs the cases through ``harness.runner.run_reader`` and
  ``harness.verdict.judge``: exactly the suite's judgment, with a time limit per case and per mutant;
- :mod:`mutation.page` renders the page from ``results.json`` and ``equivalent.yaml``.
"""
