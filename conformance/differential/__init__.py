"""The differential harness: hostile variants through torch 2.13 and the reference reader, and every
disagreement classified (spec/canonical.md#canonical-differential; issue 8).

- :mod:`.variants`: the adversarial families' cases and seeded mutations (:mod:`.mutations`) of the
  committed accept ``.pt`` files;
- :mod:`.forkserver`: persistent sandboxed workers, one per reader, forking a child per file;
- :mod:`.run`: both readers on one variant; :mod:`.classify`: what the two runs say together, with the
  documented stricter-than-torch rules of :mod:`.stricter` (``stricter.yaml``);
- :mod:`.report`: ``report.json``, ``summary.md`` and the files of the real disagreements.

``python -m conformance.differential`` (from the repository root) runs it in full.
"""
