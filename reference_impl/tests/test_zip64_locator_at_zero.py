"""The mutant ``pt/ziparchive.py:135:7:compare-boundary:ge->gt`` (``loc >= 0`` -> ``loc > 0`` in
``_directory``), a survivor of issue 27's independent sample, is equivalent: the two differ only for a
zip64 locator at byte 0 (its end record at byte 20), and such a file starts with the locator's
signature, never with a local header's (``PK`` 3 4), so detection (spec/canonical.md#canonical-detect)
never hands it to the zip reader: ``_directory`` is reached only through ``read_members`` of a file
:func:`torchfmt.detect.detect` called ``zip``.  Shown on the file itself, with and without the mutant."""

from __future__ import annotations

import struct
from pathlib import Path

import pytest
from torchfmt import describe
from torchfmt.detect import ZIP_LOCAL_MAGIC, detect
from torchfmt.errors import FormatError
from torchfmt.pt import ziparchive

ORIGINAL = "if loc >= 0 and bytes(buf[loc:loc + 4]) == ZIP64_LOCATOR_SIG:"
MUTANT = "if loc > 0 and bytes(buf[loc:loc + 4]) == ZIP64_LOCATOR_SIG:"
#: A zip64 locator at byte 0 (disk 0, end record at 0, 1 disk), then an end record of an empty archive.
LOCATOR_AT_ZERO = (struct.pack("<4sIQI", ziparchive.ZIP64_LOCATOR_SIG, 0, 0, 1)
                   + struct.pack("<4sHHHHIIH", b"PK\x05\x06", 0, 0, 0, 0, 0, 0, 0))


def refusal(path: Path) -> str:
    with pytest.raises(FormatError) as e:
        describe(str(path))
    return str(e.value)


def test_a_locator_at_byte_zero_is_never_a_zip(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    assert ziparchive._LOCATOR.size == 20 and len(LOCATOR_AT_ZERO) == 42
    assert not LOCATOR_AT_ZERO.startswith(ZIP_LOCAL_MAGIC) and detect(LOCATOR_AT_ZERO) != "zip"
    path = tmp_path / "locator-at-zero.pt"
    path.write_bytes(LOCATOR_AT_ZERO)
    original = refusal(path)
    source = Path(ziparchive.__file__).read_text(encoding="utf-8")
    assert source.count(ORIGINAL) == 1
    mutated: dict[str, object] = {"__name__": ziparchive.__name__, "__package__": ziparchive.__package__}
    exec(compile(source.replace(ORIGINAL, MUTANT), ziparchive.__file__, "exec"), mutated)
    for name in ("_directory", "read_members"):
        monkeypatch.setattr(ziparchive, name, mutated[name])
    assert refusal(path) == original
    # the zip reader itself tells them apart: the mutant is unreachable, not inert
    def members() -> str:
        try:
            return repr(ziparchive.read_members(LOCATOR_AT_ZERO))
        except FormatError as e:
            return str(e)

    by_mutant = members()
    monkeypatch.undo()
    assert members() != by_mutant
