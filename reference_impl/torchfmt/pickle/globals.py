"""The allowlist: every pickle global a reader may resolve, with its handler and argument list
(spec/pickle.md#pickle-globals).

A global is looked up here by ``(module, name)`` after the Python 2 renames in :data:`MODULE_ALIASES`.
``value`` globals (dtypes, layouts, qschemes, storage and tensor types) are pushed as inert
:class:`~torchfmt.model.Global` records.  ``callable`` globals may be applied by REDUCE (and NEWOBJ where
``newobj`` says so): the machine checks the argument tuple against ``params`` and then runs ``handler``,
a function of ours that builds a model record; nothing named by a file is ever imported or called.
``declined`` globals are known rebuild functions this reader does not support (exit status 2).
``scope`` says where an entry applies: ``torch`` everywhere, ``torchscript`` only in TorchScript
archives, ``inert`` only in inert mode.  Anything else is ``unsafe-global`` in strict mode.
"""

from __future__ import annotations

import collections
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from ..dtypes import BY_NAME, BY_STORAGE_CLASS, DTYPES, DType
from ..errors import FormatError, quote
from ..model import Global, KeyedObject, MetaTensor, OpaqueObject, SparseTensor, Storage, Tensor
from . import rebuild
from .call import Call, Handler

#: Module renames applied before lookup: Python 2 names (pickle's fix_imports) and torch's own move of
#: ``torch.tensor`` to ``torch._tensor`` (torch.serialization's load_module_mapping).
MODULE_ALIASES: dict[str, str] = {"__builtin__": "builtins", "copy_reg": "copyreg",
                                  "torch.tensor": "torch._tensor"}


@dataclass(frozen=True)
class Kind:
    """An argument type: a name for the spec and a predicate over machine values."""

    name: str
    test: Callable[[Any], bool]
    doc: str


def _is_global_in(names: tuple[str, ...]) -> Callable[[Any], bool]:
    return lambda v: isinstance(v, Global) and v.module == "torch" and v.name in names


KINDS: dict[str, Kind] = {k.name: k for k in (
    Kind("any", lambda v: True, "any value"),
    Kind("int", lambda v: type(v) is int, "int"),
    Kind("bool", lambda v: type(v) is bool, "bool"),
    Kind("number", lambda v: type(v) in (int, float), "int or float"),
    Kind("str", lambda v: type(v) is str, "str"),
    Kind("ints", rebuild.is_ints, "tuple or list of ints, or a torch.Size"),
    Kind("size_items", lambda v: rebuild.is_ints(v) or isinstance(v, (tuple, list)) and all(
        type(x) in (int, bool) for x in v), "tuple or list of ints or bools (as 0 and 1), or a torch.Size"),
    Kind("tuple", lambda v: type(v) is tuple, "tuple"),
    Kind("list", lambda v: type(v) is list, "list"),
    Kind("dict", lambda v: isinstance(v, dict), "dict or OrderedDict"),
    Kind("hooks", lambda v: v is None or isinstance(v, dict), "dict, OrderedDict or None (ignored)"),
    Kind("pairs", lambda v: isinstance(v, dict) or isinstance(v, (list, tuple)) and all(
        isinstance(p, (list, tuple)) and len(p) == 2 for p in v),
        "list or tuple of [key, value] pairs, dict or OrderedDict"),
    Kind("iterable", lambda v: isinstance(v, (list, tuple, set, frozenset)), "list, tuple, set or frozenset"),
    Kind("bytes_or_str", lambda v: isinstance(v, (bytes, str)), "bytes or str"),
    Kind("storage", lambda v: isinstance(v, Storage), "storage (from a persistent id)"),
    Kind("tensor", lambda v: isinstance(v, Tensor), "dense tensor"),
    Kind("param_data", lambda v: isinstance(v, (Tensor, MetaTensor, SparseTensor)),
         "dense, meta or sparse tensor"),
    Kind("global", lambda v: isinstance(v, Global), "global"),
    Kind("dtype", _is_global_in(tuple(BY_NAME)), "torch dtype global"),
    Kind("layout", _is_global_in(rebuild.LAYOUTS), "torch layout global"),
)}


@dataclass(frozen=True)
class Param:
    """One argument of an allowed callable: its torch name, :data:`KINDS` key, and whether it may be
    left out (only trailing parameters are optional)."""

    name: str
    kind: str
    optional: bool = False

    def __str__(self) -> str:
        return f"{self.name}: {self.kind}" + ("?" if self.optional else "")


@dataclass(frozen=True)
class Allowed:
    """One allowlist entry."""

    module: str
    name: str
    role: str  # "value" | "callable" | "declined"
    doc: str
    params: tuple[Param, ...] = ()
    handler: Handler | None = None
    newobj: bool = False
    scope: str = "torch"  # "torch" | "torchscript" | "inert"
    gone: str | None = None  # the torch version that no longer has it (older files still name it)

    @property
    def qualname(self) -> str:
        return f"{self.module}.{self.name}"

    def check_args(self, args: tuple[Any, ...], offset: int) -> None:
        """Reject (``bad-pickle``) an argument tuple that does not fit ``params``."""
        required = sum(not p.optional for p in self.params)
        if not required <= len(args) <= len(self.params):
            raise FormatError("bad-pickle", offset, f"{self.qualname} takes {self.signature()}, "
                                                    f"got {len(args)} arguments")
        for p, a in zip(self.params, args, strict=False):
            if not KINDS[p.kind].test(a):
                raise FormatError("bad-pickle", offset, f"{self.qualname}: argument {p.name} must be "
                                                        f"{KINDS[p.kind].doc}, not {type(a).__name__}")

    def signature(self) -> str:
        return "(" + ", ".join(str(p) for p in self.params) + ")"


def _p(spec: str) -> tuple[Param, ...]:
    """Parse ``"storage: storage, storage_offset: int, metadata: dict?"`` into params."""
    out = []
    for part in filter(None, (s.strip() for s in spec.split(","))):
        name, kind = (x.strip() for x in part.split(":"))
        out.append(Param(name, kind.rstrip("?"), kind.endswith("?")))
    return tuple(out)


# -- handlers for the builtins --------------------------------------------------------------------

def _ordered_dict(args: tuple[Any, ...], ctx: Call) -> collections.OrderedDict[Any, Any]:
    out: collections.OrderedDict[Any, Any] = collections.OrderedDict()
    items = args[0] if args else ()
    for k, v in items.items() if isinstance(items, dict) else items:
        set_item(out, k, v, ctx.offset)
    return out


def set_item(d: dict[Any, Any], k: Any, v: Any, offset: int) -> None:
    """``d[k] = v`` with an unhashable key rejected as ``bad-value`` (spec/pickle.md#pickle-stack)."""
    try:
        d[k] = v
    except TypeError:
        raise FormatError("bad-value", offset, f"unhashable dict key of type {type(k).__name__}") from None


def _set(kind: type) -> Handler:
    def make(args: tuple[Any, ...], ctx: Call) -> Any:
        try:
            return kind(args[0] if args else ())
        except TypeError:
            raise FormatError("bad-value", ctx.offset, "unhashable set item") from None
    return make


_LATIN1 = ("latin1", "latin-1")


def _encode(args: tuple[Any, ...], ctx: Call) -> bytes:
    """``_codecs.encode(text, "latin1")``: how protocols 0-2 pickle bytes."""
    text, encoding = args
    if encoding not in _LATIN1:
        raise FormatError("bad-value", ctx.offset, f"_codecs.encode with encoding {quote(encoding)}")
    try:
        return text.encode("latin-1")
    except UnicodeEncodeError:
        raise FormatError("bad-value", ctx.offset, "_codecs.encode text is not latin-1") from None


def _bytearray(args: tuple[Any, ...], ctx: Call) -> bytearray:
    """``bytearray()``, ``bytearray(bytes)`` or ``bytearray(text, "latin-1")`` (protocols < 3)."""
    if not args:
        return bytearray()
    if isinstance(args[0], bytes) and len(args) == 1:
        return bytearray(args[0])
    if isinstance(args[0], str) and len(args) == 2:
        if args[1] not in _LATIN1:  # a codec the file names: refused (spec/pickle.md#pickle-rebuild)
            raise FormatError("bad-value", ctx.offset, f"bytearray with encoding {quote(args[1])}")
        return bytearray(_encode(args, ctx))
    raise FormatError("bad-pickle", ctx.offset, "bytearray takes (bytes) or (str, 'latin-1')")


def _opaque(class_name: str) -> Handler:
    """``torch.Size``, ``torch.device``, ``complex``: objects with their arguments (spec/canonical.md)."""
    def make(args: tuple[Any, ...], ctx: Call) -> OpaqueObject:
        return OpaqueObject(class_name, list(args))
    return make


def _complex(args: tuple[Any, ...], ctx: Call) -> KeyedObject:
    """``complex(real, imag)``: args in the normal form ``[real, imag]`` as floats, as torch's value
    reduces; it hashes and compares as the number (spec/pickle.md#pickle-keys)."""
    try:
        value = complex(*args)  # ints and floats only (the ``number`` kind): a plain numeric operation
    except OverflowError:
        raise FormatError("bad-value", ctx.offset, "a complex part does not fit a double") from None
    return KeyedObject("builtins.complex", [value.real, value.imag], value)


def _size(args: tuple[Any, ...], ctx: Call) -> KeyedObject:
    """``torch.Size(sizes)``: args in the normal form ``[tuple of ints]`` (``torch.Size()`` is the empty
    size); it hashes and compares as that tuple, as torch.Size, a tuple subclass, does
    (spec/pickle.md#pickle-keys)."""
    sizes = tuple(int(x) for x in rebuild.ints(args[0])) if args else ()  # torch.Size([True]) is (1,)
    return KeyedObject("torch.Size", [sizes], sizes)


def _get_layout(args: tuple[Any, ...], ctx: Call) -> Global:
    """``torch.serialization._get_layout("torch.sparse_coo")`` -> the layout global."""
    (text,) = args
    name = text[len("torch."):] if text.startswith("torch.") else None
    if name not in rebuild.LAYOUTS:
        raise FormatError("bad-value", ctx.offset, f"unknown layout {quote(text)}")
    return Global("torch", name)


def _identity(args: tuple[Any, ...], ctx: Call) -> Any:
    return args[0]


def _tensor_from_id(args: tuple[Any, ...], ctx: Call) -> Any:
    """``torch.jit._pickle.build_tensor_from_id``: an int id stays an int, anything else is None."""
    return args[0] if type(args[0]) is int else None


def _reconstructor(args: tuple[Any, ...], ctx: Call) -> OpaqueObject:
    """Inert mode: ``copyreg._reconstructor(cls, base, state)`` (protocols 0-1 objects) is ``cls``."""
    cls = args[0]
    return OpaqueObject(f"{cls.module}.{cls.name}", [])


# -- the table ------------------------------------------------------------------------------------

def _value(module: str, name: str, doc: str) -> Allowed:
    return Allowed(module, name, "value", doc)


def _callable(qualname: str, params: str, handler: Handler, doc: str, newobj: bool = False,
              scope: str = "torch", gone: str | None = None) -> Allowed:
    module, _, name = qualname.rpartition(".")
    return Allowed(module, name, "callable", doc, _p(params), handler, newobj, scope, gone)


def _declined(qualname: str, params: str, doc: str) -> Allowed:
    module, _, name = qualname.rpartition(".")
    return Allowed(module, name, "declined", doc, _p(params), rebuild.declined(qualname))


_TENSOR_ARGS = "storage: storage, storage_offset: int, size: ints, stride: ints"

#: Storage type globals (persistent ids name one) and the dtype each holds; ``None`` is untyped (bytes).
STORAGE_TYPES: dict[tuple[str, str], DType | None] = {
    **{("torch", d.storage_class): d for d in DTYPES if d.storage_class},
    **{("torch.cuda", d.storage_class): d for d in DTYPES if d.storage_class and not d.quantized},
    ("torch.storage", "UntypedStorage"): None,  # torch's allowlist has no torch.UntypedStorage spelling
}

#: Legacy tensor classes (``torch.FloatTensor()`` before a BUILD): the stems torch has, on cpu and cuda.
LEGACY_TENSOR_STEMS = ("Double", "Float", "Half", "BFloat16", "Long", "Int", "Short", "Char", "Byte", "Bool")
TENSOR_TYPES: dict[tuple[str, str], tuple[DType, str]] = {
    (module, f"{stem}Tensor"): (BY_STORAGE_CLASS[f"{stem}Storage"], device)
    for module, device in (("torch", "cpu"), ("torch.cuda", "cuda")) for stem in LEGACY_TENSOR_STEMS
}

ALLOWED_LIST: tuple[Allowed, ...] = (
    # builtins and collections
    _callable("collections.OrderedDict", "items: pairs?", _ordered_dict,
              "an OrderedDict (BUILD may set attributes)"),
    _callable("builtins.set", "items: iterable?", _set(set), "a set"),
    _callable("builtins.frozenset", "items: iterable?", _set(frozenset), "a frozenset"),
    _callable("builtins.bytearray", "source: bytes_or_str?, encoding: str?", _bytearray, "a bytearray"),
    _callable("_codecs.encode", "text: str, encoding: str", _encode, "bytes in protocols 0-2 (latin-1 only)"),
    _callable("builtins.bytes", "", lambda args, ctx: b"", "empty bytes in protocols 0-2"),
    _callable("builtins.complex", "real: number?, imag: number?", _complex,
              "object builtins.complex(real, imag)"),
    # torch values that pickle by reduction
    _callable("torch.Size", "sizes: size_items?", _size, "object torch.Size(sizes)"),
    _callable("torch.device", "type: str, index: int?", rebuild.device,
              "object torch.device in the normal form [type] or [type, index]"),
    _callable("torch.serialization._get_layout", "name: str", _get_layout, "the layout global it names"),
    # torch._utils rebuild functions
    _callable("torch._utils._rebuild_tensor", _TENSOR_ARGS, rebuild.rebuild_tensor,
              "dense tensor (torch < 0.4)"),
    _callable("torch._utils._rebuild_tensor_v2",
              f"{_TENSOR_ARGS}, requires_grad: bool, backward_hooks: hooks, metadata: dict?",
              rebuild.rebuild_tensor_v2, "dense tensor; metadata may set conj/neg"),
    _callable("torch._utils._rebuild_tensor_v3",
              f"{_TENSOR_ARGS}, requires_grad: bool, backward_hooks: hooks, dtype: dtype, metadata: dict?",
              rebuild.rebuild_tensor_v3, "dense tensor of an untyped storage viewed as dtype"),
    _callable("torch._utils._rebuild_parameter",
              "data: param_data, requires_grad: bool, backward_hooks: hooks",
              rebuild.rebuild_parameter, "nn.Parameter"),
    _callable("torch._utils._rebuild_parameter_with_state",
              "data: param_data, requires_grad: bool, backward_hooks: hooks, state: any",
              rebuild.rebuild_parameter_with_state, "nn.Parameter with Python attributes"),
    _callable("torch._utils._rebuild_qtensor",
              f"{_TENSOR_ARGS}, quantizer_params: tuple, requires_grad: bool, backward_hooks: hooks",
              rebuild.rebuild_qtensor, "quantized tensor"),
    _callable("torch._utils._rebuild_sparse_tensor", "layout: layout, data: tuple",
              rebuild.rebuild_sparse_tensor, "sparse COO or compressed tensor"),
    _callable("torch._utils._rebuild_sparse_csr_tensor", "layout: layout, data: tuple",
              rebuild.rebuild_sparse_tensor, "sparse CSR tensor (torch 1.10-1.13)", gone="2.0"),
    _callable("torch._utils._rebuild_device_tensor_from_cpu_tensor",
              "data: tensor, dtype: dtype, device: str, requires_grad: bool",
              rebuild.rebuild_device_tensor_from_cpu_tensor, "tensor of a storage-less backend"),
    _callable("torch._utils._rebuild_meta_tensor_no_storage",
              "dtype: dtype, size: ints, stride: ints, requires_grad: bool", rebuild.rebuild_meta_tensor,
              "meta tensor (no storage)"),
    _declined("torch._utils._rebuild_nested_tensor", "buffer: tensor, sizes: tensor, strides: tensor, "
              "storage_offsets: tensor", "nested tensor (declined)"),
    _declined("torch._utils._rebuild_wrapper_subclass",
              "cls: global, dtype: dtype, size: ints, stride: ints, storage_offset: int, layout: layout, "
              "device: any, requires_grad: bool",
              "wrapper tensor subclass (declined)"),
    _declined("torch._utils._rebuild_device_tensor_from_numpy",
              "data: any, dtype: dtype, device: str, requires_grad: bool", "tensor from numpy (declined)"),
    _declined("torch._utils._rebuild_xla_tensor",
              "data: any, dtype: dtype, device: str, requires_grad: bool", "XLA tensor (declined)"),
    _callable("torch._tensor._rebuild_from_type_v2",
              "func: global, new_type: global, args: tuple, state: any",
              rebuild.rebuild_from_type, "tensor with Python attributes (func is looked up here too)"),
    _callable("torch._tensor._rebuild_from_type", "func: global, type: global, args: tuple, dict: any",
              rebuild.rebuild_from_type, "tensor with Python attributes (torch 1.7-1.8)"),
    _callable("torch.nn.parameter.Parameter", "data: param_data?, requires_grad: bool?", rebuild.parameter,
              "nn.Parameter; NEWOBJ with () before a legacy BUILD", newobj=True),
    # TorchScript archives (torch/jit/_pickle.py)
    *(_callable(f"torch.jit._pickle.{n}", "data: list", _identity, "the list itself", scope="torchscript")
      for n in ("build_intlist", "build_tensorlist", "build_doublelist", "build_boollist")),
    _callable("torch.jit._pickle.build_tensor_from_id", "data: any", _tensor_from_id,
              "an int id stays an int, else None", scope="torchscript"),
    _callable("torch.jit._pickle.restore_type_tag", "value: any, type_str: str", _identity,
              "the value itself", scope="torchscript"),
    # inert mode only
    _callable("copyreg._reconstructor", "cls: global, base: global, state: any", _reconstructor,
              "an opaque instance of cls (protocols 0-1)", scope="inert"),
    # values
    _value("torch", "Tensor", "the tensor type (a _rebuild_from_type_v2 argument)"),
    *(_value("torch", d.name, "dtype") for d in DTYPES),
    *(_value("torch", q, "qscheme") for q in rebuild.QSCHEMES),
    *(_value(m, n, "storage type (persistent ids)") for m, n in STORAGE_TYPES),
    *(Allowed(m, n, "callable", "legacy tensor type; () makes an empty tensor for BUILD",
              handler=rebuild.tensor_class(d, dev)) for (m, n), (d, dev) in TENSOR_TYPES.items()),
)

ALLOWED: dict[tuple[str, str], Allowed] = {(a.module, a.name): a for a in ALLOWED_LIST}


#: Entries of the allowlist (scope ``torch``) that torch 2.13's ``torch.load(weights_only=True)`` does not
#: allow: the reader reads them as ``torch.load`` (``weights_only=False``) does, and ``inspect``'s readiness
#: lists them as refused (spec/inspect.md#inspect-readiness).  A test checks this set against torch's own
#: allowlist (``torch._weights_only_unpickler._get_allowed_globals``).
NOT_WEIGHTS_ONLY: frozenset[str] = frozenset({
    "builtins.bytes", "builtins.frozenset", "torch._tensor._rebuild_from_type",
    "torch._utils._rebuild_sparse_csr_tensor", "torch._utils._rebuild_xla_tensor",
})

#: Globals known to run code when a pickle calls them, for the ``weights_only`` readiness report of
#: ``torchfmt inspect`` (spec/inspect.md#inspect-readiness): a whole module (every name in it), or one
#: ``module.name``, with why.  A user must never add these to ``torch.serialization.add_safe_globals``.
#: Every global of the gadget cases (conformance/generators/adversarial/pickle_gadgets.py) is here.
RUNS_CODE_MODULES: dict[str, str] = {
    "os": "runs shell commands and touches files", "posix": "os on POSIX", "nt": "os on Windows",
    "subprocess": "runs programs", "pty": "runs programs", "sys": "reaches the interpreter's state",
    "runpy": "runs modules", "importlib": "imports code", "pickle": "unpickles more data without a check",
    "_pickle": "unpickles more data", "marshal": "loads code objects", "shutil": "copies and deletes files",
    "socket": "opens connections", "ctypes": "calls native code", "code": "runs Python source",
    "codeop": "compiles Python source", "pdb": "runs a debugger", "bdb": "runs a debugger",
    "webbrowser": "starts programs", "timeit": "runs Python source", "multiprocessing": "starts processes",
    "asyncio": "starts processes and connections", "platform": "runs programs", "types": "builds functions "
    "and code objects", "torch.hub": "downloads and runs code", "torch.jit": "compiles and runs code",
}
RUNS_CODE: dict[tuple[str, str], str] = {
    ("builtins", "eval"): "runs Python source", ("builtins", "exec"): "runs Python source",
    ("builtins", "compile"): "compiles Python source", ("builtins", "__import__"): "imports any module",
    ("builtins", "getattr"): "reaches any attribute (gadget chains)", ("builtins", "setattr"): "sets any "
    "attribute", ("builtins", "delattr"): "deletes any attribute", ("builtins", "open"): "opens files",
    ("builtins", "input"): "reads the terminal", ("builtins", "breakpoint"): "starts a debugger",
    ("builtins", "globals"): "reaches the interpreter's state", ("builtins", "vars"): "reaches any object's "
    "attributes", ("builtins", "apply"): "calls any function (Python 2)",
    ("operator", "attrgetter"): "reaches any attribute (gadget chains)",
    ("operator", "methodcaller"): "calls any method", ("functools", "partial"): "calls any function",
    ("functools", "reduce"): "calls any function", ("copyreg", "_reconstructor"): "calls a class's "
    "__init__ or __new__", ("torch", "load"): "loads another file without a check",
    ("torch.serialization", "load"): "loads another file without a check",
    ("numpy", "load"): "loads pickles from files", ("numpy.testing._private.utils", "runstring"): "runs "
    "Python source", ("numpy.testing", "runstring"): "runs Python source",
    ("torch.utils.collect_env", "run"): "runs shell commands",
    ("torch.fx.graph_module", "_exec_with_source"): "runs Python source",
}


def runs_code(module: str, name: str) -> str | None:
    """Why the global ``module.name`` is known to run code, or None (spec/inspect.md#inspect-readiness).

    A dotted ``name`` is an attribute chain, and an attribute may be a module a module imported
    (``numpy.testing._private.utils`` + ``os.system`` is ``os.system``): the whole path, and each tail
    of it that starts inside ``name``, is looked up as if it started at the top."""
    module, name = canonical_name(module, name)
    parts = [*module.split("."), *name.split(".")]
    for start in (0, *range(len(module.split(".")), len(parts) - 1)):
        tail = parts[start:]
        why = RUNS_CODE.get((".".join(tail[:-1]), tail[-1]))
        for i in range(len(tail) - 1, 0, -1):
            why = why or RUNS_CODE_MODULES.get(".".join(tail[:i]))
        if why is not None:
            return why
    return None


def canonical_name(module: str, name: str, python2: bool = True) -> tuple[str, str]:
    """The (module, name) a global is looked up and described by, after :data:`MODULE_ALIASES`; the
    Python 2 renames only where ``python2`` (spec/pickle.md#pickle-globals: GLOBAL at any protocol, as
    torch's loader renames; INST below protocol 3 and STACK_GLOBAL never, as CPython's unpickler)."""
    alias = MODULE_ALIASES.get(module)
    if alias is None or not python2 and not module.startswith("torch"):
        return module, name
    return alias, name


def lookup(module: str, name: str, scopes: frozenset[str]) -> Allowed | None:
    """The entry for ``module.name`` if the allowlist has one in ``scopes``."""
    entry = ALLOWED.get((module, name))
    return entry if entry is not None and entry.scope in scopes else None


def storage_dtype(g: Any) -> DType | None:
    """The dtype of a storage type global (uint8 for untyped storage); None if ``g`` is not one."""
    if not isinstance(g, Global) or (g.module, g.name) not in STORAGE_TYPES:
        return None
    return STORAGE_TYPES[(g.module, g.name)] or BY_NAME["uint8"]


def markdown_table() -> str:
    """The allowlist table of spec/pickle.md#pickle-globals, generated from :data:`ALLOWED_LIST`."""
    rows = ["| global | role | arguments | scope | result |", "| --- | --- | --- | --- | --- |"]
    for a in ALLOWED_LIST:
        args = a.signature() + (" (also NEWOBJ)" if a.newobj else "") if a.role != "value" else "—"
        rows.append(f"| `{a.qualname}` | {a.role} | `{args}` | {a.scope} | {a.doc} |")
    return "\n".join(rows) + "\n"


def kinds_table() -> str:
    """The argument kinds of spec/pickle.md#pickle-globals, generated from :data:`KINDS`."""
    rows = ["| kind | accepts |", "| --- | --- |"]
    rows += [f"| `{k.name}` | {k.doc} |" for k in KINDS.values()]
    return "\n".join(rows) + "\n"
