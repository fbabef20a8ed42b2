"""Seeded mutations of a real writer's ``.pt`` file (spec/pt-zip.md#pt-zip-container,
spec/pt-zip.md#pt-zip-data-pkl, spec/pt-legacy.md#pt-legacy-object, spec/tensors.md#tensors-conj-neg).

Each mutator takes the file's bytes and a :class:`random.Random` and returns new bytes, or ``None`` when
it does not apply (a legacy file has no zip members).  The structure-aware ones work through the tools
the adversarial generators already use: :mod:`generators.adversarial.rawzip` (members out through
:mod:`zipfile`, back in with every header field in reach), :mod:`pickletools` to list a pickle's opcodes
(never run), :mod:`generators.adversarial.assemble` to write new opcodes, and
:func:`generators.adversarial.wrap.legacy_spans` for the legacy stream's five pickles.
"""

from __future__ import annotations

import pickle
import pickletools
import random
import struct
import zipfile
from collections.abc import Callable

from conformance.generators.adversarial import assemble as a
from conformance.generators.adversarial import rawzip
from conformance.generators.adversarial.wrap import legacy_spans

Mutator = Callable[[bytes, random.Random], "bytes | None"]
#: An edit of one pickle's bytes (:func:`edit_pickle`; the differential mode against any reader adds its
#: own, differential/campaign.py).
Edit = Callable[[bytes, random.Random], "bytes | None"]

#: Integers that sit on the edges the readers check (sizes, strides, offsets, counts).
INTERESTING_INTS = (0, 1, -1, 2, 3, 7, 255, 256, 1 << 15, 1 << 31, (1 << 31) - 1, -(1 << 31), 1 << 32,
                    1 << 62, (1 << 63) - 1, -(1 << 63), 1 << 63, 1 << 64)
#: Strings that name things a pickle or a tensor's state may carry (keys, metadata, devices, globals).
INTERESTING_STRS = ("data", "requires_grad", "__class__", "real", "grad", "_backward_hooks", "conj", "neg",
                    "0", "1", "archive", "cpu", "cuda", "cuda:0", "cuda:1", "meta", "mps", "cpu:0", "CPU",
                    "weight", "", "storage", "little", "big", "_is_param", "is_leaf", "x" * 300)
#: Globals torch's weights_only unpickler allows, swapped for one another.
GLOBALS = (("torch._utils", "_rebuild_tensor_v2"), ("torch._utils", "_rebuild_parameter"),
           ("torch._utils", "_rebuild_tensor_v3"), ("torch._utils", "_rebuild_from_type_v2"),
           ("torch._utils", "_rebuild_parameter_with_state"), ("torch._utils", "_rebuild_sparse_tensor"),
           ("torch._utils", "_rebuild_device_tensor_from_numpy"),
           ("torch._utils", "_rebuild_meta_tensor_no_storage"),
           ("torch._utils", "_rebuild_qtensor"), ("collections", "OrderedDict"), ("torch", "Size"),
           ("torch", "FloatStorage"), ("torch", "HalfStorage"), ("torch", "BoolStorage"),
           ("torch", "ByteStorage"),
           ("torch", "LongStorage"), ("torch", "UntypedStorage"), ("torch", "float16"), ("torch", "device"),
           ("torch.nn.parameter", "Parameter"), ("torch", "Tensor"), ("builtins", "complex"),
           ("builtins", "set"), ("builtins", "bytearray"), ("torch", "complex64"))
#: Single opcodes worth inserting: stack and memo moves, empty containers, constants.
INSERTS = (pickle.MARK, pickle.POP, pickle.DUP, pickle.EMPTY_DICT, pickle.EMPTY_LIST, pickle.EMPTY_TUPLE,
           pickle.NONE, pickle.NEWTRUE, pickle.NEWFALSE, pickle.BUILD, pickle.TUPLE1, pickle.TUPLE2,
           pickle.SETITEM, pickle.APPEND, pickle.REDUCE, pickle.BINGET + b"\x00", pickle.BINPUT + b"\x00",
           pickle.POP_MARK, pickle.STOP, pickle.MEMOIZE, pickle.FRAME + bytes(8))


# -- raw bytes -------------------------------------------------------------------------------------

def flip(data: bytes, rng: random.Random) -> bytes:
    """1-8 bytes set to random values at random offsets."""
    out = bytearray(data)
    for _ in range(rng.randint(1, 8)):
        out[rng.randrange(len(out))] = rng.randrange(256)
    return bytes(out)


def truncate(data: bytes, rng: random.Random) -> bytes:
    """The file cut at a random offset (a partial download), sometimes only a few bytes short."""
    cut = rng.randint(1, 40) if rng.random() < 0.3 else rng.randrange(1, len(data))
    return data[: max(1, len(data) - cut)] if cut <= 40 else data[:cut]


# -- pickles ---------------------------------------------------------------------------------------

def _ops(pkl: bytes) -> list[tuple[str, object, int, int]]:
    """(opcode name, argument, start, end) of each opcode of ``pkl``, listed by pickletools."""
    found = []
    try:
        for op, arg, pos in pickletools.genops(pkl):
            found.append((op.name, arg, pos))
    except Exception:  # noqa: BLE001 - a pickle an earlier mutation broke: keep what was listed
        pass
    if not found:
        return []
    ends = [p for _, _, p in found[1:]] + [len(pkl)]
    return [(n, arg, p, e) for (n, arg, p), e in zip(found, ends, strict=True)]


def _string(s: str) -> bytes:
    """BINUNICODE of ``s``, lone surrogates kept (a pickle may hold them)."""
    raw = s.encode("utf-8", "surrogatepass")
    return pickle.BINUNICODE + struct.pack("<I", len(raw)) + raw


def edit_pickle(pkl: bytes, rng: random.Random) -> bytes | None:
    """One opcode-aware edit: drop, repeat or insert an opcode, change an integer, a string, a bool or
    a global, or give a tensor's rebuild call tensor metadata."""
    ops = _ops(pkl)
    if len(ops) < 2:
        return None
    kind = rng.choice(("drop", "repeat", "insert", "int", "str", "bool", "global", "metadata", "swap"))
    i = rng.randrange(len(ops))
    name, arg, start, end = ops[i]
    if kind == "drop":
        return pkl[:start] + pkl[end:]
    if kind == "repeat":
        return pkl[:end] + pkl[start:end] + pkl[end:]
    if kind == "insert":
        return pkl[:start] + rng.choice(INSERTS) + pkl[start:]
    if kind == "swap":
        j = rng.randrange(len(ops))
        (s1, e1), (s2, e2) = sorted([(start, end), (ops[j][2], ops[j][3])])
        if e1 > s2:
            return None
        return pkl[:s1] + pkl[s2:e2] + pkl[e1:s2] + pkl[s1:e1] + pkl[e2:]
    picks = {
        "int": [o for o in ops if o[0] in ("BININT", "BININT1", "BININT2", "LONG1", "INT", "LONG")],
        "str": [o for o in ops if o[0] in ("BINUNICODE", "SHORT_BINUNICODE", "BINUNICODE8", "UNICODE")],
        "bool": [o for o in ops if o[0] in ("NEWTRUE", "NEWFALSE")],
        "global": [o for o in ops if o[0] == "GLOBAL"],
        "metadata": [o for k, o in enumerate(ops[:-1]) if o[0] == "REDUCE" and ops[k + 1][0] == "TUPLE"],
    }[kind]
    if not picks:
        return None
    name, arg, start, end = rng.choice(picks)
    if kind == "int":
        value = rng.choice(INTERESTING_INTS) if rng.random() < 0.7 else int(arg) + rng.choice((-1, 1))  # type: ignore[call-overload]
        new = a.integer(value)
    elif kind == "str":
        new = _string(rng.choice(INTERESTING_STRS) if rng.random() < 0.8 else str(arg).upper())
    elif kind == "bool":
        new = pickle.NEWFALSE if name == "NEWTRUE" else pickle.NEWTRUE
    elif kind == "global":
        new = a.global_(*rng.choice(GLOBALS))
    else:  # metadata: a 7th argument after the backward-hooks OrderedDict()
        key = rng.choice((_string("conj"), _string("neg"), _string("zero"), _string("bogus"),
                          pickle.SHORT_BINBYTES + b"\x04conj"))
        value = rng.choice((pickle.NEWTRUE, pickle.NEWFALSE, pickle.NONE, a.integer(2), _string("yes")))
        return pkl[:end] + pickle.EMPTY_DICT + key + value + pickle.SETITEM + pkl[end:]
    return pkl[:start] + new + pkl[end:]


# -- containers ------------------------------------------------------------------------------------

def _members(data: bytes) -> list[rawzip.Member] | None:
    try:
        return rawzip.members(data)
    except (zipfile.BadZipFile, OSError, ValueError, NotImplementedError, EOFError, RuntimeError, KeyError):
        return None


def zip_pickle(data: bytes, rng: random.Random, edit: Edit | None = None) -> bytes | None:
    """The zip file with its ``data.pkl`` edited by ``edit`` (default :func:`edit_pickle`; every other
    member kept)."""
    ms = _members(data)
    pkl = next((m for m in ms or () if m.name.endswith("data.pkl")), None)
    if pkl is None:
        return None
    new = (edit or edit_pickle)(pkl.data, rng)
    if new is None:
        return None
    pkl.data = new
    return rawzip.build(ms)  # type: ignore[arg-type]


def zip_members(data: bytes, rng: random.Random) -> bytes | None:
    """One member-level edit: drop, duplicate (same name, or equal up to case), rename, cut or grow a
    record, swap two records' data, or add a ``code/`` or ``constants.pkl`` member."""
    ms = _members(data)
    if not ms:
        return None
    kind = rng.choice(("drop", "dup", "case", "rename", "cut", "grow", "swap", "add"))
    m = rng.choice(ms)
    root = ms[0].name.split("/", 1)[0]
    if kind == "drop":
        ms.remove(m)
    elif kind in ("dup", "case"):
        twin_name = m.name if kind == "dup" else m.name.swapcase()
        twin = rawzip.Member(twin_name, flip(m.data, rng) if m.data and rng.random() < 0.5 else m.data)
        ms.insert(rng.randrange(len(ms) + 1), twin)
    elif kind == "rename":
        key = rng.choice(("0", "1", "2", "00"))
        m.name = rng.choice((m.name.upper(), m.name + "x", root + "/data/" + key,
                             m.name.replace(root, "other", 1), "/" + m.name, m.name.replace("/", "\\")))
    elif kind == "cut":
        m.data = m.data[: rng.randrange(len(m.data) + 1)]
    elif kind == "grow":
        m.data = m.data + bytes(rng.choice((1, 2, 4, 8, 64)))
    elif kind == "swap":
        other = rng.choice(ms)
        m.data, other.data = other.data, m.data
    else:
        ms.append(rawzip.Member(root + rng.choice(("/code/__torch__.py", "/constants.pkl", "/.data/version",
                                                   "/data/99", "/version")),
                                rng.choice((b"", b"3\n", pickle.dumps(()), b"x = 1\n"))))
    try:
        return rawzip.build(ms)
    except (ValueError, OverflowError, UnicodeEncodeError):
        return None


def legacy_pickle(data: bytes, rng: random.Random, edit: Edit | None = None) -> bytes | None:
    """A legacy stream with one of its five pickles edited by ``edit`` (default :func:`edit_pickle`;
    bytes after kept)."""
    try:
        spans = legacy_spans(data)
    except Exception:  # noqa: BLE001 - not a legacy stream pickletools can list
        return None
    start, end = spans[3] if rng.random() < 0.7 else rng.choice(spans)
    new = (edit or edit_pickle)(data[start:end], rng)
    return None if new is None else data[:start] + new + data[end:]


#: Mutators by name, and the formats each applies to.
MUTATORS: dict[str, tuple[Mutator, tuple[str, ...]]] = {
    "flip": (flip, ("pt-zip", "pt-legacy")),
    "truncate": (truncate, ("pt-zip", "pt-legacy")),
    "zip-pickle": (zip_pickle, ("pt-zip",)),
    "zip-members": (zip_members, ("pt-zip",)),
    "legacy-pickle": (legacy_pickle, ("pt-legacy",)),
}


def mutate(data: bytes, fmt: str, name: str, rng: random.Random) -> bytes | None:
    """``data`` mutated by mutator ``name`` (``None``: it does not apply to this file)."""
    fn, formats = MUTATORS[name]
    if fmt not in formats:
        return None
    return fn(data, rng)
