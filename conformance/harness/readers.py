"""The readers the suite knows by name, and how any other reader command is given.

``--reader reference`` (the default) is torchfmt's own command line.  Every other name is an adapter
under ``conformance/adapters/`` (spec/canonical.md#canonical-reader-cli):

- ``torch`` and ``kaitai``: single-file adapters (``torch_reader.py``, ``kaitai_reader.py``);
- third-party readers: one folder each, ``conformance/adapters/<name>/``, holding

  - ``adapter.yaml``: ``reader`` (what is wrapped, with its version), ``language``, ``formats`` it reads,
    and two flags: ``inert`` (the reader never calls a pickle global by design, so its gadget cases are
    judged by the spec's inert mode, spec/canonical.md#canonical-inert) and ``trusted_only`` (the reader
    runs code from files, so it is given only the real writers' accept cases; every other case is
    declined for it without running); optional ``unexpressed``: description fields the reader cannot
    express (``stride``, ``storage_offset``, ``storage``, the top-level ``storages``...), which its
    ``run.py`` leaves absent, never guessed, and which the comparison then skips (a partial comparison,
    harness/compare.py; the verdict says so); optional ``warm``: how the adapter's self-tests may run it
    without a new interpreter per file (harness/warm.py; the matrix and ``--reader`` always run the
    command): ``preload`` (modules imported once), ``python`` (the interpreter ``run.py`` hands the file
    to, default the suite's; started without ``PYTHONPATH``), ``script`` (what that interpreter runs,
    relative to the folder, default ``run.py``); optional ``batch``: the arguments that make ``run.py`` a
    batch process (``[--batch]``), answering file after file on one line each
    (spec/canonical.md#canonical-reader-batch; harness/batch.py): the suite and the matrix then run it so,
    unless ``--per-process`` is given;
  - ``setup``: an idempotent script that installs or builds the reader (outside the project tree, under
    ``$TORCHFMT_ADAPTERS_HOME``, default ``~/.cache/torchfmt/adapters``) and exits non-zero, saying why
    in one line, when it can't; every run of ``run.py`` gets ``TORCHFMT_ADAPTERS_HOME`` set (its ``HOME``
    is a temporary folder), so ``run.py`` finds the reader there.  A reader that needs folders outside
    its home (the torch wheel's ``lib/`` libtorch is linked against) lists them in
    ``$TORCHFMT_ADAPTERS_HOME/<name>/needs``, one absolute path a line: they reach its runs as
    :data:`NEEDS_ENV`, which the sandbox binds read-only (harness/sandbox.py: under ``/tmp`` they would be
    hidden);
  - ``run.py``: the contract command, run with the suite's Python; ``run.py --probe`` prints the wrapped
    reader's version and exits 0 when it is installed, or prints why not and exits 1.

Anything else is a command line, split like a shell would, to which the suite appends the file's path
(with ``--reader-batch``: a command that speaks the batch protocol itself, started as it is).  The
reference reader's batch command is ``python -m torchfmt dump --batch``; ``torch_reader.py`` and
``kaitai_reader.py`` take ``--batch``.
"""

from __future__ import annotations

import os
import shlex
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from .vocabulary import CONFORMANCE

ADAPTERS_DIR = CONFORMANCE / "adapters"
SINGLE_FILE = {"torch": ADAPTERS_DIR / "torch_reader.py",
               "kaitai": ADAPTERS_DIR / "kaitai_reader.py"}
META_KEYS = {"reader", "language", "formats", "inert", "trusted_only", "unexpressed", "notes", "warm",
             "batch"}
WARM_KEYS = {"preload", "python", "script"}
PROBE_SECONDS = 120


#: The folders outside its home a folder adapter's runs need (its ``needs`` file), ``os.pathsep``-joined.
NEEDS_ENV = "TORCHFMT_READER_NEEDS"


def adapter_env(name: str) -> dict[str, str]:
    """The environment every run of folder adapter ``name`` gets: its home, and the folders it needs."""
    env = {"TORCHFMT_ADAPTERS_HOME": str(adapters_home())}
    try:
        lines = (adapters_home() / name / "needs").read_text(encoding="utf-8").splitlines()
    except OSError:
        return env
    needs = [line.strip() for line in lines if line.strip().startswith("/")]
    if needs:
        env[NEEDS_ENV] = os.pathsep.join(needs)
    return env


def adapters_home() -> Path:
    """Where folder adapters install their readers: ``$TORCHFMT_ADAPTERS_HOME`` or
    ``~/.cache/torchfmt/adapters``, fixed here because every run gets a temporary ``HOME``."""
    env = os.environ.get("TORCHFMT_ADAPTERS_HOME")
    return Path(env) if env else Path.home() / ".cache" / "torchfmt" / "adapters"


def bytecode_cache() -> Path:
    """Where the reference reader's runs keep their compiled bytecode: ``$PYTHONPYCACHEPREFIX`` where the
    user names one, else ``~/.cache/torchfmt/pycache``."""
    env = os.environ.get("PYTHONPYCACHEPREFIX")
    return Path(env) if env else Path.home() / ".cache" / "torchfmt" / "pycache"


def reference_env() -> dict[str, str]:
    """The reference reader's runs (``python -m torchfmt dump``, a new interpreter each) read and write
    bytecode in :func:`bytecode_cache`, as an installed package's compiled modules would be read: the
    harness runs every other reader with ``PYTHONDONTWRITEBYTECODE`` (harness/runner.py), and a run that
    compiles the reader's, numpy's and the standard library's modules anew takes twice the CPU time
    (issue 12).  Nothing is written beside the sources; the code run is the same."""
    return {"PYTHONPYCACHEPREFIX": str(bytecode_cache()), "PYTHONDONTWRITEBYTECODE": ""}


def fill_bytecode_cache() -> None:
    """Compile what the reference reader's command imports into :func:`bytecode_cache`, once per session,
    from the harness's own process: a sandboxed run sees the cache read-only (harness/sandbox.py: no
    reader keeps state between runs), so a cache it cannot fill would have every run compile anew."""
    env = {**os.environ, **reference_env(), "PYTHONDONTWRITEBYTECODE": ""}
    code = ("import compileall, importlib, pkgutil, torchfmt, torchfmt.cli, numpy\n"
            "compileall.compile_dir(torchfmt.__path__[0], quiet=2)\n"
            "for name in ('torchfmt.pickle', 'torchfmt.pt', 'torchfmt.t7'):\n"
            "    p = importlib.import_module(name)\n"
            "    [importlib.import_module(i.name) for i in pkgutil.iter_modules(p.__path__, name + '.')]\n")
    try:
        subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, timeout=PROBE_SECONDS,
                       stdin=subprocess.DEVNULL)
    except (OSError, subprocess.TimeoutExpired):
        pass


@dataclass(frozen=True)
class Reader:
    name: str
    command: list[str]
    is_reference: bool
    inert: bool = False
    trusted_only: bool = False
    #: Description fields the reader cannot express: left out of the comparison (adapter.yaml).
    unexpressed: frozenset[str] = frozenset()
    #: Environment the reader's runs get on top of the harness's (folder adapters: the adapters home).
    env: dict[str, str] = field(default_factory=dict)
    #: A warm start for the adapter's self-tests (adapter.yaml ``warm``, its script made absolute).
    warm: dict[str, Any] | None = None
    #: The command that runs the reader in batch mode (spec/canonical.md#canonical-reader-batch), if any.
    batch: list[str] | None = None

    @property
    def declined_fails(self) -> bool:
        """The reference reader must read every case the suite holds; others may decline."""
        return self.is_reference


class UnknownReader(ValueError):
    pass


def folder_adapters() -> dict[str, Path]:
    """``{name: folder}`` for every ``conformance/adapters/<name>/`` holding ``run.py``."""
    return {p.name: p for p in sorted(ADAPTERS_DIR.iterdir())
            if p.is_dir() and (p / "run.py").is_file() and (p / "adapter.yaml").is_file()}


def metadata(name: str) -> dict[str, Any]:
    """The ``adapter.yaml`` of a folder adapter (``{}`` for the others); unknown keys are an error."""
    folder = folder_adapters().get(name)
    if folder is None:
        return {}
    meta = yaml.safe_load((folder / "adapter.yaml").read_text(encoding="utf-8")) or {}
    extra = (set(meta) - META_KEYS) | {f"warm.{k}" for k in set(meta.get("warm") or {}) - WARM_KEYS}
    if extra:
        raise UnknownReader(f"{folder / 'adapter.yaml'}: unknown keys {sorted(extra)}")
    return meta


def probe(name: str) -> tuple[bool, str]:
    """(installed, version or why not) of a folder adapter's reader."""
    folder = folder_adapters()[name]
    try:
        proc = subprocess.run([sys.executable, str(folder / "run.py"), "--probe"], capture_output=True,
                              text=True, timeout=PROBE_SECONDS, stdin=subprocess.DEVNULL,
                              env={**os.environ, "TORCHFMT_ADAPTERS_HOME": str(adapters_home())})
    except subprocess.TimeoutExpired:
        return False, f"run.py --probe took more than {PROBE_SECONDS} s"
    lines = (proc.stdout.strip() or proc.stderr.strip() or "no output").splitlines()
    return proc.returncode == 0, lines[-1]


def resolve(spec: str) -> Reader:
    """``reference``, an adapter's name, or a command line."""
    if spec == "reference":
        command = [sys.executable, "-m", "torchfmt", "dump"]
        return Reader("reference", command, True, env=reference_env(), batch=[*command, "--batch"])
    if spec in SINGLE_FILE:
        adapter = SINGLE_FILE[spec]
        if not adapter.is_file():
            raise UnknownReader(f"--reader {spec}: the adapter {adapter} does not exist (yet)")
        command = [sys.executable, str(adapter)]
        return Reader(spec, command, False, batch=[*command, "--batch"])
    folders = folder_adapters()
    if spec in folders:
        installed, why = probe(spec)
        if not installed:
            raise UnknownReader(f"--reader {spec}: not installed ({why}); run "
                                f"conformance/adapters/{spec}/setup first")
        meta = metadata(spec)
        warm = meta.get("warm")
        if warm is not None:
            warm = {"preload": list(warm.get("preload") or ()), "python": warm.get("python"),
                    "script": str((folders[spec] / warm.get("script", "run.py")).resolve())}
        command = [sys.executable, str(folders[spec] / "run.py")]
        batch = meta.get("batch")
        if batch is not None and not (isinstance(batch, list) and all(isinstance(a, str) for a in batch)):
            raise UnknownReader(f"{folders[spec] / 'adapter.yaml'}: batch must be a list of arguments")
        return Reader(spec, command, False,
                      inert=bool(meta.get("inert")), trusted_only=bool(meta.get("trusted_only")),
                      unexpressed=frozenset(meta.get("unexpressed") or ()),
                      env=adapter_env(spec), warm=warm,
                      batch=None if batch is None else [*command, *batch])
    command = shlex.split(spec)
    if not command:
        raise UnknownReader("--reader: empty command")
    return Reader(spec, command, False)


def names() -> list[str]:
    """Every named reader, installed or not."""
    return ["reference", *SINGLE_FILE, *folder_adapters()]


def available() -> list[str]:
    """Named readers that can run here (the reference, each single-file adapter, each installed folder)."""
    return ["reference", *(n for n, p in SINGLE_FILE.items() if p.is_file()),
            *(n for n in folder_adapters() if probe(n)[0])]
