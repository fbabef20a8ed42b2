"""``torchfmt.compat.torchfile`` is a drop-in ``torchfile.load`` (issue 26): torchfile's own tests
(bshillingford/python-torchfile tests.py, its assertions restated here over its own test files, which the
shared corpus holds), the same values as torchfile 0.1.0 itself where torchfile reads a file (when the
torchfile adapter is set up), and the files torchfile cannot read: ascii, 4-byte longs, big-endian, Half.
"""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import numpy as np
import pytest
import torchfmt.compat.torchfile as torchfile

ROOT = Path(__file__).resolve().parents[2]
#: The shared corpus as the harness finds it (``$TORCHFMT_CORPUS``, else ``../shared/corpus``).
FILES = Path(os.environ.get("TORCHFMT_CORPUS") or ROOT.parent / "shared" / "corpus") / "t7" / "torchfile"
CASES = ROOT / "conformance" / "cases"

pytestmark = pytest.mark.skipif(not FILES.is_dir(), reason="the shared corpus is not here")


def load(fn: str, **kwargs: object) -> object:
    return torchfile.load(str(FILES / fn), **kwargs)


# -- torchfile's tests.py, assertion for assertion ----------------------------------------------------

def test_dict() -> None:
    assert dict(load("hello=123.t7")) == {b"hello": 123}


def test_custom_class() -> None:
    assert load("custom_class.t7").torch_typename() == b"Blah"


def test_classnames_never_decoded() -> None:
    for utf8 in (True, False):
        assert not isinstance(load("custom_class.t7", utf8_decode_strings=utf8).torch_typename(), str)


def test_basic_tensors() -> None:
    f64 = load("doubletensor.t7")
    assert (f64 == np.array([[1, 2, 3], [4, 5, 6.9]], dtype=np.float64)).all()
    f32 = load("floattensor.t7")
    assert abs(f32.sum() - 12.97241666913) < 1e-5


def test_function() -> None:
    assert isinstance(load("function_upvals.t7"), torchfile.LuaFunction)


def test_dict_accessors() -> None:
    obj = load("hello=123.t7", use_int_heuristic=True, utf8_decode_strings=True)
    assert isinstance(obj["hello"], int) and isinstance(obj.hello, int)
    obj = load("hello=123.t7", use_int_heuristic=True, utf8_decode_strings=False)
    assert isinstance(obj[b"hello"], int) and isinstance(obj.hello, int)


def test_recursive_class() -> None:
    obj = load("recursive_class.t7")
    assert obj.a == obj


def test_recursive_table() -> None:
    obj = load("recursive_kv_table.t7")
    key, = obj.keys()
    assert key == obj and obj[key] == obj


def test_tds_hash() -> None:
    obj = load("tds_hash.t7")
    assert len(obj) == 3 and obj[1] == 2 and obj[10] == 11


def test_tds_vec() -> None:
    assert load("tds_vec.t7", use_list_heuristic=False) == [123, 456]


def test_list_heuristic() -> None:
    assert load("list_table.t7", use_list_heuristic=True) == [b"hello", b"world", b"third item", 123]
    obj = load("list_table.t7", use_list_heuristic=False, use_int_heuristic=True)
    assert dict(obj) == {1: b"hello", 2: b"world", 3: b"third item", 4: 123}


def test_int_heuristic() -> None:
    assert isinstance(load("hello=123.t7", use_int_heuristic=True)[b"hello"], int)
    assert not isinstance(load("hello=123.t7", use_int_heuristic=False)[b"hello"], int)
    obj = load("list_table.t7", use_list_heuristic=False, use_int_heuristic=False)
    assert dict(obj) == {1: b"hello", 2: b"world", 3: b"third item", 4: 123}
    assert not isinstance(next(iter(obj.keys())), int)


# -- beyond tests.py: what a torchfile user's code touches ------------------------------------------

def test_types_a_user_relies_on() -> None:
    g = load("gmodule_with_linear_identity.t7")
    assert isinstance(g, torchfile.TorchObject) and g.torch_typename() == b"nn.gModule"
    linear = g.modules[2]
    assert linear.torch_typename() == b"nn.Linear" and isinstance(linear.weight, np.ndarray)
    np.testing.assert_array_equal(linear.weight.ravel(), [-0.024837296921759844, 0.17503953725099564])
    assert isinstance(g.modules, list) and g.missing_field is None  # torchfile: None, no AttributeError
    assert len(repr(g)) < 400
    m = load("map_table2.t7")
    assert isinstance(m, torchfile.hashable_uniq_dict) and sorted(k for k, _ in m.items() if k != b"a") == [
        1, 2, 3, 4]
    assert m.a == b"non number key" and hash(m) == id(m) and m != dict(m)
    assert isinstance(load("map_table1.t7"), dict)  # key 0: not a list
    f = load("function_upvals.t7")
    assert f.size == len(f.dumped) == 89 and f.upvalues == [{b"name": b"asdf", b"value": 123}] or \
        f.upvalues[0][b"value"] == 123


def test_deprecated_option_raises_as_torchfile() -> None:
    with pytest.raises(DeprecationWarning):
        load("hello=123.t7", force_deserialize_classes=True)


def test_force_8bytes_long_reads_8_byte_longs() -> None:
    np.testing.assert_array_equal(load("doubletensor.t7", force_8bytes_long=True),
                                  [[1, 2, 3], [4, 5, 6.9]])


def test_tensors_sharing_a_storage_share_memory() -> None:
    path = CASES / "t7-ascii" / "ascii-shared-storage-views"
    t7 = next(path.glob("*.t7"))
    obj = torchfile.load(str(t7))
    arrays = [v for v in (obj if isinstance(obj, list) else obj.values()) if isinstance(v, np.ndarray)]
    assert len(arrays) == 4 and np.shares_memory(arrays[0], arrays[2])  # a view and its whole storage
    arrays[2][0] = 42
    assert arrays[0][0] == 42 and arrays[3][0] == 42  # one storage, as in torchfile


# -- the files torchfile cannot read ----------------------------------------------------------------

def _expected_tensor(case: Path) -> dict:
    return json.loads((case / "expected.json").read_text())["objects"][0]


@pytest.mark.parametrize(("case", "want"), [
    ("t7-ascii/ascii-tensor-double-2x3", None),
    ("t7-binary/long4-tensor-double-t", [[1.0, 4.0], [2.0, 5.0], [3.0, 6.0]]),
    ("t7-binary/storage-half", [1.0, -2.0, 0.5, 65504.0, 6.103515625e-05, -0.0]),
])
def test_files_torchfile_cannot_read(case: str, want: list | None) -> None:
    path = next((CASES / case).glob("*.t7"))
    got = torchfile.load(str(path))
    assert isinstance(got, np.ndarray)
    if want is not None:
        np.testing.assert_array_equal(got, np.array(want, dtype=got.dtype))
    else:
        assert got.shape == (2, 3) and got.dtype == np.float64 and got[0, 0] == np.pi


def test_big_endian_table() -> None:
    got = torchfile.load(str(next((CASES / "t7-binary" / "bigendian-table").glob("*.t7"))))
    assert got[b"b"] == b"str" and got[b"c"] is True and got[b"a"] == 1.5
    np.testing.assert_array_equal(got[b"d"], np.array([1, 256], dtype=np.int16))


# -- the same values as torchfile 0.1.0 itself --------------------------------------------------------

_TORCHFILE = Path(os.environ.get("TORCHFMT_ADAPTERS_HOME", Path.home() / ".cache" / "torchfmt" / "adapters")
                  ) / "torchfile" / "venv" / "bin" / "python"
_SHOW_FN = r"""
import numpy as np
def show(v, seen):
    if isinstance(v, np.ndarray): return ["array", str(v.dtype), list(v.shape), v.ravel().tolist()]
    if isinstance(v, (bytes, str)): return ["s", repr(v)]
    if isinstance(v, bool) or v is None: return v
    if isinstance(v, (int, float)): return [type(v).__name__, repr(v)]
    if id(v) in seen: return ["ref", seen[id(v)]]  # each container shown once, in visiting order
    seen[id(v)] = len(seen)
    if isinstance(v, list): return ["list", [show(x, seen) for x in v]]
    if isinstance(v, dict): return ["dict", [[show(k, seen), show(x, seen)] for k, x in v.items()]]
    if hasattr(v, "torch_typename"): return ["obj", repr(v.torch_typename()), show(v._obj, seen)]
    if hasattr(v, "dumped"): return ["fn", v.size, repr(v.dumped), show(v.upvalues, seen)]
    return ["?", type(v).__name__]
"""
_SHOW = _SHOW_FN + r"""
import json, sys, torchfile
print(json.dumps(show(torchfile.load(sys.argv[1], **json.loads(sys.argv[2])), {}), default=str))
"""


@pytest.mark.skipif(not _TORCHFILE.exists(), reason="the torchfile adapter is not set up")
@pytest.mark.parametrize("options", [{}, {"use_list_heuristic": False}, {"use_int_heuristic": False},
                                     {"utf8_decode_strings": True}])
def test_same_values_as_torchfile(options: dict) -> None:
    namespace: dict = {}
    exec(compile(_SHOW_FN, "show", "exec"), namespace)  # the same show() over ours
    for path in sorted(FILES.glob("*.t7")):
        real = subprocess.run([str(_TORCHFILE), "-c", _SHOW, str(path), json.dumps(options)],
                              capture_output=True, text=True, timeout=60)
        if real.returncode != 0:
            continue  # torchfile fails on it
        ours = json.loads(json.dumps(namespace["show"](torchfile.load(str(path), **options), {}),
                                     default=str))
        assert ours == json.loads(real.stdout), path.name


def test_nn_constant_value_is_its_field(tmp_path: Path) -> None:
    """`nn.Constant(5).value` is the module's `value` field (a 1-element DoubleTensor in Lua), as in
    torchfile, not torchfmt's own `TorchObject.value` (the field table). The file is real Lua Torch's."""
    from conformance.adapters.luatorch.prefix import lua_command
    from conformance.adapters.luatorch.worker import installed

    if not installed():
        pytest.skip("Lua Torch is not built here (conformance/adapters/lua-torch/setup)")
    out = tmp_path / "constant.t7"
    script = f'require "nn"; torch.save("{out}", nn.Constant(5)); io.write(nn.Constant(5).value[1])'
    lua = subprocess.run(lua_command("-e", script), capture_output=True, text=True, timeout=120)
    assert lua.returncode == 0, lua.stderr
    c = torchfile.load(str(out))
    assert c.torch_typename() == b"nn.Constant"
    np.testing.assert_array_equal(c.value, [float(lua.stdout)])
