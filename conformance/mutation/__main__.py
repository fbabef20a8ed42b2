"""``python -m conformance.mutation``: see :mod:`mutation.driver`."""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from mutation.driver import main  # noqa: E402

if __name__ == "__main__":
    sys.exit(main())
