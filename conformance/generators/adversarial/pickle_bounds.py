"""The pickle limits at their edges (spec/pickle.md#pickle-limits, #pickle-nesting,
spec/canonical.md#canonical-node-budget): values exactly at a limit, which a reader MUST accept, and
values well past one that only the measure of a finished pickle value sees.

A reader MUST accept values within the limits: the accept cases reach them exactly (calls handed exactly
2^23 items; a tuple nested exactly 1,000 deep while it is built; a value of exactly 500,000 nodes; a
value 1,000 deep whose deepest point is a shared tuple's later occurrence).  The reject cases go well
past a limit where no later check would catch it: the legacy stream's sys_info pickle, which no
description shows, holding a text bomb or a shared tuple that is deep only at its later occurrence, and
BUILD states whose values are what costs.  Each file is torch's own container (its zip members, or its
legacy stream with sys_info replaced).
"""

from __future__ import annotations

import pickle

from conformance.harness.facts import limit

from . import assemble as a
from . import sources, wrap
from .rebuild_semantics import F32
from .record import AdvCase

GEN = "pickle_bounds.py"
NO_STORAGE = ("/data/0", "/data/1")
LIMITS = ["pickle.md#pickle-limits"]
#: The reader limits these cases reach (spec/pickle.md#pickle-limits; the spec's table: harness/facts.py).
CALL_WORK = limit("CALL_WORK")
MAX_DEPTH = limit("VALUE_DEPTH")
MAX_NODES = limit("NODE_BUDGET")
WHY_MEASURED = ("torch's unpickler shares the value and torch never looks at sys_info; the spec measures "
                "every pickle's finished value against its limits, sys_info's included (pickle-limits)")


def _zeros(n: int) -> bytes:
    """A list of ``n`` zeros (BININT1 0 each)."""
    return pickle.EMPTY_LIST + pickle.MARK + a.integer(0) * n + pickle.APPENDS


def _calls(first: bytes, memo: int, body: bytes, times: int) -> bytes:
    """``times`` calls of one global: ``first`` (GLOBAL) memoized as ``memo``, then ``body`` (the rest of
    each call) after it or after a BINGET of it."""
    return first + a.put(memo) + body + (a.get(memo) + body) * (times - 1)


def _sys_info(key: str, value: bytes) -> bytes:
    """torch's legacy stream with one more key ``key: value`` in its sys_info dict."""
    return _sys_info_pairs([(key, value)])


def _lists(depth: int, inner: bytes) -> bytes:
    """``depth`` lists each inside the next, the innermost holding ``inner``."""
    return pickle.EMPTY_LIST * depth + inner + pickle.APPEND * depth


def bounds_cases() -> list[AdvCase]:
    out: list[AdvCase] = []

    def zip_case(name: str, pkl: bytes, errors: list[str], feats: list[str], spec: list[str], how: str, *,
                 why: str = "") -> None:
        out.append(AdvCase(f"pt-zip/adv-bounds-{name}", wrap.in_zip(a.program(pkl), drop=NO_STORAGE), errors,
                           ["zip-archive", "pickle-protocol-2", *feats], [*spec, "pt-zip.md#pt-zip-data-pkl"],
                           how, sources.zip_source(), GEN, category="reject" if errors else "accept",
                           why_stricter=why))

    def legacy_case(name: str, data: bytes, errors: list[str], feats: list[str], spec: list[str],
                    how: str) -> None:
        out.append(AdvCase(f"pt-legacy/adv-bounds-{name}", data, errors,
                           ["legacy-stream", "legacy-magic", "dtype-float32", *feats],
                           [*spec, "pt-legacy.md#pt-legacy-sys-info"], how, sources.torch_legacy(), GEN,
                           category="reject" if errors else "accept",
                           why_stricter=WHY_MEASURED if errors else ""))

    # -- the call budget: 1,024 calls set(L) with L a memoized list of 8,190 zeros, each costing
    # 1 + len(args) + len(L) = 8,192 items: 2^23 in all
    per_call = CALL_WORK // 1024 - 2
    lst = _zeros(per_call) + a.put(0)
    sets = _calls(a.global_("builtins", "set"), 1, a.get(0) + pickle.TUPLE1 + pickle.REDUCE, 1024)
    holder = pickle.EMPTY_LIST + lst + pickle.APPEND + pickle.MARK
    zip_case("call-work-at-limit", holder + sets + pickle.APPENDS,
             [], ["pickle-list", "pickle-set", "pickle-memo", "pickle-reduce"], LIMITS,
             f"a list holding a list L of {per_call:,} zeros and 1,024 sets set(L) (builtins.set memoized, L "
             f"fetched by BINGET): each call is handed 1 + 1 + {per_call:,} items, exactly 2^23 in all, the "
             "call budget, which a reader MUST accept")
    # -- BUILD states: each OrderedDict() gets BUILD {'a': L}; the state's value is what costs
    builds = _calls(a.global_("collections", "OrderedDict"), 1,
                    pickle.EMPTY_TUPLE + pickle.REDUCE + pickle.EMPTY_DICT + a.binunicode("a") + a.get(0)
                    + pickle.SETITEM + pickle.BUILD, 2048)
    zip_case("build-state-work", holder + builds + pickle.APPENDS,
             ["limit-exceeded"], ["pickle-ordered-dict-attrs", "pickle-memo", "pickle-reduce"], LIMITS,
             f"a list holding a list L of {per_call:,} zeros and 2,048 OrderedDicts, each given the BUILD "
             f"state {{'a': L}}: {2048 * (per_call + 3):,} items handed to calls and BUILDs, twice the call "
             "budget; the state's values, not its keys, are what each BUILD is handed",
             why="torch's unpickler hands the same list to each BUILD at no cost; the spec's call budget "
             "bounds the items a pickle hands its calls and BUILDs (a BUILD state's values included)")
    # -- a tuple nested exactly to the limit while it is built, then replaced
    for depth, errors in ((MAX_DEPTH, []), (MAX_DEPTH + 500, ["limit-exceeded"])):
        deep = a.integer(1) + pickle.TUPLE1 * depth
        word = "at-limit" if not errors else "past-limit"
        zip_case(f"tuple-nesting-{word}-replaced",
                 pickle.EMPTY_DICT + a.binunicode("a") + deep + pickle.SETITEM + a.binunicode("a")
                 + pickle.NONE + pickle.SETITEM,
                 errors, ["pickle-dict", "pickle-tuple", "pickle-deep-nesting"],
                 ["pickle.md#pickle-nesting", *LIMITS],
                 f"a dict whose key 'a' is first given (1,) inside {depth - 1:,} more tuples (TUPLE1 after "
                 f"TUPLE1: nesting {depth:,}) and then None, so the finished value is {{'a': None}}: the "
                 "tuple's nesting is judged when the TUPLE1 that builds it runs"
                 + (", and this one is well past the limit" if errors else ", and this one is at the limit"),
                 why="" if not errors else "the spec refuses a tuple nested past its depth limit when it is "
                 "built, even if the pickle later discards it (hashing it would recurse in C without a "
                 "limit); torch builds it and drops it")
    # -- sys_info: measured at its STOP, never described
    width = 1_000
    tup = pickle.MARK + a.integer(0) * (width - 1) + pickle.TUPLE
    copies = (MAX_NODES - 15) // width - 1
    pad = MAX_NODES - 15 - (copies * width)  # 13 nodes of torch's sys_info, the key and the list
    legacy_case("sys-info-nodes-at-limit",
                _sys_info("pad", pickle.EMPTY_LIST + pickle.MARK + tup + a.put(100)
                          + a.get(100) * (copies - 1) + a.integer(0) * pad + pickle.APPENDS),
                [], ["pickle-tuple", "pickle-memo", "pickle-list"],
                [*LIMITS, "canonical.md#canonical-node-budget"],
                "torch's legacy stream whose sys_info holds one more key 'pad': a list of one tuple of "
                f"{width - 1:,} zeros {copies} times (BINGET) and {pad:,} zeros; a tuple is written in full "
                f"at every occurrence, so the finished sys_info needs exactly {MAX_NODES:,} nodes, the node "
                "budget")
    one = a.integer(0) + pickle.TUPLE1 + a.put(100)
    lists = MAX_DEPTH - 3
    legacy_case("sys-info-depth-at-limit-shared-tuple",
                _sys_info_pairs([("a", one), ("deep", _lists(lists, a.get(100)))]),
                [], ["pickle-tuple", "pickle-memo", "pickle-list", "pickle-deep-nesting"],
                ["pickle.md#pickle-nesting", *LIMITS],
                f"torch's legacy stream whose sys_info holds two more keys: 'a', the tuple (0,), and 'deep', "
                f"{lists} lists each inside the next, the innermost holding (0,) again (BINGET): its 0 lies "
                f"at depth {MAX_DEPTH:,}, the limit (a shared tuple counts at every occurrence)")
    deep_tuple = a.integer(0) + pickle.TUPLE1 * 300 + a.put(100)
    legacy_case("sys-info-depth-past-limit-shared-tuple",
                _sys_info_pairs([("a", deep_tuple), ("deep", _lists(800, a.get(100)))]),
                ["limit-exceeded"], ["pickle-tuple", "pickle-memo", "pickle-list", "pickle-deep-nesting"],
                ["pickle.md#pickle-nesting", *LIMITS],
                "torch's legacy stream whose sys_info holds two more keys: 'a', (0,) inside 299 more tuples, "
                "and 'deep', 800 lists each inside the next, the innermost holding that tuple again "
                "(BINGET): 1,102 deep at its second occurrence")
    text = a.binunicode("x" * 65_536) + a.put(100)
    legacy_case("sys-info-text-bomb",
                _sys_info("pad", pickle.EMPTY_LIST + pickle.MARK + text + a.get(100) * 8_199
                          + pickle.APPENDS),
                ["limit-exceeded"], ["pickle-str", "pickle-memo", "pickle-list", "adv-expansion-bomb"],
                [*LIMITS, "canonical.md#canonical-node-budget"],
                "torch's legacy stream whose sys_info holds one more key 'pad': a list of one "
                "65,536-character str 8,200 times (BINGET): 537 MB of JSON text, twice the text budget, from "
                "an 82 KB file")
    return out


def _sys_info_pairs(pairs: list[tuple[str, bytes]]) -> bytes:
    """torch's legacy stream with more keys in its sys_info dict, in order; its object is
    ``{'x': tensor}`` of a 3-element float32 storage keyed '0' (torch's own keys are pointer values that
    change from run to run)."""
    data = sources.torch_legacy().data
    spans = wrap.legacy_spans(data)
    info = data[spans[2][0]:spans[2][1]]
    for key, value in pairs:
        info = wrap.inject(info, key, value)
    pid = a.tuple_(a.binunicode("storage"), a.global_("torch", "FloatStorage"), a.binunicode("0"),
                   a.binunicode("cpu"), a.integer(3), pickle.NONE) + pickle.BINPERSID
    obj = a.program(a.dict_((a.binunicode("x"), a.rebuild_tensor(pid, 0, (3,), (1,)))))
    keys = a.program(a.list_(a.binunicode("0")))
    return data[:spans[2][0]] + info + obj + keys + wrap.storage_record(3, F32)
