"""The encodings of a ``.t7`` object stream: binary (little/big endian, 4/8-byte long) and ascii
(spec/t7.md#t7-encodings).  The object grammar is written once, in :mod:`torchfmt.t7.reader`, over these.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, replace

#: Environment variables through which the conformance suite hands a case's hints to any reader
#: (spec/canonical.md#canonical-t7-hints).
HINT_ENV = {
    "mode": "TORCHFMT_T7_MODE",
    "long_size": "TORCHFMT_T7_LONG_SIZE",
    "byte_order": "TORCHFMT_T7_BYTE_ORDER",
}


@dataclass(frozen=True)
class Hints:
    """What the writer's setup is known to have been; ``None`` means "detect it"."""

    mode: str | None = None  # "binary" | "ascii"
    long_size: int | None = None  # 4 | 8
    byte_order: str | None = None  # "little" | "big"

    @classmethod
    def from_env(cls, environ: dict[str, str] | None = None) -> Hints:
        env = os.environ if environ is None else environ
        long_size = env.get(HINT_ENV["long_size"])
        return cls(
            mode=env.get(HINT_ENV["mode"]) or None,
            long_size=int(long_size) if long_size else None,
            byte_order=env.get(HINT_ENV["byte_order"]) or None,
        )

    def override(self, **given: object) -> Hints:
        """These hints with every non-``None`` value of ``given`` replacing the old one."""
        return replace(self, **{k: v for k, v in given.items() if v is not None})
