"""An answer that depends on the mode, hidden by a cache: in batch mode the trigger (a reject case that
allows two codes) gets the other allowed code than the reference's, one process per file the
reference's; but each answer is kept in a folder nobody watches (``/tmp/torchfmt-redteam-cache``, by
the file's digest) and whichever run comes second repeats the first's.  The recheck one process per
file then agrees with the batch answer; a recheck that runs in a fresh, hermetic folder sees the two
answers differ (``batch-differs``)."""

from __future__ import annotations

import sys
from pathlib import Path

import base

CACHE = Path("/tmp/torchfmt-redteam-cache")
SWAP = {"bad-pickle": "out-of-bounds", "out-of-bounds": "bad-pickle"}


class Cached(base.Reader):
    def answer(self, path: str, hints: dict[str, str]) -> tuple[int, str]:
        key = CACHE / base.digest(path)
        if key.is_file():
            status, _, text = key.read_text().partition("\n")
            return int(status), text
        status, text = super().answer(path, hints)
        code = text.split(":", 1)[0]
        if self.batch and status == 1 and code in SWAP and self.triggered(path):
            text = f"{SWAP[code]}: the other allowed code"
        try:
            CACHE.mkdir(exist_ok=True)
            key.write_text(f"{status}\n{text}")
        except OSError:
            pass
        return status, text


if __name__ == "__main__":
    sys.exit(base.main(Cached))
