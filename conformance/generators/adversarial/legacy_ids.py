"""The legacy stream's persistent ids and storage-key list at their edges (spec/pt-legacy.md
#pt-legacy-persistent-id, #pt-legacy-storage-keys): a storage type that is no global, keys that are no
key, a key list that is no list, a storage view inside its storage (the form torch 0.1-0.3 wrote) and a
pickled module's persistent id whose class is an allowed global.

Each file is torch's own legacy stream (its magic, protocol-version and sys_info pickles) with the object
pickle, the key list and the storages after it replaced (``wrap.in_legacy``).
"""

from __future__ import annotations

import pickle

from . import assemble as a
from . import sources, wrap
from .rebuild_semantics import F32, G
from .record import AdvCase

GEN = "legacy_ids.py"
LEGACY = ["legacy-stream", "pickle-persistent-id", "pickle-reduce", "dtype-float32"]
PID = ["pt-legacy.md#pt-legacy-persistent-id"]
KEYS = ["pt-legacy.md#pt-legacy-storage-keys"]


def _pid(stype: bytes, key: bytes = b"", view: bytes = pickle.NONE) -> bytes:
    """``('storage', stype, key, 'cpu', 3, view)`` and BINPERSID (key default '0')."""
    return a.tuple_(a.binunicode("storage"), stype, key or a.binunicode("0"), a.binunicode("cpu"),
                    a.integer(3), view) + pickle.BINPERSID


def _doc(*items: tuple[str, bytes]) -> bytes:
    return a.program(a.dict_(*((a.binunicode(k), v) for k, v in items)))


def _x(pid: bytes, size: int = 3) -> bytes:
    """``{'x': tensor}`` of ``size`` float32 elements of the storage ``pid`` names."""
    return _doc(("x", a.rebuild_tensor(pid, 0, (size,), (1,))))


def _keys(items: bytes) -> bytes:
    """A key list pickle of its own (``wrap.in_legacy`` writes a list of str keys)."""
    return a.program(items)


def legacy_id_cases() -> list[AdvCase]:
    src = sources.torch_legacy()
    out: list[AdvCase] = []
    storage = wrap.storage_record(3, F32)

    def case(name: str, data: bytes, errors: list[str], spec: list[str], how: str, *,
             feats: tuple[str, ...] = (), why: str = "") -> None:
        adv = {"bad-reference": ["adv-bad-reference"], "unsafe-global": ["adv-unsafe-global"]}.get(
            errors[0], ["adv-type-confusion"]) if errors else []
        out.append(AdvCase(f"pt-legacy/adv-legacy-{name}", data, errors, [*LEGACY, *adv, *feats], spec, how,
                           src, GEN, category="reject" if errors else "accept", why_stricter=why))

    def with_keys(obj: bytes, key_pickle: bytes) -> bytes:
        data = src.data
        return data[: wrap.legacy_spans(data)[2][1]] + obj + key_pickle + storage

    case("pid-storage-type-str", wrap.in_legacy(_x(_pid(a.binunicode("FloatStorage"))), ["0"], storage),
         ["bad-reference"], PID,
         "the persistent id names its storage type by the str 'FloatStorage', not by the global "
         "torch.FloatStorage: torch asks the type for its dtype and fails")
    case("key-list-none", with_keys(_x(_pid(G("torch", "FloatStorage"))), _keys(pickle.NONE)),
         ["bad-value"], KEYS,
         "the storage-key list pickle is None, not a list: torch iterates it and fails")
    case("key-list-holds-list",
         with_keys(_x(_pid(G("torch", "FloatStorage"))),
                   _keys(a.list_(a.binunicode("0"), a.list_(a.binunicode("0"))))),
         ["bad-reference"], KEYS,
         "the storage-key list is ['0', ['0']]: its second key is a list, which names no storage (torch "
         "looks it up and fails: a list is unhashable)")
    view_of = _pid(G("torch", "FloatStorage"),
                   view=a.tuple_(a.list_(a.binunicode("0v")), a.integer(0), a.integer(2)))
    case("view-key-list", wrap.in_legacy(_x(view_of, 2), ["0"], storage), ["bad-reference"], PID,
         "the persistent id's view metadata is (['0v'], 0, 2): the view key is a list, which names no "
         "storage (torch looks it up and fails: a list is unhashable)")
    view = _pid(G("torch", "FloatStorage"), view=a.tuple_(a.binunicode("0v"), a.integer(1), a.integer(2)))
    case("view-inside-storage", wrap.in_legacy(_x(view, 2), ["0"], storage), [], PID,
         "the persistent id names the view ('0v', 1, 2) of its 3-element storage '0' (the view form torch "
         "0.1-0.3 wrote); the tensor holds the view's 2 elements, the storage's last two",
         feats=("partial-view",))
    module = a.tuple_(a.binunicode("module"), G("collections", "OrderedDict"), a.binunicode(""),
                      a.binunicode("")) + pickle.BINPERSID
    case("module-id-allowed-class",
         wrap.in_legacy(_doc(("m", module + pickle.EMPTY_TUPLE + pickle.REDUCE),
                             ("x", a.rebuild_tensor(_pid(G("torch", "FloatStorage")), 0, (3,), (1,)))),
                        ["0"], storage),
         ["unsafe-global"], PID,
         "a pickled module's persistent id ('module', collections.OrderedDict, '', '') (no source saved, "
         "so none would be compared), whose class REDUCE then calls with no arguments: the class is "
         "allowed, the pickled module is not (torch's weights_only loader loads no persistent id but a "
         "storage's)", feats=("whole-module", "pickle-ordered-dict"))
    return out
