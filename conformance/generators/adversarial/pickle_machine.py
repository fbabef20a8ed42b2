"""Attacks on the pickle machine itself: stack underflow, MARK misuse, memo keys that name nothing,
opcodes applied to a type they may not touch (the CVE-2026-24747 family), persistent ids of the wrong
shape, expansion bombs and nesting deep enough to overflow a recursive reader (spec/pickle.md).

Every pickle sits in torch's zip container as ``archive/data.pkl``; where the attack is an edit of a real
program, the program is torch's own ``data.pkl`` for a two-tensor dict.
"""

from __future__ import annotations

import pickle
import struct

from . import assemble as a
from . import sources, wrap
from .record import AdvCase

GEN = "pickle_machine.py"
BASE = ["zip-archive", "pickle-protocol-2"]


def _float_tensor(
    key: str = "0",
    numel: int = 6,
    size: tuple[int, ...] = (2, 3),
    stride: tuple[int, ...] = (3, 1),
    offset: int = 0,
    cls: str = "FloatStorage",
) -> bytes:
    return a.rebuild_tensor(a.storage_pid(cls, key, "cpu", numel), offset, size, stride)


def machine_cases() -> list[AdvCase]:
    out: list[AdvCase] = []
    torch_pkl = wrap.zip_pickle()

    def case(
        name: str,
        pkl: bytes,
        errors: list[str],
        feats: list[str],
        spec: list[str],
        how: str,
        *,
        category: str = "reject",
        why: str = "",
        drop: tuple[str, ...] = (),
    ) -> None:
        out.append(
            AdvCase(
                f"pt-zip/adv-{name}",
                wrap.in_zip(pkl, drop=drop),
                errors,
                BASE + feats,
                spec + ["pt-zip.md#pt-zip-data-pkl"],
                how,
                sources.zip_source(),
                GEN,
                category=category,
                why_stricter=why,
            )
        )

    no_storage = ("/data/0", "/data/1")
    stack = ["pickle.md#pickle-stack"]
    # -- stack and MARK
    case(
        "pickle-stack-underflow-reduce",
        a.program(pickle.REDUCE),
        ["bad-pickle"],
        ["adv-stack-misuse"],
        stack,
        "data.pkl is PROTO 2, REDUCE, STOP: REDUCE pops two values from an empty stack",
        drop=no_storage,
    )
    case(
        "pickle-stack-underflow-pop",
        a.program(pickle.POP),
        ["bad-pickle"],
        ["adv-stack-misuse"],
        stack,
        "data.pkl is PROTO 2, POP, STOP: POP on an empty stack",
        drop=no_storage,
    )
    case(
        "pickle-stop-empty-stack",
        a.program(b""),
        ["bad-pickle"],
        ["adv-stack-misuse"],
        stack,
        "data.pkl is PROTO 2, STOP: nothing to return",
        drop=no_storage,
    )
    case(
        "pickle-mark-unclosed",
        torch_pkl[:-1] + pickle.MARK + pickle.STOP,
        ["bad-pickle"],
        ["adv-stack-misuse", "pickle-dict"],
        stack + ["pickle.md#pickle-mark"],
        "torch's data.pkl with a MARK before its STOP: STOP finds an open MARK and an empty stack above it",
    )
    case(
        "pickle-tuple-without-mark",
        a.program(a.integer(1) + a.integer(2) + pickle.TUPLE),
        ["bad-pickle"],
        ["adv-stack-misuse"],
        stack + ["pickle.md#pickle-mark"],
        "TUPLE with no MARK on the stack (two integers below it)",
        drop=no_storage,
    )
    case(
        "pickle-pop-mark-without-mark",
        a.program(a.integer(1) + pickle.POP_MARK),
        ["bad-pickle"],
        ["adv-stack-misuse"],
        stack + ["pickle.md#pickle-mark"],
        "POP_MARK with no MARK",
        drop=no_storage,
    )
    case(
        "pickle-setitems-odd-count",
        a.program(pickle.EMPTY_DICT + pickle.MARK + a.binunicode("k") + pickle.SETITEMS),
        ["bad-pickle"],
        ["adv-stack-misuse", "pickle-dict"],
        stack + ["pickle.md#pickle-mark"],
        "SETITEMS over a MARK holding one item: a key without a value",
        drop=no_storage,
    )
    case(
        "pickle-stop-two-values",
        torch_pkl[:-1] + a.integer(7) + pickle.STOP,
        ["bad-pickle"],
        ["adv-stack-misuse", "pickle-dict"],
        stack,
        "torch's data.pkl with one more integer pushed before STOP: two values on the stack at the end; "
        "Python returns the top one (7) and drops the dict",
        category="impl",
    )
    case(
        "pickle-trailing-after-stop",
        torch_pkl + a.program(a.integer(7)),
        ["bad-pickle"],
        ["adv-trailing-data", "pickle-dict"],
        ["pickle.md#pickle-opcodes"],
        "torch's data.pkl followed, inside the same record, by a second complete pickle",
        why="torch stops reading at the first STOP; bytes after it in data.pkl can carry a second program "
        "that another tool reads instead, so the spec requires the record to end at STOP",
    )
    case(
        "pickle-no-stop",
        torch_pkl[:-1],
        ["truncated", "bad-pickle"],
        ["adv-truncated", "pickle-dict"],
        ["pickle.md#pickle-opcodes"],
        "torch's data.pkl without its final STOP opcode",
    )
    case(
        "pickle-unknown-opcode",
        torch_pkl[:-2] + b"\xff" + torch_pkl[-2:],
        ["bad-opcode"],
        ["adv-bad-opcode", "pickle-dict"],
        ["pickle.md#pickle-opcodes"],
        "byte 0xff (no opcode) inserted before torch's closing SETITEMS",
    )
    case(
        "pickle-protocol-99",
        b"\x80\x63" + torch_pkl[2:],
        ["bad-opcode", "bad-magic"],
        ["adv-bad-opcode", "pickle-dict"],
        ["pickle.md#pickle-protocols"],
        "torch's data.pkl with its PROTO 2 changed to PROTO 99",
        why="torch's weights_only unpickler does not check the PROTO argument; pickle protocols end at 5, "
        "and a reader that meets a protocol it does not know cannot know what its opcodes mean",
    )
    frame = (
        a.proto(4)
        + pickle.FRAME
        + struct.pack("<Q", 1 << 20)
        + a.dict_((a.binunicode("k"), a.integer(1)))
        + pickle.STOP
    )
    case(
        "pickle-frame-beyond-record",
        frame,
        ["truncated", "bad-pickle", "out-of-bounds"],
        ["adv-size-beyond-eof", "pickle-frame", "pickle-protocol-4"],
        ["pickle.md#pickle-opcodes"],
        "protocol 4 FRAME declaring 1 MiB when the record holds 30 bytes",
        drop=no_storage,
    )
    huge_str = a.proto(2) + pickle.BINUNICODE + struct.pack("<I", 0xFFFFFFF0) + b"abc" + pickle.STOP
    case(
        "pickle-string-length-beyond-record",
        huge_str,
        ["truncated", "out-of-bounds"],
        ["adv-size-beyond-eof", "pickle-str"],
        ["pickle.md#pickle-limits"],
        "BINUNICODE declaring 4 GiB of text in a 12-byte record: a reader must not allocate it",
        drop=no_storage,
    )
    # -- memo
    memo = ["pickle.md#pickle-memo"]
    case(
        "pickle-memo-get-missing",
        wrap.inject(torch_pkl, "extra", a.get(99)),
        ["bad-reference"],
        ["adv-bad-reference", "pickle-memo", "pickle-dict"],
        memo,
        "torch's data.pkl with a key 'extra' whose value is BINGET 99; no PUT wrote key 99",
    )
    case(
        "pickle-memo-long-get-huge",
        wrap.inject(torch_pkl, "extra", pickle.LONG_BINGET + b"\xff\xff\xff\xff"),
        ["bad-reference"],
        ["adv-bad-reference", "pickle-memo", "pickle-dict"],
        memo,
        "LONG_BINGET 4294967295: a memo key no PUT wrote (and no table should be sized by)",
    )
    case(
        "pickle-memo-put-negative",
        a.program(a.integer(1) + pickle.PUT + b"-1\n" + pickle.POP + pickle.GET + b"-1\n"),
        ["bad-pickle", "bad-reference", "bad-value"],
        ["adv-bad-reference", "pickle-memo", "pickle-protocol-0"],
        memo,
        "text PUT -1 then GET -1: negative memo keys",
        drop=no_storage,
    )
    case(
        "pickle-memoize-empty-stack",
        a.proto(4) + pickle.MEMOIZE + a.integer(1) + pickle.STOP,
        ["bad-pickle"],
        ["adv-stack-misuse", "pickle-memo", "pickle-protocol-4"],
        memo + stack,
        "MEMOIZE with nothing on the stack",
        drop=no_storage,
    )
    # -- type confusion: opcodes on values they may not touch (CVE-2026-24747 family)
    conf = ["pickle.md#pickle-stack", "pickle.md#pickle-opcodes"]
    case(
        "pickle-setitems-on-list",
        b"\x80\x02]" + torch_pkl[3:],
        ["bad-pickle"],
        ["adv-type-confusion", "pickle-list"],
        conf,
        "torch's data.pkl with its EMPTY_DICT changed to EMPTY_LIST: SETITEMS applied to a list",
    )
    case(
        "pickle-appends-on-dict",
        a.program(pickle.EMPTY_DICT + pickle.MARK + a.integer(1) + a.integer(2) + pickle.APPENDS),
        ["bad-pickle"],
        ["adv-type-confusion", "pickle-dict"],
        conf,
        "APPENDS applied to a dict",
        drop=no_storage,
    )
    case(
        "pickle-setitem-on-tuple",
        a.program(pickle.EMPTY_TUPLE + a.integer(1) + a.integer(2) + pickle.SETITEM),
        ["bad-pickle"],
        ["adv-type-confusion", "pickle-tuple"],
        conf,
        "SETITEM applied to a tuple",
        drop=no_storage,
    )
    case(
        "pickle-append-on-tensor",
        a.program(_float_tensor() + a.integer(7) + pickle.APPEND),
        ["bad-pickle"],
        ["adv-type-confusion", "dtype-float32", "pickle-reduce"],
        conf,
        "APPEND applied to the tensor that _rebuild_tensor_v2 returned",
        drop=("/data/1",),
    )
    case(
        "pickle-setitems-on-tensor",
        a.program(_float_tensor() + pickle.MARK + a.binunicode("k") + a.integer(7) + pickle.SETITEMS),
        ["bad-pickle"],
        ["adv-type-confusion", "dtype-float32", "pickle-reduce"],
        conf,
        "SETITEMS applied to a tensor",
        drop=("/data/1",),
    )
    build_state = a.tuple_(
        a.storage_pid("FloatStorage", "0", "cpu", 6),
        a.integer(0),
        a.tuple_(a.integer(1000), a.integer(1000)),
        a.tuple_(a.integer(1000), a.integer(1)),
    )
    case(
        "pickle-build-on-tensor-set",
        a.program(a.dict_((a.binunicode("w"), _float_tensor() + build_state + pickle.BUILD))),
        ["bad-pickle", "out-of-bounds"],
        [
            "adv-type-confusion",
            "adv-view-out-of-bounds",
            "dtype-float32",
            "pickle-reduce",
            "pickle-persistent-id",
        ],
        conf + ["tensors.md#tensors-view-bounds"],
        "BUILD on a tensor with the state (storage, 0, (1000, 1000), (1000, 1)): torch's legacy path calls "
        "tensor.set_(*state), re-pointing the tensor at a view a million elements long over a 6-element "
        "storage (the CVE-2026-24747 family)",
        drop=("/data/1",),
    )
    case(
        "pickle-build-on-tensor-dict",
        a.program(
            a.dict_(
                (
                    a.binunicode("w"),
                    _float_tensor()
                    + a.dict_((a.binunicode("_cdata"), a.integer(0)), (a.binunicode("data"), a.integer(0)))
                    + pickle.BUILD,
                )
            )
        ),
        ["bad-pickle"],
        ["adv-type-confusion", "dtype-float32", "pickle-reduce"],
        conf,
        "BUILD on a tensor with a dict state {'_cdata': 0, 'data': 0}: attributes a reader must never set",
        drop=("/data/1",),
    )
    case(
        "pickle-build-on-storage",
        a.program(
            a.storage_pid("FloatStorage", "0", "cpu", 6)
            + a.dict_((a.binunicode("_cdata"), a.integer(0)))
            + pickle.BUILD
        ),
        ["bad-pickle"],
        ["adv-type-confusion", "bare-storage", "dtype-float32", "pickle-persistent-id"],
        conf + ["pickle.md#pickle-persistent-id"],
        "BUILD on the storage a persistent id returned",
        drop=("/data/1",),
        why="torch's weights_only unpickler lets BUILD set arbitrary attributes on the storage object "
        "(here _cdata, the pointer to its C++ storage); the spec allows BUILD only where torch's writer "
        "uses it, so no file can set a reader's internal fields",
    )
    case(
        "pickle-build-on-int",
        a.program(a.integer(5) + a.dict_((a.binunicode("x"), a.integer(1))) + pickle.BUILD),
        ["bad-pickle"],
        ["adv-type-confusion"],
        conf,
        "BUILD on an integer",
        drop=no_storage,
    )
    case(
        "pickle-reduce-non-callable",
        a.program(a.binunicode("os.system") + a.tuple_(a.binunicode("id")) + pickle.REDUCE),
        ["bad-pickle", "unsafe-global"],
        ["adv-type-confusion", "pickle-str"],
        conf,
        "REDUCE whose callable is the string 'os.system', not a global",
        drop=no_storage,
    )
    case(
        "pickle-rebuild-wrong-arg-types",
        a.program(
            a.call(
                a.global_("torch._utils", "_rebuild_tensor_v2"),
                a.storage_pid("FloatStorage", "0", "cpu", 6),
                a.binunicode("0"),
                a.binunicode("2x3"),
                a.integer(1),
                pickle.NEWFALSE,
                a.ordered_dict(),
            )
        ),
        ["bad-pickle", "bad-value"],
        ["adv-type-confusion", "dtype-float32", "pickle-reduce"],
        ["pickle.md#pickle-globals"],
        "_rebuild_tensor_v2 called with strings for its offset and size and an int for its stride",
        drop=("/data/1",),
    )
    case(
        "pickle-dict-unhashable-key",
        a.program(pickle.EMPTY_DICT + a.list_(a.integer(1)) + a.integer(2) + pickle.SETITEM),
        ["bad-pickle", "bad-value"],
        ["adv-type-confusion", "pickle-dict", "pickle-list"],
        conf,
        "SETITEM with a list as the key",
        drop=no_storage,
    )
    # -- persistent ids
    pid = ["pickle.md#pickle-persistent-id", "pt-zip.md#pt-zip-storage-records"]

    def tensor_with_pid(pid_bytes: bytes) -> bytes:
        return a.program(a.dict_((a.binunicode("w"), a.rebuild_tensor(pid_bytes, 0, (2, 3), (3, 1)))))

    def pid_tuple(*items: bytes) -> bytes:
        return a.tuple_(*items) + pickle.BINPERSID

    s = a.binunicode
    case(
        "pid-wrong-tag",
        tensor_with_pid(
            pid_tuple(s("module"), a.global_("torch", "FloatStorage"), s("0"), s("cpu"), a.integer(6))
        ),
        ["bad-reference"],
        ["adv-bad-reference", "pickle-persistent-id", "dtype-float32"],
        pid,
        "persistent id ('module', torch.FloatStorage, '0', 'cpu', 6): the tag is not 'storage'",
        drop=("/data/1",),
    )
    case(
        "pid-four-items",
        tensor_with_pid(pid_tuple(s("storage"), a.global_("torch", "FloatStorage"), s("0"), s("cpu"))),
        ["bad-reference"],
        ["adv-bad-reference", "pickle-persistent-id", "dtype-float32"],
        pid,
        "persistent id ('storage', torch.FloatStorage, '0', 'cpu'): the element count is missing",
        drop=("/data/1",),
    )
    case(
        "pid-not-a-tuple",
        tensor_with_pid(s("0") + pickle.BINPERSID),
        ["bad-reference"],
        ["adv-bad-reference", "pickle-persistent-id", "dtype-float32"],
        pid,
        "persistent id '0' (a bare string, not the 5-tuple)",
        drop=("/data/1",),
    )
    case(
        "pid-text-persid",
        tensor_with_pid(pickle.PERSID + b"0\n"),
        ["bad-reference", "bad-opcode"],
        ["adv-bad-reference", "pickle-persistent-id", "dtype-float32"],
        pid,
        "text PERSID '0' (the protocol 0 form; its id is a string, never the 5-tuple)",
        drop=("/data/1",),
    )
    case(
        "pid-type-not-a-storage",
        tensor_with_pid(
            pid_tuple(s("storage"), a.global_("torch", "Tensor"), s("0"), s("cpu"), a.integer(6))
        ),
        ["bad-reference", "bad-value", "unsafe-global"],
        ["adv-bad-reference", "pickle-persistent-id", "dtype-float32"],
        pid,
        "persistent id naming torch.Tensor where a storage type belongs",
        drop=("/data/1",),
    )
    case(
        "pid-key-without-record",
        tensor_with_pid(
            pid_tuple(s("storage"), a.global_("torch", "FloatStorage"), s("7"), s("cpu"), a.integer(6))
        ),
        ["bad-reference"],
        ["adv-bad-reference", "pickle-persistent-id", "dtype-float32"],
        pid,
        "persistent id key '7': the archive has no record data/7",
        drop=("/data/1",),
    )
    case(
        "pid-key-path-traversal",
        tensor_with_pid(
            pid_tuple(
                s("storage"), a.global_("torch", "FloatStorage"), s("../data.pkl"), s("cpu"), a.integer(6)
            )
        ),
        ["bad-reference", "bad-value"],
        ["adv-bad-reference", "pickle-persistent-id", "dtype-float32"],
        pid,
        "persistent id key '../data.pkl': a key must name a record under data/, never a path out of it",
        drop=("/data/1",),
    )
    # -- bombs and depth
    limits = ["pickle.md#pickle-limits", "canonical.md#canonical-node-budget"]
    levels = 40
    # No POP (torch's weights_only unpickler lacks it): the empty lists of every level are pushed
    # first; level i appends level i-1 (on the stack) and a BINGET of it, so one value is left.
    lists = pickle.EMPTY_LIST * levels + pickle.EMPTY_LIST + a.put(0)
    for i in range(1, levels + 1):
        lists += pickle.APPEND + a.get(i - 1) + pickle.APPEND + a.put(i)
    case(
        "pickle-expansion-bomb-lists",
        a.program(a.dict_((a.binunicode("bomb"), lists))),
        ["limit-exceeded"],
        ["adv-expansion-bomb", "pickle-memo", "pickle-list"],
        limits + ["canonical.md#canonical-sharing"],
        f"{levels} memoized lists, each holding the previous one twice: 2^{levels} leaves in "
        f"{len(lists)} bytes. A reader may accept it (each list is described once and referenced by id) "
        "or reject it with limit-exceeded; it must never expand it",
        category="impl",
        drop=no_storage,
    )
    tuples = pickle.EMPTY_LIST + a.put(0)  # level i: level i-1 (on the stack), a BINGET of it, TUPLE2
    for i in range(1, levels + 1):
        tuples += a.get(i - 1) + pickle.TUPLE2 + a.put(i)
    case(
        "pickle-expansion-bomb-tuples",
        a.program(a.dict_((a.binunicode("bomb"), tuples))),
        ["limit-exceeded"],
        ["adv-expansion-bomb", "pickle-memo", "pickle-tuple"],
        limits,
        f"{levels} memoized pairs, each holding the previous one twice: tuples are immutable and always "
        f"described in full, so the description would hold 2^{levels} nodes",
        why="the unpickler shares the memoized tuples, so torch builds the object in microseconds; the "
        "spec's description writes tuples in full and must reject a file whose description exceeds the "
        "node budget",
        drop=no_storage,
    )
    text = a.binunicode("x" * 4096) + a.put(0)
    for i in range(1, 21):
        text += a.get(i - 1) + pickle.TUPLE2 + a.put(i)
    case(
        "pickle-text-bomb",
        a.program(a.dict_((a.binunicode("bomb"), text))),
        ["limit-exceeded"],
        ["adv-expansion-bomb", "pickle-memo", "pickle-str", "pickle-tuple"],
        limits,
        "a 4096-character string in 20 levels of memoized pairs: 2^20 occurrences, 2^32 units of text in "
        "the description (budget 2^30), from a 4 KiB record",
        why="torch shares the string; the spec's text budget counts every occurrence in the description",
        drop=no_storage,
    )
    depth = 100_000
    nested = pickle.EMPTY_LIST * (depth + 1) + pickle.APPEND * depth
    case(
        "pickle-deep-lists",
        a.program(nested),
        ["limit-exceeded"],
        ["adv-deep-nesting", "pickle-list"],
        limits,
        f"{depth} lists nested inside each other ({depth + 1} EMPTY_LISTs then {depth} APPENDs): "
        "a recursive reader or describer overflows its stack. Accept (without recursion) or limit-exceeded",
        category="impl",
        drop=no_storage,
    )
    nested_t = pickle.EMPTY_TUPLE + pickle.TUPLE1 * depth
    case(
        "pickle-deep-tuples",
        a.program(nested_t),
        ["limit-exceeded"],
        ["adv-deep-nesting", "pickle-tuple"],
        limits,
        f"{depth} tuples nested by TUPLE1: {depth + 4} bytes",
        category="impl",
        drop=no_storage,
    )
    nested_d = (pickle.EMPTY_DICT + a.integer(0)) * depth + pickle.EMPTY_DICT + pickle.SETITEM * depth
    case(
        "pickle-deep-dicts",
        a.program(nested_d),
        ["limit-exceeded"],
        ["adv-deep-nesting", "pickle-dict"],
        limits,
        f"{depth} dicts nested through SETITEM",
        category="impl",
        drop=no_storage,
    )
    return out
