"""The control: the reference reader as it is, in both modes; every case of the selection passes."""

import sys

import base

if __name__ == "__main__":
    sys.exit(base.main())
