"""Opcodes above the protocol their pickle declares, for every declared protocol
(spec/pickle.md#pickle-protocols).

For each declared protocol (none, ``PROTO 0`` to ``PROTO 4``) and each higher protocol an opcode can
belong to (2 to 5; protocols 0 and 1 mix freely), one pickle holds one opcode of that higher protocol: a
value of a dict.  Declared protocols 2 to 4 reuse torch's own ``data.pkl`` (a protocol 2 program, valid
under any higher PROTO) with its PROTO byte changed and the value added as one more key; protocols 0 and
1 need a pickle of protocol 0 opcodes (``MARK DICT``, ``UNICODE``, ``SETITEM``), so theirs holds only the
dict, in torch's zip container.
"""

from __future__ import annotations

import pickle
import struct

from . import assemble as a
from . import sources, wrap
from .record import AdvCase

GEN = "pickle_protocols.py"
#: One opcode of each protocol from 2, pushing a value: (protocol, name, bytes).
HIGHER = (
    (2, "newtrue", pickle.NEWTRUE),
    (3, "short-binbytes", pickle.SHORT_BINBYTES + b"\x02hi"),
    (4, "short-binunicode", pickle.SHORT_BINUNICODE + b"\x02hi"),
    (5, "bytearray8", pickle.BYTEARRAY8 + struct.pack("<Q", 2) + b"hi"),
)
#: Declared protocols: the case name's word and the PROTO argument (``None``: no PROTO).
DECLARED = (("none", None), ("0", 0), ("1", 1), ("2", 2), ("3", 3), ("4", 4))
WHY = ("no pickler writes an opcode above the protocol its pickle declares, and torch's weights_only "
       "unpickler does not check the protocol; a reader that checks it refuses such a program as CPython's "
       "pickletools.dis does")


def _text_dict(declared: int | None, value: bytes) -> bytes:
    """``{'above': value}`` in protocol 0 opcodes, after ``PROTO declared`` when given."""
    head = a.proto(declared) if declared is not None else b""
    return head + pickle.MARK + pickle.DICT + pickle.UNICODE + b"above\n" + value + pickle.SETITEM + a.stop()


#: Opcodes a reader MUST refuse wherever they appear, each at its own protocol: (protocol, name, bytes).
REFUSED = (
    (2, "ext1", pickle.EXT1 + b"\x01"),
    (2, "ext2", pickle.EXT2 + b"\x01\x00"),
    (2, "ext4", pickle.EXT4 + b"\x01\x00\x00\x00"),
    (5, "next-buffer", pickle.NEXT_BUFFER),
    (5, "readonly-buffer", pickle.SHORT_BINBYTES + b"\x02hi" + pickle.READONLY_BUFFER),
)


def protocol_cases() -> list[AdvCase]:
    out: list[AdvCase] = []
    torch_pkl = wrap.zip_pickle()
    assert torch_pkl[:2] == a.proto(2)
    for word, declared in DECLARED:
        effective = 1 if declared is None or declared < 2 else declared  # PROTO 0 declares protocol 1
        for proto, name, value in HIGHER:
            if proto <= effective:
                continue
            if declared is not None and declared >= 2:
                pkl = wrap.inject(a.proto(declared) + torch_pkl[2:], "above", value)
                how = (f"torch's data.pkl with its PROTO 2 changed to PROTO {declared} and one more key "
                       f"whose value is pushed by {name.upper().replace('-', '_')} (protocol {proto})")
                feats = [f"pickle-protocol-{declared}", "pickle-dict", "dtype-float32"]
            else:
                pkl = _text_dict(declared, value)
                first = "no PROTO" if declared is None else f"PROTO {declared}"
                how = (f"a protocol 0 dict pickle ({first}: protocol 0 or 1) whose one value is pushed by "
                       f"{name.upper().replace('-', '_')} (protocol {proto}), as torch's zip data.pkl")
                feats = ["pickle-protocol-0", "pickle-protocol-1", "pickle-dict"]
            out.append(AdvCase(
                f"pt-zip/adv-pickle-above-protocol-{word}-{name}", wrap.in_zip(pkl), ["bad-opcode"],
                ["zip-archive", "adv-bad-opcode", *feats],
                ["pickle.md#pickle-protocols", "pickle.md#pickle-opcodes", "pt-zip.md#pt-zip-data-pkl"],
                how, sources.zip_source(), GEN, why_stricter=WHY))
    # -- STRING (Python 2 str, protocol 0): CPython's C unpickler reads it, torch's weights_only one lacks it
    strings = ((b"'plain'", "single quotes"), (b'"double"', "double quotes"),
               (b"'a\\x41\\n\\'q'", "escapes \\x41, \\n and \\'"), (b"'caf\\xc3\\xa9'", "UTF-8 bytes"))
    body = b"".join(pickle.UNICODE + f"s{i}\n".encode() + pickle.STRING + raw + b"\n" + pickle.SETITEM
                    for i, (raw, _) in enumerate(strings))
    out.append(AdvCase(
        "pt-zip/adv-pickle-string-protocol-0", wrap.in_zip(pickle.MARK + pickle.DICT + body + a.stop(),
                                                           drop=("/data/0", "/data/1")),
        [], ["zip-archive", "pickle-protocol-0", "pickle-dict", "pickle-str"],
        ["pickle.md#pickle-protocols", "pickle.md#pickle-weights-only", "pt-zip.md#pt-zip-data-pkl"],
        "a protocol 0 dict pickle (no PROTO) whose values are STRING (Python 2 str) literals: "
        + "; ".join(f"s{i} {raw.decode()} ({what})" for i, (raw, what) in enumerate(strings))
        + "; torch's weights_only loader lacks STRING, so the judge is weights_only=False (CPython's C "
        "unpickler, encoding utf-8)", sources.zip_source(), GEN, category="accept", cpython_opcodes=True))
    # -- a STRING whose closing quote is not its opening one: C _pickle refuses it ("must be quoted")
    out.append(AdvCase(
        "pt-zip/adv-pickle-string-quotes-differ",
        wrap.in_zip(pickle.MARK + pickle.DICT + pickle.UNICODE + b"s\n" + pickle.STRING + b"'abc\"\n"
                    + pickle.SETITEM + a.stop(), drop=("/data/0", "/data/1")),
        ["bad-value"], ["zip-archive", "pickle-protocol-0", "pickle-dict", "pickle-str"],
        ["pickle.md#pickle-protocols", "pickle.md#pickle-weights-only", "pt-zip.md#pt-zip-data-pkl"],
        "a protocol 0 dict pickle (no PROTO) whose one value is the STRING 'abc\" (opened by a single "
        "quote, closed by a double one); torch's weights_only loader lacks STRING, so the judge is "
        "weights_only=False (CPython's C unpickler)", sources.zip_source(), GEN, cpython_opcodes=True))
    # -- FLOAT text with a sign (C _pickle's PyOS_string_to_double reads [+-] before digits or a word)
    floats = (b"-1", b"+5", b"-inf", b"+nan")
    body = b"".join(pickle.UNICODE + f"f{i}\n".encode() + pickle.FLOAT + raw + b"\n" + pickle.SETITEM
                    for i, raw in enumerate(floats))
    out.append(AdvCase(
        "pt-zip/adv-pickle-float-signed-protocol-0",
        wrap.in_zip(pickle.MARK + pickle.DICT + body + a.stop(), drop=("/data/0", "/data/1")),
        [], ["zip-archive", "pickle-protocol-0", "pickle-dict", "pickle-float-special"],
        ["pickle.md#pickle-number-text", "pickle.md#pickle-weights-only", "pt-zip.md#pt-zip-data-pkl"],
        "a protocol 0 dict pickle (no PROTO) whose values are FLOAT literals with a sign and one digit or "
        "a word: " + ", ".join(f"f{i} {raw.decode()}" for i, raw in enumerate(floats))
        + "; torch's weights_only loader lacks FLOAT, so the judge is weights_only=False (CPython's C "
        "unpickler)", sources.zip_source(), GEN, category="accept", cpython_opcodes=True))
    for proto, name, value in REFUSED:
        op = name.upper().replace("-", "_")
        out.append(AdvCase(
            f"pt-zip/adv-pickle-refused-{name}", wrap.in_zip(wrap.inject(a.proto(proto) + torch_pkl[2:], "x",
                                                                          value)),
            ["bad-opcode"], ["zip-archive", "adv-bad-opcode", f"pickle-protocol-{proto}", "pickle-dict"],
            ["pickle.md#pickle-opcodes", "pt-zip.md#pt-zip-data-pkl"],
            f"torch's data.pkl (PROTO {proto}) with one more key whose value uses {op}, an opcode of "
            f"protocol {proto} that a reader refuses wherever it appears (the extension registry names "
            "globals by number; out-of-band buffers cannot travel in a file)", sources.zip_source(), GEN))
    return out
