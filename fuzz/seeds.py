"""Build the seed corpora ``fuzz/corpus/<target>/`` from the committed conformance cases.

``python fuzz/seeds.py`` copies every committed case file of the target's format (accept, reject and
adversarial cases alike) and, for the pickle target, the ``data.pkl`` record of each readable zip case
and the object pickles of the legacy cases.  The corpora are generated, not committed.
"""

from __future__ import annotations

import hashlib
import io
import os
import pickletools
import shutil
import sys
import zipfile
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[1]
CASES = ROOT / "conformance" / "cases"
CORPUS = Path(__file__).resolve().parent / "corpus"
FORMATS = {"t7_binary": ("t7-binary",), "t7_ascii": ("t7-ascii",), "pt_zip": ("pt-zip", "pt-torchscript"),
           "pt_legacy": ("pt-legacy",), "pt_tar": (), "differential": ("pt-zip", "pt-legacy")}
#: Real files that are not ours to commit, read in place as seeds when the shared corpus is present.
SHARED_SEEDS = {"pt_tar": "pt/wild/tar_*.pt"}
MAX_SEED = 1 << 20


def shared_files(target: str) -> list[Path]:
    """Seeds from ../shared/corpus (or $TORCHFMT_CORPUS) for ``target``; none when it is absent."""
    root = Path(os.environ.get("TORCHFMT_CORPUS", ROOT.parent / "shared" / "corpus"))
    pattern = SHARED_SEEDS.get(target)
    return sorted(root.glob(pattern)) if pattern and root.is_dir() else []


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
        files = [p for fmt in FORMATS.get(target, ()) for p in case_files(fmt)] + shared_files(target)
        blobs = pickles() if target == "pickle" else [p.read_bytes() for p in files]
        for blob in blobs:
            (folder / hashlib.sha256(blob).hexdigest()[:16]).write_bytes(blob)
        counts[target] = len(list(folder.iterdir()))
    return counts


if __name__ == "__main__":
    print(build())
    sys.exit(0)
