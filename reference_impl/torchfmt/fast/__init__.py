"""The reader's fast paths, and the one switch that says whether they are taken (issue 29).

A fast path reads a very common stretch of a file (a state_dict's tensor entries, in a pickle or a binary
``.t7`` stream; a plain zip archive's members) in one step, and declines, leaving the reader as it was,
on anything else; the checked path then reads the same bytes and raises its own error.  Nothing here
changes what a file means (spec/pickle.md, spec/t7.md#t7-tensor, spec/pt-zip.md#pt-zip-root-name):
with the switch off the reader gives the same description, or the same error, byte for byte, only
slower.  The conformance suite is run both ways (``.ci/run``), and the equivalence tests flip the switch.

``TORCHFMT_FAST=0`` in the environment turns the fast paths off; ``1``, or no such variable, leaves them
on.  It is read once, when the reader's modules are first imported, so that a reader process started
by the conformance harness (in its sandbox or not), or forked from its warm server, takes the setting
of the environment the harness ran in.  Code (a test) may set :data:`ENABLED` itself: the reader reads
it as each file, stream or pickle begins.
"""

from __future__ import annotations

import os

#: The environment variable read at import.
VARIABLE = "TORCHFMT_FAST"


def _from_environment() -> bool:
    value = os.environ.get(VARIABLE, "1")
    if value not in ("0", "1"):
        raise ValueError(f"{VARIABLE}={value!r}: 0 turns the reader's fast paths off, 1 leaves them on")
    return value == "1"


#: Whether the reader takes its fast paths.
ENABLED: bool = _from_environment()
