"""The Python API as users of ``torch.load`` and ``safetensors.numpy.load_file`` guess it (README "Python
API"): values compared with what real torch loads, never with our own reader."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import torch
import torchfmt
from torchfmt.model import LuaTable, Tensor, TorchObject

CASES = Path(__file__).resolve().parents[2] / "conformance" / "cases"
STATE_DICT = CASES / "pt-zip" / "state-dict-mlp" / "data.pt"
LUA_MODEL = CASES / "t7-binary" / "nn-sequential-float" / "nn_sequential_float.t7"


def torch_values(path: Path) -> dict[str, np.ndarray]:
    return {k: v.numpy() for k, v in torch.load(path, weights_only=True).items()}


@pytest.mark.parametrize("case", ["state-dict-mlp", "storage-offset", "views-shared-storage",
                                  "transposed"])
def test_asarray_is_what_torch_loads(case: str) -> None:
    path = CASES / "pt-zip" / case / "data.pt"
    ours, theirs = torchfmt.load(path), torch.load(path, weights_only=True)
    pairs = list(ours.items()) if isinstance(ours, dict) else [("", ours)]
    found = 0
    for name, t in pairs:
        if isinstance(t, Tensor):
            expected = (theirs[name] if name else theirs).numpy()
            got = np.asarray(t)
            assert got.shape == expected.shape and got.dtype == expected.dtype
            np.testing.assert_array_equal(got, expected)
            found += 1
    assert found


def test_load_file_is_the_flat_state_dict_torch_loads() -> None:
    ours, theirs = torchfmt.load_file(STATE_DICT), torch_values(STATE_DICT)
    assert list(ours) == list(theirs)
    for name, values in theirs.items():
        np.testing.assert_array_equal(ours[name], values)


def test_nested_dicts_get_dotted_names(tmp_path: Path) -> None:
    path = tmp_path / "ckpt.pt"
    model = {"fc.weight": torch.arange(6.0).reshape(2, 3), "fc.bias": torch.zeros(2)}
    torch.save({"model": model, "step": 3, "ema": [torch.ones(1)]}, path)
    flat = torchfmt.load_file(path)
    assert sorted(flat) == ["ema.0", "model.fc.bias", "model.fc.weight"]
    np.testing.assert_array_equal(flat["model.fc.weight"], model["fc.weight"].numpy())


def test_arrays_map_the_file_read_only_and_copy_makes_them_writable() -> None:
    mapped = torchfmt.load_file(STATE_DICT)
    assert not any(a.flags.writeable for a in mapped.values())
    with pytest.raises(ValueError):
        mapped["0.weight"][0, 0] = 1.0
    copied = torchfmt.load_file(STATE_DICT, copy=True)
    copied["0.weight"][0, 0] = 123.0
    assert torchfmt.load_file(STATE_DICT)["0.weight"][0, 0] != 123.0


def test_mmap_false_survives_the_file_being_overwritten(tmp_path: Path) -> None:
    path = tmp_path / "data.pt"
    shutil.copy(STATE_DICT, path)
    arrays = torchfmt.load_file(path, mmap=False)
    path.write_bytes(b"\0" * path.stat().st_size)
    for name, values in torch_values(STATE_DICT).items():
        np.testing.assert_array_equal(arrays[name], values)


def test_dtype_str_and_tensor_repr_are_short() -> None:
    t = torchfmt.load(STATE_DICT)["0.weight"]
    assert str(t.dtype) == "float32" == str(torch.load(STATE_DICT, weights_only=True)["0.weight"].dtype)[6:]
    text = repr(t)
    assert text.startswith("Tensor(float32, shape=(4, 3), values=[") and text.endswith(", ...])")
    assert text.count(",") < 12


def test_lua_tables_and_objects_read_like_torchfile() -> None:
    model = torchfmt.load(LUA_MODEL)
    assert isinstance(model, TorchObject) and model.class_name == "nn.Sequential"
    assert isinstance(model.modules, LuaTable)
    first = model.modules[1]  # 1-based keys kept as they are
    assert first is model["modules"][1] and first.class_name == "nn.Linear"
    assert isinstance(first.weight, Tensor) and np.asarray(first.weight).ndim == 2
    assert 0 not in model.modules and len(model.modules) >= 2
    assert list(model.modules) == [float(i) for i in range(1, len(model.modules) + 1)]
    with pytest.raises(AttributeError):
        _ = model.no_such_field
    flat = torchfmt.load_file(LUA_MODEL)
    np.testing.assert_array_equal(flat["modules.1.weight"], np.asarray(first.weight))


def test_errors_carry_code_and_offset(tmp_path: Path) -> None:
    path = tmp_path / "bad.pt"
    path.write_bytes(STATE_DICT.read_bytes()[:100])
    with pytest.raises(torchfmt.FormatError) as e:
        torchfmt.load(path)
    assert e.value.code == "truncated" and isinstance(e.value.offset, int)


def cli(*args: str, stdin: bytes | None = None) -> subprocess.CompletedProcess[bytes]:
    return subprocess.run([sys.executable, "-m", "torchfmt", *args], input=stdin, capture_output=True,
                          timeout=120)


def test_cli_version_help_and_stdin() -> None:
    version = cli("--version")
    assert version.returncode == 0 and version.stdout.decode().startswith("torchfmt ")
    helptext = cli("--help").stdout.decode()
    assert "dump" in helptext and "exit status" in helptext and "unsafe-global" in helptext
    from_path, from_stdin = cli("dump", str(STATE_DICT)), cli("dump", "-", stdin=STATE_DICT.read_bytes())
    assert from_stdin.returncode == 0 and json.loads(from_stdin.stdout) == json.loads(from_path.stdout)
    bad = cli("dump", "-", stdin=b"<!doctype html><html>")
    assert bad.returncode == 1 and len(bad.stderr.decode().splitlines()) == 1


# -- sources, keywords, streams (issues 26 and 27) ----------------------------------------------------

def _equal(ours: dict, theirs: dict) -> None:
    assert list(ours) == list(theirs)
    for k, v in theirs.items():
        np.testing.assert_array_equal(np.asarray(ours[k]), v.numpy())


def test_load_takes_paths_bytes_and_file_objects() -> None:
    theirs = torch.load(STATE_DICT, weights_only=True)
    with open(STATE_DICT, "rb") as f:
        _equal(torchfmt.load(f), theirs)
    _equal(torchfmt.load(STATE_DICT.read_bytes()), theirs)
    _equal(torchfmt.load(memoryview(STATE_DICT.read_bytes())), theirs)
    _equal(torchfmt.load(str(STATE_DICT)), theirs)
    for name, values in torchfmt.load_file(STATE_DICT.read_bytes()).items():
        np.testing.assert_array_equal(values, theirs[name].numpy())
    with pytest.raises(TypeError, match="path, bytes or a binary file object"):
        torchfmt.load(12)


@pytest.mark.spec("pt-legacy.md#pt-legacy-stream")
def test_several_legacy_saves_into_one_stream_load_in_order(tmp_path: Path) -> None:
    """torch.save twice into one file object (legacy format): torch.load gives each in turn; so does
    torchfmt.load, a gzip.open object included (torch 2.13's answers, taken here)."""
    import gzip
    import io

    objs = [{"a": torch.arange(3.0)}, {"b": torch.ones(2), "c": torch.zeros(4, dtype=torch.int64)}]
    buf = io.BytesIO()
    for o in objs:
        torch.save(o, buf, _use_new_zipfile_serialization=False)
    gz = tmp_path / "s.pt.gz"
    with gzip.open(gz, "wb") as g:
        g.write(buf.getvalue())
    for opener in (lambda: io.BytesIO(buf.getvalue()), lambda: gzip.open(gz, "rb")):
        with opener() as theirs_f, opener() as ours_f:
            for _ in objs:
                theirs = torch.load(theirs_f, weights_only=True)
                _equal(torchfmt.load(ours_f), theirs)
                assert ours_f.tell() == theirs_f.tell()
            with pytest.raises(Exception):  # noqa: B017 - torch's own error: nothing left
                torch.load(theirs_f, weights_only=True)
            with pytest.raises(torchfmt.FormatError, match="truncated"):
                torchfmt.load(ours_f)


@pytest.mark.spec("pt-zip.md#pt-zip-stream")
def test_a_zip_stream_gives_its_first_object_as_torch_does() -> None:
    """torch.save (zip) twice into one stream: torch.load's first call gives the first object (when the two
    archives have the same layout) and its second fails; torchfmt.load gives the first one too."""
    import io

    buf = io.BytesIO()
    torch.save({"a": torch.arange(3.0)}, buf)
    torch.save({"b": torch.ones(3)}, buf)
    theirs = torch.load(io.BytesIO(buf.getvalue()), weights_only=True)
    _equal(torchfmt.load(io.BytesIO(buf.getvalue())), theirs)


def test_every_reading_option_has_a_keyword(tmp_path: Path) -> None:
    """load_file(..., inert=True) was a TypeError; the .t7 hints are keywords too."""
    path = tmp_path / "m.pt"
    torch.save({"m": torch.nn.Linear(2, 2)}, path)
    with pytest.raises(torchfmt.FormatError) as e:
        torchfmt.load_file(path)
    assert "inert=True" in str(e.value) and "--inert" not in str(e.value)  # the keyword, not the flag
    assert isinstance(torchfmt.load_file(path, inert=True), dict)
    t7 = CASES / "t7-binary" / "nn-sequential-float" / "nn_sequential_float.t7"
    assert torchfmt.load(t7, mode="binary", long_size=8, byte_order="little").class_name == "nn.Sequential"
    import inspect

    for f in (torchfmt.load, torchfmt.load_file, torchfmt.describe):
        assert {"inert", "mode", "long_size", "byte_order"} <= set(inspect.signature(f).parameters), f


def test_the_repr_of_a_lua_model_is_bounded() -> None:
    """Was one 7,400-character line."""
    model = torchfmt.load(LUA_MODEL)
    text = repr(model)
    assert text.startswith("TorchObject('nn.Sequential'") and len(text) < 300 and "\n" not in text
    assert len(repr(model.modules)) < 300
