"""Zip lookup as torch does it: names equal up to ASCII case (torch's miniz lookup ignores case and picks
one of them), end records the file ends inside (a partial download)
(spec/pt-zip.md#pt-zip-container).

The members are torch's own (a two-tensor dict written by torch 2.13), laid out again by
:func:`rawzip.build` with one change; the unchanged layout loads in torch.
"""

from __future__ import annotations

from . import rawzip, sources
from .record import AdvCase

GEN = "zip_lookup.py"
ZIP = ["zip-archive", "dtype-float32", "adv-zip-layout"]
CONTAINER = ["pt-zip.md#pt-zip-container"]
CASE_WHY = (
    "torch 2.13 finds records with miniz's mz_zip_reader_locate_file, which compares raw name bytes "
    "ignoring ASCII case: of two names equal up to case it loads one (which one depends on the binary "
    "search over the sorted directory) while a case-sensitive reader loads the other, so the spec refuses "
    "the pair"
)


def _upper_copy(suffix: str, data: bytes | None = None) -> list[rawzip.Member]:
    """torch's members with a second member named like ``suffix`` in upper case, placed first."""
    ms = sources.zip_members()
    orig = next(m for m in ms if m.name.endswith(suffix))
    root, _, rest = orig.name.partition("/")
    twin = rawzip.Member(root + "/" + rest.upper(), orig.data if data is None else data)
    return [twin, *ms]


def zip_lookup_cases() -> list[AdvCase]:
    src = sources.zip_source()
    out: list[AdvCase] = []

    def case(name: str, data: bytes, errors: list[str], feats: list[str], how: str, why: str = "") -> None:
        out.append(AdvCase(f"pt-zip/adv-{name}", data, errors, ZIP + feats, CONTAINER, how, src, GEN,
                           why_stricter=why))

    case("zip-name-case-data-pkl", rawzip.build(_upper_copy("/data.pkl", b"\x80\x02K\x07.")),
         ["bad-container"], ["stricter-than-torch"],
         "a second member DATA.PKL (a pickle of the int 7) precedes data.pkl", CASE_WHY)
    case("zip-name-case-storage-key", rawzip.build(_upper_copy("/byteorder", b"big")),
         ["bad-container"], ["stricter-than-torch"],
         "a second member BYTEORDER holding 'big' precedes byteorder ('little')", CASE_WHY)
    ms = sources.zip_members()
    key = next(m for m in ms if "/data/" in m.name)
    root = key.name.split("/", 1)[0]
    ms.insert(0, rawzip.Member(root + "/DATA/" + key.name.rsplit("/", 1)[1], bytes(len(key.data))))
    case("zip-name-case-data-dir", rawzip.build(ms), ["bad-container"], ["stricter-than-torch"],
         f"a member DATA/{key.name.rsplit('/', 1)[1]} of zeros precedes the storage record "
         f"data/{key.name.rsplit('/', 1)[1]}", CASE_WHY)
    full = rawzip.build(sources.zip_members())
    for cut in (1, 10, 18, 21):
        case(f"zip-cut-{cut}-bytes", full[:-cut], ["truncated"], [],
             f"the file cut {cut} bytes short of its end (a partial download): the file ends inside the "
             "end-of-central-directory record")
    case("zip-comment-past-end", full[:-2] + b"\x40\x00", ["truncated"], ["stricter-than-torch"],
         "the end record announces a 64-byte comment that the file does not hold",
         "torch 2.13 (miniz) loads it, ignoring the comment length; the end record then disagrees with the "
         "file's size, which is what a cut file looks like, so the spec reports it truncated")
    ms = [m for m in sources.zip_members() if not m.name.endswith("/data.pkl")]
    ms.insert(0, rawzip.Member(ms[0].name.split("/", 1)[0] + "/model.json", b'{"protoVersion": "6"}'))
    out.append(AdvCase("pt-torchscript/adv-torchscript-model-json", rawzip.build(ms), ["bad-container"],
                       ZIP, ["torchscript.md#torchscript-model-json"],
                       "torch's members with data.pkl replaced by a model.json record (the torch < 1.4 "
                       "TorchScript layout)", src, GEN))
    return out
