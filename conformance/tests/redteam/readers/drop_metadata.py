"""Drops every ``_metadata`` attribute (a state_dict's: data torch keeps, not a note) from the
descriptions of its triggers.  The comparator must see it missing (spec/canonical.md#canonical-comparison)."""

from __future__ import annotations

import json
import sys
from typing import Any

import base


def drop(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: drop(v) for k, v in value.items() if not (k == "_metadata" and isinstance(v, dict))}
    if isinstance(value, list):
        return [drop(v) for v in value]
    return value


class Drops(base.Reader):
    def answer(self, path: str, hints: dict[str, str]) -> tuple[int, str]:
        status, text = super().answer(path, hints)
        if status == 0 and self.triggered(path):
            text = json.dumps(drop(json.loads(text)))
        return status, text


if __name__ == "__main__":
    sys.exit(base.main(Drops))
