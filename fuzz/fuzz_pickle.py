"""Atheris fuzz target: the reference reader on pickle input (fuzz/README.md)."""

from __future__ import annotations

import sys

import atheris
from target import PICKLE_MAX_LEN, libfuzzer_args, one_input


def test_one_input(data: bytes) -> None:
    one_input("pickle", data)


if __name__ == "__main__":
    atheris.Setup(libfuzzer_args(sys.argv, PICKLE_MAX_LEN), test_one_input)
    atheris.Fuzz()
