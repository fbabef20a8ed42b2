"""``python -m conformance.mutation``: see :mod:`mutation.driver`."""

from __future__ import annotations

import sys

from conformance.mutation.driver import main

if __name__ == "__main__":
    sys.exit(main())
