"""Run torchfile 0.1.0 on one .t7 file and print the canonical description (spec/canonical.md).

Run by run.py with the adapter's own venv python (torchfile, numpy). Exit 0 with the JSON; 1 with
``torchfile-error: <exception class>: <message>``; 2 with ``unsupported: <feature>``; 3 on a bug of this
driver. No check of our own: what torchfile returns is what is described.
"""

from __future__ import annotations

import hashlib
import json
import math
import sys
import traceback

import numpy as np
import torchfile

EMPTY = hashlib.sha256(b"").hexdigest()
DTYPES = {"uint8": "uint8", "int8": "int8", "int16": "int16", "int32": "int32", "int64": "int64",
          "float32": "float32", "float64": "float64"}


class Decline(Exception):
    pass


def _declining(name: str):
    def handler(reader, version):
        raise Decline(f"{name}: torchfile returns it as a host numpy array, without its device")
    return handler


for _name in list(torchfile.type_handlers):
    if _name.startswith(b"torch.Cuda") and not _name.startswith(b"torch.CudaHalf"):
        torchfile.type_handlers[_name] = _declining(_name.decode())


def fmt_float(x: float) -> str:
    if math.isnan(x):
        return "nan"
    if math.isinf(x):
        return "inf" if x > 0 else "-inf"
    return repr(float(x))


class Describer:
    def __init__(self) -> None:
        self.counts: dict[int, int] = {}
        self.keep: list = []
        self.ids: dict[int, str] = {}
        self.storage_ids: dict[int, str] = {}
        self.storages: dict[str, dict] = {}

    def count(self, v) -> None:
        stack = [v]
        while stack:
            x = stack.pop()
            if not isinstance(x, (dict, list, torchfile.TorchObject, torchfile.LuaFunction, np.ndarray)):
                continue
            self.keep.append(x)
            n = self.counts[id(x)] = self.counts.get(id(x), 0) + 1
            if n > 1:
                continue
            if isinstance(x, dict):
                stack.extend(k for kv in x.items() for k in kv)
            elif isinstance(x, list):
                stack.extend(x)
            elif isinstance(x, np.ndarray):
                continue
            elif isinstance(x, torchfile.TorchObject):
                stack.append(x._obj)
            else:
                stack.append(x.upvalues)

    def emit(self, v):
        shareable = isinstance(v, (dict, list, torchfile.TorchObject, torchfile.LuaFunction)) or (
            isinstance(v, np.ndarray) and v.base is not None)  # a tensor (a storage is shared by its id)
        if shareable and self.counts.get(id(v), 0) > 1:
            if id(v) in self.ids:
                return {"type": "ref", "id": self.ids[id(v)]}
            self.ids[id(v)] = f"o{len(self.ids)}"
            out = self.value(v)
            out["id"] = self.ids[id(v)]
            return out
        return self.value(v)

    def value(self, v):
        if v is None:
            return {"type": "none"}
        if isinstance(v, bool):
            return {"type": "bool", "value": v}
        if isinstance(v, (int, float)):  # every Lua number (the int heuristic is off)
            return {"type": "float", "value": fmt_float(float(v))}
        if isinstance(v, bytes):
            try:
                return {"type": "str", "value": v.decode("utf-8")}
            except UnicodeDecodeError:
                return {"type": "bytes", "hex": v.hex()}
        if isinstance(v, torchfile.hashable_uniq_dict) or isinstance(v, dict):
            return {"type": "table", "items": [[self.emit(k), self.emit(x)] for k, x in v.items()]}
        if isinstance(v, list):  # tds.Vec (the list heuristic is off)
            return {"type": "list", "items": [self.emit(x) for x in v]}
        if isinstance(v, torchfile.TorchObject):
            name = v._typename.decode("utf-8", "replace") if isinstance(v._typename, bytes) else v._typename
            version = v._version_number
            return {"type": "torch_object", "class": name, "version": str(version) if version else None,
                    "value": self.emit(v._obj)}
        if isinstance(v, torchfile.LuaFunction):
            raise Decline("functions: torchfile reads type codes 6, 7 and 8 alike and keeps no kind")
        if isinstance(v, np.ndarray):
            return self.array(v)
        raise TypeError(f"no canonical form for {type(v).__name__}")

    def storage_id(self, s: np.ndarray) -> str:
        sid = self.storage_ids.get(id(s))
        if sid is None:
            self.keep.append(s)
            sid = self.storage_ids[id(s)] = f"s{len(self.storage_ids)}"
            little = s.astype(s.dtype.newbyteorder("<")).tobytes()
            self.storages[sid] = {"dtype": DTYPES[s.dtype.name], "numel": int(s.size), "device": "cpu",
                                  "sha256": hashlib.sha256(little).hexdigest()}
        return sid

    def array(self, a: np.ndarray):
        base = a  # the storage array: through numpy views and as_strided's DummyArray
        while True:
            b = base.base
            if isinstance(b, np.ndarray):
                base = b
            elif b is not None and isinstance(getattr(b, "base", None), np.ndarray):
                base = b.base
            else:
                break
        if a.base is None:  # a storage, or the bare empty array torchfile gives for a tensor with no storage
            if a.size == 0:
                raise Decline("empty tensors and storages: torchfile returns one bare empty array for both")
            return {"type": "storage", "storage": self.storage_id(a)}
        width = a.dtype.itemsize
        offset = (a.__array_interface__["data"][0] - base.__array_interface__["data"][0]) // width
        logical = np.ascontiguousarray(a).astype(a.dtype.newbyteorder("<"))
        return {"type": "tensor", "dtype": DTYPES[a.dtype.name], "shape": list(a.shape),
                "stride": [s // width for s in a.strides], "storage_offset": int(offset),
                "storage": self.storage_id(base), "device": "cpu", "requires_grad": False,
                "sha256": hashlib.sha256(logical.tobytes()).hexdigest() if a.size else EMPTY}


def main(path: str) -> int:
    objects = []
    try:
        with open(path, "rb") as f:
            size = f.seek(0, 2)
            f.seek(0)
            reader = torchfile.T7Reader(f, use_list_heuristic=False, use_int_heuristic=False)
            while f.tell() < size:
                objects.append(reader.read_obj())
    except Decline as e:
        print(f"unsupported: {e}", file=sys.stderr)
        return 2
    except Exception as e:  # noqa: BLE001 - the reader's failure, whatever its kind
        text = " ".join(str(e).split())[:300]
        print(f"torchfile-error: {type(e).__name__}: {text}", file=sys.stderr)
        return 1
    sys.setrecursionlimit(100_000)  # for the description's walk only: torchfile read with the default
    try:
        d = Describer()
        for o in objects:
            d.count(o)
        out = [d.emit(o) for o in objects]
    except Decline as e:
        print(f"unsupported: {e}", file=sys.stderr)
        return 2
    except Exception:  # noqa: BLE001 - this driver's own bug
        print("adapter error: " + traceback.format_exc().strip().splitlines()[-1], file=sys.stderr)
        return 3
    sys.stdout.write(json.dumps({"description_version": 0, "format": "t7-binary", "objects": out,
                                 "storages": d.storages}))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
