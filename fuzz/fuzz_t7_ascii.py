"""Atheris fuzz target: the reference reader on t7 ascii input (fuzz/README.md)."""

from __future__ import annotations

import sys

import atheris
from target import libfuzzer_args, one_input


def test_one_input(data: bytes) -> None:
    one_input("t7_ascii", data)


if __name__ == "__main__":
    atheris.Setup(libfuzzer_args(sys.argv), test_one_input)
    atheris.Fuzz()
