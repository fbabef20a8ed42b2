"""Build the seed corpora ``fuzz/corpus/<target>/`` from the committed conformance cases.

``python fuzz/seeds.py`` copies every committed case file of the target's format (accept, reject and
adversarial cases alike) and, for the pickle target, the ``data.pkl`` record of each readable zip case
and the object pickles of the legacy cases.  The corpora are generated, not committed.
"""

from __future__ import annotations

import hashlib
import io
import pickletools
import shutil
import sys
import zipfile
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[1]
CASES = ROOT / "conformance" / "cases"
CORPUS = Path(__file__).resolve().parent / "corpus"
FORMATS = {"t7_binary": "t7-binary", "t7_ascii": "t7-ascii", "pt_zip": "pt-zip", "pt_legacy": "pt-legacy"}
MAX_SEED = 1 << 20


def case_files(fmt: str) -> list[Path]:
    out = []
    for yml in sorted((CASES / fmt).glob("*/case.yaml")):
        try:
            meta = yaml.safe_load(yml.read_text(encoding="utf-8"))
        except yaml.YAMLError:
            continue
        path = yml.parent / str((meta or {}).get("file", ""))
        if path.is_file() and path.stat().st_size <= MAX_SEED:
            out.append(path)
    return out


def pickles() -> list[bytes]:
    """Pickle programs: zip cases' data.pkl records and legacy cases' five pickles (listed with
    pickletools.genops, never run)."""
    out = []
    for path in case_files("pt-zip"):
        try:
            with zipfile.ZipFile(path) as z:
                out += [z.read(i) for i in z.infolist()
                        if i.filename.endswith("data.pkl") and i.file_size <= MAX_SEED]
        except (zipfile.BadZipFile, OSError, ValueError, NotImplementedError, EOFError, RuntimeError):
            continue
    for path in case_files("pt-legacy"):
        data = path.read_bytes()
        f = io.BytesIO(data)
        for _ in range(5):
            start = f.tell()
            try:
                for _op in pickletools.genops(f):
                    pass
            except Exception:  # noqa: BLE001 - a malformed case: keep what was read
                break
            out.append(data[start:f.tell()])
    return out


def build() -> dict[str, int]:
    counts = {}
    for target in (*FORMATS, "pickle"):
        folder = CORPUS / target
        shutil.rmtree(folder, ignore_errors=True)
        folder.mkdir(parents=True)
        blobs = pickles() if target == "pickle" else [p.read_bytes() for p in case_files(FORMATS[target])]
        for blob in blobs:
            (folder / hashlib.sha256(blob).hexdigest()[:16]).write_bytes(blob)
        counts[target] = len(list(folder.iterdir()))
    return counts


if __name__ == "__main__":
    print(build())
    sys.exit(0)
