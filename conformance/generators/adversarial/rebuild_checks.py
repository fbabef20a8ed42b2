"""Rebuild calls at the edges of their checks, each one step past or just inside an edge the reference's
rebuild functions enforce: the elements of an expanded view (spec/pickle.md#pickle-limits), a Parameter's
state and legacy BUILD states (spec/tensors.md#tensors-parameter, spec/tensors.md#tensors-legacy-build),
packed quantized storages and the quantization scheme (spec/tensors.md#tensors-quantized), sparse parts
and sizes (spec/tensors.md#tensors-sparse).

Each file is torch's zip container with ``data.pkl`` replaced by an assembled pickle of the calls torch
writes (:mod:`.rebuild_semantics`), one argument changed; torch 2.13 judges each.
"""

from __future__ import annotations

import pickle
import struct

from conformance.harness.facts import limit

from . import assemble as a
from .argument_checks import _float, _per_tensor, _qtensor
from .rebuild_semantics import G, doc, ints, pid, v2, zip_cases
from .record import AdvCase

GEN = "rebuild_checks.py"
T, F = pickle.NEWTRUE, pickle.NEWFALSE
#: VIEW_BYTES of spec/pickle.md#pickle-limits (the spec's table: harness/facts.py)
VIEW_BYTES = limit("VIEW_BYTES")


def rebuild_check_cases() -> list[AdvCase]:
    out: list[AdvCase] = []

    case = zip_cases(out, GEN)

    f3 = {"0": struct.pack("<3f", 1.0, -2.0, 0.0)}
    tensor = v2(pid("FloatStorage", "0", 3), 0, (3,), (1,))
    # -- an expanded view one element past the limit, over a storage of one element
    n = VIEW_BYTES // 4 + 1
    case("view-elements-one-past-limit", doc(("t", v2(pid("FloatStorage", "0", 1), 0, (n,), (0,)))),
         {"0": struct.pack("<f", 2.5)}, ["limit-exceeded"], ["dtype-float32", "expanded-stride0"],
         ["pickle.md#pickle-limits", "tensors.md#tensors-view-bounds"],
         f"a float32 tensor of size ({n},) and stride (0,) over a storage of one element: 2**26 + 1 "
         "elements, 2**28 + 4 bytes to hash, every one element 0",
         why=f"a view that addresses more elements than its storage holds may hold at most {VIEW_BYTES} "
         "(2**28) bytes of them: its description hashes every logical element, and torch's expand costs "
         "nothing")
    # -- Parameter states
    par = ["tensors.md#tensors-parameter", "tensors.md#tensors-python-state"]
    with_state = G("torch._utils", "_rebuild_parameter_with_state")
    case("parameter-state-3-tuple",
         doc(("p", a.call(with_state, tensor, T, a.ordered_dict(), a.tuple_(pickle.NONE, pickle.NONE,
                                                                             pickle.NONE)))),
         f3, ["bad-pickle"], ["dtype-float32", "parameter"], par,
         "_rebuild_parameter_with_state whose state is (None, None, None): torch's _set_obj_state takes a "
         "dict or a pair")
    param = G("torch.nn.parameter", "Parameter")
    case("parameter-called-with-data-only", doc(("p", a.call(param, tensor))), f3, [],
         ["dtype-float32", "parameter"], ["tensors.md#tensors-parameter", "pickle.md#pickle-globals"],
         "torch.nn.parameter.Parameter REDUCE'd with the data alone: requires_grad takes its default, True")
    case("parameter-called-without-grad", doc(("p", a.call(param, tensor, F))), f3, [],
         ["dtype-float32", "parameter"], ["tensors.md#tensors-parameter", "pickle.md#pickle-globals"],
         "torch.nn.parameter.Parameter REDUCE'd with the data and requires_grad False")
    # -- legacy BUILD states
    lb = ["tensors.md#tensors-legacy-build", "pt-legacy.md#pt-legacy-rebuild-tensor"]
    plain = a.call(G("torch", "FloatTensor"))
    case("build-4-tuple-float-offset",
         doc(("x", plain + a.tuple_(pid("FloatStorage", "0", 3), _float(0.0), ints((3,)), ints((1,)))
              + pickle.BUILD)),
         f3, ["bad-pickle"], ["dtype-float32", "adv-type-confusion"], lb,
         "torch.FloatTensor() then BUILD with (storage, 0.0, (3,), (1,)): the storage offset a float")
    variable = a.tuple_(tensor, pickle.NONE, a.ordered_dict(), T, F)
    case("parameter-build-variable-state",
         doc(("p", param + pickle.EMPTY_TUPLE + pickle.NEWOBJ + variable + pickle.BUILD)), f3, [],
         ["dtype-float32", "parameter", "requires-grad"], lb + ["tensors.md#tensors-parameter"],
         "torch.nn.parameter.Parameter() by NEWOBJ, then BUILD with a pre-0.4 Variable state (data, grad "
         "None, hooks, requires_grad True, volatile False): the Parameter takes the data and the flag")
    # -- packed quantized storages, the quantization scheme
    quant = ["tensors.md#tensors-quantized"]
    q4 = pid("QUInt4x2Storage", "0", 2)
    qf = ["quantized-per-tensor", "dtype-quint4x2"]
    two = {"0": bytes([0x21, 0x43])}
    per_tensor = _per_tensor(_float(0.5), a.integer(0))

    def packed(offset: bytes, size: int) -> bytes:
        return a.call(G("torch._utils", "_rebuild_qtensor"), q4, offset, ints((size,)), ints((1,)),
                      per_tensor, F, a.ordered_dict())

    case("quint4x2-negative-offset", doc(("q", packed(a.binint(-1), 2))), two, ["bad-length"], qf, quant,
         "a quint4x2 tensor of 2 elements (one byte) at storage offset -1 of a 2-byte storage")
    case("quint4x2-past-storage", doc(("q", packed(a.integer(0), 6))), two, ["out-of-bounds"], qf, quant,
         "a quint4x2 tensor of 6 elements (3 bytes, two elements a byte) over a 2-byte storage")
    case("quint4x2-fills-storage", doc(("q", packed(a.integer(0), 4))), two, [], qf, quant,
         "a quint4x2 tensor of 4 elements (2 bytes, two elements a byte) over a 2-byte storage")
    q8 = pid("QInt8Storage", "0", 2)
    case("qscheme-str",
         doc(("q", _qtensor(q8, (2,), a.tuple_(a.binunicode("per_tensor_affine"), _float(0.5),
                                                a.integer(1))))),
         {"0": bytes([1, 254])}, ["bad-value"], ["quantized-per-tensor", "dtype-qint8"], quant,
         "a qint8 tensor whose quantizer parameters name the scheme with the str 'per_tensor_affine', not "
         "the global torch.per_tensor_affine")
    # -- a meta tensor (no storage) of a negative size: torch's empty_strided refuses it
    meta = a.call(G("torch._utils", "_rebuild_meta_tensor_no_storage"), G("torch", "float32"), ints((-1,)),
                  ints((1,)), F)
    case("meta-negative-size", doc(("m", meta)), {}, ["bad-length"], ["meta-tensor"],
         ["tensors.md#tensors-meta", "tensors.md#tensors-view-bounds"],
         "_rebuild_meta_tensor_no_storage(float32, (-1,), (1,), False): a meta tensor of size -1, its "
         "stride non-negative")
    # -- sparse parts and sizes
    sp = ["tensors.md#tensors-sparse"]
    lay = a.call(G("torch.serialization", "_get_layout"), a.binunicode("torch.sparse_coo"))

    def coo(nnz_indices: int, nnz_values: int, size: int) -> bytes:
        return a.call(G("torch._utils", "_rebuild_sparse_tensor"), lay, a.tuple_(
            v2(pid("LongStorage", "0", nnz_indices), 0, (1, nnz_indices), (nnz_indices, 1)),
            v2(pid("FloatStorage", "1", nnz_values), 0, (nnz_values,), (1,)), ints((size,)), F))

    case("sparse-nnz-mismatch", doc(("s", coo(2, 3, 4))),
         {"0": struct.pack("<2q", 0, 2), "1": struct.pack("<3f", 1.5, 2.5, 3.5)}, ["bad-length"],
         ["sparse-coo"], sp, "a 1-d sparse COO tensor of size (4,) with indices for 2 values and 3 values")
    case("sparse-size-2-62", doc(("s", coo(1, 1, 1 << 62))),
         {"0": struct.pack("<q", 5), "1": struct.pack("<f", 1.5)}, [], ["sparse-coo", "adv-huge-count"], sp,
         "a 1-d sparse COO tensor of size (2**62,) with one value at index 5: its element count fits in 63 "
         "bits")
    return out
