"""The real writers' files the adversarial cases start from.

``.pt`` bases are written here by the installed torch (writing runs nothing from a file); the random
``.data/serialization_id`` record torch adds is set to a fixed value so that regenerating the cases
gives the same bytes.  ``.t7`` bases are Lua Torch files of ``../shared/corpus/t7/lua-torch``, cited
through their committed copy under ``conformance/cases/t7-*`` when one holds the same bytes.
"""

from __future__ import annotations

import io
import os
from functools import cache
from pathlib import Path

import yaml

from . import rawzip
from .record import CASES, ROOT, Source

LUA_TORCH = "Lua Torch7 @814ea4a (LuaJIT 2.1)"
FIXED_SERIALIZATION_ID = "0" * 40


def corpus_root() -> Path:
    env = os.environ.get("TORCHFMT_CORPUS")
    return Path(env) if env else (ROOT.parent / "shared" / "corpus").resolve()


def _torch_version() -> str:
    import torch

    return f"torch {torch.__version__}"


def _fixed_id(data: bytes) -> list[rawzip.Member]:
    out = rawzip.members(data)
    for m in out:
        if m.name.endswith(".data/serialization_id"):
            m.data = FIXED_SERIALIZATION_ID.encode()
    return out


STATE_DICT_CALL = (
    "torch.save({'weight': torch.arange(6, dtype=torch.float32).reshape(2, 3), "
    "'bias': torch.tensor([0.5, -1.0])}, f%s)"
)


def _state_dict():  # noqa: ANN202 - a torch object
    import torch

    return {"weight": torch.arange(6, dtype=torch.float32).reshape(2, 3), "bias": torch.tensor([0.5, -1.0])}


@cache
def torch_zip_members() -> tuple[tuple[rawzip.Member, ...], Source]:
    """The members of a zip ``.pt`` that torch wrote for a two-tensor dict, and its source record."""
    import torch

    buf = io.BytesIO()
    torch.save(_state_dict(), buf)
    members = _fixed_id(buf.getvalue())
    source = Source(
        buf.getvalue(),
        f"a file written by {STATE_DICT_CALL % ''} (not committed; serialization_id fixed)",
        _torch_version(),
    )
    return tuple(members), source


def zip_members() -> list[rawzip.Member]:
    """Fresh copies of the torch-written members (callers edit them)."""
    members, _ = torch_zip_members()
    return [rawzip.Member(m.name, m.data) for m in members]


def zip_source() -> Source:
    return torch_zip_members()[1]


@cache
def torch_legacy() -> Source:
    """A legacy (non-zip) ``.pt`` stream that torch wrote for the same dict."""
    import torch

    buf = io.BytesIO()
    torch.save(_state_dict(), buf, _use_new_zipfile_serialization=False)
    return Source(
        buf.getvalue(),
        "a file written by "
        + (STATE_DICT_CALL % ", _use_new_zipfile_serialization=False")
        + " (not committed)",
        _torch_version(),
    )


@cache
def torch_module(legacy: bool) -> Source:
    """A whole ``nn.Linear(3, 2)`` (``torch.manual_seed(0)``) saved by torch, legacy or zip (its
    serialization_id fixed)."""
    import torch

    torch.manual_seed(0)
    buf = io.BytesIO()
    kw = {"_use_new_zipfile_serialization": False} if legacy else {}
    torch.save(torch.nn.Linear(3, 2), buf, **kw)
    data = buf.getvalue() if legacy else rawzip.build(_fixed_id(buf.getvalue()))
    call = "torch.manual_seed(0); torch.save(torch.nn.Linear(3, 2), f%s)" % (
        ", _use_new_zipfile_serialization=False" if legacy else "")
    return Source(data, f"a file written by {call} (not committed" + ("" if legacy else
                  "; serialization_id fixed, members re-laid by rawzip.build") + ")", _torch_version())


@cache
def torch_script() -> Source:
    """A TorchScript archive (torch.jit.save of a scripted module with a buffer)."""
    import torch

    class Scaled(torch.nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.register_buffer("scale", torch.tensor([2.0, 3.0]))

        def forward(self, x: torch.Tensor) -> torch.Tensor:
            return x * self.scale

    # TorchScript names the class by its module (``__torch__.<module>.Scaled`` in data.pkl and the code
    # records): the name this module had before the suite was the package ``conformance`` (issue 29), so
    # that the committed cases made from this archive stay byte for byte what this function writes
    Scaled.__module__ = "generators.adversarial.sources"
    buf = io.BytesIO()
    torch.jit.save(torch.jit.script(Scaled()), buf)
    # the .debug_pkl records name this file's path (the checkout's): left out, as torch.jit.load allows
    members = [m for m in _fixed_id(buf.getvalue()) if not m.name.endswith(".debug_pkl")]
    data = rawzip.build(members)
    return Source(
        data,
        "a file written by torch.jit.save(torch.jit.script(m), f) for a module holding a "
        "buffer and multiplying by it (not committed; serialization_id fixed, the .debug_pkl records, "
        "which name the generator's path, left out; members re-laid by rawzip.build)",
        _torch_version(),
    )


def _committed(fmt: str) -> dict[bytes, Path]:
    out = {}
    for yml in sorted((CASES / fmt).glob("*/case.yaml")):
        try:
            meta = yaml.safe_load(yml.read_text(encoding="utf-8"))
        except yaml.YAMLError:
            continue
        if isinstance(meta, dict) and meta.get("category") == "accept" and isinstance(meta.get("file"), str):
            p = yml.parent / meta["file"]
            if p.is_file():
                out[p.read_bytes()] = p
    return out


def t7(name: str) -> Source:
    """The Lua Torch corpus file ``name``, cited through its committed copy when one exists."""
    data = (corpus_root() / "t7" / "lua-torch" / name).read_bytes()
    for fmt in ("t7-binary", "t7-ascii"):
        path = _committed(fmt).get(data)
        if path is not None:
            return Source(data, path.relative_to(ROOT).as_posix(), LUA_TORCH)
    return Source(data, f"../shared/corpus/t7/lua-torch/{name}", LUA_TORCH)
