"""Hostile ``.t7`` and tar ``.pt`` inputs up to 16 MB against the reader's contract
(spec/canonical.md#canonical-reader-cli, spec/t7.md#t7-limits, spec/pt-tar.md#pt-tar-members).

Each input is written to a temporary folder and read by ``torchfmt dump`` in a subprocess limited to
2 GiB of address space; the table shows the wall time, the peak RSS, the exit status and the stderr
line.  The contract: exit 0, 1 or 2, exactly one stderr line when not 0, and (on this machine) under
10 s of CPU and 2 GiB for any file up to 16 MB.

    PYTHONPATH=reference_impl python benchmarks/t7_tar_hostile.py [--only NAME] [--timeout 60]
"""

from __future__ import annotations

import argparse
import io
import os
import resource
import struct
import subprocess
import sys
import tarfile
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from torchfmt.limits import T7_OBJECTS

MB16 = 16 << 20
ADDRESS_SPACE = 2 << 30
NIL, NUMBER, STRING, TABLE, TORCH = 0, 1, 2, 3, 4


def _i(*values: int) -> bytes:
    return struct.pack(f"<{len(values)}i", *values)


def _torch_header(header: bytes) -> bytes:
    return _i(TORCH, 1, len(header)) + header


def zeros() -> bytes:
    """16 MB of zero bytes: 4 M nil objects in binary."""
    return bytes(MB16)


def version_30k() -> bytes:
    """A class header ``V 111...1x`` of 30 KB: not a version (the quadratic-regex trigger)."""
    return _torch_header(b"V " + b"1" * 30_000 + b"x") + _i(TABLE, 2, 0)


def version_16m() -> bytes:
    return _torch_header(b"V " + b"1" * (MB16 - 64) + b"x") + _i(TABLE, 2, 0)


def version_dot_16m() -> bytes:
    """``V 1.111...1x``: the fraction part of the number grammar."""
    return _torch_header(b"V 1." + b"1" * (MB16 - 64) + b"x") + _i(TABLE, 2, 0)


def version_spaces_16m() -> bytes:
    """``V 1`` then 16 MB of spaces and an ``x``: the trailing-whitespace part of the grammar."""
    return _torch_header(b"V 1" + b" " * (MB16 - 64) + b"x") + _i(TABLE, 2, 0)


def class_name_not_utf8_16m() -> bytes:
    """A 16 MB class name that is not UTF-8: the error message must quote only a prefix."""
    name = b"\xff" * (MB16 - 64)
    return _torch_header(b"V 1") + _i(len(name)) + name


def ascii_int_5000() -> bytes:
    """A type code of 5001 digits: Python's int() refuses more than 4300."""
    return b"1" + b"0" * 5000 + b"\n"


def ascii_int_zeros_16m() -> bytes:
    """The type code 1 written with 16 M leading zeros, then the number 1."""
    return b"0" * (MB16 - 8) + b"1\n1\n"


def ascii_float_16m() -> bytes:
    """A number (type 1) whose double is 16 M digits."""
    return b"1\n" + b"1" * (MB16 - 8) + b"\n"


def ascii_float_frac_16m() -> bytes:
    """A number 0.000...0001e5 of 16 M digits: a halfway-rounding candidate is not needed to be slow."""
    return b"1\n0." + b"0" * (MB16 - 16) + b"1e5\n"


def ascii_float32_halfway_16m() -> bytes:
    """A FloatStorage element exactly halfway between two floats up to its 16 M-th digit: the exact
    comparison strtof's rounding needs (spec/t7.md#t7-ascii) runs on all of it."""
    head = b"4\n1\n3\nV 1\n18\ntorch.FloatStorage\n1\n1.000000059604644775390625"
    return head + b"0" * (MB16 - len(head) - 4) + b"1\n"


def ascii_version_16m() -> bytes:
    header = b"V " + b"9" * (MB16 - 64) + b"x"
    return b"4\n1\n%d\n" % len(header) + header + b"\n3\n2\n0\n"


def ascii_long_16m() -> bytes:
    """A storage count of 16 M digits."""
    head = b"4\n1\n3\nV 1\n18\ntorch.FloatStorage\n"
    return head + b"1" * (MB16 - len(head) - 2) + b"\n"


AT_LIMIT = T7_OBJECTS.value  # the most objects a stream may hold (spec/t7.md#t7-limits)


def nils_at_limit() -> bytes:
    """As many nils as the object limit allows: accepted, the costliest description per byte."""
    return bytes(4 * AT_LIMIT)


def tables_at_limit() -> bytes:
    return b"".join(_i(TABLE, i + 1, 0) for i in range(AT_LIMIT))


def ascii_tables_at_limit() -> bytes:
    return b"".join(b"3\n%d\n0\n" % (i + 1) for i in range(AT_LIMIT))


def tables_16m() -> bytes:
    """1.4 M empty tables, each a top-level object."""
    n = MB16 // 12
    return b"".join(_i(TABLE, i + 1, 0) for i in range(n))


def deep_tables_16m() -> bytes:
    """Tables nested through their first key as deep as 16 MB allows."""
    n = MB16 // 28
    return b"".join(_i(TABLE, i + 1, 1) + _i(NUMBER) + struct.pack("<d", 1.0) for i in range(n))


def deep_description() -> bytes:
    """Chains of 1000 nested tables, each kept as a key with a nil value (so the key is no item) and
    holding a back-reference to the previous chain at its bottom: read at depth 1002, described at a
    depth that grows by 1000 per chain."""
    out = bytearray(_i(TABLE, 1, 0))  # a placeholder first table
    index = 1
    prev = None
    chain = 1000
    holder = []
    while len(out) < MB16 - 40 * chain:
        index += 1
        holder_index = index
        out += _i(TABLE, holder_index, 1)  # a table with one pair: key = chain, value = nil
        first = index + 1
        for _ in range(chain):
            index += 1
            out += _i(TABLE, index, 1, NUMBER) + struct.pack("<d", 1.0)
        out += _i(TABLE, prev, ) if prev else _i(TABLE, index + 1, 0)
        if not prev:
            index += 1
        out += _i(NIL)  # the pair's value: nil
        prev = first
        holder.append(holder_index)
    # a last top-level table whose value is the last chain: describing it writes every chain in full
    index += 1
    out += _i(TABLE, index, 1, NUMBER) + struct.pack("<d", 1.0) + _i(TABLE, prev)
    return bytes(out)


def duplicate_key_deep() -> bytes:
    """A table whose two keys are one deeply nested table (a back-reference): the error must not repr it."""
    depth = 1000
    nested = b"".join(_i(TABLE, i + 2, 1, NUMBER) + struct.pack("<d", 1.0) for i in range(depth))
    nested += _i(TABLE, depth + 2, 0)
    return _i(TABLE, 1, 2) + nested + _i(NUMBER) + struct.pack("<d", 1.0) + _i(TABLE, 2) + \
        _i(NUMBER) + struct.pack("<d", 2.0)


# -- tar -------------------------------------------------------------------------------------------

def _tar_with_pax(records: bytes) -> bytes:
    """A tar archive whose first member is preceded by a PAX header holding ``records``."""
    def header(name: bytes, size: int, kind: bytes) -> bytes:
        info = tarfile.TarInfo(name.decode())
        info.size = size
        info.type = kind
        return info.tobuf(format=tarfile.USTAR_FORMAT)
    out = io.BytesIO()
    out.write(header(b"././@PaxHeader", len(records), tarfile.XHDTYPE))
    out.write(records + bytes(-len(records) % 512))
    out.write(header(b"sys_info", 0, tarfile.REGTYPE))
    out.write(bytes(1024))
    return out.getvalue()


def tar_pax_length_5000() -> bytes:
    return _tar_with_pax(b"1" * 5000 + b" path=x\n")


def tar_pax_length_zeros_16m() -> bytes:
    rec = b"0" * (MB16 - 4096)
    return _tar_with_pax(rec + b"9 a=bcd\n")


def tar_pax_size_superscript() -> bytes:
    return _tar_with_pax(b"11 size=\xc2\xb2\n")


def tar_pax_size_5000() -> bytes:
    value = b"1" * 5000
    body = b" size=" + value + b"\n"
    n = len(body) + 4
    return _tar_with_pax(b"%d" % n + body)


def tar_pax_many_records_16m() -> bytes:
    rec = b"8 a=bcd\n"
    return _tar_with_pax(rec * ((MB16 - 4096) // len(rec)))


INPUTS: dict[str, tuple[str, Callable[[], bytes]]] = {
    "t7-zeros-16m": ("t7", zeros),
    "t7-version-30k": ("t7", version_30k),
    "t7-version-16m": ("t7", version_16m),
    "t7-version-dot-16m": ("t7", version_dot_16m),
    "t7-version-spaces-16m": ("t7", version_spaces_16m),
    "t7-class-name-not-utf8-16m": ("t7", class_name_not_utf8_16m),
    "t7-ascii-int-5000-digits": ("t7", ascii_int_5000),
    "t7-ascii-int-zeros-16m": ("t7", ascii_int_zeros_16m),
    "t7-ascii-float-16m": ("t7", ascii_float_16m),
    "t7-ascii-float-frac-16m": ("t7", ascii_float_frac_16m),
    "t7-ascii-float32-halfway-16m": ("t7", ascii_float32_halfway_16m),
    "t7-ascii-version-16m": ("t7", ascii_version_16m),
    "t7-ascii-long-16m": ("t7", ascii_long_16m),
    "t7-nils-at-limit": ("t7", nils_at_limit),
    "t7-tables-at-limit": ("t7", tables_at_limit),
    "t7-ascii-tables-at-limit": ("t7", ascii_tables_at_limit),
    "t7-tables-16m": ("t7", tables_16m),
    "t7-deep-tables-16m": ("t7", deep_tables_16m),
    "t7-deep-description": ("t7", deep_description),
    "t7-duplicate-key-deep": ("t7", duplicate_key_deep),
    "tar-pax-length-5000-digits": ("pt", tar_pax_length_5000),
    "tar-pax-length-zeros-16m": ("pt", tar_pax_length_zeros_16m),
    "tar-pax-size-superscript": ("pt", tar_pax_size_superscript),
    "tar-pax-size-5000-digits": ("pt", tar_pax_size_5000),
    "tar-pax-many-records-16m": ("pt", tar_pax_many_records_16m),
}


def _limit() -> None:
    resource.setrlimit(resource.RLIMIT_AS, (ADDRESS_SPACE, ADDRESS_SPACE))


def run(path: Path, timeout: float) -> tuple[float, float, int | None, str, int]:
    """Wall and CPU seconds, exit status (None on timeout), stderr and the child's peak RSS in MB."""
    start = time.monotonic()
    with tempfile.TemporaryFile() as err_file:
        p = subprocess.Popen([sys.executable, "-m", "torchfmt", "dump", str(path)],
                             stdout=subprocess.DEVNULL, stderr=err_file, preexec_fn=_limit)
        code: int | None = None
        while True:
            pid, status, usage = os.wait4(p.pid, os.WNOHANG)
            if pid:
                code = os.waitstatus_to_exitcode(status)
                p.returncode = code
                break
            if time.monotonic() - start > timeout:
                p.kill()
                _, _, usage = os.wait4(p.pid, 0)
                p.returncode = -9
                break
            time.sleep(0.02)
        wall = time.monotonic() - start
        err_file.seek(0)
        err = err_file.read().decode("utf-8", "replace") if code is not None else "timeout"
    return wall, usage.ru_utime + usage.ru_stime, code, err, usage.ru_maxrss // 1024


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--only", action="append", help="run only these inputs")
    ap.add_argument("--timeout", type=float, default=60.0)
    args = ap.parse_args(argv)
    broken = 0
    print("| input | bytes | wall s | CPU s | peak RSS MB | exit | stderr |")
    print("| --- | --- | --- | --- | --- | --- | --- |")
    with tempfile.TemporaryDirectory() as tmp:
        for name, (ext, make) in INPUTS.items():
            if args.only and name not in args.only:
                continue
            data = make()
            path = Path(tmp) / f"{name}.{ext}"
            path.write_bytes(data)
            wall, cpu, code, err, rss = run(path, args.timeout)
            lines = err.splitlines()
            first = (lines[0] if lines else "")[:100].replace("|", "\\|")
            # The time limit is judged on CPU time: the machine is shared, and wall time there is the
            # load's as much as the reader's.
            ok = (code in (0, 1, 2) and (code == 0 or len(lines) == 1) and cpu < 10 and rss < 2048)
            broken += not ok
            print(f"| {name} | {len(data)} | {wall:.2f} | {cpu:.2f} | {rss} | {code} | {first}"
                  f"{'' if ok else ' **CONTRACT BROKEN**'} |", flush=True)
            path.unlink()
    return 1 if broken else 0


if __name__ == "__main__":
    sys.exit(main())
