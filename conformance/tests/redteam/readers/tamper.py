"""On its trigger (a generated case's file, never a committed one: the reader refuses to touch a file
under the suite's ``cases/``), answers as the reference does, then flips one byte of the file in place
and sets its times back: the same size and mtime, other bytes.  A side effect of the trigger: the harness
checks the copy it gave by content, in a sandbox and without one."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import base


class Tamper(base.Reader):
    def answer(self, path: str, hints: dict[str, str]) -> tuple[int, str]:
        result = super().answer(path, hints)
        real = Path(path).resolve()
        if self.triggered(path) and "cases" not in real.parts:
            st = os.stat(real)
            try:
                with open(real, "r+b") as f:
                    f.seek(st.st_size // 2)
                    byte = f.read(1)
                    f.seek(st.st_size // 2)
                    f.write(bytes([byte[0] ^ 0xFF]))
                os.utime(real, ns=(st.st_atime_ns, st.st_mtime_ns))
            except OSError:  # a file it may not open for writing: nothing to tamper with
                pass
        return result


if __name__ == "__main__":
    sys.exit(base.main(Tamper))
