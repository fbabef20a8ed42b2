"""Writing one generated case folder: the file and its ``case.yaml`` (the schema: conformance/README.md).

Shared by the generators that derive reject cases (rejects.py, adversarial/record.py), so that their
case.yaml files are dumped one way.
"""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import yaml


def write_case_folder(folder: Path, file: str, data: bytes, case: dict[str, Any]) -> None:
    """Replace ``folder`` with one holding ``file`` (the bytes ``data``) and ``case.yaml`` (``case``,
    keys in the order given)."""
    if folder.exists():
        shutil.rmtree(folder)
    folder.mkdir(parents=True)
    (folder / file).write_bytes(data)
    text = yaml.safe_dump(case, sort_keys=False, width=100, allow_unicode=True)
    (folder / "case.yaml").write_text(text, encoding="utf-8")
