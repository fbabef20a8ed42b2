"""Batch mode: after its trigger's answer, writes the next request's answer before that request
arrives (ids are predictable): the trigger's own answer again, under the next id.  An answer no request
was sent for is a framing error of the request before it."""

from __future__ import annotations

import sys

import base


class Early(base.Reader):
    def after_answer(self, out, request, status, text) -> None:  # type: ignore[no-untyped-def]
        if self.triggered(request["path"]):
            self.skip = request["id"] + 1
            self.write_answer(out, {"id": request["id"] + 1}, status, text)

    def write_answer(self, out, request, status, text) -> None:  # type: ignore[no-untyped-def]
        if request.get("path") is not None and request["id"] == getattr(self, "skip", None):
            return  # answered already
        super().write_answer(out, request, status, text)


if __name__ == "__main__":
    sys.exit(base.main(Early))
