"""Pickles whose globals would run code: one case per gadget family (spec/pickle.md#pickle-globals,
spec/pickle.md#pickle-no-execution).

Each payload sits beside real tensors in a torch-written container (zip unless the case says legacy)
and, if a naive loader ran it, would only touch the case's canary ``/tmp/torchfmt-canary-<name>`` and
the harness's ``/tmp/torchfmt-conformance-canary``.  A strict reader rejects every one with
``unsafe-global`` (``bad-opcode`` too for the extension registry) and runs nothing.
"""

from __future__ import annotations

import pickle
import shlex

from . import assemble as a
from . import sources, wrap
from .record import HARNESS_CANARY, AdvCase, canary_path

GEN = "pickle_gadgets.py"
SPEC = ["pickle.md#pickle-globals", "pickle.md#pickle-no-execution", "canonical.md#canonical-inert"]


def _paths(name: str) -> list[str]:
    return [canary_path(name), HARNESS_CANARY]


def _shell(name: str) -> str:
    return "touch " + " ".join(shlex.quote(p) for p in _paths(name))


def _python(name: str) -> str:
    """A Python expression (so that eval takes it too) that touches the canaries: it appends a line, so
    that a canary left by an earlier run changes too (the harness compares modification times)."""
    return "(" + ", ".join(f"open({p!r}, 'a').write('ran\\n')" for p in _paths(name)) + ")"


def _s(text: str) -> bytes:
    return a.binunicode(text)


def gadgets() -> list[AdvCase]:
    """The gadget cases."""
    out: list[AdvCase] = []

    def zip_case(
        name: str,
        payload: bytes,
        how: str,
        feats: list[str],
        *,
        errors: list[str] | None = None,
        protocol4: bool = False,
        spec: list[str] | None = None,
    ) -> None:
        """``payload`` (an assembled value) as the value of key ``extra`` in torch's dict pickle; with
        ``protocol4`` the whole pickle is re-assembled at protocol 4 around a real tensor."""
        if protocol4:
            pkl = a.program(a.dict_((a.unicode("weight"), _weight_v4()), (a.unicode("extra"), payload)), 4)
        else:
            pkl = wrap.inject(wrap.zip_pickle(), "extra", payload)
        data = wrap.in_zip(pkl, drop=("/data/1",) if protocol4 else ())
        out.append(
            AdvCase(
                f"pt-zip/adv-{name}",
                data,
                errors or ["unsafe-global"],
                ["zip-archive", "adv-unsafe-global", "pickle-reduce", "dtype-float32"] + feats,
                SPEC + (spec or []) + ["pt-zip.md#pt-zip-data-pkl"],
                how,
                sources.zip_source(),
                GEN,
                canary=canary_path(name),
            )
        )

    n = "gadget-os-system"
    zip_case(
        n,
        a.call(a.global_("os", "system"), _s(_shell(n))),
        "data.pkl's dict gets a key 'extra' whose value is GLOBAL os.system REDUCE'd with a shell command",
        ["pickle-protocol-2"],
    )
    n = "gadget-posix-system"
    zip_case(
        n,
        a.call(a.global_("posix", "system"), _s(_shell(n))),
        "GLOBAL posix.system (the name pickle itself writes for os.system on Linux) REDUCE'd with a "
        "shell command",
        ["pickle-protocol-2"],
    )
    n = "gadget-builtins-eval"
    zip_case(
        n,
        a.call(a.global_("builtins", "eval"), _s(_python(n))),
        "GLOBAL builtins.eval REDUCE'd with a Python expression",
        ["pickle-protocol-2"],
    )
    n = "gadget-builtins-exec"
    zip_case(
        n,
        a.call(a.global_("builtins", "exec"), _s(_python(n))),
        "GLOBAL builtins.exec REDUCE'd with Python statements",
        ["pickle-protocol-2"],
    )
    n = "gadget-py2-builtin-eval"
    zip_case(
        n,
        a.call(a.global_("__builtin__", "eval"), _s(_python(n))),
        "GLOBAL __builtin__.eval: the Python 2 module name, which the alias table maps to builtins",
        ["pickle-protocol-2"],
    )
    n = "gadget-getattr-import-chain"
    os_mod = a.call(a.global_("builtins", "__import__"), _s("os"))
    zip_case(
        n,
        a.call(a.call(a.global_("builtins", "getattr"), os_mod, _s("system")), _s(_shell(n))),
        "builtins.getattr(builtins.__import__('os'), 'system')(command): a chain of REDUCEs, no "
        "dangerous name in any single GLOBAL but __import__",
        ["pickle-protocol-2"],
    )
    n = "gadget-attrgetter-chain"
    zip_case(
        n,
        a.call(
            a.call(
                a.call(a.global_("operator", "attrgetter"), _s("system")),
                a.call(a.global_("importlib", "import_module"), _s("os")),
            ),
            _s(_shell(n)),
        ),
        "operator.attrgetter('system')(importlib.import_module('os'))(command)",
        ["pickle-protocol-2"],
    )
    n = "gadget-subprocess-popen"
    argv = a.list_(*(_s(x) for x in ["touch", *_paths(n)]))
    zip_case(
        n,
        a.call(a.global_("subprocess", "Popen"), argv),
        "subprocess.Popen(['touch', canary...]) by REDUCE",
        ["pickle-protocol-2"],
    )
    n = "gadget-subprocess-check-output"
    argv = a.list_(*(_s(x) for x in ["touch", *_paths(n)]))
    zip_case(
        n,
        a.call(a.global_("subprocess", "check_output"), argv),
        "subprocess.check_output(['touch', canary...]) by REDUCE",
        ["pickle-protocol-2"],
    )
    n = "gadget-runpy-run-code"
    zip_case(
        n,
        a.call(a.global_("runpy", "_run_code"), _s(_python(n)), a.dict_()),
        "runpy._run_code(source, {}): exec through the standard library's runner",
        ["pickle-protocol-2"],
    )
    n = "gadget-pkgutil-resolve-name"
    zip_case(
        n,
        a.call(a.call(a.global_("pkgutil", "resolve_name"), _s("os:system")), _s(_shell(n))),
        "pkgutil.resolve_name('os:system')(command): the callable is named by a string argument, "
        "not by a GLOBAL",
        ["pickle-protocol-2"],
    )
    n = "gadget-functools-partial"
    part = a.call(a.global_("functools", "partial"), a.global_("os", "system"), _s(_shell(n)))
    zip_case(n, a.call(part), "functools.partial(os.system, command)() by two REDUCEs", ["pickle-protocol-2"])
    n = "gadget-torch-collect-env-run"
    zip_case(
        n,
        a.call(a.global_("torch.utils.collect_env", "run"), _s(_shell(n))),
        "torch.utils.collect_env.run(command): a torch function that runs a shell command "
        "(subprocess.Popen with shell=True)",
        ["pickle-protocol-2"],
    )
    n = "gadget-torch-jit-execwrapper"
    zip_case(
        n,
        a.call(
            a.global_("torch.jit.unsupported_tensor_ops", "execWrapper"), _s(_python(n)), a.dict_(), a.dict_()
        ),
        "torch.jit.unsupported_tensor_ops.execWrapper(source, {}, {}): a torch function that calls exec",
        ["pickle-protocol-2"],
    )
    n = "gadget-torch-fx-exec-with-source"
    zip_case(
        n,
        a.call(a.global_("torch.fx.graph_module", "_exec_with_source"), _s(_python(n)), a.dict_()),
        "torch.fx.graph_module._exec_with_source(source, {}): a torch function that compiles and execs",
        ["pickle-protocol-2"],
    )
    n = "gadget-torch-dotted-name"
    zip_case(
        n,
        a.call(a.stack_global("torch.serialization", "os.system"), a.unicode(_shell(n))),
        "protocol 4 STACK_GLOBAL('torch.serialization', 'os.system'): a dotted name under an "
        "allowed-looking torch module that resolves, attribute by attribute, to os.system",
        ["pickle-protocol-4"],
        protocol4=True,
    )
    # Escapes under whole module roots that readers in the wild trust (tinygrad 0.14.0's torch_load lets
    # every name under numpy, collections and _codecs through): each one verified to run under plain
    # pickle.loads with numpy 2.4.
    n = "gadget-numpy-runstring"
    zip_case(
        n,
        a.call(a.global_("numpy.testing._private.utils", "runstring"), _s(_python(n)), a.dict_()),
        "numpy.testing._private.utils.runstring(source, {}): a numpy function whose body is exec, "
        "reachable by a reader that trusts every name under numpy",
        ["pickle-protocol-2"],
    )
    n = "gadget-numpy-testing-runstring"
    zip_case(
        n,
        a.call(a.global_("numpy.testing", "runstring"), _s(_python(n)), a.dict_()),
        "numpy.testing.runstring(source, {}): the same exec under its public name",
        ["pickle-protocol-2"],
    )
    n = "gadget-numpy-dotted-os-system"
    zip_case(
        n,
        a.call(a.stack_global("numpy.testing._private.utils", "os.system"), a.unicode(_shell(n))),
        "protocol 4 STACK_GLOBAL('numpy.testing._private.utils', 'os.system'): a dotted name under a "
        "numpy module that imports os resolves, attribute by attribute, to os.system",
        ["pickle-protocol-4"],
        protocol4=True,
    )
    n = "gadget-numpy-f2py-subprocess"
    argv = a.list_(*(a.unicode(x) for x in ["touch", *_paths(n)]))
    zip_case(
        n,
        a.call(a.stack_global("numpy.f2py", "subprocess.check_output"), argv),
        "protocol 4 STACK_GLOBAL('numpy.f2py', 'subprocess.check_output')(['touch', canary...]): "
        "numpy.f2py imports subprocess, so a numpy-rooted name runs a program",
        ["pickle-protocol-4"],
        protocol4=True,
    )
    n = "gadget-stack-global-memo"
    body = (
        a.unicode("builtins")
        + a.put(200)
        + a.unicode("exec")
        + a.put(201)
        + pickle.POP
        + pickle.POP
        + a.get(200)
        + a.get(201)
        + pickle.STACK_GLOBAL
        + a.tuple_(a.unicode(_python(n)))
        + pickle.REDUCE
    )
    zip_case(
        n,
        body,
        "protocol 4: the strings 'builtins' and 'exec' are memoized, popped, and fetched back "
        "with BINGET right before STACK_GLOBAL, so no string sits next to the opcode",
        ["pickle-protocol-4", "pickle-memo"],
        protocol4=True,
    )
    n = "gadget-inst"
    zip_case(
        n,
        pickle.MARK + _s(_shell(n)) + a.inst("os", "system"),
        "INST os.system (protocol 0 opcode: MARK, arguments, INST module name) inside the protocol 2 pickle",
        ["pickle-protocol-0"],
    )
    n = "gadget-obj"
    zip_case(
        n,
        pickle.MARK + a.global_("os", "system") + _s(_shell(n)) + pickle.OBJ,
        "OBJ (MARK, callable, arguments, OBJ): pickle calls a non-class callable with the arguments",
        ["pickle-protocol-1"],
    )
    n = "gadget-newobj"
    argv = a.list_(*(_s(x) for x in ["touch", *_paths(n)]))
    zip_case(
        n,
        a.global_("subprocess", "Popen") + a.tuple_(argv) + pickle.NEWOBJ,
        "NEWOBJ of subprocess.Popen (cls.__new__(cls, *args): a naive loader makes the object without "
        "running it, but the global is outside the allowlist all the same)",
        ["pickle-protocol-2"],
    )
    n = "gadget-newobj-ex"
    argv = a.list_(*(a.unicode(x) for x in ["touch", *_paths(n)]))
    zip_case(
        n,
        a.stack_global("subprocess", "Popen")
        + a.tuple_(argv)
        + a.dict_((a.unicode("shell"), pickle.NEWFALSE))
        + pickle.NEWOBJ_EX,
        "NEWOBJ_EX of subprocess.Popen with a kwargs dict (protocol 4)",
        ["pickle-protocol-4"],
        protocol4=True,
    )
    n = "gadget-ext-registry"
    zip_case(
        n,
        pickle.EXT1 + bytes([0xF0]) + a.tuple_(_s(_shell(n))) + pickle.REDUCE,
        "EXT1 240: a global named through copyreg's extension registry (which the writer's and the "
        "reader's processes would have to agree on), then REDUCE'd with a command",
        ["pickle-protocol-2"],
        errors=["bad-opcode", "unsafe-global"],
        spec=["pickle.md#pickle-opcodes"],
    )
    n = "gadget-in-metadata-build"
    od = a.global_("collections", "OrderedDict") + pickle.EMPTY_TUPLE + pickle.REDUCE
    state = a.dict_((_s("_metadata"), a.call(a.global_("os", "system"), _s(_shell(n)))))
    zip_case(
        n,
        od + state + pickle.BUILD,
        "an OrderedDict whose BUILD state (the place of a state_dict's _metadata) holds os.system(command)",
        ["pickle-protocol-2", "pickle-ordered-dict-attrs"],
    )
    n = "gadget-in-persistent-id"
    pid = (
        a.tuple_(
            _s("storage"), a.call(a.global_("os", "system"), _s(_shell(n))), _s("0"), _s("cpu"), a.integer(6)
        )
        + pickle.BINPERSID
    )
    zip_case(
        n,
        pid,
        "a persistent id whose storage-type slot is os.system(command) instead of torch.FloatStorage",
        ["pickle-protocol-2", "pickle-persistent-id"],
        spec=["pickle.md#pickle-persistent-id"],
    )
    n = "gadget-call-tensor-result"
    tensor = a.rebuild_tensor(a.storage_pid("FloatStorage", "0", "cpu", 6), 0, (2, 3), (3, 1))
    zip_case(
        n,
        a.call(tensor, _s(_shell(n))),
        "REDUCE whose callable is not a global at all but the tensor an allowed _rebuild_tensor_v2 call "
        "just built: only allowlisted globals may be called",
        ["pickle-protocol-2"],
        errors=["bad-pickle", "unsafe-global"],
        spec=["pickle.md#pickle-stack"],
    )

    legacy = [
        (
            "gadget-legacy-os-system",
            lambda n: a.call(a.global_("os", "system"), _s(_shell(n))),
            "the legacy stream's object pickle: torch's dict with an extra key whose value is "
            "os.system(command)",
        ),
        (
            "gadget-legacy-builtins-exec",
            lambda n: a.call(a.global_("builtins", "exec"), _s(_python(n))),
            "the legacy stream's object pickle: torch's dict with an extra key whose value is "
            "builtins.exec(source)",
        ),
    ]
    for n, value, how in legacy:
        pkl = wrap.inject(wrap.legacy_pickle(), "extra", value(n))
        out.append(
            AdvCase(
                f"pt-legacy/adv-{n}",
                wrap.legacy_with(pkl),
                ["unsafe-global"],
                ["legacy-stream", "adv-unsafe-global", "pickle-reduce", "dtype-float32"],
                SPEC + ["pt-legacy.md#pt-legacy-object"],
                how,
                sources.torch_legacy(),
                GEN,
                canary=canary_path(n),
            )
        )
    # a whole pickled module, as torch writes one: classes outside the allowlist, nothing that runs code
    for fmt, legacy in (("pt-zip", False), ("pt-legacy", True)):
        src = sources.torch_module(legacy)
        out.append(AdvCase(
            f"{fmt}/adv-whole-module-linear", src.data, ["unsafe-global"],
            ["adv-unsafe-global", "whole-module", "parameter", "dtype-float32", "pickle-reduce",
             "legacy-stream" if legacy else "zip-archive"],
            ["pickle.md#pickle-globals", "canonical.md#canonical-inert",
             "pt-legacy.md#pt-legacy-object" if legacy else "pt-zip.md#pt-zip-data-pkl"],
            "the file unchanged: a whole nn.Linear pickled by torch.save, naming "
            "torch.nn.modules.linear.Linear (and, in the legacy stream, a ('module', class, source_file, "
            "source) persistent id); a strict reader refuses the class, an inert one describes it", src, GEN))
    return out


def _weight_v4() -> bytes:
    """torch's ``weight`` tensor (storage ``0``, 2x3 float32) written with protocol 4 opcodes."""
    return a.rebuild_tensor(a.storage_pid("FloatStorage", "0", "cpu", 6), 0, (2, 3), (3, 1))
