"""``torchfmt inspect`` (spec/inspect.md): what a file is, its tree, weights_only readiness, where its bytes
go.  Checkpoints are written by real torch 2.13 (or by real Lua Torch: the shared corpus); the figures are
checked against what torch itself says of the same objects (``nbytes``, ``untyped_storage().nbytes()``,
``get_unsafe_globals_in_checkpoint``, a ``weights_only=True`` load)."""

from __future__ import annotations

import bz2
import gzip
import io
import json
import lzma
import os
import re
import subprocess
import sys
from collections import OrderedDict
from pathlib import Path

import pytest
import t7_bytes as t
from torchfmt import open_document
from torchfmt.cli import main
from torchfmt.model import TorchObject
from torchfmt.pickle.globals import runs_code
from torchfmt.t7.encodings import Hints
from torchfmt.tools.inspect import INSPECT_VERSION, human_bytes, inspect, render

from conformance.harness.cases import committed_cases
from conformance.harness.runner import CANARY, canaries_touched, canary_marks

torch = pytest.importorskip("torch")

ROOT = Path(__file__).resolve().parents[2]
CASES = ROOT / "conformance" / "cases"
CORPUS = Path(os.environ.get("TORCHFMT_CORPUS", ROOT.parent / "shared" / "corpus"))
LUA = CORPUS / "t7" / "lua-torch"


#: The suite's gadget cases (spec/pickle.md#pickle-no-execution), by name.
GADGETS = {c.id.split("/")[1]: c for c in committed_cases() if "/adv-gadget-" in c.id}


def run_json(path: Path, *args: str, capsys: pytest.CaptureFixture[str]) -> tuple[dict, int, str]:
    status = main(["inspect", str(path), "--json", *args])
    out = capsys.readouterr()
    return json.loads(out.out), status, out.err


@pytest.mark.spec("inspect.md#inspect-unreachable", "inspect.md#inspect-json", "inspect.md#inspect-cli")
def test_view_of_a_million_element_storage(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """The issue's figure: a 5-element view of a 1,000,000-element float32 storage saved by torch.save
    keeps 3,999,980 bytes nothing can reach."""
    base = torch.arange(1_000_000, dtype=torch.float32)
    view = base[10:15]
    torch.save(view, tmp_path / "view.pt")
    report, status, err = run_json(tmp_path / "view.pt", capsys=capsys)
    assert status == 0 and err == ""
    b = report["bytes"]
    assert b["unreachable_bytes"] == view.untyped_storage().nbytes() - view.nbytes == 3_999_980
    (s,) = b["storages"]
    assert s["bytes"] == 4_000_000 and s["reachable_bytes"] == 20 and s["views"] == 1
    size = (tmp_path / "view.pt").stat().st_size
    assert b["storage_bytes"] + b["other_bytes"] == report["file_bytes"] == size
    # two views of one storage: their spans are joined, the gap between them is unreachable
    torch.save({"a": base[:10], "b": base[100:110], "c": base[5:20]}, tmp_path / "two.pt")
    report, _, _ = run_json(tmp_path / "two.pt", capsys=capsys)
    assert report["bytes"]["unreachable_bytes"] == 4_000_000 - 4 * (20 + 10)


@pytest.mark.spec("inspect.md#inspect-bytes")
def test_bytes_per_key_and_duplicates(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    w = torch.randn(100, 100)
    torch.save({"a": w, "b": w.clone(), "same": w, "small": torch.ones(3)}, tmp_path / "d.pt")
    report, _, _ = run_json(tmp_path / "d.pt", capsys=capsys)
    b = report["bytes"]
    top = {k["key"]: k["bytes"] for k in b["top_level"]}
    # "same" is the storage "a" already counted: its bytes are the first key's
    assert top == {"a": w.nbytes, "b": w.nbytes, "same": 0, "small": 12}
    assert b["duplicate_bytes"] == w.nbytes
    (group,) = b["duplicates"]
    assert sorted(p[0] for p in group["paths"]) == ["a", "b"]


@pytest.mark.spec("inspect.md#inspect-roles", "inspect.md#inspect-bytes")
def test_trainer_checkpoint_roles(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    m = torch.nn.Sequential(torch.nn.Linear(8, 4), torch.nn.BatchNorm1d(4))
    opt = torch.optim.Adam(m.parameters())
    m(torch.randn(3, 8)).sum().backward()
    opt.step()
    ema = {k: v.clone() + 1 for k, v in m.state_dict().items()}
    torch.save({"model": m.state_dict(), "optimizer": opt.state_dict(), "model_ema": ema, "epoch": 7},
               tmp_path / "ckpt.pt")
    report, _, _ = run_json(tmp_path / "ckpt.pt", capsys=capsys)
    roles = {r["role"]: r for r in report["bytes"]["roles"]}
    sd = m.state_dict()
    moments = sum(v.nbytes for st in opt.state_dict()["state"].values() for v in st.values())
    assert roles["optimizer state"]["bytes"] == moments
    assert roles["EMA copy"]["bytes"] == sum(v.nbytes for v in ema.values())
    assert roles["weights"]["bytes"] == sum(v.nbytes for k, v in sd.items() if k.endswith(("weight", "bias")))
    assert roles["running statistics"]["bytes"] == sum(v.nbytes for k, v in sd.items() if "running" in k
                                                       or "num_batches" in k)
    keys = {k["key"]: k for k in report["bytes"]["top_level"]}
    assert keys["optimizer"]["role"] == "optimizer state" and keys["model_ema"]["role"] == "EMA copy"
    assert keys["model"]["role"] is None


@pytest.mark.spec("inspect.md#inspect-readiness", "inspect.md#inspect-tree")
def test_whole_model_readiness(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """torch.save(model): every global weights_only refuses, listed at once, as torch's own scanner lists
    them; the add_safe_globals line printed makes torch 2.13 load the file with weights_only=True."""
    model = torch.nn.Sequential(torch.nn.Linear(4, 3), torch.nn.ReLU(), torch.nn.Linear(3, 2))
    path = tmp_path / "model.pt"
    torch.save(model, path)
    report, status, _ = run_json(path, "--strict-status", capsys=capsys)
    assert status == 1 and report["error"]["code"] == "unsafe-global"  # dump's refusal; shown read inert
    assert report["status"] == "read"
    r = report["readiness"]
    refused = [e["global"] for e in r["refused"]]
    assert {"torch.nn.modules.container.Sequential", "torch.nn.modules.linear.Linear"} <= set(refused)
    assert sorted(refused) == sorted(torch.serialization.get_unsafe_globals_in_checkpoint(str(path)))
    assert not r["ready"] and all(e["runs_code"] is None for e in r["refused"])
    with pytest.raises(Exception, match="weights_only"):
        torch.load(path, weights_only=True)
    try:
        exec(r["add_safe_globals"], {"torch": torch})  # the user's line, as printed
        loaded = torch.load(path, weights_only=True)
    finally:
        torch.serialization.clear_safe_globals()
    assert torch.equal(loaded[0].weight, model[0].weight)
    # the tree: modules as opaque classes, parameters under their state_dict names, nothing imported
    (root,) = report["tree"]
    assert root["class"] == "torch.nn.modules.container.Sequential"
    first = next(c for c in root["children"] if c["key"] == "0")
    weight = next(c for c in first["children"] if c["key"] == "weight")
    assert weight == {"key": "weight", "type": "tensor", "dtype": "float32", "shape": [3, 4], "device": "cpu",
                      "parameter": True, "requires_grad": True}
    text = render(report)
    assert "torch.serialization.add_safe_globals([" in text and "torch.nn.modules.linear.Linear" in text


@pytest.mark.spec("inspect.md#inspect-readiness")
def test_plain_state_dict_is_ready(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    torch.save(OrderedDict(w=torch.ones(2), n=torch.tensor(3)), tmp_path / "sd.pt")
    report, _, _ = run_json(tmp_path / "sd.pt", capsys=capsys)
    assert report["readiness"]["ready"] and report["readiness"]["refused"] == []
    assert torch.serialization.get_unsafe_globals_in_checkpoint(str(tmp_path / "sd.pt")) == []


@pytest.mark.spec("inspect.md#inspect-readiness")
@pytest.mark.parametrize("case", sorted(GADGETS))
def test_gadgets_are_named_as_running_code(case: str) -> None:
    """Each gadget case of the suite: inspect reads it (inert: its canaries are neither created nor
    touched) and names a global known to run code, which the add_safe_globals line leaves out."""
    marks = canary_marks([CANARY, *GADGETS[case].canaries])
    report, status = inspect(str(GADGETS[case].path), strict_status=True)
    assert not canaries_touched(marks)
    assert status == 1  # dump refuses every gadget; the report still shows what an inert reading reads
    if report["status"] != "read":  # refused for its pickle's shape (bad-opcode ...) before any global
        assert report["status"] == "malformed"
        return
    assert report["error"]["code"] == "unsafe-global"
    refused = report["readiness"]["refused"]
    assert any(e["runs_code"] for e in refused), refused
    line = report["readiness"]["add_safe_globals"] or ""
    assert not any(e["global"] in line for e in refused if e["runs_code"])


def test_runs_code_table() -> None:
    assert runs_code("os", "system") and runs_code("posix", "system") and runs_code("builtins", "eval")
    assert runs_code("__builtin__", "eval")  # the Python 2 name, renamed as the machine renames it
    assert runs_code("torch.nn.modules.linear", "Linear") is None
    assert runs_code("torch.serialization", "os.system")  # an attribute chain reaching os
    assert runs_code("mypackage.code", "Model") is None  # a module named like one is not that module


@pytest.mark.spec("inspect.md#inspect-not-checkpoint", "inspect.md#inspect-cli")
@pytest.mark.parametrize("case,expect", [
    ("adv-not-git-lfs-pointer", r"git LFS pointer to a file of"),
    ("adv-not-html-doctype-lower-case", r"HTML page titled '404 Not Found'"),
    ("adv-not-html-after-whitespace", r"HTML page"),
    ("adv-not-s3-xml-error", r"XML.*AccessDenied"),
    ("adv-not-xml-error-body", r"NoSuchKey"),
    ("adv-not-json-error-body", r"JSON.*Repository Not Found"),
    ("adv-not-entry-not-found", r"Entry not found"),
    ("adv-not-numpy-npy", r"numpy .npy file: a float32 array of shape"),
    ("adv-not-safetensors", r"safetensors file.*1 tensors"),
    ("adv-not-gzip-of-checkpoint", r"gzip stream holding a zip file"),
    ("adv-not-plain-zip", r"zip archive that is not torch's, holding"),
])
def test_suite_non_checkpoints(case: str, expect: str, capsys: pytest.CaptureFixture[str]) -> None:
    (path,) = CASES.glob(f"*/{case}/data.*")
    report, status, err = run_json(path, capsys=capsys)
    assert status == 1 and report["status"] == "not-a-checkpoint"
    assert re.search(expect, report["what"]["summary"]), report["what"]["summary"]
    assert err.startswith("unknown-format: ") and err.count("\n") == 1


@pytest.mark.spec("inspect.md#inspect-not-checkpoint")
def test_wrapped_and_pointer_files(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    buf = io.BytesIO()
    torch.save({"w": torch.ones(4)}, buf)
    real = buf.getvalue()
    files = {
        "ckpt.pt.gz": (gzip.compress(real), r"gzip stream holding a zip file"),
        "ckpt.pt.bz2": (bz2.compress(real), r"bzip2 stream holding a zip file"),
        "ckpt.pt.xz": (lzma.compress(real), r"xz stream holding a zip file"),
        "ckpt.7z": (b"7z\xbc\xaf\x27\x1c\x00\x04" + bytes(40), r"7z archive"),
        "lfs.pt": (b"version https://git-lfs.github.com/spec/v1\noid sha256:" + b"ab" * 32 +
                   b"\nsize 2212336713\n", r"git LFS pointer to a file of 2\.2 GB \(2,212,336,713 bytes"),
    }
    for name, (data, expect) in files.items():
        (tmp_path / name).write_bytes(data)
        report, status, _ = run_json(tmp_path / name, capsys=capsys)
        assert status == 1 and re.search(expect, report["what"]["summary"]), (name, report["what"])
    report, _, _ = run_json(tmp_path / "lfs.pt", capsys=capsys)
    assert report["what"]["points_to_bytes"] == 2_212_336_713


@pytest.mark.spec("inspect.md#inspect-truncated")
def test_truncated_zip_download(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A torch.save zip cut in the middle of its third storage: the walk of local headers, with the sizes
    data.pkl declares, says how many bytes are missing at least (never more than are)."""
    torch.save({f"w{i}": torch.randn(100, 1000) for i in range(5)}, tmp_path / "full.pt")
    data = (tmp_path / "full.pt").read_bytes()
    cut = len(data) // 2
    (tmp_path / "cut.pt").write_bytes(data[:cut])
    report, status, err = run_json(tmp_path / "cut.pt", capsys=capsys)
    assert status == 1 and report["status"] == "truncated" and err.startswith("truncated: ")
    what = report["what"]
    missing = what["missing_bytes_at_least"]
    # the three storages not whole are 3 x 400,000 bytes; what is missing of them is at least that much
    # less what of the cut one is present, and at most everything after the cut
    assert 2 * 400_000 <= missing <= len(data) - cut
    assert "data/2" in what["where"] and "2 storage records after it" in what["where"]


@pytest.mark.spec("inspect.md#inspect-truncated")
def test_truncated_legacy_and_t7(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    torch.save({"w": torch.randn(1000)}, tmp_path / "leg.pt", _use_new_zipfile_serialization=False)
    data = (tmp_path / "leg.pt").read_bytes()
    (tmp_path / "cut.pt").write_bytes(data[:-1000])
    report, status, _ = run_json(tmp_path / "cut.pt", capsys=capsys)
    assert status == 1 and report["what"]["missing_bytes_at_least"] == 1000  # the last storage ends the file
    (path,) = CASES.glob("t7-binary/reject-truncated-in-storage-data/data.t7")
    report, status, _ = run_json(path, "--mode", "binary", capsys=capsys)
    assert report["status"] == "truncated" and report["what"]["missing_bytes_at_least"] == 24 - 10


@pytest.mark.spec("inspect.md#inspect-what")
def test_variants_and_eras(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    torch.save({"w": torch.ones(2)}, tmp_path / "z.pt")
    torch.save({"w": torch.ones(2)}, tmp_path / "l.pt", _use_new_zipfile_serialization=False)
    torch.jit.save(torch.jit.script(torch.nn.Linear(2, 2)), tmp_path / "ts.pt")
    z, _, _ = run_json(tmp_path / "z.pt", capsys=capsys)
    assert z["what"]["format"] == "pt-zip" and z["what"]["format_version"] == 1
    assert ".format_version" in z["what"]["summary"]
    legacy, _, _ = run_json(tmp_path / "l.pt", capsys=capsys)
    assert legacy["what"]["format"] == "pt-legacy" and "0.4-1.5" in legacy["what"]["era"]
    ts, status, _ = run_json(tmp_path / "ts.pt", capsys=capsys)
    assert status == 0 and ts["what"]["format"] == "pt-torchscript"
    assert ts["readiness"]["torchscript"] and not ts["readiness"]["ready"]
    with pytest.raises(RuntimeError, match="TorchScript"):
        torch.load(tmp_path / "ts.pt", weights_only=True)


@pytest.mark.spec("inspect.md#inspect-what")
def test_t7_long_size_choice() -> None:
    path = LUA / "storage_double.t7"
    if not path.exists():
        pytest.skip("the shared corpus is absent")
    report, status = inspect(str(path))
    choice = report["what"]["long_size_choice"]
    assert status == 0 and choice["long_size"] == 8 and choice["other_long_size"] == 4
    assert "4-byte longs" in report["what"]["summary"]


def _lua_fields(value: object, name: str) -> int:
    """Bytes of the storages of every tensor stored under ``name`` in the nn modules of a Lua model,
    each storage once: found by walking the model directly."""
    seen: dict[int, int] = {}
    stack = [value]
    visited: set[int] = set()
    while stack:
        v = stack.pop()
        if id(v) in visited:
            continue
        visited.add(id(v))
        if isinstance(v, TorchObject):
            stack.append(v.value)
        items = getattr(v, "items", None)
        if isinstance(items, list):
            for k, x in items:
                if k == name and getattr(x, "storage", None) is not None:
                    seen[id(x.storage)] = x.storage.numel * x.storage.dtype.itemsize
                stack.append(x)
    return sum(seen.values())


@pytest.mark.spec("inspect.md#inspect-roles", "inspect.md#inspect-bytes")
@pytest.mark.parametrize("name", ["nn_sequential_trained.t7", "nn_sequential_float.t7", "nn_batchnorm_v2.t7"])
def test_lua_training_buffers(name: str, capsys: pytest.CaptureFixture[str]) -> None:
    """Models real Lua Torch saved after training: gradWeight, output and gradInput buffers get their
    bytes, and the roles add up to every storage byte of the file."""
    path = LUA / name
    if not path.exists():
        pytest.skip("the shared corpus is absent")
    report, status, _ = run_json(path, capsys=capsys)
    assert status == 0
    b = report["bytes"]
    fields = {f["field"]: f["bytes"] for r in b["roles"] for f in r["fields"]}
    roles = {r["role"]: r["bytes"] for r in b["roles"]}
    doc = open_document(path)
    for field in ("gradWeight", "output", "gradInput"):
        expected = _lua_fields(doc.objects[0], field)
        if expected:
            assert fields.get(field, 0) > 0
    if name == "nn_sequential_trained.t7":
        assert fields["gradWeight"] == _lua_fields(doc.objects[0], "gradWeight") > 0
        assert roles["gradients"] > 0 and roles["activations and buffers"] > 0
    assert sum(roles.values()) == b["storage_bytes"]
    text = render(report)
    assert "gradWeight" in text and "activations and buffers" in text


def _seed_001_replica(rows: int, features: int, dataset_rows: int) -> bytes:
    """Seed 001's model, scaled: nn.Sequential of a Linear whose ``output`` is a rows x features view of
    a storage holding the whole data set (dataset_rows x features), as a batch narrowed from it is."""
    n = dataset_rows * features
    w = t.tensor(6, b"torch.FloatTensor", [2, features], [features, 1], 1,
                 t.storage(7, b"torch.FloatStorage", 2 * features, bytes(8 * features)))
    output = t.tensor(8, b"torch.FloatTensor", [rows, features], [features, 1], 1,
                      t.storage(9, b"torch.FloatStorage", n, bytes(4 * n)))
    linear = t.torch(4, b"nn.Linear", t.table(5, t.string(b"weight"), w, t.string(b"output"), output))
    modules = t.table(3, t.number(1), linear)
    return t.torch(1, b"nn.Sequential", t.table(2, t.string(b"modules"), modules))


@pytest.mark.spec("inspect.md#inspect-unreachable", "inspect.md#inspect-text")
def test_seed_001_output_buffer(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Seed 001 (a 2.2 GB .t7 of a 400,000-parameter model) scaled down 100 times: one module's ``output``,
    50 x 4000 floats, views a storage of the whole data set; inspect names that field and its bytes."""
    path = tmp_path / "model.t7"
    path.write_bytes(_seed_001_replica(50, 4000, 1375))
    report, status, _ = run_json(path, capsys=capsys)
    assert status == 0
    b = report["bytes"]
    big = max(b["storages"], key=lambda s: s["bytes"])
    assert big["field"] == "output" and big["role"] == "activations and buffers"
    assert big["reachable_bytes"] == 50 * 4000 * 4 and big["unreachable_bytes"] == (1375 - 50) * 4000 * 4
    assert b["unreachable_share"] > 0.9 and "modules.1.output is a view of 800,000 bytes" in b["headline"]
    text = render(report)
    assert re.search(r"modules\.1\.output: its float32 storage of 5,500,000 elements holds 22\.0 MB, "
                     r"its views reach 800\.0 kB", text)


@pytest.mark.spec("inspect.md#inspect-text", "inspect.md#inspect-tree")
def test_text_output(tmp_path: Path) -> None:
    """Plain text when stdout is no terminal (no escape codes), sizes in kB/MB/GB, --depth honoured."""
    torch.save({"a": {"b": {"c": {"d": torch.ones(300_000)}}}}, tmp_path / "deep.pt")
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
    out = subprocess.run([sys.executable, "-m", "torchfmt", "inspect", str(tmp_path / "deep.pt"),
                          "--depth", "2"], capture_output=True, text=True, env=env, check=True).stdout
    assert "\x1b[" not in out and "1.2 MB" in out
    assert "b: dict[1]  ... 1 entries" in out and "d:" not in out
    deeper = subprocess.run([sys.executable, "-m", "torchfmt", "inspect", str(tmp_path / "deep.pt"),
                             "--depth", "5"], capture_output=True, text=True, env=env, check=True).stdout
    assert "d: float32[300000]" in deeper
    assert [human_bytes(n) for n in (999, 1000, 2_200_000_000)] == ["999 B", "1.0 kB", "2.2 GB"]


@pytest.mark.spec("inspect.md#inspect-json")
def test_json_members(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """The members spec/inspect.md#inspect-json lists, and no others, at each level it lists."""
    torch.save({"w": torch.ones(2)}, tmp_path / "w.pt")
    report, _, _ = run_json(tmp_path / "w.pt", capsys=capsys)
    assert report["inspect_version"] == INSPECT_VERSION
    assert set(report) == {"inspect_version", "path", "file_bytes", "status", "what", "error", "tree",
                           "readiness", "bytes"}
    assert set(report["bytes"]) == {"headline", "advice", "file_bytes", "storage_bytes", "other_bytes",
                                    "estimated", "unreachable_bytes", "unreachable_share", "duplicate_bytes",
                                    "duplicates", "top_level", "roles", "slim", "storages"}
    assert [lv["level"] for lv in report["bytes"]["slim"]] == ["light", "medium", "heavy"]
    assert set(report["bytes"]["slim"][0]) == {"level", "storage_bytes_after", "saved_bytes", "dropped_bytes",
                                               "tie_equal", "trimmed_bytes", "widened_bytes"}
    assert set(report["bytes"]["storages"][0]) == {"id", "path", "dtype", "numel", "device", "bytes", "share",
                                                   "views", "tensors", "reachable_bytes", "unreachable_bytes",
                                                   "role", "field"}
    assert set(report["readiness"]) == {"ready", "torchscript", "container", "protocols", "opcodes",
                                        "refused", "add_safe_globals", "convert", "summary"}


@pytest.mark.spec("inspect.md#inspect-cli")
def test_missing_path(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["inspect", "/nonexistent/x.pt"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("unsupported: missing-input (no such file: ") and err.count("\n") == 1


def test_hints_reach_t7(tmp_path: Path) -> None:
    path = tmp_path / "x.t7"
    path.write_bytes(_seed_001_replica(1, 4, 2))
    report, status = inspect(str(path), Hints(mode="binary", long_size=8, byte_order="little"))
    assert status == 0 and report["what"]["long_size"] == 8


def _drawn(path: Path, option: str, suffix: str, labels: list[str],
           capsys: pytest.CaptureFixture[str]) -> None:
    """``inspect PATH OPTION FILE.suffix`` writes a PNG, or an SVG holding ``labels``."""
    out = path.with_name(f"drawn.{suffix}")
    assert main(["inspect", str(path), option, str(out)]) == 0
    capsys.readouterr()
    data = out.read_bytes()
    if suffix == "png":
        assert data.startswith(b"\x89PNG")
    else:
        text = data.decode()
        for label in labels:
            assert label in text, label


@pytest.mark.spec("inspect.md#inspect-plot")
@pytest.mark.parametrize("suffix", ["svg", "png"])
def test_plot(tmp_path: Path, suffix: str, capsys: pytest.CaptureFixture[str]) -> None:
    """--plot draws the bars of the report: one per field, the unreachable part named."""
    pytest.importorskip("matplotlib")
    base = torch.zeros(1_000_000)
    torch.save({"w": torch.ones(10, 10), "view": base[:5]}, tmp_path / "v.pt")
    _drawn(tmp_path / "v.pt", "--plot", suffix, ["<svg", "unreachable"], capsys)
    report, _, _ = run_json(tmp_path / "v.pt", capsys=capsys)
    from torchfmt.tools.plot import bars
    rows = bars(report["bytes"])
    assert rows[0][0] == "view  (other)" and rows[0][3] == 4_000_000 - 20
    assert rows[-1][0] == "everything but storage data"


@pytest.mark.spec("inspect.md#inspect-plot")
@pytest.mark.parametrize("suffix", ["svg", "png"])
def test_treemap(tmp_path: Path, suffix: str, capsys: pytest.CaptureFixture[str]) -> None:
    """--treemap lays every byte out as area: each tile's share of the map is its share of the file, tiles
    sit inside their group; seed 001's one giant output buffer is the labelled tile, the rest listed."""
    pytest.importorskip("matplotlib")
    pytest.importorskip("squarify")
    from torchfmt.tools.plot import HEIGHT, WIDTH, layout

    path = tmp_path / "model.t7"
    path.write_bytes(_seed_001_replica(50, 4000, 1375))
    _drawn(path, "--treemap", suffix, ["output", "activations and buffers", "too small to label",
                                       "weight  (weights)", "unreachable", "by top-level key"], capsys)
    report, _, _ = run_json(path, capsys=capsys)
    b = report["bytes"]
    for by in ("role", "key"):
        groups, tiles = layout(b, by)
        assert sum(x.bytes for x in tiles) == b["file_bytes"] == sum(g.bytes for g in groups)
        for x in tiles:
            assert x.dx * x.dy / (WIDTH * HEIGHT) == pytest.approx(x.bytes / b["file_bytes"], rel=1e-9)
            assert any(g.x - 1e-9 <= x.x and x.x + x.dx <= g.x + g.dx + 1e-9 and g.y - 1e-9 <= x.y
                       and x.y + x.dy <= g.y + g.dy + 1e-9 for g in groups)
    groups, tiles = layout(b)
    big = max(tiles, key=lambda x: x.bytes)
    assert (big.label, big.role) == ("output", "activations and buffers")
    assert big.unreachable == (1375 - 50) * 4000 * 4
    assert [g.label for g in groups][0] == "activations and buffers"
