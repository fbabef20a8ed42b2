"""On its trigger, writes one number no description may hold, in place of the first tensor's
``storage_offset``: ``--number huge`` (a 5000-digit integer: Python's parser refuses it unless asked),
``inf`` (``1e999``, infinity once parsed), or, in batch mode, ``float-id`` (the answer's ``id`` as
``N.0``).  Each must fail the trigger, and pytest and ``--report-json`` must agree."""

from __future__ import annotations

import sys

import base

NUMBER = "huge"
VALUES = {"huge": "9" * 5000, "inf": "1e999"}


class Numbers(base.Reader):
    def answer(self, path: str, hints: dict[str, str]) -> tuple[int, str]:
        status, text = super().answer(path, hints)
        if status == 0 and NUMBER in VALUES and self.triggered(path):
            text = text.replace('"storage_offset": 0', f'"storage_offset": {VALUES[NUMBER]}', 1)
        return status, text

    def line(self, request, status, text) -> str:  # type: ignore[no-untyped-def]
        out = super().line(request, status, text)
        if NUMBER == "float-id" and self.triggered(request["path"]):
            out = out.replace(f'{{"id": {request["id"]},', f'{{"id": {request["id"]}.0,', 1)
        return out


if __name__ == "__main__":
    if sys.argv[1:2] == ["--number"]:
        NUMBER = sys.argv[2]
        del sys.argv[1:3]
    sys.exit(base.main(Numbers))
