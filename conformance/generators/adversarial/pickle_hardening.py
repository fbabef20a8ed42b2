"""The reader's contract under hostile pickles (issue 8): values nested deep enough to crash a hash in C,
number text that Python's ``int()``/``float()`` would take or choke on, one value written out in full at
every reference, strings whose JSON cannot be told apart, and the corners of the pickle spec a clean-room
reader found silent (spec/pickle.md#pickle-number-text, #pickle-keys, #pickle-nesting, #pickle-limits,
spec/canonical.md#canonical-node-budget, #canonical-surrogates).

Every pickle sits in torch's zip container as ``archive/data.pkl`` without storages.  The accept cases
(:data:`ACCEPTS`: merged keys, NaN keys, normal forms) are hostile but valid files torch 2.13's
``weights_only`` loader reads; their expectation is torch's description of what it loads.
"""

from __future__ import annotations

import pickle
import struct

from . import assemble as a
from . import rawzip, sources, wrap
from .record import AdvCase

GEN = "pickle_hardening.py"
BASE = ["zip-archive"]
NO_STORAGE = ("/data/0", "/data/1")


def _binbytes(data: bytes) -> bytes:
    return pickle.BINBYTES + struct.pack("<I", len(data)) + data


def _binunicode_raw(raw: bytes) -> bytes:
    """BINUNICODE of raw bytes (UTF-8 with surrogates allowed, as CPython reads it)."""
    return pickle.BINUNICODE + struct.pack("<I", len(raw)) + raw


def _referenced(value: bytes, times: int) -> bytes:
    """A list holding ``value`` (memo 0) ``times`` times: one value, written in full at each reference."""
    return value + a.put(0) + pickle.POP + pickle.EMPTY_LIST + pickle.MARK + a.get(0) * times + pickle.APPENDS


def _text_line(op: bytes, text: bytes) -> bytes:
    return op + text + b"\n"


def hardening_cases() -> list[AdvCase]:
    out: list[AdvCase] = []

    def case(
        name: str,
        pkl: bytes,
        errors: list[str],
        feats: list[str],
        spec: list[str],
        how: str,
        *,
        protocol: int = 2,
        why: str = "",
    ) -> None:
        out.append(
            AdvCase(
                f"pt-zip/adv-hard-{name}",
                wrap.in_zip(
                    a.program(pkl, protocol) if protocol >= 0 else pkl + pickle.STOP, drop=NO_STORAGE
                ),
                errors,
                BASE + [f"pickle-protocol-{max(protocol, 0)}"] + feats,
                spec + ["pt-zip.md#pt-zip-data-pkl"],
                how,
                sources.zip_source(),
                GEN,
                why_stricter=why,
            )
        )

    nesting = ["pickle.md#pickle-nesting", "pickle.md#pickle-limits"]
    deep = pickle.EMPTY_TUPLE + pickle.TUPLE1 * 50_000
    # -- nesting checked before anything hashes (a segfault in C otherwise)
    case(
        "deep-tuple-dict-key",
        pickle.EMPTY_DICT + deep + a.integer(1) + pickle.SETITEM,
        ["limit-exceeded"],
        ["adv-deep-nesting", "pickle-dict"],
        nesting,
        "a dict whose key is a tuple nested 50,000 deep (TUPLE1 after TUPLE1): hashing it recurses in C "
        "with no limit (torch loads this one; the same file 1,000,000 deep kills torch.load(weights_only="
        "True) with SIGSEGV); the tuple is refused when the TUPLE1 that passes the nesting limit runs",
        why="the spec refuses a tuple nested past its depth limit before anything hashes it: hashing "
        "recurses in C without a limit, and a deep enough key crashes the process (torch's too)",
    )
    case(
        "deep-tuple-set-item",
        pickle.EMPTY_SET + pickle.MARK + deep + pickle.ADDITEMS,
        ["limit-exceeded"],
        ["adv-deep-nesting", "pickle-set"],
        nesting,
        "a set (protocol 4 EMPTY_SET, ADDITEMS) whose item is a tuple nested 50,000 deep",
        protocol=4,
    )
    chain = pickle.EMPTY_TUPLE + a.put(0) + pickle.POP
    chain += (pickle.MARK + a.get(0) + pickle.FROZENSET + a.put(0) + pickle.POP) * 1_500
    case(
        "deep-frozenset",
        chain + a.get(0),
        ["limit-exceeded"],
        ["adv-deep-nesting", "pickle-set"],
        nesting,
        "1,500 frozensets each inside the next (MARK, BINGET 0, FROZENSET, BINPUT 0, POP, 1,500 "
        "times): the one past the nesting limit is refused when FROZENSET runs, before it hashes its item",
        protocol=4,
    )
    case(
        "deep-tuple-discarded",
        deep + pickle.POP + pickle.NONE,
        ["limit-exceeded"],
        ["adv-deep-nesting"],
        nesting,
        "a tuple nested 50,000 deep, then POP and NONE: the value at STOP is None, but the tuple is "
        "refused when it is built (the spec does not wait for STOP to measure a tuple)",
    )
    # -- number text (Python's int() limit, non-ASCII digits, CPython's unpicklers disagreeing)
    numbers = ["pickle.md#pickle-number-text"]
    case(
        "int-4301-digits",
        _text_line(pickle.INT, b"9" * 4_301),
        ["limit-exceeded"],
        ["pickle-protocol-0", "adv-number-text"],
        numbers + ["pickle.md#pickle-limits"],
        "INT with 4,301 digits: past the digit limit (2,560), and past Python's own 4,300-digit int() "
        "limit, which a reader must never meet",
        protocol=-1,
    )
    case(
        "long-2561-digits",
        _text_line(pickle.LONG, b"-" + b"7" * 2_561 + b"L"),
        ["limit-exceeded"],
        ["pickle-protocol-0", "adv-number-text"],
        numbers + ["pickle.md#pickle-limits"],
        "LONG -777...7L with 2,561 digits: one past the digit limit, which counts digits only (the "
        "sign and L are not counted)",
        protocol=-1,
    )
    case(
        "int-superscript-digit",
        _text_line(pickle.INT, "²".encode()),
        ["bad-value"],
        ["pickle-protocol-0", "adv-number-text"],
        numbers,
        "INT whose text is the superscript two (U+00B2, which Python's str.isdigit() accepts)",
        protocol=-1,
    )
    case(
        "int-arabic-indic-digit",
        _text_line(pickle.LONG, "١٢L".encode()),
        ["bad-value"],
        ["pickle-protocol-0", "adv-number-text"],
        numbers,
        "LONG whose digits are ARABIC-INDIC ONE and TWO (Python's int() reads them as 12)",
        protocol=-1,
    )
    case(
        "int-leading-zero",
        _text_line(pickle.INT, b"010"),
        ["bad-value"],
        ["pickle-protocol-0", "adv-number-text"],
        numbers + ["pickle.md#pickle-weights-only"],
        "INT 010: C _pickle (strtol, base 0) reads 8, pickle.py refuses it; the spec takes neither",
        protocol=-1,
    )
    case(
        "int-minus-zero",
        _text_line(pickle.INT, b"-0"),
        ["bad-value"],
        ["pickle-protocol-0", "adv-number-text"],
        numbers + ["pickle.md#pickle-weights-only"],
        "INT -0: C _pickle reads False (any 2-character text worth 0), pickle.py reads 0",
        protocol=-1,
    )
    case(
        "float-overflow",
        _text_line(pickle.FLOAT, b"1e999"),
        ["bad-value"],
        ["pickle-protocol-0", "adv-number-text"],
        numbers + ["pickle.md#pickle-weights-only"],
        "FLOAT 1e999: C _pickle raises OverflowError (pickle.py would read inf)",
        protocol=-1,
    )
    for name, text, why in (("float-exponent-sign-only", b"1e+", "an exponent of a sign and no digit"),
                            ("float-exponent-empty", b"1e", "an exponent marker and no digit"),
                            ("float-exponent-letters", b"1e-x5", "an exponent of a sign and a letter")):
        case(
            name,
            _text_line(pickle.FLOAT, text),
            ["bad-value"],
            ["pickle-protocol-0", "adv-number-text"],
            numbers,
            f"FLOAT {text.decode()}: {why}, which C _pickle refuses",
            protocol=-1,
        )
    case(
        "float-underscore",
        _text_line(pickle.FLOAT, b"1_0.5"),
        ["bad-value"],
        ["pickle-protocol-0", "adv-number-text"],
        numbers,
        "FLOAT 1_0.5: C _pickle refuses it (Python's float() would read 10.5)",
        protocol=-1,
    )
    case(
        "float-hex",
        _text_line(pickle.FLOAT, b"0x1p3"),
        ["bad-value"],
        ["pickle-protocol-0", "adv-number-text"],
        numbers,
        "FLOAT 0x1p3: neither CPython unpickler reads hex",
        protocol=-1,
    )
    # -- which check wins: a LONG4 length over the limit that also reaches past the end
    case(
        "long4-over-limit-past-end",
        pickle.LONG4 + struct.pack("<i", 0x7FFF_FFFF) + b"\x01" * 8,
        ["limit-exceeded"],
        [],
        ["pickle.md#pickle-limits"],
        "LONG4 declaring 2**31-1 bytes with 8 left: over the integer-size limit and past the end; the "
        "limit is judged on the length before the bytes are looked for",
    )
    # -- one value written in full at every reference (the text budget counts JSON bytes)
    budget = ["canonical.md#canonical-node-budget"]
    case(
        "hex-bomb",
        _referenced(_binbytes(b"\xab" * 65_536), 2_100),
        ["limit-exceeded"],
        ["adv-expansion-bomb", "pickle-bytes"],
        budget,
        "one 64 KiB bytes value referenced 2,100 times: 275 MB of hex, past the 256 MiB text budget",
        protocol=3,
        why="the description would write 275 MB of hex for a 70 KB file; the spec's text budget bounds "
        "a reader's output, time and memory (torch holds one bytes object)",
    )
    astral = "\U0001f600" * 16_384
    case(
        "astral-bomb",
        _referenced(a.binunicode(astral), 1_400),
        ["limit-exceeded"],
        ["adv-expansion-bomb"],
        budget,
        "one 16,384-character string of U+1F600 referenced 1,400 times: 22.9 M code points (well inside a "
        "code-point count) but 275 MB of JSON, each character a 12-byte surrogate-pair escape",
        why="the description would write 275 MB of escapes for a 70 KB file (text budget)",
    )
    case(
        "escape-bomb",
        _referenced(a.binunicode("\x01" * 32_768), 1_400),
        ["limit-exceeded"],
        ["adv-expansion-bomb"],
        budget,
        "one 32,768-character string of U+0001 referenced 1,400 times: each character a 6-byte JSON "
        "escape, 275 MB of JSON",
        why="the description would write 275 MB of escapes for a 35 KB file (text budget)",
    )
    inner = pickle.MARK + pickle.NONE * 1_000 + pickle.TUPLE + a.put(0) + pickle.POP
    case(
        "node-bomb-tuples",
        inner + pickle.MARK + a.get(0) * 501 + pickle.TUPLE,
        ["limit-exceeded"],
        ["adv-expansion-bomb"],
        budget + ["pickle.md#pickle-limits"],
        "a tuple of 1,000 Nones referenced 501 times by another tuple: tuples are written in full at "
        "every occurrence, 501,502 nodes, past the 500,000-node budget",
        why="the description would hold 501,502 nodes for a 2 KB file (node budget)",
    )
    # -- calls handed one memoized list again and again (each call a few bytes, its work the list's length)
    big = (
        pickle.EMPTY_LIST
        + pickle.MARK
        + (pickle.BININT1 + b"\x07") * 40_000
        + pickle.APPENDS
        + a.put(0)
        + pickle.POP
    )
    setg = a.global_("builtins", "set") + a.put(1) + pickle.POP
    call = a.get(1) + a.get(0) + pickle.TUPLE1 + pickle.REDUCE + pickle.POP
    case(
        "call-work-bomb",
        big + setg + call * 50_000 + pickle.NONE,
        ["limit-exceeded"],
        ["adv-expansion-bomb", "pickle-set", "pickle-reduce"],
        ["pickle.md#pickle-limits"],
        "a 40,000-item list in the memo handed to set() 50,000 times (each call 7 bytes, its result "
        "discarded): 2 billion items of work from a 430 KB file, past the call-work limit",
    )
    # -- many tensor views of one storage: each tensor's hash reads its elements
    out.append(
        AdvCase(
            "pt-zip/adv-hard-view-hash-bomb",
            _views_of_one_storage(16_384, 4_200),
            ["limit-exceeded"],
            BASE + ["pickle-protocol-2", "adv-expansion-bomb", "pickle-persistent-id"],
            ["canonical.md#canonical-node-budget", "pt-zip.md#pt-zip-data-pkl"],
            "4,200 distinct tensors, each a full view of one 16,384-element float32 storage (64 KiB): "
            "275 MB to hash, more than 4 times the storage's bytes plus 268,435,456; a hundred thousand "
            "such views of a 4 MB storage (a 10 MB file) would hash 400 GB",
            sources.zip_source(),
            GEN,
            why_stricter="each tensor's description holds a hash of its elements: the spec bounds what the "
            "views of a description hold together, so that a small file cannot make a reader hash "
            "without end (torch builds the views without reading them)",
        )
    )
    # -- strings whose JSON cannot be told apart
    case(
        "surrogate-pair-str",
        _binunicode_raw("\ud83d\ude00".encode("utf-8", "surrogatepass")),
        ["bad-value"],
        ["adv-surrogates", "pickle-str"],
        ["canonical.md#canonical-surrogates", "pickle.md#pickle-protocols"],
        "BINUNICODE of ED A0 BD ED B8 80: the two code points U+D83D U+DE00, whose JSON escapes read "
        "back as the one character U+1F600",
        why="its JSON form would name another string (U+1F600) than the two code points torch loads",
    )
    # -- globals and calls
    case(
        "memory-format",
        a.global_("torch", "contiguous_format"),
        ["unsafe-global"],
        [],
        ["canonical.md#canonical-pt-values", "pickle.md#pickle-globals"],
        "the bare global torch.contiguous_format: memory formats are not in the allowlist",
    )
    case(
        "bytearray-utf8",
        a.call(a.global_("builtins", "bytearray"), a.binunicode("é"), a.binunicode("utf-8")),
        ["bad-value"],
        [],
        ["pickle.md#pickle-rebuild"],
        "bytearray('é', 'utf-8'): a codec named by the file",
        why="a reader would look a codec up by a name the file gives and run it (pickle-no-execution); "
        "no writer emits one (protocols 0-2 write latin-1)",
    )
    big = 10**400
    case(
        "complex-overflow",
        a.call(a.global_("builtins", "complex"), a.integer(big)),
        ["bad-value"],
        [],
        ["pickle.md#pickle-rebuild"],
        "complex(10**400) (a LONG1 of 167 bytes): its real part does not fit a double (torch raises "
        "OverflowError)",
    )
    case(
        "proto0-newtrue",
        pickle.NEWTRUE,
        ["bad-opcode"],
        [],
        ["pickle.md#pickle-protocols"],
        "PROTO 0 then NEWTRUE (a protocol 2 opcode): an explicit PROTO 0 declares protocol 1",
        protocol=0,
        why="no writer puts a protocol 2 opcode in a pickle that declares protocol 0 (the spec's "
        "opcode/protocol check)",
    )
    case(
        "huge-global-name",
        a.global_("m" * 60_000, "x"),
        ["unsafe-global"],
        ["adv-unsafe-global"],
        ["pickle.md#pickle-globals", "canonical.md#canonical-reader-cli"],
        "GLOBAL whose module name is 60,000 characters: the one-line message quotes a short prefix",
    )
    for name, body, feats, spec, how in ACCEPTS:
        out.append(
            AdvCase(
                f"pt-zip/adv-hard-{name}",
                wrap.in_zip(a.program(body), drop=NO_STORAGE),
                [],
                BASE + ["pickle-protocol-2"] + feats,
                spec + ["pt-zip.md#pt-zip-data-pkl"],
                how,
                sources.zip_source(),
                GEN,
                category="accept",
            )
        )
    return out


def _views_of_one_storage(numel: int, views: int) -> bytes:
    """torch's zip members with storage ``0`` of ``numel`` float32 zeros and a list of ``views`` distinct
    ``_rebuild_tensor_v2`` tensors, each viewing all of it (the function and the storage's persistent id
    memoized by the first, fetched by the others: opcodes torch's loader runs)."""
    rest = (
        a.integer(0)
        + a.tuple_(a.binint(numel))
        + a.tuple_(a.integer(1))
        + pickle.NEWFALSE
        + a.ordered_dict()
        + pickle.TUPLE
        + pickle.REDUCE
    )
    first = (
        a.global_("torch._utils", "_rebuild_tensor_v2")
        + a.put(1)
        + pickle.MARK
        + a.storage_pid("FloatStorage", "0", "cpu", numel)
        + a.put(2)
        + rest
    )
    one = a.get(1) + pickle.MARK + a.get(2) + rest
    pkl = a.program(pickle.EMPTY_LIST + pickle.MARK + first + one * (views - 1) + pickle.APPENDS)
    members = [m for m in sources.zip_members() if not m.name.endswith("/data/1")]
    for m in members:
        if m.name.endswith("/data/0"):
            m.data = b"\0" * (4 * numel)
        elif m.name.endswith("/data.pkl"):
            m.data = pkl
    return rawzip.build(members)


def _nan() -> bytes:
    return pickle.BINFLOAT + struct.pack(">d", float("nan"))


def _size(*dims: int) -> bytes:
    return a.call(a.global_("torch", "Size"), a.tuple_(*(a.integer(d) for d in dims)))


def _complex(real: bytes, imag: bytes | None = None) -> bytes:
    args = (real,) if imag is None else (real, imag)
    return a.call(a.global_("builtins", "complex"), *args)


def _float(x: float) -> bytes:
    return pickle.BINFLOAT + struct.pack(">d", x)


#: Hostile but valid pickles torch 2.13's weights_only loader reads: (name, pickle body, features, spec,
#: how).  Their expectation is torch's description of what it loads (torch_describe, in a sandbox).
ACCEPTS: list[tuple[str, bytes, list[str], list[str], str]] = [
    (
        "key-tuple-then-size",
        a.dict_((a.tuple_(a.integer(1), a.integer(2)), a.binunicode("a")), (_size(1, 2), a.binunicode("b"))),
        ["pickle-dict", "pickle-key-merge", "pickle-reduce"],
        ["pickle.md#pickle-keys"],
        "{(1, 2): 'a', torch.Size([1, 2]): 'b'}: a torch.Size is a tuple equal to (1, 2), so the dict keeps "
        "the first key object, the tuple, with the last value",
    ),
    (
        "key-size-then-tuple",
        a.dict_((_size(1, 2), a.binunicode("a")), (a.tuple_(a.integer(1), a.integer(2)), a.binunicode("b"))),
        ["pickle-dict", "pickle-key-merge", "pickle-reduce"],
        ["pickle.md#pickle-keys"],
        "{torch.Size([1, 2]): 'a', (1, 2): 'b'}: one key, the first key object (the torch.Size) kept",
    ),
    (
        "key-numbers-merge",
        a.dict_(
            (a.integer(1), a.integer(10)),
            (_complex(_float(1.0), _float(0.0)), a.integer(11)),
            (pickle.NEWTRUE, a.integer(12)),
            (_float(1.0), a.integer(13)),
        ),
        ["pickle-dict", "pickle-key-merge", "pickle-reduce"],
        ["pickle.md#pickle-keys"],
        "{1: 10, complex(1, 0): 11, True: 12, 1.0: 13}: four equal keys, one item: the int key with value 13",
    ),
    (
        "key-true-first",
        a.dict_((pickle.NEWTRUE, a.integer(1)), (a.integer(1), a.integer(2))),
        ["pickle-dict", "pickle-key-merge"],
        ["pickle.md#pickle-keys"],
        "{True: 1, 1: 2}: the bool key object is kept, with the value 2",
    ),
    (
        "key-nan-twice",
        a.dict_((_nan(), a.integer(1)), (_nan(), a.integer(2))),
        ["pickle-dict", "pickle-key-merge", "pickle-float-special"],
        ["pickle.md#pickle-keys"],
        "two NaN keys from two BINFLOATs: NaN != NaN, so two items (a NaN key is valid)",
    ),
    (
        "key-nan-memo",
        pickle.EMPTY_DICT
        + pickle.MARK
        + _nan()
        + a.put(0)
        + a.integer(1)
        + a.get(0)
        + a.integer(2)
        + pickle.SETITEMS,
        ["pickle-dict", "pickle-key-merge", "pickle-float-special", "pickle-memo"],
        ["pickle.md#pickle-keys"],
        "one NaN object stored in the memo and used as a key twice: Python finds the same object, one item "
        "with the value 2",
    ),
    (
        "set-numbers-merge",
        a.call(
            a.global_("builtins", "set"), a.list_(a.integer(1), _float(1.0), pickle.NEWTRUE, a.integer(2))
        ),
        ["pickle-set", "pickle-key-merge", "pickle-reduce"],
        ["pickle.md#pickle-keys"],
        "set([1, 1.0, True, 2]): the set keeps the first of the equal items, {1, 2}",
    ),
    (
        "size-of-a-list",
        a.call(a.global_("torch", "Size"), a.list_(a.integer(3), a.integer(4))),
        ["pickle-reduce"],
        ["pickle.md#pickle-rebuild", "canonical.md#canonical-pt-values"],
        "torch.Size([3, 4]) called with a list: its normal form has the tuple (3, 4)",
    ),
    (
        "complex-of-an-int",
        _complex(a.integer(2)),
        ["pickle-reduce"],
        ["pickle.md#pickle-rebuild", "canonical.md#canonical-pt-values"],
        "complex(2): its normal form has the float parts [2.0, 0.0]",
    ),
]
