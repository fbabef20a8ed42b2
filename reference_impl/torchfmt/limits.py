"""The reader's resource limits: the one home of each number (spec/canonical.md#canonical-node-budget).

Each limit is a :class:`Limit` record: its name, its value and the spec requirements that state it.
Every module that enforces a limit reads the value from here; spec/canonical.md's table of limits is
rendered from :data:`LIMITS` (spec/tools/tables.py), and the tests check that every requirement named
in ``anchors`` states the same number.  Exceeding any of them is ``limit-exceeded``.
"""

from __future__ import annotations

from dataclasses import dataclass

#: The Python frames a walk of a value the limits allow may take (describing it, writing its JSON,
#: pickling or serializing it back): raised for such a walk by :func:`torchfmt.recursion.recursion_limit`.
#: Not a limit on files: the walks are bounded by the data's depth, which the limits below cap.
WALK_FRAMES = 20_000


@dataclass(frozen=True)
class Limit:
    """One limit: ``value`` is the largest amount a reader accepts; ``anchors`` (``file.md#anchor``) are
    the spec requirements that state it, the first being where it is defined; ``what`` says what is
    counted."""

    name: str
    value: int
    anchors: tuple[str, ...]
    what: str


#: VALUE nodes a description may hold (the pickle machine measures a finished value against it too).
#: With TEXT_BUDGET and PICKLE_OPCODES it bounds a reader's time and memory: the reference reader
#: answers any file of up to 16 MB within 10 s and 2 GiB (spec/canonical.md#canonical-node-budget).
NODE_BUDGET = Limit("NODE_BUDGET", 500_000,
                    ("canonical.md#canonical-node-budget", "pickle.md#pickle-limits"),
                    "VALUE nodes of a description")
#: Bytes of JSON text the str and bytes values of a description write (escapes and quotes included),
#: counted at every occurrence: what a value referenced many times costs when written out in full.
TEXT_BUDGET = Limit("TEXT_BUDGET", 1 << 28, ("canonical.md#canonical-node-budget",),
                    "bytes of JSON text written for str and bytes values (escaped, at every occurrence)")
#: Opcodes one pickle may run (a POP-and-push loop builds nothing, yet costs time).
PICKLE_OPCODES = Limit("PICKLE_OPCODES", 2_000_000, ("pickle.md#pickle-limits",),
                       "opcodes one pickle runs")
#: Items the pickle's calls (allowed callables, BUILD) are handed, over a whole pickle: each item of a
#: container argument and of the containers inside it, a str or bytes argument one per 64 units.  A
#: call's work grows with its arguments, and the memo lets a small file hand the same big list to a
#: call again and again.
CALL_WORK = Limit("CALL_WORK", 1 << 23, ("pickle.md#pickle-limits",),
                  "items handed to a pickle's calls and BUILDs (text: one per 64 units)")
#: Nesting of a finished pickle value, the top value at depth 1.
VALUE_DEPTH = Limit("VALUE_DEPTH", 1_000, ("canonical.md#canonical-node-budget", "pickle.md#pickle-limits"),
                    "nesting depth of a finished pickle value")
#: MARKs open at once on the pickle machine's stack.
OPEN_MARKS = Limit("OPEN_MARKS", 1_000, ("pickle.md#pickle-limits",), "pickle MARKs open at once")
#: Bytes of a LONG1/LONG4 integer.
INT_BYTES = Limit("INT_BYTES", 1_024, ("pickle.md#pickle-limits",), "bytes of a LONG1/LONG4 integer")
#: Digits of a decimal INT/LONG/GET/PUT argument (2.5 digits a byte of INT_BYTES), sign and ``L`` not
#: counted; below Python's 4300-digit ``int()`` limit.
INT_DIGITS = Limit("INT_DIGITS", 2_560, ("pickle.md#pickle-limits",),
                   "digits of an INT/LONG/GET/PUT decimal argument (not its sign or L)")
#: Composite .t7 objects (tables, torch objects, functions) open at once.
T7_DEPTH = Limit("T7_DEPTH", 1_024, ("t7.md#t7-limits",), ".t7 composite objects open at once")
#: Objects read from one .t7 stream (nils, scalars and back-references included): 4 bytes make a nil, so
#: a 16 MB file could otherwise hold 4 M objects.
T7_OBJECTS = Limit("T7_OBJECTS", 250_000, ("t7.md#t7-limits",),
                   "objects read from a .t7 stream, back-references included")
#: Dimensions of a .t7 tensor: torch7 reads any count; 1,024 bounds a header's work far above real tensors
#: (a 65-dimensional tensor is read: numpy's 64 apply only to the dimensions that are not 1).
T7_NDIM = Limit("T7_NDIM", 1_024, ("t7.md#t7-tensor",), "dimensions of a .t7 tensor")
#: Bytes of the logical elements of a tensor view that addresses more elements than its storage holds
#: (stride 0, overlapping views): what its hash reads (an expansion bomb's would never end).  Bytes, not
#: elements or a ratio to the storage: a real model's expanded buffers (nn.CMul's 16.8M-element _expand
#: of one weight, 134 MB of doubles) are read, and the hash's cost is bounded.
VIEW_BYTES = Limit("VIEW_BYTES", 1 << 28, ("pickle.md#pickle-limits", "t7.md#t7-limits"),
                   "bytes of the logical elements of a view that addresses more elements than its storage "
                   "holds")

#: The bytes of the logical elements all tensors of a description hold together, as a multiple of their
#: storages' bytes (plus VIEW_BYTES): each tensor's hash reads its elements, and a small file can make
#: a hundred thousand views of one big storage.
VIEW_FACTOR = Limit("VIEW_FACTOR", 4, ("canonical.md#canonical-node-budget",),
                    "times their storages' bytes the tensors of a description hold (plus VIEW_BYTES)")

#: Bytes of one PAX extended header of a tar .pt (torch 0.1's are under 512).
TAR_PAX_BYTES = Limit("TAR_PAX_BYTES", 1 << 20, ("pt-tar.md#pt-tar-members",),
                      "bytes of one PAX extended header of a tar .pt")

@dataclass(frozen=True)
class Limits:
    """The pickle machine's resource limits (spec/pickle.md#pickle-limits), by default the values above;
    a test or a tool may run a machine with others."""

    max_depth: int = VALUE_DEPTH.value  # nesting of the finished value
    max_marks: int = OPEN_MARKS.value  # MARKs open at once
    max_nodes: int = NODE_BUDGET.value  # description nodes the finished value would need
    max_text: int = TEXT_BUDGET.value  # JSON bytes the description's str and bytes values would write
    max_opcodes: int = PICKLE_OPCODES.value  # opcodes one pickle may run
    max_call_work: int = CALL_WORK.value  # items handed to calls and BUILDs, over a pickle
    max_int_bytes: int = INT_BYTES.value  # bytes of a LONG1/LONG4 integer
    max_int_digits: int = INT_DIGITS.value  # digits of a decimal INT/LONG/GET/PUT argument


#: Every limit, in the order of spec/canonical.md's table.
LIMITS: tuple[Limit, ...] = (NODE_BUDGET, TEXT_BUDGET, VALUE_DEPTH, OPEN_MARKS, PICKLE_OPCODES, CALL_WORK,
                             INT_BYTES, INT_DIGITS, T7_DEPTH, T7_OBJECTS, T7_NDIM, VIEW_BYTES, VIEW_FACTOR,
                             TAR_PAX_BYTES)
