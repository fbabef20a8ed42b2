"""Readers with one planted bug each: the reference reader with one function changed, to show that the
differential mode against any reader (differential/campaign.py) finds a reader's bug that no committed case
catches (issue 27's three: a C reader's).

``python conformance/differential/planted.py BUG dump PATH`` (or ``BUG dump --batch``) runs ``torchfmt``'s
command line with the bug ``BUG`` of :data:`BUGS` planted:

- ``nul-cut``: a storage location is cut at its first NUL, as a C string is (``"cpu\\0x"`` reads as
  ``cpu``; spec/pt-legacy.md#pt-legacy-persistent-id);
- ``lenient-float``: a FLOAT text is read up to its first NUL, as C's ``strtod`` reads it (``F-0\\x000``
  reads as -0.0 where the spec refuses it, spec/pickle.md#pickle-number-text);
- ``tar-namespace``: a tar checkpoint's tensor keys live apart from its storage and view keys, a tensor
  hiding a storage of the same key (spec/pt-tar.md#pt-tar-tensors: a key comes twice is ``bad-reference``).
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from typing import Any


def nul_cut() -> None:
    from torchfmt.pt import archive, legacy, tar

    decode = archive.decode_location

    def cut(location: Any, offset: int) -> str:
        if isinstance(location, str):
            location = location.split("\0", 1)[0] or location
        return decode(location, offset)

    archive.decode_location = legacy.decode_location = tar.decode_location = cut


def lenient_float() -> None:
    from torchfmt.pickle import machine, opcodes

    read = machine._MEANINGS["FLOAT"]
    machine._MEANINGS["FLOAT"] = lambda m, raw: read(m, bytes(raw).split(b"\0", 1)[0] or bytes(raw))
    op = next(o for o in opcodes.OPCODES if o.name == "FLOAT")
    machine._STEPS[op.code] = machine._step(op)  # the opcode table holds each meaning


def tar_namespace() -> None:
    from torchfmt.pt import tar

    read = tar._read_tensors

    class Tensors(dict):  # tensors by key; storages looked up apart
        def __init__(self, storages: dict[int, Any]) -> None:
            super().__init__()
            self.storages = storages

        def get(self, key: Any, default: Any = None) -> Any:
            return self.storages.get(key, default)

    def read_tensors(buf: Any, m: Any, header: Any, objects: dict[int, Any]) -> None:
        tensors = Tensors(objects)
        read(buf, m, header, tensors)
        objects.update(tensors)

    tar._read_tensors = read_tensors


BUGS: dict[str, Callable[[], None]] = {"nul-cut": nul_cut, "lenient-float": lenient_float,
                                       "tar-namespace": tar_namespace}


def main(argv: list[str]) -> int:
    if not argv or argv[0] not in BUGS:
        print(f"usage: planted.py {{{','.join(BUGS)}}} dump PATH|--batch", file=sys.stderr)
        return 2
    BUGS[argv[0]]()
    from torchfmt.cli import main as cli

    return cli(argv[1:])


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
